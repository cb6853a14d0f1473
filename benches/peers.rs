//! evtc against ROOT 6.40 on the same NanoAOD-like data: file size, full read, single-entry
//! reads; writes `target/evtc-bench/peers.md`.
//!
//! Run: `cargo bench --bench peers`. ROOT's side runs through `benches/peers/root_side.py`
//! (ROOT and uproot from PyPI in `.venv-root`, see `crates/root/tests/fixtures/make_fixtures.py`;
//! `EVTC_PYTHON` overrides the interpreter); its loops are C++ compiled by ACLiC
//! (`benches/peers/root_loops.C`). The ROOT files (TTree in settings 101, 207, 404, 505, and an
//! RNTuple with zstd:5) go to `target/root-bench/`; `EVTC_BENCH_ROOT_EVENTS` sets the events
//! (default 200,000). The evtc files are converted from the TTree files by `evtc-convert` with
//! the same codec and level. Without ROOT the bench says so and writes no report.

mod support;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

use criterion::{Criterion, Throughput};
use evtc::codecs::Codec;
use evtc::convert::{ConvertOptions, convert};
use evtc::datagen::Rng;
use evtc::format::{FileReader, RacMode, ReadOptions, WriteOptions};

const SETTINGS: [i32; 4] = [101, 207, 404, 505];
const READS: usize = 1000;

