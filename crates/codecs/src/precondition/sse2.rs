//! SSE2 kernels (every x86-64 CPU has SSE2): 16 elements per step.
//!
//! The byte shuffle is a network of `unpacklo/hi_epi8` rounds. Number the bytes of a step by address
//! bits `[register | position]`; one round (pair register `i` with `i + W/2`, write low and high
//! unpacks to registers `2i` and `2i+1`) rotates those bits left by one. Loading 16 `W`-byte elements
//! gives addresses `[element | byte]`; four rounds rotate them to `[byte | element]`, i.e. one
//! register per byte plane. The inverse needs `log2(W)` rounds.

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::scalar;

const STEP: usize = 16;

/// One unpack round over `W` registers.
#[inline(always)]
fn round<const W: usize>(regs: &mut [__m128i; W]) {
    let old = *regs;
    for i in 0..W / 2 {
        // SAFETY: SSE2 is part of the x86-64 baseline and checked before dispatch on x86.
        unsafe {
            regs[2 * i] = _mm_unpacklo_epi8(old[i], old[i + W / 2]);
            regs[2 * i + 1] = _mm_unpackhi_epi8(old[i], old[i + W / 2]);
        }
    }
}

/// Byte shuffle of `n` elements of `W` bytes.
///
/// # Safety
/// The CPU must support SSE2; `input` and `out` hold at least `n * W` bytes.
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn shuffle<const W: usize>(n: usize, input: &[u8], out: &mut [u8]) {
    assert!(input.len() >= n * W && out.len() >= n * W);
    let steps = n / STEP;
    for s in 0..steps {
        let src = input[s * STEP * W..].as_ptr();
        let mut regs = [_mm_setzero_si128(); W];
        for (r, reg) in regs.iter_mut().enumerate() {
            // SAFETY: step s covers input bytes [s*16*W, (s+1)*16*W), inside the asserted length.
            *reg = unsafe { _mm_loadu_si128(src.add(r * 16).cast()) };
        }
        for _ in 0..4 {
            round(&mut regs);
        }
        for (b, reg) in regs.iter().enumerate() {
            // SAFETY: plane b spans out[b*n..(b+1)*n] and s*16+16 <= n.
            unsafe { _mm_storeu_si128(out.as_mut_ptr().add(b * n + s * STEP).cast(), *reg) };
        }
    }
    scalar::shuffle_range(W, n, steps * STEP, input, out);
}

/// Inverse of [`shuffle`].
///
/// # Safety
/// As for [`shuffle`].
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn unshuffle<const W: usize>(n: usize, input: &[u8], out: &mut [u8]) {
    assert!(input.len() >= n * W && out.len() >= n * W);
    let steps = n / STEP;
    for s in 0..steps {
        let mut regs = [_mm_setzero_si128(); W];
        for (b, reg) in regs.iter_mut().enumerate() {
            // SAFETY: plane b spans input[b*n..(b+1)*n] and s*16+16 <= n.
            *reg = unsafe { _mm_loadu_si128(input.as_ptr().add(b * n + s * STEP).cast()) };
        }
        for _ in 0..W.trailing_zeros() {
            round(&mut regs);
        }
        let dst = out[s * STEP * W..].as_mut_ptr();
        for (r, reg) in regs.iter().enumerate() {
            // SAFETY: step s covers out bytes [s*16*W, (s+1)*16*W).
            unsafe { _mm_storeu_si128(dst.add(r * 16).cast(), *reg) };
        }
    }
    scalar::unshuffle_range(W, n, steps * STEP, input, out);
}

/// Bit transpose of one `m`-element block (`m` a multiple of 8), as [`scalar::bitshuffle_range`].
///
/// # Safety
/// The CPU must support SSE2; `input` and `out` hold at least `m * W` bytes.
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn bitshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    assert!(m.is_multiple_of(8) && input.len() >= m * W && out.len() >= m * W);
    let plane_len = m / 8;
    let steps = m / STEP;
    for s in 0..steps {
        let mut regs = [_mm_setzero_si128(); W];
        let src = input[s * STEP * W..].as_ptr();
        for (r, reg) in regs.iter_mut().enumerate() {
            // SAFETY: step s covers input bytes [s*16*W, (s+1)*16*W).
            *reg = unsafe { _mm_loadu_si128(src.add(r * 16).cast()) };
        }
        for _ in 0..4 {
            round(&mut regs);
        }
        for (b, reg) in regs.iter().enumerate() {
            let mut x = *reg;
            for k in (0..8).rev() {
                let bits = _mm_movemask_epi8(x) as u16;
                let at = (b * 8 + k) * plane_len + s * 2;
                out[at..at + 2].copy_from_slice(&bits.to_le_bytes());
                x = _mm_slli_epi16(x, 1);
            }
        }
    }
    scalar::bitshuffle_range(W, m, steps * STEP, input, out);
}

/// Exchanges the bits of `a` under `mask << S` with the bits of `b` under `mask`, in every byte:
/// one step of an 8x8 bit transpose whose rows are spread over registers.
#[inline]
#[target_feature(enable = "sse2")]
fn exchange_bits<const S: i32>(a: &mut __m128i, b: &mut __m128i, mask: __m128i) {
    // 16-bit shifts: the bits they carry across a byte boundary are outside `mask`.
    let t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi16::<S>(*a), *b), mask);
    *b = _mm_xor_si128(*b, t);
    let t_up = if S == 1 {
        _mm_add_epi8(t, t)
    } else {
        _mm_slli_epi16::<S>(t)
    };
    *a = _mm_xor_si128(*a, t_up);
}

