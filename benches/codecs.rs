//! Codec, preconditioner, kernel and checksum benchmarks; writes `target/evtc-bench/codecs.md`.
//!
//! Run: `cargo bench --bench codecs` (about 15 minutes on 2 cores). A criterion filter runs a subset,
//! e.g. `cargo bench --bench codecs -- kernels`; the report then covers what ran.

mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use evtc::codecs::{
    Algorithm, BlockDecoder, BlockEncoder, Codec, Compressor, Decompressor, Isa, Kernel,
    Precondition, Width,
};
use evtc::datagen::{Rng, ints, le_bytes, nano, rac};

/// Every dataset is cut to this many bytes: one large basket.
const BLOCK: usize = 1 << 20;
/// Kernels run on blocks that fit in L2 (input and output together).
const KERNEL_BLOCK: usize = 256 << 10;

const CODECS: [&str; 19] = [
    "none", "lz4", "lz4hc:1", "lz4hc:5", "lz4hc:9", "lz4hc:12", "zlib:1", "zlib:5", "zlib:6",
    "zlib:9", "lzma:1", "lzma:5", "lzma:9", "zstd:-5", "zstd:1", "zstd:5", "zstd:9", "zstd:19",
    "zstd:22",
];

struct Dataset {
    name: &'static str,
    bytes: Vec<u8>,
    preconditions: Vec<Precondition>,
    /// Whether the codec matrix is timed (all datasets get ratios).
    timed: bool,
}

fn cut(mut bytes: Vec<u8>) -> Vec<u8> {
    assert!(bytes.len() >= BLOCK, "dataset too small: {}", bytes.len());
    bytes.truncate(BLOCK);
    bytes
}

fn datasets() -> Vec<Dataset> {
    use Precondition::{BitShuffle, Delta, None, Shuffle};
    let w = Width::W4;
    let floats = vec![None, Shuffle(w), BitShuffle(w)];
    let jets = nano::jets(100_000, 1);
    let counts = ints::poisson_counts(BLOCK / 4, 4.5, 3);
    vec![
        Dataset {
            name: "nano/Jet_pt",
            bytes: cut(le_bytes(&jets.pt)),
            preconditions: floats.clone(),
            timed: true,
        },
        Dataset {
            name: "nano/Jet_eta",
            bytes: cut(le_bytes(&jets.eta)),
            preconditions: floats.clone(),
            timed: false,
        },
        Dataset {
            name: "nano/Jet_phi",
            bytes: cut(le_bytes(&jets.phi)),
            preconditions: floats.clone(),
            timed: false,
        },
        Dataset {
            name: "nano/Jet_mass",
            bytes: cut(le_bytes(&jets.mass)),
            preconditions: floats.clone(),
            timed: false,
        },
        Dataset {
            name: "ints/positions",
            bytes: cut(le_bytes(&ints::sorted_positions(BLOCK / 4, 2))),
            preconditions: vec![None, Shuffle(w), BitShuffle(w), Delta(w)],
            timed: true,
        },
        Dataset {
            name: "ints/counts",
            bytes: cut(le_bytes(&counts)),
            preconditions: vec![None, Shuffle(w), BitShuffle(w)],
            timed: false,
        },
        Dataset {
            name: "ints/offsets",
            bytes: cut(le_bytes(&ints::root_entry_offsets(&counts, 80))),
            preconditions: vec![None, Shuffle(w), BitShuffle(w), Delta(w)],
            timed: true,
        },
        Dataset {
            name: "rac/TSmall",
            bytes: cut(le_bytes(&rac::tsmall(263, 4))),
            preconditions: floats,
            timed: true,
        },
    ]
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(700));
}

/// Compressed size of one block (payload only, no envelope) for `codec` after `precondition`.
fn payload(
    codec: Codec,
    precondition: Precondition,
    raw: &[u8],
    compressor: &mut Compressor,
) -> (Vec<u8>, Vec<u8>) {
    let mut conditioned = vec![0; raw.len()];
    precondition.apply(raw, &mut conditioned);
    let mut out = Vec::new();
    compressor
        .compress(codec, &conditioned, &mut out)
        .expect("compress");
    (conditioned, out)
}

fn codec_id(direction: &str, codec: &str, precondition: Precondition, dataset: &str) -> String {
    format!("{direction} {codec}+{precondition} - {dataset}")
}

