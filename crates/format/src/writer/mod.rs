//! Writing evtc files: [`FileWriter`] and [`TreeWriter`].

use std::cell::RefCell;
use std::collections::VecDeque;

use std::sync::mpsc;

use evtc_codecs::BlockEncoder;
use rayon::prelude::*;

mod branch;
mod encode;
mod file;
mod fill;
mod layout;
mod update;

pub use file::FileWriter;

use branch::{BranchState, TrialBlocks};
use encode::{Encoding, encode_basket, schema_record};

use crate::error::{Error, Result};
use crate::index::{self, EXT_EVENT_INDEX, IndexKeys, IndexLocation, KeyBranches};
use crate::meta::{BasketIndex, BasketLoc, BranchMeta, Extension, TreeMeta};
use crate::reader::RawBasket;
use crate::record::{self, NO_BRANCH, RECORD_HEADER_LEN, RecordHeader, RecordKind};
use crate::schema::ClusterSize;
use crate::types::decode_counts;

/// A basket record's parts, borrowed, for [`TreeWriter::copy_record`].
pub(crate) struct CopiedBasket<'a> {
    pub(crate) rac: bool,
    pub(crate) entries: u64,
    pub(crate) elements: u64,
    pub(crate) body: &'a [u8],
    pub(crate) body_crc: u32,
}

/// A basket cut from a branch's buffer, waiting for compression.
struct Sealed {
    branch: usize,
    first_entry: u64,
    entries: u64,
    elements: u64,
    values: Vec<u8>,
    counts: Vec<u32>,
    /// Its blocks as the preconditioner trials of a branch's first basket encoded them, which
    /// its encoding reuses instead of compressing the basket again.
    trial_blocks: TrialBlocks,
}

impl Sealed {
    /// The basket's uncompressed bytes: its values and its per-entry counts (4 bytes each).
    fn raw_bytes(&self) -> u64 {
        (self.values.len() + 4 * self.counts.len()) as u64
    }
}

/// Writes one tree. Fill each branch with the same number of entries, then [`TreeWriter::commit`];
/// finally [`TreeWriter::finish`].
///
/// Branches are addressed by their position in the spec list ([`TreeWriter::branch_id`] finds it by
/// name). Two ways to fill:
///
/// - by entry, as ROOT's `Fill`: [`fill`](TreeWriter::fill) a value or
///   [`fill_array`](TreeWriter::fill_array) / [`fill_str`](TreeWriter::fill_str) an entry's values
///   into every branch, then `commit`;
/// - by column batch, for conversions: [`fill_column`](TreeWriter::fill_column) and
///   [`fill_jagged`](TreeWriter::fill_jagged) many entries of every branch, then `commit`.
///
/// # Memory
/// Each branch buffers at most one basket (`basket_size` plus one entry) of uncompressed data, and
/// sealed baskets wait for compression until they add up to 16 baskets' bytes (at most 64 MiB);
/// with threads, one such batch compresses on the pool while the next fills. In
/// flush-at-cluster mode each branch buffers its whole cluster instead; clusters are cut early when
/// the tree's buffered data reaches `max_cluster_bytes`, so memory stays below about twice that
/// (plus one committed batch).
pub struct TreeWriter<'f> {
    file: FileRef<'f>,
    tree_no: u32,
    name: String,
    branches: Vec<BranchState>,
    /// Committed entries.
    entries: u64,
    cluster_start: u64,
    cluster_ends: Vec<u64>,
    /// Entries per cluster, once known.
    cluster_entries: Option<u64>,
    pending: Vec<Sealed>,
    pending_raw: usize,
    /// Batches being compressed on the pool while filling goes on, oldest first.
    in_flight: VecDeque<InFlight>,
    /// Whether the tree-schema record with every branch's final settings was written.
    settled: bool,
    /// The tree's extensions, for its footer entry.
    extensions: Vec<Extension>,
    /// The keys of the tree's event index, if it gets one.
    index: Option<IndexKeys>,
    /// The tree's branches that this writer keeps as they are, before its own (adding branches
    /// to a tree of an existing file: [`FileWriter::add_branches`]).
    kept: Vec<BranchMeta>,
    /// The cluster ends the entries must follow (adding branches to a tree whose clusters are
    /// set), the last being the entries the tree must get.
    fixed_clusters: Option<Vec<u64>>,
    /// Per branch, the basket index it had before this writer appended to it
    /// ([`FileWriter::extend`]); empty for a new tree.
    prior: Vec<update::PriorIndex>,
}

