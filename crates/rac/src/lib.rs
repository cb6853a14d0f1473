//! Random-access compression (RAC) for evtc: a basket's entries are compressed in independently
//! decompressible **units**, listed in a checksummed [`SeekTable`], so that reading one entry
//! decompresses only the unit that holds it.
//!
//! Zhang & Bockelman (2017) compressed every event separately; random reads of small events became
//! ~5x cheaper, but 39-byte events compressed 2.9x worse. evtc closes that gap two ways:
//! - **granularity**: a unit holds consecutive entries until it reaches `min_unit_bytes`
//!   uncompressed bytes, trading a little random-read cost for ratio;
//! - **shared dictionaries**: with zstd, every unit of a branch is compressed against one dictionary
//!   trained from the branch's own entries ([`train_dictionary`]); with lz4 and lzma, against a
//!   prefix of sample entries (LZ4's external dictionary, LZMA2's preset dictionary).
//!
//! This crate knows codecs, not files: evtc-format stores what [`RacEncoder`] produces as the body
//! of a random-access basket.
//!
//! # Layout of a RAC payload
//! ```text
//! offset      size  field
//! 0           4     seek-table length T, u32 little-endian
//! 4           T     seek table (below)
//! 4 + T       ...   units, back to back
//! ```
//! Seek table:
//! ```text
//! u8      version, 1
//! u8      algorithm id (evtc-codecs Algorithm)
//! i8      level
//! u8      flags: bit 0 = units use the branch's dictionary,
//!         bit 1 = units start with their entries' sizes (below); other bits are refused
//! u8      preconditioner id, u8 element width (applied to each unit before compression)
//! varint  unit count U
//! U x     varint entries, varint uncompressed length, varint stored length
//! U x     u32 CRC32 of each unit's stored bytes
//! u32     CRC32 of every table byte before it
//! ```
//! Varints are unsigned LEB128. Unit offsets, first entries and uncompressed offsets are the running
//! sums of the lengths and counts (delta coding).
//!
//! A unit's stored bytes are its compressed data, or, with flag bit 1 ([`FLAG_ENTRY_SIZES`]), the
//! byte lengths of its entries followed by its compressed data, so that a reader of one entry finds
//! it inside the unit without any other source of entry boundaries:
//! ```text
//! u8      shift s (0..=63)
//! u8      bits b (0..=64)
//! ...     one b-bit field per entry of the unit, least significant bit first, packed from the
//!         first byte's lowest bit on, padded with zero bits to a whole byte;
//!         the entry's byte length is field << s
//! ```
//! The lengths add up to the unit's uncompressed length. Data whose compressed form would not be
//! shorter is stored as is: the data part's length then equals the uncompressed length.
//!
//! The compressed form is the codec's own (a zstd frame, an LZ4 block, an xz stream, ...), except
//! with flag bit 0 ([`FLAG_DICTIONARY`], evtc format 1.8 for lzma): zstd frames against the
//! trained dictionary, LZ4 blocks with the dictionary as their external dictionary, and for lzma
//! raw LZMA2 data (the LZMA2 chunks of an xz block, ending with the end-of-data byte `0x00`, with
//! no stream header, block header, index or footer) whose decoder starts with the dictionary's
//! bytes as its history (LZMA2's preset dictionary) and a dictionary size of at least the
//! dictionary's length plus the length the LZMA2 data decodes to.
//!
//! With a preconditioner that makes data shorter (`for`, `delta-for`, `delta-varint`, `sparse`,
//! `runs`; evtc format 1.7; `bitplanes`, 1.9), a data part shorter than the uncompressed length
//! starts with the unsigned LEB128 varint `2 * L + s`, where `L` (less than the uncompressed
//! length) is the length of the unit's preconditioned bytes: `s = 0`, the codec's form of those
//! `L` bytes follows; `s = 1`, the `L` bytes themselves.
//!
//! # Example
//! ```
//! use evtc_codecs::{Codec, Precondition};
//! use evtc_rac::{RacDecoder, RacEncoder, RacOptions, SeekTable};
//!
//! // 1,000 entries of 24 bytes.
//! let data: Vec<u8> = (0..1000u32).flat_map(|i| [i as u8 % 7; 24]).collect();
//! let ends: Vec<usize> = (1..=1000).map(|i| i * 24).collect();
//! let options = RacOptions {
//!     codec: Codec::zstd(5)?,
//!     precondition: Precondition::None,
//!     min_unit_bytes: 512,
//!     entry_sizes: false,
//! };
//! let mut payload = Vec::new();
//! RacEncoder::new().encode(&options, None, &data, &ends, &mut payload)?;
//!
//! let (table, units) = SeekTable::parse(&payload)?;
//! let unit = table.unit_of_entry(500).unwrap();
//! let mut out = vec![0; table.units()[unit].raw_len as usize];
//! RacDecoder::new().decode_unit(&table, unit, units, None, &mut out, true)?;
//! let first = table.units()[unit].raw_offset as usize;
//! assert_eq!(out, &data[first..first + out.len()]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

use std::ops::Range;

use evtc_codecs::precondition::bitplanes;
use evtc_codecs::{
    Algorithm, Codec, Crc32, DecoderDictionary, EncoderDictionary, Kernel, Precondition,
    PrefixDictionary, UnitCompressor, crc32, plane_cuts, with_decompressor,
};

/// A `Result` whose error defaults to this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Errors of RAC encoding and decoding.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The seek table is damaged.
    #[error("corrupt RAC seek table: {0}")]
    CorruptTable(String),
    /// A unit is damaged.
    #[error("corrupt RAC unit {unit}: {reason}")]
    CorruptUnit {
        /// Unit number.
        unit: usize,
        /// What is wrong.
        reason: String,
    },
    /// A codec error.
    #[error(transparent)]
    Codec(#[from] evtc_codecs::Error),
    /// The caller's arguments do not fit together.
    #[error("RAC: {0}")]
    Usage(String),
}

/// The default `min_unit_bytes`: units of at least 2 KiB uncompressed (see BENCHMARKS.md: the
/// granularity sweep of `cargo bench --bench rac` and the random reads of `cargo bench --bench
/// peers`).
pub const DEFAULT_MIN_UNIT_BYTES: usize = 2048;

/// Flag bit: units are compressed against the branch's dictionary.
pub const FLAG_DICTIONARY: u8 = 1;

/// Flag bit: every unit starts with the byte lengths of its entries (layout in the crate docs).
pub const FLAG_ENTRY_SIZES: u8 = 2;

/// How to encode a basket's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RacOptions {
    /// Codec of every unit.
    pub codec: Codec,
    /// Preconditioner applied to each unit before compression.
    pub precondition: Precondition,
    /// A unit takes consecutive entries until it holds at least this many bytes (0 or 1: one entry
    /// per unit).
    pub min_unit_bytes: usize,
    /// Store each unit's entry lengths in the unit ([`FLAG_ENTRY_SIZES`]), for entries of varying
    /// length whose boundaries the reader has nowhere else.
    pub entry_sizes: bool,
}

