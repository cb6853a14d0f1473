//! Decoding one basket body (blocks or a RAC payload) into values and per-entry counts.

use std::cell::RefCell;
use std::ops::Range;

use evtc_codecs::BlockHeader;
use evtc_rac::{DecodeDictionary, RacDecoder, SeekTable};

use super::{BasketKind, DECODER};
use crate::error::{Error, Location, Result};
use crate::meta::{Boundaries, BranchMeta, EXT_RAC_ENTRY_SIZES};
use crate::types::Scalar;

thread_local! {
    /// The RAC decoder of this thread's bulk reads: its codec contexts and scratch buffer serve
    /// one basket after another.
    static RAC_DECODER: RefCell<RacDecoder> = RefCell::new(RacDecoder::new());
}

/// A basket's per-entry value counts, when the basket stores them.
pub(super) type Counts = Option<Vec<u32>>;

/// Decodes a basket body (its blocks) of `entries` entries of a branch described by `meta` into
/// `values`; returns the per-entry counts where the basket stores them. With `raw`, `T` is `u8` and
/// `values` receives the values' bytes.
pub(crate) fn decode_body<T: Scalar>(
    meta: &BranchMeta,
    entries: usize,
    body: &[u8],
    values: &mut [T],
    raw: bool,
    location: &Location,
    kind: BasketKind<'_>,
) -> Result<Counts> {
    if let BasketKind::Rac(dictionary, wanted) = kind {
        return decode_rac_body(
            meta,
            entries,
            body,
            values,
            raw,
            location,
            (dictionary, wanted),
        );
    }
    let size = meta.dtype.scalar().size();
    let (value_bytes, n_values) = if raw {
        (values.len(), values.len() / size)
    } else {
        (values.len() * size, values.len())
    };
    let codec_error = |source| Error::Codec {
        location: location.clone(),
        source: Box::new(source),
    };
    let block_error = |e: BlockError| match e {
        BlockError::Codec(source) => Error::Codec {
            location: location.clone(),
            source: Box::new(source),
        },
        BlockError::Invalid(at) => Error::corrupt(
            location.clone(),
            format!(
                "value {at} of the basket is not a valid {}",
                meta.dtype.scalar()
            ),
        ),
    };
    let trailing = || Error::corrupt(location.clone(), "bytes after the basket's last block");
    let (first, rest) = split_block(body).map_err(codec_error)?;
    let counts = match meta.boundaries {
        Boundaries::Fixed | Boundaries::None => {
            if !rest.is_empty() {
                return Err(trailing());
            }
            decode_block_into(first, value_bytes, values).map_err(block_error)?;
            None
        }
        Boundaries::Counts => {
            decode_block_into(first, value_bytes, values).map_err(block_error)?;
            let (block, rest) = split_block(rest).map_err(codec_error)?;
            if !rest.is_empty() {
                return Err(trailing());
            }
            let mut counts = vec![0u32; entries];
            decode_block_into(block, entries * 4, &mut counts).map_err(block_error)?;
            Some(counts)
        }
        Boundaries::Offsets => {
            if !rest.is_empty() {
                return Err(trailing());
            }
            let total = value_bytes + 4 * (entries + 1);
            let mut joined = Vec::new();
            joined
                .try_reserve_exact(total)
                .map_err(|_| Error::corrupt(location.clone(), "basket too large for memory"))?;
            joined.resize(total, 0);
            decode_block_into(first, total, &mut joined).map_err(block_error)?;
            // In raw mode T is u8 and value_bytes == values.len(): decode copies.
            T::decode(&joined[..value_bytes], values)
                .map_err(|at| block_error(BlockError::Invalid(at)))?;
            let mut offsets = vec![0u32; entries + 1];
            u32::decode(&joined[value_bytes..], &mut offsets).expect("u32 always decodes");
            if offsets[0] != 0
                || offsets.windows(2).any(|w| w[0] > w[1])
                || offsets[entries] as usize != n_values
            {
                return Err(Error::corrupt(
                    location.clone(),
                    "entry offsets are not increasing from 0 to the value count",
                ));
            }
            Some(offsets.windows(2).map(|w| w[1] - w[0]).collect())
        }
    };
    if let Some(counts) = &counts {
        let sum: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if sum != n_values as u64 {
            return Err(Error::corrupt(
                location.clone(),
                format!("counts add up to {sum}, the basket has {n_values} values"),
            ));
        }
    }
    Ok(counts)
}

