//! The compressed-block envelope: a self-describing, checksummed compressed block.
//!
//! ```text
//! offset  size  field
//!  0      1     algorithm id (Algorithm as u8: 0 none, 1 zlib, 2 lzma, 3 lz4, 4 lz4hc, 5 zstd)
//!  1      1     level, i8 (0 for none and lz4); informational, decoding does not need it
//!  2      1     preconditioner id (0 none, 1 shuffle, 2 bitshuffle, 3 delta)
//!  3      1     element width in bytes (1, 2, 4 or 8; 1 without preconditioner)
//!  4      8     uncompressed length, u64 little-endian: length of the original bytes
//! 12      8     payload length, u64 little-endian: length of the bytes that follow
//! 20      4     CRC32 (u32 little-endian) of bytes 0..20 followed by the payload
//! 24      ...   payload = compress(precondition(original))
//! ```
//!
//! The packing preconditioners (`for`, `delta-for`, `delta-varint`, `sparse`, ids 5-7 and 9) make
//! their output shorter than the original: their payload is the packed length as u64 little-endian (less than
//! the uncompressed length), then `compress(packed)`, or the packed bytes as they are with
//! algorithm `none`.
//!
//! When compression does not make the data smaller the block is stored: algorithm `none`, no
//! preconditioner, payload = original, so a block is never more than 24 bytes larger than its input.
//! Lengths are 64-bit: blocks larger than ROOT's 16 MiB limit are fine.

use crate::codec::{Algorithm, Codec};
use crate::context::{Compressor, Decompressor};
use crate::error::{Error, Result};
use crate::le;
use crate::precondition::{Precondition, Width, bitshuffle_blocks, runs};
use crate::{Crc32, Kernel};

/// The parsed fixed-size header of a block.
///
/// ```
/// use evtc_codecs::{BlockDecoder, BlockEncoder, BlockHeader, Codec, Precondition, Width};
/// let values: Vec<u8> = (0..10_000u32).flat_map(|v| v.to_le_bytes()).collect();
/// let mut block = Vec::new();
/// let header = BlockEncoder::new().encode(Codec::LZ4, Precondition::BitShuffle(Width::W4), &values, &mut block)?;
/// assert_eq!(BlockHeader::parse(&block)?, header);
/// assert!(block.len() < values.len() / 10);
/// let mut back = Vec::new();
/// BlockDecoder::new().decode(&block, &mut back)?;
/// assert_eq!(back, values);
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// The codec the payload is compressed with.
    pub codec: Codec,
    /// The preconditioner applied before compression.
    pub precondition: Precondition,
    /// Length of the original data.
    pub uncompressed_len: u64,
    /// Length of the payload after the header.
    pub payload_len: u64,
    /// CRC32 of header bytes 0..20 and the payload.
    pub crc32: u32,
}

impl BlockHeader {
    /// Length of the header in bytes.
    pub const LEN: usize = 24;

    /// Parses the header at the start of `bytes` (the payload need not be present).
    ///
    /// # Errors
    /// [`Error::Truncated`] if `bytes` is shorter than [`BlockHeader::LEN`]; an id or level error for
    /// fields no encoder writes.
    pub fn parse(bytes: &[u8]) -> Result<BlockHeader> {
        let header: &[u8; BlockHeader::LEN] = bytes
            .get(..BlockHeader::LEN)
            .and_then(|h| h.try_into().ok())
            .ok_or(Error::Truncated {
                needed: BlockHeader::LEN as u64,
                available: bytes.len(),
            })?;
        let algorithm = Algorithm::from_id(header[0])?;
        let level = i32::from(header[1] as i8);
        let codec = Codec::new(algorithm, level).map_err(|_| Error::Corrupt {
            codec: algorithm.name().to_owned(),
            reason: format!("invalid level {level} in block header"),
        })?;
        let precondition = Precondition::from_parts(header[2], header[3])?;
        let u64_at = |at: usize| le::u64_at(header, at);
        Ok(BlockHeader {
            codec,
            precondition,
            uncompressed_len: u64_at(4),
            payload_len: u64_at(12),
            crc32: le::u32_at(header, 20),
        })
    }

    /// Total length of the block: header plus payload (saturating: a corrupt header may declare
    /// any payload length).
    pub fn block_len(&self) -> u64 {
        (BlockHeader::LEN as u64).saturating_add(self.payload_len)
    }

