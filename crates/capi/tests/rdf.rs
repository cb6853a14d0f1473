//! RDataFrame over evtc gives the histograms RDataFrame gives over the ROOT file the evtc file
//! was converted from (tests/rdf.py), with 1 and 2 threads: through the header-only
//! include/evtc_rdf.hxx and through libevtc_rdf (built by scripts/build-rdf). Needs ROOT's
//! Python (`EVTC_ROOT_PYTHON`, default the project's `.venv-root/bin/python`); without it the
//! tests say so and pass.

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

/// A converted copy of the shipped sample, in a temporary directory, and the sample's path.
fn sample(dir: &Path) -> (PathBuf, PathBuf) {
    let root_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nano_sample.root");
    let evtc_file = dir.join("nano.evtc");
    let options = evtc_tools::Settings {
        rac: evtc_format::RacMode::Auto,
        ..evtc_tools::Settings::default()
    };
    evtc_tools::convert(&root_file, &evtc_file, &options, &mut |_| {}).expect("convert");
    (evtc_file, root_file)
}

/// The directory of the libevtc_c.so this test links: where `cargo test` leaves it (beside
/// the test), else `cargo build`'s.
fn library_dir() -> PathBuf {
    let deps = std::env::current_exe()
        .expect("test path")
        .parent()
        .expect("target/<profile>/deps")
        .to_path_buf();
    if deps.join("libevtc_c.so").exists() {
        deps
    } else {
        deps.parent().expect("target/<profile>").to_path_buf()
    }
}

/// Runs tests/rdf.py with `args` under ROOT's Python and fails with its output unless it passes.
fn run_rdf_py(python: &Path, args: &[&std::ffi::OsStr]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rdf.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("run rdf.py");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const NO_ROOT: &str = "skipped: no ROOT (set EVTC_ROOT_PYTHON to a Python that imports ROOT, or \
                       make .venv-root: python3 -m venv .venv-root && .venv-root/bin/pip install root)";

#[test]
fn rdataframe_over_evtc_equals_rdataframe_over_the_root_file() {
    let Some(python) = root_python() else {
        eprintln!("{NO_ROOT}");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (evtc_file, root_file) = sample(dir.path());
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let library = library_dir().join("libevtc_c.so");
    run_rdf_py(
        &python,
        &[
            "header".as_ref(),
            library.as_os_str(),
            include.as_os_str(),
            evtc_file.as_os_str(),
            root_file.as_os_str(),
        ],
    );
}

/// scripts/build-rdf builds the data source ahead of time; one gSystem.Load of the library
/// makes evtc::MakeDataFrame callable, with the header-only source's results.
#[test]
fn the_compiled_data_source_loads_with_one_call_and_equals_rdataframe_over_the_root_file() {
    let Some(python) = root_python() else {
        eprintln!("{NO_ROOT}");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (evtc_file, root_file) = sample(dir.path());
    let out = dir.path().join("rdf");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-rdf");
    let built = Command::new("bash")
        .arg(script)
        .arg("--evtc-lib")
        .arg(library_dir())
        .arg("--out")
        .arg(&out)
        .env("EVTC_ROOT_PYTHON", &python)
        .output()
        .expect("run scripts/build-rdf");
    assert!(
        built.status.success(),
        "scripts/build-rdf failed: {}{}",
        String::from_utf8_lossy(&built.stdout),
        String::from_utf8_lossy(&built.stderr)
    );
    let library = out.join("libevtc_rdf.so");
    run_rdf_py(
        &python,
        &[
            "compiled".as_ref(),
            library.as_os_str(),
            evtc_file.as_os_str(),
            root_file.as_os_str(),
        ],
    );
}
