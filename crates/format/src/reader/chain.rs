//! Chained trees: trees of several files read as one, their entries numbered across the files
//! (ROOT's `TChain`).

use std::ops::Range;

use super::rows::{RowReader, Value};
use super::{BranchReader, Jagged, TreeReader};
use crate::error::{Error, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::BranchMeta;
use crate::types::Scalar;

/// Trees of several files read as one: entry `e` of the second tree is entry `n + e` of the
/// chain, `n` the first tree's entries. The branch names are the first tree's; a branch another
/// tree lacks is an error naming that tree's file when it is read.
///
/// ```
/// use evtc_format::{BranchSpec, ChainedTrees, FileReader, FileWriter, ScalarType, WriteOptions, Value};
/// let dir = tempfile::tempdir()?;
/// for (file, values) in [("a.evtc", [1u32, 2]), ("b.evtc", [3, 4])] {
///     let mut writer = FileWriter::create(dir.path().join(file), WriteOptions::default())?;
///     let mut tree = writer.tree("Events", vec![BranchSpec::scalar("n", ScalarType::U32)])?;
///     tree.fill_column(0, &values)?;
///     tree.commit()?;
///     tree.finish()?;
///     writer.finish()?;
/// }
/// let a = FileReader::open(dir.path().join("a.evtc"))?;
/// let b = FileReader::open(dir.path().join("b.evtc"))?;
/// let chain = ChainedTrees::new(vec![a.tree("Events")?, b.tree("Events")?])?;
/// assert_eq!(chain.entries(), 4);
/// assert_eq!(chain.locate(2), Some((1, 0)));
/// assert_eq!(chain.rows(&["n"])?.get(3)?, [Value::U32(4)]);
/// assert_eq!(chain.read_range::<u32>("n", 1..4)?, [2, 3, 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ChainedTrees<'a, R: ReadAt = LocalFile> {
    trees: Vec<TreeReader<'a, R>>,
    /// The first entry of each tree, then the chain's entries.
    offsets: Vec<u64>,
}

impl<'a, R: ReadAt> ChainedTrees<'a, R> {
    /// `trees`, in order, as one.
    ///
    /// # Errors
    /// [`Error::Request`] for no trees; [`Error::Corrupt`] when the entries overflow.
    pub fn new(trees: Vec<TreeReader<'a, R>>) -> Result<Self> {
        if trees.is_empty() {
            return Err(Error::Request("a chain needs at least one tree".into()));
        }
        let mut offsets = Vec::with_capacity(trees.len() + 1);
        let mut total = 0u64;
        offsets.push(0);
        for tree in &trees {
            total = total
                .checked_add(tree.entries())
                .ok_or_else(|| Error::Request("the chain's entries overflow 64 bits".into()))?;
            offsets.push(total);
        }
        Ok(ChainedTrees { trees, offsets })
    }

    /// The trees, in order.
    pub fn trees(&self) -> &[TreeReader<'a, R>] {
        &self.trees
    }

    /// The first entry of each tree in the chain, then the chain's entries.
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// The chain's entries: every tree's.
    pub fn entries(&self) -> u64 {
        self.offsets[self.trees.len()]
    }

