//! evtc against ROOT 6.40 on the same NanoAOD-like data: file size, full read, single-entry
//! reads; writes `target/evtc-bench/peers.md`.
//!
//! Run: `cargo bench --bench peers`. ROOT's side runs through `benches/peers/root_side.py`
//! (ROOT and uproot from PyPI in `.venv-root`, see `crates/root/tests/fixtures/make_fixtures.py`;
//! `EVTC_PYTHON` overrides the interpreter); its loops are C++ compiled by ACLiC
//! (`benches/peers/root_loops.C`). The ROOT files (TTree in settings 101, 207, 404, 505, and an
//! RNTuple with zstd:5) go to `target/root-bench/`; `EVTC_BENCH_ROOT_EVENTS` sets the events
//! (default 200,000). The evtc files are converted from the TTree files by `evtc-tools` with
//! the same codec and level. Without ROOT the bench says so and writes no report.

mod support;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use criterion::{Criterion, Throughput};
use evtc::codecs::Codec;
use evtc::codecs::{Algorithm, BlockDecoder, BlockHeader, Decompressor};
use evtc::datagen::{Rng, rac};
use evtc::format::layout::RECORD_HEADER_LEN;
use evtc::format::{
    BranchCursor, FileReader, LocalFile, RacMode, ReadOptions, ScalarType, ValueRef,
};
use evtc::tools::{Settings, convert};

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

/// One compressed block of a file: where it starts and its header.
type Block = (usize, BlockHeader);

/// The bytes of the file at `path` and every compressed block of every basket of its tree: what
/// a bulk read decodes.
fn blocks(path: &Path) -> (Vec<u8>, Vec<Block>) {
    let bytes = std::fs::read(path).expect("read");
    let file = FileReader::open(path).expect("open");
    let tree = file.tree("Events").expect("tree");
    let mut blocks = Vec::new();
    for meta in tree.branches() {
        let branch = tree.branch(&meta.name).expect("branch");
        assert!(!meta.rac, "blocks of RAC baskets are not plain blocks");
        for loc in &branch.baskets().expect("index").baskets {
            let mut at = loc.offset as usize + RECORD_HEADER_LEN;
            let end = (loc.offset + loc.record_len) as usize;
            while at < end {
                let header = BlockHeader::parse(&bytes[at..]).expect("block");
                blocks.push((at, header));
                at += header.block_len() as usize;
            }
        }
    }
    (bytes, blocks)
}

/// What the codec alone decodes of a block: its algorithm, the codec's payload and the length it
/// decodes to (for a packing preconditioner, the packed bytes after their length).
fn codec_part(file: &[u8], (at, header): Block) -> (Algorithm, &[u8], usize) {
    let payload = &file[at + BlockHeader::LEN..at + header.block_len() as usize];
    if header.precondition.keeps_length() {
        (
            header.codec.algorithm(),
            payload,
            header.uncompressed_len as usize,
        )
    } else {
        let packed = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
        (header.codec.algorithm(), &payload[8..], packed as usize)
    }
}

/// The bytes the codec alone decodes `blocks` of `file` to: the values, or a packing
/// preconditioner's packed bytes. The codec's own decode speed is these bytes per second.
fn codec_output_bytes(file: &[u8], blocks: &[Block]) -> usize {
    blocks.iter().map(|&block| codec_part(file, block).2).sum()
}

/// Decodes `blocks` of `file` with the codec alone, each into its own place of one output as
/// long as all of them (reused from one call to the next, so no page faults; no preconditioner,
/// no entry boundaries, no file reads): the limit of the codec itself.
fn codec_into_memory(file: &[u8], blocks: &[Block], out: &mut Vec<u8>) -> usize {
    let total = blocks.iter().map(|b| b.1.uncompressed_len as usize).sum();
    out.resize(total, 0);
    let mut decompressor = Decompressor::new();
    let mut at = 0;
    for &block in blocks {
        let (algorithm, payload, len) = codec_part(file, block);
        decompressor
            .decompress(algorithm, payload, &mut out[at..at + len])
            .expect("decode");
        at += block.1.uncompressed_len as usize;
    }
    total
}

/// Decodes `blocks` of `file` with the block decoder (checksum, codec and preconditioner), each
/// into its own place of one output as long as all of them (reused, no page faults, no entry
/// boundaries, no file reads): the limit of a bulk read, which also finds the blocks in the
/// file and the entries' boundaries.
fn blocks_into_memory(file: &[u8], blocks: &[Block], out: &mut Vec<u8>) -> usize {
    let total = blocks.iter().map(|b| b.1.uncompressed_len as usize).sum();
    out.resize(total, 0);
    let mut decoder = BlockDecoder::new();
    let mut at = 0;
    for &(from, header) in blocks {
        let len = header.uncompressed_len as usize;
        decoder
            .decode_into(&file[from..], &mut out[at..at + len])
            .expect("decode");
        at += len;
    }
    total
}

