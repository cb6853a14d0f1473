//! Files that grow: `evtc convert --append`, `evtc add-columns`, and what a killed update
//! leaves (the file's last version, nothing else).

use super::*;

/// Writes the NanoAOD-like sample of `events` events to `dir/name`; returns its path.
fn nano(dir: &Path, name: &str, events: u64) -> PathBuf {
    let path = dir.join(name);
    let p = path.display().to_string();
    ok(&evtc(&[
        "generate",
        "--kind",
        "nano",
        "--events",
        &events.to_string(),
        &p,
    ]));
    path
}

fn entries(file: &Path) -> u64 {
    let out = ok(&evtc(&["inspect", &file.display().to_string(), "--json"]));
    let v: Value = serde_json::from_str(&out).expect("JSON");
    v["trees"][0]["entries"].as_u64().expect("entries")
}

#[test]
fn convert_append_adds_entries_in_place_and_refuses_other_branches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = nano(dir.path(), "a.evtc", 300);
    let b = nano(dir.path(), "b.evtc", 200);
    let out = dir.path().join("out.evtc");
    std::fs::copy(&a, &out).expect("copy");
    let o = out.display().to_string();
    let before = std::fs::read(&out).expect("read");
    let text = ok(&evtc(&[
        "convert",
        &b.display().to_string(),
        &o,
        "--append",
    ]));
    assert!(text.starts_with("appended"), "{text}");
    assert!(std::fs::read(&out).expect("read").starts_with(&before));
    ok(&evtc(&["verify", "--deep", &o]));
    let all = dump_json(&out);
    let (first, second) = (dump_json(&a), dump_json(&b));
    assert_eq!(all.len(), 500);
    assert_eq!(all[..300], first[..]);
    assert_eq!(all[300..], second[..]);
    // A tree the file lacks goes in as a new tree.
    let ints = dir.path().join("ints.evtc");
    ok(&evtc(&[
        "generate",
        "--kind",
        "ints",
        "--events",
        "50",
        &ints.display().to_string(),
    ]));
    ok(&evtc(&[
        "convert",
        &ints.display().to_string(),
        &o,
        "--append",
    ]));
    let v: Value = serde_json::from_str(&ok(&evtc(&["inspect", &o, "--json"]))).expect("JSON");
    assert_eq!(v["trees"].as_array().expect("trees").len(), 2);
    // Other branches: refused by name, the file unchanged.
    let grown = std::fs::read(&out).expect("read");
    let failed = evtc(&[
        "convert",
        &b.display().to_string(),
        &o,
        "--append",
        "--branches",
        "Muon_*",
    ]);
    fails(&failed, "the input lacks run, luminosityBlock", None);
    let failed = evtc(&["convert", &fixture("kinds_505.root"), &o, "--append"]);
    fails(&failed, "nMuon is u32 in the file, i32 in the input", None);
    assert_eq!(std::fs::read(&out).expect("read"), grown);
    // No file to append to.
    let missing = dir.path().join("missing.evtc");
    let failed = evtc(&[
        "convert",
        &b.display().to_string(),
        &missing.display().to_string(),
        "--append",
    ]);
    fails(&failed, "missing.evtc", Some(&missing));
}

