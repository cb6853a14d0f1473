//! The two kinds of input, ROOT and evtc, behind one chunked column interface.

use std::ops::Range;
use std::path::Path;

use evtc_format::{BranchSpec, DataType, FileReader, ReadOptions, TreeReader, TreeWriter};
use evtc_root::{
    ColumnData, ColumnKind, ColumnReader, RootFile, UnsupportedBranch, Values, with_values,
};
use rayon::prelude::*;

use crate::{Error, Result};

/// Uncompressed bytes of values read per chunk.
const CHUNK_BYTES: u64 = 32 << 20;

/// An open input file of either kind: what `convert`, `merge`, `skim` and the advisor read, and
/// what `evtc inspect` and the Python binding decide between with [`FileKind`].
#[derive(Debug)]
pub enum Input {
    /// A ROOT file (its TTrees and RNTuples).
    Root(RootFile),
    /// An evtc file.
    Evtc(Box<FileReader>),
}

/// One column of a source tree, described in evtc's types.
#[derive(Debug, Clone)]
pub(crate) struct ColumnInfo {
    pub(crate) name: String,
    pub(crate) dtype: DataType,
    pub(crate) counter: Option<String>,
    /// Lists below the entry's list: 1 for a list of lists or of strings, written as each
    /// entry's values (characters) plus a `name/sizes` branch of the inner lists' (strings')
    /// lengths; 2 for a list of lists of strings, with a `name/sizes/sizes` branch of the inner
    /// lists' lengths in strings as well (docs/format.md 4.3); 0 otherwise.
    pub(crate) nested: usize,
    /// Uncompressed bytes of the whole column, as the input's metadata tells.
    pub(crate) raw_bytes: u64,
    /// A multi-dimensional fixed array's dimensions; empty otherwise.
    pub(crate) shape: Vec<u32>,
    /// What an entry holds, as the readers' data is shaped ([`ColumnData`]): an evtc
    /// branch's own kind (a nested list is a chain of branches, `name/sizes`), a ROOT
    /// column's kind.
    pub(crate) kind: ColumnKind,
}

pub(crate) struct SourceTree<'a> {
    name: String,
    entries: u64,
    columns: Vec<ColumnInfo>,
    unsupported: Vec<UnsupportedBranch>,
    kind: Kind<'a>,
    /// The selected columns' readers and buffers, in output order.
    slots: Vec<Slot<'a>>,
}

enum Kind<'a> {
    Root(&'a RootFile, evtc_root::Tree),
    Evtc(TreeReader<'a>),
}

struct Slot<'a> {
    column: usize,
    /// The output branch ids: the column's, and its `sizes` branches for nested lists
    /// (`name/sizes`, `name/sizes/sizes`).
    ids: (usize, Vec<usize>),
    reader: Option<ColumnReader<'a>>,
    data: ColumnData,
}

fn dtype(kind: ColumnKind) -> DataType {
    let t = kind.scalar();
    match kind {
        ColumnKind::Scalar(_) => DataType::Scalar(t),
        ColumnKind::Fixed(_, n) => DataType::FixedArray(t, n as u32),
        ColumnKind::Jagged(_) | ColumnKind::Nested(..) => DataType::Jagged(t),
        // Text, as ROOT and uproot read it (unless an entry turns out not to be UTF-8).
        ColumnKind::String | ColumnKind::Strings(_) => DataType::Utf8,
    }
}

fn root_kind(dtype: DataType) -> ColumnKind {
    let t = dtype.scalar();
    match dtype {
        DataType::Scalar(_) => ColumnKind::Scalar(t),
        DataType::FixedArray(_, n) => ColumnKind::Fixed(t, n as usize),
        DataType::Jagged(_) => ColumnKind::Jagged(t),
        DataType::Bytes | DataType::Utf8 => ColumnKind::String,
    }
}

/// What kind of file an input is: the one place evtc tells ROOT files from evtc files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A ROOT file (`root` magic): TTrees and RNTuples.
    Root,
    /// An evtc file (`EVTC` magic).
    Evtc,
}

impl FileKind {
    /// Bytes at the start of a file that [`FileKind::detect`] looks at.
    pub const MAGIC_LEN: usize = 4;

    /// The kind of a file that starts with `start` (at least [`FileKind::MAGIC_LEN`] bytes),
    /// `None` for neither kind.
    pub fn detect(start: &[u8]) -> Option<FileKind> {
        match start.get(..Self::MAGIC_LEN)? {
            b"root" => Some(FileKind::Root),
            b"EVTC" => Some(FileKind::Evtc),
            _ => None,
        }
    }