/// The file a tree writer writes into: borrowed ([`FileWriter::tree`]) or owned
/// ([`FileWriter::into_tree`]).
enum FileRef<'f> {
    Borrowed(&'f mut FileWriter),
    Owned(Box<FileWriter>),
}

impl std::ops::Deref for FileRef<'_> {
    type Target = FileWriter;

    fn deref(&self) -> &FileWriter {
        match self {
            FileRef::Borrowed(f) => f,
            FileRef::Owned(f) => f,
        }
    }
}

impl std::ops::DerefMut for FileRef<'_> {
    fn deref_mut(&mut self) -> &mut FileWriter {
        match self {
            FileRef::Borrowed(f) => f,
            FileRef::Owned(f) => f,
        }
    }
}

/// A [`TreeWriter`] that owns its [`FileWriter`] (from [`FileWriter::into_tree`]); it dereferences
/// to the tree writer for filling.
#[derive(Debug)]
pub struct OwnedTreeWriter(TreeWriter<'static>);

impl std::ops::Deref for OwnedTreeWriter {
    type Target = TreeWriter<'static>;

    fn deref(&self) -> &TreeWriter<'static> {
        &self.0
    }
}

impl std::ops::DerefMut for OwnedTreeWriter {
    fn deref_mut(&mut self) -> &mut TreeWriter<'static> {
        &mut self.0
    }
}

impl OwnedTreeWriter {
    /// The file writer the tree is written into.
    pub fn file(&self) -> &FileWriter {
        &self.0.file
    }

    /// Writes the rest of the tree, as [`TreeWriter::finish`], and gives the file writer back for
    /// the next tree or [`FileWriter::finish`].
    ///
    /// # Errors
    /// As for [`TreeWriter::finish`]; the file writer is then dropped and nothing appears at its path.
    pub fn finish(mut self) -> Result<FileWriter> {
        self.0.finish_tree()?;
        match self.0.file {
            FileRef::Owned(file) => Ok(*file),
            FileRef::Borrowed(_) => unreachable!("an OwnedTreeWriter owns its file"),
        }
    }
}

/// A batch of sealed baskets compressing on the writer's pool; its records come back in order.
struct InFlight {
    baskets: Vec<SealedInfo>,
    records: mpsc::Receiver<Vec<Result<Vec<u8>>>>,
}

/// What the writer keeps of a sealed basket while it compresses.
struct SealedInfo {
    branch: usize,
    first_entry: u64,
    entries: u64,
    elements: u64,
    raw_bytes: u64,
}

/// Sealed baskets are compressed (in parallel, with threads) and written in batches of about this
/// many full baskets' bytes, at most [`BATCH_MAX_BYTES`]. Constants, not a multiple of the thread
/// count: the batches decide the records' order, and the same input must give the same bytes with
/// any number of threads.
const BATCH_BASKETS: usize = 16;

/// The most bytes of sealed baskets a batch waits for (large baskets make batches of fewer).
const BATCH_MAX_BYTES: usize = 64 << 20;

/// Batches allowed to compress at once: one compressing while the next fills keeps every thread
/// busy; more would only hold more memory.
const MAX_IN_FLIGHT: usize = 2;

impl std::fmt::Debug for TreeWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeWriter")
            .field("name", &self.name)
            .field("entries", &self.entries)
            .finish_non_exhaustive()
    }
}

thread_local! {
    static ENCODER: RefCell<BlockEncoder> = RefCell::new(BlockEncoder::new());
}

