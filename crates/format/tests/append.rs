//! Updating files in place: entries appended to a tree and branches added to it read as if
//! written at once, the bytes already there are never rewritten, an update that stops leaves
//! the file's last version readable, and a second writer is refused.

mod common;

use std::path::Path;

use common::{fill_input, same_values, verifies, write_input};
use evtc_codecs::Codec;
use evtc_format::{
    BranchSpec, EXT_INDEX_SEGMENTS, Error, FileReader, FileWriter, RacMode, ScalarType,
    WriteOptions, layout::TRAILER_LEN, scan_records,
};

fn small(options: WriteOptions) -> WriteOptions {
    options
        .basket_size(4 << 10)
        .cluster_size("1000".parse().expect("entries"))
}

/// Appends the test data's entries `first..first + n` to `path`.
fn append(path: &Path, first: u64, n: u64, options: &WriteOptions) {
    let mut file = FileWriter::append(path, options.clone()).expect("append");
    let mut tree = file.extend("Events").expect("extend");
    fill_input(&mut tree, first, n, false);
    tree.finish().expect("finish tree");
    file.finish().expect("finish file");
}

#[test]
fn appended_entries_follow_the_old_ones_for_every_codec_and_rac_setting() {
    for codec in ["zstd:5", "lz4", "lzma:6", "zlib:6", "none"] {
        for rac in [RacMode::Off, RacMode::On] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f.evtc");
            let options = small(
                WriteOptions::default()
                    .codec(codec.parse::<Codec>().unwrap())
                    .rac(rac),
            );
            write_input(&path, 0, 3000, options.clone(), false);
            let before = std::fs::read(&path).unwrap();
            append(&path, 3000, 5000, &options);
            let middle = std::fs::read(&path).unwrap();
            append(&path, 8000, 2000, &options);
            let after = std::fs::read(&path).unwrap();
            // Nothing already in the file is rewritten.
            assert!(middle.starts_with(&before), "{codec} {rac:?}");
            assert!(after.starts_with(&middle), "{codec} {rac:?}");
            verifies(&path);
            same_values(&path, 10_000);
            let file = FileReader::open(&path).unwrap();
            let tree = file.tree("Events").unwrap();
            // The first cluster's size is kept.
            let ends = &tree.meta().cluster_ends;
            assert_eq!(ends[..4], [1000, 2000, 3000, 4000], "{codec} {rac:?}");
            // Branches keep their layout (and dictionary) for the entries appended.
            let first = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(first.path(), &before).unwrap();
            let first = FileReader::open(first.path()).unwrap();
            for (b, was) in tree.branches().iter().zip(first.trees()[0].branches.iter()) {
                assert_eq!(
                    (b.rac, b.codec, b.dictionary_offset),
                    (was.rac, was.codec, was.dictionary_offset),
                    "{}",
                    b.name
                );
                assert_eq!(b.entries, 10_000);
            }
        }
    }
}

