//! Writing ROOT files of RNTuples or TTrees (`evtc-tools`'s `RootOutput`): the native side of
//! `evtc.recreate(path, format="rntuple")`, taking batches as `Writer` takes them.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use evtc_root::{ColumnData, ColumnKind, ScalarType, Values};
use evtc_tools::{Jobs, RootBranch, RootOutput};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use crate::errors;
use crate::write::{scalar_type, settings};

/// A ROOT file being written; it appears under its name only after `close()`.
#[pyclass(frozen, module = "evtc._lib")]
pub(crate) struct RootWriter {
    inner: Mutex<Inner>,
}

struct Inner {
    /// `None` once closed, abandoned or failed.
    output: Option<RootOutput>,
    /// The open tree's branch kinds, in branch order.
    kinds: Vec<ColumnKind>,
}

impl RootWriter {
    fn lock(&self) -> PyResult<MutexGuard<'_, Inner>> {
        crate::write::writer_state(&self.inner)
    }
}

impl Inner {
    fn output(&mut self) -> PyResult<&mut RootOutput> {
        self.output
            .as_mut()
            .ok_or_else(|| errors::raise("Error", "the file is closed".into()))
    }

    /// `result`, the writer dropped (its temporary file with it) when it is an error: a writer
    /// error leaves the file in an unknown state.
    fn check<T>(&mut self, result: evtc_tools::Result<T>) -> PyResult<T> {
        result.map_err(|e| {
            self.output = None;
            errors::convert(e)
        })
    }
}

#[pymethods]
impl RootWriter {
    /// Starts writing the ROOT file `path` with the writer's settings (`(name, value)` pairs;
    /// `to` says `rntuple` or `ttree`; `evtc.recreate` adds `overwrite`).
    #[new]
    fn new(path: PathBuf, settings: Vec<(String, String)>) -> PyResult<RootWriter> {
        let settings = self::settings(Jobs::WRITER, &settings)?;
        let output = settings
            .output_format(&path)
            .and_then(|format| RootOutput::create(&path, format, &settings))
            .map_err(errors::convert)?;
        Ok(RootWriter {
            inner: Mutex::new(Inner {
                output: Some(output),
                kinds: Vec::new(),
            }),
        })
    }

    /// Finishes the open tree (if any) and starts tree `name`. Each branch is
    /// `(name, kind, dtype, length, counter)`, kind one of `scalar`, `fixed`, `jagged`, `bytes`,
    /// `string`; the settings' per-branch rules that match it apply.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (name, branches, add=false))]
    fn tree(
        &self,
        py: Python<'_>,
        name: &str,
        branches: Vec<(String, String, String, u32, Option<String>)>,
        add: bool,
    ) -> PyResult<()> {
        if add {
            return Err(errors::value(
                "a ROOT file is written whole: branches are not added to its trees".to_owned(),
            ));
        }
        let mut specs = Vec::with_capacity(branches.len());
        for (branch, kind, dtype, length, counter) in branches {
            let t = scalar_type(&dtype)?;
            let kind = match kind.as_str() {
                "scalar" => ColumnKind::Scalar(t),
                "fixed" => ColumnKind::Fixed(t, length as usize),
                "jagged" => ColumnKind::Jagged(t),
                "bytes" | "string" => ColumnKind::String,
                other => return Err(errors::value(format!("no branch kind {other:?}"))),
            };
            specs.push(RootBranch {
                counter,
                ..RootBranch::new(branch, kind)
            });
        }
        let kinds = specs.iter().map(|b| b.kind).collect();
        let mut inner = self.lock()?;
        let output = inner.output()?;
        let result = py.detach(|| output.tree(name, specs));
        inner.check(result)?;
        inner.kinds = kinds;
        Ok(())
    }

    /// Adds a batch of entries to the open tree: one `(values, counts)` pair per branch in
    /// order (`counts` for variable-length branches, `None` otherwise); `values` are 1-d
    /// contiguous arrays of the branch's element type (fixed arrays flattened). Entries are
    /// written a cluster at a time.
    fn fill(
        &self,
        py: Python<'_>,
        columns: Vec<(Bound<'_, PyAny>, Option<PyReadonlyArray1<'_, u32>>)>,
    ) -> PyResult<u64> {
        let mut inner = self.lock()?;
        if columns.len() != inner.kinds.len() {
            return Err(errors::value(format!(
                "{} columns for {} branches",
                columns.len(),
                inner.kinds.len()
            )));
        }
        let mut data = Vec::with_capacity(columns.len());
        for (i, ((values, counts), &kind)) in columns.iter().zip(&inner.kinds).enumerate() {
            let values = self::values(values, kind.scalar()).map_err(|_| {
                errors::value(format!(
                    "branch {i}: expected a 1-d array of {}",
                    kind.scalar()
                ))
            })?;
            let offsets = match (kind.is_variable(), counts) {
                (true, Some(counts)) => {
                    let counts = counts.as_slice().map_err(errors::value)?;
                    let mut offsets = Vec::with_capacity(counts.len() + 1);
                    offsets.push(0u64);
                    let mut end = 0u64;
                    for &n in counts {
                        end += u64::from(n);
                        offsets.push(end);
                    }
                    offsets
                }
                (false, None) => Vec::new(),
                _ => {
                    return Err(errors::value(format!(
                        "branch {i}: counts given for a fixed-size branch or missing for a \
                         variable-length one"
                    )));
                }
            };
            data.push(ColumnData {
                values,
                offsets,
                levels: Vec::new(),
            });
        }
        let output = inner.output()?;
        let result = py.detach(|| output.fill(data));
        inner.check(result)
    }

    /// Finishes the open tree and the file, which then appears under its name; returns what
    /// could not be kept as asked (notes), in words.
    fn close(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let mut inner = self.lock()?;
        match inner.output.take() {
            Some(output) => py
                .detach(|| output.finish())
                .map(|summary| summary.notes)
                .map_err(errors::convert),
            None => Ok(Vec::new()),
        }
    }

    /// Abandons the file: nothing appears under its name.
    fn abort(&self) -> PyResult<()> {
        self.lock()?.output = None;
        Ok(())
    }

    /// Whether the writer still accepts trees and entries.
    #[getter]
    fn is_open(&self) -> PyResult<bool> {
        Ok(self.lock()?.output.is_some())
    }
}

/// A NumPy array's values, copied, as `t`'s.
fn values(array: &Bound<'_, PyAny>, t: ScalarType) -> PyResult<Values> {
    macro_rules! copy {
        ($variant:ident, $t:ty) => {{
            let a: PyReadonlyArray1<'_, $t> = array.extract()?;
            Values::$variant(a.as_slice()?.to_vec())
        }};
    }
    Ok(match t {
        ScalarType::Bool => copy!(Bool, bool),
        ScalarType::I8 => copy!(I8, i8),
        ScalarType::U8 => copy!(U8, u8),
        ScalarType::I16 => copy!(I16, i16),
        ScalarType::U16 => copy!(U16, u16),
        ScalarType::I32 => copy!(I32, i32),
        ScalarType::U32 => copy!(U32, u32),
        ScalarType::I64 => copy!(I64, i64),
        ScalarType::U64 => copy!(U64, u64),
        ScalarType::F32 => copy!(F32, f32),
        ScalarType::F64 => copy!(F64, f64),
    })
}
