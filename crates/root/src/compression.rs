//! ROOT's compressed-block framing.
//!
//! A compressed record is a sequence of blocks, each with a 9-byte header: two magic bytes naming
//! the algorithm (`ZL` zlib, `XZ` xz/LZMA, `L4` LZ4, `ZS` zstd), one method byte, then the block's
//! compressed and uncompressed sizes as 3-byte little-endian integers. ROOT cuts buffers larger than
//! 16 MiB - 1 into several blocks. An `L4` block starts with the XXH64 checksum (big-endian) of the
//! LZ4 data that follows it; the compressed size counts those 8 bytes.

use evtc_codecs::{Algorithm, Decompressor};

use crate::error::{Error, Result};

const HEADER: usize = 9;

/// Decompresses the blocks in `input`, which must add up to `total` bytes, into `out` (cleared
/// first).
///
/// `out` grows block by block, only after a block's header has been read: a forged `total` or
/// block size costs at most one block (16 MiB) of memory before the data proves it false.
///
/// # Errors
/// [`Error::Decompress`] naming `what` and the block's offset for an unknown algorithm, a block
/// that runs past the input, a checksum mismatch, corrupt data, or blocks that do not add up to
/// `total` bytes.
pub(crate) fn decompress(
    dec: &mut Decompressor,
    input: &[u8],
    total: usize,
    out: &mut Vec<u8>,
    what: &dyn Fn() -> String,
) -> Result<()> {
    out.clear();
    let fail = |offset: usize, detail: String| Error::Decompress {
        what: what(),
        offset: offset as u64,
        detail,
    };
    let (mut at, mut produced) = (0usize, 0usize);
    while produced < total {
        let Some(header) = input.get(at..at + HEADER) else {
            return Err(fail(
                at,
                format!("the blocks end after {produced} of {total} uncompressed bytes"),
            ));
        };
        let size = |b: &[u8]| usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16;
        let (c_size, u_size) = (size(&header[3..6]), size(&header[6..9]));
        let body = input
            .get(at + HEADER..at + HEADER + c_size)
            .ok_or_else(|| {
                fail(
                    at,
                    format!(
                        "a {c_size}-byte block runs past the {}-byte record",
                        input.len()
                    ),
                )
            })?;
        if u_size > total - produced {
            return Err(fail(
                at,
                format!("a block of {u_size} bytes overflows the declared {total} bytes"),
            ));
        }
        let (algorithm, data) = match &header[..2] {
            b"ZL" => (Algorithm::Zlib, body),
            b"XZ" => (Algorithm::Lzma, body),
            b"ZS" => (Algorithm::Zstd, body),
            b"L4" => {
                let (sum, data) = body
                    .split_at_checked(8)
                    .ok_or_else(|| fail(at, "an LZ4 block shorter than its checksum".to_owned()))?;
                let expected = u64::from_be_bytes(sum.try_into().unwrap_or_default());
                let actual = xxhash_rust::xxh64::xxh64(data, 0);
                if expected != actual {
                    return Err(fail(
                        at,
                        format!(
                            "LZ4 checksum mismatch: stored {expected:#018x}, computed {actual:#018x}"
                        ),
                    ));
                }
                (Algorithm::Lz4, data)
            }
            magic => {
                return Err(fail(
                    at,
                    format!(
                        "unknown compression algorithm {:?} (known: ZL, XZ, L4, ZS)",
                        String::from_utf8_lossy(magic)
                    ),
                ));
            }
        };
        dec.decompress_append(algorithm, data, u_size, out)
            .map_err(|e| fail(at, e.to_string()))?;
        at += HEADER + c_size;
        produced += u_size;
    }
    Ok(())
}
