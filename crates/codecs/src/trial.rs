//! Trial encoding: compress a sample under candidate settings and measure what each one gives.
//!
//! One mechanism serves both the file writer's automatic choices (sizes only, on a basket's
//! sample) and `evtc advise`'s advisor (sizes, encode and decode speeds, on samples of a whole
//! file). Candidates come from this crate's own lists ([`Setting::candidates`],
//! [`Codec::TRIAL_SET`], [`Precondition::candidates`]), so a codec or preconditioner added to the
//! crate joins the trials by itself.
//!
//! ```
//! use evtc_codecs::{Codec, Precondition, Setting, Trial, Width};
//!
//! let sorted: Vec<u8> = (0..20_000u32).map(|i| 1000 + 3 * i).flat_map(u32::to_le_bytes).collect();
//! let mut trial = Trial::new();
//! let plain = trial.size(Setting::new(Codec::LZ4, Precondition::None), &sorted)?;
//! let delta = trial.size(Setting::new(Codec::LZ4, Precondition::Delta(Width::W4)), &sorted)?;
//! assert!(delta * 10 < plain);
//! let measured = trial.measure(Setting::new(Codec::LZ4, Precondition::Delta(Width::W4)), &sorted, 16 << 10)?;
//! assert_eq!(measured.raw_bytes, sorted.len() as u64);
//! assert!(measured.decode_seconds > 0.0);
//! # Ok::<(), evtc_codecs::Error>(())
//! ```

use std::fmt;
use std::time::Instant;

use crate::block::{BlockDecoder, BlockEncoder};
use crate::codec::Codec;
use crate::error::{Error, Result};
use crate::precondition::{Precondition, Width};

/// One way to store a block: a codec and the preconditioner applied before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Setting {
    /// The codec.
    pub codec: Codec,
    /// The preconditioner (ignored, as [`BlockEncoder`] ignores it, under the `none` codec).
    pub precondition: Precondition,
}

impl Setting {
    /// A setting of `codec` after `precondition`.
    pub fn new(codec: Codec, precondition: Precondition) -> Setting {
        Setting {
            codec,
            precondition,
        }
    }

    /// Every setting worth trying on values `width` bytes wide: each codec of `codecs` with each
    /// of [`Precondition::candidates`] (the `none` codec once, without a preconditioner).
    pub fn candidates(codecs: &[Codec], width: Width) -> Vec<Setting> {
        let mut out = Vec::new();
        for &codec in codecs {
            if codec.algorithm() == crate::Algorithm::None {
                out.push(Setting::new(codec, Precondition::None));
                continue;
            }
            for precondition in Precondition::candidates(width) {
                out.push(Setting::new(codec, precondition));
            }
        }
        out
    }
}

impl fmt::Display for Setting {
    /// `zstd:5`, `zstd:5+shuffle:4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.precondition {
            Precondition::None => write!(f, "{}", self.codec),
            p => write!(f, "{}+{p}", self.codec),
        }
    }
}

/// What one setting did to one sample ([`Trial::measure`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Bytes of the sample.
    pub raw_bytes: u64,
    /// Bytes of its blocks, envelopes included.
    pub stored_bytes: u64,
    /// Seconds to precondition and compress the sample, the fastest of several passes (a pass
    /// over a small sample is repeated until the passes add up to a few milliseconds).
    pub encode_seconds: f64,
    /// Seconds to decompress and undo the preconditioner, the fastest of several passes (a
    /// pass over a small sample is repeated until the passes add up to a few milliseconds).
    pub decode_seconds: f64,
    /// Every block fell back to storing its bytes as they are (the codec could not make them
    /// smaller, and no packing preconditioner did): the setting then stores the sample exactly
    /// as the `none` codec does.
    pub all_stored: bool,
}

impl Measured {
    /// Raw over stored bytes.
    pub fn ratio(&self) -> f64 {
        self.raw_bytes as f64 / self.stored_bytes.max(1) as f64
    }
}

/// Encode and decode passes over a sample are repeated until they add up to this many seconds
/// (or [`MAX_PASSES`]); the fastest pass counts.
const MIN_SECONDS: f64 = 0.002;
/// At most this many passes per measurement.
const MAX_PASSES: usize = 50;

/// Runs trials; keeps its encoder, decoder and buffers across calls. One per thread.
#[derive(Debug)]
pub struct Trial {
    encoder: BlockEncoder,
    decoder: BlockDecoder,
    blocks: Vec<u8>,
    decoded: Vec<u8>,
}

impl Default for Trial {
    fn default() -> Trial {
        Trial::new()
    }
}

impl Trial {
    /// A fresh trial context.
    pub fn new() -> Trial {
        Trial {
            encoder: BlockEncoder::new(),
            decoder: BlockDecoder::new(),
            blocks: Vec::new(),
            decoded: Vec::new(),
        }
    }

    /// Bytes of `sample` encoded as one block under `setting` (envelope included).
    ///
    /// # Errors
    /// The codec's errors.
    pub fn size(&mut self, setting: Setting, sample: &[u8]) -> Result<usize> {
        self.size_values(setting, setting.precondition.width(), sample)
    }

    /// [`Trial::size`] of `sample` holding values `value_width` bytes wide (see
    /// [`BlockEncoder::encode_values`]).
    ///
    /// # Errors
    /// The codec's errors.
    pub fn size_values(
        &mut self,
        setting: Setting,
        value_width: Width,
        sample: &[u8],
    ) -> Result<usize> {
        self.blocks.clear();
        self.encoder.encode_values(
            setting.codec,
            setting.precondition,
            value_width,
            sample,
            &mut self.blocks,
        )?;
        Ok(self.blocks.len())
    }

