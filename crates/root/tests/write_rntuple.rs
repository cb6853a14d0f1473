//! RNTuples written by `NtupleWriter` read back by the crate's own RNTuple reader (written from
//! the specification independently of the writer), field by field and value by value: every
//! kind, every codec, several clusters, pages cut within a cluster. ROOT and uproot reading the
//! same files is tested in the Python tests (`python/tests/test_root_output.py`).

mod common;

use common::random::{Rng, append, data};
use evtc_codecs::Codec;
use evtc_root::{
    ColumnData, ColumnKind, FloatStorage, NtupleField, NtupleOptions, NtupleWriter, RootFile,
    RootWriter, ScalarType, Values,
};

fn fields(codec: Codec) -> Vec<(NtupleField, Vec<usize>)> {
    let mut out = Vec::new();
    for t in ScalarType::ALL {
        out.push(ColumnKind::Scalar(t));
        out.push(ColumnKind::Fixed(t, 3));
        out.push(ColumnKind::Jagged(t));
    }
    out.extend([
        ColumnKind::Nested(ScalarType::F32, 2),
        ColumnKind::Nested(ScalarType::I32, 3),
        ColumnKind::String,
        ColumnKind::Strings(1),
        ColumnKind::Strings(2),
    ]);
    let mut fields: Vec<(NtupleField, Vec<usize>)> = out
        .into_iter()
        .enumerate()
        .map(|(i, kind)| {
            let mut f = NtupleField::new(format!("f{i}"), kind, codec);
            f.rvec = i % 2 == 0;
            (f, Vec::new())
        })
        .collect();
    let mut matrix = NtupleField::new("matrix", ColumnKind::Fixed(ScalarType::F64, 6), codec);
    matrix.dims = vec![2, 3];
    fields.push((matrix, vec![2, 3]));
    fields
}

fn write_and_read(codec: Codec, page_bytes: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("out.root");
    let mut rng = Rng(0x1234_5678 ^ page_bytes as u64);
    let specs = fields(codec);
    let mut all: Vec<ColumnData> = specs.iter().map(|(f, _)| ColumnData::new(f.kind)).collect();
    {
        let out = std::fs::File::create(&path).expect("create");
        let mut file = RootWriter::new(out, "out.root", codec).expect("file");
        let options = NtupleOptions {
            page_bytes,
            ..NtupleOptions::default()
        };
        let fields: Vec<NtupleField> = specs.iter().map(|(f, _)| f.clone()).collect();
        let mut ntuple = NtupleWriter::new(&mut file, "Events", fields, options).expect("writer");
        for entries in [700, 1, 0, 1300] {
            let cluster: Vec<ColumnData> = specs
                .iter()
                .map(|(f, dims)| data(f.kind, dims, entries, &mut rng))
                .collect();
            if entries == 0 {
                continue;
            }
            for (a, c) in all.iter_mut().zip(&cluster) {
                append(a, c);
            }
            ntuple.write_cluster(&mut file, &cluster).expect("cluster");
        }
        let summary = ntuple.finish(&mut file).expect("finish");
        assert_eq!((summary.entries, summary.clusters), (2001, 3));
        file.finish().expect("file finish");
    }
    let file = RootFile::open(&path).expect("the reader opens it");
    let tree = file.tree("Events").expect("the RNTuple");
    assert_eq!(tree.entries, 2001);
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    for ((spec, _), want) in specs.iter().zip(&all) {
        let column = tree
            .column(&spec.name)
            .unwrap_or_else(|| panic!("{}: no column", spec.name));
        assert_eq!(column.kind, spec.kind, "{}", spec.name);
        let got = file.read_column(column, 0..2001).expect(&spec.name);
        assert!(
            got == *want,
            "{codec} {}: the values read back differ",
            spec.name
        );
        // A range that starts inside a cluster.
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
        write_and_read(spec.parse().expect("codec"), 1 << 20);
    }
}

#[test]
fn pages_cut_within_clusters_read_back() {
    write_and_read(Codec::DEFAULT, 64);
}

