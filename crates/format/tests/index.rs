//! Event indexes: written while filling, added to a finished file, kept by merge and skim,
//! looked up across block boundaries, and refused when damaged.

mod common;

use std::path::{Path, PathBuf};

use evtc_format::{
    BranchSpec, Error, FileReader, FileWriter, MergeOptions, ScalarType, SkimOptions,
    TreeSelection, WriteOptions, add_event_index, merge, skim,
};

/// Entry `e`'s run and event: runs of 3,000 entries, event numbers out of entry order, and
/// entries 7,000-16,999 all (3, 5): one key over several index blocks.
fn key(e: u64) -> (i32, u64) {
    if (7_000..17_000).contains(&e) {
        return (3, 5);
    }
    ((e / 3_000) as i32 - 1, (e * 7_919) % 20_011)
}

/// Writes `entries` entries of `run` (i32), `event` (u64) and `x` (f32 = entry), indexed by
/// (run, event) when `indexed`.
fn write(path: &Path, entries: u64, indexed: bool) {
    let mut file = FileWriter::create(path, WriteOptions::default().overwrite(true)).unwrap();
    let mut tree = file
        .tree(
            "Events",
            vec![
                BranchSpec::scalar("run", ScalarType::I32),
                BranchSpec::scalar("event", ScalarType::U64),
                BranchSpec::scalar("x", ScalarType::F32),
            ],
        )
        .unwrap();
    if indexed {
        tree.index_by("run", "event").unwrap();
    }
    for chunk in (0..entries).collect::<Vec<_>>().chunks(4_000) {
        let runs: Vec<i32> = chunk.iter().map(|&e| key(e).0).collect();
        let events: Vec<u64> = chunk.iter().map(|&e| key(e).1).collect();
        let xs: Vec<f32> = chunk.iter().map(|&e| e as f32).collect();
        tree.fill_column(0, &runs).unwrap();
        tree.fill_column(1, &events).unwrap();
        tree.fill_column(2, &xs).unwrap();
        tree.commit().unwrap();
    }
    tree.finish().unwrap();
    file.finish().unwrap();
}

/// Every key's entries as the index gives them equal those of a search of the columns.
fn check_lookups(path: &Path) {
    let file = FileReader::open(path).unwrap();
    let tree = file.tree("Events").unwrap();
    let runs: Vec<i32> = tree.branch("run").unwrap().read().unwrap();
    let events: Vec<u64> = tree.branch("event").unwrap().read().unwrap();
    let index = tree.event_index().unwrap().expect("an index");
    assert_eq!((index.major(), index.minor()), ("run", "event"));
    assert_eq!(index.rows(), tree.entries());
    let mut expected: std::collections::BTreeMap<(i32, u64), Vec<u64>> = Default::default();
    for (e, (&r, &v)) in runs.iter().zip(&events).enumerate() {
        expected.entry((r, v)).or_default().push(e as u64);
    }
    // Every 13th key (a lookup decodes a block: all of them would take long in a debug build).
    for ((r, v), entries) in expected
        .iter()
        .step_by(13)
        .chain(expected.get_key_value(&(3, 5)))
    {
        assert_eq!(
            index.entries_of((*r).into(), (*v).into()).unwrap(),
            *entries,
            "({r}, {v})"
        );
    }
    // Every key at once, out of key order and with repeats (the blocks read once each).
    let mut keys: Vec<(i128, i128)> = expected
        .keys()
        .map(|&(r, v)| (r.into(), v.into()))
        .rev()
        .collect();
    keys.extend_from_within(..100);
    keys.push((9, 9));
    let all = index.entries_of_each(&keys).unwrap();
    for (&(r, v), entries) in keys.iter().zip(&all) {
        let want = expected
            .get(&(r as i32, v as u64))
            .cloned()
            .unwrap_or_default();
        assert_eq!(*entries, want, "({r}, {v})");
    }
    let singles: Vec<(i128, i128)> = keys
        .iter()
        .copied()
        .filter(|&(r, v)| {
            expected
                .get(&(r as i32, v as u64))
                .is_some_and(|e| e.len() == 1)
        })
        .collect();
    let found = index.entry_of_each(&singles).unwrap();
    for (&(r, v), &e) in singles.iter().zip(&found) {
        assert_eq!(vec![e], expected[&(r as i32, v as u64)], "({r}, {v})");
    }
    let rows = index.rows_in_order().unwrap();
    assert_eq!(rows.len() as u64, tree.entries());
    assert!(rows.is_sorted());
}

