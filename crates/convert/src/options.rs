//! The options of a conversion: file-wide and per-branch settings ([`ConvertOptions`],
//! [`BranchSettings`]), the choices the writer can be left to make ([`PreconditionChoice`],
//! [`BoundaryChoice`]), and their spellings (`FromStr` and `Display`: `zstd:5`, `delta`,
//! `counts`), which the `evtc convert` command and the Python package's `evtc.convert` share.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use evtc_codecs::{Codec, Precondition, Quantization, Width};
use evtc_format::{ClusterSize, RacMode, WriteOptions};

use crate::Glob;

/// How entry boundaries of variable-length branches are stored (see docs/format.md 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundaryChoice {
    /// The format's default: `counts` without a counter branch; with one, `none`, or `counts`
    /// where the branch uses RAC (its units then hold their entries' sizes, so that reading one
    /// entry touches one unit).
    #[default]
    Auto,
    /// Per-entry offsets with the values, as ROOT stores them.
    Offsets,
    /// Per-entry counts in their own stream.
    Counts,
    /// No boundaries where a counter branch gives them (`counts` elsewhere).
    None,
}

impl std::fmt::Display for BoundaryChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BoundaryChoice::Auto => "auto",
            BoundaryChoice::Offsets => "offsets",
            BoundaryChoice::Counts => "counts",
            BoundaryChoice::None => "none",
        })
    }
}

impl std::str::FromStr for BoundaryChoice {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<BoundaryChoice, String> {
        Ok(match s {
            "auto" => BoundaryChoice::Auto,
            "offsets" => BoundaryChoice::Offsets,
            "counts" => BoundaryChoice::Counts,
            "none" => BoundaryChoice::None,
            other => {
                return Err(format!(
                    "unknown entry boundaries {other:?}: expected auto, offsets, counts or none"
                ));
            }
        })
    }
}

/// The preconditioner applied to every branch's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreconditionChoice {
    /// Left to the writer, which measures the candidates on each branch's first basket
    /// ([`evtc_format::auto_precondition`] says how).
    #[default]
    Auto,
    /// No preconditioner.
    None,
    /// Byte shuffle at the value width.
    Shuffle,
    /// Bit shuffle at the value width.
    BitShuffle,
    /// Delta coding at the value width.
    Delta,
    /// Delta coding, then the byte shuffle, at the value width.
    DeltaShuffle,
    /// Frame of reference and bit-packing at the value width.
    For,
    /// Delta coding, then frame of reference and bit-packing, at the value width.
    DeltaFor,
    /// Delta coding as LEB128 varints at the value width.
    DeltaVarint,
    /// Zigzag of each value, then the byte shuffle, at the value width.
    ZigzagShuffle,
    /// The most common value and the positions and values of the others, at the value width.
    Sparse,
    /// Run-length encoding of the values, at the value width.
    Runs,
    /// Bitshuffle without its constant bit-planes, at the value width.
    BitPlanes,
}

impl PreconditionChoice {
    /// The preconditioner of this choice for values `width` bytes wide; `None` for `Auto`.
    pub fn at(self, width: Width) -> Option<Precondition> {
        Some(match self {
            PreconditionChoice::Auto => return None,
            PreconditionChoice::None => Precondition::None,
            PreconditionChoice::Shuffle => Precondition::Shuffle(width),
            PreconditionChoice::BitShuffle => Precondition::BitShuffle(width),
            PreconditionChoice::Delta => Precondition::Delta(width),
            PreconditionChoice::DeltaShuffle => Precondition::DeltaShuffle(width),
            PreconditionChoice::For => Precondition::For(width),
            PreconditionChoice::DeltaFor => Precondition::DeltaFor(width),
            PreconditionChoice::DeltaVarint => Precondition::DeltaVarint(width),
            PreconditionChoice::ZigzagShuffle => Precondition::ZigzagShuffle(width),
            PreconditionChoice::Sparse => Precondition::Sparse(width),
            PreconditionChoice::Runs => Precondition::Runs(width),
            PreconditionChoice::BitPlanes => Precondition::BitPlanes(width),
        })
    }
}

