//! `evtc merge`: evtc and ROOT inputs, `@list` files, schemas, the JSON report, and failures
//! (an output among the inputs, a non-evtc input, a full disk) that leave nothing behind.

use super::*;

/// Three 2,000-event NanoAOD-like evtc files in `dir`.
fn parts(dir: &Path) -> Vec<String> {
    (0..3)
        .map(|i| {
            let path = dir.join(format!("part{i}.evtc")).display().to_string();
            ok(&evtc(&[
                "generate", "--kind", "nano", "--events", "2000", &path,
            ]));
            path
        })
        .collect()
}

#[test]
fn merged_files_verify_and_read_their_inputs_values_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = parts(dir.path());
    let list = dir.path().join("list.txt");
    std::fs::write(
        &list,
        format!("# the parts\n{}\n\n{}\n", inputs[1], inputs[2]),
    )
    .expect("list");
    let out = dir.path().join("all.evtc");
    let o = out.display().to_string();
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "merge",
        &o,
        &inputs[0],
        &format!("@{}", list.display()),
        "--json",
    ])))
    .expect("JSON");
    assert_eq!(report["inputs"], 3);
    let tree = &report["trees"][0];
    assert_eq!(tree["entries"], 6000);
    assert_eq!(tree["rewritten"].as_array().expect("list").len(), 0);
    assert!(tree["copied_baskets"].as_u64().expect("n") > 0);
    assert!(ok(&evtc(&["verify", "--deep", &o])).contains("OK"));
    // Entry 2000 + k of the merge is entry k of the second part.
    let merged = dump_json(&out);
    let second = dump_json(Path::new(&inputs[1]));
    assert_eq!(merged.len(), 6000);
    for k in [0, 1, 777, 1999] {
        assert_eq!(merged[2000 + k], second[k], "entry {k}");
    }
    // Without the sync to disk, the same bytes.
    let unsynced = dir.path().join("unsynced.evtc");
    let u = unsynced.display().to_string();
    ok(&evtc(&[
        "merge",
        &u,
        &inputs[0],
        &inputs[1],
        &inputs[2],
        "--no-sync",
        "--quiet",
    ]));
    assert!(std::fs::read(&out).expect("merged") == std::fs::read(&unsynced).expect("unsynced"));
}

#[test]
fn root_inputs_are_converted_on_the_way_and_recompress_writes_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = repo("data/nano_sample.root").display().to_string();
    let evtc_part = dir.path().join("sample.evtc").display().to_string();
    ok(&evtc(&["convert", &root, &evtc_part, "--quiet"]));
    let out = dir.path().join("mixed.evtc");
    let o = out.display().to_string();
    let text = ok(&evtc(&["merge", &o, &evtc_part, &root]));
    assert!(text.contains("1 ROOT files converted"), "{text}");
    let rows = dump_json(&out);
    let part = dump_json(Path::new(&evtc_part));
    assert_eq!(rows.len(), 2 * part.len());
    assert_eq!(rows[part.len() + 5], part[5]);
    // No scratch directory is left beside the output.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".evtc-merge")),
        "{names:?}"
    );
    let again = dir.path().join("lz4.evtc");
    let a = again.display().to_string();
    let report: Value = serde_json::from_str(&ok(&evtc(&[
        "merge",
        &a,
        &evtc_part,
        &evtc_part.clone(),
        "--recompress",
        "--codec",
        "lz4",
        "--json",
    ])))
    .expect("JSON");
    assert_eq!(report["trees"][0]["copied_baskets"], 0);
    let inspect: Value =
        serde_json::from_str(&ok(&evtc(&["inspect", "--json", &a]))).expect("JSON");
    let codecs: Vec<&str> = inspect["trees"][0]["branches"]
        .as_array()
        .expect("branches")
        .iter()
        .map(|b| b["codec"].as_str().expect("codec"))
        .collect();
    assert!(codecs.iter().all(|c| *c == "lz4"), "{codecs:?}");
}

#[test]
fn merge_failures_name_the_problem_and_leave_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = parts(dir.path());
    let out = dir.path().join("out.evtc");
    let o = out.display().to_string();
    // The output is an input: it exists, and even with --force it is not replaced.
    fails(
        &evtc(&["merge", &inputs[0], &inputs[0], &inputs[1]]),
        "exists",
        None,
    );
    fails(
        &evtc(&["merge", "-f", &inputs[0], &inputs[0], &inputs[1]]),
        "is one of the inputs",
        None,
    );
    // Not an evtc or ROOT file.
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, b"junk junk junk").expect("write");
    fails(
        &evtc(&["merge", &o, &inputs[0], &junk.display().to_string()]),
        "junk.bin",
        Some(&out),
    );
    // A missing input, and a missing list.
    fails(
        &evtc(&["merge", &o, &inputs[0], "nowhere.evtc"]),
        "nowhere.evtc",
        Some(&out),
    );
    fails(
        &evtc(&["merge", &o, "@nolist.txt"]),
        "nolist.txt",
        Some(&out),
    );
    // Schemas that differ: an input with one branch fewer.
    let fewer = dir.path().join("fewer.evtc");
    let f = fewer.display().to_string();
    ok(&evtc(&[
        "convert",
        &inputs[1],
        &f,
        "--branches",
        "Muon_*",
        "--quiet",
    ]));
    fails(
        &evtc(&["merge", &o, &inputs[0], &f]),
        "fewer.evtc",
        Some(&out),
    );
    let text = ok(&evtc(&["merge", &o, &inputs[0], &f, "--intersect"]));
    assert!(text.contains("left out"), "{text}");
    std::fs::remove_file(&out).expect("rm");
    let text = ok(&evtc(&["merge", &o, &f, &inputs[0], "--union"]));
    assert!(text.contains("defaults where"), "{text}");
}

/// A disk that fills up: writes past 64 KiB fail (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored, as a
/// full disk fails them), and the merge stops with the error and leaves no file.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_fails_the_merge_cleanly() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = parts(dir.path());
    let out = dir.path().join("out.evtc");
    let mut command = Command::new(env!("CARGO_BIN_EXE_evtc"));
    command
        .args(["merge", &out.display().to_string()])
        .args(&inputs);
    // SAFETY: the closure only calls signal and setrlimit, which are async-signal-safe, on the
    // child.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 64 << 10,
                rlim_max: 64 << 10,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().expect("run evtc");
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(err.contains("out.evtc") && err.contains("large"), "{err}");
    assert!(!out.exists());
}
