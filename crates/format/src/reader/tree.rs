//! The tree and branch metadata API: [`TreeReader`], [`BranchReader`], basket indexes and
//! their validation, RAC dictionaries.

use std::ops::Range;
use std::sync::Arc;

use evtc_codecs::{Algorithm, DecoderDictionary, PrefixDictionary, UnitDictionary};

use super::{Body, FileReader, ReaderDictionary, max_expansion};
use crate::error::{Error, Location, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::{BasketIndex, BranchMeta, EXT_INDEX_SEGMENTS, TreeMeta};
use crate::record::{FILE_HEADER_LEN, RECORD_HEADER_LEN, RecordKind};
use crate::types::Scalar;

/// One tree of an open file.
pub struct TreeReader<'a, R: ReadAt = LocalFile> {
    pub(super) file: &'a FileReader<R>,
    pub(super) tree: usize,
}

impl<R: ReadAt> Clone for TreeReader<'_, R> {
    fn clone(&self) -> Self {
        TreeReader {
            file: self.file,
            tree: self.tree,
        }
    }
}

impl<R: ReadAt> std::fmt::Debug for TreeReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeReader")
            .field("name", &self.meta().name)
            .finish()
    }
}

impl<'a, R: ReadAt> TreeReader<'a, R> {
    /// The tree's metadata.
    pub fn meta(&self) -> &'a TreeMeta {
        &self.file.meta.trees[self.tree]
    }

    /// The tree name.
    pub fn name(&self) -> &'a str {
        &self.meta().name
    }

    /// Number of entries.
    pub fn entries(&self) -> u64 {
        self.meta().entries
    }

    /// The branches, with types and sizes.
    pub fn branches(&self) -> &'a [BranchMeta] {
        &self.meta().branches
    }

    /// The branch named `name`.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`].
    pub fn branch(&self, name: &str) -> Result<BranchReader<'a, R>> {
        let branch = self
            .branches()
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| Error::NoSuchBranch {
                tree: self.name().to_owned(),
                name: name.to_owned(),
            })?;
        Ok(BranchReader {
            tree: self.clone(),
            branch,
        })
    }

    pub(super) fn check_range(&self, range: &Range<u64>) -> Result<()> {
        if range.start > range.end || range.end > self.entries() {
            return Err(Error::EntryOutOfRange {
                tree: self.name().to_owned(),
                start: range.start,
                end: range.end,
                entries: self.entries(),
            });
        }
        Ok(())
    }
}

/// One branch of a tree: bulk, range and entry reads.
pub struct BranchReader<'a, R: ReadAt = LocalFile> {
    pub(super) tree: TreeReader<'a, R>,
    pub(super) branch: usize,
}

impl<R: ReadAt> Clone for BranchReader<'_, R> {
    fn clone(&self) -> Self {
        BranchReader {
            tree: self.tree.clone(),
            branch: self.branch,
        }
    }
}

impl<R: ReadAt> std::fmt::Debug for BranchReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BranchReader")
            .field("name", &self.meta().name)
            .finish()
    }
}

