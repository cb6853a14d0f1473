//! AVX-512 kernels (F, BW and VBMI, with GFNI): the byte shuffle 64 elements per step, the bit
//! transpose 512.
//!
//! Both are made of one move, the *zip* of two registers: `vpermt2b` interleaving the bytes of
//! the low halves of `a` and `b` (`a0 b0 a1 b1 ...`) into one register and those of the high
//! halves into another. [`zip`] runs it over `N` registers, pairing those that differ in register
//! bit `log2 N - 1`, then in the bit below, down to bit 0: byte `p` of register `x` ends at byte
//! `p * N + x` of the `N` registers laid end to end. That is the byte unshuffle of `N` planes of
//! 64 bytes; [`unzip`], the same rounds inverted, is the shuffle.
//!
//! The bit transpose of a step of 512 elements works one byte `b` of the elements at a time. Its
//! 8 bit-planes hold 64 bytes each, byte `j` standing for elements `8j..8j + 8`; zipped (plane
//! `b * 8 + k` as register `7 - k`), they give one 64-bit word per group of 8 elements whose byte
//! `7 - k` is plane `k`'s: an 8x8 bit matrix that one `vgf2p8affineqb` per register transposes
//! into the group's 8 bytes `b`, in element order. The bytes `b` of the `W` widths are then
//! unshuffled into elements as above. Bitshuffle is the same backwards, with the words' bytes
//! reversed first (the affine instruction takes bit `k` of its result from byte `7 - k`).

#[cfg(target_arch = "x86")]
use std::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
use std::ops::Range;

use super::{Plane, PlaneSource, avx2, scalar};

/// Elements per step of the byte shuffle.
const STEP: usize = 64;

/// Elements per step of the bit transpose: 64 bytes of each bit-plane.
pub(crate) const WIDE: usize = 512;

/// Zip indices: byte `p` of the result takes byte `p / 2` of `a` (`p` even) or of `b` (odd),
/// plus `half` (0 for the low halves, 32 for the high ones).
const fn zip_indices(half: u8) -> [u8; 64] {
    let mut idx = [0; 64];
    let mut p = 0;
    while p < 64 {
        idx[p] = (p as u8 & 1) * 64 + half + (p as u8 >> 1);
        p += 1;
    }
    idx
}

/// Unzip indices: byte `q` of the result takes byte `2q + parity` of `a` and `b` laid end to end.
const fn unzip_indices(parity: u8) -> [u8; 64] {
    let mut idx = [0; 64];
    let mut q = 0;
    while q < 64 {
        idx[q] = 2 * q as u8 + parity;
        q += 1;
    }
    idx
}

static ZIP_LO: [u8; 64] = zip_indices(0);
static ZIP_HI: [u8; 64] = zip_indices(32);
static UNZIP_EVEN: [u8; 64] = unzip_indices(0);
static UNZIP_ODD: [u8; 64] = unzip_indices(1);

/// Reverses the bytes of every 64-bit word (a `vpshufb` pattern, repeated in each 128-bit lane).
static REVERSE_WORDS: [u8; 64] = {
    let mut idx = [0; 64];
    let mut i = 0;
    while i < 64 {
        idx[i] = (i as u8 & !7 & 15) | (7 - (i as u8 & 7));
        i += 1;
    }
    idx
};

/// Bit `i` set in byte `i` of a 64-bit word: as the vector of the affine instruction, whose
/// matrix is the data, it makes the result's byte `i` bit `k` the matrix's byte `7 - k` bit `i`.
const IDENTITY: u64 = 0x8040_2010_0804_0201;

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn load_indices(idx: &[u8; 64]) -> __m512i {
    // SAFETY: idx holds 64 bytes.
    unsafe { _mm512_loadu_si512(idx.as_ptr().cast()) }
}

/// Interleaves `N` registers byte by byte (see the module docs): byte `p` of register `x` moves to
/// byte `p * N + x` of the registers laid end to end.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn zip<const N: usize>(regs: &mut [__m512i; N]) {
    let tables = (load_indices(&ZIP_LO), load_indices(&ZIP_HI));
    for round in (0..N.trailing_zeros()).rev() {
        pair_round(regs, 1 << round, tables);
    }
}

/// Inverse of [`zip`]: byte `p * N + x` of the registers laid end to end moves to byte `p` of
/// register `x`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn unzip<const N: usize>(regs: &mut [__m512i; N]) {
    let tables = (load_indices(&UNZIP_EVEN), load_indices(&UNZIP_ODD));
    for round in 0..N.trailing_zeros() {
        pair_round(regs, 1 << round, tables);
    }
}

