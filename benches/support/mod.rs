//! Helpers shared by evtc's benches: reading back the medians criterion measured in this run, and
//! writing the markdown reports that BENCHMARKS.md quotes.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where criterion keeps its results (the same rule criterion uses).
pub fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        PathBuf::from(home)
    } else if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        PathBuf::from(target).join("criterion")
    } else {
        PathBuf::from("target/criterion")
    }
}

/// Where the benches write their markdown reports.
pub fn report_dir() -> PathBuf {
    criterion_dir()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join("evtc-bench")
}

/// Median time in nanoseconds of every benchmark of `group` that criterion finished after `since`,
/// keyed by benchmark id (function id, plus "/value" when there is one).
pub fn medians(group: &str, since: SystemTime) -> BTreeMap<String, f64> {
    let mut found = BTreeMap::new();
    let mut stack = vec![criterion_dir()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.file_name().is_none_or(|n| n != "benchmark.json")
                || path.parent().is_none_or(|p| !p.ends_with("new"))
            {
                continue;
            }
            let estimates = path.with_file_name("estimates.json");
            let fresh = std::fs::metadata(&estimates)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since);
            if !fresh {
                continue;
            }
            let (Some(benchmark), Some(estimates)) = (read_json(&path), read_json(&estimates))
            else {
                continue;
            };
            if benchmark["group_id"].as_str() != Some(group) {
                continue;
            }
            let mut id = benchmark["function_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if let Some(value) = benchmark["value_str"].as_str() {
                id = format!("{id}/{value}");
            }
            if let Some(median) = estimates["median"]["point_estimate"].as_f64() {
                found.insert(id, median);
            }
        }
    }
    found
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Bytes per nanosecond is GB/s; this gives MB/s.
pub fn mb_per_s(bytes: usize, nanos: f64) -> f64 {
    bytes as f64 / nanos * 1000.0
}

/// Writes `report` to `report_dir()/name` and to stdout.
pub fn write_report(name: &str, report: &str) {
    let dir = report_dir();
    let path = dir.join(name);
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, report)) {
        Ok(()) => println!("\n{report}\nreport written to {}", path.display()),
        Err(e) => println!("\n{report}\n(could not write {}: {e})", path.display()),
    }
}

/// A short description of this machine for report headers.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cpu}, {cores} cores")
}

/// The Python with ROOT and uproot that the ROOT comparisons call (`EVTC_PYTHON`, default the
/// project's `.venv-root`).
pub fn python() -> PathBuf {
    std::env::var_os("EVTC_PYTHON")
        .map_or_else(|| PathBuf::from(".venv-root/bin/python"), PathBuf::from)
}

/// Events of the NanoAOD-like ROOT files (`EVTC_BENCH_ROOT_EVENTS`, default 200,000).
pub fn root_events() -> u64 {
    std::env::var("EVTC_BENCH_ROOT_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

/// Where the ROOT comparisons keep their input files (`target/root-bench`, not committed).
pub fn root_dir() -> PathBuf {
    let dir = PathBuf::from("target/root-bench");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// The NanoAOD-like ROOT file of `events` events in compression `setting`, written by
/// `make_fixtures.py --nano` when missing; `None` when it cannot be written (no ROOT).
pub fn nano_root_file(setting: i32, events: u64) -> Option<PathBuf> {
    let path = root_dir().join(format!("nano_{events}_{setting}.root"));
    if path.exists() {
        return Some(path);
    }
    let status = std::process::Command::new(python())
        .args([
            "crates/root/tests/fixtures/make_fixtures.py",
            "--nano",
            &events.to_string(),
        ])
        .args(["--setting", &setting.to_string()])
        .arg(&path)
        .status();
    (status.is_ok_and(|s| s.success()) && path.exists()).then_some(path)
}
