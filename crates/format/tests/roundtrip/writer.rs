//! The writer: its choices (preconditioners, dictionaries, mantissa bits and quantization, RAC
//! where it pays, fixed-array shapes, first baskets stored as their trial encoded them), and files
//! whose bytes do not depend on its threads.

use super::*;

/// Float branches left to the writer keep the preconditioner that makes the first basket smallest
/// (of every candidate; in RAC units of the two shuffles, `bitplanes`, `runs` and the whole
/// basket's best): within 1% of the best explicit choice, and their values read back.
#[test]
fn float_branches_keep_the_smallest_preconditioner() {
    use evtc_codecs::{Precondition, Width};
    // Under 256 KiB of values: the writer measures ordinary baskets on their first 256 KiB, RAC
    // ones on up to 4 MiB.
    let jets = evtc_datagen::nano::jets(2_500, 3);
    let tfloat = evtc_datagen::rac::tfloat(2_500, 3);
    let tfloat_counts = vec![6u32; 2_500];
    // Runs of six equal floats 1,000 per entry: zstd keeps them unshuffled.
    let tsmall = evtc_datagen::rac::tsmall(60, 3);
    let tsmall_counts = vec![1_000u32; 60];
    assert!(jets.pt.len() * 4 <= 64 << 10);
    let dir = tempfile::tempdir().unwrap();
    for (codec, rac) in [
        ("zstd:5", RacMode::On),
        ("lz4", RacMode::On),
        ("zstd:5", RacMode::Off),
        ("lz4", RacMode::Off),
    ] {
        for (name, counts, values) in [
            ("jets", &jets.counts, &jets.pt),
            ("tfloat", &tfloat_counts, &tfloat),
            ("tsmall", &tsmall_counts, &tsmall),
        ] {
            let write = |precondition: Option<Precondition>| {
                let path = dir
                    .path()
                    .join(format!("{name}-{codec}-{rac:?}-{precondition:?}.evtc"));
                let options = WriteOptions::default()
                    .codec(codec.parse::<Codec>().unwrap())
                    .basket_size(1 << 20)
                    .rac(rac)
                    .overwrite(true);
                let mut spec = BranchSpec::jagged("v", ScalarType::F32);
                if let Some(p) = precondition {
                    spec = spec.precondition(p);
                }
                let mut file = FileWriter::create(&path, options).unwrap();
                let mut tree = file.tree("T", vec![spec]).unwrap();
                tree.fill_jagged(0, counts, values).unwrap();
                tree.commit().unwrap();
                tree.finish().unwrap();
                file.finish().unwrap();
                let file = FileReader::open(&path).unwrap();
                let branch = file.tree("T").unwrap().branch("v").unwrap();
                assert_eq!(branch.read_jagged::<f32>().unwrap().values, *values);
                let meta = branch.meta();
                (meta.stored_bytes, meta.precondition, meta.width)
            };
            let shuffle = write(Some(Precondition::Shuffle(Width::W4)));
            let bitshuffle = write(Some(Precondition::BitShuffle(Width::W4)));
            let auto = write(None);
            if rac == RacMode::On {
                // RAC units of floats choose between the two shuffles, bitshuffle without its
                // constant planes, run-length encoding where the values come in runs, and what
                // compressed the whole basket best (the packing ones win near-ties of 1%): never
                // more than 1% above the best of the first four.
                let runs = write(Some(Precondition::Runs(Width::W4)));
                let bitplanes = write(Some(Precondition::BitPlanes(Width::W4)));
                let best = shuffle.min(bitshuffle).min(runs).min(bitplanes);
                assert!(
                    auto.0 * 100 <= best.0 * 101,
                    "{name} {codec} {rac:?}: auto {auto:?}, best {best:?}"
                );
                if name == "jets" {
                    // NanoAOD's rounded mantissas leave bit-planes of zeros.
                    assert!(
                        auto.0 * 100 <= bitplanes.0 * 101,
                        "{name} {codec}: rounded floats"
                    );
                    assert!(bitplanes.0 < bitshuffle.0, "{bitplanes:?} {bitshuffle:?}");
                } else {
                    assert_eq!(auto, runs, "{name} {codec}: runs of six equal floats");
                }
                continue;
            }
            // Ordinary baskets try every preconditioner on the first basket (all of it here) and
            // keep the smallest; near-ties of 1% go to the one that packs the data shortest, then
            // to the type's default (shuffle).
            let fixed: Vec<_> = Precondition::candidates(Width::W4)
                .into_iter()
                .map(|p| write(Some(p)))
                .collect();
            let best = fixed.iter().copied().min().unwrap();
            assert!(
                auto.0 * 100 <= best.0 * 101,
                "{name} {codec}: auto {auto:?}, best {best:?}"
            );
            assert!(
                fixed.contains(&auto),
                "{name} {codec}: auto {auto:?} is none of the fixed choices"
            );
            // Runs within 1% of the smallest win: the codec then decodes each run once.
            let runs = write(Some(Precondition::Runs(Width::W4)));
            if runs.0 * 100 <= best.0 * 101 {
                assert_eq!(auto, runs, "{name} {codec}");
            }
            if name == "tsmall" {
                assert_eq!(auto, runs, "{name} {codec}: runs of six equal floats");
            }
        }
    }
}

