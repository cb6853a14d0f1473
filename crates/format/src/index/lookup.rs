//! Looking keys up in an event-index record.

use evtc_codecs::{BlockDecoder, le};

use super::{
    DIRECTORY_HEAD, DIRECTORY_ITEM, EXT_EVENT_INDEX, IndexLocation, KeyBranches, MAX_BLOCK_ROWS,
    ROW_BYTES, Row, key_bits, key_value,
};
use crate::error::{Error, Location, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::ScalarType;
use crate::reader::TreeReader;
use crate::record::{RECORD_HEADER_LEN, RecordHeader, RecordKind};

/// A tree's event index, its directory read: finds the entries of a (major, minor) key by
/// reading one or two blocks of the index record ([`TreeReader::event_index`]).
///
/// ```
/// # use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("indexed.evtc");
/// let mut file = FileWriter::create(&path, WriteOptions::default())?;
/// let mut tree = file.tree("Events", vec![
///     BranchSpec::scalar("run", ScalarType::U32),
///     BranchSpec::scalar("event", ScalarType::U64),
/// ])?;
/// tree.index_by("run", "event")?;
/// tree.fill_column(0, &[1u32, 1, 2])?;
/// tree.fill_column(1, &[30u64, 10, 10])?;
/// tree.commit()?;
/// tree.finish()?;
/// file.finish()?;
///
/// let file = FileReader::open(&path)?;
/// let events = file.tree("Events")?;
/// let index = events.event_index()?.expect("the tree has an index");
/// assert_eq!(index.entry_of(1, 10)?, 1);
/// assert_eq!(index.entries_of(2, 10)?, [2]);
/// assert!(index.entries_of(3, 10)?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EventIndexReader<'a, R: ReadAt = LocalFile> {
    tree: TreeReader<'a, R>,
    location: IndexLocation,
    types: (ScalarType, ScalarType),
    block_rows: u64,
    /// Per block: its first row's keys, and its offset and length in the record's body.
    blocks: Vec<DirectoryItem>,
}

/// The block of the index decoded last, kept for the next key looked up.
#[derive(Default)]
struct Decoded {
    /// Its number; `None` before the first, or after a read that failed.
    block: Option<usize>,
    rows: Vec<Row>,
}

#[derive(Debug, Clone, Copy)]
struct DirectoryItem {
    first: (u64, u64),
    offset: u64,
    len: u64,
}

impl<'a, R: ReadAt> TreeReader<'a, R> {
    /// The tree's event index, if it has one: its key branches and a directory to look keys up
    /// in (the record's directory is read and checked here, the blocks when a key is looked up).
    ///
    /// # Errors
    /// [`Error::Corrupt`] (or a checksum or I/O error) if the index's extension, record header or
    /// directory is damaged or disagrees with the tree.
    pub fn event_index(&self) -> Result<Option<EventIndexReader<'a, R>>> {
        let Some(ext) = self
            .meta()
            .extensions
            .iter()
            .find(|e| e.key == EXT_EVENT_INDEX)
        else {
            return Ok(None);
        };
        let at = |offset| Location {
            tree: Some(self.name().to_owned()),
            branch: None,
            basket: None,
            offset,
        };
        let location: IndexLocation = postcard::from_bytes(&ext.value).map_err(|e| {
            Error::corrupt(
                at(0),
                format!("the {EXT_EVENT_INDEX} extension does not decode: {e}"),
            )
        })?;
        let keys = KeyBranches::find(
            self.name(),
            self.branches(),
            &location.major,
            &location.minor,
        )
        .map_err(|e| {
            Error::corrupt(
                at(location.offset),
                format!("the event index's keys do not fit the tree: {e}"),
            )
        })?;
        if location.rows != self.entries() {
            return Err(Error::corrupt(
                at(location.offset),
                format!(
                    "the event index has {} rows, the tree {} entries",
                    location.rows,
                    self.entries()
                ),
            ));
        }
        let mut index = EventIndexReader {
            tree: self.clone(),
            types: (keys.major.2, keys.minor.2),
            block_rows: 0,
            blocks: Vec::new(),
            location,
        };
        index.read_directory()?;
        Ok(Some(index))
    }
}

