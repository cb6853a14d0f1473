//! AVX2 decoding of the `for` / `delta-for` lane layout (see `pack`) for values of 1, 2, 4 and 8
//! bytes.
//!
//! A row of the layout is one register of consecutive values (32 of 1 byte, 16 of 2, 8 of 4, 4
//! of 8): it is read with one or two loads and a shift pair, the exceptions are patched into the
//! block, and the reference is added (and, for `delta-for`, the running sum taken) a register at
//! a time before one store per row. AVX2 has no 8-bit shifts: bytes shift as 16-bit lanes, masked.

use std::arch::x86_64::*;

use super::pack::{BLOCK, Block, Scalar, Unpacker};

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
            1 => unsafe { decode8(block, prev, out) },
            // SAFETY: as above.
            2 => unsafe { decode16(block, prev, out) },
            // SAFETY: as above.
            4 => unsafe { decode32(block, prev, out) },
            // SAFETY: as above.
            8 => unsafe { decode64(block, prev, out) },
            _ => Scalar.decode_block(block, prev, out),
        }
    }
}

/// Rows of 32 one-byte values: as [`decode32`], with 8-bit shifts made of 16-bit ones.
///
/// # Safety
/// As for [`decode32`], with `packed_len(1, m, b)`, `b <= 8` and `out` of `m` bytes.
#[target_feature(enable = "avx2")]
unsafe fn decode8(block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
    const LANES: usize = 32;
    let Block {
        b,
        m,
        region,
        exceptions,
        reference,
        ..
    } = *block;
    let mut values = [0u8; BLOCK];
    let low = _mm256_set1_epi8(((1u16 << b) - 1) as u8 as i8);
    if b > 0 {
        for row in 0..m.div_ceil(LANES) {
            let offset = row * b;
            let (word, shift) = (offset / 8, offset % 8);
            // SAFETY: as in decode32, for 1-byte words.
            let v = unsafe {
                let src = region.as_ptr().add(word * LANES).cast::<__m256i>();
                let right =
                    _mm256_srl_epi16(_mm256_loadu_si256(src), _mm_cvtsi32_si128(shift as i32));
                let mut v = _mm256_and_si256(right, _mm256_set1_epi8((0xFFu8 >> shift) as i8));
                if shift + b > 8 {
                    let left = 8 - shift;
                    let next = _mm256_sll_epi16(
                        _mm256_loadu_si256(src.add(1)),
                        _mm_cvtsi32_si128(left as i32),
                    );
                    v = _mm256_or_si256(
                        v,
                        _mm256_and_si256(next, _mm256_set1_epi8((0xFFu8 << left) as i8)),
                    );
                }
                _mm256_and_si256(v, low)
            };
            // SAFETY: row < rows <= BLOCK / LANES.
            unsafe { _mm256_storeu_si256(values.as_mut_ptr().add(row * LANES).cast(), v) };
        }
    }
    for &(position, high) in exceptions {
        values[position] |= high as u8;
    }
    let reference_v = _mm256_set1_epi8(reference as u8 as i8);
    let whole = m / LANES;
    match prev {
        Some(prev) => {
            let mut carry = _mm256_set1_epi8(*prev as u8 as i8);
            let last_byte = _mm256_set1_epi8(15);
            for row in 0..whole {
                // SAFETY: row * 32 + 32 <= m <= BLOCK values and bytes of out.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let mut v = _mm256_add_epi8(v, reference_v);
                    v = _mm256_add_epi8(v, _mm256_slli_si256::<1>(v));
                    v = _mm256_add_epi8(v, _mm256_slli_si256::<2>(v));
                    v = _mm256_add_epi8(v, _mm256_slli_si256::<4>(v));
                    v = _mm256_add_epi8(v, _mm256_slli_si256::<8>(v));
                    let low_total = _mm256_shuffle_epi8(v, last_byte);
                    v = _mm256_add_epi8(v, _mm256_permute2x128_si256::<0x08>(low_total, low_total));
                    v = _mm256_add_epi8(v, carry);
                    let last = _mm256_shuffle_epi8(v, last_byte);
                    carry = _mm256_permute2x128_si256::<0x11>(last, last);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES).cast(), v);
                }
            }
            let mut last = _mm256_cvtsi256_si32(carry) as u8;
            for (v, byte) in values[whole * LANES..m]
                .iter()
                .zip(&mut out[whole * LANES..])
            {
                last = last.wrapping_add(v.wrapping_add(reference as u8));
                *byte = last;
            }
            *prev = u64::from(last);
        }
        None => {
            for row in 0..whole {
                // SAFETY: as above.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let v = _mm256_add_epi8(v, reference_v);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES).cast(), v);
                }
            }
            for (v, byte) in values[whole * LANES..m]
                .iter()
                .zip(&mut out[whole * LANES..])
            {
                *byte = v.wrapping_add(reference as u8);
            }
        }
    }
}