/// Ratios of every dataset x codec x preconditioner; times of the timed datasets.
fn bench_codecs(
    c: &mut Criterion,
    sets: &[Dataset],
    ratios: &mut BTreeMap<(String, String, String), f64>,
) {
    let mut compressor = Compressor::new();
    let mut group = c.benchmark_group("codecs");
    configure(&mut group);
    group.throughput(Throughput::Bytes(BLOCK as u64));
    for set in sets {
        for spec in CODECS {
            let codec: Codec = spec.parse().expect("codec spec");
            for &p in &set.preconditions {
                if codec.algorithm() == Algorithm::None && p != Precondition::None {
                    continue;
                }
                let (conditioned, compressed) = payload(codec, p, &set.bytes, &mut compressor);
                ratios.insert(
                    (set.name.into(), spec.into(), p.to_string()),
                    BLOCK as f64 / compressed.len() as f64,
                );
                if !set.timed {
                    continue;
                }
                let mut out = Vec::with_capacity(2 * BLOCK);
                group.bench_function(codec_id("compress", spec, p, set.name), |b| {
                    let mut scratch = vec![0; BLOCK];
                    let mut compressor = Compressor::new();
                    b.iter(|| {
                        out.clear();
                        p.apply(&set.bytes, &mut scratch);
                        compressor
                            .compress(codec, &scratch, &mut out)
                            .expect("compress");
                        black_box(&out);
                    })
                });
                group.bench_function(codec_id("decompress", spec, p, set.name), |b| {
                    let mut decompressor = Decompressor::new();
                    let mut scratch = vec![0; BLOCK];
                    let mut back = vec![0; BLOCK];
                    b.iter(|| {
                        decompressor
                            .decompress(codec.algorithm(), &compressed, &mut scratch)
                            .expect("decompress");
                        p.undo(&scratch, &mut back);
                        black_box(&back);
                    })
                });
                drop(conditioned);
            }
        }
    }
    group.finish();
}

fn bench_kernels(c: &mut Criterion) {
    let raw: Vec<u8> = le_bytes(&ints::sorted_positions(KERNEL_BLOCK / 4, 5));
    let mut group = c.benchmark_group("kernels");
    configure(&mut group);
    group.throughput(Throughput::Bytes(KERNEL_BLOCK as u64));
    for isa in Isa::ALL {
        let Some(kernel) = Kernel::new(isa) else {
            continue;
        };
        for w in Width::ALL {
            for p in [Precondition::Shuffle(w), Precondition::BitShuffle(w)] {
                let mut there = vec![0; KERNEL_BLOCK];
                kernel.apply(p, &raw, &mut there);
                let mut back = vec![0; KERNEL_BLOCK];
                group.bench_function(format!("apply {p} - {isa:?}"), |b| {
                    b.iter(|| kernel.apply(p, black_box(&raw), &mut back))
                });
                group.bench_function(format!("undo {p} - {isa:?}"), |b| {
                    b.iter(|| kernel.undo(p, black_box(&there), &mut back))
                });
            }
        }
    }
    for w in Width::ALL {
        let p = Precondition::Delta(w);
        let mut out = vec![0; KERNEL_BLOCK];
        group.bench_function(format!("apply {p} - Scalar"), |b| {
            b.iter(|| p.apply(black_box(&raw), &mut out))
        });
        group.bench_function(format!("undo {p} - Scalar"), |b| {
            b.iter(|| p.undo(black_box(&raw), &mut out))
        });
    }
    // The integer encodings, on sorted positions (as 8-byte values: pairs of them): delta-shuffle
    // undoes its shuffle with each kernel; for, delta-for and delta-varint encode with portable
    // code and decode with each kernel (AVX2 for 4- and 8-byte values).
    for w in [Width::W4, Width::W8] {
        for p in [
            Precondition::DeltaShuffle(w),
            Precondition::For(w),
            Precondition::DeltaFor(w),
            Precondition::DeltaVarint(w),
        ] {
            let mut packed = Vec::new();
            p.encode(&raw, &mut packed);
            group.bench_function(format!("apply {p} - Scalar"), |b| {
                b.iter(|| {
                    packed.clear();
                    Kernel::scalar().encode(p, black_box(&raw), &mut packed);
                })
            });
            let mut back = vec![0; KERNEL_BLOCK];
            for isa in [Isa::Scalar, Isa::Avx2] {
                let Some(kernel) = Kernel::new(isa) else {
                    continue;
                };
                group.bench_function(format!("undo {p} - {isa:?}"), |b| {
                    b.iter(|| kernel.decode(p, black_box(&packed), &mut back))
                });
            }
        }
    }
    // The packing preconditioners made for other values, each on the values it is for: `runs` on
    // the RAC study's floats (runs of six), `bitplanes` on NanoAOD-like jet pT (rounded
    // mantissas: constant low planes), `sparse` on a trigger bit's bytes (true in 3% of events).
    // Encoded and decoded with each kernel (their shuffles and bitshuffles; `sparse` is portable).
    let mut rng = Rng::new(17);
    let trigger: Vec<u8> = (0..KERNEL_BLOCK)
        .map(|_| u8::from(rng.below(100) < 3))
        .collect();
    let floats = KERNEL_BLOCK / 4;
    let packing = [
        (
            Precondition::Runs(Width::W4),
            le_bytes(&rac::runs_of_six(floats / 6 + 1, 6, 5)[..floats]),
        ),
        (
            Precondition::BitPlanes(Width::W4),
            le_bytes(&nano::jets(floats, 9).pt[..floats]),
        ),
        (Precondition::Sparse(Width::W1), trigger),
    ];
    for (p, raw) in &packing {
        let p = *p;
        let mut packed = Vec::new();
        p.encode(raw, &mut packed);
        let mut back = vec![0; KERNEL_BLOCK];
        for isa in Isa::ALL {
            let Some(kernel) = Kernel::new(isa) else {
                continue;
            };
            let mut out = Vec::new();
            group.bench_function(format!("apply {p} - {isa:?}"), |b| {
                b.iter(|| {
                    out.clear();
                    kernel.encode(p, black_box(raw), &mut out);
                })
            });
            group.bench_function(format!("undo {p} - {isa:?}"), |b| {
                b.iter(|| kernel.decode(p, black_box(&packed), &mut back))
            });
        }
    }
    group.finish();
}