    fn write(&self, out: &mut [u8]) {
        out[0] = self.codec.algorithm() as u8;
        out[1] = self.codec.level() as i8 as u8;
        out[2] = self.precondition.id();
        out[3] = self.precondition.width() as u8;
        out[4..12].copy_from_slice(&self.uncompressed_len.to_le_bytes());
        out[12..20].copy_from_slice(&self.payload_len.to_le_bytes());
        out[20..24].copy_from_slice(&self.crc32.to_le_bytes());
    }
}

/// Where the byte planes of `data`, the output of `precondition`, start and end, for the codecs
/// that gain from coding each plane apart ([`Compressor::compress_segmented`]): under zstd,
/// byte planes of 4 KiB or more get entropy tables of their own; under LZMA, byte planes of 64
/// bytes or more (and each byte's 8 bit-planes in a bitshuffle block) each end an LZMA2 chunk,
/// so that a plane of random mantissa bits is stored as is and decoded as a copy. Empty when
/// there is nothing to cut (other codecs and preconditioners).
///
/// ```
/// use evtc_codecs::{Codec, Precondition, Width, plane_cuts};
/// let shuffled = vec![0u8; 64 << 10];
/// let cuts = plane_cuts(Codec::zstd(5)?, Precondition::Shuffle(Width::W4), &shuffled);
/// assert_eq!(cuts, [0, 16 << 10, 32 << 10, 48 << 10, 64 << 10]);
/// assert!(plane_cuts(Codec::LZ4, Precondition::Shuffle(Width::W4), &shuffled).is_empty());
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
pub fn plane_cuts(codec: Codec, precondition: Precondition, data: &[u8]) -> Vec<usize> {
    let Some(min_plane) = codec.algorithm().properties().min_plane_bytes else {
        return Vec::new();
    };
    let (first, plane, w) = match precondition {
        Precondition::Shuffle(w)
        | Precondition::DeltaShuffle(w)
        | Precondition::ZigzagShuffle(w) => (0, data.len() / w.bytes(), w.bytes()),
        Precondition::Runs(w) => match runs::planes(w.bytes(), data) {
            Some((first, plane)) => (first, plane, w.bytes()),
            None => return Vec::new(),
        },
        // Each bitshuffle block holds the 8 bit-planes of each byte of its values together.
        Precondition::BitShuffle(w) if codec.algorithm() == Algorithm::Lzma => {
            let w = w.bytes();
            let n8 = data.len() / w / 8 * 8;
            let mut cuts = Vec::new();
            for (start, m) in bitshuffle_blocks(w, n8).filter(|&(_, m)| m >= min_plane) {
                cuts.extend((0..=w).map(|k| start * w + k * m));
            }
            cuts.dedup();
            return cuts;
        }
        _ => return Vec::new(),
    };
    if plane < min_plane || w == 1 {
        return Vec::new();
    }
    (0..=w).map(|k| first + k * plane).collect()
}

/// Encodes blocks; reuses its compression context and scratch buffer across calls. One per thread.
#[derive(Debug, Default)]
pub struct BlockEncoder {
    compressor: Compressor,
    scratch: Vec<u8>,
}

impl BlockEncoder {
    /// A fresh encoder.
    pub fn new() -> BlockEncoder {
        BlockEncoder::default()
    }

    /// Preconditions and compresses `input`, appending one block to `out`; returns its header.
    ///
    /// A packing preconditioner (`for`, `delta-for`, `delta-varint`, `sparse`, `runs`, `bitplanes`)
    /// whose output is not shorter than `input` gives way to [`Precondition::unpacked`]
    /// (`bitplanes` to `bitshuffle`, the others to none); when the codec does not shrink the
    /// packed bytes, they are stored packed (codec `none`). Whatever is not smaller than `input`
    /// is stored as is.
    ///
    /// # Errors
    /// [`Error::Compress`] if the backend fails.
    pub fn encode(
        &mut self,
        codec: Codec,
        precondition: Precondition,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        self.encode_values(codec, precondition, precondition.width(), input, out)
    }

