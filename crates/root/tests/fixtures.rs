//! Every value of every fixture, compared with what uproot reads (the `.json` files beside them,
//! written by `make_fixtures.py`).

mod common;

use common::{check_tree, entries, expected, fixture, flat};
use evtc_root::{ColumnData, ColumnKind, RootFile, ScalarType, Values};
use serde_json::Value;

#[test]
fn every_branch_kind_in_every_compression_setting() {
    let expected = expected("kinds.json");
    for setting in [0, 101, 207, 404, 505] {
        let name = format!("kinds_{setting}.root");
        let file = RootFile::open(fixture(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let checked = check_tree(&file, "Events", &expected["Events"]);
        assert_eq!(checked, 33, "{name}");
        let tree = file.tree("Events").expect("tree");
        // The unsplit TLorentzVector, member by member.
        let lv = tree.column("lv.fE").expect("lv.fE");
        assert_eq!(lv.kind, ColumnKind::Scalar(evtc_root::ScalarType::F64));
        assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
        assert_eq!(
            tree.column("Muon_pt").and_then(|c| c.counter.as_deref()),
            Some("nMuon")
        );
        assert!(
            tree.columns.iter().all(|c| c.compression == setting),
            "{name}"
        );
    }
}

#[test]
fn uproot_written_file() {
    let file = RootFile::open(fixture("uproot.root")).expect("open");
    check_tree(&file, "tree", &expected("uproot.root.json")["tree"]);
}

#[test]
fn baskets_embedded_in_the_tree_record() {
    let file = RootFile::open(fixture("embedded.root")).expect("open");
    check_tree(&file, "Events", &expected("embedded.root.json")["Events"]);
}

#[test]
fn subdirectories_and_cycles() {
    let file = RootFile::open(fixture("layout.root")).expect("open");
    let expected = expected("layout.root.json");
    for path in ["sub/Events;1", "sub/Events;2", "Top"] {
        check_tree(&file, path, &expected[path]);
    }
    // Without a cycle, the newest one.
    assert_eq!(file.tree("sub/Events").expect("newest").entries, 250);
    let trees = file.trees().expect("list");
    let listed: Vec<_> = trees.iter().map(|t| (t.path.as_str(), t.cycle)).collect();
    assert!(
        listed.contains(&("sub/Events", 1)) && listed.contains(&("sub/Events", 2)),
        "{listed:?}"
    );
    assert!(listed.contains(&("Top", 1)), "{listed:?}");
    let err = file.tree("sub/Nope").expect_err("missing").to_string();
    assert!(
        err.contains("sub/Nope") && err.contains("sub/Events;2"),
        "{err}"
    );
    let err = file.tree("sub").expect_err("a directory").to_string();
    assert!(err.contains("not a TTree"), "{err}");
}

#[test]
fn basket_over_16_mib_in_several_blocks() {
    let file = RootFile::open(fixture("big_basket.root")).expect("open");
    let summary = &expected("big_basket.root.json")["Events"];
    check_tree(&file, "Events", summary);
    let tree = file.tree("Events").expect("tree");
    let big = tree.column("big").expect("big");
    let data = file.read_column(big, 0..tree.entries).expect("read");
    let Values::F32(values) = &data.values else {
        panic!("floats")
    };
    // The generator: entry e holds (e + k) % 251 for k in 0..131072.
    assert_eq!(values.len(), 40 * 131072);
    for e in 0..40 {
        for k in 0..131072 {
            assert_eq!(
                values[e * 131072 + k],
                ((e + k) % 251) as f32,
                "entry {e} value {k}"
            );
        }
    }
    let sum: f64 = values.iter().map(|&v| f64::from(v)).sum();
    assert_eq!(
        sum,
        summary["branches"]["big"]["sum"].as_f64().expect("sum")
    );
}

/// Bit-exact equality of two JSON values (floats widened to f64; NaN and infinities as the
/// strings the fixtures script writes).
fn exact(a: &Value, b: &Value) -> bool {
    let float = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse::<f64>().ok(),
        _ => None,
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| exact(a, b))
        }
        _ => match (float(a), float(b)) {
            (Some(x), Some(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
            _ => a == b,
        },
    }
}

#[test]
fn float16_and_double32_with_ranges_and_bit_counts_as_root_reads_them() {
    let file = RootFile::open(fixture("ranged.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let n = tree.entries as usize;
    // ROOT's own reading (uproot misreads some of these: see make_fixtures.py's report).
    let root = expected("ranged.root.root.json");
    let root = root["Events"]["branches"].as_object().expect("branches");
    let uproot = expected("ranged.root.json");
    let uproot = uproot["Events"]["branches"].as_object().expect("branches");
    for column in &tree.columns {
        // Members of the unsplit object: ROOT's values are one record per entry.
        let member: Value;
        let want = match column.name.strip_prefix("obju.") {
            Some(field) => {
                let records = root["obju"].as_array().expect("records");
                member = Value::Array(records.iter().map(|r| r[field].clone()).collect());
                &member
            }
            None => root
                .get(&column.name)
                .unwrap_or_else(|| panic!("ROOT has no branch {}", column.name)),
        };
        let data = file
            .read_column(column, 0..tree.entries)
            .unwrap_or_else(|e| panic!("{}: {e}", column.name));
        let got = entries(&data, column.kind, n);
        let compare = |want: &Value, who: &str| {
            let want = want.as_array().expect("entries");
            assert_eq!(got.len(), want.len(), "{}", column.name);
            for (e, (g, w)) in got.iter().zip(want).enumerate() {
                let w = if matches!(column.kind, ColumnKind::Fixed(..)) {
                    Value::Array(flat(w))
                } else {
                    w.clone()
                };
                assert!(
                    exact(g, &w),
                    "{} entry {e}: read {g}, {who} read {w}",
                    column.name
                );
            }
        };
        compare(want, "ROOT");
        // Where uproot reads these branches right, it agrees too.
        if let Some(u) = uproot.get(&column.name).filter(|_| {
            !["obj/d_pi", "obj/d_range32", "ldarr", "lj"].contains(&column.name.as_str())
        }) {
            compare(u, "uproot");
        }
    }
    // Every branch, the unsplit object's 13 members as columns of their own.
    assert_eq!(tree.columns.len(), root.len() - 1 + 13);
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let d_pi = tree.column("obj/d_pi").expect("d_pi");
    assert_eq!(d_pi.root_type, "Double32_t [-pi,pi,16]");
}

#[test]
fn baskets_over_the_limit_are_refused_before_decompression() {
    let mut file = RootFile::open(fixture("kinds_505.root")).expect("open");
    file.set_max_basket_bytes(100);
    let tree = file.tree("Events").expect("tree");
    let column = tree.column("Muon_pt").expect("Muon_pt");
    let err = file
        .read_column(column, 0..tree.entries)
        .expect_err("baskets over 100 bytes");
    assert!(
        matches!(err, evtc_root::Error::BasketTooLarge { limit: 100, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("Muon_pt"), "{err}");
}

#[test]
fn baskets_with_and_without_entry_offsets() {
    // One entry per basket, sizes that make fNevBufSize * fNevBuf + fKeylen == fLast although
    // offsets follow; baskets written with fEntryOffsetLen = 0 (no offsets at all); baskets kept
    // in the tree record. The values are the ones written (uproot misreads some of these).
    let file = RootFile::open(fixture("offsets.root")).expect("open");
    let mut written = expected("offsets.root.written.json");
    // A char* branch without offsets cannot be split where an empty string left no bytes (ROOT
    // 6.40 writes none): refused, never guessed.
    written["NoOffsets"]["branches"]
        .as_object_mut()
        .expect("branches")
        .remove("s");
    for tree in ["OneEntry", "NoOffsets", "Restored", "EmbeddedOne"] {
        let checked = check_tree(&file, tree, &written[tree]);
        assert!(checked >= 4, "{tree}: {checked}");
    }
    let tree = file.tree("NoOffsets").expect("tree");
    let s = tree
        .unsupported
        .iter()
        .find(|u| u.name == "s")
        .expect("s is refused");
    assert!(
        s.reason.contains("writes nothing for an empty string"),
        "{}",
        s.reason
    );
}

#[test]
fn baskets_in_the_tree_record_after_autosave_and_merges() {
    let file = RootFile::open(fixture("embedded2.root")).expect("open");
    let expected = expected("embedded2.root.json");
    for tree in ["SaveSelf", "Twice", "Overwrite", "Merged", "Memory"] {
        check_tree(&file, tree, &expected[tree]);
    }
}

#[test]
fn keys_that_are_not_trees_do_not_disturb_reading() {
    let file = RootFile::open(fixture("nontree.root")).expect("open");
    let expected = expected("nontree.root.json");
    for tree in ["Events", "LongTitle", "Ntuple", "NtupleD"] {
        check_tree(&file, tree, &expected[tree]);
    }
}

#[test]
fn branches_that_share_a_name_are_all_kept() {
    let file = RootFile::open(fixture("dupnames.root")).expect("open");
    let expected = expected("dupnames.root.json");
    let checked = check_tree(&file, "Events", &expected["Events"]);
    assert!(checked >= 25, "{checked}");
    let tree = file.tree("Events").expect("tree");
    let x2 = tree.column("x#2").expect("the second x");
    assert_eq!(x2.kind, ColumnKind::Scalar(evtc_root::ScalarType::F32));
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
}

#[test]
fn split_tclonesarray_members_are_jagged_columns_counted_by_their_branch() {
    let file = RootFile::open(fixture("dupnames.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let count = tree.column("Particle").expect("the object count");
    assert_eq!(count.kind, ColumnKind::Scalar(evtc_root::ScalarType::I32));
    let px = tree.column("Particle/Particle.fPx").expect("fPx");
    assert_eq!(px.counter.as_deref(), Some("Particle"));
    let counts = file.read_column(count, 0..tree.entries).expect("counts");
    let values = file.read_column(px, 0..tree.entries).expect("fPx");
    let Values::I32(counts) = counts.values else {
        panic!("Int_t counts")
    };
    let lengths: Vec<i32> = values
        .offsets
        .windows(2)
        .map(|w| (w[1] - w[0]) as i32)
        .collect();
    assert_eq!(lengths, counts);
}

#[test]
fn branches_filled_fewer_times_than_their_tree_are_refused_with_the_reason() {
    let file = RootFile::open(fixture("partial.root")).expect("open");
    let mut expected = expected("partial.root.json");
    let branches = expected["Events"]["branches"]
        .as_object_mut()
        .expect("branches");
    branches.retain(|name, _| ["a", "f", "d"].contains(&name.as_str()));
    check_tree(&file, "Events", &expected["Events"]);
    let tree = file.tree("Events").expect("tree");
    for (name, held) in [("b", 10), ("late", 4), ("back", 10)] {
        let refused = tree
            .unsupported
            .iter()
            .find(|u| u.name == name)
            .unwrap_or_else(|| panic!("{name} is reported"));
        assert!(
            refused
                .reason
                .contains(&format!("holds {held} entries, its tree 14")),
            "{name}: {}",
            refused.reason
        );
    }
}

#[test]
fn rdataframe_rvec_columns_read_as_vectors() {
    let file = RootFile::open(fixture("rvec.root")).expect("open");
    let checked = check_tree(&file, "Events", &expected("rvec.root.json")["Events"]);
    assert_eq!(checked, 4);
    let tree = file.tree("Events").expect("tree");
    assert_eq!(
        tree.column("v").expect("v").kind,
        ColumnKind::Jagged(evtc_root::ScalarType::F32)
    );
}

#[test]
fn split_vectors_of_a_class_are_jagged_columns_counted_by_their_branch() {
    let file = RootFile::open(fixture("vecclass.root")).expect("open");
    let checked = check_tree(&file, "Events", &expected("vecclass.root.json")["Events"]);
    assert_eq!(checked, 5);
    let tree = file.tree("Events").expect("tree");
    let hits = tree.column("hits").expect("the object count");
    let counts = file.read_column(hits, 0..tree.entries).expect("counts");
    assert_eq!(
        counts.values,
        Values::I32((0..40).map(|e| e % 4).collect::<Vec<_>>())
    );
    let t = tree.column("hits/hits.t").expect("ranged member");
    assert_eq!(t.counter.as_deref(), Some("hits"));
    assert_eq!(t.root_type, "Double32_t [0,100,16][]");
}

#[test]
fn unsplit_objects_of_fixed_size_read_member_by_member_as_root_does() {
    // TLorentzVector and TVector3 (TBranchObject: entries start with the class name and the
    // object's header), a user class holding one (TBranchElement: members only), and a TVector3
    // and a TDatime in TBranchElements of fType -1 (custom streamers: the header then the
    // members, and the member alone), and a std::vector<TLorentzVector> (a jagged column per
    // member), checked against ROOT's values.
    // The vector of pairs "vp" is written member-wise: its entries are read by the interpreter.
    let file = RootFile::open(fixture("objects.root")).expect("open");
    let checked = check_tree(&file, "Events", &expected("objects.root.json")["Events"]);
    assert_eq!(checked, 27);
    let tree = file.tree("Events").expect("tree");
    assert_eq!(tree.columns.len(), 27);
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    // A two-dimensional member array of an unsplit object keeps its dimensions.
    assert_eq!(tree.column("cand.grid").expect("grid").dims, [2, 3]);
}

/// Values more than two lists deep: vectors of vectors of vectors (of numbers, of strings),
/// four deep; a vector of objects each holding a fixed array (a list of arrays per entry), a
/// vector of vectors and a vector of strings, unsplit (written member-wise) and split (the STL
/// members of a collection's objects); fixed arrays of objects (`TLorentzVector pg[3]`) in a
/// split and an unsplit object; checked against ROOT's reading, and against uproot's where
/// uproot reads them.
#[test]
fn values_more_than_two_lists_deep() {
    let file = RootFile::open(fixture("deep.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let by_root = expected("deep.root.root.json");
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 28);
    // uproot 5.7 misreads "flat" (member-wise), "ev" and "ev_s/f[2]" (arrays of objects) and
    // cannot read "objs": not in its reference.
    assert_eq!(
        check_tree(&file, "Events", &expected("deep.root.json")["Events"]),
        7
    );
    for (name, kind) in [
        ("v3i", ColumnKind::Nested(ScalarType::I32, 3)),
        ("v3s", ColumnKind::Strings(3)),
        ("v4f", ColumnKind::Nested(ScalarType::F32, 4)),
        ("objs.a", ColumnKind::Nested(ScalarType::I16, 2)),
        ("objs.vv", ColumnKind::Nested(ScalarType::F32, 3)),
        ("objs.tags", ColumnKind::Strings(2)),
        ("objs_s/objs_s.a[3]", ColumnKind::Nested(ScalarType::I16, 2)),
        ("objs_s/objs_s.vv", ColumnKind::Nested(ScalarType::F32, 3)),
        ("objs_s/objs_s.tags", ColumnKind::Strings(2)),
        ("flat.pt", ColumnKind::Jagged(ScalarType::F64)),
        // Fixed arrays of objects: a list of the array's objects per entry.
        ("ev.pg.fE", ColumnKind::Jagged(ScalarType::F64)),
        ("ev_s/f[2].q", ColumnKind::Jagged(ScalarType::I32)),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
    assert_eq!(
        tree.column("v4f").expect("v4f").kind.cpp_name(),
        "vector<vector<vector<vector<Float_t>>>>"
    );
    // Data shaped for another kind is refused, never filled with misread values.
    let v4f = tree.column("v4f").expect("v4f");
    for wrong in [
        ColumnKind::Nested(ScalarType::F32, 3),
        ColumnKind::Nested(ScalarType::F64, 4),
        ColumnKind::Jagged(ScalarType::F32),
    ] {
        let mut out = ColumnData::new(wrong);
        let err = file
            .column_reader(v4f)
            .read(0..tree.entries, &mut out)
            .expect_err("a wrongly shaped output");
        assert!(err.to_string().contains("not shaped"), "{err}");
    }
}

/// `std::vector<Double32_t>` and `std::vector<std::vector<Double32_t>>`: 32-bit floats on disk,
/// doubles in memory, bit for bit as ROOT reads them (uproot 5.7 cannot read them at all).
#[test]
fn vectors_of_double32_as_root_reads_them() {
    let file = RootFile::open(fixture("vecd32.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let root = expected("vecd32.root.root.json");
    let root = root["Events"]["branches"].as_object().expect("branches");
    let n = tree.entries as usize;
    let kinds: Vec<(&str, ColumnKind)> = tree
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("d32", ColumnKind::Jagged(ScalarType::F64)),
            ("vv32", ColumnKind::Nested(ScalarType::F64, 2)),
            ("d64", ColumnKind::Jagged(ScalarType::F64)),
        ]
    );
    for column in &tree.columns {
        let data = file
            .read_column(column, 0..tree.entries)
            .unwrap_or_else(|e| panic!("{}: {e}", column.name));
        let got = entries(&data, column.kind, n);
        let want = root[&column.name].as_array().expect("entries");
        assert_eq!(got.len(), want.len());
        for (e, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                exact(g, w),
                "{} entry {e}: read {g}, ROOT read {w}",
                column.name
            );
        }
    }
    // The Double32_t values are the doubles' nearest floats.
    let d32 = file
        .read_column(&tree.columns[0], 0..tree.entries)
        .expect("d32");
    let d64 = file
        .read_column(&tree.columns[2], 0..tree.entries)
        .expect("d64");
    let (Values::F64(a), Values::F64(b)) = (&d32.values, &d64.values) else {
        panic!("doubles")
    };
    assert!(!a.is_empty() && a != b);
    assert!(a.iter().zip(b).all(|(x, y)| *x == f64::from(*y as f32)));
}

/// `TString`, `std::string`, `std::vector<T>` and `std::vector<std::string>` members of a split
/// class (kTString and kSTL branches; the `std::string` is a `TStreamerSTLstring`, one class
/// deeper in the streamer info), a top-level `std::vector<std::string>`, `TString` and
/// `std::vector<TString>`, a `T* x //[n]` member, and the `TString`, `std::string`,
/// `std::vector<float>` and `float[3]` members of a split `TClonesArray`'s objects, checked
/// against uproot (and ROOT, where uproot misreads).
#[test]
fn stl_members_and_lists_of_strings() {
    let file = RootFile::open(fixture("stlmembers.root")).expect("open");
    let mut uproot = expected("stlmembers.root.json");
    // uproot 5.7 misreads the TClonesArray's TStrings: ROOT's own reading is the reference.
    let by_root = expected("stlmembers.root.root.json");
    uproot["Events"]["branches"]["tags/tags.name"] =
        by_root["Events"]["branches"]["tags/tags.name"].clone();
    let checked = check_tree(&file, "Events", &uproot["Events"]);
    assert_eq!(checked, 23);
    assert_eq!(tree_dims(&file, "Events", "obj/grid[2][3]"), [2, 3]);
    let tree = file.tree("Events").expect("tree");
    for name in ["obj/label", "obj/tag", "ts"] {
        assert_eq!(tree.column(name).expect(name).kind, ColumnKind::String);
    }
    for name in ["obj/names", "vs", "vts", "tags/tags.name", "tags/tags.note"] {
        assert_eq!(tree.column(name).expect(name).kind, ColumnKind::Strings(1));
    }
    // `float* var; //[nvar]`: a jagged column; a fixed array of collection objects: a list of
    // arrays per entry.
    let var = tree.column("obj/var").expect("var");
    assert_eq!(var.kind, ColumnKind::Jagged(ScalarType::F32));
    let pos = tree.column("tags/tags.pos[3]").expect("pos");
    assert_eq!(pos.kind, ColumnKind::Nested(ScalarType::F32, 2));
    let vals = tree.column("tags/tags.vals").expect("vals");
    assert_eq!(vals.kind, ColumnKind::Nested(ScalarType::F32, 2));
    // The lists of a collection's objects are not counted by the collection's branch, which
    // counts lists, not characters or values.
    assert_eq!(tree.column("tags/tags.name").expect("name").counter, None);
    assert_eq!(vals.counter, None);
    let groups = tree.column("obj/groups").expect("groups");
    assert_eq!(groups.kind, ColumnKind::Nested(ScalarType::I32, 2));
}

/// `char*` members (a 32-bit length, then the characters) of split and unsplit objects and of
/// the objects of split and unsplit collections (empty strings and null pointers among them),
/// checked against uproot where it reads them and against ROOT's reading for the rest (uproot
/// 5.7 reads none of the members of unsplit objects or collections' objects); `char*` leaves
/// written without entry offsets, read by their length bytes when no string is empty and
/// refused when one is (ROOT writes no byte for an empty string).
#[test]
fn char_star_members_and_leaves_without_entry_offsets() {
    let file = RootFile::open(fixture("charstar.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let by_uproot = expected("charstar.root.json");
    assert_eq!(check_tree(&file, "Events", &by_uproot["Events"]), 10);
    assert_eq!(check_tree(&file, "Leaves", &by_uproot["Leaves"]), 1);
    let by_root = expected("charstar.root.root.json");
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 8);
    for (name, kind) in [
        ("chars/name", ColumnKind::String),
        ("charsu.name", ColumnKind::String),
        ("clones/clones.name", ColumnKind::Strings(1)),
        ("vchars/vchars.name", ColumnKind::Strings(1)),
        ("vcharsu.name", ColumnKind::Strings(1)),
    ] {
        let column = tree.column(name).expect(name);
        assert_eq!(column.kind, kind, "{name}");
        assert!(
            column.root_type.starts_with("char*"),
            "{name}: {}",
            column.root_type
        );
    }
    let leaves = file.tree("Leaves").expect("Leaves");
    let [gaps] = leaves.unsupported.as_slice() else {
        panic!("{:?}", leaves.unsupported)
    };
    assert_eq!(gaps.name, "gaps");
    assert!(
        gaps.reason.contains("writes nothing for an empty string"),
        "{}",
        gaps.reason
    );
}

/// `std::bitset<N>` as lists of N booleans, bit 0 first, as ROOT's collection proxy streams
/// them: top-level (of 8 and 70 bits, and vectors of them), as members of split and unsplit
/// objects and of the objects of split and unsplit (member-wise) collections, checked against
/// ROOT's reading (`test(i)`) and against uproot where it reads them.
#[test]
fn bitsets_as_lists_of_booleans() {
    let file = RootFile::open(fixture("bitset.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let by_root = expected("bitset.root.root.json");
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 17);
    let mut by_uproot = expected("bitset.root.json");
    // uproot reads the unsplit object as records: ROOT's reading checks its members.
    by_uproot["Events"]["branches"]
        .as_object_mut()
        .expect("branches")
        .remove("bitsu")
        .expect("bitsu");
    assert_eq!(check_tree(&file, "Events", &by_uproot["Events"]), 13);
    for (name, kind) in [
        ("b8", ColumnKind::Jagged(ScalarType::Bool)),
        ("b70", ColumnKind::Jagged(ScalarType::Bool)),
        ("vb", ColumnKind::Nested(ScalarType::Bool, 2)),
        ("bits/flags", ColumnKind::Jagged(ScalarType::Bool)),
        ("bits/many", ColumnKind::Nested(ScalarType::Bool, 2)),
        ("bitsu.flags", ColumnKind::Jagged(ScalarType::Bool)),
        ("vbits/vbits.flags", ColumnKind::Nested(ScalarType::Bool, 2)),
        ("vbitsu.many", ColumnKind::Nested(ScalarType::Bool, 3)),
        (
            "clones/clones.flags",
            ColumnKind::Nested(ScalarType::Bool, 2),
        ),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
}

/// A bitset branch whose first basket is not streamed as a bitset (some writers, ROOT 6.08
/// among them, wrote a split object's bitset member as no bytes at all; here the first entry's
/// byte-count flag is cleared) is refused with the reason when the tree is opened, and the other
/// branches still read.
#[test]
fn bitsets_streamed_otherwise_are_refused() {
    let mut data = std::fs::read(fixture("bitset.root")).expect("read");
    // b8's first entry (bitset<8>(5)): byte count 14, version 10, size 8, bits 1 0 1 0 0 0 0 0.
    let first = [0x40, 0, 0, 14, 0, 10, 0, 0, 0, 8, 1, 0, 1, 0, 0, 0, 0, 0];
    let at = data
        .windows(first.len())
        .position(|w| w == first)
        .expect("b8's first entry (bitset.root is uncompressed)");
    data[at] = 0;
    let file = RootFile::from_source(data).expect("open");
    let tree = file.tree("Events").expect("tree");
    let [b8] = tree.unsupported.as_slice() else {
        panic!("{:?}", tree.unsupported)
    };
    assert_eq!(b8.name, "b8");
    assert!(
        b8.reason
            .contains("does not read as a std::bitset is streamed"),
        "{}",
        b8.reason
    );
    for column in &tree.columns {
        file.read_column(column, 0..tree.entries)
            .unwrap_or_else(|e| panic!("{}: {e}", column.name));
    }
}

/// `T* x; //[n]` arrays of objects (one object header, then the objects, each with its header)
/// in unsplit objects, as the branch of a split object's member, in the objects of an unsplit
/// vector written member-wise (one header before every object's arrays) and in those of split
/// collections (one header, then each object's array, as long as its counter member's branch
/// says), one list more than their owner, checked against ROOT's reading (uproot 5.7 reads none
/// of them). An array of a class whose streamer info lists no members is refused.
#[test]
fn arrays_of_objects_behind_pointers() {
    let file = RootFile::open(fixture("loops.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let by_root = expected("loops.root.root.json");
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 24);
    let mut by_uproot = expected("loops.root.json");
    let branches = by_uproot["Events"]["branches"]
        .as_object_mut()
        .expect("branches");
    // Records: "loopu" is checked by ROOT's reading, "bare" is refused.
    for record in ["loopu", "bare"] {
        branches.remove(record).expect(record);
    }
    assert_eq!(check_tree(&file, "Events", &by_uproot["Events"]), 7);
    for (name, kind) in [
        ("loopu.hits.id", ColumnKind::Jagged(ScalarType::I32)),
        ("loop/hits.w", ColumnKind::Nested(ScalarType::F32, 2)),
        ("vloopu.hits.e", ColumnKind::Nested(ScalarType::F32, 2)),
        ("vloopu.hits.w", ColumnKind::Nested(ScalarType::F32, 3)),
        (
            "vloop/vloop.hits.id",
            ColumnKind::Nested(ScalarType::I32, 2),
        ),
        ("tloop/tloop.hits.w", ColumnKind::Nested(ScalarType::F32, 3)),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
    let [bare] = tree.unsupported.as_slice() else {
        panic!("{:?}", tree.unsupported)
    };
    assert_eq!(bare.name, "bare");
    assert!(
        bare.reason
            .contains("a class whose streamer info lists no members"),
        "{}",
        bare.reason
    );
}

fn tree_dims(file: &RootFile, tree: &str, column: &str) -> Vec<usize> {
    let tree = file.tree(tree).expect("tree");
    tree.column(column).expect(column).dims.clone()
}

/// Multi-dimensional fixed arrays keep their dimensions: a leaf `idx[2][2]/S` (from its title),
/// and the member arrays of split and unsplit objects (from the streamer info).
#[test]
fn fixed_arrays_keep_their_dimensions() {
    let file = RootFile::open(fixture("kinds_505.root")).expect("open");
    assert_eq!(tree_dims(&file, "Events", "idx"), [2, 2]);
    assert_eq!(tree_dims(&file, "Events", "pos"), Vec::<usize>::new());
}

/// Objects of varying size through the interpreter: unsplit objects holding vectors, strings,
/// vectors of objects written member-wise and vectors of vectors of a class without ClassDef
/// (version 0 and checksum headers, as xAOD's ElementLinks), an unsplit vector of objects
/// (checked against ROOT's reading; uproot 5.7 reads none of them), and the split members of the
/// same class (checked against uproot), one list (of lists) per member.
#[test]
fn objects_of_varying_size_through_the_interpreter() {
    let file = RootFile::open(fixture("interp.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let n = tree.entries as usize;
    let by_root = expected("interp.root.root.json");
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 14);
    let mut uproot = expected("interp.root.json");
    let links = uproot["Events"]["branches"]
        .as_object_mut()
        .expect("branches")
        .remove("evs/links")
        .expect("links");
    let checked = check_tree(&file, "Events", &uproot["Events"]);
    assert_eq!(checked, 10);
    // The links, member by member: lists of lists of the records' fields.
    for member in ["key", "index"] {
        let column = tree.column(&format!("evs/links.{member}")).expect(member);
        assert_eq!(column.kind, ColumnKind::Nested(ScalarType::U32, 2));
        let data = file.read_column(column, 0..tree.entries).expect("read");
        let want: Vec<Value> = links
            .as_array()
            .expect("entries")
            .iter()
            .map(|entry| {
                Value::Array(
                    entry
                        .as_array()
                        .expect("lists")
                        .iter()
                        .map(|list| {
                            Value::Array(
                                list.as_array()
                                    .expect("records")
                                    .iter()
                                    .map(|r| r[member].clone())
                                    .collect(),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        assert_eq!(entries(&data, column.kind, n), want, "{member}");
    }
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
}

/// Maps, sets and lists of lists of strings, top-level and as members, at split levels 0, 1
/// and 99, checked against ROOT's own reading (uproot 5.7 reads 43 of these 65 branches and
/// agrees with ROOT on them): split maps as a count and two jagged halves (`mid/mid.first`),
/// unsplit maps (written member-wise: all keys, then all values) as two jagged columns
/// (`mid0.first`, `mid0.second`), sets as the vectors they are streamed as, and
/// `std::vector<std::vector<std::string>>` as lists of lists of strings.
#[test]
fn maps_sets_and_lists_of_lists_of_strings() {
    let file = RootFile::open(fixture("maps.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let mut by_root = expected("maps.root.root.json");
    let branches = by_root["Events"]["branches"]
        .as_object_mut()
        .expect("branches");
    // ROOT's reading of an unsplit map is a list of [key, value] pairs per entry: its two
    // columns are the keys and the values.
    let pairs: Vec<String> = branches
        .keys()
        .filter(|name| tree.column(&format!("{name}.first")).is_some())
        .cloned()
        .collect();
    assert_eq!(pairs.len(), 3 + 6 + 6, "{pairs:?}");
    for name in pairs {
        let entries = branches.remove(&name).expect("listed");
        for (k, half) in ["first", "second"].into_iter().enumerate() {
            let column: Vec<Value> = entries
                .as_array()
                .expect("entries")
                .iter()
                .map(|pairs| {
                    Value::Array(
                        pairs
                            .as_array()
                            .expect("pairs")
                            .iter()
                            .map(|p| p[k].clone())
                            .collect(),
                    )
                })
                .collect();
            branches.insert(format!("{name}.{half}"), Value::Array(column));
        }
    }
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 80);
    for (name, kind) in [
        ("mid0.first", ColumnKind::Jagged(ScalarType::I32)),
        ("msf0.first", ColumnKind::Strings(1)),
        ("msvf0.second", ColumnKind::Nested(ScalarType::F32, 2)),
        ("si0", ColumnKind::Jagged(ScalarType::I32)),
        ("ss", ColumnKind::Strings(1)),
        ("vvs", ColumnKind::Strings(2)),
        ("obju.vvs", ColumnKind::Strings(2)),
        ("obj1/mis.second", ColumnKind::Strings(1)),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
}

/// Geant4's g4tools writes ROOT 4's layout (TTree 5, TBranch 8, TBranchElement 1, a TList of
/// streamer infos of version 4): read through the file's own streamer infos, every value equal
/// to uproot's (and ROOT's) reading, compressed and not, baskets in keys and in the record
/// (a last basket left empty after `fMaxBaskets` grew; a tree never filled).
#[test]
fn geant4_g4tools_files_in_the_root_4_layout() {
    for name in ["g4tools.root", "g4tools_nozip.root"] {
        let file = RootFile::open(fixture(name)).expect("open");
        let expected = expected(&format!("{name}.json"));
        let mut checked = 0;
        for (tree, want) in expected.as_object().expect("trees") {
            checked += check_tree(&file, tree, want);
        }
        assert_eq!(
            checked,
            if name == "g4tools.root" { 8 } else { 11 },
            "{name}"
        );
    }
    // Geant4's row-wise ntuple: a leaf-list whose array leaf is counted by a leaf of the same
    // branch (rows of varying size, found by the baskets' entry offsets), checked against ROOT's
    // reading (uproot 5.7 does not read it).
    let file = RootFile::open(fixture("g4tools_nozip.root")).expect("open");
    let by_root = expected("g4tools_nozip.root.root.json");
    assert_eq!(check_tree(&file, "rowwise", &by_root["rowwise"]), 4);
    let tree = file.tree("rowwise").expect("rowwise");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let vx = tree.column("row_wise_branch/vx").expect("vx");
    assert_eq!(vx.kind, ColumnKind::Jagged(ScalarType::F32));
    assert_eq!(vx.counter.as_deref(), Some("row_wise_branch/vx_count"));
}

/// Maps whose values are objects or TStrings (unsplit: `m.second.x` for each member `x`; split:
/// `m/m.second.x`), and `std::vector<std::string>` members of the objects of split collections
/// (a `std::vector<Class>` and a `TClonesArray`: lists of lists of strings), checked against
/// ROOT's reading (uproot 5.7 fails on three of them). The TVector3 values of a split map (each
/// with its header, back to back) are a column per member.
#[test]
fn maps_of_objects_and_vectors_of_strings_in_collections() {
    let file = RootFile::open(fixture("objmaps.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let mut by_root = expected("objmaps.root.root.json");
    let branches = by_root["Events"]["branches"]
        .as_object_mut()
        .expect("branches");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    // Unsplit maps: [key, value] pairs become the keys' column and the values' (each member's,
    // for objects); split maps' object values: one column per member.
    let names: Vec<String> = branches.keys().cloned().collect();
    for name in names {
        if tree.column(&name).is_some() {
            continue;
        }
        let entries = branches.remove(&name).expect("listed");
        let entries = entries.as_array().expect("entries");
        // (column, the pair's half for a map (None: the object itself), the member).
        let mut picks: Vec<(String, Option<usize>, Option<&str>)> = Vec::new();
        if tree.column(&format!("{name}.first")).is_some() {
            picks.push((format!("{name}.first"), Some(0), None));
            if tree.column(&format!("{name}.second")).is_some() {
                picks.push((format!("{name}.second"), Some(1), None));
            }
            for member in ["x", "y", "k", "fX", "fY", "fZ"] {
                let column = format!("{name}.second.{member}");
                if tree.column(&column).is_some() {
                    picks.push((column, Some(1), Some(member)));
                }
            }
        } else {
            for member in ["x", "y", "k", "fX", "fY", "fZ"] {
                let column = format!("{name}.{member}");
                if tree.column(&column).is_some() {
                    picks.push((column, None, Some(member)));
                }
            }
        }
        for (column, half, member) in picks {
            let pick = |item: &Value| {
                let item = half.map_or(item, |k| &item[k]);
                member.map_or_else(|| item.clone(), |m| item[m].clone())
            };
            let values: Vec<Value> = entries
                .iter()
                .map(|e| Value::Array(e.as_array().expect("list").iter().map(pick).collect()))
                .collect();
            branches.insert(column, Value::Array(values));
        }
    }
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 27);
    for name in ["tags/tags.words", "tca/tca.words"] {
        assert_eq!(tree.column(name).expect(name).kind, ColumnKind::Strings(2));
    }
}

/// `T* x; //[n]` arrays, checked against ROOT's reading (uproot 5.7 reads none of them): in an
/// unsplit object ("hit", "ev": a list per entry) and in the objects of an unsplit vector
/// written member-wise (every object's counter before every object's array), and as members of
/// a split TClonesArray and a split `std::vector` (each object's length in its sibling branch):
/// a list of lists per entry; arrays of length 0 are written as a single 0 byte, and two arrays
/// share one counter. Object members ROOT does not split further (TVector3, TLorentzVector) of a
/// split object and of split collections' objects: a column per member, through the
/// interpreter.
#[test]
fn pointer_arrays_in_objects_and_collections() {
    let file = RootFile::open(fixture("pointers.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    assert!(tree.unsupported.is_empty(), "{:?}", tree.unsupported);
    let by_root = expected("pointers.root.root.json");
    assert_eq!(check_tree(&file, "Events", &by_root["Events"]), 42);
    for (name, kind) in [
        ("ev.v", ColumnKind::Jagged(ScalarType::F32)),
        ("ev.hits.x", ColumnKind::Nested(ScalarType::F32, 2)),
        ("hit.d", ColumnKind::Jagged(ScalarType::F64)),
        ("clones/clones.x", ColumnKind::Nested(ScalarType::F32, 2)),
        ("vhits/vhits.d", ColumnKind::Nested(ScalarType::F64, 2)),
        ("vev/origin.fX", ColumnKind::Scalar(ScalarType::F64)),
        ("vtxs/vtxs.p4.fE", ColumnKind::Jagged(ScalarType::F64)),
    ] {
        assert_eq!(tree.column(name).expect(name).kind, kind, "{name}");
    }
    // uproot agrees on what it reads as columns: the counters and TObject members of the split
    // objects (its TVector3 records are ROOT's values above, member by member).
    let mut uproot = expected("pointers.root.json");
    let branches = uproot["Events"]["branches"]
        .as_object_mut()
        .expect("branches");
    let records: Vec<String> = branches
        .keys()
        .filter(|name| tree.column(name).is_none())
        .cloned()
        .collect();
    assert_eq!(records, ["vev/origin", "vev/vtx/vtx.pos", "vtxs/vtxs.pos"]);
    for name in records {
        branches.remove(&name);
    }
    assert_eq!(check_tree(&file, "Events", &uproot["Events"]), 16);
}
