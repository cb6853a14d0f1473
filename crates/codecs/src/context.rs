//! Reusable compression and decompression contexts over every backend.

use std::cell::RefCell;

use crate::backend::lz4;
#[cfg(feature = "lz4")]
use crate::backend::lz4::compress_hc;
#[cfg(feature = "lzma")]
use crate::backend::lzma;
#[cfg(feature = "zlib")]
use crate::backend::zlib;
#[cfg(feature = "zstd")]
use crate::backend::zstd;
use crate::codec::{Algorithm, Codec};
use crate::dict::{DecoderDictionary, EncoderDictionary, PrefixDictionary};
use crate::error::{Error, Result};

/// A compression context: holds the backends' state (a zstd `CCtx`, a zlib stream) between calls so
/// that compressing many blocks allocates nothing per block. Keep one per thread.
///
/// ```
/// use evtc_codecs::{Algorithm, Codec, Compressor, Decompressor};
/// let data = b"pt eta phi mass pt eta phi mass pt eta phi mass".repeat(100);
/// let mut compressed = Vec::new();
/// Compressor::new().compress(Codec::zstd(5)?, &data, &mut compressed)?;
/// let mut back = vec![0; data.len()];
/// Decompressor::new().decompress(Algorithm::Zstd, &compressed, &mut back)?;
/// assert_eq!(back, data);
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
#[derive(Default)]
pub struct Compressor {
    #[cfg(feature = "zstd")]
    zstd: Option<zstd::Encoder>,
    #[cfg(feature = "zlib")]
    zlib: zlib::Encoder,
    lz4: lz4::Encoder,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor").finish_non_exhaustive()
    }
}

impl Compressor {
    /// A fresh context; backend state is created on first use.
    pub fn new() -> Compressor {
        Compressor::default()
    }