impl<'a, R: ReadAt> TreeReader<'a, R> {
    /// The file the tree is in.
    pub(crate) fn file(&self) -> &'a FileReader<R> {
        self.file
    }

    /// The tree's number in the file (its records' headers carry it).
    pub(crate) fn number(&self) -> usize {
        self.tree
    }

    /// Reads the index records of the tree's branches not read yet in one read when they lie
    /// within `limit` bytes of each other (a writer puts them together at the tree's end),
    /// checks and caches each; else leaves them to be read one by one.
    pub(crate) fn load_indexes(&self, limit: u64) -> Result<()> {
        let file = self.file;
        // Indexes in parts (appended files) are left to `BranchReader::baskets`.
        let missing: Vec<usize> = (0..self.meta().branches.len())
            .filter(|&b| file.indexes[self.tree][b].get().is_none())
            .filter(|&b| {
                let extensions = &self.meta().branches[b].extensions;
                !extensions.iter().any(|e| e.key == EXT_INDEX_SEGMENTS)
            })
            .collect();
        let spans = missing.iter().map(|&b| {
            let m = &self.meta().branches[b];
            (m.index_offset, m.index_offset.saturating_add(m.index_len))
        });
        let (Some(start), Some(end)) = (
            spans.clone().map(|(a, _)| a).min(),
            spans.map(|(_, e)| e).max(),
        ) else {
            return Ok(());
        };
        if end - start > limit {
            return Ok(());
        }
        let mut buffer = Vec::new();
        let bytes = file.read_span(start, end - start, &mut buffer)?;
        for b in missing {
            let branch = BranchReader {
                tree: self.clone(),
                branch: b,
            };
            let meta = branch.meta();
            let location = branch.location(None, meta.index_offset);
            let at = (meta.index_offset - start) as usize;
            let record = &bytes[at..at + meta.index_len as usize];
            let header =
                super::check_record(record, RecordKind::BranchIndex, &location, file.verifies())?;
            if header.tree as usize != self.tree || header.branch as usize != b {
                return Err(Error::corrupt(
                    location,
                    "the BranchIndex record belongs to another branch",
                ));
            }
            let index: BasketIndex =
                postcard::from_bytes(&record[RECORD_HEADER_LEN..]).map_err(|e| {
                    Error::corrupt(
                        location.clone(),
                        format!("basket index does not decode: {e}"),
                    )
                })?;
            branch.validate_index(&index)?;
            let _ = file.indexes[self.tree][b].set(Arc::new(index));
        }
        Ok(())
    }
}

/// A basket record of a branch as its file stores it ([`BranchReader::raw_basket`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBasket {
    /// Whether it is a random-access basket (basket kind 1).
    pub rac: bool,
    /// Its entries.
    pub entries: u64,
    /// Its values (entries times the array length for fixed arrays; the sum of the entries'
    /// lengths for variable-length branches).
    pub elements: u64,
    /// The record's body: its blocks, or its RAC payload.
    pub body: Vec<u8>,
    /// The CRC32 of `body`, as the record header stores it.
    pub body_crc: u32,
}