impl<R: ReadAt> EventIndexReader<'_, R> {
    /// The major key's branch.
    pub fn major(&self) -> &str {
        &self.location.major
    }

    /// The minor key's branch.
    pub fn minor(&self) -> &str {
        &self.location.minor
    }

    /// Rows: one per entry of the tree.
    pub fn rows(&self) -> u64 {
        self.location.rows
    }

    /// The entries whose keys are `(major, minor)`, in entry order; empty when none is.
    ///
    /// # Errors
    /// [`Error::Corrupt`] (or a checksum or I/O error) if a block read is damaged.
    pub fn entries_of(&self, major: i128, minor: i128) -> Result<Vec<u64>> {
        match self.bits(major, minor) {
            Some(key) => self.entries_in(key, &mut Decoded::default()),
            None => Ok(Vec::new()),
        }
    }

    /// The entry whose keys are `(major, minor)`.
    ///
    /// # Errors
    /// [`Error::EventNotFound`] if no entry has them, [`Error::DuplicateEvent`] if several do;
    /// as for [`EventIndexReader::entries_of`].
    pub fn entry_of(&self, major: i128, minor: i128) -> Result<u64> {
        let entries = self.entries_of(major, minor)?;
        self.single(major, minor, entries)
    }

    /// The entries of each `(major, minor)` key, in the order given (each list in entry order,
    /// empty for a key no entry has): as [`EventIndexReader::entries_of`] key by key, but the
    /// keys are looked up in key order, so that each block of the index holding some of them
    /// is read and decoded once (a list of events to pick from a file costs a pass over the
    /// blocks it touches, not a block per event).
    ///
    /// # Errors
    /// As for [`EventIndexReader::entries_of`].
    pub fn entries_of_each(&self, keys: &[(i128, i128)]) -> Result<Vec<Vec<u64>>> {
        let bits: Vec<Option<(u64, u64)>> = keys.iter().map(|&(a, b)| self.bits(a, b)).collect();
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_unstable_by_key(|&i| bits[i]);
        let mut found = vec![Vec::new(); keys.len()];
        let mut decoded = Decoded::default();
        for i in order {
            if let Some(key) = bits[i] {
                found[i] = self.entries_in(key, &mut decoded)?;
            }
        }
        Ok(found)
    }

    /// The entry of each `(major, minor)` key, in the order given, looked up as
    /// [`EventIndexReader::entries_of_each`] does.
    ///
    /// # Errors
    /// As for [`EventIndexReader::entry_of`], for the first key given (in the caller's order)
    /// that no entry or several entries hold.
    pub fn entry_of_each(&self, keys: &[(i128, i128)]) -> Result<Vec<u64>> {
        (keys.iter().zip(self.entries_of_each(keys)?))
            .map(|(&(major, minor), entries)| self.single(major, minor, entries))
            .collect()
    }

    /// A key's order-preserving form, or `None` when the key branches' types cannot hold it.
    fn bits(&self, major: i128, minor: i128) -> Option<(u64, u64)> {
        Some((
            key_bits(self.types.0, major)?,
            key_bits(self.types.1, minor)?,
        ))
    }

    /// `entries` of key `(major, minor)` when they are one entry, else the error saying so.
    fn single(&self, major: i128, minor: i128, entries: Vec<u64>) -> Result<u64> {
        match entries[..] {
            [entry] => Ok(entry),
            [] => Err(Error::EventNotFound {
                tree: self.tree.name().to_owned(),
                key: self.describe(major, minor),
            }),
            _ => Err(Error::DuplicateEvent {
                tree: self.tree.name().to_owned(),
                key: self.describe(major, minor),
                entries,
            }),
        }
    }

    /// The entries of the key with order-preserving form `key`, in entry order, reading the
    /// blocks that may hold it unless `decoded` holds one already.
    fn entries_in(&self, key: (u64, u64), decoded: &mut Decoded) -> Result<Vec<u64>> {
        // The first row with this key is in the last block starting before it (or the first).
        let first = self
            .blocks
            .partition_point(|d| d.first < key)
            .saturating_sub(1);
        let mut entries = Vec::new();
        for block in first..self.blocks.len() {
            if self.blocks[block].first > key {
                break;
            }
            if decoded.block != Some(block) {
                decoded.block = None;
                self.read_block(block, &mut decoded.rows)?;
                decoded.block = Some(block);
            }
            let rows = &decoded.rows;
            let start = rows.partition_point(|r| (r.0, r.1) < key);
            entries.extend(
                rows[start..]
                    .iter()
                    .take_while(|r| (r.0, r.1) == key)
                    .map(|r| r.2),
            );
            // The key's rows go on in the next block only if they reach this one's end.
            if rows.last().is_some_and(|r| (r.0, r.1) > key) {
                break;
            }
        }
        Ok(entries)
    }

    /// Every row, in key order, as (major, minor, entry).
    ///
    /// # Errors
    /// As for [`EventIndexReader::entries_of`]; [`Error::Corrupt`] if the rows are not one per
    /// entry.
    pub fn rows_in_order(&self) -> Result<Vec<(i128, i128, u64)>> {
        Ok(self
            .all_rows()?
            .into_iter()
            .map(|(a, b, e)| (key_value(self.types.0, a), key_value(self.types.1, b), e))
            .collect())
    }

    /// The keys of each entry (their order-preserving forms), rebuilt from the rows: for a writer
    /// copying the entries into another file.
    pub(crate) fn keys_by_entry(&self) -> Result<(Vec<u64>, Vec<u64>)> {
        // Sized by the rows decoded (and checked) first, not by the number the file states.
        let rows = self.all_rows()?;
        let mut majors = vec![0u64; rows.len()];
        let mut minors = vec![0u64; rows.len()];
        for (a, b, e) in rows {
            // `all_rows` checked that the entries are those of the rows, each once.
            majors[e as usize] = a;
            minors[e as usize] = b;
        }
        Ok((majors, minors))
    }

    /// The names of the keys, as `run`, `event`.
    pub(crate) fn key_names(&self) -> (&str, &str) {
        (&self.location.major, &self.location.minor)
    }

    /// "(run, event) = (1, 5)".
    fn describe(&self, major: i128, minor: i128) -> String {
        format!(
            "({}, {}) = ({major}, {minor})",
            self.location.major, self.location.minor
        )
    }

    /// Every row, checked to name each entry once. Memory grows with the blocks decoded, each
    /// checked, never ahead of them by a number the file states.
    fn all_rows(&self) -> Result<Vec<Row>> {
        let mut all = Vec::new();
        let mut rows = Vec::new();
        for block in 0..self.blocks.len() {
            self.read_block(block, &mut rows)?;
            all.extend_from_slice(&rows);
        }
        let mut seen = vec![false; all.len()];
        for &(_, _, e) in &all {
            let Some(seen) = seen.get_mut(e as usize) else {
                return Err(self.corrupt(
                    self.location.offset,
                    format!("the event index names entry {e} of {} rows", all.len()),
                ));
            };
            if std::mem::replace(seen, true) {
                return Err(self.corrupt(
                    self.location.offset,
                    format!("the event index names entry {e} twice"),
                ));
            }
        }
        Ok(all)
    }

    fn corrupt(&self, offset: u64, reason: impl Into<String>) -> Error {
        Error::corrupt(
            Location {
                tree: Some(self.tree.name().to_owned()),
                branch: None,
                basket: None,
                offset,
            },
            format!("event index: {}", reason.into()),
        )
    }

    /// Reads and checks the record's header and directory.
    fn read_directory(&mut self) -> Result<()> {
        let IndexLocation { offset, len, .. } = self.location;
        let head_len = (RECORD_HEADER_LEN + DIRECTORY_HEAD) as u64;
        let file = self.tree.file();
        if len < head_len
            || offset
                .checked_add(len)
                .is_none_or(|end| end > file.records_end())
        {
            return Err(self.corrupt(
                offset,
                format!(
                    "a record of {len} bytes, which does not lie within the file's {} bytes of \
                     records",
                    file.records_end()
                ),
            ));
        }
        let mut buffer = Vec::new();
        let head = file.read_span(offset, head_len, &mut buffer)?;
        let header: &[u8; RECORD_HEADER_LEN] = head[..RECORD_HEADER_LEN]
            .try_into()
            .expect("the span holds a record header");
        let header = RecordHeader::decode(header, &Location::at(offset))?;
        if header.kind != RecordKind::EventIndex
            || header.tree as usize != self.tree.number()
            || header.body_len != len - RECORD_HEADER_LEN as u64
            || header.entries != self.location.rows
        {
            return Err(self.corrupt(
                offset,
                format!(
                    "the record there is a {:?} record of tree {} with {} rows and a body of {} \
                     bytes, not this tree's index of {} rows and {} bytes",
                    header.kind,
                    header.tree,
                    header.entries,
                    header.body_len,
                    self.location.rows,
                    len - RECORD_HEADER_LEN as u64
                ),
            ));
        }
        let body = &head[RECORD_HEADER_LEN..];
        let rows = le::u64_at(body, 0);
        let block_rows = le::u32_at(body, 8);
        let blocks = le::u32_at(body, 12);
        let body_len = header.body_len;
        if rows != self.location.rows
            || !(1..=MAX_BLOCK_ROWS).contains(&block_rows)
            || u64::from(blocks) != rows.div_ceil(u64::from(block_rows))
        {
            return Err(self.corrupt(
                offset,
                format!(
                    "the directory's head says {rows} rows in {blocks} blocks of {block_rows} \
                     rows, for an index of {} rows",
                    self.location.rows
                ),
            ));
        }
        let directory_len = DIRECTORY_HEAD as u64 + DIRECTORY_ITEM as u64 * u64::from(blocks) + 4;
        // No codec expands its input more than 2^18 times (LZMA's bound, as for baskets): more
        // rows than that makes of the body are a lie.
        let plausible = body_len.saturating_mul(1 << 18) / ROW_BYTES as u64;
        if directory_len > body_len || rows > plausible {
            return Err(self.corrupt(
                offset,
                format!("a directory of {directory_len} bytes in a body of {body_len} bytes"),
            ));
        }
        let body_at = offset + RECORD_HEADER_LEN as u64;
        let directory = file.read_span(body_at, directory_len, &mut buffer)?;
        let (items, crc) = directory.split_at(directory.len() - 4);
        let stored = le::u32_at(crc, 0);
        let computed = evtc_codecs::crc32(items);
        if stored != computed {
            return Err(Error::Checksum {
                what: "event index directory",
                location: Location::at(body_at),
                stored,
                computed,
            });
        }
        let mut next = directory_len;
        let mut previous = (0, 0);
        let mut parsed = Vec::with_capacity(blocks as usize);
        for item in items[DIRECTORY_HEAD..].chunks_exact(DIRECTORY_ITEM) {
            let d = DirectoryItem {
                first: (le::u64_at(item, 0), le::u64_at(item, 8)),
                offset: le::u64_at(item, 16),
                len: le::u64_at(item, 24),
            };
            if d.offset != next || d.len > body_len - d.offset || d.first < previous {
                return Err(self.corrupt(
                    body_at + d.offset,
                    format!(
                        "block {} at {}..+{} does not follow the previous one (which ends at \
                         {next}) within the body of {body_len} bytes in key order",
                        parsed.len(),
                        d.offset,
                        d.len
                    ),
                ));
            }
            next = d.offset + d.len;
            previous = d.first;
            parsed.push(d);
        }
        if next != body_len {
            return Err(self.corrupt(
                body_at,
                format!("the blocks end at {next}, the body at {body_len}"),
            ));
        }
        self.block_rows = u64::from(block_rows);
        self.blocks = parsed;
        Ok(())
    }

    /// Reads block `block` into `rows`, checking it.
    fn read_block(&self, block: usize, rows: &mut Vec<Row>) -> Result<()> {
        let d = self.blocks[block];
        let first_row = block as u64 * self.block_rows;
        let n = self.block_rows.min(self.location.rows - first_row) as usize;
        let at = self.location.offset + RECORD_HEADER_LEN as u64 + d.offset;
        let mut buffer = Vec::new();
        let bytes = self.tree.file().read_span(at, d.len, &mut buffer)?;
        let mut raw = Vec::new();
        let header = BlockDecoder::new()
            .max_uncompressed_len((n * ROW_BYTES) as u64)
            .decode(bytes, &mut raw)
            .map_err(|e| self.corrupt(at, format!("block {block}: {e}")))?;
        if raw.len() != n * ROW_BYTES || header.block_len() != d.len {
            return Err(self.corrupt(
                at,
                format!(
                    "block {block} holds {} bytes in a block of {} bytes, not {n} rows in {}",
                    raw.len(),
                    header.block_len(),
                    d.len
                ),
            ));
        }
        rows.clear();
        rows.extend((0..n).map(|i| {
            (
                le::u64_at(&raw, 8 * i),
                le::u64_at(&raw, 8 * (n + i)),
                le::u64_at(&raw, 8 * (2 * n + i)),
            )
        }));
        let entries = self.location.rows;
        let sorted = rows.windows(2).all(|w| w[0] < w[1]);
        if rows.first().map(|r| (r.0, r.1)) != Some(d.first)
            || !sorted
            || rows.iter().any(|r| r.2 >= entries)
        {
            return Err(self.corrupt(
                at,
                format!(
                    "block {block}'s rows do not start at its directory key, are not in key \
                     order or name entries past the tree's {entries}"
                ),
            ));
        }
        Ok(())
    }
}
