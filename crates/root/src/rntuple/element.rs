//! RNTuple column types and how their elements are stored in a page: little-endian values, the
//! split encodings (byte planes; zigzag for signed integers; delta within the page for split
//! index columns), packed bits, half floats and the reduced floats (`Real32Trunc`,
//! `Real32Quant`), and the `Switch` elements of variants.

use crate::types::ScalarType;

/// A column type, by its on-disk code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnType {
    Bit,
    Byte,
    Char,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Real16,
    Real32,
    Real64,
    Index32,
    Index64,
    Switch,
    SplitInt16,
    SplitUInt16,
    SplitInt32,
    SplitUInt32,
    SplitInt64,
    SplitUInt64,
    SplitReal16,
    SplitReal32,
    SplitReal64,
    SplitIndex32,
    SplitIndex64,
    Real32Trunc,
    Real32Quant,
}

/// What a column's elements are, once decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// Values of a plain field (integers and floats in their own width, booleans, characters).
    Value,
    /// Offsets of a collection's items, relative to the cluster.
    Index,
    /// A variant's switch: an item index (relative to the cluster) and a 1-based alternative.
    Switch,
}

impl ColumnType {
    /// Every type with its on-disk code.
    const CODES: [(u16, ColumnType); 30] = {
        use ColumnType::*;
        [
            (0x00, Bit),
            (0x01, Byte),
            (0x02, Char),
            (0x03, Int8),
            (0x04, UInt8),
            (0x05, Int16),
            (0x06, UInt16),
            (0x07, Int32),
            (0x08, UInt32),
            (0x09, Int64),
            (0x0A, UInt64),
            (0x0B, Real16),
            (0x0C, Real32),
            (0x0D, Real64),
            (0x0E, Index32),
            (0x0F, Index64),
            (0x10, Switch),
            (0x11, SplitInt16),
            (0x12, SplitUInt16),
            (0x13, SplitInt32),
            (0x14, SplitUInt32),
            (0x15, SplitInt64),
            (0x16, SplitUInt64),
            (0x17, SplitReal16),
            (0x18, SplitReal32),
            (0x19, SplitReal64),
            (0x1A, SplitIndex32),
            (0x1B, SplitIndex64),
            (0x1C, Real32Trunc),
            (0x1D, Real32Quant),
        ]
    };

