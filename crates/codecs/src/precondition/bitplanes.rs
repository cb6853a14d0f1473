//! The `bitplanes:W` preconditioner: bitshuffle with its constant bit-planes left out. Floats
//! rounded to fewer mantissa bits (NanoAOD's) and small integers have many bit-planes that are all
//! zeros or all ones; under bitshuffle the codec codes each as a long match of the byte before it,
//! which zstd copies eight bytes at a time, each copy waiting for the one before. Here the planes
//! are two bits in a mask and the codec sees the others only.
//!
//! The input is read as `n = len / W` elements; the first `n8 = n - n % 8` of them are cut into
//! bitshuffle's blocks (`BITSHUFFLE_BLOCK_BYTES / W` elements, the last block shorter, each a
//! multiple of 8 elements). For each block of `m` elements, whose bitshuffle is `8 * W` planes of
//! `m / 8` bytes (plane `p = b * 8 + k` holds bit `k` of byte `b` of each element, as in
//! bitshuffle), the output holds, in order:
//!
//! 1. `zeros`: `W` bytes, bit `p % 8` of byte `p / 8` set when every byte of plane `p` is `0x00`;
//! 2. `ones`: `W` bytes, likewise for planes whose every byte is `0xFF` (no plane in both masks);
//! 3. every plane in neither mask, in order of `p`, as bitshuffle stores it.
//!
//! Then the input's last `len - n8 * W` bytes (the `n % 8` elements bitshuffle leaves as they are,
//! and the `len % W` bytes of no element), unchanged. An encoder may store a constant plane as is;
//! this one leaves out every one.

use std::cell::RefCell;

use super::{BITSHUFFLE_BLOCK_BYTES, Kernel, Plane, Precondition, Width, bitshuffle_blocks};
use crate::error::{Error, Result};

/// Appends the encoding of `input` (layout in the module docs) to `out`.
pub(crate) fn encode(kernel: Kernel, width: Width, input: &[u8], out: &mut Vec<u8>) {
    let w = width.bytes();
    let n8 = input.len() / w / 8 * 8;
    let mut image = vec![0u8; BITSHUFFLE_BLOCK_BYTES.min(n8 * w)];
    for (start, m) in bitshuffle_blocks(w, n8) {
        let block = &mut image[..m * w];
        kernel.apply(
            Precondition::BitShuffle(width),
            &input[start * w..(start + m) * w],
            block,
        );
        let masks = out.len();
        out.resize(masks + 2 * w, 0);
        for (p, plane) in block.chunks_exact(m / 8).enumerate() {
            if plane.iter().all(|&b| b == 0) {
                out[masks + p / 8] |= 1 << (p % 8);
            } else if plane.iter().all(|&b| b == 0xFF) {
                out[masks + w + p / 8] |= 1 << (p % 8);
            } else {
                out.extend_from_slice(plane);
            }
        }
    }
    out.extend_from_slice(&input[n8 * w..]);
}

/// Writes into `image` the bitshuffle of the data that `input` encodes (as long as that data):
/// what [`Precondition::BitShuffle`] of the same width makes of it, so that its undo, whole or in
/// part ([`Kernel::undo_part`]), gives the data.
///
/// # Errors
/// [`Error::Corrupt`] if `input` is not a valid `bitplanes:W` encoding of `image.len()` bytes.
pub fn expand(width: Width, input: &[u8], image: &mut [u8]) -> Result<()> {
    let w = width.bytes();
    let n8 = image.len() / w / 8 * 8;
    let (mut at, mut planes) = (0, [Plane::Constant(0); 64]);
    let planes = &mut planes[..8 * w];
    for (start, m) in bitshuffle_blocks(w, n8) {
        at = block_planes(width, m, input, at, planes)?;
        fill_block(planes, &mut image[start * w..(start + m) * w]);
    }
    copy_tail(width, input, at, &mut image[n8 * w..])
}

