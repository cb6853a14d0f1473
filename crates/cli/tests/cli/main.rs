//! Runs the real `evtc` binary: every subcommand, every documented error, round trips.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn evtc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_evtc"))
        .args(args)
        .output()
        .expect("run evtc")
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn fixture(name: &str) -> String {
    repo(&format!("crates/root/tests/fixtures/{name}"))
        .display()
        .to_string()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "evtc failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

/// Exits non-zero with one `evtc: error:` line naming `needle`, and writes no output file.
fn fails(out: &Output, needle: &str, output: Option<&Path>) {
    assert!(!out.status.success(), "expected failure");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(needle),
        "stderr {err:?} does not name {needle:?}"
    );
    if let Some(path) = output {
        assert!(!path.exists(), "{} was left behind", path.display());
    }
}

fn dump_json(file: &Path) -> Vec<Value> {
    let out = evtc(&["dump", &file.display().to_string(), "--format", "json"]);
    serde_json::from_str::<Value>(&ok(&out))
        .expect("JSON")
        .as_array()
        .expect("array")
        .clone()
}

fn flat(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items.iter().flat_map(flat).collect(),
        other => vec![other.clone()],
    }
}

#[test]
fn convert_root_fixture_then_dump_matches_uproot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("kinds.json")).expect("kinds.json"))
            .expect("JSON");
    for setting in ["0", "101", "207", "404", "505"] {
        let out = dir.path().join(format!("kinds_{setting}.evtc"));
        let input = fixture(&format!("kinds_{setting}.root"));
        let text = ok(&evtc(&[
            "convert",
            &input,
            &out.display().to_string(),
            "--rac",
            "--skip-unsupported",
        ]));
        assert!(!text.contains("skipped"), "{text}");
        let rows = dump_json(&out);
        let branches = expected["Events"]["branches"]
            .as_object()
            .expect("branches");
        assert_eq!(rows.len(), 2000);
        for (name, values) in branches {
            for (e, want) in values.as_array().expect("entries").iter().enumerate() {
                let got = &rows[e][name];
                let (got, want) = match name.as_str() {
                    // 2-d arrays come out flat; lists of lists nested (vvf and its vvf/sizes).
                    "idx" => (flat(got), flat(want)),
                    _ => (vec![got.clone()], vec![want.clone()]),
                };
                assert_eq!(got, want, "{setting} {name} entry {e}");
            }
        }
        // The sizes branch is folded into vvf, not listed on its own.
        assert!(rows.iter().all(|r| r.get("vvf/sizes").is_none()));
    }
}

#[test]
fn recompression_keeps_every_value_for_every_codec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("source.evtc");
    ok(&evtc(&[
        "convert",
        &fixture("kinds_505.root"),
        &source.display().to_string(),
        "--skip-unsupported",
        "-q",
    ]));
    let want = dump_json(&source);
    for codec in [
        "none", "lz4", "lz4hc:9", "zlib:6", "lzma:1", "zstd:5", "505",
    ] {
        let out = dir
            .path()
            .join(format!("re_{}.evtc", codec.replace(':', "_")));
        ok(&evtc(&[
            "convert",
            &source.display().to_string(),
            &out.display().to_string(),
            "--codec",
            codec,
            "--offsets",
            "offsets",
            "--precondition",
            "bitshuffle",
            "--rac",
            "auto",
            "--branch-codec",
            "Muon_*=lz4",
            "--basket-size",
            "16KiB",
            "--autoflush",
            "500",
        ]));
        assert_eq!(dump_json(&out), want, "{codec}");
        let report: Value = serde_json::from_str(&ok(&evtc(&[
            "inspect",
            "--json",
            &out.display().to_string(),
        ])))
        .expect("JSON");
        let branches = report["trees"][0]["branches"].as_array().expect("branches");
        let codec_of = |name: &str| {
            branches.iter().find(|b| b["name"] == name).expect("branch")["codec"].clone()
        };
        assert_eq!(codec_of("Muon_pt"), "lz4");
        assert_eq!(
            report["trees"][0]["clusters"], 4,
            "--autoflush 500 on 2000 entries"
        );
    }
}

