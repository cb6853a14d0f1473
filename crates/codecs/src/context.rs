//! Reusable compression and decompression contexts over every backend.

use std::cell::RefCell;
#[cfg(feature = "zstd")]
use std::io::Cursor;

#[cfg(feature = "zlib")]
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
#[cfg(feature = "zstd")]
use zstd::zstd_safe::zstd_sys::ZSTD_EndDirective;
#[cfg(feature = "zstd")]
use zstd::zstd_safe::{self, CCtx, CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

use crate::codec::{Algorithm, Codec};
use crate::dict::{DecoderDictionary, EncoderDictionary, PrefixDictionary};
#[cfg(feature = "zlib")]
use crate::error::check_end;
use crate::error::{Error, Result};
#[cfg(feature = "lz4")]
use crate::lz4c;
#[cfg(feature = "lzma")]
use crate::lzma;

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
    /// The zstd context and the level it is set to.
    #[cfg(feature = "zstd")]
    zstd: Option<(CCtx<'static>, i32)>,
    #[cfg(feature = "zlib")]
    zlib: Option<(u32, Compress)>,
    /// LZ4 output scratch, zero-filled once and reused: `lz4_flex` writes into initialized memory, and
    /// copying the compressed bytes out costs less than zero-filling the worst case on every call.
    lz4: Vec<u8>,
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
            Algorithm::Lz4 => {
                let bound = lz4_flex::block::get_maximum_output_size(input.len());
                if self.lz4.len() < bound {
                    self.lz4.resize(bound, 0);
                }
                let n = lz4_flex::block::compress_into(input, &mut self.lz4)
                    .map_err(|e| Error::compress(codec, e))?;
                out.extend_from_slice(&self.lz4[..n]);
            }
            // liblz4's HC compressor crashes on empty input at level 12; empty is one token either way.
            Algorithm::Lz4Hc if input.is_empty() => return self.compress(Codec::LZ4, input, out),
            #[cfg(feature = "lz4")]
            Algorithm::Lz4Hc => {
                let bound = lz4::block::compress_bound(input.len())
                    .map_err(|e| Error::compress(codec, e))?;
                out.resize(start + bound, 0);
                let mode = lz4::block::CompressionMode::HIGHCOMPRESSION(codec.level());
                let n = lz4::block::compress_to_buffer(input, Some(mode), false, &mut out[start..])
                    .map_err(|e| Error::compress(codec, e))?;
                out.truncate(start + n);
            }
            #[cfg(feature = "zstd")]
            Algorithm::Zstd => {
                let cctx = self.zstd_at(codec)?;
                zstd_into(out, input.len(), |dst| cctx.compress2(dst, input))
                    .map_err(|code| Error::compress(codec, zstd_safe::get_error_name(code)))?;
            }
            #[cfg(feature = "zlib")]
            Algorithm::Zlib => self.zlib(codec, input, out)?,
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

    /// The zstd context, set to `codec`'s level (set only when it changes).
    #[cfg(feature = "zstd")]
    fn zstd_at(&mut self, codec: Codec) -> Result<&mut CCtx<'static>> {
        let (cctx, level) = self.zstd.get_or_insert_with(|| (CCtx::create(), i32::MIN));
        if *level != codec.level() {
            cctx.set_parameter(CParameter::CompressionLevel(codec.level()))
                .map_err(|code| Error::compress(codec, zstd_safe::get_error_name(code)))?;
            *level = codec.level();
        }
        Ok(cctx)
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
            Algorithm::Zstd => self.zstd_segmented(codec, input, cuts.iter().filter(inside), out),
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

    /// [`Compressor::compress_segmented`] under zstd: a block ends at each of `cuts`.
    #[cfg(feature = "zstd")]
    fn zstd_segmented<'c>(
        &mut self,
        codec: Codec,
        input: &[u8],
        cuts: impl Iterator<Item = &'c usize> + Clone,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let start = out.len();
        let error = |code| Error::compress(codec, zstd_safe::get_error_name(code));
        let cctx = self.zstd_at(codec)?;
        // Worst case: the whole input's bound plus a block header per segment.
        out.reserve(zstd_safe::compress_bound(input.len()) + 8 * (cuts.clone().count() + 1));
        let result = (|| {
            cctx.set_pledged_src_size(Some(input.len() as u64))?;
            let mut output = OutBuffer::around_pos(out, start);
            let mut from = 0;
            let ends = cuts.copied();
            for end in ends.chain(std::iter::once(input.len())) {
                if end <= from {
                    continue;
                }
                let directive = if end == input.len() {
                    ZSTD_EndDirective::ZSTD_e_end
                } else {
                    ZSTD_EndDirective::ZSTD_e_flush
                };
                let mut part = InBuffer::around(&input[from..end]);
                // With the bound reserved, each call consumes its part and flushes it whole;
                // loop in case zstd asks for another call.
                while cctx.compress_stream2(&mut output, &mut part, directive)? != 0 {}
                from = end;
            }
            Ok(())
        })();
        if let Err(code) = result {
            // Leave the context ready for the next frame.
            let _ = cctx.reset(ResetDirective::SessionOnly);
            out.truncate(start);
            return Err(error(code));
        }
        Ok(out.len() - start)
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
            let (cctx, _) = self.zstd.get_or_insert_with(|| (CCtx::create(), i32::MIN));
            zstd_into(out, input.len(), |dst| {
                cctx.compress_using_cdict(dst, input, dictionary.cdict())
            })
            .map_err(|code| Error::Compress {
                codec: "zstd+dictionary".into(),
                reason: zstd_safe::get_error_name(code).into(),
            })?;
            Ok(out.len() - start)
        }
    }

    #[cfg(feature = "zlib")]
    fn zlib(&mut self, codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let level = codec.level().unsigned_abs();
        if level == 1 {
            // zlib-rs's level 1 is deflate_quick, which barely searches for matches and stores
            // floats much larger than zlib's own level 1 (ROOT's `101`); miniz_oxide's level 1 is
            // a greedy match search. Any zlib reader decodes either stream.
            out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec_zlib(input, 1));
            return Ok(());
        }
        let stream = match &mut self.zlib {
            Some((current, stream)) if *current == level => {
                stream.reset();
                stream
            }
            slot => {
                &mut slot
                    .insert((level, Compress::new(Compression::new(level), true)))
                    .1
            }
        };
        // zlib's compressBound: the whole output fits in one call.
        let n = input.len();
        out.reserve(n + (n >> 12) + (n >> 14) + (n >> 25) + 32);
        loop {
            let consumed = usize::try_from(stream.total_in())
                .unwrap_or(usize::MAX)
                .min(n);
            let status = stream
                .compress_vec(&input[consumed..], out, FlushCompress::Finish)
                .map_err(|e| Error::compress(codec, e))?;
            if status == Status::StreamEnd {
                return Ok(());
            }
            out.reserve(out.capacity().max(4096));
        }
    }
}