/// Rows of 16 two-byte values: as [`decode32`].
///
/// # Safety
/// As for [`decode32`], with `packed_len(2, m, b)`, `b <= 16` and `out` of `2 * m` bytes.
#[target_feature(enable = "avx2")]
unsafe fn decode16(block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
    const LANES: usize = 16;
    let Block {
        b,
        m,
        region,
        exceptions,
        reference,
        ..
    } = *block;
    let mut values = [0u16; BLOCK];
    let low = _mm256_set1_epi16(((1u32 << b) - 1) as u16 as i16);
    if b > 0 {
        for row in 0..m.div_ceil(LANES) {
            let offset = row * b;
            let (word, shift) = (offset / 16, offset % 16);
            // SAFETY: as in decode32, for 2-byte words.
            let v = unsafe {
                let src = region.as_ptr().add(word * LANES * 2).cast::<__m256i>();
                let mut v =
                    _mm256_srl_epi16(_mm256_loadu_si256(src), _mm_cvtsi32_si128(shift as i32));
                if shift + b > 16 {
                    let next = _mm256_loadu_si256(src.add(1));
                    v = _mm256_or_si256(
                        v,
                        _mm256_sll_epi16(next, _mm_cvtsi32_si128((16 - shift) as i32)),
                    );
                }
                _mm256_and_si256(v, low)
            };
            // SAFETY: row < rows <= BLOCK / LANES.
            unsafe { _mm256_storeu_si256(values.as_mut_ptr().add(row * LANES).cast(), v) };
        }
    }
    for &(position, high) in exceptions {
        values[position] |= high as u16;
    }
    let reference_v = _mm256_set1_epi16(reference as u16 as i16);
    let whole = m / LANES;
    match prev {
        Some(prev) => {
            let mut carry = _mm256_set1_epi16(*prev as u16 as i16);
            let last_pair = _mm256_set1_epi16(0x0F0E);
            for row in 0..whole {
                // SAFETY: row * 16 + 16 <= m <= BLOCK values and 2 * m bytes of out.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let mut v = _mm256_add_epi16(v, reference_v);
                    v = _mm256_add_epi16(v, _mm256_slli_si256::<2>(v));
                    v = _mm256_add_epi16(v, _mm256_slli_si256::<4>(v));
                    v = _mm256_add_epi16(v, _mm256_slli_si256::<8>(v));
                    let low_total = _mm256_shuffle_epi8(v, last_pair);
                    v = _mm256_add_epi16(
                        v,
                        _mm256_permute2x128_si256::<0x08>(low_total, low_total),
                    );
                    v = _mm256_add_epi16(v, carry);
                    let last = _mm256_shuffle_epi8(v, last_pair);
                    carry = _mm256_permute2x128_si256::<0x11>(last, last);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES * 2).cast(), v);
                }
            }
            let mut last = _mm256_cvtsi256_si32(carry) as u16;
            for (v, bytes) in values[whole * LANES..m]
                .iter()
                .zip(out[whole * LANES * 2..].chunks_exact_mut(2))
            {
                last = last.wrapping_add(v.wrapping_add(reference as u16));
                bytes.copy_from_slice(&last.to_le_bytes());
            }
            *prev = u64::from(last);
        }
        None => {
            for row in 0..whole {
                // SAFETY: as above.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let v = _mm256_add_epi16(v, reference_v);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES * 2).cast(), v);
                }
            }
            for (v, bytes) in values[whole * LANES..m]
                .iter()
                .zip(out[whole * LANES * 2..].chunks_exact_mut(2))
            {
                bytes.copy_from_slice(&v.wrapping_add(reference as u16).to_le_bytes());
            }
        }
    }
}

