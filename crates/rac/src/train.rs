//! Branch dictionaries and the trial that decides whether a branch's units take one.

use evtc_codecs::{Algorithm, EncoderDictionary, Kernel, UnitDictionary};

use crate::{EncodeDictionary, RacEncoder, RacOptions, Result};

/// Trains a branch dictionary from sample entries (`data` with entry `ends`, as for
/// [`RacEncoder::encode`]): the samples are the units [`RacEncoder::encode`] would make of them,
/// preconditioned, so the dictionary matches what is compressed. For zstd, a trained dictionary of at
/// most `max_size` bytes; for lz4 and lzma, the first `max_size` bytes of the samples as a prefix
/// (for lz4 at most 64 KiB, LZ4's window). `None` when the codec takes no dictionary or zstd
/// cannot train on these samples (too few or too small).
pub fn train_dictionary(
    options: &RacOptions,
    data: &[u8],
    ends: &[usize],
    max_size: usize,
) -> Option<Vec<u8>> {
    if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().copied().unwrap_or(0) != data.len() {
        return None;
    }
    let mut samples = Vec::with_capacity(data.len());
    let mut sizes = Vec::new();
    let (mut first, mut start) = (0usize, 0usize);
    let mut scratch = Vec::new();
    while first < ends.len() {
        let mut last = first;
        while last + 1 < ends.len() && ends[last] - start < options.min_unit_bytes {
            last += 1;
        }
        let raw = &data[start..ends[last]];
        scratch.clear();
        Kernel::best().encode(options.precondition, raw, &mut scratch);
        samples.extend_from_slice(&scratch);
        sizes.push(scratch.len());
        first = last + 1;
        start = ends[last];
    }
    match options.codec.algorithm().properties().unit_dictionary {
        UnitDictionary::Trained => evtc_codecs::train_dictionary(&samples, &sizes, max_size).ok(),
        // An empty prefix is no dictionary: units compressed against it would not say they use one.
        _ if samples.is_empty() || max_size == 0 => None,
        UnitDictionary::Prefix { window } => {
            let len = samples
                .len()
                .min(max_size)
                .min(window.unwrap_or(usize::MAX));
            Some(samples[..len].to_vec())
        }
        UnitDictionary::None => None,
    }
}

/// What [`trial_units`] found best for a sample of a branch's entries.
#[derive(Debug, Clone)]
pub struct UnitsTrial {
    /// The sample's RAC payload (seek table and units), with [`UnitsTrial::dictionary`] if kept.
    pub payload: Vec<u8>,
    /// Bytes of the payload, plus the dictionary's when it is charged to the sample.
    pub size: usize,
    /// The trained dictionary (zstd's, or the prefix of lz4 or lzma), kept as [`trial_units`]
    /// says.
    pub dictionary: Option<Vec<u8>>,
}

/// The least a dictionary must shrink the RAC payload of entries it was not trained on for the
/// writer to keep it: 3%. A dictionary slows every unit's decode, so it has to buy a real share
/// of the file. Not for lzma, where a dictionary speeds each unit's decode up instead
/// ([`trial_units`]).
pub const DICTIONARY_MIN_GAIN: f64 = 0.03;

/// The most bytes of an lzma prefix dictionary ([`trial_units`]): LZMA2 copies the prefix into its
/// history before each unit, so a longer one costs every unit's decode.
pub const LZMA_DICTIONARY_BYTES: usize = 32 << 10;

