//! Reading a NanoAOD-like ROOT file into columns with `evtc-root`, against uproot's
//! `tree.arrays()` on the same files in the same run; writes `target/evtc-bench/root_read.md`.
//!
//! Run: `cargo bench --bench root_read`. The ROOT files are written by
//! `crates/root/tests/fixtures/make_fixtures.py --nano` with ROOT from PyPI (`python3 -m venv
//! .venv-root && .venv-root/bin/pip install root uproot`), into `target/root-bench/` (not
//! committed: about 100 MB). `EVTC_BENCH_ROOT_EVENTS` sets the events (default 200,000);
//! `EVTC_PYTHON` the interpreter (default `.venv-root/bin/python`). Without ROOT and uproot the
//! bench says so and writes no report.

mod support;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::SystemTime;

use criterion::{Criterion, Throughput};
use evtc::root::{ColumnData, ColumnReader, RootFile};

const SETTINGS: [i32; 4] = [0, 101, 404, 505];
/// The rows of the report: the TTree of each setting, then the RNTuple.
const LABELS: [&str; 5] = ["0", "101", "404", "505", "RNTuple 505"];

/// Reads every column of the tree, single thread, with long-lived readers (as a conversion keeps
/// them); returns the bytes of values.
fn read_all(readers: &mut [ColumnReader<'_>], buffers: &mut [ColumnData], entries: u64) -> usize {
    let mut bytes = 0;
    for (reader, data) in readers.iter_mut().zip(buffers.iter_mut()) {
        data.clear();
        reader.forget();
        reader.read(0..entries, data).expect("read");
        bytes += data.values.byte_len();
    }
    bytes
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let events = support::root_events();
    // The TTrees of each setting, then the same data as an RNTuple (zstd:5).
    let Some(paths) = SETTINGS
        .iter()
        .map(|&s| support::nano_root_file(s, events))
        .chain([support::nano_rntuple_file(events)])
        .collect::<Option<Vec<PathBuf>>>()
    else {
        println!(
            "root_read: skipped: the ROOT files could not be written (needs ROOT and uproot from PyPI in .venv-root, see the bench's docs)"
        );
        return;
    };
    let mut value_bytes = Vec::new();
    let mut group = c.benchmark_group("root_read");
    group.sample_size(10);
    for (label, path) in LABELS.iter().zip(&paths) {
        let file = RootFile::open(path).expect("open");
        let tree = file.tree("Events").expect("tree");
        let mut buffers: Vec<ColumnData> = tree
            .columns
            .iter()
            .map(|c| ColumnData::new(c.kind))
            .collect();
        let mut readers: Vec<_> = tree.columns.iter().map(|c| file.column_reader(c)).collect();
        let bytes = read_all(&mut readers, &mut buffers, tree.entries);
        value_bytes.push(bytes);
        group.throughput(Throughput::Bytes(bytes as u64));
        group.bench_function(format!("evtc-root {label}"), |b| {
            b.iter(|| black_box(read_all(&mut readers, &mut buffers, tree.entries)))
        });
    }
    group.finish();
    let medians = support::medians("root_read", since);
    let uproot = Command::new(support::python())
        .arg("benches/peers/uproot_read.py")
        .args(&paths)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok());
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Reading ROOT files into columns: evtc-root against uproot\n"
    );
    let _ = writeln!(
        md,
        "Machine: {}. Command: `cargo bench --bench root_read`. A NanoAOD-like tree of {events} events (114 branches, made by `make_fixtures.py --nano`) in ROOT's compression settings 0, 101, 404 and 505, and the same data as an RNTuple (ROOT 6.40's `RNTupleImporter`, zstd:5); every branch (field) read into columns, single thread, hot page cache. evtc-root: criterion median; uproot {}: median of 5 `tree.arrays()` calls (`benches/peers/uproot_read.py`), in the same run. MB/s of values (flattened contents, as evtc-root counts them, over each reader's time).\n",
        support::machine(),
        Command::new(support::python())
            .args(["-c", "import uproot; print(uproot.__version__)"])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    );
    let _ = writeln!(
        md,
        "| setting | file MB | values MB | evtc-root MB/s | uproot MB/s | evtc-root / uproot | target >= 1.5x |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for ((setting, path), bytes) in LABELS.iter().zip(&paths).zip(&value_bytes) {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let ours = medians
            .get(&format!("evtc-root {setting}"))
            .map(|&ns| support::mb_per_s(*bytes, ns));
        // The same bytes over uproot's time: of an RNTuple, uproot also reads the importer's
        // `_collectionN` records, the same columns again, which its own count would add.
        let theirs = uproot.as_ref().and_then(|u| {
            let entry = &u[path.display().to_string()];
            Some(*bytes as f64 / entry["median_s"].as_f64()? / 1e6)
        });
        let cell = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.0}"));
        let ratio = ours.zip(theirs).map(|(a, b)| a / b);
        let _ = writeln!(
            md,
            "| {setting} | {:.1} | {:.1} | {} | {} | {} | {} |",
            size as f64 / 1e6,
            *bytes as f64 / 1e6,
            cell(ours),
            cell(theirs),
            ratio.map_or("-".to_owned(), |r| format!("{r:.2}x")),
            ratio.map_or("-", |r| if r >= 1.5 { "met" } else { "missed" }),
        );
    }
    support::write_report("root_read.md", &md);
}
