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
            prop_assert_eq!(
                branch.value_count(mid.clone()).unwrap(),
                range.len() as u64,
                "value_count {}",
                name
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
            prop_assert_eq!(
                branch.value_count(mid.clone()).unwrap(),
                offsets[mid.end as usize] - offsets[mid.start as usize],
                "value_count {}",
                name
            );
            prop_assert_eq!(
                branch.value_count(0..entries as u64).unwrap(),
                expected.len() as u64
            );
            let past_the_end = matches!(
                branch.value_count(0..entries as u64 + 1),
                Err(evtc_format::Error::EntryOutOfRange { .. })
            );
            prop_assert!(past_the_end, "value_count past the end {}", name);
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

mod reads;
mod writer;