#[test]
fn inspect_json_is_parseable_and_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nano.evtc");
    ok(&evtc(&[
        "convert",
        &repo("data/nano_sample.root").display().to_string(),
        &out.display().to_string(),
        "--codec",
        "zstd:5",
        "--rac",
        "-q",
    ]));
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "inspect",
        "--json",
        "--baskets",
        &out.display().to_string(),
    ])))
    .expect("JSON");
    assert_eq!(report["format"], "evtc");
    let tree = &report["trees"][0];
    assert_eq!(tree["name"], "Events");
    assert_eq!(tree["entries"], 20000);
    let branches = tree["branches"].as_array().expect("branches");
    assert_eq!(branches.len(), 114);
    let pt = branches
        .iter()
        .find(|b| b["name"] == "Muon_pt")
        .expect("Muon_pt");
    assert_eq!(pt["type"], "f32[]");
    assert_eq!(pt["counter"], "nMuon");
    assert_eq!(pt["codec"], "zstd:5");
    // With RAC too, the entries' sizes come from nMuon (whose units the reader keeps decoded),
    // not from sizes stored again in each unit.
    assert_eq!(pt["boundaries"], "none");
    assert_eq!(pt["rac"], true);
    let baskets = pt["basket_list"].as_array().expect("basket list");
    assert_eq!(baskets.len() as u64, pt["baskets"].as_u64().expect("count"));
    let stored: u64 = branches
        .iter()
        .map(|b| b["stored_bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(stored, tree["stored_bytes"].as_u64().expect("total"));
    // ROOT files too, with the branches they cannot import.
    let root: Value =
        serde_json::from_str(&ok(&evtc(&["inspect", "--json", &fixture("partial.root")])))
            .expect("JSON");
    assert_eq!(root["format"], "root");
    assert_eq!(root["trees"][0]["unsupported"][0]["name"], "b");
    assert_eq!(root["trees"][0]["unsupported"][0]["class"], "Int_t");
}

#[test]
fn verify_and_deep_verify_locate_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("k.evtc");
    ok(&evtc(&[
        "generate",
        "--kind",
        "nano",
        "--events",
        "3000",
        &out.display().to_string(),
    ]));
    let text = ok(&evtc(&["verify", &out.display().to_string()]));
    assert!(text.contains("OK"), "{text}");
    ok(&evtc(&["verify", "--deep", &out.display().to_string()]));
    let mut bytes = std::fs::read(&out).expect("read");
    let middle = bytes.len() / 3;
    bytes[middle] ^= 0x5a;
    let bad = dir.path().join("bad.evtc");
    std::fs::write(&bad, &bytes).expect("write");
    let result = evtc(&["verify", &bad.display().to_string()]);
    assert!(!result.status.success());
    let text = String::from_utf8_lossy(&result.stdout);
    assert!(
        text.contains("FAILED") && text.contains("branch") && text.contains("offset"),
        "{text}"
    );
}

#[test]
fn dump_formats_and_ranges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("e.evtc");
    ok(&evtc(&[
        "convert",
        &fixture("embedded.root"),
        &out.display().to_string(),
        "--rac",
        "-q",
    ]));
    let path = out.display().to_string();
    let table = ok(&evtc(&[
        "dump",
        &path,
        "--branches",
        "x,n",
        "--branches",
        "v",
        "--entries",
        "2..4",
    ]));
    assert_eq!(
        table,
        "entry  x  n  v\n2      6  2  [2, 2.25]\n3      9  3  [3, 3.25, 3.5]\n"
    );
    let csv = ok(&evtc(&[
        "dump",
        &path,
        "--branches",
        "x,v,s",
        "--entries",
        "3..4",
        "--format",
        "csv",
    ]));
    assert_eq!(csv, "entry,x,v,s\n3,9,\"[3, 3.25, 3.5]\",ddd\n");
    let json: Value = serde_json::from_str(&ok(&evtc(&[
        "dump",
        &path,
        "--branches",
        "v",
        "--entries",
        "..2",
        "--format",
        "json",
    ])))
    .expect("JSON");
    assert_eq!(json, serde_json::json!([{"v": []}, {"v": [1.0]}]));
    // A range past the end is cut at it, as Python's is; one that ends before it starts fails.
    let past = ok(&evtc(&["dump", &path, "--entries", "4000..6000"]));
    assert_eq!(past.lines().count(), 1, "only the header: {past}");
    fails(
        &evtc(&["dump", &path, "--entries", "5..2"]),
        "ends before it starts",
        None,
    );
    fails(&evtc(&["dump", &path, "--branches", "nope"]), "nope", None);
}

