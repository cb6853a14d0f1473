//! Zstandard through libzstd (`zstd`): frames for blocks, blocks ended at plane cuts, frames
//! against a trained dictionary.

use std::io::Cursor;

use zstd::zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd::zstd_safe::{self, CCtx, CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

use crate::codec::{Algorithm, Codec};
use crate::dict::{DecoderDictionary, EncoderDictionary};
use crate::error::{Error, Result};

/// A zstd compression context and the level it is set to.
pub(crate) struct Encoder {
    cctx: CCtx<'static>,
    level: i32,
}

impl Default for Encoder {
    fn default() -> Encoder {
        Encoder {
            cctx: CCtx::create(),
            level: i32::MIN,
        }
    }
}

impl Encoder {
    /// The context, set to `codec`'s level (set only when it changes).
    fn at(&mut self, codec: Codec) -> Result<&mut CCtx<'static>> {
        if self.level != codec.level() {
            self.cctx
                .set_parameter(CParameter::CompressionLevel(codec.level()))
                .map_err(|code| Error::compress(codec, zstd_safe::get_error_name(code)))?;
            self.level = codec.level();
        }
        Ok(&mut self.cctx)
    }

    /// Appends a frame of `input` at `codec`'s level to `out`.
    pub(crate) fn compress(&mut self, codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let cctx = self.at(codec)?;
        into(out, input.len(), |dst| cctx.compress2(dst, input))
            .map(|_| ())
            .map_err(|code| Error::compress(codec, zstd_safe::get_error_name(code)))
    }

    /// Appends a frame of `input` whose internal blocks end at each of `cuts` (ascending, inside
    /// `input`; see [`crate::Compressor::compress_segmented`]).
    pub(crate) fn compress_segmented<'c>(
        &mut self,
        codec: Codec,
        input: &[u8],
        cuts: impl Iterator<Item = &'c usize> + Clone,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let start = out.len();
        let error = |code| Error::compress(codec, zstd_safe::get_error_name(code));
        let cctx = self.at(codec)?;
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
        Ok(())
    }

    /// Appends a frame of `input` that needs `dictionary` to decode, at the dictionary's level.
    pub(crate) fn compress_with_dictionary(
        &mut self,
        dictionary: &EncoderDictionary,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let cctx = &mut self.cctx;
        into(out, input.len(), |dst| {
            cctx.compress_using_cdict(dst, input, dictionary.cdict())
        })
        .map(|_| ())
        .map_err(|code| Error::Compress {
            codec: "zstd+dictionary".into(),
            reason: zstd_safe::get_error_name(code).into(),
        })
    }
}

/// Runs a zstd call that writes at the end of `out`, after reserving its worst-case size.
fn into(
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

/// A zstd decompression context.
pub(crate) struct Decoder {
    dctx: DCtx<'static>,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder {
            dctx: DCtx::create(),
        }
    }
}

impl Decoder {
    /// Decodes a frame into all of `out`.
    pub(crate) fn decompress(&mut self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let dctx = &mut self.dctx;
        decode(input, out, |out| dctx.decompress(out, input))
    }

    /// Decodes a frame onto the end of the empty `out`, into its spare room (not zeroed first),
    /// which must come to exactly `size` bytes; `out` stays empty on error.
    pub(crate) fn decompress_append(
        &mut self,
        input: &[u8],
        size: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let name = Algorithm::Zstd.name();
        if let Ok(Some(declared)) = zstd_safe::get_frame_content_size(input)
            && declared != size as u64
        {
            let actual = usize::try_from(declared).unwrap_or(usize::MAX);
            return Err(Error::size_mismatch(name, size, actual));
        }
        out.reserve_exact(size);
        match self.dctx.decompress(out, input) {
            Ok(n) if n == size => Ok(()),
            Ok(n) => {
                out.clear();
                Err(Error::size_mismatch(name, size, n))
            }
            Err(code) => {
                out.clear();
                Err(Error::corrupt(name, zstd_safe::get_error_name(code)))
            }
        }
    }

    /// Decodes a frame made against `dictionary` into all of `out`.
    pub(crate) fn decompress_with_dictionary(
        &mut self,
        dictionary: &DecoderDictionary,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        let dctx = &mut self.dctx;
        decode(input, out, |out| {
            dctx.decompress_using_ddict(out, input, dictionary.ddict())
        })
    }
}

/// Checks the frame's declared size, then decodes with `call` and checks the decoded size.
fn decode(
    input: &[u8],
    out: &mut [u8],
    call: impl FnOnce(&mut [u8]) -> zstd_safe::SafeResult,
) -> Result<()> {
    let name = Algorithm::Zstd.name();
    if let Ok(Some(declared)) = zstd_safe::get_frame_content_size(input)
        && declared != out.len() as u64
    {
        let actual = usize::try_from(declared).unwrap_or(usize::MAX);
        return Err(Error::size_mismatch(name, out.len(), actual));
    }
    match call(out) {
        Ok(n) if n == out.len() => Ok(()),
        Ok(n) => Err(Error::size_mismatch(name, out.len(), n)),
        Err(code) => Err(Error::corrupt(name, zstd_safe::get_error_name(code))),
    }
}
