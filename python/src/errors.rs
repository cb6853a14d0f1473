//! The libraries' errors as the exceptions of `evtc/errors.py`, with the Rust message.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// Raises `evtc.errors.<class>(message)`.
pub(crate) fn raise(class: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("evtc.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.call1((message.clone(),)));
        match made {
            Ok(exception) => PyErr::from_value(exception),
            // The pure-Python package is missing (the native module imported on its own).
            Err(_) => PyRuntimeError::new_err(message),
        }
    })
}

/// An `evtc-format` error as `evtc.errors`' class for its kind.
pub(crate) fn format(error: evtc_format::Error) -> PyErr {
    raise(format_class(&error), error.to_string())
}

/// The `evtc.errors` class of an `evtc-format` error (of the error inside, for one that names
/// its file).
fn format_class(error: &evtc_format::Error) -> &'static str {
    use evtc_format::Error as E;
    match error {
        E::InFile { source, .. } => format_class(source),
        E::Request(_) => "OptionsError",
        E::Io { .. } => "FileError",
        E::Busy { .. } => "FileBusyError",
        E::OutputExists { .. } => "OutputExistsError",
        E::NoSuchTree { .. } | E::NoSuchBranch { .. } | E::EventNotFound { .. } => "KeyInFileError",
        E::DuplicateEvent { .. } => "DuplicateEventError",
        E::NoEventIndex { .. } => "SchemaError",
        E::EntryOutOfRange { .. } => "EntryRangeError",
        E::TypeMismatch { .. }
        | E::InvalidSchema { .. }
        | E::InvalidFill { .. }
        | E::NotUtf8 { .. } => "SchemaError",
        E::UnsupportedVersion { .. } | E::RequiredExtension { .. } => "UnsupportedError",
        E::Compress { .. } | E::Rac { .. } => "Error",
        _ => "CorruptFileError",
    }
}

/// An `evtc-root` error as `evtc.errors`' class for its kind.
pub(crate) fn root(error: evtc_root::Error) -> PyErr {
    use evtc_root::Error as E;
    let class = match &error {
        E::Io { .. } | E::WriteIo { .. } => "FileError",
        E::Unwritable { .. } => "SchemaError",
        E::NotFound { .. } => "KeyInFileError",
        E::OutOfRange { .. } => "EntryRangeError",
        E::Unsupported { .. } | E::UnsupportedVersion { .. } | E::NotATree { .. } => {
            "UnsupportedError"
        }
        _ => "CorruptFileError",
    };
    raise(class, error.to_string())
}

/// An `evtc-tools` error.
pub(crate) fn convert(error: evtc_tools::Error) -> PyErr {
    use evtc_tools::Error as E;
    match error {
        E::Format(e) => format(e),
        E::Root(e) => root(e),
        E::Unsupported(e) => raise(
            "UnsupportedError",
            format!("{e} (skip_unsupported=True converts the other branches)"),
        ),
        e @ E::UnreadableBranch { .. } => raise(
            "CorruptFileError",
            format!("{e} (skip_unsupported=True converts the other branches)"),
        ),
        E::Options(reason) => raise("OptionsError", reason),
        e @ E::RootOutputUnsaid { .. } => raise("OptionsError", e.to_string()),
        other => raise("FileError", other.to_string()),
    }
}

/// An invalid codec or option string, as `ValueError`.
pub(crate) fn value(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}