impl From<Precondition> for PreconditionChoice {
    /// The choice of `precondition`'s kind (its width is always the values' own).
    fn from(precondition: Precondition) -> PreconditionChoice {
        match precondition {
            Precondition::None => PreconditionChoice::None,
            Precondition::Shuffle(_) => PreconditionChoice::Shuffle,
            Precondition::BitShuffle(_) => PreconditionChoice::BitShuffle,
            Precondition::Delta(_) => PreconditionChoice::Delta,
            Precondition::DeltaShuffle(_) => PreconditionChoice::DeltaShuffle,
            Precondition::For(_) => PreconditionChoice::For,
            Precondition::DeltaFor(_) => PreconditionChoice::DeltaFor,
            Precondition::DeltaVarint(_) => PreconditionChoice::DeltaVarint,
            Precondition::ZigzagShuffle(_) => PreconditionChoice::ZigzagShuffle,
            Precondition::Sparse(_) => PreconditionChoice::Sparse,
            Precondition::Runs(_) => PreconditionChoice::Runs,
            Precondition::BitPlanes(_) => PreconditionChoice::BitPlanes,
        }
    }
}

impl PreconditionChoice {
    /// Every choice with its spelling, `auto` first.
    const NAMES: [(PreconditionChoice, &'static str); 13] = [
        (PreconditionChoice::Auto, "auto"),
        (PreconditionChoice::None, "none"),
        (PreconditionChoice::Shuffle, "shuffle"),
        (PreconditionChoice::BitShuffle, "bitshuffle"),
        (PreconditionChoice::Delta, "delta"),
        (PreconditionChoice::DeltaShuffle, "delta-shuffle"),
        (PreconditionChoice::For, "for"),
        (PreconditionChoice::DeltaFor, "delta-for"),
        (PreconditionChoice::DeltaVarint, "delta-varint"),
        (PreconditionChoice::ZigzagShuffle, "zigzag-shuffle"),
        (PreconditionChoice::Sparse, "sparse"),
        (PreconditionChoice::Runs, "runs"),
        (PreconditionChoice::BitPlanes, "bitplanes"),
    ];
}

impl std::fmt::Display for PreconditionChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (_, name) = PreconditionChoice::NAMES
            .iter()
            .find(|(choice, _)| choice == self)
            .expect("every choice has a name");
        f.write_str(name)
    }
}

impl std::str::FromStr for PreconditionChoice {
    type Err = String;