const CRC_SIZES: [usize; 4] = [64, 4 << 10, 64 << 10, 1 << 20];

fn bench_crc(c: &mut Criterion) {
    let data: Vec<u8> = le_bytes(&nano::jets(100_000, 9).pt);
    let mut group = c.benchmark_group("crc32");
    configure(&mut group);
    for size in CRC_SIZES {
        let buf = &data[..size];
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("crc32fast - {size}"), |b| {
            b.iter(|| crc32fast::hash(black_box(buf)))
        });
        group.bench_function(format!("crc-fast - {size}"), |b| {
            b.iter(|| crc_fast::crc32_iso_hdlc(black_box(buf)))
        });
        group.bench_function(format!("evtc - {size}"), |b| {
            b.iter(|| evtc::codecs::crc32(black_box(buf)))
        });
    }
    group.finish();
}

/// evtc's wrappers against calling the backend crates directly, on 1 MiB of `data`.
fn bench_overhead(c: &mut Criterion, data: &str, raw: &[u8]) {
    let mut group = c.benchmark_group(format!("overhead {data}"));
    configure(&mut group);
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(2));
    group.throughput(Throughput::Bytes(raw.len() as u64));
    let zstd5 = Codec::zstd(5).expect("zstd:5");
    let zlib6 = Codec::zlib(6).expect("zlib:6");

    let mut out = Vec::with_capacity(2 * raw.len());
    let mut evtc = Compressor::new();
    for codec in [Codec::LZ4, zstd5, zlib6] {
        group.bench_function(format!("compress {codec} - evtc"), |b| {
            b.iter(|| {
                out.clear();
                evtc.compress(codec, black_box(raw), &mut out)
                    .expect("compress")
            })
        });
    }
    let mut direct_out = vec![0; lz4_flex::block::get_maximum_output_size(raw.len())];
    group.bench_function("compress lz4 - lz4_flex", |b| {
        b.iter(|| lz4_flex::block::compress_into(black_box(raw), &mut direct_out).expect("lz4"))
    });
    let mut zstd_direct = zstd::bulk::Compressor::new(5).expect("zstd");
    let mut zstd_out = Vec::with_capacity(2 * raw.len());
    group.bench_function("compress zstd:5 - zstd", |b| {
        b.iter(|| {
            zstd_direct
                .compress_to_buffer(black_box(raw), &mut zstd_out)
                .expect("zstd")
        })
    });
    let mut flate = flate2::Compress::new(flate2::Compression::new(6), true);
    let mut flate_out = Vec::with_capacity(2 * raw.len());
    group.bench_function("compress zlib:6 - flate2", |b| {
        b.iter(|| {
            flate.reset();
            flate_out.clear();
            flate
                .compress_vec(
                    black_box(raw),
                    &mut flate_out,
                    flate2::FlushCompress::Finish,
                )
                .expect("zlib")
        })
    });

    let mut back = vec![0; raw.len()];
    let mut evtc = Decompressor::new();
    for codec in [Codec::LZ4, zstd5, zlib6] {
        let mut compressed = Vec::new();
        Compressor::new()
            .compress(codec, raw, &mut compressed)
            .expect("compress");
        group.bench_function(format!("decompress {codec} - evtc"), |b| {
            b.iter(|| {
                evtc.decompress(codec.algorithm(), black_box(&compressed), &mut back)
                    .expect("decompress")
            })
        });
        match codec.algorithm() {
            Algorithm::Lz4 => {
                // evtc decodes LZ4 with liblz4; lz4_flex (which compresses) for comparison.
                group.bench_function("decompress lz4 - liblz4", |b| {
                    b.iter(|| {
                        lz4::block::decompress_to_buffer(
                            black_box(&compressed),
                            Some(back.len() as i32),
                            &mut back,
                        )
                        .expect("lz4")
                    })
                });
                group.bench_function("decompress lz4 - lz4_flex", |b| {
                    b.iter(|| {
                        lz4_flex::block::decompress_into(black_box(&compressed), &mut back)
                            .expect("lz4")
                    })
                })
            }
            Algorithm::Zstd => {
                let mut direct = zstd::bulk::Decompressor::new().expect("zstd");
                group.bench_function("decompress zstd:5 - zstd", |b| {
                    b.iter(|| {
                        direct
                            .decompress_to_buffer(black_box(&compressed), &mut back)
                            .expect("zstd")
                    })
                })
            }
            _ => {
                let mut direct = flate2::Decompress::new(true);
                group.bench_function("decompress zlib:6 - flate2", |b| {
                    b.iter(|| {
                        direct.reset(true);
                        direct
                            .decompress(
                                black_box(&compressed),
                                &mut back,
                                flate2::FlushDecompress::Finish,
                            )
                            .expect("zlib")
                    })
                })
            }
        };
    }

    // The envelope (header, CRC32 both ways) on top of the raw context.
    let mut encoder = BlockEncoder::new();
    let mut block = Vec::with_capacity(2 * raw.len());
    group.bench_function("compress lz4 - evtc block", |b| {
        b.iter(|| {
            block.clear();
            encoder
                .encode(Codec::LZ4, Precondition::None, black_box(raw), &mut block)
                .expect("block")
        })
    });
    let mut decoder = BlockDecoder::new();
    group.bench_function("decompress lz4 - evtc block", |b| {
        b.iter(|| {
            decoder
                .decode_into(black_box(&block), &mut back)
                .expect("block")
        })
    });
    group.finish();
}

