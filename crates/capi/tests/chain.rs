//! `evtc_open_chain`: several files read as one through the C API, entries numbered across them.

use std::ffi::{CStr, CString, c_char};

use evtc_c::{
    EvtcBranchInfo, EvtcFile, EvtcStatus, evtc_branch_find, evtc_branch_info, evtc_close,
    evtc_cluster_ends, evtc_file_error, evtc_open_chain, evtc_read, evtc_read_entry,
    evtc_read_size, evtc_tree_entries, evtc_tree_find,
};
use evtc_format::{BranchSpec, FileWriter, ScalarType, WriteOptions};

const F32: i32 = 9; // EVTC_SCALAR_F32
const U32: i32 = 6; // EVTC_SCALAR_U32

/// A file of `n` entries: `k` (u32, the entry's number plus `first`), and `x` (f32 lists of
/// `k % 3` values `k`), and `extra` when asked, in clusters of 3 entries.
fn write(path: &std::path::Path, first: u32, n: u32, extra: bool) {
    let options = WriteOptions::default().cluster_size(evtc_format::ClusterSize::Entries(3));
    let mut file = FileWriter::create(path, options).expect("create");
    let mut specs = vec![
        BranchSpec::scalar("k", ScalarType::U32),
        BranchSpec::jagged("x", ScalarType::F32),
    ];
    if extra {
        specs.push(BranchSpec::scalar("extra", ScalarType::U32));
    }
    let mut tree = file.tree("Events", specs).expect("tree");
    let k: Vec<u32> = (first..first + n).collect();
    let counts: Vec<u32> = k.iter().map(|k| k % 3).collect();
    let x: Vec<f32> = k
        .iter()
        .flat_map(|&k| std::iter::repeat_n(k as f32, (k % 3) as usize))
        .collect();
    tree.fill_column(0, &k).expect("k");
    tree.fill_jagged(1, &counts, &x).expect("x");
    if extra {
        tree.fill_column(2, &k).expect("extra");
    }
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    file.finish().expect("finish file");
}

fn open(paths: &[&std::path::Path]) -> Result<*mut EvtcFile, EvtcStatus> {
    let owned: Vec<CString> = paths
        .iter()
        .map(|p| CString::new(p.to_str().expect("UTF-8")).expect("path"))
        .collect();
    let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
    let mut file = std::ptr::null_mut();
    // SAFETY: `ptrs.len()` NUL-terminated strings; a writable out pointer.
    match unsafe { evtc_open_chain(ptrs.as_ptr(), ptrs.len(), 1, &mut file) } {
        EvtcStatus::Ok => Ok(file),
        status => Err(status),
    }
}

fn branch(file: *const EvtcFile, name: &str) -> usize {
    let name = CString::new(name).expect("name");
    let mut b = 0;
    // SAFETY: an open handle, a NUL-terminated name, a writable out value.
    let status = unsafe { evtc_branch_find(file, 0, name.as_ptr(), &mut b) };
    assert_eq!(status, EvtcStatus::Ok);
    b
}

#[test]
fn a_chain_reads_as_one_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.evtc"), dir.path().join("b.evtc"));
    write(&a, 0, 7, true);
    write(&b, 7, 5, false);
    let file = open(&[&a, &b]).expect("open");
    let mut t = usize::MAX;
    // SAFETY: every call gets the open handle and valid buffers of the sizes it is told.
    unsafe {
        assert_eq!(
            evtc_tree_find(file, c"Events".as_ptr(), &mut t),
            EvtcStatus::Ok
        );
        assert_eq!(evtc_tree_entries(file, t), 12);
        let mut count = 0;
        let ends = evtc_cluster_ends(file, t, &mut count);
        assert_eq!(std::slice::from_raw_parts(ends, count), [3, 6, 7, 10, 12]);
        // A range across the files, of a scalar and of a jagged branch.
        let k = branch(file, "k");
        let mut values = [0u32; 6];
        let mut written = 0;
        let status = evtc_read(
            file,
            t,
            k,
            U32,
            4,
            10,
            values.as_mut_ptr().cast(),
            6,
            std::ptr::null_mut(),
            &mut written,
        );
        assert_eq!(status, EvtcStatus::Ok);
        assert_eq!(values, [4, 5, 6, 7, 8, 9]);
        let x = branch(file, "x");
        let mut n = 0;
        assert_eq!(evtc_read_size(file, t, x, 4, 10, &mut n), EvtcStatus::Ok);
        let want: Vec<f32> = (4..10u32)
            .flat_map(|k| std::iter::repeat_n(k as f32, (k % 3) as usize))
            .collect();
        assert_eq!(n, want.len() as u64);
        let mut got = vec![0f32; want.len()];
        let mut offsets = [0u64; 7];
        let status = evtc_read(
            file,
            t,
            x,
            F32,
            4,
            10,
            got.as_mut_ptr().cast(),
            n,
            offsets.as_mut_ptr(),
            &mut written,
        );
        assert_eq!(status, EvtcStatus::Ok);
        assert_eq!(got, want);
        assert_eq!(offsets, [0, 1, 3, 3, 4, 6, 6]);
        // One entry of the second file, by its number in the chain.
        let mut one = [0f32; 2];
        assert_eq!(
            evtc_read_entry(file, t, x, F32, 8, one.as_mut_ptr().cast(), 2, &mut written),
            EvtcStatus::Ok
        );
        assert_eq!((written, one), (2, [8.0, 8.0]));
        // Sizes cover both files.
        let mut info: EvtcBranchInfo = std::mem::zeroed();
        assert_eq!(evtc_branch_info(file, t, k, &mut info), EvtcStatus::Ok);
        assert_eq!(info.raw_bytes, 12 * 4);
        // A branch the second file lacks: an error naming it when read there.
        let extra = branch(file, "extra");
        let status = evtc_read(
            file,
            t,
            extra,
            U32,
            0,
            12,
            values.as_mut_ptr().cast(),
            6,
            std::ptr::null_mut(),
            &mut written,
        );
        assert_eq!(status, EvtcStatus::ErrorNotFound);
        let message = CStr::from_ptr(evtc_file_error(file))
            .to_string_lossy()
            .into_owned();
        assert!(
            message.contains("b.evtc") && message.contains("extra"),
            "{message}"
        );
        let status = evtc_read(
            file,
            t,
            extra,
            U32,
            1,
            7,
            values.as_mut_ptr().cast(),
            6,
            std::ptr::null_mut(),
            &mut written,
        );
        assert_eq!(status, EvtcStatus::Ok, "entries of the first file only");
        evtc_close(file);
    }
    assert!(open(&[]).is_err());
    assert_eq!(
        open(&[&a, &dir.path().join("missing.evtc")]).err(),
        Some(EvtcStatus::ErrorIo)
    );
}

/// A ROOT file given to the C API is refused as such (the library's one test of what a file
/// is), naming the file and what reads it.
#[test]
fn a_root_file_is_refused_naming_it() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nano_sample.root");
    assert_eq!(open(&[&root]).err(), Some(EvtcStatus::ErrorUnsupported));
    // SAFETY: the thread's last error, a NUL-terminated string the library keeps.
    let message = unsafe { CStr::from_ptr(evtc_c::evtc_last_error()) }
        .to_string_lossy()
        .into_owned();
    assert!(
        message.contains("nano_sample.root is a ROOT file") && message.contains("evtc convert"),
        "{message}"
    );
}