/// Integer branches left to the writer: sorted positions keep delta (with zstd), each
/// within 1% of the best explicit choice.
#[test]
fn integer_branches_keep_the_smallest_preconditioner() {
    use evtc_codecs::{Precondition, Width};
    let positions = evtc_datagen::ints::sorted_positions(50_000, 5);
    let counts: Vec<i32> = evtc_datagen::ints::poisson_counts(50_000, 4.0, 5)
        .into_iter()
        .map(|c| c as i32)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for codec in ["zstd:5", "lz4", "lzma:6"] {
        for (name, values) in [("positions", &positions), ("counts", &counts)] {
            let write = |precondition: Option<Precondition>| {
                let path = dir
                    .path()
                    .join(format!("{name}-{codec}-{precondition:?}.evtc"));
                let options = WriteOptions::default()
                    .codec(codec.parse::<Codec>().unwrap())
                    .basket_size(1 << 20);
                let mut spec = BranchSpec::scalar("v", ScalarType::I32);
                if let Some(p) = precondition {
                    spec = spec.precondition(p);
                }
                let mut file = FileWriter::create(&path, options).unwrap();
                let mut tree = file.tree("T", vec![spec]).unwrap();
                tree.fill_column(0, values).unwrap();
                tree.commit().unwrap();
                tree.finish().unwrap();
                file.finish().unwrap();
                let file = FileReader::open(&path).unwrap();
                let branch = file.tree("T").unwrap().branch("v").unwrap();
                assert_eq!(branch.read::<i32>().unwrap(), *values);
                let meta = branch.meta();
                (meta.stored_bytes, meta.precondition, meta.width)
            };
            let fixed: Vec<_> = Precondition::candidates(Width::W4)
                .into_iter()
                .map(|p| write(Some(p)))
                .collect();
            let best = fixed.iter().copied().min().unwrap();
            let auto = write(None);
            assert!(
                auto.0 * 100 <= best.0 * 101,
                "{name} {codec}: auto {auto:?}, best {best:?}"
            );
            assert!(
                fixed.contains(&auto),
                "{name} {codec}: auto {auto:?} is none of the fixed choices"
            );
            // Sorted positions: varints under an entropy coder, bit-packing under LZ4.
            match (name, codec) {
                ("positions", "zstd:5") => {
                    assert_eq!(auto.1, Precondition::DeltaVarint(Width::W4).id(), "{codec}");
                }
                ("positions", "lz4") => {
                    assert_eq!(auto.1, Precondition::DeltaFor(Width::W4).id(), "{codec}");
                }
                _ => {}
            }
        }
    }
}

