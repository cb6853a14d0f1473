//! The settings of every job that writes evtc files ([`Settings`]) and their one vocabulary
//! ([`SETTINGS`]).
//!
//! Each [`Setting`] is a row of data: its name, the old names it still takes (with a
//! [`Renamed`] note), what it holds, which [`Jobs`] take it, its help, an example, and its one
//! parser from text. [`Settings::set`] is that parser: `settings.set("cluster_size", "1000")`,
//! `settings.set("branch_codec", "Muon_*=lz4")`. Every door goes through it: the `evtc` command
//! builds its options from the table, Python's keywords are spelled as its names and parsed by
//! it, and the C API takes `name=value` strings. A setting's default is defined once, by
//! [`Settings::default`] (and, below it, the writer's [`WriteOptions`]); the table shows it
//! ([`Setting::default_value`]).
//!
//! ```
//! use evtc_tools::{Jobs, Settings};
//!
//! let mut settings = Settings::default();
//! settings.set("codec", "lz4")?;
//! settings.set("branch_codec", "Jet_*=zstd:9")?;
//! settings.set_for(Jobs::CONVERT, "cluster_size=30MB")?;
//! let renamed = settings.set("autoflush", "1000")?; // an old name, still taken
//! assert_eq!(renamed.map(|r| r.new), Some("cluster_size"));
//! assert!(settings.set_for(Jobs::WRITER, "tree=Events").is_err()); // not a writer's setting
//! # Ok::<(), evtc_tools::SettingError>(())
//! ```

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use evtc_codecs::{Codec, Width};
use evtc_format::{Boundaries, BranchSpec, ClusterSize, DataType, RacMode, WriteOptions};

use crate::Glob;
use crate::options::{BoundaryChoice, BranchSettings, PreconditionChoice};

mod table;

pub use table::SETTINGS;

/// Everything a job that writes evtc files can be told: the output's codecs and layout, the
/// per-branch rules over them, what to read of the input, and how to run.
///
/// The fields are the settings of [`SETTINGS`] (same names), plus two run-time controls that
/// are not settings ([`Settings::interrupt`], [`Settings::keep_partial`]).
#[derive(Debug, Clone)]
pub struct Settings {
    /// The codec of every branch no rule matches (`codec`); `None`: zstd:5
    /// ([`Codec::DEFAULT`]), except that branches of an evtc file written out as ROOT keep
    /// their own codec.
    pub codec: Option<Codec>,
    /// The kind of file written (`to`); `None`: an evtc file, and an output named `*.root`
    /// is refused as ambiguous.
    pub to: Option<OutputFormat>,
    /// The preconditioner of every branch no rule matches (`precondition`).
    pub precondition: PreconditionChoice,
    /// Random-access compression of every branch no rule matches (`rac`).
    pub rac: RacMode,
    /// The least uncompressed bytes of a RAC unit (`rac_unit`); `None`: the codec's default
    /// ([`WriteOptions::rac_unit_bytes_for`]).
    pub rac_unit: Option<u64>,
    /// Whether RAC branches may get a trained dictionary (`rac_dictionary`).
    pub rac_dictionary: bool,
    /// The entry boundaries of variable-length branches no rule matches (`boundaries`).
    pub boundaries: BoundaryChoice,
    /// Per-branch rules by branch-name glob, over the file-wide settings (`branch_codec`,
    /// `branch_precondition`, `branch_rac`, `float_precision`, `float_quantize`): for each
    /// field, the last rule that matches the branch and sets it wins.
    pub branch_rules: Vec<(Glob, BranchSettings)>,
    /// When clusters end, as ROOT's AutoFlush (`cluster_size`); `None`: the output's default,
    /// every 32 MiB of values ([`evtc_format::DEFAULT_CLUSTER_SIZE`]) for an evtc file, 128 MiB
    /// of values for a TTree, and for an RNTuple ROOT's own: a cluster ends at about 128 MiB
    /// compressed.
    pub cluster_size: Option<ClusterSize>,
    /// The target uncompressed bytes of a basket (`basket_size`); `None`: the codec's default
    /// ([`WriteOptions::basket_size_for`]).
    pub basket_size: Option<u64>,
    /// One basket per branch per cluster (`flush_at_cluster`).
    pub flush_at_cluster: bool,
    /// Whether the output is synced to disk before it gets its name (`sync`).
    pub sync: bool,
    /// Threads that read the input and compress the output (`threads`).
    pub threads: usize,
    /// Whether a new output replaces a file already at its path (`overwrite`; the command
    /// line's `--force`).
    pub overwrite: bool,
    /// The input readers' limit on a basket's uncompressed bytes (`max_basket_size`).
    pub max_basket_size: u64,
    /// The trees to read (`tree`); empty: every tree (a skim's or add-columns': the only one).
    pub trees: Vec<String>,
    /// The branches to keep, by glob (`branches`); empty: every branch. Counters of kept
    /// arrays are kept too.
    pub branches: Vec<Glob>,
    /// Leave out the branches the ROOT reader does not support instead of failing
    /// (`skip_unsupported`).
    pub skip_unsupported: bool,
    /// The event index every converted tree gets, keyed by two integer branches (major,
    /// minor) (`index`); `None`: the input tree's, if it has one on two such branches.
    pub index: Option<(String, String)>,
    /// Append to the evtc file at the output instead of writing a new one (`append`): entries
    /// of a tree it has go after its entries (same branches and types, in the same order),
    /// other trees are added; nothing in it is rewritten, and an interrupted conversion
    /// leaves it as it was.
    pub append: bool,
    /// A flag that stops a conversion after its current chunk (set it from a signal handler):
    /// it then returns [`Error::Interrupted`](crate::Error::Interrupted). Not a setting.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// On interruption, keep the records written so far as `OUTPUT.partial` (see
    /// [`FileWriter::partial_path`](evtc_format::FileWriter::partial_path)) instead of
    /// discarding them. Not a setting.
    pub keep_partial: bool,
}

