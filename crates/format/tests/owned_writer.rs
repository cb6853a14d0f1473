//! `FileWriter::into_tree`: a tree writer that owns its file writer (for language bindings).

use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};

#[test]
fn owned_tree_writers_write_trees_one_after_another() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("owned.evtc");
    let file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let mut tree = file
        .into_tree(
            "Events",
            vec![
                BranchSpec::scalar("n", ScalarType::U32),
                BranchSpec::jagged("x", ScalarType::F32).counter("n"),
            ],
        )
        .unwrap();
    tree.fill_column(0, &[2u32, 0, 1]).unwrap();
    tree.fill_jagged(1, &[2, 0, 1], &[1.0f32, 2.0, 3.0])
        .unwrap();
    tree.commit().unwrap();
    tree.fill_column(0, &[1u32]).unwrap();
    tree.fill_jagged(1, &[1], &[4.0f32]).unwrap();
    tree.commit().unwrap();
    let file = tree.finish().unwrap();
    assert!(!path.exists(), "the file appears only when finished");
    let mut runs = file
        .into_tree("Runs", vec![BranchSpec::scalar("run", ScalarType::I64)])
        .unwrap();
    runs.fill(0, 7i64).unwrap();
    runs.end_entry().unwrap();
    runs.finish().unwrap().finish().unwrap();

    let reader = FileReader::open(&path).unwrap();
    let events = reader.tree("Events").unwrap();
    assert_eq!(events.entries(), 4);
    let x = events.branch("x").unwrap().read_jagged::<f32>().unwrap();
    assert_eq!(*x.offsets, [0, 2, 2, 3, 4]);
    assert_eq!(x.values, [1.0, 2.0, 3.0, 4.0]);
    let run = reader.tree("Runs").unwrap().branch("run").unwrap();
    assert_eq!(run.read::<i64>().unwrap(), [7]);
}

#[test]
fn a_failed_owned_tree_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.evtc");
    let file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let spec = vec![BranchSpec::jagged("x", ScalarType::F32).counter("missing")];
    assert!(file.into_tree("Events", spec).is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
