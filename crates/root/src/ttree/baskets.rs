//! Reading TTree columns: baskets decompressed and decoded straight into typed vectors
//! ([`ColumnData`]).

use std::ops::Range;

use super::branch::BasketFields;
use super::column::{BranchColumn, Layout, ListHeader};
use super::decode::{Loaded, integers, tstring};
use crate::column::Column;
use crate::compression::decompress;
use crate::cursor::Cursor;
use crate::data::ColumnData;
use crate::error::{Error, Result};
use crate::file::{RootFile, read_key};
use crate::source::ReadAt;
use crate::types::ColumnKind;

/// Reads one TTree column basket by basket, keeping the last decoded basket so consecutive
/// ranges decompress each basket once.
#[derive(Debug)]
pub(crate) struct BasketReader<'f, R: ReadAt = std::fs::File> {
    file: &'f RootFile<R>,
    column: Column,
    branch: BranchColumn,
    /// The column whose values are each entry's lengths, where the branch needs one.
    counter: Option<Column>,
    record: Vec<u8>,
    basket: Vec<u8>,
    /// Where the loaded basket's data starts in `basket` (after the key, for uncompressed
    /// baskets read in place).
    start: usize,
    offsets: Vec<u32>,
    /// Entries in the loaded basket (more than its reference reads when it is read from the
    /// middle: [`BasketRef::skip`](crate::ttree::column::BasketRef)).
    held: usize,
    cached: Option<usize>,
}

impl<'f, R: ReadAt> BasketReader<'f, R> {
    /// A reader of `column`, a column of branch `branch` of a tree of `file`.
    pub(crate) fn new(
        file: &'f RootFile<R>,
        column: &Column,
        branch: &BranchColumn,
        counter: Option<&Column>,
    ) -> Self {
        BasketReader {
            file,
            column: column.clone(),
            branch: branch.clone(),
            counter: counter.cloned(),
            record: Vec::new(),
            basket: Vec::new(),
            start: 0,
            offsets: Vec::new(),
            held: 0,
            cached: None,
        }
    }

    /// Drops the cached basket (the next read decompresses again), keeping the buffers.
    pub(crate) fn forget(&mut self) {
        self.cached = None;
    }

    /// Appends the entries `range` to `out`, shaped for the column's kind.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for entries past the column's baskets; [`Error::Corrupt`] and
    /// [`Error::Decompress`] naming the branch, basket and offset for bad baskets.
    pub(crate) fn read(&mut self, range: Range<u64>, out: &mut ColumnData) -> Result<()> {
        let baskets = self.branch.baskets.clone();
        let total = baskets.last().map_or(0, |b| b.first_entry + b.entries);
        if range.start > range.end || range.end > total {
            return Err(Error::OutOfRange {
                branch: self.column.name.clone(),
                start: range.start,
                end: range.end,
                entries: total,
            });
        }
        let mut i = baskets.partition_point(|b| b.first_entry + b.entries <= range.start);
        while i < baskets.len() && baskets[i].first_entry < range.end {
            let b = &baskets[i];
            // Positions in the basket, past the entries it holds that are read from another.
            let lo = range.start.max(b.first_entry) - b.first_entry + b.skip;
            let hi = range.end.min(b.first_entry + b.entries) - b.first_entry + b.skip;
            if lo < hi {
                self.load(i)?;
                self.decode(i, lo as usize..hi as usize, out)?;
            }
            i += 1;
        }
        Ok(())
    }

    /// For a column read by a plan of the objects' layout ([`Layout::ObjectVector`],
    /// [`Layout::Interpreted`]), or a `std::bitset` read as a vector of bools: why the entries of
    /// its first basket do not read as planned (a vector written member-wise, a stream of another
    /// shape), if they do not. `None` when they
    /// read, when the column has no entry, or when the basket cannot be read (that error comes
    /// when reading).
    pub(crate) fn first_basket_misfit(&mut self) -> Option<String> {
        let first = self.branch.baskets.iter().position(|b| b.entries > 0)?;
        self.load(first).ok()?;
        let b = &self.branch.baskets[first];
        let span = usize::try_from(b.skip).ok()?..usize::try_from(b.skip + b.entries).ok()?;
        let mut out = ColumnData::new(self.column.kind);
        match self.decode(first, span, &mut out) {
            Err(Error::Corrupt { detail, .. }) => Some(detail),
            _ => None,
        }
    }

