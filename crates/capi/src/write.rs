//! Writing: [`EvtcWriter`] and the functions over it.

use std::ffi::{CString, c_char, c_void};

use evtc_format::{DataType, FileWriter, OwnedTreeWriter, Scalar};
use evtc_root::{ColumnData, ColumnKind, Values};
use evtc_tools::{Jobs, OutputFormat, RootBranch, RootOutput, Settings};

use crate::{EvtcKind, EvtcScalar, EvtcStatus, Failure, Outcome, put, run, str_arg};

/// A file being written (from [`evtc_writer_create`]): an evtc file, or with the setting `to`
/// a ROOT file of RNTuples or TTrees. It appears under its name only when
/// [`evtc_writer_close`] succeeds, and [`evtc_writer_abort`] (or a crash) leaves nothing.
///
/// Thread safety: one thread at a time (calls on one writer from several threads at once are
/// not allowed; different writers are independent).
pub struct EvtcWriter {
    state: State,
    /// The open tree's branches' types, in order.
    types: Vec<DataType>,
    /// The settings, whose per-branch rules apply to each tree's branches.
    settings: Settings,
    error: CString,
}

impl std::fmt::Debug for EvtcWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvtcWriter").finish_non_exhaustive()
    }
}

enum State {
    Open(FileWriter),
    Tree(OwnedTreeWriter),
    /// A ROOT file, with the entries filled since the last commit, branch by branch.
    Root(Box<RootOutput>, Vec<ColumnData>),
    Done,
}

/// A branch of a tree to write ([`evtc_writer_tree`]).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EvtcBranchSpec {
    /// Its name.
    pub name: *const c_char,
    /// An `EvtcKind`: what it holds per entry.
    pub kind: i32,
    /// An `EvtcScalar`: the type of its values (`EVTC_SCALAR_U8` for bytes and strings).
    pub scalar: i32,
    /// Values per entry of an `EVTC_KIND_FIXED` branch.
    pub fixed_len: u32,
    /// For variable-length branches: the integer scalar branch of the same tree holding each
    /// entry's length (declared before it), or null.
    pub counter: *const c_char,
}

/// The settings of a writer from a null-terminated array of `name=value` strings (null: the
/// defaults), each through the library's one parser.
///
/// # Safety
/// `settings` is null or a null-terminated array of NUL-terminated strings.
unsafe fn settings_arg(settings: *const *const c_char) -> Outcome<Settings> {
    let mut out = Settings::default();
    if settings.is_null() {
        return Ok(out);
    }
    for i in 0.. {
        // SAFETY: null-terminated array by contract: every element up to the null is readable.
        let item = unsafe { *settings.add(i) };
        if item.is_null() {
            break;
        }
        // SAFETY: NUL-terminated by contract.
        let pair = unsafe { str_arg(item, &format!("settings[{i}]")) }?;
        out.set_for(Jobs::WRITER, pair)
            .map_err(|e| Failure::argument(format!("settings[{i}]: {e}")))?;
    }
    Ok(out)
}

/// Starts writing the evtc file `path` (through an unnamed file in its directory, named only by
/// [`evtc_writer_close`]), or with `"to=rntuple"` or `"to=ttree"` a ROOT file of RNTuples or
/// TTrees (a path named `*.root` needs `to`). `settings` is a null-terminated array of
/// `name=value` strings, the settings `evtc convert` takes as options and Python's
/// `evtc.recreate` as keywords, under the same names (`"codec=lz4"`, `"rac=on"`,
/// `"cluster_size=1000"`, `"branch_codec=Muon_*=zstd:9"`, `"overwrite=true"`; docs/c-cpp.md
/// lists them), or null for the defaults: zstd:5, no RAC, clusters of 32 MiB, every core
/// compressing, an existing file not replaced (`EVTC_STATUS_ERROR_EXISTS`). A setting it does not know or take, or a value it does not
/// parse, is `EVTC_STATUS_ERROR_ARGUMENT` naming it. On success `*out` is the new writer.
///
/// # Safety
/// `path` is a NUL-terminated string; `settings` null or a null-terminated array of
/// NUL-terminated strings; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_create(
    path: *const c_char,
    settings: *const *const c_char,
    out: *mut *mut EvtcWriter,
) -> EvtcStatus {
    run(
        |_| {},
        || {
            // SAFETY: as the function's contract says.
            let path = unsafe { str_arg(path, "path") }?;
            // SAFETY: null or a null-terminated array by contract.
            let settings = unsafe { settings_arg(settings) }?;
            if out.is_null() {
                return Err(Failure::argument("out is a null pointer"));
            }
            let state = match settings.output_format(path.as_ref())? {
                OutputFormat::Evtc => {
                    State::Open(FileWriter::create(path, settings.write_options())?)
                }
                format => {
                    let root = RootOutput::create(path.as_ref(), format, &settings)?;
                    State::Root(Box::new(root), Vec::new())
                }
            };
            let writer = Box::into_raw(Box::new(EvtcWriter {
                state,
                types: Vec::new(),
                settings,
                error: CString::default(),
            }));
            // SAFETY: checked not null, writable by contract.
            unsafe { out.write(writer) };
            Ok(())
        },
    )
}

