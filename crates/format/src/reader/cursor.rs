//! Entry-by-entry reads: [`BranchCursor`], with its basket and RAC-unit caches.

use std::ops::Range;
use std::sync::Arc;

use evtc_rac::{RacDecoder, SeekTable};

use super::{
    BlockError, BranchReader, ReaderDictionary, check_entry_sizes_flag, decode_block_into,
    push_count_sums, push_running_sums,
};
use crate::error::{Error, Result};
use crate::io::ReadAt;
use crate::meta::{BasketIndex, BasketLoc, Boundaries, DataType, ScalarType};
use crate::record::{RECORD_HEADER_LEN, RecordHeader, RecordKind};
use crate::types::Scalar;
use evtc_codecs::le;

impl<'a, R: ReadAt> BranchReader<'a, R> {
    /// A cursor for entry-by-entry reads of this branch (ROOT's `GetEntry`), which keeps the last
    /// decoded basket so that sequential reads decompress each basket once.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if the branch does not hold `T`.
    pub fn cursor<T: Scalar>(&self) -> Result<BranchCursor<'a, R, T>> {
        self.type_check::<T>(|| T::TYPE.to_string(), true)?;
        Ok(BranchCursor {
            held: 0..0,
            fixed: self.meta().dtype.fixed_len(),
            values: Vec::new(),
            offsets: Vec::new(),
            state: Box::new(CursorState {
                branch: self.clone(),
                index: None,
                basket: None,
                rac: None,
                decoder: RacDecoder::new(),
                scratch: Vec::new(),
                stored: Vec::new(),
                counter: None,
                offsets_base: 0,
            }),
        })
    }
}

/// Entry-by-entry reads of one branch with a one-basket cache.
///
/// In a random-access (RAC) basket a read decodes the one unit that holds the entry. The seek
/// tables of RAC baskets are kept by the file and shared by all its cursors, so a cursor made for
/// a single read costs the read of one unit once another cursor has visited the basket.
///
/// ```no_run
/// # use evtc_format::FileReader;
/// let file = FileReader::open("events.evtc")?;
/// let tree = file.tree("Events")?;
/// let mut pt = tree.branch("Muon_pt")?.cursor::<f32>()?;
/// for entry in 0..tree.entries() {
///     let muons: &[f32] = pt.get(entry)?;
///     # let _ = muons;
/// }
/// # Ok::<(), evtc_format::Error>(())
/// ```
pub struct BranchCursor<'a, R: ReadAt, T> {
    // What a read inside the held basket touches comes first, the rest is boxed: a loop over many
    // cursors keeps each one's hot part in one or two cache lines.
    /// The entries of the ordinary (not RAC) basket whose values `values` holds; empty when none.
    /// An entry inside is read with no other work.
    pub(super) held: Range<u64>,
    /// Values per entry of a fixed-size branch.
    pub(super) fixed: Option<usize>,
    pub(super) values: Vec<T>,
    /// Offsets into `values` of the cached basket's entries (`entries + 1`); for RAC baskets,
    /// element offsets of the basket's entries.
    pub(super) offsets: Vec<u64>,
    pub(super) state: Box<CursorState<'a, R>>,
}

/// What a [`BranchCursor`] keeps besides the held values: the branch, its basket index, the RAC
/// state and caches.
pub(super) struct CursorState<'a, R: ReadAt> {
    pub(super) branch: BranchReader<'a, R>,
    pub(super) index: Option<Arc<BasketIndex>>,
    pub(super) basket: Option<usize>,
    /// The seek table of the current RAC basket and the unit held in `values`.
    pub(super) rac: Option<RacState>,
    pub(super) decoder: RacDecoder,
    pub(super) scratch: Vec<u8>,
    /// The stored bytes of the last unit read.
    pub(super) stored: Vec<u8>,
    /// A cursor over the counter branch, for boundaries that come from it.
    pub(super) counter: Option<Box<CountCursor<'a, R>>>,
    /// The basket-local entry that `offsets[0]` belongs to (RAC branches with a counter keep the
    /// offsets of one unit's entries only).
    pub(super) offsets_base: u64,
}