    /// For a column whose baskets have no entry offsets and whose entries are found by reading
    /// them (a `char*` leaf written with `fEntryOffsetLen` 0): why some basket does not split
    /// into its entries (an empty string left no bytes), naming the basket; `None` when every
    /// basket splits, or when a basket cannot be read at all (that error comes when reading).
    pub(crate) fn unsplittable_basket(&mut self) -> Option<String> {
        (0..self.branch.baskets.len()).find_map(|i| match self.load(i) {
            Err(Error::Corrupt { what, detail, .. }) => Some(format!("{what}: {detail}")),
            _ => None,
        })
    }

    /// For the arrays in a split collection's objects: the values of their length member
    /// `lengths` (a sibling column, one integer per object) for entries `range` of basket `i`,
    /// and each entry's bounds in them.
    fn object_lengths(
        &self,
        lengths: &Column,
        i: usize,
        range: &Range<usize>,
    ) -> Result<(Vec<i64>, Vec<u64>)> {
        // Position `p` of the basket is entry `first_entry + p - skip` of the tree.
        let b = &self.branch.baskets[i];
        let first = b.first_entry - b.skip;
        let counts = self.file.read_column(
            lengths,
            first + range.start as u64..first + range.end as u64,
        )?;
        let values = integers(&counts.values)
            .filter(|_| {
                matches!(lengths.kind, ColumnKind::Jagged(_))
                    && counts.offsets.len() == range.len() + 1
            })
            .ok_or_else(|| {
                Error::corrupt(
                    self.what(i),
                    0,
                    format!(
                        "its length member {:?} is not one integer per object",
                        lengths.name
                    ),
                )
            })?;
        Ok((values, counts.offsets))
    }

    fn what(&self, i: usize) -> String {
        let b = &self.branch.baskets[i];
        format!(
            "basket {i} of branch {:?} (key at byte {})",
            self.column.name, b.seek
        )
    }

    /// Decompresses basket `i` into `self.basket` and its entry offsets into `self.offsets`.
    fn load(&mut self, i: usize) -> Result<()> {
        if self.cached == Some(i) {
            return Ok(());
        }
        self.cached = None;
        let b = self.branch.baskets[i].clone();
        let what = self.what(i);
        self.offsets.clear();
        if let Some(e) = &b.embedded {
            self.basket.clear();
            self.basket.extend_from_slice(&e.data);
            self.start = 0;
            if let Some(offsets) = &e.offsets {
                self.offsets.extend_from_slice(offsets);
            }
            self.held = usize::try_from(e.entries).unwrap_or(usize::MAX);
            self.cached = Some(i);
            return Ok(());
        }
        self.file
            .read_into(b.seek, u64::from(b.bytes), &mut self.record, &what)?;
        let mut c = Cursor::new(&self.record, b.seek, &what);
        let key = read_key(&mut c)?;
        let key_len = usize::from(key.key_len);
        if key_len < 19 || key.nbytes != b.bytes {
            return Err(c.error(format!(
                "the key says {} bytes with a {key_len}-byte header, the branch says {} bytes",
                key.nbytes, b.bytes
            )));
        }
        c.seek(key_len - 19)?;
        let fields = BasketFields::read(&mut c)?;
        // The basket holds at least the entries read from it; more when a later basket
        // starts before it ends (ROOT then reads those entries from the later one).
        if (fields.entries as u64) < b.skip + b.entries {
            return Err(c.error(format!(
                "the basket holds {} entries, the branch reads positions {}..{} of it",
                fields.entries,
                b.skip,
                b.skip + b.entries
            )));
        }
        self.held = fields.entries;
        let limit = self.file.max_basket_bytes();
        if u64::from(key.obj_len) > limit {
            return Err(Error::BasketTooLarge {
                what,
                bytes: key.obj_len.into(),
                limit,
            });
        }
        let obj_len = key.obj_len as usize;
        let compressed = &self.record[key_len..];
        if compressed.len() == obj_len {
            // Uncompressed: decode in place, after the key.
            std::mem::swap(&mut self.basket, &mut self.record);
            self.start = key_len;
        } else {
            self.start = 0;
            // The thread's decompressor: one reader per column, each with a zstd context of
            // its own, would cost more than the small baskets of most branches.
            evtc_codecs::with_decompressor(|dec| {
                decompress(dec, compressed, obj_len, &mut self.basket, &|| what.clone())
            })?;
        }
        let bad = |detail: String| Error::corrupt(&what, b.seek, detail);
        let border = fields.border(key_len).map_err(bad)?;
        if border > obj_len {
            return Err(bad(format!(
                "fLast points {border} bytes into a {obj_len}-byte basket"
            )));
        }
        // TBasket::ReadBasketBuffers: entry offsets follow the data when the branch's
        // fEntryOffsetLen is non-zero (and there is room for them: else ROOT "repairs" the
        // basket as one without offsets).
        if self.branch.entry_offsets && border < obj_len {
            let mut c = Cursor::new(&self.basket[self.start + border..], 0, &what);
            let _count = c.i32()?;
            if fields.entries > c.remaining() / 4 {
                return Err(bad(format!(
                    "{} entry offsets cannot fit after the data",
                    fields.entries
                )));
            }
            // One pass: big-endian, relative to the key, inside the data, increasing.
            let raw = c.take(fields.entries * 4)?;
            let mut previous = 0u32;
            for chunk in raw.chunks_exact(4) {
                let value = i32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                let o = i64::from(value) - key_len as i64;
                if o < i64::from(previous) || o > border as i64 {
                    return Err(bad(format!(
                        "entry offset {value} is outside the basket or not increasing"
                    )));
                }
                previous = o as u32;
                self.offsets.push(previous);
            }
            self.offsets.push(border as u32);
        }
        self.basket.truncate(self.start + border);
        let border = self.strip_custom_headers(fields.entries, border);
        if let Layout::Fixed { stride, .. } = self.branch.layout {
            // Every entry of a fixed layout has exactly `stride` bytes: a stream that differs
            // (an unsplit object with a variable part) is refused, never read at wrong offsets.
            let entries = self.held;
            if let Some(e) = self
                .offsets
                .windows(2)
                .position(|w| (w[1] - w[0]) as usize != stride)
            {
                return Err(bad(format!(
                    "entry {e} has {} bytes, where every entry of this branch has {stride}",
                    self.offsets[e + 1] - self.offsets[e]
                )));
            }
            if entries.checked_mul(stride) != Some(border) {
                return Err(bad(format!(
                    "{entries} entries of {stride} bytes in a basket of {border} bytes"
                )));
            }
            if let Some(prefix) = &self.branch.entry_prefix {
                let data = &self.basket[self.start..];
                if let Some(e) = (0..entries).find(|e| !data[e * stride..].starts_with(prefix)) {
                    return Err(bad(format!(
                        "entry {e} holds an object of another class than the branch's"
                    )));
                }
            }
        } else if self.offsets.is_empty() {
            self.rebuild_offsets(i)?;
        }
        self.cached = Some(i);
        Ok(())
    }

