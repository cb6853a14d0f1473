//! AVX2 kernels: 32 elements per step.
//!
//! The same unpack network as the SSE2 kernels (see there), run in both 128-bit lanes at once. The
//! lane bit is not rotated by the rounds, so each register is loaded with 16 bytes from the first half
//! of the step in its low lane and the matching 16 bytes from the second half in its high lane: after
//! the rounds, byte plane `b` of all 32 elements sits in register `b`, in element order.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use std::ops::Range;

use super::{Plane, PlaneSource, scalar, sse2};

const STEP: usize = 32;

#[inline]
#[target_feature(enable = "avx2")]
fn round<const W: usize>(regs: &mut [__m256i; W]) {
    let old = *regs;
    for i in 0..W / 2 {
        regs[2 * i] = _mm256_unpacklo_epi8(old[i], old[i + W / 2]);
        regs[2 * i + 1] = _mm256_unpackhi_epi8(old[i], old[i + W / 2]);
    }
}

/// Loads one step (32 elements at `src`) into `W` registers, lanes split as the module docs say.
///
/// # Safety
/// `src` must be valid for reading `32 * W` bytes.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_elements<const W: usize>(src: *const u8) -> [__m256i; W] {
    let mut regs = [_mm256_setzero_si256(); W];
    for (r, reg) in regs.iter_mut().enumerate() {
        // SAFETY: r*16 + 16 <= 16*W and 16*W + r*16 + 16 <= 32*W.
        unsafe {
            let lo = _mm_loadu_si128(src.add(r * 16).cast());
            let hi = _mm_loadu_si128(src.add(16 * W + r * 16).cast());
            *reg = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
        }
    }
    regs
}

/// Stores `W` registers holding one step of elements to `dst` (inverse of [`load_elements`]).
///
/// # Safety
/// `dst` must be valid for writing `32 * W` bytes.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_elements<const W: usize>(regs: &[__m256i; W], dst: *mut u8) {
    for (r, reg) in regs.iter().enumerate() {
        // SAFETY: as for load_elements.
        unsafe {
            _mm_storeu_si128(dst.add(r * 16).cast(), _mm256_castsi256_si128(*reg));
            _mm_storeu_si128(
                dst.add(16 * W + r * 16).cast(),
                _mm256_extracti128_si256::<1>(*reg),
            );
        }
    }
}

/// Byte shuffle of `n` elements of `W` bytes.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn shuffle<const W: usize>(n: usize, input: &[u8], out: &mut [u8]) {
    assert!(input.len() >= n * W && out.len() >= n * W);
    let steps = n / STEP;
    for s in 0..steps {
        // SAFETY: step s covers input bytes [s*32*W, (s+1)*32*W), inside the asserted length.
        let mut regs = unsafe { load_elements::<W>(input.as_ptr().add(s * STEP * W)) };
        for _ in 0..4 {
            round(&mut regs);
        }
        for (b, reg) in regs.iter().enumerate() {
            // SAFETY: plane b spans out[b*n..(b+1)*n] and s*32+32 <= n.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(b * n + s * STEP).cast(), *reg) };
        }
    }
    scalar::shuffle_range(W, n, steps * STEP, input, out);
}

/// Inverse of [`shuffle`].
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn unshuffle<const W: usize>(n: usize, input: &[u8], out: &mut [u8]) {
    assert!(input.len() >= n * W && out.len() >= n * W);
    let steps = n / STEP;
    for s in 0..steps {
        let mut regs = [_mm256_setzero_si256(); W];
        for (b, reg) in regs.iter_mut().enumerate() {
            // SAFETY: plane b spans input[b*n..(b+1)*n] and s*32+32 <= n.
            *reg = unsafe { _mm256_loadu_si256(input.as_ptr().add(b * n + s * STEP).cast()) };
        }
        for _ in 0..W.trailing_zeros() {
            round(&mut regs);
        }
        // SAFETY: step s covers out bytes [s*32*W, (s+1)*32*W).
        unsafe { store_elements(&regs, out.as_mut_ptr().add(s * STEP * W)) };
    }
    scalar::unshuffle_range(W, n, steps * STEP, input, out);
}

/// Bit transpose of one `m`-element block (`m` a multiple of 8), as [`scalar::bitshuffle_range`].
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bitshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    // SAFETY: the caller guarantees AVX2.
    unsafe { bitshuffle_from::<W>(m, 0, input, out) }
}

