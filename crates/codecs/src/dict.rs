//! zstd dictionaries: training and prepared (digested once, used for many frames) forms.

use crate::error::{Error, Result};

/// Trains a zstd dictionary of at most `max_size` bytes from samples stored back to back in
/// `samples`, with `sample_sizes[i]` the length of the `i`-th.
///
/// zstd needs a reasonable number of samples (tens at least) with some shared content; with too few
/// or too small samples training fails.
///
/// # Errors
/// [`Error::Dictionary`] if the sizes do not add up to `samples.len()` or zstd cannot train.
pub fn train_dictionary(
    samples: &[u8],
    sample_sizes: &[usize],
    max_size: usize,
) -> Result<Vec<u8>> {
    let total: usize = sample_sizes.iter().sum();
    if total != samples.len() {
        return Err(Error::Dictionary(format!(
            "sample sizes add up to {total} bytes but {} were given",
            samples.len()
        )));
    }
    zstd::dict::from_continuous(samples, sample_sizes, max_size)
        .map_err(|e| Error::Dictionary(e.to_string()))
}

/// A dictionary prepared for compression at one zstd level.
pub struct EncoderDictionary {
    inner: zstd::dict::EncoderDictionary<'static>,
    level: i32,
}

impl EncoderDictionary {
    /// Digests `dictionary` (raw content, or a trained zstd dictionary) for compression at `level`.
    ///
    /// # Errors
    /// [`Error::Dictionary`] if zstd rejects the dictionary.
    pub fn new(dictionary: &[u8], level: i32) -> Result<EncoderDictionary> {
        let inner = zstd::dict::EncoderDictionary::try_copy(dictionary, level)
            .map_err(|e| Error::Dictionary(e.to_string()))?;
        Ok(EncoderDictionary { inner, level })
    }

    /// The zstd level this dictionary compresses at.
    pub fn level(&self) -> i32 {
        self.level
    }

    pub(crate) fn cdict(&self) -> &zstd::zstd_safe::CDict<'static> {
        self.inner.as_cdict()
    }
}

impl std::fmt::Debug for EncoderDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EncoderDictionary")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

/// A dictionary prepared for decompression.
pub struct DecoderDictionary {
    inner: zstd::dict::DecoderDictionary<'static>,
}

impl DecoderDictionary {
    /// Digests `dictionary` for decompression.
    ///
    /// # Errors
    /// [`Error::Dictionary`] if zstd rejects the dictionary (a corrupt trained dictionary).
    pub fn new(dictionary: &[u8]) -> Result<DecoderDictionary> {
        let inner = zstd::dict::DecoderDictionary::try_copy(dictionary)
            .map_err(|e| Error::Dictionary(e.to_string()))?;
        Ok(DecoderDictionary { inner })
    }

    pub(crate) fn ddict(&self) -> &zstd::zstd_safe::DDict<'static> {
        self.inner.as_ddict()
    }
}

impl std::fmt::Debug for DecoderDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecoderDictionary").finish_non_exhaustive()
    }
}