/// Runs `f` on the writer behind `writer`, keeping a failure's message in it. A failure of
/// the library's writer (not of the arguments, which are checked first) leaves the writer
/// unusable: nothing will appear.
fn with_writer(writer: *mut EvtcWriter, f: impl FnOnce(&mut EvtcWriter) -> Outcome) -> EvtcStatus {
    // SAFETY: the caller passes null or a writer from `evtc_writer_create` not yet closed,
    // used by one thread at a time.
    let handle = unsafe { writer.as_mut() };
    let Some(w) = handle else {
        return run(
            |_| {},
            || Err(Failure::argument("writer is a null pointer")),
        );
    };
    let mut message = None;
    let mut fatal = false;
    let status = run(
        |m| message = Some(m.clone()),
        || {
            let outcome = f(w);
            fatal = outcome.as_ref().is_err_and(|e| e.fatal);
            outcome
        },
    );
    if let Some(m) = message {
        // SAFETY: as above; `f` is done with it.
        let w = unsafe { &mut *writer };
        if fatal || status == EvtcStatus::ErrorInternal {
            w.state = State::Done;
        }
        w.error = m;
    }
    status
}

impl EvtcWriter {
    /// Finishes the open tree, if any.
    fn finish_tree(&mut self) -> Outcome {
        if let State::Tree(_) = self.state {
            let State::Tree(tree) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("matched above")
            };
            self.state = State::Open(tree.finish()?);
        }
        Ok(())
    }
}

/// Finishes the tree being written (if any) and starts tree `name` with the `count` branches
/// of `branches`; the writer's per-branch settings (`branch_codec`, `branch_rac`, ...) that
/// match a branch's name apply to it.
///
/// # Safety
/// `writer` is null or an open writer; `name` a NUL-terminated string; `branches` points to
/// `count` specs whose strings are NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_tree(
    writer: *mut EvtcWriter,
    name: *const c_char,
    branches: *const EvtcBranchSpec,
    count: usize,
) -> EvtcStatus {
    with_writer(writer, |w| {
        // SAFETY: as the function's contract says.
        let name = unsafe { str_arg(name, "name") }?;
        if branches.is_null() && count > 0 {
            return Err(Failure::argument("branches is a null pointer"));
        }
        let specs: &[EvtcBranchSpec] = if count == 0 {
            &[]
        } else {
            // SAFETY: `count` specs by contract.
            unsafe { std::slice::from_raw_parts(branches, count) }
        };
        let mut out = Vec::with_capacity(count);
        let mut types = Vec::with_capacity(count);
        let mut roots = Vec::with_capacity(count);
        for (i, spec) in specs.iter().enumerate() {
            // SAFETY: NUL-terminated by contract.
            let branch = unsafe { str_arg(spec.name, &format!("branches[{i}].name")) }?;
            let t = EvtcScalar::from_id(spec.scalar)?.to_format();
            let dtype = match spec.kind {
                k if k == EvtcKind::Scalar as i32 => DataType::Scalar(t),
                k if k == EvtcKind::Fixed as i32 && spec.fixed_len > 0 => {
                    DataType::FixedArray(t, spec.fixed_len)
                }
                k if k == EvtcKind::Jagged as i32 => DataType::Jagged(t),
                k if k == EvtcKind::Bytes as i32 => DataType::Bytes,
                k if k == EvtcKind::Utf8 as i32 => DataType::Utf8,
                k => {
                    return Err(Failure::argument(format!(
                        "branches[{i}] ({branch:?}): kind {k} with fixed_len {} is not an \
                         EvtcKind (0 to 4; a fixed array needs fixed_len > 0)",
                        spec.fixed_len
                    )));
                }
            };
            let counter = if spec.counter.is_null() {
                None
            } else {
                // SAFETY: NUL-terminated by contract.
                let counter = unsafe { str_arg(spec.counter, &format!("branches[{i}].counter")) }?;
                Some(counter.to_owned())
            };
            out.push(w.settings.branch_spec(branch, dtype, counter.as_ref(), &[]));
            roots.push(root_branch(branch, dtype, counter));
            types.push(dtype);
        }
        if let State::Root(root, batch) = &mut w.state {
            let branches = roots;
            *batch = branches.iter().map(|b| ColumnData::new(b.kind)).collect();
            root.tree(name, branches)?;
            w.types = types;
            return Ok(());
        }
        w.finish_tree()?;
        let file = match std::mem::replace(&mut w.state, State::Done) {
            State::Open(file) => file,
            _ => return Err(Failure::argument("the writer is closed")),
        };
        w.state = State::Tree(file.into_tree(name, out)?);
        w.types = types;
        Ok(())
    })
}