    /// The kind of the file at `path`, by its first bytes.
    ///
    /// # Errors
    /// [`Error::Input`] naming the file: it cannot be read, is too short, or is neither kind.
    pub fn of_path(path: &Path) -> Result<FileKind> {
        let fail = |reason: String| Error::Input {
            path: path.display().to_string(),
            reason,
        };
        let mut magic = [0u8; FileKind::MAGIC_LEN];
        let mut file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
        std::io::Read::read_exact(&mut file, &mut magic)
            .map_err(|_| fail("too short to be a ROOT or evtc file".into()))?;
        FileKind::detect(&magic).ok_or_else(|| {
            fail(format!(
                "neither a ROOT nor an evtc file (starts with {magic:?})"
            ))
        })
    }
}

impl Input {
    /// Opens `path`, ROOT or evtc ([`FileKind::of_path`]), with `max_basket_bytes` as the
    /// readers' basket limit (their default when `None`).
    ///
    /// # Errors
    /// [`Error::Input`] for a file of neither kind; the reader's error for a damaged one.
    pub fn open(path: &Path, max_basket_bytes: Option<u64>) -> Result<Input> {
        match FileKind::of_path(path)? {
            FileKind::Root => {
                let mut file = RootFile::open(path)?;
                if let Some(limit) = max_basket_bytes {
                    file.set_max_basket_bytes(limit);
                }
                Ok(Input::Root(file))
            }
            FileKind::Evtc => {
                let mut options = ReadOptions::default().threads(1);
                if let Some(limit) = max_basket_bytes {
                    options = options.max_basket_bytes(limit);
                }
                Ok(Input::Evtc(Box::new(FileReader::open_with(path, options)?)))
            }
        }
    }

    pub(crate) fn format(&self) -> &'static str {
        match self {
            Input::Root(_) => "root",
            Input::Evtc(_) => "evtc",
        }
    }

    /// The trees to convert: `requested` (checked), or every tree (newest cycle of each).
    pub(crate) fn tree_names(&self, requested: &[String]) -> Result<Vec<String>> {
        let mut all: Vec<String> = match self {
            Input::Root(f) => f.trees()?.into_iter().map(|t| t.path).collect(),
            Input::Evtc(f) => f.trees().iter().map(|t| t.name.clone()).collect(),
        };
        all.dedup();
        let mut seen = std::collections::HashSet::new();
        all.retain(|n| seen.insert(n.clone()));
        if requested.is_empty() {
            if all.is_empty() {
                return Err(Error::Options("the input holds no trees".into()));
            }
            return Ok(all);
        }
        for r in requested {
            let base = r.rsplit_once(';').map_or(r.as_str(), |(p, _)| p);
            if !all.iter().any(|a| a == base) {
                return Err(Error::Options(format!(
                    "no tree {r:?} in the input; it holds: {}",
                    all.join(", ")
                )));
            }
        }
        Ok(requested.to_vec())
    }

    pub(crate) fn tree(&self, name: &str) -> Result<SourceTree<'_>> {
        match self {
            Input::Root(f) => {
                let tree = f.tree(name)?;
                let columns = tree
                    .columns
                    .iter()
                    .map(|c| ColumnInfo {
                        name: c.name.clone(),
                        dtype: dtype(c.kind),
                        counter: c.counter.clone(),
                        nested: c.kind.levels(),
                        raw_bytes: c.tot_bytes,
                        shape: c.dims.iter().map(|&d| d as u32).collect(),
                        kind: c.kind,
                    })
                    .collect();
                Ok(SourceTree {
                    name: name.rsplit_once(';').map_or(name, |(p, _)| p).to_owned(),
                    entries: tree.entries,
                    columns,
                    unsupported: tree.unsupported.clone(),
                    kind: Kind::Root(f, tree),
                    slots: Vec::new(),
                })
            }
            Input::Evtc(f) => {
                let tree = f.tree(name)?;
                let columns = tree
                    .branches()
                    .iter()
                    .map(|b| ColumnInfo {
                        name: b.name.clone(),
                        dtype: b.dtype,
                        counter: b.counter.clone(),
                        nested: 0,
                        raw_bytes: b.raw_bytes,
                        shape: b.shape().unwrap_or_default(),
                        kind: root_kind(b.dtype),
                    })
                    .collect();
                Ok(SourceTree {
                    name: name.to_owned(),
                    entries: tree.entries(),
                    columns,
                    unsupported: Vec::new(),
                    kind: Kind::Evtc(tree),
                    slots: Vec::new(),
                })
            }
        }
    }
}

