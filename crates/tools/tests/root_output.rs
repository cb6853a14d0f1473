//! `RootOutput`, the ROOT file writer from column data: entries given in batches of any size
//! gather into the settings' clusters; rules store each branch; bad data is refused naming the
//! branch; a file not finished leaves nothing.

use std::path::Path;

use evtc_root::{ColumnData, ColumnKind, RootFile, ScalarType, Values};
use evtc_tools::{OutputFormat, RootBranch, RootOutput, Settings};

fn settings(pairs: &[&str]) -> Settings {
    let mut s = Settings {
        sync: false,
        ..Settings::default()
    };
    for p in pairs {
        let (name, value) = p.split_once('=').expect("name=value");
        s.set(name, value).expect("setting");
    }
    s
}

fn branches() -> Vec<RootBranch> {
    let mut pt = RootBranch::new("Muon_pt", ColumnKind::Jagged(ScalarType::F32));
    pt.counter = Some("nMuon".into());
    vec![
        RootBranch::new("event", ColumnKind::Scalar(ScalarType::U64)),
        RootBranch::new("nMuon", ColumnKind::Scalar(ScalarType::I32)),
        pt,
        RootBranch::new("tag", ColumnKind::String),
    ]
}

/// Entries `from..to`: event numbers, `i % 4` muons each, a tag each.
fn batch(from: u64, to: u64) -> Vec<ColumnData> {
    let n: Vec<i32> = (from..to).map(|i| (i % 4) as i32).collect();
    let mut offsets = vec![0u64];
    let mut pt = Vec::new();
    let mut tag_offsets = vec![0u64];
    let mut tags = Vec::new();
    for i in from..to {
        for k in 0..i % 4 {
            pt.push(i as f32 * 0.37 + k as f32);
        }
        offsets.push(pt.len() as u64);
        tags.extend_from_slice(format!("e{i}").as_bytes());
        tag_offsets.push(tags.len() as u64);
    }
    vec![
        ColumnData {
            values: Values::U64((from..to).collect()),
            offsets: vec![],
            levels: vec![],
        },
        ColumnData {
            values: Values::I32(n),
            offsets: vec![],
            levels: vec![],
        },
        ColumnData {
            values: Values::F32(pt),
            offsets,
            levels: vec![],
        },
        ColumnData {
            values: Values::U8(tags),
            offsets: tag_offsets,
            levels: vec![],
        },
    ]
}

fn read(path: &Path, branch: &str, entries: u64) -> ColumnData {
    let file = RootFile::open(path).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert_eq!(tree.entries, entries);
    file.read_column(tree.column(branch).expect("branch"), 0..entries)
        .expect("read")
}

#[test]
fn batches_of_any_size_gather_into_clusters() {
    for format in [OutputFormat::RNTuple, OutputFormat::TTree] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.root");
        let mut out =
            RootOutput::create(&path, format, &settings(&["cluster_size=1000"])).expect("create");
        out.tree("Events", branches()).expect("tree");
        let mut at = 0;
        for size in [1, 0, 999, 1500, 7, 2493] {
            assert_eq!(out.fill(batch(at, at + size)).expect("fill"), size);
            at += size;
        }
        let summary = out.finish().expect("finish");
        assert_eq!(summary.trees[0].entries, 5000);
        let want = batch(0, 5000);
        for (i, name) in ["event", "nMuon", "Muon_pt", "tag"].iter().enumerate() {
            assert_eq!(read(&path, name, 5000), want[i], "{format:?} {name}");
        }
        // Five clusters of 1000 entries (a TTree's baskets end at each).
        let file = RootFile::open(&path).expect("open");
        let starts: Vec<u64> = match format {
            OutputFormat::TTree => {
                let tree = file.tree("Events").expect("tree");
                let column = tree.column("event").expect("event");
                column.baskets().map(|b| b.first_entry).collect()
            }
            _ => {
                let layout = file.ntuple_layout("Events").expect("layout");
                layout.clusters.iter().map(|c| c.first_entry).collect()
            }
        };
        assert_eq!(starts, vec![0, 1000, 2000, 3000, 4000], "{format:?}");
    }
}

