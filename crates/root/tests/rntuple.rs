//! Every value of every RNTuple fixture (written by ROOT 6.40 with
//! `fixtures/make_rntuple_fixtures.py`, and the RNTuple files of scikit-hep-testdata in
//! `fixtures/skhep/`), compared with uproot's reading (`NAME.root.json`), or with ROOT's own
//! where uproot differs (`NAME.root.root.json`: `char` read as unsigned, variants after the first
//! cluster, quantized doubles in single precision, `std::unique_ptr`, payloads in several keys,
//! alternative representations).
//!
//! uproot returns each top-level field nested (records, lists, tuples, optional values); evtc
//! returns one column per leaf. The test walks uproot's values alongside the tree's
//! [`FieldNode`]s to take each column's part of them.

mod common;

use common::{entries, expected, fixture, flat, same};
use evtc_root::{ColumnKind, FieldKind, FieldNode, RootFile, Tree, TreeKind};
use serde_json::Value;

/// A column's part of one entry of uproot's values of its top-level field.
fn project(node: &FieldNode, value: &Value, column: usize) -> Option<Value> {
    match node.kind {
        FieldKind::Column(k) => (k == column).then(|| value.clone()),
        FieldKind::Record => node.children.iter().find_map(|c| {
            let member = match value {
                Value::Object(o) => o.get(&c.name).cloned().unwrap_or(Value::Null),
                // Tuples (`std::pair`, `std::tuple`) come as lists.
                Value::Array(items) => c
                    .name
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| items.get(i).cloned())
                    .unwrap_or(Value::Null),
                _ => Value::Null,
            };
            project(c, &member, column)
        }),
        _ if !contains(node, column) => None,
        FieldKind::List | FieldKind::Array(_) => {
            let item = &node.children[0];
            let items = value.as_array()?;
            let mut out = Vec::with_capacity(items.len());
            for v in items {
                out.push(project(item, v, column)?);
            }
            Some(Value::Array(out))
        }
        FieldKind::Option => {
            let item = &node.children[0];
            match value {
                Value::Null => contains(item, column).then(|| Value::Array(Vec::new())),
                // uproot reads `std::unique_ptr` as a list of zero or one item.
                Value::Array(items) if !node.type_name.starts_with("std::optional") => {
                    let mut out = Vec::new();
                    for v in items {
                        out.push(project(item, v, column)?);
                    }
                    Some(Value::Array(out))
                }
                v => Some(Value::Array(vec![project(item, v, column)?])),
            }
        }
        // Checked against the tag column by `check_variant`.
        FieldKind::Variant => {
            let FieldKind::Column(tag) = node.children[0].kind else {
                return None;
            };
            let held = node.children[1..]
                .iter()
                .position(|a| holds(&a.children[0], value));
            if column == tag {
                return Some(Value::from(held.map_or(-1, |k| k as i64)));
            }
            let (k, alternative) = node.children[1..]
                .iter()
                .enumerate()
                .find(|(_, a)| contains(a, column))?;
            if held == Some(k) {
                Some(Value::Array(vec![project(
                    &alternative.children[0],
                    value,
                    column,
                )?]))
            } else {
                Some(Value::Array(Vec::new()))
            }
        }
    }
}

/// Whether uproot's `value` of a variant is of the alternative `node` (by its JSON kind).
fn holds(node: &FieldNode, value: &Value) -> bool {
    let t = &node.type_name;
    match node.kind {
        FieldKind::Column(_) if t.contains("string") => value.is_string(),
        FieldKind::Column(_) if t.contains("float") || t.contains("double") => value.is_f64(),
        FieldKind::Column(_) => value.is_i64() || value.is_u64(),
        FieldKind::Record => value.is_object(),
        FieldKind::List | FieldKind::Array(_) => value.is_array(),
        FieldKind::Option | FieldKind::Variant => !value.is_null(),
    }
}

fn contains(node: &FieldNode, column: usize) -> bool {
    node.kind == FieldKind::Column(column) || node.children.iter().any(|c| contains(c, column))
}

/// The variants' values: the tag column says which alternative each entry holds; that
/// alternative's columns hold their part of uproot's (or ROOT's) value there, the others
/// nothing.
fn check_variant(file: &RootFile, tree: &Tree, node: &FieldNode, want: &[Value], what: &str) {
    let n = tree.entries as usize;
    let column = |k: usize| {
        let c = &tree.columns[k];
        let data = file
            .read_column(c, 0..tree.entries)
            .expect("variant column");
        entries(&data, c.kind, n)
    };
    let FieldKind::Column(tag) = node.children[0].kind else {
        panic!("{what}: the tag column comes first")
    };
    let tags = column(tag);
    for (k, alternative) in node.children[1..].iter().enumerate() {
        for (c, _) in tree
            .columns
            .iter()
            .enumerate()
            .filter(|&(c, _)| contains(alternative, c))
        {
            let got = column(c);
            for e in 0..n {
                let held = got[e].as_array().expect("zero or one item");
                if tags[e].as_i64() == Some(k as i64) {
                    let part = project(&alternative.children[0], &want[e], c)
                        .unwrap_or_else(|| panic!("{what} entry {e}: no part"));
                    assert_eq!(held.len(), 1, "{what} entry {e}: alternative {k}");
                    assert!(
                        same(&held[0], &part),
                        "{what} entry {e}: read {}, expected {part}",
                        held[0]
                    );
                } else {
                    assert!(
                        held.is_empty(),
                        "{what} entry {e}: alternative {k} is not held"
                    );
                }
            }
        }
    }
    for e in 0..n {
        if tags[e].as_i64() == Some(-1) {
            assert_eq!(want[e], Value::Null, "{what} entry {e}: no alternative");
        }
    }
}

