//! TTrees written by `TTreeWriter` read back by the crate's own TTree reader, branch by branch
//! and value by value: every kind, every codec, several clusters, baskets cut within a
//! cluster, leaf-count arrays, an event index. ROOT and uproot reading the same files is tested
//! in the Python tests (`python/tests/test_root_output.py`).

mod common;

use common::random::{Rng, append, data};
use evtc_codecs::Codec;
use evtc_root::{
    ColumnData, ColumnKind, RootFile, RootWriter, ScalarType, TTreeOptions, TTreeWriter,
    TreeBranch, TreeKind, Values,
};

/// Every kind, each scalar type as a value, a fixed array and a `std::vector`; a 2×3 matrix;
/// NanoAOD-style arrays counted by `nItem` (which comes first); `b22` is the `I64` scalar.
fn branches(codec: Codec) -> Vec<TreeBranch> {
    let mut kinds = vec![ColumnKind::Scalar(ScalarType::I32)];
    for t in ScalarType::ALL {
        kinds.extend([
            ColumnKind::Scalar(t),
            ColumnKind::Fixed(t, 3),
            ColumnKind::Jagged(t),
        ]);
    }
    kinds.extend([
        ColumnKind::Nested(ScalarType::F32, 2),
        ColumnKind::Nested(ScalarType::I32, 3),
        ColumnKind::String,
        ColumnKind::Strings(1),
        ColumnKind::Strings(2),
        ColumnKind::Jagged(ScalarType::F32),
        ColumnKind::Jagged(ScalarType::U8),
    ]);
    let mut out: Vec<TreeBranch> = kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| TreeBranch::new(format!("b{i}"), kind, codec))
        .collect();
    out[0].name = "nItem".into();
    let n = out.len();
    for b in &mut out[n - 2..] {
        b.counter = Some("nItem".into());
    }
    let mut matrix = TreeBranch::new("matrix", ColumnKind::Fixed(ScalarType::F64, 6), codec);
    matrix.dims = vec![2, 3];
    out.push(matrix);
    out
}

/// `entries` entries of every branch; the counted arrays as long as `nItem` says.
fn cluster(specs: &[TreeBranch], entries: usize, rng: &mut Rng) -> Vec<ColumnData> {
    let mut cluster: Vec<ColumnData> = specs
        .iter()
        .map(|b| data(b.kind, &b.dims, entries, rng))
        .collect();
    let lengths: Vec<u64> = (0..entries).map(|_| rng.below(6)).collect();
    cluster[0].values = Values::I32(lengths.iter().map(|&n| n as i32).collect());
    let total = lengths.iter().sum::<u64>() as usize;
    for (b, d) in specs.iter().zip(&mut cluster) {
        if b.counter.is_some() {
            *d = data(ColumnKind::Scalar(b.kind.scalar()), &[], total, rng);
            d.offsets = std::iter::once(0)
                .chain(lengths.iter().scan(0, |end, n| {
                    *end += n;
                    Some(*end)
                }))
                .collect();
        }
    }
    cluster
}

fn write_and_read(codec: Codec, basket_bytes: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("out.root");
    let mut rng = Rng(0x9e37_79b9 ^ basket_bytes as u64);
    let specs = branches(codec);
    let mut all: Vec<ColumnData> = specs.iter().map(|b| ColumnData::new(b.kind)).collect();
    {
        let out = std::fs::File::create(&path).expect("create");
        let mut file = RootWriter::new(out, "out.root", codec).expect("file");
        let options = TTreeOptions {
            basket_bytes,
            ..TTreeOptions::default()
        };
        let mut tree = TTreeWriter::new("Events", specs.clone(), options).expect("writer");
        tree.index_by("b22", "nItem").expect("index");
        for entries in [700, 1, 1300] {
            let cluster = cluster(&specs, entries, &mut rng);
            for (a, c) in all.iter_mut().zip(&cluster) {
                append(a, c);
            }
            tree.write_cluster(&mut file, &cluster).expect("cluster");
        }
        let summary = tree.finish(&mut file).expect("finish");
        assert_eq!(summary.entries, 2001);
        assert!(summary.baskets >= 3 * specs.len());
        file.finish().expect("file finish");
    }
    let file = RootFile::open(&path).expect("the reader opens it");
    let tree = file.tree("Events").expect("the TTree");
    assert_eq!((tree.kind, tree.entries), (TreeKind::TTree, 2001));
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    assert_eq!(tree.index, Some(("b22".to_owned(), "nItem".to_owned())));
    for (spec, want) in specs.iter().zip(&all) {
        let column = tree
            .column(&spec.name)
            .unwrap_or_else(|| panic!("{}: no column", spec.name));
        assert_eq!(column.kind, spec.kind, "{}", spec.name);
        assert_eq!(column.counter, spec.counter, "{}", spec.name);
        assert_eq!(column.dims, spec.dims, "{}", spec.name);
        let got = file.read_column(column, 0..2001).expect(&spec.name);
        assert!(
            got == *want,
            "{codec} {}: the values read back differ",
            spec.name
        );
        // A range that starts inside a cluster and a basket.
        let part = file.read_column(column, 650..750).expect(&spec.name);
        assert_eq!(
            part.offsets.len().max(1) - 1,
            if spec.kind.is_variable() { 100 } else { 0 }
        );
    }
}

#[test]
fn every_kind_reads_back_under_every_codec() {
    for spec in [
        "zstd:5", "lz4", "lz4hc:9", "zlib:6", "lzma:6", "none", "zstd:19",
    ] {
        write_and_read(spec.parse().expect("codec"), 256 << 10);
    }
}

#[test]
fn baskets_cut_within_clusters_read_back() {
    write_and_read(Codec::DEFAULT, 100);
}

#[test]
fn counters_and_names_are_checked() {
    let codec = Codec::DEFAULT;
    let kind = ColumnKind::Jagged(ScalarType::F32);
    let n = TreeBranch::new("n", ColumnKind::Scalar(ScalarType::I32), codec);
    let mut counted = TreeBranch::new("x", kind, codec);
    counted.counter = Some("n".into());
    let options = TTreeOptions::default;
    // The counter after its array, a float counter, two of one name, a name ROOT refuses.
    for (branches, why) in [
        (vec![counted.clone(), n.clone()], "written before"),
        (
            vec![
                TreeBranch::new("n", ColumnKind::Scalar(ScalarType::F32), codec),
                counted.clone(),
            ],
            "integer",
        ),
        (vec![n.clone(), n.clone()], "another branch"),
        (vec![TreeBranch::new("a/b", kind, codec)], "'/'"),
    ] {
        let err = TTreeWriter::new("T", branches, options()).expect_err(why);
        assert!(err.to_string().contains(why), "{err}");
    }
    // A counter that disagrees with its array's lengths.
    let mut file =
        RootWriter::new(std::io::Cursor::new(Vec::new()), "t.root", codec).expect("file");
    let mut tree = TTreeWriter::new("T", vec![n, counted], options()).expect("tree");
    let lengths = ColumnData {
        values: Values::I32(vec![1, 2]),
        offsets: vec![],
        levels: vec![],
    };
    let values = ColumnData {
        values: Values::F32(vec![1.0, 2.0]),
        offsets: vec![0, 1, 2],
        levels: vec![],
    };
    let err = tree
        .write_cluster(&mut file, &[lengths, values])
        .expect_err("disagrees");
    assert!(err.to_string().contains("x"), "{err}");
}
