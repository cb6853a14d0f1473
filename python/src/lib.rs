//! `evtc._lib`: the native module under the `evtc` Python package.
//!
//! A thin layer over the library crates: `Reader` (`read.rs`) over `evtc-format`'s `FileReader`
//! and `evtc-root`'s `RootFile`, `Writer` (`write.rs`) over `evtc-format`'s `FileWriter`,
//! `RootWriter` (`root_write.rs`) over `evtc-tools`'s `RootOutput`, and `convert` and `advise`
//! over `evtc-tools`. Decoded buffers become NumPy arrays without a copy
//! (`PyArray1::from_vec` keeps the Rust allocation); the GIL is released while baskets are read and
//! decoded. The friendly API, argument checking and docstrings are in the pure-Python package
//! (`python/evtc/`).
#![allow(clippy::useless_conversion)] // pyo3's generated code for `PyResult` returns

mod advise;
mod arrow;
mod errors;
mod lists;
mod reader;
mod root_write;
mod source;
mod write;

use pyo3::prelude::*;

/// The module's allocator. Decoded columns are fresh buffers of megabytes, allocated on the
/// reader's threads and freed when Python drops the arrays: glibc's malloc maps such buffers
/// anew and returns them at free (threads other than the main one trim their arenas), so that
/// every read page-faults its output in again; mimalloc, set up by the package's `__init__.py`
/// (`MIMALLOC_PURGE_DECOMMITS`, `MIMALLOC_PURGE_DELAY`, `MIMALLOC_ARENA_PURGE_MULT`), keeps
/// freed pages for the next read.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The native part of the `evtc` package.
#[pymodule]
fn _lib(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<reader::Reader>()?;
    m.add("OPEN_BYTES", source::OPEN_BYTES)?;
    m.add_class::<write::Writer>()?;
    m.add_class::<root_write::RootWriter>()?;
    m.add_function(wrap_pyfunction!(write::convert, m)?)?;
    m.add_function(wrap_pyfunction!(write::merge, m)?)?;
    m.add_function(wrap_pyfunction!(write::skim, m)?)?;
    m.add_function(wrap_pyfunction!(write::index, m)?)?;
    m.add_function(wrap_pyfunction!(write::add_columns, m)?)?;
    m.add_function(wrap_pyfunction!(write::settings_table, m)?)?;
    m.add_function(wrap_pyfunction!(reader::plan_files, m)?)?;
    m.add_function(wrap_pyfunction!(lists::split_views, m)?)?;
    m.add_function(wrap_pyfunction!(lists::split_strings, m)?)?;
    m.add_function(wrap_pyfunction!(advise::advise, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::arrow_stream, m)?)?;
    m.add_function(wrap_pyfunction!(reader::branch_reads, m)?)?;
    m.add_function(wrap_pyfunction!(reader::reset_branch_reads, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
