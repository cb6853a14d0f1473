//! The codec advisor behind `evtc advise`: trial-encodes samples of a file's branches under
//! candidate settings, measures size and speeds, and recommends per-branch settings for a goal.
//!
//! The input is an evtc or a ROOT file. Every tree gives the same share of its entries (so the
//! sample, bounded by [`AdviseOptions::sample_bytes`], is in proportion to each branch's size),
//! read in windows spread over the tree. Each branch's sample is then encoded
//! ([`evtc_codecs::Trial`]) in baskets of the writer's size under every codec of
//! [`AdviseOptions::codecs`] with every preconditioner that fits its type, with RAC (units, seek
//! table and dictionary as the writer makes them: [`evtc_rac::trial_units`]) under each codec with
//! that codec's smallest preconditioner, and, where a float tolerance is stated, with the values
//! rounded to the fewest mantissa bits that meet it. Sizes and times are scaled from the sample to
//! the whole branch. [`Goal::pick`] states each goal's rule.
//!
//! ```no_run
//! use evtc_tools::advise::{AdviseOptions, Goal, advise};
//!
//! let advice = advise("nano.evtc".as_ref(), &AdviseOptions::default(), &|_, _| {})?;
//! let balanced = advice.goal(Goal::Balanced).expect("every goal is advised");
//! println!("{} bytes, {:.0} MB/s", balanced.predicted.stored_bytes, balanced.predicted.read_mb_per_s);
//! # Ok::<(), evtc_tools::Error>(())
//! ```

mod balance;
mod measure;
mod sample;

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use evtc_codecs::{Algorithm, Codec, Precondition, Setting, Trial, Width};
use evtc_format::{RacMode, WriteOptions};
use rayon::prelude::*;
use serde::Serialize;

use crate::source::Input;
use crate::{
    BoundaryChoice, BranchSettings, ConvertSummary, Error, Glob, Result, Settings, convert,
};
use measure::Trialled;
use sample::{BranchSample, TreeSample};

/// What the advisor is told.
#[derive(Debug, Clone)]
pub struct AdviseOptions {
    /// Codecs to try (default: those of [`Codec::TRIAL_SET`] this build has).
    pub codecs: Vec<Codec>,
    /// Uncompressed bytes sampled over the whole file (default 16 MiB); files no larger are
    /// read whole.
    pub sample_bytes: u64,
    /// Basket size of the trials, the writer's target (default 256 KiB).
    pub basket_bytes: usize,
    /// Also try RAC under each codec (default on).
    pub rac: bool,
    /// RAC unit size (default: the writer's for each codec, `WriteOptions::rac_unit_bytes_for`:
    /// 2 KiB, 8 KiB under LZMA).
    pub rac_unit_bytes: Option<usize>,
    /// Also measure the 2017 study's external baseline: the sampled bytes, one branch after
    /// another, cut blindly into fixed blocks of 4 KiB to 1 MiB and compressed per block.
    pub external: bool,
    /// Relative tolerances of float branches, by glob (the last match wins): for these, reduced
    /// precision is tried too. Without one, nothing lossy is ever tried or recommended.
    pub float_tolerance: Vec<(Glob, f64)>,
    /// Trees to advise on (by path); empty: every tree.
    pub trees: Vec<String>,
    /// Branch globs to advise on; empty: every branch.
    pub branches: Vec<Glob>,
    /// Threads for the trials.
    pub threads: usize,
    /// The input readers' limit on uncompressed basket bytes.
    pub max_basket_bytes: Option<u64>,
}

impl Default for AdviseOptions {
    fn default() -> AdviseOptions {
        AdviseOptions {
            codecs: Codec::TRIAL_SET
                .into_iter()
                .filter(|c| c.algorithm().is_built())
                .collect(),
            sample_bytes: 16 << 20,
            basket_bytes: 256 << 10,
            rac: true,
            rac_unit_bytes: None,
            external: false,
            float_tolerance: Vec::new(),
            trees: Vec::new(),
            branches: Vec::new(),
            threads: evtc_format::cores(),
            max_basket_bytes: None,
        }
    }
}

/// What a user wants from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// The smallest file (archival).
    Size,
    /// The fastest full read (analysis that reads everything, many times).
    Read,
    /// A small file that still reads fast.
    Balanced,
    /// Cheap single-entry reads (event display, skimming by index).
    Random,
}

impl Goal {
    /// Every goal.
    pub const ALL: [Goal; 4] = [Goal::Size, Goal::Read, Goal::Balanced, Goal::Random];

