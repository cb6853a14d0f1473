//! Random trees (every type, every boundary encoding, several codecs, cluster settings, both flush
//! modes) written and read back equal by bulk, range and entry reads.

use evtc_codecs::{Codec, Precondition, Width};
use evtc_format::{
    Boundaries, BranchReader, BranchSpec, ClusterSize, DataType, FileReader, FileWriter, Jagged,
    LocalFile, RacMode, ReadAt, ReadOptions, Scalar, ScalarType, TreeWriter, Value, WriteOptions,
};
use proptest::prelude::*;

/// One column of test data, values kept as f64/i128-free typed vectors per scalar type.
#[derive(Debug, Clone)]
enum Values {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! each_values {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            Values::Bool($x) => $body,
            Values::I8($x) => $body,
            Values::U8($x) => $body,
            Values::I16($x) => $body,
            Values::U16($x) => $body,
            Values::I32($x) => $body,
            Values::U32($x) => $body,
            Values::I64($x) => $body,
            Values::U64($x) => $body,
            Values::F32($x) => $body,
            Values::F64($x) => $body,
        }
    };
}

fn values(t: ScalarType, n: usize, seed: u64) -> Values {
    let mut rng = evtc_datagen::Rng::new(seed);
    let mut next = || rng.next_u64();
    // Small values most of the time, so that compression has something to find.
    let mut small = move || {
        let v = next();
        if v % 4 == 0 { v } else { v % 17 }
    };
    match t {
        ScalarType::Bool => Values::Bool((0..n).map(|_| small() % 2 == 1).collect()),
        ScalarType::I8 => Values::I8((0..n).map(|_| small() as i8).collect()),
        ScalarType::U8 => Values::U8((0..n).map(|_| small() as u8).collect()),
        ScalarType::I16 => Values::I16((0..n).map(|_| small() as i16).collect()),
        ScalarType::U16 => Values::U16((0..n).map(|_| small() as u16).collect()),
        ScalarType::I32 => Values::I32((0..n).map(|_| small() as i32).collect()),
        ScalarType::U32 => Values::U32((0..n).map(|_| small() as u32).collect()),
        ScalarType::I64 => Values::I64((0..n).map(|_| small() as i64).collect()),
        ScalarType::U64 => Values::U64((0..n).map(|_| small()).collect()),
        ScalarType::F32 => Values::F32((0..n).map(|_| small() as f32 * 0.5).collect()),
        ScalarType::F64 => Values::F64((0..n).map(|_| small() as f64 * -0.25).collect()),
    }
}

/// A branch of the random tree: spec, per-entry counts (variable-length) and values.
#[derive(Debug, Clone)]
struct Column {
    spec: BranchSpec,
    counts: Option<Vec<u32>>,
    values: Values,
}

#[derive(Debug, Clone)]
struct Case {
    entries: usize,
    columns: Vec<Column>,
    codec: Codec,
    basket_size: usize,
    cluster: ClusterSize,
    flush_at_cluster: bool,
    threads: usize,
    by_entry: bool,
    rac: (RacMode, usize, bool),
}

fn case() -> impl Strategy<Value = Case> {
    let codecs = vec![
        "none", "lz4", "zstd:1", "zstd:5", "zlib:1", "lzma:1", "lz4hc:4",
    ];
    (
        0usize..400,
        prop::collection::vec((0usize..11, 0usize..5, any::<u64>()), 1..7),
        prop::sample::select(codecs),
        prop::sample::select(vec![16usize, 100, 1000, 64 << 10]),
        prop_oneof![
            (1u64..200).prop_map(ClusterSize::Entries),
            (50u64..5000).prop_map(ClusterSize::Bytes)
        ],
        any::<bool>(),
        1usize..3,
        any::<bool>(),
        (
            prop::sample::select(vec![RacMode::Off, RacMode::On, RacMode::Auto]),
            prop::sample::select(vec![0usize, 40, 4096]),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                entries,
                cols,
                codec,
                basket_size,
                cluster,
                flush_at_cluster,
                threads,
                by_entry,
                rac,
            )| {
                let mut columns = Vec::new();
                let counts_of = |seed: u64| -> Vec<u32> {
                    let mut rng = evtc_datagen::Rng::new(seed);
                    (0..entries).map(|_| rng.poisson(2.0)).collect()
                };
                // Branch 0 is always a counter for the countered branches.
                let counter_counts = counts_of(7);
                columns.push(Column {
                    spec: BranchSpec::scalar("n", ScalarType::U16),
                    counts: None,
                    values: Values::U16(counter_counts.iter().map(|&c| c as u16).collect()),
                });
                for (i, (t, shape, seed)) in cols.into_iter().enumerate() {
                    let t = ScalarType::ALL[t];
                    let name = format!("b{i}");
                    let column = match shape {
                        0 => Column {
                            spec: BranchSpec::scalar(&name, t),
                            counts: None,
                            values: values(t, entries, seed),
                        },
                        1 => Column {
                            spec: BranchSpec::fixed(&name, t, 3),
                            counts: None,
                            values: values(t, 3 * entries, seed),
                        },
                        2 | 3 => {
                            let counts = counts_of(seed);
                            let total = counts.iter().sum::<u32>() as usize;
                            let boundaries = if shape == 2 {
                                Boundaries::Counts
                            } else {
                                Boundaries::Offsets
                            };
                            Column {
                                // Random-access baskets store counts, not offsets.
                                spec: BranchSpec::jagged(&name, t).boundaries(boundaries).rac(
                                    if boundaries == Boundaries::Offsets {
                                        RacMode::Off
                                    } else {
                                        rac.0
                                    },
                                ),
                                counts: Some(counts),
                                values: values(t, total, seed),
                            }
                        }
                        _ => {
                            let total = counter_counts.iter().sum::<u32>() as usize;
                            Column {
                                spec: BranchSpec::jagged(&name, t).counter("n"),
                                counts: Some(counter_counts.clone()),
                                values: values(t, total, seed),
                            }
                        }
                    };
                    columns.push(column);
                }
                // A string branch too.
                let strings: Vec<String> = (0..entries)
                    .map(|e| "x".repeat(e % 5) + &e.to_string())
                    .collect();
                columns.push(Column {
                    spec: BranchSpec::utf8("label"),
                    counts: Some(strings.iter().map(|s| s.len() as u32).collect()),
                    values: Values::U8(strings.concat().into_bytes()),
                });
                Case {
                    entries,
                    columns,
                    codec: codec.parse().unwrap(),
                    basket_size,
                    cluster,
                    flush_at_cluster,
                    threads,
                    by_entry,
                    rac,
                }
            },
        )
}

