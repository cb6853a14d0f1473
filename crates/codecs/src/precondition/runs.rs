//! The `runs:W` preconditioner: run-length encoding of values. Consecutive equal values (a
//! per-event quantity repeated for each object, run and luminosity-block numbers, the RAC study's
//! floats in runs of six) become one value and a length, so the codec decodes each run's value
//! once instead of matching the repetitions, and the values' bytes are byte-shuffled as `shuffle`
//! does.
//!
//! The input is read as `n = len / W` values of `W` bytes. The output is, in order:
//!
//! 1. `R`, the number of runs, as an unsigned LEB128 varint (`R <= n`; 0 only when `n` is 0);
//! 2. the `R` runs' values, byte-shuffled: byte 0 of every run's value in run order, then byte 1,
//!    and so on (`W` planes of `R` bytes);
//! 3. the `R` runs' lengths less one, LEB128 varints (a run holds at least one value; the lengths
//!    add up to `n`);
//! 4. the `len % W` trailing bytes of the input, unchanged.
//!
//! A varint has at most ten bytes and no bits beyond 64. A decoder refuses a count, a length or a
//! total that the output cannot hold before writing past it.

use super::{Kernel, Precondition, Width, varint};
use crate::error::{Error, Result};

/// Appends the run-length encoding of `input` (layout in the module docs) to `out`.
pub(crate) fn encode(kernel: Kernel, width: Width, input: &[u8], out: &mut Vec<u8>) {
    let w = width.bytes();
    let n = input.len() / w;
    let (mut values, mut lengths) = (Vec::new(), Vec::new());
    let mut runs = 0usize;
    let mut values_of = input[..n * w].chunks_exact(w).peekable();
    while let Some(value) = values_of.next() {
        let mut len = 1u64;
        while values_of.next_if_eq(&value).is_some() {
            len += 1;
        }
        values.extend_from_slice(value);
        varint::push(len - 1, &mut lengths);
        runs += 1;
    }
    varint::push(runs as u64, out);
    let at = out.len();
    out.resize(at + values.len(), 0);
    kernel.apply(Precondition::Shuffle(width), &values, &mut out[at..]);
    out.extend_from_slice(&lengths);
    out.extend_from_slice(&input[n * w..]);
}

/// Where the byte planes of the run values lie in an encoding made by [`encode`]: the offset of
/// the first plane and the length of each (`R`), or `None` if `packed` does not start with a
/// count it can hold. Lets a codec give each plane its own entropy tables.
pub(crate) fn planes(w: usize, packed: &[u8]) -> Option<(usize, usize)> {
    let mut at = 0;
    let runs = varint::read(packed, &mut at).ok()?;
    let runs = usize::try_from(runs).ok()?;
    (runs.checked_mul(w)? <= packed.len() - at).then_some((at, runs))
}

/// Decodes the run-length encoding `input` of `out.len()` bytes into `out`.
///
/// # Errors
/// [`Error::Corrupt`] naming `name` if `input` is not a valid encoding of `out.len()` bytes.
pub(crate) fn decode(
    kernel: Kernel,
    name: &str,
    width: Width,
    input: &[u8],
    out: &mut [u8],
) -> Result<()> {
    let result = match width {
        Width::W1 => decode_inner::<1>(kernel, input, out),
        Width::W2 => decode_inner::<2>(kernel, input, out),
        Width::W4 => decode_inner::<4>(kernel, input, out),
        Width::W8 => decode_inner::<8>(kernel, input, out),
    };
    result.map_err(|reason| Error::Corrupt {
        codec: name.to_owned(),
        reason,
    })
}

fn decode_inner<const W: usize>(
    kernel: Kernel,
    input: &[u8],
    out: &mut [u8],
) -> std::result::Result<(), String> {
    let width = Width::new(W as u8).expect("1, 2, 4 or 8");
    let n = out.len() / W;
    let tail = out.len() % W;
    let mut at = 0;
    let runs = varint::read(input, &mut at)?;
    if runs > n as u64 || (runs == 0) != (n == 0) {
        return Err(format!("{runs} runs of {n} values"));
    }
    let runs = runs as usize;
    // Every run takes `W` bytes of value and at least one byte of length.
    if runs * (W + 1) > input.len() - at {
        return Err(format!(
            "{runs} runs need more than the {} bytes left",
            input.len() - at
        ));
    }
    let planes = &input[at..at + runs * W];
    at += runs * W;
    // The run values, unshuffled into the end of the output: run `i`'s value then lies at value
    // `n - runs + i`, and the runs before it, each at least one value long, end at or before it
    // (the fill of run `i` ends at value `n - runs + i + 1` at most), so no value is overwritten
    // before it is read.
    let body = &mut out[..n * W];
    kernel.undo(
        Precondition::Shuffle(width),
        planes,
        &mut body[(n - runs) * W..],
    );
    let mut filled = 0usize;
    for i in 0..runs {
        // Most lengths take one byte. (The longer ones are read at a copy of `at`, whose address
        // the loop then never takes: it stays in a register.)
        let len = match input.get(at) {
            Some(&byte) if byte < 0x80 => {
                at += 1;
                u64::from(byte)
            }
            _ => {
                let mut past = at;
                let len = varint::read(input, &mut past)?;
                at = past;
                len
            }
        };
        // Each later run needs at least one of the values left: run `i` may take the values
        // from `filled` up to the place of its own value (read below), no further.
        let room = n - filled - (runs - 1 - i);
        if len >= room as u64 {
            return Err(format!(
                "run {i} of {} values overflows the {n} values",
                len.saturating_add(1)
            ));
        }
        let len = len as usize + 1;
        let from = (n - runs + i) * W;
        let value: [u8; W] = body[from..from + W].try_into().expect("W bytes");
        // A short run is filled with one fixed-size store of `BURST` values when its room holds
        // that many (the values past the run are written again by the runs after it).
        if len <= BURST && room >= BURST {
            body[filled * W..(filled + BURST) * W].copy_from_slice([value; BURST].as_flattened());
        } else {
            super::repeat(&mut body[filled * W..(filled + len) * W], &value);
        }
        filled += len;
    }
    if filled != n {
        return Err(format!("the runs hold {filled} of the {n} values"));
    }
    if input.len() != at + tail {
        return Err(format!(
            "{} bytes where the runs and {tail} trailing bytes end at {}",
            input.len(),
            at + tail
        ));
    }
    out[n * W..].copy_from_slice(&input[at..]);
    Ok(())
}

/// Values a short run's fill writes at once.
const BURST: usize = 8;