#[test]
fn an_index_written_while_filling_finds_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("indexed.evtc");
    write(&path, 20_000, true);
    common::verifies(&path);
    check_lookups(&path);
    let file = FileReader::open(&path).unwrap();
    let index = file.tree("Events").unwrap().event_index().unwrap().unwrap();
    // Run -1 (signed keys), a key held once, absent keys, keys outside the types.
    assert_eq!(index.entry_of(-1, key(17).1.into()).unwrap(), 17);
    assert!(index.entries_of(-1, 3).unwrap().is_empty());
    assert!(index.entries_of(1 << 40, 0).unwrap().is_empty());
    assert!(index.entries_of(0, -1).unwrap().is_empty());
    let missing = index.entry_of(9, 9).unwrap_err();
    assert!(matches!(missing, Error::EventNotFound { .. }));
    assert_eq!(
        missing.to_string(),
        "tree \"Events\" has no entry with (run, event) = (9, 9)"
    );
    // Of several keys, the first in the order given that fails is named.
    let first_bad = index
        .entry_of_each(&[(-1, key(17).1.into()), (9, 9), (3, 5)])
        .unwrap_err();
    assert!(
        matches!(first_bad, Error::EventNotFound { .. }),
        "{first_bad}"
    );
    let first_bad = index.entry_of_each(&[(3, 5), (9, 9)]).unwrap_err();
    assert!(
        matches!(first_bad, Error::DuplicateEvent { .. }),
        "{first_bad}"
    );
    let Error::DuplicateEvent { entries, .. } = index.entry_of(3, 5).unwrap_err() else {
        panic!("a duplicate key")
    };
    assert_eq!(entries, (7_000..17_000).collect::<Vec<u64>>());
    assert_eq!(
        index.entry_of(3, 5).unwrap_err().to_string(),
        "(run, event) = (3, 5) is held by 10000 entries of tree \"Events\": 7000, 7001, 7002, \
         7003, 7004, 7005, 7006, 7007, 7008, 7009 and 9990 more"
    );
}

#[test]
fn an_index_added_to_a_file_equals_one_written_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, indexed) = (dir.path().join("plain.evtc"), dir.path().join("i.evtc"));
    write(&plain, 20_000, false);
    write(&indexed, 20_000, true);
    assert!(
        FileReader::open(&plain)
            .unwrap()
            .tree("Events")
            .unwrap()
            .event_index()
            .unwrap()
            .is_none()
    );
    let summary = add_event_index(&plain, Some("Events"), "run", "event").unwrap();
    assert_eq!((summary.rows, summary.duplicate_keys), (20_000, 1));
    common::verifies(&plain);
    check_lookups(&plain);
    let rows = |p: &Path| {
        let file = FileReader::open(p).unwrap();
        let tree = file.tree("Events").unwrap();
        tree.event_index()
            .unwrap()
            .unwrap()
            .rows_in_order()
            .unwrap()
    };
    assert_eq!(rows(&plain), rows(&indexed));
    // Indexing again (by other keys, the tree left to the first) replaces the index; the data
    // reads as before.
    let summary = add_event_index(&plain, None, "event", "run").unwrap();
    assert_eq!(summary.tree, "Events");
    let file = FileReader::open(&plain).unwrap();
    let tree = file.tree("Events").unwrap();
    let index = tree.event_index().unwrap().unwrap();
    assert_eq!((index.major(), index.minor()), ("event", "run"));
    assert_eq!(index.entry_of(key(17).1.into(), -1).unwrap(), 17);
    let x: Vec<f32> = tree.branch("x").unwrap().read().unwrap();
    assert_eq!(x, (0..20_000).map(|e| e as f32).collect::<Vec<_>>());
    common::verifies(&plain);
}

#[test]
fn keys_must_be_integer_scalars_declared_before_filling() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    write(&path, 10, false);
    let err = add_event_index(&path, Some("Events"), "run", "x").unwrap_err();
    assert!(
        err.to_string()
            .contains("\"x\" is f32, not an integer scalar"),
        "{err}"
    );
    let err = add_event_index(&path, Some("Events"), "run", "lumi").unwrap_err();
    assert!(matches!(err, Error::NoSuchBranch { .. }), "{err}");
    let err = add_event_index(&path, Some("Other"), "run", "event").unwrap_err();
    assert!(matches!(err, Error::NoSuchTree { .. }), "{err}");
    let empty = dir.path().join("empty.evtc");
    FileWriter::create(&empty, WriteOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    let err = add_event_index(&empty, None, "run", "event").unwrap_err();
    assert!(err.to_string().contains("holds no trees to index"), "{err}");

    let mut file = FileWriter::create(dir.path().join("g.evtc"), WriteOptions::default()).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::scalar("run", ScalarType::U32)])
        .unwrap();
    tree.fill(0, 1u32).unwrap();
    let err = tree.index_by("run", "run").unwrap_err();
    assert!(
        err.to_string().contains("before any entry is filled"),
        "{err}"
    );
}