fn fill_slice<T: Scalar>(
    tree: &mut TreeWriter<'_>,
    b: usize,
    counts: Option<&[u32]>,
    values: &[T],
    entries: std::ops::Range<usize>,
    per_entry: usize,
) {
    match counts {
        None => tree
            .fill_column(
                b,
                &values[entries.start * per_entry..entries.end * per_entry],
            )
            .unwrap(),
        Some(counts) => {
            let start: usize = counts[..entries.start].iter().map(|&c| c as usize).sum();
            let len: usize = counts[entries.clone()].iter().map(|&c| c as usize).sum();
            tree.fill_jagged(b, &counts[entries], &values[start..start + len])
                .unwrap();
        }
    }
}

fn write(case: &Case, path: &std::path::Path) {
    let options = WriteOptions::default()
        .codec(case.codec)
        .basket_size(case.basket_size)
        .cluster_size(case.cluster)
        .flush_at_cluster(case.flush_at_cluster)
        .threads(case.threads)
        .rac(case.rac.0)
        .rac_unit_bytes(case.rac.1)
        .rac_dictionary(case.rac.2)
        .sync(false);
    let mut file = FileWriter::create(path, options).unwrap();
    let mut tree = file
        .tree("T", case.columns.iter().map(|c| c.spec.clone()).collect())
        .unwrap();
    let step = if case.by_entry { 1 } else { 37 };
    let mut at = 0;
    while at < case.entries {
        let end = (at + step).min(case.entries);
        for (b, column) in case.columns.iter().enumerate() {
            let per_entry = column.spec.dtype().fixed_len().unwrap_or(1);
            each_values!(&column.values, v => fill_slice(&mut tree, b, column.counts.as_deref(), v, at..end, per_entry));
        }
        tree.commit().unwrap();
        at = end;
    }
    tree.finish().unwrap();
    file.finish().unwrap();
}

/// The row value of entry `e` of `column`, from the test's own data.
fn expected_value<T: Scalar + Into<Value>>(column: &Column, values: &[T], e: usize) -> Value {
    match (&column.counts, column.spec.dtype()) {
        (None, DataType::Scalar(_)) => values[e].into(),
        (None, dtype) => {
            let n = dtype.fixed_len().unwrap();
            Value::List(
                values[e * n..(e + 1) * n]
                    .iter()
                    .map(|&v| v.into())
                    .collect(),
            )
        }
        (Some(counts), _) => {
            let start: usize = counts[..e].iter().map(|&c| c as usize).sum();
            Value::List(
                values[start..start + counts[e] as usize]
                    .iter()
                    .map(|&v| v.into())
                    .collect(),
            )
        }
    }
}

