//! AVX2 decoding of the `for` / `delta-for` lane layout (see `pack`) for values of 1, 2, 4 and 8
//! bytes.
//!
//! A row of the layout is one register of consecutive values (32 of 1 byte, 16 of 2, 8 of 4, 4
//! of 8): it is read with one or two loads and a shift pair, the exceptions are patched into the
//! block, and the reference is added (and, for `delta-for`, the running sum taken) a register at
//! a time before one store per row. AVX2 has no 8-bit shifts: bytes shift as 16-bit lanes, masked.

use std::arch::x86_64::*;

use super::pack::{BLOCK, Block, Scalar, Unpacker, low_mask, write_word};

/// The AVX2 unpacker; exists only where the CPU has AVX2 (see `Kernel`).
pub(crate) struct Avx2(());

impl Avx2 {
    /// The unpacker, if this CPU supports AVX2.
    pub(crate) fn new() -> Option<Avx2> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

impl Unpacker for Avx2 {
    fn decode_block(&self, block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
        match block.w {
            // SAFETY: an Avx2 exists only when the CPU supports AVX2 (Avx2::new).
            1 => unsafe { decode::<Bytes>(block, prev, out) },
            // SAFETY: as above.
            2 => unsafe { decode::<Words>(block, prev, out) },
            // SAFETY: as above.
            4 => unsafe { decode::<Dwords>(block, prev, out) },
            // SAFETY: as above.
            8 => unsafe { decode::<Qwords>(block, prev, out) },
            _ => Scalar.decode_block(block, prev, out),
        }
    }
}

/// A register of values of one width: what decoding a block needs of it. Every method needs
/// AVX2 (the caller's guarantee).
trait Lanes {
    /// One value in memory.
    type T: Copy + Default;
    /// Values per register (32 bytes).
    const LANES: usize;
    /// Bits per value.
    const BITS: usize;
    fn to_u64(v: Self::T) -> u64;
    fn from_u64(v: u64) -> Self::T;
    /// Every lane `v` (its low `BITS` bits).
    unsafe fn splat(v: u64) -> __m256i;
    /// Each lane shifted right by `s` < `BITS`, zeros coming in.
    unsafe fn shift_right(v: __m256i, s: usize) -> __m256i;
    /// Each lane shifted left by 0 < `s` < `BITS`, zeros coming in.
    unsafe fn shift_left(v: __m256i, s: usize) -> __m256i;
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i;
    /// The running sum of the lanes (wrapping), within each 128-bit half.
    unsafe fn sum_halves(v: __m256i) -> __m256i;
    /// Every lane of each 128-bit half its half's last lane.
    unsafe fn last_of_halves(v: __m256i) -> __m256i;
    /// Lane 0.
    unsafe fn first(v: __m256i) -> u64;
}

/// 32 values of 1 byte. AVX2 has no 8-bit shifts: bytes shift as 16-bit lanes, masked.
struct Bytes;
/// 16 values of 2 bytes.
struct Words;
/// 8 values of 4 bytes.
struct Dwords;
/// 4 values of 8 bytes.
struct Qwords;

impl Lanes for Bytes {
    type T = u8;
    const LANES: usize = 32;
    const BITS: usize = 8;
    fn to_u64(v: u8) -> u64 {
        u64::from(v)
    }
    fn from_u64(v: u64) -> u8 {
        v as u8
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn splat(v: u64) -> __m256i {
        _mm256_set1_epi8(v as u8 as i8)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_right(v: __m256i, s: usize) -> __m256i {
        let shifted = _mm256_srl_epi16(v, _mm_cvtsi32_si128(s as i32));
        _mm256_and_si256(shifted, _mm256_set1_epi8((0xFFu8 >> s) as i8))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_left(v: __m256i, s: usize) -> __m256i {
        let shifted = _mm256_sll_epi16(v, _mm_cvtsi32_si128(s as i32));
        _mm256_and_si256(shifted, _mm256_set1_epi8((0xFFu8 << s) as i8))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi8(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_halves(v: __m256i) -> __m256i {
        let v = _mm256_add_epi8(v, _mm256_slli_si256::<1>(v));
        let v = _mm256_add_epi8(v, _mm256_slli_si256::<2>(v));
        let v = _mm256_add_epi8(v, _mm256_slli_si256::<4>(v));
        _mm256_add_epi8(v, _mm256_slli_si256::<8>(v))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn last_of_halves(v: __m256i) -> __m256i {
        _mm256_shuffle_epi8(v, _mm256_set1_epi8(15))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn first(v: __m256i) -> u64 {
        u64::from(_mm256_cvtsi256_si32(v) as u8)
    }
}

impl Lanes for Words {
    type T = u16;
    const LANES: usize = 16;
    const BITS: usize = 16;
    fn to_u64(v: u16) -> u64 {
        u64::from(v)
    }
    fn from_u64(v: u64) -> u16 {
        v as u16
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn splat(v: u64) -> __m256i {
        _mm256_set1_epi16(v as u16 as i16)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_right(v: __m256i, s: usize) -> __m256i {
        _mm256_srl_epi16(v, _mm_cvtsi32_si128(s as i32))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_left(v: __m256i, s: usize) -> __m256i {
        _mm256_sll_epi16(v, _mm_cvtsi32_si128(s as i32))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi16(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_halves(v: __m256i) -> __m256i {
        let v = _mm256_add_epi16(v, _mm256_slli_si256::<2>(v));
        let v = _mm256_add_epi16(v, _mm256_slli_si256::<4>(v));
        _mm256_add_epi16(v, _mm256_slli_si256::<8>(v))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn last_of_halves(v: __m256i) -> __m256i {
        _mm256_shuffle_epi8(v, _mm256_set1_epi16(0x0F0E))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn first(v: __m256i) -> u64 {
        u64::from(_mm256_cvtsi256_si32(v) as u16)
    }
}

impl Lanes for Dwords {
    type T = u32;
    const LANES: usize = 8;
    const BITS: usize = 32;
    fn to_u64(v: u32) -> u64 {
        u64::from(v)
    }
    fn from_u64(v: u64) -> u32 {
        v as u32
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn splat(v: u64) -> __m256i {
        _mm256_set1_epi32(v as u32 as i32)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_right(v: __m256i, s: usize) -> __m256i {
        _mm256_srl_epi32(v, _mm_cvtsi32_si128(s as i32))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_left(v: __m256i, s: usize) -> __m256i {
        _mm256_sll_epi32(v, _mm_cvtsi32_si128(s as i32))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi32(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_halves(v: __m256i) -> __m256i {
        let v = _mm256_add_epi32(v, _mm256_slli_si256::<4>(v));
        _mm256_add_epi32(v, _mm256_slli_si256::<8>(v))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn last_of_halves(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0xFF>(v)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn first(v: __m256i) -> u64 {
        u64::from(_mm256_cvtsi256_si32(v) as u32)
    }
}

impl Lanes for Qwords {
    type T = u64;
    const LANES: usize = 4;
    const BITS: usize = 64;
    fn to_u64(v: u64) -> u64 {
        v
    }
    fn from_u64(v: u64) -> u64 {
        v
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn splat(v: u64) -> __m256i {
        _mm256_set1_epi64x(v as i64)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_right(v: __m256i, s: usize) -> __m256i {
        _mm256_srl_epi64(v, _mm_cvtsi32_si128(s as i32))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn shift_left(v: __m256i, s: usize) -> __m256i {
        _mm256_sll_epi64(v, _mm_cvtsi32_si128(s as i32))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        _mm256_add_epi64(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sum_halves(v: __m256i) -> __m256i {
        _mm256_add_epi64(v, _mm256_slli_si256::<8>(v))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn last_of_halves(v: __m256i) -> __m256i {
        _mm256_shuffle_epi32::<0b11_10_11_10>(v)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn first(v: __m256i) -> u64 {
        _mm256_extract_epi64::<0>(v) as u64
    }
}

/// Decodes a block a row of `L::LANES` values at a time: unpack, patch, add the reference and,
/// with `prev`, take the running sum (within each 128-bit half, then the low half's total into
/// the high half, then the previous row's last sum into every lane).
///
/// # Safety
/// The CPU must support AVX2. The block's fields must hold what `pack::decode` checks: `region`
/// is `packed_len(W, m, b)` bytes for `W = L::BITS / 8`, `b <= L::BITS`, exceptions lie below
/// `m`, `out` is `W * m` bytes.
#[target_feature(enable = "avx2")]
unsafe fn decode<L: Lanes>(block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
    let Block {
        w,
        b,
        m,
        region,
        exceptions,
        reference,
    } = *block;
    let mut values = [L::T::default(); BLOCK];
    if b > 0 {
        // SAFETY: AVX2 is enabled.
        let low = unsafe { L::splat(low_mask(b)) };
        for row in 0..m.div_ceil(L::LANES) {
            let offset = row * b;
            let (word, shift) = (offset / L::BITS, offset % L::BITS);
            // SAFETY: word < ceil(rows * b / BITS), the words per lane, so the register of words
            // at word * 32 bytes lies in the region; word + 1 likewise when the row straddles
            // into it.
            let v = unsafe {
                let src = region.as_ptr().add(word * 32).cast::<__m256i>();
                let mut v = L::shift_right(_mm256_loadu_si256(src), shift);
                if shift + b > L::BITS {
                    let next = L::shift_left(_mm256_loadu_si256(src.add(1)), L::BITS - shift);
                    v = _mm256_or_si256(v, next);
                }
                _mm256_and_si256(v, low)
            };
            // SAFETY: row < rows <= BLOCK / LANES.
            unsafe { _mm256_storeu_si256(values.as_mut_ptr().add(row * L::LANES).cast(), v) };
        }
    }
    for &(position, high) in exceptions {
        values[position] = L::from_u64(L::to_u64(values[position]) | high);
    }
    let mask = low_mask(L::BITS);
    let whole = m / L::LANES;
    let tail = values[whole * L::LANES..m].iter().map(|&v| L::to_u64(v));
    let (rows_out, tail_out) = out.split_at_mut(whole * 32);
    let tail_out = tail_out.chunks_exact_mut(w);
    // SAFETY: AVX2 is enabled.
    let reference_v = unsafe { L::splat(reference) };
    match prev {
        Some(prev) => {
            // SAFETY: AVX2 is enabled.
            let mut carry = unsafe { L::splat(*prev) };
            for row in 0..whole {
                // SAFETY: AVX2 is enabled; row * LANES + LANES <= m values lie in `values`,
                // and their 32 bytes in `rows_out`.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * L::LANES).cast());
                    let v = L::sum_halves(L::add(v, reference_v));
                    let low_total = L::last_of_halves(v);
                    let v = L::add(v, _mm256_permute2x128_si256::<0x08>(low_total, low_total));
                    let v = L::add(v, carry);
                    let last = L::last_of_halves(v);
                    carry = _mm256_permute2x128_si256::<0x11>(last, last);
                    _mm256_storeu_si256(rows_out.as_mut_ptr().add(row * 32).cast(), v);
                }
            }
            // SAFETY: AVX2 is enabled.
            let mut last = unsafe { L::first(carry) };
            for (v, bytes) in tail.zip(tail_out) {
                last = last.wrapping_add(v.wrapping_add(reference)) & mask;
                write_word(bytes, w, last);
            }
            *prev = last;
        }
        None => {
            for row in 0..whole {
                // SAFETY: as above.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * L::LANES).cast());
                    _mm256_storeu_si256(
                        rows_out.as_mut_ptr().add(row * 32).cast(),
                        L::add(v, reference_v),
                    );
                }
            }
            for (v, bytes) in tail.zip(tail_out) {
                write_word(bytes, w, v.wrapping_add(reference) & mask);
            }
        }
    }
}
