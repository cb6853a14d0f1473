//! LZMA through liblzma (xz 5.8): xz streams for blocks and units, and raw LZMA2 against a preset
//! dictionary for units that share one.
//!
//! A unit of a few KiB in its own xz stream starts with an empty history: its first occurrences of
//! everything are literals, which LZMA decodes bit by bit. With the branch's dictionary as LZMA2's
//! preset dictionary (the history before the unit's first byte) they become matches, and the
//! unit needs no stream headers, block header or index either.

use liblzma::stream::{Action, Check, Filters, LzmaOptions, Status, Stream};
use liblzma_sys as sys;

use crate::codec::{Algorithm, Codec};
use crate::error::{Error, Result, check_end};

/// liblzma's decoder refuses streams that would need more memory than this (a level-9 stream needs
/// 65 MiB), so a corrupt header cannot make it allocate without bound.
const MEMLIMIT: u64 = 256 << 20;

/// The dictionary each preset allocates (xz's table); blocks cap it at their own size.
const PRESET_DICT: [u32; 10] = [
    256 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
    4 << 20,
    8 << 20,
    8 << 20,
    16 << 20,
    32 << 20,
    64 << 20,
];

/// An xz stream of `input` at `codec`'s preset; with position bits for `align`-byte values when
/// `align` is 2, 4 or 8 (see [`crate::Compressor::compress_aligned`]); ending an LZMA2 chunk at
/// each of `cuts` (ascending offsets inside `input`, see [`crate::Compressor::compress_segmented`]).
pub(crate) fn compress(
    codec: Codec,
    input: &[u8],
    align: usize,
    cuts: &[usize],
    out: &mut Vec<u8>,
) -> Result<()> {
    let level = codec.level().unsigned_abs();
    // The preset's dictionary (8-64 MiB at levels 5-9) is allocated by the encoder and again by
    // every decoder; a block never needs more than its own size, so cap it there (liblzma's
    // minimum is 4 KiB). The stream is an ordinary xz stream either way.
    let mut options = LzmaOptions::new_preset(level).map_err(|e| Error::compress(codec, e))?;
    let preset_dict = PRESET_DICT[(level as usize).min(9)];
    let needed = u32::try_from(input.len().max(4096).next_power_of_two()).unwrap_or(u32::MAX);
    options.dict_size(needed.min(preset_dict));
    if matches!(align, 2 | 4 | 8) {
        let bits = align.trailing_zeros().min(2);
        options
            .literal_context_bits(0)
            .literal_position_bits(bits)
            .position_bits(bits);
    }
    let mut filters = Filters::new();
    filters.lzma2(&options);
    let mut stream =
        Stream::new_stream_encoder(&filters, Check::None).map_err(|e| Error::compress(codec, e))?;
    out.reserve(input.len() + input.len() / 32 + 128 + 8 * cuts.len());
    let consumed = |stream: &Stream| {
        usize::try_from(stream.total_in())
            .unwrap_or(usize::MAX)
            .min(input.len())
    };
    // Each part up to a cut is flushed whole: the encoder ends its chunk there.
    for &cut in cuts {
        if cut <= consumed(&stream) {
            continue;
        }
        // Called again with the same action until the flush is complete (liblzma refuses a
        // change of action mid-flush).
        loop {
            let at = consumed(&stream);
            let status = stream
                .process_vec(&input[at..cut], out, Action::SyncFlush)
                .map_err(|e| Error::compress(codec, e))?;
            if status == Status::StreamEnd {
                break;
            }
            out.reserve(out.capacity().max(4096));
        }
    }
    loop {
        let at = consumed(&stream);
        let status = stream
            .process_vec(&input[at..], out, Action::Finish)
            .map_err(|e| Error::compress(codec, e))?;
        if status == Status::StreamEnd {
            return Ok(());
        }
        out.reserve(out.capacity().max(4096));
    }
}

/// Decodes one xz stream into all of `out`.
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Result<()> {
    let algorithm = Algorithm::Lzma.name();
    let mut stream =
        Stream::new_stream_decoder(MEMLIMIT, 0).map_err(|e| Error::corrupt(algorithm, e))?;
    let status = stream
        .process(input, out, Action::Finish)
        .map_err(|e| Error::corrupt(algorithm, e))?;
    check_end(
        algorithm,
        status == Status::StreamEnd,
        (stream.total_in(), input.len()),
        (stream.total_out(), out.len()),
    )
}