/// flate2 with zlib-rs (what evtc uses) against miniz_oxide, on the same data.
fn bench_zlib_backends(c: &mut Criterion, raw: &[u8]) {
    let mut group = c.benchmark_group("zlib-backend");
    configure(&mut group);
    group.throughput(Throughput::Bytes(raw.len() as u64));
    for level in [1u8, 6] {
        let codec = Codec::zlib(i32::from(level)).expect("zlib");
        let mut out = Vec::with_capacity(2 * raw.len());
        let mut compressor = Compressor::new();
        group.bench_function(format!("compress {codec} - zlib-rs"), |b| {
            b.iter(|| {
                out.clear();
                compressor
                    .compress(codec, black_box(raw), &mut out)
                    .expect("compress")
            })
        });
        group.bench_function(format!("compress {codec} - miniz_oxide"), |b| {
            b.iter(|| miniz_oxide::deflate::compress_to_vec_zlib(black_box(raw), level))
        });
        let compressed = miniz_oxide::deflate::compress_to_vec_zlib(raw, level);
        let mut back = vec![0; raw.len()];
        let mut decompressor = Decompressor::new();
        group.bench_function(format!("decompress {codec} - zlib-rs"), |b| {
            b.iter(|| {
                decompressor
                    .decompress(Algorithm::Zlib, black_box(&compressed), &mut back)
                    .expect("zlib")
            })
        });
        group.bench_function(format!("decompress {codec} - miniz_oxide"), |b| {
            b.iter(|| {
                miniz_oxide::inflate::decompress_to_vec_zlib(black_box(&compressed)).expect("miniz")
            })
        });
    }
    group.finish();
}