#[test]
fn add_columns_adds_another_files_branches_without_rewriting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = nano(dir.path(), "a.evtc", 2500);
    let s = a.display().to_string();
    let file = dir.path().join("jets.evtc");
    let scores = dir.path().join("scores.evtc");
    let (f, sc) = (file.display().to_string(), scores.display().to_string());
    ok(&evtc(&["skim", &s, &f, "--branches", "Jet_*", "--quiet"]));
    ok(&evtc(&[
        "skim",
        &s,
        &sc,
        "--branches",
        "MET_*",
        "--branches",
        "Muon_pt",
        "--quiet",
    ]));
    let before = std::fs::read(&file).expect("read");
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "add-columns",
        &f,
        "--from",
        &sc,
        "--json",
        "--rac",
        "--codec",
        "lz4",
    ])))
    .expect("JSON");
    assert_eq!(report["entries"], 2500);
    let added: Vec<&str> = report["added"]
        .as_array()
        .expect("added")
        .iter()
        .map(|v| v.as_str().expect("name"))
        .collect();
    assert_eq!(
        added,
        ["nMuon", "Muon_pt", "MET_pt", "MET_phi", "MET_sumEt"]
    );
    assert!(std::fs::read(&file).expect("read").starts_with(&before));
    ok(&evtc(&["verify", "--deep", &f]));
    // The added branches hold the original's values, entry by entry.
    let out = ok(&evtc(&[
        "dump",
        &f,
        "--branches",
        "MET_pt",
        "--branches",
        "Muon_pt",
        "--format",
        "json",
    ]));
    let orig = ok(&evtc(&[
        "dump",
        &s,
        "--branches",
        "MET_pt",
        "--branches",
        "Muon_pt",
        "--format",
        "json",
    ]));
    assert_eq!(out, orig);
    let v: Value = serde_json::from_str(&ok(&evtc(&["inspect", &f, "--json"]))).expect("JSON");
    let met = v["trees"][0]["branches"]
        .as_array()
        .expect("branches")
        .iter()
        .find(|b| b["name"] == "MET_pt")
        .expect("MET_pt")
        .clone();
    assert_eq!(met["rac"], true);
    // Again: the tree has them now.
    let failed = evtc(&["add-columns", &f, "--from", &sc]);
    fails(&failed, "has branches nMuon, Muon_pt, MET_pt", None);
    // A tree of another length.
    let short = nano(dir.path(), "short.evtc", 100);
    let failed = evtc(&["add-columns", &f, "--from", &short.display().to_string()]);
    fails(&failed, "has 2500 entries", None);
}

#[test]
fn a_killed_append_leaves_the_last_version_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = nano(dir.path(), "big.evtc", 60_000);
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("mkdir");
    let file = work.join("f.evtc");
    let f = file.display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "1000", &f,
    ]));
    // How long an append takes here, to kill it at times spread over it.
    let started = std::time::Instant::now();
    // `evtc convert BIG F --append`, one thread, running.
    let append = || {
        Command::new(env!("CARGO_BIN_EXE_evtc"))
            .args([
                "convert",
                &big.display().to_string(),
                &f,
                "--append",
                "--quiet",
            ])
            .args(["--threads", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn")
    };
    assert!(append().wait().expect("wait").success());
    let full = started.elapsed();
    let mut expected = 61_000;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut killed = 0;
    for _ in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = full.mul_f64((seed % 1000) as f64 / 1000.0);
        let mut child = append();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let status = child.wait().expect("wait");
        if !status.success() {
            killed += 1;
        }
        let now = entries(&file);
        if status.success() {
            expected += 60_000;
        } else if now == expected + 60_000 {
            // Killed after the append was committed (its trailer written), before it exited.
            expected = now;
        }
        // The file is the version before the append or the one after it, never between.
        assert_eq!(now, expected, "after a kill at {delay:?}");
        let verify = ok(&evtc(&["verify", &f]));
        assert!(verify.contains(": OK"), "{verify}");
        let names: Vec<_> = std::fs::read_dir(&work)
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["f.evtc"], "something was left behind");
    }
    assert!(killed >= 6, "only {killed} of 12 appends were killed");
    // A second writer while one appends is refused.
    let mut child = append();
    std::thread::sleep(full / 3);
    let second = evtc(&[
        "convert",
        &big.display().to_string(),
        &f,
        "--append",
        "--quiet",
    ]);
    let first = child.wait().expect("wait");
    assert!(first.success());
    fails(&second, "another writer is updating this file", None);
    assert_eq!(entries(&file), expected + 60_000);
}
