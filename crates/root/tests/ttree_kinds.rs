//! The TTree kinds of `make_ttree_extra_fixtures.py`: a class with two streamer infos in one
//! file, objects written without a byte count (`TObject`, `TArrayD`), unsplit `TGraph`, `TH1F`
//! and `TRefArray`, `std::list`, branch names with commas, baskets in another file, baskets out
//! of entry order. Values are compared with uproot's reading (`X.root.json`) and, where uproot
//! cannot read a branch or reads it wrong, with ROOT's (`X.root.root.json`).

mod common;

use common::{check_tree, expected, fixture};
use evtc_root::{ColumnKind, RootFile, ScalarType};
use serde_json::{Map, Value};

/// The expected branches with objects read whole (`{"a": 1, "b": 2.0}` per entry) turned into
/// one column per member, `name.member`, as evtc reads them.
fn by_member(tree: &Value) -> Value {
    let mut out = tree.clone();
    let mut branches = Map::new();
    for (name, values) in tree["branches"].as_object().expect("branches") {
        let entries = values.as_array().expect("entries");
        match entries.first().and_then(Value::as_object) {
            Some(first) => {
                for member in first.keys() {
                    let column = entries.iter().map(|e| e[member].clone()).collect();
                    branches.insert(format!("{name}.{member}"), Value::Array(column));
                }
            }
            None => {
                branches.insert(name.clone(), values.clone());
            }
        }
    }
    out["branches"] = Value::Object(branches);
    out
}

#[test]
fn a_class_with_two_streamer_infos_reads_each_tree_by_its_branches_class_version() {
    let file = RootFile::open(fixture("ttree_twoversions.root")).expect("open");
    let by_root = expected("ttree_twoversions.root.root.json");
    let by_uproot = expected("ttree_twoversions.root.json");
    for tree in ["T1", "T2"] {
        // ROOT's reading and uproot's (which cannot read T1's "obju"), whole objects by member.
        assert!(check_tree(&file, tree, &by_member(&by_root[tree])) >= 5);
        check_tree(&file, tree, &by_member(&by_uproot[tree]));
        let t = file.tree(tree).expect("tree");
        assert!(t.unsupported.is_empty(), "{tree}: {:?}", t.unsupported);
    }
    // Version 1 has no `c`: the unsplit object of T1 has no such column, T2's has.
    assert!(file.tree("T1").expect("T1").column("obju.c").is_none());
    assert!(file.tree("T2").expect("T2").column("obju.c").is_some());
}

#[test]
fn objects_without_byte_counts_arrays_graphs_histograms_and_references() {
    let file = RootFile::open(fixture("ttree_objects.root")).expect("open");
    let mut by_uproot = expected("ttree_objects.root.json")["Events"].clone();
    // uproot reads the unsplit TGraph whole: one column per member.
    by_uproot = by_member(&by_uproot);
    assert!(check_tree(&file, "Events", &by_uproot) >= 20);
    let by_root = by_member(&expected("ttree_objects.root.root.json")["Events"]);
    assert_eq!(check_tree(&file, "Events", &by_root), 24);
    let tree = file.tree("Events").expect("tree");
    for (name, kind) in [
        ("tobj.fUniqueID", ColumnKind::Scalar(ScalarType::U32)),
        ("ad", ColumnKind::Jagged(ScalarType::F64)),
        ("ai", ColumnKind::Jagged(ScalarType::I32)),
        ("arrsu.af", ColumnKind::Jagged(ScalarType::F32)),
        ("graph.fName", ColumnKind::String),
        ("hist.fArray", ColumnKind::Jagged(ScalarType::F32)),
        ("hist.fXaxis.fXbins", ColumnKind::Jagged(ScalarType::F64)),
        ("refs.refs.fUIDs", ColumnKind::Jagged(ScalarType::U32)),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
    // Pointers to objects (a TGraph's list of functions, a histogram's axes' labels) are
    // skipped by their byte counts and refused by name, with the reason.
    let refused: Vec<&str> = tree.unsupported.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        refused,
        [
            "graph.fFunctions",
            "graph.fHistogram",
            "hist.fXaxis.fLabels",
            "hist.fXaxis.fModLabs",
            "hist.fYaxis.fLabels",
            "hist.fYaxis.fModLabs",
            "hist.fZaxis.fLabels",
            "hist.fZaxis.fModLabs",
            "hist.fFunctions",
        ]
    );
    assert!(
        tree.unsupported
            .iter()
            .all(|u| u.reason.contains("pointer to an object"))
    );
}