/// Decodes a random-access basket body: `u64` payload length, the RAC payload, then (boundaries
/// `counts`) the counts block.
pub(super) fn decode_rac_body<T: Scalar>(
    meta: &BranchMeta,
    entries: usize,
    body: &[u8],
    values: &mut [T],
    raw: bool,
    location: &Location,
    (dictionary, wanted): (Option<&DecodeDictionary<'_>>, Option<Range<usize>>),
) -> Result<Counts> {
    let size = meta.dtype.scalar().size();
    let (value_bytes, n_values) = if raw {
        (values.len(), values.len() / size)
    } else {
        (values.len() * size, values.len())
    };
    let corrupt = |reason: String| Error::corrupt(location.clone(), reason);
    let (payload, rest) = split_rac(body)
        .ok_or_else(|| corrupt("random-access payload runs past the basket".into()))?;
    let (table, units) = SeekTable::parse(payload).map_err(|e| corrupt(e.to_string()))?;
    if table.entries() != entries as u64 || table.raw_len() != value_bytes as u64 {
        return Err(corrupt(format!(
            "seek table covers {} entries and {} bytes, the basket {entries} entries and {value_bytes} bytes",
            table.entries(),
            table.raw_len()
        )));
    }
    check_entry_sizes_flag(meta, &table, location)?;
    // The thread's decoder (its codec contexts and scratch kept from one basket to the next),
    // taken for this basket: a failed decode leaves a fresh one behind.
    let mut decoder = RAC_DECODER.with(|d| d.take());
    // Every unit, or only those holding the wanted entries.
    let mut decode = |bytes: &mut [u8]| -> Result<()> {
        let Some(wanted) = &wanted else {
            return decoder
                .decode_all(&table, units, dictionary, bytes, false)
                .map_err(|e| corrupt(e.to_string()));
        };
        for (u, unit) in table.units().iter().enumerate() {
            let (first, end) = (unit.first_entry, unit.first_entry + unit.entries);
            if end <= wanted.start as u64 || first >= wanted.end as u64 {
                continue;
            }
            let stored = table
                .stored_unit(u, units)
                .map_err(|e| corrupt(e.to_string()))?;
            let out = bytes
                .get_mut(unit.raw_offset as usize..(unit.raw_offset + unit.raw_len) as usize)
                .ok_or_else(|| corrupt(format!("unit {u} runs past the basket")))?;
            decoder
                .decode_stored_unit(&table, u, stored, dictionary, out, false)
                .map_err(|e| corrupt(e.to_string()))?;
        }
        Ok(())
    };
    match T::as_bytes_mut(values) {
        Some(bytes) => decode(bytes)?,
        None => {
            let mut scratch = vec![0u8; value_bytes];
            decode(&mut scratch)?;
            T::decode(&scratch, values).map_err(|at| {
                corrupt(format!("value {at} is not a valid {}", meta.dtype.scalar()))
            })?;
        }
    }
    RAC_DECODER.with(|d| d.replace(decoder));
    let counts = match meta.boundaries {
        Boundaries::Counts if table.has_entry_sizes() => {
            if !rest.is_empty() {
                return Err(corrupt("bytes after the random-access payload".into()));
            }
            let mut counts = Vec::with_capacity(entries);
            for u in 0..table.units().len() {
                let stored = table
                    .stored_unit(u, units)
                    .map_err(|e| corrupt(e.to_string()))?;
                table
                    .entry_value_counts(u, stored, size.trailing_zeros(), &mut counts)
                    .map_err(|e| corrupt(e.to_string()))?;
            }
            Some(counts)
        }
        Boundaries::Counts => {
            let (block, tail) = split_block(rest).map_err(|e| Error::Codec {
                location: location.clone(),
                source: Box::new(e),
            })?;
            if !tail.is_empty() {
                return Err(corrupt("bytes after the basket's last block".into()));
            }
            let mut counts = vec![0u32; entries];
            decode_block_into(block, entries * 4, &mut counts).map_err(|e| match e {
                BlockError::Codec(source) => Error::Codec {
                    location: location.clone(),
                    source: Box::new(source),
                },
                BlockError::Invalid(at) => corrupt(format!("count {at} is invalid")),
            })?;
            let sum: u64 = counts.iter().map(|&c| u64::from(c)).sum();
            if sum != n_values as u64 {
                return Err(corrupt(format!(
                    "counts add up to {sum}, the basket has {n_values} values"
                )));
            }
            Some(counts)
        }
        _ if !rest.is_empty() => {
            return Err(corrupt("bytes after the random-access payload".into()));
        }
        _ => None,
    };
    Ok(counts)
}

/// Checks that a seek table stores entry sizes exactly when the branch says its units do.
pub(super) fn check_entry_sizes_flag(
    meta: &BranchMeta,
    table: &SeekTable,
    location: &Location,
) -> Result<()> {
    if table.has_entry_sizes() != meta.rac_entry_sizes() {
        return Err(Error::corrupt(
            location.clone(),
            format!(
                "the seek table {} entry sizes, the branch {} (extension {EXT_RAC_ENTRY_SIZES})",
                if table.has_entry_sizes() {
                    "has"
                } else {
                    "has no"
                },
                if meta.rac_entry_sizes() {
                    "needs them"
                } else {
                    "has none"
                }
            ),
        ));
    }
    Ok(())
}

/// Splits a RAC basket body into the RAC payload and what follows it.
pub(crate) fn split_rac(body: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = usize::try_from(u64::from_le_bytes(body.get(..8)?.try_into().ok()?)).ok()?;
    let end = 8usize.checked_add(len)?;
    Some((body.get(8..end)?, body.get(end..)?))
}

pub(super) enum BlockError {
    Codec(evtc_codecs::Error),
    Invalid(usize),
}

/// Splits the first block off `bytes`.
pub(super) fn split_block(bytes: &[u8]) -> Result<(&[u8], &[u8]), evtc_codecs::Error> {
    let header = BlockHeader::parse(bytes)?;
    let len = usize::try_from(header.block_len())
        .ok()
        .filter(|&len| len <= bytes.len())
        .ok_or(evtc_codecs::Error::Truncated {
            needed: header.block_len(),
            available: bytes.len(),
        })?;
    Ok(bytes.split_at(len))
}

/// Decodes one block of exactly `len` bytes into `out`.
pub(super) fn decode_block_into<T: Scalar>(
    block: &[u8],
    len: usize,
    out: &mut [T],
) -> Result<(), BlockError> {
    let header = BlockHeader::parse(block).map_err(BlockError::Codec)?;
    if header.uncompressed_len != len as u64 {
        return Err(BlockError::Codec(evtc_codecs::Error::OutputSize {
            expected: usize::try_from(header.uncompressed_len).unwrap_or(usize::MAX),
            actual: len,
        }));
    }
    if let Some(bytes) = T::as_bytes_mut(out) {
        return DECODER
            .with(|d| d.borrow_mut().decode_into(block, bytes))
            .map(|_| ())
            .map_err(BlockError::Codec);
    }
    thread_local! {
        /// Bytes of values whose memory layout is not their encoding (`bool`), reused.
        static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        let scratch = evtc_codecs::scratch(&mut scratch, len);
        DECODER
            .with(|d| d.borrow_mut().decode_into(block, scratch))
            .map_err(BlockError::Codec)?;
        T::decode(scratch, out).map_err(BlockError::Invalid)
    })
}
