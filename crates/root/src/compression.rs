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
        // The codec table's first algorithm with the block's magic (LZ4's fast mode for `L4`).
        let magic = &header[..2];
        let Some(algorithm) = Algorithm::ALL.into_iter().find(|a| {
            a.properties()
                .root_block
                .is_some_and(|(m, _)| m[..] == *magic)
        }) else {
            return Err(fail(
                at,
                format!(
                    "unknown compression algorithm {:?} (known: ZL, XZ, L4, ZS)",
                    String::from_utf8_lossy(magic)
                ),
            ));
        };
        let data = if algorithm == Algorithm::Lz4 {
            // ROOT's LZ4 blocks start with the XXH64 of their data.
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
            data
        } else {
            body
        };
        dec.decompress_append(algorithm, data, u_size, out)
            .map_err(|e| fail(at, e.to_string()))?;
        at += HEADER + c_size;
        produced += u_size;
    }
    Ok(())
}

/// The ROOT compression setting nearest to `codec`, for what a file or a column records
/// (ROOT decodes by each block's header, whatever the setting says): the codec's own setting
/// where ROOT has one, else the nearest level (ROOT's `50N` is zstd level `2N`: zstd:5 records
/// 503; lz4hc:1-3 records 404, lz4hc:10-12 409).
pub(crate) fn nearest_setting(codec: evtc_codecs::Codec) -> i32 {
    codec
        .root_setting()
        .unwrap_or_else(|| match codec.algorithm() {
            Algorithm::Lz4Hc => 400 + codec.level().clamp(4, 9),
            Algorithm::Zstd => 500 + ((codec.level() + 1) / 2).clamp(1, 9),
            _ => 0,
        })
}

/// The largest uncompressed block ROOT frames: 2^24 - 1 bytes.
const MAX_BLOCK: usize = (1 << 24) - 1;

/// Compresses `input` with `codec` in ROOT's blocks, appending them to `out`: blocks of at most
/// 16 MiB - 1 uncompressed bytes, each behind its 9-byte header (an `L4` block's data after
/// the XXH64 of it). When that is not smaller than `input` (or `codec` is `none`), `input` is
/// appended as it is, and readers know it by its size: the same as the uncompressed size.
/// Returns the bytes appended.
///
/// # Errors
/// The compressor's, as [`evtc_codecs::Error`].
pub(crate) fn compress(
    comp: &mut evtc_codecs::Compressor,
    codec: evtc_codecs::Codec,
    input: &[u8],
    out: &mut Vec<u8>,
) -> std::result::Result<usize, evtc_codecs::Error> {
    let start = out.len();
    if let Some((magic, method)) = codec.algorithm().properties().root_block
        && !input.is_empty()
    {
        for block in input.chunks(MAX_BLOCK) {
            let at = out.len();
            out.extend_from_slice(&magic);
            out.push(method);
            out.extend_from_slice(&[0; 6]);
            let lz4 = matches!(codec.algorithm(), Algorithm::Lz4 | Algorithm::Lz4Hc);
            if lz4 {
                out.extend_from_slice(&[0; 8]);
            }
            let data_at = out.len();
            comp.compress(codec, block, out)?;
            if lz4 {
                let sum = xxhash_rust::xxh64::xxh64(&out[data_at..], 0);
                out[data_at - 8..data_at].copy_from_slice(&sum.to_be_bytes());
            }
            let c_size = out.len() - at - HEADER;
            if c_size > MAX_BLOCK || out.len() - start >= input.len() {
                // A block that does not fit its 24-bit size, or no gain: stored as it is.
                out.truncate(start);
                break;
            }
            let size = |n: usize| [n as u8, (n >> 8) as u8, (n >> 16) as u8];
            out[at + 3..at + 6].copy_from_slice(&size(c_size));
            out[at + 6..at + 9].copy_from_slice(&size(block.len()));
        }
        if out.len() > start {
            return Ok(out.len() - start);
        }
    }
    out.extend_from_slice(input);
    Ok(input.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_frames_as_the_reader_reads() {
        let input: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 977).to_le_bytes())
            .collect();
        let mut comp = evtc_codecs::Compressor::new();
        for spec in [
            "zlib:1", "lzma:4", "lz4", "lz4hc:9", "zstd:5", "zstd:19", "none",
        ] {
            let codec: evtc_codecs::Codec = spec.parse().expect("codec");
            let mut framed = Vec::new();
            let n = compress(&mut comp, codec, &input, &mut framed).expect("compress");
            assert_eq!(n, framed.len());
            if spec == "none" {
                assert_eq!(framed, input);
                continue;
            }
            assert!(framed.len() < input.len(), "{spec}");
            let mut out = Vec::new();
            decompress(
                &mut Decompressor::new(),
                &framed,
                input.len(),
                &mut out,
                &|| spec.to_owned(),
            )
            .expect(spec);
            assert!(out == input, "{spec}: the bytes read back differ");
        }
        // Incompressible bytes are stored as they are.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect();
        let mut framed = Vec::new();
        compress(
            &mut comp,
            "zstd:5".parse().expect("codec"),
            &noise,
            &mut framed,
        )
        .expect("compress");
        assert!(
            framed == noise,
            "incompressible bytes are not stored as they are"
        );
    }
}
