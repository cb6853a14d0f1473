//! Writing evtc files (`evtc-format`'s `FileWriter`) and converting files (`evtc-tools`).

use std::path::PathBuf;

use evtc_codecs::Codec;
use evtc_format::{DataType, FileWriter, OwnedTreeWriter, ScalarType};
use evtc_tools::{Glob, Jobs, Settings};
use numpy::PyReadonlyArray1;

use crate::reader::numpy_name;
use pyo3::prelude::*;
use std::sync::{Mutex, MutexGuard};

use crate::errors;

pub(crate) fn scalar_type(name: &str) -> PyResult<ScalarType> {
    Ok(match name {
        "bool" => ScalarType::Bool,
        "int8" => ScalarType::I8,
        "uint8" => ScalarType::U8,
        "int16" => ScalarType::I16,
        "uint16" => ScalarType::U16,
        "int32" => ScalarType::I32,
        "uint32" => ScalarType::U32,
        "int64" => ScalarType::I64,
        "uint64" => ScalarType::U64,
        "float32" => ScalarType::F32,
        "float64" => ScalarType::F64,
        other => return Err(errors::value(format!("no evtc type for dtype {other:?}"))),
    })
}

pub(crate) fn codec(spec: &str) -> PyResult<Codec> {
    spec.parse::<Codec>()
        .map_err(|e| errors::value(format!("codec {spec:?}: {e}")))
}

/// The settings of `job` from `(name, value)` pairs, as `evtc.convert` and the others spell
/// them: the library's one parser, a setting the job does not take refused.
pub(crate) fn settings(job: Jobs, pairs: &[(String, String)]) -> PyResult<Settings> {
    let mut settings = Settings::default();
    for (name, value) in pairs {
        settings
            .set_for(job, &format!("{name}={value}"))
            .map_err(errors::value)?;
    }
    Ok(settings)
}

/// The settings every job takes, as dicts of `name`, `aliases`, `shape` (`switch`, `value`,
/// `list`, `rule`), `placeholder`, `example`, `help`, `jobs` (names), `default` (text or
/// `None`) and `flag` (the command line's option).
#[pyfunction]
pub(crate) fn settings_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    evtc_tools::SETTINGS
        .iter()
        .map(|s| {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item("aliases", s.aliases.to_vec())?;
            let shape = match s.shape {
                evtc_tools::Shape::Switch => "switch",
                evtc_tools::Shape::Value => "value",
                evtc_tools::Shape::List => "list",
                evtc_tools::Shape::Rule => "rule",
            };
            d.set_item("shape", shape)?;
            d.set_item("placeholder", s.placeholder)?;
            d.set_item("example", s.example)?;
            d.set_item("help", s.help)?;
            d.set_item("jobs", s.jobs.names().collect::<Vec<_>>())?;
            d.set_item("default", s.default_value())?;
            d.set_item("flag", format!("--{}", s.long()))?;
            Ok(d)
        })
        .collect()
}

pub(crate) fn glob(pattern: &str) -> PyResult<Glob> {
    pattern
        .parse::<Glob>()
        .map_err(|e| errors::value(format!("branch pattern {pattern:?}: {e}")))
}

enum State {
    Open(FileWriter),
    Tree(OwnedTreeWriter),
    Done,
}

/// A file being written; it appears under its name only after `close()`.
#[pyclass(frozen, module = "evtc._lib")]
pub(crate) struct Writer {
    inner: Mutex<Inner>,
}

struct Inner {
    state: State,
    /// The open tree's branch element types, in branch order.
    types: Vec<DataType>,
    /// The settings, whose per-branch rules apply to each tree's branches.
    settings: Settings,
}

impl Writer {
    fn lock(&self) -> PyResult<MutexGuard<'_, Inner>> {
        writer_state(&self.inner)
    }
}

/// A writer's state; another thread writing at the same time is an error, not a wait (waiting
/// while holding the GIL could deadlock with a thread that released it).
pub(crate) fn writer_state<T>(inner: &std::sync::Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    inner.try_lock().map_err(|_| {
        errors::raise(
            "Error",
            "the file is being written by another thread".into(),
        )
    })
}

impl Inner {
    fn fail<T>(&mut self, error: evtc_format::Error) -> PyResult<T> {
        // A writer error leaves the file in an unknown state: drop it (its temporary file goes too).
        self.state = State::Done;
        Err(errors::format(error))
    }

