//! Reading: [`EvtcFile`] and the functions over it.

use std::ffi::{CString, c_char, c_void};
use std::ptr;
use std::sync::Mutex;

use evtc_format::{
    BranchMeta, ChainedTrees, DataType, FileReader, LocalFile, ReadAt, ReadOptions, Scalar,
};
use evtc_tools::FileKind;

use crate::{EvtcKind, EvtcScalar, EvtcStatus, Failure, Outcome, c_string, put, run, str_arg};

/// The read-at callback of [`evtc_open_reader`]: fill `buffer` with the `len` bytes at
/// `offset` and return 0, or return anything else on failure. It may be called from several
/// threads at once.
pub type EvtcReadAt = Option<
    unsafe extern "C" fn(user: *mut c_void, offset: u64, buffer: *mut u8, len: usize) -> i32,
>;

/// An open evtc file (from [`evtc_open`] or [`evtc_open_reader`]), or several read as one
/// (from [`evtc_open_chain`]); freed by [`evtc_close`].
///
/// Thread safety: every function that takes a `const EvtcFile*` may be called from several
/// threads at once (reads of different branches, or of the same, in parallel); the handle's
/// last error is then the last that any of them set.
pub struct EvtcFile {
    /// The files, in order: one, or a chain's.
    readers: Vec<FileReader<Source>>,
    /// The trees every file has, in the first file's order.
    trees: Vec<ChainTree>,
    error: Mutex<CString>,
}

/// A tree of every file of the handle, its entries numbered across the files.
#[derive(Debug)]
struct ChainTree {
    name: CString,
    /// The first entry of each file, then the tree's entries.
    offsets: Vec<u64>,
    /// The cluster ends of every file's tree, numbered across the files.
    cluster_ends: Vec<u64>,
    /// The first file's branches: names and counters, as C strings.
    branches: Vec<(CString, Option<CString>)>,
}

impl ChainTree {
    fn entries(&self) -> u64 {
        self.offsets.last().copied().unwrap_or(0)
    }
}

impl std::fmt::Debug for EvtcFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvtcFile")
            .field("trees", &self.trees)
            .finish_non_exhaustive()
    }
}

/// Where a file's bytes come from.
enum Source {
    Local(LocalFile),
    Callback(Callback),
}

struct Callback {
    read_at: unsafe extern "C" fn(*mut c_void, u64, *mut u8, usize) -> i32,
    user: *mut c_void,
    len: u64,
}

// SAFETY: the caller of `evtc_open_reader` promises that the callback may be called from any
// thread, and from several at once, with its `user` pointer.
unsafe impl Send for Callback {}
// SAFETY: as for `Send`.
unsafe impl Sync for Callback {}

impl ReadAt for Source {
    fn len(&self) -> u64 {
        match self {
            Source::Local(f) => f.len(),
            Source::Callback(c) => c.len,
        }
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        match self {
            Source::Local(f) => f.read_exact_at(offset, buf),
            Source::Callback(c) => {
                // SAFETY: `buf` is valid for `buf.len()` bytes; the callback's contract is to
                // write at most that many.
                let code = unsafe { (c.read_at)(c.user, offset, buf.as_mut_ptr(), buf.len()) };
                if code == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::other(format!(
                        "the read-at callback returned {code} reading {} bytes at offset {offset}",
                        buf.len()
                    )))
                }
            }
        }
    }

    fn path(&self) -> Option<&std::path::Path> {
        match self {
            Source::Local(f) => f.path(),
            Source::Callback(_) => None,
        }
    }
}

impl EvtcFile {
    /// `readers` as one: the trees every one has, entries numbered across them.
    fn new(readers: Vec<FileReader<Source>>) -> EvtcFile {
        let first = &readers[0];
        let trees = first
            .trees()
            .iter()
            .filter(|t| {
                readers[1..]
                    .iter()
                    .all(|r| r.trees().iter().any(|u| u.name == t.name))
            })
            .map(|t| {
                let mut offsets = vec![0u64];
                let mut cluster_ends = Vec::new();
                for r in &readers {
                    let meta = r
                        .trees()
                        .iter()
                        .find(|u| u.name == t.name)
                        .expect("filtered");
                    let first = *offsets.last().expect("not empty");
                    cluster_ends.extend(meta.cluster_ends.iter().map(|e| first.saturating_add(*e)));
                    offsets.push(first.saturating_add(meta.entries));
                }
                ChainTree {
                    name: c_string(&t.name),
                    offsets,
                    cluster_ends,
                    branches: t
                        .branches
                        .iter()
                        .map(|b| (c_string(&b.name), b.counter.as_deref().map(c_string)))
                        .collect(),
                }
            })
            .collect();
        EvtcFile {
            readers,
            trees,
            error: Mutex::new(CString::default()),
        }
    }