/// Fills a batch of entries of branch `branch` (its position in the tree's specs) of the open
/// tree: `n_values` values of type `scalar` (the branch's) at `values`, and for variable-length
/// branches the `n_entries` entries' lengths at `counts` (summing to `n_values`; `counts` is
/// ignored otherwise). Every branch gets the same number of entries, then
/// [`evtc_writer_commit`]. `values` must be aligned for its type; `bool` values are bytes, any
/// non-zero byte true.
///
/// # Safety
/// `writer` is null or an open writer; `values` points to `n_values` values; `counts` null or
/// `n_entries` `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_fill(
    writer: *mut EvtcWriter,
    branch: usize,
    scalar: i32,
    values: *const c_void,
    n_values: u64,
    counts: *const u32,
    n_entries: u64,
) -> EvtcStatus {
    with_writer(writer, |w| {
        let dtype = *w.types.get(branch).ok_or_else(|| {
            Failure::argument(format!(
                "no branch number {branch} (the tree has {})",
                w.types.len()
            ))
        })?;
        let scalar = EvtcScalar::from_id(scalar)?;
        if scalar.to_format() != dtype.scalar() {
            return Err(Failure::new(
                EvtcStatus::ErrorType,
                format!(
                    "branch {branch} holds {}, not {}",
                    dtype.scalar(),
                    scalar.to_format()
                ),
            ));
        }
        let n_values = usize::try_from(n_values)
            .map_err(|_| Failure::argument("n_values does not fit memory"))?;
        let counts: &[u32] = if dtype.is_variable() {
            let n = usize::try_from(n_entries)
                .map_err(|_| Failure::argument("n_entries does not fit memory"))?;
            // SAFETY: `n` counts by contract.
            unsafe { slice_arg(counts, n, "counts") }?
        } else {
            &[]
        };
        if let State::Root(_, batch) = &mut w.state {
            // SAFETY: as the function's contract says.
            let values = unsafe { values_arg(scalar, values, n_values) }?;
            return gather(
                &mut batch[branch],
                values,
                dtype.is_variable().then_some(counts),
            );
        }
        let State::Tree(tree) = &mut w.state else {
            return Err(Failure::argument("no tree is open (evtc_writer_tree)"));
        };
        macro_rules! go {
            ($t:ty) => {{
                // SAFETY: `n_values` values by contract.
                let v: &[$t] = unsafe { slice_arg(values.cast::<$t>(), n_values, "values") }?;
                if dtype.is_variable() {
                    tree.fill_jagged(branch, counts, v)?
                } else {
                    tree.fill_column(branch, v)?
                }
                Ok(())
            }};
        }
        if scalar == EvtcScalar::Bool {
            // Any byte is a valid C bool; Rust's `bool` is 0 or 1 only.
            // SAFETY: `n_values` bytes by contract.
            let bytes: &[u8] = unsafe { slice_arg(values.cast::<u8>(), n_values, "values") }?;
            let v: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
            if dtype.is_variable() {
                tree.fill_jagged(branch, counts, &v)?;
            } else {
                tree.fill_column(branch, &v)?;
            }
            return Ok(());
        }
        by_scalar!(scalar, go)
    })
}

/// A ROOT branch of `dtype`: its kind as the readers name it.
fn root_branch(name: &str, dtype: DataType, counter: Option<String>) -> RootBranch {
    let t = dtype.scalar();
    let kind = match dtype {
        DataType::Scalar(_) => ColumnKind::Scalar(t),
        DataType::FixedArray(_, n) => ColumnKind::Fixed(t, n as usize),
        DataType::Jagged(_) => ColumnKind::Jagged(t),
        DataType::Bytes | DataType::Utf8 => ColumnKind::String,
    };
    RootBranch {
        counter,
        ..RootBranch::new(name, kind)
    }
}

/// Empty data of `data`'s kind.
fn empty_like(data: &ColumnData) -> ColumnData {
    let mut empty = data.clone();
    empty.clear();
    empty
}

/// `n_values` values of `scalar` at `values`, copied (C bools: any non-zero byte is true).
///
/// # Safety
/// `values` points to `n_values` values of `scalar`'s type (null for none).
unsafe fn values_arg(
    scalar: EvtcScalar,
    values: *const c_void,
    n_values: usize,
) -> Outcome<Values> {
    if scalar == EvtcScalar::Bool {
        // SAFETY: `n_values` bytes by contract.
        let bytes: &[u8] = unsafe { slice_arg(values.cast::<u8>(), n_values, "values") }?;
        return Ok(Values::Bool(bytes.iter().map(|&b| b != 0).collect()));
    }
    macro_rules! go {
        ($t:ty) => {{
            // SAFETY: `n_values` values by contract.
            let v: &[$t] = unsafe { slice_arg(values.cast::<$t>(), n_values, "values") }?;
            Values::from(v.to_vec())
        }};
    }
    Ok(by_scalar!(scalar, go))
}

