//! Delta + zigzag + LEB128 varints: the `delta-varint:W` preconditioner, which makes sorted
//! integers *shorter* while keeping them byte-aligned for an entropy coder.
//!
//! The input is read as `n = len / W` little-endian integers of `W` bytes; each becomes
//! `zigzag(x[i] - x[i-1])` as in `delta` (wrapping, `x[-1] = 0`), written as an unsigned LEB128
//! varint: 7 bits per byte, the lowest first, the high bit set on every byte but the last (at most
//! `ceil(8W / 7)` bytes, no bits beyond the `8W` of the value). The `len % W` trailing bytes follow
//! the last varint unchanged. Differences under 64 take one byte, so zstd's entropy coder sees one
//! byte per value where a byte shuffle leaves a nearly empty second plane to code as well.

use crate::error::{Error, Result};

/// Most bytes of the varint of a `w`-byte value.
fn max_bytes(w: usize) -> usize {
    (8 * w).div_ceil(7)
}

fn mask(w: usize) -> u64 {
    super::pack::low_mask(8 * w)
}

/// Appends the varints of `input`'s zigzagged differences, then its trailing bytes, to `out`.
pub(crate) fn encode(w: usize, input: &[u8], out: &mut Vec<u8>) {
    let (mask, bits) = (mask(w), 8 * w as u32);
    let n = input.len() / w;
    out.reserve(n + input.len() % w);
    let mut prev = 0u64;
    for bytes in input[..n * w].chunks_exact(w) {
        let x = super::pack::read_word(bytes, w);
        let d = x.wrapping_sub(prev) & mask;
        prev = x;
        // Zigzag at the value's width: the sign bit becomes bit 0.
        let sign = (d >> (bits - 1)) & 1;
        push(((d << 1) & mask) ^ sign.wrapping_neg() & mask, out);
    }
    out.extend_from_slice(&input[n * w..]);
}

/// Appends `v` as an unsigned LEB128 varint.
pub(crate) fn push(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a LEB128 varint of at most 64 bits at `*at`.
pub(crate) fn read(input: &[u8], at: &mut usize) -> std::result::Result<u64, String> {
    let mut v = 0u64;
    for k in 0..10 {
        let Some(&byte) = input.get(*at) else {
            return Err(format!("a varint runs past the {} bytes", input.len()));
        };
        *at += 1;
        if k == 9 && byte > 1 {
            return Err(format!(
                "the varint ending at byte {} has more than 64 bits",
                *at - 1
            ));
        }
        v |= u64::from(byte & 0x7F) << (7 * k);
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(format!(
        "the varint ending at byte {} is longer than 10 bytes",
        *at - 1
    ))
}

/// The value of the varint that starts `word` (the next 8 input bytes, little-endian) if it is
/// shorter than `most` bytes, with its length; `None` for a longer varint (or none ending within
/// the word), which the byte-by-byte loop reads and checks.
#[inline]
fn short_varint(word: u64, most: usize) -> Option<(u64, usize)> {
    let ends = !word & 0x8080_8080_8080_8080;
    if ends == 0 {
        return None;
    }
    let k = ends.trailing_zeros() as usize / 8 + 1;
    if k >= most {
        return None;
    }
    // The k bytes' 7-bit groups, then packed together pairwise, four bytes at a time, all eight.
    let mut x = word & low_bytes(k) & 0x7F7F_7F7F_7F7F_7F7F;
    x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) >> 1);
    x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) >> 2);
    x = (x & 0x0000_0000_0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) >> 4);
    Some((x, k))
}

/// A mask of the low `k` bytes of a word, `k` from 1 to 8.
#[inline]
fn low_bytes(k: usize) -> u64 {
    u64::MAX >> (64 - 8 * k)
}