#[test]
fn rules_store_each_branch() {
    let dir = tempfile::tempdir().expect("tempdir");
    for format in [OutputFormat::RNTuple, OutputFormat::TTree] {
        let path = dir.path().join(format!("{format}.root"));
        let s = settings(&[
            "codec=zlib:6",
            "branch_codec=Muon_*=lz4",
            "float_quantize=Muon_pt=0:10:8",
        ]);
        let mut out = RootOutput::create(&path, format, &s).expect("create");
        out.tree("Events", branches()).expect("tree");
        out.fill(batch(0, 20)).expect("fill");
        out.finish().expect("finish");
        let Values::F32(pt) = read(&path, "Muon_pt", 20).values else {
            panic!("floats")
        };
        let Values::F32(exact) = &batch(0, 20)[2].values else {
            panic!("floats")
        };
        let step = 10.0 / 255.0;
        for (q, x) in pt.iter().zip(exact) {
            assert!(
                (q - x).abs() <= step / 2.0 + 1e-5,
                "{format:?}: {q} for {x}"
            );
        }
        assert!(
            pt.iter().zip(exact).any(|(q, x)| q != x),
            "{format:?}: not quantized"
        );
        if format == OutputFormat::TTree {
            let file = RootFile::open(&path).expect("open");
            let tree = file.tree("Events").expect("tree");
            assert_eq!(tree.column("Muon_pt").expect("pt").compression, 401);
            assert_eq!(tree.column("event").expect("event").compression, 106);
        }
    }
}

#[test]
fn bad_data_is_refused_naming_the_branch_and_nothing_is_left() {
    for format in [OutputFormat::RNTuple, OutputFormat::TTree] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.root");
        let mut out = RootOutput::create(&path, format, &settings(&[])).expect("create");
        out.tree("Events", branches()).expect("tree");
        // Offsets beyond the values, a wrong type, a missing branch, a short branch.
        let mut past = batch(0, 10);
        past[2].offsets[10] += 1;
        let mut typed = batch(0, 10);
        typed[0].values = Values::I64(vec![0; 10]);
        let mut short = batch(0, 10);
        short[3] = batch(0, 9).remove(3);
        for (data, what) in [
            (past, "\"Muon_pt\""),
            (typed, "\"event\""),
            (batch(0, 10)[..3].to_vec(), "4 branches"),
            (short, "\"tag\""),
        ] {
            let err = out.fill(data).expect_err(what);
            assert!(err.to_string().contains(what), "{format:?}: {err}");
        }
        // A counter that disagrees with its list.
        let mut lying = batch(0, 10);
        lying[1].values = Values::I32(vec![1; 10]);
        let err = out.fill(lying).expect_err("counter");
        assert!(err.to_string().contains("\"nMuon\""), "{format:?}: {err}");
        // Abandoned: nothing is left.
        out.fill(batch(0, 10)).expect("good data");
        drop(out);
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }
}

#[test]
fn an_existing_file_stays_without_overwrite() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("out.root");
    std::fs::write(&path, b"precious").expect("write");
    let err = RootOutput::create(&path, OutputFormat::TTree, &settings(&[])).expect_err("exists");
    assert!(err.to_string().contains("exists"), "{err}");
    let mut out =
        RootOutput::create(&path, OutputFormat::TTree, &settings(&["overwrite=true"])).expect("ok");
    out.tree("Events", branches()).expect("tree");
    assert_eq!(
        std::fs::read(&path).expect("read"),
        b"precious",
        "until finished"
    );
    out.fill(batch(0, 3)).expect("fill");
    out.finish().expect("finish");
    assert_eq!(read(&path, "event", 3).values, Values::U64(vec![0, 1, 2]));
    // Evtc is not a ROOT format; two trees of one name are refused.
    let other = dir.path().join("other.root");
    RootOutput::create(&other, OutputFormat::Evtc, &settings(&[])).expect_err("evtc");
    let mut out = RootOutput::create(&other, OutputFormat::RNTuple, &settings(&[])).expect("ok");
    out.tree("Events", branches()).expect("tree");
    let err = out.tree("Events", branches()).expect_err("twice");
    assert!(err.to_string().contains("already"), "{err}");
}