    fn finish_tree(&mut self, py: Python<'_>) -> PyResult<()> {
        if let State::Tree(_) = self.state {
            let State::Tree(tree) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!()
            };
            match py.detach(|| tree.finish()) {
                Ok(file) => self.state = State::Open(file),
                Err(e) => return self.fail(e),
            }
        }
        Ok(())
    }
}

#[pymethods]
impl Writer {
    /// Starts writing `path` with the writer's settings (`(name, value)` pairs; `evtc.recreate`
    /// adds `overwrite`), or, with `update`, opens it for an update in place.
    #[new]
    #[pyo3(signature = (path, settings, update=false))]
    fn new(path: PathBuf, settings: Vec<(String, String)>, update: bool) -> PyResult<Writer> {
        let settings = self::settings(Jobs::WRITER, &settings)?;
        if !update {
            let format = settings.output_format(&path).map_err(errors::convert)?;
            if format != evtc_tools::OutputFormat::Evtc {
                return Err(errors::value(format!(
                    "{format} output is written by RootWriter, not Writer"
                )));
            }
        }
        let options = settings.write_options();
        let file = if update {
            FileWriter::append(&path, options)
        } else {
            FileWriter::create(&path, options)
        }
        .map_err(errors::format)?;
        Ok(Writer {
            inner: Mutex::new(Inner {
                state: State::Open(file),
                types: Vec::new(),
                settings,
            }),
        })
    }

    /// Finishes the open tree (if any) and starts tree `name`, or with `add`, adds branches to
    /// the file's tree `name` (a writer made with `update`). Each branch is
    /// `(name, kind, dtype, length, counter)`, kind one of `scalar`, `fixed`, `jagged`,
    /// `bytes`, `string`; the settings' per-branch rules that match it apply.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (name, branches, add=false))]
    fn tree(
        &self,
        py: Python<'_>,
        name: &str,
        branches: Vec<(String, String, String, u32, Option<String>)>,
        add: bool,
    ) -> PyResult<()> {
        let mut inner = self.lock()?;
        let this = &mut *inner;
        this.finish_tree(py)?;
        let mut specs = Vec::with_capacity(branches.len());
        let mut types = Vec::with_capacity(branches.len());
        for (branch, kind, dtype, length, counter) in branches {
            let t = scalar_type(&dtype)?;
            let dtype = match kind.as_str() {
                "scalar" => DataType::Scalar(t),
                "fixed" => DataType::FixedArray(t, length),
                "jagged" => DataType::Jagged(t),
                "bytes" => DataType::Bytes,
                "string" => DataType::Utf8,
                other => return Err(errors::value(format!("no branch kind {other:?}"))),
            };
            specs.push(
                this.settings
                    .branch_spec(&branch, dtype, counter.as_ref(), &[]),
            );
            types.push(dtype);
        }
        let file = match std::mem::replace(&mut this.state, State::Done) {
            State::Open(file) => file,
            _ => return Err(errors::raise("Error", "the file is closed".into())),
        };
        let tree = if add {
            file.into_add_branches(name, specs)
        } else {
            file.into_tree(name, specs)
        };
        match tree {
            Ok(tree) => {
                this.state = State::Tree(tree);
                this.types = types;
                Ok(())
            }
            Err(e) => this.fail(e),
        }
    }