    fn tree(&self, tree: usize) -> Outcome<&ChainTree> {
        self.trees.get(tree).ok_or_else(|| {
            Failure::argument(format!(
                "no tree number {tree} (the file has {})",
                self.trees.len()
            ))
        })
    }

    /// Tree `tree` of every file, as one; and the tree's cached names.
    fn chain(&self, tree: usize) -> Outcome<(&ChainTree, ChainedTrees<'_, Source>)> {
        let t = self.tree(tree)?;
        let name = t.name.to_str().unwrap_or_default();
        let trees = self
            .readers
            .iter()
            .map(|r| r.tree(name))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((t, ChainedTrees::new(trees)?))
    }

    /// Branch `branch` of tree `tree`: the tree, and the first file's metadata of the branch.
    fn branch(
        &self,
        tree: usize,
        branch: usize,
    ) -> Outcome<(&ChainTree, ChainedTrees<'_, Source>, &BranchMeta)> {
        let (t, chain) = self.chain(tree)?;
        let meta = chain.branches().get(branch).ok_or_else(|| {
            Failure::argument(format!(
                "tree {:?} has no branch number {branch} (it has {})",
                t.name,
                chain.branches().len()
            ))
        })?;
        Ok((t, chain, meta))
    }
}

/// Runs `f` on the file behind `file`, keeping a failure's message in the handle.
fn with_file(file: *const EvtcFile, f: impl FnOnce(&EvtcFile) -> Outcome) -> EvtcStatus {
    // SAFETY: the caller passes null or a pointer from `evtc_open*` not yet closed.
    let handle = unsafe { file.as_ref() };
    run(
        |message| {
            if let Some(h) = handle
                && let Ok(mut error) = h.error.lock()
            {
                *error = message.clone();
            }
        },
        || f(handle.ok_or_else(|| Failure::argument("file is a null pointer"))?),
    )
}

/// The local evtc file at `path`, decoded by `threads` threads; an error names it.
fn open_local(path: &str, threads: u32) -> Outcome<FileReader<Source>> {
    let source = LocalFile::open(path)
        .map_err(|e| Failure::new(EvtcStatus::ErrorIo, format!("{path}: {e}")))?;
    if let Ok(FileKind::Root) = FileKind::of_path(std::path::Path::new(path)) {
        return Err(Failure::new(
            EvtcStatus::ErrorUnsupported,
            format!(
                "{path} is a ROOT file: the C API reads evtc files (`evtc convert` makes one of it; \
                 ROOT's own TTree or RNTupleReader reads it)"
            ),
        ));
    }
    let options = ReadOptions::default().threads(threads.max(1) as usize);
    FileReader::from_source(Source::Local(source), options)
        .map_err(|e| Failure::from(e.in_file(std::path::Path::new(path))))
}

fn opened(readers: Vec<FileReader<Source>>, out: *mut *mut EvtcFile) -> Outcome {
    let handle = Box::into_raw(Box::new(EvtcFile::new(readers)));
    // SAFETY: `out` was checked not to be null by the caller of this function.
    unsafe { out.write(handle) };
    Ok(())
}

/// Opens the evtc file at `path` (NUL-terminated UTF-8). `threads` threads decode a branch's
/// baskets at once (0 or 1: the calling thread). On success `*out` is the new handle, to free
/// with [`evtc_close`]; on failure it is left as it was.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` points to writable memory for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_open(
    path: *const c_char,
    threads: u32,
    out: *mut *mut EvtcFile,
) -> EvtcStatus {
    run(
        |_| {},
        || {
            // SAFETY: as the function's contract says.
            let path = unsafe { str_arg(path, "path") }?;
            if out.is_null() {
                return Err(Failure::argument("out is a null pointer"));
            }
            opened(vec![open_local(path, threads)?], out)
        },
    )
}

