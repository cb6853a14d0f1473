//! Bulk reads: whole branches and entry ranges, decoded basket by basket (in parallel on the
//! file's pool), into [`Jagged`] arrays and plain vectors.

use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Arc;

use evtc_codecs::{Algorithm, BlockHeader};

use super::{
    BasketKind, BranchReader, Counts, DecodedBasket, RECORD_BUFFER, ReaderDictionary, decode_body,
    fill_count_sums, push_running_sums,
};
use crate::error::{Error, Location, Result};
use crate::io::ReadAt;
use crate::meta::{BasketLoc, Boundaries, DataType, ScalarType};
use crate::record::{RECORD_HEADER_LEN, RecordHeader, RecordKind};
use crate::types::{Scalar, decode_counts};

/// Variable-length data in the Arrow layout: entry `i` is `values[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jagged<T> {
    /// `entries + 1` offsets into `values`, starting at 0. Shared: the jagged branches of one
    /// counter (a NanoAOD collection) read over the same entries share one offsets buffer.
    pub offsets: Arc<[u64]>,
    /// All values, back to back.
    pub values: Vec<T>,
}

impl<T> Jagged<T> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of entry `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn entry(&self, i: usize) -> &[T] {
        &self.values[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

thread_local! {
    /// The bytes of the last RAC baskets range reads used in part (a range uses at most two in
    /// part, its first and its last), for the next ones: RAC baskets are not kept in the basket
    /// cache (reading one again decodes only the units it needs), and allocating their bytes
    /// afresh each time costs page faults of their own.
    static RAC_ASIDE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// What a range read takes from each basket ([`BranchReader::decode_range_into`]'s first step).
struct RangePlan<'i> {
    /// The position of the first basket in the branch's index.
    first: usize,
    /// The baskets holding entries of the range.
    selected: &'i [BasketLoc],
    /// What each of those baskets contributes.
    parts: Vec<BasketPart>,
    /// A counter-bounded branch's counter offsets over the baskets' entries, from `span_start`.
    offsets: Option<Arc<[u64]>>,
    /// The first basket's first entry.
    span_start: u64,
}

impl RangePlan<'_> {
    /// How many values (in the plan's units) the baskets contribute in all.
    fn values(&self) -> u64 {
        self.parts
            .iter()
            .map(|p| p.values.end - p.values.start)
            .sum()
    }
}

/// What one basket contributes to a range read.
struct BasketPart {
    /// Its entries inside the range (basket-local).
    entries: Range<u64>,
    /// Their values (basket-local, in the read's units).
    values: Range<u64>,
    /// The basket, when it had to be decoded to find them.
    aside: Option<Arc<DecodedBasket>>,
}

/// What [`BranchReader::decode_range_into`] decoded besides the values.
pub(super) struct RangeParts {
    /// Each basket's per-entry counts of the entries the values hold, where it stores them.
    pub(super) counts: Vec<Counts>,
    /// A counter-bounded branch's counter offsets over its baskets' entries, from the entry given
    /// with them (the first basket's first entry).
    pub(super) counter_offsets: Option<(u64, Arc<[u64]>)>,
}

impl<'a, R: ReadAt> BranchReader<'a, R> {
    /// Decodes basket `i` into `values` (exactly `loc.elements` long) and returns its per-entry
    /// counts when the basket stores them.
    ///
    /// With `raw`, `T` is `u8` and `values` receives the values' little-endian bytes
    /// (`loc.elements * size` of them). With `wanted` (basket-local entries), a RAC basket decodes
    /// only the units that hold those entries; the other values stay zero.
    pub(super) fn decode_basket<T: Scalar>(
        &self,
        i: usize,
        loc: &BasketLoc,
        values: &mut [T],
        raw: bool,
        wanted: Option<Range<usize>>,
    ) -> Result<Counts> {
        if self.read_stored_in_place(i, loc, values)? {
            return Ok(None);
        }
        let file = self.file();
        let location = self.location(Some(i), loc.offset);
        let buffer = RECORD_BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()));
        let (header, body) = file.read_record_into(
            loc.offset,
            loc.record_len,
            RecordKind::Basket,
            &location,
            file.records_end,
            buffer,
        )?;
        let counts =
            self.decode_basket_body(loc, values, raw, (header, &body), location, wanted)?;
        RECORD_BUFFER.with(|b| *b.borrow_mut() = body.into_buffer());
        Ok(counts)
    }

    /// The fast path of a basket that is one stored block (codec `none`, no preconditioner,
    /// fixed-size little-endian values): its payload is read straight into `values`, with the
    /// record's checksums verified as usual. Returns false when the general path must decode it
    /// (including every malformed case, which that path reports).
    pub(super) fn read_stored_in_place<T: Scalar>(
        &self,
        i: usize,
        loc: &BasketLoc,
        values: &mut [T],
    ) -> Result<bool> {
        let meta = self.meta();
        let file = self.file();
        let stored = !meta.rac
            && Algorithm::from_id(meta.codec).ok() == Some(Algorithm::None)
            && meta.precondition == 0
            && meta.boundaries == Boundaries::Fixed;
        let Some(out) = T::as_bytes_mut(values).filter(|_| stored) else {
            return Ok(false);
        };
        const HEAD: usize = RECORD_HEADER_LEN + BlockHeader::LEN;
        if loc.record_len != (HEAD + out.len()) as u64
            || loc
                .offset
                .checked_add(loc.record_len)
                .is_none_or(|e| e > file.records_end)
        {
            return Ok(false);
        }
        let location = self.location(Some(i), loc.offset);
        let mut head = [0u8; HEAD];
        file.source
            .read_exact_at(loc.offset, &mut head)
            .and_then(|()| file.source.read_exact_at(loc.offset + HEAD as u64, out))
            .map_err(|e| Error::io(file.source.path(), e))?;
        let (record, envelope) = head.split_at(RECORD_HEADER_LEN);
        let header = RecordHeader::decode(record.try_into().expect("header bytes"), &location)?;
        if header.kind != RecordKind::Basket
            || header.body_len != loc.record_len - RECORD_HEADER_LEN as u64
        {
            return Err(Error::corrupt(
                location,
                "basket record header does not match the basket index",
            ));
        }
        if file.options.verify_checksums {
            let computed = evtc_codecs::Crc32::new()
                .update(envelope)
                .update(out)
                .finish();
            if computed != header.body_crc {
                return Err(Error::Checksum {
                    what: "record body",
                    location,
                    stored: header.body_crc,
                    computed,
                });
            }
        }
        self.check_basket_header(loc, &header, &location)?;
        let block = BlockHeader::parse(envelope).map_err(|e| Error::Codec {
            location: location.clone(),
            source: Box::new(e),
        })?;
        if block.codec.algorithm() != Algorithm::None
            || block.precondition.id() != 0
            || block.uncompressed_len != out.len() as u64
            || block.payload_len != out.len() as u64
        {
            return Err(Error::corrupt(
                location,
                "stored block does not match the branch",
            ));
        }
        Ok(true)
    }

    /// Checks a basket record's header against the branch and the basket index.
    pub(super) fn check_basket_header(
        &self,
        loc: &BasketLoc,
        header: &RecordHeader,
        location: &Location,
    ) -> Result<()> {
        if header.tree as usize != self.tree.tree
            || header.branch as usize != self.branch
            || header.first_entry != loc.first_entry
            || header.entries != loc.entries
        {
            return Err(Error::corrupt(
                location.clone(),
                "basket header does not match the basket index",
            ));
        }
        if header.basket_kind != u8::from(self.meta().rac) {
            return Err(Error::corrupt(
                location.clone(),
                format!("unexpected basket kind {}", header.basket_kind),
            ));
        }
        Ok(())
    }

    pub(super) fn decode_basket_body<T: Scalar>(
        &self,
        loc: &BasketLoc,
        values: &mut [T],
        raw: bool,
        (header, body): (RecordHeader, &[u8]),
        location: Location,
        wanted: Option<Range<usize>>,
    ) -> Result<Counts> {
        self.check_basket_header(loc, &header, &location)?;
        let dictionary = if header.basket_kind == 1 {
            self.dictionary()?
        } else {
            None
        };
        let dictionary = dictionary.as_deref().map(ReaderDictionary::as_decode);
        decode_body(
            self.meta(),
            loc.entries as usize,
            body,
            values,
            raw,
            &location,
            if header.basket_kind == 1 {
                BasketKind::Rac(dictionary.as_ref(), wanted)
            } else {
                BasketKind::Blocks
            },
        )
    }

    /// The values of entries `range` (with `raw`, `T` is `u8` and they are the values' bytes).
    pub(super) fn decode_range<T: Scalar>(&self, range: &Range<u64>, raw: bool) -> Result<Vec<T>> {
        let mut values = Vec::new();
        self.decode_range_into(range, raw, &mut values)?;
        Ok(values)
    }

    /// As [`BranchReader::decode_range`], into `values` (its allocation reused when large enough).
    ///
    /// The output holds the values of the entries of `range` only: the baskets used in part are
    /// decoded aside (or copied from the basket cache) and only their part is copied out. The
    /// bounds of a part come from the entries' counts: for a fixed-size branch the array length,
    /// for a branch bounded by a counter the counter's offsets over its baskets, else the counts
    /// the basket stores (so those baskets are decoded before the output is sized). Returns each
    /// basket's counts of the entries taken (where it stores counts) and for a counter-bounded
    /// branch the counter's offsets over its baskets' entries (from the first basket's first
    /// entry). (A validated index covers every entry with baskets, back to back: the parts make
    /// up `range` exactly.)
    pub(super) fn decode_range_into<T: Scalar>(
        &self,
        range: &Range<u64>,
        raw: bool,
        values: &mut Vec<T>,
    ) -> Result<RangeParts> {
        let unit = if raw {
            self.meta().dtype.scalar().size() as u64
        } else {
            1
        };
        let index = self.baskets()?;
        let plan = self.plan_range(&index.baskets, range, unit)?;
        let total = usize::try_from(plan.values())
            .map_err(|_| Error::corrupt(self.location(None, 0), "branch too large for memory"))?;
        let (output, fresh) = self.output(values, total)?;
        let mut slices = Vec::with_capacity(plan.selected.len());
        let mut rest = output;
        for part in &plan.parts {
            let (head, tail) = rest.split_at_mut((part.values.end - part.values.start) as usize);
            slices.push(head);
            rest = tail;
        }
        let first = plan.first;
        let jobs: Vec<_> = slices
            .into_iter()
            .zip(plan.selected)
            .zip(plan.parts)
            .collect();
        let counts = self.file().map_indexed(jobs, |j, ((slice, loc), part)| {
            let BasketPart {
                entries: inside,
                values: part,
                aside,
            } = part;
            let slice = if fresh {
                zeroed(slice)
            } else {
                // SAFETY: the values of a reused output are initialised (resized before).
                unsafe { assume_init(slice) }
            };
            let i = first + j;
            if inside == (0..loc.entries) {
                return self.decode_basket(i, loc, slice, raw, None);
            }
            // A basket used in part, decoded aside (in a RAC basket only the units holding
            // the part), kept without RAC for the next range read (the next step of a loop
            // over consecutive ranges starts in the basket this one ends in).
            let basket = match aside {
                Some(basket) => basket,
                None => self.basket_aside(i, loc, &inside)?,
            };
            self.put_part(i, loc, (slice, raw), &basket.values, &part)?;
            let taken = inside.start as usize..inside.end as usize;
            let counts = self
                .stored_counts(i, loc, &basket.counts)?
                .map(|counts| counts[taken].to_vec());
            self.recycle(basket);
            Ok(counts)
        });
        let counts = counts.into_iter().collect::<Result<Vec<_>>>()?;
        if fresh {
            // SAFETY: the parts cover the first `total` values exactly, and every job zeroed
            // its part before decoding into it (all succeeded: an error returned above).
            unsafe { values.set_len(total) };
        }
        Ok(RangeParts {
            counts,
            counter_offsets: plan.offsets.map(|o| (plan.span_start, o)),
        })
    }

    /// Which of `baskets` hold entries of `range`, and the entries and values (in units of
    /// `unit`, basket-local) each contributes: the first step of
    /// [`BranchReader::decode_range_into`].
    fn plan_range<'i>(
        &self,
        baskets: &'i [BasketLoc],
        range: &Range<u64>,
        unit: u64,
    ) -> Result<RangePlan<'i>> {
        let first = baskets.partition_point(|b| b.first_entry + b.entries <= range.start);
        let last = if range.is_empty() {
            first
        } else {
            baskets.partition_point(|b| b.first_entry < range.end)
        };
        let selected = &baskets[first..last];
        let counted = self.meta().dtype.is_variable() && self.meta().boundaries == Boundaries::None;
        // The entries of a basket inside `range` (basket-local).
        let within = |loc: &BasketLoc| {
            let lo = range.start.saturating_sub(loc.first_entry).min(loc.entries);
            let hi = (range.end - loc.first_entry.min(range.end)).min(loc.entries);
            lo..hi
        };
        let span_start = selected.first().map_or(range.start, |b| b.first_entry);
        let span_end = selected
            .last()
            .map_or(range.start, |b| b.first_entry + b.entries);
        // A counter-bounded branch's values of each entry, from the counter.
        let offsets = if counted {
            let offsets = self.counter()?.counter_offsets(span_start..span_end)?;
            if offsets.len() as u64 != span_end - span_start + 1 {
                return Err(Error::corrupt(
                    self.location(None, 0),
                    format!(
                        "{} counter values for entries {span_start}..{span_end}",
                        offsets.len().saturating_sub(1)
                    ),
                ));
            }
            Some(offsets)
        } else {
            None
        };
        // Each basket's entries inside the range and their values (of `T`, basket-local), with
        // the basket itself when it had to be decoded to find them.
        let mut parts = Vec::with_capacity(selected.len());
        for (j, loc) in selected.iter().enumerate() {
            let inside = within(loc);
            let mut aside = None;
            let part = match (&offsets, self.meta().dtype.fixed_len()) {
                (Some(offsets), _) => {
                    let at = |e: u64| offsets[(loc.first_entry + e - span_start) as usize];
                    let base = at(0);
                    if at(loc.entries) - base != loc.elements {
                        return Err(Error::corrupt(
                            self.location(None, 0),
                            format!(
                                "counter {:?} gives {} values to entries {}..+{}, the basket holds {}",
                                self.meta().counter.as_deref().unwrap_or(""),
                                at(loc.entries) - base,
                                loc.first_entry,
                                loc.entries,
                                loc.elements
                            ),
                        ));
                    }
                    (at(inside.start) - base) * unit..(at(inside.end) - base) * unit
                }
                (None, Some(len)) => {
                    inside.start * len as u64 * unit..inside.end * len as u64 * unit
                }
                (None, None) if inside == (0..loc.entries) => 0..loc.elements * unit,
                (None, None) => {
                    let basket = self.basket_aside(first + j, loc, &inside)?;
                    let sums = self.count_sums(first + j, loc, &basket.counts, &inside)?;
                    aside = Some(basket);
                    sums.start * unit..sums.end * unit
                }
            };
            parts.push(BasketPart {
                entries: inside,
                values: part,
                aside,
            });
        }
        Ok(RangePlan {
            first,
            selected,
            parts,
            offsets,
            span_start,
        })
    }

    /// The first `total` values of `values` to decode into, and whether they are a new
    /// allocation, left uninitialised (each decoding job zeroes its own part before decoding
    /// into it: zeroing the whole output first, a memset on the calling thread when the
    /// allocator recycles memory, made a parallel read wait for one thread); a reused
    /// allocation is resized, only a growth initialised. The allocation is probed first (a
    /// corrupt index must give an error, not an abort). The probe has a second use: glibc
    /// serves a large block from a fresh memory map (faulted in page by page, unmapped when
    /// freed) until a mapped block that large has been freed, so freeing the probe makes the
    /// output come from the heap, whose memory later reads recycle without page faults
    /// (docs/benchmarks.md).
    fn output<'v, T: Scalar>(
        &self,
        values: &'v mut Vec<T>,
        total: usize,
    ) -> Result<(&'v mut [MaybeUninit<T>], bool)> {
        if values.capacity() >= total {
            // Every value is overwritten by the decoding, so only a growth needs initialising.
            values.truncate(total);
            values.resize(total, T::default());
            return Ok((as_uninit(values.as_mut_slice()), false));
        }
        let fail = |_| {
            Error::corrupt(
                self.location(None, 0),
                format!("cannot allocate {total} values"),
            )
        };
        Vec::<T>::new().try_reserve_exact(total).map_err(fail)?;
        *values = Vec::new();
        values.try_reserve_exact(total).map_err(fail)?;
        let spare = &mut values.spare_capacity_mut()[..total];
        advise_huge_pages(spare);
        Ok((spare, true))
    }

    /// Basket `i` decoded into the little-endian bytes of its values (in a RAC basket only the
    /// units holding `entries`; the other bytes are left from earlier use): from the basket
    /// cache, or decoded and, without RAC, kept there for the next range read.
    fn basket_aside(
        &self,
        i: usize,
        loc: &BasketLoc,
        entries: &Range<u64>,
    ) -> Result<Arc<DecodedBasket>> {
        // (A validated index bounds the basket's values by `max_basket_bytes`.)
        let len = loc.elements as usize * self.meta().dtype.scalar().size();
        let rac = self.meta().rac;
        if !rac && let Some(kept) = self.kept_basket(i, len) {
            return Ok(kept);
        }
        // A RAC basket's bytes go back to the thread's buffer once used (see `recycle`): only
        // the wanted units are written, and only values inside them are read.
        let mut values = if rac {
            RAC_ASIDE.with(|b| b.borrow_mut().pop()).unwrap_or_default()
        } else {
            Vec::new()
        };
        if let Some(more) = len.checked_sub(values.len()) {
            values.try_reserve_exact(more).map_err(|_| {
                Error::corrupt(
                    self.location(Some(i), loc.offset),
                    format!("cannot allocate {len} bytes"),
                )
            })?;
        }
        values.truncate(len);
        values.resize(len, 0u8);
        let wanted = entries.start as usize..entries.end as usize;
        let counts = self.decode_basket::<u8>(i, loc, &mut values, true, Some(wanted))?;
        let basket = Arc::new(DecodedBasket { values, counts });
        if !rac {
            let size = basket.values.len() + basket.counts.as_ref().map_or(0, |c| 4 * c.len());
            self.file()
                .baskets
                .put((self.tree.tree, self.branch, i), basket.clone(), size);
        }
        Ok(basket)
    }

    /// Gives the bytes of a RAC basket decoded aside back to the thread's buffer, for the next.
    fn recycle(&self, basket: Arc<DecodedBasket>) {
        if self.meta().rac
            && let Ok(basket) = Arc::try_unwrap(basket)
        {
            RAC_ASIDE.with(|b| {
                let mut kept = b.borrow_mut();
                if kept.len() < 2 {
                    kept.push(basket.values);
                }
            });
        }
    }

    /// The per-entry `counts` basket `i` stores, if any, checked to hold one count per entry.
    fn stored_counts<'c>(
        &self,
        i: usize,
        loc: &BasketLoc,
        counts: &'c Counts,
    ) -> Result<Option<&'c [u32]>> {
        match counts.as_deref() {
            Some(counts) if counts.len() as u64 != loc.entries => Err(Error::corrupt(
                self.location(Some(i), loc.offset),
                "the basket does not store a count for each entry",
            )),
            counts => Ok(counts),
        }
    }

    /// The values before entry `entries.start` and before `entries.end` of basket `i`, from the
    /// per-entry `counts` it stores.
    fn count_sums(
        &self,
        i: usize,
        loc: &BasketLoc,
        counts: &Counts,
        entries: &Range<u64>,
    ) -> Result<Range<u64>> {
        let counts = self.stored_counts(i, loc, counts)?.ok_or_else(|| {
            Error::corrupt(
                self.location(Some(i), loc.offset),
                "the basket of a variable-length branch stores no entry counts",
            )
        })?;
        let sum = |n: u64| -> u64 { counts[..n as usize].iter().map(|&c| u64::from(c)).sum() };
        Ok(sum(entries.start)..sum(entries.end))
    }

    /// Writes values `part` (of `T`, basket-local) of basket `i`, decoded aside into the bytes
    /// `whole`, into `slot` (bools checked).
    fn put_part<T: Scalar>(
        &self,
        i: usize,
        loc: &BasketLoc,
        (slot, raw): (&mut [T], bool),
        whole: &[u8],
        part: &Range<u64>,
    ) -> Result<()> {
        // Bytes of one `T`: raw reads count the values' bytes.
        let t_bytes = if raw {
            1
        } else {
            self.meta().dtype.scalar().size()
        };
        let location = || self.location(Some(i), loc.offset);
        let bytes = whole
            .get(part.start as usize * t_bytes..part.end as usize * t_bytes)
            .ok_or_else(|| {
                Error::corrupt(
                    location(),
                    format!("values {part:?} lie past the basket's values"),
                )
            })?;
        match T::as_bytes_mut(slot) {
            Some(out) => out.copy_from_slice(bytes),
            None => T::decode(bytes, slot).map_err(|at| {
                Error::corrupt(
                    location(),
                    format!(
                        "value {} of the basket is not a valid {}",
                        part.start + at as u64,
                        self.meta().dtype.scalar()
                    ),
                )
            })?,
        }
        Ok(())
    }

    /// Basket `i` as an earlier range read kept it, if its values are `bytes` long.
    fn kept_basket(&self, i: usize, bytes: usize) -> Option<Arc<DecodedBasket>> {
        let kept = self.file().baskets.get((self.tree.tree, self.branch, i))?;
        (kept.values.len() == bytes).then_some(kept)
    }

    /// Reads every value of a scalar or fixed-size branch (fixed arrays flattened, entry-major).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if the branch does not hold `T` or is variable-length; I/O and
    /// corruption errors.
    pub fn read<T: Scalar>(&self) -> Result<Vec<T>> {
        self.read_range(0..self.tree.entries())
    }

    /// Decodes every basket of the branch into its own type, as a bulk read does (checking sizes,
    /// entry boundaries and values), and returns the number of values. `evtc verify --deep` runs
    /// it on every branch.
    ///
    /// # Errors
    /// As for [`BranchReader::read`] and [`BranchReader::read_jagged`].
    pub fn decode_all(&self) -> Result<u64> {
        let variable = self.meta().dtype.is_variable();
        macro_rules! read {
            ($t:ty) => {
                if variable {
                    self.read_jagged::<$t>()?.values.len()
                } else {
                    self.read::<$t>()?.len()
                }
            };
        }
        let n = match self.meta().dtype.scalar() {
            ScalarType::Bool => read!(bool),
            ScalarType::I8 => read!(i8),
            ScalarType::U8 => read!(u8),
            ScalarType::I16 => read!(i16),
            ScalarType::U16 => read!(u16),
            ScalarType::I32 => read!(i32),
            ScalarType::U32 => read!(u32),
            ScalarType::I64 => read!(i64),
            ScalarType::U64 => read!(u64),
            ScalarType::F32 => read!(f32),
            ScalarType::F64 => read!(f64),
        };
        Ok(n as u64)
    }

    /// Reads every value of a scalar or fixed-size branch into `out` (cleared first), reusing its
    /// allocation: reading many branches or files in a loop through one buffer spares the
    /// operating system zeroing and mapping a fresh allocation each time.
    ///
    /// # Errors
    /// As for [`BranchReader::read`].
    pub fn read_into<T: Scalar>(&self, out: &mut Vec<T>) -> Result<()> {
        self.type_check::<T>(
            || T::TYPE.to_string(),
            self.meta().dtype.fixed_len().is_some(),
        )?;
        self.decode_range_into::<T>(&(0..self.tree.entries()), false, out)?;
        Ok(())
    }

    /// Reads the values of entries `range` of a scalar or fixed-size branch. In random-access
    /// (RAC) baskets that the range covers only in part, only the units holding the range are
    /// decompressed (also for [`BranchReader::read_jagged_range`]).
    ///
    /// # Errors
    /// As for [`BranchReader::read`]; [`Error::EntryOutOfRange`].
    pub fn read_range<T: Scalar>(&self, range: Range<u64>) -> Result<Vec<T>> {
        let len = self.meta().dtype.fixed_len();
        self.type_check::<T>(|| T::TYPE.to_string(), len.is_some())?;
        self.tree.check_range(&range)?;
        self.decode_range::<T>(&range, false)
    }

    /// Per-entry value counts of entries `range` of a variable-length branch.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] for fixed-size branches; I/O and corruption errors.
    pub fn read_counts(&self, range: Range<u64>) -> Result<Vec<u64>> {
        let meta = self.meta();
        if !meta.dtype.is_variable() {
            return Err(Error::TypeMismatch {
                tree: self.tree.name().to_owned(),
                branch: meta.name.clone(),
                requested: "a variable-length type".into(),
                actual: meta.dtype,
            });
        }
        self.tree.check_range(&range)?;
        let offsets = if meta.boundaries == Boundaries::None {
            // The counter's offsets, kept for the jagged branches that read them next.
            self.counter()?.counter_offsets(range)?
        } else {
            self.jagged_parts::<u8>(&range, true, &mut Vec::new(), Arc::from([]))?
        };
        Ok(offsets.windows(2).map(|w| w[1] - w[0]).collect())
    }

    /// The number of values entries `range` of the branch hold: the size of the buffer a read
    /// of them needs. It is found as a read finds it, without decoding values that a read would
    /// not: from the entry count for a fixed-size branch; from the counter's offsets (kept for
    /// the jagged branches that read them next, and checked basket by basket against the values
    /// the baskets hold) for a counter-bounded one; else from the branch index for whole
    /// baskets, decoding only a basket used in part (kept for the read that follows).
    ///
    /// # Errors
    /// [`Error::EntryOutOfRange`]; I/O and corruption errors.
    pub fn value_count(&self, range: Range<u64>) -> Result<u64> {
        self.tree.check_range(&range)?;
        let index = self.baskets()?;
        Ok(self.plan_range(&index.baskets, &range, 1)?.values())
    }

    pub(super) fn counter(&self) -> Result<BranchReader<'a, R>> {
        let name = self
            .meta()
            .counter
            .as_deref()
            .expect("validated: none boundaries have a counter");
        self.tree.branch(name)
    }

    /// Reads an integer scalar branch as counts.
    pub(super) fn read_as_counts(&self, range: Range<u64>) -> Result<Vec<u64>> {
        let t = self.meta().dtype.scalar();
        let bytes = self.decode_range::<u8>(&range, true)?;
        let mut counts = Vec::with_capacity(bytes.len() / t.size());
        decode_counts(t, &bytes, &mut counts).map_err(|at| {
            Error::corrupt(
                self.location(None, 0),
                format!("counter value {} is negative", range.start + at as u64),
            )
        })?;
        Ok(counts)
    }

    /// Reads every entry of a variable-length branch (jagged arrays, byte strings, UTF-8 strings
    /// as `u8`) in the Arrow layout.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] for fixed-size branches or another element type; I/O and corruption errors.
    pub fn read_jagged<T: Scalar>(&self) -> Result<Jagged<T>> {
        self.read_jagged_range(0..self.tree.entries())
    }

    /// As [`BranchReader::read_jagged`], into `out`, reusing its allocations.
    ///
    /// # Errors
    /// As for [`BranchReader::read_jagged`].
    pub fn read_jagged_into<T: Scalar>(&self, out: &mut Jagged<T>) -> Result<()> {
        self.read_jagged_range_into(0..self.tree.entries(), out)
    }

    /// Reads entries `range` of a variable-length branch.
    ///
    /// # Errors
    /// As for [`BranchReader::read_jagged`]; [`Error::EntryOutOfRange`].
    pub fn read_jagged_range<T: Scalar>(&self, range: Range<u64>) -> Result<Jagged<T>> {
        let mut out = Jagged::default();
        self.read_jagged_range_into(range, &mut out)?;
        Ok(out)
    }

    /// As [`BranchReader::read_jagged_range`], into `out`, reusing its allocations (the offsets too,
    /// unless a clone of them is held elsewhere): reading many branches or files in a loop through
    /// one [`Jagged`] spares the operating system zeroing and mapping fresh memory each time. A
    /// read that fails while decoding leaves `out` empty (a type or range error leaves it as it
    /// was).
    ///
    /// # Errors
    /// As for [`BranchReader::read_jagged_range`].
    pub fn read_jagged_range_into<T: Scalar>(
        &self,
        range: Range<u64>,
        out: &mut Jagged<T>,
    ) -> Result<()> {
        self.type_check::<T>(|| format!("{}[]", T::TYPE), self.meta().dtype.is_variable())?;
        self.tree.check_range(&range)?;
        self.read_jagged_range_typed(range, out)
    }

    /// Decodes the values of entries `range` into `values` and returns their entry offsets
    /// (`range` + 1 of them, from 0). Offsets built from counts are written into `reuse` when no
    /// one else holds it and it has their length (a caller reading into the same [`Jagged`]
    /// again), else into a new slice.
    pub(super) fn jagged_parts<T: Scalar>(
        &self,
        range: &Range<u64>,
        raw: bool,
        values: &mut Vec<T>,
        reuse: Arc<[u64]>,
    ) -> Result<Arc<[u64]>> {
        let parts = self.decode_range_into::<T>(range, raw, values)?;
        let (start, end) = (range.start, range.end);
        let n_values = if raw {
            values.len() / self.meta().dtype.scalar().size()
        } else {
            values.len()
        };
        let offsets = if let Some((span_start, span)) = parts.counter_offsets {
            // Their offsets are the window of the counter's offsets over the baskets, from 0,
            // kept with the counter's other offsets and shared by its jagged branches.
            let window = &span[(start - span_start) as usize..=(end - span_start) as usize];
            let base = window[0];
            let offsets = if window.len() == span.len() {
                span.clone()
            } else {
                self.counter()?.counter_offsets_or(start..end, || {
                    Ok(window.iter().map(|&o| o - base).collect())
                })?
            };
            if offsets.len() != window.len()
                || offsets.last() != window.last().map(|&o| o - base).as_ref()
            {
                return Err(Error::corrupt(
                    self.location(None, 0),
                    format!(
                        "the counter's offsets of entries {start}.. disagree with its baskets'"
                    ),
                ));
            }
            offsets
        } else {
            counts_to_offsets(&parts.counts, reuse)
                .ok_or_else(|| Error::corrupt(self.location(None, 0), "entry counts overflow"))?
        };
        if offsets.len() as u64 != end - start + 1 {
            return Err(Error::corrupt(
                self.location(None, 0),
                format!(
                    "{} entry counts for entries {start}..{end}",
                    offsets.len() - 1
                ),
            ));
        }
        let sum = offsets.last().copied().unwrap_or(0);
        if sum != n_values as u64 {
            return Err(Error::corrupt(
                self.location(None, 0),
                match self.meta().counter.as_deref() {
                    Some(counter) => format!(
                        "counter {counter:?} adds up to {sum} values for entries {start}..{end}, the baskets hold {n_values}"
                    ),
                    None => format!(
                        "counts add up to {sum} values for entries {start}..{end}, the baskets hold {n_values}"
                    ),
                },
            ));
        }
        Ok(offsets)
    }

    /// The entry offsets (from 0) that this counter branch gives entries `range`, decoded once per
    /// range and kept in the file's small cache, so that the jagged branches sharing a counter
    /// (NanoAOD's `Jet_pt`, `Jet_eta`, ... over `nJet`) do not each decode it again.
    pub(super) fn counter_offsets(&self, range: Range<u64>) -> Result<Arc<[u64]>> {
        self.counter_offsets_or(range.clone(), || {
            let counts = self.read_as_counts(range)?;
            let mut offsets = Vec::with_capacity(counts.len() + 1);
            offsets.push(0);
            if !push_running_sums(&mut offsets, counts) {
                return Err(Error::corrupt(
                    self.location(None, 0),
                    "counter values overflow",
                ));
            }
            Ok(Arc::from(offsets))
        })
    }

    /// This counter's offsets of entries `range` from the file's cache, or made by `make` and
    /// kept there.
    pub(super) fn counter_offsets_or(
        &self,
        range: Range<u64>,
        make: impl FnOnce() -> Result<Arc<[u64]>>,
    ) -> Result<Arc<[u64]>> {
        let key = (self.tree.tree, self.branch, range.start, range.end);
        if let Some(offsets) = self.file().counter_cache.get(key) {
            return Ok(offsets);
        }
        let offsets = make()?;
        let bytes = std::mem::size_of_val(&offsets[..]);
        self.file().counter_cache.put(key, offsets.clone(), bytes);
        Ok(offsets)
    }

    /// As [`BranchReader::read_jagged_range`], into `out` (its allocations reused when large
    /// enough).
    pub(super) fn read_jagged_range_typed<T: Scalar>(
        &self,
        range: Range<u64>,
        out: &mut Jagged<T>,
    ) -> Result<()> {
        let parts = self.jagged_parts::<T>(
            &range,
            false,
            &mut out.values,
            std::mem::replace(&mut out.offsets, Arc::from([])),
        );
        out.offsets = parts.inspect_err(|_| out.values.clear())?;
        Ok(())
    }

    /// Reads every entry of a UTF-8 or byte-string branch as strings (bytes that are not UTF-8 are
    /// replaced, for byte-string branches).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] for other branches; corruption errors, including invalid UTF-8 in a
    /// UTF-8 branch.
    pub fn read_strings(&self) -> Result<Vec<String>> {
        let dtype = self.meta().dtype;
        if !matches!(dtype, DataType::Utf8 | DataType::Bytes) {
            return Err(Error::TypeMismatch {
                tree: self.tree.name().to_owned(),
                branch: self.meta().name.clone(),
                requested: "string".into(),
                actual: dtype,
            });
        }
        let mut raw = Jagged::default();
        self.read_jagged_range_typed::<u8>(0..self.tree.entries(), &mut raw)?;
        (0..raw.len())
            .map(|i| match std::str::from_utf8(raw.entry(i)) {
                Ok(s) => Ok(s.to_owned()),
                Err(_) if dtype == DataType::Bytes => {
                    Ok(String::from_utf8_lossy(raw.entry(i)).into_owned())
                }
                Err(_) => Err(Error::corrupt(
                    self.location(None, 0),
                    format!("entry {i} is not valid UTF-8"),
                )),
            })
            .collect()
    }
}

/// `part` zeroed and then initialised: every [`Scalar`] is valid as all zero bytes
/// (`bytemuck::Zeroable`).
fn zeroed<T: Scalar>(part: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: the writes stay inside `part`; after them every element holds the zero bit
    // pattern, a valid `T` (`Zeroable`), so the slice may be viewed as initialised.
    unsafe {
        std::ptr::write_bytes(part.as_mut_ptr(), 0, part.len());
        assume_init(part)
    }
}

/// `part` viewed as initialised.
///
/// # Safety
/// Every element of `part` must be initialised.
unsafe fn assume_init<T>(part: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller guarantees initialisation.
    unsafe { &mut *(std::ptr::from_mut(part) as *mut [T]) }
}

/// Initialised values viewed as possibly uninitialised, to be written through (with values
/// or zeroes, never left uninitialised).
fn as_uninit<T>(values: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout and every `T` is a valid `MaybeUninit<T>`;
    // the callers write only initialised values through the view.
    unsafe { &mut *(std::ptr::from_mut(values) as *mut [MaybeUninit<T>]) }
}

/// Asks Linux to back the 2 MiB-aligned part of a fresh output of 4 MiB or more with huge pages
/// (as NumPy does for its arrays), before its pages are first written: a bulk read then takes one
/// page fault per 2 MiB of output instead of one per 4 KiB, which on large fresh outputs costs
/// more than decoding them. Only advice: without transparent huge pages nothing changes, and
/// memory already in use (recycled by the allocator) keeps its pages.
fn advise_huge_pages<T>(values: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE_PAGE: usize = 2 << 20;
        let start = values.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let (from, to) = (
            start.next_multiple_of(HUGE_PAGE),
            end / HUGE_PAGE * HUGE_PAGE,
        );
        if end - start >= 2 * HUGE_PAGE && to > from {
            // SAFETY: `from..to` lies inside the allocation behind `values`, which the caller
            // owns; MADV_HUGEPAGE changes how the kernel backs those pages, never their
            // contents. The result is ignored: the advice may be refused.
            unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
}

/// The entry offsets (from 0) of the baskets' counts, one per count and a 0 first: written into
/// `reuse` when it is not shared and has their length, else into a new slice; `None` if a sum
/// could overflow.
fn counts_to_offsets(counts: &[Counts], mut reuse: Arc<[u64]>) -> Option<Arc<[u64]>> {
    let n: usize = counts.iter().flatten().map(Vec::len).sum();
    // Sums of u32 counts: below 2^64 for fewer than 2^32 entries.
    (n as u64).checked_mul(u64::from(u32::MAX))?;
    if Arc::get_mut(&mut reuse).is_none_or(|o| o.len() != n + 1) {
        reuse = Arc::from(vec![0; n + 1]);
    }
    let offsets = Arc::get_mut(&mut reuse).expect("a fresh or unshared slice");
    let (mut i, mut at) = (1, 0u64);
    offsets[0] = 0;
    for basket in counts.iter().flatten() {
        at = fill_count_sums(at, basket, &mut offsets[i..i + basket.len()]);
        i += basket.len();
    }
    Some(reuse)
}