    /// The type of on-disk code `code`, or `None` for a code this reader does not know.
    pub(crate) fn from_code(code: u16) -> Option<ColumnType> {
        ColumnType::CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, t)| *t)
    }

    /// The type's on-disk code.
    pub(crate) fn code(self) -> u16 {
        ColumnType::CODES
            .iter()
            .find(|(_, t)| *t == self)
            .map_or(0, |(c, _)| *c)
    }

    /// The name ROOT gives the type (`SplitReal32`).
    pub(crate) fn name(self) -> &'static str {
        use ColumnType::*;
        match self {
            Bit => "Bit",
            Byte => "Byte",
            Char => "Char",
            Int8 => "Int8",
            UInt8 => "UInt8",
            Int16 => "Int16",
            UInt16 => "UInt16",
            Int32 => "Int32",
            UInt32 => "UInt32",
            Int64 => "Int64",
            UInt64 => "UInt64",
            Real16 => "Real16",
            Real32 => "Real32",
            Real64 => "Real64",
            Index32 => "Index32",
            Index64 => "Index64",
            Switch => "Switch",
            SplitInt16 => "SplitInt16",
            SplitUInt16 => "SplitUInt16",
            SplitInt32 => "SplitInt32",
            SplitUInt32 => "SplitUInt32",
            SplitInt64 => "SplitInt64",
            SplitUInt64 => "SplitUInt64",
            SplitReal16 => "SplitReal16",
            SplitReal32 => "SplitReal32",
            SplitReal64 => "SplitReal64",
            SplitIndex32 => "SplitIndex32",
            SplitIndex64 => "SplitIndex64",
            Real32Trunc => "Real32Trunc",
            Real32Quant => "Real32Quant",
        }
    }

    /// What the elements are.
    pub(crate) fn decoded(self) -> Decoded {
        use ColumnType::*;
        match self {
            Index32 | Index64 | SplitIndex32 | SplitIndex64 => Decoded::Index,
            Switch => Decoded::Switch,
            _ => Decoded::Value,
        }
    }

    /// The type a value column's elements decode to (before any conversion to the field's
    /// type); `None` for index and switch columns.
    pub(crate) fn natural(self) -> Option<ScalarType> {
        use ColumnType::*;
        Some(match self {
            Bit => ScalarType::Bool,
            Byte | UInt8 => ScalarType::U8,
            Char | Int8 => ScalarType::I8,
            Int16 | SplitInt16 => ScalarType::I16,
            UInt16 | SplitUInt16 => ScalarType::U16,
            Int32 | SplitInt32 => ScalarType::I32,
            UInt32 | SplitUInt32 => ScalarType::U32,
            Int64 | SplitInt64 => ScalarType::I64,
            UInt64 | SplitUInt64 => ScalarType::U64,
            Real16 | SplitReal16 | Real32 | SplitReal32 | Real32Trunc => ScalarType::F32,
            Real64 | SplitReal64 | Real32Quant => ScalarType::F64,
            Index32 | Index64 | SplitIndex32 | SplitIndex64 | Switch => return None,
        })
    }

    /// The bits of one element: fixed by the type, or the column's own for the reduced floats;
    /// `None` when `bits` is not what the type allows.
    pub(crate) fn element_bits(self, bits: u16) -> Option<u32> {
        use ColumnType::*;
        let fixed = match self {
            Bit => 1,
            Byte | Char | Int8 | UInt8 => 8,
            Int16 | UInt16 | SplitInt16 | SplitUInt16 | Real16 | SplitReal16 => 16,
            Int32 | UInt32 | SplitInt32 | SplitUInt32 | Real32 | SplitReal32 | Index32
            | SplitIndex32 => 32,
            Int64 | UInt64 | SplitInt64 | SplitUInt64 | Real64 | SplitReal64 | Index64
            | SplitIndex64 => 64,
            Switch => 96,
            Real32Trunc => return (10..=31).contains(&bits).then_some(u32::from(bits)),
            Real32Quant => return (1..=32).contains(&bits).then_some(u32::from(bits)),
        };
        (u32::from(bits) == fixed).then_some(fixed)
    }

    /// Whether a value column of this type can be read as `output`: integers as any integer
    /// (ROOT reads them so), floats as floats, bits and characters as booleans and integers.
    pub(crate) fn reads_as(self, output: ScalarType) -> bool {
        use ColumnType::*;
        let integer = output.is_integer() || output == ScalarType::Bool;
        match self {
            Bit | Char | Int8 | UInt8 | Int16 | UInt16 | Int32 | UInt32 | Int64 | UInt64
            | SplitInt16 | SplitUInt16 | SplitInt32 | SplitUInt32 | SplitInt64 | SplitUInt64 => {
                integer
            }
            Byte => output == ScalarType::U8,
            Real16 | SplitReal16 | Real32 | SplitReal32 | Real64 | SplitReal64 | Real32Trunc
            | Real32Quant => output.is_float(),
            Index32 | Index64 | SplitIndex32 | SplitIndex64 | Switch => false,
        }
    }
}

/// The bytes a page of `elements` elements of `bits` bits takes: whole bytes, the last one part
/// used.
pub(crate) fn page_bytes(elements: u64, bits: u32) -> Option<u64> {
    elements.checked_mul(u64::from(bits)).map(|b| b.div_ceil(8))
}

/// Undoes the byte split of `n` elements of `width` bytes (all first bytes, then all second
/// bytes, ...: evtc's byte shuffle) into the first `n * width` bytes of `out`, which grows when
/// it is shorter (it is scratch space, kept between pages).
pub(crate) fn unsplit(page: &[u8], n: usize, width: usize, out: &mut Vec<u8>) {
    let len = n * width;
    if out.len() < len {
        out.resize(len, 0);
    }
    let width = evtc_codecs::Width::new(width as u8).expect("split widths are 2, 4 or 8");
    evtc_codecs::Kernel::best().undo(
        evtc_codecs::Precondition::Shuffle(width),
        &page[..len],
        &mut out[..len],
    );
}