    /// [`BlockEncoder::encode`] of `input` holding values `value_width` bytes wide: where the
    /// preconditioned bytes keep the values' alignment (no preconditioner, or `delta`), LZMA
    /// models it ([`Compressor::compress_aligned`]). The block is the same kind of block.
    ///
    /// # Errors
    /// [`Error::Compress`] if the backend fails.
    pub fn encode_values(
        &mut self,
        codec: Codec,
        precondition: Precondition,
        value_width: Width,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<BlockHeader> {
        let start = out.len();
        out.resize(start + BlockHeader::LEN, 0);
        let (mut codec, mut precondition) = (codec, precondition);
        if codec.algorithm() == Algorithm::None {
            precondition = Precondition::None;
        }
        let mut payload_len = None;
        if !precondition.keeps_length() {
            self.scratch.clear();
            Kernel::best().encode(precondition, input, &mut self.scratch);
            payload_len = self.encode_packed(input.len(), precondition, &mut codec, out)?;
            if payload_len.is_none() {
                precondition = precondition.unpacked();
            }
        }
        let mut payload_len = match payload_len {
            Some(len) => len,
            None => {
                let source = if precondition == Precondition::None {
                    input
                } else {
                    self.scratch.resize(input.len(), 0);
                    Kernel::best().apply(precondition, input, &mut self.scratch);
                    &self.scratch[..]
                };
                let align = match precondition {
                    Precondition::None => value_width.bytes(),
                    Precondition::Delta(w) => w.bytes(),
                    _ => 1,
                };
                if codec.algorithm() == Algorithm::Lzma && align > 1 {
                    self.compressor
                        .compress_aligned(codec, source, align, out)?
                } else {
                    let cuts = plane_cuts(codec, precondition, source);
                    self.compressor
                        .compress_segmented(codec, source, &cuts, out)?
                }
            }
        };
        if payload_len >= input.len()
            && (codec.algorithm() != Algorithm::None || precondition != Precondition::None)
        {
            out.truncate(start + BlockHeader::LEN);
            out.extend_from_slice(input);
            (codec, precondition, payload_len) = (Codec::NONE, Precondition::None, input.len());
        }
        let mut header = BlockHeader {
            codec,
            precondition,
            uncompressed_len: input.len() as u64,
            payload_len: payload_len as u64,
            crc32: 0,
        };
        header.write(&mut out[start..start + BlockHeader::LEN]);
        header.crc32 = Crc32::new()
            .update(&out[start..start + 20])
            .update(&out[start + BlockHeader::LEN..])
            .finish();
        header.write(&mut out[start..start + BlockHeader::LEN]);
        Ok(header)
    }

    /// Writes the payload of a packing preconditioner's output (in `self.scratch`) to `out`: its
    /// length as u64, then the codec's payload of it, or the packed bytes as they are when the
    /// codec does not shrink them (setting `codec` to `none`). `None`, writing nothing, when the
    /// packed bytes are not shorter than the `input_len` bytes they encode.
    fn encode_packed(
        &mut self,
        input_len: usize,
        precondition: Precondition,
        codec: &mut Codec,
        out: &mut Vec<u8>,
    ) -> Result<Option<usize>> {
        let packed = self.scratch.len();
        if packed >= input_len {
            return Ok(None);
        }
        let at = out.len();
        out.extend_from_slice(&(packed as u64).to_le_bytes());
        let cuts = plane_cuts(*codec, precondition, &self.scratch);
        let compressed = self
            .compressor
            .compress_segmented(*codec, &self.scratch, &cuts, out)?;
        if compressed >= packed {
            out.truncate(at + 8);
            out.extend_from_slice(&self.scratch);
            *codec = Codec::NONE;
        }
        Ok(Some(out.len() - at))
    }
}

/// Decodes blocks; reuses its decompression context and scratch buffer across calls. One per thread.
#[derive(Debug)]
pub struct BlockDecoder {
    decompressor: Decompressor,
    scratch: Vec<u8>,
    verify_checksums: bool,
    max_uncompressed_len: u64,
}

impl Default for BlockDecoder {
    fn default() -> BlockDecoder {
        BlockDecoder {
            decompressor: Decompressor::new(),
            scratch: Vec::new(),
            verify_checksums: true,
            max_uncompressed_len: BlockDecoder::DEFAULT_MAX_UNCOMPRESSED_LEN,
        }
    }
}

impl BlockDecoder {
    /// The default limit on a block's declared uncompressed length: 4 GiB.
    pub const DEFAULT_MAX_UNCOMPRESSED_LEN: u64 = 4 << 30;

    /// A decoder that verifies checksums and refuses blocks declaring more than 4 GiB.
    pub fn new() -> BlockDecoder {
        BlockDecoder::default()
    }

    /// Whether to verify each block's CRC32 (default: yes).
    pub fn verify_checksums(mut self, verify: bool) -> BlockDecoder {
        self.verify_checksums = verify;
        self
    }