#[test]
fn broken_pipe_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("g.evtc");
    ok(&evtc(&[
        "generate",
        "--kind",
        "rac",
        "--events",
        "20000",
        &out.display().to_string(),
    ]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_evtc"))
        .args(["dump", &out.display().to_string(), "--tree", "TSmall"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).expect("some output");
    drop(stdout);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
}

/// A file written by the format 1.0 writer (commit ad6579f: RAC branches with boundaries `counts`
/// kept a counts block after the RAC payload) reads the same as the 1.1 file of the same data (the
/// units hold their entries' sizes). Made with the 1.0 binary:
/// `evtc generate --kind nano --events 300 --seed 7 g.evtc` then
/// `evtc convert g.evtc v1_0_rac_counts.evtc --rac on --offsets counts --rac-unit 256
/// --basket-size 2KiB --codec zstd:3`.
#[test]
fn format_1_0_rac_counts_files_still_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = repo("crates/cli/tests/fixtures/v1_0_rac_counts.evtc")
        .display()
        .to_string();
    let generated = dir.path().join("g.evtc").display().to_string();
    let new = dir.path().join("new.evtc").display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "300", "--seed", "7", &generated,
    ]));
    ok(&evtc(&[
        "convert",
        &generated,
        &new,
        "--rac",
        "on",
        "--offsets",
        "counts",
        "--rac-unit",
        "256",
        "--basket-size",
        "2KiB",
        "--codec",
        "zstd:3",
        "--quiet",
    ]));
    for file in [&old, &new] {
        ok(&evtc(&["verify", "--deep", file]));
    }
    // The generator has grown branches since (114 in all); the 77 of the old file keep their values.
    let report: Value =
        serde_json::from_str(&ok(&evtc(&["inspect", "--json", &old]))).expect("JSON");
    let names: Vec<&str> = report["trees"][0]["branches"]
        .as_array()
        .expect("branches")
        .iter()
        .map(|b| b["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names.len(), 77);
    let branches = names.join(",");
    let dump = |file: &str| {
        ok(&evtc(&[
            "dump",
            file,
            "--format",
            "json",
            "--branches",
            &branches,
        ]))
    };
    let (old_rows, new_rows) = (dump(&old), dump(&new));
    assert!(old_rows.len() > 10_000, "{}", old_rows.len());
    assert_eq!(old_rows, new_rows);
    // Entry reads (RAC cursors), not only bulk reads.
    let rows = |file: &str| {
        ok(&evtc(&[
            "dump",
            file,
            "--entries",
            "137..141",
            "--branches",
            &branches,
        ]))
    };
    assert_eq!(rows(&old), rows(&new));
    let bytes = |file: &str| std::fs::read(file).expect("read");
    assert_eq!(&bytes(&old)[8..12], &[1, 0, 0, 0], "version 1.0");
    let minor = evtc_format::layout::MINOR.to_le_bytes();
    assert_eq!(
        &bytes(&new)[8..12],
        &[1, 0, minor[0], minor[1]],
        "this version"
    );
}

#[test]
fn generate_every_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (kind, trees) in [
        ("nano", vec!["Events"]),
        ("rac", vec!["TFloat", "TSmall"]),
        ("ints", vec!["Ints"]),
    ] {
        let out = dir.path().join(format!("{kind}.evtc"));
        ok(&evtc(&[
            "generate",
            "--kind",
            kind,
            "--events",
            "1000",
            &out.display().to_string(),
        ]));
        let report: Value = serde_json::from_str(&ok(&evtc(&[
            "inspect",
            "--json",
            &out.display().to_string(),
        ])))
        .expect("JSON");
        let names: Vec<&str> = report["trees"]
            .as_array()
            .expect("trees")
            .iter()
            .map(|t| t["name"].as_str().expect("name"))
            .collect();
        assert_eq!(names, trees);
        assert!(
            report["trees"]
                .as_array()
                .expect("trees")
                .iter()
                .all(|t| t["entries"] == 1000)
        );
    }
}