    /// The outcome this goal picks for a branch, by these rules (read speed is decompression
    /// speed, as when a file is read from the page cache; a codec's reference outcome is the codec
    /// with the preconditioner the writer would choose, the smallest, without RAC or lossy
    /// precision, or `none`'s if that stored every block as is; sizes within 0.5% of each other
    /// count as equal, and among equals a lossless outcome wins over a reduced-precision one, then
    /// the
    /// cheapest to write wins unless a rule says otherwise; an outcome [stored as
    /// is](Outcome::stored_as_is) is never picked):
    /// - `size`: the fewest stored bytes; among equals, the fastest read.
    /// - `read`: among outcomes no larger than LZ4's reference, the fastest read; among those
    ///   within 3% of it, the fewest bytes. Without LZ4 among the trials: the fastest read of all.
    /// - `balanced`: the fewest bytes among outcomes that read at least as fast as evtc's default
    ///   codec's reference (`zstd:5`), speeds within 3% counting as equal (timing noise).
    ///   Without it among the trials: the fewest bytes among outcomes within 20% of the fastest
    ///   read. (This is the rule for one branch alone; [`advise`] picks the balanced goal over
    ///   the whole file: the fastest read of a file at most 99% the size of the default
    ///   codec's, each branch trading read time against bytes at one price.)
    /// - `random`: among RAC outcomes, the fewest bytes whose single-entry read is within 50%
    ///   of the fastest single-entry read (no RAC outcome: as `balanced`).
    ///
    /// `None` when `outcomes` is empty.
    pub fn pick(self, outcomes: &[Outcome]) -> Option<usize> {
        let best = |f: &dyn Fn(&Outcome) -> f64, among: &dyn Fn(&Outcome) -> bool| {
            outcomes
                .iter()
                .filter(|o| !o.stored_as_is && among(o))
                .map(f)
                .fold(f64::INFINITY, f64::min)
        };
        let argmin = |f: &dyn Fn(&Outcome) -> f64, among: &dyn Fn(&Outcome) -> bool| {
            outcomes
                .iter()
                .enumerate()
                .filter(|(_, o)| !o.stored_as_is && among(o))
                .min_by(|(_, a), (_, b)| f(a).total_cmp(&f(b)))
                .map(|(i, _)| i)
        };
        let write = |o: &Outcome| 1.0 / o.compress_mb_per_s;
        // The fewest bytes among `among`; among sizes within 0.5% of those, a lossless outcome
        // if there is one, then the least `tie`.
        let smallest = |tie: &dyn Fn(&Outcome) -> f64, among: &dyn Fn(&Outcome) -> bool| {
            let floor = best(&|o| o.stored_bytes as f64, among) * 1.005;
            let equal = |o: &Outcome| among(o) && o.stored_bytes as f64 <= floor;
            argmin(tie, &|o| equal(o) && o.mantissa_bits.is_none()).or_else(|| argmin(tie, &equal))
        };
        let bytes = |o: &Outcome| o.stored_bytes as f64;
        let read = |o: &Outcome| o.read_seconds;
        let all = |_: &Outcome| true;
        let reference = |codec: Codec| reference(outcomes, codec);
        match self {
            Goal::Size => smallest(&read, &all),
            Goal::Read => {
                let limit = reference(Codec::LZ4).map_or(f64::INFINITY, bytes);
                let fastest = best(&read, &|o| bytes(o) <= limit) * 1.03;
                smallest(&write, &|o| bytes(o) <= limit && read(o) <= fastest)
            }
            Goal::Balanced => {
                let limit = match reference(Codec::DEFAULT) {
                    Some(o) => read(o) * 1.03,
                    None => best(&read, &all) * 1.2,
                };
                smallest(&write, &|o| read(o) <= limit)
            }
            Goal::Random => {
                let entry = |o: &Outcome| o.entry_read_us.unwrap_or(f64::INFINITY);
                let floor = best(&entry, &|o| o.rac) * 1.5;
                smallest(&write, &|o| o.rac && entry(o) <= floor)
                    .or_else(|| Goal::Balanced.pick(outcomes))
            }
        }
    }
}

/// A codec's reference outcome among `outcomes`: the codec with the preconditioner the writer
/// would choose (the smallest), without RAC or reduced precision; a reference stored as is
/// stands for `none`'s, which stores the same bytes the same way.
fn reference(outcomes: &[Outcome], codec: Codec) -> Option<&Outcome> {
    let lossless = |codec: Codec| {
        outcomes
            .iter()
            .filter(move |o| o.codec == codec && !o.rac && o.mantissa_bits.is_none())
            .min_by_key(|o| o.stored_bytes)
    };
    lossless(codec).and_then(|o| {
        if o.stored_as_is {
            lossless(Codec::NONE).or(Some(o))
        } else {
            Some(o)
        }
    })
}

impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Goal::Size => "size",
            Goal::Read => "read",
            Goal::Balanced => "balanced",
            Goal::Random => "random",
        })
    }
}

impl FromStr for Goal {
    type Err = String;

    fn from_str(s: &str) -> Result<Goal, String> {
        Goal::ALL
            .into_iter()
            .find(|g| g.to_string() == s)
            .ok_or_else(|| format!("unknown goal {s:?}: expected size, read, balanced or random"))
    }
}

/// One setting's predicted result on a whole branch.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The setting as `evtc convert` spells it: `zstd:5+shuffle:4`, with `+rac` and
    /// `+mantissa:N` where they apply.
    pub setting: String,
    /// The codec.
    #[serde(skip)]
    pub codec: Codec,
    /// The preconditioner.
    #[serde(skip)]
    pub precondition: Precondition,
    /// Whether baskets are RAC baskets.
    pub rac: bool,
    /// Mantissa bits kept (lossy), if reduced.
    pub mantissa_bits: Option<u32>,
    /// Predicted stored bytes of the whole branch.
    pub stored_bytes: u64,
    /// Uncompressed over stored bytes.
    pub ratio: f64,
    /// Compression speed, MB/s of uncompressed bytes.
    pub compress_mb_per_s: f64,
    /// Decompression speed, MB/s of uncompressed bytes.
    pub decompress_mb_per_s: f64,
    /// Predicted seconds to decode the whole branch.
    pub read_seconds: f64,
    /// Microseconds to read one entry (one RAC unit decoded), for RAC outcomes.
    pub entry_read_us: Option<f64>,
    /// The codec could not make any block smaller and stored them as they are, as `none` does:
    /// no goal recommends it (it would only cost write time), though it still counts as the
    /// codec's reference.
    pub stored_as_is: bool,
}

/// Entry boundaries of a variable-length branch under the file's default codec.
#[derive(Debug, Clone, Serialize)]
pub struct BoundaryTrial {
    /// A counter branch gives the boundaries, so `none` stores nothing.
    pub counter: bool,
    /// Predicted bytes as per-entry counts.
    pub counts_bytes: u64,
    /// Predicted bytes as u32 offsets, alone.
    pub offsets_bytes: u64,
    /// `none`, `counts` or `offsets`: the smallest.
    pub recommended: &'static str,
}

/// The advice on one branch.
#[derive(Debug, Clone, Serialize)]
pub struct BranchAdvice {
    /// Branch name.
    pub name: String,
    /// Its type.
    pub dtype: String,
    /// Predicted uncompressed bytes of the whole branch.
    pub raw_bytes: u64,
    /// Uncompressed bytes sampled.
    pub sample_bytes: u64,
    /// Every setting tried.
    pub outcomes: Vec<Outcome>,
    /// The file's current setting, for an evtc input: an index into `outcomes`.
    pub current: Option<usize>,
    /// Boundaries, for variable-length branches.
    pub boundaries: Option<BoundaryTrial>,
    /// The largest relative error of the reduced-precision outcomes, measured on the sample.
    pub lossy_max_error: Option<f64>,
}

/// The advice on one tree.
#[derive(Debug, Clone, Serialize)]
pub struct TreeAdvice {
    /// Tree path.
    pub name: String,
    /// Entries.
    pub entries: u64,
    /// Entries sampled.
    pub sampled_entries: u64,
    /// The branches.
    pub branches: Vec<BranchAdvice>,
}

/// A whole file's predicted size and read speed under some map of settings.
#[derive(Debug, Clone, Serialize)]
pub struct FilePoint {
    /// What the point is: a goal, `current`, a uniform codec, an external block size.
    pub label: String,
    /// Predicted stored bytes of the branches.
    pub stored_bytes: u64,
    /// Uncompressed over stored bytes.
    pub ratio: f64,
    /// Predicted decompression speed over all branches, MB/s of uncompressed bytes.
    pub read_mb_per_s: f64,
    /// Predicted compression speed over all branches, MB/s of uncompressed bytes.
    pub write_mb_per_s: f64,
}

/// A goal's recommended map.
#[derive(Debug, Clone, Serialize)]
pub struct GoalAdvice {
    /// The goal.
    pub goal: Goal,
    /// Per tree, per branch: the index of the chosen outcome (`None` for an empty branch).
    pub choices: Vec<Vec<Option<usize>>>,
    /// The predicted file.
    pub predicted: FilePoint,
}