/// Opens the `count` evtc files at `paths` as one, as ROOT's `TChain`: its trees are those
/// every file has, their entries numbered across the files in order (entry 0 of the second file
/// follows the first file's last), their branches the first file's (a branch another file lacks
/// is an error naming it when read); cluster ends and branch sizes cover every file. As
/// [`evtc_open`] otherwise.
///
/// # Safety
/// `paths` points to `count` NUL-terminated strings; `out` points to writable memory for a
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_open_chain(
    paths: *const *const c_char,
    count: usize,
    threads: u32,
    out: *mut *mut EvtcFile,
) -> EvtcStatus {
    run(
        |_| {},
        || {
            if paths.is_null() || count == 0 {
                return Err(Failure::argument("a chain needs at least one path"));
            }
            if out.is_null() {
                return Err(Failure::argument("out is a null pointer"));
            }
            let mut readers = Vec::with_capacity(count);
            for i in 0..count {
                // SAFETY: `paths` holds `count` pointers, as the function's contract says.
                let path = unsafe { str_arg(*paths.add(i), "a path") }?;
                readers.push(open_local(path, threads)?);
            }
            opened(readers, out)
        },
    )
}

/// Opens an evtc file of `length` bytes read through `read_at` (called with `user`), for
/// storage other than local files. As [`evtc_open`] otherwise.
///
/// # Safety
/// `read_at` writes at most `len` bytes to `buffer` and may be called from several threads at
/// once until the handle is closed; `user` stays valid as long; `out` points to writable
/// memory for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_open_reader(
    read_at: EvtcReadAt,
    user: *mut c_void,
    length: u64,
    threads: u32,
    out: *mut *mut EvtcFile,
) -> EvtcStatus {
    run(
        |_| {},
        || {
            let read_at = read_at.ok_or_else(|| Failure::argument("read_at is a null pointer"))?;
            if out.is_null() {
                return Err(Failure::argument("out is a null pointer"));
            }
            let source = Source::Callback(Callback {
                read_at,
                user,
                len: length,
            });
            let options = ReadOptions::default().threads(threads.max(1) as usize);
            opened(vec![FileReader::from_source(source, options)?], out)
        },
    )
}

/// Frees a file handle (null is ignored). Strings and arrays the handle returned are freed with
/// it.
///
/// # Safety
/// `file` is null or a handle not yet closed, which no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_close(file: *mut EvtcFile) {
    if !file.is_null() {
        // SAFETY: a pointer from `Box::into_raw` in `opened`, closed once by contract.
        drop(unsafe { Box::from_raw(file) });
    }
}

/// The message of the last call on `file` that failed, or an empty string (also for null).
/// Valid until the next call on `file` fails, or it is closed.
///
/// # Safety
/// `file` is null or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_file_error(file: *const EvtcFile) -> *const c_char {
    // SAFETY: as the function's contract says.
    match unsafe { file.as_ref() } {
        Some(f) => f.error.lock().map_or(c"".as_ptr(), |e| e.as_ptr()),
        None => c"".as_ptr(),
    }
}

/// The number of trees (0 for null).
///
/// # Safety
/// `file` is null or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_tree_count(file: *const EvtcFile) -> usize {
    // SAFETY: as the function's contract says.
    unsafe { file.as_ref() }.map_or(0, |f| f.trees.len())
}

/// The name of tree `tree`, or null when there is no such tree. Valid while `file` is open.
///
/// # Safety
/// `file` is null or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_tree_name(file: *const EvtcFile, tree: usize) -> *const c_char {
    // SAFETY: as the function's contract says.
    unsafe { file.as_ref() }
        .and_then(|f| f.trees.get(tree))
        .map_or(ptr::null(), |t| t.name.as_ptr())
}