/// Every branch of every entry through typed cursors, entry by entry (a C++-style loop).
fn cursor_loop(file: &FileReader) -> usize {
    enum Any<'a> {
        Bool(BranchCursor<'a, LocalFile, bool>),
        U8(BranchCursor<'a, LocalFile, u8>),
        I32(BranchCursor<'a, LocalFile, i32>),
        U32(BranchCursor<'a, LocalFile, u32>),
        U64(BranchCursor<'a, LocalFile, u64>),
        F32(BranchCursor<'a, LocalFile, f32>),
        I16(BranchCursor<'a, LocalFile, i16>),
    }
    let tree = file.tree("Events").expect("tree");
    let mut cursors: Vec<Any<'_>> = tree
        .branches()
        .iter()
        .map(|m| {
            let b = tree.branch(&m.name).expect("branch");
            match m.dtype.scalar() {
                ScalarType::Bool => Any::Bool(b.cursor().expect("cursor")),
                ScalarType::U8 => Any::U8(b.cursor().expect("cursor")),
                ScalarType::I16 => Any::I16(b.cursor().expect("cursor")),
                ScalarType::I32 => Any::I32(b.cursor().expect("cursor")),
                ScalarType::U32 => Any::U32(b.cursor().expect("cursor")),
                ScalarType::U64 => Any::U64(b.cursor().expect("cursor")),
                ScalarType::F32 => Any::F32(b.cursor().expect("cursor")),
                t => panic!("no cursor for {t} in this bench"),
            }
        })
        .collect();
    let mut values = 0;
    for e in 0..tree.entries() {
        for cursor in &mut cursors {
            values += match cursor {
                Any::Bool(c) => c.get(e).expect("entry").len(),
                Any::U8(c) => c.get(e).expect("entry").len(),
                Any::I16(c) => c.get(e).expect("entry").len(),
                Any::I32(c) => c.get(e).expect("entry").len(),
                Any::U32(c) => c.get(e).expect("entry").len(),
                Any::U64(c) => c.get(e).expect("entry").len(),
                Any::F32(c) => c.get(e).expect("entry").len(),
            };
        }
    }
    values
}

/// Every branch of every entry through the row reader's borrowed values.
fn row_loop(file: &FileReader) -> usize {
    let tree = file.tree("Events").expect("tree");
    let names: Vec<&str> = tree.branches().iter().map(|b| b.name.as_str()).collect();
    let mut rows = tree.rows(&names).expect("rows");
    let mut values = 0;
    for e in 0..tree.entries() {
        rows.visit(e, |_, v| values += value_count(v)).expect("row");
    }
    values
}

fn value_count(v: ValueRef<'_>) -> usize {
    match v {
        ValueRef::Bool(x) => x.len(),
        ValueRef::I8(x) => x.len(),
        ValueRef::U8(x) | ValueRef::Bytes(x) => x.len(),
        ValueRef::I16(x) => x.len(),
        ValueRef::U16(x) => x.len(),
        ValueRef::I32(x) => x.len(),
        ValueRef::U32(x) => x.len(),
        ValueRef::I64(x) => x.len(),
        ValueRef::U64(x) => x.len(),
        ValueRef::F32(x) => x.len(),
        ValueRef::F64(x) => x.len(),
        ValueRef::Str(x) => x.len(),
    }
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

/// Converts `input` unless `output` was written after this bench was built (a file converted by
/// an older build does not measure this tree).
fn convert_to(input: &Path, output: &Path, settings: Settings) {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let built = std::env::current_exe().ok().and_then(|exe| modified(&exe));
    if modified(output)
        .zip(built)
        .is_some_and(|(out, built)| out > built)
    {
        return;
    }
    let options = Settings {
        sync: false,
        overwrite: true,
        ..settings
    };
    convert(input, output, &options, &mut |_| {}).expect("convert");
}

fn size(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// The RAC study's trees as ROOT files of `setting`, written by ROOT from the evtc generator's
/// values (`root_side.py fromraw`): (name, floats per entry, path).
fn study_files(dir: &Path, setting: i32) -> Option<Vec<(&'static str, usize, PathBuf)>> {
    let mb = 40;
    let kinds = [("TFloat", rac::TFLOAT_LEN), ("TSmall", rac::TSMALL_LEN)];
    let mut out = Vec::new();
    for (name, len) in kinds {
        let path = dir.join(format!("{name}_{mb}mb_{setting}.root"));
        if !path.exists() {
            let events = mb * 1_000_000 / (4 * len);
            let values = if name == "TFloat" {
                rac::tfloat(events, 1)
            } else {
                rac::tsmall(events, 1)
            };
            let raw = dir.join(format!("{name}_{mb}mb.f32"));
            std::fs::write(&raw, evtc::datagen::le_bytes(&values)).ok()?;
            run_python(&[
                "benches/peers/root_side.py",
                "fromraw",
                &raw.display().to_string(),
                &path.display().to_string(),
                &setting.to_string(),
                &len.to_string(),
            ])?;
        }
        out.push((name, len, path));
    }
    Some(out)
}

/// The sizes a bench of one evtc file measured its times over.
#[derive(Clone, Copy, Default)]
struct Sizes {
    /// Bytes of values a bulk read returns.
    values: usize,
    /// Bytes the codec alone decodes the file's blocks to (0 for a RAC file, whose units the
    /// codec bench leaves out).
    codec_output: usize,
    /// The interleaved times of a plain (not RAC) file.
    paired: Option<Paired>,
}

/// Rounds of [`Paired`]: each of its four reads once per round.
const PAIRED_ROUNDS: usize = 15;

/// The fastest of [`PAIRED_ROUNDS`] rounds, in seconds, of the codec alone, the block decoder,
/// the bulk read with positional reads and the bulk read of the memory-mapped file, one after
/// the other in each round: ratios of these are not moved by the load other processes put on a
/// shared machine between criterion's separate measurements (which moved single ones by 10-40%).
#[derive(Clone, Copy)]
struct Paired {
    codec: f64,
    blocks: f64,
    bulk: f64,
    mapped: f64,
}

/// The ratios of a plain file's interleaved times ([`Paired`]): bulk / codec speed, codec time /
/// bulk time, bulk / block decoder, mapped bulk / codec speed, mapped bulk / block decoder.
fn paired_ratios(sizes: &Sizes) -> Option<[f64; 5]> {
    let p = sizes.paired?;
    let codec_speed = sizes.codec_output as f64 / p.codec;
    let values = sizes.values as f64;
    Some([
        values / p.bulk / codec_speed,
        p.codec / p.bulk,
        p.blocks / p.bulk,
        values / p.mapped / codec_speed,
        p.blocks / p.mapped,
    ])
}

/// What one evtc file of a dataset measured, in criterion names under `key`.
fn bench_file(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    key: &str,
    path: &Path,
    options: &ReadOptions,
) -> Sizes {
    let file = FileReader::open_with(path, options.clone()).expect("open");
    let mut buffers = support::Buffers::default();
    let values = support::bulk(&file, &mut buffers);
    let (mut codec_output, mut paired) = (0, None);
    group.throughput(Throughput::Bytes(values as u64));
    group.bench_function(format!("bulk {key}"), |b| {
        b.iter(|| black_box(support::bulk(&file, &mut buffers)))
    });
    if !file.tree("Events").expect("tree").branches()[0].rac {
        let (bytes, blocks) = blocks(path);
        codec_output = codec_output_bytes(&bytes, &blocks);
        let mut memory = Vec::new();
        group.bench_function(format!("codec-mem {key}"), |b| {
            b.iter(|| black_box(codec_into_memory(&bytes, &blocks, &mut memory)))
        });
        group.bench_function(format!("blocks-mem {key}"), |b| {
            b.iter(|| black_box(blocks_into_memory(&bytes, &blocks, &mut memory)))
        });
        group.bench_function(format!("cursors {key}"), |b| {
            b.iter(|| black_box(cursor_loop(&file)))
        });
        // SAFETY: nothing truncates or writes the bench's files while it reads them.
        let mapped = unsafe { options.clone().memory_map(true) };
        let mapped = FileReader::open_with(path, mapped).expect("open");
        let mut mapped_buffers = support::Buffers::default();
        group.bench_function(format!("bulk mapped {key}"), |b| {
            b.iter(|| black_box(support::bulk(&mapped, &mut mapped_buffers)))
        });
        let time = |best: &mut f64, run: &mut dyn FnMut() -> usize| {
            let start = Instant::now();
            black_box(run());
            *best = best.min(start.elapsed().as_secs_f64());
        };
        let mut best = [f64::INFINITY; 4];
        for _ in 0..PAIRED_ROUNDS {
            time(&mut best[0], &mut || {
                codec_into_memory(&bytes, &blocks, &mut memory)
            });
            time(&mut best[1], &mut || {
                blocks_into_memory(&bytes, &blocks, &mut memory)
            });
            time(&mut best[2], &mut || support::bulk(&file, &mut buffers));
            time(&mut best[3], &mut || {
                support::bulk(&mapped, &mut mapped_buffers)
            });
        }
        paired = Some(Paired {
            codec: best[0],
            blocks: best[1],
            bulk: best[2],
            mapped: best[3],
        });
    }
    Sizes {
        values,
        codec_output,
        paired,
    }
}

/// The files a run reads: the NanoAOD-like data in each setting (TTree, and evtc with and
/// without RAC), as an RNTuple, the RAC study's trees, and two evtc variants.
struct Files {
    dir: PathBuf,
    events: u64,
    rntuple: PathBuf,
    /// The RAC study's trees: name, values per entry, setting, ROOT file.
    study: Vec<(&'static str, usize, i32, PathBuf)>,
    /// zstd:5 with 1 MiB baskets.
    big: PathBuf,
    /// lzma:7 with RAC units of 1 KiB.
    small_units: PathBuf,
}

impl Files {
    fn root_file(&self, s: i32) -> PathBuf {
        self.dir.join(format!("nano_{}_{s}.root", self.events))
    }

    fn evtc_file(&self, s: i32, variant: &str) -> PathBuf {
        self.dir
            .join(format!("nano_{}_{s}{variant}.evtc", self.events))
    }
}

/// The evtc file converted from a RAC study ROOT file.
fn study_evtc(root: &Path, variant: &str) -> PathBuf {
    root.with_file_name(format!(
        "{}{variant}.evtc",
        root.file_stem().expect("stem").to_string_lossy()
    ))
}

/// Writes (with ROOT from PyPI) or finds the ROOT files, and converts them; `None`, said, when
/// ROOT is missing.
fn prepare() -> Option<Files> {
    let events = support::root_events();
    let dir = support::root_dir();
    let root_file = |s: i32| dir.join(format!("nano_{events}_{s}.root"));
    if SETTINGS
        .iter()
        .any(|&s| support::nano_root_file(s, events).is_none())
    {
        println!("peers: skipped: ROOT from PyPI is needed in .venv-root (see the bench's docs)");
        return None;
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
            return None;
        }
    }
    let study_settings = [505, 207];
    let mut study = Vec::new();
    for s in study_settings {
        let Some(files) = study_files(&dir, s) else {
            println!("peers: skipped: could not write the RAC study's ROOT files");
            return None;
        };
        study.extend(
            files
                .into_iter()
                .map(|(name, len, path)| (name, len, s, path)),
        );
    }
    let files = Files {
        big: dir.join(format!("nano_{events}_505_1mib.evtc")),
        small_units: dir.join(format!("nano_{events}_207_rac1k.evtc")),
        dir,
        events,
        rntuple,
        study,
    };
    convert_all(&files);
    Some(files)
}

/// Converts the ROOT files into the evtc files of [`Files`].
fn convert_all(f: &Files) {
    let (root_file, evtc_file) = (|s| f.root_file(s), |s, v: &str| f.evtc_file(s, v));
    let (study, big, small_units) = (&f.study, &f.big, &f.small_units);
    let with = |setting: i32, rac: RacMode| Settings {
        codec: Some(Codec::from_root_setting(setting).expect("setting")),
        rac,
        ..Settings::default()
    };
    for s in SETTINGS {
        convert_to(&root_file(s), &evtc_file(s, ""), with(s, RacMode::Off));
        convert_to(&root_file(s), &evtc_file(s, "_rac"), with(s, RacMode::On));
    }
    for (_, _, s, root) in study {
        convert_to(root, &study_evtc(root, ""), with(*s, RacMode::Off));
        convert_to(root, &study_evtc(root, "_rac"), with(*s, RacMode::On));
    }
    let big_baskets = Settings {
        basket_size: Some(1 << 20),
        ..with(505, RacMode::Off)
    };
    convert_to(&root_file(505), big, big_baskets);
    // LZMA decodes about ten times slower per byte than zstd: its units cost the most.
    let small = Settings {
        rac_unit: Some(1024),
        ..with(207, RacMode::On)
    };
    convert_to(&root_file(207), small_units, small);
}

/// The criterion benches of every file; returns what each plain file measured its times over.
fn bench_all(c: &mut Criterion, f: &Files) -> HashMap<String, Sizes> {
    let (evtc_file, study) = (|s, v: &str| f.evtc_file(s, v), &f.study);
    let (events, small_units) = (f.events, &f.small_units);
    let mut rng = Rng::new(7);
    let entries: Vec<u64> = (0..READS).map(|_| rng.below(events)).collect();
    let options = ReadOptions::default().threads(1);
    // What each plain (not RAC) file measured its times over, by its criterion key.
    let mut sizes: HashMap<String, Sizes> = HashMap::new();
    let mut group = c.benchmark_group("peers");
    group.sample_size(10);
    for s in SETTINGS {
        let measured = bench_file(&mut group, &s.to_string(), &evtc_file(s, ""), &options);
        sizes.insert(s.to_string(), measured);
        let file = FileReader::open_with(evtc_file(s, ""), options.clone()).expect("open");
        group.bench_function(format!("rows {s}"), |b| {
            b.iter(|| black_box(row_loop(&file)))
        });
        bench_file(
            &mut group,
            &format!("rac {s}"),
            &evtc_file(s, "_rac"),
            &options,
        );
        group.throughput(Throughput::Elements(READS as u64));
        group.bench_function(format!("random {s}"), |b| {
            b.iter(|| black_box(random(&file, &entries)))
        });
        let rac = FileReader::open_with(evtc_file(s, "_rac"), options.clone()).expect("open");
        group.bench_function(format!("random rac {s}"), |b| {
            b.iter(|| black_box(random(&rac, &entries)))
        });
        // SAFETY: nothing truncates or writes the bench's files while it reads them.
        let mapped = unsafe { options.clone().memory_map(true) };
        let rac = FileReader::open_with(evtc_file(s, "_rac"), mapped).expect("open");
        group.bench_function(format!("random rac mapped {s}"), |b| {
            b.iter(|| black_box(random(&rac, &entries)))
        });
    }
    let rac1k = FileReader::open_with(small_units, options.clone()).expect("open");
    group.bench_function("random rac1k 207", |b| {
        b.iter(|| black_box(random(&rac1k, &entries)))
    });
    for (name, _, s, root) in study {
        let key = format!("{name} {s}");
        let measured = bench_file(&mut group, &key, &study_evtc(root, ""), &options);
        sizes.insert(key.clone(), measured);
        bench_file(
            &mut group,
            &format!("rac {key}"),
            &study_evtc(root, "_rac"),
            &options,
        );
    }
    group.finish();
    sizes
}

/// ROOT's own times of the same files (`root_side.py time`), by path and measurement.
fn root_times(f: &Files) -> Option<serde_json::Value> {
    let (root_file, rntuple, study) = (|s| f.root_file(s), &f.rntuple, &f.study);
    let mut root_args = vec![
        "benches/peers/root_side.py".to_owned(),
        "time".into(),
        "--repeat".into(),
        "5".into(),
    ];
    root_args.extend(SETTINGS.iter().map(|&s| root_file(s).display().to_string()));
    root_args.push(rntuple.display().to_string());
    root_args.extend(study.iter().map(|(_, _, _, p)| p.display().to_string()));
    let refs: Vec<&str> = root_args.iter().map(String::as_str).collect();
    run_python(&refs).and_then(|out| serde_json::from_slice(&out).ok())
}

/// What a run measured: criterion's medians, the sizes each plain file measured its times over,
/// and ROOT's times.
struct Measured<'a> {
    f: &'a Files,
    medians: std::collections::BTreeMap<String, f64>,
    sizes: HashMap<String, Sizes>,
    root: Option<serde_json::Value>,
    /// Every NanoAOD-like file holds the same values.
    value_bytes: usize,
}

impl Measured<'_> {
    fn root_of(&self, path: &Path, key: &str) -> Option<f64> {
        self.root
            .as_ref()
            .and_then(|r| r[path.display().to_string()][key].as_f64())
    }

    fn mb_s(&self, bytes: usize, key: &str) -> Option<f64> {
        self.medians
            .get(key)
            .map(|&ns| support::mb_per_s(bytes, ns))
    }

    /// The codec's own decode speed on a file's blocks: the bytes it decodes them to, per second.
    fn codec_speed(&self, key: &str) -> Option<f64> {
        self.mb_s(self.sizes[key].codec_output, &format!("codec-mem {key}"))
    }

    /// Microseconds per single-entry read of a random-read measurement.
    fn per_read(&self, key: &str) -> Option<f64> {
        self.medians.get(key).map(|ns| ns / READS as f64 / 1000.0)
    }
}

fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_owned(), |v| format!("{v:.digits$}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| a / b)
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "missed" }
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let Some(f) = prepare() else {
        return;
    };
    let sizes = bench_all(&mut c, &f);
    let m = Measured {
        f: &f,
        medians: support::medians("peers", since),
        value_bytes: sizes["505"].values,
        sizes,
        root: root_times(&f),
    };
    let mut md = String::new();
    let (worst, bulk_505) = report_nano(&mut md, &m);
    let worst_study = report_rntuple_and_study(&mut md, &m);
    report_targets(&mut md, &m, (worst, worst_study), bulk_505);
    support::write_report("peers.md", &md);
}

/// The NanoAOD-like files' table; returns the worst ratios (bulk / TTree, cursors / TTree,
/// TTree random / RAC random, RAC bulk / bulk) and the zstd:5 bulk read.
fn report_nano(md: &mut String, m: &Measured<'_>) -> ([f64; 4], Option<f64>) {
    let (events, value_bytes, sizes) = (m.f.events, m.value_bytes, &m.sizes);
    let (root_file, evtc_file) = (|s| m.f.root_file(s), |s, v: &str| m.f.evtc_file(s, v));
    let branches = FileReader::open(evtc_file(505, ""))
        .and_then(|f| Ok(f.tree("Events")?.branches().len()))
        .unwrap_or(0);
    let _ = writeln!(md, "# evtc against ROOT 6.40 on the same data\n");
    let _ = writeln!(
        md,
        "Machine: {}. Command: `cargo bench --bench peers`. A NanoAOD-like tree of {events} events, {branches} branches, {:.1} MB of values, written by ROOT 6.40 (`make_fixtures.py --nano`) as a TTree in each setting and once as an RNTuple (RDataFrame Snapshot, zstd level 5); the evtc files are converted from the TTree files with the same codec and level, default 256 KiB baskets. Single thread, hot page cache. ROOT: C++ compiled by ACLiC with -O (`benches/peers/root_loops.C`), median of 5 runs; evtc: criterion medians. Bulk: every branch into buffers reused from one read to the next (`read_into`, `read_jagged_into`), with positional reads (the default: each basket is copied out of the page cache into a reused buffer, then decoded) and on a memory-mapped file (`ReadOptions::memory_map`: each basket is checked and decoded where the map holds it, as the codec below reads its blocks). Codec: the codec alone decoding the same blocks, each into its own place of one output as large as all the values (reused, so without page faults; no preconditioner, no entry boundaries, no file reads); a packing preconditioner's block decodes to its packed bytes only, so the codec's output (codec output MB) is smaller than the values. The codec's own speed is its output per second, as codecs report their decode speed; bulk / codec speed compares it with the bulk read's values per second. Codec time / bulk time compares the two times over the same blocks instead: the codec then does part of the work only (a bulk read also expands the packed bytes to the values). Block decoder into memory: the same with the whole block decoder (checksum, codec, preconditioner), what a bulk read does besides finding the blocks and the entries' boundaries. The ratios to the codec and the block decoder (and their verdicts) come from {PAIRED_ROUNDS} rounds in which the codec, the block decoder, the bulk read and the mapped bulk read each run once, one after the other, taking each one's fastest round: other processes' load on this shared machine moves criterion's separate measurements by 10-40%, which the ratio of two of them would carry. Entry loops, every branch of every entry: ROOT `TTree::GetEntry`, RNTuple `RNTupleReader::LoadEntry`; evtc typed cursors (`BranchCursor::get`) and the row reader (`RowReader::visit`). Random: {READS} single-entry reads of `Jet_pt` at seeded random entries (ROOT: `TBranch::GetEntry` of `nJet` then `Jet_pt`; evtc: one cursor, without and with RAC; with RAC also on a memory-mapped file, `ReadOptions::memory_map`), microseconds per entry.\n",
        support::machine(),
        value_bytes as f64 / 1e6
    );
    let _ = writeln!(
        md,
        "| setting | TTree MB | evtc MB | evtc RAC MB | codec output MB | codec's own speed MB/s | block decoder into memory MB/s | evtc bulk MB/s | bulk / codec speed | codec time / bulk time | bulk / block decoder | evtc bulk, mapped MB/s | mapped bulk / codec speed | TTree loop MB/s | bulk / TTree | evtc cursors MB/s | cursors / TTree | evtc rows MB/s | RAC bulk / bulk | TTree random us | evtc random us | evtc RAC random us | evtc RAC random, mapped us | TTree / RAC |"
    );
    let _ = writeln!(
        md,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let mut worst = [f64::INFINITY; 4];
    let mut bulk_505 = None;
    for s in SETTINGS {
        let ttree = root_file(s);
        let loop_mb = m
            .root_of(&ttree, "loop_s")
            .map(|t| value_bytes as f64 / t / 1e6);
        let bulk_mb = m.mb_s(value_bytes, &format!("bulk {s}"));
        let codec_speed = m.codec_speed(&s.to_string());
        let paired = paired_ratios(&sizes[&s.to_string()]);
        let memory_mb = m.mb_s(value_bytes, &format!("blocks-mem {s}"));
        let mapped_mb = m.mb_s(value_bytes, &format!("bulk mapped {s}"));
        let cursors_mb = m.mb_s(value_bytes, &format!("cursors {s}"));
        let rows_mb = m.mb_s(value_bytes, &format!("rows {s}"));
        let rac_mb = m.mb_s(value_bytes, &format!("bulk rac {s}"));
        let per = |key: String| m.per_read(&key);
        let random = per(format!("random {s}"));
        let random_rac = per(format!("random rac {s}"));
        let random_mapped = per(format!("random rac mapped {s}"));
        let root_random = m.root_of(&ttree, "random_us");
        let bulk_ratio = ratio(bulk_mb, loop_mb);
        let cursor_ratio = ratio(cursors_mb, loop_mb);
        let random_ratio = ratio(root_random, random_rac);
        let rac_ratio = ratio(rac_mb, bulk_mb);
        for (w, r) in worst
            .iter_mut()
            .zip([bulk_ratio, cursor_ratio, random_ratio, rac_ratio])
        {
            *w = w.min(r.unwrap_or(0.0));
        }
        if s == 505 {
            bulk_505 = bulk_mb;
        }
        let _ = writeln!(
            md,
            "| {s} ({}) | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            Codec::from_root_setting(s).expect("setting"),
            size(&ttree),
            size(&evtc_file(s, "")),
            size(&evtc_file(s, "_rac")),
            sizes[&s.to_string()].codec_output as f64 / 1e6,
            cell(codec_speed, 0),
            cell(memory_mb, 0),
            cell(bulk_mb, 0),
            cell(paired.map(|r| r[0]), 2),
            cell(paired.map(|r| r[1]), 2),
            cell(paired.map(|r| r[2]), 2),
            cell(mapped_mb, 0),
            cell(paired.map(|r| r[3]), 2),
            cell(loop_mb, 0),
            cell(bulk_ratio, 1),
            cell(cursors_mb, 0),
            cell(cursor_ratio, 1),
            cell(rows_mb, 0),
            cell(rac_ratio, 2),
            cell(root_random, 1),
            cell(random, 1),
            cell(random_rac, 2),
            cell(random_mapped, 2),
            cell(random_ratio, 0),
        );
    }
    (worst, bulk_505)
}

/// The RNTuple and variant lines and the RAC study's table; returns the study's worst ratios
/// (bulk / TTree, cursors / TTree).
fn report_rntuple_and_study(md: &mut String, m: &Measured<'_>) -> [f64; 2] {
    let (value_bytes, sizes, study) = (m.value_bytes, &m.sizes, &m.f.study);
    let (root_file, evtc_file) = (|s| m.f.root_file(s), |s, v: &str| m.f.evtc_file(s, v));
    let (rntuple, big, small_units) = (&m.f.rntuple, &m.f.big, &m.f.small_units);
    let rntuple_mb = m
        .root_of(rntuple, "loop_s")
        .map(|t| value_bytes as f64 / t / 1e6);
    let rac1k_us = m.per_read("random rac1k 207");
    let rac1k_ratio = ratio(m.root_of(&root_file(207), "random_us"), rac1k_us);
    let _ = writeln!(
        md,
        "\nRNTuple (zstd:5): {:.2} MB, `LoadEntry` loop {} MB/s. evtc zstd:5 with 1 MiB baskets (`--basket-size 1MiB`): {:.2} MB. evtc lzma:7 with RAC units of 1 KiB (`--rac-unit 1KiB`; default {} KiB): {:.2} MB (default units: {:.2} MB), random read {} us, {}x faster than `TBranch::GetEntry`.\n",
        size(rntuple),
        cell(rntuple_mb, 0),
        size(big),
        evtc::format::LZMA_RAC_UNIT_BYTES / 1024,
        size(small_units),
        size(&evtc_file(207, "_rac")),
        cell(rac1k_us, 2),
        cell(rac1k_ratio, 0)
    );
    let _ = writeln!(
        md,
        "The RAC study's trees (Zhang & Bockelman 2017), about 40 MB of floats each, written by ROOT from the evtc generator's values (`root_side.py fromraw`, one fixed-size array branch) and converted to evtc with the same setting:\n"
    );
    let _ = writeln!(
        md,
        "| tree | setting | TTree MB | evtc MB | codec output MB | codec's own speed MB/s | block decoder into memory MB/s | evtc bulk MB/s | bulk / codec speed | codec time / bulk time | bulk / block decoder | evtc bulk, mapped MB/s | mapped bulk / codec speed | TTree loop MB/s | bulk / TTree | evtc cursors MB/s | cursors / TTree | RAC bulk / bulk |"
    );
    let _ = writeln!(
        md,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let mut worst_study = [f64::INFINITY; 2];
    for (name, _, s, root) in study {
        let key = format!("{name} {s}");
        let bytes = sizes[&key].values;
        let loop_mb = m.root_of(root, "loop_s").map(|t| bytes as f64 / t / 1e6);
        let bulk_mb = m.mb_s(bytes, &format!("bulk {key}"));
        let codec_speed = m.codec_speed(&key);
        let paired = paired_ratios(&sizes[&key]);
        let memory_mb = m.mb_s(bytes, &format!("blocks-mem {key}"));
        let mapped_mb = m.mb_s(bytes, &format!("bulk mapped {key}"));
        let cursors_mb = m.mb_s(bytes, &format!("cursors {key}"));
        let rac_ratio = ratio(m.mb_s(bytes, &format!("bulk rac {key}")), bulk_mb);
        let (bulk_ratio, cursor_ratio) = (ratio(bulk_mb, loop_mb), ratio(cursors_mb, loop_mb));
        for (w, r) in worst_study
            .iter_mut()
            .zip([bulk_ratio, cursor_ratio, rac_ratio])
        {
            *w = w.min(r.unwrap_or(0.0));
        }
        let _ = writeln!(
            md,
            "| {name} | {s} | {:.2} | {:.2} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            size(root),
            size(&study_evtc(root, "")),
            sizes[&key].codec_output as f64 / 1e6,
            cell(codec_speed, 0),
            cell(memory_mb, 0),
            cell(bulk_mb, 0),
            cell(paired.map(|r| r[0]), 2),
            cell(paired.map(|r| r[1]), 2),
            cell(paired.map(|r| r[2]), 2),
            cell(mapped_mb, 0),
            cell(paired.map(|r| r[3]), 2),
            cell(loop_mb, 0),
            cell(bulk_ratio, 1),
            cell(cursors_mb, 0),
            cell(cursor_ratio, 1),
            cell(rac_ratio, 2),
        );
    }
    worst_study
}

/// The targets' verdicts.
fn report_targets(
    md: &mut String,
    m: &Measured<'_>,
    (worst, worst_study): ([f64; 4], [f64; 2]),
    bulk_505: Option<f64>,
) {
    let (value_bytes, sizes, study, medians) = (m.value_bytes, &m.sizes, &m.f.study, &m.medians);
    let (root_file, evtc_file) = (|s| m.f.root_file(s), |s, v: &str| m.f.evtc_file(s, v));
    let (rntuple, big) = (&m.f.rntuple, &m.f.big);
    let rntuple_mb = m
        .root_of(rntuple, "loop_s")
        .map(|t| value_bytes as f64 / t / 1e6);
    let _ = writeln!(md, "\n| target | measured | verdict |\n|---|---|---|");
    let _ = writeln!(
        md,
        "| evtc zstd:5 file <= RNTuple zstd:5 file | {:.2} MB (default baskets), {:.2} MB (1 MiB baskets) vs {:.2} MB | {} (default), {} (1 MiB) |",
        size(&evtc_file(505, "")),
        size(big),
        size(rntuple),
        verdict(size(&evtc_file(505, "")) <= size(rntuple)),
        verdict(size(big) <= size(rntuple)),
    );
    // The smallest ratio of two measurements' times over `keys` (of the same bytes, so the inverse
    // ratio of their speeds).
    let worst_of = |keys: Vec<String>, slow: &str, fast: &str| {
        keys.iter()
            .filter_map(|key| {
                ratio(
                    medians.get(&format!("{slow} {key}")).copied(),
                    medians.get(&format!("{fast} {key}")).copied(),
                )
            })
            .fold(f64::INFINITY, f64::min)
    };
    let all_keys: Vec<String> = SETTINGS
        .iter()
        .map(|s| s.to_string())
        .chain(study.iter().map(|(name, _, s, _)| format!("{name} {s}")))
        .collect();
    // The worst of one interleaved ratio over every plain file.
    let worst_paired = |i: usize| {
        all_keys
            .iter()
            .filter_map(|key| paired_ratios(&sizes[key]).map(|r| r[i]))
            .fold(f64::INFINITY, f64::min)
    };
    for (how, i) in [
        (
            "positional reads (the default: the kernel copies each basket out of the page cache first)",
            0,
        ),
        (
            "memory-mapped (`ReadOptions::memory_map`: the stored bytes read in memory, as the codec reads them)",
            3,
        ),
    ] {
        let worst = worst_paired(i);
        let _ = writeln!(
            md,
            "| bulk read >= 0.8x the codec's own decode speed on the same blocks (values per second against the codec's output per second), every file, {how} | worst {worst:.2}x | {} |",
            verdict(worst >= 0.8)
        );
    }
    let _ = writeln!(
        md,
        "| codec time / bulk time on the same blocks (not a target: with a packing preconditioner the codec decodes part of the bytes only), every file | worst {:.2}x | - |",
        worst_paired(1)
    );
    for (how, i) in [("positional reads", 2), ("memory-mapped", 4)] {
        let worst = worst_paired(i);
        let _ = writeln!(
            md,
            "| bulk read >= 0.8x the block decoder (codec and preconditioner) on the same blocks, every file, {how} | worst {worst:.2}x | {} |",
            verdict(worst >= 0.8)
        );
    }
    let ttree_505 = bulk_505.zip(
        m.root_of(&root_file(505), "loop_s")
            .map(|t| value_bytes as f64 / t / 1e6),
    );
    let ttree_505 = ttree_505.map(|(a, b)| a / b);
    let _ = writeln!(
        md,
        "| bulk read >= 6x the TTree 505 loop (NanoAOD-like) | {}x | {} |",
        cell(ttree_505, 1),
        verdict(ttree_505.is_some_and(|r| r >= 6.0))
    );
    let rntuple_ratio = ratio(bulk_505, rntuple_mb);
    let _ = writeln!(
        md,
        "| bulk read faster than the TTree loop of the same setting, every data set | NanoAOD-like worst {:.1}x, RAC study worst {:.2}x | {} |",
        worst[0],
        worst_study[0],
        verdict(worst[0] >= 1.0 && worst_study[0] >= 1.0)
    );
    let _ = writeln!(
        md,
        "| bulk read faster than the RNTuple loop (zstd:5) | {}x | {} |",
        cell(rntuple_ratio, 1),
        verdict(rntuple_ratio.is_some_and(|r| r >= 1.0))
    );
    let _ = writeln!(
        md,
        "| entry loop (typed cursors) >= 3x the TTree loop of the same setting | NanoAOD-like worst {:.1}x, RAC study worst {:.1}x | {} |",
        worst[1],
        worst_study[1],
        verdict(worst[1] >= 3.0 && worst_study[1] >= 3.0)
    );
    let per = |key: &str| m.per_read(key);
    let within =
        |a: Option<f64>, b: Option<f64>| a.zip(b).is_some_and(|(a, b)| a <= 2.0 && b <= 2.0);
    for (how, prefix) in [
        ("positional reads, the default", "random rac"),
        (
            "memory-mapped, `ReadOptions::memory_map`",
            "random rac mapped",
        ),
    ] {
        let (rac_505, rac_404) = (per(&format!("{prefix} 505")), per(&format!("{prefix} 404")));
        let _ = writeln!(
            md,
            "| RAC single-entry read of NanoAOD-like jets <= 2 us (zstd:5, lz4hc), {how} | {} us, {} us | {} |",
            cell(rac_505, 2),
            cell(rac_404, 2),
            verdict(within(rac_505, rac_404))
        );
    }
    let _ = writeln!(
        md,
        "| random single-entry read with RAC >= 20x faster than TBranch::GetEntry | worst {:.0}x | {} |",
        worst[2],
        verdict(worst[2] >= 20.0)
    );
    let lzma_keys: Vec<String> = std::iter::once("207".to_owned())
        .chain(
            study
                .iter()
                .filter(|(_, _, s, _)| *s == 207)
                .map(|(name, _, s, _)| format!("{name} {s}")),
        )
        .collect();
    let worst_lzma_rac = worst_of(lzma_keys, "bulk", "bulk rac");
    let _ = writeln!(
        md,
        "| RAC + LZMA bulk read >= 70% of the non-RAC LZMA read, every data set | worst {:.0}% | {} |",
        100.0 * worst_lzma_rac,
        verdict(worst_lzma_rac >= 0.7)
    );
}