/// Everything the advisor measured and recommends.
#[derive(Debug, Clone, Serialize)]
pub struct Advice {
    /// The input path.
    pub input: String,
    /// `root` or `evtc`.
    pub input_format: &'static str,
    /// Input file size.
    pub input_bytes: u64,
    /// Uncompressed bytes sampled.
    pub sample_bytes: u64,
    /// Wall time of the advice, seconds.
    pub seconds: f64,
    /// The trees.
    pub trees: Vec<TreeAdvice>,
    /// Each codec applied to every branch, with the preconditioner the writer would choose
    /// (the smallest of each branch), without RAC.
    pub uniform: Vec<FilePoint>,
    /// The file's current settings (evtc input).
    pub current: Option<FilePoint>,
    /// The external baseline (with [`AdviseOptions::external`]).
    pub external: Vec<FilePoint>,
    /// One recommendation per goal.
    pub goals: Vec<GoalAdvice>,
}

impl Advice {
    /// The recommendation for `goal`.
    pub fn goal(&self, goal: Goal) -> Option<&GoalAdvice> {
        self.goals.iter().find(|g| g.goal == goal)
    }

    /// The predicted file when each branch takes the outcome `choose` picks.
    fn point(
        &self,
        label: String,
        mut choose: impl FnMut(&BranchAdvice) -> Option<usize>,
    ) -> FilePoint {
        let (mut raw, mut stored, mut decode, mut encode) = (0u64, 0u64, 0.0, 0.0);
        for b in self.trees.iter().flat_map(|t| &t.branches) {
            let Some(o) = choose(b).and_then(|i| b.outcomes.get(i)) else {
                continue;
            };
            raw += b.raw_bytes;
            stored += o.stored_bytes;
            decode += b.raw_bytes as f64 / (o.decompress_mb_per_s * 1e6);
            encode += b.raw_bytes as f64 / (o.compress_mb_per_s * 1e6);
        }
        FilePoint {
            label,
            stored_bytes: stored,
            ratio: raw as f64 / stored.max(1) as f64,
            read_mb_per_s: raw as f64 / 1e6 / decode.max(1e-12),
            write_mb_per_s: raw as f64 / 1e6 / encode.max(1e-12),
        }
    }