impl<'a> SourceTree<'a> {
    /// Leaves out the branches of this tree among `unreadable` (a ROOT input's branches whose
    /// data could not be read), as unsupported branches with their reason; an array counted by
    /// one of them keeps its own counts.
    pub(crate) fn leave_out(&mut self, unreadable: &[crate::Skipped]) {
        let Kind::Root(_, tree) = &mut self.kind else {
            return;
        };
        for u in unreadable.iter().filter(|u| u.tree == self.name) {
            let Some(i) = tree.columns.iter().position(|c| c.name == u.branch) else {
                continue;
            };
            let column = tree.columns.remove(i);
            self.columns.remove(i);
            self.unsupported.push(UnsupportedBranch {
                name: column.name,
                class: column.root_type,
                reason: u.reason.clone(),
            });
            for c in &mut self.columns {
                if c.counter.as_deref() == Some(u.branch.as_str()) {
                    c.counter = None;
                }
            }
        }
    }

    /// Stores the ROOT string branch `branch` as bytes, not UTF-8 text.
    pub(crate) fn strings_as_bytes(&mut self, branch: &str) {
        for c in self.columns.iter_mut().filter(|c| c.name == branch) {
            if c.dtype == DataType::Utf8 {
                c.dtype = DataType::Bytes;
            }
        }
    }

