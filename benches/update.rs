//! Files that grow, on the NanoAOD-like event table (zstd:5): what appending entries and adding
//! a column cost against writing as much anew, whether that depends on the file's size, and
//! how a file appended to 1,000 times opens and reads against one written at once. Writes
//! `target/evtc-bench/update.md`.
//!
//! Run: `cargo bench --bench update` (about 5 minutes on 2 cores). `EVTC_BENCH_EVENTS` changes
//! the number of events of the large file (default 200,000).

mod support;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use criterion::{BatchSize, Criterion};
use evtc::datagen::nano::{self, Column};
use evtc::format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};

/// Entries each append adds, and the new file written for comparison holds.
const BATCH: usize = 10_000;

/// Appends of the many-appends file, and the entries each adds.
const APPENDS: usize = 1_000;
const SMALL_BATCH: usize = 200;

fn events() -> usize {
    std::env::var("EVTC_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

/// One writer thread; `EVTC_BENCH_SYNC=0` writes without syncing to disk (to see what the
/// syncs cost).
fn options() -> WriteOptions {
    let sync = std::env::var("EVTC_BENCH_SYNC").map_or(true, |v| v != "0");
    WriteOptions::default()
        .overwrite(true)
        .threads(1)
        .sync(sync)
}

/// The table and the files the groups share.
struct Files {
    dir: tempfile::TempDir,
    columns: Vec<Column>,
    /// The first `events()` entries, written at once.
    large: PathBuf,
    /// The first 2 x `BATCH` entries, written at once.
    small: PathBuf,
    /// `APPENDS` x `SMALL_BATCH` entries: written at once, and appended `APPENDS` times.
    once: PathBuf,
    appended: PathBuf,
    /// Seconds the appends took, all together.
    append_seconds: f64,
}

impl Files {
    fn new() -> Files {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = events().max(APPENDS * SMALL_BATCH + BATCH);
        let columns = nano::events(n, 1);
        let write = |name: &str, entries: usize| {
            let path = dir.path().join(name);
            new_file(&path, &columns, entries);
            path
        };
        let large = write("large.evtc", events());
        let small = write("small.evtc", 2 * BATCH);
        let once = write("once.evtc", APPENDS * SMALL_BATCH);
        let appended = write("appended.evtc", SMALL_BATCH);
        let started = Instant::now();
        for k in 1..APPENDS {
            append(&appended, &columns, k * SMALL_BATCH..(k + 1) * SMALL_BATCH);
        }
        let append_seconds = started.elapsed().as_secs_f64();
        Files {
            dir,
            columns,
            large,
            small,
            once,
            appended,
            append_seconds,
        }
    }

    /// A copy of `path` to append to.
    fn copy(&self, path: &Path) -> PathBuf {
        let to = self.dir.path().join("work.evtc");
        std::fs::copy(path, &to).expect("copy");
        to
    }
}

fn new_file(path: &Path, columns: &[Column], entries: usize) {
    let mut file = FileWriter::create(path, options()).expect("create");
    let mut tree = file
        .tree("Events", support::nano_specs(columns, None))
        .expect("tree");
    support::fill_nano(&mut tree, columns, 0..entries);
    tree.finish().expect("finish tree");
    file.finish().expect("finish");
}

fn append(path: &Path, columns: &[Column], entries: std::ops::Range<usize>) {
    let mut file = FileWriter::append(path, options()).expect("append");
    let mut tree = file.extend("Events").expect("extend");
    support::fill_nano(&mut tree, columns, entries);
    tree.finish().expect("finish tree");
    file.finish().expect("finish");
}

/// A score per entry, as an ML model would add.
fn scores(n: usize) -> Vec<f32> {
    (0..n)
        .map(|e| ((e * 2_654_435_761) % 1000) as f32 / 1000.0)
        .collect()
}

fn add_score(path: &Path, values: &[f32]) {
    let mut file = FileWriter::append(path, options()).expect("append");
    let mut tree = file
        .add_branches("Events", vec![BranchSpec::scalar("score", ScalarType::F32)])
        .expect("add");
    tree.fill_column(0, values).expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish tree");
    file.finish().expect("finish");
}

fn write_score(path: &Path, values: &[f32]) {
    let mut file = FileWriter::create(path, options()).expect("create");
    let mut tree = file
        .tree("Events", vec![BranchSpec::scalar("score", ScalarType::F32)])
        .expect("tree");
    tree.fill_column(0, values).expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish tree");
    file.finish().expect("finish");
}

/// Opens the file and reads one jagged branch whole (its index, in parts after appends).
fn open_and_read(path: &Path) -> usize {
    let file = FileReader::open(path).expect("open");
    let tree = file.tree("Events").expect("tree");
    let pt = tree
        .branch("Muon_pt")
        .expect("branch")
        .read_jagged::<f32>()
        .expect("read");
    pt.values.len()
}

fn bench_append(c: &mut Criterion, f: &Files) {
    let mut g = c.benchmark_group("update_entries");
    g.sample_size(10);
    let fresh = f.dir.path().join("fresh.evtc");
    g.bench_function("write_new", |b| {
        b.iter(|| new_file(&fresh, &f.columns, BATCH));
    });
    for (name, base) in [("append_to_small", &f.small), ("append_to_large", &f.large)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || f.copy(base),
                |work| append(&work, &f.columns, 0..BATCH),
                BatchSize::PerIteration,
            );
        });
    }
    g.finish();
    let mut g = c.benchmark_group("update_column");
    g.sample_size(10);
    let n = events();
    let values = scores(n);
    let column = f.dir.path().join("column.evtc");
    g.bench_function("write_new", |b| b.iter(|| write_score(&column, &values)));
    g.bench_function("add_to_large", |b| {
        b.iter_batched(
            || f.copy(&f.large),
            |work| add_score(&work, &values),
            BatchSize::PerIteration,
        );
    });
    g.finish();
}

