//! Frame-of-reference bit-packing with patched exceptions: the `for:W` and `delta-for:W`
//! preconditioners (the PFOR / FastLanes family), which make integer data *shorter*.
//!
//! The input is read as `n = len / W` little-endian unsigned integers of `W` bytes; the
//! `len % W` trailing bytes are copied unchanged to the end of the output. `delta-for` first
//! replaces each value by its difference from the previous one (`x[i] - x[i-1]`, wrapping at `W`
//! bytes, `x[-1] = 0`). The values are then cut into blocks of [`BLOCK`] (the last block may be
//! shorter, `m` values), each stored as:
//!
//! ```text
//! offset         size               field
//! 0              1                  b: bits per packed value, 0 ..= 8W
//! 1              1                  h: bits of each exception's high part, 0 ..= 8W - b
//! 2              2                  e: number of exceptions, u16, <= m (0 when b = 8W)
//! 4              W                  reference r, little-endian
//! 4 + W          packed_len(m, b)   the low b bits of every u[i] = v[i] - r (wrapping), lane layout below
//! ...            2e                 the exceptions' positions in the block, u16, strictly increasing
//! ...            ceil(e * h / 8)    their high parts u[i] >> b, h bits each, back to back, LSB first
//! ```
//!
//! **Lane layout.** The packed values are laid out for 256-bit registers: `L = 32 / W` lanes of
//! `W`-byte words. Value `i` belongs to lane `i % L`, row `i / L`; each lane's rows are packed back
//! to back, LSB first, into a sequence of `W`-byte words (row `r` starts at bit `r * b`), and word
//! `k` of lane `l` is stored at word position `k * L + l`. With `rows = ceil(m / L)` and
//! `words = ceil(rows * b / 8W)`, the region is `packed_len(m, b) = L * words * W` bytes (for a
//! whole block, `128 * b`); bits beyond the last value are zero. A SIMD decoder so reads one row of
//! `L` consecutive values with one or two vector loads and shifts, no shuffles.
//!
//! **Decoding** a block: unpack the low bits into `u`, OR each exception's high part, shifted
//! left by `b`, into `u` at its position, then `v[i] = u[i] + r` (wrapping); `delta-for` then sums
//! the `v` (wrapping) from the previous block's last value on. The encoder picks `r` (the smallest
//! value, read as unsigned or as signed, whichever leaves the smaller range) and the `b` that
//! minimizes the block's size, counting `16 + h` bits per exception; the output's length so
//! depends on the data, and is shorter than the input only when the values are narrow.

use crate::error::{Error, Result};
use crate::le;

/// Values per block.
pub const BLOCK: usize = 1024;

/// Bytes of a block header before the reference value.
const HEADER: usize = 4;

/// Lanes of `w`-byte words in a 256-bit register.
pub(crate) const fn lanes(w: usize) -> usize {
    32 / w
}

/// Bytes of the packed region of a block of `m` values of `w` bytes at `b` bits each.
pub(crate) fn packed_len(w: usize, m: usize, b: usize) -> usize {
    let lanes = lanes(w);
    let rows = m.div_ceil(lanes);
    lanes * (rows * b).div_ceil(8 * w) * w
}

/// All ones in the low `bits` bits (`bits` <= 64).
pub(crate) fn low_mask(bits: usize) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The little-endian `w`-byte word at the start of `bytes` (`w` is 1, 2, 4 or 8).
#[inline]
pub(crate) fn read_word(bytes: &[u8], w: usize) -> u64 {
    match w {
        1 => u64::from(bytes[0]),
        2 => u64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
        4 => u64::from(le::u32_at(bytes, 0)),
        _ => le::u64_at(bytes, 0),
    }
}

/// Writes the low `w` bytes of `value` little-endian at the start of `bytes`.
#[inline]
pub(crate) fn write_word(bytes: &mut [u8], w: usize, value: u64) {
    match w {
        1 => bytes[0] = value as u8,
        2 => bytes[..2].copy_from_slice(&(value as u16).to_le_bytes()),
        4 => bytes[..4].copy_from_slice(&(value as u32).to_le_bytes()),
        _ => bytes[..8].copy_from_slice(&value.to_le_bytes()),
    }
}