    /// The first tree's branches.
    pub fn branches(&self) -> &'a [BranchMeta] {
        self.trees[0].branches()
    }

    /// The tree holding chain entry `entry` and the entry's number in it; `None` past the end.
    pub fn locate(&self, entry: u64) -> Option<(usize, u64)> {
        if entry >= self.entries() {
            return None;
        }
        // The last tree whose first entry is at or before `entry` (empty trees are skipped).
        let k = self.offsets.partition_point(|&first| first <= entry) - 1;
        Some((k, entry - self.offsets[k]))
    }

    /// The trees' parts of chain entries `range`: (tree, its entries).
    pub fn pieces(&self, range: Range<u64>) -> Vec<(usize, Range<u64>)> {
        self.offsets
            .windows(2)
            .enumerate()
            .filter_map(|(k, w)| {
                let (a, b) = (range.start.max(w[0]), range.end.min(w[1]));
                (a < b).then(|| (k, a - w[0]..b - w[0]))
            })
            .collect()
    }

    /// Branch `name` of tree `k`, of the type the first tree's has.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`] or [`Error::TypeMismatch`], naming the tree's file.
    pub fn branch_in(&self, k: usize, name: &str) -> Result<BranchReader<'a, R>> {
        let first = self.trees[0].branch(name)?;
        let tree = &self.trees[k];
        let branch = tree.branch(name).map_err(|e| in_file(tree, e))?;
        if branch.meta().dtype != first.meta().dtype {
            return Err(in_file(
                tree,
                Error::TypeMismatch {
                    tree: tree.name().to_owned(),
                    branch: name.to_owned(),
                    requested: format!(
                        "{} (its type in the chain's first file)",
                        first.meta().dtype
                    ),
                    actual: branch.meta().dtype,
                },
            ));
        }
        Ok(branch)
    }

    /// Checks that `range` is within the chain.
    fn check(&self, range: &Range<u64>) -> Result<()> {
        if range.start > range.end || range.end > self.entries() {
            return Err(Error::EntryOutOfRange {
                tree: self.trees[0].name().to_owned(),
                start: range.start,
                end: range.end,
                entries: self.entries(),
            });
        }
        Ok(())
    }

    /// The values of chain entries `range` of fixed-size branch `name`, back to back.
    ///
    /// # Errors
    /// As [`BranchReader::read_range`], and [`ChainedTrees::branch_in`]'s.
    pub fn read_range<T: Scalar>(&self, name: &str, range: Range<u64>) -> Result<Vec<T>> {
        let mut parts = self.per_piece(name, range, |b, part| b.read_range::<T>(part))?;
        // Within one tree: its read as it is, not copied.
        Ok(match parts.len() {
            1 => parts.pop().expect("one part"),
            _ => parts.concat(),
        })
    }

    /// Chain entries `range` of variable-length branch `name`: values and offsets.
    ///
    /// # Errors
    /// As [`BranchReader::read_jagged_range`], and [`ChainedTrees::branch_in`]'s.
    pub fn read_jagged_range<T: Scalar>(&self, name: &str, range: Range<u64>) -> Result<Jagged<T>> {
        let mut parts = self.per_piece(name, range, |b, part| b.read_jagged_range::<T>(part))?;
        if parts.len() == 1 {
            return Ok(parts.pop().expect("one part"));
        }
        let mut values = Vec::new();
        let mut offsets = vec![0u64];
        for jagged in parts {
            let base = values.len() as u64;
            offsets.extend(jagged.offsets[1..].iter().map(|&o| base + o));
            values.extend_from_slice(&jagged.values);
        }
        Ok(Jagged {
            offsets: offsets.into(),
            values,
        })
    }

    /// The values chain entries `range` of branch `name` hold.
    ///
    /// # Errors
    /// As [`BranchReader::value_count`], and [`ChainedTrees::branch_in`]'s.
    pub fn value_count(&self, name: &str, range: Range<u64>) -> Result<u64> {
        Ok(self
            .per_piece(name, range, |b, part| b.value_count(part))?
            .into_iter()
            .sum())
    }

    /// `read` of branch `name` over each tree's part of chain entries `range` (an error naming
    /// the tree's file).
    fn per_piece<X>(
        &self,
        name: &str,
        range: Range<u64>,
        read: impl Fn(&BranchReader<'a, R>, Range<u64>) -> Result<X>,
    ) -> Result<Vec<X>> {
        self.check(&range)?;
        self.pieces(range)
            .into_iter()
            .map(|(k, part)| {
                let branch = self.branch_in(k, name)?;
                read(&branch, part).map_err(|e| in_file(&self.trees[k], e))
            })
            .collect()
    }

    /// Row reads of the named branches across the trees (each tree's opened when an entry of it
    /// is first asked for).
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`] for a name the first tree lacks.
    pub fn rows(&self, names: &[&str]) -> Result<ChainedRows<'_, 'a, R>> {
        let first = self.trees[0].rows(names)?;
        let mut readers: Vec<Option<RowReader<'a, R>>> = Vec::with_capacity(self.trees.len());
        readers.push(Some(first));
        readers.resize_with(self.trees.len(), || None);
        Ok(ChainedRows {
            chain: self,
            names: names.iter().map(|&n| n.to_owned()).collect(),
            readers,
        })
    }

    /// The chain entries whose keys in each tree's event index are `(major, minor)`, in entry
    /// order.
    ///
    /// # Errors
    /// [`Error::NoEventIndex`] (naming the tree's file) for a tree without an event index.
    pub fn entries_of(&self, major: i128, minor: i128) -> Result<Vec<u64>> {
        let mut found = Vec::new();
        for (tree, &first) in self.trees.iter().zip(&self.offsets) {
            let index = tree.event_index().map_err(|e| in_file(tree, e))?;
            let Some(index) = index else {
                return Err(in_file(
                    tree,
                    Error::NoEventIndex {
                        tree: tree.name().to_owned(),
                    },
                ));
            };
            let entries = index
                .entries_of(major, minor)
                .map_err(|e| in_file(tree, e))?;
            found.extend(entries.into_iter().map(|e| first + e));
        }
        Ok(found)
    }
}

/// Row reads across a chain's trees ([`ChainedTrees::rows`]).
pub struct ChainedRows<'c, 'a, R: ReadAt = LocalFile> {
    chain: &'c ChainedTrees<'a, R>,
    names: Vec<String>,
    readers: Vec<Option<RowReader<'a, R>>>,
}

impl<R: ReadAt> std::fmt::Debug for ChainedRows<'_, '_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChainedRows")
            .field("names", &self.names)
            .field("trees", &self.readers.len())
            .finish_non_exhaustive()
    }
}

impl<R: ReadAt> ChainedRows<'_, '_, R> {
    /// The values of chain entry `entry`, one per branch.
    ///
    /// # Errors
    /// [`Error::EntryOutOfRange`] past the chain's end; a branch the entry's tree lacks, or any
    /// error reading it, names its file.
    pub fn get(&mut self, entry: u64) -> Result<Vec<Value>> {
        let Some((k, local)) = self.chain.locate(entry) else {
            return Err(Error::EntryOutOfRange {
                tree: self.chain.trees[0].name().to_owned(),
                start: entry,
                end: entry.saturating_add(1),
                entries: self.chain.entries(),
            });
        };
        let tree = &self.chain.trees[k];
        if self.readers[k].is_none() {
            let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
            self.readers[k] = Some(tree.rows(&names).map_err(|e| in_file(tree, e))?);
        }
        let reader = self.readers[k].as_mut().expect("opened above");
        reader.get(local).map_err(|e| in_file(tree, e))
    }
}

/// `error`, naming `tree`'s file when it has a path.
fn in_file<R: ReadAt>(tree: &TreeReader<'_, R>, error: Error) -> Error {
    match tree.file.source.path() {
        Some(path) => error.in_file(path),
        None => error,
    }
}
