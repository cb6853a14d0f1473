//! zlib (RFC 1950) through `flate2` with the zlib-rs backend; level 1 through `miniz_oxide`.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use crate::codec::{Algorithm, Codec};
use crate::error::{Error, Result, check_end};

/// A zlib compression stream and the level it was made for.
#[derive(Default)]
pub(crate) struct Encoder {
    stream: Option<(u32, Compress)>,
}

impl Encoder {
    /// Appends a zlib stream of `input` at `codec`'s level to `out`.
    pub(crate) fn compress(&mut self, codec: Codec, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let level = codec.level().unsigned_abs();
        if level == 1 {
            // zlib-rs's level 1 is deflate_quick, which barely searches for matches and stores
            // floats much larger than zlib's own level 1 (ROOT's `101`); miniz_oxide's level 1 is
            // a greedy match search. Any zlib reader decodes either stream.
            out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec_zlib(input, 1));
            return Ok(());
        }
        let stream = match &mut self.stream {
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

/// A zlib decompression stream.
#[derive(Default)]
pub(crate) struct Decoder {
    stream: Option<Decompress>,
}

impl Decoder {
    /// Decodes a zlib stream into all of `out`.
    pub(crate) fn decompress(&mut self, input: &[u8], out: &mut [u8]) -> Result<()> {
        let name = Algorithm::Zlib.name();
        let stream = self.stream.get_or_insert_with(|| Decompress::new(true));
        stream.reset(true);
        let status = stream
            .decompress(input, out, FlushDecompress::Finish)
            .map_err(|e| Error::corrupt(name, e))?;
        check_end(
            name,
            status == Status::StreamEnd,
            (stream.total_in(), input.len()),
            (stream.total_out(), out.len()),
        )
    }
}