/// Finds the tree named `name`: its number in `*tree`.
///
/// # Safety
/// `file` is null or an open handle; `name` a NUL-terminated string; `tree` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_tree_find(
    file: *const EvtcFile,
    name: *const c_char,
    tree: *mut usize,
) -> EvtcStatus {
    with_file(file, |f| {
        // SAFETY: as the function's contract says.
        let name = unsafe { str_arg(name, "name") }?;
        let found = f
            .trees
            .iter()
            .position(|t| t.name.to_bytes() == name.as_bytes())
            .ok_or_else(|| {
                Failure::new(
                    EvtcStatus::ErrorNotFound,
                    format!("the file has no tree {name:?}"),
                )
            })?;
        // SAFETY: as the function's contract says.
        unsafe { put(tree, found, "tree") }
    })
}

/// The entries of tree `tree` (0 when there is no such tree).
///
/// # Safety
/// `file` is null or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_tree_entries(file: *const EvtcFile, tree: usize) -> u64 {
    // SAFETY: as the function's contract says.
    unsafe { file.as_ref() }
        .and_then(|f| f.trees.get(tree))
        .map_or(0, ChainTree::entries)
}

/// The number of branches of tree `tree` (0 when there is no such tree).
///
/// # Safety
/// `file` is null or an open handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_branch_count(file: *const EvtcFile, tree: usize) -> usize {
    // SAFETY: as the function's contract says.
    unsafe { file.as_ref() }
        .and_then(|f| f.trees.get(tree))
        .map_or(0, |t| t.branches.len())
}

/// The cluster ends of tree `tree`: `*count` strictly increasing entry numbers, the last the
/// tree's entries (clusters are the entry ranges to read in parallel). Null, with `*count` 0,
/// when there is no such tree. Valid while `file` is open.
///
/// # Safety
/// `file` is null or an open handle; `count` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_cluster_ends(
    file: *const EvtcFile,
    tree: usize,
    count: *mut usize,
) -> *const u64 {
    // SAFETY: as the function's contract says.
    let ends = unsafe { file.as_ref() }
        .and_then(|f| f.trees.get(tree))
        .map(|t| t.cluster_ends.as_slice());
    if !count.is_null() {
        // SAFETY: not null, and writable by contract.
        unsafe { count.write(ends.map_or(0, <[u64]>::len)) };
    }
    ends.map_or(ptr::null(), <[u64]>::as_ptr)
}

/// What [`evtc_branch_info`] tells of a branch.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct EvtcBranchInfo {
    /// Its name (valid while the file is open).
    pub name: *const c_char,
    /// What it holds per entry.
    pub kind: EvtcKind,
    /// The type of its values.
    pub scalar: EvtcScalar,
    /// Values per entry of a `EVTC_KIND_FIXED` branch (0 otherwise).
    pub fixed_len: u32,
    /// The name of the branch holding its entries' lengths (NanoAOD's `nMuon`), or null.
    pub counter: *const c_char,
    /// Whether its baskets are random-access (a single entry decodes one small unit).
    pub rac: bool,
    /// Uncompressed and stored bytes.
    pub raw_bytes: u64,
    /// Bytes on disk.
    pub stored_bytes: u64,
}

/// Describes branch `branch` of tree `tree` into `*info`.
///
/// # Safety
/// `file` is null or an open handle; `info` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_branch_info(
    file: *const EvtcFile,
    tree: usize,
    branch: usize,
    info: *mut EvtcBranchInfo,
) -> EvtcStatus {
    with_file(file, |f| {
        let (t, chain, meta) = f.branch(tree, branch)?;
        let (kind, fixed_len) = kind_of(meta.dtype);
        let (name, counter) = &t.branches[branch];
        let (mut raw_bytes, mut stored_bytes) = (0, 0);
        for k in 0..chain.trees().len() {
            let other = chain.branch_in(k, &meta.name)?;
            raw_bytes += other.meta().raw_bytes;
            stored_bytes += other.meta().stored_bytes;
        }
        let value = EvtcBranchInfo {
            name: name.as_ptr(),
            kind,
            scalar: EvtcScalar::from_format(meta.dtype.scalar()),
            fixed_len,
            counter: counter.as_ref().map_or(ptr::null(), |c| c.as_ptr()),
            rac: meta.rac,
            raw_bytes,
            stored_bytes,
        };
        // SAFETY: as the function's contract says.
        unsafe { put(info, value, "info") }
    })
}