/// Runs a zstd call that writes at the end of `out`, after reserving its worst-case size.
#[cfg(feature = "zstd")]
fn zstd_into(
    out: &mut Vec<u8>,
    input_len: usize,
    call: impl FnOnce(&mut Cursor<&mut Vec<u8>>) -> zstd_safe::SafeResult,
) -> zstd_safe::SafeResult {
    let start = out.len();
    out.reserve(zstd_safe::compress_bound(input_len));
    let mut cursor = Cursor::new(out);
    cursor.set_position(start as u64);
    call(&mut cursor)
}

/// A decompression context, the counterpart of [`Compressor`]. Keep one per thread.
///
/// Every decode writes into a caller's buffer of the declared uncompressed size and fails with
/// [`Error::SizeMismatch`] if the data decodes to any other size: a block can never make the
/// decoder write or allocate more than declared.
#[derive(Default)]
pub struct Decompressor {
    #[cfg(feature = "zstd")]
    zstd: Option<DCtx<'static>>,
    #[cfg(feature = "zlib")]
    zlib: Option<Decompress>,
    /// LZ4 decoding window: a dictionary's bytes, then room for the block (prefix mode).
    lz4_window: Vec<u8>,
    /// [`PrefixDictionary`] id of the bytes at the front of `lz4_window` (0: none).
    lz4_window_id: u64,
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
            Algorithm::Lz4 | Algorithm::Lz4Hc => lz4_decompress(algorithm, input, out, &[]),
            #[cfg(feature = "zstd")]
            Algorithm::Zstd => {
                let dctx = self.zstd.get_or_insert_with(DCtx::create);
                zstd_decode(algorithm, input, out, |out| dctx.decompress(out, input))
            }
            #[cfg(feature = "zlib")]
            Algorithm::Zlib => self.zlib(input, out),
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
            if let Ok(Some(declared)) = zstd_safe::get_frame_content_size(input)
                && declared != size as u64
            {
                let actual = usize::try_from(declared).unwrap_or(usize::MAX);
                return Err(Error::size_mismatch(algorithm.name(), size, actual));
            }
            out.reserve_exact(size);
            let dctx = self.zstd.get_or_insert_with(DCtx::create);
            return match dctx.decompress(out, input) {
                Ok(n) if n == size => Ok(()),
                Ok(n) => {
                    out.clear();
                    Err(Error::size_mismatch(algorithm.name(), size, n))
                }
                Err(code) => {
                    out.clear();
                    Err(Error::corrupt(
                        algorithm.name(),
                        zstd_safe::get_error_name(code),
                    ))
                }
            };
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
            let dctx = self.zstd.get_or_insert_with(DCtx::create);
            zstd_decode(Algorithm::Zstd, input, out, |out| {
                dctx.decompress_using_ddict(out, input, dictionary.ddict())
            })
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
            Algorithm::Lz4 => self.lz4_with_prefix(dictionary, input, out),
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

