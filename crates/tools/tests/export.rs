//! Conversions into ROOT files: every ROOT fixture the reader reads (TTrees and RNTuples of
//! every kind), and evtc files made from them, written as RNTuples and as TTrees and read back
//! by `evtc-root`'s reader with the values equal, column by column. ROOT 6.40 and uproot reading
//! the same outputs is tested in `python/tests/test_root_output.py`.

use std::path::{Path, PathBuf};

use evtc_root::{ColumnKind, RootFile};
use evtc_tools::{Error, OutputFormat, Settings, convert};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../root/tests/fixtures")
        .join(name)
}

fn settings(to: Option<OutputFormat>) -> Settings {
    Settings {
        to,
        sync: false,
        skip_unsupported: true,
        ..Settings::default()
    }
}

/// `name` as the writers name it in a ROOT file of `format`.
fn root_name(name: &str, format: OutputFormat) -> String {
    match format {
        OutputFormat::TTree => name.replace([' ', '/', '[', ']'], "_"),
        _ => name.replace(['.', ' ', '/', '\\'], "_"),
    }
}

const ROOT_FORMATS: [OutputFormat; 2] = [OutputFormat::RNTuple, OutputFormat::TTree];

/// Whether two columns' data are the same, floats by their bits (NaN is NaN).
fn same(a: &evtc_root::ColumnData, b: &evtc_root::ColumnData) -> bool {
    use evtc_root::Values;
    let values = match (&a.values, &b.values) {
        (Values::F32(x), Values::F32(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Values::F64(x), Values::F64(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (x, y) => x == y,
    };
    values && a.offsets == b.offsets && a.levels == b.levels
}

/// Every column of every tree of `input` (a ROOT file) is a column of `output` (written as
/// `format`) of the same kind and values.
fn same_columns(input: &Path, output: &Path, format: OutputFormat) {
    let (a, b) = (
        RootFile::open(input).expect("input"),
        RootFile::open(output).expect("output"),
    );
    let trees = a.trees().expect("trees");
    let mut seen = std::collections::HashSet::new();
    for t in &trees {
        if !seen.insert(t.path.clone()) {
            continue; // an older cycle of a tree converted once
        }
        let ta = a.tree(&t.path).expect("input tree");
        let tb = b
            .tree(&root_name(&t.path, OutputFormat::RNTuple))
            .expect("output tree");
        assert_eq!(ta.entries, tb.entries, "{}: entries", t.path);
        for ca in &ta.columns {
            let name = root_name(&ca.name, format);
            let cb = tb
                .column(&name)
                .unwrap_or_else(|| panic!("{}: no column {name} in the output", t.path));
            assert_eq!(ca.kind, cb.kind, "{}/{}", t.path, ca.name);
            let va = a.read_column(ca, 0..ta.entries).expect("read input");
            let vb = b.read_column(cb, 0..tb.entries).expect("read output");
            assert!(
                same(&va, &vb),
                "{} as {format:?}: {}/{}: values differ:\n{va:?}\n{vb:?}",
                input.display(),
                t.path,
                ca.name
            );
        }
    }
}

#[test]
fn every_root_fixture_converts_to_rntuple_with_its_values() {
    every_root_fixture_converts(OutputFormat::RNTuple);
}

#[test]
fn every_root_fixture_converts_to_ttree_with_its_values() {
    every_root_fixture_converts(OutputFormat::TTree);
}

fn every_root_fixture_converts(format: OutputFormat) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut converted = 0;
    for entry in std::fs::read_dir(fixture("")).expect("fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("root") {
            continue;
        }
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let out = dir.path().join(&name);
        match convert(&path, &out, &settings(Some(format)), &mut |_| {}) {
            Ok(_) => {
                same_columns(&path, &out, format);
                converted += 1;
            }
            // Fixtures made to fail the reader (partial and damaged files, no trees).
            Err(e) => assert!(
                ["partial", "nontree", "ttree_extfile"]
                    .iter()
                    .any(|bad| name.starts_with(bad)),
                "{name} as {format:?}: {e}"
            ),
        }
    }
    assert!(converted >= 40, "only {converted} fixtures converted");
}

#[test]
fn evtc_files_convert_to_root_with_nested_lists_joined_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in [
        "kinds_505.root",
        "rntuple_kinds_505.root",
        "maps.root",
        "deep.root",
    ] {
        let evtc = dir.path().join(format!("{name}.evtc"));
        let rac = Settings {
            rac: evtc_format::RacMode::Auto,
            ..settings(None)
        };
        convert(&fixture(name), &evtc, &rac, &mut |_| {}).expect("to evtc");
        for format in ROOT_FORMATS {
            to_root_again(name, &evtc, format);
        }
    }
}

/// Converts `evtc` (made from the fixture `name`) to `format`: the fixture's values, nested
/// lists one branch or field again.
fn to_root_again(name: &str, evtc: &Path, format: OutputFormat) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join(format!("{format:?}_{name}"));
    let summary = convert(evtc, &out, &settings(Some(format)), &mut |_| {})
        .unwrap_or_else(|e| panic!("{name} as {format:?}: {e}"));
    assert_eq!(summary.output_format, format.to_string());
    same_columns(&fixture(name), &out, format);
    // Nested lists, written in evtc as X and X/sizes, are one field again.
    let file = RootFile::open(&out).expect("output");
    for t in file.trees().expect("trees") {
        let tree = file.tree(&t.path).expect("tree");
        assert!(
            tree.columns.iter().all(|c| !c.name.ends_with("_sizes")),
            "{name}: a sizes branch was written as its own field"
        );
        assert!(
            tree.unsupported.is_empty(),
            "{name}: {:?}",
            tree.unsupported
        );
    }
}

