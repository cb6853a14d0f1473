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
    #[cfg(not(feature = "zstd"))]
    {
        let _ = (samples, sample_sizes, max_size);
        Err(Error::not_built(crate::Algorithm::Zstd))
    }
    #[cfg(feature = "zstd")]
    train_fast_cover(samples, sample_sizes, max_size)
}

/// [`train_dictionary`] with zstd's fastCOVER trainer.
#[cfg(feature = "zstd")]
fn train_fast_cover(samples: &[u8], sample_sizes: &[usize], max_size: usize) -> Result<Vec<u8>> {
    let total: usize = sample_sizes.iter().sum();
    if total != samples.len() {
        return Err(Error::Dictionary(format!(
            "sample sizes add up to {total} bytes but {} were given",
            samples.len()
        )));
    }
    if sample_sizes.is_empty() || max_size < MIN_DICTIONARY {
        return Err(Error::Dictionary(format!(
            "{} samples for a dictionary of at most {max_size} bytes (at least one sample and \
             {MIN_DICTIONARY} bytes are needed)",
            sample_sizes.len()
        )));
    }
    let nb_samples = u32::try_from(sample_sizes.len())
        .map_err(|_| Error::Dictionary("more than 2^32 - 1 samples".into()))?;
    // One fastCOVER training with fixed parameters: segments of k bytes made of d-byte k-mers,
    // a frequency table of 2^f entries sized to the samples (zstd's own default tries five k on
    // a 2^20 table: several times the time, for dictionaries no better on evtc's RAC units).
    let params = zstd_sys::ZDICT_fastCover_params_t {
        k: max_size.min(1024) as u32,
        d: 8,
        f: samples.len().max(2).ilog2().clamp(10, 20),
        steps: 0,
        nbThreads: 0,
        splitPoint: 1.0,
        accel: 1,
        shrinkDict: 0,
        shrinkDictMaxRegression: 0,
        zParams: zstd_sys::ZDICT_params_t {
            compressionLevel: 3,
            notificationLevel: 0,
            dictID: 0,
        },
    };
    let mut dictionary = vec![0u8; max_size];
    // SAFETY: `dictionary` is writable for `max_size` bytes; `samples` is readable for the sum of
    // `sample_sizes`, checked above to be its length; `sample_sizes` holds `nb_samples` entries.
    let written = unsafe {
        zstd_sys::ZDICT_trainFromBuffer_fastCover(
            dictionary.as_mut_ptr().cast(),
            dictionary.len(),
            samples.as_ptr().cast(),
            sample_sizes.as_ptr(),
            nb_samples,
            params,
        )
    };
    // SAFETY: ZDICT_isError only inspects the value.
    if unsafe { zstd_sys::ZDICT_isError(written) } != 0 {
        // SAFETY: ZDICT_getErrorName returns a static NUL-terminated string for any code.
        let name = unsafe { std::ffi::CStr::from_ptr(zstd_sys::ZDICT_getErrorName(written)) };
        return Err(Error::Dictionary(format!(
            "zstd: {}",
            name.to_string_lossy()
        )));
    }
    dictionary.truncate(written);
    Ok(dictionary)
}

/// The smallest dictionary zstd trains (`ZDICT_DICTSIZE_MIN`).
#[cfg(feature = "zstd")]
const MIN_DICTIONARY: usize = 256;

/// A dictionary prepared for compression at one zstd level.
pub struct EncoderDictionary {
    #[cfg(feature = "zstd")]
    inner: zstd::dict::EncoderDictionary<'static>,
    level: i32,
}

impl EncoderDictionary {
    /// Digests `dictionary` (raw content, or a trained zstd dictionary) for compression at `level`.
    ///
    /// # Errors
    /// [`Error::Dictionary`] if zstd rejects the dictionary; [`Error::NotBuilt`] without zstd.
    pub fn new(dictionary: &[u8], level: i32) -> Result<EncoderDictionary> {
        #[cfg(not(feature = "zstd"))]
        {
            let _ = (dictionary, level);
            Err(Error::not_built(crate::Algorithm::Zstd))
        }
        #[cfg(feature = "zstd")]
        {
            let inner = zstd::dict::EncoderDictionary::try_copy(dictionary, level)
                .map_err(|e| Error::Dictionary(format!("zstd: {e}")))?;
            Ok(EncoderDictionary { inner, level })
        }
    }

    /// The zstd level this dictionary compresses at.
    pub fn level(&self) -> i32 {
        self.level
    }

    #[cfg(feature = "zstd")]
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
    #[cfg(feature = "zstd")]
    inner: zstd::dict::DecoderDictionary<'static>,
}

impl DecoderDictionary {
    /// Digests `dictionary` for decompression.
    ///
    /// # Errors
    /// [`Error::Dictionary`] if zstd rejects the dictionary (a corrupt trained dictionary);
    /// [`Error::NotBuilt`] without zstd.
    pub fn new(dictionary: &[u8]) -> Result<DecoderDictionary> {
        #[cfg(not(feature = "zstd"))]
        {
            let _ = dictionary;
            Err(Error::not_built(crate::Algorithm::Zstd))
        }
        #[cfg(feature = "zstd")]
        {
            let inner = zstd::dict::DecoderDictionary::try_copy(dictionary)
                .map_err(|e| Error::Dictionary(format!("zstd: {e}")))?;
            Ok(DecoderDictionary { inner })
        }
    }

    #[cfg(feature = "zstd")]
    pub(crate) fn ddict(&self) -> &zstd::zstd_safe::DDict<'static> {
        self.inner.as_ddict()
    }
}

/// A prefix dictionary prepared for decoding: bytes that stand before every unit compressed
/// against it as the unit's history, LZ4's external dictionary (its last 64 KiB, LZ4's window) or
/// LZMA2's preset dictionary (all of it).
///
/// For LZ4 a [`Decompressor`](crate::Decompressor) keeps a copy right before its output buffer,
/// which lets liblz4 decode in its fast prefix mode instead of its slower external-dictionary
/// mode.
pub struct PrefixDictionary {
    bytes: Vec<u8>,
    /// Unique per dictionary made in this process: what a decompressor's copy is checked against.
    id: u64,
}

impl PrefixDictionary {
    /// The dictionary of `bytes`.
    pub fn new(bytes: &[u8]) -> PrefixDictionary {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        PrefixDictionary {
            bytes: bytes.to_vec(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The dictionary's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes LZ4 can reach: the last 64 KiB.
    pub(crate) fn lz4_window(&self) -> &[u8] {
        &self.bytes[self.bytes.len().saturating_sub(64 << 10)..]
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }
}

impl std::fmt::Debug for PrefixDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrefixDictionary")
            .field("len", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for DecoderDictionary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecoderDictionary").finish_non_exhaustive()
    }
}
