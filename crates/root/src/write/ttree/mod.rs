//! TTrees written from columns ([`TTreeWriter`]): each [`TreeBranch`] a `TBranch` with one
//! leaf (`x/F`, `x[3]/F`, NanoAOD's `Muon_pt[nMuon]/F` counted by another branch) or a
//! `TBranchElement` (`std::vector<T>` and vectors of vectors, `std::string` and vectors of
//! strings), its entries in baskets cut at each cluster's end ([`TTreeWriter::write_cluster`]:
//! ROOT's AutoFlush) and at the basket size; [`TTreeWriter::finish`] writes the `TTree` with
//! its branches, leaves, basket tables, cluster sizes and, when asked, a `TTreeIndex`.
//!
//! - `basket`: entries into basket bytes;
//! - `objects`: the `TTree`, `TBranch`, `TLeaf` and `TTreeIndex` records.

mod basket;
mod objects;

use std::io::{Seek, Write};

use evtc_codecs::{Codec, Compressor};

use super::file::RootWriter;
use crate::compression::compress;
use crate::data::{ColumnData, Values};
use crate::error::{Error, Result};
use crate::types::ColumnKind;
use basket::Layout;

/// A branch to write.
#[derive(Debug, Clone)]
pub struct TreeBranch {
    /// Its name.
    pub name: String,
    /// What an entry holds.
    pub kind: ColumnKind,
    /// A fixed array's dimensions, outermost first, when it has two or more (`x[2][3]/F`).
    pub dims: Vec<usize>,
    /// For a list of numbers: the integer scalar branch of the same tree, written before it,
    /// holding each entry's length (a leaf-count array, `Muon_pt[nMuon]/F`); without one, the
    /// list is a `std::vector`.
    pub counter: Option<String>,
    /// The codec of its baskets.
    pub codec: Codec,
}

impl TreeBranch {
    /// A branch of `kind` without counter, compressed with `codec`.
    pub fn new(name: impl Into<String>, kind: ColumnKind, codec: Codec) -> TreeBranch {
        TreeBranch {
            name: name.into(),
            kind,
            dims: Vec::new(),
            counter: None,
            codec,
        }
    }
}

/// How a TTree is written.
#[derive(Debug, Clone)]
pub struct TTreeOptions {
    /// The target uncompressed bytes of a basket (default 256 KiB); a cluster's entries of a
    /// branch are cut into baskets of about this size.
    pub basket_bytes: usize,
    /// The tree's title.
    pub title: String,
    /// The codec of the `TTree` record itself (default `zstd:5`).
    pub codec: Codec,
}

impl Default for TTreeOptions {
    fn default() -> TTreeOptions {
        TTreeOptions {
            basket_bytes: 256 << 10,
            title: String::new(),
            codec: Codec::DEFAULT,
        }
    }
}

/// A basket written, as the branch records it.
#[derive(Debug, Clone, Copy)]
struct Basket {
    seek: u64,
    nbytes: u32,
    /// Key and uncompressed object bytes.
    total: u64,
    first_entry: u64,
}

/// A `TTreeIndex` being built: its key branches and every entry's keys.
#[derive(Debug)]
struct EventIndex {
    major: String,
    minor: String,
    keys: Vec<(i64, i64)>,
}

/// A branch being written.
#[derive(Debug)]
struct Branch {
    spec: TreeBranch,
    layout: Layout,
    baskets: Vec<Basket>,
    /// The largest entry length of a counter branch (its leaf's `fMaximum`).
    max_count: i64,
    /// Whether other branches count their entries by this one.
    is_counter: bool,
    /// Entries in the baskets written so far.
    written: u64,
    /// The basket being filled: its entries' bytes, their offsets in them, its entries.
    pending: Vec<u8>,
    pending_starts: Vec<usize>,
    pending_entries: usize,
}

/// What a finished TTree holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TTreeSummary {
    /// Entries written.
    pub entries: u64,
    /// Baskets written.
    pub baskets: usize,
    /// Bytes of baskets as stored.
    pub basket_bytes: u64,
}

