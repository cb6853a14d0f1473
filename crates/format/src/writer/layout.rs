//! Deciding each branch's layout from its first basket: whether it uses RAC, and what the writer
//! was left to choose (preconditioners, boundaries, a RAC dictionary).

use std::sync::Arc;

use evtc_codecs::{Algorithm, Precondition, UnitDictionary};
use evtc_rac::RacOptions;
use rayon::prelude::*;

use super::branch::{Choice, WriterDictionary, sample_units};
use super::encode::{Encoding, entry_ends, rac_options};
use super::{Sealed, TreeWriter};
use crate::error::{Error, Result};
use crate::meta::{Boundaries, EXT_RAC_ENTRY_SIZES, EXT_RAC_LZMA_DICTIONARY, Extension};
use crate::record::{self, RecordHeader, RecordKind};
use crate::schema::RacMode;

impl TreeWriter<'_> {
    /// Decides the layout of each branch whose first basket is among `pending` (the first of its
    /// baskets there). The trials that pick a non-RAC branch's preconditioners are the costly
    /// part and read nothing but the branch and its basket: they run on the pool, and the
    /// decisions (which may write records) then follow in order, so that the file's bytes do not
    /// depend on the number of threads. A first basket that a trial encoded whole keeps the
    /// trial's blocks, which its encoding then reuses.
    pub(super) fn decide_layouts(&mut self, pending: &mut [Sealed]) -> Result<()> {
        let mut seen = vec![false; self.branches.len()];
        let undecided: Vec<usize> = (0..pending.len())
            .filter(|&i| {
                let b = pending[i].branch;
                !self.branches[b].settled && !std::mem::replace(&mut seen[b], true)
            })
            .collect();
        let choose = |&i: &usize| {
            let sealed = &pending[i];
            let state = &self.branches[sealed.branch];
            let basket_size = self.file.options.basket_size_for(state.codec);
            // (The bytes of a basket in memory: a usize.)
            let raw = sealed.raw_bytes() as usize;
            if state.rac_applies(raw, sealed.entries, basket_size) {
                // The preconditioner that compresses the basket whole best is a candidate for
                // its units too (delta-shuffle for sorted integers, sparse or for for small ids).
                let whole = if state.auto_precondition {
                    state.choose_preconditioners(&sealed.values, &[]).values
                } else {
                    None
                };
                Choice {
                    rac: true,
                    values: whole,
                    ..Choice::default()
                }
            } else {
                state.choose_preconditioners(&sealed.values, &sealed.counts)
            }
        };
        let choices: Vec<Choice> = match &self.file.pool {
            Some(pool) if undecided.len() > 1 => {
                pool.install(|| undecided.par_iter().map(choose).collect())
            }
            _ => undecided.iter().map(choose).collect(),
        };
        for (i, mut choice) in undecided.into_iter().zip(choices) {
            let blocks = std::mem::take(&mut choice.blocks);
            self.decide_layout(&pending[i], choice)?;
            pending[i].trial_blocks = blocks;
        }
        Ok(())
    }

    /// Decides, from the first basket of branch `sealed.branch`, whether it uses RAC, and what the
    /// writer was left to choose: boundaries, the preconditioner of floats, a RAC dictionary (trained
    /// and written here).
    fn decide_layout(&mut self, sealed: &Sealed, choice: Choice) -> Result<()> {
        let train = self.file.options.rac_dictionary;
        let tree_no = self.tree_no;
        let tree = &self.name;
        let state = &mut self.branches[sealed.branch];
        let basket_size = self.file.options.basket_size_for(state.codec);
        let branch = state.meta.name.clone();
        let rac_error = |source| Error::Rac {
            tree: tree.clone(),
            branch: branch.clone(),
            source: Box::new(source),
        };
        let on = choice.rac;
        state.rac = if on { RacMode::On } else { RacMode::Off };
        state.settled = true;
        state.meta.rac = on;
        if !on {
            if let Some(precondition) = choice.values {
                state.set_precondition(precondition);
            }
            if let Some(precondition) = choice.counts {
                state.set_count_precondition(precondition);
            }
            return Ok(());
        }
        state.meta.rac_unit_bytes = u32::try_from(state.rac_unit_bytes).unwrap_or(u32::MAX);
        // A RAC branch with a counter takes its entries' sizes from the counter's units (kept
        // decoded in the file's counter cache), not from sizes stored again in each of its own
        // units: those were most of what RAC cost in size (docs/benchmarks.md).
        if state.meta.boundaries == Boundaries::Counts {
            state.meta.count_precondition = 0;
            state.meta.extensions.push(Extension {
                key: EXT_RAC_ENTRY_SIZES.into(),
                required: true,
                value: Vec::new(),
            });
        }
        let encoding = Encoding::of(state);
        let ends = entry_ends(&encoding, sealed);
        // Measure and train on at most 4 MiB of the first basket.
        let cut = ends
            .partition_point(|&e| e <= 4 << 20)
            .max(1)
            .min(ends.len());
        let sample = &sealed.values[..ends.get(cut - 1).copied().unwrap_or(0)];
        let train =
            train && state.codec.algorithm().properties().unit_dictionary != UnitDictionary::None;
        let options = rac_options(&encoding);
        // A first basket under half the basket size was cut by a cluster boundary or the end of
        // the tree: the branch may have no other basket to spread a dictionary's cost over.
        let charge = sealed.raw_bytes() < basket_size as u64 / 2;
        let mut best =
            sample_units(&options, train, charge, sample, &ends[..cut]).map_err(rac_error)?;
        let float = state.meta.dtype.scalar().is_float();
        if state.auto_precondition && state.codec.algorithm() != Algorithm::None {
            let width = state.precondition.width();
            let mut others = Vec::new();
            // Small units of floats: bitshuffle's sign and exponent planes often compress far
            // better than shuffle's byte planes a quarter of a unit long, and decode faster with
            // zstd; runs of equal values may go the other way. Keep the smaller.
            if float {
                others.push(Precondition::BitShuffle(width));
            }
            // The best of the trials on the whole basket (`choose_preconditioners`).
            others.extend(choice.values.filter(|&p| p != state.precondition));
            // Bitshuffle's constant planes (rounded floats' low mantissa bits, small integers'
            // high bytes) left out: smaller, and zstd then copies no long runs of one byte.
            others.push(Precondition::BitPlanes(width));
            // Values in runs: each unit's runs once, which the codec then decodes far faster
            // (RAC study's TFloat under lzma:7); tried when the start of the sample has runs.
            let start = &sample[..sample.len().min(64 << 10) / width.bytes() * width.bytes()];
            let runs = Precondition::Runs(width);
            let mut packed = Vec::new();
            runs.encode(start, &mut packed);
            if packed.len() < start.len() / 2 {
                others.push(runs);
            }
            // Each tried once (the whole basket's best may be one of the others).
            let mut tried = vec![state.precondition];
            others.retain(|p| {
                !tried.contains(p) && {
                    tried.push(*p);
                    true
                }
            });
            for precondition in others {
                let options = RacOptions {
                    precondition,
                    ..options
                };
                let other = sample_units(&options, train, charge, sample, &ends[..cut])
                    .map_err(rac_error)?;
                // Near-ties (within 1%) go to a packing preconditioner: the codec decodes less.
                let bar = if precondition.keeps_length() {
                    best.size
                } else {
                    best.size + best.size / 100
                };
                if other.size < bar {
                    state.set_precondition(precondition);
                    best = other;
                }
            }
        }
        // A unit costs by the bytes its codec decodes: units of a packing preconditioner take as
        // many values as make `rac_unit_bytes` packed bytes (up to 8 times as many), so that their
        // reads cost what other units' do. Not `bitplanes`, whose codec decodes its few bytes
        // fast, but whose expansion and unshuffle cost by the values: larger units would slow
        // its random reads more than they shrink the file.
        if !state.precondition.keeps_length()
            && !matches!(state.precondition, Precondition::BitPlanes(_))
        {
            let mut packed = Vec::new();
            state.precondition.encode(sample, &mut packed);
            let scale = (sample.len() / packed.len().max(1)).clamp(1, 8);
            state.rac_unit_bytes = state.rac_unit_bytes.saturating_mul(scale);
            state.meta.rac_unit_bytes = u32::try_from(state.rac_unit_bytes).unwrap_or(u32::MAX);
        }
        let Some(WriterDictionary { bytes, zstd }) = best.dictionary else {
            return Ok(());
        };
        if state.codec.algorithm() == Algorithm::Lzma {
            state.meta.extensions.push(Extension {
                key: EXT_RAC_LZMA_DICTIONARY.into(),
                required: true,
                value: Vec::new(),
            });
        }
        let header = RecordHeader::metadata(RecordKind::Dictionary, tree_no, state.number);
        let record = record::encode_record(header, &bytes);
        state.meta.dictionary_offset = self.file.start_record(record.len() as u64)?;
        state.meta.dictionary_len = record.len() as u64;
        state.dictionary = Some(Arc::new(WriterDictionary { bytes, zstd }));
        self.file.write(&record)
    }
}