impl<'a, R: ReadAt> BranchReader<'a, R> {
    /// The branch's metadata.
    pub fn meta(&self) -> &'a BranchMeta {
        &self.tree.meta().branches[self.branch]
    }

    /// The tree this branch belongs to.
    pub fn tree(&self) -> &TreeReader<'a, R> {
        &self.tree
    }

    pub(super) fn file(&self) -> &'a FileReader<R> {
        self.tree.file
    }

    pub(super) fn location(&self, basket: Option<usize>, offset: u64) -> Location {
        Location {
            tree: Some(self.tree.name().to_owned()),
            branch: Some(self.meta().name.clone()),
            basket,
            offset,
        }
    }

    pub(super) fn type_check<T: Scalar>(
        &self,
        requested: impl FnOnce() -> String,
        ok: bool,
    ) -> Result<()> {
        if ok && self.meta().dtype.scalar() == T::TYPE {
            return Ok(());
        }
        Err(Error::TypeMismatch {
            tree: self.tree.name().to_owned(),
            branch: self.meta().name.clone(),
            requested: requested(),
            actual: self.meta().dtype,
        })
    }

    /// The branch's basket index (read from the file on first use, then cached).
    ///
    /// # Errors
    /// I/O and corruption errors.
    pub fn baskets(&self) -> Result<Arc<BasketIndex>> {
        let cell = &self.file().indexes[self.tree.tree][self.branch];
        if let Some(index) = cell.get() {
            return Ok(index.clone());
        }
        let index = self.read_index()?;
        self.validate_index(&index)?;
        Ok(cell.get_or_init(|| Arc::new(index)).clone())
    }

    /// Whether the branch's basket index is read already: [`BranchReader::baskets`] then
    /// returns it without reading (for a reader that fetches ahead what a read will need).
    pub fn index_is_loaded(&self) -> bool {
        self.file().indexes[self.tree.tree][self.branch]
            .get()
            .is_some()
    }

    /// Reads the branch's basket index: the record at `index_offset`, after the earlier parts
    /// an append left in records of their own ([`BranchMeta::index_segments`]).
    fn read_index(&self) -> Result<BasketIndex> {
        let meta = self.meta();
        let segments = meta.index_segments().map_err(|e| {
            Error::corrupt(
                self.location(None, meta.index_offset),
                format!("the extension {EXT_INDEX_SEGMENTS} does not decode: {e}"),
            )
        })?;
        let parts = segments
            .iter()
            .map(|s| (s.offset, s.len, Some(s.baskets)))
            .chain([(meta.index_offset, meta.index_len, None)]);
        let mut baskets = Vec::new();
        for (offset, len, count) in parts {
            let (location, body) = self.read_branch_record(offset, len, RecordKind::BranchIndex)?;
            let part: BasketIndex = postcard::from_bytes(&body).map_err(|e| {
                Error::corrupt(
                    location.clone(),
                    format!("basket index does not decode: {e}"),
                )
            })?;
            if count.is_some_and(|c| c != part.baskets.len() as u64) {
                return Err(Error::corrupt(
                    location,
                    format!(
                        "this part of the basket index lists {} baskets, its entry in {EXT_INDEX_SEGMENTS} {}",
                        part.baskets.len(),
                        count.unwrap_or_default()
                    ),
                ));
            }
            baskets.extend(part.baskets);
        }
        Ok(BasketIndex { baskets })
    }

    /// Basket `i` (in entry order) as the file stores it, its record checked (header, and body
    /// when the reader verifies checksums, the default): what [`TreeWriter::copy_basket`] copies
    /// into a branch laid out as this one ([`BranchSpec::like`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`] for a basket that does not exist; the record's I/O and checksum
    /// errors, with its location.
    ///
    /// [`TreeWriter::copy_basket`]: crate::TreeWriter::copy_basket
    /// [`BranchSpec::like`]: crate::BranchSpec::like
    pub fn raw_basket(&self, i: usize) -> Result<RawBasket> {
        let index = self.baskets()?;
        let loc = index.baskets.get(i).ok_or_else(|| {
            Error::corrupt(
                self.location(None, 0),
                format!("no basket {i} (the branch has {})", index.baskets.len()),
            )
        })?;
        let file = self.file();
        let location = self.location(Some(i), loc.offset);
        let (header, body) = file.read_record(
            loc.offset,
            loc.record_len,
            RecordKind::Basket,
            &location,
            file.records_end,
        )?;
        if header.tree as usize != self.tree.tree
            || header.branch as usize != self.branch
            || header.first_entry != loc.first_entry
            || header.entries != loc.entries
        {
            return Err(Error::corrupt(
                location,
                "the basket record does not match its place in the branch index",
            ));
        }
        Ok(RawBasket {
            rac: header.basket_kind == 1,
            entries: loc.entries,
            elements: loc.elements,
            body: body.to_vec(),
            body_crc: header.body_crc,
        })
    }

    /// The body of the branch's dictionary record (RAC branches trained one), for a branch laid
    /// out as this one in another file ([`BranchSpec::like`]).
    ///
    /// # Errors
    /// The record's I/O and checksum errors.
    ///
    /// [`BranchSpec::like`]: crate::BranchSpec::like
    pub fn dictionary_bytes(&self) -> Result<Option<Vec<u8>>> {
        let meta = self.meta();
        if meta.dictionary_len == 0 {
            return Ok(None);
        }
        let (_, body) = self.read_branch_record(
            meta.dictionary_offset,
            meta.dictionary_len,
            RecordKind::Dictionary,
        )?;
        Ok(Some(body.to_vec()))
    }

    /// Reads every basket record of the branch and checks its header and body checksums and that
    /// it belongs to this branch, without decompressing anything (`evtc verify`). Returns the
    /// number of baskets checked.
    ///
    /// # Errors
    /// The first truncated, misplaced or checksum-failing record, with its location.
    pub fn check_baskets(&self) -> Result<usize> {
        let index = self.baskets()?;
        self.dictionary()?;
        let file = self.file();
        let mut buffer = Vec::new();
        for (i, b) in index.baskets.iter().enumerate() {
            let location = self.location(Some(i), b.offset);
            let (header, body) = file.read_record_into(
                b.offset,
                b.record_len,
                RecordKind::Basket,
                &location,
                file.records_end,
                std::mem::take(&mut buffer),
            )?;
            if header.tree as usize != self.tree.tree || header.branch as usize != self.branch {
                return Err(Error::corrupt(
                    location,
                    "the basket record belongs to another branch",
                ));
            }
            buffer = body.into_buffer();
        }
        Ok(index.baskets.len())
    }

    /// Reads a record that belongs to this branch (its index or dictionary) and checks that it does.
    pub(super) fn read_branch_record(
        &self,
        offset: u64,
        len: u64,
        kind: RecordKind,
    ) -> Result<(Location, Body<'a>)> {
        let file = self.file();
        let location = self.location(None, offset);
        let (header, body) = file.read_record(offset, len, kind, &location, file.records_end)?;
        if header.tree as usize != self.tree.tree || header.branch as usize != self.branch {
            return Err(Error::corrupt(
                location,
                format!("the {kind:?} record belongs to another branch"),
            ));
        }
        Ok((location, body))
    }

    /// The branch's RAC dictionary, if it has one (read on first use).
    pub(super) fn dictionary(&self) -> Result<Option<Arc<ReaderDictionary>>> {
        let meta = self.meta();
        if meta.dictionary_len == 0 {
            return Ok(None);
        }
        let cell = &self.file().dictionaries[self.tree.tree][self.branch];
        if let Some(d) = cell.get() {
            return Ok(Some(d.clone()));
        }
        let (location, bytes) = self.read_branch_record(
            meta.dictionary_offset,
            meta.dictionary_len,
            RecordKind::Dictionary,
        )?;
        let trained = Algorithm::from_id(meta.codec)
            .is_ok_and(|a| a.properties().unit_dictionary == UnitDictionary::Trained);
        let dictionary = if trained {
            ReaderDictionary::Zstd(DecoderDictionary::new(&bytes).map_err(|e| Error::Codec {
                location: location.clone(),
                source: Box::new(e),
            })?)
        } else {
            ReaderDictionary::Prefix(PrefixDictionary::new(&bytes))
        };
        Ok(Some(cell.get_or_init(|| Arc::new(dictionary)).clone()))
    }

    pub(super) fn validate_index(&self, index: &BasketIndex) -> Result<()> {
        let meta = self.meta();
        let clusters = &self.tree.meta().cluster_ends;
        let size = meta.dtype.scalar().size() as u64;
        let mut next = 0u64;
        for (i, loc) in index.baskets.iter().enumerate() {
            let location = self.location(Some(i), loc.offset);
            let bad = |reason: String| Err(Error::corrupt(location.clone(), reason));
            if loc.first_entry != next || loc.entries == 0 {
                return bad(format!(
                    "basket covers entries {}..+{} but {next} comes next",
                    loc.first_entry, loc.entries
                ));
            }
            let end = loc
                .first_entry
                .checked_add(loc.entries)
                .filter(|&e| e <= meta.entries);
            let Some(end) = end else {
                return bad("basket runs past the branch's entries".into());
            };
            let cluster = clusters.partition_point(|&c| c <= loc.first_entry);
            if clusters.get(cluster).is_none_or(|&c| end > c) {
                return bad("basket crosses a cluster boundary".into());
            }
            if loc.offset < FILE_HEADER_LEN
                || loc
                    .offset
                    .checked_add(loc.record_len)
                    .is_none_or(|e| e > self.file().records_end)
            {
                return bad("basket lies outside the records".into());
            }
            if let Some(len) = meta.dtype.fixed_len()
                && Some(loc.elements) != loc.entries.checked_mul(len as u64)
            {
                return bad(format!(
                    "{} values for {} entries of {len}",
                    loc.elements, loc.entries
                ));
            }
            // Values and per-entry counts are what a decode allocates: bound both by the record.
            let raw = loc
                .elements
                .saturating_mul(size)
                .max(loc.entries.saturating_mul(4));
            let limit = self.file().options.max_basket_bytes;
            if raw > limit {
                return Err(Error::BasketTooLarge {
                    what: location.to_string(),
                    bytes: raw,
                    limit,
                    hint: "raise the readers' basket limit, ReadOptions::max_basket_bytes, if \
                           the file is trusted",
                });
            }
            if raw
                > loc
                    .record_len
                    .saturating_mul(max_expansion(meta.codec))
                    .saturating_add(1 << 20)
            {
                return bad(format!(
                    "basket claims {raw} bytes of values in a {}-byte record",
                    loc.record_len
                ));
            }
            next = end;
        }
        if next != meta.entries {
            return Err(Error::corrupt(
                self.location(None, meta.index_offset),
                format!(
                    "baskets cover {next} entries, the branch has {}",
                    meta.entries
                ),
            ));
        }
        Ok(())
    }
}