/// Decodes varints from `input` from `*at` on into `out` (`w` bytes each; `out` holds the values
/// from index `first` of the block on, which errors name), summing their un-zigzagged values from
/// `*prev`; the scalar path, and what the SIMD one does with values it cannot take.
pub(crate) fn decode_scalar(
    w: usize,
    input: &[u8],
    at: &mut usize,
    prev: &mut u64,
    out: &mut [u8],
    first: usize,
) -> std::result::Result<(), String> {
    let mask = mask(w);
    let most = max_bytes(w);
    for (i, dst) in out.chunks_exact_mut(w).enumerate() {
        // One byte (the common case of sorted values), else a word at a time when the varint
        // ends within it, else byte by byte with every check.
        let z = match input.get(*at) {
            Some(&byte) if byte < 0x80 => {
                *at += 1;
                u64::from(byte)
            }
            _ => match input
                .get(*at..*at + 8)
                .and_then(|word| short_varint(u64::from_le_bytes(word.try_into().ok()?), most))
            {
                Some((z, k)) => {
                    *at += k;
                    z
                }
                None => long_varint(w, input, at).map_err(|e| format!("value {}{e}", first + i))?,
            },
        };
        let d = (z >> 1) ^ (z & 1).wrapping_neg() & mask;
        *prev = prev.wrapping_add(d) & mask;
        dst.copy_from_slice(&prev.to_le_bytes()[..w]);
    }
    Ok(())
}

/// Reads the varint of a `w`-byte value at `*at` byte by byte, checking that it ends within the
/// input, is at most `ceil(8w / 7)` bytes long and holds no more than `8w` bits. An error
/// continues a sentence that begins with the value's name.
fn long_varint(w: usize, input: &[u8], at: &mut usize) -> std::result::Result<u64, String> {
    let most = max_bytes(w);
    let mut z = 0u64;
    let mut k = 0;
    loop {
        let Some(&byte) = input.get(*at + k) else {
            return Err(format!(" runs past the {} bytes", input.len()));
        };
        z |= u64::from(byte & 0x7F) << (7 * k);
        k += 1;
        if byte & 0x80 == 0 {
            break;
        }
        if k == most {
            return Err(format!(" at byte {} is longer than {most} bytes", *at));
        }
    }
    // The last of `most` bytes holds only the value's top bits.
    if k == most && input[*at + k - 1] >> (8 * w - 7 * (most - 1)) != 0 {
        return Err(format!(" at byte {} has more than {} bits", *at, 8 * w));
    }
    *at += k;
    Ok(z)
}