fn check_column<T: Scalar>(
    tree: &evtc_format::TreeReader<'_>,
    column: &Column,
    expected: &[T],
    entries: usize,
) -> Result<(), TestCaseError> {
    let name = column.spec.name();
    let branch = tree.branch(name).unwrap();
    let mid = entries as u64 / 3..(2 * entries as u64 / 3 + 1).min(entries as u64);
    match &column.counts {
        None => {
            let per_entry = column.spec.dtype().fixed_len().unwrap();
            prop_assert_eq!(&branch.read::<T>().unwrap(), expected, "bulk {}", name);
            // Into a reused buffer: first too small, then large enough.
            let mut reused = vec![T::default(); 3];
            for _ in 0..2 {
                branch.read_into(&mut reused).unwrap();
                prop_assert_eq!(&reused, expected, "read_into {}", name);
            }
            let range = branch.read_range::<T>(mid.clone()).unwrap();
            prop_assert_eq!(
                &range[..],
                &expected[mid.start as usize * per_entry..mid.end as usize * per_entry]
            );
            let mut cursor = branch.cursor::<T>().unwrap();
            for e in (0..entries).rev().step_by(7).chain(0..entries) {
                prop_assert_eq!(
                    cursor.get(e as u64).unwrap(),
                    &expected[e * per_entry..(e + 1) * per_entry]
                );
            }
        }
        Some(counts) => {
            let mut offsets = vec![0u64];
            for &c in counts {
                offsets.push(offsets.last().unwrap() + u64::from(c));
            }
            let all = branch.read_jagged::<T>().unwrap();
            prop_assert_eq!(&*all.offsets, &offsets[..], "offsets {}", name);
            prop_assert_eq!(&all.values, expected, "values {}", name);
            // Into a reused Jagged: a part first, then the whole branch.
            let mut reused = Jagged::default();
            branch
                .read_jagged_range_into::<T>(mid.clone(), &mut reused)
                .unwrap();
            branch.read_jagged_into::<T>(&mut reused).unwrap();
            prop_assert_eq!(&reused, &all, "read_jagged_into {}", name);
            // Offsets of the right length that no one else holds are written in place (every one
            // of them); shared ones are left alone.
            reused.offsets = std::sync::Arc::from(vec![u64::MAX; offsets.len()]);
            branch.read_jagged_into::<T>(&mut reused).unwrap();
            prop_assert_eq!(&reused, &all, "read_jagged_into in place {}", name);
            let held: std::sync::Arc<[u64]> = std::sync::Arc::from(vec![7; offsets.len()]);
            reused.offsets = held.clone();
            branch.read_jagged_into::<T>(&mut reused).unwrap();
            prop_assert_eq!(&reused, &all, "read_jagged_into shared {}", name);
            prop_assert!(held.iter().all(|&o| o == 7));
            let part = branch.read_jagged_range::<T>(mid.clone()).unwrap();
            for (i, e) in mid.clone().enumerate() {
                prop_assert_eq!(
                    part.entry(i),
                    &expected[offsets[e as usize] as usize..offsets[e as usize + 1] as usize]
                );
            }
            let got_counts = branch.read_counts(mid.clone()).unwrap();
            prop_assert_eq!(
                got_counts,
                counts[mid.start as usize..mid.end as usize]
                    .iter()
                    .map(|&c| u64::from(c))
                    .collect::<Vec<_>>()
            );
            let mut cursor = branch.cursor::<T>().unwrap();
            for e in (0..entries).step_by(3).chain((0..entries).rev()) {
                prop_assert_eq!(
                    cursor.get(e as u64).unwrap(),
                    &expected[offsets[e] as usize..offsets[e + 1] as usize]
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_trees_roundtrip(case in case()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.evtc");
        write(&case, &path);
        // Positional reads on one thread, a memory map on two.
        for (threads, mapped) in [(1, false), (2, true)] {
            // SAFETY: nothing truncates or writes the file while it is open.
            let options = unsafe { ReadOptions::default().threads(threads).memory_map(mapped) };
            let file = FileReader::open_with(&path, options).unwrap();
            let tree = file.tree("T").unwrap();
            prop_assert_eq!(tree.entries(), case.entries as u64);
            let ends = &tree.meta().cluster_ends;
            prop_assert_eq!(ends.last().copied().unwrap_or(0), case.entries as u64);
            for column in &case.columns {
                each_values!(&column.values, v => check_column(&tree, column, v, case.entries)?);
            }
            if case.flush_at_cluster {
                for b in tree.branches() {
                    prop_assert_eq!(b.baskets, ends.len() as u64, "one basket per cluster in {}", b.name);
                }
            }
            let strings = tree.branch("label").unwrap().read_strings().unwrap();
            prop_assert_eq!(strings.len(), case.entries);
            let names: Vec<&str> = case.columns.iter().map(|c| c.spec.name()).collect();
            let rows = tree.rows(&names).unwrap();
            let mut seen = 0;
            for (e, row) in rows.enumerate() {
                let row = row.unwrap();
                for (column, got) in case.columns.iter().zip(&row) {
                    let want = if column.spec.dtype() == DataType::Utf8 {
                        Value::Str(strings[e].clone())
                    } else {
                        each_values!(&column.values, v => expected_value(column, v, e))
                    };
                    prop_assert_eq!(got, &want, "row {} of {}", e, column.spec.name());
                }
                seen += 1;
            }
            prop_assert_eq!(seen, case.entries);
            // Borrowed rows equal the owned ones, read backwards then forwards.
            let mut rows = tree.rows(&names).unwrap();
            for e in (0..case.entries as u64).rev().chain(0..case.entries as u64) {
                let owned = rows.get(e).unwrap();
                let mut borrowed = Vec::new();
                rows.visit(e, |i, v| borrowed.push(v.to_value(case.columns[i].spec.dtype()))).unwrap();
                prop_assert_eq!(&borrowed, &owned, "visit of row {}", e);
            }
        }
    }
}

#[test]
fn wrong_types_are_errors_naming_both_types() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.evtc");
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let mut tree = file
        .tree(
            "T",
            vec![
                BranchSpec::scalar("x", ScalarType::F32),
                BranchSpec::jagged("v", ScalarType::I32),
            ],
        )
        .unwrap();
    let err = tree.fill(0, 1u32).unwrap_err().to_string();
    assert!(err.contains("u32") && err.contains("f32"), "{err}");
    tree.fill(0, 1.5f32).unwrap();
    tree.fill_array(1, &[1i32, 2]).unwrap();
    tree.end_entry().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let err = tree
        .branch("x")
        .unwrap()
        .read::<f64>()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("f64") && err.contains("f32") && err.contains("\"x\""),
        "{err}"
    );
    let err = tree
        .branch("v")
        .unwrap()
        .read::<i32>()
        .unwrap_err()
        .to_string();
    assert!(err.contains("i32[]"), "{err}");
    assert!(tree.branch("v").unwrap().read_jagged::<f32>().is_err());
    assert_eq!(
        tree.branch("v")
            .unwrap()
            .read_jagged::<i32>()
            .unwrap()
            .values,
        [1, 2]
    );
    assert!(file.tree("nope").unwrap_err().to_string().contains("T"));
    assert!(tree.branch("nope").is_err());
    assert!(tree.branch("x").unwrap().read_range::<f32>(0..2).is_err());
}

#[test]
fn schema_and_fill_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.evtc");
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let bad = [
        vec![
            BranchSpec::scalar("a", ScalarType::I32),
            BranchSpec::scalar("a", ScalarType::I32),
        ],
        vec![BranchSpec::jagged("v", ScalarType::F32).counter("n")],
        vec![
            BranchSpec::scalar("n", ScalarType::F32),
            BranchSpec::jagged("v", ScalarType::F32).counter("n"),
        ],
        vec![BranchSpec::jagged("v", ScalarType::F32).boundaries(Boundaries::None)],
        vec![BranchSpec::scalar("x", ScalarType::F32).boundaries(Boundaries::Counts)],
        vec![BranchSpec::new(
            "z",
            DataType::FixedArray(ScalarType::U8, 0),
        )],
    ];
    for specs in bad {
        assert!(file.tree("T", specs.clone()).is_err(), "{specs:?}");
    }
    let mut tree = file
        .tree(
            "T",
            vec![
                BranchSpec::scalar("n", ScalarType::U8),
                BranchSpec::jagged("v", ScalarType::F32).counter("n"),
            ],
        )
        .unwrap();
    tree.fill(0, 2u8).unwrap();
    tree.fill_array(1, &[1.0f32]).unwrap();
    let err = tree.commit().unwrap_err().to_string();
    assert!(err.contains("counter"), "{err}");
    drop(tree);
    // The tree was never finished: finishing the file is refused and nothing appears.
    assert!(file.finish().is_err());
    assert!(!path.exists());
}

#[test]
fn dropped_writer_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.evtc");
    {
        let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
        let mut tree = file
            .tree("T", vec![BranchSpec::scalar("x", ScalarType::I64)])
            .unwrap();
        tree.fill_column(0, &(0..100_000i64).collect::<Vec<_>>())
            .unwrap();
        tree.commit().unwrap();
    }
    assert!(!path.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "temporary file left behind"
    );
    assert!(
        FileWriter::create(
            dir.path().join("missing/dir/t.evtc"),
            WriteOptions::default()
        )
        .is_err()
    );
}