    /// The keys of the input tree's event index (a ROOT `TTreeIndex`'s major and minor
    /// expressions, or an evtc tree's index branches), if it has one.
    pub(crate) fn index_keys(&self) -> Result<Option<(String, String)>> {
        Ok(match &self.kind {
            Kind::Root(_, tree) => tree.index.clone(),
            Kind::Evtc(tree) => tree
                .event_index()?
                .map(|i| (i.major().to_owned(), i.minor().to_owned())),
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn entries(&self) -> u64 {
        self.entries
    }

    pub(crate) fn columns(&self) -> &[ColumnInfo] {
        &self.columns
    }

    pub(crate) fn unsupported(&self) -> &[UnsupportedBranch] {
        &self.unsupported
    }

    /// Entries per chunk: about [`CHUNK_BYTES`] of values.
    pub(crate) fn chunk_entries(&self) -> u64 {
        let per_entry = self.raw_bytes() / self.entries.max(1);
        (CHUNK_BYTES / per_entry.max(1)).clamp(1, self.entries.max(1))
    }

    /// Prepares readers for the columns feeding `specs` (branch `i` of the output is `specs[i]`).
    pub(crate) fn select(&mut self, specs: &[(BranchSpec, Option<usize>)]) {
        self.slots.clear();
        for (id, (_, column)) in specs.iter().enumerate() {
            let Some(column) = *column else {
                if let Some(last) = self.slots.last_mut() {
                    last.ids.1.push(id);
                }
                continue;
            };
            let (reader, kind) = match &self.kind {
                Kind::Root(file, tree) => {
                    let c = &tree.columns[column];
                    (Some(file.column_reader(c)), c.kind)
                }
                Kind::Evtc(_) => (None, root_kind(self.columns[column].dtype)),
            };
            self.slots.push(Slot {
                column,
                ids: (id, Vec::new()),
                reader,
                data: ColumnData::new(kind),
            });
        }
    }

    /// Prepares readers for `columns` (indexes into [`SourceTree::columns`]), in that order.
    pub(crate) fn select_columns(&mut self, columns: &[usize]) {
        self.slots.clear();
        for &column in columns {
            let (reader, kind) = match &self.kind {
                Kind::Root(file, tree) => {
                    let c = &tree.columns[column];
                    (Some(file.column_reader(c)), c.kind)
                }
                Kind::Evtc(_) => (None, self.columns[column].kind),
            };
            self.slots.push(Slot {
                column,
                ids: (0, Vec::new()),
                reader,
                data: ColumnData::new(kind),
            });
        }
    }

    /// The evtc branch behind column `column`, for an evtc input.
    pub(crate) fn branch_meta(&self, column: usize) -> Option<&evtc_format::BranchMeta> {
        match &self.kind {
            Kind::Evtc(tree) => tree.branches().get(column),
            Kind::Root(..) => None,
        }
    }

    /// The selected columns' data of the chunk read last, in selection order, moved out (the
    /// next read refills them).
    pub(crate) fn take_chunk(&mut self) -> Vec<ColumnData> {
        self.slots
            .iter_mut()
            .map(|s| {
                let empty = ColumnData::new(self.columns[s.column].kind);
                std::mem::replace(&mut s.data, empty)
            })
            .collect()
    }

    /// Reads `range` of every selected column; returns the bytes of values read.
    pub(crate) fn read(&mut self, range: Range<u64>) -> Result<u64> {
        match &self.kind {
            Kind::Root(..) => {
                let (columns, tree) = (&self.columns, &self.name);
                self.slots.par_iter_mut().try_for_each(|slot| {
                    slot.data.clear();
                    let reader = slot.reader.as_mut().expect("ROOT slots have readers");
                    reader
                        .read(range.clone(), &mut slot.data)
                        .map_err(|e| match e {
                            // The system's failure, not the branch's.
                            e @ evtc_root::Error::Io { .. } => Error::Root(e),
                            e => Error::UnreadableBranch {
                                tree: tree.clone(),
                                branch: columns[slot.column].name.clone(),
                                reason: e.to_string(),
                            },
                        })
                })?;
            }
            Kind::Evtc(tree) => {
                for slot in &mut self.slots {
                    let info = &self.columns[slot.column];
                    slot.data = read_evtc(tree, info, range.clone())?;
                }
            }
        }
        Ok(self
            .slots
            .iter()
            .map(|s| s.data.values.byte_len() as u64)
            .sum())
    }

    /// Uncompressed bytes of the whole tree's values, as its metadata tells.
    pub(crate) fn raw_bytes(&self) -> u64 {
        self.columns.iter().map(|c| c.raw_bytes).sum()
    }

    /// The chunk read last: each selected column's index in [`SourceTree::columns`] and its
    /// data.
    pub(crate) fn chunk(&self) -> impl Iterator<Item = (usize, &ColumnData)> {
        self.slots.iter().map(|s| (s.column, &s.data))
    }

    /// Fills the chunk read last into `tree`.
    pub(crate) fn fill(&self, tree: &mut TreeWriter<'_>) -> Result<()> {
        for slot in &self.slots {
            let data = &slot.data;
            let (id, sizes) = (slot.ids.0, &slot.ids.1);
            if data.offsets.is_empty() {
                with_values!(&data.values, v => tree.fill_column(id, v))?;
                continue;
            }
            // Nested lists: each entry's values, then for each list level (innermost first)
            // the lengths of its lists, grouped by entry.
            let lengths = |bounds: &[u64]| -> Vec<u32> {
                bounds.windows(2).map(|w| (w[1] - w[0]) as u32).collect()
            };
            let per_entry = lengths(&data.entry_bounds(0));
            with_values!(&data.values, v => tree.fill_jagged(id, &per_entry, v))?;
            for (level, (&sizes, bounds)) in sizes.iter().zip(&data.levels).enumerate() {
                tree.fill_jagged(
                    sizes,
                    &lengths(&data.entry_bounds(level + 1)),
                    &lengths(bounds),
                )?;
            }
        }
        Ok(())
    }
}

/// Reads `range` of an evtc branch into the same column buffers the ROOT path uses.
fn read_evtc(tree: &TreeReader<'_>, info: &ColumnInfo, range: Range<u64>) -> Result<ColumnData> {
    let branch = tree.branch(&info.name)?;
    macro_rules! read {
        ($variant:ident, $t:ty) => {
            if info.dtype.is_variable() {
                let jagged = branch.read_jagged_range::<$t>(range)?;
                ColumnData {
                    values: Values::$variant(jagged.values),
                    offsets: jagged.offsets.to_vec(),
                    levels: Vec::new(),
                }
            } else {
                ColumnData {
                    values: Values::$variant(branch.read_range::<$t>(range)?),
                    offsets: Vec::new(),
                    levels: Vec::new(),
                }
            }
        };
    }
    use evtc_format::ScalarType as S;
    Ok(match info.dtype.scalar() {
        S::Bool => read!(Bool, bool),
        S::I8 => read!(I8, i8),
        S::U8 => read!(U8, u8),
        S::I16 => read!(I16, i16),
        S::U16 => read!(U16, u16),
        S::I32 => read!(I32, i32),
        S::U32 => read!(U32, u32),
        S::I64 => read!(I64, i64),
        S::U64 => read!(U64, u64),
        S::F32 => read!(F32, f32),
        S::F64 => read!(F64, f64),
    })
}