/// Rows of 8 four-byte values: unpack, patch, add the reference, sum.
///
/// # Safety
/// The CPU must support AVX2. The block's fields must hold what `pack::decode` checks: `region`
/// is `packed_len(4, m, b)` bytes, `b <= 32`, exceptions lie below `m`, `out` is `4 * m` bytes.
#[target_feature(enable = "avx2")]
unsafe fn decode32(block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
    const LANES: usize = 8;
    let Block {
        b,
        m,
        region,
        exceptions,
        reference,
        ..
    } = *block;
    let rows = m.div_ceil(LANES);
    let mut values = [0u32; BLOCK];
    let low = if b >= 32 { u32::MAX } else { (1u32 << b) - 1 };
    let low = _mm256_set1_epi32(low as i32);
    if b > 0 {
        for row in 0..rows {
            let offset = row * b;
            let (word, shift) = (offset / 32, offset % 32);
            // SAFETY: word < ceil(rows * b / 32), the words per lane, so the 8 words at
            // word * LANES lie in the region; word + 1 likewise when the row straddles into it.
            let v = unsafe {
                let src = region.as_ptr().add(word * LANES * 4).cast::<__m256i>();
                let mut v =
                    _mm256_srl_epi32(_mm256_loadu_si256(src), _mm_cvtsi32_si128(shift as i32));
                if shift + b > 32 {
                    let next = _mm256_loadu_si256(src.add(1));
                    v = _mm256_or_si256(
                        v,
                        _mm256_sll_epi32(next, _mm_cvtsi32_si128((32 - shift) as i32)),
                    );
                }
                _mm256_and_si256(v, low)
            };
            // SAFETY: row < rows <= BLOCK / LANES.
            unsafe { _mm256_storeu_si256(values.as_mut_ptr().add(row * LANES).cast(), v) };
        }
    }
    for &(position, high) in exceptions {
        values[position] |= high as u32;
    }
    let reference = _mm256_set1_epi32(reference as i32);
    let whole = m / LANES;
    match prev {
        Some(prev) => {
            let mut carry = _mm256_set1_epi32(*prev as u32 as i32);
            for row in 0..whole {
                // SAFETY: row * 8 + 8 <= m <= BLOCK values and 4 * m bytes of out.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let mut v = _mm256_add_epi32(v, reference);
                    // Running sum within each 128-bit half, then the low half's total into the high half.
                    v = _mm256_add_epi32(v, _mm256_slli_si256::<4>(v));
                    v = _mm256_add_epi32(v, _mm256_slli_si256::<8>(v));
                    let low_total = _mm256_shuffle_epi32::<0xFF>(v);
                    v = _mm256_add_epi32(
                        v,
                        _mm256_permute2x128_si256::<0x08>(low_total, low_total),
                    );
                    v = _mm256_add_epi32(v, carry);
                    carry = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7));
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES * 4).cast(), v);
                }
            }
            let mut last = _mm256_cvtsi256_si32(carry) as u32;
            for (v, bytes) in values[whole * LANES..m]
                .iter()
                .zip(out[whole * LANES * 4..].chunks_exact_mut(4))
            {
                last = last.wrapping_add(v.wrapping_add(block.reference as u32));
                bytes.copy_from_slice(&last.to_le_bytes());
            }
            *prev = u64::from(last);
        }
        None => {
            for row in 0..whole {
                // SAFETY: as above.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let v = _mm256_add_epi32(v, reference);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES * 4).cast(), v);
                }
            }
            for (v, bytes) in values[whole * LANES..m]
                .iter()
                .zip(out[whole * LANES * 4..].chunks_exact_mut(4))
            {
                bytes.copy_from_slice(&v.wrapping_add(block.reference as u32).to_le_bytes());
            }
        }
    }
}

