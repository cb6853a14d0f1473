//! RNTuples written by `NtupleWriter` read back by the crate's own RNTuple reader (written from
//! the specification independently of the writer), field by field and value by value: every
//! kind, every codec, several clusters, pages cut within a cluster. ROOT and uproot reading the
//! same files is tested in the Python tests (`python/tests/test_root_output.py`).

use evtc_codecs::Codec;
use evtc_root::{
    ColumnData, ColumnKind, FloatStorage, NtupleField, NtupleOptions, NtupleWriter, RootFile,
    RootWriter, ScalarType, Values,
};

/// A small xorshift generator: the data depends on nothing outside the test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `entries` entries of a field of `kind`: random values, list lengths 0-4.
fn data(kind: ColumnKind, dims: &[usize], entries: usize, rng: &mut Rng) -> ColumnData {
    let mut d = ColumnData::new(kind);
    let mut value = |d: &mut ColumnData, rng: &mut Rng| {
        let r = rng.next();
        match &mut d.values {
            Values::Bool(v) => v.push(r & 1 == 1),
            Values::I8(v) => v.push(r as i8),
            Values::U8(v) => v.push(b'a' + (r % 26) as u8),
            Values::I16(v) => v.push(r as i16),
            Values::U16(v) => v.push(r as u16),
            Values::I32(v) => v.push((r as i32) >> (r % 31)),
            Values::U32(v) => v.push((r as u32) >> (r % 31)),
            Values::I64(v) => v.push(r as i64 >> (r % 63)),
            Values::U64(v) => v.push(r >> (r % 63)),
            Values::F32(v) => v.push((r % 100_000) as f32 / 7.0 - 5000.0),
            Values::F64(v) => v.push((r % 1_000_000) as f64 / 3.0 - 1e5),
        }
    };
    for _ in 0..entries {
        match kind {
            ColumnKind::Scalar(_) => value(&mut d, rng),
            ColumnKind::Fixed(_, n) => {
                let per = if dims.len() >= 2 {
                    dims.iter().product()
                } else {
                    n
                };
                for _ in 0..per {
                    value(&mut d, rng);
                }
            }
            _ => {
                // Lists of lists: each level's items are lists of the level below.
                fn fill(
                    d: &mut ColumnData,
                    level: usize,
                    rng: &mut Rng,
                    value: &mut dyn FnMut(&mut ColumnData, &mut Rng),
                ) {
                    for _ in 0..rng.below(5) {
                        if level == 0 {
                            value(d, rng);
                        } else {
                            fill(d, level - 1, rng, value);
                            let end = match level.checked_sub(2) {
                                None => d.values.len(),
                                Some(below) => d.levels[below].len() - 1,
                            };
                            d.levels[level - 1].push(end as u64);
                        }
                    }
                }
                let levels = d.levels.len();
                fill(&mut d, levels, rng, &mut value);
                let end = match levels.checked_sub(1) {
                    None => d.values.len(),
                    Some(below) => d.levels[below].len() - 1,
                };
                d.offsets.push(end as u64);
            }
        }
    }
    d
}

/// Appends `more` (whose boundaries start at 0) to `all`.
fn append(all: &mut ColumnData, more: &ColumnData) {
    fn shifted(all: &mut Vec<u64>, more: &[u64]) {
        let base = all.last().copied().unwrap_or(0);
        all.extend(more.iter().skip(1).map(|&b| b + base));
    }
    let values = all.values.len();
    evtc_root::with_values!(&mut all.values, v => {
        if let Some(more) = crate_values(&more.values, v) { v.extend_from_slice(more) }
    });
    let _ = values;
    for (a, m) in all.levels.iter_mut().zip(&more.levels) {
        shifted(a, m);
    }
    if !all.offsets.is_empty() {
        shifted(&mut all.offsets, &more.offsets);
    }
}

/// `values` as the same element type as `like`'s vector, if it is of that type.
fn crate_values<'a, T: 'static>(values: &'a Values, _like: &Vec<T>) -> Option<&'a [T]> {
    let any: &dyn std::any::Any = match values {
        Values::Bool(v) => v,
        Values::I8(v) => v,
        Values::U8(v) => v,
        Values::I16(v) => v,
        Values::U16(v) => v,
        Values::I32(v) => v,
        Values::U32(v) => v,
        Values::I64(v) => v,
        Values::U64(v) => v,
        Values::F32(v) => v,
        Values::F64(v) => v,
    };
    any.downcast_ref::<Vec<T>>().map(Vec::as_slice)
}

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