/// Appends a batch of entries (`values`, and for variable-length branches their `counts`) to
/// a ROOT branch's gathered entries.
fn gather(data: &mut ColumnData, values: Values, counts: Option<&[u32]>) -> Outcome {
    if let Some(counts) = counts {
        let total: u64 = counts.iter().map(|&n| u64::from(n)).sum();
        if total != values.len() as u64 {
            return Err(Failure::argument(format!(
                "counts sum to {total}, not to the {} values given",
                values.len()
            )));
        }
        let mut end = data.values.len() as u64;
        for &n in counts {
            end += u64::from(n);
            data.offsets.push(end);
        }
    }
    let n = values.len();
    if !data.values.extend_from(&values, 0..n) {
        return Err(Failure::new(
            EvtcStatus::ErrorType,
            "values of another type".to_owned(),
        ));
    }
    Ok(())
}

/// `n` values at `ptr` as a slice (empty for 0, whatever `ptr`).
///
/// # Safety
/// `ptr` is null or points to `n` initialized values of `T`.
unsafe fn slice_arg<'a, T: Scalar>(ptr: *const T, n: usize, what: &str) -> Outcome<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::argument(format!("{what} is a null pointer")));
    }
    if !(ptr as usize).is_multiple_of(align_of::<T>()) {
        return Err(Failure::argument(format!(
            "{what} is not aligned for {} ({} bytes)",
            T::TYPE,
            align_of::<T>()
        )));
    }
    // SAFETY: not null, aligned, and `n` initialized values by contract (every bit pattern is a
    // valid value of the number types this is called with; bools are read as bytes).
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// Commits the entries filled since the last commit (every branch must have received as many);
/// `*entries` (if not null) is their number.
///
/// # Safety
/// `writer` is null or an open writer; `entries` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_commit(
    writer: *mut EvtcWriter,
    entries: *mut u64,
) -> EvtcStatus {
    with_writer(writer, |w| {
        let n = match &mut w.state {
            State::Tree(tree) => tree.commit()?,
            State::Root(root, batch) if !batch.is_empty() => {
                let fresh = batch.iter().map(empty_like).collect();
                root.fill(std::mem::replace(batch, fresh))?
            }
            _ => return Err(Failure::argument("no tree is open (evtc_writer_tree)")),
        };
        if !entries.is_null() {
            // SAFETY: writable by contract.
            unsafe { put(entries, n, "entries") }?;
        }
        Ok(())
    })
}

/// Finishes the open tree and the file, which then appears under its name (synced to disk),
/// and frees the writer, whatever the outcome: on failure nothing appears and the message is
/// `evtc_last_error()`'s.
///
/// # Safety
/// `writer` is null or an open writer, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_close(writer: *mut EvtcWriter) -> EvtcStatus {
    if writer.is_null() {
        return run(
            |_| {},
            || Err(Failure::argument("writer is a null pointer")),
        );
    }
    // SAFETY: a pointer from `evtc_writer_create`, closed once by contract.
    let mut w = unsafe { Box::from_raw(writer) };
    run(
        |_| {},
        move || {
            w.finish_tree()?;
            match std::mem::replace(&mut w.state, State::Done) {
                State::Open(file) => Ok(file.finish()?),
                State::Root(root, _) => root.finish().map(|_| ()).map_err(Failure::from),
                State::Tree(_) => unreachable!("finished above"),
                State::Done => Err(Failure::argument(format!(
                    "the writer failed before and wrote nothing: {}",
                    w.error.to_string_lossy()
                ))),
            }
        },
    )
}

/// Frees the writer without finishing: nothing appears under its name (null is ignored).
///
/// # Safety
/// `writer` is null or an open writer, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_abort(writer: *mut EvtcWriter) {
    if !writer.is_null() {
        // SAFETY: a pointer from `evtc_writer_create`, freed once by contract.
        drop(unsafe { Box::from_raw(writer) });
    }
}

/// The message of the last call on `writer` that failed, or an empty string (also for null).
/// Valid until the next call on `writer` fails, or it is closed.
///
/// # Safety
/// `writer` is null or an open writer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_writer_error(writer: *const EvtcWriter) -> *const c_char {
    // SAFETY: as the function's contract says.
    unsafe { writer.as_ref() }.map_or(c"".as_ptr(), |w| w.error.as_ptr())
}