/// The LZMA2 dictionary size for `len` bytes after a preset dictionary of `prefix` bytes: room
/// for both, so that every match can reach the preset's first byte (at least liblzma's minimum of
/// 4 KiB, rounded up to a power of two so that a decoder kept between units of similar sizes
/// keeps its buffer). `None` beyond 2^31.
fn prefix_dict_size(prefix: usize, len: usize) -> Option<u32> {
    let size = prefix
        .checked_add(len)?
        .max(4096)
        .checked_next_power_of_two()?;
    u32::try_from(size).ok().filter(|&s| s <= 1 << 31)
}

/// Raw LZMA2 data (no xz stream, block header or index) of `input` at `codec`'s preset, against
/// `prefix` as LZMA2's preset dictionary, ending a chunk at each of `cuts` as [`compress`] does.
/// [`PrefixDecoder::decode`] with the same prefix reads it.
pub(crate) fn compress_with_prefix(
    codec: Codec,
    input: &[u8],
    cuts: &[usize],
    prefix: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let too_large = || Error::compress(codec, "unit and dictionary over 2 GiB");
    let dict_size = prefix_dict_size(prefix.len(), input.len()).ok_or_else(too_large)?;
    let mut options = lzma2_options(codec.level().unsigned_abs(), dict_size, prefix)
        .ok_or_else(|| Error::compress(codec, "no such preset"))?;
    let mut stream = RawStream::new();
    let filters = lzma2_filters(&mut options);
    // SAFETY: `stream` is an initialized (zeroed or previously used) `lzma_stream`; `filters` is
    // terminated by `LZMA_VLI_UNKNOWN` and points to `options`, whose preset dictionary `prefix`
    // outlives the call (liblzma copies it during initialization).
    let ret = unsafe { sys::lzma_raw_encoder(&mut stream.0, filters.as_ptr()) };
    if ret != sys::LZMA_OK {
        return Err(Error::compress(codec, format!("liblzma error {ret}")));
    }
    out.reserve(input.len() + input.len() / 32 + 128 + 8 * cuts.len());
    let mut at = 0;
    for end in cuts
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < input.len())
        .chain([input.len()])
    {
        if end <= at {
            continue;
        }
        let action = if end == input.len() {
            sys::LZMA_FINISH
        } else {
            sys::LZMA_SYNC_FLUSH
        };
        // Called again with the same action until the flush or finish is complete.
        loop {
            let ret = stream.code_into_vec(&input[at..end], out, action, &mut at);
            match ret {
                sys::LZMA_STREAM_END => break,
                sys::LZMA_OK | sys::LZMA_BUF_ERROR => out.reserve(out.capacity().max(4096)),
                _ => return Err(Error::compress(codec, format!("liblzma error {ret}"))),
            }
        }
    }
    Ok(())
}

/// A raw LZMA2 decoder for units made by [`compress_with_prefix`]: kept between units, so that
/// liblzma reuses its state and dictionary buffer.
#[derive(Default)]
pub(crate) struct PrefixDecoder {
    stream: RawStream,
}

impl PrefixDecoder {
    /// Decodes raw LZMA2 data compressed against `prefix` into all of `out`.
    pub(crate) fn decode(&mut self, prefix: &[u8], input: &[u8], out: &mut [u8]) -> Result<()> {
        let algorithm = Algorithm::Lzma.name();
        let Some(dict_size) = prefix_dict_size(prefix.len(), out.len()) else {
            return Err(Error::TooLarge {
                declared: prefix.len().saturating_add(out.len()) as u64,
                limit: 1 << 31,
            });
        };
        // The decoder takes only the dictionary size and the preset dictionary from the options;
        // the literal and position bits come with the data's first chunk.
        let Some(mut options) = lzma2_options(6, dict_size, prefix) else {
            return Err(Error::corrupt(algorithm, "liblzma has no default preset"));
        };
        let filters = lzma2_filters(&mut options);
        // SAFETY: as in `compress_with_prefix`; initializing a used stream again reuses its
        // allocations when the filter chain is the same.
        let ret = unsafe { sys::lzma_raw_decoder(&mut self.stream.0, filters.as_ptr()) };
        if ret != sys::LZMA_OK {
            return Err(Error::corrupt(algorithm, format!("liblzma error {ret}")));
        }
        let (ret, consumed, produced) = self.stream.code(input, out, sys::LZMA_FINISH);
        match ret {
            sys::LZMA_STREAM_END | sys::LZMA_OK | sys::LZMA_BUF_ERROR => check_end(
                algorithm,
                ret == sys::LZMA_STREAM_END,
                (consumed as u64, input.len()),
                (produced as u64, out.len()),
            ),
            sys::LZMA_DATA_ERROR => Err(Error::corrupt(algorithm, "malformed LZMA2 data")),
            _ => Err(Error::corrupt(algorithm, format!("liblzma error {ret}"))),
        }
    }
}

