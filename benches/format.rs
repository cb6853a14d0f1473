//! File-format benchmarks on the NanoAOD-like event table; writes `target/evtc-bench/format.md`.
//!
//! Run: `cargo bench --bench format` (about 10 minutes on 2 cores). `EVTC_BENCH_EVENTS` changes the
//! number of events (default 200,000).

mod support;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput};
use evtc::codecs::{Codec, Compressor, Decompressor};
use evtc::datagen::nano::{self, Column};
use evtc::format::{
    Boundaries, BranchSpec, ClusterSize, DataType, FileReader, FileWriter, ReadOptions, ScalarType,
    WriteOptions,
};

const WRITE_CODECS: [&str; 5] = ["none", "lz4", "zstd:1", "zstd:5", "zlib:6"];

fn events() -> usize {
    std::env::var("EVTC_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

fn raw_bytes(columns: &[Column]) -> usize {
    columns
        .iter()
        .map(|c| c.values.len() * c.values.value_size())
        .sum()
}

/// Reads every branch in bulk; returns the number of value bytes read.
fn bulk_read(path: &Path, threads: usize) -> usize {
    let file = FileReader::open_with(path, ReadOptions::default().threads(threads)).expect("open");
    let tree = file.tree("Events").expect("tree");
    let mut bytes = 0;
    for b in tree.branches() {
        let reader = tree.branch(&b.name).expect("branch");
        bytes += match (b.dtype, b.dtype.scalar()) {
            (DataType::Scalar(_), ScalarType::Bool) => reader.read::<bool>().expect("read").len(),
            (DataType::Scalar(_), ScalarType::U8) => reader.read::<u8>().expect("read").len(),
            (DataType::Scalar(_), ScalarType::I32) => 4 * reader.read::<i32>().expect("read").len(),
            (DataType::Scalar(_), ScalarType::U32) => 4 * reader.read::<u32>().expect("read").len(),
            (DataType::Scalar(_), ScalarType::U64) => 8 * reader.read::<u64>().expect("read").len(),
            (DataType::Scalar(_), ScalarType::F32) => 4 * reader.read::<f32>().expect("read").len(),
            (_, ScalarType::Bool) => reader.read_jagged::<bool>().expect("read").values.len(),
            (_, ScalarType::U8) => reader.read_jagged::<u8>().expect("read").values.len(),
            (_, ScalarType::I32) => 4 * reader.read_jagged::<i32>().expect("read").values.len(),
            (_, ScalarType::F32) => 4 * reader.read_jagged::<f32>().expect("read").values.len(),
            other => panic!("unexpected branch type {other:?}"),
        };
    }
    bytes
}

/// Reads every branch entry by entry through cursors (ROOT's GetEntry loop); returns value bytes.
fn entry_loop(path: &Path) -> usize {
    let file = FileReader::open_with(path, ReadOptions::default().threads(1)).expect("open");
    let tree = file.tree("Events").expect("tree");
    let mut bytes = 0;
    // One cursor per branch, all advanced together, as an event loop does.
    enum Cursor<'a> {
        Bool(evtc::format::BranchCursor<'a, evtc::format::LocalFile, bool>),
        U8(evtc::format::BranchCursor<'a, evtc::format::LocalFile, u8>),
        I32(evtc::format::BranchCursor<'a, evtc::format::LocalFile, i32>),
        U32(evtc::format::BranchCursor<'a, evtc::format::LocalFile, u32>),
        U64(evtc::format::BranchCursor<'a, evtc::format::LocalFile, u64>),
        F32(evtc::format::BranchCursor<'a, evtc::format::LocalFile, f32>),
    }
    let mut cursors: Vec<Cursor<'_>> = tree
        .branches()
        .iter()
        .map(|b| {
            let r = tree.branch(&b.name).expect("branch");
            match b.dtype.scalar() {
                ScalarType::Bool => Cursor::Bool(r.cursor().expect("cursor")),
                ScalarType::U8 => Cursor::U8(r.cursor().expect("cursor")),
                ScalarType::I32 => Cursor::I32(r.cursor().expect("cursor")),
                ScalarType::U32 => Cursor::U32(r.cursor().expect("cursor")),
                ScalarType::U64 => Cursor::U64(r.cursor().expect("cursor")),
                ScalarType::F32 => Cursor::F32(r.cursor().expect("cursor")),
                other => panic!("unexpected {other}"),
            }
        })
        .collect();
    for entry in 0..tree.entries() {
        for c in &mut cursors {
            bytes += match c {
                Cursor::Bool(c) => c.get(entry).expect("get").len(),
                Cursor::U8(c) => c.get(entry).expect("get").len(),
                Cursor::I32(c) => 4 * c.get(entry).expect("get").len(),
                Cursor::U32(c) => 4 * c.get(entry).expect("get").len(),
                Cursor::U64(c) => 8 * c.get(entry).expect("get").len(),
                Cursor::F32(c) => 4 * black_box(c.get(entry).expect("get")).len(),
            };
        }
    }
    bytes
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).expect("metadata").len()
}

/// Peak resident memory of a child process running one job of this bench (Linux: VmHWM).
fn peak_memory(job: &str, path: &Path) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe)
        .env("EVTC_BENCH_CHILD", job)
        .env("EVTC_BENCH_PATH", path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("peak-kib "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
}

fn child(job: &str) {
    let path = PathBuf::from(std::env::var_os("EVTC_BENCH_PATH").expect("path"));
    match job {
        "write" => {
            let columns = nano::events(events(), 1);
            support::write_nano(
                &path,
                &columns,
                WriteOptions::default()
                    .overwrite(true)
                    .codec(Codec::DEFAULT)
                    .threads(2),
                None,
            );
        }
        "read" => {
            black_box(bulk_read(&path, 2));
        }
        _ => panic!("unknown job {job}"),
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
        let kib = line.split_whitespace().nth(1).unwrap_or("0");
        println!("peak-kib {kib}");
    }
}

/// A file with `branches` scalar f32 branches of 1,000 entries each.
fn wide_file(path: &Path, branches: usize) {
    let specs = (0..branches)
        .map(|i| BranchSpec::scalar(format!("b{i:05}"), ScalarType::F32))
        .collect();
    let mut file = FileWriter::create(path, WriteOptions::default().overwrite(true).threads(2))
        .expect("create");
    let mut tree = file.tree("Wide", specs).expect("tree");
    let values: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    for b in 0..branches {
        tree.fill_column(b, &values).expect("fill");
    }
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    file.finish().expect("finish");
}

fn main() {
    if let Ok(job) = std::env::var("EVTC_BENCH_CHILD") {
        child(&job);
        return;
    }
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let (b, mut md) = Bench::new();
    bench_write(&mut c, &b);
    bench_read(&mut c, &b);
    let big_raw = bench_branch(&mut c, &b);
    bench_open(&mut c, &b);
    c.final_summary();
    report_speeds(&mut md, &b, since);
    report_boundaries(&mut md, &b);
    report_autoflush(&mut md, &b);
    report_branch_and_open(&mut md, since, big_raw);
    report_peak_memory(&mut md, &b);
    support::write_report("format.md", &md);
}

/// What the benchmark groups and the report share: the event table and its files.
struct Bench {
    dir: tempfile::TempDir,
    columns: Vec<Column>,
    raw: usize,
}

impl Bench {
    /// Generates the table, writes it once per codec (for sizes and reads) and starts the
    /// report.
    fn new() -> (Bench, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let n = events();
        let columns = nano::events(n, 1);
        let raw = raw_bytes(&columns);
        let mut md = String::new();
        let _ = writeln!(
            md,
            "# evtc file-format benchmarks\n\nMachine: {}. Command: `cargo bench --bench format`.",
            support::machine()
        );
        let _ = writeln!(
            md,
            "Data: `evtc_datagen::nano::events({n}, 1)`: {} branches ({} variable-length), {:.1} MB of values. Criterion medians.\n",
            columns.len(),
            columns.iter().filter(|c| c.counter.is_some()).count(),
            raw as f64 / 1e6
        );

        let b = Bench { dir, columns, raw };
        // Files per codec, written once for sizes and reads.
        let (columns, path_for) = (&b.columns, |codec: &str| b.path_for(codec));
        for codec in WRITE_CODECS.iter().chain(["lzma:9"].iter()) {
            let started = Instant::now();
            support::write_nano(
                &path_for(codec),
                columns,
                WriteOptions::default()
                    .overwrite(true)
                    .codec(codec.parse().expect("codec")),
                None,
            );
            if *codec == "lzma:9" {
                let _ = writeln!(
                    md,
                    "lzma:9 write (one run, 2 threads): {:.1} s\n",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        (b, md)
    }

    /// The file of the table written with `codec`.
    fn path_for(&self, codec: &str) -> PathBuf {
        self.dir
            .path()
            .join(format!("nano-{}.evtc", codec.replace(':', "")))
    }
}

/// Writing the table with each codec and 1 or 2 threads.
fn bench_write(c: &mut Criterion, b: &Bench) {
    let (dir, columns, raw) = (&b.dir, &b.columns, b.raw);
    let mut group = c.benchmark_group("write");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(raw as u64));
    for codec in WRITE_CODECS {
        for threads in [1, 2] {
            let path = dir.path().join("write.evtc");
            // Without fsync: the writer's own speed, not the disk's (one fsync'd row below).
            let options = WriteOptions::default()
                .overwrite(true)
                .codec(codec.parse().expect("codec"))
                .threads(threads)
                .sync(false);
            group.bench_function(format!("{codec} - {threads} threads"), |b| {
                b.iter(|| support::write_nano(&path, columns, options.clone(), None))
            });
        }
    }
    let path = dir.path().join("write-sync.evtc");
    let options = WriteOptions::default()
        .overwrite(true)
        .codec(Codec::DEFAULT)
        .threads(2);
    group.bench_function("zstd:5 with fsync - 2 threads", |b| {
        b.iter(|| support::write_nano(&path, columns, options.clone(), None))
    });
    group.finish();
}

/// Reading it back in bulk and entry by entry.
fn bench_read(c: &mut Criterion, b: &Bench) {
    let raw = b.raw;
    let path_for = |codec: &str| b.path_for(codec);
    let mut group = c.benchmark_group("read");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(raw as u64));
    for codec in WRITE_CODECS.iter().chain(["lzma:9"].iter()) {
        let path = path_for(codec);
        for threads in [1, 2] {
            group.bench_function(format!("bulk {codec} - {threads} threads"), |b| {
                b.iter(|| bulk_read(&path, threads))
            });
        }
        group.bench_function(format!("entry loop {codec}"), |b| {
            b.iter(|| entry_loop(&path))
        });
    }
    group.finish();
}

/// One large branch: bulk reads (fresh and reused buffers) against raw lz4_flex; returns its
/// bytes.
fn bench_branch(c: &mut Criterion, b: &Bench) -> usize {
    let dir = &b.dir;
    // One large branch: uncompressed bulk read, and lz4 bulk read against raw lz4_flex on the same bytes.
    let big: Vec<f32> = evtc::datagen::rac::tsmall(16_000, 3); // 64 MB, compressible
    let big_raw = big.len() * 4;
    let mut group = c.benchmark_group("branch");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(big_raw as u64));
    for codec in ["none", "lz4"] {
        let path = dir.path().join(format!("big-{codec}.evtc"));
        let mut file = FileWriter::create(
            &path,
            WriteOptions::default()
                .overwrite(true)
                .codec(codec.parse().expect("codec")),
        )
        .expect("create");
        let spec =
            BranchSpec::scalar("x", ScalarType::F32).precondition(evtc::codecs::Precondition::None);
        let mut tree = file.tree("T", vec![spec]).expect("tree");
        tree.fill_column(0, &big).expect("fill");
        tree.commit().expect("commit");
        tree.finish().expect("finish");
        file.finish().expect("finish");
        for threads in [1, 2] {
            group.bench_function(format!("bulk read {codec} - {threads} threads"), |b| {
                b.iter(|| {
                    let file =
                        FileReader::open_with(&path, ReadOptions::default().threads(threads))
                            .expect("open");
                    file.tree("T")
                        .expect("tree")
                        .branch("x")
                        .expect("branch")
                        .read::<f32>()
                        .expect("read")
                        .len()
                })
            });
        }
    }
    // Reading into one reused buffer (the memory is mapped once, as raw lz4_flex's is below).
    for codec in ["none", "lz4"] {
        let path = dir.path().join(format!("big-{codec}.evtc"));
        for threads in [1, 2] {
            let file = FileReader::open_with(&path, ReadOptions::default().threads(threads))
                .expect("open");
            let branch = file.tree("T").expect("tree").branch("x").expect("branch");
            let mut out = Vec::new();
            group.bench_function(
                format!("bulk read {codec} reused - {threads} threads"),
                |b| {
                    b.iter(|| {
                        branch.read_into::<f32>(&mut out).expect("read");
                        out.len()
                    })
                },
            );
        }
    }
    // The same 256 KiB baskets through lz4_flex directly.
    let bytes = evtc::datagen::le_bytes(&big);
    let blocks: Vec<(Vec<u8>, usize)> = bytes
        .chunks(256 << 10)
        .map(|chunk| {
            let mut out = Vec::new();
            Compressor::new()
                .compress(Codec::LZ4, chunk, &mut out)
                .expect("lz4");
            (out, chunk.len())
        })
        .collect();
    let mut back = vec![0u8; bytes.len()];
    group.bench_function("raw lz4_flex - 1 threads", |b| {
        b.iter(|| {
            let mut at = 0;
            for (block, len) in &blocks {
                lz4_flex::block::decompress_into(block, &mut back[at..at + len]).expect("lz4");
                at += len;
            }
        })
    });
    drop(Decompressor::new());
    group.finish();
    big_raw
}

/// Opening files of 2,000 and 20,000 branches.
fn bench_open(c: &mut Criterion, b: &Bench) {
    let dir = &b.dir;
    let mut group = c.benchmark_group("open");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for branches in [2_000, 20_000] {
        let path = dir.path().join(format!("wide-{branches}.evtc"));
        wide_file(&path, branches);
        group.bench_function(
            format!("open and read one branch - {branches} branches"),
            |b| {
                b.iter(|| {
                    let file = FileReader::open(&path).expect("open");
                    let tree = file.tree("Wide").expect("tree");
                    tree.branch("b01234")
                        .expect("branch")
                        .read::<f32>()
                        .expect("read")
                        .len()
                })
            },
        );
    }
    group.finish();
    c.final_summary();
}

/// The write and read speeds and file sizes.
fn report_speeds(md: &mut String, b: &Bench, since: SystemTime) {
    let raw = b.raw;
    let path_for = |codec: &str| b.path_for(codec);
    // Report.
    let write_t = support::medians("write", since);
    let read_t = support::medians("read", since);
    let _ = writeln!(
        md,
        "## Write and read speed (MB/s of values) and file size\n"
    );
    let _ = writeln!(
        md,
        "| codec | file MB | ratio | write 1 thread | write 2 threads | bulk read 1 thread | bulk read 2 threads | entry loop |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for codec in WRITE_CODECS.iter().chain(["lzma:9"].iter()) {
        let size = file_len(&path_for(codec));
        let rate = |map: &std::collections::BTreeMap<String, f64>, key: String| {
            map.get(&key).map_or_else(
                || "-".into(),
                |&ns| format!("{:.0}", support::mb_per_s(raw, ns)),
            )
        };
        let _ = writeln!(
            md,
            "| {codec} | {:.2} | {:.2} | {} | {} | {} | {} | {} |",
            size as f64 / 1e6,
            raw as f64 / size as f64,
            rate(&write_t, format!("{codec} - 1 threads")),
            rate(&write_t, format!("{codec} - 2 threads")),
            rate(&read_t, format!("bulk {codec} - 1 threads")),
            rate(&read_t, format!("bulk {codec} - 2 threads")),
            rate(&read_t, format!("entry loop {codec}")),
        );
    }
    let synced = write_t.get("zstd:5 with fsync - 2 threads").map_or_else(
        || "-".into(),
        |&ns| format!("{:.0}", support::mb_per_s(raw, ns)),
    );
    let _ = writeln!(
        md,
        "\nWrite speeds are without fsync (`WriteOptions::sync(false)`): the writer, not the disk. With fsync (the default), zstd:5 on 2 threads writes {synced} MB/s here."
    );
    if let (Some(one), Some(two)) = (
        write_t.get("zstd:5 - 1 threads"),
        write_t.get("zstd:5 - 2 threads"),
    ) {
        let _ = writeln!(
            md,
            "zstd:5 write speed-up with 2 threads: {:.2}x",
            one / two
        );
    }
    let lz4 = file_len(&path_for("lz4"));
    let lzma = file_len(&path_for("lzma:9"));
    let _ = writeln!(
        md,
        "lz4 file / lzma:9 file: {:.2}\n",
        lz4 as f64 / lzma as f64
    );
}

/// The file sizes of each entry-boundary encoding.
fn report_boundaries(md: &mut String, b: &Bench) {
    let (dir, columns) = (&b.dir, &b.columns);
    // Entry-boundary encodings.
    let _ = writeln!(
        md,
        "## Entry-boundary encodings of the {} variable-length branches (file MB)\n",
        columns.iter().filter(|c| c.counter.is_some()).count()
    );
    let _ = writeln!(
        md,
        "| codec | offsets | counts | none (counter) | counts vs offsets | none vs offsets |\n|---|---|---|---|---|---|"
    );
    for codec in ["zstd:5", "lz4", "zlib:6", "lzma:9"] {
        let sizes: Vec<u64> = [Boundaries::Offsets, Boundaries::Counts, Boundaries::None]
            .into_iter()
            .map(|b| {
                let path = dir.path().join("enc.evtc");
                support::write_nano(
                    &path,
                    columns,
                    WriteOptions::default()
                        .overwrite(true)
                        .codec(codec.parse().expect("codec")),
                    Some(b),
                );
                file_len(&path)
            })
            .collect();
        let saving = |s: u64| format!("{:.1}%", 100.0 * (1.0 - s as f64 / sizes[0] as f64));
        let _ = writeln!(
            md,
            "| {codec} | {:.2} | {:.2} | {:.2} | {} smaller | {} smaller |",
            sizes[0] as f64 / 1e6,
            sizes[1] as f64 / 1e6,
            sizes[2] as f64 / 1e6,
            saving(sizes[1]),
            saving(sizes[2])
        );
    }
}

/// The AutoFlush sweep.
fn report_autoflush(md: &mut String, b: &Bench) {
    let (dir, columns, raw) = (&b.dir, &b.columns, b.raw);
    // AutoFlush sweep (flush at cluster: one basket per branch per cluster, as ATLAS measured).
    let _ = writeln!(
        md,
        "\n## AutoFlush sweep (zstd:5, one basket per branch per cluster; single runs)\n"
    );
    let _ = writeln!(
        md,
        "| entries per cluster | file MB | bulk read MB/s (2 threads) |\n|---|---|---|"
    );
    for per_cluster in [100u64, 1_000, 10_000, 100_000] {
        let path = dir.path().join("sweep.evtc");
        let options = WriteOptions::default()
            .overwrite(true)
            .cluster_size(ClusterSize::Entries(per_cluster))
            .flush_at_cluster(true);
        support::write_nano(&path, columns, options, None);
        let mut best = f64::MAX;
        for _ in 0..3 {
            let started = Instant::now();
            black_box(bulk_read(&path, 2));
            best = best.min(started.elapsed().as_secs_f64());
        }
        let _ = writeln!(
            md,
            "| {per_cluster} | {:.2} | {:.0} (best of 3) |",
            file_len(&path) as f64 / 1e6,
            raw as f64 / best / 1e6
        );
    }
}

/// The large branch's reads and the wide files' opens.
fn report_branch_and_open(md: &mut String, since: SystemTime, big_raw: usize) {
    let branch_t = support::medians("branch", since);
    let _ = writeln!(
        md,
        "\n## One 64 MB f32 branch (TSmall-like values, no preconditioner; MB/s)\n"
    );
    let _ = writeln!(md, "| read | 1 thread | 2 threads |\n|---|---|---|");
    for what in [
        "bulk read none",
        "bulk read none reused",
        "bulk read lz4",
        "bulk read lz4 reused",
        "raw lz4_flex",
    ] {
        let cell = |t: usize| {
            branch_t.get(&format!("{what} - {t} threads")).map_or_else(
                || "-".into(),
                |&ns| format!("{:.0}", support::mb_per_s(big_raw, ns)),
            )
        };
        let _ = writeln!(md, "| {what} | {} | {} |", cell(1), cell(2));
    }
    if let (Some(ours), Some(reused), Some(raw_lz4)) = (
        branch_t.get("bulk read lz4 - 1 threads"),
        branch_t.get("bulk read lz4 reused - 1 threads"),
        branch_t.get("raw lz4_flex - 1 threads"),
    ) {
        let _ = writeln!(
            md,
            "\nevtc lz4 bulk read / raw lz4_flex (1 thread; lz4_flex writes into a warm buffer): {:.0}% into a reused buffer, {:.0}% into a fresh one",
            100.0 * raw_lz4 / reused,
            100.0 * raw_lz4 / ours
        );
    }

    let open_t = support::medians("open", since);
    let _ = writeln!(
        md,
        "\n## Opening wide files\n\n| branches | open + read one branch |\n|---|---|"
    );
    for branches in [2_000, 20_000] {
        if let Some(ns) = open_t.get(&format!("open and read one branch - {branches} branches")) {
            let _ = writeln!(md, "| {branches} | {:.2} ms |", ns / 1e6);
        }
    }
}

/// Peak memory of a write and a read, each in a child process.
fn report_peak_memory(md: &mut String, b: &Bench) {
    let (dir, raw) = (&b.dir, b.raw);
    let _ = writeln!(
        md,
        "\n## Peak memory (VmHWM of a child process)\n\n| job | peak MiB |\n|---|---|"
    );
    let path = dir.path().join("peak.evtc");
    for job in ["write", "read"] {
        if let Some(mib) = peak_memory(job, &path) {
            let what = if job == "write" {
                format!(
                    "write zstd:5, 2 threads (the process also holds the generated {:.0} MB table)",
                    raw as f64 / 1e6
                )
            } else {
                "bulk read of every branch, one branch at a time, 2 threads".to_owned()
            };
            let _ = writeln!(md, "| {what} | {mib:.0} |");
        }
    }
}