#[test]
fn reduced_floats_read_back_as_the_reader_decodes_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("floats.root");
    let values: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin() * 2.5).collect();
    let mut rounded = values.clone();
    evtc_codecs::round_mantissas_f32(&mut rounded, 10);
    {
        let out = std::fs::File::create(&path).expect("create");
        let mut file = RootWriter::new(out, "floats.root", Codec::DEFAULT).expect("file");
        let mut trunc =
            NtupleField::new("trunc", ColumnKind::Scalar(ScalarType::F32), Codec::DEFAULT);
        trunc.floats = FloatStorage::Truncated { mantissa_bits: 10 };
        let mut quant =
            NtupleField::new("quant", ColumnKind::Scalar(ScalarType::F32), Codec::DEFAULT);
        quant.floats = FloatStorage::Quantized {
            min: -2.5,
            max: 2.5,
            bits: 16,
        };
        let mut ntuple =
            NtupleWriter::new(&mut file, "T", vec![trunc, quant], NtupleOptions::default())
                .expect("writer");
        let column = |v: Vec<f32>| ColumnData {
            values: Values::F32(v),
            offsets: Vec::new(),
            levels: Vec::new(),
        };
        ntuple
            .write_cluster(
                &mut file,
                &[column(rounded.clone()), column(values.clone())],
            )
            .expect("cluster");
        ntuple.finish(&mut file).expect("finish");
        file.finish().expect("finish");
    }
    let file = RootFile::open(&path).expect("open");
    let tree = file.tree("T").expect("tree");
    let trunc = file
        .read_column(tree.column("trunc").expect("trunc"), 0..1000)
        .expect("read");
    assert_eq!(trunc.values, Values::F32(rounded));
    let quant = file
        .read_column(tree.column("quant").expect("quant"), 0..1000)
        .expect("read");
    let step = 5.0 / 65535.0;
    match quant.values {
        Values::F64(v) => {
            for (q, x) in v.iter().zip(&values) {
                assert!((q - f64::from(*x)).abs() <= step / 2.0 + 1e-7, "{q} {x}");
            }
        }
        Values::F32(v) => {
            for (q, x) in v.iter().zip(&values) {
                assert!(
                    (f64::from(*q) - f64::from(*x)).abs() <= step / 2.0 + 1e-6,
                    "{q} {x}"
                );
            }
        }
        other => panic!("quantized floats read as {other:?}"),
    }
}

#[test]
fn batches_fill_pages_across_appends_and_clusters_end_by_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("batches.root");
    let mut rng = Rng(0xba7c4e5);
    let specs = fields(Codec::DEFAULT);
    let mut all: Vec<ColumnData> = specs.iter().map(|(f, _)| ColumnData::new(f.kind)).collect();
    let summary = {
        let out = std::fs::File::create(&path).expect("create");
        let mut file = RootWriter::new(out, "batches.root", Codec::DEFAULT).expect("file");
        let options = NtupleOptions {
            page_bytes: 256,
            cluster_bytes: 20_000,
            ..NtupleOptions::default()
        };
        let fields: Vec<NtupleField> = specs.iter().map(|(f, _)| f.clone()).collect();
        let mut ntuple = NtupleWriter::new(&mut file, "Events", fields, options).expect("writer");
        for batch in 0..150 {
            let cluster: Vec<ColumnData> = specs
                .iter()
                .map(|(f, dims)| data(f.kind, dims, batch % 13, &mut rng))
                .collect();
            for (a, c) in all.iter_mut().zip(&cluster) {
                append(a, c);
            }
            ntuple.append(&mut file, &cluster).expect("append");
        }
        let summary = ntuple.finish(&mut file).expect("finish");
        file.finish().expect("file finish");
        summary
    };
    let entries: u64 = (0..150).map(|b| b % 13).sum();
    assert_eq!(summary.entries, entries);
    assert!(
        summary.clusters > 3,
        "{summary:?}: clusters end by their compressed size"
    );
    let file = RootFile::open(&path).expect("the reader opens it");
    let tree = file.tree("Events").expect("the RNTuple");
    let layout = file.ntuple_layout("Events").expect("layout");
    assert_eq!(layout.clusters.len(), summary.clusters);
    for ((spec, _), want) in specs.iter().zip(&all) {
        let column = tree.column(&spec.name).expect("column");
        let got = file.read_column(column, 0..entries).expect(&spec.name);
        assert!(got == *want, "{}: the values read back differ", spec.name);
    }
}