    /// `auto`, `none`, or a preconditioner's name without its width (`delta`, `bitshuffle`).
    fn from_str(s: &str) -> std::result::Result<PreconditionChoice, String> {
        PreconditionChoice::NAMES
            .iter()
            .find(|(_, name)| *name == s)
            .map(|(choice, _)| *choice)
            .ok_or_else(|| {
                let names: Vec<&str> = PreconditionChoice::NAMES.iter().map(|(_, n)| *n).collect();
                format!(
                    "unknown preconditioner {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// Settings of the branches a glob matches, over the file-wide ones; a field left `None` keeps
/// the file-wide setting (or an earlier rule's).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BranchSettings {
    /// The codec.
    pub codec: Option<Codec>,
    /// The preconditioner.
    pub precondition: Option<PreconditionChoice>,
    /// Random-access compression.
    pub rac: Option<RacMode>,
    /// Entry boundaries of variable-length branches.
    pub boundaries: Option<BoundaryChoice>,
    /// Float values rounded to this many mantissa bits (lossy: see
    /// [`evtc_codecs::round_mantissa_f32`]).
    pub mantissa_bits: Option<u32>,
    /// Float values quantized into a range (lossy: see [`Quantization`]); a value outside it
    /// fails the conversion.
    pub quantize: Option<Quantization>,
}

impl BranchSettings {
    /// The kinds of per-branch setting, as [`BranchSettings::parse`] names them.
    pub const KINDS: [&'static str; 5] =
        ["codec", "precondition", "rac", "mantissa_bits", "quantize"];

    /// One setting of `kind` (one of [`BranchSettings::KINDS`]) from its spelling: `codec`
    /// `lz4`, `precondition` `delta`, `rac` `on`, `mantissa_bits` `10`, `quantize` `-3:3:12`.
    ///
    /// # Errors
    /// A message naming the kind and the value that does not parse.
    pub fn parse(kind: &str, value: &str) -> std::result::Result<BranchSettings, String> {
        let bad = |e: &dyn std::fmt::Display| format!("{kind} {value:?}: {e}");
        let mut settings = BranchSettings::default();
        match kind {
            "codec" => settings.codec = Some(value.parse().map_err(|e| bad(&e))?),
            "precondition" => settings.precondition = Some(value.parse().map_err(|e| bad(&e))?),
            "rac" => settings.rac = Some(value.parse().map_err(|e| bad(&e))?),
            "mantissa_bits" => settings.mantissa_bits = Some(value.parse().map_err(|e| bad(&e))?),
            "quantize" => settings.quantize = Some(value.parse().map_err(|e| bad(&e))?),
            other => {
                return Err(format!(
                    "no per-branch setting {other:?} (settings: {})",
                    BranchSettings::KINDS.join(", ")
                ));
            }
        }
        Ok(settings)
    }

    /// Settings that change the codec alone.
    pub fn codec(codec: Codec) -> BranchSettings {
        BranchSettings {
            codec: Some(codec),
            ..BranchSettings::default()
        }
    }
}

/// Everything a conversion can be told.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// The output file's settings: default codec, basket and cluster sizes, RAC.
    pub write: WriteOptions,
    /// Per-branch settings by branch-name glob, over the file-wide ones: for each field, the
    /// last rule that matches the branch and sets it wins.
    pub branch_settings: Vec<(Glob, BranchSettings)>,
    /// Preconditioner of every branch.
    pub precondition: PreconditionChoice,
    /// Entry-boundary encoding of variable-length branches.
    pub boundaries: BoundaryChoice,
    /// Trees to convert (by path); empty: every tree (newest cycle).
    pub trees: Vec<String>,
    /// Branch globs to keep; empty: every branch. Counter branches of kept arrays are kept too.
    pub branches: Vec<Glob>,
    /// Skip branches the ROOT reader does not support instead of failing.
    pub skip_unsupported: bool,
    /// Threads for decoding the input (the writer has its own count in `write`).
    pub threads: usize,
    /// A flag that stops the conversion after its current chunk (set it from a signal handler):
    /// the conversion then returns [`Error::Interrupted`](crate::Error::Interrupted).
    pub interrupt: Option<Arc<AtomicBool>>,
    /// On interruption, keep the records written so far as `OUTPUT.partial` (see
    /// [`FileWriter::partial_path`](evtc_format::FileWriter::partial_path)) instead of
    /// discarding them.
    pub keep_partial: bool,
    /// The input readers' limit on uncompressed basket bytes (default: theirs, 256 MiB); raise it
    /// for trusted files with larger baskets.
    pub max_basket_bytes: Option<u64>,
    /// The event index every converted tree gets, keyed by these two integer branches (major,
    /// minor); `None`: the input tree's index, if it has one on two such branches.
    pub index: Option<(String, String)>,
    /// Append to the evtc file at the output instead of writing a new one: entries of a tree
    /// it has go after its entries (same branches and types, in the same order), other trees
    /// are added; nothing in it is rewritten, and an interrupted conversion leaves it as it was.
    pub append: bool,
}

impl Default for ConvertOptions {
    fn default() -> ConvertOptions {
        ConvertOptions {
            write: WriteOptions::default(),
            branch_settings: Vec::new(),
            precondition: PreconditionChoice::Auto,
            boundaries: BoundaryChoice::Auto,
            trees: Vec::new(),
            branches: Vec::new(),
            skip_unsupported: false,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            interrupt: None,
            keep_partial: false,
            max_basket_bytes: None,
            index: None,
            append: false,
        }
    }
}

/// The builder: each method sets one option, the write settings in [`ConvertOptions::write`]
/// and the thread counts of reading and writing together, so that every front end (the `evtc`
/// command, the Python package) makes its options the same way.
impl ConvertOptions {
    /// Append to an existing output ([`ConvertOptions::append`]).
    pub fn append(mut self, on: bool) -> ConvertOptions {
        self.append = on;
        self
    }

    /// The event index every converted tree gets, keyed by two integer branches (major, minor).
    pub fn index(mut self, keys: Option<(String, String)>) -> ConvertOptions {
        self.index = keys;
        self
    }

    /// The codec of every branch not matched by a per-branch rule.
    pub fn codec(mut self, codec: Codec) -> ConvertOptions {
        self.write = self.write.codec(codec);
        self
    }

    /// Random-access compression of every branch not matched by a per-branch rule.
    pub fn rac(mut self, mode: RacMode) -> ConvertOptions {
        self.write = self.write.rac(mode);
        self
    }

    /// The least uncompressed bytes of a RAC unit (see [`WriteOptions::rac_unit_bytes`]).
    pub fn rac_unit_bytes(mut self, bytes: usize) -> ConvertOptions {
        self.write = self.write.rac_unit_bytes(bytes);
        self
    }

    /// Whether RAC branches may get a dictionary (see [`WriteOptions::rac_dictionary`]).
    pub fn rac_dictionary(mut self, on: bool) -> ConvertOptions {
        self.write = self.write.rac_dictionary(on);
        self
    }

    /// Whether the output is synced to disk before it gets its name (see
    /// [`WriteOptions::sync`]; default: yes).
    pub fn sync(mut self, on: bool) -> ConvertOptions {
        self.write = self.write.sync(on);
        self
    }

    /// Whether the output replaces a file already at its path (see
    /// [`WriteOptions::overwrite`]; default: no).
    pub fn overwrite(mut self, on: bool) -> ConvertOptions {
        self.write = self.write.overwrite(on);
        self
    }

    /// When clusters end (ROOT's AutoFlush).
    pub fn cluster_size(mut self, size: ClusterSize) -> ConvertOptions {
        self.write = self.write.cluster_size(size);
        self
    }

    /// The target uncompressed bytes of a basket (see [`WriteOptions::basket_size`]).
    pub fn basket_size(mut self, bytes: usize) -> ConvertOptions {
        self.write = self.write.basket_size(bytes);
        self
    }

    /// One basket per branch per cluster (see [`WriteOptions::flush_at_cluster`]).
    pub fn flush_at_cluster(mut self, on: bool) -> ConvertOptions {
        self.write = self.write.flush_at_cluster(on);
        self
    }

    /// The threads that decode the input and those that compress the output (at least 1).
    pub fn threads(mut self, threads: usize) -> ConvertOptions {
        let threads = threads.max(1);
        self.threads = threads;
        self.write = self.write.threads(threads);
        self
    }

    /// The preconditioner of every branch not matched by a per-branch rule.
    pub fn precondition(mut self, choice: PreconditionChoice) -> ConvertOptions {
        self.precondition = choice;
        self
    }

    /// The entry boundaries of every variable-length branch not matched by a per-branch rule.
    pub fn boundaries(mut self, choice: BoundaryChoice) -> ConvertOptions {
        self.boundaries = choice;
        self
    }

    /// A per-branch rule: `settings` for the branches `glob` matches (see
    /// [`ConvertOptions::branch_settings`]).
    pub fn branch_rule(mut self, glob: Glob, settings: BranchSettings) -> ConvertOptions {
        self.branch_settings.push((glob, settings));
        self
    }

    /// The trees to convert (default: every tree).
    pub fn trees(mut self, trees: Vec<String>) -> ConvertOptions {
        self.trees = trees;
        self
    }

    /// The branches to keep, by glob (default: every branch).
    pub fn branches(mut self, globs: Vec<Glob>) -> ConvertOptions {
        self.branches = globs;
        self
    }

    /// Leave out the branches the ROOT reader does not support instead of failing.
    pub fn skip_unsupported(mut self, on: bool) -> ConvertOptions {
        self.skip_unsupported = on;
        self
    }

    /// The input readers' limit on the uncompressed bytes of a basket.
    pub fn max_basket_bytes(mut self, bytes: Option<u64>) -> ConvertOptions {
        self.max_basket_bytes = bytes;
        self
    }
}

/// The two key branches of an event index as users write them: `run,event`.
///
/// ```
/// assert_eq!(
///     evtc_convert::parse_index_keys("run,event"),
///     Ok(("run".to_owned(), "event".to_owned()))
/// );
/// assert!(evtc_convert::parse_index_keys("run").is_err());
/// ```
///
/// # Errors
/// A message naming the text when it is not two non-empty names separated by a comma.
pub fn parse_index_keys(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once(',') {
        Some((major, minor))
            if !major.trim().is_empty() && !minor.trim().is_empty() && !minor.contains(',') =>
        {
            Ok((major.trim().to_owned(), minor.trim().to_owned()))
        }
        _ => Err(format!(
            "{s:?} is not two branch names separated by a comma (MAJOR,MINOR, e.g. run,event)"
        )),
    }
}