/// Appends the packed form of `input` (whole `w`-byte elements and the trailing bytes) to `out`.
pub(crate) fn encode(w: usize, delta: bool, input: &[u8], out: &mut Vec<u8>) {
    let n = input.len() / w;
    let mask = low_mask(8 * w);
    let mut values = [0u64; BLOCK];
    let mut prev = 0u64;
    for chunk in input[..n * w].chunks(BLOCK * w) {
        let m = chunk.len() / w;
        for (value, bytes) in values.iter_mut().zip(chunk.chunks_exact(w)) {
            let x = read_word(bytes, w);
            *value = if delta {
                let d = x.wrapping_sub(prev) & mask;
                prev = x;
                d
            } else {
                x
            };
        }
        encode_block(w, &mut values[..m], out);
    }
    out.extend_from_slice(&input[n * w..]);
}

/// The reference of a block: its smallest value as unsigned or as signed `8w`-bit integers,
/// whichever leaves the smaller range.
fn reference(w: usize, values: &[u64]) -> u64 {
    let bits = 8 * w;
    let mask = low_mask(bits);
    let signed = |v: u64| ((v << (64 - bits)) as i64) >> (64 - bits);
    let (mut umin, mut umax) = (u64::MAX, 0u64);
    let (mut smin, mut smax) = (i64::MAX, i64::MIN);
    for &v in values {
        umin = umin.min(v);
        umax = umax.max(v);
        smin = smin.min(signed(v));
        smax = smax.max(signed(v));
    }
    let unsigned_range = umax.wrapping_sub(umin);
    let signed_range = (smax as u64).wrapping_sub(smin as u64);
    if signed_range < unsigned_range {
        smin as u64 & mask
    } else {
        umin
    }
}

fn encode_block(w: usize, values: &mut [u64], out: &mut Vec<u8>) {
    let bits = 8 * w;
    let mask = low_mask(bits);
    let m = values.len();
    let reference = reference(w, values);
    // Four histograms of bit lengths, summed after: one would wait on its own counters.
    let mut partial = [[0u32; 65]; 4];
    for chunk in values.chunks_mut(4) {
        for (k, v) in chunk.iter_mut().enumerate() {
            *v = v.wrapping_sub(reference) & mask;
            partial[k][(64 - v.leading_zeros()) as usize] += 1;
        }
    }
    let lengths: [usize; 65] = std::array::from_fn(|l| partial.iter().map(|h| h[l] as usize).sum());
    let widest = (0..=64).rev().find(|&l| lengths[l] > 0).unwrap_or(0);
    // From the widest down, `above` counts the values longer than `b`: the exceptions.
    let (mut b, mut best) = (widest, usize::MAX);
    let mut above = 0;
    for candidate in (0..=widest).rev() {
        let cost = packed_len(w, m, candidate) * 8 + above * (16 + widest - candidate);
        if cost < best {
            (b, best) = (candidate, cost);
        }
        above += lengths[candidate];
    }
    let exceptions: Vec<u16> = (0..m)
        .filter(|&i| b < 64 && values[i] >> b != 0)
        .map(|i| i as u16)
        .collect();
    let high = if exceptions.is_empty() { 0 } else { widest - b };
    out.push(b as u8);
    out.push(high as u8);
    out.extend_from_slice(&(exceptions.len() as u16).to_le_bytes());
    let at = out.len();
    out.resize(at + w, 0);
    write_word(&mut out[at..], w, reference);

    let at = out.len();
    out.resize(at + packed_len(w, m, b), 0);
    let region = &mut out[at..];
    if b > 0 {
        match w {
            1 => pack_region::<1>(values, b, region),
            2 => pack_region::<2>(values, b, region),
            4 => pack_region::<4>(values, b, region),
            _ => pack_region::<8>(values, b, region),
        }
    }
    for &position in &exceptions {
        out.extend_from_slice(&position.to_le_bytes());
    }
    let mut writer = BitWriter::new(out);
    for &position in &exceptions {
        writer.put(values[usize::from(position)] >> b, high);
    }
    writer.finish();
}

