//! The C API from C and C++ programs compiled with the system's compilers (`cc`, `c++`, or
//! `CC`/`CXX`): they write files, read them and the file this test writes with the Rust writer
//! (whose values they check), and check that bad input gives error statuses; this test then
//! reads their files with the Rust reader.

use std::path::{Path, PathBuf};
use std::process::Command;

use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};

const N: u64 = 5000;

/// The directory holding the shared library cargo built with this test: the test's own
/// (`target/<profile>/deps`, where `cargo test` leaves it), else `target/<profile>` (where
/// `cargo build` puts it).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test path");
    let deps = exe.parent().expect("target/<profile>/deps").to_path_buf();
    if deps.join("libevtc_c.so").exists() {
        return deps;
    }
    deps.parent().expect("target/<profile>").to_path_buf()
}

/// Writes `rust.evtc` as the programs write theirs, and a damaged copy.
fn write_inputs(dir: &Path) {
    let path = dir.join("rust.evtc");
    let options = WriteOptions::default().cluster_size(evtc_format::ClusterSize::Entries(700));
    let mut file = FileWriter::create(&path, options).expect("create");
    let mut tree = file
        .tree(
            "Events",
            vec![
                BranchSpec::scalar("run", ScalarType::U32),
                BranchSpec::scalar("nMuon", ScalarType::U32),
                BranchSpec::jagged("Muon_pt", ScalarType::F32).counter("nMuon"),
                BranchSpec::fixed("p", ScalarType::F64, 3),
                BranchSpec::bytes("tag"),
                BranchSpec::scalar("flag", ScalarType::Bool),
            ],
        )
        .expect("tree");
    let run: Vec<u32> = (0..N).map(|e| (e / 1000) as u32).collect();
    let n: Vec<u32> = (0..N).map(|e| (e % 4) as u32).collect();
    let pt: Vec<f32> = (0..N)
        .flat_map(|e| (0..e % 4).map(move |k| e as f32 * 0.5 + k as f32))
        .collect();
    let p: Vec<f64> = (0..N).flat_map(|e| [e as f64, -(e as f64), 0.25]).collect();
    let tag_counts: Vec<u32> = (0..N).map(|e| (e % 3) as u32).collect();
    let tags: Vec<u8> = (0..N)
        .flat_map(|e| std::iter::repeat_n(b'a' + (e % 26) as u8, (e % 3) as usize))
        .collect();
    let flag: Vec<bool> = (0..N).map(|e| e % 5 == 0).collect();
    tree.fill_column(0, &run).expect("run");
    tree.fill_column(1, &n).expect("n");
    tree.fill_jagged(2, &n, &pt).expect("pt");
    tree.fill_column(3, &p).expect("p");
    tree.fill_jagged(4, &tag_counts, &tags).expect("tag");
    tree.fill_column(5, &flag).expect("flag");
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    file.finish().expect("finish file");
    let mut bytes = std::fs::read(&path).expect("read");
    let at = bytes.len() - 40;
    bytes[at] ^= 0xff; // the footer's last byte: its CRC fails
    std::fs::write(dir.join("corrupt.evtc"), bytes).expect("write");
}

/// Compiles `source` with `compiler` (and `flags`) against the library, runs it on `dir`.
fn build_and_run(compiler: &str, flags: &[&str], source: &str, dir: &Path) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let exe = dir.join(Path::new(source).file_stem().expect("name"));
    let status = Command::new(compiler)
        .args(flags)
        .arg(format!("-I{}", crate_dir.join("include").display()))
        .arg(crate_dir.join("tests").join(source))
        .arg(format!("-L{}", lib.display()))
        .arg("-levtc_c")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} (set CC/CXX to a C/C++ compiler): {e}"));
    assert!(status.success(), "{compiler} failed on {source}");
    let out = Command::new(&exe).arg(dir).output().expect("run");
    assert!(
        out.status.success(),
        "{source}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
}

/// The Rust reader reads what a program wrote.
fn check_written(path: &Path) {
    let file = FileReader::open(path).expect("open");
    let tree = file.tree("Events").expect("tree");
    let pt = tree
        .branch("Muon_pt")
        .unwrap()
        .read_jagged::<f32>()
        .unwrap();
    assert_eq!(pt.len() as u64, N);
    assert_eq!(pt.entry(4003), [2001.5, 2002.5, 2003.5]);
    let flag = tree.branch("flag").unwrap().read::<bool>().unwrap();
    assert!(flag[0] && flag[5] && !flag[1]);
    let tag = tree.branch("tag").unwrap().read_jagged::<u8>().unwrap();
    assert_eq!(tag.entry(4001), b"xx");
}

#[test]
fn a_c_program_writes_reads_and_meets_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_inputs(dir.path());
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    build_and_run(
        &cc,
        &["-std=c11", "-Wall", "-Wextra", "-Werror"],
        "c/roundtrip.c",
        dir.path(),
    );
    check_written(&dir.path().join("c.evtc"));
    assert!(!dir.path().join("never.evtc").exists());
}

#[test]
fn a_cpp_program_uses_the_header_only_wrapper() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_inputs(dir.path());
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    build_and_run(
        &cxx,
        &["-std=c++17", "-Wall", "-Wextra", "-Werror"],
        "cpp/roundtrip.cpp",
        dir.path(),
    );
    check_written(&dir.path().join("cpp.evtc"));
    assert!(!dir.path().join("abandoned.evtc").exists());
}