impl Settings {
    /// The kind of file to write at `output`: the setting `to`, else evtc, unless `output` is
    /// named `*.root`: what to write there is not guessed.
    ///
    /// # Errors
    /// [`Error::RootOutputUnsaid`](crate::Error::RootOutputUnsaid) for an output named
    /// `*.root` without `to`.
    pub fn output_format(&self, output: &std::path::Path) -> crate::Result<OutputFormat> {
        let root_name = output
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("root"));
        match self.to {
            Some(format) => Ok(format),
            None if root_name => Err(crate::Error::RootOutputUnsaid {
                path: output.to_owned(),
            }),
            None => Ok(OutputFormat::Evtc),
        }
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            codec: None,
            to: None,
            precondition: PreconditionChoice::Auto,
            rac: RacMode::Off,
            rac_unit: None,
            rac_dictionary: true,
            boundaries: BoundaryChoice::Auto,
            branch_rules: Vec::new(),
            cluster_size: None,
            basket_size: None,
            flush_at_cluster: false,
            sync: true,
            threads: evtc_format::cores(),
            overwrite: false,
            max_basket_size: evtc_format::DEFAULT_MAX_BASKET_BYTES,
            trees: Vec::new(),
            branches: Vec::new(),
            skip_unsupported: false,
            index: None,
            append: false,
            interrupt: None,
            keep_partial: false,
        }
    }
}

/// The kind of file a conversion writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// An evtc file.
    Evtc,
    /// A ROOT file of RNTuples (binary format 1.0, ROOT 6.34 and later).
    RNTuple,
    /// A ROOT file of TTrees.
    TTree,
}

impl std::fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutputFormat::Evtc => "evtc",
            OutputFormat::RNTuple => "rntuple",
            OutputFormat::TTree => "ttree",
        })
    }
}

impl std::str::FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<OutputFormat, String> {
        match s.to_ascii_lowercase().as_str() {
            "evtc" => Ok(OutputFormat::Evtc),
            "rntuple" => Ok(OutputFormat::RNTuple),
            "ttree" => Ok(OutputFormat::TTree),
            other => Err(format!(
                "unknown output format {other:?}: expected evtc, rntuple or ttree"
            )),
        }
    }
}

/// The jobs that take settings: a set of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jobs(u8);