    /// Converts `input` into `output` with `goal`'s map: each branch gets its recommended codec,
    /// preconditioner, RAC setting, boundaries and precision (by exact name), every other option
    /// from `base`.
    ///
    /// # Errors
    /// As for [`convert`]; [`Error::Options`] if the advice has no such goal.
    pub fn apply(
        &self,
        goal: Goal,
        input: &Path,
        output: &Path,
        base: &Settings,
        progress: &mut dyn FnMut(crate::Progress<'_>),
    ) -> Result<ConvertSummary> {
        let advice = self
            .goal(goal)
            .ok_or_else(|| Error::Options(format!("no advice for goal {goal}")))?;
        let mut options = base.clone();
        options.trees = self.trees.iter().map(|t| t.name.clone()).collect();
        for (tree, choices) in self.trees.iter().zip(&advice.choices) {
            for (b, choice) in tree.branches.iter().zip(choices) {
                let Some(o) = choice.and_then(|i| b.outcomes.get(i)) else {
                    continue;
                };
                let boundaries = b.boundaries.as_ref().map(|t| match t.recommended {
                    "offsets" => BoundaryChoice::Offsets,
                    "counts" => BoundaryChoice::Counts,
                    _ => BoundaryChoice::Auto,
                });
                options.branch_rules.push((
                    Glob::exact(&b.name),
                    BranchSettings {
                        codec: Some(o.codec),
                        precondition: Some(o.precondition.into()),
                        rac: Some(if o.rac { RacMode::On } else { RacMode::Off }),
                        boundaries,
                        mantissa_bits: o.mantissa_bits,
                        quantize: None,
                    },
                ));
            }
        }
        convert(input, output, &options, progress)
    }
}

/// Samples `input` and runs every trial; `progress(done, total)` is called as trials finish.
///
/// # Errors
/// [`Error::Input`] for an unreadable input; [`Error::Options`] for a glob that matches nothing,
/// a missing tree or a bad tolerance; reader errors.
pub fn advise(
    input: &Path,
    options: &AdviseOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Advice> {
    let started = Instant::now();
    if let Some((glob, tol)) = options
        .float_tolerance
        .iter()
        .find(|(_, t)| !(*t > 0.0 && *t < 1.0))
    {
        return Err(Error::Options(format!(
            "float tolerance {tol} for {glob} is not a relative error between 0 and 1"
        )));
    }
    let file = Input::open(input, options.max_basket_bytes)?;
    let names = file.tree_names(&options.trees)?;
    let select = Settings {
        branches: options.branches.clone(),
        ..Settings::default()
    };
    let mut sources = names
        .iter()
        .map(|n| file.tree(n))
        .collect::<Result<Vec<_>>>()?;
    if let Some(glob) = options.branches.iter().find(|g| {
        !sources
            .iter()
            .any(|t| t.columns().iter().any(|c| g.matches(&c.name)))
    }) {
        return Err(Error::Options(format!(
            "branch pattern \"{glob}\" matches no branch of {}",
            names.join(", ")
        )));
    }
    // The bytes of the branches selected (and their counters), which the sample shares out.
    let total_raw: u64 = sources
        .iter_mut()
        .map(|s| {
            let specs = crate::branch_specs(s, &select);
            specs
                .iter()
                .filter_map(|(_, column)| column.map(|c| s.columns()[c].raw_bytes))
                .sum::<u64>()
        })
        .sum();
    let fraction = (options.sample_bytes as f64 / total_raw.max(1) as f64).min(1.0);
    let mut samples = sources
        .iter_mut()
        .map(|s| sample::sample_tree(s, &select, fraction))
        .collect::<Result<Vec<_>>>()?;
    for b in samples.iter_mut().flat_map(|t| &mut t.branches) {
        b.reduced = tolerance_bits(b, options).map(|bits| measure::rounded(b, bits));
    }
    let current = current_settings(&file, &samples);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.max(1))
        .build()
        .map_err(|e| Error::Options(format!("cannot start {} threads: {e}", options.threads)))?;
    let trialled = pool.install(|| run_trials(&samples, &current, options, progress))?;
    let mut advice = Advice {
        input: input.display().to_string(),
        input_format: file.format(),
        input_bytes: std::fs::metadata(input).map_or(0, |m| m.len()),
        sample_bytes: samples
            .iter()
            .flat_map(|t| &t.branches)
            .map(|b| b.values.len() as u64)
            .sum(),
        seconds: 0.0,
        trees: Vec::new(),
        uniform: Vec::new(),
        current: None,
        external: Vec::new(),
        goals: Vec::new(),
    };
    for ((tree, trials), current) in samples.iter().zip(trialled).zip(&current) {
        let scale = tree.entries as f64 / tree.sampled_entries.max(1) as f64;
        let branches = tree
            .branches
            .iter()
            .zip(trials)
            .zip(current)
            .map(|((b, t), current)| branch_advice(b, t, *current, scale, options))
            .collect::<Result<_>>()?;
        advice.trees.push(TreeAdvice {
            name: tree.name.clone(),
            entries: tree.entries,
            sampled_entries: tree.sampled_entries,
            branches,
        });
    }
    for &codec in &options.codecs {
        let point = advice.point(codec.to_string(), |b| {
            b.outcomes
                .iter()
                .enumerate()
                .filter(|(_, o)| o.codec == codec && !o.rac && o.mantissa_bits.is_none())
                .min_by_key(|(_, o)| o.stored_bytes)
                .map(|(i, _)| i)
        });
        advice.uniform.push(point);
    }
    if current.iter().flatten().any(Option::is_some) {
        advice.current = Some(advice.point("current".into(), |b| b.current));
    }
    for goal in Goal::ALL {
        let whole_file = match goal {
            Goal::Balanced => balance::choices(&advice.trees),
            _ => None,
        };
        let choices: Vec<Vec<Option<usize>>> = whole_file.unwrap_or_else(|| {
            advice
                .trees
                .iter()
                .map(|t| t.branches.iter().map(|b| goal.pick(&b.outcomes)).collect())
                .collect()
        });
        let mut picks = choices.iter().flatten();
        let predicted = advice.point(goal.to_string(), |_| picks.next().copied().flatten());
        advice.goals.push(GoalAdvice {
            goal,
            choices,
            predicted,
        });
    }
    if options.external {
        advice.external = pool.install(|| external(&samples))?;
    }
    advice.seconds = started.elapsed().as_secs_f64();
    Ok(advice)
}

/// Each sampled branch's current setting in an evtc input.
fn current_settings(file: &Input, samples: &[TreeSample]) -> Vec<Vec<Option<(Setting, bool)>>> {
    samples
        .iter()
        .map(|t| {
            t.branches
                .iter()
                .map(|b| {
                    let Input::Evtc(reader) = file else {
                        return None;
                    };
                    let meta = reader
                        .tree(&t.name)
                        .ok()?
                        .branch(&b.name)
                        .ok()?
                        .meta()
                        .clone();
                    let codec =
                        Codec::new(Algorithm::from_id(meta.codec).ok()?, meta.level.into()).ok()?;
                    let precondition =
                        Precondition::from_parts(meta.precondition, meta.width).ok()?;
                    Some((Setting::new(codec, precondition), meta.rac))
                })
                .collect()
        })
        .collect()
}

/// One trial to run.
#[derive(Debug, Clone, Copy)]
enum Task {
    Whole(Setting),
    /// On the values at reduced precision.
    Lossy(Setting),
    Rac(Setting),
}

/// A rough cost of a trial, so that the slowest start first.
fn cost(setting: Setting) -> u32 {
    let level = setting.codec.level();
    match setting.codec.algorithm() {
        Algorithm::Lzma => 40 + level as u32,
        Algorithm::Zstd if level >= 15 => 30,
        Algorithm::Zlib | Algorithm::Lz4Hc => 10 + level.max(0) as u32,
        Algorithm::Zstd => 5 + level.max(0) as u32,
        _ => 1,
    }
}

/// Codecs of at most this [`cost`] try every preconditioner; the dearer ones try only the
/// [`SCREENED_PRECONDITIONERS`] best of the dearest of those (zstd:5 among the defaults).
const SCREEN_COST: u32 = 10;

/// How many preconditioners the dear codecs try: those the screening codec found smallest.
const SCREENED_PRECONDITIONERS: usize = 3;

/// The trials of every branch, in three rounds run on the pool: whole baskets (and reduced
/// precision) under the cheap codecs with every preconditioner; under the dear codecs with the
/// preconditioners the cheap ones ranked best (a preconditioner's rank varies little between
/// codecs, and the dear codecs' trials are most of the time); then RAC under each codec with
/// its smallest preconditioner. The current setting of an evtc input is always among them.
fn run_trials(
    samples: &[TreeSample],
    current: &[Vec<Option<(Setting, bool)>>],
    options: &AdviseOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<Vec<Vec<Trialled>>>> {
    let branches: Vec<(usize, usize, &BranchSample)> = samples
        .iter()
        .enumerate()
        .flat_map(|(t, tree)| {
            tree.branches
                .iter()
                .enumerate()
                .filter(|(_, b)| !b.values.is_empty())
                .map(move |(i, b)| (t, i, b))
        })
        .collect();
    let dear = |c: &Codec| cost(Setting::new(*c, Precondition::None)) > SCREEN_COST;
    let cheap: Vec<Codec> = options
        .codecs
        .iter()
        .copied()
        .filter(|c| !dear(c))
        .collect();
    let dear_codecs: Vec<Codec> = options.codecs.iter().copied().filter(dear).collect();
    // The screening codec: the dearest of the cheap ones that compresses.
    let screen = cheap
        .iter()
        .copied()
        .filter(|c| *c != Codec::NONE)
        .max_by_key(|c| cost(Setting::new(*c, Precondition::None)));
    let whole = |b: &BranchSample, s: Setting, tasks: &mut Vec<Task>| {
        tasks.push(Task::Whole(s));
        if b.reduced.is_some() && s.codec != Codec::NONE {
            tasks.push(Task::Lossy(s));
        }
    };
    let mut first = Vec::new();
    for &(t, i, b) in &branches {
        let width = Width::new(b.value_size() as u8).unwrap_or(Width::W1);
        // Without a screening codec every codec tries every preconditioner.
        let codecs = if screen.is_some() {
            &cheap
        } else {
            &options.codecs
        };
        let mut settings = Setting::candidates(codecs, width);
        if let Some((setting, false)) = current[t][i]
            && !settings.contains(&setting)
        {
            settings.push(setting);
        }
        let mut tasks = Vec::new();
        for s in settings {
            whole(b, s, &mut tasks);
        }
        first.extend(tasks.into_iter().map(|task| (t, i, task)));
    }
    let rac_codecs = if options.rac {
        options.codecs.iter().filter(|c| **c != Codec::NONE).count()
    } else {
        0
    };
    // The later rounds are known after the earlier: until then the total counts their tasks
    // as they will be without reduced precision.
    let later = if screen.is_some() {
        dear_codecs.len() * SCREENED_PRECONDITIONERS
    } else {
        0
    };
    let total = AtomicUsize::new(first.len() + branches.len() * (later + rac_codecs));
    let done = AtomicUsize::new(0);
    let tick = || {
        let done = done.fetch_add(1, Ordering::Relaxed) + 1;
        progress(done, total.load(Ordering::Relaxed).max(done));
    };
    let mut out: Vec<Vec<Vec<Trialled>>> = samples
        .iter()
        .map(|t| vec![Vec::new(); t.branches.len()])
        .collect();
    let mut finished = first.len();
    for (t, i, r) in run_tasks(samples, options, &mut first, &tick)? {
        out[t][i].push(r);
    }
    let mut middle = Vec::new();
    if let Some(screen) = screen {
        for &(t, i, b) in &branches {
            let mut ranked: Vec<&Trialled> = out[t][i]
                .iter()
                .filter(|r| r.setting.codec == screen && !r.rac && r.mantissa_bits.is_none())
                .collect();
            ranked.sort_by_key(|r| r.stored_bytes);
            for &codec in &dear_codecs {
                for r in ranked.iter().take(SCREENED_PRECONDITIONERS) {
                    let s = Setting::new(codec, r.setting.precondition);
                    if !out[t][i].iter().any(|m| m.setting == s && !m.rac) {
                        let mut tasks = Vec::new();
                        whole(b, s, &mut tasks);
                        middle.extend(tasks.into_iter().map(|task| (t, i, task)));
                    }
                }
            }
        }
    }
    // The RAC round is known after the middle one: counted as one task per codec and branch.
    total.store(
        finished + middle.len() + branches.len() * rac_codecs,
        Ordering::Relaxed,
    );
    finished += middle.len();
    for (t, i, r) in run_tasks(samples, options, &mut middle, &tick)? {
        out[t][i].push(r);
    }
    let mut rac = Vec::new();
    for &(t, i, _) in &branches {
        if options.rac {
            for &codec in options.codecs.iter().filter(|c| **c != Codec::NONE) {
                if let Some(p) = measure::smallest_precondition(&out[t][i], codec) {
                    rac.push((t, i, Task::Rac(Setting::new(codec, p))));
                }
            }
        }
        if let Some((setting, true)) = current[t][i]
            && !rac.iter().any(|&(tt, ii, task)| {
                (tt, ii) == (t, i) && matches!(task, Task::Rac(s) if s == setting)
            })
        {
            rac.push((t, i, Task::Rac(setting)));
        }
    }
    total.store(finished + rac.len(), Ordering::Relaxed);
    for (t, i, r) in run_tasks(samples, options, &mut rac, &tick)? {
        out[t][i].push(r);
    }
    Ok(out)
}

/// Runs `tasks` on the pool, the dearest first; `tick` after each.
fn run_tasks(
    samples: &[TreeSample],
    options: &AdviseOptions,
    tasks: &mut [(usize, usize, Task)],
    tick: &(dyn Fn() + Sync),
) -> Result<Vec<(usize, usize, Trialled)>> {
    tasks.sort_by_key(|&(t, i, task)| {
        let s = match task {
            Task::Whole(s) | Task::Lossy(s) | Task::Rac(s) => s,
        };
        std::cmp::Reverse(u64::from(cost(s)) * samples[t].branches[i].values.len() as u64)
    });
    let results = tasks
        .par_iter()
        .map_init(Trial::new, |trial, &(t, i, task)| {
            let b = &samples[t].branches[i];
            let r = match task {
                Task::Whole(s) => {
                    measure::whole_baskets(trial, b, s, options.basket_bytes, &b.values, None)
                        .map(Some)
                }
                Task::Lossy(s) => match &b.reduced {
                    Some(r) => measure::whole_baskets(
                        trial,
                        b,
                        s,
                        options.basket_bytes,
                        &r.values,
                        Some(r.bits),
                    )
                    .map(Some),
                    None => Ok(None),
                },
                Task::Rac(s) => {
                    let unit = match options.rac_unit_bytes {
                        Some(bytes) => bytes,
                        None => WriteOptions::default().rac_unit_bytes_for(s.codec),
                    };
                    measure::rac(b, s, unit)
                }
            };
            tick();
            r.map(|r| r.map(|r| (t, i, r)))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(results.into_iter().flatten().collect())
}

/// The mantissa bits a stated tolerance allows for a float branch, if any.
fn tolerance_bits(b: &BranchSample, options: &AdviseOptions) -> Option<u32> {
    let (_, tolerance) = options
        .float_tolerance
        .iter()
        .rev()
        .find(|(g, _)| g.matches(&b.name))?;
    measure::mantissa_bits_for(*tolerance, b.dtype.scalar())
}

/// A branch's trials, scaled from the sample to the whole branch, with its boundaries' trial
/// and the measured error of its reduced precision.
fn branch_advice(
    b: &BranchSample,
    trials: Vec<Trialled>,
    current: Option<(Setting, bool)>,
    scale: f64,
    options: &AdviseOptions,
) -> Result<BranchAdvice> {
    let raw = b.values.len() as f64;
    let outcomes: Vec<Outcome> = trials
        .iter()
        .map(|t| {
            let stored = t.stored_bytes as f64 * scale;
            let decode = t.decode_seconds * scale;
            let mut setting = t.setting.to_string();
            if t.rac {
                setting.push_str("+rac");
            }
            if let Some(bits) = t.mantissa_bits {
                setting.push_str(&format!("+mantissa:{bits}"));
            }
            Outcome {
                setting,
                codec: t.setting.codec,
                precondition: t.setting.precondition,
                rac: t.rac,
                mantissa_bits: t.mantissa_bits,
                stored_bytes: stored as u64,
                ratio: raw / t.stored_bytes.max(1) as f64,
                compress_mb_per_s: raw / 1e6 / t.encode_seconds.max(1e-12),
                decompress_mb_per_s: raw / 1e6 / t.decode_seconds.max(1e-12),
                read_seconds: decode,
                entry_read_us: t.unit_seconds.map(|s| s * 1e6),
                stored_as_is: t.all_stored && t.setting.codec != Codec::NONE,
            }
        })
        .collect();
    let current = current.and_then(|(setting, rac)| {
        outcomes.iter().position(|o| {
            o.codec == setting.codec
                && o.precondition == setting.precondition
                && o.rac == rac
                && o.mantissa_bits.is_none()
        })
    });
    let boundaries = if b.dtype.is_variable() && !b.counts.is_empty() {
        let (counts, offsets) =
            measure::boundaries(&mut Trial::new(), b, Codec::DEFAULT, options.basket_bytes)?;
        Some(BoundaryTrial {
            counter: b.has_counter,
            counts_bytes: (counts as f64 * scale) as u64,
            offsets_bytes: (offsets as f64 * scale) as u64,
            recommended: if b.has_counter {
                "none"
            } else if offsets < counts {
                "offsets"
            } else {
                "counts"
            },
        })
    } else {
        None
    };
    let lossy_max_error = b.reduced.as_ref().map(|r| r.max_error);
    Ok(BranchAdvice {
        name: b.name.clone(),
        dtype: b.dtype.to_string(),
        raw_bytes: (raw * scale) as u64,
        sample_bytes: b.values.len() as u64,
        outcomes,
        current,
        boundaries,
        lossy_max_error,
    })
}

/// Block sizes of the external baseline.
const EXTERNAL_BLOCKS: [usize; 5] = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];

/// The external baseline (as the 2017 study compressed an uncompressed ROOT file with SquashFS):
/// the sampled bytes, branch after branch, cut blindly into fixed blocks and compressed per
/// block under LZ4, zlib:6, zstd:5 and lzma:1, without preconditioner.
fn external(samples: &[TreeSample]) -> Result<Vec<FilePoint>> {
    let mut data = Vec::new();
    let mut predicted_raw = 0.0;
    for tree in samples {
        let scale = tree.entries as f64 / tree.sampled_entries.max(1) as f64;
        for b in &tree.branches {
            data.extend_from_slice(&b.values);
            predicted_raw += b.values.len() as f64 * scale;
        }
    }
    if data.is_empty() {
        return Ok(Vec::new());
    }
    let scale = predicted_raw / data.len() as f64;
    let codec = |a, level| Codec::new(a, level).map_err(|e| Error::Options(e.to_string()));
    let codecs = [
        Codec::LZ4,
        codec(Algorithm::Zlib, 6)?,
        Codec::DEFAULT,
        codec(Algorithm::Lzma, 1)?,
    ];
    let tasks: Vec<(usize, Codec)> = EXTERNAL_BLOCKS
        .iter()
        .flat_map(|&b| codecs.iter().map(move |&c| (b, c)))
        .collect();
    tasks
        .par_iter()
        .map_init(Trial::new, |trial, &(block, codec)| {
            let m = trial
                .measure(Setting::new(codec, Precondition::None), &data, block)
                .map_err(|e| Error::Options(format!("external baseline: {e}")))?;
            let raw = data.len() as f64 / 1e6;
            Ok(FilePoint {
                label: format!("external {} KiB {codec}", block >> 10),
                stored_bytes: (m.stored_bytes as f64 * scale) as u64,
                ratio: m.ratio(),
                read_mb_per_s: raw / m.decode_seconds.max(1e-12),
                write_mb_per_s: raw / m.encode_seconds.max(1e-12),
            })
        })
        .collect()
}
