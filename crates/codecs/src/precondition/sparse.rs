//! The `sparse:W` preconditioner: values that are nearly all one value (trigger flags, filter
//! bits, quality words that are almost always zero) stored as that value and the places where
//! the others are. It makes such data *shorter*, and its gaps are one byte each for an entropy
//! coder to code near the data's entropy, where bit-packing leaves zstd bytes that mix eight
//! values (the NanoAOD-like sample's 43 flags: 395 kB under zstd:5, bitshuffled 497 kB).
//!
//! The input is read as `n = len / W` little-endian values of `W` bytes. The output is, in order:
//!
//! 1. the *base* value, `W` bytes (the encoder takes the most common value);
//! 2. `k`, the number of values that differ from the base, as an unsigned LEB128 varint;
//! 3. `k` gaps, LEB128 varints: the number of base values before the first exception, then
//!    between each exception and the next;
//! 4. the `k` exceptions' values, `W` bytes each, in order;
//! 5. the `len % W` trailing bytes of the input, unchanged.
//!
//! A varint has at most ten bytes and no bits beyond 64; `k` and every position stay below `n`.
//! A decoder fills the output with the base, then writes each exception at its position.

use crate::error::{Error, Result};

/// The most common of the `n` `w`-byte values of `input`: from a histogram for bytes, else the
/// mode of the first 4096 values (any value decodes correctly; the mode makes the output short).
fn base(w: usize, input: &[u8]) -> u64 {
    let n = input.len() / w;
    if n == 0 {
        return 0;
    }
    if w == 1 {
        let mut counts = [0usize; 256];
        for &b in input {
            counts[b as usize] += 1;
        }
        let best = (0..256).max_by_key(|&v| (counts[v], std::cmp::Reverse(v)));
        return best.unwrap_or(0) as u64;
    }
    let mut sample: Vec<u64> = input[..n.min(4096) * w]
        .chunks_exact(w)
        .map(|bytes| super::pack::read_word(bytes, w))
        .collect();
    sample.sort_unstable();
    let (mut best, mut best_run) = (sample[0], 0);
    for run in sample.chunk_by(|a, b| a == b) {
        if run.len() > best_run {
            (best, best_run) = (run[0], run.len());
        }
    }
    best
}

/// Appends the sparse encoding of `input` (layout in the module docs) to `out`.
pub(crate) fn encode(w: usize, input: &[u8], out: &mut Vec<u8>) {
    let n = input.len() / w;
    let base = base(w, input);
    let (mut gaps, mut values) = (Vec::new(), Vec::new());
    let (mut k, mut next) = (0u64, 0usize);
    let mut exception = |i: usize, bytes: &[u8]| {
        super::varint::push((i - next) as u64, &mut gaps);
        values.extend_from_slice(bytes);
        next = i + 1;
        k += 1;
    };
    if w == 1 {
        for (i, &b) in input.iter().enumerate() {
            if u64::from(b) != base {
                exception(i, &input[i..i + 1]);
            }
        }
    } else {
        for (i, bytes) in input[..n * w].chunks_exact(w).enumerate() {
            if super::pack::read_word(bytes, w) != base {
                exception(i, bytes);
            }
        }
    }
    out.extend_from_slice(&base.to_le_bytes()[..w]);
    super::varint::push(k, out);
    out.extend_from_slice(&gaps);
    out.extend_from_slice(&values);
    out.extend_from_slice(&input[n * w..]);
}

/// Decodes the sparse encoding `input` of `out.len()` bytes into `out`.
///
/// # Errors
/// [`Error::Corrupt`] naming `name` if `input` is not a valid encoding of `out.len()` bytes.
pub(crate) fn decode(name: &str, w: usize, input: &[u8], out: &mut [u8]) -> Result<()> {
    decode_inner(w, input, out).map_err(|reason| Error::Corrupt {
        codec: name.to_owned(),
        reason,
    })
}

fn decode_inner(w: usize, input: &[u8], out: &mut [u8]) -> std::result::Result<(), String> {
    let n = out.len() / w;
    let tail = out.len() % w;
    let base = input
        .get(..w)
        .ok_or_else(|| format!("{} bytes hold no {w}-byte base value", input.len()))?;
    super::repeat(&mut out[..n * w], base);
    let mut at = w;
    let k = super::varint::read(input, &mut at)?;
    if k > n as u64 {
        return Err(format!("{k} exceptions among {n} values"));
    }
    let k = k as usize;
    // Each gap takes at least one byte and each exception `w`: a count the input cannot hold is
    // refused before any exception is written.
    if k.saturating_mul(w + 1) > input.len() - at {
        return Err(format!(
            "{k} exceptions need more than the {} bytes left",
            input.len() - at
        ));
    }
    // The exceptions' values and the trailing bytes end the input: the gaps lie between.
    let values_start = input
        .len()
        .checked_sub(tail + k * w)
        .filter(|&start| start >= at)
        .ok_or_else(|| {
            format!(
                "{} bytes cannot hold {k} gaps, {k} exceptions and {tail} trailing bytes",
                input.len()
            )
        })?;
    let (gaps, rest) = input.split_at(values_start);
    let values = &rest[..k * w];
    let at = match w {
        1 => patch::<1>(out, gaps, at, values)?,
        2 => patch::<2>(out, gaps, at, values)?,
        4 => patch::<4>(out, gaps, at, values)?,
        8 => patch::<8>(out, gaps, at, values)?,
        _ => unreachable!("a width is 1, 2, 4 or 8 bytes"),
    };
    if at != values_start {
        return Err(format!(
            "the gaps of {k} exceptions end at byte {at}, their values start at {values_start}"
        ));
    }
    out[n * w..].copy_from_slice(&rest[k * w..]);
    Ok(())
}

/// Writes each `W`-byte exception of `values` at the place its gap in `gaps[at..]` gives;
/// returns where the gaps end. An exception past the output's values is refused (the output then
/// holds the exceptions before it).
fn patch<const W: usize>(
    out: &mut [u8],
    gaps: &[u8],
    mut at: usize,
    values: &[u8],
) -> std::result::Result<usize, String> {
    let n = (out.len() / W) as u64;
    let mut next = 0u64;
    for (j, value) in values.chunks_exact(W).enumerate() {
        // Most gaps take one byte.
        let gap = match gaps.get(at) {
            Some(&byte) if byte < 0x80 => {
                at += 1;
                u64::from(byte)
            }
            _ => super::varint::read(gaps, &mut at)?,
        };
        let position = next
            .checked_add(gap)
            .filter(|&p| p < n)
            .ok_or_else(|| format!("exception {j} lies past the {n} values"))?;
        let place = position as usize * W;
        out[place..place + W].copy_from_slice(value);
        next = position + 1;
    }
    Ok(at)
}