    /// The blocks the last [`Trial::size_values`] wrote: the encoding a writer would store for
    /// that sample under that setting (empty before the first call; unspecified after an error).
    pub fn blocks(&self) -> &[u8] {
        &self.blocks
    }

    /// Encodes `sample` in blocks of `block_bytes` (rounded down to the preconditioner's width,
    /// at least one value) under `setting`, times it, then decodes the blocks back, checks that
    /// they give the sample again and times the decoding.
    ///
    /// # Errors
    /// The codec's errors; [`Error::Corrupt`] if the blocks do not decode to the sample (a codec
    /// bug, never expected).
    pub fn measure(
        &mut self,
        setting: Setting,
        sample: &[u8],
        block_bytes: usize,
    ) -> Result<Measured> {
        let width = setting.precondition.width().bytes();
        let block_bytes = (block_bytes / width * width).max(width);
        let (mut encode_seconds, mut total, mut passes) = (f64::INFINITY, 0.0, 0);
        while passes < 1 || (total < MIN_SECONDS && passes < MAX_PASSES) {
            self.blocks.clear();
            let started = Instant::now();
            for chunk in sample.chunks(block_bytes) {
                self.encoder.encode(
                    setting.codec,
                    setting.precondition,
                    chunk,
                    &mut self.blocks,
                )?;
            }
            let seconds = started.elapsed().as_secs_f64();
            encode_seconds = encode_seconds.min(seconds);
            total += seconds;
            passes += 1;
        }
        self.decoded.resize(sample.len(), 0);
        let (mut best, mut total, mut passes) = (f64::INFINITY, 0.0, 0);
        let mut all_stored = true;
        while passes < 3 || (total < MIN_SECONDS && passes < MAX_PASSES) {
            let started = Instant::now();
            let (mut at, mut written) = (0usize, 0usize);
            while at < self.blocks.len() {
                let (header, _) = self.decoder.check(&self.blocks[at..])?;
                // Packed bytes stored without a codec are not the bytes as they are.
                all_stored &= header.codec.algorithm() == crate::Algorithm::None
                    && header.precondition == Precondition::None;
                let len = header.uncompressed_len as usize;
                let end = written + len;
                let out = self
                    .decoded
                    .get_mut(written..end)
                    .ok_or_else(|| Error::Corrupt {
                        codec: setting.codec.to_string(),
                        reason: "a trial block decodes past its sample".into(),
                    })?;
                self.decoder.decode_into(&self.blocks[at..], out)?;
                at += header.block_len() as usize;
                written = end;
            }
            let seconds = started.elapsed().as_secs_f64();
            best = best.min(seconds);
            total += seconds;
            passes += 1;
        }
        if self.decoded != sample {
            return Err(Error::Corrupt {
                codec: setting.to_string(),
                reason: "the trial sample does not decode back".into(),
            });
        }
        Ok(Measured {
            raw_bytes: sample.len() as u64,
            stored_bytes: self.blocks.len() as u64,
            encode_seconds,
            decode_seconds: best,
            all_stored,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_cover_every_codec_and_preconditioner_once() {
        let codecs = [Codec::NONE, Codec::LZ4, Codec::DEFAULT];
        let settings = Setting::candidates(&codecs, Width::W4);
        assert_eq!(
            settings.len(),
            1 + 2 * Precondition::candidates(Width::W4).len()
        );
        let bytes = Setting::candidates(&codecs, Width::W1);
        assert!(bytes.iter().all(|s| s.precondition.width() == Width::W1));
        assert_eq!(
            Setting::new(Codec::DEFAULT, Precondition::Shuffle(Width::W4)).to_string(),
            "zstd:5+shuffle:4"
        );
    }

    #[test]
    fn measure_round_trips_every_setting_and_counts_envelopes() {
        let sample: Vec<u8> = (0..30_000u32)
            .map(|i| (i / 7) as f32)
            .flat_map(f32::to_le_bytes)
            .collect();
        let mut trial = Trial::new();
        for setting in Setting::candidates(&Codec::TRIAL_SET, Width::W4) {
            let algorithm = setting.codec.algorithm();
            if !algorithm.is_built() {
                // A build without the codec's feature names it.
                let err = trial.measure(setting, &sample, 32 << 10).unwrap_err();
                assert!(
                    matches!(err, Error::NotBuilt { feature, .. } if feature == algorithm.feature()),
                    "{setting}: {err}"
                );
                continue;
            }
            let m = trial.measure(setting, &sample, 32 << 10).unwrap();
            assert_eq!(m.raw_bytes, sample.len() as u64);
            // Four blocks of at most 32 KiB, each with its 24-byte envelope.
            assert!(m.stored_bytes >= 4 * 24, "{setting}: {m:?}");
            if setting.codec != Codec::NONE {
                assert!(m.ratio() > 2.0, "{setting}: {m:?}");
            }
        }
        // One block: what `size` says.
        let setting = Setting::new(Codec::LZ4, Precondition::Shuffle(Width::W4));
        let one = trial.measure(setting, &sample, sample.len()).unwrap();
        assert_eq!(
            one.stored_bytes,
            trial.size(setting, &sample).unwrap() as u64
        );
    }
}