/// Compares every column of every top-level field uproot (or ROOT) read in `tree_path`.
fn check(file: &RootFile, tree_path: &str, uproot: &Value, root: Option<&Value>) -> usize {
    let tree = file
        .tree(tree_path)
        .unwrap_or_else(|e| panic!("{tree_path}: {e}"));
    if tree.kind == TreeKind::TTree {
        return common::check_tree(file, tree_path, uproot);
    }
    assert_eq!(
        tree.entries,
        uproot["entries"].as_u64().expect("entries"),
        "{tree_path}"
    );
    let n = tree.entries as usize;
    let mut checked = 0;
    if let Some(summaries) = uproot["summaries"].as_object() {
        for (name, summary) in summaries {
            checked += check_summary(file, &tree, name, summary, &format!("{tree_path}/{name}"));
        }
    }
    for (name, want) in uproot["branches"].as_object().expect("branches") {
        let want = root.and_then(|r| r["branches"].get(name)).unwrap_or(want);
        let Some(want) = want.as_array() else {
            continue; // a summary of a large field
        };
        let what = format!("{tree_path}/{name}");
        let Some(node) = tree.fields.iter().find(|f| &f.name == name) else {
            let refused = tree.unsupported.iter().find(|u| &u.name == name);
            assert!(refused.is_some(), "{what}: neither read nor refused");
            continue;
        };
        if node.kind == FieldKind::Variant {
            check_variant(file, &tree, node, want, &what);
            checked += 1;
            continue;
        }
        for (k, column) in tree.columns.iter().enumerate() {
            if !contains(node, k) {
                continue;
            }
            let data = file
                .read_column(column, 0..tree.entries)
                .unwrap_or_else(|e| panic!("{what} ({}): {e}", column.name));
            let got = entries(&data, column.kind, n);
            for (e, (g, w)) in got.iter().zip(want).enumerate() {
                let w = project(node, w, k)
                    .unwrap_or_else(|| panic!("{what} entry {e}: no part for {}", column.name));
                let w = if matches!(column.kind, ColumnKind::Fixed(..)) {
                    Value::Array(flat(&w))
                } else {
                    w
                };
                assert!(
                    same(g, &w),
                    "{what} ({}) entry {e}: read {g}, expected {w}",
                    column.name
                );
            }
            checked += 1;
        }
    }
    checked
}

/// A large field, which the fixture script summarised: its first and last two entries, and for
/// a field of one column, its number of values and their sum.
fn check_summary(file: &RootFile, tree: &Tree, name: &str, summary: &Value, what: &str) -> usize {
    let node = tree
        .fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("{what}: not read"));
    let n = tree.entries as usize;
    let head = summary["head"].as_array().expect("head");
    let tail = summary["tail"].as_array().expect("tail");
    let columns: Vec<usize> = (0..tree.columns.len())
        .filter(|&k| contains(node, k))
        .collect();
    for &k in &columns {
        let column = &tree.columns[k];
        let data = file.read_column(column, 0..tree.entries).expect("read");
        let got = entries(&data, column.kind, n);
        let ends = got[..head.len()]
            .iter()
            .zip(head)
            .chain(got[n - tail.len()..].iter().zip(tail));
        for (g, w) in ends {
            let w = project(node, w, k).expect("a part");
            let w = if matches!(column.kind, ColumnKind::Fixed(..)) {
                Value::Array(flat(&w))
            } else {
                w
            };
            assert!(
                same(g, &w),
                "{what} ({}): read {g}, expected {w}",
                column.name
            );
        }
        if columns.len() == 1 && !matches!(column.kind, ColumnKind::String | ColumnKind::Strings(_))
        {
            let values: Vec<Value> = got.iter().flat_map(flat).collect();
            assert_eq!(
                values.len() as u64,
                summary["values"].as_u64().expect("values"),
                "{what}"
            );
            let sum: f64 = values
                .iter()
                .map(|v| {
                    v.as_f64()
                        .or_else(|| v.as_bool().map(f64::from))
                        .unwrap_or(0.0)
                })
                .sum();
            let want = summary["sum"].as_f64().expect("sum");
            assert!(
                (sum - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{what}: sum {sum}, expected {want}"
            );
        }
    }
    columns.len()
}

/// Checks every tree of a fixture written by `make_rntuple_fixtures.py`.
fn check_fixture(name: &str) -> usize {
    check_against(name, &format!("{name}.json"), &format!("{name}.root.json"))
}