fn fmt_rate(nanos: Option<&f64>, bytes: usize) -> String {
    nanos.map_or_else(
        || "-".into(),
        |&n| format!("{:.0}", support::mb_per_s(bytes, n)),
    )
}

/// Writes the run's report (`codecs.md`, beside the other benchmarks' reports): every table of
/// the codec benchmarks.
fn report(sets: &[Dataset], ratios: &BTreeMap<(String, String, String), f64>, since: SystemTime) {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# evtc codec benchmarks\n\nMachine: {}. Command: `cargo bench --bench codecs`.",
        support::machine()
    );
    let _ = writeln!(
        md,
        "Blocks of {} KiB; MB/s are of uncompressed bytes; criterion medians.\n",
        BLOCK >> 10
    );

    codec_tables(&mut md, sets, ratios, since);
    kernel_table(&mut md, since);
    crc_table(&mut md, since);
    for data in ["nano/Jet_pt", "rac/TSmall"] {
        overhead_report(&mut md, data, since);
    }

    zlib_table(&mut md, &sets[0].bytes, since);
    support::write_report("codecs.md", &md);
}

/// A table per data set: each codec's ratio under each preconditioner (with compress and
/// decompress speeds for the timed sets).
fn codec_tables(
    md: &mut String,
    sets: &[Dataset],
    ratios: &BTreeMap<(String, String, String), f64>,
    since: SystemTime,
) {
    let times = support::medians("codecs", since);
    for set in sets {
        let _ = writeln!(md, "## {}\n", set.name);
        let names: Vec<String> = set.preconditions.iter().map(ToString::to_string).collect();
        if set.timed && !times.is_empty() {
            let _ = writeln!(
                md,
                "ratio / compress MB/s / decompress MB/s, per preconditioner:\n"
            );
        } else {
            let _ = writeln!(md, "ratio per preconditioner:\n");
        }
        let _ = writeln!(md, "| codec | {} |", names.join(" | "));
        let _ = writeln!(md, "|---|{}", "---|".repeat(names.len()));
        for spec in CODECS {
            let mut cells = Vec::new();
            for (p, name) in set.preconditions.iter().zip(&names) {
                let Some(ratio) = ratios.get(&(set.name.to_owned(), spec.to_owned(), name.clone()))
                else {
                    cells.push("".to_owned());
                    continue;
                };
                if set.timed && !times.is_empty() {
                    let comp =
                        fmt_rate(times.get(&codec_id("compress", spec, *p, set.name)), BLOCK);
                    let dec = fmt_rate(
                        times.get(&codec_id("decompress", spec, *p, set.name)),
                        BLOCK,
                    );
                    cells.push(format!("{ratio:.2} / {comp} / {dec}"));
                } else {
                    cells.push(format!("{ratio:.2}"));
                }
            }
            let _ = writeln!(md, "| {spec} | {} |", cells.join(" | "));
        }
        let _ = writeln!(md);
    }
}

/// The preconditioner kernels' speeds per instruction set.
fn kernel_table(md: &mut String, since: SystemTime) {
    let kernels = support::medians("kernels", since);
    if !kernels.is_empty() {
        let _ = writeln!(
            md,
            "## Preconditioner kernels (GB/s, {} KiB blocks)\n",
            KERNEL_BLOCK >> 10
        );
        let _ = writeln!(
            md,
            "| operation | {} |\n|---|{}",
            Isa::ALL.map(|isa| format!("{isa:?}")).join(" | "),
            "---|".repeat(Isa::ALL.len())
        );
        let mut ops: Vec<String> = kernels
            .keys()
            .filter_map(|k| k.rsplit_once(" - ").map(|(op, _)| op.to_owned()))
            .collect();
        ops.dedup();
        for op in ops {
            let cell = |isa: Isa| {
                kernels.get(&format!("{op} - {isa:?}")).map_or_else(
                    || "-".into(),
                    |&n| format!("{:.1}", KERNEL_BLOCK as f64 / n),
                )
            };
            let _ = writeln!(md, "| {op} | {} |", Isa::ALL.map(cell).join(" | "));
        }
        let _ = writeln!(md);
    }
}

/// CRC32 speeds per buffer size and implementation.
fn crc_table(md: &mut String, since: SystemTime) {
    let crc = support::medians("crc32", since);
    if !crc.is_empty() {
        let _ = writeln!(
            md,
            "## CRC32 (GB/s)\n\n| buffer | crc32fast | crc-fast | evtc |\n|---|---|---|---|"
        );
        for size in CRC_SIZES {
            let cell = |name: &str| {
                crc.get(&format!("{name} - {size}"))
                    .map_or_else(|| "-".into(), |&n| format!("{:.1}", size as f64 / n))
            };
            let _ = writeln!(
                md,
                "| {size} B | {} | {} | {} |",
                cell("crc32fast"),
                cell("crc-fast"),
                cell("evtc")
            );
        }
        let _ = writeln!(md);
    }
}

