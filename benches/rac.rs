//! Random-access compression on the events of Zhang & Bockelman (2017); writes
//! `target/evtc-bench/rac.md`.
//!
//! Run: `cargo bench --bench rac`. `EVTC_BENCH_RAC_MB` sets the raw size of each branch (default 40,
//! as in the study).

mod support;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput};
use evtc::datagen::{Rng, rac};
use evtc::format::{
    BranchSpec, FileReader, FileWriter, RacMode, ReadOptions, ScalarType, WriteOptions,
};

#[derive(Clone, Copy)]
struct Kind {
    name: &'static str,
    floats: usize,
}

const KINDS: [Kind; 3] = [
    Kind {
        name: "TFloat",
        floats: rac::TFLOAT_LEN,
    },
    Kind {
        name: "TSmall",
        floats: rac::TSMALL_LEN,
    },
    Kind {
        name: "TLarge",
        floats: rac::TLARGE_LEN,
    },
];

#[derive(Clone, Copy, PartialEq)]
struct Config {
    rac: RacMode,
    unit_bytes: usize,
    dictionary: bool,
}

impl Config {
    fn label(self) -> String {
        match self.rac {
            RacMode::Off => "no RAC".into(),
            RacMode::Auto => format!(
                "auto ({} B units{})",
                self.unit_bytes,
                if self.dictionary { ", dict" } else { "" }
            ),
            RacMode::On if self.unit_bytes == 0 => format!(
                "RAC per entry{}",
                if self.dictionary { " + dict" } else { "" }
            ),
            RacMode::On => format!(
                "RAC {} B units{}",
                self.unit_bytes,
                if self.dictionary { " + dict" } else { "" }
            ),
        }
    }
}

fn configs() -> Vec<Config> {
    let mut all = vec![Config {
        rac: RacMode::Off,
        unit_bytes: 0,
        dictionary: false,
    }];
    for unit_bytes in [0, 1024, 2048, 4096] {
        for dictionary in [false, true] {
            all.push(Config {
                rac: RacMode::On,
                unit_bytes,
                dictionary,
            });
        }
    }
    // Larger units: what closing lz4's size gap on TSmall costs in random reads.
    for unit_bytes in [16 << 10, 32 << 10] {
        all.push(Config {
            rac: RacMode::On,
            unit_bytes,
            dictionary: true,
        });
    }
    all.push(Config {
        rac: RacMode::Auto,
        unit_bytes: evtc::rac::DEFAULT_MIN_UNIT_BYTES,
        dictionary: true,
    });
    all
}

fn write(path: &Path, kind: Kind, values: &[f32], codec: &str, config: Config) -> f64 {
    let options = WriteOptions::default()
        .overwrite(true)
        .codec(codec.parse().expect("codec"))
        .rac(config.rac)
        .rac_unit_bytes(config.unit_bytes)
        .rac_dictionary(config.dictionary)
        .threads(2);
    let started = Instant::now();
    let mut file = FileWriter::create(path, options).expect("create");
    let mut tree = file
        .tree(
            "T",
            vec![BranchSpec::fixed(
                kind.name,
                ScalarType::F32,
                kind.floats as u32,
            )],
        )
        .expect("tree");
    for chunk in values.chunks(((1 << 20) / (kind.floats * 4)).max(1) * kind.floats) {
        tree.fill_column(0, chunk).expect("fill");
        tree.commit().expect("commit");
    }
    tree.finish().expect("finish");
    file.finish().expect("finish");
    started.elapsed().as_secs_f64()
}