/// Checks every tree of fixture `name` against uproot's values in `uproot` and ROOT's, where
/// they differ, in `root` (if there is such a file).
fn check_against(name: &str, uproot: &str, root: &str) -> usize {
    let file = RootFile::open(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let uproot = expected(uproot);
    let root = fixture(root).exists().then(|| expected(root));
    let mut checked = 0;
    for (tree, values) in uproot.as_object().expect("trees") {
        if values.get("branches").is_none() {
            continue;
        }
        checked += check(&file, tree, values, root.as_ref().and_then(|r| r.get(tree)));
    }
    checked
}

#[test]
fn every_column_type_and_encoding() {
    assert!(check_fixture("rntuple_columns.root") >= 43);
}

#[test]
fn every_field_kind() {
    assert!(check_fixture("rntuple_fields.root") > 60);
}

#[test]
fn every_compression_setting() {
    for setting in [0, 101, 207, 404, 505] {
        let name = format!("rntuple_kinds_{setting}.root");
        let checked = check_against(&name, "rntuple_kinds.json", "rntuple_kinds.root.json");
        assert!(checked > 10, "{name}");
    }
}

#[test]
fn clusters_groups_pages_and_checksums() {
    for name in [
        "rntuple_clusters.root",
        "rntuple_nochecksum.root",
        "rntuple_multikey.root",
    ] {
        assert!(check_fixture(name) > 0, "{name}");
    }
}

#[test]
fn late_fields_read_as_zeros_before_they_existed() {
    assert!(check_fixture("rntuple_extension.root") > 5);
}

#[test]
fn alternative_representations_per_cluster() {
    assert!(check_fixture("rntuple_altrep.root") > 2);
}

#[test]
fn importer_and_snapshot_layouts() {
    let nano = check_fixture("rntuple_nano.root");
    assert!(nano > 60, "{nano}");
    let file = RootFile::open(fixture("rntuple_nano.root")).expect("nano");
    let tree = file.tree("Events").expect("Events");
    let pt = tree.column("Muon_pt").expect("Muon_pt");
    assert_eq!(pt.counter.as_deref(), Some("nMuon"));
    let at = |name: &str| tree.columns.iter().position(|c| c.name == name);
    assert!(
        at("nMuon") < at("Muon_pt"),
        "a counter comes before what it counts"
    );
    assert!(
        tree.columns
            .iter()
            .all(|c| !c.name.starts_with("_collection")),
        "the importer's collections appear as their projections only"
    );
    assert!(check_fixture("rntuple_snapshot.root") > 2);
    assert!(check_fixture("rntuple_mixed.root") > 2);
}

/// The fields of one collection share their offsets: `read_values` of each gives the values a
/// whole read gives, and the key tells which columns' offsets are equal.
#[test]
fn fields_of_one_collection_share_their_offsets() {
    let file = RootFile::open(fixture("rntuple_nano.root")).expect("nano");
    let tree = file.tree("Events").expect("Events");
    let key = |name: &str| tree.column(name).expect(name).offsets_key();
    let muon = key("Muon_pt").expect("a jagged field has a key");
    assert_eq!(key("Muon_eta"), Some(muon.clone()));
    assert_ne!(key("Jet_pt"), Some(muon));
    assert_eq!(key("nMuon"), None, "a scalar has no offsets");
    let mut jagged = 0;
    for column in tree.columns.iter().filter(|c| c.kind.is_variable()) {
        let half = tree.entries / 2;
        for range in [0..tree.entries, half..tree.entries] {
            let whole = file.read_column(column, range.clone()).expect("read");
            let mut values = evtc_root::Values::new(column.kind.scalar());
            let mut reader = file.column_reader(column);
            reader.read_values(range, &mut values).expect("read_values");
            assert_eq!(values, whole.values, "{}", column.name);
        }
        jagged += 1;
    }
    assert!(jagged > 20, "{jagged}");
    // Values of another type are refused, not filled.
    let pt = tree.column("Muon_pt").expect("Muon_pt");
    let mut wrong = evtc_root::Values::new(evtc_root::ScalarType::I8);
    let err = file
        .column_reader(pt)
        .read_values(0..1, &mut wrong)
        .unwrap_err();
    assert!(err.to_string().contains("Muon_pt"), "{err}");
}

#[test]
fn streamer_fields_are_refused_with_the_reason() {
    let file = RootFile::open(fixture("rntuple_streamer.root")).expect("open");
    let tree = file.tree("ntpl").expect("ntpl");
    let refused = tree
        .unsupported
        .iter()
        .find(|u| u.name == "hit")
        .expect("hit is refused");
    assert!(refused.reason.contains("streamer"), "{}", refused.reason);
}

#[test]
fn scikit_hep_testdata_files() {
    let dir = fixture("skhep");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("skhep")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".root"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{names:?}");
    for name in names {
        let checked = check_fixture(&format!("skhep/{name}"));
        assert!(checked > 0, "{name}");
    }
}