    /// Finishes the open tree (if any) and opens the file's tree `name` for appending entries
    /// (a writer made with `update`); returns its branches as `(name, kind, dtype, length)`.
    fn extend_tree(
        &self,
        py: Python<'_>,
        name: &str,
    ) -> PyResult<Vec<(String, String, String, u32)>> {
        let mut inner = self.lock()?;
        let this = &mut *inner;
        this.finish_tree(py)?;
        let file = match std::mem::replace(&mut this.state, State::Done) {
            State::Open(file) => file,
            _ => return Err(errors::raise("Error", "the file is closed".into())),
        };
        let (types, schema): (Vec<DataType>, Vec<_>) = file
            .trees()
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.branches.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|b| {
                let (kind, length) = match b.dtype {
                    DataType::Scalar(_) => ("scalar", 1),
                    DataType::FixedArray(_, n) => ("fixed", n),
                    DataType::Jagged(_) => ("jagged", 0),
                    DataType::Bytes => ("bytes", 0),
                    DataType::Utf8 => ("string", 0),
                };
                let dtype = numpy_name(b.dtype.scalar()).to_owned();
                (b.dtype, (b.name.clone(), kind.to_owned(), dtype, length))
            })
            .unzip();
        match file.into_extend(name) {
            Ok(tree) => {
                this.state = State::Tree(tree);
                this.types = types;
                Ok(schema)
            }
            Err(e) => this.fail(e),
        }
    }

    /// The file's trees as `(name, entries, branch names)`: those written so far and, updating,
    /// the file's.
    fn trees(&self) -> PyResult<Vec<(String, u64, Vec<String>)>> {
        let inner = self.lock()?;
        let file = match &inner.state {
            State::Open(file) => file,
            State::Tree(tree) => tree.file(),
            State::Done => return Err(errors::raise("Error", "the file is closed".into())),
        };
        Ok(file
            .trees()
            .iter()
            .map(|t| {
                let names = t.branches.iter().map(|b| b.name.clone()).collect();
                (t.name.clone(), t.entries, names)
            })
            .collect())
    }

    /// Fills and commits a batch of entries of the open tree: one `(values, counts)` pair per
    /// branch in order (`counts` for variable-length branches, `None` otherwise); `values` are
    /// 1-d contiguous arrays of the branch's element type (fixed arrays flattened).
    fn fill(
        &self,
        py: Python<'_>,
        columns: Vec<(Bound<'_, PyAny>, Option<PyReadonlyArray1<'_, u32>>)>,
    ) -> PyResult<u64> {
        let mut inner = self.lock()?;
        let this = &mut *inner;
        let State::Tree(tree) = &mut this.state else {
            return Err(errors::raise("Error", "no tree is open".into()));
        };
        if columns.len() != this.types.len() {
            return Err(errors::value(format!(
                "{} columns for {} branches",
                columns.len(),
                this.types.len()
            )));
        }
        let mut result = Ok(());
        for (i, ((values, counts), dtype)) in columns.iter().zip(&this.types).enumerate() {
            macro_rules! fill {
                ($t:ty) => {{
                    let values: PyReadonlyArray1<'_, $t> = values.extract().map_err(|_| {
                        errors::value(format!(
                            "branch {i}: expected a 1-d array of {}",
                            dtype.scalar()
                        ))
                    })?;
                    let values = values.as_slice().map_err(errors::value)?;
                    match (dtype.is_variable(), counts) {
                        (true, Some(counts)) => {
                            tree.fill_jagged(i, counts.as_slice().map_err(errors::value)?, values)
                        }
                        (false, None) => tree.fill_column(i, values),
                        _ => return Err(errors::value(format!("branch {i}: counts given for a fixed-size branch or missing for a variable-length one"))),
                    }
                }};
            }
            let filled = match dtype.scalar() {
                ScalarType::Bool => fill!(bool),
                ScalarType::I8 => fill!(i8),
                ScalarType::U8 => fill!(u8),
                ScalarType::I16 => fill!(i16),
                ScalarType::U16 => fill!(u16),
                ScalarType::I32 => fill!(i32),
                ScalarType::U32 => fill!(u32),
                ScalarType::I64 => fill!(i64),
                ScalarType::U64 => fill!(u64),
                ScalarType::F32 => fill!(f32),
                ScalarType::F64 => fill!(f64),
            };
            if let Err(e) = filled {
                result = Err(e);
                break;
            }
        }
        let State::Tree(tree) = &mut this.state else {
            unreachable!()
        };
        let committed = match result {
            Ok(()) => py.detach(|| tree.commit()),
            Err(e) => Err(e),
        };
        committed.or_else(|e| this.fail(e))
    }

    /// Finishes the open tree and the file, which then appears under its name.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut inner = self.lock()?;
        inner.finish_tree(py)?;
        match std::mem::replace(&mut inner.state, State::Done) {
            State::Open(file) => py.detach(|| file.finish()).map_err(errors::format),
            State::Tree(_) => unreachable!("finished above"),
            State::Done => Ok(()),
        }
    }

    /// Abandons the file: nothing appears under its name.
    fn abort(&self) -> PyResult<()> {
        self.lock()?.state = State::Done;
        Ok(())
    }

    /// Whether the writer still accepts trees and entries.
    #[getter]
    fn is_open(&self) -> PyResult<bool> {
        Ok(!matches!(self.lock()?.state, State::Done))
    }
}

/// Converts a ROOT or evtc file into a new evtc file (`evtc-tools`); returns the summary as
/// JSON, as `evtc convert --json` prints it. `settings` are `(name, value)` pairs of the
/// library's settings, spelled as text (`("cluster_size", "30MB")`, `("branch_codec",
/// "Muon_*=lz4")`).
#[pyfunction]
pub(crate) fn convert(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    settings: Vec<(String, String)>,
) -> PyResult<String> {
    let settings = self::settings(Jobs::CONVERT, &settings)?;
    let summary = py
        .detach(|| evtc_tools::convert(&input, &output, &settings, &mut |_| {}))
        .map_err(errors::convert)?;
    serde_json::to_string(&summary).map_err(errors::value)
}