/// zstd:3 in RAC units of 256 bytes and baskets of 4 KiB: many baskets and units from little data.
fn small_rac_units() -> WriteOptions {
    WriteOptions::default()
        .codec(Codec::zstd(3).unwrap())
        .basket_size(4096)
        .rac(RacMode::On)
        .rac_unit_bytes(256)
}

/// A cursor's first read in a RAC unit undoes the preconditioner for that entry's values only, a
/// second read in the unit undoes the rest: every order of reads must give a full read's values,
/// for each preconditioner, with counters read from RAC units too.
#[test]
fn rac_cursors_read_one_entry_then_the_rest_of_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let entries = 1500u32;
    let counts: Vec<u32> = (0..entries).map(|e| (e * 13 + e / 7) % 6).collect();
    let total = counts.iter().sum::<u32>();
    // Values with every bit of the mantissa in use, so that a misplaced bit shows.
    let values: Vec<f32> = (0..total)
        .map(|i| f32::from_bits(0x3f80_0000 | (i.wrapping_mul(2_654_435_761) >> 9)))
        .collect();
    let xyz: Vec<i16> = (0..entries as i16 * 3)
        .map(|i| i.wrapping_mul(-977))
        .collect();
    let constructors: [fn(Width) -> Precondition; 5] = [
        |_| Precondition::None,
        Precondition::Shuffle,
        Precondition::BitShuffle,
        Precondition::ZigzagShuffle,
        Precondition::Delta,
    ];
    for make in constructors {
        let path = dir.path().join(format!("{}.evtc", make(Width::W4)));
        let mut file = FileWriter::create(&path, small_rac_units()).unwrap();
        let mut tree = file
            .tree(
                "T",
                vec![
                    BranchSpec::scalar("n", ScalarType::U32).precondition(make(Width::W4)),
                    BranchSpec::jagged("v", ScalarType::F32)
                        .counter("n")
                        .precondition(make(Width::W4)),
                    BranchSpec::jagged("w", ScalarType::F32)
                        .boundaries(Boundaries::Counts)
                        .precondition(make(Width::W4)),
                    BranchSpec::fixed("xyz", ScalarType::I16, 3).precondition(make(Width::W2)),
                ],
            )
            .unwrap();
        tree.fill_column(0, &counts).unwrap();
        tree.fill_jagged(1, &counts, &values).unwrap();
        tree.fill_jagged(2, &counts, &values).unwrap();
        tree.fill_column(3, &xyz).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();

        // Seeded jumps (mostly a new unit each), pairs of neighbours (the second read finishes
        // the unit), then every entry backwards.
        let mut x = 0x9e37_79b9_u64;
        let mut jumps = Vec::new();
        for _ in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let e = x % u64::from(entries);
            jumps.extend([e, e, (e + 1).min(u64::from(entries) - 1), e]);
        }
        let order: Vec<u64> = jumps
            .into_iter()
            .chain((0..u64::from(entries)).rev())
            .collect();
        let offsets: Vec<usize> = std::iter::once(0)
            .chain(counts.iter().scan(0, |sum, &c| {
                *sum += c as usize;
                Some(*sum)
            }))
            .collect();
        // Positional reads (the unit's bytes kept in the cursor) and a memory map (lent again
        // when the unit is finished).
        // SAFETY: nothing truncates or writes the file while it is open.
        let mapped = unsafe { ReadOptions::default().memory_map(true) };
        let (plain, mapped) = (
            FileReader::open(&path).unwrap(),
            FileReader::open_with(&path, mapped).unwrap(),
        );
        let (plain, mapped) = (plain.tree("T").unwrap(), mapped.tree("T").unwrap());
        for (tree, name) in [(&plain, "v"), (&plain, "w"), (&mapped, "v"), (&mapped, "w")] {
            let branch = tree.branch(name).unwrap();
            assert!(branch.meta().rac, "{name}");
            let mut cursor = branch.cursor::<f32>().unwrap();
            for &e in &order {
                let e = e as usize;
                assert_eq!(
                    cursor.get(e as u64).unwrap(),
                    &values[offsets[e]..offsets[e + 1]],
                    "{} {name} entry {e}",
                    make(Width::W4)
                );
            }
        }
        let mut n = plain.branch("n").unwrap().cursor::<u32>().unwrap();
        let mut xyz_cursor = plain.branch("xyz").unwrap().cursor::<i16>().unwrap();
        for &e in &order {
            let e = e as usize;
            assert_eq!(n.get(e as u64).unwrap(), &counts[e..e + 1], "n entry {e}");
            assert_eq!(
                xyz_cursor.get(e as u64).unwrap(),
                &xyz[e * 3..e * 3 + 3],
                "xyz entry {e}"
            );
        }
    }
}