    /// Compresses `input` with `codec`, appending the compressed bytes to `out`, and returns how many
    /// bytes were appended. The output is the backend's plain format (zlib stream, xz stream, LZ4
    /// block, zstd frame, or the input itself for `none`), without evtc framing;
    /// [`BlockEncoder`](crate::BlockEncoder) adds the envelope.
    ///
    /// # Errors
    /// [`Error::Compress`] if the backend fails (for LZ4HC: inputs over 2 GiB).
    pub fn compress(&mut self, codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<usize> {
        let start = out.len();
        match codec.algorithm() {
            Algorithm::None => out.extend_from_slice(input),
            Algorithm::Lz4 => self.lz4.compress(codec, input, out)?,
            // liblz4's HC compressor crashes on empty input at level 12; empty is one token either way.
            Algorithm::Lz4Hc if input.is_empty() => return self.compress(Codec::LZ4, input, out),
            #[cfg(feature = "lz4")]
            Algorithm::Lz4Hc => compress_hc(codec, input, out)?,
            #[cfg(feature = "zstd")]
            Algorithm::Zstd => self
                .zstd
                .get_or_insert_default()
                .compress(codec, input, out)?,
            #[cfg(feature = "zlib")]
            Algorithm::Zlib => self.zlib.compress(codec, input, out)?,
            #[cfg(feature = "lzma")]
            Algorithm::Lzma => lzma::compress(codec, input, 1, &[], out)?,
            #[allow(unreachable_patterns)]
            other => return Err(Error::not_built(other)),
        }
        Ok(out.len() - start)
    }

    /// Compresses `input` as [`Compressor::compress`] does, except that LZMA models data of
    /// `align`-byte values when `align` is 2, 4 or 8: its literal and match coders are indexed by
    /// the byte's position in the value (`lp` = `pb` = log2 of `align`, at most 2) instead of by the
    /// previous byte's high bits (`lc` = 0), as xz's `--lzma2=pb=2,lp=2,lc=0` for 32-bit data.
    /// The stream is an ordinary xz stream with these properties in its header, which every
    /// decoder reads. Other codecs, and other values of `align`, compress as
    /// [`Compressor::compress`].
    ///
    /// The RAC study's TFloat tree under lzma:7, in 256 KiB baskets: 5.72 MB unshuffled so, where
    /// the byte shuffle under the default properties gave 5.93 MB.
    ///
    /// # Errors
    /// As for [`Compressor::compress`].
    pub fn compress_aligned(
        &mut self,
        codec: Codec,
        input: &[u8],
        align: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        if codec.algorithm() != Algorithm::Lzma {
            return self.compress(codec, input, out);
        }
        #[cfg(feature = "lzma")]
        {
            let start = out.len();
            lzma::compress(codec, input, align, &[], out)?;
            Ok(out.len() - start)
        }
        #[cfg(not(feature = "lzma"))]
        {
            let _ = align;
            Err(Error::not_built(Algorithm::Lzma))
        }
    }

    /// Compresses `input` as [`Compressor::compress`] does, except that zstd ends one of its
    /// internal blocks, and LZMA one of its LZMA2 chunks, at every offset of `cuts` (ascending):
    /// each segment between two cuts (a byte plane of a shuffle) gets its own entropy tables under
    /// zstd, and under LZMA a segment that does not compress (a plane of random mantissa bytes) is
    /// stored as is, which a decoder copies instead of decoding byte by byte. The output is the
    /// same kind of zstd frame or xz stream, which any decoder reads. Other codecs, and input
    /// without a cut inside it, compress as [`Compressor::compress`].
    ///
    /// Without the cuts, zstd's 128 KiB blocks straddle the planes of a shuffled basket and code
    /// the exponent bytes with a table built mostly from random mantissa bytes.
    ///
    /// # Errors
    /// As for [`Compressor::compress`].
    pub fn compress_segmented(
        &mut self,
        codec: Codec,
        input: &[u8],
        cuts: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let inside = |&&cut: &&usize| cut > 0 && cut < input.len();
        if !cuts.iter().any(|c| inside(&c)) {
            return self.compress(codec, input, out);
        }
        match codec.algorithm() {
            #[cfg(feature = "zstd")]
            Algorithm::Zstd => {
                let start = out.len();
                let zstd = self.zstd.get_or_insert_default();
                zstd.compress_segmented(codec, input, cuts.iter().filter(inside), out)?;
                Ok(out.len() - start)
            }
            #[cfg(feature = "lzma")]
            Algorithm::Lzma => {
                let start = out.len();
                let cuts: Vec<usize> = cuts.iter().filter(inside).copied().collect();
                lzma::compress(codec, input, 1, &cuts, out)?;
                Ok(out.len() - start)
            }
            _ => self.compress(codec, input, out),
        }
    }

    /// Compresses `input` as a zstd frame that needs `dictionary` to decode, appending to `out`; returns
    /// the number of bytes appended. The level is the one the dictionary was prepared with.
    ///
    /// # Errors
    /// [`Error::Compress`] if zstd fails.
    pub fn compress_with_dictionary(
        &mut self,
        dictionary: &EncoderDictionary,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        #[cfg(not(feature = "zstd"))]
        {
            let _ = (dictionary, input, out);
            Err(Error::not_built(Algorithm::Zstd))
        }
        #[cfg(feature = "zstd")]
        {
            let start = out.len();
            let zstd = self.zstd.get_or_insert_default();
            zstd.compress_with_dictionary(dictionary, input, out)?;
            Ok(out.len() - start)
        }
    }
}

/// A decompression context, the counterpart of [`Compressor`]. Keep one per thread.
///
/// Every decode writes into a caller's buffer of the declared uncompressed size and fails with
/// [`Error::SizeMismatch`] if the data decodes to any other size: a block can never make the
/// decoder write or allocate more than declared.
#[derive(Default)]
pub struct Decompressor {
    #[cfg(feature = "zstd")]
    zstd: Option<zstd::Decoder>,
    #[cfg(feature = "zlib")]
    zlib: zlib::Decoder,
    lz4_prefix: lz4::PrefixDecoder,
    /// Raw LZMA2 decoder for units against a prefix, kept between units.
    #[cfg(feature = "lzma")]
    lzma_prefix: Option<Box<lzma::PrefixDecoder>>,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor").finish_non_exhaustive()
    }
}

impl Decompressor {
    /// A fresh context; backend state is created on first use.
    pub fn new() -> Decompressor {
        Decompressor::default()
    }

    /// Decompresses `input`, compressed with `algorithm` (any level), into all of `out`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for invalid or truncated data, [`Error::SizeMismatch`] if it decodes to
    /// anything but `out.len()` bytes.
    pub fn decompress(&mut self, algorithm: Algorithm, input: &[u8], out: &mut [u8]) -> Result<()> {
        match algorithm {
            Algorithm::None => {
                if input.len() != out.len() {
                    return Err(Error::size_mismatch(
                        algorithm.name(),
                        out.len(),
                        input.len(),
                    ));
                }
                out.copy_from_slice(input);
                Ok(())
            }
            Algorithm::Lz4 | Algorithm::Lz4Hc => lz4::decompress(algorithm, input, out, &[]),
            #[cfg(feature = "zstd")]
            Algorithm::Zstd => self.zstd.get_or_insert_default().decompress(input, out),
            #[cfg(feature = "zlib")]
            Algorithm::Zlib => self.zlib.decompress(input, out),
            #[cfg(feature = "lzma")]
            Algorithm::Lzma => lzma::decompress(input, out),
            #[allow(unreachable_patterns)]
            other => Err(Error::not_built(other)),
        }
    }