fn run_python(args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new(support::python()).args(args).output().ok()?;
    if !out.status.success() {
        eprintln!("peers: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(out.stdout)
}

/// Reads every branch of the tree in bulk (one thread); returns the bytes of values.
fn bulk(file: &FileReader) -> usize {
    let tree = file.tree("Events").expect("tree");
    let mut bytes = 0;
    for meta in tree.branches() {
        let branch = tree.branch(&meta.name).expect("branch");
        let size = branch.meta().dtype.scalar().size() as u64;
        bytes += (branch.decode_all().expect("read") * size) as usize;
    }
    bytes
}

/// Every branch of every entry through the row reader (ROOT's GetEntry loop).
fn entry_loop(file: &FileReader) -> usize {
    let tree = file.tree("Events").expect("tree");
    let names: Vec<&str> = tree.branches().iter().map(|b| b.name.as_str()).collect();
    let mut rows = tree.rows(&names).expect("rows");
    let mut values = 0;
    for e in 0..tree.entries() {
        values += rows.get(e).expect("row").len();
    }
    values
}

/// `READS` reads of Jet_pt at seeded random entries through one cursor.
fn random(file: &FileReader, entries: &[u64]) -> usize {
    let tree = file.tree("Events").expect("tree");
    let branch = tree.branch("Jet_pt").expect("Jet_pt");
    let mut cursor = branch.cursor::<f32>().expect("cursor");
    entries
        .iter()
        .map(|&e| cursor.get(e).expect("entry").len())
        .sum()
}

fn convert_to(input: &Path, output: &Path, write: WriteOptions) {
    if output.exists() {
        return;
    }
    let options = ConvertOptions {
        write: write.sync(false),
        ..ConvertOptions::default()
    };
    convert(input, output, &options, &mut |_| {}).expect("convert");
}

fn size(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let events = support::root_events();
    let dir = support::root_dir();
    let root_file = |s: i32| dir.join(format!("nano_{events}_{s}.root"));
    if SETTINGS
        .iter()
        .any(|&s| support::nano_root_file(s, events).is_none())
    {
        println!("peers: skipped: ROOT from PyPI is needed in .venv-root (see the bench's docs)");
        return;
    }
    let rntuple = dir.join(format!("nano_{events}_rntuple.root"));
    if !rntuple.exists() {
        let made = run_python(&[
            "benches/peers/root_side.py",
            "rntuple",
            &root_file(505).display().to_string(),
            &rntuple.display().to_string(),
        ]);
        if made.is_none() {
            println!("peers: skipped: could not write the RNTuple file");
            return;
        }
    }
    let evtc_file = |s: i32, variant: &str| dir.join(format!("nano_{events}_{s}{variant}.evtc"));
    for s in SETTINGS {
        let codec = Codec::from_root_setting(s).expect("setting");
        let write = WriteOptions::default().codec(codec);
        convert_to(&root_file(s), &evtc_file(s, ""), write.clone());
        convert_to(&root_file(s), &evtc_file(s, "_rac"), write.rac(RacMode::On));
    }
    let zstd5 = WriteOptions::default().codec(Codec::zstd(5).expect("zstd:5"));
    let big = evtc_file(505, "_1mib");
    convert_to(&root_file(505), &big, zstd5.clone().basket_size(1 << 20));
    // LZMA decodes about ten times slower per byte than zstd: its units cost the most.
    let small_units = evtc_file(207, "_rac1k");
    convert_to(
        &root_file(207),
        &small_units,
        WriteOptions::default()
            .codec(Codec::from_root_setting(207).expect("setting"))
            .rac(RacMode::On)
            .rac_unit_bytes(1024),
    );

    let mut rng = Rng::new(7);
    let entries: Vec<u64> = (0..READS).map(|_| rng.below(events)).collect();
    let options = ReadOptions::default().threads(1);
    let mut value_bytes = 0;
    let mut group = c.benchmark_group("peers");
    group.sample_size(10);
    for s in SETTINGS {
        let file = FileReader::open_with(evtc_file(s, ""), options.clone()).expect("open");
        value_bytes = bulk(&file);
        group.throughput(Throughput::Bytes(value_bytes as u64));
        group.bench_function(format!("bulk {s}"), |b| b.iter(|| black_box(bulk(&file))));
        group.bench_function(format!("loop {s}"), |b| {
            b.iter(|| black_box(entry_loop(&file)))
        });
        group.throughput(Throughput::Elements(READS as u64));
        group.bench_function(format!("random {s}"), |b| {
            b.iter(|| black_box(random(&file, &entries)))
        });
        let rac = FileReader::open_with(evtc_file(s, "_rac"), options.clone()).expect("open");
        group.bench_function(format!("random rac {s}"), |b| {
            b.iter(|| black_box(random(&rac, &entries)))
        });
    }
    let rac1k = FileReader::open_with(&small_units, options.clone()).expect("open");
    group.bench_function("random rac1k 207", |b| {
        b.iter(|| black_box(random(&rac1k, &entries)))
    });
    group.finish();
    let medians = support::medians("peers", since);

    let mut root_args = vec![
        "benches/peers/root_side.py".to_owned(),
        "time".into(),
        "--repeat".into(),
        "5".into(),
    ];
    root_args.extend(SETTINGS.iter().map(|&s| root_file(s).display().to_string()));
    root_args.push(rntuple.display().to_string());
    let refs: Vec<&str> = root_args.iter().map(String::as_str).collect();
    let root: Option<serde_json::Value> =
        run_python(&refs).and_then(|out| serde_json::from_slice(&out).ok());
    let root_of = |path: &Path, key: &str| {
        root.as_ref()
            .and_then(|r| r[path.display().to_string()][key].as_f64())
    };

    let mb_s = |ns: Option<f64>| ns.map(|ns| support::mb_per_s(value_bytes, ns));
    let cell =
        |v: Option<f64>, digits: usize| v.map_or("-".to_owned(), |v| format!("{v:.digits$}"));
    let mut md = String::new();
    let _ = writeln!(md, "# evtc against ROOT 6.40 on the same data\n");
    let _ = writeln!(
        md,
        "Machine: {}. Command: `cargo bench --bench peers`. A NanoAOD-like tree of {events} events, 28 branches, {:.1} MB of values, written by ROOT 6.40 (`make_fixtures.py --nano`) as a TTree in each setting and once as an RNTuple (RDataFrame Snapshot, zstd level 5); the evtc files are converted from the TTree files with the same codec and level, default 256 KiB baskets. Single thread, hot page cache. ROOT: C++ compiled by ACLiC with -O (`benches/peers/root_loops.C`), median of 5 runs; evtc: criterion medians. Full read: every branch of every entry (ROOT: `TTree::GetEntry` loop; RNTuple: `RNTupleReader::LoadEntry` loop; evtc: bulk read of every branch, and the row reader). Random: {READS} single-entry reads of `Jet_pt` at seeded random entries (ROOT: `TBranch::GetEntry` of `nJet` then `Jet_pt`; evtc: one cursor, without and with RAC), microseconds per entry.\n",
        support::machine(),
        value_bytes as f64 / 1e6
    );
    let _ = writeln!(
        md,
        "| setting | TTree MB | evtc MB | evtc RAC MB | TTree loop MB/s | evtc bulk MB/s | evtc rows MB/s | bulk / TTree | TTree random us | evtc random us | evtc RAC random us | TTree / RAC |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut worst_bulk = f64::INFINITY;
    let mut worst_random = f64::INFINITY;
    let mut bulk_505 = None;
    for s in SETTINGS {
        let ttree = root_file(s);
        let loop_mb = root_of(&ttree, "loop_s").map(|t| value_bytes as f64 / t / 1e6);
        let bulk_mb = mb_s(medians.get(&format!("bulk {s}")).copied());
        let rows_mb = mb_s(medians.get(&format!("loop {s}")).copied());
        let per = |key: String| medians.get(&key).map(|ns| ns / READS as f64 / 1000.0);
        let random = per(format!("random {s}"));
        let random_rac = per(format!("random rac {s}"));
        let root_random = root_of(&ttree, "random_us");
        let bulk_ratio = bulk_mb.zip(loop_mb).map(|(a, b)| a / b);
        let random_ratio = root_random.zip(random_rac).map(|(a, b)| a / b);
        worst_bulk = worst_bulk.min(bulk_ratio.unwrap_or(0.0));
        worst_random = worst_random.min(random_ratio.unwrap_or(0.0));
        if s == 505 {
            bulk_505 = bulk_mb;
        }
        let _ = writeln!(
            md,
            "| {s} ({}) | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} |",
            Codec::from_root_setting(s).expect("setting"),
            size(&ttree),
            size(&evtc_file(s, "")),
            size(&evtc_file(s, "_rac")),
            cell(loop_mb, 0),
            cell(bulk_mb, 0),
            cell(rows_mb, 0),
            cell(bulk_ratio, 1),
            cell(root_random, 1),
            cell(random, 1),
            cell(random_rac, 2),
            cell(random_ratio, 0),
        );
    }
    let rntuple_mb = root_of(&rntuple, "loop_s").map(|t| value_bytes as f64 / t / 1e6);
    let rac1k_us = medians
        .get("random rac1k 207")
        .map(|ns| ns / READS as f64 / 1000.0);
    let rac1k_ratio = root_of(&root_file(207), "random_us")
        .zip(rac1k_us)
        .map(|(a, b)| a / b);
    let _ = writeln!(
        md,
        "\nRNTuple (zstd:5): {:.2} MB, `LoadEntry` loop {} MB/s. evtc zstd:5 with 1 MiB baskets (`--basket-size 1MiB`): {:.2} MB. evtc lzma:7 with RAC units of 1 KiB (`--rac-unit 1KiB`; default {} KiB): {:.2} MB (default units: {:.2} MB), random read {} us, {}x faster than `TBranch::GetEntry`.\n",
        size(&rntuple),
        cell(rntuple_mb, 0),
        size(&big),
        evtc::rac::DEFAULT_MIN_UNIT_BYTES / 1024,
        size(&small_units),
        size(&evtc_file(207, "_rac")),
        cell(rac1k_us, 2),
        cell(rac1k_ratio, 0)
    );
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    let _ = writeln!(md, "| target | measured | verdict |\n|---|---|---|");
    let _ = writeln!(
        md,
        "| evtc zstd:5 file <= RNTuple zstd:5 file | {:.2} MB (default baskets), {:.2} MB (1 MiB baskets) vs {:.2} MB | {} (default), {} (1 MiB) |",
        size(&evtc_file(505, "")),
        size(&big),
        size(&rntuple),
        verdict(size(&evtc_file(505, "")) <= size(&rntuple)),
        verdict(size(&big) <= size(&rntuple)),
    );
    let rntuple_ratio = bulk_505.zip(rntuple_mb).map(|(a, b)| a / b);
    let _ = writeln!(
        md,
        "| full read >= 3x the TTree loop, every setting | worst {worst_bulk:.1}x | {} |",
        verdict(worst_bulk >= 3.0)
    );
    let _ = writeln!(
        md,
        "| full read >= 3x the RNTuple loop (zstd:5) | {}x | {} |",
        cell(rntuple_ratio, 1),
        verdict(rntuple_ratio.is_some_and(|r| r >= 3.0))
    );
    let _ = writeln!(
        md,
        "| random single-entry read with RAC >= 20x faster than TBranch::GetEntry | worst {worst_random:.0}x | {} |",
        verdict(worst_random >= 20.0)
    );
    support::write_report("peers.md", &md);
}