/// [`bitshuffle`] of the elements from `first` (a multiple of 32) on.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bitshuffle_from<const W: usize>(
    m: usize,
    first: usize,
    input: &[u8],
    out: &mut [u8],
) {
    assert!(m.is_multiple_of(8) && first.is_multiple_of(STEP) && first <= m);
    assert!(input.len() >= m * W && out.len() >= m * W);
    let plane_len = m / 8;
    let steps = m / STEP;
    for s in first / STEP..steps {
        let src = input[s * STEP * W..].as_ptr();
        // SAFETY: step s covers input bytes [s*32*W, (s+1)*32*W).
        let mut regs = unsafe { load_elements::<W>(src) };
        for _ in 0..4 {
            round(&mut regs);
        }
        for (b, reg) in regs.iter().enumerate() {
            let mut x = *reg;
            for k in (0..8).rev() {
                let bits = _mm256_movemask_epi8(x) as u32;
                let at = (b * 8 + k) * plane_len + s * 4;
                out[at..at + 4].copy_from_slice(&bits.to_le_bytes());
                x = _mm256_slli_epi16::<1>(x);
            }
        }
    }
    scalar::bitshuffle_range(W, m, steps * STEP, input, out);
}

/// Exchanges the bits of `a` under `mask << S` with the bits of `b` under `mask`, in every byte:
/// one step of an 8x8 bit transpose whose rows are spread over registers.
#[inline]
#[target_feature(enable = "avx2")]
fn exchange_bits<const S: i32>(a: &mut __m256i, b: &mut __m256i, mask: __m256i) {
    // 16-bit shifts: the bits they carry across a byte boundary are outside `mask`.
    let t = _mm256_and_si256(_mm256_xor_si256(_mm256_srli_epi16::<S>(*a), *b), mask);
    *b = _mm256_xor_si256(*b, t);
    let t_up = if S == 1 {
        _mm256_add_epi8(t, t)
    } else {
        _mm256_slli_epi16::<S>(t)
    };
    *a = _mm256_xor_si256(*a, t_up);
}

/// Transposes the 8x8 bit matrix at each byte position whose row `r` is that byte of `rows[r]`
/// (bit `c` is column `c`): bit `c` of `rows[r]` becomes bit `r` of `rows[c]`, in three rounds of
/// exchanges (of the off-diagonal 4x4 blocks, then 2x2 blocks, then bits).
#[inline]
#[target_feature(enable = "avx2")]
fn transpose_bits_across(rows: &mut [__m256i; 8]) {
    let [r0, r1, r2, r3, r4, r5, r6, r7] = rows;
    let m4 = _mm256_set1_epi8(0x0F);
    exchange_bits::<4>(r0, r4, m4);
    exchange_bits::<4>(r1, r5, m4);
    exchange_bits::<4>(r2, r6, m4);
    exchange_bits::<4>(r3, r7, m4);
    let m2 = _mm256_set1_epi8(0x33);
    exchange_bits::<2>(r0, r2, m2);
    exchange_bits::<2>(r1, r3, m2);
    exchange_bits::<2>(r4, r6, m2);
    exchange_bits::<2>(r5, r7, m2);
    let m1 = _mm256_set1_epi8(0x55);
    exchange_bits::<1>(r0, r1, m1);
    exchange_bits::<1>(r2, r3, m1);
    exchange_bits::<1>(r4, r5, m1);
    exchange_bits::<1>(r6, r7, m1);
}

/// Elements per step of the wide bitunshuffle path: 32 bytes of each bit-plane.
pub(crate) const WIDE: usize = 256;

/// Inverse of [`bitshuffle`].
///
/// Steps of 256 elements ([`bitunshuffle_steps`]), then the last elements, under 256, through the
/// SSE2 kernel's steps of up to 128 elements ([`sse2::bitunshuffle_wide`]), a lone group of 8
/// through the scalar kernel.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bitunshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    // SAFETY: the caller guarantees AVX2.
    unsafe { bitunshuffle_from::<W>(m, 0, input, out) }
}