/// A file's bytes, counting the positional reads made of them (none lent in place).
struct CountedReads {
    bytes: Vec<u8>,
    reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl ReadAt for CountedReads {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.bytes.read_exact_at(offset, buf)
    }
}

/// A cursor made for one read finds the seek table of a RAC basket that another cursor of the
/// file has read: it reads the unit it needs and nothing else, and gives the same values.
#[test]
fn fresh_cursors_share_the_files_seek_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.evtc");
    let values: Vec<f32> = (0..4000u32)
        .map(|i| f32::from_bits(0x3f80_0000 | (i.wrapping_mul(2_654_435_761) >> 9)))
        .collect();
    let mut file = FileWriter::create(&path, small_rac_units()).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::fixed("v", ScalarType::F32, 4)])
        .unwrap();
    tree.fill_column(0, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let source = CountedReads {
        bytes: std::fs::read(&path).unwrap(),
        reads: reads.clone(),
    };
    let reads = || reads.load(std::sync::atomic::Ordering::Relaxed);
    let file = FileReader::from_source(source, ReadOptions::default()).unwrap();
    let tree = file.tree("T").unwrap();
    let branch = tree.branch("v").unwrap();
    assert!(branch.meta().rac);
    let index = branch.baskets().unwrap();
    assert!(index.baskets.len() > 2, "{} baskets", index.baskets.len());
    let read_with_fresh_cursor = |entry: u64| {
        let before = reads();
        let got = branch.cursor::<f32>().unwrap().get(entry).unwrap().to_vec();
        let e = entry as usize;
        assert_eq!(got, &values[e * 4..e * 4 + 4], "entry {entry}");
        reads() - before
    };
    // The file's first read also reads the branch's dictionary. Then the first read of a basket
    // reads its record's head, its seek table and a unit; a later cursor in the same basket
    // (another unit, then the same one) reads the unit only.
    read_with_fresh_cursor(0);
    let basket = index.baskets[1];
    let (first, last) = (basket.first_entry, basket.first_entry + basket.entries - 1);
    assert_eq!(read_with_fresh_cursor(first), 3);
    assert_eq!(read_with_fresh_cursor(last), 1);
    assert_eq!(read_with_fresh_cursor(first), 1);
    // Another basket's table is its own.
    assert_eq!(read_with_fresh_cursor(index.baskets[2].first_entry), 3);
}

