//! The C writer writes ROOT files with `to=rntuple` or `to=ttree`: the same calls as for an
//! evtc file, read back by `evtc-root`'s reader; a `*.root` path without `to` is refused.

use std::ffi::{CString, c_char, c_void};

use evtc_c::{
    EvtcBranchSpec, EvtcKind, EvtcScalar, EvtcStatus, EvtcWriter, evtc_writer_close,
    evtc_writer_commit, evtc_writer_create, evtc_writer_fill, evtc_writer_tree,
};
use evtc_root::{RootFile, Values};

/// A writer of `path` with `settings`, or the status it failed with.
fn create(path: &std::path::Path, settings: &[&str]) -> Result<*mut EvtcWriter, EvtcStatus> {
    let path = CString::new(path.to_str().expect("UTF-8")).expect("path");
    let owned: Vec<CString> = settings
        .iter()
        .map(|s| CString::new(*s).expect("pair"))
        .collect();
    let mut pairs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
    pairs.push(std::ptr::null());
    let mut writer = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings, a null-terminated array, a writable out pointer.
    match unsafe { evtc_writer_create(path.as_ptr(), pairs.as_ptr(), &mut writer) } {
        EvtcStatus::Ok => Ok(writer),
        status => Err(status),
    }
}

/// Fills branch `branch` with `values` (and `counts`), checking the status.
fn fill<T>(
    writer: *mut EvtcWriter,
    branch: usize,
    scalar: EvtcScalar,
    values: &[T],
    counts: &[u32],
) {
    // SAFETY: `values` and `counts` are what their lengths say.
    let status = unsafe {
        evtc_writer_fill(
            writer,
            branch,
            scalar as i32,
            values.as_ptr().cast::<c_void>(),
            values.len() as u64,
            if counts.is_empty() {
                std::ptr::null()
            } else {
                counts.as_ptr()
            },
            counts.len() as u64,
        )
    };
    assert_eq!(status, EvtcStatus::Ok);
}

#[test]
fn the_c_writer_writes_rntuples_and_ttrees() {
    let dir = tempfile::tempdir().expect("tempdir");
    for to in ["rntuple", "ttree"] {
        let path = dir.path().join(format!("{to}.root"));
        let writer =
            create(&path, &[&format!("to={to}"), "branch_codec=Muon_*=lz4"]).expect("writer");
        let names = [c"nMuon", c"Muon_pt", c"tag"];
        let specs = [
            EvtcBranchSpec {
                name: names[0].as_ptr(),
                kind: EvtcKind::Scalar as i32,
                scalar: EvtcScalar::I32 as i32,
                fixed_len: 0,
                counter: std::ptr::null(),
            },
            EvtcBranchSpec {
                name: names[1].as_ptr(),
                kind: EvtcKind::Jagged as i32,
                scalar: EvtcScalar::F32 as i32,
                fixed_len: 0,
                counter: names[0].as_ptr(),
            },
            EvtcBranchSpec {
                name: names[2].as_ptr(),
                kind: EvtcKind::Utf8 as i32,
                scalar: EvtcScalar::U8 as i32,
                fixed_len: 0,
                counter: std::ptr::null(),
            },
        ];
        // SAFETY: a writer, a NUL-terminated name, three specs.
        let status = unsafe { evtc_writer_tree(writer, c"Events".as_ptr(), specs.as_ptr(), 3) };
        assert_eq!(status, EvtcStatus::Ok);
        for batch in 0..2 {
            fill(writer, 0, EvtcScalar::I32, &[2i32, 0, 1], &[]);
            fill(
                writer,
                1,
                EvtcScalar::F32,
                &[1.5f32, 2.5, 3.5 + batch as f32],
                &[2, 0, 1],
            );
            fill(writer, 2, EvtcScalar::U8, b"abbccc", &[1, 2, 3]);
            let mut entries = 0;
            // SAFETY: a writer and a writable count.
            let status = unsafe { evtc_writer_commit(writer, &mut entries) };
            assert_eq!(status, EvtcStatus::Ok);
            assert_eq!(entries, 3);
        }
        // SAFETY: a writer, not used again.
        assert_eq!(unsafe { evtc_writer_close(writer) }, EvtcStatus::Ok);
        let file = RootFile::open(&path).expect("ROOT file");
        let tree = file.tree("Events").expect("tree");
        assert_eq!(tree.entries, 6);
        let pt = tree.column("Muon_pt").expect("Muon_pt");
        assert_eq!(
            pt.counter.as_deref().filter(|_| to == "ttree"),
            (to == "ttree").then_some("nMuon")
        );
        let read = file.read_column(pt, 0..6).expect("read");
        assert_eq!(read.values, Values::F32(vec![1.5, 2.5, 3.5, 1.5, 2.5, 4.5]));
        assert_eq!(read.offsets, vec![0, 2, 2, 3, 5, 5, 6]);
        let tag = file
            .read_column(tree.column("tag").expect("tag"), 0..3)
            .expect("read");
        assert_eq!(tag.values, Values::U8(b"abbccc".to_vec()));
    }
}

#[test]
fn a_root_path_needs_to_and_root_files_refuse_evtc_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("out.root");
    assert_eq!(create(&path, &[]).err(), Some(EvtcStatus::ErrorArgument));
    assert_eq!(
        create(&path, &["to=ttree", "rac=on"]).err(),
        Some(EvtcStatus::ErrorArgument)
    );
    assert!(!path.exists());
}