/// Packs the low `b` bits (1 ..= 8W) of `values` (at most [`BLOCK`]) into `region`, exactly
/// `packed_len(W, values.len(), b)` zeroed bytes, in the lane layout: a row of `L` values at a
/// time, each value into its lane's word (and the next word of its lane when it straddles).
fn pack_region<const W: usize>(values: &[u64], b: usize, region: &mut [u8]) {
    let lanes = lanes(W);
    let bits = 8 * W;
    let (low, mask) = (low_mask(b), low_mask(bits));
    let mut words = [0u64; BLOCK];
    for (row, chunk) in values.chunks(lanes).enumerate() {
        let offset = row * b;
        let (k, shift) = (offset / bits, offset % bits);
        let here = &mut words[k * lanes..(k + 1) * lanes];
        for (word, &v) in here.iter_mut().zip(chunk) {
            *word |= ((v & low) << shift) & mask;
        }
        if shift + b > bits {
            let next = &mut words[(k + 1) * lanes..(k + 2) * lanes];
            for (word, &v) in next.iter_mut().zip(chunk) {
                *word |= (v & low) >> (bits - shift);
            }
        }
    }
    for (bytes, &word) in region.chunks_exact_mut(W).zip(&words) {
        bytes.copy_from_slice(&word.to_le_bytes()[..W]);
    }
}

/// Appends values of up to 64 bits to a byte vector, LSB first.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u128,
    filled: usize,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> BitWriter<'a> {
        BitWriter {
            out,
            acc: 0,
            filled: 0,
        }
    }

    fn put(&mut self, value: u64, bits: usize) {
        self.acc |= u128::from(value & low_mask(bits)) << self.filled;
        self.filled += bits;
        while self.filled >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.filled -= 8;
        }
    }

    fn finish(self) {
        if self.filled > 0 {
            self.out.push(self.acc as u8);
        }
    }
}

/// Reads the `index`-th value of `bits` bits from a buffer of values packed LSB first (the
/// buffer holds at least `ceil((index + 1) * bits / 8)` bytes).
fn bits_at(bytes: &[u8], index: usize, bits: usize) -> u64 {
    if bits == 0 {
        return 0;
    }
    let start = index * bits;
    let first = start / 8;
    // At most 7 + 64 bits: they lie within 16 bytes.
    let available = (bytes.len() - first).min(16);
    let mut window = [0u8; 16];
    window[..available].copy_from_slice(&bytes[first..first + available]);
    (u128::from_le_bytes(window) >> (start % 8)) as u64 & low_mask(bits)
}

/// One block to decode, its header and regions checked: what an [`Unpacker`] needs.
pub(crate) struct Block<'a> {
    /// Bytes per value.
    pub w: usize,
    /// Bits per packed value.
    pub b: usize,
    /// Values in the block.
    pub m: usize,
    /// The packed low bits, exactly `packed_len(w, m, b)` bytes.
    pub region: &'a [u8],
    /// Each exception's position (below `m`) and high part, already shifted left by `b`.
    pub exceptions: &'a [(usize, u64)],
    /// The block's reference value.
    pub reference: u64,
}

/// Decodes checked blocks: the scalar code here, or SIMD kernels for 4- and 8-byte values.
pub(crate) trait Unpacker {
    /// Writes the block's `m` values to `out` (`m * w` bytes); with `prev` (`delta-for`), their
    /// running sum from `*prev` on, leaving the last in `*prev`.
    fn decode_block(&self, block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]);
}

/// The portable unpacker, the oracle of the SIMD ones.
pub(crate) struct Scalar;