/// Reads a counter branch's values as running entry offsets, for the cursor of a jagged branch
/// it counts.
///
/// A counter of ordinary baskets is read a whole basket at a time through the file's counter
/// cache, so that the cursors of every branch sharing it (NanoAOD's `Jet_pt`, `Jet_eta`, ... over
/// `nJet`) decode each of its baskets once between them. A random-access counter is read one unit
/// at a time by a cursor of its own, so that an entry read decodes one unit of it.
pub(super) struct CountCursor<'a, R: ReadAt> {
    counter: BranchReader<'a, R>,
    /// The cursor over a random-access counter.
    rac: Option<RacCounter<'a, R>>,
    /// The entries of the counter basket last used and their offsets from 0 (`entries + 1`).
    held: Option<(Range<u64>, Arc<[u64]>)>,
    /// Of a random-access counter: the units this cursor used, by first entry, with their
    /// offsets from 0 (shared with the file's counter cache), so that a later read in one of them
    /// finds it without the counter's seek table or the cache's lock.
    units: Vec<(Range<u64>, Arc<[u64]>)>,
}

/// A typed cursor over a random-access counter branch.
enum RacCounter<'a, R: ReadAt> {
    I8(BranchCursor<'a, R, i8>),
    U8(BranchCursor<'a, R, u8>),
    I16(BranchCursor<'a, R, i16>),
    U16(BranchCursor<'a, R, u16>),
    I32(BranchCursor<'a, R, i32>),
    U32(BranchCursor<'a, R, u32>),
    I64(BranchCursor<'a, R, i64>),
    U64(BranchCursor<'a, R, u64>),
}

impl<'a, R: ReadAt> CountCursor<'a, R> {
    pub(super) fn new(counter: BranchReader<'a, R>) -> Result<CountCursor<'a, R>> {
        let dtype = counter.meta().dtype;
        let DataType::Scalar(t) = dtype else {
            return Err(not_a_counter(&counter, dtype));
        };
        if !t.is_integer() {
            return Err(not_a_counter(&counter, dtype));
        }
        let rac = if counter.meta().rac {
            Some(match t {
                ScalarType::I8 => RacCounter::I8(counter.cursor()?),
                ScalarType::U8 => RacCounter::U8(counter.cursor()?),
                ScalarType::I16 => RacCounter::I16(counter.cursor()?),
                ScalarType::U16 => RacCounter::U16(counter.cursor()?),
                ScalarType::I32 => RacCounter::I32(counter.cursor()?),
                ScalarType::U32 => RacCounter::U32(counter.cursor()?),
                ScalarType::I64 => RacCounter::I64(counter.cursor()?),
                ScalarType::U64 => RacCounter::U64(counter.cursor()?),
                _ => return Err(not_a_counter(&counter, dtype)),
            })
        } else {
            None
        };
        Ok(CountCursor {
            counter,
            rac,
            held: None,
            units: Vec::new(),
        })
    }

    /// Appends the counter's values for `entries` to `out` as running element offsets.
    pub(super) fn offsets(&mut self, entries: Range<u64>, out: &mut Vec<u64>) -> Result<()> {
        if let Some(rac) = &mut self.rac {
            return rac.offsets(&self.counter, &mut self.units, entries, out);
        }
        let mut e = entries.start;
        while e < entries.end {
            let (range, offsets) = match &self.held {
                Some((range, offsets)) if range.contains(&e) => (range.clone(), offsets.clone()),
                _ => {
                    let index = self.counter.baskets()?;
                    let b = index
                        .baskets
                        .partition_point(|b| b.first_entry + b.entries <= e);
                    let loc = index.baskets.get(b).ok_or_else(|| {
                        Error::corrupt(
                            self.counter.location(None, 0),
                            format!("no basket holds entry {e}"),
                        )
                    })?;
                    let range = loc.first_entry..loc.first_entry + loc.entries;
                    let offsets = self.counter.counter_offsets(range.clone())?;
                    self.held = Some((range.clone(), offsets.clone()));
                    (range, offsets)
                }
            };
            let stop = entries.end.min(range.end);
            let (from, to) = ((e - range.start) as usize, (stop - range.start) as usize);
            // Offsets from 0 never decrease: the differences do not underflow.
            let counts = offsets[from..=to].windows(2).map(|w| w[1] - w[0]);
            if !push_running_sums(out, counts) {
                return Err(Error::corrupt(
                    self.counter.location(None, 0),
                    format!("the counter's values in entries {e}..{stop} overflow the sum"),
                ));
            }
            e = stop;
        }
        Ok(())
    }
}

fn not_a_counter<R: ReadAt>(counter: &BranchReader<'_, R>, dtype: DataType) -> Error {
    Error::corrupt(
        counter.location(None, 0),
        format!("a counter branch of type {dtype} is not an integer scalar"),
    )
}

impl<R: ReadAt> RacCounter<'_, R> {
    /// Appends the counter's values for `entries` to `out` as running element offsets, a unit at
    /// a time: each unit's offsets from the file's counter cache, or decoded and kept there, so
    /// that the jagged branches over one counter, and later reads, decode each unit once.
    fn offsets(
        &mut self,
        counter: &BranchReader<'_, R>,
        units: &mut Vec<(Range<u64>, Arc<[u64]>)>,
        entries: Range<u64>,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        macro_rules! run {
            ($c:expr) => {{
                let mut e = entries.start;
                while e < entries.end {
                    let at = units.partition_point(|(r, _)| r.end <= e);
                    let (unit, offsets) = match units.get(at) {
                        Some((r, offsets)) if r.contains(&e) => (r.clone(), offsets.clone()),
                        _ => {
                    let unit = $c.rac_unit_range(e)?;
                    let offsets = counter.counter_offsets_or(unit.clone(), || {
                        let values = $c.get_run(unit.start, unit.end)?;
                        if values.len() as u64 != unit.end - unit.start {
                            return Err(Error::corrupt(
                                counter.location(None, 0),
                                format!(
                                    "the counter's unit of entries {unit:?} holds {} values",
                                    values.len()
                                ),
                            ));
                        }
                        let mut offsets = Vec::with_capacity(values.len() + 1);
                        offsets.push(0);
                        let mut negative = false;
                        let counts = values.iter().map(|&v| {
                            u64::try_from(v).unwrap_or_else(|_| {
                                negative = true;
                                0
                            })
                        });
                        let summed = push_running_sums(&mut offsets, counts);
                        if negative || !summed {
                            let what = if negative {
                                "is negative"
                            } else {
                                "overflows the sum"
                            };
                            return Err(Error::corrupt(
                                counter.location(None, 0),
                                format!("a counter value in entries {unit:?} {what}"),
                            ));
                        }
                        Ok(Arc::from(offsets))
                    })?;
                    units.insert(at, (unit.clone(), offsets.clone()));
                    (unit, offsets)
                        }
                    };
                    let stop = entries.end.min(unit.end);
                    let (from, to) = ((e - unit.start) as usize, (stop - unit.start) as usize);
                    // Offsets from 0 never decrease: the differences do not underflow.
                    let counts = offsets[from..=to].windows(2).map(|w| w[1] - w[0]);
                    if !push_running_sums(out, counts) {
                        return Err(Error::corrupt(
                            counter.location(None, 0),
                            format!("the counter's values in entries {e}..{stop} overflow the sum"),
                        ));
                    }
                    e = stop;
                }
                Ok(())
            }};
        }
        match self {
            RacCounter::I8(c) => run!(c),
            RacCounter::U8(c) => run!(c),
            RacCounter::I16(c) => run!(c),
            RacCounter::U16(c) => run!(c),
            RacCounter::I32(c) => run!(c),
            RacCounter::U32(c) => run!(c),
            RacCounter::I64(c) => run!(c),
            RacCounter::U64(c) => run!(c),
        }
    }
}

impl<R: ReadAt, T: Scalar> BranchCursor<'_, R, T> {
    /// The values of a scalar branch for entries `entry..` up to `end` or the end of the cached
    /// basket (or RAC unit), whichever comes first; at least one value.
    pub(super) fn get_run(&mut self, entry: u64, end: u64) -> Result<&[T]> {
        self.get(entry)?;
        self.finish_unit()?;
        let (Some(index), Some(b)) = (&self.state.index, self.state.basket) else {
            return Ok(&[]);
        };
        let loc = index.baskets[b];
        let local = entry - loc.first_entry;
        let mut stop = end.min(loc.first_entry + loc.entries) - loc.first_entry;
        let mut base = 0;
        if let Some(RacState {
            table,
            unit: Some(u),
            ..
        }) = &self.state.rac
        {
            let unit = table.units()[*u];
            stop = stop.min(unit.first_entry + unit.entries);
            base = unit.first_entry;
        }
        Ok(self
            .values
            .get((local - base) as usize..(stop - base) as usize)
            .unwrap_or(&[]))
    }
}

impl<'a, R: ReadAt, T> BranchCursor<'a, R, T> {
    /// Appends running element offsets for `entries` (absolute) from the counter branch.
    pub(super) fn counter_offsets(&mut self, entries: Range<u64>) -> Result<()> {
        let counter = match &mut self.state.counter {
            Some(c) => c,
            None => self
                .state
                .counter
                .insert(Box::new(CountCursor::new(self.state.branch.counter()?)?)),
        };
        counter.offsets(entries, &mut self.offsets)
    }
}

/// A RAC basket's parsed seek table and where its parts are.
pub(super) struct BasketTable {
    table: SeekTable,
    /// File offset of the RAC payload.
    payload_at: u64,
    /// Bytes of the RAC payload.
    rac_len: u64,
    /// File offset of the units region.
    units_at: u64,
}

impl BasketTable {
    /// Bytes the parsed table holds on the heap, what the file's table cache counts.
    pub(super) fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(self.table.units()) + std::mem::size_of::<Self>()
    }
}

impl std::ops::Deref for BasketTable {
    type Target = SeekTable;

    fn deref(&self) -> &SeekTable {
        &self.table
    }
}

impl<R: ReadAt> BranchReader<'_, R> {
    /// The seek table of RAC basket `b` (at `loc`): from the file's table cache, or read with
    /// `read` (positional reads within the basket's record), checked against the basket index
    /// and kept in the cache.
    fn rac_table(
        &self,
        b: usize,
        loc: &BasketLoc,
        read: &dyn Fn(u64, usize) -> Result<Vec<u8>>,
    ) -> Result<Arc<BasketTable>> {
        let file = self.file();
        let key = (self.tree.tree, self.branch, b);
        if let Some(table) = file.tables.get(key) {
            return Ok(table);
        }
        let location = || self.location(Some(b), loc.offset);
        let meta = self.meta();
        let size = meta.dtype.scalar().size();
        let head = read(loc.offset, RECORD_HEADER_LEN + 12)?;
        let header = RecordHeader::decode(&le::array(&head, 0), &location())?;
        if header.kind != RecordKind::Basket
            || header.basket_kind != 1
            || header.tree as usize != self.tree.tree
            || header.branch as usize != self.branch
            || header.first_entry != loc.first_entry
            || header.entries != loc.entries
            || header.body_len.checked_add(RECORD_HEADER_LEN as u64) != Some(loc.record_len)
        {
            return Err(Error::corrupt(
                location(),
                "random-access basket header does not match the basket index",
            ));
        }
        let rac_len = le::u64_at(&head, RECORD_HEADER_LEN);
        let table_len = SeekTable::table_len(&head[RECORD_HEADER_LEN + 8..])
            .map_err(|e| Error::corrupt(location(), e.to_string()))? as u64;
        let payload_at = loc.offset + RECORD_HEADER_LEN as u64 + 8;
        let units_len = rac_len
            .checked_sub(4 + table_len)
            .filter(|_| rac_len.checked_add(8).is_some_and(|n| n <= header.body_len))
            .ok_or_else(|| Error::corrupt(location(), "seek table longer than the payload"))?;
        let table_bytes = read(payload_at + 4, table_len as usize)?;
        let table = SeekTable::parse_table(&table_bytes, units_len)
            .map_err(|e| Error::corrupt(location(), e.to_string()))?;
        if table.entries() != loc.entries
            || table.raw_len() != loc.elements.saturating_mul(size as u64)
        {
            return Err(Error::corrupt(
                location(),
                "seek table does not match the basket index",
            ));
        }
        check_entry_sizes_flag(meta, &table, &location())?;
        let table = Arc::new(BasketTable {
            table,
            payload_at,
            rac_len,
            units_at: payload_at + 4 + table_len,
        });
        file.tables.put(key, table.clone(), table.heap_bytes());
        Ok(table)
    }
}

/// What a cursor keeps of the RAC basket it is in.
pub(super) struct RacState {
    table: Arc<BasketTable>,
    /// File offset of the units region.
    units_at: u64,
    /// The unit decoded into `values`, if any.
    unit: Option<usize>,
    /// Whether `values` holds all of `unit`, or only the values of the entry it was decoded for
    /// (the rest is in the cursor's decoder, [`BranchCursor::finish_unit`]).
    whole: bool,
    /// Whether the offsets hold where every entry of `unit` ends, or only those up to the entry
    /// it was read for.
    all_ends: bool,
}

impl<R: ReadAt, T> std::fmt::Debug for BranchCursor<'_, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BranchCursor")
            .field("branch", &self.state.branch.meta().name)
            .field("basket", &self.state.basket)
            .finish()
    }
}

impl<'a, R: ReadAt, T: Scalar> BranchCursor<'a, R, T> {
    /// The values of `entry`: one for scalars, `n` for fixed arrays, any number for variable-length
    /// branches.
    ///
    /// # Errors
    /// [`Error::EntryOutOfRange`]; I/O and corruption errors.
    #[inline]
    pub fn get(&mut self, entry: u64) -> Result<&[T]> {
        if self.held.contains(&entry) {
            return Ok(self.held_entry(entry));
        }
        self.get_uncached(entry)
    }

    /// The values of `entry`, which `held` covers.
    #[inline]
    fn held_entry(&self, entry: u64) -> &[T] {
        let local = (entry - self.held.start) as usize;
        match self.fixed {
            Some(len) => &self.values[local * len..(local + 1) * len],
            None => &self.values[self.offsets[local] as usize..self.offsets[local + 1] as usize],
        }
    }

    /// The basket (its number and place) that holds `entry`, from the branch's basket index
    /// (read once per cursor).
    fn basket_of(&mut self, entry: u64) -> Result<(usize, BasketLoc)> {
        self.state.branch.tree.check_range(&(entry..entry + 1))?;
        let index = match &self.state.index {
            Some(index) => index.clone(),
            None => self
                .state
                .index
                .insert(self.state.branch.baskets()?)
                .clone(),
        };
        let b = index
            .baskets
            .partition_point(|b| b.first_entry + b.entries <= entry);
        let loc = index.baskets.get(b).copied().ok_or_else(|| {
            Error::corrupt(
                self.state.branch.location(None, 0),
                format!("no basket holds entry {entry}"),
            )
        })?;
        Ok((b, loc))
    }

    /// [`BranchCursor::get`] of an entry outside the basket held: finds, reads and decodes it.
    fn get_uncached(&mut self, entry: u64) -> Result<&[T]> {
        let (b, loc) = self.basket_of(entry)?;
        if self.state.branch.meta().rac {
            return self.get_rac(b, &loc, entry);
        }
        if self.state.basket != Some(b) {
            self.state.basket = None;
            self.held = 0..0;
            self.values.clear();
            self.values.resize(loc.elements as usize, T::default());
            let counts = self
                .state
                .branch
                .decode_basket(b, &loc, &mut self.values, false, None)?;
            let meta = self.state.branch.meta();
            self.offsets.clear();
            self.offsets.push(0);
            match meta.dtype.fixed_len() {
                // Fixed-size entries need no offsets: entry i holds values i*len..(i+1)*len.
                Some(_) => self.offsets.clear(),
                None => {
                    match counts {
                        // u32 counts of one basket's entries, summed from 0: they fit in a u64.
                        Some(c) => {
                            push_count_sums(&mut self.offsets, &c);
                        }
                        None => {
                            self.counter_offsets(loc.first_entry..loc.first_entry + loc.entries)?
                        }
                    }
                    let at = *self.offsets.last().unwrap_or(&0);
                    if at != loc.elements {
                        return Err(Error::corrupt(
                            self.state.branch.location(Some(b), loc.offset),
                            "counter and basket disagree",
                        ));
                    }
                }
            }
            self.state.offsets_base = 0;
            self.state.basket = Some(b);
            self.held = loc.first_entry..loc.first_entry + loc.entries;
        }
        Ok(self.held_entry(entry))
    }
}

/// Positional reads inside one RAC basket's record, checked against it, and how errors name the
/// basket.
struct RacRecord<'r, 'a, R: ReadAt> {
    branch: &'r BranchReader<'a, R>,
    /// The basket's index in its branch.
    b: usize,
    loc: &'r BasketLoc,
}

impl<R: ReadAt> RacRecord<'_, '_, R> {
    fn location(&self) -> crate::error::Location {
        self.branch.location(Some(self.b), self.loc.offset)
    }

    fn corrupt(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.location(), detail)
    }

    /// Checks that `len` bytes at `offset` lie inside the basket's record.
    fn check(&self, offset: u64, len: usize) -> Result<()> {
        let end = self.loc.offset + self.loc.record_len;
        if offset.checked_add(len as u64).is_none_or(|e| e > end) {
            return Err(self.corrupt("random-access basket structure runs past its record"));
        }
        Ok(())
    }

    /// Reads `len` bytes at `offset` into the first `len` bytes of `buf` (grown when shorter,
    /// never shrunk).
    fn read_into(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> Result<()> {
        self.check(offset, len)?;
        let file = self.branch.file();
        file.source
            .read_exact_at(offset, evtc_codecs::scratch(buf, len))
            .map_err(|e| Error::io(file.source.path(), e))
    }

    fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_into(offset, len, &mut buf)?;
        Ok(buf)
    }
}

impl<R: ReadAt, T: Scalar> BranchCursor<'_, R, T> {
    /// The entries (absolute) of the RAC unit that holds `entry`, from its basket's seek table
    /// (read, not decoded).
    pub(super) fn rac_unit_range(&mut self, entry: u64) -> Result<Range<u64>> {
        let (b, loc) = self.basket_of(entry)?;
        let branch = self.state.branch.clone();
        let record = RacRecord {
            branch: &branch,
            b,
            loc: &loc,
        };
        if self.state.basket != Some(b) {
            self.enter_rac_basket(&record)?;
        }
        let table = &self.state.rac.as_ref().expect("set on entering").table;
        let u = table
            .unit_of_entry(entry - loc.first_entry)
            .ok_or_else(|| record.corrupt("entry not in the seek table"))?;
        let unit = table.units()[u];
        let start = loc.first_entry + unit.first_entry;
        Ok(start..start + unit.entries)
    }

    /// Reads `entry` of RAC basket `b` (at `loc`): decodes the one unit that holds it, unless
    /// that unit is held already.
    pub(super) fn get_rac(&mut self, b: usize, loc: &BasketLoc, entry: u64) -> Result<&[T]> {
        let branch = self.state.branch.clone();
        let record = RacRecord {
            branch: &branch,
            b,
            loc,
        };
        if self.state.basket != Some(b) {
            self.enter_rac_basket(&record)?;
        }
        let local = entry - loc.first_entry;
        let (u, unit) = {
            let table = &self.state.rac.as_ref().expect("set on entering").table;
            let u = table
                .unit_of_entry(local)
                .ok_or_else(|| record.corrupt("entry not in the seek table"))?;
            (u, table.units()[u])
        };
        let meta = branch.meta();
        if meta.dtype.fixed_len().is_none()
            && meta.boundaries != Boundaries::Counts
            && (self.offsets.is_empty() || self.state.offsets_base != unit.first_entry)
        {
            self.counter_offsets_of_unit(&record, unit)?;
        }
        if self
            .state
            .rac
            .as_ref()
            .is_some_and(|rac| rac.unit != Some(u))
        {
            self.load_unit(&record, u, unit, local)?;
        } else {
            self.finish_unit()?;
        }
        let values = self.entry_values(&record, local, unit)?;
        Ok(&self.values[values])
    }

    /// The values of basket-local entry `local` in `unit` (see [`entry_values`]).
    fn entry_values(
        &self,
        record: &RacRecord<'_, '_, R>,
        local: u64,
        unit: evtc_rac::Unit,
    ) -> Result<Range<usize>> {
        let size = record.branch.meta().dtype.scalar().size();
        entry_values(
            &self.offsets,
            self.state.offsets_base,
            local,
            unit,
            self.fixed,
            size,
        )
        .ok_or_else(|| record.corrupt("entry falls outside its unit"))
    }

    /// Makes RAC basket `record.b` the cursor's: its seek table, and the element offsets of its
    /// entries where the basket stores them as a block of counts after the units. With entry
    /// sizes in the units or a counter, the offsets are found one unit's entries at a time
    /// (so that a read touches one unit, and with a counter one unit of the counter too).
    fn enter_rac_basket(&mut self, record: &RacRecord<'_, '_, R>) -> Result<()> {
        let (branch, loc) = (record.branch, record.loc);
        let meta = branch.meta();
        self.state.basket = None;
        self.held = 0..0;
        self.state.rac = None;
        let table = branch.rac_table(record.b, loc, &|at, len| record.read(at, len))?;
        self.offsets.clear();
        self.state.offsets_base = 0;
        let counts_block = meta.dtype.fixed_len().is_none()
            && meta.boundaries == Boundaries::Counts
            && !table.has_entry_sizes();
        if counts_block {
            let at = table.payload_at + table.rac_len;
            let block = record.read(at, (loc.offset + loc.record_len - at) as usize)?;
            let mut counts = vec![0u32; loc.entries as usize];
            decode_block_into(&block, counts.len() * 4, &mut counts).map_err(|e| match e {
                BlockError::Codec(source) => Error::Codec {
                    location: record.location(),
                    source: Box::new(source),
                },
                BlockError::Invalid(_) => record.corrupt("invalid counts"),
            })?;
            self.offsets.push(0);
            push_running_sums(&mut self.offsets, counts.into_iter().map(u64::from));
            if self.offsets.last() != Some(&loc.elements) {
                return Err(record.corrupt("counts and basket disagree"));
            }
        }
        self.state.rac = Some(RacState {
            units_at: table.units_at,
            table,
            unit: None,
            whole: false,
            all_ends: false,
        });
        self.state.basket = Some(record.b);
        Ok(())
    }

    /// The element offsets of `unit`'s entries from the branch's counter.
    fn counter_offsets_of_unit(
        &mut self,
        record: &RacRecord<'_, '_, R>,
        unit: evtc_rac::Unit,
    ) -> Result<()> {
        let size = record.branch.meta().dtype.scalar().size() as u64;
        self.offsets.clear();
        self.offsets.push(unit.raw_offset / size);
        self.state.offsets_base = unit.first_entry;
        let first = record.loc.first_entry + unit.first_entry;
        if let Err(e) = self.counter_offsets(first..first + unit.entries) {
            self.offsets.clear();
            return Err(e);
        }
        if self.offsets.last().copied() != Some((unit.raw_offset + unit.raw_len) / size) {
            self.offsets.clear();
            return Err(record.corrupt("counter and unit disagree"));
        }
        Ok(())
    }

    /// Reads and decodes unit `u` (`unit`) of the cursor's RAC basket for basket-local entry
    /// `local`: the unit's stored bytes (lent by in-memory sources, else copied), its checksum,
    /// the entry sizes it stores up to the entry, and its values; values whose bytes are their
    /// encoding are decoded in place, the preconditioner undone for this entry's values only
    /// until a second entry of the unit is read ([`BranchCursor::finish_unit`]).
    fn load_unit(
        &mut self,
        record: &RacRecord<'_, '_, R>,
        u: usize,
        unit: evtc_rac::Unit,
        local: u64,
    ) -> Result<()> {
        let branch = record.branch;
        let file = branch.file();
        let size = branch.meta().dtype.scalar().size();
        let first_value = unit.raw_offset / size as u64;
        let state = self.state.rac.as_mut().expect("set on entering");
        state.unit = None;
        let stored_len = unit.stored_len as usize;
        let stored_at = state.units_at + unit.offset;
        record.check(stored_at, stored_len)?;
        let stored = match file.source.bytes_at(stored_at, stored_len) {
            Some(bytes) => bytes,
            None => {
                record.read_into(stored_at, stored_len, &mut self.state.stored)?;
                &self.state.stored[..stored_len]
            }
        };
        if !unit.raw_len.is_multiple_of(size as u64) {
            return Err(record.corrupt("a unit does not hold whole values"));
        }
        // Checked before the entry sizes are read from the unit, so that damage reads as such.
        if file.options.verify_checksums {
            state
                .table
                .check_unit(u, stored)
                .map_err(|e| record.corrupt(e.to_string()))?;
        }
        // Element offsets of the unit's entries from the sizes it stores: of those up to this
        // one (a second read in the unit finds the rest).
        state.all_ends = self.fixed.is_some() || !state.table.has_entry_sizes();
        if !state.all_ends {
            self.offsets.clear();
            self.offsets.push(first_value);
            self.state.offsets_base = unit.first_entry;
            if let Err(e) = state.table.first_entry_value_ends(
                u,
                stored,
                size.trailing_zeros(),
                first_value,
                local - unit.first_entry + 1,
                &mut self.offsets,
            ) {
                self.offsets.clear();
                return Err(record.corrupt(e.to_string()));
            }
        }
        let dictionary = branch.dictionary()?;
        let dictionary = dictionary.as_deref().map(ReaderDictionary::as_decode);
        // The seek table matched the basket index, whose size the reader checked: the unit's
        // values fit memory.
        self.values
            .resize((unit.raw_len / size as u64) as usize, T::default());
        let values = entry_values(
            &self.offsets,
            self.state.offsets_base,
            local,
            unit,
            self.fixed,
            size,
        )
        .ok_or_else(|| record.corrupt("entry falls outside its unit"))?;
        let decoder = &mut self.state.decoder;
        let corrupt = |e: evtc_rac::Error| record.corrupt(e.to_string());
        let whole = match T::as_bytes_mut(&mut self.values) {
            Some(bytes) => {
                let part = values.start * size..values.end * size;
                decoder
                    .decode_stored_unit_part(
                        &state.table,
                        u,
                        stored,
                        dictionary.as_ref(),
                        bytes,
                        false,
                        Some(part),
                    )
                    .map_err(corrupt)?
            }
            None => {
                let mut scratch = std::mem::take(&mut self.state.scratch);
                let raw_len = unit.raw_len as usize;
                let decoded = decoder
                    .decode_stored_unit(
                        &state.table,
                        u,
                        stored,
                        dictionary.as_ref(),
                        evtc_codecs::scratch(&mut scratch, raw_len),
                        false,
                    )
                    .map_err(corrupt);
                self.state.scratch = scratch;
                decoded?;
                T::decode(&self.state.scratch[..raw_len], &mut self.values)
                    .map_err(|at| record.corrupt(format!("value {at} is invalid")))?;
                true
            }
        };
        state.unit = Some(u);
        state.whole = whole;
        Ok(())
    }

    /// Readies the rest of the RAC unit held when it was read for one entry (its first read):
    /// undoes the preconditioner for the rest of its values and finds where all its entries end.
    pub(super) fn finish_unit(&mut self) -> Result<()> {
        let state = &mut *self.state;
        let Some(rac) = &mut state.rac else {
            return Ok(());
        };
        let Some(u) = rac.unit else {
            return Ok(());
        };
        let offset =
            (state.index.as_ref().zip(state.basket)).map_or(0, |(i, b)| i.baskets[b].offset);
        let location = || state.branch.location(state.basket, offset);
        if !rac.whole {
            let bytes = T::as_bytes_mut(&mut self.values)
                .expect("only values decoded in place are decoded in part");
            if let Err(e) = state.decoder.finish_unit(bytes) {
                rac.unit = None;
                return Err(Error::corrupt(location(), e.to_string()));
            }
            rac.whole = true;
        }
        if !rac.all_ends {
            let unit = rac.table.units()[u];
            let stored_len = unit.stored_len as usize;
            // The unit's bytes, as its first read found them: lent by the source again, or still
            // in the cursor's buffer.
            let stored = match state
                .branch
                .file()
                .source
                .bytes_at(rac.units_at + unit.offset, stored_len)
            {
                Some(bytes) => bytes,
                None => &state.stored[..stored_len],
            };
            let size = state.branch.meta().dtype.scalar().size();
            let first_value = unit.raw_offset / size as u64;
            self.offsets.clear();
            self.offsets.push(first_value);
            rac.all_ends = true;
            if let Err(e) = rac.table.entry_value_ends(
                u,
                stored,
                size.trailing_zeros(),
                first_value,
                &mut self.offsets,
            ) {
                self.offsets.clear();
                rac.unit = None;
                return Err(Error::corrupt(location(), e.to_string()));
            }
        }
        Ok(())
    }
}

/// The values of basket-local entry `local` in its unit, counted from the unit's first value:
/// from `offsets` (element offsets of entries from `offsets_base` on) or the branch's fixed entry
/// length. `None` if the offsets do not hold the entry or it falls outside the unit.
fn entry_values(
    offsets: &[u64],
    offsets_base: u64,
    local: u64,
    unit: evtc_rac::Unit,
    fixed: Option<usize>,
    size: usize,
) -> Option<Range<usize>> {
    let (from, to) = match fixed {
        Some(len) => (local * len as u64, (local + 1) * len as u64),
        None => {
            let at = usize::try_from(local.checked_sub(offsets_base)?).ok()?;
            (*offsets.get(at)?, *offsets.get(at.checked_add(1)?)?)
        }
    };
    let first = unit.raw_offset / size as u64;
    let (from, to) = (from.checked_sub(first)?, to.checked_sub(first)?);
    (from <= to && to <= unit.raw_len / size as u64).then_some(from as usize..to as usize)
}