/// `preset`'s LZMA options with `dict_size` and `prefix` as the preset dictionary; `None` for a
/// preset liblzma does not have.
fn lzma2_options(preset: u32, dict_size: u32, prefix: &[u8]) -> Option<sys::lzma_options_lzma> {
    // SAFETY: `lzma_options_lzma` is a plain C struct for which all zeros (null pointers) is a
    // valid value; `lzma_lzma_preset` fills it and returns nonzero only for an unknown preset.
    let mut options: sys::lzma_options_lzma = unsafe { std::mem::zeroed() };
    // SAFETY: `options` is a valid, writable `lzma_options_lzma`.
    if unsafe { sys::lzma_lzma_preset(&mut options, preset) } != 0 {
        return None;
    }
    options.dict_size = dict_size;
    if !prefix.is_empty() {
        options.preset_dict = prefix.as_ptr();
        // At most 2^31 (`prefix_dict_size` checked the sum).
        options.preset_dict_size = u32::try_from(prefix.len()).ok()?;
    }
    Some(options)
}

/// The filter chain of LZMA2 with `options` alone.
fn lzma2_filters(options: &mut sys::lzma_options_lzma) -> [sys::lzma_filter; 2] {
    [
        sys::lzma_filter {
            id: sys::LZMA_FILTER_LZMA2,
            options: std::ptr::from_mut(options).cast(),
        },
        sys::lzma_filter {
            id: sys::LZMA_VLI_UNKNOWN,
            options: std::ptr::null_mut(),
        },
    ]
}

/// An `lzma_stream` owned here; its coder is freed on drop.
struct RawStream(sys::lzma_stream);

// SAFETY: the stream's coder state is owned by this value alone and has no thread affinity;
// liblzma is only called through `&mut self`.
unsafe impl Send for RawStream {}

impl Default for RawStream {
    fn default() -> RawStream {
        RawStream::new()
    }
}

impl RawStream {
    fn new() -> RawStream {
        // SAFETY: all zeros is `LZMA_STREAM_INIT`, liblzma's initial value of a stream.
        RawStream(unsafe { std::mem::zeroed() })
    }

    /// Runs the coder over `input` into `out`; returns liblzma's code and the bytes consumed and
    /// produced.
    fn code(
        &mut self,
        input: &[u8],
        out: &mut [u8],
        action: sys::lzma_action,
    ) -> (sys::lzma_ret, usize, usize) {
        self.0.next_in = input.as_ptr();
        self.0.avail_in = input.len();
        self.0.next_out = out.as_mut_ptr();
        self.0.avail_out = out.len();
        // SAFETY: the stream was initialized by `lzma_raw_*coder`; `next_in`/`avail_in` and
        // `next_out`/`avail_out` describe `input` and `out`, which outlive the call, and liblzma
        // reads and writes only within them.
        let ret = unsafe { sys::lzma_code(&mut self.0, action) };
        let consumed = input.len() - self.0.avail_in;
        let produced = out.len() - self.0.avail_out;
        self.0.next_in = std::ptr::null();
        self.0.next_out = std::ptr::null_mut();
        (ret, consumed, produced)
    }

    /// [`RawStream::code`] appending to `out` (within its spare capacity) and advancing `at` by
    /// the bytes consumed.
    fn code_into_vec(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        action: sys::lzma_action,
        at: &mut usize,
    ) -> sys::lzma_ret {
        let spare = out.spare_capacity_mut();
        self.0.next_in = input.as_ptr();
        self.0.avail_in = input.len();
        self.0.next_out = spare.as_mut_ptr().cast();
        self.0.avail_out = spare.len();
        // SAFETY: as in `code`; liblzma only writes to the spare capacity, byte by byte from its
        // start, and `produced` of those bytes are initialized after the call.
        let ret = unsafe { sys::lzma_code(&mut self.0, action) };
        let produced = spare.len() - self.0.avail_out;
        *at += input.len() - self.0.avail_in;
        self.0.next_in = std::ptr::null();
        self.0.next_out = std::ptr::null_mut();
        // SAFETY: liblzma initialized the first `produced` bytes of the spare capacity.
        unsafe { out.set_len(out.len() + produced) };
        ret
    }
}

impl Drop for RawStream {
    fn drop(&mut self) {
        // SAFETY: the stream is zeroed or was initialized by liblzma; `lzma_end` frees its coder
        // (nothing for a zeroed one) and is not called twice on the same coder.
        unsafe { sys::lzma_end(&mut self.0) };
    }
}