/// One round of [`zip`] or [`unzip`]: each pair of registers `i` and `i | r` (`i & r == 0`)
/// becomes the two-register permutations of `a` then `b` by the two index tables.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn pair_round<const N: usize>(regs: &mut [__m512i; N], r: usize, tables: (__m512i, __m512i)) {
    // A plain counted loop, which the compiler unrolls, keeping the registers in registers.
    for i in 0..N {
        if i & r == 0 {
            let (a, b) = (regs[i], regs[i | r]);
            regs[i] = _mm512_permutex2var_epi8(a, tables.0, b);
            regs[i | r] = _mm512_permutex2var_epi8(a, tables.1, b);
        }
    }
}

/// Loads `N` registers from `src`, `stride` bytes apart.
///
/// # Safety
/// `src + r * stride` must be valid for reading 64 bytes for every `r < N`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn load<const N: usize>(src: *const u8, stride: usize) -> [__m512i; N] {
    // SAFETY: the caller guarantees each register's 64 bytes.
    std::array::from_fn(|r| unsafe { _mm512_loadu_si512(src.add(r * stride).cast()) })
}

/// Stores `N` registers to `dst`, `stride` bytes apart.
///
/// # Safety
/// `dst + r * stride` must be valid for writing 64 bytes for every `r < N`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn store<const N: usize>(regs: &[__m512i; N], dst: *mut u8, stride: usize) {
    for (r, reg) in regs.iter().enumerate() {
        // SAFETY: the caller guarantees each register's 64 bytes.
        unsafe { _mm512_storeu_si512(dst.add(r * stride).cast(), *reg) };
    }
}

/// Byte shuffle of `n` elements of `W` bytes.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(crate) unsafe fn shuffle<const W: usize>(n: usize, input: &[u8], out: &mut [u8]) {
    assert!(input.len() >= n * W && out.len() >= n * W);
    let steps = n / STEP;
    for s in 0..steps {
        // SAFETY: step s covers input bytes [s*64*W, (s+1)*64*W) and bytes [s*64, s*64 + 64) of
        // each output plane b, which spans out[b*n..(b+1)*n] with s*64 + 64 <= n.
        unsafe {
            let mut regs = load::<W>(input.as_ptr().add(s * STEP * W), STEP);
            unzip(&mut regs);
            store(&regs, out.as_mut_ptr().add(s * STEP), n);
        }
    }
    scalar::shuffle_range(W, n, steps * STEP, input, out);
}

/// Inverse of [`shuffle`].
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(crate) unsafe fn unshuffle<const W: usize>(n: usize, input: &[u8], out: &mut [u8]) {
    assert!(input.len() >= n * W && out.len() >= n * W);
    let steps = n / STEP;
    for s in 0..steps {
        // SAFETY: as in shuffle, input and output exchanged.
        unsafe {
            let mut regs = load::<W>(input.as_ptr().add(s * STEP), n);
            zip(&mut regs);
            store(&regs, out.as_mut_ptr().add(s * STEP * W), STEP);
        }
    }
    scalar::unshuffle_range(W, n, steps * STEP, input, out);
}

/// Bit transpose of one `m`-element block (`m` a multiple of 8), as [`scalar::bitshuffle_range`]:
/// steps of 512 elements here, the rest through the AVX2 kernel.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI, GFNI and AVX2.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni,avx2")]
pub(crate) unsafe fn bitshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    assert!(m.is_multiple_of(8) && input.len() >= m * W && out.len() >= m * W);
    let plane_len = m / 8;
    let steps = m / WIDE;
    let reverse = load_indices(&REVERSE_WORDS);
    let identity = _mm512_set1_epi64(IDENTITY as i64);
    // Bytes `b` of one step's elements, 512 per byte (zeroed once a block: on the write side the
    // codec, not this, sets the pace).
    let mut rows = [0u8; 8 * WIDE];
    for c in 0..steps {
        let elements = &input[c * WIDE * W..(c + 1) * WIDE * W];
        let rows: &[u8] = if W == 1 {
            elements
        } else {
            // SAFETY: the caller guarantees AVX-512 F, BW and VBMI.
            unsafe { shuffle::<W>(WIDE, elements, &mut rows[..W * WIDE]) };
            &rows[..W * WIDE]
        };
        for b in 0..W {
            // SAFETY: byte row b spans rows[b * 512..(b + 1) * 512]; plane b * 8 + k spans
            // out[(b * 8 + k) * plane_len..][..plane_len] and c * 64 + 64 <= plane_len.
            unsafe {
                let mut regs = load::<8>(rows.as_ptr().add(b * WIDE), 64);
                for reg in &mut regs {
                    let reversed = _mm512_shuffle_epi8(*reg, reverse);
                    *reg = _mm512_gf2p8affine_epi64_epi8::<0>(identity, reversed);
                }
                unzip(&mut regs);
                let dst = out.as_mut_ptr().add(b * 8 * plane_len + c * 64);
                store(&regs, dst, plane_len);
            }
        }
    }
    // SAFETY: the caller guarantees AVX2; the AVX2 kernel starts at a step of its own.
    unsafe { avx2::bitshuffle_from::<W>(m, steps * WIDE, input, out) };
}

