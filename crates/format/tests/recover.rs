//! Recovery of files whose tail was lost, and checksums that cover every byte they claim to.

use std::path::Path;

use evtc_format::{
    BranchSpec, ClusterSize, FileReader, FileWriter, LocalFile, RacMode, ScalarType, WriteOptions,
    recover, scan_records,
};

const ENTRIES: u32 = 4000;

/// A two-tree file with scalar, counter-bounded, RAC, fixed and string branches, in clusters of
/// 400 entries and small baskets (several per cluster).
fn write(path: &Path, threads: usize) {
    let options = WriteOptions::default()
        .codec("zstd:3".parse().expect("codec"))
        .cluster_size(ClusterSize::Entries(400))
        .basket_size(2048)
        .threads(threads)
        .sync(false);
    let mut file = FileWriter::create(path, options).expect("create");
    let mut tree = file
        .tree(
            "Events",
            vec![
                BranchSpec::scalar("run", ScalarType::U32),
                BranchSpec::scalar("nJet", ScalarType::U32),
                BranchSpec::jagged("Jet_pt", ScalarType::F32).counter("nJet"),
                BranchSpec::jagged("Jet_eta", ScalarType::F32)
                    .counter("nJet")
                    .rac(RacMode::On),
                BranchSpec::fixed("pos", ScalarType::F64, 3),
                BranchSpec::utf8("tag"),
            ],
        )
        .expect("tree");
    for e in 0..ENTRIES {
        let jets: Vec<f32> = (0..e % 5).map(|j| e as f32 * 0.5 + j as f32).collect();
        tree.fill(0, e / 100).expect("fill");
        tree.fill(1, jets.len() as u32).expect("fill");
        tree.fill_array(2, &jets).expect("fill");
        tree.fill_array(3, &jets).expect("fill");
        tree.fill_array(4, &[f64::from(e), -1.0, 2.5])
            .expect("fill");
        tree.fill_str(5, &format!("event-{e}")).expect("fill");
        tree.end_entry().expect("end");
    }
    tree.finish().expect("finish tree");
    let mut tree = file
        .tree("Runs", vec![BranchSpec::scalar("run", ScalarType::U32)])
        .expect("tree");
    tree.fill_column(0, &(0..40u32).collect::<Vec<_>>())
        .expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish tree");
    file.finish().expect("finish");
}

/// For a file cut at `len` bytes: the entries of each tree that recovery must restore (the
/// largest entry count at which every branch's baskets end, all of them within the cut).
fn expected_entries(full: &FileReader, len: u64) -> Vec<u64> {
    full.trees()
        .iter()
        .map(|tree| {
            let reader = full.tree(&tree.name).expect("tree");
            let ends: Vec<Vec<(u64, bool)>> = tree
                .branches
                .iter()
                .map(|b| {
                    let index = reader
                        .branch(&b.name)
                        .expect("branch")
                        .baskets()
                        .expect("index");
                    index
                        .baskets
                        .iter()
                        .map(|l| (l.first_entry + l.entries, l.offset + l.record_len <= len))
                        .collect()
                })
                .collect();
            ends[0]
                .iter()
                .map(|&(e, _)| e)
                .filter(|&e| {
                    ends.iter().all(|branch| {
                        branch.iter().any(|&(end, _)| end == e)
                            && branch
                                .iter()
                                .filter(|&&(end, _)| end <= e)
                                .all(|&(_, ok)| ok)
                    })
                })
                .max()
                .unwrap_or(0)
        })
        .collect()
}

fn same_values(full: &FileReader, restored: &FileReader, tree: &str, entries: u64) {
    let (a, b) = (
        full.tree(tree).expect("tree"),
        restored.tree(tree).expect("tree"),
    );
    assert_eq!(b.entries(), entries, "{tree}");
    for meta in a.branches() {
        let (x, y) = (
            a.branch(&meta.name).expect("branch"),
            b.branch(&meta.name).expect("branch"),
        );
        let range = 0..entries;
        match meta.dtype.scalar() {
            ScalarType::U32 => assert_eq!(
                x.read_range::<u32>(range.clone()).expect("read"),
                y.read::<u32>().expect("read"),
                "{tree}/{}",
                meta.name
            ),
            ScalarType::F64 => assert_eq!(
                x.read_range::<f64>(range.clone()).expect("read"),
                y.read::<f64>().expect("read"),
            ),
            ScalarType::F32 => {
                let (jx, jy) = (
                    x.read_jagged_range::<f32>(range.clone()).expect("read"),
                    y.read_jagged::<f32>().expect("read"),
                );
                assert_eq!(
                    (jx.offsets, jx.values),
                    (jy.offsets, jy.values),
                    "{}",
                    meta.name
                );
            }
            ScalarType::U8 => {
                let (jx, jy) = (
                    x.read_jagged_range::<u8>(range.clone()).expect("read"),
                    y.read_jagged::<u8>().expect("read"),
                );
                assert_eq!(
                    (jx.offsets, jx.values),
                    (jy.offsets, jy.values),
                    "{}",
                    meta.name
                );
            }
            other => panic!("unexpected type {other:?}"),
        }
    }
}