#[test]
fn bad_input_fails_cleanly_without_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.evtc");
    let o = out.display().to_string();
    let sample = repo("data/nano_sample.root").display().to_string();
    fails(
        &evtc(&["convert", "/no/such/input.root", &o]),
        "does not exist",
        Some(&out),
    );
    fails(
        &evtc(&["convert", &sample, "/no/such/dir/out.evtc"]),
        "output directory",
        None,
    );
    fails(
        &evtc(&["convert", &sample, &o, "--codec", "brotli"]),
        "unknown codec",
        Some(&out),
    );
    fails(
        &evtc(&["convert", &sample, &o, "--branches", "Nope_*"]),
        "matches no branch",
        Some(&out),
    );
    fails(
        &evtc(&["convert", &sample, &o, "--tree", "Runs"]),
        "no tree \"Runs\"",
        Some(&out),
    );
    fails(
        &evtc(&["convert", &sample, &o, "--autoflush", "lots"]),
        "--autoflush",
        Some(&out),
    );
    fails(
        &evtc(&["convert", &fixture("partial.root"), &o]),
        "branch \"b\" (Int_t): the branch holds 10 entries",
        Some(&out),
    );
    fails(&evtc(&["convert", &sample, &sample]), "exists", None);
    fails(
        &evtc(&["convert", &sample, &sample, "--force"]),
        "onto itself",
        None,
    );
    // A corrupt input: a ROOT file cut in the middle of its baskets.
    let bytes = std::fs::read(&sample).expect("sample");
    let cut = dir.path().join("cut.root");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    fails(
        &evtc(&["convert", &cut.display().to_string(), &o]),
        "cut.root",
        Some(&out),
    );
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, b"not a file of any kind").expect("write");
    fails(
        &evtc(&["convert", &junk.display().to_string(), &o]),
        "neither a ROOT nor an evtc file",
        Some(&out),
    );
    fails(
        &evtc(&["dump", &sample]),
        "is a ROOT file: evtc dump shows evtc files",
        None,
    );
    fails(
        &evtc(&["inspect", &junk.display().to_string()]),
        "neither a ROOT nor an evtc file",
        None,
    );
    fails(
        &evtc(&["inspect", &junk.display().to_string()]),
        "junk.bin",
        None,
    );
    let out = evtc(&["convert", "/no/such/input.root", &o]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().count(),
        1,
        "one line"
    );
}

#[test]
fn inspect_table_snapshot() {
    let text = ok(&evtc(&["inspect", &fixture("layout.root")]));
    let text = text.replace(&fixture("layout.root"), "layout.root");
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/inspect_layout.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(snapshot.parent().expect("dir")).expect("mkdir");
        std::fs::write(&snapshot, &text).expect("write snapshot");
    }
    let want = std::fs::read_to_string(&snapshot).expect("snapshot (UPDATE_SNAPSHOTS=1 writes it)");
    assert_eq!(text, want);
}

#[test]
fn inspect_and_dump_snapshots_of_an_evtc_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("embedded.evtc");
    let path = out.display().to_string();
    ok(&evtc(&[
        "convert",
        &fixture("embedded.root"),
        &path,
        "--rac",
        "-q",
    ]));
    let inspect = ok(&evtc(&["inspect", &path])).replace(&path, "embedded.evtc");
    let dump = ok(&evtc(&["dump", &path, "--entries", "0..6"]));
    let text = format!(
        "$ evtc inspect embedded.evtc\n{inspect}$ evtc dump embedded.evtc --entries 0..6\n{dump}"
    );
    let snapshot =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/inspect_dump_embedded.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&snapshot, &text).expect("write snapshot");
    }
    let want = std::fs::read_to_string(&snapshot).expect("snapshot (UPDATE_SNAPSHOTS=1 writes it)");
    assert_eq!(text, want);
}

/// A fixture JSON value with NaN and infinities as dump spells them (the fixtures script writes
/// Python's repr, `nan`, `inf`, `-inf`).
fn spelled(v: &Value) -> Value {
    match v {
        Value::String(s) if s == "nan" => Value::from("NaN"),
        Value::String(s) if s == "inf" => Value::from("Infinity"),
        Value::String(s) if s == "-inf" => Value::from("-Infinity"),
        Value::Array(items) => Value::Array(items.iter().map(spelled).collect()),
        other => other.clone(),
    }
}