/// Inverse of [`bitshuffle`]: steps of 512 elements ([`bitunshuffle_steps`]), the rest through
/// the AVX2 kernel.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI, GFNI and AVX2.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni,avx2")]
pub(crate) unsafe fn bitunshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    assert!(m.is_multiple_of(8) && input.len() >= m * W && out.len() >= m * W);
    let steps = m / WIDE;
    // SAFETY: the caller guarantees the CPU features.
    unsafe {
        bitunshuffle_steps::<W>(0..steps, PlaneSource::Block(input, m / 8), out);
        avx2::bitunshuffle_from::<W>(m, steps * WIDE, input, out);
    }
}

/// Steps `steps` of 512 elements of a bitunshuffle from its bit-planes (plane `b * 8 + k`: bit `k`
/// of byte `b` of each element, at least `steps.end * 64` bytes of it) into `out`, step `c` at
/// `out[c * 512 * W..]`.
///
/// # Safety
/// The CPU must support AVX-512 F, BW and VBMI, and GFNI.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) unsafe fn bitunshuffle_steps<const W: usize>(
    steps: Range<usize>,
    source: PlaneSource<'_>,
    out: &mut [u8],
) {
    assert!(source.holds(W, steps.end * (WIDE / 8)) && out.len() >= steps.end * WIDE * W);
    let identity = _mm512_set1_epi64(IDENTITY as i64);
    // Bytes `b` of one step's elements, 512 per byte, written before they are read.
    let mut rows = std::mem::MaybeUninit::<[u8; 8 * WIDE]>::uninit();
    let rows = rows.as_mut_ptr().cast::<u8>();
    for c in steps {
        let at = c * (WIDE / 8);
        let step = &mut out[c * WIDE * W..(c + 1) * WIDE * W];
        for b in 0..W {
            let mut regs: [__m512i; 8] = std::array::from_fn(|x| {
                let p = b * 8 + 7 - x;
                match source {
                    // SAFETY: plane p spans input[p * plane_len..][..plane_len] and plane_len
                    // >= steps.end * 64 >= at + 64 (asserted above).
                    PlaneSource::Block(input, plane_len) => unsafe {
                        _mm512_loadu_si512(input.as_ptr().add(p * plane_len + at).cast())
                    },
                    PlaneSource::Planes(planes) => match planes[p] {
                        // SAFETY: the plane holds at least steps.end * 64 >= at + 64 bytes
                        // (asserted above).
                        Plane::Bytes(bytes) => unsafe {
                            _mm512_loadu_si512(bytes.as_ptr().add(at).cast())
                        },
                        Plane::Constant(value) => _mm512_set1_epi8(value as i8),
                    },
                }
            });
            zip(&mut regs);
            for reg in &mut regs {
                *reg = _mm512_gf2p8affine_epi64_epi8::<0>(identity, *reg);
            }
            let dst = if W == 1 {
                step.as_mut_ptr()
            } else {
                // SAFETY: b < W <= 8, so b * 512 is inside the 8 * 512 bytes of rows.
                unsafe { rows.add(b * WIDE) }
            };
            // SAFETY: dst has room for 512 bytes: step holds 512 * W bytes, rows 8 * 512.
            unsafe { store(&regs, dst, 64) };
        }
        if W > 1 {
            // SAFETY: the loop above wrote bytes b * 512..(b + 1) * 512 of rows for every b < W;
            // the caller guarantees AVX-512 F, BW and VBMI.
            unsafe {
                let rows = std::slice::from_raw_parts(rows, W * WIDE);
                unshuffle::<W>(WIDE, rows, step);
            }
        }
    }
}