/// A TTree being written into a [`RootWriter`]'s file, cluster by cluster.
///
/// ```
/// use evtc_codecs::Codec;
/// use evtc_root::{ColumnData, ColumnKind, RootWriter, ScalarType, TTreeOptions, TTreeWriter,
///                 TreeBranch, Values};
///
/// let mut file = RootWriter::new(std::io::Cursor::new(Vec::new()), "out.root", Codec::DEFAULT)?;
/// let mut pt = TreeBranch::new("Muon_pt", ColumnKind::Jagged(ScalarType::F32), Codec::DEFAULT);
/// pt.counter = Some("nMuon".into());
/// let branches = vec![
///     TreeBranch::new("nMuon", ColumnKind::Scalar(ScalarType::U32), Codec::DEFAULT),
///     pt,
/// ];
/// let mut tree = TTreeWriter::new("Events", branches, TTreeOptions::default())?;
/// let n = ColumnData { values: Values::U32(vec![2, 0, 1]), offsets: vec![], levels: vec![] };
/// let pt = ColumnData {
///     values: Values::F32(vec![31.5, 12.0, 48.25]),
///     offsets: vec![0, 2, 2, 3],
///     levels: vec![],
/// };
/// tree.write_cluster(&mut file, &[n, pt])?;
/// assert_eq!(tree.finish(&mut file)?.entries, 3);
/// file.finish()?;
/// # Ok::<(), evtc_root::Error>(())
/// ```
#[derive(Debug)]
pub struct TTreeWriter {
    name: String,
    options: TTreeOptions,
    branches: Vec<Branch>,
    entries: u64,
    /// Entries of each cluster, in order.
    clusters: Vec<u64>,
    /// Entries of the cluster not yet ended.
    open_cluster: u64,
    /// The event index, when asked for.
    index: Option<EventIndex>,
    compressor: Compressor,
}

impl TTreeWriter {
    /// A TTree `name` of `branches`.
    ///
    /// # Errors
    /// [`Error::Unwritable`] for a tree or branch name ROOT refuses, two branches of one name,
    /// a counter that is not an integer scalar branch written before its array, or a counter
    /// on a kind that is not a list of numbers.
    pub fn new(
        name: &str,
        branches: Vec<TreeBranch>,
        options: TTreeOptions,
    ) -> Result<TTreeWriter> {
        let bad = |what: String, reason: &str| Error::Unwritable {
            what,
            reason: reason.to_owned(),
        };
        if name.is_empty() || name.contains('/') {
            return Err(bad(
                format!("TTree {name:?}"),
                "a TTree needs a name without '/'",
            ));
        }
        let mut out: Vec<Branch> = Vec::with_capacity(branches.len());
        for spec in branches {
            let what = format!("TTree {name:?} branch {:?}", spec.name);
            if spec.name.is_empty() || spec.name.contains(['/', '[', ']', ' ']) {
                return Err(bad(
                    what,
                    "branch names may not hold '/', '[', ']' or spaces",
                ));
            }
            if out.iter().any(|b| b.spec.name == spec.name) {
                return Err(bad(what, "the tree has another branch of that name"));
            }
            let layout = match (spec.kind, &spec.counter) {
                (ColumnKind::Jagged(_), Some(counter)) => {
                    let Some(c) = out.iter_mut().find(|b| &b.spec.name == counter) else {
                        return Err(bad(what, "its counter is not a branch written before it"));
                    };
                    if !matches!(c.spec.kind, ColumnKind::Scalar(t) if t.is_integer()) {
                        return Err(bad(what, "its counter is not an integer scalar branch"));
                    }
                    c.is_counter = true;
                    Layout::Counted
                }
                (_, Some(_)) => return Err(bad(what, "only a list of numbers has a counter")),
                (ColumnKind::Scalar(t), None) => Layout::Fixed { bytes: t.size() },
                (ColumnKind::Fixed(t, n), None) => Layout::Fixed {
                    bytes: t.size() * n,
                },
                (_, None) => Layout::Object,
            };
            out.push(Branch {
                spec,
                layout,
                baskets: Vec::new(),
                max_count: 0,
                is_counter: false,
                written: 0,
                pending: Vec::new(),
                pending_starts: Vec::new(),
                pending_entries: 0,
            });
        }
        Ok(TTreeWriter {
            name: name.to_owned(),
            options,
            branches: out,
            entries: 0,
            clusters: Vec::new(),
            open_cluster: 0,
            index: None,
            compressor: Compressor::new(),
        })
    }

    /// Gives the tree a `TTreeIndex` on the integer scalar branches `major` and `minor` (a run
    /// and an event number), built from the entries written.
    ///
    /// # Errors
    /// [`Error::Unwritable`] if either is not an integer scalar branch of the tree.
    pub fn index_by(&mut self, major: &str, minor: &str) -> Result<()> {
        for key in [major, minor] {
            let ok = self.branches.iter().any(|b| {
                b.spec.name == key && matches!(b.spec.kind, ColumnKind::Scalar(t) if t.is_integer())
            });
            if !ok {
                return Err(Error::Unwritable {
                    what: format!("TTree {:?} index", self.name),
                    reason: format!("{key:?} is not an integer scalar branch of the tree"),
                });
            }
        }
        self.index = Some(EventIndex {
            major: major.to_owned(),
            minor: minor.to_owned(),
            keys: Vec::new(),
        });
        Ok(())
    }

