//! Reading evtc files (`evtc-format`) and ROOT files (`evtc-root`) into NumPy buffers.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use evtc_codecs::{Algorithm, Codec};
use evtc_format::{
    Boundaries, BranchCursor, BranchMeta, BranchReader, DataType, FileReader, LocalFile,
    ReadOptions, ScalarType, TreeReader, shared_pool,
};
use evtc_root::{ColumnKind, FieldKind, FieldNode, RootFile, Tree, Values, with_values};
use evtc_tools::FileKind;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rayon::prelude::*;

use crate::errors;
use crate::source::{PySource, RootSource, Source};

/// An RNTuple field as the nested tuple `tree_info` describes.
fn field_tuple<'py>(py: Python<'py>, node: &FieldNode) -> PyResult<Bound<'py, PyTuple>> {
    let (kind, column, size) = match node.kind {
        FieldKind::Column(k) => ("column", k as i64, 0),
        FieldKind::Record => ("record", -1, 0),
        FieldKind::List => ("list", -1, 0),
        FieldKind::Option => ("option", -1, 0),
        FieldKind::Array(n) => ("array", -1, n),
        FieldKind::Variant => ("variant", -1, 0),
    };
    let children = node
        .children
        .iter()
        .map(|c| field_tuple(py, c))
        .collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(
        py,
        [
            node.name.as_str().into_pyobject(py)?.into_any(),
            node.type_name.as_str().into_pyobject(py)?.into_any(),
            kind.into_pyobject(py)?.into_any(),
            column.into_pyobject(py)?.into_any(),
            size.into_pyobject(py)?.into_any(),
            PyList::new(py, children)?.into_any(),
        ],
    )
}

/// Branch reads since the last reset, by branch name: lets tests prove that a computation read
/// only the branches it needed (Dask's column projection).
static BRANCH_READS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

fn count_read(name: &str) {
    let mut reads = BRANCH_READS.lock().expect("not poisoned");
    *reads.entry(name.to_owned()).or_default() += 1;
}

/// Bulk or range reads of each branch since the last `reset_branch_reads()`, in this process.
#[pyfunction]
pub(crate) fn branch_reads(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    for (name, n) in BRANCH_READS.lock().expect("not poisoned").iter() {
        dict.set_item(name, n)?;
    }
    Ok(dict)
}

/// Sets every count of `branch_reads()` back to zero.
#[pyfunction]
pub(crate) fn reset_branch_reads() {
    BRANCH_READS.lock().expect("not poisoned").clear();
}

/// One branch's data for a range of entries, in the Arrow layout.
pub(crate) struct Column {
    pub(crate) values: Values,
    /// The offsets of each list level, outermost first: none for scalars and fixed arrays; the
    /// entries' `entries + 1` offsets into `values` for lists and strings; for nested lists the
    /// entries' offsets into the first inner level, whose offsets index the next, the last
    /// indexing `values`.
    pub(crate) levels: Vec<Offsets>,
}

/// The offsets of one list level.
pub(crate) enum Offsets {
    /// Made for this column alone.
    Owned(Vec<u64>),
    /// Shared with other columns (the jagged branches of one counter) and with the reader's
    /// cache of counter offsets: handed to NumPy without a copy, read-only.
    Shared(Arc<[u64]>),
}

impl Offsets {
    /// The offsets.
    pub(crate) fn as_slice(&self) -> &[u64] {
        match self {
            Offsets::Owned(offsets) => offsets,
            Offsets::Shared(offsets) => offsets,
        }
    }

    /// Offsets equal to these, sharing their memory: owned ones become shared first.
    fn share(&mut self) -> Offsets {
        let shared: Arc<[u64]> = match self {
            Offsets::Owned(owned) => Arc::from(std::mem::take(owned)),
            Offsets::Shared(shared) => Arc::clone(shared),
        };
        *self = Offsets::Shared(Arc::clone(&shared));
        Offsets::Shared(shared)
    }

    /// The offsets as a vector of their own (a copy when shared).
    pub(crate) fn into_vec(self) -> Vec<u64> {
        match self {
            Offsets::Owned(offsets) => offsets,
            Offsets::Shared(offsets) => offsets.to_vec(),
        }
    }

    /// A NumPy array of the offsets: shared offsets become a read-only view kept alive by a
    /// handle on them.
    fn into_py<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let offsets = match self {
            Offsets::Owned(offsets) => return Ok(PyArray1::from_vec(py, offsets).into_any()),
            Offsets::Shared(offsets) => Bound::new(py, SharedOffsets(offsets))?,
        };
        let view = numpy::ndarray::ArrayView1::from(&offsets.get().0[..]);
        // SAFETY: the array views the slice behind the `Arc` that `offsets`, its base object,
        // holds: the slice lives as long as the array and is never reallocated. It is made
        // read-only before Python sees it, so nothing writes to the shared slice (NumPy refuses
        // to make it writeable again: its base exposes no writeable buffer).
        let array = unsafe { PyArray1::borrow_from_array(&view, offsets.clone().into_any()) };
        array.readwrite().make_nonwriteable();
        Ok(array.into_any())
    }
}

