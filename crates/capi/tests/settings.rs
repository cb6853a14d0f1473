//! One vocabulary: the C writer takes every setting of the job `writer` under the library's
//! name, as `name=value`, and refuses the others; docs/c-cpp.md names each one it takes.

use std::ffi::{CString, c_char};

use evtc_c::{EvtcStatus, EvtcWriter, evtc_last_error, evtc_writer_abort, evtc_writer_create};
use evtc_tools::{Jobs, SETTINGS};

/// `evtc_writer_create(path, [pair, NULL])`, the writer abandoned at once.
fn create(path: &std::path::Path, pair: &str) -> (EvtcStatus, String) {
    let path = CString::new(path.to_str().expect("UTF-8 path")).expect("path");
    let pair = CString::new(pair).expect("pair");
    let settings: [*const c_char; 2] = [pair.as_ptr(), std::ptr::null()];
    let mut writer: *mut EvtcWriter = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path, a null-terminated array of NUL-terminated strings, and a
    // writable out pointer.
    let status = unsafe { evtc_writer_create(path.as_ptr(), settings.as_ptr(), &mut writer) };
    // SAFETY: the thread's last message is a NUL-terminated string the library owns.
    let message = unsafe { std::ffi::CStr::from_ptr(evtc_last_error()) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: null or the writer just made, not used again.
    unsafe { evtc_writer_abort(writer) };
    (status, message)
}

#[test]
fn the_writer_takes_its_settings_by_their_names_and_refuses_the_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, s) in SETTINGS.iter().enumerate() {
        let path = dir.path().join(format!("{i}.evtc"));
        let (status, message) = create(&path, &format!("{}={}", s.name, s.example));
        if s.jobs.contains(Jobs::WRITER) {
            assert_eq!(status, EvtcStatus::Ok, "{}: {message}", s.name);
        } else {
            assert_eq!(status, EvtcStatus::ErrorArgument, "{}", s.name);
            assert!(message.contains("not a setting of writer"), "{message}");
        }
        assert!(
            !path.exists(),
            "{}: an abandoned writer left a file",
            s.name
        );
    }
}

#[test]
fn the_c_docs_name_every_writer_setting() {
    let docs = include_str!("../../../docs/c-cpp.md");
    for s in SETTINGS.iter().filter(|s| s.jobs.contains(Jobs::WRITER)) {
        assert!(
            docs.contains(&format!("`{}`", s.name)),
            "docs/c-cpp.md: {}",
            s.name
        );
    }
}