/// Range reads of RAC branches decode only the units of baskets they cover in part; every range
/// must still give exactly the values of a full read.
#[test]
fn rac_range_reads_match_full_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rac.evtc");
    let options = small_rac_units();
    let mut file = FileWriter::create(&path, options).unwrap();
    let mut tree = file
        .tree(
            "T",
            vec![
                BranchSpec::scalar("n", ScalarType::U32),
                BranchSpec::jagged("v", ScalarType::F32).counter("n"),
                BranchSpec::fixed("xyz", ScalarType::I16, 3),
                BranchSpec::jagged("c", ScalarType::U8).boundaries(Boundaries::Counts),
            ],
        )
        .unwrap();
    let entries = 3000u32;
    let counts: Vec<u32> = (0..entries).map(|e| (e * 7) % 5).collect();
    let values: Vec<f32> = (0..counts.iter().sum::<u32>())
        .map(|i| i as f32 * 0.5)
        .collect();
    let xyz: Vec<i16> = (0..entries as i16 * 3).collect();
    let bytes: Vec<u8> = (0..counts.iter().sum::<u32>())
        .map(|i| (i % 251) as u8)
        .collect();
    tree.fill_column(0, &counts).unwrap();
    tree.fill_jagged(1, &counts, &values).unwrap();
    tree.fill_column(2, &xyz).unwrap();
    tree.fill_jagged(3, &counts, &bytes).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let v = tree.branch("v").unwrap();
    let xyz_branch = tree.branch("xyz").unwrap();
    let c = tree.branch("c").unwrap();
    assert!(v.meta().rac && v.baskets().unwrap().baskets.len() > 3);
    let all_v = v.read_jagged::<f32>().unwrap();
    assert_eq!(v.decode_all().unwrap(), all_v.values.len() as u64);
    assert_eq!(xyz_branch.decode_all().unwrap(), xyz.len() as u64);
    let all_c = c.read_jagged::<u8>().unwrap();
    for (a, b) in [
        (0, 1),
        (17, 18),
        (5, 2999),
        (1234, 2222),
        (2999, 3000),
        (400, 400),
    ] {
        let part = v.read_jagged_range::<f32>(a..b).unwrap();
        for (i, e) in (a..b).enumerate() {
            assert_eq!(
                part.entry(i),
                all_v.entry(e as usize),
                "v entry {e} of {a}..{b}"
            );
        }
        let part = c.read_jagged_range::<u8>(a..b).unwrap();
        for (i, e) in (a..b).enumerate() {
            assert_eq!(
                part.entry(i),
                all_c.entry(e as usize),
                "c entry {e} of {a}..{b}"
            );
        }
        let part = xyz_branch.read_range::<i16>(a..b).unwrap();
        assert_eq!(part, xyz[a as usize * 3..b as usize * 3], "xyz {a}..{b}");
    }
}

/// A memory-mapped file reads RAC entries and whole baskets from the map itself
/// ([`ReadAt::bytes_at`]) and equals the positional reads, corrupt bytes included; an empty or cut
/// file mapped is refused as the unmapped one is.
#[test]
fn mapped_files_read_as_positional_reads_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapped.evtc");
    let options = small_rac_units();
    let mut file = FileWriter::create(&path, options).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::jagged("v", ScalarType::F32)])
        .unwrap();
    let counts: Vec<u32> = (0..2000u32).map(|e| (e * 7) % 5).collect();
    let values: Vec<f32> = (0..counts.iter().sum::<u32>())
        .map(|i| i as f32 * 0.25)
        .collect();
    tree.fill_jagged(0, &counts, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let source = LocalFile::open(&path).unwrap();
    assert!(!source.is_mapped() && source.bytes_at(0, 4).is_none());
    // SAFETY: nothing truncates or writes these files while they are open.
    let mapped = unsafe { LocalFile::open_mapped(&path) }.unwrap();
    assert!(mapped.is_mapped());
    assert_eq!(mapped.bytes_at(0, 4), Some(&b"EVTC"[..]));
    assert_eq!(mapped.bytes_at(mapped.len() - 2, 4), None, "past the end");
    let plain = FileReader::open(&path).unwrap();
    // SAFETY: as above.
    let options = unsafe { ReadOptions::default().memory_map(true) };
    let file = FileReader::open_with(&path, options.clone()).unwrap();
    let (plain, tree) = (plain.tree("T").unwrap(), file.tree("T").unwrap());
    let branch = tree.branch("v").unwrap();
    assert!(branch.meta().rac);
    let all = plain.branch("v").unwrap().read_jagged::<f32>().unwrap();
    assert_eq!(branch.read_jagged::<f32>().unwrap(), all);
    let mut cursor = branch.cursor::<f32>().unwrap();
    for e in (0..2000).rev().step_by(7).chain(0..2000) {
        assert_eq!(cursor.get(e as u64).unwrap(), all.entry(e), "entry {e}");
    }

    // Baskets of blocks (no RAC) are checked and decoded where the map holds them; a flipped
    // byte in one is the same checksum error either way.
    let blocks = dir.path().join("blocks.evtc");
    let mut file = FileWriter::create(&blocks, WriteOptions::default()).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::scalar("x", ScalarType::I32)])
        .unwrap();
    let xs: Vec<i32> = (0..50_000).map(|i| (i * 37) % 1001).collect();
    tree.fill_column(0, &xs).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let read = |path: &std::path::Path, options: &ReadOptions| {
        let file = FileReader::open_with(path, options.clone()).unwrap();
        let branch = file.tree("T").unwrap().branch("x").unwrap();
        let loc = branch.baskets().unwrap().baskets[0];
        let mut out = Vec::new();
        (branch.read_into::<i32>(&mut out).map(|()| out), loc)
    };
    let (values, loc) = read(&blocks, &options);
    assert_eq!(values.unwrap(), xs);
    let mut bytes = std::fs::read(&blocks).unwrap();
    bytes[(loc.offset + loc.record_len / 2) as usize] ^= 0x10;
    let flipped = dir.path().join("flipped.evtc");
    std::fs::write(&flipped, &bytes).unwrap();
    for options in [ReadOptions::default(), options.clone()] {
        let err = read(&flipped, &options).0.unwrap_err().to_string();
        assert!(
            err.contains("checksum") && err.contains("basket 0"),
            "{err}"
        );
    }

    for len in [0, 20] {
        let cut = dir.path().join(format!("cut-{len}.evtc"));
        std::fs::write(&cut, &std::fs::read(&path).unwrap()[..len]).unwrap();
        let err = FileReader::open_with(&cut, options.clone()).unwrap_err();
        assert!(
            err.to_string().contains("too short for an evtc file"),
            "{err}"
        );
    }
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

