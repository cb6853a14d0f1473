//! A branch's writer state: its buffers and settings, the choices made at its first basket (the
//! preconditioner, RAC and its dictionary) and the lossy reductions asked for.

use std::sync::Arc;

use evtc_codecs::{
    Algorithm, Codec, EncoderDictionary, Precondition, Quantization, Setting, Trial,
    UnitDictionary, Width, round_mantissa_f32, round_mantissa_f64,
};
use evtc_rac::RacOptions;

use crate::error::{Error, Result};
use crate::meta::{
    BasketLoc, Boundaries, BranchMeta, DataType, EXT_MANTISSA_BITS, EXT_QUANTIZED, EXT_SHAPE,
    Extension, ScalarType,
};
use crate::schema::{BranchSpec, COUNT_PRECONDITION, RacMode, WriteOptions, auto_precondition};

/// What the first basket of a branch decided before its layout is settled: RAC or not, and the
/// preconditioners chosen by [`BranchState::choose_preconditioners`] (`None` leaves one as it
/// is): without RAC the branch's, with RAC the values' one a candidate for its units.
#[derive(Debug, Default)]
pub(super) struct Choice {
    /// Whether the branch uses RAC.
    pub(super) rac: bool,
    /// The values' preconditioner.
    pub(super) values: Option<Precondition>,
    /// The counts' preconditioner (boundaries `counts`).
    pub(super) counts: Option<Precondition>,
    /// The first basket's blocks, where a trial encoded them whole with the preconditioners
    /// chosen: what compressing the basket would give, so its encoding reuses them.
    pub(super) blocks: TrialBlocks,
}

/// Blocks of a basket that a preconditioner trial encoded whole (see [`Choice::blocks`]).
#[derive(Debug, Default)]
pub(super) struct TrialBlocks {
    /// The values' block (boundaries `none` or `counts`).
    pub(super) values: Option<Vec<u8>>,
    /// The counts' block (boundaries `counts`).
    pub(super) counts: Option<Vec<u8>>,
}

/// Per-branch writer state.
pub(super) struct BranchState {
    pub(super) meta: BranchMeta,
    /// Position in the tree.
    pub(super) number: u32,
    pub(super) codec: Codec,
    pub(super) precondition: Precondition,
    /// The preconditioner of the counts block (boundaries `counts` without RAC).
    pub(super) count_precondition: Precondition,
    pub(super) counter: Option<usize>,
    /// Values of entries not yet sealed into a basket, little-endian, from `values[consumed..]`.
    pub(super) values: Vec<u8>,
    /// Bytes at the front of `values` already sealed (dropped lazily, so that cutting many baskets
    /// from one large batch stays linear).
    pub(super) consumed: usize,
    /// Per-entry element counts of those entries (variable-length branches only), from `counts[counts_consumed..]`.
    pub(super) counts: Vec<u32>,
    /// Counts at the front of `counts` already sealed.
    pub(super) counts_consumed: usize,
    /// Entries in `values` (sealed entries excluded), committed or not.
    pub(super) buffered: u64,
    /// First entry in `values`.
    pub(super) first_entry: u64,
    pub(super) baskets: Vec<BasketLoc>,
    /// Whether baskets are RAC baskets: as asked for until the first basket settles the
    /// layout, which turns [`RacMode::Auto`] into on or off.
    pub(super) rac: RacMode,
    /// Whether the first basket has settled the branch's layout ([`TreeWriter::decide_layouts`]).
    ///
    /// [`TreeWriter::decide_layouts`]: super::TreeWriter::decide_layouts
    pub(super) settled: bool,
    pub(super) rac_unit_bytes: usize,
    pub(super) dictionary: Option<Arc<WriterDictionary>>,
    /// The boundaries were left to the writer and the branch has a counter: `none` without RAC,
    /// `counts` (in the units) with RAC, decided with RAC at the first basket.
    pub(super) auto_boundaries: bool,
    /// The preconditioner was left to the writer and the values are numbers: the first basket
    /// decides among the preconditioners that fit its width ([`Precondition::candidates`]).
    pub(super) auto_precondition: bool,
    /// The lossy reduction of a float branch's values, applied as they are filled.
    pub(super) reduction: Option<Reduction>,
}