    /// For an object of a class with a custom streamer
    /// ([`BranchColumn::custom_header`](crate::ttree::column::BranchColumn::custom_header)): if every
    /// entry of the loaded basket is that header and the members, moves the members together
    /// (the basket then reads as one without headers). Returns the data's new length.
    fn strip_custom_headers(&mut self, entries: usize, border: usize) -> usize {
        let (Some(header), Layout::Fixed { stride, .. }) =
            (&self.branch.custom_header, self.branch.layout)
        else {
            return border;
        };
        let whole = stride + header.len();
        let data = &self.basket[self.start..self.start + border];
        if entries.checked_mul(whole) != Some(border)
            || !data.chunks_exact(whole).all(|e| e.starts_with(header))
        {
            return border;
        }
        for e in 0..entries {
            let from = self.start + e * whole + header.len();
            self.basket
                .copy_within(from..from + stride, self.start + e * stride);
        }
        let border = entries * stride;
        self.basket.truncate(self.start + border);
        if !self.offsets.is_empty() {
            self.offsets = (0..=entries).map(|e| (e * stride) as u32).collect();
        }
        border
    }

    /// Entry offsets of a variable-length basket written without them (`fEntryOffsetLen` 0), as
    /// ROOT finds its entries: strings by their length prefixes, vectors by their byte counts,
    /// `x[n]` arrays by the counter's values.
    fn rebuild_offsets(&mut self, i: usize) -> Result<()> {
        let b = &self.branch.baskets[i];
        let entries = self.held;
        let what = self.what(i);
        let bad = |detail: String| Error::corrupt(&what, b.seek, detail);
        let data = &self.basket[self.start..];
        let mut at = 0usize;
        self.offsets.clear();
        self.offsets.push(0);
        match self.branch.layout {
            Layout::Fixed { .. } => return Ok(()),
            Layout::FlaggedArray { .. }
            | Layout::ArraysInCollection { .. }
            | Layout::PointerArraysInCollection { .. }
            | Layout::LeafRow { .. } => {
                return Err(bad(
                    "the basket has no entry offsets, without which the arrays of varying \
                     length cannot be told apart by entry"
                        .into(),
                ));
            }
            Layout::Interpreted { .. } => {
                return Err(bad(
                    "the basket has no entry offsets, without which objects of varying size \
                     cannot be told apart by entry"
                        .into(),
                ));
            }
            Layout::StringList {
                header: ListHeader::None,
            } => {
                return Err(bad(
                    "the basket has no entry offsets, without which the strings of a \
                     collection's objects cannot be told apart by entry"
                        .into(),
                ));
            }
            Layout::CharStar => {
                let mut c = Cursor::new(data, 0, "");
                for e in 0..entries {
                    c.char_star()
                        .map_err(|_| bad(format!("entry {e}: a string runs past the basket")))?;
                    self.offsets.push(c.pos() as u32);
                }
            }
            Layout::String { header: false } => {
                // ROOT's TLeafC (6.40 included) writes nothing at all for an empty char*
                // string, a length byte for any other: the basket's strings are its entries
                // only if there are as many as entries (then none was empty; a writer that
                // wrote a zero length for an empty string gives as many too), and they fill it.
                for e in 0..entries {
                    if at == data.len() {
                        return Err(bad(format!(
                            "the basket has no entry offsets and its strings end at entry {e} \
                             of {entries}: a char* branch writes nothing for an empty string, \
                             so its entries cannot be told apart"
                        )));
                    }
                    let (_, used) = tstring(&data[at..])
                        .ok_or_else(|| bad(format!("entry {e}: a string runs past the basket")))?;
                    at += used;
                    self.offsets.push(at as u32);
                }
                if at != data.len() {
                    return Err(bad(format!(
                        "the basket has no entry offsets and {} bytes after the strings of its \
                         {entries} entries",
                        data.len() - at
                    )));
                }
            }
            // Objects with a byte count: STL vectors, `std::string` members.
            Layout::Vector { .. }
            | Layout::VectorVector { .. }
            | Layout::ObjectVector { .. }
            | Layout::String { header: true }
            | Layout::StringList {
                header: ListHeader::Vector,
            } => {
                for e in 0..entries {
                    let bcnt = data
                        .get(at..at + 4)
                        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                        .filter(|c| c & 0x4000_0000 != 0)
                        .ok_or_else(|| bad(format!("entry {e}: no vector byte count")))?;
                    at = at
                        .checked_add(4 + (bcnt & !0x4000_0000) as usize)
                        .filter(|&end| end <= data.len())
                        .ok_or_else(|| bad(format!("entry {e}: a vector runs past the basket")))?;
                    self.offsets.push(at as u32);
                }
            }
            Layout::Jagged { stored } => {
                let Some(counter) = self.counter.as_ref() else {
                    return Err(bad(
                        "the basket has no entry offsets and the branch no counter to find \
                         its entries by"
                            .into(),
                    ));
                };
                if b.skip != 0 || entries as u64 != b.entries {
                    return Err(bad(
                        "the basket has no entry offsets and is read in part (a later basket \
                         starts before it ends): its entries' sizes, in the counter branch, are \
                         those of other baskets' entries"
                            .into(),
                    ));
                }
                let counts = self
                    .file
                    .read_column(counter, b.first_entry..b.first_entry + b.entries)?;
                let Some(counts) = integers(&counts.values) else {
                    return Err(bad(format!(
                        "counter {:?} is not an integer branch",
                        counter.name
                    )));
                };
                for (e, n) in counts.into_iter().enumerate() {
                    at = usize::try_from(n)
                        .ok()
                        .and_then(|n| n.checked_mul(stored.size()))
                        .and_then(|bytes| at.checked_add(bytes))
                        .filter(|&end| end <= data.len())
                        .ok_or_else(|| {
                            bad(format!("entry {e}: counter {n} runs past the basket"))
                        })?;
                    self.offsets.push(at as u32);
                }
            }
        }
        Ok(())
    }

    /// Decodes entries `range` (relative to basket `i`) of the loaded basket into `out`.
    fn decode(&self, i: usize, range: Range<usize>, out: &mut ColumnData) -> Result<()> {
        let column = &self.column;
        let basket = Loaded {
            column,
            branch: &self.branch,
            index: i,
            held: self.held,
            data: &self.basket[self.start..],
            offsets: &self.offsets,
        };
        // The arrays of a split collection's objects: each entry's lengths, from their member's
        // branch.
        let lengths = match (self.branch.layout, self.counter.as_ref()) {
            (Layout::Interpreted { .. } | Layout::PointerArraysInCollection { .. }, Some(c)) => {
                Some(self.object_lengths(c, i, &range)?)
            }
            _ => None,
        };
        basket.decode(range, lengths.as_ref(), out)
    }
}
