//! Several files as one dataset: `evtc dump` and `evtc inspect` of several files or a glob.

use super::*;

/// The sample converted, then cut at event 1010000 into two files of a directory of their own;
/// with `index`, each file has an event index on (run, event).
fn halves(dir: &Path, index: bool) -> (String, String) {
    let whole = dir.join("whole.evtc").display().to_string();
    ok(&evtc(&[
        "convert",
        &repo("data/nano_sample.root").display().to_string(),
        &whole,
        "-q",
    ]));
    let parts = dir.join("parts");
    std::fs::create_dir(&parts).expect("mkdir");
    for (name, cut) in [
        ("a.evtc", "event < 1010000"),
        ("b.evtc", "event >= 1010000"),
    ] {
        let out = parts.join(name).display().to_string();
        ok(&evtc(&["skim", &whole, &out, "--where", cut, "-q"]));
        if index {
            ok(&evtc(&["index", &out, "--by", "run,event"]));
        }
    }
    (whole, parts.join("*.evtc").display().to_string())
}

#[test]
fn dump_of_a_glob_numbers_entries_across_the_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (whole, glob) = halves(dir.path(), true);
    let args = [
        "--branches",
        "event,nMuon,Muon_pt",
        "--entries",
        "9995..10005",
        "--format",
        "csv",
    ];
    let one = ok(&evtc(&[&["dump", whole.as_str()][..], &args].concat()));
    let chained = ok(&evtc(&[&["dump", glob.as_str()][..], &args].concat()));
    assert_eq!(chained, one);
    assert!(chained.contains("\n10000,1010000,"), "{chained}");
    // The files named one by one read the same; an event is found in the file that holds it,
    // at its entry across the files.
    let a = glob.replace("*.evtc", "a.evtc");
    let b = glob.replace("*.evtc", "b.evtc");
    let named = ok(&evtc(
        &[&["dump", a.as_str(), b.as_str()][..], &args].concat(),
    ));
    assert_eq!(named, one);
    let event = ok(&evtc(&[
        "dump",
        &glob,
        "--event",
        "1:1012345",
        "--branches",
        "event",
        "--format",
        "csv",
    ]));
    assert_eq!(event, "entry,event\n12345,1012345\n");
    fails(
        &evtc(&["dump", &glob, "--event", "1:1"]),
        "no entry with (run, event) = (1, 1)",
        None,
    );
}

#[test]
fn inspect_of_several_files_adds_their_totals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, glob) = halves(dir.path(), false);
    let text = ok(&evtc(&["inspect", &glob]));
    assert!(text.contains("total: 2 files"), "{text}");
    assert!(
        text.contains("tree Events: 20000 entries in 2 files"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&ok(&evtc(&["inspect", &glob, "--json"]))).expect("JSON");
    assert_eq!(json["files"].as_array().expect("files").len(), 2);
    assert_eq!(json["total"]["trees"][0]["entries"], 20_000);
    let stored: u64 = json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["trees"][0]["stored_bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(json["total"]["trees"][0]["stored_bytes"], stored);
}

#[test]
fn a_glob_that_matches_nothing_or_a_file_without_the_index_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, glob) = halves(dir.path(), false);
    let none = dir.path().join("nothing*.evtc").display().to_string();
    fails(&evtc(&["dump", &none]), "the pattern matches no file", None);
    fails(
        &evtc(&["inspect", &none]),
        "the pattern matches no file",
        None,
    );
    fails(
        &evtc(&["dump", &glob, "--event", "1:1000001"]),
        "a.evtc has no event index",
        None,
    );
}
