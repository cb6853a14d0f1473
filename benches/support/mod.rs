//! Helpers shared by evtc's benches: reading back the medians criterion measured in this run, and
//! writing the markdown reports that docs/benchmarks.md quotes.

#![allow(dead_code)]

use std::any::Any;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use evtc::datagen::nano::{Column, Values};
use evtc::format::{
    Boundaries, BranchSpec, FileReader, FileWriter, Jagged, ScalarType, TreeWriter, WriteOptions,
};

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

/// The NanoAOD-like data of [`nano_root_file`] (setting 505) as an RNTuple written by ROOT's
/// `RNTupleImporter` (zstd:5, `benches/peers/root_side.py rntuple-import`), when missing; `None`
/// when it cannot be written (no ROOT).
pub fn nano_rntuple_file(events: u64) -> Option<PathBuf> {
    let tree = nano_root_file(505, events)?;
    let path = root_dir().join(format!("nano_{events}_505_rntuple.root"));
    if path.exists() {
        return Some(path);
    }
    let status = std::process::Command::new(python())
        .arg("benches/peers/root_side.py")
        .arg("rntuple-import")
        .arg(&tree)
        .arg(&path)
        .status();
    (status.is_ok_and(|s| s.success()) && path.exists()).then_some(path)
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

/// Buffers a bulk read reuses from one read to the next, one per branch (an analysis reading the
/// same branches file after file through `read_into` / `read_jagged_into`): a `Vec<T>` or a
/// `Jagged<T>` of the branch's type.
#[derive(Default)]
pub struct Buffers(Vec<Box<dyn Any>>);

macro_rules! each_scalar {
    ($t:expr, $ty:ident => $body:expr) => {
        match $t {
            ScalarType::Bool => {
                type $ty = bool;
                $body
            }
            ScalarType::I8 => {
                type $ty = i8;
                $body
            }
            ScalarType::U8 => {
                type $ty = u8;
                $body
            }
            ScalarType::I16 => {
                type $ty = i16;
                $body
            }
            ScalarType::U16 => {
                type $ty = u16;
                $body
            }
            ScalarType::I32 => {
                type $ty = i32;
                $body
            }
            ScalarType::U32 => {
                type $ty = u32;
                $body
            }
            ScalarType::I64 => {
                type $ty = i64;
                $body
            }
            ScalarType::U64 => {
                type $ty = u64;
                $body
            }
            ScalarType::F32 => {
                type $ty = f32;
                $body
            }
            ScalarType::F64 => {
                type $ty = f64;
                $body
            }
        }
    };
}

/// Reads every branch of the tree in bulk (one thread) into `buffers`; returns the bytes of
/// values.
pub fn bulk(file: &FileReader, buffers: &mut Buffers) -> usize {
    let tree = file.tree("Events").expect("tree");
    let metas = tree.branches();
    if buffers.0.len() != metas.len() {
        buffers.0 = metas
            .iter()
            .map(|m| {
                each_scalar!(m.dtype.scalar(), T => if m.dtype.is_variable() {
                    Box::new(Jagged::<T>::default()) as Box<dyn Any>
                } else {
                    Box::new(Vec::<T>::new())
                })
            })
            .collect();
    }
    let mut bytes = 0;
    for (meta, buffer) in metas.iter().zip(&mut buffers.0) {
        let branch = tree.branch(&meta.name).expect("branch");
        let size = meta.dtype.scalar().size();
        bytes += size
            * each_scalar!(meta.dtype.scalar(), T => if meta.dtype.is_variable() {
                let out = buffer.downcast_mut::<Jagged<T>>().expect("buffer type");
                branch.read_jagged_into(out).expect("read");
                out.values.len()
            } else {
                let out = buffer.downcast_mut::<Vec<T>>().expect("buffer type");
                branch.read_into(out).expect("read");
                out.len()
            });
    }
    bytes
}

pub fn scalar_type(values: &Values) -> ScalarType {
    match values {
        Values::Bool(_) => ScalarType::Bool,
        Values::U8(_) => ScalarType::U8,
        Values::I32(_) => ScalarType::I32,
        Values::U32(_) => ScalarType::U32,
        Values::U64(_) => ScalarType::U64,
        Values::F32(_) => ScalarType::F32,
    }
}

/// Writes the NanoAOD-like event table; `boundaries` overrides the encoding of every
/// variable-length branch.
pub fn write_nano(
    path: &Path,
    columns: &[Column],
    options: WriteOptions,
    boundaries: Option<Boundaries>,
) {
    let mut file = FileWriter::create(path, options).expect("create");
    let mut tree = file
        .tree("Events", nano_specs(columns, boundaries))
        .expect("tree");
    fill_nano(&mut tree, columns, 0..events_of(columns));
    tree.finish().expect("finish tree");
    file.finish().expect("finish file");
}

/// The branches of the NanoAOD-like event table.
pub fn nano_specs(columns: &[Column], boundaries: Option<Boundaries>) -> Vec<BranchSpec> {
    columns
        .iter()
        .map(|c| {
            let t = scalar_type(&c.values);
            match &c.counter {
                None => BranchSpec::scalar(&c.name, t),
                Some(counter) => {
                    let spec = BranchSpec::jagged(&c.name, t).counter(counter);
                    match boundaries {
                        Some(b) => spec.boundaries(b),
                        None => spec,
                    }
                }
            }
        })
        .collect()
}

/// The events of the NanoAOD-like event table.
pub fn events_of(columns: &[Column]) -> usize {
    match &columns[0].values {
        Values::U32(v) => v.len(),
        _ => unreachable!("the first column is run"),
    }
}

/// Fills and commits `events` of the table into `tree` (a new tree of [`nano_specs`], or one
/// appended to), in batches of 10,000 events, as a conversion fills them.
pub fn fill_nano(tree: &mut TreeWriter<'_>, columns: &[Column], events: std::ops::Range<usize>) {
    let counts = |name: &str| -> &[u32] {
        match &columns
            .iter()
            .find(|c| c.name == name)
            .expect("counter")
            .values
        {
            Values::U32(v) => v,
            _ => unreachable!("counters are u32"),
        }
    };
    // Where each jagged column's values of entry `events.start` begin.
    let mut value_at: Vec<usize> = columns
        .iter()
        .map(|c| match &c.counter {
            Some(counter) => counts(counter)[..events.start]
                .iter()
                .map(|&n| n as usize)
                .sum(),
            None => 0,
        })
        .collect();
    let batch = 10_000;
    for start in events.clone().step_by(batch) {
        let end = (start + batch).min(events.end);
        for (b, c) in columns.iter().enumerate() {
            match &c.counter {
                None => match &c.values {
                    Values::Bool(v) => tree.fill_column(b, &v[start..end]),
                    Values::U8(v) => tree.fill_column(b, &v[start..end]),
                    Values::I32(v) => tree.fill_column(b, &v[start..end]),
                    Values::U32(v) => tree.fill_column(b, &v[start..end]),
                    Values::U64(v) => tree.fill_column(b, &v[start..end]),
                    Values::F32(v) => tree.fill_column(b, &v[start..end]),
                }
                .expect("fill"),
                Some(counter) => {
                    let counts = &counts(counter)[start..end];
                    let n: usize = counts.iter().map(|&c| c as usize).sum();
                    let at = value_at[b];
                    value_at[b] += n;
                    match &c.values {
                        Values::Bool(v) => tree.fill_jagged(b, counts, &v[at..at + n]),
                        Values::U8(v) => tree.fill_jagged(b, counts, &v[at..at + n]),
                        Values::I32(v) => tree.fill_jagged(b, counts, &v[at..at + n]),
                        Values::U32(v) => tree.fill_jagged(b, counts, &v[at..at + n]),
                        Values::U64(v) => tree.fill_jagged(b, counts, &v[at..at + n]),
                        Values::F32(v) => tree.fill_jagged(b, counts, &v[at..at + n]),
                    }
                    .expect("fill");
                }
            }
        }
        tree.commit().expect("commit");
    }
}