/// Decodes the encoding `input` of `out.len()` bytes into `out`, a block at a time: straight from
/// the planes where the kernel can ([`Kernel::bitunshuffle_planes`]), else through a block-sized
/// buffer of this thread that the planes are gathered into.
///
/// # Errors
/// As for [`expand`].
pub(crate) fn decode(kernel: Kernel, width: Width, input: &[u8], out: &mut [u8]) -> Result<()> {
    thread_local! {
        static IMAGE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let w = width.bytes();
    let n8 = out.len() / w / 8 * 8;
    let (mut at, mut planes) = (0, [Plane::Constant(0); 64]);
    let planes = &mut planes[..8 * w];
    for (start, m) in bitshuffle_blocks(w, n8) {
        at = block_planes(width, m, input, at, planes)?;
        let out = &mut out[start * w..(start + m) * w];
        if !kernel.bitunshuffle_planes(width, m, planes, out) {
            IMAGE.with_borrow_mut(|image| {
                let block = crate::scratch(image, m * w);
                fill_block(planes, block);
                kernel.undo(Precondition::BitShuffle(width), block, out);
            });
        }
    }
    copy_tail(width, input, at, &mut out[n8 * w..])
}

/// Reads the `8 * W` planes of the block of `m` elements whose encoding starts at `input[at..]`
/// into `planes`, checked; returns where the block's encoding ends.
fn block_planes<'a>(
    width: Width,
    m: usize,
    input: &'a [u8],
    at: usize,
    planes: &mut [Plane<'a>],
) -> Result<usize> {
    let w = width.bytes();
    let masks = input
        .get(at..at + 2 * w)
        .ok_or_else(|| corrupt(width, format!("no plane masks at byte {at}")))?;
    let (zeros, ones) = masks.split_at(w);
    if let Some(b) = (0..w).find(|&b| zeros[b] & ones[b] != 0) {
        return Err(corrupt(
            width,
            format!("a plane of byte {b} marked both zeros and ones at byte {at}"),
        ));
    }
    let plane_len = m / 8;
    let stored = (0..w)
        .map(|b| 8 - (zeros[b] | ones[b]).count_ones() as usize)
        .sum::<usize>();
    let mut at = at + 2 * w;
    if input.len() - at < stored * plane_len {
        return Err(corrupt(
            width,
            format!(
                "{stored} planes of {plane_len} bytes, {} bytes left at byte {at}",
                input.len() - at
            ),
        ));
    }
    for (p, plane) in planes.iter_mut().enumerate() {
        let bit = 1 << (p % 8);
        *plane = if zeros[p / 8] & bit != 0 {
            Plane::Constant(0)
        } else if ones[p / 8] & bit != 0 {
            Plane::Constant(0xFF)
        } else {
            at += plane_len;
            Plane::Bytes(&input[at - plane_len..at])
        };
    }
    Ok(at)
}

/// Writes `planes` one after the other into `block` (as long as all of them).
fn fill_block(planes: &[Plane<'_>], block: &mut [u8]) {
    let plane_len = block.len() / planes.len();
    for (plane, into) in planes.iter().zip(block.chunks_exact_mut(plane_len)) {
        match *plane {
            Plane::Bytes(bytes) => into.copy_from_slice(bytes),
            Plane::Constant(byte) => into.fill(byte),
        }
    }
}

/// Copies the trailing bytes `input[at..]` into `tail`, which they must fill exactly.
fn copy_tail(width: Width, input: &[u8], at: usize, tail: &mut [u8]) -> Result<()> {
    if input.len() - at != tail.len() {
        return Err(corrupt(
            width,
            format!(
                "{} bytes after the planes, for {} trailing bytes",
                input.len() - at,
                tail.len()
            ),
        ));
    }
    tail.copy_from_slice(&input[at..]);
    Ok(())
}

fn corrupt(width: Width, reason: String) -> Error {
    Error::Corrupt {
        codec: Precondition::BitPlanes(width).to_string(),
        reason,
    }
}
