//! No output replaced by accident: every command that writes a new file refuses one that
//! exists (exit 1, naming it and --force, the file untouched, nothing left beside it) and
//! replaces it with --force (-f), as hadd does.

use super::*;

/// What is at `path` before a command runs: bytes no evtc command writes.
const PRECIOUS: &[u8] = b"precious: not to be replaced\n";

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs `args` (a command writing `output`) over an existing `output`: refused without
/// --force, leaving the directory as it was; replaced by an evtc file with `force` (`--force`
/// or `-f`) added.
fn refuses_then_replaces(output: &Path, args: &[&str], force: &str) {
    std::fs::write(output, PRECIOUS).expect("write");
    let dir = output.parent().expect("a directory");
    let before = names(dir);
    let out = evtc(args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{args:?} exited {:?}",
        out.status
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [output.display().to_string().as_str(), "exists", "--force"] {
        assert!(
            err.contains(needle),
            "{args:?}: stderr {err:?} does not name {needle:?}"
        );
    }
    assert_eq!(
        std::fs::read(output).expect("read"),
        PRECIOUS,
        "{args:?} changed the file"
    );
    assert_eq!(names(dir), before, "{args:?} left files behind");
    let mut forced = args.to_vec();
    forced.push(force);
    ok(&evtc(&forced));
    let bytes = std::fs::read(output).expect("read");
    assert_ne!(bytes, PRECIOUS, "{forced:?} did not replace the file");
}

#[test]
fn every_command_writing_a_new_file_needs_force_to_replace_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = repo("data/nano_sample.root").display().to_string();
    let small = dir.path().join("small.evtc");
    let s = small.display().to_string();
    ok(&evtc(&[
        "convert",
        &sample,
        &s,
        "--branches",
        "nMuon",
        "--branches",
        "MET_*",
    ]));
    let out = dir.path().join("out.evtc");
    let o = out.display().to_string();

    refuses_then_replaces(
        &out,
        &["convert", &sample, &o, "--branches", "MET_pt"],
        "--force",
    );
    refuses_then_replaces(&out, &["convert", &s, &o, "-q"], "-f");
    refuses_then_replaces(&out, &["merge", &o, &s, &s], "--force");
    refuses_then_replaces(&out, &["skim", &s, &o, "--where", "nMuon >= 2"], "-f");
    refuses_then_replaces(
        &out,
        &["generate", "--kind", "ints", "--events", "100", &o],
        "--force",
    );
    refuses_then_replaces(&out, &["recover", &s, &o], "--force");
    let advice = ["advise", &s, "--sample", "64KiB", "--codecs", "lz4", "-q"];
    let mut apply = advice.to_vec();
    apply.extend(["--apply", &o]);
    refuses_then_replaces(&out, &apply, "--force");
    let plot = dir.path().join("advice.svg");
    let p = plot.display().to_string();
    let mut draw = advice.to_vec();
    draw.extend(["--plot", &p]);
    refuses_then_replaces(&plot, &draw, "-f");
    // The file replaced by convert, merge, skim and recover reads as an evtc file.
    ok(&evtc(&["verify", "--deep", &o]));
}

#[test]
fn arguments_in_the_wrong_order_do_not_destroy_an_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sample = repo("data/nano_sample.root").display().to_string();
    let a = dir.path().join("a.evtc");
    let b = dir.path().join("b.evtc");
    for (path, branches) in [(&a, "MET_*"), (&b, "nMuon")] {
        let p = path.display().to_string();
        ok(&evtc(&["convert", &sample, &p, "--branches", branches]));
    }
    let a_bytes = std::fs::read(&a).expect("read");
    // `evtc merge a.evtc b.evtc` meant `evtc merge out.evtc a.evtc b.evtc`: a.evtc is the
    // output, and it exists.
    let (sa, sb) = (a.display().to_string(), b.display().to_string());
    fails(&evtc(&["merge", &sa, &sb]), "exists", None);
    assert_eq!(std::fs::read(&a).expect("read"), a_bytes);
    // A conversion whose output is the sample itself, a ROOT file.
    let copy = dir.path().join("precious.root");
    std::fs::copy(repo("data/nano_sample.root"), &copy).expect("copy");
    let c = copy.display().to_string();
    fails(&evtc(&["merge", &c, &sa, &sb]), "exists", None);
    assert_eq!(
        std::fs::read(&copy).expect("read"),
        std::fs::read(repo("data/nano_sample.root")).expect("read")
    );
}