/// A lossy reduction of float values the writer's user asked for ([`BranchSpec::mantissa_bits`],
/// [`BranchSpec::quantize`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum Reduction {
    Mantissa(u32),
    Quantize(Quantization),
}

/// Bytes of a branch's first basket on which the writer tries the preconditioners (without RAC;
/// RAC branches measure on up to 4 MiB, which they also train their dictionary on): a whole
/// default basket, as smaller samples picked worse preconditioners for some branches (with LZMA
/// most).
pub(super) const CHOICE_SAMPLE: usize = 256 << 10;

/// Bytes at the start of a preconditioner sample on which every candidate is screened; only the
/// [`FINALISTS`] smallest there are then measured on the whole sample.
const SCREEN_BYTES: usize = 64 << 10;
/// Bytes at the start of a sample that a packing preconditioner must shorten to be tried.
const PACK_CHECK_BYTES: usize = 16 << 10;
/// Candidates measured on the whole sample, besides the default.
const FINALISTS: usize = 2;
/// The zstd level that screens the candidates for levels up to [`SCREEN_ZSTD_UP_TO`] (the default,
/// 5, included): it ranks them as levels 4 and 5 do on the NanoAOD-like sample, at less cost;
/// higher levels rank some differently, so they screen at their own level.
const SCREEN_ZSTD: i32 = 3;
/// The highest zstd level screened at [`SCREEN_ZSTD`].
const SCREEN_ZSTD_UP_TO: i32 = 5;