/// The eight booleans of each byte of a `Bit` column, bit 0 first.
const BOOLS: [[bool; 8]; 256] = {
    let mut table = [[false; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut bit = 0;
        while bit < 8 {
            table[byte][bit] = byte >> bit & 1 != 0;
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// Appends the `n` booleans of a `Bit` page (bit 0 of the first byte first) to `out`, a byte
/// at a time.
pub(crate) fn unpack_bools(page: &[u8], n: usize, out: &mut Vec<bool>) {
    out.reserve(n);
    let whole = n / 8;
    for &byte in &page[..whole] {
        out.extend_from_slice(&BOOLS[usize::from(byte)]);
    }
    if !n.is_multiple_of(8) {
        out.extend_from_slice(&BOOLS[usize::from(page[whole])][..n % 8]);
    }
}

/// Reads `bits`-bit unsigned integers packed back to back, least significant bit first, the
/// first in the low bits of the first byte.
pub(crate) fn unpack_bits(page: &[u8], n: usize, bits: u32, mut each: impl FnMut(u32)) {
    let mask = if bits == 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    };
    let mut acc: u64 = 0;
    let mut have = 0u32;
    let mut bytes = page.iter();
    for _ in 0..n {
        while have < bits {
            acc |= u64::from(*bytes.next().unwrap_or(&0)) << have;
            have += 8;
        }
        each((acc as u32) & mask);
        acc >>= bits;
        have -= bits;
    }
}

/// An IEEE half-precision float, widened.
pub(crate) fn half_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exponent = u32::from((h >> 10) & 0x1F);
    let mantissa = u32::from(h & 0x3FF);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise the mantissa.
            let shift = m.leading_zeros() - 21;
            let m = (m << shift) & 0x3FF;
            sign | ((127 - 15 + 1 - shift) << 23) | (m << 13)
        }
        (0x1F, m) => sign | 0x7F80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Zigzag decoding: 0, 1, 2, 3 ... -> 0, -1, 1, -2 ...
pub(crate) fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_widen_exactly() {
        assert_eq!(half_to_f32(0x3C00), 1.0);
        assert_eq!(half_to_f32(0xC000), -2.0);
        assert_eq!(half_to_f32(0x7BFF), 65504.0);
        assert_eq!(half_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(half_to_f32(0x03FF), 1023.0 * 2f32.powi(-24));
        assert_eq!(half_to_f32(0x7C00), f32::INFINITY);
        assert!(half_to_f32(0x7E00).is_nan());
        assert_eq!(half_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn bits_unpack_least_significant_first() {
        let mut got = Vec::new();
        unpack_bits(&[0b1010_0101, 0b0000_0011], 10, 1, |b| got.push(b));
        assert_eq!(got, [1, 0, 1, 0, 0, 1, 0, 1, 1, 1]);
        got.clear();
        // 3-bit values 5, 2, 7 -> 101 010 111 -> byte0 = 0b11_010_101, byte1 = 0b1.
        unpack_bits(&[0b1101_0101, 0b0000_0001], 3, 3, |b| got.push(b));
        assert_eq!(got, [5, 2, 7]);
    }

    #[test]
    fn zigzag_and_split() {
        assert_eq!([0, 1, 2, 3, 4].map(unzigzag), [0, -1, 1, -2, 2]);
        let mut bools = Vec::new();
        unpack_bools(&[0b1000_0101, 0b10], 10, &mut bools);
        let mut bits = Vec::new();
        unpack_bits(&[0b1000_0101, 0b10], 10, 1, |b| bits.push(b != 0));
        assert_eq!(bools, bits);
        assert_eq!(bools[..3], [true, false, true]);
        let mut out = Vec::new();
        unsplit(&[1, 3, 2, 4], 2, 2, &mut out);
        assert_eq!(out, [1, 2, 3, 4]);
    }
}
