//! The trials of one branch sample: whole-basket settings ([`evtc_codecs::Trial`]), RAC settings
//! ([`evtc_rac::trial_units`]), entry boundaries and reduced float precision.

use std::time::Instant;

use evtc_codecs::{
    Algorithm, Codec, DecoderDictionary, Precondition, PrefixDictionary, Setting, Trial,
    UnitDictionary,
};
use evtc_format::{COUNT_PRECONDITION, ScalarType};
use evtc_rac::{DecodeDictionary, RacDecoder, RacOptions, SeekTable};

use super::sample::{BranchSample, Reduced};
use crate::{Error, Result};
use evtc_codecs::le;

/// What one setting measured on one branch's sample (sizes and times of the sample itself).
#[derive(Debug, Clone, Copy)]
pub(super) struct Trialled {
    pub(super) setting: Setting,
    pub(super) rac: bool,
    /// Mantissa bits kept, for a reduced-precision trial.
    pub(super) mantissa_bits: Option<u32>,
    pub(super) stored_bytes: u64,
    pub(super) encode_seconds: f64,
    pub(super) decode_seconds: f64,
    /// Seconds to decode one RAC unit (one entry's read), averaged over units.
    pub(super) unit_seconds: Option<f64>,
    /// The codec stored every block as it is (whole-basket trials).
    pub(super) all_stored: bool,
}

/// Bytes of the sample a RAC trial encodes (the writer trains its dictionary on as much).
const RAC_SAMPLE_BYTES: usize = 4 << 20;
/// Units a RAC trial decodes one by one to time a single entry's read.
const RANDOM_UNITS: usize = 256;

fn codec_error(name: &str, e: impl std::fmt::Display) -> Error {
    Error::Options(format!("trial of branch {name}: {e}"))
}

/// Encodes the sample's values under `setting` in blocks of `basket_bytes`; for a
/// variable-length branch without a counter, adds its counts stream under the same codec.
pub(super) fn whole_baskets(
    trial: &mut Trial,
    sample: &BranchSample,
    setting: Setting,
    basket_bytes: usize,
    values: &[u8],
    mantissa_bits: Option<u32>,
) -> Result<Trialled> {
    let m = trial
        .measure(setting, values, basket_bytes)
        .map_err(|e| codec_error(&sample.name, e))?;
    let mut out = Trialled {
        setting,
        rac: false,
        mantissa_bits,
        stored_bytes: m.stored_bytes,
        encode_seconds: m.encode_seconds,
        decode_seconds: m.decode_seconds,
        unit_seconds: None,
        all_stored: m.all_stored,
    };
    if sample.dtype.is_variable() && !sample.has_counter && !sample.counts.is_empty() {
        let counts: &[u8] = bytemuck::cast_slice(&sample.counts);
        let c = trial
            .measure(
                Setting::new(setting.codec, COUNT_PRECONDITION),
                counts,
                basket_bytes,
            )
            .map_err(|e| codec_error(&sample.name, e))?;
        out.stored_bytes += c.stored_bytes;
        out.encode_seconds += c.encode_seconds;
        out.decode_seconds += c.decode_seconds;
    }
    Ok(out)
}

/// Encodes up to [`RAC_SAMPLE_BYTES`] of the sample's entries as the writer's RAC baskets would
/// be (units of `unit_bytes`, a trained dictionary where it pays), then times decoding them all
/// and decoding single units. Sizes and times are scaled to the whole sample.
pub(super) fn rac(
    sample: &BranchSample,
    setting: Setting,
    unit_bytes: usize,
) -> Result<Option<Trialled>> {
    let ends = sample.entry_ends();
    let cut = ends
        .partition_point(|&e| e <= RAC_SAMPLE_BYTES)
        .max(1)
        .min(ends.len());
    let Some(&len) = ends.get(cut - 1).filter(|&&l| l > 0) else {
        return Ok(None);
    };
    if ends.last().is_some_and(|&end| end > sample.values.len()) {
        return Err(codec_error(
            &sample.name,
            "its entries' lengths add up to more values than were read",
        ));
    }
    let data = &sample.values[..len];
    let options = RacOptions {
        codec: setting.codec,
        precondition: setting.precondition,
        min_unit_bytes: unit_bytes,
        entry_sizes: sample.dtype.is_variable(),
    };
    let train = setting.codec.algorithm().properties().unit_dictionary != UnitDictionary::None;
    let started = Instant::now();
    let trial = evtc_rac::trial_units(&options, train, false, data, &ends[..cut])
        .map_err(|e| codec_error(&sample.name, e))?;
    let encode_seconds = started.elapsed().as_secs_f64();
    let (table, units) =
        SeekTable::parse(&trial.payload).map_err(|e| codec_error(&sample.name, e))?;
    let zstd;
    let prefix;
    let dictionary = match (&trial.dictionary, setting.codec.algorithm()) {
        (Some(bytes), Algorithm::Zstd) => {
            zstd = DecoderDictionary::new(bytes).map_err(|e| codec_error(&sample.name, e))?;
            Some(DecodeDictionary::Zstd(&zstd))
        }
        (Some(bytes), _) => {
            prefix = PrefixDictionary::new(bytes);
            Some(DecodeDictionary::Prefix(&prefix))
        }
        (None, _) => None,
    };
    let mut decoder = RacDecoder::new();
    let mut out = vec![0u8; len];
    let mut decode_seconds = f64::INFINITY;
    for _ in 0..3 {
        let started = Instant::now();
        decoder
            .decode_all(&table, units, dictionary.as_ref(), &mut out, false)
            .map_err(|e| codec_error(&sample.name, e))?;
        decode_seconds = decode_seconds.min(started.elapsed().as_secs_f64());
    }
    if out != data {
        return Err(codec_error(
            &sample.name,
            format!("RAC {setting} does not decode its trial sample back"),
        ));
    }
    // Units in a fixed pseudo-random order (a multiplicative walk), each decoded alone.
    let n = table.units().len();
    let started = Instant::now();
    let mut reads = 0;
    for i in 0..RANDOM_UNITS.min(4 * n) {
        let unit = (i.wrapping_mul(2_654_435_761)) % n;
        let u = table.units()[unit];
        let raw = u.raw_offset as usize..(u.raw_offset + u.raw_len) as usize;
        decoder
            .decode_unit(
                &table,
                unit,
                units,
                dictionary.as_ref(),
                &mut out[raw],
                false,
            )
            .map_err(|e| codec_error(&sample.name, e))?;
        reads += 1;
    }
    let unit_seconds = started.elapsed().as_secs_f64() / reads.max(1) as f64;
    let scale = sample.values.len() as f64 / len as f64;
    let stored = trial.payload.len() + trial.dictionary.as_ref().map_or(0, Vec::len);
    Ok(Some(Trialled {
        setting,
        rac: true,
        mantissa_bits: None,
        stored_bytes: (stored as f64 * scale) as u64,
        encode_seconds: encode_seconds * scale,
        decode_seconds: decode_seconds * scale,
        unit_seconds: Some(unit_seconds),
        all_stored: false,
    }))
}

