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
    assert!(m % 8 == 0 && input.len() >= m * W && out.len() >= m * W);
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

/// Inverse of [`bitshuffle`].
///
/// # Safety
/// As for [`bitshuffle`].
#[target_feature(enable = "sse2")]
pub(crate) unsafe fn bitunshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    assert!(m % 8 == 0 && input.len() >= m * W && out.len() >= m * W);
    let plane_len = m / 8;
    let steps = m / STEP;
    for s in 0..steps {
        let mut regs = [_mm_setzero_si128(); W];
        for (b, reg) in regs.iter_mut().enumerate() {
            // Put the 16-bit words of the 8 bit-planes side by side, then regroup them so that byte
            // `g * 8 + k` holds plane k's bits for element group g: a movemask then reads one byte of
            // element `g * 8 + 7`, and each left shift moves to the element before.
            let mut words = [0i16; 8];
            for (k, word) in words.iter_mut().enumerate() {
                let at = (b * 8 + k) * plane_len + s * 2;
                *word = i16::from_le_bytes([input[at], input[at + 1]]);
            }
            let planes = _mm_setr_epi16(
                words[0], words[1], words[2], words[3], words[4], words[5], words[6], words[7],
            );
            let low = _mm_set1_epi16(0x00ff);
            let mut x = _mm_packus_epi16(_mm_and_si128(planes, low), _mm_srli_epi16(planes, 8));
            let mut bytes = [0u16; 8];
            for j in (0..8).rev() {
                bytes[j] = _mm_movemask_epi8(x) as u16;
                x = _mm_slli_epi16(x, 1);
            }
            // bytes[j] holds element j (low byte) and element 8 + j (high byte): deinterleave them.
            let y = _mm_setr_epi16(
                bytes[0] as i16,
                bytes[1] as i16,
                bytes[2] as i16,
                bytes[3] as i16,
                bytes[4] as i16,
                bytes[5] as i16,
                bytes[6] as i16,
                bytes[7] as i16,
            );
            *reg = _mm_packus_epi16(_mm_and_si128(y, low), _mm_srli_epi16(y, 8));
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
    scalar::bitunshuffle_range(W, m, steps * STEP, input, out);
}
