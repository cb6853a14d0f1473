//! Rust types that branches hold, and their little-endian encoding.

use crate::meta::ScalarType;
use evtc_codecs::le;

/// A Rust type that a branch's values can be read as and written from.
pub trait Scalar:
    Copy + Default + Send + Sync + std::fmt::Debug + PartialEq + bytemuck::Zeroable + 'static
{
    /// The branch element type this Rust type maps to.
    const TYPE: ScalarType;

    /// Appends the little-endian bytes of `values` to `out`.
    fn extend_bytes(values: &[Self], out: &mut Vec<u8>);

    /// Decodes `out.len()` values from `bytes` (exactly `out.len() * size` bytes).
    ///
    /// # Errors
    /// The index of the first invalid value (a `bool` byte other than 0 or 1).
    fn decode(bytes: &[u8], out: &mut [Self]) -> Result<(), usize>;

    /// `out` as its little-endian bytes, where the in-memory layout is exactly that (numbers on
    /// little-endian CPUs), so that blocks decode straight into typed buffers.
    fn as_bytes_mut(out: &mut [Self]) -> Option<&mut [u8]>;
}

macro_rules! numeric {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$variant;

            fn extend_bytes(values: &[Self], out: &mut Vec<u8>) {
                if cfg!(target_endian = "little") {
                    out.extend_from_slice(bytemuck::cast_slice(values));
                } else {
                    out.reserve(std::mem::size_of_val(values));
                    for v in values {
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }

            fn decode(bytes: &[u8], out: &mut [Self]) -> Result<(), usize> {
                const N: usize = std::mem::size_of::<$t>();
                debug_assert_eq!(bytes.len(), out.len() * N);
                for (dst, src) in out.iter_mut().zip(bytes.chunks_exact(N)) {
                    *dst = <$t>::from_le_bytes(le::array(src, 0));
                }
                Ok(())
            }

            fn as_bytes_mut(out: &mut [Self]) -> Option<&mut [u8]> {
                cfg!(target_endian = "little").then(|| bytemuck::cast_slice_mut(out))
            }
        }
    )*};
}

numeric!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

impl Scalar for bool {
    const TYPE: ScalarType = ScalarType::Bool;

    fn extend_bytes(values: &[Self], out: &mut Vec<u8>) {
        out.extend(values.iter().map(|&b| u8::from(b)));
    }

    fn decode(bytes: &[u8], out: &mut [Self]) -> Result<(), usize> {
        // One pass a chunk at a time, which vectorises: each byte's low bit is stored and the bits
        // a bool never sets are ORed together; the position of a bad byte is looked for only once
        // one is known to be there.
        const CHUNK: usize = 4096;
        for (c, (dst, src)) in out.chunks_mut(CHUNK).zip(bytes.chunks(CHUNK)).enumerate() {
            let mut stray = 0u8;
            for (d, &s) in dst.iter_mut().zip(src) {
                stray |= s & !1;
                *d = s & 1 != 0;
            }
            if stray != 0 {
                let bad = src.iter().position(|&b| b > 1).expect("a byte above 1");
                return Err(c * CHUNK + bad);
            }
        }
        Ok(())
    }

    fn as_bytes_mut(_: &mut [Self]) -> Option<&mut [u8]> {
        None
    }
}

/// Reads little-endian integers of type `t` as counts.
///
/// # Errors
/// The index of the first value that is negative (or not an integer type at all: index 0).
pub(crate) fn decode_counts(t: ScalarType, bytes: &[u8], out: &mut Vec<u64>) -> Result<(), usize> {
    macro_rules! unsigned {
        ($ty:ty) => {{
            let (values, _) = bytes.as_chunks::<{ std::mem::size_of::<$ty>() }>();
            out.extend(values.iter().map(|&v| u64::from(<$ty>::from_le_bytes(v))));
        }};
    }
    macro_rules! signed {
        ($ty:ty) => {{
            let (values, _) = bytes.as_chunks::<{ std::mem::size_of::<$ty>() }>();
            let value = |&v| <$ty>::from_le_bytes(v);
            // A pass without an early exit (which vectorizes), then the conversion, which
            // cannot fail after it: a loop that could stop at each value does neither.
            if values
                .iter()
                .map(value)
                .fold(false, |negative, v| negative | (v < 0))
            {
                return Err(values.iter().map(value).position(|v| v < 0).unwrap_or(0));
            }
            out.extend(values.iter().map(|v| value(v) as u64));
        }};
    }
    match t {
        ScalarType::U8 => unsigned!(u8),
        ScalarType::I8 => signed!(i8),
        ScalarType::U16 => unsigned!(u16),
        ScalarType::I16 => signed!(i16),
        ScalarType::U32 => unsigned!(u32),
        ScalarType::I32 => signed!(i32),
        ScalarType::U64 => unsigned!(u64),
        ScalarType::I64 => signed!(i64),
        ScalarType::Bool | ScalarType::F32 | ScalarType::F64 => return Err(0),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_decode_every_integer_type_and_name_the_first_negative_value() {
        let mut out = Vec::new();
        assert_eq!(decode_counts(ScalarType::U32, &[0xFF; 8], &mut out), Ok(()));
        assert_eq!(out, [u64::from(u32::MAX); 2]);
        let values: Vec<i32> = (0..1000).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        out.clear();
        assert_eq!(decode_counts(ScalarType::I32, &bytes, &mut out), Ok(()));
        assert!(out.iter().copied().eq(0..1000));
        for at in [0, 7, 999] {
            let mut damaged = values.clone();
            damaged[at] = -1;
            let bytes: Vec<u8> = damaged.iter().flat_map(|v| v.to_le_bytes()).collect();
            assert_eq!(decode_counts(ScalarType::I32, &bytes, &mut out), Err(at));
        }
        assert_eq!(
            decode_counts(ScalarType::I8, &[1, 2, 0x80], &mut out),
            Err(2)
        );
        assert_eq!(decode_counts(ScalarType::I16, &[0, 0x80], &mut out), Err(0));
        assert_eq!(
            decode_counts(ScalarType::I64, &[0xFF; 16], &mut out),
            Err(0)
        );
        out.clear();
        assert_eq!(
            decode_counts(ScalarType::U16, &[1, 0, 2, 1], &mut out),
            Ok(())
        );
        assert_eq!(out, [1, 258]);
        assert_eq!(decode_counts(ScalarType::F32, &[0; 4], &mut out), Err(0));
    }

    #[test]
    fn bools_decode_from_zeros_and_ones_and_name_the_first_other_byte() {
        let bytes: Vec<u8> = (0..10_000u32).map(|i| u8::from(i % 3 == 0)).collect();
        let mut out = vec![false; bytes.len()];
        assert_eq!(bool::decode(&bytes, &mut out), Ok(()));
        assert!(out.iter().zip(&bytes).all(|(&b, &byte)| b == (byte == 1)));
        // A bad byte in a later chunk, and one whose low bit is clear.
        for (at, bad) in [(0, 2u8), (4095, 3), (4096, 0x80), (9_999, 0xFF)] {
            let mut damaged = bytes.clone();
            damaged[at] = bad;
            assert_eq!(
                bool::decode(&damaged, &mut out),
                Err(at),
                "byte {bad:#x} at {at}"
            );
        }
    }
}