#[test]
fn added_branches_read_as_the_tree_s_own_with_its_clusters() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    let options = small(WriteOptions::default());
    write_input(&path, 0, 2500, options.clone(), false);
    let before = std::fs::read(&path).unwrap();
    let mut file = FileWriter::append(&path, WriteOptions::default().rac(RacMode::On)).unwrap();
    let mut tree = file
        .add_branches(
            "Events",
            vec![
                BranchSpec::scalar("score", ScalarType::F32),
                BranchSpec::scalar("nJet", ScalarType::U16),
                BranchSpec::jagged("Jet_pt", ScalarType::F64).counter("nJet"),
            ],
        )
        .unwrap();
    // In three batches that do not follow the clusters.
    for (first, n) in [(0u64, 700u64), (700, 1500), (2200, 300)] {
        let score: Vec<f32> = (first..first + n).map(|e| e as f32 / 4.0).collect();
        let counts: Vec<u16> = (first..first + n).map(|e| (e % 3) as u16).collect();
        let pt: Vec<f64> = (first..first + n)
            .flat_map(|e| (0..e % 3).map(move |k| (e * 10 + k) as f64))
            .collect();
        tree.fill_column(0, &score).unwrap();
        tree.fill_column(1, &counts).unwrap();
        let counts32: Vec<u32> = counts.iter().map(|&c| u32::from(c)).collect();
        tree.fill_jagged(2, &counts32, &pt).unwrap();
        tree.commit().unwrap();
    }
    tree.finish().unwrap();
    file.finish().unwrap();
    assert!(std::fs::read(&path).unwrap().starts_with(&before));
    verifies(&path);
    same_values(&path, 2500);
    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("Events").unwrap();
    let names: Vec<&str> = tree.branches().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "run", "nMuon", "Muon_pt", "tag", "p", "score", "nJet", "Jet_pt"
        ]
    );
    let score = tree.branch("score").unwrap().read::<f32>().unwrap();
    assert!(score.iter().enumerate().all(|(e, &s)| s == e as f32 / 4.0));
    let pt = tree.branch("Jet_pt").unwrap().read_jagged::<f64>().unwrap();
    for e in 0..2500usize {
        let want: Vec<f64> = (0..e % 3).map(|k| (e * 10 + k) as f64).collect();
        assert_eq!(
            pt.values[pt.offsets[e] as usize..pt.offsets[e + 1] as usize],
            want[..]
        );
    }
    assert!(tree.branch("score").unwrap().meta().rac);
    // Entries appended afterwards need the added branches too.
    let options = small(WriteOptions::default());
    let mut file = FileWriter::append(&path, options).unwrap();
    let mut tree = file.extend("Events").unwrap();
    assert_eq!(tree.branch_id("Jet_pt").unwrap(), 7);
    tree.fill_column(0, &[1u32]).unwrap();
    let error = tree.commit().unwrap_err();
    assert!(error.to_string().contains("received 0 entries"), "{error}");
}

#[test]
fn added_branches_must_cover_the_tree_and_not_clash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    write_input(&path, 0, 100, small(WriteOptions::default()), false);
    let before = std::fs::read(&path).unwrap();
    let mut file = FileWriter::append(&path, WriteOptions::default()).unwrap();
    let error = file
        .add_branches("Events", vec![BranchSpec::scalar("run", ScalarType::U8)])
        .unwrap_err();
    assert!(
        error.to_string().contains("has a branch \"run\""),
        "{error}"
    );
    let error = file
        .add_branches(
            "Events",
            vec![BranchSpec::jagged("Muon_eta", ScalarType::F32).counter("nMuon")],
        )
        .unwrap_err();
    assert!(error.to_string().contains("counter \"nMuon\""), "{error}");
    let error = file.extend("Nope").unwrap_err();
    assert!(matches!(error, Error::NoSuchTree { .. }), "{error}");
    // Too many entries, then too few.
    let mut tree = file
        .add_branches("Events", vec![BranchSpec::scalar("x", ScalarType::U8)])
        .unwrap();
    tree.fill_column(0, &[1u8; 101]).unwrap();
    let error = tree.commit().unwrap_err();
    assert!(
        error.to_string().contains("the tree has 100 entries"),
        "{error}"
    );
    drop(tree);
    drop(file);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let mut file = FileWriter::append(&path, WriteOptions::default()).unwrap();
    let mut tree = file
        .add_branches("Events", vec![BranchSpec::scalar("x", ScalarType::U8)])
        .unwrap();
    tree.fill_column(0, &[1u8; 99]).unwrap();
    tree.commit().unwrap();
    let error = tree.finish().unwrap_err();
    assert!(
        error.to_string().contains("the tree has 100 entries"),
        "{error}"
    );
    drop(file);
    // An abandoned update leaves the file as it was.
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_second_writer_is_refused_while_readers_read_the_old_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    let options = small(WriteOptions::default());
    write_input(&path, 0, 1000, options.clone(), false);
    let mut file = FileWriter::append(&path, options.clone()).unwrap();
    let error = FileWriter::append(&path, options.clone()).unwrap_err();
    assert!(matches!(error, Error::Busy { .. }), "{error}");
    assert!(error.to_string().contains("another writer"), "{error}");
    let mut tree = file.extend("Events").unwrap();
    fill_input(&mut tree, 1000, 3000, false);
    tree.finish().unwrap();
    // Written, not yet finished: readers see the old version.
    same_values(&path, 1000);
    file.finish().unwrap();
    same_values(&path, 4000);
    // The lock went with the writer.
    drop(FileWriter::append(&path, options).unwrap());
}