fn kind_of(dtype: DataType) -> (EvtcKind, u32) {
    match dtype {
        DataType::Scalar(_) => (EvtcKind::Scalar, 0),
        DataType::FixedArray(_, n) => (EvtcKind::Fixed, n),
        DataType::Jagged(_) => (EvtcKind::Jagged, 0),
        DataType::Bytes => (EvtcKind::Bytes, 0),
        DataType::Utf8 => (EvtcKind::Utf8, 0),
    }
}

/// Finds branch `name` of tree `tree`: its number in `*branch`.
///
/// # Safety
/// `file` is null or an open handle; `name` a NUL-terminated string; `branch` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_branch_find(
    file: *const EvtcFile,
    tree: usize,
    name: *const c_char,
    branch: *mut usize,
) -> EvtcStatus {
    with_file(file, |f| {
        // SAFETY: as the function's contract says.
        let name = unsafe { str_arg(name, "name") }?;
        let t = f.tree(tree)?;
        let found = t
            .branches
            .iter()
            .position(|(b, _)| b.to_bytes() == name.as_bytes())
            .ok_or_else(|| {
                Failure::new(
                    EvtcStatus::ErrorNotFound,
                    format!("tree {:?} has no branch {name:?}", t.name),
                )
            })?;
        // SAFETY: as the function's contract says.
        unsafe { put(branch, found, "branch") }
    })
}

/// The number of values entries `start..stop` of a branch hold, in `*values`: the size of the
/// buffer [`evtc_read`] needs (for variable-length branches this reads their lengths).
///
/// # Safety
/// `file` is null or an open handle; `values` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_read_size(
    file: *const EvtcFile,
    tree: usize,
    branch: usize,
    start: u64,
    stop: u64,
    values: *mut u64,
) -> EvtcStatus {
    with_file(file, |f| {
        let (t, chain, meta) = f.branch(tree, branch)?;
        check_range(t, meta, start, stop)?;
        let n = chain.value_count(&meta.name, start..stop)?;
        // SAFETY: as the function's contract says.
        unsafe { put(values, n, "values") }
    })
}

fn check_range(tree: &ChainTree, meta: &BranchMeta, start: u64, stop: u64) -> Outcome {
    let entries = tree.entries();
    if start > stop || stop > entries {
        return Err(Failure::new(
            EvtcStatus::ErrorRange,
            format!(
                "entries {start}..{stop} of branch {:?}: the tree has {entries}",
                meta.name
            ),
        ));
    }
    Ok(())
}

/// Reads entries `start..stop` of a branch into the caller's buffers: its values into `values`
/// (room for `capacity` values of type `scalar`, which must be the branch's; no alignment
/// needed), and for variable-length branches (`EVTC_KIND_JAGGED`, `_BYTES`, `_UTF8`) the
/// `stop - start + 1` offsets of each entry's values into `offsets` (the first 0); `offsets`
/// is ignored for other branches and may be null. `*written` is the number of values. When
/// `capacity` is too small nothing is written but `*written`, the number needed, and the status
/// is `EVTC_STATUS_ERROR_BUFFER_TOO_SMALL` ([`evtc_read_size`] asks first).
///
/// # Safety
/// `file` is null or an open handle; `values` points to `capacity` values of the type;
/// `offsets` is null or points to `stop - start + 1` `uint64_t`; `written` is writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn evtc_read(
    file: *const EvtcFile,
    tree: usize,
    branch: usize,
    scalar: i32,
    start: u64,
    stop: u64,
    values: *mut c_void,
    capacity: u64,
    offsets: *mut u64,
    written: *mut u64,
) -> EvtcStatus {
    with_file(file, |f| {
        let (t, chain, meta) = f.branch(tree, branch)?;
        let scalar = EvtcScalar::from_id(scalar)?;
        check_type(meta, scalar)?;
        check_range(t, meta, start, stop)?;
        if written.is_null() {
            return Err(Failure::argument("written is a null pointer"));
        }
        let variable = meta.dtype.is_variable();
        if variable && offsets.is_null() {
            return Err(Failure::argument(
                "offsets is a null pointer, for a variable-length branch",
            ));
        }
        macro_rules! go {
            ($t:ty) => {{
                if variable {
                    let jagged = chain.read_jagged_range::<$t>(&meta.name, start..stop)?;
                    // SAFETY: the caller's buffers, as the function's contract says.
                    unsafe { deliver(&jagged.values, values, capacity, written) }?;
                    // SAFETY: `offsets` holds `stop - start + 1` values by contract.
                    unsafe { copy_out(&jagged.offsets, offsets.cast()) };
                } else {
                    let read = chain.read_range::<$t>(&meta.name, start..stop)?;
                    // SAFETY: as above.
                    unsafe { deliver(&read, values, capacity, written) }?;
                }
                Ok(())
            }};
        }
        by_scalar!(scalar, go)
    })
}

