//! Compression of many small, independently decompressible units (for random-access compression).

#[cfg(feature = "zstd")]
use zstd::zstd_safe::{self, CCtx, CParameter};

#[cfg(feature = "lzma")]
use crate::backend::lzma;
use crate::codec::{Algorithm, Codec};
use crate::context::{Compressor, Decompressor};
use crate::dict::{DecoderDictionary, EncoderDictionary, PrefixDictionary};
use crate::error::{Error, Result};

/// Compresses units with as little framing as each codec allows, optionally against a shared
/// dictionary. Create one per batch of units; it borrows the dictionary.
///
/// - zstd: frames without the content-size and dictionary-id fields (the caller keeps sizes; the
///   dictionary is implied), against a trained dictionary when given.
/// - lz4: a plain LZ4 block, against an external-dictionary prefix when given (`lz4_flex` supports
///   LZ4's external dictionaries: the prefix acts as the 64 KiB window before the unit).
/// - lzma: against a prefix when given, raw LZMA2 data (no xz stream, block header or index)
///   with the prefix as LZMA2's preset dictionary; else an xz stream.
/// - other codecs: their normal output, without dictionary.
///
/// ```
/// use evtc_codecs::{Codec, DecoderDictionary, Decompressor, EncoderDictionary, UnitCompressor, train_dictionary};
/// let events: Vec<Vec<u8>> = (0..500u32).map(|i| format!("pt={} eta=0.{} phi=1.{}", i % 50, i % 7, i % 3).into_bytes()).collect();
/// let sizes: Vec<usize> = events.iter().map(Vec::len).collect();
/// let dict = train_dictionary(&events.concat(), &sizes, 2048)?;
/// let (enc, dec) = (EncoderDictionary::new(&dict, 5)?, DecoderDictionary::new(&dict)?);
/// let mut units = UnitCompressor::new(Codec::zstd(5)?, Some(&enc), &[])?;
/// let mut unit = Vec::new();
/// units.compress(&events[42], &mut unit)?;
/// let mut back = vec![0; events[42].len()];
/// Decompressor::new().decompress_unit(Codec::zstd(5)?.algorithm(), Some(&dec), None, &unit, &mut back)?;
/// assert_eq!(back, events[42]);
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
pub struct UnitCompressor<'d> {
    codec: Codec,
    #[cfg(feature = "zstd")]
    zstd: Option<CCtx<'d>>,
    prefix: &'d [u8],
    lz4_scratch: Vec<u8>,
    inner: Compressor,
}

impl std::fmt::Debug for UnitCompressor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnitCompressor")
            .field("codec", &self.codec)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "zstd")]
fn zstd_error(codec: Codec, code: usize) -> Error {
    Error::Compress {
        codec: codec.to_string(),
        reason: zstd_safe::get_error_name(code).into(),
    }
}