/// The preconditioner of `candidates` under which `codec` stores `sample` smallest. Among
/// near-ties (within 1% of the smallest) the one whose output leaves the codec the fewest bytes
/// wins (a packing preconditioner, which the codec then decodes several times faster), then
/// `default` (so that near-ties of the others keep it). A sample over
/// twice [`SCREEN_BYTES`] screens the candidates on its first [`SCREEN_BYTES`] and measures the
/// default and the [`FINALISTS`] smallest on all of it. LZMA screens at level 4 at most, the
/// lowest of its normal (optimal-parsing) mode, which ranks the candidates as the higher levels
/// do at less cost (the fast mode of levels 1-3 ranks some differently); zstd levels 4 and 5
/// screen at
/// level [`SCREEN_ZSTD`]. Packing candidates that do not shorten the
/// sample's first [`PACK_CHECK_BYTES`] are not tried (they would be stored unpacked).
///
/// Returns the preconditioner and the sample's blocks under it (values `default.width()` bytes
/// wide), `None` if the codec failed on every candidate.
pub(super) fn smallest(
    codec: Codec,
    default: Precondition,
    mut candidates: Vec<Precondition>,
    sample: &[u8],
) -> (Precondition, Option<Vec<u8>>) {
    let mut trial = Trial::new();
    let value_width = default.width();
    let size_with = |trial: &mut Trial, codec: Codec, precondition: Precondition, data: &[u8]| {
        trial
            .size_values(Setting::new(codec, precondition), value_width, data)
            .unwrap_or(usize::MAX)
    };
    let screen_codec = match codec.algorithm() {
        Algorithm::Lzma => Codec::lzma(codec.level().min(4)).unwrap_or(codec),
        Algorithm::Zstd if codec.level() <= SCREEN_ZSTD_UP_TO => {
            Codec::zstd(codec.level().min(SCREEN_ZSTD)).unwrap_or(codec)
        }
        _ => codec,
    };
    // A packing preconditioner that does not shorten (the start of) the sample would be stored
    // as its `Precondition::unpacked` (none, or bitshuffle for `bitplanes`), a candidate of its
    // own: not worth a trial.
    let start =
        &sample[..sample.len().min(PACK_CHECK_BYTES) / value_width.bytes() * value_width.bytes()];
    let mut packed = Vec::new();
    candidates.retain(|&c| {
        c != default
            && (c.keeps_length() || {
                packed.clear();
                c.encode(start, &mut packed);
                packed.len() < start.len()
            })
    });
    if sample.len() > 2 * SCREEN_BYTES && candidates.len() > FINALISTS {
        let screen = &sample[..SCREEN_BYTES / value_width.bytes() * value_width.bytes()];
        let mut screened: Vec<(usize, Precondition)> = candidates
            .iter()
            .map(|&c| (size_with(&mut trial, screen_codec, c, screen), c))
            .collect();
        screened.sort_by_key(|&(size, _)| size);
        candidates = screened
            .into_iter()
            .take(FINALISTS)
            .map(|(_, c)| c)
            .collect();
    }
    // Each candidate measured on the whole sample, with its blocks (kept for the winner's).
    let mut sized: Vec<(usize, Precondition, Vec<u8>)> = std::iter::once(default)
        .chain(candidates)
        .map(|c| {
            let size = size_with(&mut trial, codec, c, sample);
            (size, c, trial.blocks().to_vec())
        })
        .collect();
    // Near-ties, within 1% of the smallest: the candidate that leaves the codec the fewest bytes
    // to decode (a packing preconditioner's output), else the default, else the smallest.
    let smallest = sized.iter().map(|&(size, ..)| size).min().unwrap_or(0);
    let near = smallest.saturating_add(smallest / 100);
    let mut codec_input = |c: Precondition| {
        if c.keeps_length() {
            return sample.len();
        }
        packed.clear();
        c.encode(sample, &mut packed);
        packed.len().min(sample.len())
    };
    let best = sized
        .iter()
        .enumerate()
        .filter(|&(_, &(size, ..))| size <= near)
        .min_by_key(|&(_, &(size, c, _))| (codec_input(c), c != default, size))
        .map(|(i, _)| i);
    match best {
        Some(i) if sized[i].0 != usize::MAX => {
            let (_, c, blocks) = sized.swap_remove(i);
            (c, Some(blocks))
        }
        Some(i) => (sized[i].1, None),
        None => (default, None),
    }
}

/// What [`evtc_rac::trial_units`] found best for a sample of a RAC branch, with the dictionary
/// prepared for the writer.
pub(super) struct SampleUnits {
    /// Bytes of the sample's RAC payload, plus the dictionary's if it is charged to the sample.
    pub(super) size: usize,
    pub(super) dictionary: Option<WriterDictionary>,
}

/// Runs [`evtc_rac::trial_units`] on a sample of a RAC branch.
pub(super) fn sample_units(
    options: &RacOptions,
    train: bool,
    charge_dictionary: bool,
    sample: &[u8],
    ends: &[usize],
) -> evtc_rac::Result<SampleUnits> {
    let trial = evtc_rac::trial_units(options, train, charge_dictionary, sample, ends)?;
    let dictionary = match trial.dictionary {
        Some(bytes) => {
            let zstd = match options.codec.algorithm().properties().unit_dictionary {
                UnitDictionary::Trained => {
                    Some(EncoderDictionary::new(&bytes, options.codec.level())?)
                }
                _ => None,
            };
            Some(WriterDictionary { bytes, zstd })
        }
        None => None,
    };
    Ok(SampleUnits {
        size: trial.size,
        dictionary,
    })
}

/// A branch's dictionary, trained from its first basket.
pub(super) struct WriterDictionary {
    pub(super) bytes: Vec<u8>,
    pub(super) zstd: Option<EncoderDictionary>,
}