impl Unpacker for Scalar {
    fn decode_block(&self, block: &Block<'_>, prev: Option<&mut u64>, out: &mut [u8]) {
        let Block {
            w,
            b,
            m,
            region,
            exceptions,
            reference,
        } = *block;
        let bits = 8 * w;
        let lanes = lanes(w);
        let (low, mask) = (low_mask(b), low_mask(bits));
        let mut values = [0u64; BLOCK];
        for (i, value) in values[..m].iter_mut().enumerate().filter(|_| b > 0) {
            let (lane, row) = (i % lanes, i / lanes);
            let offset = row * b;
            let (word, shift) = (offset / bits, offset % bits);
            let mut v = read_word(&region[(word * lanes + lane) * w..], w) >> shift;
            if shift + b > bits {
                v |= read_word(&region[((word + 1) * lanes + lane) * w..], w) << (bits - shift);
            }
            *value = v & low;
        }
        for &(position, high) in exceptions {
            values[position] |= high;
        }
        match prev {
            Some(prev) => {
                for (v, bytes) in values[..m].iter().zip(out.chunks_exact_mut(w)) {
                    *prev = prev.wrapping_add(v.wrapping_add(reference)) & mask;
                    write_word(bytes, w, *prev);
                }
            }
            None => {
                for (v, bytes) in values[..m].iter().zip(out.chunks_exact_mut(w)) {
                    write_word(bytes, w, v.wrapping_add(reference) & mask);
                }
            }
        }
    }
}

/// The `len` bytes of `input` at `*at`, moving `*at` past them; `None` if they run past its end.
fn take<'a>(input: &'a [u8], at: &mut usize, len: usize) -> Option<&'a [u8]> {
    let region = input.get(*at..at.checked_add(len)?)?;
    *at += len;
    Some(region)
}

/// Decodes `input` (the whole output of [`encode`]) into `out`, whose length is the original's.
///
/// # Errors
/// [`Error::Corrupt`] naming `name` (the preconditioner's spec) when a header field is out of
/// range, a region runs past the input, an exception lies outside its block or out of order, or
/// bytes are left over.
pub(crate) fn decode(
    unpacker: &dyn Unpacker,
    name: &str,
    w: usize,
    delta: bool,
    input: &[u8],
    out: &mut [u8],
) -> Result<()> {
    let corrupt = |reason: String| Error::Corrupt {
        codec: name.to_owned(),
        reason,
    };
    let bits = 8 * w;
    let n = out.len() / w;
    let trailing = out.len() % w;
    let body_len = input.len().checked_sub(trailing).ok_or_else(|| {
        corrupt(format!(
            "{} packed bytes cannot hold the {trailing} trailing bytes of {} bytes",
            input.len(),
            out.len()
        ))
    })?;
    out[n * w..].copy_from_slice(&input[body_len..]);
    let input = &input[..body_len];
    let mut exceptions = Vec::new();
    let mut prev = 0u64;
    let mut at = 0usize;
    for (block, dst) in out[..n * w].chunks_mut(BLOCK * w).enumerate() {
        let m = dst.len() / w;
        let mut next = |len: usize, what: &str| {
            let start = at;
            take(input, &mut at, len).ok_or_else(|| {
                corrupt(format!(
                    "block {block}: its {what} ({len} bytes at {start}) run past the {} packed bytes",
                    input.len()
                ))
            })
        };
        let header = next(HEADER + w, "header")?;
        let (b, high) = (usize::from(header[0]), usize::from(header[1]));
        let count = usize::from(u16::from_le_bytes([header[2], header[3]]));
        let reference = read_word(&header[HEADER..], w);
        if b > bits || high > bits - b || count > m || (count > 0 && b == bits) {
            return Err(corrupt(format!(
                "block {block}: {b} bits per value, {high}-bit high parts and {count} exceptions \
                 do not fit {m} values of {bits} bits"
            )));
        }
        let region = next(packed_len(w, m, b), "packed values")?;
        let positions = next(2 * count, "exception positions")?;
        let highs = next((count * high).div_ceil(8), "exception values")?;
        exceptions.clear();
        for (k, position) in positions.chunks_exact(2).enumerate() {
            let position = usize::from(u16::from_le_bytes([position[0], position[1]]));
            if position >= m || exceptions.last().is_some_and(|&(last, _)| position <= last) {
                return Err(corrupt(format!(
                    "block {block}: exception {k} at position {position} is out of order or \
                     outside the block's {m} values"
                )));
            }
            exceptions.push((position, bits_at(highs, k, high) << b));
        }
        let block = Block {
            w,
            b,
            m,
            region,
            exceptions: &exceptions,
            reference,
        };
        unpacker.decode_block(&block, delta.then_some(&mut prev), dst);
    }
    if at != input.len() {
        return Err(corrupt(format!(
            "{} bytes are left after the last block",
            input.len() - at
        )));
    }
    Ok(())
}
