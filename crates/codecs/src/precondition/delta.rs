//! Delta + zigzag coding of little-endian integers.
//!
//! Element `i` becomes `zigzag(x[i] - x[i-1])` (wrapping, `x[-1] = 0`), where
//! `zigzag(d) = (d << 1) ^ (d >> (bits - 1))` maps small signed differences to small unsigned values.
//! Sorted integers and offsets turn into runs of small numbers that every codec compresses well.

macro_rules! delta_impl {
    ($encode:ident, $decode:ident, $u:ty, $i:ty) => {
        pub(crate) fn $encode(input: &[u8], out: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            let mut prev: $u = 0;
            for (src, dst) in input.chunks_exact(W).zip(out.chunks_exact_mut(W)) {
                let x = <$u>::from_le_bytes(src.try_into().expect("chunk has W bytes"));
                let d = x.wrapping_sub(prev) as $i;
                let z = ((d << 1) ^ (d >> (<$u>::BITS - 1))) as $u;
                dst.copy_from_slice(&z.to_le_bytes());
                prev = x;
            }
        }

        pub(crate) fn $decode(input: &[u8], out: &mut [u8]) {
            const W: usize = std::mem::size_of::<$u>();
            let mut prev: $u = 0;
            for (src, dst) in input.chunks_exact(W).zip(out.chunks_exact_mut(W)) {
                let z = <$u>::from_le_bytes(src.try_into().expect("chunk has W bytes"));
                let d = (z >> 1) ^ (z & 1).wrapping_neg();
                prev = prev.wrapping_add(d);
                dst.copy_from_slice(&prev.to_le_bytes());
            }
        }
    };
}

delta_impl!(encode8, decode8, u8, i8);
delta_impl!(encode16, decode16, u16, i16);
delta_impl!(encode32, decode32, u32, i32);
delta_impl!(encode64, decode64, u64, i64);