impl Jobs {
    /// Converting a ROOT or evtc file (`evtc convert`, `evtc.convert`).
    pub const CONVERT: Jobs = Jobs(1);
    /// Merging files (`evtc merge`, `evtc.merge`).
    pub const MERGE: Jobs = Jobs(2);
    /// Skimming a tree (`evtc skim`, `evtc.skim`).
    pub const SKIM: Jobs = Jobs(4);
    /// Adding columns to a tree in place (`evtc add-columns`, `evtc.add_columns`).
    pub const ADD_COLUMNS: Jobs = Jobs(8);
    /// Writing a file from a program's data (Python's `evtc.recreate` and `evtc.update`, the C
    /// API's writer).
    pub const WRITER: Jobs = Jobs(16);
    /// Every job.
    pub const ALL: Jobs = Jobs(31);
    /// Every job reading an input file.
    const READING: Jobs = Jobs(1 | 2 | 4 | 8);
    /// Every job that cuts clusters of its own (adding columns follows the tree's).
    const NEW_TREES: Jobs = Jobs(1 | 2 | 4 | 16);
    /// Every job, with its name, in order.
    pub const NAMED: [(Jobs, &'static str); 5] = [
        (Jobs::CONVERT, "convert"),
        (Jobs::MERGE, "merge"),
        (Jobs::SKIM, "skim"),
        (Jobs::ADD_COLUMNS, "add_columns"),
        (Jobs::WRITER, "writer"),
    ];

    /// Both sets.
    pub const fn with(self, other: Jobs) -> Jobs {
        Jobs(self.0 | other.0)
    }

    /// Whether every job of `jobs` is in this set.
    pub const fn contains(self, jobs: Jobs) -> bool {
        self.0 & jobs.0 == jobs.0
    }

    /// The job of a name of [`Jobs::NAMED`].
    pub fn named(name: &str) -> Option<Jobs> {
        Jobs::NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(j, _)| *j)
    }

    /// The names of the jobs in this set.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Jobs::NAMED
            .into_iter()
            .filter(move |(j, _)| self.contains(*j))
            .map(|(_, n)| n)
    }
}

/// What a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// On or off: `true` or `false` (also `on`/`off`, `yes`/`no`, `1`/`0`).
    Switch,
    /// One value; given again, the last wins.
    Value,
    /// A list: each value given adds one.
    List,
    /// Per-branch rules, `GLOB=VALUE`: each given adds one; for each branch, the last rule that
    /// matches it wins.
    Rule,
}

/// One setting: its names, what it takes, the jobs that take it, and its parser.
pub struct Setting {
    /// Its name in every door (Python's keyword, the C API's `name=value`, the command line's
    /// `--name-with-dashes`).
    pub name: &'static str,
    /// Older names still taken, each with a [`Renamed`] note.
    pub aliases: &'static [&'static str],
    /// What it takes.
    pub shape: Shape,
    /// Its value in help texts: `CODEC`, `GLOB=CODEC`, `N|SIZE`.
    pub placeholder: &'static str,
    /// A value it takes, for examples and tests.
    pub example: &'static str,
    /// What it does, in one or two sentences.
    pub help: &'static str,
    /// The jobs that take it.
    pub jobs: Jobs,
    /// Its command-line option where that is not the name with dashes (`overwrite` is
    /// `--force`, as hadd's `-f`), with its one-letter form.
    pub flag: Option<(&'static str, Option<char>)>,
    /// Its value when the command line gives the option alone (`--rac` is `--rac on`).
    pub bare: Option<&'static str>,
    set: fn(&mut Settings, &str) -> Result<(), String>,
    show: fn(&Settings) -> Option<String>,
}

impl std::fmt::Debug for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setting")
            .field("name", &self.name)
            .field("shape", &self.shape)
            .finish_non_exhaustive()
    }
}

impl Setting {
    /// Its default, as text (`None` for a list or rules, which start empty).
    pub fn default_value(&self) -> Option<String> {
        (self.show)(&Settings::default())
    }

    /// Its command-line option, without the dashes: the name with dashes (`cluster-size`), a
    /// switch that is on by default as `no-...` (`no-sync`), or its own [`Setting::flag`].
    pub fn long(&self) -> String {
        if let Some((flag, _)) = self.flag {
            return flag.to_owned();
        }
        let dashed = self.name.replace('_', "-");
        if self.shape == Shape::Switch && self.default_value().as_deref() == Some("true") {
            format!("no-{dashed}")
        } else {
            dashed
        }
    }
}

/// A setting given by an old name: `old` is now `new`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Renamed {
    /// The name given.
    pub old: &'static str,
    /// The setting's name.
    pub new: &'static str,
}

impl std::fmt::Display for Renamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is now called {}", self.old, self.new)
    }
}