/// [`bitunshuffle`] of the elements from `first` (a multiple of 256) on.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bitunshuffle_from<const W: usize>(
    m: usize,
    first: usize,
    input: &[u8],
    out: &mut [u8],
) {
    assert!(m.is_multiple_of(8) && first.is_multiple_of(WIDE) && first <= m);
    assert!(input.len() >= m * W && out.len() >= m * W);
    let plane_len = m / 8;
    let wide_steps = m / WIDE;
    let source = PlaneSource::Block(input, plane_len);
    // SAFETY: the caller guarantees AVX2.
    unsafe { bitunshuffle_steps::<W>(first / WIDE..wide_steps, source, out) };
    // The rest, under 256 elements: SSE2 steps of up to 128, but for a lone group of 8 elements,
    // which the scalar kernel does in half the time.
    for c in (wide_steps * WIDE..m).step_by(sse2::WIDE) {
        match sse2::WIDE.min(m - c) {
            8 => scalar::bitunshuffle_groups::<W>(m, c / 8..m / 8, input, out),
            // SAFETY: AVX2 implies SSE2.
            n => unsafe {
                sse2::bitunshuffle_wide::<W>(input, plane_len, c / 8, n, &mut out[c * W..])
            },
        }
    }
}

/// Steps `steps` of 256 elements of a bitunshuffle from its bit-planes (plane `b * 8 + k`: bit `k`
/// of byte `b` of each element, at least `steps.end * 32` bytes of it) into `out`, step `c` at
/// `out[c * 256 * W..]`.
///
/// Each step of 256 elements loads, for each byte `b`, 32 bytes of each of its 8 planes into 8
/// registers, one plane each; an 8x8 bit transpose across the registers at each byte position
/// turns them into byte `b` of elements `8 * g + j` (register `j`, byte `g`), and the 8-wide
/// unshuffle network puts those bytes in element order. The rows of bytes then go through the
/// `W`-wide unshuffle network.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn bitunshuffle_steps<const W: usize>(
    steps: Range<usize>,
    source: PlaneSource<'_>,
    out: &mut [u8],
) {
    assert!(source.holds(W, steps.end * (WIDE / 8)) && out.len() >= steps.end * WIDE * W);
    // Byte rows of one step, W * 256 bytes of them written before they are read: left
    // uninitialised (zeroing them cost more than a 2 KiB RAC unit's whole transpose's tenth).
    let mut rows = std::mem::MaybeUninit::<[u8; 8 * WIDE]>::uninit();
    let rows = rows.as_mut_ptr().cast::<u8>();
    for c in steps {
        for b in 0..W {
            let mut regs = [_mm256_setzero_si256(); 8];
            for (k, reg) in regs.iter_mut().enumerate() {
                let p = b * 8 + k;
                let at = c * (WIDE / 8);
                *reg = match source {
                    // SAFETY: plane p spans input[p * plane_len..][..plane_len], and plane_len
                    // >= steps.end * 32 >= at + 32 (asserted above).
                    PlaneSource::Block(input, plane_len) => unsafe {
                        _mm256_loadu_si256(input.as_ptr().add(p * plane_len + at).cast())
                    },
                    PlaneSource::Planes(planes) => match planes[p] {
                        // SAFETY: the plane holds at least steps.end * 32 >= at + 32 bytes
                        // (asserted above).
                        Plane::Bytes(bytes) => unsafe {
                            _mm256_loadu_si256(bytes.as_ptr().add(at).cast())
                        },
                        Plane::Constant(value) => _mm256_set1_epi8(value as i8),
                    },
                };
            }
            transpose_bits_across(&mut regs);
            for _ in 0..3 {
                round(&mut regs);
            }
            let dst = if W == 1 {
                out[c * WIDE..].as_mut_ptr()
            } else {
                // SAFETY: b < W <= 8, so b * 256 is inside the 8 * 256 bytes of rows.
                unsafe { rows.add(b * WIDE) }
            };
            // SAFETY: dst has room for 256 bytes: out holds steps.end * 256 >= (c+1)*256 bytes
            // when W == 1, and rows holds 8 * 256 >= (b+1) * 256 bytes.
            unsafe { store_elements::<8>(&regs, dst) };
        }
        if W > 1 {
            // SAFETY: the loop above wrote bytes b * 256..(b + 1) * 256 of rows for every b < W;
            // the caller guarantees AVX2.
            unsafe {
                let rows = std::slice::from_raw_parts(rows, W * WIDE);
                unshuffle::<W>(WIDE, rows, &mut out[c * WIDE * W..(c + 1) * WIDE * W])
            };
        }
    }
}