/// Rows of 4 eight-byte values: as [`decode32`].
///
/// # Safety
/// As for [`decode32`], with `packed_len(8, m, b)`, `b <= 64` and `out` of `8 * m` bytes.
#[target_feature(enable = "avx2")]
unsafe fn decode64(block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
    const LANES: usize = 4;
    let Block {
        b,
        m,
        region,
        exceptions,
        reference,
        ..
    } = *block;
    let rows = m.div_ceil(LANES);
    let mut values = [0u64; BLOCK];
    let low = if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
    let low = _mm256_set1_epi64x(low as i64);
    if b > 0 {
        for row in 0..rows {
            let offset = row * b;
            let (word, shift) = (offset / 64, offset % 64);
            // SAFETY: as in decode32, for 64-bit words.
            let v = unsafe {
                let src = region.as_ptr().add(word * LANES * 8).cast::<__m256i>();
                let mut v =
                    _mm256_srl_epi64(_mm256_loadu_si256(src), _mm_cvtsi32_si128(shift as i32));
                if shift + b > 64 {
                    let next = _mm256_loadu_si256(src.add(1));
                    v = _mm256_or_si256(
                        v,
                        _mm256_sll_epi64(next, _mm_cvtsi32_si128((64 - shift) as i32)),
                    );
                }
                _mm256_and_si256(v, low)
            };
            // SAFETY: row < rows <= BLOCK / LANES.
            unsafe { _mm256_storeu_si256(values.as_mut_ptr().add(row * LANES).cast(), v) };
        }
    }
    for &(position, high) in exceptions {
        values[position] |= high;
    }
    let reference_v = _mm256_set1_epi64x(reference as i64);
    let whole = m / LANES;
    match prev {
        Some(prev) => {
            let mut carry = _mm256_set1_epi64x(*prev as i64);
            for row in 0..whole {
                // SAFETY: row * 4 + 4 <= m <= BLOCK values and 8 * m bytes of out.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let mut v = _mm256_add_epi64(v, reference_v);
                    v = _mm256_add_epi64(v, _mm256_slli_si256::<8>(v));
                    let low_total = _mm256_permute4x64_epi64::<0b01_01_01_01>(v);
                    v = _mm256_add_epi64(
                        v,
                        _mm256_blend_epi32::<0b1111_0000>(_mm256_setzero_si256(), low_total),
                    );
                    v = _mm256_add_epi64(v, carry);
                    carry = _mm256_permute4x64_epi64::<0b11_11_11_11>(v);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES * 8).cast(), v);
                }
            }
            let mut last = _mm256_extract_epi64::<0>(carry) as u64;
            for (v, bytes) in values[whole * LANES..m]
                .iter()
                .zip(out[whole * LANES * 8..].chunks_exact_mut(8))
            {
                last = last.wrapping_add(v.wrapping_add(reference));
                bytes.copy_from_slice(&last.to_le_bytes());
            }
            *prev = last;
        }
        None => {
            for row in 0..whole {
                // SAFETY: as above.
                unsafe {
                    let v = _mm256_loadu_si256(values.as_ptr().add(row * LANES).cast());
                    let v = _mm256_add_epi64(v, reference_v);
                    _mm256_storeu_si256(out.as_mut_ptr().add(row * LANES * 8).cast(), v);
                }
            }
            for (v, bytes) in values[whole * LANES..m]
                .iter()
                .zip(out[whole * LANES * 8..].chunks_exact_mut(8))
            {
                bytes.copy_from_slice(&v.wrapping_add(reference).to_le_bytes());
            }
        }
    }
}