/// A setting that does not parse, or that the job does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingError {
    /// No setting has this name.
    #[error("no setting {name:?}{}", near.map_or_else(String::new, |n| format!(" (did you mean {n}?)")))]
    Unknown {
        /// The name given.
        name: String,
        /// The setting whose name is closest, if one is close.
        near: Option<&'static str>,
    },
    /// The value does not parse.
    #[error("{name} {value:?}: {reason}")]
    Invalid {
        /// The setting.
        name: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The job does not take this setting.
    #[error("{name} is not a setting of {job} (it is of {})", jobs.join(", "))]
    NotForJob {
        /// The setting.
        name: &'static str,
        /// The job.
        job: &'static str,
        /// The jobs that take it.
        jobs: Vec<&'static str>,
    },
    /// `name=value` without the `=`.
    #[error("{0:?} is not NAME=VALUE (example: cluster_size=1000)")]
    NotAPair(String),
}

/// The setting called `name`, and whether `name` is one of its old names.
pub fn setting(name: &str) -> Option<(&'static Setting, Option<Renamed>)> {
    SETTINGS.iter().find_map(|s| {
        if s.name == name {
            Some((s, None))
        } else {
            s.aliases.iter().find(|a| **a == name).map(|old| {
                let renamed = Renamed { old, new: s.name };
                (s, Some(renamed))
            })
        }
    })
}

/// The setting whose name (or old name) is closest to `name`, if one is close.
fn nearest(name: &str) -> Option<&'static str> {
    let distance = |a: &str, b: &str| -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let next = (row[j + 1] + 1)
                    .min(row[j] + 1)
                    .min(diagonal + usize::from(ca != *cb));
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    };
    let name = name.replace('-', "_");
    SETTINGS
        .iter()
        .flat_map(|s| {
            std::iter::once(s.name)
                .chain(s.aliases.iter().copied())
                .map(move |n| (s.name, n))
        })
        .map(|(setting, n)| (distance(&name, n), setting))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, setting)| setting)
}

impl Settings {
    /// Sets the setting `name` (or an old name of it) from its text: the one parser of every
    /// door. A switch takes `true`/`false`, a list adds one value, a rule adds one `GLOB=VALUE`.
    /// Returns the [`Renamed`] note when `name` is an old name.
    ///
    /// # Errors
    /// [`SettingError::Unknown`] (with the nearest name) or [`SettingError::Invalid`] naming
    /// the setting, the value and what is wrong.
    pub fn set(&mut self, name: &str, value: &str) -> Result<Option<Renamed>, SettingError> {
        let (setting, renamed) = setting(name).ok_or_else(|| SettingError::Unknown {
            name: name.to_owned(),
            near: nearest(name),
        })?;
        (setting.set)(self, value).map_err(|reason| SettingError::Invalid {
            name: setting.name,
            value: value.to_owned(),
            reason,
        })?;
        Ok(renamed)
    }