impl BranchState {
    /// Applies the branch's lossy reduction to its values filled from byte `start` on. A value
    /// outside the quantization range (or NaN) removes the values filled from `start` and gives
    /// its index among them and the value.
    pub(super) fn reduce_from(&mut self, start: usize) -> Option<(usize, f64)> {
        let reduction = self.reduction?;
        let float = self.meta.dtype.scalar();
        let values = &mut self.values[start..];
        let mut outside = None;
        match float {
            ScalarType::F32 => {
                for (i, v) in values.chunks_exact_mut(4).enumerate() {
                    let x = f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
                    let y = match reduction {
                        Reduction::Mantissa(bits) => round_mantissa_f32(x, bits),
                        Reduction::Quantize(q) => match q.apply_f32(x) {
                            Some(y) => y,
                            None => {
                                outside = Some((i, f64::from(x)));
                                break;
                            }
                        },
                    };
                    v.copy_from_slice(&y.to_le_bytes());
                }
            }
            ScalarType::F64 => {
                for (i, v) in values.chunks_exact_mut(8).enumerate() {
                    let x = f64::from_le_bytes(v.try_into().unwrap_or([0; 8]));
                    let y = match reduction {
                        Reduction::Mantissa(bits) => round_mantissa_f64(x, bits),
                        Reduction::Quantize(q) => match q.apply_f64(x) {
                            Some(y) => y,
                            None => {
                                outside = Some((i, x));
                                break;
                            }
                        },
                    };
                    v.copy_from_slice(&y.to_le_bytes());
                }
            }
            _ => {}
        }
        if outside.is_some() {
            self.values.truncate(start);
        }
        outside
    }

    pub(super) fn value_size(&self) -> usize {
        self.meta.dtype.scalar().size()
    }

    /// Whether the branch is written with RAC, given its first basket (`raw` bytes of values and
    /// counts, `entries` entries) and the basket size of its codec.
    pub(super) fn rac_applies(&self, raw: usize, entries: u64, basket_size: usize) -> bool {
        let entry_bytes = raw as f64 / entries.max(1) as f64;
        self.rac
            .applies(entry_bytes, raw, basket_size, self.rac_unit_bytes)
    }

    /// The preconditioners of a branch written without RAC, from trials on its first basket's
    /// `values` and `counts`. Which preconditioner pays depends on the values and the codec
    /// (bitshuffle for small integers and b-tag scores, delta-varint or delta-for for sorted
    /// integers, for for small ids, delta or none for floats in runs of equal values, shuffle
    /// for most floats): a sample of the first basket is encoded with each candidate and the
    /// smallest kept; the counts of a `counts` branch likewise. Reads the branch only, so the
    /// trials of several branches can run at once.
    pub(super) fn choose_preconditioners(&self, values: &[u8], counts: &[u32]) -> Choice {
        let mut choice = Choice::default();
        if self.codec.algorithm() == Algorithm::None {
            return choice;
        }
        if self.auto_precondition {
            let size = self.value_size();
            let sample = &values[..values.len().min(CHOICE_SAMPLE) / size * size];
            let candidates = Precondition::candidates(self.precondition.width());
            let (chosen, blocks) = smallest(self.codec, self.precondition, candidates, sample);
            choice.values = Some(chosen);
            // The basket's values block is the trial's when the sample was all of it, encoded
            // as the basket's values are (their own width; no offsets after them).
            let whole = sample.len() == values.len()
                && self.meta.boundaries != Boundaries::Offsets
                && Width::new(size as u8).ok() == Some(self.precondition.width());
            choice.blocks.values = blocks.filter(|_| whole);
        }
        if self.meta.boundaries == Boundaries::Counts {
            let sampled = &counts[..counts.len().min(CHOICE_SAMPLE / 4)];
            let sample: Vec<u8> = sampled.iter().flat_map(|c| c.to_le_bytes()).collect();
            let default = self.count_precondition;
            let candidates = Precondition::candidates(default.width());
            let (chosen, blocks) = smallest(self.codec, default, candidates, &sample);
            choice.counts = Some(chosen);
            choice.blocks.counts =
                blocks.filter(|_| sampled.len() == counts.len() && default.width() == Width::W4);
        }
        choice
    }

