//! Updating an existing file in place (docs/format.md 2.4): appending entries to its trees
//! ([`FileWriter::extend`]), adding branches to them ([`FileWriter::add_branches`]) and adding
//! trees, after the bytes already there, which are never rewritten.
//!
//! The new version exists once its trailer ends the file. Until then readers read the base
//! version: its trailer stays where it was, and every [`TRAILER_COPY_INTERVAL`] bytes the
//! writer puts a copy of it between its records, so that a reader finds it close to the end of
//! a file whose update was interrupted. A writer dropped before [`FileWriter::finish`] cuts its
//! bytes off again; a killed one leaves them for the next update (or `evtc recover`) to cut.

use std::fs::{File, TryLockError};
use std::io::{BufWriter, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use super::branch::{BranchState, build_branches};
use super::{FileRef, FileWriter, OwnedTreeWriter, TreeWriter};
use crate::error::{Error, Result};
use crate::index::{IndexKeys, KeyBranches};
use crate::io::{LocalFile, ReadAt};
use crate::meta::{
    BasketIndex, BasketLoc, BranchMeta, EXT_INDEX_SEGMENTS, Extension, IndexSegment, TreeMeta,
};
use crate::reader::{FileReader, ReadOptions};
use crate::record::{self, TRAILER_COPY_INTERVAL, TRAILER_LEN};
use crate::schema::{BranchSpec, ClusterSize, WriteOptions};

/// What a writer appending to a file knows of the version it started from.
pub(super) struct Update {
    /// The length of the base version: where the writer's bytes start.
    pub(super) base_len: u64,
    /// The base version's trailer, which the writer copies between its records.
    base_trailer: [u8; TRAILER_LEN as usize],
    /// Where the last copy of it ends (at first, the trailer itself).
    last_copy: u64,
    /// Whether the new version's trailer was written.
    pub(super) finished: bool,
    /// The trees this writer changed so far (by number).
    changed: Vec<u32>,
    /// The base version, for the dictionaries, basket indexes and event indexes of the trees
    /// the writer appends to.
    base: FileReader<LocalFile>,
    /// The file, locked (exclusively) until the writer is dropped.
    _lock: File,
}

impl Update {
    /// A copy of the base trailer to write before a record of `len` bytes at `offset`, if the
    /// record would end more than [`TRAILER_COPY_INTERVAL`] bytes after the last copy.
    pub(super) fn trailer_copy_due(
        &mut self,
        offset: u64,
        len: u64,
    ) -> Option<[u8; TRAILER_LEN as usize]> {
        if offset > self.last_copy && offset + len - self.last_copy > TRAILER_COPY_INTERVAL {
            self.last_copy = offset + TRAILER_LEN;
            return Some(self.base_trailer);
        }
        None
    }
}

/// A branch's basket index before an append, which the index written after it continues.
pub(super) struct PriorIndex {
    /// The record at `index_offset`.
    pub(super) offset: u64,
    pub(super) len: u64,
    /// Every part of the index, the record at `index_offset` last.
    parts: Vec<IndexSegment>,
    /// Every basket, in entry order.
    baskets: Arc<BasketIndex>,
}

impl PriorIndex {
    /// The baskets of the index record to write when `added` baskets follow, and the parts
    /// before that record. The new record takes the last parts along while they list no more
    /// baskets than it (a binary counter): a branch appended to `n` times has at most about
    /// `log2 n` parts, and each basket is written into about as many records.
    pub(super) fn with(&self, added: Vec<BasketLoc>) -> (Vec<BasketLoc>, Vec<IndexSegment>) {
        let mut parts = self.parts.clone();
        let mut taken = 0u64;
        while let Some(last) = parts
            .last()
            .filter(|p| p.baskets <= taken + added.len() as u64)
        {
            taken += last.baskets;
            parts.pop();
        }
        let all = &self.baskets.baskets;
        let mut baskets = all[all.len() - taken as usize..].to_vec();
        baskets.extend(added);
        (baskets, parts)
    }
}

/// Sets the extension listing a branch's earlier index parts (none: removes it).
pub(super) fn set_segments(meta: &mut BranchMeta, segments: &[IndexSegment]) {
    meta.extensions.retain(|e| e.key != EXT_INDEX_SEGMENTS);
    if !segments.is_empty() {
        meta.extensions.push(Extension {
            key: EXT_INDEX_SEGMENTS.to_owned(),
            required: true,
            value: postcard::to_stdvec(segments).expect("segments serialize"),
        });
    }
}

/// Where a tree writer that appends to a tree starts.
struct Resume {
    meta: TreeMeta,
    prior: Vec<PriorIndex>,
    index: Option<IndexKeys>,
}

impl FileWriter {
    /// Opens the evtc file at `path` for update: [`FileWriter::extend`] appends entries to its
    /// trees, [`FileWriter::add_branches`] adds branches to them, [`FileWriter::tree`] adds
    /// trees; [`FileWriter::finish`] makes the new version. Nothing in the file is rewritten:
    /// new baskets, indexes and a new footer go after its end (docs/format.md 2.4), so an
    /// update costs what writing its entries costs.
    ///
    /// The file is locked until the writer is dropped: a second writer is refused
    /// ([`Error::Busy`]); readers meanwhile read the version the update started from, also
    /// after a crash. A writer dropped without `finish` leaves the file as it was.
    ///
    /// `options` set how new trees and added branches are written; entries appended to a
    /// branch are written as the branch's first baskets were (codec, level, preconditioner,
    /// RAC, dictionary), and clusters by `options.cluster` (by default, as many entries as the
    /// tree's first cluster).
    ///
    /// ```
    /// use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("events.evtc");
    /// let mut file = FileWriter::create(&path, WriteOptions::default())?;
    /// let mut tree = file.tree("Events", vec![BranchSpec::scalar("run", ScalarType::U32)])?;
    /// tree.fill_column(0, &[1u32, 1])?;
    /// tree.commit()?;
    /// tree.finish()?;
    /// file.finish()?;
    ///
    /// let mut file = FileWriter::append(&path, WriteOptions::default())?;
    /// let mut tree = file.extend("Events")?;
    /// tree.fill_column(0, &[2u32])?;
    /// tree.commit()?;
    /// tree.finish()?;
    /// let mut tree = file.add_branches("Events", vec![BranchSpec::scalar("score", ScalarType::F32)])?;
    /// tree.fill_column(0, &[0.5f32, 0.25, 0.75])?;
    /// tree.commit()?;
    /// tree.finish()?;
    /// file.finish()?;
    ///
    /// let reader = FileReader::open(&path)?;
    /// let events = reader.tree("Events")?;
    /// assert_eq!(events.branch("run")?.read::<u32>()?, [1, 1, 2]);
    /// assert_eq!(events.branch("score")?.read::<f32>()?, [0.5, 0.25, 0.75]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Busy`] while another writer updates the file; [`Error::Request`] for a file of
    /// a newer format version than this writer's; the errors of opening it for reading.
    pub fn append(path: impl AsRef<Path>, options: WriteOptions) -> Result<FileWriter> {
        let path = path.as_ref().to_owned();
        FileWriter::check_options(&path, &options)?;
        let io = |e| Error::io(Some(&path), e);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(Error::Busy { path }),
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let base = FileReader::open_with(&path, ReadOptions::default())?;
        let meta = base.meta();
        if (meta.major, meta.minor) > (record::MAJOR, record::MINOR) {
            return Err(Error::Request(format!(
                "{}: written in format {}.{}, newer than this writer's {}.{}; update it with a newer evtc",
                path.display(),
                meta.major,
                meta.minor,
                record::MAJOR,
                record::MINOR
            )));
        }
        let base_len = base.committed_len();
        let mut base_trailer = [0u8; TRAILER_LEN as usize];
        LocalFile::open(&path)
            .and_then(|f| f.read_exact_at(base_len - TRAILER_LEN, &mut base_trailer))
            .map_err(io)?;
        // The bytes of an update that was interrupted belong to no version.
        if file.metadata().map_err(io)?.len() > base_len {
            file.set_len(base_len).map_err(io)?;
        }
        let mut out = file.try_clone().map_err(io)?;
        out.seek(SeekFrom::Start(base_len)).map_err(io)?;
        Ok(FileWriter {
            pool: FileWriter::pool(&options, &path)?,
            output: None,
            out: BufWriter::with_capacity(1 << 20, out),
            offset: base_len,
            trees: meta.trees.clone(),
            open_tree: None,
            options,
            extensions: meta.extensions.clone(),
            update: Some(Box::new(Update {
                base_len,
                base_trailer,
                last_copy: base_len,
                finished: false,
                changed: Vec::new(),
                base,
                _lock: file,
            })),
            path,
        })
    }

    /// Appends entries to tree `name` of a file opened with [`FileWriter::append`]: fill the
    /// returned writer as a new tree's (every branch, same types), and finish it. The tree's
    /// event index, if it has one, is rebuilt with the new entries' keys (reading the old
    /// index: 16 bytes per entry of the tree).
    ///
    /// # Errors
    /// [`Error::Request`] if the writer did not come from `append`; [`Error::NoSuchTree`];
    /// [`Error::InvalidSchema`] while another tree is being written; the errors of reading
    /// the tree's indexes and dictionaries.
    pub fn extend(&mut self, name: &str) -> Result<TreeWriter<'_>> {
        let (tree_no, states, resume) = self.start_extend(name)?;
        let mut tree = TreeWriter::new(FileRef::Borrowed(self), tree_no, name.to_owned(), states);
        tree.resume(resume);
        Ok(tree)
    }

    /// As [`FileWriter::extend`], owning the file writer (see [`FileWriter::into_tree`]).
    ///
    /// # Errors
    /// As for [`FileWriter::extend`]; the file writer is then dropped (the file stays as it was).
    pub fn into_extend(mut self, name: &str) -> Result<OwnedTreeWriter> {
        let (tree_no, states, resume) = self.start_extend(name)?;
        let file = FileRef::Owned(Box::new(self));
        let mut tree = TreeWriter::new(file, tree_no, name.to_owned(), states);
        tree.resume(resume);
        Ok(OwnedTreeWriter(tree))
    }

    /// Adds branches to tree `name` of a file opened with [`FileWriter::append`], without
    /// rewriting its others: fill the returned writer with every entry of the tree (its
    /// clusters are kept: the writer cuts baskets at them), and finish it. A variable-length
    /// added branch's counter must be added with it.
    ///
    /// # Errors
    /// As for [`FileWriter::extend`]; [`Error::InvalidSchema`] for a name the tree has, or a
    /// counter among its branches; the branches' errors as for [`FileWriter::tree`].
    pub fn add_branches(
        &mut self,
        name: &str,
        branches: Vec<BranchSpec>,
    ) -> Result<TreeWriter<'_>> {
        let (tree_no, states, meta) = self.start_add(name, branches)?;
        let mut tree = TreeWriter::new(FileRef::Borrowed(self), tree_no, name.to_owned(), states);
        tree.keep(meta);
        Ok(tree)
    }

    /// As [`FileWriter::add_branches`], owning the file writer (see [`FileWriter::into_tree`]).
    ///
    /// # Errors
    /// As for [`FileWriter::add_branches`]; the file writer is then dropped (the file stays as
    /// it was).
    pub fn into_add_branches(
        mut self,
        name: &str,
        branches: Vec<BranchSpec>,
    ) -> Result<OwnedTreeWriter> {
        let (tree_no, states, meta) = self.start_add(name, branches)?;
        let file = FileRef::Owned(Box::new(self));
        let mut tree = TreeWriter::new(file, tree_no, name.to_owned(), states);
        tree.keep(meta);
        Ok(OwnedTreeWriter(tree))
    }

    /// The base version of a writer from [`FileWriter::append`], and the number of tree `name`
    /// in it, once no other tree is being written.
    fn updated_tree(&self, name: &str) -> Result<(&FileReader<LocalFile>, u32)> {
        let update = self.update.as_ref().ok_or_else(|| {
            Error::Request(format!(
                "{}: trees are extended only by a writer from FileWriter::append",
                self.path.display()
            ))
        })?;
        self.check_no_open_tree(name)?;
        let tree_no = self
            .trees
            .iter()
            .position(|t| t.name == name)
            .ok_or_else(|| Error::NoSuchTree {
                name: name.to_owned(),
                available: self
                    .trees
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok((&update.base, tree_no as u32))
    }

    fn start_extend(&mut self, name: &str) -> Result<(u32, Vec<BranchState>, Resume)> {
        let (base, tree_no) = self.updated_tree(name)?;
        if self
            .update
            .as_ref()
            .is_some_and(|u| u.changed.contains(&tree_no))
            || tree_no as usize >= base.trees().len()
        {
            return Err(Error::Request(format!(
                "{}: tree {name:?} was written or changed by this writer already; finish the file \
                 and append to it again to extend the tree",
                self.path.display()
            )));
        }
        let meta = self.trees[tree_no as usize].clone();
        let tree = base.tree(name)?;
        let mut specs = Vec::with_capacity(meta.branches.len());
        let mut prior = Vec::with_capacity(meta.branches.len());
        for m in &meta.branches {
            let branch = tree.branch(&m.name)?;
            specs.push(BranchSpec::like(m, branch.dictionary_bytes()?));
            let baskets = branch.baskets()?;
            let mut parts = m.index_segments().map_err(|e| Error::InvalidSchema {
                tree: name.to_owned(),
                reason: format!("branch {:?}: its {EXT_INDEX_SEGMENTS}: {e}", m.name),
            })?;
            let earlier: u64 = parts.iter().map(|p| p.baskets).sum();
            parts.push(IndexSegment {
                offset: m.index_offset,
                len: m.index_len,
                baskets: (baskets.baskets.len() as u64).saturating_sub(earlier),
            });
            prior.push(PriorIndex {
                offset: m.index_offset,
                len: m.index_len,
                parts,
                baskets,
            });
        }
        let index = match tree.event_index()? {
            Some(index) => {
                let (major, minor) = index.key_names();
                let branches = KeyBranches::find(name, &meta.branches, major, minor)?;
                let (majors, minors) = index.keys_by_entry()?;
                Some(IndexKeys {
                    branches,
                    majors,
                    minors,
                })
            }
            None => None,
        };
        let mut states = build_branches(name, specs, &self.options)?;
        for (state, m) in states.iter_mut().zip(&meta.branches) {
            // Where its dictionary and index are, and what it holds so far, are the file's.
            state.meta = m.clone();
        }
        self.changed(tree_no, name);
        Ok((tree_no, states, Resume { meta, prior, index }))
    }

    fn start_add(
        &mut self,
        name: &str,
        branches: Vec<BranchSpec>,
    ) -> Result<(u32, Vec<BranchState>, TreeMeta)> {
        let (_, tree_no) = self.updated_tree(name)?;
        let meta = self.trees[tree_no as usize].clone();
        let invalid = |reason: String| Error::InvalidSchema {
            tree: name.to_owned(),
            reason,
        };
        for spec in &branches {
            if meta.branches.iter().any(|b| b.name == spec.name) {
                return Err(invalid(format!("the tree has a branch {:?}", spec.name)));
            }
            if let Some(counter) = &spec.counter
                && meta.branches.iter().any(|b| &b.name == counter)
            {
                return Err(invalid(format!(
                    "branch {:?}: its counter {counter:?} is one of the tree's branches; an added \
                     branch's counter is added with it (or leave the counter out: the branch \
                     then stores its own counts)",
                    spec.name
                )));
            }
        }
        let mut states = build_branches(name, branches, &self.options)?;
        let kept = meta.branches.len();
        for (i, state) in states.iter_mut().enumerate() {
            state.number = u32::try_from(kept + i)
                .map_err(|_| invalid("more than 2^32 - 1 branches".into()))?;
        }
        self.write_dictionaries(tree_no, &mut states)?;
        self.changed(tree_no, name);
        Ok((tree_no, states, meta))
    }
}

impl FileWriter {
    /// Writes `record`, a tree-level record of tree `tree_no` (an event index), and gives the
    /// tree the extension `extension` makes of the record's offset, replacing one of its key.
    pub(crate) fn add_tree_record(
        &mut self,
        tree_no: usize,
        record: &[u8],
        extension: impl FnOnce(u64) -> Extension,
    ) -> Result<()> {
        let name = self.trees[tree_no].name.clone();
        self.check_no_open_tree(&name)?;
        let offset = self.start_record(record.len() as u64)?;
        self.write(record)?;
        let extension = extension(offset);
        let tree = &mut self.trees[tree_no];
        tree.extensions.retain(|e| e.key != extension.key);
        tree.extensions.push(extension);
        Ok(())
    }

    /// Takes note that tree `name` (number `tree_no`) is being changed.
    fn changed(&mut self, tree_no: u32, name: &str) {
        if let Some(update) = &mut self.update {
            update.changed.push(tree_no);
        }
        self.open_tree = Some(name.to_owned());
    }
}

impl TreeWriter<'_> {
    /// Continues the tree `resume` describes: its entries, clusters, indexes and extensions.
    fn resume(&mut self, resume: Resume) {
        let Resume { meta, prior, index } = resume;
        self.entries = meta.entries;
        self.cluster_start = meta.entries;
        if let ClusterSize::Bytes(_) = self.file.options.cluster {
            self.cluster_entries = meta.cluster_ends.first().copied();
        }
        self.cluster_ends = meta.cluster_ends;
        for state in &mut self.branches {
            state.first_entry = meta.entries;
        }
        self.prior = prior;
        self.index = index;
        self.extensions = meta.extensions;
        // Its branches' settings are those of its settled schema, which recovery reads.
        self.settled = true;
    }

    /// Writes its branches after those of `meta`, kept as they are, with `meta`'s clusters.
    fn keep(&mut self, meta: TreeMeta) {
        self.fixed_clusters = Some(meta.cluster_ends);
        self.kept = meta.branches;
        self.extensions = meta.extensions;
    }
}