/// Encodes a sample of a branch's entries (`data` with entry `ends`, as for
/// [`RacEncoder::encode`]) as one RAC payload; with `train`, also tries a dictionary: trained on
/// the first half of the sample's bytes (at most 1/16 of them, 256 B to 16 KiB; for lzma 1/4 of
/// them, 256 B to [`LZMA_DICTIONARY_BYTES`]), it is kept if it makes the payload of the other
/// half at least [`DICTIONARY_MIN_GAIN`] smaller (for lzma: smaller at all, below), judged on
/// entries it was not trained on, as the branch's later baskets will be; with
/// `charge_dictionary` (a branch with no other basket to spread it over), if the whole sample's
/// payload plus the dictionary is smaller by as much too.
///
/// Under lzma, whose units start with an empty history and so decode most of their first bytes as
/// literals, bit by bit, a prefix turns them into matches, which decode faster and store smaller.
/// There the dictionary is kept if it makes the payloads smaller at all (not only by
/// [`DICTIONARY_MIN_GAIN`]); one that changes no size is one no unit uses (units LZMA cannot
/// shrink are stored as they are). Each unit's decode copies the prefix first, which a random
/// read of one entry pays: hence at most [`LZMA_DICTIONARY_BYTES`].
///
/// The file writer decides a RAC branch's dictionary this way, and `evtc advise` predicts what the
/// writer will do.
///
/// # Errors
/// As for [`RacEncoder::encode`].
pub fn trial_units(
    options: &RacOptions,
    train: bool,
    charge_dictionary: bool,
    data: &[u8],
    ends: &[usize],
) -> Result<UnitsTrial> {
    let mut encoder = RacEncoder::new();
    let mut payload = Vec::new();
    encoder.encode(options, None, data, ends, &mut payload)?;
    let without = UnitsTrial {
        size: payload.len(),
        payload,
        dictionary: None,
    };
    // The first half of the sample's entries (by bytes) trains, the rest judges (`encode` checked
    // that `ends` increase up to the data's length).
    let cut = ends.partition_point(|&e| e <= data.len() / 2).max(1);
    if !train || cut >= ends.len() {
        return Ok(without);
    }
    let (trained, held_out) = data.split_at(ends[cut - 1]);
    let held_out_ends: Vec<usize> = ends[cut..].iter().map(|&e| e - trained.len()).collect();
    let algorithm = options.codec.algorithm();
    let max_size = match algorithm {
        Algorithm::Lzma => (trained.len() / 4).clamp(256, LZMA_DICTIONARY_BYTES),
        _ => (trained.len() / 16).clamp(256, 16 << 10),
    };
    let Some(bytes) = train_dictionary(options, trained, &ends[..cut], max_size) else {
        return Ok(without);
    };
    let zstd = match options.codec.algorithm() {
        Algorithm::Zstd => match EncoderDictionary::new(&bytes, options.codec.level()) {
            Ok(d) => Some(d),
            Err(_) => return Ok(without),
        },
        _ => None,
    };
    let dictionary = match &zstd {
        Some(z) => EncodeDictionary::Zstd(z),
        None => EncodeDictionary::Prefix(&bytes),
    };
    // An LZMA prefix is kept when it makes the units smaller at all, for its faster decode; one
    // that changes no unit's size is one no unit uses (units of packed bytes that LZMA cannot
    // shrink are stored as they are: `bitplanes` units of random mantissa bits).
    let keep = |with: usize, without: usize| match algorithm {
        Algorithm::Lzma => with < without,
        _ => (with as f64) < (1.0 - DICTIONARY_MIN_GAIN) * without as f64,
    };
    let mut judged = [Vec::new(), Vec::new()];
    encoder.encode(options, None, held_out, &held_out_ends, &mut judged[0])?;
    encoder.encode(
        options,
        Some(&dictionary),
        held_out,
        &held_out_ends,
        &mut judged[1],
    )?;
    if !keep(judged[1].len(), judged[0].len()) {
        return Ok(without);
    }
    let mut payload = Vec::new();
    encoder.encode(options, Some(&dictionary), data, ends, &mut payload)?;
    let size = payload.len() + if charge_dictionary { bytes.len() } else { 0 };
    Ok(if !charge_dictionary || keep(size, without.size) {
        UnitsTrial {
            payload,
            size,
            dictionary: Some(bytes),
        }
    } else {
        without
    })
}