/// Decodes the output of [`encode`] into `out`, which has the original's length; with `simd`,
/// through the AVX2 fast path for runs of one-byte varints (4- and 8-byte values).
///
/// # Errors
/// [`Error::Corrupt`] naming `name` if a varint runs past the input, is too long or too wide for
/// `w` bytes, or the bytes after the last one are not exactly the trailing bytes.
pub(crate) fn decode(simd: bool, name: &str, w: usize, input: &[u8], out: &mut [u8]) -> Result<()> {
    let corrupt = |reason: String| Error::Corrupt {
        codec: name.to_owned(),
        reason,
    };
    let n = out.len() / w;
    let (values, trailing) = out.split_at_mut(n * w);
    let (mut at, mut prev) = (0usize, 0u64);
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if simd && (w == 4 || w == 8) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 was detected just above.
        done =
            unsafe { avx2::decode_runs(w, input, &mut at, &mut prev, values) }.map_err(&corrupt)?;
    }
    let _ = simd;
    decode_scalar(w, input, &mut at, &mut prev, &mut values[done * w..], done).map_err(&corrupt)?;
    let rest = &input[at.min(input.len())..];
    if rest.len() != trailing.len() {
        return Err(corrupt(format!(
            "{} bytes follow the last value, where {} trailing bytes belong",
            rest.len(),
            trailing.len()
        )));
    }
    trailing.copy_from_slice(rest);
    Ok(())
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// The most values the scalar decoder takes at a time before the AVX2 path looks again.
    const MAX_STRETCH: usize = 64;

    /// Decodes values into `out` 8 at a time: 8 one-byte varints in a row are widened,
    /// un-zigzagged and summed in registers, other values go through the scalar decoder.
    /// Returns how many values it wrote (all but at most the last 7).
    ///
    /// # Safety
    /// The CPU must support AVX2; `w` is 4 or 8.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn decode_runs(
        w: usize,
        input: &[u8],
        at: &mut usize,
        prev: &mut u64,
        out: &mut [u8],
    ) -> Result<usize, String> {
        let n = out.len() / w;
        let mut i = 0;
        // How many values the scalar decoder takes when a group is not 8 one-byte varints:
        // doubled on each such group in a row, so that data of longer varints is decoded at the
        // scalar decoder's speed, not slowed by a failed check every 8 values.
        let mut stretch = 8;
        while i + 8 <= n {
            let Some(group) = input.get(*at..*at + 8) else {
                break;
            };
            let bytes = crate::le::u64_at(group, 0);
            if bytes & 0x8080_8080_8080_8080 != 0 {
                let end = (i + stretch).min(n);
                super::decode_scalar(w, input, at, prev, &mut out[i * w..end * w], i)?;
                i = end;
                stretch = (2 * stretch).min(MAX_STRETCH);
                continue;
            }
            stretch = 8;
            let dst = &mut out[i * w..(i + 8) * w];
            if w == 4 {
                // SAFETY: dst holds 8 values of 4 bytes, 32 bytes.
                unsafe { sum8x32(bytes, prev, dst) };
            } else {
                // SAFETY: dst holds 8 values of 8 bytes, 64 bytes.
                unsafe { sum8x64(bytes, prev, dst) };
            }
            *at += 8;
            i += 8;
        }
        Ok(i)
    }

    /// Un-zigzags 8 one-byte varints and stores their running sum from `*prev` as u32.
    ///
    /// # Safety
    /// AVX2; `dst` is at least 32 bytes.
    #[target_feature(enable = "avx2")]
    unsafe fn sum8x32(bytes: u64, prev: &mut u64, dst: &mut [u8]) {
        let z = _mm256_cvtepu8_epi32(_mm_set_epi64x(0, bytes as i64));
        let one = _mm256_set1_epi32(1);
        let d = _mm256_xor_si256(
            _mm256_srli_epi32::<1>(z),
            _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_and_si256(z, one)),
        );
        let mut v = _mm256_add_epi32(d, _mm256_slli_si256::<4>(d));
        v = _mm256_add_epi32(v, _mm256_slli_si256::<8>(v));
        let low_total = _mm256_shuffle_epi32::<0xFF>(v);
        v = _mm256_add_epi32(v, _mm256_permute2x128_si256::<0x08>(low_total, low_total));
        v = _mm256_add_epi32(v, _mm256_set1_epi32(*prev as u32 as i32));
        // SAFETY: dst has 32 bytes (caller).
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().cast(), v) };
        *prev = u64::from(_mm256_extract_epi32::<7>(v) as u32);
    }

    /// As [`sum8x32`], storing u64 values.
    ///
    /// # Safety
    /// AVX2; `dst` is at least 64 bytes.
    #[target_feature(enable = "avx2")]
    unsafe fn sum8x64(bytes: u64, prev: &mut u64, dst: &mut [u8]) {
        let mut carry = _mm256_set1_epi64x(*prev as i64);
        for (half, shift) in [(0usize, 0u32), (1, 32)] {
            let z = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128((bytes >> shift) as u32 as i32));
            let one = _mm256_set1_epi64x(1);
            let d = _mm256_xor_si256(
                _mm256_srli_epi64::<1>(z),
                _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_and_si256(z, one)),
            );
            let mut v = _mm256_add_epi64(d, _mm256_slli_si256::<8>(d));
            let low_total = _mm256_permute4x64_epi64::<0b01_01_01_01>(v);
            v = _mm256_add_epi64(
                v,
                _mm256_blend_epi32::<0b1111_0000>(_mm256_setzero_si256(), low_total),
            );
            v = _mm256_add_epi64(v, carry);
            carry = _mm256_permute4x64_epi64::<0b11_11_11_11>(v);
            // SAFETY: dst has 64 bytes (caller).
            unsafe { _mm256_storeu_si256(dst.as_mut_ptr().add(32 * half).cast(), v) };
        }
        *prev = _mm256_extract_epi64::<0>(carry) as u64;
    }
}
