//! `evtc skim`: entry lists, selections and branch globs, the JSON report, and errors.

use super::*;

#[test]
fn skims_by_list_and_selection_keep_those_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("nano.evtc");
    let i = input.display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "5000", &i,
    ]));
    let rows = dump_json(&input);
    // An entry list: numbers and ranges, in any order.
    let list = dir.path().join("entries.txt");
    std::fs::write(&list, "# kept\n4000..4003\n7\n\n12\n7\n").expect("list");
    let out = dir.path().join("listed.evtc");
    let o = out.display().to_string();
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "skim",
        &i,
        &o,
        "--entries",
        &list.display().to_string(),
        "--json",
    ])))
    .expect("JSON");
    assert_eq!(report["entries"], 5);
    let kept = dump_json(&out);
    for (k, e) in [7usize, 12, 4000, 4001, 4002].iter().enumerate() {
        assert_eq!(kept[k], rows[*e], "entry {e}");
    }
    // A selection, with branches.
    let out = dir.path().join("where.evtc");
    let o = out.display().to_string();
    ok(&evtc(&[
        "skim",
        &i,
        &o,
        "--where",
        "nMuon >= 2 && any(Muon_pt > 30)",
        "--branches",
        "Muon_pt",
    ]));
    assert!(ok(&evtc(&["verify", "--deep", &o])).contains("OK"));
    let kept = dump_json(&out);
    let want: Vec<&Value> = rows
        .iter()
        .filter(|r| {
            r["nMuon"].as_u64().expect("n") >= 2
                && r["Muon_pt"]
                    .as_array()
                    .expect("pt")
                    .iter()
                    .any(|p| p.as_f64().expect("f") > 30.0)
        })
        .collect();
    assert_eq!(kept.len(), want.len());
    assert!(!kept.is_empty());
    for (k, w) in kept.iter().zip(&want) {
        assert_eq!(k["Muon_pt"], w["Muon_pt"]);
        assert_eq!(k["nMuon"], w["nMuon"]);
        assert!(k.get("MET_pt").is_none());
    }
}

#[test]
fn skim_errors_name_the_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("nano.evtc");
    let i = input.display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "100", &i,
    ]));
    let out = dir.path().join("out.evtc");
    let o = out.display().to_string();
    fails(
        &evtc(&["skim", &i, &o, "--where", "nMuon >"]),
        "at the end",
        Some(&out),
    );
    fails(
        &evtc(&["skim", &i, &o, "--where", "Muon_pt > 1"]),
        "any(), all() or count()",
        Some(&out),
    );
    fails(
        &evtc(&["skim", &i, &o, "--where", "nope > 1"]),
        "\"nope\"",
        Some(&out),
    );
    let list = dir.path().join("bad.txt");
    std::fs::write(&list, "1\nx\n").expect("list");
    fails(
        &evtc(&["skim", &i, &o, "--entries", &list.display().to_string()]),
        "line 2",
        Some(&out),
    );
    std::fs::write(&list, "100\n").expect("list");
    fails(
        &evtc(&["skim", &i, &o, "--entries", &list.display().to_string()]),
        "past its 100 entries",
        Some(&out),
    );
    fails(
        &evtc(&["skim", &fixture("kinds_505.root"), &o]),
        "is a ROOT file",
        Some(&out),
    );
}