/// A branch whose only basket is small pays for its RAC dictionary's bytes: tiny entries built from
/// a few shared values keep a dictionary that more than pays for itself; entries with one shared
/// value among eleven random ones, which a dictionary shrinks by a few percent but by less than its
/// own size, do not keep one.
/// RAC units of sorted integers try what compresses the whole basket best (delta-shuffle here),
/// not only the shuffles: lists of 10,000 sorted positions (one entry per unit) cost at most 2%
/// more with RAC than without (bitplanes, the best of the RAC candidates before, cost 1.7x).
#[test]
fn rac_units_of_sorted_integers_take_the_whole_baskets_best_preconditioner() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = 7u64;
    let mut position = 0i32;
    let counts = vec![10_000u32; 40];
    let values: Vec<i32> = (0..400_000)
        .map(|i| {
            if i % 10_000 == 0 {
                position = 0;
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            position += 1 + (x >> 58) as i32;
            position
        })
        .collect();
    let size = |rac: RacMode| {
        let path = dir.path().join(format!("sorted-{rac:?}.evtc"));
        let options = WriteOptions::default().rac(rac).overwrite(true);
        let mut file = FileWriter::create(&path, options).unwrap();
        let mut tree = file
            .tree("T", vec![BranchSpec::jagged("position", ScalarType::I32)])
            .unwrap();
        tree.fill_jagged(0, &counts, &values).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();
        let file = FileReader::open(&path).unwrap();
        let branch = file.tree("T").unwrap().branch("position").unwrap();
        assert_eq!(branch.read_jagged::<i32>().unwrap().values, values);
        assert_eq!(branch.meta().rac, rac == RacMode::On);
        branch.meta().stored_bytes
    };
    let (on, off) = (size(RacMode::On), size(RacMode::Off));
    assert!(on * 100 <= off * 102, "RAC {on} bytes, without {off}");
}