#[test]
fn ranged_floats_convert_as_root_reads_them_and_json_spells_nan_and_infinities() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("ranged.evtc");
    let text = ok(&evtc(&[
        "convert",
        &fixture("ranged.root"),
        &out.display().to_string(),
        "--skip-unsupported",
    ]));
    assert!(!text.contains("skipped"), "{text}");
    let root: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("ranged.root.root.json")).expect("ROOT's values"),
    )
    .expect("JSON");
    let rows = dump_json(&out);
    let mut specials = 0;
    for (name, values) in root["Events"]["branches"].as_object().expect("branches") {
        for (e, want) in values.as_array().expect("entries").iter().enumerate() {
            // The unsplit object: one column per member, `obju.d_pi`.
            if let Some(record) = want.as_object() {
                for (field, want) in record {
                    let got = &rows[e][format!("{name}.{field}")];
                    assert_eq!(flat(got), flat(&spelled(want)), "{name}.{field} entry {e}");
                }
                continue;
            }
            let want = spelled(want);
            let got = &rows[e][name];
            let (got, want) = (flat(got), flat(&want));
            specials += want.iter().filter(|v| v.is_string()).count();
            assert_eq!(got, want, "{name} entry {e}");
        }
    }
    assert!(specials > 0, "the fixture has NaN or infinities");
}

/// Converts a ROOT fixture with `--skip-unsupported` and compares every tree's dumped values
/// with the fixture's JSON, but for the branches `skipped` lists (which must be reported).
fn converts_like(root: &str, json: &str, skipped: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out.evtc");
    let o = out.display().to_string();
    let text = ok(&evtc(&[
        "convert",
        &fixture(root),
        &o,
        "--skip-unsupported",
    ]));
    for name in skipped {
        assert!(
            text.contains(&format!("/{name} (")),
            "{name} not reported: {text}"
        );
    }
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(json)).expect("JSON")).expect("JSON");
    for (tree, want) in expected.as_object().expect("trees") {
        let out = evtc(&["dump", &o, "--tree", tree, "--format", "json"]);
        let rows: Value = serde_json::from_str(&ok(&out)).expect("JSON");
        let rows = rows.as_array().expect("rows");
        assert_eq!(
            rows.len() as u64,
            want["entries"].as_u64().expect("entries"),
            "{tree}"
        );
        for (name, values) in want["branches"].as_object().expect("branches") {
            if skipped
                .iter()
                .any(|s| name == s || name.starts_with(&format!("{s}/")))
            {
                continue;
            }
            for (e, value) in values.as_array().expect("values").iter().enumerate() {
                assert_eq!(
                    flat(&rows[e][name]),
                    flat(&spelled(value)),
                    "{root} {tree}/{name} entry {e}"
                );
            }
        }
    }
}

#[test]
fn real_world_layouts_convert_with_the_values_written() {
    converts_like("offsets.root", "offsets.root.written.json", &["s"]);
    converts_like("dupnames.root", "dupnames.root.json", &[]);
    converts_like("vecclass.root", "vecclass.root.json", &[]);
    converts_like("rvec.root", "rvec.root.json", &[]);
    converts_like("nontree.root", "nontree.root.json", &[]);
    converts_like("embedded2.root", "embedded2.root.json", &[]);
    converts_like("partial.root", "partial.root.json", &["b", "late", "back"]);
}

mod advice;
mod chain;
mod hostile;
mod index;
mod merge;
mod overwrite;
mod skim;
mod update;