/// Transposes the 8x8 bit matrix at each byte position whose row `r` is that byte of `rows[r]`
/// (bit `c` is column `c`): bit `c` of `rows[r]` becomes bit `r` of `rows[c]`, in three rounds of
/// exchanges (of the off-diagonal 4x4 blocks, then 2x2 blocks, then bits).
#[inline]
#[target_feature(enable = "sse2")]
fn transpose_bits_across(rows: &mut [__m128i; 8]) {
    let [r0, r1, r2, r3, r4, r5, r6, r7] = rows;
    let m4 = _mm_set1_epi8(0x0F);
    exchange_bits::<4>(r0, r4, m4);
    exchange_bits::<4>(r1, r5, m4);
    exchange_bits::<4>(r2, r6, m4);
    exchange_bits::<4>(r3, r7, m4);
    let m2 = _mm_set1_epi8(0x33);
    exchange_bits::<2>(r0, r2, m2);
    exchange_bits::<2>(r1, r3, m2);
    exchange_bits::<2>(r4, r6, m2);
    exchange_bits::<2>(r5, r7, m2);
    let m1 = _mm_set1_epi8(0x55);
    exchange_bits::<1>(r0, r1, m1);
    exchange_bits::<1>(r2, r3, m1);
    exchange_bits::<1>(r4, r5, m1);
    exchange_bits::<1>(r6, r7, m1);
}

/// Elements of one [`bitunshuffle_wide`] step: 16 bytes of each bit-plane.
pub(crate) const WIDE: usize = 128;

/// The inverse bit transpose of `n` elements (a multiple of 8, at most 128) whose bytes of
/// bit-plane `p` (of `8 * W`) start at `planes[p * plane_len + first]`, into the first `n * W`
/// bytes of `out`, in element order.
///
/// For each byte `b`, 16 bytes of each of the 8 bit-planes are loaded one plane per register (with
/// fewer than 128 elements, the bytes past them are the next plane's, or zeros at the end of
/// `planes`: their elements are dropped); an 8x8 bit transpose across the registers at each byte
/// position turns them into byte `b` of elements `8 * g + j` (register `j`, byte `g`), and three
/// unpack rounds put those bytes in element order. The rows of bytes then go through the `W`-wide
/// unshuffle network, 16 elements at a time.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn bitunshuffle_wide<const W: usize>(
    planes: &[u8],
    plane_len: usize,
    first: usize,
    n: usize,
    out: &mut [u8],
) {
    assert!(n <= WIDE && n.is_multiple_of(8) && first + n / 8 <= plane_len && out.len() >= n * W);
    // Byte rows, 128 for each b < W, written before they are read: left uninitialised.
    let mut rows = std::mem::MaybeUninit::<[u8; 8 * WIDE]>::uninit();
    let rows = rows.as_mut_ptr().cast::<u8>();
    for b in 0..W {
        let mut regs = [_mm_setzero_si128(); 8];
        for (k, reg) in regs.iter_mut().enumerate() {
            let at = (b * 8 + k) * plane_len + first;
            let bytes = match planes.get(at..at + 16) {
                Some(bytes) => bytes.try_into().expect("16 bytes"),
                None => {
                    let mut last = [0u8; 16];
                    last[..n / 8].copy_from_slice(&planes[at..at + n / 8]);
                    last
                }
            };
            // SAFETY: `bytes` holds the 16 bytes read.
            *reg = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
        }
        transpose_bits_across(&mut regs);
        for _ in 0..3 {
            round(&mut regs);
        }
        for (r, reg) in regs.iter().enumerate() {
            // SAFETY: b < W <= 8 and r < 8: inside the 8 * 128 bytes of rows.
            unsafe { _mm_storeu_si128(rows.add(b * WIDE + r * 16).cast(), *reg) };
        }
    }
    for s in 0..n.div_ceil(STEP) {
        let mut regs = [_mm_setzero_si128(); W];
        for (b, reg) in regs.iter_mut().enumerate() {
            // SAFETY: the loop above wrote the 128 bytes of row b, and s * 16 + 16 <= 128.
            *reg = unsafe { _mm_loadu_si128(rows.add(b * WIDE + s * STEP).cast()) };
        }
        for _ in 0..W.trailing_zeros() {
            round(&mut regs);
        }
        let at = s * STEP * W;
        if at + STEP * W <= n * W {
            for (r, reg) in regs.iter().enumerate() {
                // SAFETY: the step's 16 * W bytes lie in out, whose length was asserted.
                unsafe { _mm_storeu_si128(out.as_mut_ptr().add(at + r * 16).cast(), *reg) };
            }
        } else {
            // The last 8 elements: through a buffer.
            let mut step = [0u8; STEP * 8];
            for (r, reg) in regs.iter().enumerate() {
                // SAFETY: r < W <= 8: inside the 128 bytes of step.
                unsafe { _mm_storeu_si128(step.as_mut_ptr().add(r * 16).cast(), *reg) };
            }
            out[at..n * W].copy_from_slice(&step[..n * W - at]);
        }
    }
}

/// Inverse of [`bitshuffle`]: [`bitunshuffle_wide`] steps of 128 elements, the last one shorter.
///
/// # Safety
/// As for [`bitshuffle`].
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn bitunshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    assert!(m.is_multiple_of(8) && input.len() >= m * W && out.len() >= m * W);
    for c in (0..m).step_by(WIDE) {
        let n = WIDE.min(m - c);
        // SAFETY: the caller guarantees SSE2.
        unsafe { bitunshuffle_wide::<W>(input, m / 8, c / 8, n, &mut out[c * W..]) };
    }
}