    /// [`Settings::set`] from `NAME=VALUE` text, for a setting `job` takes.
    ///
    /// # Errors
    /// As for [`Settings::set`]; [`SettingError::NotAPair`] without `=`;
    /// [`SettingError::NotForJob`] for a setting the job does not take.
    pub fn set_for(&mut self, job: Jobs, pair: &str) -> Result<Option<Renamed>, SettingError> {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| SettingError::NotAPair(pair.to_owned()))?;
        let name = name.trim();
        if let Some((setting, _)) = setting(name)
            && !setting.jobs.contains(job)
        {
            return Err(SettingError::NotForJob {
                name: setting.name,
                job: job.names().next().unwrap_or("this job"),
                jobs: setting.jobs.names().collect(),
            });
        }
        self.set(name, value)
    }

    /// The writer's options of these settings.
    pub fn write_options(&self) -> WriteOptions {
        let mut write = WriteOptions::default()
            .codec(self.codec.unwrap_or(Codec::DEFAULT))
            .rac(self.rac)
            .rac_dictionary(self.rac_dictionary)
            .cluster_size(
                self.cluster_size
                    .unwrap_or(evtc_format::DEFAULT_CLUSTER_SIZE),
            )
            .flush_at_cluster(self.flush_at_cluster)
            .sync(self.sync)
            .threads(self.threads)
            .overwrite(self.overwrite);
        if let Some(bytes) = self.rac_unit {
            write = write.rac_unit_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
        }
        if let Some(bytes) = self.basket_size {
            write = write.basket_size(usize::try_from(bytes).unwrap_or(usize::MAX));
        }
        write
    }

    /// The readers' limit on a basket's uncompressed bytes, for [`evtc_format::ReadOptions`]
    /// and the ROOT reader.
    pub fn read_options(&self) -> evtc_format::ReadOptions {
        evtc_format::ReadOptions::default().max_basket_bytes(self.max_basket_size)
    }

    /// The one tree a job that reads one (a skim, adding columns) reads of the file at `path`
    /// whose trees are `trees`: the tree given, else the file's only tree.
    ///
    /// # Errors
    /// [`Error::Options`](crate::Error::Options) when more than one tree is given, or none and
    /// the file has several (naming them).
    pub fn one_tree(
        &self,
        job: &str,
        path: &std::path::Path,
        trees: &[evtc_format::TreeMeta],
    ) -> crate::Result<String> {
        match (self.trees.as_slice(), trees) {
            ([tree], _) => Ok(tree.clone()),
            ([], [only]) => Ok(only.name.clone()),
            ([], trees) => {
                let names: Vec<&str> = trees.iter().map(|t| t.name.as_str()).collect();
                Err(crate::Error::Options(format!(
                    "{} has {} trees ({}): name the one to {job} with the tree setting",
                    path.display(),
                    names.len(),
                    names.join(", ")
                )))
            }
            (more, _) => Err(crate::Error::Options(format!(
                "{job} reads one tree; {} were given ({})",
                more.len(),
                more.join(", ")
            ))),
        }
    }

    /// The output branch `name` of type `dtype` (counted by `counter`, of dimensions `shape`
    /// when it has two or more) with these settings: the per-branch rules that match it over
    /// the file-wide ones.
    pub fn branch_spec(
        &self,
        name: &str,
        dtype: DataType,
        counter: Option<&String>,
        shape: &[u32],
    ) -> BranchSpec {
        let mut spec = BranchSpec::new(name.to_owned(), dtype);
        if !shape.is_empty() {
            spec = spec.shape(shape.to_vec());
        }
        if let Some(counter) = counter {
            spec = spec.counter(counter.clone());
        }
        // Per field, the last rule that matches the branch and sets the field wins.
        let rules = self
            .branch_rules
            .iter()
            .rev()
            .filter(|(g, _)| g.matches(name))
            .map(|(_, s)| s);
        let boundary_choice = rules
            .clone()
            .find_map(|s| s.boundaries)
            .unwrap_or(self.boundaries);
        let rac = rules.clone().find_map(|s| s.rac);
        if dtype.is_variable() {
            let boundaries = match (boundary_choice, counter.is_some()) {
                // With a counter, the writer's default: `none`, or `counts` with RAC.
                (BoundaryChoice::Auto, true) => None,
                (BoundaryChoice::Auto, false) => Some(Boundaries::Counts),
                (BoundaryChoice::Offsets, _) => Some(Boundaries::Offsets),
                (BoundaryChoice::Counts, _) | (BoundaryChoice::None, false) => {
                    Some(Boundaries::Counts)
                }
                (BoundaryChoice::None, true) => Some(Boundaries::None),
            };
            if let Some(boundaries) = boundaries {
                spec = spec.boundaries(boundaries);
            }
        }
        if let Some(mode) = rac {
            spec = spec.rac(mode);
        }
        // RAC baskets store counts: with offsets asked for, `auto` leaves the branch without RAC
        // (an explicit `on` is refused by the writer with a clear error).
        if dtype.is_variable()
            && boundary_choice == BoundaryChoice::Offsets
            && rac.unwrap_or(self.rac) == RacMode::Auto
        {
            spec = spec.rac(RacMode::Off);
        }
        if let Some(codec) = rules.clone().find_map(|s| s.codec) {
            spec = spec.codec(codec);
        }
        let is_float =
            dtype.scalar().is_float() && !matches!(dtype, DataType::Bytes | DataType::Utf8);
        if let Some(bits) = rules
            .clone()
            .find_map(|s| s.mantissa_bits)
            .filter(|_| is_float)
        {
            spec = spec.mantissa_bits(bits);
        }
        if let Some(q) = rules.clone().find_map(|s| s.quantize).filter(|_| is_float) {
            spec = spec.quantize(q);
        }
        let width = Width::new(dtype.scalar().size() as u8).unwrap_or(Width::W1);
        let precondition = rules
            .clone()
            .find_map(|s| s.precondition)
            .unwrap_or(self.precondition);
        if let Some(precondition) = precondition.at(width) {
            spec = spec.precondition(precondition);
        }
        spec
    }
}

#[cfg(test)]
mod tests;
