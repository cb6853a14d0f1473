//! The codec advisor (`evtc advise`) on the NanoAOD-like data: its recommendation for each goal,
//! applied, against the same data written uniformly with zstd:5 (evtc's default) and lz4; file
//! sizes and bulk reads measured, next to what the advisor predicted from its sample; writes
//! `target/evtc-bench/advisor.md`.
//!
//! Run: `cargo bench --bench advisor`. `EVTC_BENCH_EVENTS` sets the events (default 200,000);
//! the files go to `target/advisor-bench/`.

mod support;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use criterion::{Criterion, Throughput};
use evtc::codecs::Codec;
use evtc::datagen::nano;
use evtc::format::{FileReader, ReadOptions, WriteOptions};
use evtc::tools::advise::{Advice, AdviseOptions, FilePoint, Goal, advise};
use evtc::tools::{Settings, convert};

fn events() -> usize {
    std::env::var("EVTC_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// One file of the comparison: what it is, its path, and the advisor's prediction for it.
struct Candidate {
    label: String,
    path: PathBuf,
    predicted: Option<FilePoint>,
}

fn main() {
    let events = events();
    let dir = PathBuf::from("target/advisor-bench");
    std::fs::create_dir_all(&dir).expect("bench directory");
    let base = dir.join(format!("nano_{events}_zstd5.evtc"));
    if !base.exists() {
        let columns = nano::events(events, 1);
        support::write_nano(
            &base,
            &columns,
            WriteOptions::default().overwrite(true).sync(false),
            None,
        );
    }
    let lz4 = dir.join(format!("nano_{events}_lz4.evtc"));
    if !lz4.exists() {
        let options = Settings {
            codec: Some(Codec::LZ4),
            sync: false,
            overwrite: true,
            ..Settings::default()
        };
        convert(&base, &lz4, &options, &mut |_| {}).expect("convert to lz4");
    }
    // The advisor's default run, timed once (it is the command a user waits for).
    let started = Instant::now();
    let advice = advise(&base, &AdviseOptions::default(), &|_, _| {}).expect("advise");
    let advise_seconds = started.elapsed().as_secs_f64();
    let uniform = |codec: Codec| {
        advice
            .uniform
            .iter()
            .find(|p| p.label == codec.to_string())
            .cloned()
    };
    let mut candidates = vec![
        Candidate {
            label: "uniform zstd:5".into(),
            path: base.clone(),
            predicted: uniform(Codec::DEFAULT),
        },
        Candidate {
            label: "uniform lz4".into(),
            path: lz4,
            predicted: uniform(Codec::LZ4),
        },
    ];
    for goal in Goal::ALL {
        let path = dir.join(format!("nano_{events}_{goal}.evtc"));
        let _ = std::fs::remove_file(&path);
        let options = Settings {
            sync: false,
            overwrite: true,
            ..Settings::default()
        };
        advice
            .apply(goal, &base, &path, &options, &mut |_| {})
            .expect("apply");
        candidates.push(Candidate {
            label: format!("--goal {goal}"),
            path,
            predicted: advice.goal(goal).map(|g| g.predicted.clone()),
        });
    }

    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("advisor");
    group.sample_size(10);
    for candidate in &candidates {
        let file = FileReader::open_with(&candidate.path, ReadOptions::default().threads(1))
            .expect("open");
        let mut buffers = support::Buffers::default();
        let bytes = support::bulk(&file, &mut buffers);
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(&candidate.label, |b| {
            b.iter(|| black_box(support::bulk(&file, &mut buffers)))
        });
    }
    group.finish();
    c.final_summary();
    report(&advice, advise_seconds, &candidates, since);
}

fn report(advice: &Advice, advise_seconds: f64, candidates: &[Candidate], since: SystemTime) {
    let medians = support::medians("advisor", since);
    let raw = {
        let file = FileReader::open(&candidates[0].path).expect("open");
        support::bulk(&file, &mut support::Buffers::default())
    };
    let read = |label: &str| medians.get(label).map(|&ns| support::mb_per_s(raw, ns));
    let mut md = String::new();
    let _ = writeln!(
        md,
        "## The codec advisor on the NanoAOD-like sample ({} events, {} branches)\n\n{}\n",
        events(),
        advice.trees.iter().map(|t| t.branches.len()).sum::<usize>(),
        support::machine()
    );
    let _ = writeln!(
        md,
        "`advise` with default options (sample {:.1} MB, every codec of the default set, RAC): \
         {advise_seconds:.1} s.\n",
        advice.sample_bytes as f64 / 1e6
    );
    let _ = writeln!(
        md,
        "| file | size MB | predicted MB | bulk read MB/s (1 thread, measured) | predicted read MB/s |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    for c in candidates {
        let _ = writeln!(
            md,
            "| {} | {:.2} | {} | {} | {} |",
            c.label,
            size(&c.path) as f64 / 1e6,
            c.predicted.as_ref().map_or("-".into(), |p| format!(
                "{:.2}",
                p.stored_bytes as f64 / 1e6
            )),
            read(&c.label).map_or("-".into(), |v| format!("{v:.0}")),
            c.predicted
                .as_ref()
                .map_or("-".into(), |p| format!("{:.0}", p.read_mb_per_s)),
        );
    }
    md.push('\n');
    let of = |label: &str| candidates.iter().find(|c| c.label == label);
    let mut target = |goal: &str, against: &str| {
        let (Some(g), Some(a)) = (of(goal), of(against)) else {
            return;
        };
        let (Some(rg), Some(ra)) = (read(goal), read(against)) else {
            return;
        };
        let _ = writeln!(
            md,
            "- `{goal}` against {against}: size {:.3}x, read speed {:.2}x",
            size(&g.path) as f64 / size(&a.path) as f64,
            rg / ra
        );
    };
    target("--goal balanced", "uniform zstd:5");
    target("--goal read", "uniform lz4");
    target("--goal size", "uniform zstd:5");
    support::write_report("advisor.md", &md);
}