    /// Decompresses `input`, compressed with `algorithm`, onto the end of `out`, which grows by
    /// exactly `size` bytes. The same as [`Decompressor::decompress`] into `size` new bytes, but
    /// zstd writes into `out`'s spare room directly when `out` is empty, without zeroing it
    /// first.
    ///
    /// # Errors
    /// As for [`Decompressor::decompress`]; `out` keeps its length on error.
    pub fn decompress_append(
        &mut self,
        algorithm: Algorithm,
        input: &[u8],
        size: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        #[cfg(feature = "zstd")]
        if algorithm == Algorithm::Zstd && out.is_empty() {
            return self
                .zstd
                .get_or_insert_default()
                .decompress_append(input, size, out);
        }
        let start = out.len();
        out.resize(start + size, 0);
        let result = self.decompress(algorithm, input, &mut out[start..]);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    /// Decompresses a zstd frame made by [`Compressor::compress_with_dictionary`] into all of `out`.
    ///
    /// # Errors
    /// As for [`Decompressor::decompress`]; also [`Error::Corrupt`] if the frame needs another dictionary.
    pub fn decompress_with_dictionary(
        &mut self,
        dictionary: &DecoderDictionary,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        #[cfg(not(feature = "zstd"))]
        {
            let _ = (dictionary, input, out);
            Err(Error::not_built(Algorithm::Zstd))
        }
        #[cfg(feature = "zstd")]
        {
            let zstd = self.zstd.get_or_insert_default();
            zstd.decompress_with_dictionary(dictionary, input, out)
        }
    }

    /// Decompresses data compressed with `algorithm` against the prefix `dictionary` into all of
    /// `out`: an LZ4 block against the dictionary as its external dictionary, or raw LZMA2 data
    /// (no xz stream around it) against the dictionary as LZMA2's preset dictionary, as
    /// [`crate::UnitCompressor`] makes them.
    ///
    /// # Errors
    /// As for [`Decompressor::decompress`]; [`Error::Dictionary`] for another algorithm.
    pub fn decompress_with_prefix(
        &mut self,
        algorithm: Algorithm,
        dictionary: &PrefixDictionary,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        match algorithm {
            Algorithm::Lz4 => self.lz4_prefix.decompress(dictionary, input, out),
            #[cfg(feature = "lzma")]
            Algorithm::Lzma => self.lzma_prefix.get_or_insert_with(Box::default).decode(
                dictionary.bytes(),
                input,
                out,
            ),
            #[cfg(not(feature = "lzma"))]
            Algorithm::Lzma => Err(Error::not_built(Algorithm::Lzma)),
            _ => Err(Error::Dictionary(format!(
                "{} takes no prefix dictionary",
                algorithm.name()
            ))),
        }
    }
}

thread_local! {
    static COMPRESSOR: RefCell<Compressor> = RefCell::new(Compressor::new());
    static DECOMPRESSOR: RefCell<Decompressor> = RefCell::new(Decompressor::new());
}

/// [`Compressor::compress`] with this thread's context.
///
/// # Errors
/// As for [`Compressor::compress`].
pub fn compress(codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<usize> {
    COMPRESSOR.with(|c| c.borrow_mut().compress(codec, input, out))
}

/// [`Decompressor::decompress`] with this thread's context.
///
/// # Errors
/// As for [`Decompressor::decompress`].
pub fn decompress(algorithm: Algorithm, input: &[u8], out: &mut [u8]) -> Result<()> {
    with_decompressor(|d| d.decompress(algorithm, input, out))
}

/// Calls `f` with this thread's [`Decompressor`], the one [`decompress`] uses: for decoders made
/// often, such as one per single-entry read, which then share one set of backend contexts instead
/// of each creating its own (creating a zstd context costs microseconds).
///
/// # Panics
/// If `f` calls [`decompress`] or `with_decompressor` (the context is in use).
pub fn with_decompressor<T>(f: impl FnOnce(&mut Decompressor) -> T) -> T {
    DECOMPRESSOR.with(|d| f(&mut d.borrow_mut()))
}