fn merged(dir: &Path, inputs: &[PathBuf]) -> (PathBuf, Option<(String, String)>) {
    let out = dir.join("merged.evtc");
    let options = MergeOptions {
        write: WriteOptions::default().overwrite(true),
        ..MergeOptions::default()
    };
    let summary = merge(&out, inputs, &options, &mut |_| {}).unwrap();
    (out, summary.trees[0].event_index.clone())
}

#[test]
fn merge_keeps_an_index_every_input_has() {
    let dir = tempfile::tempdir().unwrap();
    let inputs: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("{i}.evtc")))
        .collect();
    for p in &inputs {
        write(p, 20_000, true);
    }
    let (out, index) = merged(dir.path(), &inputs);
    assert_eq!(index, Some(("run".into(), "event".into())));
    common::verifies(&out);
    check_lookups(&out);
    let file = FileReader::open(&out).unwrap();
    let index = file.tree("Events").unwrap().event_index().unwrap().unwrap();
    assert_eq!(
        index.entries_of(-1, key(17).1.into()).unwrap(),
        [17, 20_017, 40_017]
    );

    write(&inputs[1], 20_000, false);
    let (out, index) = merged(dir.path(), &inputs);
    assert_eq!(index, None);
    let file = FileReader::open(&out).unwrap();
    assert!(
        file.tree("Events")
            .unwrap()
            .event_index()
            .unwrap()
            .is_none()
    );
}

#[test]
fn skim_keeps_the_index_of_the_entries_it_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("in.evtc"), dir.path().join("out.evtc"));
    write(&input, 20_000, true);
    let entries: Vec<u64> = (0..20_000).filter(|e| e % 7 == 3).collect();
    let selection = |branches: Option<Vec<String>>| TreeSelection {
        tree: "Events".into(),
        entries: entries.clone(),
        branches,
    };
    let trees = skim(
        &input,
        &output,
        &[selection(None)],
        &SkimOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(trees[0].event_index, Some(("run".into(), "event".into())));
    common::verifies(&output);
    check_lookups(&output);
    let file = FileReader::open(&output).unwrap();
    let index = file.tree("Events").unwrap().event_index().unwrap().unwrap();
    // Entry 17 of the input is entry 2 of the output (3, 10, 17, ...).
    assert_eq!(index.entry_of(-1, key(17).1.into()).unwrap(), 2);
    drop(file);

    let trees = skim(
        &input,
        &output,
        &[selection(Some(vec!["run".into(), "x".into()]))],
        &SkimOptions {
            write: WriteOptions::default().overwrite(true),
            ..SkimOptions::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(trees[0].event_index, None);
}

/// The offset and length of the index record: the file's only record of kind 6.
fn index_record(path: &Path) -> (u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let at = (0..bytes.len() - 48)
        .find(|&i| &bytes[i..i + 4] == b"EVRC" && bytes[i + 4] == 6)
        .unwrap();
    let len = u64::from_le_bytes(bytes[at + 32..at + 40].try_into().unwrap()) + 48;
    (at as u64, len)
}

#[test]
fn a_damaged_index_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    write(&path, 20_000, true);
    let (at, len) = index_record(&path);
    let pristine = std::fs::read(&path).unwrap();
    // A byte of the directory, then one of the last block.
    for (flip, what) in [
        (at + 48 + 20, "checksum mismatch in event index directory"),
        (at + len - 5, "event index: block 4"),
    ] {
        let mut bytes = pristine.clone();
        bytes[flip as usize] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let file = FileReader::open(&path).unwrap();
        let tree = file.tree("Events").unwrap();
        let err = tree
            .event_index()
            .and_then(|index| index.unwrap().rows_in_order())
            .unwrap_err();
        assert!(err.to_string().contains(what), "{what}: {err}");
        // The branches read as before.
        let x: Vec<f32> = tree.branch("x").unwrap().read().unwrap();
        assert_eq!(x.len(), 20_000);
    }
}
