//! The test data the merge and skim tests share, and what `evtc verify --deep` checks.
#![allow(dead_code)]

use std::path::Path;

use evtc_format::{
    BranchSpec, FileReader, FileWriter, LocalFile, ScalarType, TreeWriter, WriteOptions,
    scan_records,
};

/// Entry `e`'s muon count.
pub fn muons(e: u64) -> u32 {
    (e % 4) as u32
}

/// Writes `entries` entries starting at entry `first` of the test data: `run`, `nMuon`,
/// `Muon_pt` (counted by `nMuon`), `tag` (bytes), `p` (3 doubles), plus `extra` when asked.
pub fn write_input(path: &Path, first: u64, entries: u64, options: WriteOptions, extra: bool) {
    let mut specs = vec![
        BranchSpec::scalar("run", ScalarType::U32),
        BranchSpec::scalar("nMuon", ScalarType::U32),
        BranchSpec::jagged("Muon_pt", ScalarType::F32).counter("nMuon"),
        BranchSpec::bytes("tag"),
        BranchSpec::fixed("p", ScalarType::F64, 3),
    ];
    if extra {
        specs.push(BranchSpec::scalar("extra", ScalarType::I16));
    }
    let mut file = FileWriter::create(path, options).expect("create");
    let mut tree = file.tree("Events", specs).expect("tree");
    fill_input(&mut tree, first, entries, extra);
    tree.finish().expect("finish");
    file.finish().expect("finish file");
}

/// Fills and commits entries `first..first + entries` of the test data into `tree` (written by
/// [`write_input`], or appended to).
pub fn fill_input(tree: &mut TreeWriter<'_>, first: u64, entries: u64, extra: bool) {
    let range = first..first + entries;
    let run: Vec<u32> = range.clone().map(|e| (e / 1000) as u32).collect();
    let n: Vec<u32> = range.clone().map(muons).collect();
    let pt: Vec<f32> = range
        .clone()
        .flat_map(|e| (0..muons(e)).map(move |k| e as f32 * 0.5 + k as f32))
        .collect();
    let p: Vec<f64> = range
        .clone()
        .flat_map(|e| [e as f64, -(e as f64), 0.25])
        .collect();
    tree.fill_column(0, &run).expect("run");
    tree.fill_column(1, &n).expect("nMuon");
    tree.fill_jagged(2, &n, &pt).expect("pt");
    let tags: Vec<u32> = range.clone().map(|e| (e % 3) as u32).collect();
    let bytes: Vec<u8> = range
        .clone()
        .flat_map(|e| std::iter::repeat_n(b'a' + (e % 26) as u8, (e % 3) as usize))
        .collect();
    tree.fill_jagged(3, &tags, &bytes).expect("tag");
    tree.fill_column(4, &p).expect("p");
    if extra {
        let x: Vec<i16> = range.clone().map(|e| e as i16).collect();
        tree.fill_column(5, &x).expect("extra");
    }
    tree.commit().expect("commit");
}

/// The file holds the test data's entries 0..n, branch by branch.
pub fn same_values(path: &Path, n: u64) {
    let file = FileReader::open(path).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert_eq!(tree.entries(), n);
    let run = tree.branch("run").unwrap().read::<u32>().unwrap();
    assert!(run.iter().enumerate().all(|(e, &r)| r == (e / 1000) as u32));
    let pt = tree
        .branch("Muon_pt")
        .unwrap()
        .read_jagged::<f32>()
        .unwrap();
    for e in 0..n {
        let (a, b) = (
            pt.offsets[e as usize] as usize,
            pt.offsets[e as usize + 1] as usize,
        );
        let want: Vec<f32> = (0..muons(e)).map(|k| e as f32 * 0.5 + k as f32).collect();
        assert_eq!(pt.values[a..b], want[..], "entry {e}");
    }
    let tag = tree.branch("tag").unwrap().read_jagged::<u8>().unwrap();
    assert_eq!(tag.offsets.len() as u64, n + 1);
    for e in 0..n as usize {
        let want = std::iter::repeat_n(b'a' + (e % 26) as u8, e % 3);
        assert!(
            tag.values[tag.offsets[e] as usize..tag.offsets[e + 1] as usize]
                .iter()
                .copied()
                .eq(want),
            "tag {e}"
        );
    }
    let p = tree.branch("p").unwrap().read::<f64>().unwrap();
    for e in 0..n as usize {
        assert_eq!(p[3 * e..3 * e + 3], [e as f64, -(e as f64), 0.25], "p {e}");
    }
}

/// What `evtc verify --deep` checks: every record's checksums, every basket decoded.
pub fn verifies(path: &Path) {
    let scan = scan_records(&LocalFile::open(path).expect("open")).expect("scan");
    assert!(scan.stopped.is_none(), "{:?}", scan.stopped);
    let file = FileReader::open(path).expect("open");
    for meta in file.trees() {
        let tree = file.tree(&meta.name).unwrap();
        for b in &meta.branches {
            let branch = tree.branch(&b.name).unwrap();
            branch.check_baskets().unwrap();
            branch.decode_all().unwrap();
        }
    }
}