/// One unit in a [`SeekTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// First entry in the unit, relative to the basket.
    pub first_entry: u64,
    /// Entries in the unit.
    pub entries: u64,
    /// Offset of the unit's uncompressed bytes in the basket's uncompressed data.
    pub raw_offset: u64,
    /// Uncompressed length.
    pub raw_len: u64,
    /// Offset of the unit's stored bytes in the units region.
    pub offset: u64,
    /// Stored length (with the entry sizes, if the table has [`FLAG_ENTRY_SIZES`]).
    pub stored_len: u64,
    /// CRC32 of the stored bytes.
    pub crc32: u32,
}

/// The seek table of a RAC payload (layout in the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeekTable {
    /// Codec of the units.
    pub codec: Codec,
    /// Flags ([`FLAG_DICTIONARY`]).
    pub flags: u8,
    /// Preconditioner of the units.
    pub precondition: Precondition,
    units: Vec<Unit>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes
            .get(*at)
            .ok_or_else(|| Error::CorruptTable("truncated varint".into()))?;
        *at += 1;
        v |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(Error::CorruptTable("varint longer than 64 bits".into()))
}

/// Appends the packed entry lengths of one unit (layout in the crate docs) to `out`.
fn pack_sizes(lengths: impl Iterator<Item = u64> + Clone, out: &mut Vec<u8>) {
    let all = lengths.clone().fold(0u64, |a, l| a | l);
    let shift = if all == 0 { 0 } else { all.trailing_zeros() };
    let bits = 64 - (all >> shift).leading_zeros();
    out.push(shift as u8);
    out.push(bits as u8);
    let (mut acc, mut filled) = (0u128, 0u32);
    for length in lengths {
        acc |= u128::from(length >> shift) << filled;
        filled += bits;
        while filled >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(acc as u8);
    }
}

/// The length of the packed entry sizes at the start of a unit's stored bytes, from its first two
/// bytes and entry count; `None` when it does not fit `stored`.
fn sizes_len(stored: &[u8], entries: u64) -> Option<usize> {
    let bits = u64::from(*stored.get(1)?);
    let len = 2 + usize::try_from(entries.checked_mul(bits)?.div_ceil(8)).ok()?;
    (len <= stored.len()).then_some(len)
}

/// Sets `out[i]` to `each(field i)` of the first `out.len()` fields of `bits` bits (at most 64),
/// packed LSB first in `packed` (at least `out.len() * bits` bits long), in order.
fn unpack_fields<O>(packed: &[u8], bits: u32, out: &mut [O], mut each: impl FnMut(u64) -> O) {
    let entries = out.len();
    let mask = u64::MAX.checked_shr(64 - bits).unwrap_or(0);
    let bits64 = u64::from(bits);
    let mut first = 0;
    if (1..=57).contains(&bits) {
        // The 8 bytes from a field's first byte, shifted to the field, hold at least 57 of its
        // bits and the next ones: as many whole fields as fit in 57 bits come from one read, while
        // those 8 bytes lie in `packed`.
        let per_window = (57 / bits) as usize;
        let mut bit = 0u64;
        while entries - first >= per_window {
            let at = (bit / 8) as usize;
            let Some(bytes) = packed.get(at..at + 8) else {
                break;
            };
            let mut window = u64::from_le_bytes(bytes.try_into().expect("8 bytes")) >> (bit % 8);
            for slot in &mut out[first..first + per_window] {
                *slot = each(window & mask);
                window >>= bits;
            }
            first += per_window;
            bit += per_window as u64 * bits64;
        }
    }
    // The last fields' windows: the final 8 bytes (or fewer), then 8 zero bytes.
    let base = packed.len().saturating_sub(8);
    let mut last = [0u8; 16];
    last[..packed.len() - base].copy_from_slice(&packed[base..]);
    let window_at = |bit: u64| -> u64 {
        let at = (bit / 8) as usize;
        let window = match at.checked_sub(base) {
            Some(i) if i < 8 => &last[i..i + 8],
            _ => packed.get(at..at + 8).unwrap_or(&last[8..]),
        };
        u64::from_le_bytes(window.try_into().expect("8 bytes")) >> (bit % 8)
    };
    for (i, slot) in out.iter_mut().enumerate().skip(first) {
        let bit = i as u64 * bits64;
        let field = if bits <= 57 {
            window_at(bit) & mask
        } else {
            // Wide fields span up to 9 bytes: two reads.
            (window_at(bit) & 0xFFFF_FFFF | window_at(bit + 32) << 32) & mask
        };
        *slot = each(field);
    }
}

/// Appends `entries` lengths packed in `bits`-bit fields shifted by `shift` (`bits + shift <= 64`,
/// `packed` long enough) to `out`; returns their sum.
fn unpack_sizes(packed: &[u8], entries: u64, shift: u32, bits: u32, out: &mut Vec<u64>) -> u128 {
    let mut sum = 0u128;
    let first = out.len();
    out.resize(first + entries as usize, 0);
    unpack_fields(packed, bits, &mut out[first..], |field| {
        let length = field << shift;
        sum += u128::from(length);
        length
    });
    sum
}

/// A unit's packed entry sizes (layout in the crate docs).
struct PackedSizes<'s> {
    /// Left shift of every field.
    shift: u32,
    /// Bits per field.
    bits: u32,
    /// The fields.
    packed: &'s [u8],
}

/// Grows `out` by `entries` zeros (refusing, as unit `unit`'s corruption, a count memory cannot
/// hold); returns where they start.
fn grow<T: Copy + Default>(out: &mut Vec<T>, entries: u64, unit: usize) -> Result<usize> {
    let first = out.len();
    usize::try_from(entries)
        .ok()
        .filter(|&n| out.try_reserve(n).is_ok())
        .ok_or_else(|| corrupt_unit(unit, "too many entries for memory"))?;
    out.resize(first + entries as usize, T::default());
    Ok(first)
}

/// Why an entry of whole values is refused when its size is not a multiple of the value size.
const PARTIAL_VALUE: &str = "an entry size is not a whole number of values";

/// The last checks of a unit's entries counted in values of `1 << value_shift` bytes: `Ok` when
/// no `problem` was met and their `values` add up to the unit's (with `all` of its entries; with
/// its first entries, stay within it); otherwise `out` is cut back to `first` and the unit is
/// corrupt, for that problem or the sum.
fn check_values<T>(
    out: &mut Vec<T>,
    first: usize,
    (unit, u): (usize, &Unit),
    value_shift: u32,
    problem: Option<&str>,
    (values, all): (u128, bool),
) -> Result<()> {
    let unit_values = u128::from(u.raw_len >> value_shift);
    let reason = match problem {
        Some(problem) => problem.to_owned(),
        None if values == unit_values || !all && values < unit_values => return Ok(()),
        None => format!(
            "entry sizes add up to {} bytes, the unit holds {}",
            values << value_shift,
            u.raw_len
        ),
    };
    out.truncate(first);
    Err(corrupt_unit(unit, &reason))
}

