//! Portable kernels. They define the layouts (see the parent module) and are the oracle every SIMD
//! kernel is tested against; on CPUs without SIMD kernels they are also what runs.

use std::ops::Range;

use super::Plane;

/// Byte shuffle of elements `first..n` of an `n`-element region: `out[b * n + e] = input[e * w + b]`.
pub(crate) fn shuffle_range(w: usize, n: usize, first: usize, input: &[u8], out: &mut [u8]) {
    for b in 0..w {
        let plane = &mut out[b * n..(b + 1) * n];
        for e in first..n {
            plane[e] = input[e * w + b];
        }
    }
}

/// Inverse of [`shuffle_range`] for elements `first..n`.
pub(crate) fn unshuffle_range(w: usize, n: usize, first: usize, input: &[u8], out: &mut [u8]) {
    unshuffle_elements(w, n, first..n, input, out);
}

/// Inverse of [`shuffle_range`] for `elements` of an `n`-element region.
pub(crate) fn unshuffle_elements(
    w: usize,
    n: usize,
    elements: Range<usize>,
    input: &[u8],
    out: &mut [u8],
) {
    for b in 0..w {
        let plane = &input[b * n..(b + 1) * n];
        for e in elements.clone() {
            out[e * w + b] = plane[e];
        }
    }
}

/// Bit transpose of elements `first..m` (both multiples of 8) of one `m`-element block: bit `e` of
/// bit-plane `b * 8 + k` (planes of `m / 8` bytes, bits LSB first) is bit `k` of byte `b` of element `e`.
pub(crate) fn bitshuffle_range(w: usize, m: usize, first: usize, input: &[u8], out: &mut [u8]) {
    let plane_len = m / 8;
    for group in first / 8..m / 8 {
        for b in 0..w {
            // Byte b of the group's 8 elements, one per byte of a word; transposed, byte k holds
            // their bit k: the group's byte of bit-plane b * 8 + k.
            let mut bytes = [0u8; 8];
            for (j, byte) in bytes.iter_mut().enumerate() {
                *byte = input[(group * 8 + j) * w + b];
            }
            let planes = transpose_bits(u64::from_le_bytes(bytes)).to_le_bytes();
            for (k, plane_byte) in planes.into_iter().enumerate() {
                out[(b * 8 + k) * plane_len + group] = plane_byte;
            }
        }
    }
}

/// Inverse of [`bitshuffle_range`] for one whole `m`-element block.
pub(crate) fn bitunshuffle<const W: usize>(m: usize, input: &[u8], out: &mut [u8]) {
    bitunshuffle_groups::<W>(m, 0..m / 8, input, out);
}

/// Inverse of [`bitshuffle_range`] for the groups of 8 elements `groups` (elements `8 * groups.start
/// ..8 * groups.end`) of one `m`-element block.
pub(crate) fn bitunshuffle_groups<const W: usize>(
    m: usize,
    groups: Range<usize>,
    input: &[u8],
    out: &mut [u8],
) {
    let plane_len = m / 8;
    groups_from::<W>(groups, |p, group| input[p * plane_len + group], out);
}

/// [`bitunshuffle_groups`] from a block's planes wherever they lie (`planes[p]`, constant or at
/// least `groups.end` bytes).
pub(crate) fn bitunshuffle_groups_from_planes<const W: usize>(
    groups: Range<usize>,
    planes: &[Plane<'_>],
    out: &mut [u8],
) {
    let byte = |p: usize, group: usize| match planes[p] {
        Plane::Bytes(bytes) => bytes[group],
        Plane::Constant(value) => value,
    };
    groups_from::<W>(groups, byte, out);
}

/// The bitunshuffle of groups `groups` of a block whose plane `p` has byte `byte(p, group)`.
#[inline(always)]
fn groups_from<const W: usize>(
    groups: Range<usize>,
    byte: impl Fn(usize, usize) -> u8,
    out: &mut [u8],
) {
    for group in groups {
        // The group's byte of bit-planes b * 8 + 0..8, one per byte of a word; transposed (the
        // transpose is its own inverse), byte j is byte b of element j.
        let mut rows = [0u64; W];
        for (b, row) in rows.iter_mut().enumerate() {
            let mut planes = 0u64;
            for k in 0..8 {
                planes |= u64::from(byte(b * 8 + k, group)) << (8 * k);
            }
            *row = transpose_bits(planes);
        }
        let elements = &mut out[group * 8 * W..(group + 1) * 8 * W];
        for (j, element) in elements.chunks_exact_mut(W).enumerate() {
            for (byte, row) in element.iter_mut().zip(rows) {
                *byte = (row >> (8 * j)) as u8;
            }
        }
    }
}

/// Transposes the 8x8 bit matrix whose row `r` is byte `r` of `x` (little-endian, bit `c` of the
/// byte is column `c`): bit `c` of byte `r` becomes bit `r` of byte `c`, in three exchanges (Hacker's
/// Delight, 7-3): of the off-diagonal bits of each 2x2 block, of the off-diagonal 2x2 blocks of
/// each 4x4 block, then of the off-diagonal 4x4 blocks.
fn transpose_bits(x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    let x = x ^ t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    let x = x ^ t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}
