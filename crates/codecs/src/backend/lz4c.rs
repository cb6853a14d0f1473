//! LZ4 block decoding through liblz4 (bundled and linked by `lz4-sys`).
//!
//! `LZ4_decompress_safe` and `LZ4_decompress_safe_usingDict` never read outside `input` (and the
//! dictionary) nor write outside `out`, whatever the input: a malformed block is a negative return.

use std::ffi::{c_char, c_int};

unsafe extern "C" {
    // lz4.h, stable API since liblz4 1.7.5 (lz4-sys 1.11 bundles 1.10); not bound by `lz4-sys`.
    fn LZ4_decompress_safe_usingDict(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        dict_start: *const c_char,
        dict_size: c_int,
    ) -> c_int;
}

/// Why liblz4 did not decode a block.
pub(crate) enum Lz4Error {
    /// A size is beyond liblz4's `int`: the caller decodes another way.
    TooLarge,
    /// The block is malformed or does not fit `out`.
    Malformed,
}

/// Decodes one LZ4 block into `out` (at most `out.len()` bytes), against `dictionary` (the window
/// before the block) when it is not empty; returns the number of bytes written.
pub(crate) fn decompress(
    input: &[u8],
    out: &mut [u8],
    dictionary: &[u8],
) -> Result<usize, Lz4Error> {
    let (Ok(src_size), Ok(dst_capacity), Ok(dict_size)) = (
        c_int::try_from(input.len()),
        c_int::try_from(out.len()),
        c_int::try_from(dictionary.len()),
    ) else {
        return Err(Lz4Error::TooLarge);
    };
    // SAFETY: the pointers and lengths describe live slices (`input` and `dictionary` only read,
    // `out` only written), and liblz4's safe decoders stay within them for any input.
    let n = unsafe {
        if dictionary.is_empty() {
            lz4_sys::LZ4_decompress_safe(
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                src_size,
                dst_capacity,
            )
        } else {
            LZ4_decompress_safe_usingDict(
                input.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                src_size,
                dst_capacity,
                dictionary.as_ptr().cast(),
                dict_size,
            )
        }
    };
    usize::try_from(n).map_err(|_| Lz4Error::Malformed)
}

/// Decodes one LZ4 block into `window[prefix..prefix + len]`, with `window[..prefix]` as its
/// dictionary: liblz4 sees the dictionary right before the output and decodes in prefix mode, its
/// fast path. Returns the number of bytes written.
pub(crate) fn decompress_after_prefix(
    input: &[u8],
    window: &mut [u8],
    prefix: usize,
    len: usize,
) -> Result<usize, Lz4Error> {
    let end = prefix.checked_add(len).filter(|&e| e <= window.len());
    let (Some(_), Ok(src_size), Ok(dst_capacity), Ok(dict_size)) = (
        end,
        c_int::try_from(input.len()),
        c_int::try_from(len),
        c_int::try_from(prefix),
    ) else {
        return Err(Lz4Error::TooLarge);
    };
    let base = window.as_mut_ptr();
    // SAFETY: `base..base + prefix` (read) and `base + prefix..base + prefix + len` (written) lie
    // in `window`, which no reference aliases during the call; liblz4's safe decoder stays within
    // them and `input` for any input.
    let n = unsafe {
        LZ4_decompress_safe_usingDict(
            input.as_ptr().cast(),
            base.add(prefix).cast(),
            src_size,
            dst_capacity,
            base.cast_const().cast(),
            dict_size,
        )
    };
    usize::try_from(n).map_err(|_| Lz4Error::Malformed)
}