impl<'f> TreeWriter<'f> {
    fn new(
        file: FileRef<'f>,
        tree_no: u32,
        name: String,
        branches: Vec<BranchState>,
    ) -> TreeWriter<'f> {
        TreeWriter {
            file,
            tree_no,
            name,
            branches,
            entries: 0,
            cluster_start: 0,
            cluster_ends: Vec::new(),
            cluster_entries: None,
            pending: Vec::new(),
            pending_raw: 0,
            in_flight: VecDeque::new(),
            settled: false,
            extensions: Vec::new(),
            index: None,
            kept: Vec::new(),
            fixed_clusters: None,
            prior: Vec::new(),
        }
    }

    /// Gives the tree an event index (docs/format.md 3.6) keyed by the integer scalar branches
    /// `major` and `minor` (a run and an event number): the values filled into them are kept
    /// (16 bytes per entry) and sorted into the index record when the tree is finished. Call
    /// it before filling.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`]; [`Error::InvalidSchema`] for a branch that is not an integer
    /// scalar; [`Error::InvalidFill`] once entries were filled.
    pub fn index_by(&mut self, major: &str, minor: &str) -> Result<()> {
        if let Some(b) = self
            .branches
            .iter()
            .position(|b| b.first_entry + b.buffered > 0)
        {
            return Err(self.fill_error(b, "an event index is declared before any entry is filled"));
        }
        let metas: Vec<BranchMeta> = self.branches.iter().map(|b| b.meta.clone()).collect();
        let keys = KeyBranches::find(&self.name, &metas, major, minor)?;
        self.index = Some(IndexKeys::new(keys));
        Ok(())
    }

    /// Gives the tree an event index of the keys `majors[e]`, `minors[e]` of each entry `e`
    /// (their order-preserving forms), for a writer that copies entries instead of filling them.
    pub(crate) fn set_index_keys(
        &mut self,
        major: &str,
        minor: &str,
        majors: Vec<u64>,
        minors: Vec<u64>,
    ) -> Result<()> {
        let metas: Vec<BranchMeta> = self.branches.iter().map(|b| b.meta.clone()).collect();
        let branches = KeyBranches::find(&self.name, &metas, major, minor)?;
        self.index = Some(IndexKeys {
            branches,
            majors,
            minors,
        });
        Ok(())
    }

    /// Adds an extension to the tree's entry in the footer (docs/format.md 4.2), replacing one
    /// of the same key.
    pub fn set_extension(&mut self, extension: Extension) {
        self.extensions.retain(|e| e.key != extension.key);
        self.extensions.push(extension);
    }

    /// The position of branch `name`, for the fill methods.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`].
    pub fn branch_id(&self, name: &str) -> Result<usize> {
        self.branches
            .iter()
            .position(|b| b.meta.name == name)
            .ok_or_else(|| Error::NoSuchBranch {
                tree: self.name.clone(),
                name: name.to_owned(),
            })
    }

    /// Committed entries so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Ends the current entry, as ROOT's `TTree::Fill`: the same as [`TreeWriter::commit`].
    ///
    /// # Errors
    /// As for `commit`.
    pub fn end_entry(&mut self) -> Result<()> {
        self.commit().map(|_| ())
    }

    /// Commits the entries filled since the last commit; every branch must have received the same
    /// number. Returns that number. Cuts clusters and baskets and compresses as needed.
    ///
    /// # Errors
    /// [`Error::InvalidFill`] if branches received different numbers of entries or a variable-length
    /// branch's counts differ from its counter's values; compression and I/O errors.
    pub fn commit(&mut self) -> Result<u64> {
        let Some(first) = self.branches.first() else {
            return Ok(0);
        };
        let new = first.first_entry + first.buffered - self.entries;
        for (i, b) in self.branches.iter().enumerate() {
            let got = b.first_entry + b.buffered - self.entries;
            if got != new {
                return Err(self.fill_error(
                    i,
                    format!("received {got} entries since the last commit, but branch {:?} received {new}", first.meta.name),
                ));
            }
        }
        if new == 0 {
            return Ok(0);
        }
        self.check_counters(new)?;
        let end = self.entries + new;
        if let Some(last) = self
            .fixed_clusters
            .as_ref()
            .map(|e| e.last().copied().unwrap_or(0))
            && end > last
        {
            return Err(self.fill_error(
                0,
                format!("the tree has {last} entries; the branches added to it received {end}"),
            ));
        }
        // Cut clusters inside the new entries.
        while let Some(boundary) = self.next_cluster_end(end).filter(|&b| b <= end) {
            self.entries = boundary;
            self.cut_cluster()?;
        }
        self.entries = end;
        let buffered: usize = self.branches.iter().map(BranchState::raw_len).sum();
        if buffered as u64 >= self.file.options.max_cluster_bytes && self.fixed_clusters.is_none() {
            self.cut_cluster()?;
        } else if !self.file.options.flush_at_cluster {
            for b in 0..self.branches.len() {
                self.seal_full_baskets(b);
            }
        }
        let batch = BATCH_BASKETS
            .saturating_mul(self.file.options.basket_size_for(self.file.options.codec))
            .min(BATCH_MAX_BYTES);
        if self.pending_raw >= batch {
            self.write_pending()?;
        }
        Ok(new)
    }

    /// Checks that the counts of the `new` uncommitted entries of every countered branch equal the
    /// counter's values.
    fn check_counters(&self, new: u64) -> Result<()> {
        for (i, b) in self.branches.iter().enumerate() {
            let Some(c) = b.counter else { continue };
            let counter = &self.branches[c];
            // Entries copied as baskets of another file ([`TreeWriter::copy_basket`]) are not in
            // memory: that file's own checks hold for them.
            if counter.buffered < new || b.buffered < new {
                continue;
            }
            let size = counter.value_size();
            let uncommitted = (counter.first_entry + counter.buffered - self.entries) as usize;
            debug_assert_eq!(uncommitted as u64, new);
            let bytes = &counter.values[counter.values.len() - uncommitted * size..];
            let mut expected = Vec::with_capacity(uncommitted);
            decode_counts(counter.meta.dtype.scalar(), bytes, &mut expected).map_err(|at| {
                self.fill_error(
                    c,
                    format!(
                        "counter value of entry {} is negative",
                        self.entries + at as u64
                    ),
                )
            })?;
            let counts = &b.counts[b.counts.len() - uncommitted..];
            if let Some(at) = counts
                .iter()
                .zip(&expected)
                .position(|(&got, &want)| u64::from(got) != want)
            {
                return Err(self.fill_error(
                    i,
                    format!(
                        "entry {} has {} values but its counter {:?} says {}",
                        self.entries + at as u64,
                        counts[at],
                        counter.meta.name,
                        expected[at]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The entry at which the current cluster ends, if it is known by `end` (committed + new).
    fn next_cluster_end(&mut self, end: u64) -> Option<u64> {
        if let Some(ends) = &self.fixed_clusters {
            return ends.iter().copied().find(|&e| e > self.cluster_start);
        }
        match self.file.options.cluster {
            ClusterSize::Entries(n) => Some(self.cluster_start.saturating_add(n)),
            ClusterSize::Bytes(target) => {
                if let Some(n) = self.cluster_entries {
                    return Some(self.cluster_start.saturating_add(n));
                }
                // First cluster: find the first entry at which the uncompressed bytes reach the
                // target. The bytes so far: written, compressing (batches in flight, which only a
                // writer with threads has: left out, the cut would depend on the thread count),
                // sealed, buffered.
                let mut total: u64 = self.branches.iter().map(|b| b.meta.raw_bytes).sum::<u64>()
                    + self
                        .in_flight
                        .iter()
                        .flat_map(|batch| &batch.baskets)
                        .map(|s| s.raw_bytes)
                        .sum::<u64>()
                    + self.pending.iter().map(Sealed::raw_bytes).sum::<u64>()
                    + self
                        .branches
                        .iter()
                        .map(|b| b.bytes_of((self.entries - b.first_entry) as usize) as u64)
                        .sum::<u64>();
                // Only scan entry by entry when the target falls inside the new entries.
                let new: u64 = self
                    .branches
                    .iter()
                    .map(|b| {
                        (b.bytes_of((end - b.first_entry) as usize)
                            - b.bytes_of((self.entries - b.first_entry) as usize))
                            as u64
                    })
                    .sum();
                if total + new < target {
                    return None;
                }
                for e in self.entries..end {
                    for b in &self.branches {
                        let local = (e - b.first_entry) as usize;
                        total += match b.meta.dtype.fixed_len() {
                            Some(len) => (len * b.value_size()) as u64,
                            None => {
                                u64::from(b.buffered_counts()[local]) * b.value_size() as u64 + 4
                            }
                        };
                    }
                    if total >= target {
                        let n = e + 1 - self.cluster_start;
                        self.cluster_entries = Some(n);
                        return Some(self.cluster_start + n);
                    }
                }
                None
            }
        }
    }

    /// Ends the cluster at `self.entries`: seals every branch's buffered entries up to there.
    fn cut_cluster(&mut self) -> Result<()> {
        let end = self.entries;
        if end == self.cluster_start {
            return Ok(());
        }
        for b in 0..self.branches.len() {
            if !self.file.options.flush_at_cluster {
                self.seal_full_baskets_before(b, end);
            }
            let k = end - self.branches[b].first_entry;
            if k > 0 {
                self.seal(b, k as usize);
            }
        }
        self.cluster_ends.push(end);
        self.cluster_start = end;
        self.write_pending()
    }

    /// Seals baskets of at least `basket_size` bytes from committed entries.
    fn seal_full_baskets(&mut self, b: usize) {
        let end = self.entries;
        self.seal_full_baskets_before(b, end);
    }

    /// Seals baskets of at least `basket_size` bytes from entries before `end`.
    fn seal_full_baskets_before(&mut self, b: usize, end: u64) {
        let target = self.file.options.basket_size_for(self.branches[b].codec);
        loop {
            let state = &self.branches[b];
            let available = (end - state.first_entry) as usize;
            if available == 0 {
                return;
            }
            let size = state.value_size();
            let k = match state.meta.dtype.fixed_len() {
                Some(len) => target.div_ceil(len * size).max(1),
                None => {
                    let mut bytes = 0;
                    let mut k = 0;
                    let counts = state.buffered_counts();
                    while k < available && bytes < target {
                        bytes += counts[k] as usize * size + 4;
                        k += 1;
                    }
                    if bytes < target {
                        return;
                    }
                    k
                }
            };
            if k > available {
                return;
            }
            self.seal(b, k);
        }
    }

    /// Moves the first `k` buffered entries of branch `b` into a sealed basket.
    fn seal(&mut self, b: usize, k: usize) {
        let state = &mut self.branches[b];
        let first_entry = state.first_entry;
        let (values, counts, elements) = state.take_front(k);
        state.first_entry += k as u64;
        state.buffered -= k as u64;
        self.pending_raw += values.len() + 4 * counts.len();
        self.pending.push(Sealed {
            branch: b,
            first_entry,
            entries: k as u64,
            elements: elements as u64,
            values,
            counts,
            trial_blocks: TrialBlocks::default(),
        });
    }

    /// Compresses the sealed baskets and writes them. With threads, the batch compresses on the
    /// pool while the caller goes on filling; its records are written when a later batch needs
    /// room or the tree finishes ([`TreeWriter::drain`]).
    fn write_pending(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let limit = self.file.options.max_basket_bytes;
        if let Some(big) = self.pending.iter().find(|s| s.raw_bytes() > limit) {
            return Err(Error::BasketTooLarge {
                what: format!(
                    "tree {:?}, branch {:?}, entries {}..{}",
                    self.name,
                    self.branches[big.branch].meta.name,
                    big.first_entry,
                    big.first_entry + big.entries
                ),
                bytes: big.raw_bytes(),
                limit,
                hint: "readers refuse larger baskets by default; use smaller clusters, or raise \
                       WriteOptions::max_basket_bytes to write it anyway",
            });
        }
        let mut pending = std::mem::take(&mut self.pending);
        self.pending_raw = 0;
        if pending.iter().any(|s| !self.branches[s.branch].settled) {
            // Deciding a layout writes records (dictionaries, then the settled schema) straight
            // to the file: the batches still in flight go first, so that the records' order, and
            // so the file's bytes, do not depend on the number of threads.
            self.drain()?;
        }
        self.decide_layouts(&mut pending)?;
        // Every branch's layout decided: what recovery needs to read the baskets.
        self.settle_schema()?;
        let baskets: Vec<SealedInfo> = pending
            .iter()
            .map(|s| SealedInfo {
                branch: s.branch,
                first_entry: s.first_entry,
                entries: s.entries,
                elements: s.elements,
                raw_bytes: s.raw_bytes(),
            })
            .collect();
        let jobs: Vec<(Encoding, Sealed)> = pending
            .into_iter()
            .map(|s| (Encoding::of(&self.branches[s.branch]), s))
            .collect();
        let (tree, tree_no) = (self.name.clone(), self.tree_no);
        let Some(pool) = &self.file.pool else {
            let records = jobs
                .iter()
                .map(|(e, s)| encode_basket(&tree, tree_no, e, s))
                .collect();
            return self.write_records(&baskets, records);
        };
        let (send, records) = mpsc::channel();
        pool.spawn(move || {
            let records = jobs
                .par_iter()
                .map(|(e, s)| encode_basket(&tree, tree_no, e, s))
                .collect();
            // The receiver is gone only if the writer was dropped without finishing.
            let _ = send.send(records);
        });
        self.in_flight.push_back(InFlight { baskets, records });
        while self.in_flight.len() > MAX_IN_FLIGHT - 1 {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest batch in flight and writes its records.
    fn write_oldest(&mut self) -> Result<()> {
        let Some(batch) = self.in_flight.pop_front() else {
            return Ok(());
        };
        let records = batch.records.recv().map_err(|_| {
            Error::io(
                Some(&self.file.path),
                std::io::Error::other("a compression job stopped without a result"),
            )
        })?;
        self.write_records(&batch.baskets, records)
    }

    /// Writes every batch still in flight.
    fn drain(&mut self) -> Result<()> {
        while !self.in_flight.is_empty() {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Appends compressed basket records to the file and records where they went.
    fn write_records(
        &mut self,
        baskets: &[SealedInfo],
        records: Vec<Result<Vec<u8>>>,
    ) -> Result<()> {
        for (sealed, record) in baskets.iter().zip(records) {
            let record = record?;
            let loc = BasketLoc {
                offset: self.file.start_record(record.len() as u64)?,
                record_len: record.len() as u64,
                first_entry: sealed.first_entry,
                entries: sealed.entries,
                elements: sealed.elements,
            };
            self.file.write(&record)?;
            let state = &mut self.branches[sealed.branch];
            state.meta.raw_bytes += sealed.raw_bytes;
            state.meta.stored_bytes += loc.record_len;
            state.meta.baskets += 1;
            state.meta.entries = sealed.first_entry + sealed.entries;
            state.baskets.push(loc);
        }
        Ok(())
    }

    /// Appends `basket`, a basket record of another file's branch laid out as branch `branch`
    /// is ([`BranchSpec::like`]), to that branch, as it is: its body is copied, its header
    /// renumbered for this tree, branch and first entry. The branch's entries buffered so far
    /// are sealed first (the baskets of a branch go in entry order); the copied entries count as
    /// filled, to be committed with the other branches' ([`TreeWriter::commit`]).
    ///
    /// # Errors
    /// [`Error::InvalidFill`] if the branch was not made by [`BranchSpec::like`]; I/O errors.
    ///
    /// [`BranchSpec::like`]: crate::BranchSpec::like
    pub fn copy_basket(&mut self, branch: usize, basket: &RawBasket) -> Result<()> {
        self.copy_record(
            branch,
            CopiedBasket {
                rac: basket.rac,
                entries: basket.entries,
                elements: basket.elements,
                body: &basket.body,
                body_crc: basket.body_crc,
            },
        )
    }

    /// [`TreeWriter::copy_basket`] of a basket whose body is borrowed (from a span of records
    /// read at once).
    pub(crate) fn copy_record(&mut self, branch: usize, basket: CopiedBasket<'_>) -> Result<()> {
        let state = self
            .branches
            .get(branch)
            .ok_or_else(|| self.fill_error(0, format!("no branch number {branch}")))?;
        if !state.settled || state.auto_precondition || state.auto_boundaries {
            return Err(self.fill_error(
                branch,
                "baskets are copied only into branches laid out as their file's (BranchSpec::like)",
            ));
        }
        if basket.rac != (state.rac == crate::schema::RacMode::On) {
            return Err(self.fill_error(
                branch,
                "a random-access basket goes only into a random-access branch, and the other way",
            ));
        }
        if state.buffered > 0 {
            let k = state.buffered as usize;
            self.seal(branch, k);
        }
        if self.pending.iter().any(|s| s.branch == branch) {
            self.write_pending()?;
        }
        if self
            .in_flight
            .iter()
            .any(|b| b.baskets.iter().any(|s| s.branch == branch))
        {
            self.drain()?;
        }
        self.settle_schema()?;
        let state = &self.branches[branch];
        let header = RecordHeader {
            kind: RecordKind::Basket,
            basket_kind: u8::from(basket.rac),
            tree: self.tree_no,
            branch: state.number,
            first_entry: state.first_entry,
            entries: basket.entries,
            body_len: basket.body.len() as u64,
            body_crc: basket.body_crc,
        };
        let record_len = (RECORD_HEADER_LEN + basket.body.len()) as u64;
        let loc = BasketLoc {
            offset: self.file.start_record(record_len)?,
            record_len,
            first_entry: state.first_entry,
            entries: basket.entries,
            elements: basket.elements,
        };
        let raw_bytes = match state.meta.dtype.fixed_len() {
            Some(_) => basket.elements * state.value_size() as u64,
            None => basket.elements * state.value_size() as u64 + 4 * basket.entries,
        };
        self.file.write_parts(&[&header.encode(), basket.body])?;
        let state = &mut self.branches[branch];
        state.first_entry += basket.entries;
        state.meta.raw_bytes += raw_bytes;
        state.meta.stored_bytes += loc.record_len;
        state.meta.baskets += 1;
        state.meta.entries = loc.first_entry + loc.entries;
        state.baskets.push(loc);
        Ok(())
    }

    /// Ends the current cluster after the committed entries (clusters are otherwise cut by
    /// [`WriteOptions::cluster`](crate::WriteOptions)): for a writer that keeps another file's
    /// clusters while copying its baskets.
    ///
    /// # Errors
    /// [`Error::InvalidFill`] if entries were filled but not committed; compression and I/O
    /// errors.
    pub fn end_cluster(&mut self) -> Result<()> {
        for (i, b) in self.branches.iter().enumerate() {
            if b.first_entry + b.buffered != self.entries {
                return Err(self.fill_error(i, "entries were filled but not committed"));
            }
        }
        self.cut_cluster()
    }

    /// Writes the settled tree-schema record once every branch's layout is decided (recovery
    /// reads it).
    fn settle_schema(&mut self) -> Result<()> {
        if !self.settled && self.branches.iter().all(|b| b.settled) {
            let record = schema_record(self.tree_no, &self.name, &self.kept, &self.branches, true);
            self.file.write(&record)?;
            self.settled = true;
        }
        Ok(())
    }

    /// Writes the rest of the tree and its branch indexes.
    ///
    /// # Errors
    /// [`Error::InvalidFill`] if entries were filled but not committed; compression and I/O errors.
    pub fn finish(mut self) -> Result<()> {
        self.finish_tree()
    }

    fn finish_tree(&mut self) -> Result<()> {
        for (i, b) in self.branches.iter().enumerate() {
            if b.first_entry + b.buffered != self.entries {
                return Err(self.fill_error(i, "entries were filled but not committed"));
            }
        }
        self.cut_cluster()?;
        self.drain()?;
        if let Some(ends) = &self.fixed_clusters
            && *ends != self.cluster_ends
        {
            return Err(self.fill_error(
                0,
                format!(
                    "the tree has {} entries; the branches added to it received {}",
                    ends.last().copied().unwrap_or(0),
                    self.entries
                ),
            ));
        }
        let mut metas = std::mem::take(&mut self.kept);
        for b in 0..self.branches.len() {
            self.write_branch_index(b)?;
            let state = &mut self.branches[b];
            state.meta.entries = self.entries;
            metas.push(state.meta.clone());
        }
        self.write_event_index()?;
        let tree = TreeMeta {
            name: std::mem::take(&mut self.name),
            entries: self.entries,
            cluster_ends: std::mem::take(&mut self.cluster_ends),
            branches: metas,
            extensions: std::mem::take(&mut self.extensions),
        };
        match self.file.trees.get_mut(self.tree_no as usize) {
            Some(slot) => *slot = tree,
            None => self.file.trees.push(tree),
        }
        self.file.open_tree = None;
        Ok(())
    }

    /// Writes branch `b`'s basket index: all of it, or for a branch appended to, the baskets
    /// added, in a part of their own or together with the last parts (docs/format.md 3.5).
    fn write_branch_index(&mut self, b: usize) -> Result<()> {
        let state = &mut self.branches[b];
        let added = std::mem::take(&mut state.baskets);
        let (baskets, segments) = match self.prior.get(b) {
            Some(prior) if added.is_empty() => {
                // Nothing added: the index stays where it is.
                state.meta.index_offset = prior.offset;
                state.meta.index_len = prior.len;
                return Ok(());
            }
            Some(prior) => prior.with(added),
            None => (added, Vec::new()),
        };
        let body = postcard::to_stdvec(&BasketIndex { baskets }).expect("index serializes");
        let header = RecordHeader::metadata(RecordKind::BranchIndex, self.tree_no, state.number);
        let record = record::encode_record(header, &body);
        state.meta.index_offset = self.file.start_record(record.len() as u64)?;
        state.meta.index_len = record.len() as u64;
        update::set_segments(&mut state.meta, &segments);
        self.file.write(&record)?;
        Ok(())
    }

    /// Writes the event index, if the tree has one, and its extension.
    fn write_event_index(&mut self) -> Result<()> {
        let Some(keys) = self.index.take() else {
            return Ok(());
        };
        for (name, got) in [
            (&keys.branches.major.1, keys.majors.len()),
            (&keys.branches.minor.1, keys.minors.len()),
        ] {
            if got as u64 != self.entries {
                return Err(Error::InvalidFill {
                    tree: self.name.clone(),
                    branch: name.clone(),
                    reason: format!(
                        "the event index has keys of {got} entries, the tree {}",
                        self.entries
                    ),
                });
            }
        }
        let rows = index::sorted_rows(&keys.majors, &keys.minors);
        drop(keys.majors);
        drop(keys.minors);
        let body = index::encode_body(&self.name, &rows)?;
        let header = RecordHeader {
            entries: rows.len() as u64,
            ..RecordHeader::metadata(RecordKind::EventIndex, self.tree_no, NO_BRANCH)
        };
        let record = record::encode_record(header, &body);
        let location = IndexLocation {
            major: keys.branches.major.1,
            minor: keys.branches.minor.1,
            rows: rows.len() as u64,
            offset: self.file.start_record(record.len() as u64)?,
            len: record.len() as u64,
        };
        self.file.write(&record)?;
        self.set_extension(Extension {
            key: EXT_EVENT_INDEX.to_owned(),
            required: false,
            value: postcard::to_stdvec(&location).expect("the location serializes"),
        });
        Ok(())
    }
}