    /// Replaces the values' preconditioner (same width), in the footer too.
    pub(super) fn set_precondition(&mut self, precondition: Precondition) {
        self.precondition = precondition;
        self.meta.precondition = precondition.id();
        self.meta.width = precondition.width() as u8;
    }

    pub(super) fn set_count_precondition(&mut self, precondition: Precondition) {
        self.count_precondition = precondition;
        self.meta.count_precondition = precondition.id();
    }

    /// Per-entry counts of the buffered entries.
    pub(super) fn buffered_counts(&self) -> &[u32] {
        &self.counts[self.counts_consumed..]
    }

    /// Number of values in the first `k` buffered entries.
    pub(super) fn elements_of(&self, k: usize) -> usize {
        match self.meta.dtype.fixed_len() {
            Some(len) => k * len,
            None => self.buffered_counts()[..k]
                .iter()
                .map(|&c| c as usize)
                .sum(),
        }
    }

    /// Uncompressed bytes (values and counts) of the first `k` buffered entries.
    pub(super) fn bytes_of(&self, k: usize) -> usize {
        let counts = if self.meta.dtype.is_variable() {
            4 * k
        } else {
            0
        };
        self.elements_of(k) * self.value_size() + counts
    }

    /// Uncompressed bytes buffered.
    pub(super) fn raw_len(&self) -> usize {
        self.values.len() - self.consumed + 4 * (self.counts.len() - self.counts_consumed)
    }

    /// Takes the first `k` buffered entries out as `(values, counts, elements)`.
    pub(super) fn take_front(&mut self, k: usize) -> (Vec<u8>, Vec<u32>, usize) {
        let elements = self.elements_of(k);
        let end = self.consumed + elements * self.value_size();
        let values = self.values[self.consumed..end].to_vec();
        self.consumed = end;
        let counts = if self.meta.dtype.is_variable() {
            let counts = self.counts[self.counts_consumed..self.counts_consumed + k].to_vec();
            self.counts_consumed += k;
            counts
        } else {
            Vec::new()
        };
        // Drop the sealed prefix once it is at least half the buffer: amortized linear.
        if self.consumed > 0 && self.consumed >= self.values.len() / 2 {
            self.values.drain(..self.consumed);
            self.consumed = 0;
        }
        if self.counts_consumed > 0 && self.counts_consumed >= self.counts.len() / 2 {
            self.counts.drain(..self.counts_consumed);
            self.counts_consumed = 0;
        }
        (values, counts, elements)
    }
}

/// The writer states of a tree's branches, from their specs, checked: names unique and not
/// empty, counters declared before the branches they count, boundaries, shapes and lossy
/// reductions that fit the branch's type.
pub(super) fn build_branches(
    tree: &str,
    specs: Vec<BranchSpec>,
    options: &WriteOptions,
) -> Result<Vec<BranchState>> {
    let invalid = |reason: String| Error::InvalidSchema {
        tree: tree.to_owned(),
        reason,
    };
    let mut states: Vec<BranchState> = Vec::with_capacity(specs.len());
    for spec in specs {
        if spec.name.is_empty() {
            return Err(invalid("a branch has an empty name".into()));
        }
        if states.iter().any(|s| s.meta.name == spec.name) {
            return Err(invalid(format!("two branches are named {:?}", spec.name)));
        }
        if let DataType::FixedArray(_, 0) = spec.dtype {
            return Err(invalid(format!(
                "branch {:?} is a fixed array of length 0",
                spec.name
            )));
        }
        let counter = counter_of(&spec, &states).map_err(invalid)?;
        if spec.preset.is_some() {
            let number = u32::try_from(states.len())
                .map_err(|_| invalid("more than 2^32 - 1 branches".into()))?;
            states.push(BranchState::preset(number, spec, counter).map_err(invalid)?);
            continue;
        }
        let boundaries = boundaries_of(&spec, counter.is_some()).map_err(invalid)?;
        let rac = spec.rac.unwrap_or(options.rac);
        if rac != RacMode::Off && boundaries == Boundaries::Offsets {
            return Err(invalid(format!(
                "branch {:?}: random-access baskets store counts; use boundaries counts or none",
                spec.name
            )));
        }
        let mut extensions = Vec::new();
        if let Some(shape) = shape_extension(&spec).map_err(invalid)? {
            extensions.push(shape);
        }
        let reduction = reduction_of(&spec, &mut extensions).map_err(invalid)?;
        let number = u32::try_from(states.len())
            .map_err(|_| invalid("more than 2^32 - 1 branches".into()))?;
        states.push(BranchState::new(
            number,
            spec,
            options,
            (counter, boundaries, rac),
            extensions,
            reduction,
        ));
    }
    Ok(states)
}