/// The report's title and the description of its measurements.
fn report_header(mb: usize) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Random-access compression (the 2017 RAC study's events)\n"
    );
    let _ = writeln!(
        md,
        "Machine: {}. Command: `cargo bench --bench rac`. One branch of about {mb} MB per file, default 256 KiB baskets.",
        support::machine()
    );
    let _ = writeln!(
        md,
        "Write: best of 3 runs (2 threads). Random read: 1,000 single-entry reads (20 for TLarge) at seeded random entries, each with a fresh cursor (no basket cache; the seek tables of RAC baskets are kept by the open file, so the repeated passes find them), hot page cache; criterion median per entry. Sequential: bulk read of the whole branch, 1 thread, criterion median.\n"
    );
    md
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let mb: usize = std::env::var("EVTC_BENCH_RAC_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut md = report_header(mb);

    struct Row {
        kind: &'static str,
        codec: &'static str,
        label: String,
        size: u64,
        write_s: f64,
        random_id: String,
        reads: u64,
        seq_id: String,
        raw: usize,
        rac: bool,
    }
    let mut rows = Vec::new();
    let mut group = c.benchmark_group("rac");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for kind in KINDS {
        let events = (mb << 20) / (kind.floats * 4);
        let values = rac::runs_of_six(events.max(1), kind.floats, 7);
        let raw = values.len() * 4;
        let mut rng = Rng::new(11);
        // 1,000 reads, as in the study; 20 for TLarge, where each read decodes a 4 MB entry.
        let reads: u64 = if kind.floats >= rac::TLARGE_LEN {
            20
        } else {
            1000
        };
        let picks: Vec<u64> = (0..reads)
            .map(|_| rng.below(events.max(1) as u64))
            .collect();
        for codec in ["zstd:5", "lz4"] {
            for config in configs() {
                let path: PathBuf = dir.path().join(format!(
                    "{}-{}-{}.evtc",
                    kind.name,
                    codec.replace(':', ""),
                    rows.len()
                ));
                let write_s = (0..3)
                    .map(|_| write(&path, kind, &values, codec, config))
                    .fold(f64::MAX, f64::min);
                let size = std::fs::metadata(&path).expect("metadata").len();
                let file =
                    FileReader::open_with(&path, ReadOptions::default().threads(1)).expect("open");
                let tree = file.tree("T").expect("tree");
                let branch = tree.branch(kind.name).expect("branch");
                let rac_on = branch.meta().rac;
                let id = format!("{} {codec} {}", kind.name, config.label());
                let random_id = format!("random {reads} - {id}");
                group.throughput(Throughput::Elements(reads));
                group.bench_function(&random_id, |b| {
                    b.iter(|| {
                        for &e in &picks {
                            let mut cursor = branch.cursor::<f32>().expect("cursor");
                            black_box(cursor.get(e).expect("get").len());
                        }
                    })
                });
                let seq_id = format!("sequential - {id}");
                group.throughput(Throughput::Bytes(raw as u64));
                group.bench_function(&seq_id, |b| {
                    b.iter(|| branch.read::<f32>().expect("read").len())
                });
                rows.push(Row {
                    kind: kind.name,
                    codec,
                    label: config.label(),
                    size,
                    write_s,
                    random_id,
                    reads,
                    seq_id,
                    raw,
                    rac: rac_on,
                });
            }
        }
    }
    group.finish();
    c.final_summary();

    let times = support::medians("rac", since);
    for kind in KINDS {
        let _ = writeln!(md, "## {}\n", kind.name);
        let _ = writeln!(
            md,
            "| codec | layout | RAC used | file MB | size vs no RAC | write s | random read µs/entry | random speed-up | sequential MB/s | sequential vs no RAC |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|");
        for codec in ["zstd:5", "lz4"] {
            let base = rows
                .iter()
                .find(|r| r.kind == kind.name && r.codec == codec && r.label == "no RAC")
                .expect("baseline");
            let base_random = times.get(&base.random_id).copied();
            let base_seq = times.get(&base.seq_id).copied();
            for r in rows
                .iter()
                .filter(|r| r.kind == kind.name && r.codec == codec)
            {
                let random = times.get(&r.random_id).copied();
                let seq = times.get(&r.seq_id).copied();
                let show = |v: Option<String>| v.unwrap_or_else(|| "-".into());
                let random_us =
                    show(random.map(|ns| format!("{:.1}", ns / 1000.0 / r.reads as f64)));
                let speedup = show(
                    random
                        .zip(base_random)
                        .map(|(ns, b)| format!("{:.1}x", b / ns)),
                );
                let seq_mb = show(seq.map(|ns| format!("{:.0}", support::mb_per_s(r.raw, ns))));
                let seq_rel = show(
                    seq.zip(base_seq)
                        .map(|(ns, b)| format!("{:.0}%", 100.0 * b / ns)),
                );
                let _ = writeln!(
                    md,
                    "| {codec} | {} | {} | {:.2} | {:.3} | {:.2} | {random_us} | {speedup} | {seq_mb} | {seq_rel} |",
                    r.label,
                    if r.rac { "yes" } else { "no" },
                    r.size as f64 / 1e6,
                    r.size as f64 / base.size as f64,
                    r.write_s,
                );
            }
        }
        let _ = writeln!(md);
    }
    support::write_report("rac.md", &md);
}