    /// Writes one cluster: `data[i]` holds the entries of branch `i`, all the same number,
    /// shaped as the readers make them for the branch's kind (offsets from 0); each branch's
    /// entries go into baskets of their own, none across clusters. The same as
    /// [`append`](TTreeWriter::append) then [`end_cluster`](TTreeWriter::end_cluster).
    ///
    /// # Errors
    /// As for [`append`](TTreeWriter::append).
    pub fn write_cluster<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        data: &[ColumnData],
    ) -> Result<()> {
        self.append(file, data)?;
        self.end_cluster(file)
    }

    /// Ends the open cluster (if it has entries) after the entries appended so far: every
    /// branch's basket being filled is written.
    ///
    /// # Errors
    /// [`Error::WriteIo`]; [`Error::Unwritable`] for a codec failure.
    pub fn end_cluster<W: Write + Seek>(&mut self, file: &mut RootWriter<W>) -> Result<()> {
        for i in 0..self.branches.len() {
            let b = &mut self.branches[i];
            if b.pending_entries > 0 {
                let (data, starts) = (
                    std::mem::take(&mut b.pending),
                    std::mem::take(&mut b.pending_starts),
                );
                let n = std::mem::take(&mut b.pending_entries);
                self.write_basket(file, i, &data, &starts, n)?;
            }
        }
        if self.open_cluster > 0 {
            self.clusters.push(self.open_cluster);
            self.open_cluster = 0;
        }
        Ok(())
    }

    /// Adds entries to the open cluster, `data` as for
    /// [`write_cluster`](TTreeWriter::write_cluster): each branch's entries fill its basket,
    /// written when it reaches the basket size (baskets fill across calls, not across
    /// clusters).
    ///
    /// # Errors
    /// [`Error::Unwritable`] for data that does not fit its branch, or a counter that
    /// disagrees with its array; [`Error::WriteIo`].
    pub fn append<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        data: &[ColumnData],
    ) -> Result<()> {
        let entries = self.check(data)?;
        if entries == 0 {
            return Ok(());
        }
        if let Some(index) = &mut self.index {
            let column = |name: &str| {
                self.branches
                    .iter()
                    .position(|b| b.spec.name == name)
                    .map(|i| integers(&data[i].values))
            };
            if let (Some(a), Some(b)) = (column(&index.major), column(&index.minor)) {
                index.keys.extend(a.into_iter().zip(b));
            }
        }
        for (i, d) in data.iter().enumerate() {
            if self.branches[i].is_counter {
                let max = integers(&d.values).into_iter().max().unwrap_or(0);
                let b = &mut self.branches[i];
                b.max_count = b.max_count.max(max);
            }
            self.write_baskets(file, i, d, entries as usize)?;
        }
        self.open_cluster += entries;
        self.entries += entries;
        Ok(())
    }

    /// Adds branch `i`'s entries to its baskets, each written when it reaches the basket size.
    fn write_baskets<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        i: usize,
        data: &ColumnData,
        entries: usize,
    ) -> Result<()> {
        let (kind, layout) = (self.branches[i].spec.kind, self.branches[i].layout);
        let target = self.options.basket_bytes.max(1);
        let b = &mut self.branches[i];
        let (mut buf, mut starts) = (
            std::mem::take(&mut b.pending),
            std::mem::take(&mut b.pending_starts),
        );
        let mut n = b.pending_entries;
        for entry in 0..entries {
            basket::encode(kind, layout, data, entry..entry + 1, &mut buf, &mut starts);
            n += 1;
            if buf.len() >= target {
                self.write_basket(file, i, &buf, &starts, n)?;
                buf.clear();
                starts.clear();
                n = 0;
            }
        }
        let b = &mut self.branches[i];
        (b.pending, b.pending_starts, b.pending_entries) = (buf, starts, n);
        Ok(())
    }

    /// Writes one basket of branch `i`: `data` (its entries' bytes) and, for variable layouts,
    /// the entries' offsets `starts` (into `data`).
    fn write_basket<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        i: usize,
        data: &[u8],
        starts: &[usize],
        entries: usize,
    ) -> Result<()> {
        let branch = &self.branches[i];
        let key_len = objects::basket_key_len(&branch.spec.name, &self.name);
        let mut object = data.to_vec();
        let nev_buf_size = match branch.layout {
            Layout::Fixed { bytes } => bytes as i32,
            _ => {
                // The entries' offsets in the key's buffer, then a zero.
                object.extend_from_slice(&(starts.len() as i32 + 1).to_be_bytes());
                for &s in starts {
                    object.extend_from_slice(&((key_len + s) as i32).to_be_bytes());
                }
                object.extend_from_slice(&0i32.to_be_bytes());
                objects::ENTRY_OFFSET_LEN
            }
        };
        let mut stored = Vec::new();
        compress(
            &mut self.compressor,
            branch.spec.codec,
            &object,
            &mut stored,
        )
        .map_err(|e| Error::Unwritable {
            what: format!("TTree {:?} branch {:?}", self.name, branch.spec.name),
            reason: e.to_string(),
        })?;
        let header = objects::BasketHeader {
            branch: &branch.spec.name,
            tree: &self.name,
            cycle: branch.baskets.len() as i16,
            objlen: object.len(),
            stored: stored.len(),
            nev_buf_size,
            entries: entries as i32,
            last: (key_len + data.len()) as i32,
        };
        let seek = file.position();
        file.write_raw(&header.bytes(seek, file.datime()), &stored)?;
        let branch = &mut self.branches[i];
        branch.baskets.push(Basket {
            seek,
            nbytes: (key_len + stored.len()) as u32,
            total: (key_len + object.len()) as u64,
            first_entry: branch.written,
        });
        branch.written += entries as u64;
        Ok(())
    }

    /// Checks that `data` fits the branches, and that counters count their arrays; returns its
    /// entries.
    fn check(&self, data: &[ColumnData]) -> Result<u64> {
        let fail = |what: &str, reason: String| Error::Unwritable {
            what: format!("TTree {:?} {what}", self.name),
            reason,
        };
        if data.len() != self.branches.len() {
            return Err(fail(
                "cluster",
                format!(
                    "{} columns of data for {} branches",
                    data.len(),
                    self.branches.len()
                ),
            ));
        }
        let mut entries = None;
        for (branch, d) in self.branches.iter().zip(data) {
            let what = format!("branch {:?}", branch.spec.name);
            let n = crate::write::shape_entries(branch.spec.kind, &branch.spec.dims, d)
                .map_err(|reason| fail(&what, reason))?;
            match entries {
                None => entries = Some(n),
                Some(e) if e != n => {
                    return Err(fail(&what, format!("{n} entries, the branches before {e}")));
                }
                _ => {}
            }
            if let Some(counter) = &branch.spec.counter {
                let c = self.branches.iter().position(|b| &b.spec.name == counter);
                let counts = c.map(|c| integers(&data[c].values)).unwrap_or_default();
                let lengths = d.offsets.windows(2).map(|w| (w[1] - w[0]) as i64);
                if !counts.iter().copied().eq(lengths) {
                    return Err(fail(
                        &what,
                        format!(
                            "its entries' lengths are not the values of its counter {counter:?}"
                        ),
                    ));
                }
            }
        }
        Ok(entries.unwrap_or(0))
    }

    /// The tree's title: the options', else its name.
    fn title(&self) -> &str {
        if self.options.title.is_empty() {
            &self.name
        } else {
            &self.options.title
        }
    }

    /// Writes the `TTree` record; the tree is then complete.
    ///
    /// # Errors
    /// [`Error::WriteIo`]; [`Error::Unwritable`] for a codec failure.
    pub fn finish<W: Write + Seek>(mut self, file: &mut RootWriter<W>) -> Result<TTreeSummary> {
        self.end_cluster(file)?;
        let title = self.title().to_owned();
        file.write_object("TTree", &self.name, &title, self.options.codec, |b| {
            self.tree_record(b)
        })?;
        Ok(self.summary())
    }

    /// What the tree holds so far: its entries, baskets and their stored bytes.
    pub fn summary(&self) -> TTreeSummary {
        TTreeSummary {
            entries: self.entries,
            baskets: self.branches.iter().map(|b| b.baskets.len()).sum(),
            basket_bytes: self
                .branches
                .iter()
                .flat_map(|b| &b.baskets)
                .map(|k| u64::from(k.nbytes))
                .sum(),
        }
    }
}

/// The values of an integer column as `i64`.
fn integers(values: &Values) -> Vec<i64> {
    match values {
        Values::Bool(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::I8(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::U8(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::I16(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::U16(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::I32(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::U32(v) => v.iter().map(|&x| i64::from(x)).collect(),
        Values::I64(v) => v.clone(),
        Values::U64(v) => v.iter().map(|&x| x as i64).collect(),
        Values::F32(_) | Values::F64(_) => Vec::new(),
    }
}