/// The index of `spec`'s counter among the branches declared before it (`states`), checked: an
/// integer scalar branch, counting a variable-length one.
fn counter_of(spec: &BranchSpec, states: &[BranchState]) -> Result<Option<usize>, String> {
    let Some(counter) = &spec.counter else {
        return Ok(None);
    };
    if !spec.dtype.is_variable() {
        return Err(format!(
            "branch {:?} has a fixed size and cannot have a counter",
            spec.name
        ));
    }
    let at = states
        .iter()
        .position(|s| &s.meta.name == counter)
        .ok_or_else(|| {
            format!(
                "counter {counter:?} of branch {:?} is not a branch declared before it",
                spec.name
            )
        })?;
    match states[at].meta.dtype {
        DataType::Scalar(t) if t.is_integer() => Ok(Some(at)),
        other => Err(format!(
            "counter {counter:?} of branch {:?} must be an integer scalar branch, not {other}",
            spec.name
        )),
    }
}

/// The entry boundaries of `spec`'s branch: the ones asked for, checked against its type, or
/// the default (`counts`; `none` for a branch with a counter, which may become `counts` if the
/// branch turns out to use RAC, see `decide_layout`).
fn boundaries_of(spec: &BranchSpec, has_counter: bool) -> Result<Boundaries, String> {
    let name = &spec.name;
    Ok(match (spec.dtype.is_variable(), spec.boundaries) {
        (false, None | Some(Boundaries::Fixed)) => Boundaries::Fixed,
        (false, Some(b)) => {
            return Err(format!(
                "branch {name:?} has a fixed size; boundaries {b} do not apply"
            ));
        }
        (true, Some(Boundaries::Fixed)) => {
            return Err(format!(
                "variable-length branch {name:?} cannot use fixed boundaries"
            ));
        }
        (true, Some(Boundaries::None)) if !has_counter => {
            return Err(format!(
                "branch {name:?} has no counter, so its boundaries cannot be none"
            ));
        }
        (true, Some(b)) => b,
        (true, None) if has_counter => Boundaries::None,
        (true, None) => Boundaries::Counts,
    })
}

/// The `shape` extension of a multi-dimensional fixed array, if `spec` gives a shape; the shape
/// must have two or more dimensions whose product is the array's length.
fn shape_extension(spec: &BranchSpec) -> Result<Option<Extension>, String> {
    let Some(dims) = &spec.shape else {
        return Ok(None);
    };
    let product = dims.iter().try_fold(1u32, |p, &d| p.checked_mul(d));
    match spec.dtype {
        DataType::FixedArray(_, n) if dims.len() >= 2 && product == Some(n) => {
            Ok(Some(Extension {
                key: EXT_SHAPE.into(),
                required: false,
                value: dims.iter().flat_map(|d| d.to_le_bytes()).collect(),
            }))
        }
        _ => Err(format!(
            "branch {:?}: shape {dims:?} does not fit {} values (two or more dimensions whose \
             product is a fixed array's length)",
            spec.name, spec.dtype
        )),
    }
}