    fn lz4_with_prefix(
        &mut self,
        dictionary: &PrefixDictionary,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        let algorithm = Algorithm::Lz4;
        let window = dictionary.lz4_window();
        let prefix = window.len();
        if self.lz4_window_id != dictionary.id() {
            self.lz4_window.clear();
            self.lz4_window.extend_from_slice(window);
            self.lz4_window_id = dictionary.id();
        }
        if self.lz4_window.len() < prefix + out.len() {
            self.lz4_window.resize(prefix + out.len(), 0);
        }
        #[cfg(feature = "lz4")]
        match lz4c::decompress_after_prefix(input, &mut self.lz4_window, prefix, out.len()) {
            Ok(n) if n == out.len() => {
                out.copy_from_slice(&self.lz4_window[prefix..prefix + n]);
                return Ok(());
            }
            Ok(n) => return Err(Error::size_mismatch(algorithm.name(), out.len(), n)),
            // lz4_flex names the problem (or decodes what liblz4's sizes cannot hold).
            Err(_) => {}
        }
        lz4_decompress(algorithm, input, out, window)
    }

    #[cfg(feature = "zlib")]
    fn zlib(&mut self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let algorithm = Algorithm::Zlib;
        let stream = self.zlib.get_or_insert_with(|| Decompress::new(true));
        stream.reset(true);
        let status = stream
            .decompress(input, out, FlushDecompress::Finish)
            .map_err(|e| Error::corrupt(algorithm.name(), e))?;
        check_end(
            algorithm.name(),
            status == Status::StreamEnd,
            (stream.total_in(), input.len()),
            (stream.total_out(), out.len()),
        )
    }
}

/// Decodes an LZ4 block into all of `out` with liblz4, against `dictionary` if not empty. When
/// liblz4 fails (or the sizes exceed its `int`), or a build has no liblz4 (feature `lz4`),
/// `lz4_flex` decodes instead: it names what is wrong with a malformed block, and handles blocks
/// over 2 GiB.
pub(crate) fn lz4_decompress(
    algorithm: Algorithm,
    input: &[u8],
    out: &mut [u8],
    dictionary: &[u8],
) -> Result<()> {
    #[cfg(feature = "lz4")]
    if let Ok(n) = lz4c::decompress(input, out, dictionary) {
        return if n == out.len() {
            Ok(())
        } else {
            Err(Error::size_mismatch(algorithm.name(), out.len(), n))
        };
    }
    let decoded = if dictionary.is_empty() {
        lz4_flex::block::decompress_into(input, out)
    } else {
        lz4_flex::block::decompress_into_with_dict(input, out, dictionary)
    };
    match decoded {
        Ok(n) if n == out.len() => Ok(()),
        Ok(n) => Err(Error::size_mismatch(algorithm.name(), out.len(), n)),
        Err(lz4_flex::block::DecompressError::OutputTooSmall { expected, .. }) => Err(
            Error::size_mismatch(algorithm.name(), out.len(), expected.max(out.len() + 1)),
        ),
        Err(e) => Err(Error::corrupt(algorithm.name(), e)),
    }
}

/// Checks the frame's declared size, then decodes with `call` and checks the decoded size.
#[cfg(feature = "zstd")]
fn zstd_decode(
    algorithm: Algorithm,
    input: &[u8],
    out: &mut [u8],
    call: impl FnOnce(&mut [u8]) -> zstd_safe::SafeResult,
) -> Result<()> {
    if let Ok(Some(declared)) = zstd_safe::get_frame_content_size(input)
        && declared != out.len() as u64
    {
        let actual = usize::try_from(declared).unwrap_or(usize::MAX);
        return Err(Error::size_mismatch(algorithm.name(), out.len(), actual));
    }
    match call(out) {
        Ok(n) if n == out.len() => Ok(()),
        Ok(n) => Err(Error::size_mismatch(algorithm.name(), out.len(), n)),
        Err(code) => Err(Error::corrupt(
            algorithm.name(),
            zstd_safe::get_error_name(code),
        )),
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