/// The owner of shared offsets viewed by a NumPy array.
#[pyclass(frozen, module = "evtc._lib")]
struct SharedOffsets(Arc<[u64]>);

impl Column {
    /// `(values, [offsets, ...])`: NumPy arrays, the list outermost first.
    fn into_py<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let values = with_values!(self.values, v => PyArray1::from_vec(py, v).into_any());
        let levels = PyList::empty(py);
        for level in self.levels {
            levels.append(level.into_py(py)?)?;
        }
        PyTuple::new(py, [values, levels.into_any()])
    }
}

enum Backend {
    Evtc(EvtcFile),
    Root {
        file: Box<RootFile<RootSource>>,
        trees: Mutex<HashMap<String, Arc<Tree>>>,
    },
}

/// An open evtc or ROOT file.
#[pyclass(frozen, module = "evtc._lib")]
pub(crate) struct Reader {
    backend: Backend,
    /// The Python source, for coalesced prefetching; `None` for local files.
    remote: Option<Arc<PySource>>,
    /// Reads several branches of a ROOT file at once: the process's pool of the thread count,
    /// as evtc files' readers share ([`shared_pool`]); `None` reads on the calling thread (and
    /// for evtc files, whose reader reads on that pool itself).
    pool: Option<Arc<rayon::ThreadPool>>,
}

pub(crate) fn numpy_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "bool",
        ScalarType::I8 => "int8",
        ScalarType::U8 => "uint8",
        ScalarType::I16 => "int16",
        ScalarType::U16 => "uint16",
        ScalarType::I32 => "int32",
        ScalarType::U32 => "uint32",
        ScalarType::I64 => "int64",
        ScalarType::U64 => "uint64",
        ScalarType::F32 => "float32",
        ScalarType::F64 => "float64",
    }
}

/// Which entries of a branch a read takes.
#[derive(Clone)]
enum Rows<'a> {
    /// A range of entries.
    Range(Range<u64>),
    /// Entries in any order, repeats allowed, read in that order.
    Entries(&'a [u64]),
}

/// Reads `rows` of an evtc branch.
fn read_evtc(tree: &TreeReader<'_, Source>, name: &str, rows: Rows<'_>) -> PyResult<Column> {
    let branch = tree.branch(name).map_err(errors::format)?;
    count_read(name);
    let dtype = branch.meta().dtype;
    macro_rules! read {
        ($t:ty, $variant:ident) => {{
            let e = errors::format;
            if dtype.is_variable() {
                let jagged = match rows {
                    Rows::Range(range) => branch.read_jagged_range::<$t>(range),
                    Rows::Entries(entries) => branch.read_jagged_entries::<$t>(entries),
                }
                .map_err(e)?;
                Column {
                    values: Values::$variant(jagged.values),
                    levels: vec![Offsets::Shared(jagged.offsets)],
                }
            } else {
                let values = match rows {
                    Rows::Range(range) if range == (0..tree.entries()) => {
                        let mut out = Vec::new();
                        branch.read_into::<$t>(&mut out).map(|()| out)
                    }
                    Rows::Range(range) => branch.read_range::<$t>(range),
                    Rows::Entries(entries) => branch.read_entries::<$t>(entries),
                };
                Column {
                    values: Values::$variant(values.map_err(e)?),
                    levels: Vec::new(),
                }
            }
        }};
    }
    Ok(match dtype.scalar() {
        ScalarType::Bool => read!(bool, Bool),
        ScalarType::I8 => read!(i8, I8),
        ScalarType::U8 => read!(u8, U8),
        ScalarType::I16 => read!(i16, I16),
        ScalarType::U16 => read!(u16, U16),
        ScalarType::I32 => read!(i32, I32),
        ScalarType::U32 => read!(u32, U32),
        ScalarType::I64 => read!(i64, I64),
        ScalarType::U64 => read!(u64, U64),
        ScalarType::F32 => read!(f32, F32),
        ScalarType::F64 => read!(f64, F64),
    })
}

