//! ROOT strings keep their type through a conversion: UTF-8 text at every depth (a string, a
//! list of strings, lists of lists of strings), and a branch with an entry that is not UTF-8
//! is kept as bytes, the summary saying so.

use std::path::Path;

use evtc_format::{DataType, FileReader};
use evtc_root::{ColumnData, ColumnKind, Values};
use evtc_tools::{OutputFormat, RootBranch, RootOutput, Settings, convert};

fn settings() -> Settings {
    Settings {
        sync: false,
        skip_unsupported: true,
        ..Settings::default()
    }
}

/// A TTree of a string branch `text` (valid UTF-8), a `std::vector<std::string>` `words` and
/// a string branch `raw` whose second entry is not UTF-8.
fn strings_file(path: &Path) {
    let mut out = RootOutput::create(path, OutputFormat::TTree, &settings()).expect("create");
    out.tree(
        "Events",
        vec![
            RootBranch::new("text", ColumnKind::String),
            RootBranch::new("words", ColumnKind::Strings(1)),
            RootBranch::new("raw", ColumnKind::String),
        ],
    )
    .expect("tree");
    let text = ColumnData {
        values: Values::U8("héllo wörld".as_bytes().to_vec()),
        offsets: vec![0, 6, 13],
        levels: vec![],
    };
    let words = ColumnData {
        values: Values::U8(b"abcde".to_vec()),
        offsets: vec![0, 2, 3],
        levels: vec![vec![0, 2, 3, 5]],
    };
    let raw = ColumnData {
        values: Values::U8(vec![b'o', b'k', 0xff, 0xfe]),
        offsets: vec![0, 2, 4],
        levels: vec![],
    };
    out.fill(vec![text, words, raw]).expect("fill");
    out.finish().expect("finish");
}

#[test]
fn root_strings_stay_text_and_non_utf8_ones_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("strings.root");
    strings_file(&root);
    let evtc = dir.path().join("strings.evtc");
    let summary = convert(&root, &evtc, &settings(), &mut |_| {}).expect("convert");
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.contains("\"raw\"") && n.contains("not UTF-8")),
        "{:?}",
        summary.notes
    );
    let file = FileReader::open(&evtc).expect("evtc");
    let tree = file.tree("Events").expect("tree");
    let dtype = |name: &str| tree.branch(name).expect(name).meta().dtype;
    assert_eq!(dtype("text"), DataType::Utf8);
    assert_eq!(dtype("words"), DataType::Utf8, "the strings of a list too");
    assert_eq!(dtype("raw"), DataType::Bytes);
    // And evtc to evtc keeps each as it is.
    let again = dir.path().join("again.evtc");
    convert(&evtc, &again, &settings(), &mut |_| {}).expect("again");
    let file = FileReader::open(&again).expect("evtc");
    let tree = file.tree("Events").expect("tree");
    assert_eq!(
        tree.branch("words").expect("words").meta().dtype,
        DataType::Utf8
    );
    assert_eq!(
        tree.branch("raw").expect("raw").meta().dtype,
        DataType::Bytes
    );
}