#[test]
fn std_lists_read_as_vectors() {
    let file = RootFile::open(fixture("ttree_lists.root")).expect("open");
    let want = expected("ttree_lists.root.json");
    assert_eq!(check_tree(&file, "Events", &want["Events"]), 7);
    let by_root = by_member(&expected("ttree_lists.root.root.json")["Events"]);
    check_tree(&file, "Events", &by_root);
    let tree = file.tree("Events").expect("tree");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    for (name, kind) in [
        ("li", ColumnKind::Jagged(ScalarType::I32)),
        ("lstr", ColumnKind::Strings(1)),
        ("vli", ColumnKind::Nested(ScalarType::I32, 2)),
        ("lobju.lf", ColumnKind::Jagged(ScalarType::F32)),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
}

#[test]
fn branch_names_with_commas() {
    let file = RootFile::open(fixture("ttree_commas.root")).expect("open");
    let want = expected("ttree_commas.root.json");
    assert_eq!(check_tree(&file, "Events", &want["Events"]), 13);
}

#[test]
fn baskets_in_another_file_are_refused_naming_it() {
    let file = RootFile::open(fixture("ttree_extfile.root")).expect("open");
    let want = expected("ttree_extfile.root.json");
    let events = file.tree("Events").expect("Events");
    let refused: Vec<_> = events.unsupported.iter().map(|u| &u.name).collect();
    assert_eq!(refused, ["y"]);
    assert!(
        events.unsupported[0]
            .reason
            .contains("\"ttree_extfile_baskets.root\""),
        "{}",
        events.unsupported[0].reason
    );
    let mut read = want["Events"].clone();
    read["branches"]
        .as_object_mut()
        .expect("branches")
        .remove("y");
    check_tree(&file, "Events", &read);
    // A branch given another file before any basket was written keeps its baskets in the
    // tree's record: read as ROOT reads them.
    assert_eq!(check_tree(&file, "NamedOnly", &want["NamedOnly"]), 2);
}

/// Baskets out of entry order in the file, and later baskets that start before earlier ones
/// end ("Overlap": entries 0-4 from basket 0, whose last five are never read, as ROOT reads
/// them).
#[test]
fn baskets_out_of_entry_order_and_overlapping() {
    let file = RootFile::open(fixture("ttree_basketorder.root")).expect("open");
    let want = expected("ttree_basketorder.root.root.json");
    for tree in ["LateFile", "Circular", "Overlap"] {
        assert_eq!(check_tree(&file, tree, &want[tree]), 2, "{tree}");
    }
    let overlap = file.tree("Overlap").expect("Overlap");
    let baskets: Vec<(u64, u64)> = overlap
        .column("x")
        .expect("x")
        .baskets()
        .map(|b| (b.first_entry, b.entries))
        .collect();
    assert_eq!(baskets, [(0, 5), (5, 10), (15, 10), (25, 10)]);
}

#[test]
fn a_tree_index_gives_its_major_and_minor_names() {
    let file = RootFile::open(fixture("ttree_index.root")).expect("open");
    let by_root = expected("ttree_index.root.root.json");
    for (name, index) in [
        ("Events", Some(("run", "event"))),
        ("Expr", Some(("run*10", "event%7"))),
        ("NoIndex", None),
    ] {
        let tree = file.tree(name).expect("tree");
        let names = tree.index.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
        assert_eq!(names, index, "{name}");
        if let Some((major, minor)) = index {
            assert_eq!(by_root[name]["index"]["major"], major);
            assert_eq!(by_root[name]["index"]["minor"], minor);
        }
        check_tree(&file, name, &by_root[name]);
    }
}