#[test]
fn rntuples_are_inspected_converted_and_advised_as_trees_are() {
    // inspect: the fields' columns, the physical columns with their encodings, the clusters.
    let text = ok(&evtc(&["inspect", &fixture("rntuple_altrep.root")]));
    let text = text.replace(&fixture("rntuple_altrep.root"), "rntuple_altrep.root");
    let snapshot =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/inspect_rntuple_altrep.txt");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&snapshot, &text).expect("write snapshot");
    }
    let want = std::fs::read_to_string(&snapshot).expect("snapshot (UPDATE_SNAPSHOTS=1 writes it)");
    assert_eq!(text, want);
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "inspect",
        "--json",
        &fixture("rntuple_mixed.root"),
    ])))
    .expect("JSON");
    let trees = report["trees"].as_array().expect("trees");
    let kinds: Vec<(&str, &str)> = trees
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["kind"].as_str().unwrap()))
        .collect();
    assert!(kinds.contains(&("Events;1", "TTree")), "{kinds:?}");
    assert!(kinds.contains(&("ntpl;1", "RNTuple")), "{kinds:?}");
    assert!(kinds.contains(&("sub/ntpl2;1", "RNTuple")), "{kinds:?}");
    let ntpl = trees.iter().find(|t| t["name"] == "ntpl;1").expect("ntpl");
    let columns = ntpl["ntuple"]["columns"]
        .as_array()
        .expect("physical columns");
    assert!(
        columns
            .iter()
            .all(|c| c["type"].is_string() && c["pages"].is_u64())
    );
    assert!(
        !ntpl["ntuple"]["clusters"]
            .as_array()
            .expect("clusters")
            .is_empty()
    );

    // convert --tree picks an RNTuple; its values come back through the evtc file.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nano.evtc");
    let path = out.display().to_string();
    ok(&evtc(&[
        "convert",
        &fixture("rntuple_nano.root"),
        &path,
        "--tree",
        "Events",
        "--quiet",
    ]));
    let report: Value =
        serde_json::from_str(&ok(&evtc(&["inspect", "--json", &path]))).expect("JSON");
    let branches = report["trees"][0]["branches"].as_array().expect("branches");
    let muon_pt = branches
        .iter()
        .find(|b| b["name"] == "Muon_pt")
        .expect("Muon_pt");
    assert_eq!(muon_pt["counter"], "nMuon");
    let rows = evtc(&[
        "dump",
        &path,
        "--branches",
        "nMuon,Muon_pt",
        "--format",
        "json",
    ]);
    let rows: Value = serde_json::from_str(&ok(&rows)).expect("JSON");
    let uproot: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("rntuple_nano.root.json")).expect("values"),
    )
    .expect("JSON");
    let want = &uproot["Events"]["branches"]["Muon_pt"];
    for (e, row) in rows.as_array().expect("rows").iter().enumerate() {
        assert_eq!(
            row["Muon_pt"].as_array().map(Vec::len),
            want[e].as_array().map(Vec::len)
        );
        assert_eq!(
            row["nMuon"],
            Value::from(want[e].as_array().expect("list").len())
        );
    }

    // advise measures an RNTuple's fields as it does a TTree's branches.
    let advice: Value = serde_json::from_str(&ok(&evtc(&[
        "advise",
        &fixture("rntuple_kinds_505.root"),
        "--json",
        "--codecs",
        "lz4,zstd:5",
        "--no-rac",
        "--sample",
        "64KiB",
    ])))
    .expect("JSON");
    assert!(
        !advice["trees"][0]["branches"]
            .as_array()
            .expect("branches")
            .is_empty()
    );
}

/// Branch names with commas (`map<string,string>` members): `--branches` repeats in convert,
/// advise and dump, and dump's comma-separated list keeps commas inside `<...>`.
#[test]
fn branch_names_with_commas_are_selected_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("commas.evtc");
    let o = out.display().to_string();
    let first = "tm/map<string,string>/map<string,string>.first";
    ok(&evtc(&[
        "convert",
        &fixture("ttree_commas.root"),
        &o,
        "--branches",
        first,
        "--branches",
        "tm/n",
    ]));
    let names: Vec<String> = dump_json(&out)[0]
        .as_object()
        .expect("row")
        .keys()
        .cloned()
        .collect();
    assert!(names.contains(&first.to_owned()), "{names:?}");
    assert!(names.contains(&"tm/n".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains(".second")), "{names:?}");
    let rows: Value = serde_json::from_str(&ok(&evtc(&[
        "dump",
        &o,
        "--format",
        "json",
        "--branches",
        &format!("{first},tm/n"),
    ])))
    .expect("JSON");
    assert_eq!(rows[1][first], serde_json::json!(["key0"]));
    let advice = ok(&evtc(&[
        "advise",
        &fixture("ttree_commas.root"),
        "--branches",
        first,
        "--json",
    ]));
    assert!(advice.contains(first), "{advice}");
}