/// The lossy reduction `spec` asks for (mantissa bits or quantization, of float values only),
/// with the extension that records it pushed to `extensions`.
/// The lossy reduction that a branch's extensions record (`mantissa-bits`, `quantized`).
fn reduction_of_extensions(extensions: &[Extension], scalar: ScalarType) -> Option<Reduction> {
    let float = matches!(scalar, ScalarType::F32 | ScalarType::F64);
    extensions
        .iter()
        .find_map(|e| match (e.key.as_str(), e.value.as_slice()) {
            (EXT_MANTISSA_BITS, [bits]) if float => Some(Reduction::Mantissa(u32::from(*bits))),
            (EXT_QUANTIZED, v) if float && v.len() == 17 => {
                let f = |at: usize| f64::from_le_bytes(v[at..at + 8].try_into().unwrap_or([0; 8]));
                Quantization::new(f(0), f(8), u32::from(v[16]))
                    .ok()
                    .map(Reduction::Quantize)
            }
            _ => None,
        })
}

fn reduction_of(
    spec: &BranchSpec,
    extensions: &mut Vec<Extension>,
) -> Result<Option<Reduction>, String> {
    let scalar = spec.dtype.scalar();
    let float = scalar.is_float() && !matches!(spec.dtype, DataType::Bytes | DataType::Utf8);
    match (spec.mantissa_bits, spec.quantize) {
        (Some(_), Some(_)) => Err(format!(
            "branch {:?}: mantissa bits and quantization do not go together",
            spec.name
        )),
        (Some(bits), None) => {
            let full = if scalar == ScalarType::F32 { 23 } else { 52 };
            if !float || !(1..full).contains(&bits) {
                return Err(format!(
                    "branch {:?}: {bits} mantissa bits asked for {} values (f32 keeps 1-22, f64 \
                     1-51)",
                    spec.name, spec.dtype
                ));
            }
            extensions.push(Extension {
                key: EXT_MANTISSA_BITS.into(),
                required: false,
                value: vec![bits as u8],
            });
            Ok(Some(Reduction::Mantissa(bits)))
        }
        (None, Some(q)) => {
            if !float {
                return Err(format!(
                    "branch {:?}: quantization asked for {} values (f32 and f64 only)",
                    spec.name, spec.dtype
                ));
            }
            extensions.push(Extension {
                key: EXT_QUANTIZED.into(),
                required: false,
                value: [
                    &q.min().to_le_bytes()[..],
                    &q.max().to_le_bytes(),
                    &[q.bits() as u8],
                ]
                .concat(),
            });
            Ok(Some(Reduction::Quantize(q)))
        }
        (None, None) => Ok(None),
    }
}

impl BranchState {
    /// The state of branch `number` of a [`BranchSpec::like`] spec: settled from the start,
    /// with the other file's settings, dictionary and extensions (its lossy reduction applied to
    /// the values filled, so that the extension holds for them too).
    fn preset(
        number: u32,
        spec: BranchSpec,
        counter: Option<usize>,
    ) -> Result<BranchState, String> {
        let preset = *spec.preset.expect("a preset spec");
        let meta = preset.meta;
        let name = meta.name.clone();
        let bad = |what: &str, e: &dyn std::fmt::Display| format!("branch {name:?}: {what}: {e}");
        let algorithm = Algorithm::from_id(meta.codec).map_err(|e| bad("its codec", &e))?;
        let codec =
            Codec::new(algorithm, i32::from(meta.level)).map_err(|e| bad("its codec", &e))?;
        let precondition = Precondition::from_parts(meta.precondition, meta.width)
            .map_err(|e| bad("its preconditioner", &e))?;
        // 0: no counts block (other boundaries, or RAC units that hold their entries' sizes).
        let count_precondition = match meta.count_precondition {
            0 => COUNT_PRECONDITION,
            id => Precondition::from_parts(id, 4)
                .map_err(|e| bad("its counts' preconditioner", &e))?,
        };
        let dictionary = match (&preset.dictionary, meta.dictionary_len) {
            (Some(bytes), len) if len > 0 => {
                let zstd = match algorithm.properties().unit_dictionary {
                    UnitDictionary::Trained => Some(
                        EncoderDictionary::new(bytes, codec.level())
                            .map_err(|e| bad("its dictionary", &e))?,
                    ),
                    _ => None,
                };
                Some(Arc::new(WriterDictionary {
                    bytes: bytes.clone(),
                    zstd,
                }))
            }
            (None, len) if len > 0 => {
                return Err(format!("branch {name:?}: its dictionary was not given"));
            }
            _ => None,
        };
        Ok(BranchState {
            count_precondition,
            rac: if meta.rac { RacMode::On } else { RacMode::Off },
            settled: true,
            rac_unit_bytes: meta.rac_unit_bytes as usize,
            dictionary,
            reduction: reduction_of_extensions(&meta.extensions, meta.dtype.scalar()),
            ..BranchState::blank(number, meta, (codec, precondition), counter)
        })
    }

