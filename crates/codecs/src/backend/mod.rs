//! The compression backends, one module each, behind [`crate::Compressor`] and
//! [`crate::Decompressor`], which keep each backend's state between calls and dispatch by
//! algorithm. What evtc knows of each algorithm as data (levels, default basket and RAC unit
//! sizes, dictionaries, ROOT's block magic) is the codec table of `codec.rs`
//! ([`crate::Properties`]). Adding a codec means a module here, an [`crate::Algorithm`] variant,
//! its arms in the two contexts and its row of the table (docs/codecs.md).
//!
//! `none` (stored) needs no backend.

pub(crate) mod lz4;
#[cfg(feature = "lz4")]
pub(crate) mod lz4c;
#[cfg(feature = "lzma")]
pub(crate) mod lzma;
#[cfg(feature = "zlib")]
pub(crate) mod zlib;
#[cfg(feature = "zstd")]
pub(crate) mod zstd;