/// A typed cursor of any element type.
enum AnyCursor<'a> {
    Bool(BranchCursor<'a, Source, bool>),
    I8(BranchCursor<'a, Source, i8>),
    U8(BranchCursor<'a, Source, u8>),
    I16(BranchCursor<'a, Source, i16>),
    U16(BranchCursor<'a, Source, u16>),
    I32(BranchCursor<'a, Source, i32>),
    U32(BranchCursor<'a, Source, u32>),
    I64(BranchCursor<'a, Source, i64>),
    U64(BranchCursor<'a, Source, u64>),
    F32(BranchCursor<'a, Source, f32>),
    F64(BranchCursor<'a, Source, f64>),
}

macro_rules! with_cursor {
    ($cursor:expr, $c:ident => $body:expr) => {
        match $cursor {
            AnyCursor::Bool($c) => Values::Bool($body),
            AnyCursor::I8($c) => Values::I8($body),
            AnyCursor::U8($c) => Values::U8($body),
            AnyCursor::I16($c) => Values::I16($body),
            AnyCursor::U16($c) => Values::U16($body),
            AnyCursor::I32($c) => Values::I32($body),
            AnyCursor::U32($c) => Values::U32($body),
            AnyCursor::I64($c) => Values::I64($body),
            AnyCursor::U64($c) => Values::U64($body),
            AnyCursor::F32($c) => Values::F32($body),
            AnyCursor::F64($c) => Values::F64($body),
        }
    };
}

impl<'a> AnyCursor<'a> {
    fn new(branch: &BranchReader<'a, Source>) -> PyResult<AnyCursor<'a>> {
        let e = errors::format;
        Ok(match branch.meta().dtype.scalar() {
            ScalarType::Bool => AnyCursor::Bool(branch.cursor().map_err(e)?),
            ScalarType::I8 => AnyCursor::I8(branch.cursor().map_err(e)?),
            ScalarType::U8 => AnyCursor::U8(branch.cursor().map_err(e)?),
            ScalarType::I16 => AnyCursor::I16(branch.cursor().map_err(e)?),
            ScalarType::U16 => AnyCursor::U16(branch.cursor().map_err(e)?),
            ScalarType::I32 => AnyCursor::I32(branch.cursor().map_err(e)?),
            ScalarType::U32 => AnyCursor::U32(branch.cursor().map_err(e)?),
            ScalarType::I64 => AnyCursor::I64(branch.cursor().map_err(e)?),
            ScalarType::U64 => AnyCursor::U64(branch.cursor().map_err(e)?),
            ScalarType::F32 => AnyCursor::F32(branch.cursor().map_err(e)?),
            ScalarType::F64 => AnyCursor::F64(branch.cursor().map_err(e)?),
        })
    }

    /// Entry `entry` (with RAC, only the unit holding it is decompressed, unless cached).
    fn get(&mut self, entry: u64) -> PyResult<Values> {
        Ok(with_cursor!(self, c => c.get(entry).map_err(errors::format)?.to_vec()))
    }
}

/// Cursors kept between single-entry reads, by (tree, branch): a cursor keeps its basket's
/// seek table and last decoded unit, so that a read costs a unit decode, not a table read.
type Cursors<'a> = Mutex<HashMap<(String, String), AnyCursor<'a>>>;

/// Cursors kept at most: each holds one decoded basket or unit.
const MAX_CURSORS: usize = 64;

self_cell::self_cell!(
    /// An evtc file and the cursors of its single-entry reads, which borrow it.
    struct EvtcFile {
        owner: FileReader<Source>,
        #[not_covariant]
        dependent: Cursors,
    }
);

impl EvtcFile {
    /// Entry `entry` of `tree`/`name` through a kept cursor. A cursor busy in another thread
    /// (whose read may wait for the GIL this thread could hold later) is not waited for: this
    /// read then uses a cursor of its own.
    fn entry(&self, tree: &str, name: &str, entry: u64) -> PyResult<Values> {
        self.with_dependent(|file, cursors| {
            let tree_reader = file.tree(tree).map_err(errors::format)?;
            check_range(&tree_reader, &(entry..entry.saturating_add(1)))?;
            let branch = tree_reader.branch(name).map_err(errors::format)?;
            let Ok(mut cursors) = cursors.try_lock() else {
                return AnyCursor::new(&branch)?.get(entry);
            };
            let key = (tree.to_owned(), name.to_owned());
            if !cursors.contains_key(&key) {
                if cursors.len() >= MAX_CURSORS {
                    cursors.clear();
                }
                cursors.insert(key.clone(), AnyCursor::new(&branch)?);
            }
            cursors.get_mut(&key).expect("inserted").get(entry)
        })
    }
}

impl Reader {
    fn root_tree(&self, name: &str) -> PyResult<Arc<Tree>> {
        let Backend::Root { file, trees } = &self.backend else {
            unreachable!("called for ROOT files only")
        };
        if let Some(tree) = trees.lock().expect("not poisoned").get(name) {
            return Ok(tree.clone());
        }
        let tree = Arc::new(file.tree(name).map_err(errors::root)?);
        trees
            .lock()
            .expect("not poisoned")
            .insert(name.to_owned(), tree.clone());
        Ok(tree)
    }

    fn evtc_tree(&self, name: &str) -> PyResult<TreeReader<'_, Source>> {
        let Backend::Evtc(file) = &self.backend else {
            unreachable!("called for evtc files only")
        };
        file.borrow_owner().tree(name).map_err(errors::format)
    }

    /// Fetches, in few requests, every byte a bulk read of `names` over `range` will read from a
    /// remote source: the branches' indexes, then their dictionaries and the baskets in the range.
    fn fetch_ahead(
        &self,
        remote: &PySource,
        tree: &TreeReader<'_, Source>,
        names: &[String],
        range: &Range<u64>,
        ids: &mut Vec<u64>,
    ) -> PyResult<()> {
        let mut branches = Vec::new();
        for name in names {
            let branch = tree.branch(name).map_err(errors::format)?;
            if branch.meta().boundaries == Boundaries::None
                && let Some(counter) = &branch.meta().counter
            {
                branches.push(tree.branch(counter).map_err(errors::format)?);
            }
            branches.push(branch);
        }
        let io = |e: std::io::Error| errors::raise("FileError", e.to_string());
        // First the basket indexes (at the end of the file), then the dictionaries and baskets
        // together (dictionaries sit before the baskets they serve).
        // (Those read by an earlier read are kept by the reader: an `iterate` fetches them once.)
        let indexes: Vec<(u64, u64)> = branches
            .iter()
            .filter(|b| !b.index_is_loaded())
            .map(|b| (b.meta().index_offset, b.meta().index_len))
            .collect();
        if !indexes.is_empty() {
            ids.push(remote.prefetch(indexes).map_err(io)?);
        }
        let mut baskets: Vec<(u64, u64)> = branches
            .iter()
            .map(|b| (b.meta().dictionary_offset, b.meta().dictionary_len))
            .collect();
        for branch in &branches {
            let index = branch.baskets().map_err(errors::format)?;
            baskets.extend(
                index
                    .baskets
                    .iter()
                    .filter(|b| {
                        b.first_entry < range.end && b.first_entry + b.entries > range.start
                    })
                    .map(|b| (b.offset, b.record_len)),
            );
        }
        ids.push(remote.prefetch(baskets).map_err(io)?);
        Ok(())
    }

    pub(crate) fn read_columns(
        &self,
        tree: &str,
        names: &[String],
        range: Range<u64>,
    ) -> PyResult<Vec<Column>> {
        match &self.backend {
            Backend::Evtc(_) => {
                let tree = self.evtc_tree(tree)?;
                if let Some(remote) = &self.remote {
                    check_range(&tree, &range)?;
                    let mut ids = Vec::new();
                    let result = self
                        .fetch_ahead(remote, &tree, names, &range, &mut ids)
                        .and_then(|()| {
                            self.map(names, |_, n| {
                                read_evtc(&tree, n, Rows::Range(range.clone()))
                            })
                        });
                    for id in ids {
                        remote.forget(id);
                    }
                    return result;
                }
                self.map(names, |_, n| {
                    read_evtc(&tree, n, Rows::Range(range.clone()))
                })
            }
            Backend::Root { file, .. } => {
                let tree = self.root_tree(tree)?;
                let columns = names
                    .iter()
                    .map(|name| {
                        tree.column(name).ok_or_else(|| {
                            errors::raise(
                                "KeyInFileError",
                                format!("tree {:?} has no branch {name:?}", tree.name),
                            )
                        })
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                // The fields of one RNTuple collection have equal offsets: the first reads
                // them, the others their values alone and then share the first's.
                let mut first = HashMap::new();
                let leaders: Vec<Option<usize>> = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let key = c.offsets_key()?;
                        let leader = *first.entry(key).or_insert(i);
                        (leader != i).then_some(leader)
                    })
                    .collect();
                let mut read = self.map(names, |i, name| {
                    count_read(name);
                    let column = columns[i];
                    if leaders[i].is_some() {
                        let mut values = Values::new(column.kind.scalar());
                        file.column_reader(column)
                            .read_values(range.clone(), &mut values)
                            .map_err(errors::root)?;
                        values.fit();
                        return Ok(Column {
                            values,
                            levels: Vec::new(),
                        });
                    }
                    let data = file
                        .read_column(column, range.clone())
                        .map_err(errors::root)?;
                    // Outermost first: the entries' offsets (none for scalars and fixed
                    // arrays), then each level further in.
                    let levels = std::iter::once(data.offsets)
                        .filter(|offsets| !offsets.is_empty())
                        .chain(data.levels.into_iter().rev())
                        .map(Offsets::Owned)
                        .collect();
                    Ok::<_, PyErr>(Column {
                        values: data.values,
                        levels,
                    })
                })?;
                for (i, leader) in leaders.into_iter().enumerate() {
                    if let Some(leader) = leader {
                        read[i].levels =
                            read[leader].levels.iter_mut().map(Offsets::share).collect();
                    }
                }
                Ok(read)
            }
        }
    }

    /// `f` over tree `tree`'s event index, with the GIL released: ROOT files and trees without
    /// an index are refused.
    fn look_up<T: Send>(
        &self,
        py: Python<'_>,
        tree: &str,
        f: impl FnOnce(&evtc_format::EventIndexReader<'_, Source>) -> evtc_format::Result<T> + Send,
    ) -> PyResult<T> {
        if let Backend::Root { .. } = &self.backend {
            return Err(errors::raise(
                "UnsupportedError",
                format!(
                    "looking events up needs an evtc file's event index; convert the ROOT file \
                     (its TTreeIndex on two branches is kept) to look up tree {tree:?}"
                ),
            ));
        }
        py.detach(|| {
            let reader = self.evtc_tree(tree)?;
            let index = reader
                .event_index()
                .map_err(errors::format)?
                .ok_or_else(|| {
                    errors::format(evtc_format::Error::NoEventIndex {
                        tree: tree.to_owned(),
                    })
                })?;
            f(&index).map_err(errors::format)
        })
    }

    /// `f` over `names` (with each one's position), on the pool when there is one.
    fn map<F>(&self, names: &[String], f: F) -> PyResult<Vec<Column>>
    where
        F: Fn(usize, &str) -> PyResult<Column> + Sync,
    {
        let parallel = || names.par_iter().enumerate().map(|(i, n)| f(i, n)).collect();
        match (&self.backend, &self.pool) {
            // An evtc file's reads of baskets run on its pool: the branches go there too,
            // so that one set of threads serves both (a pool waiting on another would idle).
            (Backend::Evtc(file), _) if names.len() > 1 && file.borrow_owner().threads() > 1 => {
                file.borrow_owner().install(parallel)
            }
            (Backend::Root { .. }, Some(pool)) if names.len() > 1 => pool.install(parallel),
            _ => names.iter().enumerate().map(|(i, n)| f(i, n)).collect(),
        }
    }
}

/// evtc's check of an entry range (as the library's own, made before any prefetching or
/// cursor lookup).
fn check_range(tree: &TreeReader<'_, Source>, range: &Range<u64>) -> PyResult<()> {
    if range.start > range.end || range.end > tree.entries() {
        return Err(errors::raise(
            "EntryRangeError",
            format!(
                "tree {:?}: entries {}..{} are outside 0..{}",
                tree.name(),
                range.start,
                range.end,
                tree.entries()
            ),
        ));
    }
    Ok(())
}

fn open_source(
    path: Option<&str>,
    source: Option<&Bound<'_, PyAny>>,
    mmap: bool,
) -> PyResult<(Source, Option<Arc<PySource>>)> {
    match (path, source) {
        (Some(path), None) => {
            let file = if mmap {
                // SAFETY: `evtc.open(..., mmap=True)` documents that the file must not be
                // truncated or rewritten while it is open; the caller asked for it.
                unsafe { LocalFile::open_mapped(path) }
            } else {
                LocalFile::open(path)
            };
            let file = file.map_err(|e| {
                errors::format(evtc_format::Error::Io {
                    path: Some(path.into()),
                    source: e,
                })
            })?;
            Ok((Arc::new(file), None))
        }
        (None, Some(object)) => {
            let remote = Arc::new(PySource::new(object)?);
            Ok((remote.clone(), Some(remote)))
        }
        _ => Err(errors::value("give a path or a source")),
    }
}

#[pymethods]
impl Reader {
    /// Opens a local file (`path`, memory-mapped with `mmap`) or a Python source (`source`, with
    /// `size` and `read_at(offset, length)`). ROOT files are recognised by their first bytes.
    /// `basket_cache` bounds the bytes of baskets that range reads of an evtc file keep for the
    /// next (`ReadOptions::basket_cache_bytes`).
    #[new]
    #[pyo3(signature = (path=None, source=None, threads=1, mmap=false, basket_cache=evtc_format::DEFAULT_BASKET_CACHE_BYTES))]
    fn new(
        py: Python<'_>,
        path: Option<&str>,
        source: Option<&Bound<'_, PyAny>>,
        threads: usize,
        mmap: bool,
        basket_cache: usize,
    ) -> PyResult<Reader> {
        let (source, remote) = open_source(path, source, mmap)?;
        let threads = threads.max(1);
        py.detach(|| {
            // Anything but a ROOT file goes to the evtc reader, whose error names what is wrong.
            let mut magic = [0u8; FileKind::MAGIC_LEN];
            let is_root = source.len() >= FileKind::MAGIC_LEN as u64
                && source.read_exact_at(0, &mut magic).is_ok()
                && FileKind::detect(&magic) == Some(FileKind::Root);
            let backend = if is_root {
                let file =
                    Box::new(RootFile::from_source(RootSource(source)).map_err(errors::root)?);
                Backend::Root {
                    file,
                    trees: Mutex::new(HashMap::new()),
                }
            } else {
                let options = ReadOptions::default()
                    .threads(threads)
                    .basket_cache_bytes(basket_cache);
                let file = FileReader::from_source(source, options).map_err(errors::format)?;
                Backend::Evtc(EvtcFile::new(file, |_| Mutex::new(HashMap::new())))
            };
            // ROOT files read their branches on this pool; evtc files on the reader's own.
            let pool = if threads > 1 && is_root {
                Some(shared_pool(threads).ok_or_else(|| {
                    errors::raise("Error", format!("cannot start {threads} reading threads"))
                })?)
            } else {
                None
            };
            Ok(Reader {
                backend,
                remote,
                pool,
            })
        })
    }

    /// `"evtc"` or `"root"`.
    #[getter]
    fn format(&self) -> &'static str {
        match self.backend {
            Backend::Evtc(_) => "evtc",
            Backend::Root { .. } => "root",
        }
    }

    /// The trees' names (ROOT: paths with subdirectories, newest cycles).
    fn trees(&self) -> PyResult<Vec<String>> {
        match &self.backend {
            Backend::Evtc(file) => Ok(file
                .borrow_owner()
                .trees()
                .iter()
                .map(|t| t.name.clone())
                .collect()),
            Backend::Root { file, .. } => {
                let trees = file.trees().map_err(errors::root)?;
                let mut names: Vec<String> = Vec::new();
                for t in trees {
                    if !names.contains(&t.path) {
                        names.push(t.path);
                    }
                }
                Ok(names)
            }
        }
    }

    /// `(entries, cluster_ends, names, unsupported, nested)` of a tree: `names` are the
    /// branches in order (what `branch_info` takes the position of); `unsupported` lists ROOT
    /// branches the reader cannot read as `(name, class, reason)`; `nested` pairs converted
    /// nested lists of evtc files (`std::vector<std::vector<T>>`, `std::vector<std::string>`,
    /// `std::vector<std::vector<std::string>>`) with their sizes branches, innermost first
    /// (`[name/sizes, name/sizes/sizes]`, docs/format.md 4.3). Nothing per branch beyond its
    /// name is made, so that opening a tree of many thousand branches stays cheap. `fields`
    /// gives an RNTuple's top-level fields as `(name, type, kind, column, size, children)`
    /// tuples (kind `column`, `record`, `list`, `option`, `array` or `variant`; `column` the
    /// index of a `column` field's column in `names`, else -1; `size` an array's length); empty
    /// for other trees.
    fn tree_info<'py>(&self, py: Python<'py>, tree: &str) -> PyResult<Bound<'py, PyTuple>> {
        let unsupported = PyList::empty(py);
        let nested = PyList::empty(py);
        let fields = PyList::empty(py);
        let (entries, clusters, names) = match &self.backend {
            Backend::Evtc(_) => {
                let tree = self.evtc_tree(tree)?;
                let branches = tree.branches();
                let names = PyList::new(py, branches.iter().map(|b| b.name.as_str()))?;
                // evtc-tools writes nested lists as jagged values (bytes) plus a jagged
                // "name/sizes" branch of unsigned inner sizes, and a "name/sizes/sizes" one for
                // the level above (lists of lists of strings).
                let is_sizes = |b: &BranchMeta| {
                    b.name.ends_with("/sizes")
                        && matches!(b.dtype, DataType::Jagged(t) if t.is_integer() && numpy_name(t).starts_with('u'))
                };
                if branches.iter().any(is_sizes) {
                    let by_name: HashMap<&str, &BranchMeta> =
                        branches.iter().map(|b| (b.name.as_str(), b)).collect();
                    let sizes_of = |name: &str| {
                        by_name
                            .get(format!("{name}/sizes").as_str())
                            .filter(|s| is_sizes(s))
                            .map(|s| s.name.as_str())
                    };
                    for b in branches {
                        let nested_in = b
                            .name
                            .strip_suffix("/sizes")
                            .and_then(|base| by_name.get(base));
                        if !matches!(
                            b.dtype,
                            DataType::Jagged(_) | DataType::Bytes | DataType::Utf8
                        ) || (is_sizes(b) && nested_in.is_some())
                        {
                            continue;
                        }
                        let mut chain = Vec::new();
                        let mut at = b.name.as_str();
                        while let Some(sizes) = sizes_of(at) {
                            chain.push(sizes);
                            at = sizes;
                        }
                        if !chain.is_empty() {
                            nested.append((&b.name, chain))?;
                        }
                    }
                }
                (tree.entries(), tree.meta().cluster_ends.clone(), names)
            }
            Backend::Root { .. } => {
                let tree = self.root_tree(tree)?;
                let names = PyList::new(py, tree.columns.iter().map(|c| c.name.as_str()))?;
                for u in &tree.unsupported {
                    unsupported.append((&u.name, &u.class, &u.reason))?;
                }
                for field in &tree.fields {
                    fields.append(field_tuple(py, field)?)?;
                }
                // ROOT clusters: the entry boundaries shared by every column's baskets.
                let mut ends: Option<Vec<u64>> = None;
                for c in &tree.columns {
                    let mine: Vec<u64> = c.baskets().map(|b| b.first_entry + b.entries).collect();
                    ends = Some(match ends {
                        None => mine,
                        Some(prev) => prev.into_iter().filter(|e| mine.contains(e)).collect(),
                    });
                }
                let mut ends = ends.unwrap_or_default();
                ends.retain(|&e| e > 0 && e < tree.entries);
                ends.push(tree.entries);
                (tree.entries, ends, names)
            }
        };
        PyTuple::new(
            py,
            [
                entries.into_pyobject(py)?.into_any(),
                clusters.into_pyobject(py)?.into_any(),
                names.into_any(),
                unsupported.into_any(),
                nested.into_any(),
                fields.into_any(),
            ],
        )
    }

    /// The branch at position `index` of `tree_info`'s names, as a dict: `name`, `kind`
    /// (`scalar`, `fixed`, `jagged`, `jagged2`, `bytes`, `string`, `string2`), `dtype`, `length`,
    /// `counter`, `typename`, `shape` (a multi-dimensional fixed array's dimensions, else empty),
    /// `codec`, `rac`, `raw_bytes`, `stored_bytes`.
    /// What `evtc.dask` plans a file by, in one call, for an evtc tree: every branch's name and
    /// type name (`f32[]`, `u32`, `f64[3]`) in file order (compared with the first file's), the
    /// entries, the cluster ends, and the uncompressed bytes of the branches `names` (unknown
    /// names count 0); `None` for ROOT trees.
    #[allow(clippy::type_complexity)]
    fn plan<'py>(
        &self,
        py: Python<'py>,
        tree: &str,
        names: Vec<String>,
    ) -> PyResult<Option<(Bound<'py, PyList>, u64, Vec<u64>, u64)>> {
        match &self.backend {
            Backend::Evtc(_) => {
                let tree = self.evtc_tree(tree)?;
                let branches = tree.branches();
                let schema = PyList::new(
                    py,
                    branches.iter().map(|b| (b.name.as_str(), b.type_name())),
                )?;
                let wanted: std::collections::HashSet<&str> =
                    names.iter().map(String::as_str).collect();
                let raw = branches
                    .iter()
                    .filter(|b| wanted.contains(b.name.as_str()))
                    .map(|b| b.raw_bytes)
                    .sum();
                Ok(Some((
                    schema,
                    tree.entries(),
                    tree.meta().cluster_ends.clone(),
                    raw,
                )))
            }
            _ => Ok(None),
        }
    }

    fn branch_info<'py>(
        &self,
        py: Python<'py>,
        tree: &str,
        index: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let missing = || errors::value(format!("no branch number {index} in tree {tree:?}"));
        match &self.backend {
            Backend::Evtc(_) => {
                let tree = self.evtc_tree(tree)?;
                let b = tree.branches().get(index).ok_or_else(missing)?;
                let (kind, length) = match b.dtype {
                    DataType::Scalar(_) => ("scalar", 1),
                    DataType::FixedArray(_, n) => ("fixed", n),
                    DataType::Jagged(_) => ("jagged", 0),
                    DataType::Bytes => ("bytes", 0),
                    DataType::Utf8 => ("string", 0),
                };
                let codec = Algorithm::from_id(b.codec)
                    .and_then(|a| Codec::new(a, i32::from(b.level)))
                    .map_or_else(|_| format!("id {}", b.codec), |c| c.to_string());
                d.set_item("name", &b.name)?;
                d.set_item("kind", kind)?;
                d.set_item("dtype", numpy_name(b.dtype.scalar()))?;
                d.set_item("length", length)?;
                d.set_item("counter", &b.counter)?;
                d.set_item("typename", b.type_name())?;
                d.set_item("shape", b.shape().unwrap_or_default())?;
                d.set_item("codec", codec)?;
                d.set_item("rac", b.rac)?;
                d.set_item("raw_bytes", b.raw_bytes)?;
                d.set_item("stored_bytes", b.stored_bytes)?;
            }
            Backend::Root { .. } => {
                let tree = self.root_tree(tree)?;
                let c = tree.columns.get(index).ok_or_else(missing)?;
                // The base kind, with the lists around an item when there are more than one
                // (`jagged2`; a string is one list of characters: `string2` is a list of them).
                let (kind, length) = match c.kind {
                    ColumnKind::Scalar(_) => ("scalar".to_owned(), 1),
                    ColumnKind::Fixed(_, n) => ("fixed".to_owned(), n),
                    ColumnKind::Jagged(_) => ("jagged".to_owned(), 0),
                    ColumnKind::Nested(_, depth) => (format!("jagged{depth}"), 0),
                    ColumnKind::String => ("string".to_owned(), 0),
                    ColumnKind::Strings(depth) => (format!("string{}", depth + 1), 0),
                };
                let codec = Codec::from_root_setting(c.compression)
                    .map_or_else(|_| format!("ROOT {}", c.compression), |k| k.to_string());
                d.set_item("name", &c.name)?;
                d.set_item("kind", kind)?;
                d.set_item("dtype", numpy_name(c.kind.scalar()))?;
                d.set_item("length", length)?;
                d.set_item("counter", &c.counter)?;
                d.set_item("typename", &c.root_type)?;
                d.set_item("shape", &c.dims)?;
                d.set_item("codec", codec)?;
                d.set_item("rac", false)?;
                d.set_item("raw_bytes", c.tot_bytes)?;
                d.set_item("stored_bytes", c.zip_bytes)?;
            }
        }
        Ok(d)
    }

    /// Reads entries `start..stop` of the branches `names`: one `(values, offsets, inner_offsets)`
    /// tuple of NumPy arrays (or `None`) per name, in order. The GIL is released while decoding.
    fn read<'py>(
        &self,
        py: Python<'py>,
        tree: &str,
        names: Vec<String>,
        start: u64,
        stop: u64,
    ) -> PyResult<Bound<'py, PyList>> {
        let columns = py.detach(|| self.read_columns(tree, &names, start..stop))?;
        let list = PyList::empty(py);
        for column in columns {
            list.append(column.into_py(py)?)?;
        }
        Ok(list)
    }

    /// Fetches, from a remote evtc file, the bytes a read of `names` over `start..stop` needs and
    /// keeps them until [`Reader::forget`] of the numbers returned (none for other files): for
    /// `iterate`, which fetches the next step's while it decodes the current one. The GIL is
    /// released meanwhile.
    fn prefetch(
        &self,
        py: Python<'_>,
        tree: &str,
        names: Vec<String>,
        start: u64,
        stop: u64,
    ) -> PyResult<Vec<u64>> {
        let (Backend::Evtc(_), Some(remote)) = (&self.backend, &self.remote) else {
            return Ok(Vec::new());
        };
        py.detach(|| {
            let reader = self.evtc_tree(tree)?;
            let range = start..stop;
            check_range(&reader, &range)?;
            let mut ids = Vec::new();
            let result = self.fetch_ahead(remote, &reader, &names, &range, &mut ids);
            if result.is_err() {
                for &id in &ids {
                    remote.forget(id);
                }
            }
            result.map(|()| ids)
        })
    }

    /// Drops the bytes that [`Reader::prefetch`] fetched and numbered `ids`.
    fn forget(&self, ids: Vec<u64>) {
        if let Some(remote) = &self.remote {
            for id in ids {
                remote.forget(id);
            }
        }
    }

    /// Entries `entries` (a NumPy uint64 array: any order, repeats allowed) of branches `names`
    /// of an evtc tree, in that order: as [`Reader::read`] gives a range. Only the baskets (with
    /// RAC, the units) holding them are decoded; the GIL is released meanwhile.
    fn read_entries<'py>(
        &self,
        py: Python<'py>,
        tree: &str,
        names: Vec<String>,
        entries: numpy::PyReadonlyArray1<'py, u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let Backend::Evtc(_) = &self.backend else {
            return Err(errors::value("read_entries reads evtc files"));
        };
        let entries = entries.as_slice()?;
        let columns = py.detach(|| {
            let reader = self.evtc_tree(tree)?;
            self.map(&names, |_, name| {
                read_evtc(&reader, name, Rows::Entries(entries))
            })
        })?;
        let list = PyList::empty(py);
        for column in columns {
            list.append(column.into_py(py)?)?;
        }
        Ok(list)
    }

    /// The key branches of tree `tree`'s event index, `(major, minor)`, or `None` (ROOT
    /// files: their `TTreeIndex`'s major and minor expressions, which are not looked up).
    fn event_index(&self, tree: &str) -> PyResult<Option<(String, String)>> {
        match &self.backend {
            Backend::Evtc(_) => Ok(self
                .evtc_tree(tree)?
                .event_index()
                .map_err(errors::format)?
                .map(|i| (i.major().to_owned(), i.minor().to_owned()))),
            Backend::Root { .. } => Ok(self.root_tree(tree)?.index.clone()),
        }
    }

    /// The entries of tree `tree` whose event-index keys are each of `keys`, one list per key
    /// (empty for a key no entry has), found in the index without reading the branches.
    fn entries_of(
        &self,
        py: Python<'_>,
        tree: &str,
        keys: Vec<(i128, i128)>,
    ) -> PyResult<Vec<Vec<u64>>> {
        self.look_up(py, tree, |index| index.entries_of_each(&keys))
    }

    /// The entry of tree `tree` whose event-index keys are each of `keys`: `KeyInFileError` for
    /// a key no entry has, `DuplicateEventError` for one several have (the library's errors).
    fn entry_of(&self, py: Python<'_>, tree: &str, keys: Vec<(i128, i128)>) -> PyResult<Vec<u64>> {
        self.look_up(py, tree, |index| index.entry_of_each(&keys))
    }

    /// Entry `entry` of branch `name` as a `(values, levels)` tuple: evtc files read it through
    /// a cursor (with RAC, only the unit holding the entry is decompressed) and give no levels
    /// (the entry's values alone); ROOT files give the column of that one entry.
    fn entry<'py>(
        &self,
        py: Python<'py>,
        tree: &str,
        name: &str,
        entry: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let column = py.detach(|| match &self.backend {
            Backend::Evtc(file) => Ok::<_, PyErr>(Column {
                values: file.entry(tree, name, entry)?,
                levels: Vec::new(),
            }),
            Backend::Root { .. } => {
                let mut columns =
                    self.read_columns(tree, &[name.to_owned()], entry..entry.saturating_add(1))?;
                Ok(columns.pop().expect("one column"))
            }
        })?;
        column.into_py(py)
    }
}

/// What `evtc.dask` plans local evtc files by, many at once on `threads` threads with the GIL
/// released: for each path, `(entries, cluster_ends, raw_bytes)` of tree `tree` (the raw bytes
/// those of the branches `names`) when the file is an evtc file whose tree's branches (names
/// and type names) are `schema`; `None` otherwise (another schema, a ROOT file, no such tree,
/// an error), which the caller reads the slow way, meeting any error there.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub(crate) fn plan_files(
    py: Python<'_>,
    paths: Vec<String>,
    tree: String,
    names: Vec<String>,
    schema: Vec<(String, String)>,
    threads: usize,
) -> PyResult<Vec<Option<(u64, Vec<u64>, u64)>>> {
    use rayon::prelude::*;

    let wanted: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    let one = |path: &String| -> Option<(u64, Vec<u64>, u64)> {
        let file = FileReader::open_with(path, ReadOptions::default().threads(1)).ok()?;
        let t = file.tree(&tree).ok()?;
        let branches = t.branches();
        let same = branches.len() == schema.len()
            && branches
                .iter()
                .zip(&schema)
                .all(|(b, (name, type_name))| b.name == *name && b.type_name() == *type_name);
        if !same {
            return None;
        }
        let raw = branches
            .iter()
            .filter(|b| wanted.contains(b.name.as_str()))
            .map(|b| b.raw_bytes)
            .sum();
        Some((t.entries(), t.meta().cluster_ends.clone(), raw))
    };
    Ok(
        py.detach(|| match evtc_format::shared_pool(threads.max(1)) {
            Some(pool) if threads > 1 => pool.install(|| paths.par_iter().map(one).collect()),
            _ => paths.iter().map(one).collect(),
        }),
    )
}