/// Reads entry `entry` of a branch into `values` (room for `capacity` values of type
/// `scalar`); `*written` is its number of values. With random-access baskets this decodes one
/// unit. A buffer too small is as for [`evtc_read`].
///
/// # Safety
/// `file` is null or an open handle; `values` points to `capacity` values; `written` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn evtc_read_entry(
    file: *const EvtcFile,
    tree: usize,
    branch: usize,
    scalar: i32,
    entry: u64,
    values: *mut c_void,
    capacity: u64,
    written: *mut u64,
) -> EvtcStatus {
    with_file(file, |f| {
        let (t, chain, meta) = f.branch(tree, branch)?;
        let scalar = EvtcScalar::from_id(scalar)?;
        check_type(meta, scalar)?;
        check_range(t, meta, entry, entry.saturating_add(1))?;
        if written.is_null() {
            return Err(Failure::argument("written is a null pointer"));
        }
        let (k, entry) = chain
            .locate(entry)
            .ok_or_else(|| Failure::argument("the entry is past the tree's end"))?;
        let reader = chain.branch_in(k, &meta.name)?;
        let variable = meta.dtype.is_variable();
        macro_rules! go {
            ($t:ty) => {{
                let read: Vec<$t> = if variable {
                    reader.read_jagged_entries::<$t>(&[entry])?.values
                } else {
                    reader.read_entries::<$t>(&[entry])?
                };
                // SAFETY: the caller's buffers, as the function's contract says.
                unsafe { deliver(&read, values, capacity, written) }
            }};
        }
        by_scalar!(scalar, go)
    })
}

fn check_type(meta: &BranchMeta, scalar: EvtcScalar) -> Outcome {
    let actual = meta.dtype.scalar();
    if actual != scalar.to_format() {
        return Err(Failure::new(
            EvtcStatus::ErrorType,
            format!(
                "branch {:?} holds {actual}, not {}",
                meta.name,
                scalar.to_format()
            ),
        ));
    }
    Ok(())
}

/// Copies `data` to the caller's `values` if `capacity` holds it; writes the count.
///
/// # Safety
/// `values` points to `capacity` values of `T` (any alignment); `written` is writable.
unsafe fn deliver<T: Scalar>(
    data: &[T],
    values: *mut c_void,
    capacity: u64,
    written: *mut u64,
) -> Outcome {
    // SAFETY: `written` was checked not to be null.
    unsafe { written.write(data.len() as u64) };
    if data.len() as u64 > capacity {
        return Err(Failure::new(
            EvtcStatus::ErrorBufferTooSmall,
            format!("{} values do not fit a buffer of {capacity}", data.len()),
        ));
    }
    if !data.is_empty() {
        if values.is_null() {
            return Err(Failure::argument("values is a null pointer"));
        }
        // SAFETY: the caller's buffer holds `capacity` >= `data.len()` values.
        unsafe { copy_out(data, values.cast()) };
    }
    Ok(())
}

/// Copies `data` byte by byte to `out` (which need not be aligned for `T`).
///
/// # Safety
/// `out` is valid for `size_of_val(data)` bytes.
unsafe fn copy_out<T: Copy>(data: &[T], out: *mut u8) {
    // SAFETY: `data` is `size_of_val(data)` readable bytes, `out` as many writable ones by the
    // caller's contract, and a caller's buffer does not overlap the library's vector.
    unsafe {
        ptr::copy_nonoverlapping(data.as_ptr().cast::<u8>(), out, size_of_val(data));
    }
}