/// Consecutive range reads (as `iterate` makes them) read what one whole read does, with and
/// without the cache of baskets used in part; the cache is what the second step reads: after the
/// first step, the basket it ended inside is overwritten on disk, and only a reader that kept it
/// reads on.
#[test]
fn consecutive_range_reads_reuse_the_basket_they_split() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.evtc");
    let options = WriteOptions::default()
        .basket_size(8 << 10)
        .cluster_size(ClusterSize::Entries(100_000));
    let mut file = FileWriter::create(&path, options).unwrap();
    let specs = vec![
        BranchSpec::scalar("n", ScalarType::U32),
        BranchSpec::jagged("v", ScalarType::F32).counter("n"),
        BranchSpec::jagged("c", ScalarType::I16).boundaries(Boundaries::Counts),
        BranchSpec::scalar("flag", ScalarType::Bool),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    let counts: Vec<u32> = (0..20_000u32).map(|e| e % 4).collect();
    let total: u32 = counts.iter().sum();
    let v: Vec<f32> = (0..total).map(|i| i as f32 * 0.5).collect();
    let c: Vec<i16> = (0..total).map(|i| (i % 1000) as i16 - 500).collect();
    let flag: Vec<bool> = (0..20_000u32).map(|e| e % 3 == 0).collect();
    tree.fill_column(0, &counts).unwrap();
    tree.fill_jagged(1, &counts, &v).unwrap();
    tree.fill_jagged(2, &counts, &c).unwrap();
    tree.fill_column(3, &flag).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let step = 1_234u64;
    let read_steps = |reader: &FileReader| -> (Vec<u32>, Jagged<f32>, Jagged<i16>) {
        let tree = reader.tree("T").unwrap();
        let (mut n, mut v, mut c) = (Vec::new(), Vec::new(), Vec::new());
        let (mut vo, mut co) = (vec![0u64], vec![0u64]);
        for at in (0..20_000).step_by(step as usize) {
            let range = at..(at + step).min(20_000);
            n.extend(
                tree.branch("n")
                    .unwrap()
                    .read_range::<u32>(range.clone())
                    .unwrap(),
            );
            let part = tree
                .branch("v")
                .unwrap()
                .read_jagged_range::<f32>(range.clone());
            let part = part.unwrap();
            let base = *vo.last().unwrap();
            vo.extend(part.offsets[1..].iter().map(|o| o + base));
            v.extend(part.values);
            let part = tree
                .branch("c")
                .unwrap()
                .read_jagged_range::<i16>(range)
                .unwrap();
            let base = *co.last().unwrap();
            co.extend(part.offsets[1..].iter().map(|o| o + base));
            c.extend(part.values);
        }
        let v = Jagged {
            offsets: vo.into(),
            values: v,
        };
        let c = Jagged {
            offsets: co.into(),
            values: c,
        };
        (n, v, c)
    };
    for cache in [0, evtc_format::DEFAULT_BASKET_CACHE_BYTES] {
        let reader = FileReader::open_with(&path, ReadOptions::default().basket_cache_bytes(cache));
        let reader = reader.unwrap();
        let tree = reader.tree("T").unwrap();
        let (n, vj, cj) = read_steps(&reader);
        assert_eq!(n, counts, "cache {cache}");
        assert_eq!(vj, tree.branch("v").unwrap().read_jagged::<f32>().unwrap());
        assert_eq!(cj, tree.branch("c").unwrap().read_jagged::<i16>().unwrap());
        assert_eq!(&vj.values, &v);
    }

    // The first step ends inside a basket of each branch; overwrite that basket on disk.
    let n0 = counts[..step as usize].iter().sum::<u32>() as usize;
    let n1 = counts[..2 * step as usize].iter().sum::<u32>() as usize;
    let (from, to) = (step as usize, 2 * step as usize);
    let read_v = |b: &BranchReader<'_, LocalFile>, r| Ok(b.read_jagged_range::<f32>(r)?.values);
    read_past_an_overwritten_split(&path, "v", step, read_v, &v[n0..n1]);
    let read_c = |b: &BranchReader<'_, LocalFile>, r| Ok(b.read_jagged_range::<i16>(r)?.values);
    read_past_an_overwritten_split(&path, "c", step, read_c, &c[n0..n1]);
    let read_n = |b: &BranchReader<'_, LocalFile>, r| b.read_range::<u32>(r);
    read_past_an_overwritten_split(&path, "n", step, read_n, &counts[from..to]);
    let read_flag = |b: &BranchReader<'_, LocalFile>, r| b.read_range::<bool>(r);
    read_past_an_overwritten_split(&path, "flag", step, read_flag, &flag[from..to]);
}

