//! `evtc index`, `evtc dump --event`, and the event index a conversion keeps from a ROOT
//! TTreeIndex.

use super::*;

#[test]
fn a_root_tree_index_is_kept_by_convert_with_roots_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("indexed.evtc");
    let o = out.display().to_string();
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "convert",
        &fixture("ttree_index.root"),
        &o,
        "--json",
    ])))
    .expect("JSON");
    let trees = report["trees"].as_array().expect("trees");
    assert_eq!(trees[0]["event_index"], serde_json::json!(["run", "event"]));
    assert_eq!(trees[1]["event_index"], Value::Null);
    assert!(
        trees[1]["index_dropped"]
            .as_str()
            .expect("a reason")
            .contains("(run*10, event%7) is not kept")
    );
    assert_eq!(trees[2]["index_dropped"], Value::Null);
    // ROOT's rows (TTreeIndex::GetIndexValues, GetIndexValuesMinor, GetIndex), sorted as evtc
    // sorts them (ROOT leaves the order of a duplicate key's entries open).
    let by_root: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("ttree_index.root.root.json")).expect("json"),
    )
    .expect("JSON");
    let mut rows: Vec<(i64, i64, u64)> = by_root["Events"]["index"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r[0].as_i64().expect("major"),
                r[1].as_i64().expect("minor"),
                r[2].as_u64().expect("entry"),
            )
        })
        .collect();
    rows.sort_unstable();
    let file = evtc_format::FileReader::open(&out).expect("open");
    let index = file
        .tree("Events")
        .expect("tree")
        .event_index()
        .expect("index")
        .expect("an index");
    let ours: Vec<(i64, i64, u64)> = index
        .rows_in_order()
        .expect("rows")
        .into_iter()
        .map(|(a, b, e)| (a as i64, b as i64, e))
        .collect();
    assert_eq!(ours, rows);
    // Entry 149 and 150 share their key; dump shows both, and says so.
    let shown = evtc(&["dump", &o, "--event", "2:131017", "--format", "json"]);
    let rows: Value = serde_json::from_str(&ok(&shown)).expect("JSON");
    assert_eq!(rows.as_array().expect("rows").len(), 2);
    assert_eq!(rows[0]["x"], 74.5);
    assert!(String::from_utf8_lossy(&shown.stderr).contains("is held by 2 entries"));
}

#[test]
fn evtc_index_then_dump_by_event() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("nano.evtc");
    let f = file.display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "3000", &f,
    ]));
    fails(
        &evtc(&["dump", &f, "--event", "1:1000003"]),
        "has no event index; build one with `evtc index",
        None,
    );
    let report: Value =
        serde_json::from_str(&ok(&evtc(&["index", &f, "--by", "run,event", "--json"])))
            .expect("JSON");
    assert_eq!(report["rows"], 3000);
    assert_eq!(report["duplicate_keys"], 0);
    assert!(ok(&evtc(&["verify", "--deep", &f])).contains("OK"));
    assert!(ok(&evtc(&["inspect", &f])).contains("event index (run, event)"));
    let all = dump_json(&file);
    let rows: Value = serde_json::from_str(&ok(&evtc(&[
        "dump",
        &f,
        "--event",
        "1:1000003",
        "--event",
        "1:1000000",
        "--format",
        "json",
    ])))
    .expect("JSON");
    assert_eq!(rows[0], all[1]);
    assert_eq!(rows[1], all[0]);
    fails(
        &evtc(&["dump", &f, "--event", "1:5"]),
        "no entry with (run, event) = (1, 5)",
        None,
    );
    fails(&evtc(&["dump", &f, "--event", "1-5"]), "MAJOR:MINOR", None);
    fails(
        &evtc(&["index", &f, "--by", "run"]),
        "not two branch names separated by a comma",
        None,
    );
    fails(
        &evtc(&["index", &f, "--by", "run,MET_pt"]),
        "\"MET_pt\" is f32, not an integer scalar",
        None,
    );
    fails(
        &evtc(&["index", &f, "--by", "run,nope"]),
        "has no branch \"nope\"",
        None,
    );
    // A failed index leaves the file as it was.
    assert_eq!(dump_json(&file), all);
}
