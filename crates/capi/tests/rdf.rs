//! RDataFrame over evtc (include/evtc_rdf.hxx) gives the histograms RDataFrame gives over the
//! ROOT file the evtc file was converted from (tests/rdf.py), with 1 and 2 threads. Needs
//! ROOT's Python (`EVTC_ROOT_PYTHON`, default the project's `.venv-root/bin/python`); without
//! it the test says so and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root_python() -> Option<PathBuf> {
    let python = std::env::var_os("EVTC_ROOT_PYTHON").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-root/bin/python"),
        PathBuf::from,
    );
    let works = Command::new(&python)
        .args(["-c", "import ROOT"])
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(python)
}

#[test]
fn rdataframe_over_evtc_equals_rdataframe_over_the_root_file() {
    let Some(python) = root_python() else {
        eprintln!(
            "skipped: no ROOT (set EVTC_ROOT_PYTHON to a Python that imports ROOT, or make \
             .venv-root: python3 -m venv .venv-root && .venv-root/bin/pip install root)"
        );
        return;
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root_file = crate_dir.join("../../data/nano_sample.root");
    let dir = tempfile::tempdir().expect("tempdir");
    let evtc_file = dir.path().join("nano.evtc");
    let options = evtc_convert::Settings {
        rac: evtc_format::RacMode::Auto,
        ..evtc_convert::Settings::default()
    };
    evtc_convert::convert(&root_file, &evtc_file, &options, &mut |_| {}).expect("convert");
    // Where `cargo test` leaves the shared library (beside this test), else `cargo build`'s.
    let deps = std::env::current_exe()
        .expect("test path")
        .parent()
        .expect("target/<profile>/deps")
        .to_path_buf();
    let library_dir = if deps.join("libevtc_c.so").exists() {
        deps
    } else {
        deps.parent().expect("target/<profile>").to_path_buf()
    };
    let out = Command::new(python)
        .arg(crate_dir.join("tests/rdf.py"))
        .arg(library_dir.join("libevtc_c.so"))
        .arg(crate_dir.join("include"))
        .arg(&evtc_file)
        .arg(&root_file)
        .output()
        .expect("run rdf.py");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