fn bench_open(c: &mut Criterion, f: &Files) {
    let mut g = c.benchmark_group("update_open");
    for (name, path) in [("written_once", &f.once), ("appended_1000", &f.appended)] {
        g.bench_function(format!("open/{name}"), |b| {
            b.iter(|| black_box(FileReader::open(path).expect("open")));
        });
        g.bench_function(format!("read/{name}"), |b| {
            b.iter(|| black_box(open_and_read(path)));
        });
    }
    g.finish();
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let files = Files::new();
    bench_append(&mut c, &files);
    bench_open(&mut c, &files);
    c.final_summary();
    support::write_report("update.md", &report(&files, since));
}

fn report(f: &Files, since: SystemTime) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# evtc update benchmarks\n\nMachine: {}. Command: `cargo bench --bench update`; one \
         writer thread; NanoAOD-like table (114 branches), zstd:5.\n",
        support::machine()
    );
    let entries = support::medians("update_entries", since);
    let ms = |m: &std::collections::BTreeMap<String, f64>, k: &str| m.get(k).map(|ns| ns / 1e6);
    let _ = writeln!(
        md,
        "## Appending {BATCH} entries\n\n| to | ms | against writing them anew |\n|---|---:|---:|"
    );
    let new = ms(&entries, "write_new");
    for (label, key, size) in [
        ("a new file", "write_new", 0),
        ("a file of 20,000 entries", "append_to_small", 2 * BATCH),
        ("a file of the large table", "append_to_large", events()),
    ] {
        if let (Some(t), Some(n)) = (ms(&entries, key), new) {
            let label = if size > 0 {
                format!(
                    "{label} ({} MB)",
                    file_mb(if size == events() { &f.large } else { &f.small })
                )
            } else {
                label.to_owned()
            };
            let _ = writeln!(md, "| {label} | {t:.1} | {:.2}x |", t / n);
        }
    }
    let column = support::medians("update_column", since);
    let _ = writeln!(
        md,
        "\n## A float column of {} entries\n\n| | ms |\n|---|---:|",
        events()
    );
    for (label, key) in [
        ("written as a new file", "write_new"),
        ("added to the large table's file", "add_to_large"),
    ] {
        if let Some(t) = ms(&column, key) {
            let _ = writeln!(md, "| {label} | {t:.1} |");
        }
    }
    let open = support::medians("update_open", since);
    let _ = writeln!(
        md,
        "\n## {APPENDS} appends of {SMALL_BATCH} entries against one write\n\n\
         The appends took {:.1} s ({:.1} ms each). Each append writes a new footer and, per \
         branch, an index part; parts are merged as a binary counter merges (at most about \
         log2 of the appends remain).\n\n| file | MB | open, us | open + read Muon_pt, ms |\n|---|---:|---:|---:|",
        f.append_seconds,
        f.append_seconds * 1e3 / (APPENDS - 1) as f64
    );
    for (label, key, path) in [
        ("written at once", "written_once", &f.once),
        ("appended 1,000 times", "appended_1000", &f.appended),
    ] {
        let open_us = open
            .get(&format!("open/{key}"))
            .map_or(f64::NAN, |ns| ns / 1e3);
        let read_ms = open
            .get(&format!("read/{key}"))
            .map_or(f64::NAN, |ns| ns / 1e6);
        let _ = writeln!(
            md,
            "| {label} | {} | {open_us:.0} | {read_ms:.2} |",
            file_mb(path)
        );
    }
    md
}

fn file_mb(path: &Path) -> String {
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    format!("{:.1}", bytes as f64 / 1e6)
}