/// Adds the branches of `from`'s tree to the tree of the same name in `file`, in place
/// (`evtc_tools::add_columns`); returns the report as JSON, as `evtc add-columns --json`
/// prints it.
#[pyfunction]
pub(crate) fn add_columns(
    py: Python<'_>,
    file: PathBuf,
    from: PathBuf,
    settings: Vec<(String, String)>,
) -> PyResult<String> {
    let settings = self::settings(Jobs::ADD_COLUMNS, &settings)?;
    let report = py
        .detach(|| evtc_tools::add_columns(&file, &from, &settings, &mut |_, _| {}))
        .map_err(errors::convert)?;
    serde_json::to_string(&report).map_err(errors::value)
}

/// Merges evtc (and ROOT) files into a new evtc file (`evtc_tools::merge`); returns the report
/// as JSON, as `evtc merge --json` prints it. `schemas` is `same`, `union` or `intersect`; the
/// settings are spelled as for [`convert`] and matter for ROOT inputs and, with `recompress`,
/// for every branch.
#[pyfunction]
#[pyo3(signature = (output, inputs, settings, schemas="same", recompress=false))]
pub(crate) fn merge(
    py: Python<'_>,
    output: PathBuf,
    inputs: Vec<String>,
    settings: Vec<(String, String)>,
    schemas: &str,
    recompress: bool,
) -> PyResult<String> {
    let options = evtc_tools::MergeOptions {
        schemas: schemas
            .parse()
            .map_err(|e| errors::value(format!("schemas {schemas:?}: {e}")))?,
        recompress,
        settings: self::settings(Jobs::MERGE, &settings)?,
    };
    let inputs = evtc_tools::expand_inputs(&inputs).map_err(errors::convert)?;
    let report = py
        .detach(|| evtc_tools::merge(&output, &inputs, &options, &mut |_| {}))
        .map_err(errors::convert)?;
    serde_json::to_string(&report).map_err(errors::value)
}

/// Skims a tree of an evtc file into a new evtc file (`evtc_tools::skim`); returns the report
/// as JSON, as `evtc skim --json` prints it. At most one of `entries` (entry numbers), `mask`
/// (one flag per entry) and `selection` (an expression) chooses the entries; the settings are
/// spelled as for [`convert`] (the tree, the branches; the codecs matter with `recompress`).
#[pyfunction]
#[pyo3(signature = (input, output, settings, entries=None, mask=None, selection=None, recompress=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn skim(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    settings: Vec<(String, String)>,
    entries: Option<PyReadonlyArray1<'_, u64>>,
    mask: Option<PyReadonlyArray1<'_, bool>>,
    selection: Option<&str>,
    recompress: bool,
) -> PyResult<String> {
    use evtc_tools::Entries;
    let chosen = match (entries, mask, selection) {
        (Some(e), None, None) => Entries::List(e.as_slice()?.to_vec()),
        (None, Some(m), None) => Entries::Mask(m.as_slice()?.to_vec()),
        (None, None, Some(text)) => Entries::Where(
            evtc_tools::Selection::parse(text)
                .map_err(|e| errors::value(format!("selection {text:?}: {e}")))?,
        ),
        (None, None, None) => Entries::All,
        _ => {
            return Err(errors::value(
                "give at most one of entries, mask and where".to_owned(),
            ));
        }
    };
    let options = evtc_tools::SkimOptions {
        entries: chosen,
        recompress,
        settings: self::settings(Jobs::SKIM, &settings)?,
    };
    let report = py
        .detach(|| evtc_tools::skim(&input, &output, &options, &mut |_| {}))
        .map_err(errors::convert)?;
    serde_json::to_string(&report).map_err(errors::value)
}

/// Gives tree `tree` of the evtc file at `path` (`None`: its first tree) an event index keyed by
/// the integer branches `major` and `minor` (`evtc_format::add_event_index`); returns the
/// summary as JSON, as `evtc index --json` prints it.
#[pyfunction]
#[pyo3(signature = (path, tree, major, minor))]
pub(crate) fn index(
    py: Python<'_>,
    path: PathBuf,
    tree: Option<&str>,
    major: &str,
    minor: &str,
) -> PyResult<String> {
    let summary = py
        .detach(|| evtc_format::add_event_index(&path, tree, major, minor))
        .map_err(errors::format)?;
    serde_json::to_string(&summary).map_err(errors::value)
}
