//! Portable kernels. They define the layouts (see the parent module) and are the oracle every SIMD
//! kernel is tested against; on CPUs without SIMD kernels they are also what runs.

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
    for b in 0..w {
        let plane = &input[b * n..(b + 1) * n];
        for e in first..n {
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
            // Gather byte b of the group's 8 elements into one word, then peel off one bit-plane byte per k.
            let mut bytes = [0u8; 8];
            for (j, byte) in bytes.iter_mut().enumerate() {
                *byte = input[(group * 8 + j) * w + b];
            }
            let word = u64::from_le_bytes(bytes);
            for k in 0..8 {
                let mut plane_byte = 0u8;
                for j in 0..8 {
                    plane_byte |= (((word >> (j * 8 + k)) & 1) as u8) << j;
                }
                out[(b * 8 + k) * plane_len + group] = plane_byte;
            }
        }
    }
}

/// Inverse of [`bitshuffle_range`] for elements `first..m`.
pub(crate) fn bitunshuffle_range(w: usize, m: usize, first: usize, input: &[u8], out: &mut [u8]) {
    let plane_len = m / 8;
    for group in first / 8..m / 8 {
        for b in 0..w {
            let mut bytes = [0u8; 8];
            for k in 0..8 {
                let plane_byte = input[(b * 8 + k) * plane_len + group];
                for (j, byte) in bytes.iter_mut().enumerate() {
                    *byte |= ((plane_byte >> j) & 1) << k;
                }
            }
            for (j, byte) in bytes.into_iter().enumerate() {
                out[(group * 8 + j) * w + b] = byte;
            }
        }
    }
}