#[test]
fn an_interrupted_append_leaves_the_last_version_at_every_length() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    let options = small(WriteOptions::default());
    write_input(&path, 0, 1000, options.clone(), false);
    let old = std::fs::read(&path).unwrap();
    append(&path, 1000, 2000, &options);
    let new = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.evtc");
    let step = ((new.len() - old.len()) / 97).max(1);
    for len in (old.len()..new.len()).step_by(step).chain([new.len() - 1]) {
        std::fs::write(&cut, &new[..len]).unwrap();
        let file = FileReader::open(&cut).unwrap_or_else(|e| panic!("length {len}: {e}"));
        assert_eq!(file.trees()[0].entries, 1000, "length {len}");
        assert_eq!(file.committed_len(), old.len() as u64);
        // The next append cuts the interrupted one's bytes off and goes on from there.
        if len == old.len() + step * 40 {
            append(&cut, 1000, 2000, &options);
            assert_eq!(std::fs::read(&cut).unwrap(), new);
        }
    }
    // Recovery of an interrupted append is its last version.
    std::fs::write(&cut, &new[..new.len() - 5]).unwrap();
    let out = dir.path().join("recovered.evtc");
    let recovery = evtc_format::recover(&cut, &out, false).unwrap();
    assert_eq!(recovery.trees[0].entries, 1000);
    same_values(&out, 1000);
}

#[test]
fn appends_past_the_copy_interval_leave_trailer_copies_that_readers_find() {
    // 80 MB of incompressible values: at least one copy of the base trailer among them.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    let options = WriteOptions::default().codec("none".parse::<Codec>().unwrap());
    let mut file = FileWriter::create(&path, options.clone()).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::scalar("x", ScalarType::U64)])
        .unwrap();
    tree.fill_column(0, &[7u64; 1000]).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let old_len = std::fs::metadata(&path).unwrap().len();
    let mut file = FileWriter::append(&path, options).unwrap();
    let mut tree = file.extend("T").unwrap();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let values: Vec<u64> = (0..10_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    tree.fill_column(0, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let new = std::fs::read(&path).unwrap();
    let copies = new
        .windows(TRAILER_LEN as usize)
        .filter(|w| w[24..] == *b"EVTCTAIL")
        .count();
    assert!(copies >= 3, "{copies} trailers"); // the base's, a copy, the new one
    let scan = scan_records(&evtc_format::LocalFile::open(&path).unwrap()).unwrap();
    assert!(scan.stopped.is_none(), "{:?}", scan.stopped);
    assert_eq!(scan.end, new.len() as u64 - TRAILER_LEN);
    // Cut just before the end: the base version, found through the last copy.
    let cut = dir.path().join("cut.evtc");
    std::fs::write(&cut, &new[..new.len() - 100]).unwrap();
    let file = FileReader::open(&cut).unwrap();
    assert_eq!(file.trees()[0].entries, 1000);
    assert_eq!(file.committed_len(), old_len);
    let file = FileReader::open(&path).unwrap();
    let read = file
        .tree("T")
        .unwrap()
        .branch("x")
        .unwrap()
        .read::<u64>()
        .unwrap();
    assert_eq!(read[1000..], values[..]);
}

#[test]
fn many_appends_keep_few_index_parts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    let options = small(WriteOptions::default());
    write_input(&path, 0, 10, options.clone(), false);
    for i in 1..200u64 {
        append(&path, i * 10, 10, &options);
    }
    same_values(&path, 2000);
    verifies(&path);
    let file = FileReader::open(&path).unwrap();
    for b in file.trees()[0].branches.iter() {
        let parts = b.index_segments().unwrap();
        assert!(parts.len() <= 8, "{}: {} parts", b.name, parts.len());
        assert_eq!(
            b.extensions
                .iter()
                .filter(|e| e.key == EXT_INDEX_SEGMENTS)
                .count(),
            usize::from(!parts.is_empty())
        );
        assert_eq!(b.baskets, 200);
    }
}

