//! LZ4 blocks: the fast mode compressed by `lz4_flex`, the high-compression mode by liblz4
//! (`lz4`, feature `lz4`); both decoded by liblz4 ([`super::lz4c`]) where it is built, else by
//! `lz4_flex`, with or without a prefix (the window before the block).

use crate::codec::{Algorithm, Codec};
use crate::dict::PrefixDictionary;
use crate::error::{Error, Result};

/// LZ4's fast-mode compressor: an output scratch, zero-filled once and reused (`lz4_flex` writes
/// into initialized memory, and copying the compressed bytes out costs less than zero-filling the
/// worst case on every call).
#[derive(Default)]
pub(crate) struct Encoder {
    scratch: Vec<u8>,
}

impl Encoder {
    /// Appends an LZ4 block of `input` (fast mode) to `out`.
    pub(crate) fn compress(&mut self, codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let bound = lz4_flex::block::get_maximum_output_size(input.len());
        if self.scratch.len() < bound {
            self.scratch.resize(bound, 0);
        }
        let n = lz4_flex::block::compress_into(input, &mut self.scratch)
            .map_err(|e| Error::compress(codec, e))?;
        out.extend_from_slice(&self.scratch[..n]);
        Ok(())
    }
}

/// Appends an LZ4 block of the non-empty `input` in high-compression mode at `codec`'s level.
#[cfg(feature = "lz4")]
pub(crate) fn compress_hc(codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    let bound = lz4::block::compress_bound(input.len()).map_err(|e| Error::compress(codec, e))?;
    out.resize(start + bound, 0);
    let mode = lz4::block::CompressionMode::HIGHCOMPRESSION(codec.level());
    let n = lz4::block::compress_to_buffer(input, Some(mode), false, &mut out[start..])
        .map_err(|e| Error::compress(codec, e))?;
    out.truncate(start + n);
    Ok(())
}

/// Decodes an LZ4 block into all of `out` with liblz4, against `dictionary` if not empty. When
/// liblz4 fails (or the sizes exceed its `int`), or a build has no liblz4 (feature `lz4`),
/// `lz4_flex` decodes instead: it names what is wrong with a malformed block, and handles blocks
/// over 2 GiB.
pub(crate) fn decompress(
    algorithm: Algorithm,
    input: &[u8],
    out: &mut [u8],
    dictionary: &[u8],
) -> Result<()> {
    #[cfg(feature = "lz4")]
    if let Ok(n) = super::lz4c::decompress(input, out, dictionary) {
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

/// Decodes blocks compressed against a prefix: a window holding the dictionary's bytes, then room
/// for the block, kept between blocks of the same dictionary.
#[derive(Default)]
pub(crate) struct PrefixDecoder {
    window: Vec<u8>,
    /// [`PrefixDictionary`] id of the bytes at the front of `window` (0: none).
    window_id: u64,
}

impl PrefixDecoder {
    /// Decodes an LZ4 block made against `dictionary` into all of `out`.
    pub(crate) fn decompress(
        &mut self,
        dictionary: &PrefixDictionary,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        let algorithm = Algorithm::Lz4;
        let window = dictionary.lz4_window();
        let prefix = window.len();
        if self.window_id != dictionary.id() {
            self.window.clear();
            self.window.extend_from_slice(window);
            self.window_id = dictionary.id();
        }
        if self.window.len() < prefix + out.len() {
            self.window.resize(prefix + out.len(), 0);
        }
        #[cfg(feature = "lz4")]
        match super::lz4c::decompress_after_prefix(input, &mut self.window, prefix, out.len()) {
            Ok(n) if n == out.len() => {
                out.copy_from_slice(&self.window[prefix..prefix + n]);
                return Ok(());
            }
            Ok(n) => return Err(Error::size_mismatch(algorithm.name(), out.len(), n)),
            // lz4_flex names the problem (or decodes what liblz4's sizes cannot hold).
            Err(_) => {}
        }
        decompress(algorithm, input, out, window)
    }
}
