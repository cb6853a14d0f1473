//! `ReadOptions::threads`: one thread reads on the calling thread; N threads use a pool of N.
//!
//! This file holds one test so that no other test of the same binary starts threads while it
//! counts the process's threads.
#![cfg(target_os = "linux")]

use evtc_format::{
    BranchSpec, ClusterSize, FileReader, FileWriter, ReadOptions, ScalarType, WriteOptions,
};

/// The number of threads of this process.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn reads_use_the_threads_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.evtc");
    let options = WriteOptions::default()
        .basket_size(4096)
        .cluster_size(ClusterSize::Entries(10_000))
        .threads(1);
    let mut file = FileWriter::create(&path, options).unwrap();
    let mut tree = file
        .tree("Events", vec![BranchSpec::scalar("x", ScalarType::F64)])
        .unwrap();
    let values: Vec<f64> = (0..100_000).map(f64::from).collect();
    tree.fill_column(0, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let before = threads();
    let reader = FileReader::open_with(&path, ReadOptions::default().threads(1)).unwrap();
    let x = reader.tree("Events").unwrap().branch("x").unwrap();
    assert!(
        x.baskets().unwrap().baskets.len() > 10,
        "a read of many baskets"
    );
    assert_eq!(x.read::<f64>().unwrap(), values);
    assert_eq!(threads(), before, "threads(1) started a thread");
    drop(reader);

    let reader = FileReader::open_with(&path, ReadOptions::default().threads(3)).unwrap();
    let x = reader.tree("Events").unwrap().branch("x").unwrap();
    assert_eq!(x.read::<f64>().unwrap(), values);
    assert_eq!(
        threads(),
        before + 3,
        "threads(3) is a pool of 3, and only that"
    );
}