#[test]
fn a_root_named_output_needs_to_and_nothing_is_left_on_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.root");
    let err = convert(
        &fixture("kinds_505.root"),
        &out,
        &settings(None),
        &mut |_| {},
    )
    .expect_err("refused");
    assert!(matches!(err, Error::RootOutputUnsaid { .. }), "{err}");
    assert!(err.to_string().contains("to=rntuple"), "{err}");
    // A glob that matches nothing fails before anything is written.
    let bad = Settings {
        branches: vec!["Nope_*".parse().expect("glob")],
        ..settings(Some(OutputFormat::RNTuple))
    };
    convert(&fixture("kinds_505.root"), &out, &bad, &mut |_| {}).expect_err("no branch");
    assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    // An existing output stays unless overwrite.
    std::fs::write(&out, b"precious").expect("write");
    let err = convert(
        &fixture("kinds_505.root"),
        &out,
        &settings(Some(OutputFormat::RNTuple)),
        &mut |_| {},
    )
    .expect_err("exists");
    assert!(err.to_string().contains("exists"), "{err}");
    assert_eq!(std::fs::read(&out).expect("read"), b"precious");
}

#[test]
fn codecs_and_lossy_floats_carry_over_from_evtc_branches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let evtc = dir.path().join("nano.evtc");
    let mut write = settings(None);
    write.set("codec", "lz4").expect("codec");
    write.set("branch_codec", "Jet_*=lzma:4").expect("rule");
    write.set("float_precision", "Muon_pt=10").expect("rule");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nano_sample.root");
    convert(&sample, &evtc, &write, &mut |_| {}).expect("to evtc");
    let out = dir.path().join("nano.root");
    let summary = convert(
        &evtc,
        &out,
        &settings(Some(OutputFormat::RNTuple)),
        &mut |_| {},
    )
    .expect("to rntuple");
    assert!(
        summary.notes.iter().any(|n| n.contains("preconditioners")),
        "{:?}",
        summary.notes
    );
    let file = RootFile::open(&out).expect("output");
    let tree = file.tree("Events").expect("tree");
    let layout = file.ntuple_layout("Events").expect("layout");
    let codec_of = |name: &str| {
        layout
            .columns
            .iter()
            .find(|c| c.field == name)
            .map(|c| c.compression)
            .unwrap_or_else(|| panic!("no column of {name}"))
    };
    assert_eq!(codec_of("Jet_pt._0"), 204, "lzma:4 where the rule said");
    assert_eq!(codec_of("MET_pt"), 401, "lz4 as the evtc branch");
    // Muon_pt's 10 mantissa bits are stored as Real32Trunc (1 + 8 + 10 bits), values equal.
    let muon = layout
        .columns
        .iter()
        .find(|c| c.field == "Muon_pt._0")
        .expect("Muon_pt");
    assert_eq!((muon.column_type.as_str(), muon.bits), ("Real32Trunc", 19));
    let evtc_file = evtc_format::FileReader::open(&evtc).expect("evtc");
    let want = evtc_file
        .tree("Events")
        .expect("tree")
        .branch("Muon_pt")
        .expect("branch")
        .read_jagged_range::<f32>(0..tree.entries)
        .expect("read");
    let got = file
        .read_column(tree.column("Muon_pt").expect("column"), 0..tree.entries)
        .expect("read");
    assert_eq!(got.values, evtc_root::Values::F32(want.values.to_vec()));
    assert_eq!(
        tree.column("Muon_pt").expect("column").kind,
        ColumnKind::Jagged(evtc_root::ScalarType::F32)
    );
}

#[test]
fn ttree_output_keeps_counters_codecs_and_the_event_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let evtc = dir.path().join("nano.evtc");
    let mut write = settings(None);
    write.set("codec", "lz4").expect("codec");
    write.set("branch_codec", "Jet_*=lzma:4").expect("rule");
    write.set("float_precision", "Muon_pt=10").expect("rule");
    write.set("index", "run,event").expect("index");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nano_sample.root");
    convert(&sample, &evtc, &write, &mut |_| {}).expect("to evtc");
    let out = dir.path().join("nano.root");
    let summary = convert(
        &evtc,
        &out,
        &settings(Some(OutputFormat::TTree)),
        &mut |_| {},
    )
    .expect("to ttree");
    assert_eq!(
        summary.trees[0].event_index,
        Some(("run".to_owned(), "event".to_owned()))
    );
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.contains("reduced-precision")),
        "{:?}",
        summary.notes
    );
    let file = RootFile::open(&out).expect("output");
    let tree = file.tree("Events").expect("tree");
    assert_eq!(tree.kind, evtc_root::TreeKind::TTree);
    assert_eq!(tree.index, Some(("run".to_owned(), "event".to_owned())));
    let column = |name: &str| tree.column(name).unwrap_or_else(|| panic!("no {name}"));
    assert_eq!(
        column("Jet_pt").compression,
        204,
        "lzma:4 where the rule said"
    );
    assert_eq!(column("MET_pt").compression, 401, "lz4 as the evtc branch");
    assert_eq!(column("Jet_pt").counter.as_deref(), Some("nJet"));
    // The evtc file's values, reduced floats included, are the TTree's.
    same_columns(&sample, &out, OutputFormat::TTree);
}