/// [`Error::CorruptUnit`] of `unit`.
fn corrupt_unit(unit: usize, reason: &str) -> Error {
    Error::CorruptUnit {
        unit,
        reason: reason.to_owned(),
    }
}

impl SeekTable {
    /// The stored bytes of unit `unit` in a payload's units region.
    ///
    /// # Errors
    /// [`Error::Usage`] if there is no such unit; [`Error::CorruptUnit`] if it runs past the region.
    pub fn stored_unit<'r>(&self, unit: usize, units_region: &'r [u8]) -> Result<&'r [u8]> {
        let u = self
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        usize::try_from(u.offset)
            .ok()
            .and_then(|start| {
                units_region.get(start..start.checked_add(usize::try_from(u.stored_len).ok()?)?)
            })
            .ok_or_else(|| Error::CorruptUnit {
                unit,
                reason: "runs past the payload".into(),
            })
    }

    /// Checks unit `unit`'s stored bytes against its CRC32, as the decoders do when asked to
    /// verify: for a reader that reads the unit's entry sizes before decoding it.
    ///
    /// # Errors
    /// [`Error::Usage`] if there is no such unit; [`Error::CorruptUnit`] on a mismatch.
    pub fn check_unit(&self, unit: usize, stored: &[u8]) -> Result<()> {
        let u = self
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        let computed = crc32(stored);
        if computed != u.crc32 {
            return Err(corrupt_unit(
                unit,
                &format!(
                    "checksum mismatch: stored {:#010x}, computed {computed:#010x}",
                    u.crc32
                ),
            ));
        }
        Ok(())
    }

    /// Whether units store their entries' lengths ([`FLAG_ENTRY_SIZES`]).
    pub fn has_entry_sizes(&self) -> bool {
        self.flags & FLAG_ENTRY_SIZES != 0
    }

    /// Appends the byte lengths of the entries of unit `unit` to `out`, read from the unit's stored
    /// bytes (as for [`RacDecoder::decode_stored_unit`]). Checks that there is one per entry and
    /// that they add up to the unit's uncompressed length; does not check the unit's CRC32 (decode
    /// the unit first, or check it, to tell damage from a bad table).
    ///
    /// # Errors
    /// [`Error::Usage`] if the table has no entry sizes or no such unit; [`Error::CorruptUnit`] if the
    /// sizes are damaged.
    pub fn entry_sizes(&self, unit: usize, stored: &[u8], out: &mut Vec<u64>) -> Result<()> {
        let (u, sizes) = self.packed_sizes(unit, stored)?;
        let start = out.len();
        out.try_reserve(u.entries as usize)
            .map_err(|_| corrupt_unit(unit, "too many entries for memory"))?;
        let total = unpack_sizes(sizes.packed, u.entries, sizes.shift, sizes.bits, out);
        if total != u128::from(u.raw_len) {
            out.truncate(start);
            return Err(corrupt_unit(
                unit,
                &format!(
                    "entry sizes add up to {total} bytes, the unit holds {}",
                    u.raw_len
                ),
            ));
        }
        Ok(())
    }

    /// Appends the number of values of `1 << value_shift` bytes in each entry of unit `unit` to
    /// `out`: its entry sizes ([`SeekTable::entry_sizes`]) as counts, in one pass, for a bulk
    /// reader that keeps counts. Checks as [`SeekTable::entry_sizes`] does, that every entry holds
    /// whole values, and that each count fits a `u32`.
    ///
    /// # Errors
    /// As for [`SeekTable::entry_value_ends`]; [`Error::CorruptUnit`] for an entry of 2^32 values
    /// or more.
    pub fn entry_value_counts(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let (u, sizes, (up, down)) = self.value_sizes(unit, stored, value_shift)?;
        let first = grow(out, u.entries, unit)?;
        let (mut total, mut wide, mut partial) = (0u128, false, false);
        let counts = &mut out[first..];
        if down == 0 && sizes.bits + up <= 32 && u.entries <= u64::from(u32::MAX) {
            // The usual case: every count fits a u32 and their sum a u64, so a tight unpacking
            // loop, then a sum the compiler vectorises.
            unpack_fields(sizes.packed, sizes.bits, counts, |field| {
                (field << up) as u32
            });
            total = u128::from(counts.iter().map(|&c| u64::from(c)).sum::<u64>());
        } else {
            unpack_fields(sizes.packed, sizes.bits, counts, |field| {
                partial |= field & ((1 << down) - 1) != 0;
                let count = field << up >> down;
                total += u128::from(count);
                wide |= count > u64::from(u32::MAX);
                count as u32
            });
        }
        let problem = if partial {
            Some(PARTIAL_VALUE)
        } else {
            wide.then_some("an entry holds 2^32 values or more")
        };
        check_values(out, first, (unit, u), value_shift, problem, (total, true))
    }

    /// Appends where each entry of unit `unit` ends, counted in values of `1 << value_shift` bytes
    /// from `start` (the unit's first value), to `out`: the running sums of its entry sizes
    /// ([`SeekTable::entry_sizes`]) in one pass, for a reader that slices entries out of the
    /// unit's values. Checks as [`SeekTable::entry_sizes`] does, and that every entry holds whole
    /// values.
    ///
    /// # Errors
    /// As for [`SeekTable::entry_sizes`]; [`Error::CorruptUnit`] if an entry or the unit does not
    /// hold whole values.
    pub fn entry_value_ends(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        start: u64,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        self.value_ends(unit, stored, value_shift, start, None, out)
    }

    /// As [`SeekTable::entry_value_ends`], for the first `entries` entries of unit `unit` only: for
    /// a reader of one entry, which needs where it and those before it end. Their sizes are
    /// checked to stay inside the unit, not to add up to it (which needs every size): check the
    /// unit's CRC32 first ([`SeekTable::check_unit`]) to know they are the ones written.
    ///
    /// # Errors
    /// As for [`SeekTable::entry_value_ends`]; [`Error::Usage`] if the unit has fewer entries.
    pub fn first_entry_value_ends(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        start: u64,
        entries: u64,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        self.value_ends(unit, stored, value_shift, start, Some(entries), out)
    }

    /// [`SeekTable::entry_value_ends`] of every entry of the unit, or of its first `entries`.
    fn value_ends(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        start: u64,
        entries: Option<u64>,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let (u, sizes, (up, down)) = self.value_sizes(unit, stored, value_shift)?;
        let n = match entries {
            Some(n) if n > u.entries => {
                return Err(Error::Usage(format!(
                    "unit {unit} holds {} entries, not {n}",
                    u.entries
                )));
            }
            Some(n) => n,
            None => u.entries,
        };
        let most = (u64::MAX >> (64 - sizes.bits.max(1))) << up;
        let cannot_overflow = n
            .checked_mul(most)
            .and_then(|m| m.checked_add(start))
            .is_some();
        let first = grow(out, n, unit)?;
        let (mut end, mut overflow, mut partial) = (start, false, false);
        let (packed, bits, ends) = (sizes.packed, sizes.bits, &mut out[first..]);
        if down == 0 && cannot_overflow {
            // The usual case, a tight loop: no entry can hold part of a value, no sum overflow.
            unpack_fields(packed, bits, ends, |field| {
                end += field << up;
                end
            });
        } else {
            unpack_fields(packed, bits, ends, |field| {
                partial |= field & ((1 << down) - 1) != 0;
                let (sum, over) = end.overflowing_add(field << up >> down);
                (end, overflow) = (sum, overflow | over);
                end
            });
        }
        let problem = if overflow {
            Some("entry sizes overflow")
        } else {
            partial.then_some(PARTIAL_VALUE)
        };
        let values = u128::from(end.wrapping_sub(start));
        let all = entries.is_none();
        check_values(out, first, (unit, u), value_shift, problem, (values, all))
    }

    /// Unit `unit` and its packed entry sizes, checked to lie in `stored` with a field width and
    /// shift that fit 64 bits.
    fn packed_sizes<'s>(&self, unit: usize, stored: &'s [u8]) -> Result<(&Unit, PackedSizes<'s>)> {
        if !self.has_entry_sizes() {
            return Err(Error::Usage("the units store no entry sizes".into()));
        }
        let u = self
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        let len = sizes_len(stored, u.entries)
            .ok_or_else(|| corrupt_unit(unit, "entry sizes run past the unit"))?;
        let (shift, bits) = (u32::from(stored[0]), u32::from(stored[1]));
        // Lengths must fit 64 bits once shifted: every field's width plus the shift.
        if bits + shift > 64 {
            return Err(corrupt_unit(unit, "entry-size field width out of range"));
        }
        Ok((
            u,
            PackedSizes {
                shift,
                bits,
                packed: &stored[2..len],
            },
        ))
    }

    /// [`SeekTable::packed_sizes`] of a unit that holds whole values of `1 << value_shift` bytes,
    /// with the shifts that turn a field into a count of values: fields shifted left by `shift`
    /// are byte lengths, so a field shifted left by `up`, or right by `down` (with no bit lost when
    /// the entry holds whole values), counts its entry's values (`bits + shift <= 64`: no shift
    /// overflows).
    fn value_sizes<'s>(
        &self,
        unit: usize,
        stored: &'s [u8],
        value_shift: u32,
    ) -> Result<(&Unit, PackedSizes<'s>, (u32, u32))> {
        let (u, sizes) = self.packed_sizes(unit, stored)?;
        if value_shift >= 64 || u.raw_len & ((1 << value_shift) - 1) != 0 {
            return Err(corrupt_unit(unit, "the unit does not hold whole values"));
        }
        let shifts = match sizes.shift.checked_sub(value_shift) {
            Some(up) => (up, 0),
            None => (0, value_shift - sizes.shift),
        };
        Ok((u, sizes, shifts))
    }

    /// The units, in entry order.
    pub fn units(&self) -> &[Unit] {
        &self.units
    }

    /// Total entries.
    pub fn entries(&self) -> u64 {
        self.units.last().map_or(0, |u| u.first_entry + u.entries)
    }

    /// Total uncompressed bytes.
    pub fn raw_len(&self) -> u64 {
        self.units.last().map_or(0, |u| u.raw_offset + u.raw_len)
    }

    /// The unit holding `entry`, if the basket has it.
    pub fn unit_of_entry(&self, entry: u64) -> Option<usize> {
        let units = &self.units;
        let total = self.entries();
        if entry >= total {
            return None;
        }
        // Units hold about as many entries as each other: the unit an even split puts the entry
        // in, or a neighbour, is nearly always the one; a random read then loads one or two units
        // where a binary search over a basket's hundred loads seven, one after the other.
        let guess = ((entry as f64 / total as f64) * units.len() as f64) as usize;
        let holds = |i: usize| {
            let u = &units[i];
            u.first_entry <= entry && entry - u.first_entry < u.entries
        };
        let guess = guess.min(units.len() - 1);
        let near = [guess, guess + 1, guess.wrapping_sub(1)];
        if let Some(i) = near.into_iter().find(|&i| i < units.len() && holds(i)) {
            return Some(i);
        }
        let i = units.partition_point(|u| u.first_entry + u.entries <= entry);
        (i < units.len()).then_some(i)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = vec![
            1,
            self.codec.algorithm() as u8,
            self.codec.level() as i8 as u8,
            self.flags,
        ];
        out.push(self.precondition.id());
        out.push(self.precondition.width() as u8);
        put_varint(&mut out, self.units.len() as u64);
        for u in &self.units {
            put_varint(&mut out, u.entries);
            put_varint(&mut out, u.raw_len);
            put_varint(&mut out, u.stored_len);
        }
        for u in &self.units {
            out.extend_from_slice(&u.crc32.to_le_bytes());
        }
        let crc = crc32(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses the seek table at the start of a RAC payload; returns it and the units region.
    ///
    /// # Errors
    /// [`Error::CorruptTable`] for a checksum mismatch, truncation, unknown fields or units that
    /// do not fit the units region.
    pub fn parse(payload: &[u8]) -> Result<(SeekTable, &[u8])> {
        let len = SeekTable::table_len(payload)?;
        let table = payload
            .get(4..4usize.saturating_add(len))
            .ok_or_else(|| Error::CorruptTable("table runs past the payload".into()))?;
        let units_region = &payload[4 + len..];
        Ok((
            SeekTable::parse_table(table, units_region.len() as u64)?,
            units_region,
        ))
    }

    /// The length of the seek table, from the first 4 bytes of a RAC payload (for reading the table
    /// alone, then single units, with positional reads).
    ///
    /// # Errors
    /// [`Error::CorruptTable`] if fewer than 4 bytes are given.
    pub fn table_len(payload_start: &[u8]) -> Result<usize> {
        let len = payload_start
            .get(..4)
            .ok_or_else(|| Error::CorruptTable("payload shorter than the table length".into()))?;
        Ok(u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize)
    }

    /// Parses a seek table (the `T` bytes after the length) of a payload whose units region is
    /// `units_len` bytes long.
    ///
    /// # Errors
    /// As for [`SeekTable::parse`].
    pub fn parse_table(table: &[u8], units_len: u64) -> Result<SeekTable> {
        let bad = |m: &str| Error::CorruptTable(m.to_owned());
        if table.len() < 11 {
            return Err(bad("table too short"));
        }
        let (body, stored) = table.split_at(table.len() - 4);
        let stored = u32::from_le_bytes(stored.try_into().expect("4 bytes"));
        let computed = crc32(body);
        if stored != computed {
            return Err(Error::CorruptTable(format!(
                "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        if body[0] != 1 {
            return Err(Error::CorruptTable(format!("unknown version {}", body[0])));
        }
        let algorithm = Algorithm::from_id(body[1])?;
        let codec = Codec::new(algorithm, i32::from(body[2] as i8))
            .map_err(|_| bad("invalid codec level"))?;
        let flags = body[3];
        if flags & !(FLAG_DICTIONARY | FLAG_ENTRY_SIZES) != 0 {
            return Err(Error::CorruptTable(format!("unknown flags {flags:#04x}")));
        }
        let precondition = Precondition::from_parts(body[4], body[5])?;
        let mut at = 6;
        let count = get_varint(body, &mut at)?;
        // Every unit takes at least 3 varint bytes and 4 CRC bytes: bound the count before allocating.
        if count > (body.len() / 7) as u64 {
            return Err(bad("unit count larger than the table can hold"));
        }
        let mut units = Vec::with_capacity(count as usize);
        let (mut entry, mut raw, mut offset) = (0u64, 0u64, 0u64);
        for _ in 0..count {
            let entries = get_varint(body, &mut at)?;
            let raw_len = get_varint(body, &mut at)?;
            let stored_len = get_varint(body, &mut at)?;
            if entries == 0 {
                return Err(bad("a unit with no entries"));
            }
            if stored_len > raw_len && algorithm == Algorithm::None && flags & FLAG_ENTRY_SIZES == 0
            {
                return Err(bad("stored unit longer than its data"));
            }
            units.push(Unit {
                first_entry: entry,
                entries,
                raw_offset: raw,
                raw_len,
                offset,
                stored_len,
                crc32: 0,
            });
            entry = entry
                .checked_add(entries)
                .ok_or_else(|| bad("entry count overflows"))?;
            raw = raw
                .checked_add(raw_len)
                .ok_or_else(|| bad("length overflows"))?;
            offset = offset
                .checked_add(stored_len)
                .ok_or_else(|| bad("length overflows"))?;
        }
        for u in &mut units {
            let crc = body
                .get(at..at + 4)
                .ok_or_else(|| bad("truncated unit checksums"))?;
            u.crc32 = u32::from_le_bytes(crc.try_into().expect("4 bytes"));
            at += 4;
        }
        if at != body.len() {
            return Err(bad("bytes after the unit checksums"));
        }
        if offset != units_len {
            return Err(Error::CorruptTable(format!(
                "units add up to {offset} bytes, the payload holds {units_len}"
            )));
        }
        Ok(SeekTable {
            codec,
            flags,
            precondition,
            units,
        })
    }
}

/// Encodes baskets; reuses scratch memory across calls.
#[derive(Debug, Default)]
pub struct RacEncoder {
    scratch: Vec<u8>,
}

impl RacEncoder {
    /// A fresh encoder.
    pub fn new() -> RacEncoder {
        RacEncoder::default()
    }

    /// Appends the data part of one unit of `raw` bytes to `out`: the compressed preconditioned
    /// bytes, for a packing preconditioner behind their length (crate docs), or `raw` as is when
    /// neither is shorter.
    fn compress_unit(
        &mut self,
        precondition: Precondition,
        compressor: &mut UnitCompressor<'_>,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let at = out.len();
        if precondition.keeps_length() {
            let source = if precondition == Precondition::None {
                raw
            } else {
                self.scratch.resize(raw.len(), 0);
                Kernel::best().apply(precondition, raw, &mut self.scratch);
                &self.scratch[..]
            };
            let cuts = plane_cuts(compressor.codec(), precondition, source);
            if compressor.compress_segmented(source, &cuts, out)? >= raw.len() {
                out.truncate(at);
                out.extend_from_slice(raw);
            }
            return Ok(());
        }
        self.scratch.clear();
        Kernel::best().encode(precondition, raw, &mut self.scratch);
        if self.scratch.len() >= raw.len() {
            // Readers bound the packed length by the data's: store the data as is.
            out.extend_from_slice(raw);
            return Ok(());
        }
        let packed = self.scratch.len() as u64;
        put_varint(out, 2 * packed);
        let cuts = plane_cuts(compressor.codec(), precondition, &self.scratch);
        let n = compressor.compress_segmented(&self.scratch, &cuts, out)?;
        if n as u64 >= packed {
            out.truncate(at);
            put_varint(out, 2 * packed + 1);
            out.extend_from_slice(&self.scratch);
        }
        if out.len() - at >= raw.len() {
            out.truncate(at);
            out.extend_from_slice(raw);
        }
        Ok(())
    }

    /// Encodes the entries of one basket into a RAC payload appended to `out`. Entry `i` is
    /// `data[ends[i - 1]..ends[i]]` (`ends[-1] = 0`); `dictionary` is the branch's zstd dictionary
    /// or prefix (lz4, lzma), if any.
    ///
    /// # Errors
    /// [`Error::Usage`] if `ends` is not non-decreasing up to `data.len()`; codec errors.
    pub fn encode(
        &mut self,
        options: &RacOptions,
        dictionary: Option<&EncodeDictionary<'_>>,
        data: &[u8],
        ends: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<SeekTable> {
        if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().copied().unwrap_or(0) != data.len() {
            return Err(Error::Usage(
                "entry ends must increase up to the data length".into(),
            ));
        }
        let (zstd_dict, prefix) = match dictionary {
            Some(EncodeDictionary::Zstd(d)) => (Some(*d), &[][..]),
            Some(EncodeDictionary::Prefix(p)) => (None, *p),
            None => (None, &[][..]),
        };
        let uses_dictionary = match options.codec.algorithm() {
            Algorithm::Zstd => zstd_dict.is_some(),
            Algorithm::Lz4 | Algorithm::Lzma => !prefix.is_empty(),
            _ => false,
        };
        let mut compressor = UnitCompressor::new(options.codec, zstd_dict, prefix)?;
        let mut units = Vec::new();
        let mut stored = Vec::with_capacity(data.len() / 2);
        let (mut first, mut start) = (0usize, 0usize);
        while first < ends.len() {
            // Take entries until the unit reaches min_unit_bytes.
            let mut last = first;
            while last + 1 < ends.len() && ends[last] - start < options.min_unit_bytes {
                last += 1;
            }
            let end = ends[last];
            let raw = &data[start..end];
            let at = stored.len();
            if options.entry_sizes {
                let start_of = |e: usize| if e == 0 { 0 } else { ends[e - 1] };
                let lengths = (first..=last).map(|e| (ends[e] - start_of(e)) as u64);
                pack_sizes(lengths, &mut stored);
            }
            self.compress_unit(options.precondition, &mut compressor, raw, &mut stored)?;
            let stored_len = (stored.len() - at) as u64;
            units.push(Unit {
                first_entry: first as u64,
                entries: (last - first + 1) as u64,
                raw_offset: start as u64,
                raw_len: raw.len() as u64,
                offset: at as u64,
                stored_len,
                crc32: Crc32::new().update(&stored[at..]).finish(),
            });
            first = last + 1;
            start = end;
        }
        let table = SeekTable {
            codec: options.codec,
            flags: if uses_dictionary { FLAG_DICTIONARY } else { 0 }
                | if options.entry_sizes {
                    FLAG_ENTRY_SIZES
                } else {
                    0
                },
            precondition: options.precondition,
            units,
        };
        let encoded = table.encode();
        out.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
        out.extend_from_slice(&encoded);
        out.extend_from_slice(&stored);
        Ok(table)
    }
}

/// A branch's dictionary on the encoding side.
#[derive(Debug, Clone, Copy)]
pub enum EncodeDictionary<'d> {
    /// A prepared zstd dictionary.
    Zstd(&'d EncoderDictionary),
    /// Sample bytes that stand before each unit as its history (LZ4's external dictionary,
    /// LZMA2's preset dictionary).
    Prefix(&'d [u8]),
}

/// A branch's dictionary on the decoding side.
#[derive(Debug, Clone, Copy)]
pub enum DecodeDictionary<'d> {
    /// A prepared zstd dictionary.
    Zstd(&'d DecoderDictionary),
    /// The prefix the units were compressed with (lz4, lzma).
    Prefix(&'d PrefixDictionary),
}

/// Decodes units; reuses its scratch memory, and decompresses with its thread's backend contexts
/// ([`evtc_codecs::with_decompressor`]), so that a decoder made for a single read creates none.
#[derive(Debug, Default)]
pub struct RacDecoder {
    scratch: Vec<u8>,
    /// The packed bytes a codec decodes for a preconditioner that makes data shorter, apart from
    /// `scratch`, into which a `bitplanes` unit read in part expands its bitshuffle.
    packed: Vec<u8>,
    /// The preconditioner and length of the unit whose preconditioned bytes `scratch` holds,
    /// when [`RacDecoder::decode_stored_unit_part`] undid the preconditioner for part of it only.
    unfinished: Option<(Precondition, usize)>,
}

impl RacDecoder {
    /// A fresh decoder.
    pub fn new() -> RacDecoder {
        RacDecoder::default()
    }

    /// Decodes unit `unit` into `out` (exactly its uncompressed length), verifying its CRC32 when
    /// `verify` is set.
    ///
    /// # Errors
    /// [`Error::CorruptUnit`] for checksum or size problems; [`Error::Usage`] if the table needs a
    /// dictionary that was not given; codec errors.
    pub fn decode_unit(
        &mut self,
        table: &SeekTable,
        unit: usize,
        units_region: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
    ) -> Result<()> {
        let stored = table.stored_unit(unit, units_region)?;
        self.decode_stored_unit(table, unit, stored, dictionary, out, verify)
    }

    /// Decodes unit `unit` of `table` from its stored bytes alone (read with a positional read at
    /// `4 + T + unit.offset` of the payload), verifying its CRC32 when `verify` is set.
    ///
    /// # Errors
    /// As for [`RacDecoder::decode_unit`]; [`Error::CorruptUnit`] if `stored` has the wrong length.
    pub fn decode_stored_unit(
        &mut self,
        table: &SeekTable,
        unit: usize,
        stored: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
    ) -> Result<()> {
        self.decode_stored_unit_part(table, unit, stored, dictionary, out, verify, None)
            .map(|_| ())
    }

    /// As [`RacDecoder::decode_stored_unit`], for a reader that needs the bytes `part` of the
    /// unit's data (one entry's values; `None`: all of them): decompresses the unit and, where the
    /// unit's preconditioner allows ([`Kernel::undo_part`]: shuffles and bitshuffle), undoes it for
    /// `part` only (and for the bytes of its elements' groups), leaving the rest of `out` as it
    /// was. Returns whether `out` holds the whole unit; if not, [`RacDecoder::finish_unit`]
    /// completes it as long as this decoder decodes nothing else in between.
    ///
    /// # Errors
    /// As for [`RacDecoder::decode_stored_unit`]; [`Error::Usage`] if `part` lies outside the unit.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_stored_unit_part(
        &mut self,
        table: &SeekTable,
        unit: usize,
        stored: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
        part: Option<Range<usize>>,
    ) -> Result<bool> {
        if let Some(part) = &part
            && (part.start > part.end || part.end > out.len())
        {
            return Err(Error::Usage(format!(
                "bytes {part:?} are not in a unit of {} bytes",
                out.len()
            )));
        }
        self.unfinished = None;
        let u = table
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        let bad = |reason: String| Error::CorruptUnit { unit, reason };
        if stored.len() as u64 != u.stored_len {
            return Err(bad("wrong stored length".into()));
        }
        if out.len() as u64 != u.raw_len {
            return Err(Error::Usage(format!(
                "unit {unit} holds {} bytes, the buffer {}",
                u.raw_len,
                out.len()
            )));
        }
        if verify {
            table.check_unit(unit, stored)?;
        }
        let stored = if table.has_entry_sizes() {
            let len = sizes_len(stored, u.entries)
                .ok_or_else(|| bad("entry sizes run past the unit".into()))?;
            &stored[len..]
        } else {
            stored
        };
        if stored.len() as u64 == u.raw_len {
            out.copy_from_slice(stored);
            return Ok(true);
        }
        let algorithm = table.codec.algorithm();
        let (zstd_dict, prefix) = match (table.flags & FLAG_DICTIONARY != 0, dictionary) {
            (false, _) => (None, None),
            (true, Some(DecodeDictionary::Zstd(d))) if algorithm == Algorithm::Zstd => {
                (Some(*d), None)
            }
            (true, Some(DecodeDictionary::Prefix(p)))
                if matches!(algorithm, Algorithm::Lz4 | Algorithm::Lzma) =>
            {
                (None, Some(*p))
            }
            (true, None) => {
                return Err(Error::Usage(
                    "the units need the branch's dictionary".into(),
                ));
            }
            (true, Some(_)) => {
                return Err(Error::Usage(format!(
                    "the dictionary given is not one for {} units",
                    algorithm.name()
                )));
            }
        };
        let precondition = table.precondition;
        if precondition == Precondition::None {
            with_decompressor(|d| d.decompress_unit(algorithm, zstd_dict, prefix, stored, out))?;
            return Ok(true);
        }
        if precondition.keeps_length() {
            let len = out.len();
            let scratch = evtc_codecs::scratch(&mut self.scratch, len);
            with_decompressor(|d| {
                d.decompress_unit(algorithm, zstd_dict, prefix, stored, scratch)
            })?;
            let kernel = Kernel::best();
            if let Some(part) = part
                && kernel.undo_part(precondition, scratch, out, part)
            {
                self.unfinished = Some((precondition, len));
                return Ok(false);
            }
            kernel.undo(precondition, scratch, out);
            return Ok(true);
        }
        let mut at = 0;
        let head = get_varint(stored, &mut at).map_err(|_| bad("no packed length".into()))?;
        let packed = head >> 1;
        // Shorter than the data, so never a larger allocation than the output.
        if packed >= u.raw_len {
            return Err(bad(format!(
                "{packed} packed bytes for {} bytes of data",
                u.raw_len
            )));
        }
        let packed = packed as usize;
        let rest = &stored[at..];
        let packed_bytes = if head & 1 == 1 {
            if rest.len() != packed {
                return Err(bad(format!(
                    "{} stored bytes for {packed} packed bytes",
                    rest.len()
                )));
            }
            rest
        } else {
            let scratch = evtc_codecs::scratch(&mut self.packed, packed);
            with_decompressor(|d| d.decompress_unit(algorithm, zstd_dict, prefix, rest, scratch))?;
            scratch
        };
        let kernel = Kernel::best();
        // A `bitplanes` unit read for part of its values: its bitshuffle, then that part of it
        // (the rest when the unit is finished).
        if let (Precondition::BitPlanes(width), Some(part)) = (precondition, part) {
            let len = out.len();
            let image = evtc_codecs::scratch(&mut self.scratch, len);
            bitplanes::expand(width, packed_bytes, image)?;
            let bitshuffle = Precondition::BitShuffle(width);
            if kernel.undo_part(bitshuffle, image, out, part) {
                self.unfinished = Some((bitshuffle, len));
                return Ok(false);
            }
            kernel.undo(bitshuffle, image, out);
            return Ok(true);
        }
        kernel.decode(precondition, packed_bytes, out)?;
        Ok(true)
    }

    /// Completes into `out` the unit that the last [`RacDecoder::decode_stored_unit_part`] decoded
    /// in part (`out` holds that part already, and is as long as the unit).
    ///
    /// # Errors
    /// [`Error::Usage`] if the last decode left no unit unfinished, or `out` is not its length.
    pub fn finish_unit(&mut self, out: &mut [u8]) -> Result<()> {
        match self.unfinished.take() {
            Some((precondition, len)) if len == out.len() => {
                Kernel::best().undo(precondition, &self.scratch[..len], out);
                Ok(())
            }
            Some((_, len)) => Err(Error::Usage(format!(
                "the unfinished unit holds {len} bytes, the buffer {}",
                out.len()
            ))),
            None => Err(Error::Usage("no unit was decoded in part".into())),
        }
    }

    /// Decodes every unit into `out` (the basket's whole uncompressed data).
    ///
    /// # Errors
    /// As for [`RacDecoder::decode_unit`].
    pub fn decode_all(
        &mut self,
        table: &SeekTable,
        units_region: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
    ) -> Result<()> {
        if out.len() as u64 != table.raw_len() {
            return Err(Error::Usage(format!(
                "the units hold {} bytes, the buffer {}",
                table.raw_len(),
                out.len()
            )));
        }
        for (i, u) in table.units.iter().enumerate() {
            let range = u.raw_offset as usize..(u.raw_offset + u.raw_len) as usize;
            self.decode_unit(table, i, units_region, dictionary, &mut out[range], verify)?;
        }
        Ok(())
    }
}

/// Trains a branch dictionary from sample entries (`data` with entry `ends`, as for
/// [`RacEncoder::encode`]): the samples are the units [`RacEncoder::encode`] would make of them,
/// preconditioned, so the dictionary matches what is compressed. For zstd, a trained dictionary of at
/// most `max_size` bytes; for lz4 and lzma, the first `max_size` bytes of the samples as a prefix
/// (for lz4 at most 64 KiB, LZ4's window). `None` when the codec takes no dictionary or zstd
/// cannot train on these samples (too few or too small).
pub fn train_dictionary(
    options: &RacOptions,
    data: &[u8],
    ends: &[usize],
    max_size: usize,
) -> Option<Vec<u8>> {
    if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().copied().unwrap_or(0) != data.len() {
        return None;
    }
    let mut samples = Vec::with_capacity(data.len());
    let mut sizes = Vec::new();
    let (mut first, mut start) = (0usize, 0usize);
    let mut scratch = Vec::new();
    while first < ends.len() {
        let mut last = first;
        while last + 1 < ends.len() && ends[last] - start < options.min_unit_bytes {
            last += 1;
        }
        let raw = &data[start..ends[last]];
        scratch.clear();
        Kernel::best().encode(options.precondition, raw, &mut scratch);
        samples.extend_from_slice(&scratch);
        sizes.push(scratch.len());
        first = last + 1;
        start = ends[last];
    }
    match options.codec.algorithm() {
        Algorithm::Zstd => evtc_codecs::train_dictionary(&samples, &sizes, max_size).ok(),
        // An empty prefix is no dictionary: units compressed against it would not say they use one.
        _ if samples.is_empty() || max_size == 0 => None,
        Algorithm::Lz4 => Some(samples[..samples.len().min(max_size).min(64 << 10)].to_vec()),
        Algorithm::Lzma => Some(samples[..samples.len().min(max_size)].to_vec()),
        _ => None,
    }
}

/// What [`trial_units`] found best for a sample of a branch's entries.
#[derive(Debug, Clone)]
pub struct UnitsTrial {
    /// The sample's RAC payload (seek table and units), with [`UnitsTrial::dictionary`] if kept.
    pub payload: Vec<u8>,
    /// Bytes of the payload, plus the dictionary's when it is charged to the sample.
    pub size: usize,
    /// The trained dictionary (zstd's, or the prefix of lz4 or lzma), kept as [`trial_units`]
    /// says.
    pub dictionary: Option<Vec<u8>>,
}

/// The least a dictionary must shrink the RAC payload of entries it was not trained on for the
/// writer to keep it: 3%. A dictionary slows every unit's decode (zstd:5, NanoAOD-like jets with
/// 2 KiB units: random single-entry reads of `Jet_pt` 1.78 us without, 2.28 us with one that made
/// the branch 0.06% smaller), so it has to buy a real share of the file. Not for lzma, where a
/// dictionary speeds each unit's decode up instead ([`trial_units`]).
pub const DICTIONARY_MIN_GAIN: f64 = 0.03;

/// The most bytes of an lzma prefix dictionary ([`trial_units`]): LZMA2 copies the prefix into its
/// history before each unit, so a longer one costs every unit's decode.
pub const LZMA_DICTIONARY_BYTES: usize = 32 << 10;

/// Encodes a sample of a branch's entries (`data` with entry `ends`, as for
/// [`RacEncoder::encode`]) as one RAC payload; with `train`, also tries a dictionary: trained on
/// the first half of the sample's bytes (at most 1/16 of them, 256 B to 16 KiB; for lzma 1/4 of
/// them, 256 B to [`LZMA_DICTIONARY_BYTES`]), it is kept if it makes the payload of the other
/// half at least [`DICTIONARY_MIN_GAIN`] smaller (for lzma: smaller at all, below), judged on
/// entries it was not trained on, as the branch's later baskets will be; with
/// `charge_dictionary` (a branch with no other basket to spread it over), if the whole sample's
/// payload plus the dictionary is smaller by as much too.
///
/// Under lzma, whose units start with an empty history and so decode most of their first bytes as
/// literals, bit by bit, a prefix turns them into matches: the bulk read of the RAC study's
/// TSmall tree (lzma:7, runs, 8 KiB units) went from 660-720 to 868-888 MB/s (probe, best of 5,
/// files alternated), its file 1.3% smaller. There the dictionary is kept if it makes the
/// payloads smaller at all (not only by [`DICTIONARY_MIN_GAIN`]); one that changes no size is one
/// no unit uses (units LZMA cannot shrink are stored as they are). Prefixes of 16 KiB read 3%
/// slower, of 64 KiB 3% faster, but each unit's decode copies the prefix first, which a random
/// read of one entry pays.
///
/// The file writer decides a RAC branch's dictionary this way, and `evtc bench` predicts what the
/// writer will do.
///
/// # Errors
/// As for [`RacEncoder::encode`].
pub fn trial_units(
    options: &RacOptions,
    train: bool,
    charge_dictionary: bool,
    data: &[u8],
    ends: &[usize],
) -> Result<UnitsTrial> {
    let mut encoder = RacEncoder::new();
    let mut payload = Vec::new();
    encoder.encode(options, None, data, ends, &mut payload)?;
    let without = UnitsTrial {
        size: payload.len(),
        payload,
        dictionary: None,
    };
    // The first half of the sample's entries (by bytes) trains, the rest judges (`encode` checked
    // that `ends` increase up to the data's length).
    let cut = ends.partition_point(|&e| e <= data.len() / 2).max(1);
    if !train || cut >= ends.len() {
        return Ok(without);
    }
    let (trained, held_out) = data.split_at(ends[cut - 1]);
    let held_out_ends: Vec<usize> = ends[cut..].iter().map(|&e| e - trained.len()).collect();
    let algorithm = options.codec.algorithm();
    let max_size = match algorithm {
        Algorithm::Lzma => (trained.len() / 4).clamp(256, LZMA_DICTIONARY_BYTES),
        _ => (trained.len() / 16).clamp(256, 16 << 10),
    };
    let Some(bytes) = train_dictionary(options, trained, &ends[..cut], max_size) else {
        return Ok(without);
    };
    let zstd = match options.codec.algorithm() {
        Algorithm::Zstd => match EncoderDictionary::new(&bytes, options.codec.level()) {
            Ok(d) => Some(d),
            Err(_) => return Ok(without),
        },
        _ => None,
    };
    let dictionary = match &zstd {
        Some(z) => EncodeDictionary::Zstd(z),
        None => EncodeDictionary::Prefix(&bytes),
    };
    // An LZMA prefix is kept when it makes the units smaller at all, for its faster decode; one
    // that changes no unit's size is one no unit uses (units of packed bytes that LZMA cannot
    // shrink are stored as they are: `bitplanes` units of random mantissa bits).
    let keep = |with: usize, without: usize| match algorithm {
        Algorithm::Lzma => with < without,
        _ => (with as f64) < (1.0 - DICTIONARY_MIN_GAIN) * without as f64,
    };
    let mut judged = [Vec::new(), Vec::new()];
    encoder.encode(options, None, held_out, &held_out_ends, &mut judged[0])?;
    encoder.encode(
        options,
        Some(&dictionary),
        held_out,
        &held_out_ends,
        &mut judged[1],
    )?;
    if !keep(judged[1].len(), judged[0].len()) {
        return Ok(without);
    }
    let mut payload = Vec::new();
    encoder.encode(options, Some(&dictionary), data, ends, &mut payload)?;
    let size = payload.len() + if charge_dictionary { bytes.len() } else { 0 };
    Ok(if !charge_dictionary || keep(size, without.size) {
        UnitsTrial {
            payload,
            size,
            dictionary: Some(bytes),
        }
    } else {
        without
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packed sizes read back at every field width, including fields wider than one 8-byte window.
    #[test]
    fn entry_sizes_roundtrip_at_every_width() {
        for bits in 0..=64u32 {
            for shift in [0u32, 3] {
                if bits + shift > 64 {
                    continue;
                }
                let max = if bits == 0 {
                    0
                } else {
                    u64::MAX >> (64 - bits)
                };
                let fields: Vec<u64> = (0..37u64)
                    .map(|i| max.wrapping_sub(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) & max)
                    .collect();
                let lengths: Vec<u64> = fields.iter().map(|f| f << shift).collect();
                let mut stored = Vec::new();
                pack_sizes(lengths.iter().copied(), &mut stored);
                // All-zero lengths pack with no shift.
                let shift = if bits == 0 { 0 } else { shift };
                assert_eq!(&stored[..2], &[shift as u8, bits as u8]);
                let mut back = Vec::new();
                let sum = unpack_sizes(&stored[2..], 37, shift, bits, &mut back);
                assert_eq!(back, lengths, "bits {bits} shift {shift}");
                assert_eq!(sum, lengths.iter().map(|&l| u128::from(l)).sum::<u128>());
            }
        }
    }

    /// Entries drawn from a 16-word table: what a dictionary learns. The dictionary is judged on
    /// entries it was not trained on, so one trained on a first half whose table the second half
    /// does not share is dropped, and one whose table both halves share is kept.
    #[test]
    fn dictionaries_are_judged_on_entries_they_were_not_trained_on() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let table = |next: &mut dyn FnMut() -> u64| -> Vec<u32> {
            (0..16).map(|_| next() as u32).collect()
        };
        let (a, b) = (table(&mut next), table(&mut next));
        let entries = |tables: [&[u32]; 2], next: &mut dyn FnMut() -> u64| -> Vec<u8> {
            (0..2 * 2000 * 12)
                .flat_map(|i| {
                    let table = tables[i / (2000 * 12)];
                    table[(next() % 16) as usize].to_le_bytes()
                })
                .collect()
        };
        let ends: Vec<usize> = (1..=4000).map(|e| e * 48).collect();
        let options = RacOptions {
            codec: Codec::zstd(5).unwrap(),
            precondition: Precondition::None,
            min_unit_bytes: 0,
            entry_sizes: false,
        };
        let shared = entries([&a, &a], &mut next);
        let trial = trial_units(&options, true, false, &shared, &ends).unwrap();
        assert!(trial.dictionary.is_some(), "both halves share the table");
        let without = trial_units(&options, false, false, &shared, &ends).unwrap();
        assert!(trial.size < without.size);

        let changed = entries([&a, &b], &mut next);
        let trial = trial_units(&options, true, false, &changed, &ends).unwrap();
        assert!(
            trial.dictionary.is_none(),
            "the second half's table is not the trained one"
        );
    }
}