impl<'d> UnitCompressor<'d> {
    /// A unit compressor for `codec`, with a zstd dictionary (used only by zstd) and a prefix
    /// dictionary (used by lz4 and lzma; empty for none).
    ///
    /// # Errors
    /// [`Error::Compress`] if zstd refuses the parameters or dictionary.
    pub fn new(
        codec: Codec,
        zstd_dictionary: Option<&'d EncoderDictionary>,
        prefix: &'d [u8],
    ) -> Result<UnitCompressor<'d>> {
        if !codec.algorithm().is_built() {
            return Err(Error::not_built(codec.algorithm()));
        }
        #[cfg(not(feature = "zstd"))]
        let _ = zstd_dictionary;
        #[cfg(feature = "zstd")]
        let zstd = if codec.algorithm() == Algorithm::Zstd {
            let mut cctx = CCtx::create();
            let set = |cctx: &mut CCtx<'d>, p| {
                cctx.set_parameter(p)
                    .map_err(|code| zstd_error(codec, code))
            };
            set(&mut cctx, CParameter::CompressionLevel(codec.level()))?;
            set(&mut cctx, CParameter::ContentSizeFlag(false))?;
            set(&mut cctx, CParameter::DictIdFlag(false))?;
            set(&mut cctx, CParameter::ChecksumFlag(false))?;
            if let Some(dictionary) = zstd_dictionary {
                cctx.ref_cdict(dictionary.cdict())
                    .map_err(|code| zstd_error(codec, code))?;
            }
            Some(cctx)
        } else {
            None
        };
        Ok(UnitCompressor {
            codec,
            #[cfg(feature = "zstd")]
            zstd,
            prefix,
            lz4_scratch: Vec::new(),
            inner: Compressor::new(),
        })
    }

    /// The codec.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// Compresses one unit, appending to `out`; returns the number of bytes appended.
    ///
    /// # Errors
    /// [`Error::Compress`] if the backend fails.
    pub fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize> {
        self.compress_segmented(input, &[], out)
    }

    /// [`UnitCompressor::compress`], with LZMA ending an LZMA2 chunk at each of `cuts` (the
    /// unit's byte planes, [`crate::plane_cuts`]), as [`Compressor::compress_segmented`] does.
    /// The other codecs ignore the cuts (a unit is too small for zstd's tables per plane).
    ///
    /// # Errors
    /// [`Error::Compress`] if the backend fails.
    pub fn compress_segmented(
        &mut self,
        input: &[u8],
        cuts: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let start = out.len();
        #[cfg(feature = "zstd")]
        if let (Algorithm::Zstd, Some(cctx)) = (self.codec.algorithm(), &mut self.zstd) {
            out.reserve(zstd_safe::compress_bound(input.len()));
            let mut cursor = std::io::Cursor::new(&mut *out);
            cursor.set_position(start as u64);
            cctx.compress2(&mut cursor, input)
                .map_err(|code| zstd_error(self.codec, code))?;
            return Ok(out.len() - start);
        }
        match self.codec.algorithm() {
            Algorithm::Lz4 if !self.prefix.is_empty() => {
                let bound = lz4_flex::block::get_maximum_output_size(input.len());
                if self.lz4_scratch.len() < bound {
                    self.lz4_scratch.resize(bound, 0);
                }
                let n = lz4_flex::block::compress_into_with_dict(
                    input,
                    &mut self.lz4_scratch,
                    self.prefix,
                )
                .map_err(|e| Error::Compress {
                    codec: self.codec.to_string(),
                    reason: e.to_string(),
                })?;
                out.extend_from_slice(&self.lz4_scratch[..n]);
            }
            #[cfg(feature = "lzma")]
            Algorithm::Lzma if !self.prefix.is_empty() => {
                lzma::compress_with_prefix(self.codec, input, cuts, self.prefix, out)?;
            }
            Algorithm::Lzma => {
                self.inner
                    .compress_segmented(self.codec, input, cuts, out)?;
            }
            _ => {
                self.inner.compress(self.codec, input, out)?;
            }
        }
        Ok(out.len() - start)
    }
}

impl Decompressor {
    /// Decompresses one unit made by [`UnitCompressor`] into all of `out`, with the same zstd
    /// dictionary or prefix it was compressed with.
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::SizeMismatch`] as for [`Decompressor::decompress`].
    pub fn decompress_unit(
        &mut self,
        algorithm: Algorithm,
        zstd_dictionary: Option<&DecoderDictionary>,
        prefix: Option<&PrefixDictionary>,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        match (algorithm, zstd_dictionary, prefix) {
            (Algorithm::Zstd, Some(dictionary), _) => {
                self.decompress_with_dictionary(dictionary, input, out)
            }
            (Algorithm::Lz4 | Algorithm::Lzma, _, Some(prefix)) if !prefix.bytes().is_empty() => {
                self.decompress_with_prefix(algorithm, prefix, input, out)
            }
            _ => self.decompress(algorithm, input, out),
        }
    }
}