#[test]
fn recovery_restores_every_complete_cluster_at_every_cut() {
    let dir = tempfile::tempdir().expect("tempdir");
    for threads in [1, 2] {
        let path = dir.path().join(format!("full-{threads}.evtc"));
        write(&path, threads);
        let bytes = std::fs::read(&path).expect("read");
        let full = FileReader::open(&path).expect("open");
        let len = bytes.len() as u64;
        // Every 257th byte and the first and last bytes of every basket record.
        let mut cuts: Vec<u64> = (16..len).step_by(257).collect();
        for tree in full.trees() {
            let reader = full.tree(&tree.name).expect("tree");
            for b in &tree.branches {
                for l in &reader
                    .branch(&b.name)
                    .expect("branch")
                    .baskets()
                    .expect("index")
                    .baskets
                {
                    cuts.extend([
                        l.offset,
                        l.offset + l.record_len - 1,
                        l.offset + l.record_len,
                    ]);
                }
            }
        }
        cuts.push(len);
        cuts.sort_unstable();
        cuts.dedup();
        let mut restored_some = 0;
        for cut in cuts {
            let damaged = dir.path().join("damaged.evtc");
            let out = dir.path().join("restored.evtc");
            std::fs::write(&damaged, &bytes[..cut as usize]).expect("write");
            let report = recover(&damaged, &out, true).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            let restored = FileReader::open(&out).unwrap_or_else(|e| panic!("cut {cut}: {e}"));
            let want = expected_entries(&full, cut);
            for (tree, &entries) in full.trees().iter().zip(&want) {
                let got = report.trees.iter().find(|t| t.name == tree.name);
                match got {
                    Some(t) => {
                        assert_eq!(t.entries, entries, "cut {cut}, tree {}", tree.name);
                        same_values(&full, &restored, &tree.name, entries);
                        for b in restored.tree(&tree.name).expect("tree").branches() {
                            let branch = restored.tree(&tree.name).expect("tree");
                            branch
                                .branch(&b.name)
                                .expect("b")
                                .decode_all()
                                .expect("decodes");
                        }
                    }
                    None => assert_eq!(entries, 0, "cut {cut}: tree {} missing", tree.name),
                }
            }
            restored_some += usize::from(want[0] > 0);
            // The footer record ends where the 32-byte trailer starts.
            assert_eq!(report.had_footer, cut >= len - 32, "cut {cut}");
        }
        assert!(restored_some > 20, "{restored_some}");
    }
}

#[test]
fn a_flip_in_any_checksummed_byte_is_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("small.evtc");
    let options = WriteOptions::default()
        .cluster_size(ClusterSize::Entries(50))
        .sync(false);
    let mut file = FileWriter::create(&path, options).expect("create");
    let mut tree = file
        .tree(
            "T",
            vec![
                BranchSpec::scalar("n", ScalarType::U32),
                BranchSpec::jagged("x", ScalarType::F32)
                    .counter("n")
                    .rac(RacMode::On),
            ],
        )
        .expect("tree");
    tree.fill_column(0, &(0..200u32).map(|i| i % 3).collect::<Vec<_>>())
        .expect("fill");
    let counts: Vec<u32> = (0..200u32).map(|i| i % 3).collect();
    let values: Vec<f32> = (0..counts.iter().sum::<u32>()).map(|v| v as f32).collect();
    tree.fill_jagged(1, &counts, &values).expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    file.finish().expect("finish");
    let bytes = std::fs::read(&path).expect("read");
    let sound = |data: &[u8]| -> bool {
        let flipped = dir.path().join("flipped.evtc");
        std::fs::write(&flipped, data).expect("write");
        let Ok(scan) = LocalFile::open(&flipped)
            .map_err(|_| ())
            .and_then(|f| scan_records(&f).map_err(|_| ()))
        else {
            return false;
        };
        scan.stopped.is_none()
            && scan.end == scan.file_len - 32
            && FileReader::open(&flipped).is_ok()
    };
    assert!(sound(&bytes));
    // Bytes 10..16 of the file header (minor version, flags) are the only ones no checksum
    // covers: readers accept newer minor versions and ignore unknown flags.
    for at in (0..bytes.len()).filter(|at| !(10..16).contains(at)) {
        let mut data = bytes.clone();
        data[at] ^= 0x10;
        assert!(
            !sound(&data),
            "a flip at byte {at} of {} went unnoticed",
            bytes.len()
        );
    }
}
