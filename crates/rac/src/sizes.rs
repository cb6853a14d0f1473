//! Varints and the packed entry sizes that units store (layout in the crate docs).

use crate::{Error, Result, Unit};
use evtc_codecs::le;

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64> {
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
pub(crate) fn pack_sizes(lengths: impl Iterator<Item = u64> + Clone, out: &mut Vec<u8>) {
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
pub(crate) fn sizes_len(stored: &[u8], entries: u64) -> Option<usize> {
    let bits = u64::from(*stored.get(1)?);
    let len = 2 + usize::try_from(entries.checked_mul(bits)?.div_ceil(8)).ok()?;
    (len <= stored.len()).then_some(len)
}

/// Sets `out[i]` to `each(field i)` of the first `out.len()` fields of `bits` bits (at most 64),
/// packed LSB first in `packed` (at least `out.len() * bits` bits long), in order.
pub(crate) fn unpack_fields<O>(
    packed: &[u8],
    bits: u32,
    out: &mut [O],
    mut each: impl FnMut(u64) -> O,
) {
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
            let mut window = le::u64_at(bytes, 0) >> (bit % 8);
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
        le::u64_at(window, 0) >> (bit % 8)
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
pub(crate) fn unpack_sizes(
    packed: &[u8],
    entries: u64,
    shift: u32,
    bits: u32,
    out: &mut Vec<u64>,
) -> u128 {
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
pub(crate) struct PackedSizes<'s> {
    /// Left shift of every field.
    pub(crate) shift: u32,
    /// Bits per field.
    pub(crate) bits: u32,
    /// The fields.
    pub(crate) packed: &'s [u8],
}

/// Grows `out` by `entries` zeros (refusing, as unit `unit`'s corruption, a count memory cannot
/// hold); returns where they start.
pub(crate) fn grow<T: Copy + Default>(
    out: &mut Vec<T>,
    entries: u64,
    unit: usize,
) -> Result<usize> {
    let first = out.len();
    usize::try_from(entries)
        .ok()
        .filter(|&n| out.try_reserve(n).is_ok())
        .ok_or_else(|| corrupt_unit(unit, "too many entries for memory"))?;
    out.resize(first + entries as usize, T::default());
    Ok(first)
}

/// Why an entry of whole values is refused when its size is not a multiple of the value size.
pub(crate) const PARTIAL_VALUE: &str = "an entry size is not a whole number of values";

/// The last checks of a unit's entries counted in values of `1 << value_shift` bytes: `Ok` when
/// no `problem` was met and their `values` add up to the unit's (with `all` of its entries; with
/// its first entries, stay within it); otherwise `out` is cut back to `first` and the unit is
/// corrupt, for that problem or the sum.
pub(crate) fn check_values<T>(
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
pub(crate) fn corrupt_unit(unit: usize, reason: &str) -> Error {
    Error::CorruptUnit {
        unit,
        reason: reason.to_owned(),
    }
}
