//! The error type of `evtc-codecs`.

/// A `Result` whose error defaults to this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while parsing codec specs, compressing, decompressing or checking blocks.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A codec spec names no known algorithm.
    #[error(
        "unknown codec {0:?}: expected none, lz4, lz4hc:1-12, zlib:1-9, lzma:1-9, zstd:-7..22 or a ROOT setting like 505"
    )]
    UnknownCodec(String),
    /// A codec spec's level is not a number.
    #[error("codec {spec:?}: the level after ':' is not an integer")]
    BadLevel {
        /// The spec as given.
        spec: String,
    },
    /// The level is outside the algorithm's range.
    #[error(
        "{algorithm} does not accept level {level} (zlib and lzma: 1-9, lz4hc: 1-12, zstd: -7..-1 and 1-22, none and lz4: no level)"
    )]
    LevelOutOfRange {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The level that was asked for.
        level: i32,
    },
    /// A ROOT numeric compression setting that evtc cannot map.
    #[error("ROOT compression setting {setting}: {reason}")]
    InvalidRootSetting {
        /// The setting as given.
        setting: i32,
        /// Why it was refused.
        reason: &'static str,
    },
    /// An envelope names an algorithm id that does not exist.
    #[error("unknown compression algorithm id {0} (known: 0-5)")]
    UnknownAlgorithmId(u8),
    /// An envelope names a preconditioner id that does not exist.
    #[error("unknown preconditioner id {0} (known: 0-11)")]
    UnknownPreconditionId(u8),
    /// A preconditioner spec that is not `none` or one of `shuffle`, `bitshuffle`, `delta`,
    /// `delta-shuffle`, `for`, `delta-for`, `delta-varint`, `zigzag-shuffle`, `sparse`, `runs`,
    /// `bitplanes` with `:W`.
    #[error(
        "unknown preconditioner {0:?}: expected none, shuffle:W, bitshuffle:W, delta:W, delta-shuffle:W, for:W, delta-for:W, delta-varint:W, zigzag-shuffle:W, sparse:W, runs:W or bitplanes:W with W in 1, 2, 4, 8"
    )]
    UnknownPrecondition(String),
    /// A quantization whose range or bit count is not usable.
    #[error("bad quantization {0}")]
    BadQuantization(String),
    /// An element width other than 1, 2, 4 or 8.
    #[error("element width {0} is not 1, 2, 4 or 8")]
    BadElementWidth(u8),
    /// The backend refused to compress.
    #[error("{codec} compression failed: {reason}")]
    Compress {
        /// The codec, as spelled by users.
        codec: String,
        /// The backend's message.
        reason: String,
    },
    /// The compressed bytes are not valid for the codec.
    #[error("corrupt {codec} data: {reason}")]
    Corrupt {
        /// The codec, as spelled by users.
        codec: String,
        /// What was wrong.
        reason: String,
    },
    /// The data decompressed to a different size than declared (including a decompression bomb that
    /// would have produced more than declared).
    #[error("{codec} data decompressed to {actual} bytes, {expected} were declared")]
    SizeMismatch {
        /// The codec, as spelled by users.
        codec: String,
        /// The declared uncompressed size.
        expected: usize,
        /// What the data produced (for oversized output: at least this much).
        actual: usize,
    },
    /// The caller's output buffer does not have the declared uncompressed size.
    #[error("output buffer holds {actual} bytes but the block declares {expected}")]
    OutputSize {
        /// The declared uncompressed size.
        expected: usize,
        /// The buffer's length.
        actual: usize,
    },
    /// A block is shorter than its header or its declared payload.
    #[error("truncated block: need {needed} bytes, have {available}")]
    Truncated {
        /// Bytes the header says the block needs.
        needed: u64,
        /// Bytes available.
        available: usize,
    },
    /// A declared size is larger than the caller allows.
    #[error("block declares {declared} uncompressed bytes, more than the limit of {limit}")]
    TooLarge {
        /// The declared size.
        declared: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// A CRC32 did not match.
    #[error("checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        /// The CRC32 stored with the data.
        stored: u32,
        /// The CRC32 of the data as read.
        computed: u32,
    },
    /// A dictionary could not be trained or loaded, or does not fit the codec.
    #[error("dictionary: {0}")]
    Dictionary(String),
    /// The codec's backend was left out of this build (a cargo feature of `evtc-codecs`).
    #[error("this build of evtc has no {codec} codec: build it with the cargo feature `{feature}`")]
    NotBuilt {
        /// The codec, as spelled by users.
        codec: &'static str,
        /// The cargo feature that brings it.
        feature: &'static str,
    },
}

impl Error {
    /// [`Error::NotBuilt`] for `algorithm`, whose backend this build left out.
    pub(crate) fn not_built(algorithm: crate::Algorithm) -> Error {
        Error::NotBuilt {
            codec: algorithm.name(),
            feature: algorithm.feature(),
        }
    }

    /// [`Error::Compress`] of `codec` (as users spell it) for the backend's `reason`.
    pub(crate) fn compress(codec: impl std::fmt::Display, reason: impl std::fmt::Display) -> Error {
        Error::Compress {
            codec: codec.to_string(),
            reason: reason.to_string(),
        }
    }

    /// [`Error::Corrupt`] of the algorithm called `codec`.
    pub(crate) fn corrupt(codec: &str, reason: impl std::fmt::Display) -> Error {
        Error::Corrupt {
            codec: codec.to_owned(),
            reason: reason.to_string(),
        }
    }

    /// [`Error::SizeMismatch`] of the algorithm called `codec`.
    pub(crate) fn size_mismatch(codec: &str, expected: usize, actual: usize) -> Error {
        Error::SizeMismatch {
            codec: codec.to_owned(),
            expected,
            actual,
        }
    }
}

/// Checks a streaming decoder's result: `ended` (it reached the end of its stream) having read
/// all of the input (`consumed` of `len`) and filled all of the output (`produced` of `len`).
/// A stream that stops short of its end with the output full and input left had more to give:
/// a size mismatch; with all the input read, it is truncated. `codec` names the algorithm.
#[cfg(any(feature = "zlib", feature = "lzma"))]
pub(crate) fn check_end(
    codec: &str,
    ended: bool,
    (consumed, input_len): (u64, usize),
    (produced, out_len): (u64, usize),
) -> Result<()> {
    let consumed = usize::try_from(consumed).unwrap_or(usize::MAX);
    let produced = usize::try_from(produced).unwrap_or(usize::MAX);
    match (ended, produced == out_len) {
        (true, true) if consumed == input_len => Ok(()),
        (true, true) => Err(Error::corrupt(
            codec,
            format!(
                "{} bytes after the end of the stream",
                input_len.saturating_sub(consumed)
            ),
        )),
        (true, false) => Err(Error::size_mismatch(codec, out_len, produced)),
        (false, true) if consumed < input_len => Err(Error::size_mismatch(
            codec,
            out_len,
            produced.saturating_add(1),
        )),
        (false, _) => Err(Error::corrupt(codec, "truncated stream")),
    }
}