/// The zlib backends (zlib-rs and miniz_oxide) on `raw`: their ratios and speeds.
fn zlib_table(md: &mut String, raw: &[u8], since: SystemTime) {
    let zlib = support::medians("zlib-backend", since);
    if !zlib.is_empty() {
        let ratio_rs = |level: i32| {
            let mut out = Vec::new();
            Compressor::new()
                .compress(Codec::zlib(level).expect("zlib"), raw, &mut out)
                .expect("zlib");
            raw.len() as f64 / out.len() as f64
        };
        let ratio_miniz = |level: u8| {
            raw.len() as f64 / miniz_oxide::deflate::compress_to_vec_zlib(raw, level).len() as f64
        };
        let _ = writeln!(
            md,
            "## zlib backends (1 MiB of Jet_pt; MB/s)\n\nRatios: zlib-rs {:.3} at level 1, {:.3} at level 6; miniz_oxide {:.3} at level 1, {:.3} at level 6.\n",
            ratio_rs(1),
            ratio_rs(6),
            ratio_miniz(1),
            ratio_miniz(6)
        );
        let _ = writeln!(
            md,
            "| operation | zlib-rs (flate2) | miniz_oxide |\n|---|---|---|"
        );
        for op in [
            "compress zlib:1",
            "compress zlib:6",
            "decompress zlib:1",
            "decompress zlib:6",
        ] {
            let cell = |b: &str| fmt_rate(zlib.get(&format!("{op} - {b}")), BLOCK);
            let _ = writeln!(
                md,
                "| {op} | {} | {} |",
                cell("zlib-rs"),
                cell("miniz_oxide")
            );
        }
        let _ = writeln!(md);
    }
}

fn overhead_report(md: &mut String, data: &str, since: SystemTime) {
    let overhead = support::medians(&format!("overhead {data}"), since);
    if !overhead.is_empty() {
        let _ = writeln!(
            md,
            "## Wrapper overhead (1 MiB of {data}; MB/s)\n\n| operation | evtc | backend direct | evtc / direct time |\n|---|---|---|---|"
        );
        for (op, direct) in [
            ("compress lz4", "lz4_flex"),
            ("compress zstd:5", "zstd"),
            ("compress zlib:6", "flate2"),
            ("decompress lz4", "liblz4"),
            ("decompress lz4", "lz4_flex"),
            ("decompress zstd:5", "zstd"),
            ("decompress zlib:6", "flate2"),
        ] {
            let (Some(e), Some(d)) = (
                overhead.get(&format!("{op} - evtc")),
                overhead.get(&format!("{op} - {direct}")),
            ) else {
                continue;
            };
            let _ = writeln!(
                md,
                "| {op} | {:.0} | {:.0} ({direct}) | {:.3} |",
                support::mb_per_s(BLOCK, *e),
                support::mb_per_s(BLOCK, *d),
                e / d
            );
        }
        for op in ["compress lz4", "decompress lz4"] {
            if let (Some(b), Some(e)) = (
                overhead.get(&format!("{op} - evtc block")),
                overhead.get(&format!("{op} - evtc")),
            ) {
                let _ = writeln!(
                    md,
                    "| {op} in a block (header + CRC32) | {:.0} | {:.0} (evtc raw) | {:.3} |",
                    support::mb_per_s(BLOCK, *b),
                    support::mb_per_s(BLOCK, *e),
                    b / e
                );
            }
        }
        let _ = writeln!(md);
    }
}

fn main() {
    let since = SystemTime::now();
    let mut c = Criterion::default().configure_from_args();
    let sets = datasets();
    let mut ratios = BTreeMap::new();
    bench_kernels(&mut c);
    bench_crc(&mut c);
    bench_overhead(&mut c, "nano/Jet_pt", &sets[0].bytes);
    bench_overhead(&mut c, "rac/TSmall", &sets[sets.len() - 1].bytes);
    bench_zlib_backends(&mut c, &sets[0].bytes);
    bench_codecs(&mut c, &sets, &mut ratios);
    c.final_summary();
    report(&sets, &ratios, since);
}
