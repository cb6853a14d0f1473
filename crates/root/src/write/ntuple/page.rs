//! A page's elements as RNTuple stores them (the counterpart of `rntuple/element.rs` and the
//! reader's page decoding): little-endian values, split into byte planes (after zigzag for
//! signed integers, after deltas within the page for index columns), packed bits, and the
//! reduced floats `Real32Trunc` and `Real32Quant`.

use evtc_codecs::{Kernel, Precondition, Width};

use crate::data::Values;
use crate::rntuple::ColumnType;

/// A column's elements for one cluster, before encoding.
#[derive(Debug, Clone, Copy)]
pub(super) enum Elements<'a> {
    /// Values of a leaf field.
    Values(&'a Values),
    /// Cluster-relative end offsets of a collection's items (`Index64` elements).
    Index(&'a [u64]),
}

impl Elements<'_> {
    /// How many elements.
    pub(super) fn len(&self) -> usize {
        match self {
            Elements::Values(v) => v.len(),
            Elements::Index(i) => i.len(),
        }
    }
}

/// How a value column stores floats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Floats {
    /// As they are.
    Plain,
    /// `Real32Trunc` of `bits` bits (sign, exponent, mantissa bits).
    Trunc { bits: u16 },
    /// `Real32Quant` of `bits` bits in `[min, max]`.
    Quant { bits: u16, min: f64, max: f64 },
}

/// Appends elements `range` of `elements`, encoded as `column` stores them, to `out`.
///
/// # Errors
/// A message for a quantized value outside its range (or NaN).
pub(super) fn encode(
    column: ColumnType,
    floats: Floats,
    elements: Elements<'_>,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    use ColumnType::*;
    let start = out.len();
    match elements {
        Elements::Index(offsets) => {
            let page = &offsets[range];
            match column {
                SplitIndex64 | Index64 => {
                    // Deltas within the page: the first element as it is.
                    let mut prev = 0u64;
                    for &o in page {
                        let v = if column == SplitIndex64 {
                            o.wrapping_sub(prev)
                        } else {
                            o
                        };
                        out.extend_from_slice(&v.to_le_bytes());
                        prev = o;
                    }
                }
                other => return Err(format!("internal: an index page as {}", other.name())),
            }
        }
        Elements::Values(values) => values_le(column, floats, values, range, out)?,
    }
    let width = match column {
        SplitInt16 | SplitUInt16 | SplitReal16 => 2,
        SplitInt32 | SplitUInt32 | SplitReal32 | SplitIndex32 => 4,
        SplitInt64 | SplitUInt64 | SplitReal64 | SplitIndex64 => 8,
        _ => return Ok(()),
    };
    let width = Width::new(width).expect("2, 4 or 8");
    let precondition = match column {
        SplitInt16 | SplitInt32 | SplitInt64 => Precondition::ZigzagShuffle(width),
        _ => Precondition::Shuffle(width),
    };
    let plain = out[start..].to_vec();
    Kernel::best().apply(precondition, &plain, &mut out[start..]);
    Ok(())
}

/// Appends values `range` as `column`'s little-endian elements (bits packed for `Bit` and the
/// reduced floats).
fn values_le(
    column: ColumnType,
    floats: Floats,
    values: &Values,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    match (floats, values) {
        (Floats::Trunc { bits }, Values::F32(v)) => {
            pack(
                v[range].iter().map(|x| x.to_bits() >> (32 - bits)),
                bits,
                out,
            );
            return Ok(());
        }
        (Floats::Quant { bits, min, max }, Values::F32(v)) => {
            let q = quantize(v[range].iter().map(|&x| f64::from(x)), bits, min, max)?;
            pack(q.into_iter(), bits, out);
            return Ok(());
        }
        (Floats::Quant { bits, min, max }, Values::F64(v)) => {
            let q = quantize(v[range].iter().copied(), bits, min, max)?;
            pack(q.into_iter(), bits, out);
            return Ok(());
        }
        _ => {}
    }
    if column == ColumnType::Bit {
        let Values::Bool(v) = values else {
            return Err("internal: bits of values that are not booleans".into());
        };
        for chunk in v[range].chunks(8) {
            out.push(
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u8, |b, (i, &x)| b | (u8::from(x) << i)),
            );
        }
        return Ok(());
    }
    macro_rules! le {
        ($v:expr) => {
            for x in &$v[range] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
    }
    match values {
        Values::Bool(v) => out.extend(v[range].iter().map(|&b| u8::from(b))),
        Values::I8(v) => le!(v),
        Values::U8(v) => out.extend_from_slice(&v[range]),
        Values::I16(v) => le!(v),
        Values::U16(v) => le!(v),
        Values::I32(v) => le!(v),
        Values::U32(v) => le!(v),
        Values::I64(v) => le!(v),
        Values::U64(v) => le!(v),
        Values::F32(v) => le!(v),
        Values::F64(v) => le!(v),
    }
    Ok(())
}

/// The `bits`-bit codes of values in `[min, max]`, as ROOT's `Real32Quant` stores them:
/// `round((x - min) / (max - min) * (2^bits - 1))`.
fn quantize(
    values: impl Iterator<Item = f64>,
    bits: u16,
    min: f64,
    max: f64,
) -> Result<Vec<u32>, String> {
    let steps = if bits == 32 {
        f64::from(u32::MAX)
    } else {
        f64::from((1u32 << bits) - 1)
    };
    values
        .map(|x| {
            if !(x >= min && x <= max) {
                return Err(format!(
                    "{x} is outside the quantization range [{min}, {max}]"
                ));
            }
            Ok(((x - min) / (max - min) * steps).round() as u32)
        })
        .collect()
}

/// Packs `bits`-bit values back to back, least significant bit first.
fn pack(values: impl Iterator<Item = u32>, bits: u16, out: &mut Vec<u8>) {
    let bits = u32::from(bits);
    let mut acc: u64 = 0;
    let mut have = 0u32;
    for v in values {
        acc |= u64::from(v) << have;
        have += bits;
        while have >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            have -= 8;
        }
    }
    if have > 0 {
        out.push(acc as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rntuple::element::unpack_bits;

    #[test]
    fn packed_bits_read_back() {
        let values = [5u32, 2, 7, 0, 1, 6];
        let mut packed = Vec::new();
        pack(values.iter().copied(), 3, &mut packed);
        let mut got = Vec::new();
        unpack_bits(&packed, values.len(), 3, |x| got.push(x));
        assert_eq!(got, values);
    }

    #[test]
    fn index_pages_store_deltas_from_the_page_start() {
        let offsets = [3u64, 3, 7, 12];
        let mut out = Vec::new();
        encode(
            ColumnType::Index64,
            Floats::Plain,
            Elements::Index(&offsets),
            1..4,
            &mut out,
        )
        .expect("encode");
        assert_eq!(out.len(), 24);
        assert_eq!(out[..8], 3u64.to_le_bytes());
        let mut split = Vec::new();
        encode(
            ColumnType::SplitIndex64,
            Floats::Plain,
            Elements::Index(&offsets),
            1..4,
            &mut split,
        )
        .expect("encode");
        // Byte planes of [3, 4, 5]: the low bytes first.
        assert_eq!(&split[..3], &[3, 4, 5]);
        assert!(split[3..].iter().all(|&b| b == 0));
    }
}