    /// Branch `number` described by `meta` (its counts of what is written set to none), with
    /// nothing buffered or written yet and the settings [`BranchState::new`] and
    /// [`BranchState::preset`] do not give: not settled, without RAC, dictionary or reduction,
    /// nothing left to the writer.
    fn blank(
        number: u32,
        meta: BranchMeta,
        (codec, precondition): (Codec, Precondition),
        counter: Option<usize>,
    ) -> BranchState {
        BranchState {
            number,
            meta: BranchMeta {
                // Where the dictionary and index go, and how much is written, are this file's.
                dictionary_offset: 0,
                dictionary_len: 0,
                ..meta.unwritten()
            },
            codec,
            precondition,
            count_precondition: COUNT_PRECONDITION,
            counter,
            values: Vec::new(),
            consumed: 0,
            counts: Vec::new(),
            counts_consumed: 0,
            buffered: 0,
            first_entry: 0,
            baskets: Vec::new(),
            rac: RacMode::Off,
            settled: false,
            rac_unit_bytes: 0,
            auto_boundaries: false,
            auto_precondition: false,
            dictionary: None,
            reduction: None,
        }
    }

    /// The state of branch `number` of `spec`, checked by [`build_branches`]: its counter's
    /// index, boundaries and RAC setting in `layout`, and the extensions and reduction found.
    fn new(
        number: u32,
        spec: BranchSpec,
        options: &WriteOptions,
        (counter, boundaries, rac): (Option<usize>, Boundaries, RacMode),
        extensions: Vec<Extension>,
        reduction: Option<Reduction>,
    ) -> BranchState {
        let codec = spec.codec.unwrap_or(options.codec);
        let text = matches!(spec.dtype, DataType::Bytes | DataType::Utf8);
        let precondition = spec.precondition.unwrap_or(if text {
            Precondition::None
        } else {
            auto_precondition(spec.dtype.scalar())
        });
        let count_precondition = match boundaries {
            Boundaries::Counts => COUNT_PRECONDITION.id(),
            _ => 0,
        };
        let auto_boundaries = spec.boundaries.is_none() && counter.is_some();
        let auto_precondition = spec.precondition.is_none() && !text;
        let meta = BranchMeta {
            name: spec.name,
            dtype: spec.dtype,
            counter: spec.counter,
            boundaries,
            codec: codec.algorithm() as u8,
            level: codec.level() as i8,
            precondition: precondition.id(),
            width: precondition.width() as u8,
            count_precondition,
            rac: false,
            rac_unit_bytes: 0,
            dictionary_offset: 0,
            dictionary_len: 0,
            entries: 0,
            raw_bytes: 0,
            stored_bytes: 0,
            baskets: 0,
            index_offset: 0,
            index_len: 0,
            extensions,
        };
        BranchState {
            rac,
            rac_unit_bytes: options.rac_unit_bytes_for(codec),
            auto_boundaries,
            auto_precondition,
            reduction,
            ..BranchState::blank(number, meta, (codec, precondition), counter)
        }
    }
}
