//! Delta + zigzag coding of little-endian integers, and zigzag alone.
//!
//! Element `i` becomes `zigzag(x[i] - x[i-1])` (wrapping, `x[-1] = 0`), where
//! `zigzag(d) = (d << 1) ^ (d >> (bits - 1))` maps small signed differences to small unsigned values.
//! Sorted integers and offsets turn into runs of small numbers that every codec compresses well.
//! Zigzag alone (`zigzag(x[i])`) does the same for small signed values: `-1` becomes `1`, so the
//! high bytes of small negative ids and flavours are zeros instead of `0xFF`.

use super::Width;
use crate::le;

/// Zigzag of one unsigned word read as signed, and its inverse.
trait Zigzag: Copy {
    fn zig(self) -> Self;
    fn unzig(self) -> Self;
}

macro_rules! zigzag_word {
    ($u:ty, $i:ty) => {
        impl Zigzag for $u {
            #[inline]
            fn zig(self) -> $u {
                let x = self as $i;
                ((x << 1) ^ (x >> (<$u>::BITS - 1))) as $u
            }

            #[inline]
            fn unzig(self) -> $u {
                (self >> 1) ^ (self & 1).wrapping_neg()
            }
        }
    };
}

zigzag_word!(u8, i8);
zigzag_word!(u16, i16);
zigzag_word!(u32, i32);
zigzag_word!(u64, i64);

macro_rules! delta_impl {
    ($encode:ident, $decode:ident, $decode_in_place:ident, $u:ty) => {
        fn $encode(input: &[u8], out: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            let mut prev: $u = 0;
            for (src, dst) in input.chunks_exact(W).zip(out.chunks_exact_mut(W)) {
                let x = <$u>::from_le_bytes(le::array(src, 0));
                dst.copy_from_slice(&x.wrapping_sub(prev).zig().to_le_bytes());
                prev = x;
            }
        }

        fn $decode(input: &[u8], out: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            let mut prev: $u = 0;
            for (src, dst) in input.chunks_exact(W).zip(out.chunks_exact_mut(W)) {
                let z = <$u>::from_le_bytes(le::array(src, 0));
                prev = prev.wrapping_add(z.unzig());
                dst.copy_from_slice(&prev.to_le_bytes());
            }
        }

        fn $decode_in_place(buf: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            let mut prev: $u = 0;
            for chunk in buf.chunks_exact_mut(W) {
                let z = <$u>::from_le_bytes(le::array(chunk, 0));
                prev = prev.wrapping_add(z.unzig());
                chunk.copy_from_slice(&prev.to_le_bytes());
            }
        }
    };
}

macro_rules! zigzag_impl {
    ($encode:ident, $decode_in_place:ident, $u:ty) => {
        fn $encode(input: &[u8], out: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            for (src, dst) in input.chunks_exact(W).zip(out.chunks_exact_mut(W)) {
                let x = <$u>::from_le_bytes(le::array(src, 0));
                dst.copy_from_slice(&x.zig().to_le_bytes());
            }
        }

        fn $decode_in_place(buf: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            for chunk in buf.chunks_exact_mut(W) {
                let z = <$u>::from_le_bytes(le::array(chunk, 0));
                chunk.copy_from_slice(&z.unzig().to_le_bytes());
            }
        }
    };
}

zigzag_impl!(zigzag8, unzigzag8_in_place, u8);
zigzag_impl!(zigzag16, unzigzag16_in_place, u16);
zigzag_impl!(zigzag32, unzigzag32_in_place, u32);
zigzag_impl!(zigzag64, unzigzag64_in_place, u64);

delta_impl!(encode8, decode8, decode8_in_place, u8);
delta_impl!(encode16, decode16, decode16_in_place, u16);
delta_impl!(encode32, decode32, decode32_in_place, u32);
delta_impl!(encode64, decode64, decode64_in_place, u64);

/// Delta + zigzag of the whole `width`-byte elements of `input` into `out` (same length).
pub(crate) fn encode(width: Width, input: &[u8], out: &mut [u8]) {
    match width {
        Width::W1 => encode8(input, out),
        Width::W2 => encode16(input, out),
        Width::W4 => encode32(input, out),
        Width::W8 => encode64(input, out),
    }
}

/// Inverse of [`encode`].
pub(crate) fn decode(width: Width, input: &[u8], out: &mut [u8]) {
    match width {
        Width::W1 => decode8(input, out),
        Width::W2 => decode16(input, out),
        Width::W4 => decode32(input, out),
        Width::W8 => decode64(input, out),
    }
}

/// [`decode`] of a buffer onto itself.
pub(crate) fn decode_in_place(width: Width, buf: &mut [u8]) {
    match width {
        Width::W1 => decode8_in_place(buf),
        Width::W2 => decode16_in_place(buf),
        Width::W4 => decode32_in_place(buf),
        Width::W8 => decode64_in_place(buf),
    }
}

/// Zigzag of the whole `width`-byte elements of `input` into `out` (same length), without delta.
pub(crate) fn zigzag(width: Width, input: &[u8], out: &mut [u8]) {
    match width {
        Width::W1 => zigzag8(input, out),
        Width::W2 => zigzag16(input, out),
        Width::W4 => zigzag32(input, out),
        Width::W8 => zigzag64(input, out),
    }
}

/// Inverse of [`zigzag`], in place.
pub(crate) fn unzigzag_in_place(width: Width, buf: &mut [u8]) {
    match width {
        Width::W1 => unzigzag8_in_place(buf),
        Width::W2 => unzigzag16_in_place(buf),
        Width::W4 => unzigzag32_in_place(buf),
        Width::W8 => unzigzag64_in_place(buf),
    }
}