/// Bytes of a variable-length branch's boundaries stored as per-entry counts and as offsets
/// (`entries + 1` u32 element offsets), each alone in blocks of `basket_bytes` under `codec`
/// with bitshuffle.
pub(super) fn boundaries(
    trial: &mut Trial,
    sample: &BranchSample,
    codec: Codec,
    basket_bytes: usize,
) -> Result<(u64, u64)> {
    let mut offsets = Vec::with_capacity(sample.counts.len() + 1);
    let mut at = 0u32;
    offsets.push(at);
    for &c in &sample.counts {
        at = at.wrapping_add(c);
        offsets.push(at);
    }
    let setting = Setting::new(codec, COUNT_PRECONDITION);
    let mut size = |words: &[u32]| {
        trial
            .measure(setting, bytemuck::cast_slice(words), basket_bytes)
            .map(|m| m.stored_bytes)
            .map_err(|e| codec_error(&sample.name, e))
    };
    Ok((size(&sample.counts)?, size(&offsets)?))
}

/// The fewest mantissa bits whose round-to-nearest keeps every value within `tolerance`
/// relative error: rounding to `m` bits errs by at most 2^-(m+1) of the value.
pub(super) fn mantissa_bits_for(tolerance: f64, t: ScalarType) -> Option<u32> {
    let full = match t {
        ScalarType::F32 => 23,
        ScalarType::F64 => 52,
        _ => return None,
    };
    if !(tolerance > 0.0 && tolerance < 1.0) {
        return None;
    }
    let bits = ((1.0 / tolerance).log2().ceil() as i64 - 1).clamp(1, full);
    (bits < full).then_some(bits as u32)
}

/// The sample's floats rounded to `bits` mantissa bits, and the largest relative error that
/// made (values that are not normal numbers stay as they are).
pub(super) fn rounded(sample: &BranchSample, bits: u32) -> Reduced {
    let mut out = sample.values.clone();
    let mut worst = 0.0f64;
    match sample.dtype.scalar() {
        ScalarType::F32 => {
            for chunk in out.chunks_exact_mut(4) {
                let x = f32::from_le_bytes(le::array(chunk, 0));
                let r = evtc_codecs::round_mantissa_f32(x, bits);
                if x.is_normal() {
                    worst = worst.max(f64::from((r - x).abs() / x.abs()));
                }
                chunk.copy_from_slice(&r.to_le_bytes());
            }
        }
        ScalarType::F64 => {
            for chunk in out.chunks_exact_mut(8) {
                let x = f64::from_le_bytes(le::array(chunk, 0));
                let r = evtc_codecs::round_mantissa_f64(x, bits);
                if x.is_normal() {
                    worst = worst.max((r - x).abs() / x.abs());
                }
                chunk.copy_from_slice(&r.to_le_bytes());
            }
        }
        _ => {}
    }
    Reduced {
        bits,
        values: out,
        max_error: worst,
    }
}

/// The preconditioner among `trialled` (whole-basket trials of one codec) that stored the
/// sample smallest.
pub(super) fn smallest_precondition(trialled: &[Trialled], codec: Codec) -> Option<Precondition> {
    trialled
        .iter()
        .filter(|t| t.setting.codec == codec && !t.rac && t.mantissa_bits.is_none())
        // RAC units are preconditioned in place: no packing preconditioner.
        .filter(|t| t.setting.precondition.keeps_length())
        .min_by_key(|t| t.stored_bytes)
        .map(|t| t.setting.precondition)
}
