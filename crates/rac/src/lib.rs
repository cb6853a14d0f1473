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

use evtc_codecs::{Codec, Precondition};

mod bytes;
mod decode;
mod encode;
mod sizes;
mod table;
mod train;

pub use bytes::PayloadBytes;
pub use decode::{DecodeDictionary, RacDecoder};
pub use encode::{EncodeDictionary, RacEncoder};
pub use table::SeekTable;
pub use train::{
    DICTIONARY_MIN_GAIN, LZMA_DICTIONARY_BYTES, UnitsTrial, train_dictionary, trial_units,
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

/// The default `min_unit_bytes`: units of at least 2 KiB uncompressed (docs/benchmarks.md: the
/// granularity sweep of `cargo bench --bench rac` and the random reads of `cargo bench --bench
/// peers`).
pub const DEFAULT_MIN_UNIT_BYTES: usize = evtc_codecs::Algorithm::Zstd.properties().rac_unit_bytes;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizes::{pack_sizes, unpack_sizes};

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
