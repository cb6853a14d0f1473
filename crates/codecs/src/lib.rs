//! Compression for evtc: every codec ROOT uses behind one [`Codec`] type, the shuffle, bitshuffle and
//! delta [`Precondition`]ers, SIMD CRC32, and a checksummed block envelope.
//!
//! This crate knows bytes, not trees: it is used by evtc's file format, its random-access
//! compression and its ROOT reader alike.
//!
//! # Which API when
//! - Compress many blocks in a loop: keep a [`BlockEncoder`] / [`BlockDecoder`] per thread. They add
//!   the 24-byte envelope ([`BlockHeader`]: codec, preconditioner, sizes, CRC32) and reuse the
//!   backends' contexts and scratch memory.
//! - Raw backend formats (no envelope), e.g. to decode ROOT's baskets or to frame data yourself:
//!   [`Compressor`] / [`Decompressor`], or the thread-local [`compress`] / [`decompress`].
//! - Many tiny blocks with shared content: train a zstd dictionary with [`train_dictionary`] and use
//!   [`EncoderDictionary`] / [`DecoderDictionary`].
//! - Which setting fits some data: [`Trial`] encodes a sample under candidate [`Setting`]s
//!   ([`Setting::candidates`]) and measures size and speeds.
//! - Preconditioners alone: [`Precondition::apply`] / [`Precondition::undo`], or a specific
//!   [`Kernel`] (scalar, SSE2, AVX2).
//!
//! # Codecs
//! | spec | backend | notes |
//! |---|---|---|
//! | `none` | - | stored |
//! | `zlib:1`-`zlib:9` | `flate2` with zlib-rs | ROOT's historic default `101` |
//! | `lzma:1`-`lzma:9` | liblzma (xz 5.8, `liblzma` crate) | smallest, slowest |
//! | `lz4` | `lz4_flex` to compress, liblz4 to decode | fastest |
//! | `lz4hc:1`-`lz4hc:12` | liblz4 (`lz4`) | LZ4 format, better ratio |
//! | `zstd:-7`-`zstd:22` | libzstd (`zstd`) | the default, `zstd:5` |
//!
//! LZ4 blocks of either level decode through liblz4's bounds-checked `LZ4_decompress_safe`, which
//! copies the overlapping matches of bitshuffled data many bytes at a time where `lz4_flex` copies
//! them byte by byte; blocks over 2 GiB, beyond liblz4's `int` sizes, decode with `lz4_flex`.
//!
//! ROOT's numeric settings (`505`, `404`, ...) parse too: see [`Codec::from_root_setting`].
//!
//! # Example
//! ```
//! use evtc_codecs::{BlockDecoder, BlockEncoder, Codec, Precondition, Width};
//!
//! // Sorted 32-bit integers: bitshuffle lets even LZ4 find their structure.
//! let positions: Vec<u8> = (0..50_000u32).map(|i| i * 37 + i % 5).flat_map(u32::to_le_bytes).collect();
//! let mut block = Vec::new();
//! let codec: Codec = "lz4".parse()?;
//! BlockEncoder::new().encode(codec, Precondition::BitShuffle(Width::W4), &positions, &mut block)?;
//! println!("{} -> {} bytes", positions.len(), block.len());
//!
//! let mut decoded = Vec::new();
//! BlockDecoder::new().decode(&block, &mut decoded)?;
//! assert_eq!(decoded, positions);
//! # Ok::<(), evtc_codecs::Error>(())
//! ```
#![deny(missing_docs)]

mod backend;
mod block;
mod checksum;
mod codec;
mod context;
mod dict;
mod error;
mod framing;
pub mod le;
mod precision;
pub mod precondition;
mod scalar;
mod scratch;
mod trial;
mod unit;

pub use block::{BlockDecoder, BlockEncoder, BlockHeader, plane_cuts};
pub use checksum::{Crc32, crc32};
pub use codec::{Algorithm, Codec, Properties, UnitDictionary, ZSTD_MIN_LEVEL};
pub use context::{Compressor, Decompressor, compress, decompress, with_decompressor};
pub use dict::{DecoderDictionary, EncoderDictionary, PrefixDictionary, train_dictionary};
pub use error::{Error, Result};
pub use framing::frame_overhead;
pub use precision::{
    Quantization, round_mantissa_f32, round_mantissa_f64, round_mantissas_f32, round_mantissas_f64,
};
pub use precondition::{Isa, Kernel, Precondition, Width};
pub use scalar::ScalarType;
pub use scratch::scratch;
pub use trial::{Measured, Setting, Trial};
pub use unit::UnitCompressor;