/// Reads entries `0..step` of branch `name` from a copy of the file at `path`, overwrites the
/// basket that the step ends inside, and reads `step..2 * step` with `read`: with the basket
/// cache the basket kept by the first step gives `expected`; without it the read fails.
fn read_past_an_overwritten_split<X: PartialEq + std::fmt::Debug>(
    path: &std::path::Path,
    name: &str,
    step: u64,
    read: impl Fn(&BranchReader<'_, LocalFile>, std::ops::Range<u64>) -> evtc_format::Result<Vec<X>>,
    expected: &[X],
) {
    for cache in [0, evtc_format::DEFAULT_BASKET_CACHE_BYTES] {
        let copy = path.with_file_name(format!("{name}-{cache}.evtc"));
        std::fs::copy(path, &copy).unwrap();
        let reader = FileReader::open_with(&copy, ReadOptions::default().basket_cache_bytes(cache));
        let reader = reader.unwrap();
        let tree = reader.tree("T").unwrap();
        let branch = tree.branch(name).unwrap();
        let index = branch.baskets().unwrap();
        let split = *index
            .baskets
            .iter()
            .find(|b| b.first_entry < step && step < b.first_entry + b.entries)
            .expect("a basket split by the first step");
        read(&branch, 0..step).unwrap();
        let mut bytes = std::fs::read(&copy).unwrap();
        // The record's body: past its header, short of its end (whatever the trailer holds).
        let body = split.offset as usize + evtc_format::layout::RECORD_HEADER_LEN
            ..(split.offset + split.record_len) as usize - 8;
        for b in &mut bytes[body] {
            *b ^= 0x5a;
        }
        std::fs::write(&copy, &bytes).unwrap();
        let second = read(&branch, step..2 * step);
        if cache == 0 {
            assert!(
                second.is_err(),
                "{name}: without the cache the overwritten basket is read"
            );
        } else {
            assert_eq!(&second.unwrap()[..], expected, "{name}");
        }
    }
}

/// Outputs of several MiB (which the reader asks Linux to back with huge pages) read back exactly,
/// into fresh buffers and into reused ones, jagged and fixed.
#[test]
fn large_outputs_read_back_fresh_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.evtc");
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let specs = vec![
        BranchSpec::scalar("x", ScalarType::F64),
        BranchSpec::jagged("v", ScalarType::U32),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    let entries = 1_500_000u32;
    let x: Vec<f64> = (0..entries).map(|e| f64::from(e).sqrt()).collect();
    let counts: Vec<u32> = (0..entries).map(|e| e % 3).collect();
    let v: Vec<u32> = (0..counts.iter().sum::<u32>())
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    tree.fill_column(0, &x).unwrap();
    tree.fill_jagged(1, &counts, &v).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let (xs, vs) = (tree.branch("x").unwrap(), tree.branch("v").unwrap());
    assert!(xs.baskets().unwrap().baskets.len() > 1, "several baskets");
    let mut reused: Vec<f64> = Vec::new();
    let mut jagged = Jagged::default();
    for _ in 0..2 {
        assert_eq!(xs.read::<f64>().unwrap(), x);
        xs.read_into(&mut reused).unwrap();
        assert_eq!(reused, x);
        let fresh = vs.read_jagged::<u32>().unwrap();
        assert_eq!(fresh.values, v);
        vs.read_jagged_into(&mut jagged).unwrap();
        assert_eq!(jagged, fresh);
    }
    assert_eq!(jagged.entry(5), &v[4..6]);
}

/// Float branches left to the writer keep the preconditioner that makes the first basket smallest
/// (of every candidate; in RAC units of the two shuffles, `bitplanes` and `runs`): within 1% of
/// the best explicit choice, and their values read back.
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
                    .rac(rac);
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
                // constant planes, and run-length encoding where the values come in runs (the
                // packing ones win near-ties of 1%).
                let runs = write(Some(Precondition::Runs(Width::W4)));
                let bitplanes = write(Some(Precondition::BitPlanes(Width::W4)));
                let best = shuffle.min(bitshuffle).min(runs).min(bitplanes);
                assert!(
                    [shuffle, bitshuffle, runs, bitplanes].contains(&auto)
                        && auto.0 * 100 <= best.0 * 101,
                    "{name} {codec} {rac:?}: auto {auto:?}, best {best:?}"
                );
                if name == "jets" {
                    // NanoAOD's rounded mantissas leave bit-planes of zeros.
                    assert_eq!(auto, bitplanes, "{name} {codec}: rounded floats");
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
