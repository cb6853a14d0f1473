//! The basket-size limit shared by writers and readers.

use evtc_format::{
    BranchSpec, DEFAULT_MAX_BASKET_BYTES, Error, FileReader, FileWriter, ReadOptions, ScalarType,
    WriteOptions,
};

#[test]
fn writers_refuse_baskets_readers_would_refuse() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("big.evtc");
    let options = WriteOptions::default().basket_size(DEFAULT_MAX_BASKET_BYTES as usize + 1);
    let err = FileWriter::create(&path, options).expect_err("basket size over the limit");
    assert!(matches!(err, Error::BasketTooLarge { .. }), "{err}");
    assert!(err.to_string().contains("max_basket_bytes"), "{err}");
    assert!(!path.exists());

    // One entry larger than the limit fails the write, naming the branch and entries.
    let options = WriteOptions::default()
        .basket_size(500)
        .max_basket_bytes(1000)
        .sync(false);
    let mut file = FileWriter::create(&path, options).expect("create");
    let mut tree = file
        .tree("T", vec![BranchSpec::jagged("x", ScalarType::U8)])
        .expect("tree");
    tree.fill_array(0, &[7u8; 4000]).expect("fill");
    // The basket is written as soon as it is full, or when the tree finishes.
    let err = match tree.end_entry() {
        Err(e) => e,
        Ok(()) => tree.finish().expect_err("a 4 kB basket over a 1 kB limit"),
    };
    assert!(
        err.to_string().contains("branch \"x\", entries 0..1"),
        "{err}"
    );
}

#[test]
fn readers_refuse_baskets_over_their_limit_until_raised() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("f.evtc");
    let mut file = FileWriter::create(&path, WriteOptions::default().sync(false)).expect("create");
    let mut tree = file
        .tree("T", vec![BranchSpec::scalar("x", ScalarType::U64)])
        .expect("tree");
    tree.fill_column(0, &(0..1000u64).collect::<Vec<_>>())
        .expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    file.finish().expect("finish");
    let small =
        FileReader::open_with(&path, ReadOptions::default().max_basket_bytes(4000)).expect("open");
    let err = small
        .tree("T")
        .expect("tree")
        .branch("x")
        .expect("x")
        .read::<u64>();
    let err = err.expect_err("8000 bytes over a 4000-byte limit");
    assert!(
        matches!(
            err,
            Error::BasketTooLarge {
                bytes: 8000,
                limit: 4000,
                ..
            }
        ),
        "{err}"
    );
    let raised =
        FileReader::open_with(&path, ReadOptions::default().max_basket_bytes(8000)).expect("open");
    let x = raised
        .tree("T")
        .expect("tree")
        .branch("x")
        .expect("x")
        .read::<u64>();
    assert_eq!(x.expect("read").len(), 1000);
}