#[test]
fn small_branches_keep_only_dictionaries_that_pay_for_themselves() {
    let mut rng = evtc_datagen::Rng::new(11);
    let table: Vec<u32> = (0..16).map(|_| rng.next_u64() as u32).collect();
    let shared: Vec<u32> = (0..2500 * 12)
        .map(|_| table[rng.below(16) as usize])
        .collect();
    let mostly_random: Vec<u32> = (0..2500 * 12)
        .map(|i| {
            let r = rng.next_u64() as u32;
            if i % 12 == 0 {
                table[(r % 16) as usize]
            } else {
                r
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let write = |dictionaries: bool| {
        let path = dir.path().join(format!("dict-{dictionaries}.evtc"));
        let options = WriteOptions::default()
            .codec(Codec::zstd(5).unwrap())
            .rac(RacMode::On)
            .rac_unit_bytes(0)
            .rac_dictionary(dictionaries);
        let mut file = FileWriter::create(&path, options).unwrap();
        let spec = |name: &str| {
            BranchSpec::fixed(name, ScalarType::U32, 12)
                .precondition(evtc_codecs::Precondition::None)
        };
        let mut tree = file
            .tree("T", vec![spec("shared"), spec("random")])
            .unwrap();
        tree.fill_column(0, &shared).unwrap();
        tree.fill_column(1, &mostly_random).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();
        let file = FileReader::open(&path).unwrap();
        let tree = file.tree("T").unwrap();
        let sizes = ["shared", "random"].map(|name| {
            let branch = tree.branch(name).unwrap();
            let meta = branch.meta();
            assert_eq!(
                meta.baskets, 1,
                "{name}: one basket under half the basket size"
            );
            (meta.stored_bytes, meta.dictionary_len)
        });
        assert_eq!(
            tree.branch("shared").unwrap().read::<u32>().unwrap(),
            shared
        );
        sizes
    };
    let ([shared_with, random_with], [shared_without, _]) = (write(true), write(false));
    assert!(
        shared_with.1 > 0,
        "the shared-value branch keeps its dictionary"
    );
    assert!(
        shared_with.0 + shared_with.1 < shared_without.0,
        "{shared_with:?} against {shared_without:?}"
    );
    assert_eq!(
        random_with.1, 0,
        "the mostly random branch keeps no dictionary"
    );
}

/// Reduced precision: a float branch's values come back rounded to the asked mantissa bits
/// (within 2^-(bits+1) of themselves, low bits zero), the branch records it, other branches are
/// untouched, and a bit count that does not fit the type is refused by name.
#[test]
fn mantissa_bits_round_float_branches_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lossy.evtc");
    let x: Vec<f32> = (0..50_000)
        .map(|i| 1.0 + (i as f32) * 0.000_123_457)
        .collect();
    let y: Vec<f64> = (0..50_000)
        .map(|i| -3.0 - f64::from(i) * 1.234_567e-7)
        .collect();
    let counts: Vec<u32> = (0..50_000).map(|i| i % 3).collect();
    let jagged: Vec<f32> = (0..counts.iter().sum::<u32>())
        .map(|i| i as f32 / 7.0)
        .collect();
    let mut file = FileWriter::create(&path, WriteOptions::default().threads(2)).unwrap();
    let specs = vec![
        BranchSpec::scalar("x", ScalarType::F32).mantissa_bits(10),
        BranchSpec::scalar("y", ScalarType::F64).mantissa_bits(20),
        BranchSpec::jagged("v", ScalarType::F32).mantissa_bits(7),
        BranchSpec::scalar("exact", ScalarType::F32),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    tree.fill_column(0, &x).unwrap();
    tree.fill_column(1, &y).unwrap();
    tree.fill_jagged(2, &counts, &jagged).unwrap();
    tree.fill_column(3, &x).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let xs = tree.branch("x").unwrap().read::<f32>().unwrap();
    for (a, b) in x.iter().zip(&xs) {
        assert!(((b - a) / a).abs() <= 2f32.powi(-11), "{a} -> {b}");
        assert_eq!(b.to_bits() & ((1 << 13) - 1), 0);
    }
    let ys = tree.branch("y").unwrap().read::<f64>().unwrap();
    for (a, b) in y.iter().zip(&ys) {
        assert!(((b - a) / a).abs() <= 2f64.powi(-21), "{a} -> {b}");
    }
    let vs = tree.branch("v").unwrap().read_jagged::<f32>().unwrap();
    assert_eq!(vs.values.len(), jagged.len());
    assert!(vs.values.iter().all(|v| v.to_bits() & ((1 << 16) - 1) == 0));
    assert_eq!(tree.branch("exact").unwrap().read::<f32>().unwrap(), x);
    let bits: Vec<_> = tree.branches().iter().map(|b| b.mantissa_bits()).collect();
    assert_eq!(bits, [Some(10), Some(20), Some(7), None]);

    for (spec, needle) in [
        (
            BranchSpec::scalar("n", ScalarType::I32).mantissa_bits(5),
            "i32",
        ),
        (
            BranchSpec::scalar("f", ScalarType::F32).mantissa_bits(23),
            "23 mantissa bits",
        ),
        (
            BranchSpec::scalar("d", ScalarType::F64).mantissa_bits(0),
            "0 mantissa bits",
        ),
    ] {
        let mut file =
            FileWriter::create(dir.path().join("bad.evtc"), WriteOptions::default()).unwrap();
        let e = file.tree("T", vec![spec]).expect_err("refused");
        assert!(e.to_string().contains(needle), "{e}");
    }
}

/// Quantization: values come back on the range's grid within half a step, the branch records the
/// range and bits, and a value outside the range is refused naming its entry, leaving the branch
/// as it was.
#[test]
fn quantized_branches_stay_within_half_a_step_and_refuse_the_outside() {
    use evtc_codecs::Quantization;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quantized.evtc");
    let q: Quantization = "-3.2:3.2:12".parse().unwrap();
    let eta: Vec<f32> = (0..40_000)
        .map(|i| -3.0 + (i as f32) * 0.000_149_7)
        .collect();
    let counts: Vec<u32> = (0..40_000).map(|i| i % 4).collect();
    let phi: Vec<f64> = (0..u64::from(counts.iter().sum::<u32>()))
        .map(|i| (i as f64 * 0.37).sin() * 3.1)
        .collect();
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let specs = vec![
        BranchSpec::scalar("eta", ScalarType::F32).quantize(q),
        BranchSpec::jagged("phi", ScalarType::F64).quantize(q),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    tree.fill_column(0, &eta).unwrap();
    tree.fill_jagged(1, &counts, &phi).unwrap();
    tree.commit().unwrap();
    // Entry 40,002 of eta holds 3.5, outside the range; entry 40,001 of phi holds NaN.
    let e = tree
        .fill_column(0, &[0.5f32, 1.0, 3.5])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("entry 40002") && e.contains("outside the quantization range [-3.2, 3.2]"),
        "{e}"
    );
    let e = tree
        .fill_jagged(1, &[1, 2], &[0.5f64, f64::NAN, 1.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("entry 40001") && e.contains("NaN"), "{e}");
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    assert_eq!(tree.entries(), 40_000);
    let got = tree.branch("eta").unwrap().read::<f32>().unwrap();
    let mut grid = std::collections::BTreeSet::new();
    for (a, b) in eta.iter().zip(&got) {
        let ulp = f64::from(f32::EPSILON) * f64::from(b.abs());
        assert!(
            (f64::from(*b) - f64::from(*a)).abs() <= q.max_error() + ulp,
            "{a} -> {b}"
        );
        grid.insert(b.to_bits());
    }
    assert!(grid.len() <= 4096);
    let got = tree.branch("phi").unwrap().read_jagged::<f64>().unwrap();
    for (a, b) in phi.iter().zip(&got.values) {
        assert!((b - a).abs() <= q.max_error() * (1.0 + 1e-12), "{a} -> {b}");
    }
    for name in ["eta", "phi"] {
        assert_eq!(tree.branch(name).unwrap().meta().quantization(), Some(q));
    }
    let mut file =
        FileWriter::create(dir.path().join("bad.evtc"), WriteOptions::default()).unwrap();
    let both = BranchSpec::scalar("x", ScalarType::F32)
        .quantize(q)
        .mantissa_bits(8);
    let e = file.tree("T", vec![both]).expect_err("refused").to_string();
    assert!(e.contains("do not go together"), "{e}");
    let int = BranchSpec::scalar("n", ScalarType::U16).quantize(q);
    let e = file.tree("T", vec![int]).expect_err("refused").to_string();
    assert!(e.contains("quantization asked for u16"), "{e}");
}

/// `RacMode::Auto` turns RAC on for a branch whose first basket holds at least 16 units, and off
/// for one that fits in a small basket (RAC would buy nothing there) or whose entries are large.
#[test]
fn rac_auto_only_where_a_random_read_gains() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auto.evtc");
    let options = WriteOptions::default()
        .rac(RacMode::Auto)
        .basket_size(64 << 10);
    let mut file = FileWriter::create(&path, options).unwrap();
    let specs = vec![
        // 200 x 4 bytes: one basket of 800 bytes, under 16 units of 2 KiB.
        BranchSpec::scalar("x", ScalarType::F32),
        // 200 x 256 bytes: one basket of 50 KiB, 25 units.
        BranchSpec::fixed("arr", ScalarType::F32, 64),
        // Entries of 10 KiB: over 1/8 of a 64 KiB basket.
        BranchSpec::fixed("wide", ScalarType::U8, 10 << 10),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    let n = 200;
    tree.fill_column(0, &(0..n).map(|i| i as f32).collect::<Vec<_>>())
        .unwrap();
    let arr: Vec<f32> = (0..n * 64).map(|i| (i % 977) as f32).collect();
    tree.fill_column(1, &arr).unwrap();
    let wide: Vec<u8> = (0..n * (10 << 10)).map(|i| (i % 251) as u8).collect();
    tree.fill_column(2, &wide).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let rac: Vec<bool> = tree.branches().iter().map(|b| b.rac).collect();
    assert_eq!(rac, [false, true, false]);
    assert_eq!(tree.branch("arr").unwrap().read::<f32>().unwrap(), arr);
}

/// A multi-dimensional fixed array records its dimensions (the values stay flat, row-major);
/// dimensions that do not multiply to the array's length, or a shape on another type, are
/// refused by name.
#[test]
fn fixed_arrays_record_their_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shape.evtc");
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let specs = vec![
        BranchSpec::fixed("m", ScalarType::F64, 6).shape(vec![2, 3]),
        BranchSpec::fixed("flat", ScalarType::F64, 6),
    ];
    let values: Vec<f64> = (0..600).map(f64::from).collect();
    let mut tree = file.tree("T", specs).unwrap();
    tree.fill_column(0, &values).unwrap();
    tree.fill_column(1, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let m = tree.branch("m").unwrap();
    assert_eq!(m.meta().shape(), Some(vec![2, 3]));
    assert_eq!(m.meta().type_name(), "f64[2][3]");
    assert_eq!(m.read::<f64>().unwrap(), values);
    let flat = tree.branch("flat").unwrap();
    assert_eq!(
        (flat.meta().shape(), flat.meta().type_name()),
        (None, "f64[6]".into())
    );

    for (spec, needle) in [
        (
            BranchSpec::fixed("a", ScalarType::I32, 6).shape(vec![4, 2]),
            "shape [4, 2]",
        ),
        (
            BranchSpec::fixed("b", ScalarType::I32, 6).shape(vec![6]),
            "shape [6]",
        ),
        (
            BranchSpec::jagged("c", ScalarType::I32).shape(vec![2, 3]),
            "i32[]",
        ),
    ] {
        let mut file =
            FileWriter::create(dir.path().join("bad.evtc"), WriteOptions::default()).unwrap();
        let e = file.tree("T", vec![spec]).expect_err("refused");
        assert!(e.to_string().contains(needle), "{e}");
    }
}

/// A branch's first basket is stored as the preconditioner trial that chose the preconditioner
/// encoded it (the writer does not compress it again): every basket record of a file written
/// with automatic preconditioners equals the one a writer told the chosen preconditioners makes.
#[test]
fn first_baskets_store_the_blocks_of_their_trial() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let id: Vec<i32> = (0..n).map(|e| e / 3 % 17).collect();
    let x: Vec<f32> = (0..n).map(|e| (e as f32 * 0.37).sin()).collect();
    let big: Vec<u64> = (0..n as u64).map(|e| e * 1_000_003).collect();
    let names = ["id", "x", "big"];
    let write = |file: &str, chosen: Option<&[Precondition]>| {
        let path = dir.path().join(file);
        // Baskets of 32 KiB: each first basket is a whole trial sample.
        let options = WriteOptions::default().basket_size(32 << 10);
        let mut out = FileWriter::create(&path, options).unwrap();
        let types = [ScalarType::I32, ScalarType::F32, ScalarType::U64];
        let specs = names
            .iter()
            .zip(types)
            .enumerate()
            .map(|(b, (name, t))| match chosen {
                Some(chosen) => BranchSpec::scalar(*name, t).precondition(chosen[b]),
                None => BranchSpec::scalar(*name, t),
            })
            .collect();
        let mut tree = out.tree("T", specs).unwrap();
        tree.fill_column(0, &id).unwrap();
        tree.fill_column(1, &x).unwrap();
        tree.fill_column(2, &big).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        out.finish().unwrap();
        path
    };
    let baskets = |path: &std::path::Path| -> Vec<Vec<u8>> {
        let bytes = std::fs::read(path).unwrap();
        let file = FileReader::open(path).unwrap();
        let tree = file.tree("T").unwrap();
        let mut records = Vec::new();
        for name in names {
            for loc in &tree.branch(name).unwrap().baskets().unwrap().baskets {
                let at = loc.offset as usize;
                records.push(bytes[at..at + loc.record_len as usize].to_vec());
            }
        }
        records
    };
    let auto = write("auto.evtc", None);
    let file = FileReader::open(&auto).unwrap();
    let chosen: Vec<Precondition> = file.trees()[0]
        .branches
        .iter()
        .map(|m| Precondition::from_parts(m.precondition, m.width).unwrap())
        .collect();
    // The trials chose something other than the defaults, or this would test nothing.
    let defaults: Vec<Precondition> = [ScalarType::I32, ScalarType::F32, ScalarType::U64]
        .into_iter()
        .map(evtc_format::auto_precondition)
        .collect();
    assert_ne!(chosen, defaults);
    let told = write("told.evtc", Some(&chosen));
    let (auto, told) = (baskets(&auto), baskets(&told));
    assert!(auto.len() > names.len(), "{} baskets", auto.len());
    assert!(auto == told, "basket records differ");
}

/// A file's bytes do not depend on the writer's threads: the preconditioner trials of the first
/// baskets run on the pool, the layout decisions and records in order. The branches make every
/// kind of decision: trials of values and of counts, a RAC branch (with its dictionary records)
/// and a branch with no trials.
#[test]
fn file_bytes_do_not_depend_on_the_writers_threads() {
    let dir = tempfile::tempdir().unwrap();
    let counts: Vec<u32> = (0..30_000u32).map(|e| (e * 7) % 5).collect();
    let n: u32 = counts.iter().sum();
    let write = |threads: usize| {
        let path = dir.path().join(format!("t{threads}.evtc"));
        // Clusters of a size in bytes, found while batches of baskets compress.
        let options = WriteOptions::default()
            .basket_size(4 << 10)
            .cluster_size(ClusterSize::Bytes(300 << 10))
            .threads(threads);
        let mut file = FileWriter::create(&path, options).unwrap();
        let specs = vec![
            BranchSpec::scalar("id", ScalarType::I32),
            BranchSpec::scalar("x", ScalarType::F32),
            BranchSpec::jagged("v", ScalarType::F32).boundaries(Boundaries::Counts),
            BranchSpec::jagged("w", ScalarType::U16).rac(RacMode::On),
            BranchSpec::scalar("raw", ScalarType::F64).precondition(Precondition::None),
        ];
        let mut tree = file.tree("T", specs).unwrap();
        let id: Vec<i32> = (0..30_000).map(|e| e / 3 % 17).collect();
        let x: Vec<f32> = (0..30_000).map(|e| (e as f32 * 0.37).sin()).collect();
        let v: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let w: Vec<u16> = (0..n).map(|i| (i % 300) as u16).collect();
        let raw: Vec<f64> = (0..30_000).map(|e| f64::from(e) / 7.0).collect();
        // Commits of 1,000 entries, as a conversion makes them.
        let mut at = 0;
        for e in (0..30_000).step_by(1_000) {
            let n: usize = counts[e..e + 1_000].iter().map(|&c| c as usize).sum();
            tree.fill_column(0, &id[e..e + 1_000]).unwrap();
            tree.fill_column(1, &x[e..e + 1_000]).unwrap();
            tree.fill_jagged(2, &counts[e..e + 1_000], &v[at..at + n])
                .unwrap();
            tree.fill_jagged(3, &counts[e..e + 1_000], &w[at..at + n])
                .unwrap();
            tree.fill_column(4, &raw[e..e + 1_000]).unwrap();
            tree.commit().unwrap();
            at += n;
        }
        tree.finish().unwrap();
        file.finish().unwrap();
        std::fs::read(&path).unwrap()
    };
    let one = write(1);
    let reader = FileReader::from_source(one.clone(), ReadOptions::default()).unwrap();
    let clusters = reader.trees()[0].cluster_ends.len();
    assert!(clusters > 2, "{clusters} clusters");
    assert!(write(2) == one, "2 threads");
    assert!(write(4) == one, "4 threads");
}