    /// Refuse blocks whose header declares more than `limit` uncompressed bytes, before allocating.
    pub fn max_uncompressed_len(mut self, limit: u64) -> BlockDecoder {
        self.max_uncompressed_len = limit;
        self
    }

    /// Checks the header, length and (if enabled) checksum of the block at the start of `block`
    /// and returns its header and payload.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::TooLarge`], [`Error::Checksum`] or a header field error.
    pub fn check<'a>(&self, block: &'a [u8]) -> Result<(BlockHeader, &'a [u8])> {
        let header = BlockHeader::parse(block)?;
        if header.uncompressed_len > self.max_uncompressed_len
            || usize::try_from(header.uncompressed_len).is_err()
        {
            return Err(Error::TooLarge {
                declared: header.uncompressed_len,
                limit: self.max_uncompressed_len,
            });
        }
        let payload = usize::try_from(header.payload_len)
            .ok()
            .and_then(|len| block.get(BlockHeader::LEN..BlockHeader::LEN.checked_add(len)?))
            .ok_or(Error::Truncated {
                needed: header.block_len(),
                available: block.len(),
            })?;
        if self.verify_checksums {
            let computed = Crc32::new().update(&block[..20]).update(payload).finish();
            if computed != header.crc32 {
                return Err(Error::Checksum {
                    stored: header.crc32,
                    computed,
                });
            }
        }
        Ok((header, payload))
    }

    /// Decodes the block at the start of `block` into `out`, which must have exactly the block's
    /// uncompressed length (read it with [`BlockHeader::parse`]).
    ///
    /// # Errors
    /// [`Error::OutputSize`] if `out` has the wrong length; everything [`BlockDecoder::check`] and
    /// [`Decompressor::decompress`] return.
    pub fn decode_into(&mut self, block: &[u8], out: &mut [u8]) -> Result<BlockHeader> {
        let (header, payload) = self.check(block)?;
        if header.uncompressed_len != out.len() as u64 {
            return Err(Error::OutputSize {
                expected: header.uncompressed_len as usize,
                actual: out.len(),
            });
        }
        self.decode_payload(header, payload, out)?;
        Ok(header)
    }

    /// Decodes the block at the start of `block`, replacing the contents of `out`.
    ///
    /// # Errors
    /// As for [`BlockDecoder::decode_into`].
    pub fn decode(&mut self, block: &[u8], out: &mut Vec<u8>) -> Result<BlockHeader> {
        let (header, payload) = self.check(block)?;
        out.clear();
        // check() bounded the length by max_uncompressed_len and usize.
        out.resize(header.uncompressed_len as usize, 0);
        self.decode_payload(header, payload, out)?;
        Ok(header)
    }

    fn decode_payload(
        &mut self,
        header: BlockHeader,
        payload: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        let algorithm = header.codec.algorithm();
        let precondition = header.precondition;
        if precondition == Precondition::None {
            self.decompressor.decompress(algorithm, payload, out)
        } else if precondition.keeps_length() {
            // Stored bytes are undone straight from the payload, without a copy in between.
            let input = if algorithm == Algorithm::None {
                payload
            } else {
                let scratch = crate::scratch(&mut self.scratch, out.len());
                self.decompressor.decompress(algorithm, payload, scratch)?;
                scratch
            };
            if input.len() != out.len() {
                return Err(Error::SizeMismatch {
                    codec: algorithm.name().to_owned(),
                    expected: out.len(),
                    actual: input.len(),
                });
            }
            Kernel::best().undo(precondition, input, out);
            Ok(())
        } else {
            // Packed bytes: their length, then the codec's payload of them (shorter than the
            // output, or the encoder would not have packed: so no allocation beyond the output's).
            let corrupt = |reason: String| Error::Corrupt {
                codec: precondition.to_string(),
                reason,
            };
            let (len, packed) = payload.split_first_chunk::<8>().ok_or_else(|| {
                corrupt(format!(
                    "a payload of {} bytes has no packed length",
                    payload.len()
                ))
            })?;
            let len = u64::from_le_bytes(*len);
            if len >= out.len() as u64 {
                return Err(corrupt(format!(
                    "packed length {len} is not below the block's {} bytes",
                    out.len()
                )));
            }
            let input = if algorithm == Algorithm::None && packed.len() as u64 == len {
                packed
            } else {
                let scratch = crate::scratch(&mut self.scratch, len as usize);
                self.decompressor.decompress(algorithm, packed, scratch)?;
                scratch
            };
            Kernel::best().decode(precondition, input, out)
        }
    }
}