#[test]
fn an_event_index_takes_the_appended_entries_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    let specs = vec![
        BranchSpec::scalar("run", ScalarType::U32),
        BranchSpec::scalar("event", ScalarType::U64),
    ];
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let mut tree = file.tree("Events", specs).unwrap();
    tree.index_by("run", "event").unwrap();
    tree.fill_column(0, &[1u32, 1, 2]).unwrap();
    tree.fill_column(1, &[30u64, 10, 20]).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let mut file = FileWriter::append(&path, WriteOptions::default()).unwrap();
    let mut tree = file.extend("Events").unwrap();
    tree.fill_column(0, &[1u32, 0]).unwrap();
    tree.fill_column(1, &[20u64, 5]).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("Events").unwrap();
    let index = tree.event_index().unwrap().expect("an index");
    assert_eq!(index.rows(), 5);
    assert_eq!(index.entry_of(1, 20).unwrap(), 3);
    assert_eq!(index.entry_of(1, 30).unwrap(), 0);
    let rows: Vec<u64> = index.rows_in_order().unwrap().iter().map(|r| r.2).collect();
    assert_eq!(rows, [4, 1, 3, 0, 2]);
}

#[test]
fn friend_trees_read_as_the_trees_own_and_must_be_as_long() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.evtc");
    write_input(&events, 0, 1500, small(WriteOptions::default()), false);
    let scores = dir.path().join("scores.evtc");
    let short = dir.path().join("short.evtc");
    for (path, n) in [(&scores, 1500u64), (&short, 10)] {
        let mut file = FileWriter::create(path, WriteOptions::default()).unwrap();
        let mut tree = file
            .tree(
                "Scores",
                vec![
                    BranchSpec::scalar("score", ScalarType::F64),
                    BranchSpec::scalar("run", ScalarType::U8),
                ],
            )
            .unwrap();
        let score: Vec<f64> = (0..n).map(|e| e as f64 * 0.5).collect();
        tree.fill_column(0, &score).unwrap();
        tree.fill_column(1, &vec![9u8; n as usize]).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();
    }
    let (e, s, k) = (
        FileReader::open(&events).unwrap(),
        FileReader::open(&scores).unwrap(),
        FileReader::open(&short).unwrap(),
    );
    let tree =
        evtc_format::FriendTrees::new(e.tree("Events").unwrap(), vec![s.tree("Scores").unwrap()])
            .unwrap();
    assert_eq!(tree.entries(), 1500);
    let score = tree.branch("score").unwrap().read::<f64>().unwrap();
    assert_eq!(score[1499], 749.5);
    // The tree's own branch wins over a friend's of the same name.
    assert_eq!(tree.branch("run").unwrap().read::<u32>().unwrap()[1200], 1);
    let names: Vec<&str> = tree.branches().iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["run", "nMuon", "Muon_pt", "tag", "p", "score"]);
    assert!(matches!(
        tree.branch("nope").unwrap_err(),
        Error::NoSuchBranch { .. }
    ));
    let error =
        evtc_format::FriendTrees::new(e.tree("Events").unwrap(), vec![k.tree("Scores").unwrap()])
            .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("it has 1500 entries, its friend \"Scores\" of"),
        "{error}"
    );
    assert!(error.to_string().contains("short.evtc 10"), "{error}");
}

#[test]
fn an_interrupted_add_branches_leaves_the_tree_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.evtc");
    write_input(&path, 0, 3000, small(WriteOptions::default()), false);
    let old = std::fs::read(&path).unwrap();
    let mut file = FileWriter::append(&path, WriteOptions::default().rac(RacMode::On)).unwrap();
    let mut tree = file
        .add_branches("Events", vec![BranchSpec::scalar("score", ScalarType::F64)])
        .unwrap();
    let score: Vec<f64> = (0..3000).map(|e| f64::from(e) / 3.0).collect();
    tree.fill_column(0, &score).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let new = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.evtc");
    for len in (old.len()..new.len()).step_by(((new.len() - old.len()) / 61).max(1)) {
        std::fs::write(&cut, &new[..len]).unwrap();
        let file = FileReader::open(&cut).unwrap_or_else(|e| panic!("length {len}: {e}"));
        let branches = &file.trees()[0].branches;
        assert_eq!(branches.len(), 5, "length {len}");
        same_values(&cut, 3000);
    }
    let file = FileReader::open(&path).unwrap();
    let read = file
        .tree("Events")
        .unwrap()
        .branch("score")
        .unwrap()
        .read::<f64>()
        .unwrap();
    assert_eq!(read, score);
}
