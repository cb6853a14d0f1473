//! `evtc-tools` holds the jobs on whole files that the `evtc` command, the Python package and
//! the C API run: [`convert`] (ROOT TTrees and RNTuples, through `evtc-root`, and evtc files into
//! evtc files with new settings, as `TTree::CopyTree` into a new file would, or into ROOT files:
//! [`RootOutput`]), [`merge`](fn@merge), [`skim`](fn@skim) with its selection language
//! ([`Selection`]), [`add_columns`], and the codec advisor ([`advise`]); [`FileKind`] and
//! [`Input`] are the one test and opening of an input of either kind. Each command is a thin
//! layer over one of them. Every job's settings are one [`Settings`], whose vocabulary
//! ([`SETTINGS`]: names, old names, jobs, parser) every door shares; per-branch settings (codec,
//! preconditioner, RAC, boundaries, reduced float precision) are its [`Settings::branch_rules`].
//!
//! Conversion streams: entries are read in chunks (about 32 MiB of values each), columns of a
//! chunk are decoded in parallel, then written; memory stays bounded by the chunk and the
//! writer's own bound, whatever the input size. The output appears only when
//! the conversion succeeded (the writer's temporary file is renamed at the end).
//!
//! ```no_run
//! use evtc_tools::{Settings, convert};
//!
//! let mut settings = Settings::default();
//! settings.set("codec", "zstd:5")?;
//! settings.set("rac", "on")?;
//! settings.set("branch_codec", "HLT_*=lz4")?;
//! let summary = convert("nano.root".as_ref(), "nano.evtc".as_ref(), &settings, &mut |_| {})?;
//! println!("{} -> {} bytes", summary.input_bytes, summary.output_bytes);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod advise;
mod columns;
mod export;
mod glob;
mod merge;
mod options;
mod select;
mod settings;
mod skim;
mod source;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use evtc_format::{Boundaries, BranchSpec, DataType, FileWriter};
use serde::Serialize;

pub use columns::{AddColumnsReport, add_columns};
pub use evtc_format::Schemas;
pub use export::{RootBranch, RootOutput, RootOutputSummary};
pub use glob::Glob;
pub use merge::{MergeOptions, MergeReport, MergeStep, MergedTreeReport, expand_inputs, merge};
pub use options::{BoundaryChoice, BranchSettings, PreconditionChoice, parse_index_keys};
pub use select::{Column, Selection};
pub use settings::{
    Jobs, OutputFormat, Renamed, SETTINGS, Setting, SettingError, Settings, Shape, setting,
};
pub use skim::{Entries, SkimOptions, SkimReport, read_entry_list, skim};
use source::SourceTree;
pub use source::{FileKind, Input};

/// A `Result` whose error defaults to this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in a conversion.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing an evtc file failed.
    #[error(transparent)]
    Format(#[from] evtc_format::Error),
    /// Reading the ROOT input failed.
    #[error(transparent)]
    Root(#[from] evtc_root::Error),
    /// The input could not be opened or is neither a ROOT nor an evtc file.
    #[error("{path}: {reason}")]
    Input {
        /// The input path.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The options ask for something impossible (a glob that matches nothing, a tree that does
    /// not exist, converting a file onto itself).
    #[error("{0}")]
    Options(String),
    /// An output named `*.root` without a `to` setting: what to write there is not guessed.
    #[error(
        "{} is named as a ROOT file: say what to write there, to=rntuple (ROOT's RNTuple) or \
         to=ttree (a TTree), or to=evtc for an evtc file under that name",
        path.display()
    )]
    RootOutputUnsaid {
        /// The output.
        path: std::path::PathBuf,
    },
    /// A branch the reader does not support, without `skip_unsupported` (each front end names
    /// its own way to skip such branches).
    #[error("{0}")]
    Unsupported(evtc_root::Error),
    /// [`Settings::interrupt`] was raised: the conversion stopped after its current chunk.
    /// Nothing was written at the output; with [`Settings::keep_partial`], what was
    /// written so far is kept at `kept` (a file without footer for `evtc recover`).
    #[error("interrupted{}", kept.as_ref().map_or_else(
        || "; nothing was written".to_owned(),
        |p| format!("; the records written so far are kept in {}", p.display())
    ))]
    Interrupted {
        /// Where the partial file was kept, if it was.
        kept: Option<std::path::PathBuf>,
    },
    /// The data of a ROOT input's branch could not be read (a corrupt basket, impossible
    /// sizes). With `skip_unsupported`, [`convert`] leaves the branch out instead, listing it
    /// in the summary's `skipped`, and converts the rest.
    #[error("tree {tree:?} branch {branch:?}: its data cannot be read: {reason}")]
    UnreadableBranch {
        /// The tree.
        tree: String,
        /// The branch.
        branch: String,
        /// The reader's error.
        reason: String,
    },
}

/// Progress, reported after each chunk.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// The tree being converted.
    pub tree: &'a str,
    /// Entries of this tree done.
    pub entries: u64,
    /// Entries in this tree.
    pub total: u64,
    /// Uncompressed value bytes read so far, over all trees.
    pub bytes: u64,
}

/// A branch left out, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Tree path.
    pub tree: String,
    /// Branch name.
    pub branch: String,
    /// Its class or type.
    pub class: String,
    /// Why.
    pub reason: String,
}

/// One converted tree.
#[derive(Debug, Clone, Serialize)]
pub struct TreeSummary {
    /// Name in the output (the input path, `dir/name` for trees in subdirectories).
    pub name: String,
    /// Entries written.
    pub entries: u64,
    /// Branches written.
    pub branches: usize,
    /// The key branches of the tree's event index, as (major, minor): the input tree's index
    /// (a ROOT `TTreeIndex` on two branches, or an evtc index), or the one asked for.
    pub event_index: Option<(String, String)>,
    /// Why the input tree's index was not kept, when it was not.
    pub index_dropped: Option<String>,
}

/// What a conversion did.
#[derive(Debug, Clone, Serialize)]
pub struct ConvertSummary {
    /// `root` or `evtc`.
    pub input_format: &'static str,
    /// `evtc`, `rntuple` or `ttree`.
    pub output_format: String,
    /// Input file size.
    pub input_bytes: u64,
    /// Output file size.
    pub output_bytes: u64,
    /// Uncompressed bytes of values (and offsets) read from the input.
    pub value_bytes: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The trees written.
    pub trees: Vec<TreeSummary>,
    /// Branches left out.
    pub skipped: Vec<Skipped>,
    /// What could not be kept as it was in the output's format (ROOT output: random-access
    /// compression, evtc's preconditioners, names ROOT does not allow), in words.
    pub notes: Vec<String>,
}

/// Converts `input` (a ROOT or evtc file) into a new evtc file at `output`.
///
/// # Errors
/// [`Error::Input`] for unreadable or unrecognised input; [`Error::Options`] for a glob that
/// matches nothing, a missing tree or `output` naming the input; [`Error::Unsupported`] for an
/// unsupported ROOT branch without `skip_unsupported`; reader and writer errors. On error no file
/// is left at `output`.
pub fn convert(
    input: &Path,
    output: &Path,
    options: &Settings,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ConvertSummary> {
    let started = Instant::now();
    if let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize())
        && a == b
    {
        return Err(Error::Options(format!(
            "refusing to convert {} onto itself",
            input.display()
        )));
    }
    if options.append && options.overwrite {
        return Err(Error::Options(
            "append writes into the output in place; overwrite replaces it: choose one".into(),
        ));
    }
    let format = options.output_format(output)?;
    // What a conversion finds about its input only while reading it (a ROOT branch whose data
    // cannot be read, left out with skip_unsupported; ROOT strings that are not UTF-8, kept as
    // bytes) makes it start again with that known (nothing of the first attempt is kept).
    let mut learned = Learned::default();
    loop {
        let attempt = match format {
            OutputFormat::Evtc => {
                convert_to_evtc(input, output, options, &learned, started, progress)
            }
            _ => export::export(input, output, options, format, &learned, progress),
        };
        match attempt {
            Err(Error::UnreadableBranch {
                tree,
                branch,
                reason,
            }) if options.skip_unsupported
                && !learned
                    .unreadable
                    .iter()
                    .any(|u| u.tree == tree && u.branch == branch) =>
            {
                learned.unreadable.push(Skipped {
                    tree,
                    branch,
                    class: String::new(),
                    reason: format!("its data cannot be read: {reason}"),
                });
            }
            Err(Error::Format(evtc_format::Error::NotUtf8 { tree, branch }))
                if !learned.not_utf8.contains(&(tree.clone(), branch.clone())) =>
            {
                learned.not_utf8.push((tree, branch));
            }
            other => return other,
        }
    }
}

/// What a conversion learned of its input on earlier attempts.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    /// ROOT branches whose data cannot be read.
    pub(crate) unreadable: Vec<Skipped>,
    /// ROOT string branches, as (tree, branch), with entries that are not UTF-8.
    pub(crate) not_utf8: Vec<(String, String)>,
}

/// [`convert`] into an evtc file, with what earlier attempts `learned`.
fn convert_to_evtc(
    input: &Path,
    output: &Path,
    options: &Settings,
    learned: &Learned,
    started: Instant,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ConvertSummary> {
    let format = OutputFormat::Evtc;
    let (input_file, pool, mut summary) = start(input, options, format)?;
    let mut sources = source_trees(&input_file, options, learned, &mut summary)?;
    let mut writer = if options.append {
        FileWriter::append(output, options.write_options())?
    } else {
        FileWriter::create(output, options.write_options())?
    };
    for source in &mut sources {
        match write_tree(&mut writer, source, &pool, options, &mut summary, progress)? {
            Some(tree) => summary.trees.push(tree),
            None => {
                // An append keeps nothing: dropped, its writer leaves the file as it was.
                let kept = if options.keep_partial && !options.append {
                    let path = FileWriter::partial_path(output);
                    writer.keep_partial(&path)?;
                    Some(path)
                } else {
                    None
                };
                return Err(Error::Interrupted { kept });
            }
        }
    }
    writer.finish()?;
    summary.output_bytes = std::fs::metadata(output).map_or(0, |m| m.len());
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Records `tree`'s branches the reader does not support and the settings keep as skipped,
/// or refuses the first of them without `skip_unsupported`.
pub(crate) fn skip_unsupported(
    tree: &SourceTree<'_>,
    name: &str,
    settings: &Settings,
    skipped: &mut Vec<Skipped>,
) -> Result<()> {
    for u in tree.unsupported() {
        let wanted =
            settings.branches.is_empty() || settings.branches.iter().any(|g| g.matches(&u.name));
        if !wanted {
            continue;
        }
        if !settings.skip_unsupported {
            return Err(Error::Unsupported(u.to_error()));
        }
        skipped.push(Skipped {
            tree: name.to_owned(),
            branch: u.name.clone(),
            class: u.class.clone(),
            reason: u.reason.clone(),
        });
    }
    Ok(())
}

/// Refuses a branch glob (to keep, or of a per-branch rule) that matches no branch of the
/// trees.
pub(crate) fn check_globs(
    sources: &[SourceTree<'_>],
    settings: &Settings,
    trees: &[String],
) -> Result<()> {
    let matches_any = |glob: &Glob| {
        sources
            .iter()
            .any(|t| t.columns().iter().any(|c| glob.matches(&c.name)))
    };
    let globs = settings
        .branches
        .iter()
        .chain(settings.branch_rules.iter().map(|(g, _)| g));
    if let Some(glob) = globs.into_iter().find(|g| !matches_any(g)) {
        return Err(Error::Options(format!(
            "branch pattern \"{glob}\" matches no branch of {}",
            trees.join(", ")
        )));
    }
    Ok(())
}

/// The first steps of a conversion of `input` into `format`: the input opened, the thread
/// pool, and the summary to fill.
pub(crate) fn start(
    input: &Path,
    settings: &Settings,
    format: OutputFormat,
) -> Result<(Input, rayon::ThreadPool, ConvertSummary)> {
    let input_file = Input::open(input, Some(settings.max_basket_size))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(settings.threads.max(1))
        .build()
        .map_err(|e| Error::Options(format!("cannot start {} threads: {e}", settings.threads)))?;
    let summary = ConvertSummary {
        input_format: input_file.format(),
        output_format: format.to_string(),
        input_bytes: std::fs::metadata(input).map_or(0, |m| m.len()),
        output_bytes: 0,
        value_bytes: 0,
        seconds: 0.0,
        trees: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
    };
    Ok((input_file, pool, summary))
}

/// The trees of `input_file` the settings convert, their unsupported branches (and those
/// `learned` unreadable) left out and listed in `summary`, or refused, strings `learned` not
/// UTF-8 kept as bytes; the branch globs checked.
pub(crate) fn source_trees<'a>(
    input_file: &'a Input,
    settings: &Settings,
    learned: &Learned,
    summary: &mut ConvertSummary,
) -> Result<Vec<SourceTree<'a>>> {
    let trees = input_file.tree_names(&settings.trees)?;
    let mut sources = Vec::new();
    for name in &trees {
        let mut tree = input_file.tree(name)?;
        tree.leave_out(&learned.unreadable);
        let tree_name = tree.name().to_owned();
        for (t, branch) in learned.not_utf8.iter().filter(|(t, _)| *t == tree_name) {
            tree.strings_as_bytes(branch);
            summary.notes.push(format!(
                "tree {t:?} branch {branch:?}: strings that are not UTF-8, kept as bytes"
            ));
        }
        skip_unsupported(&tree, name, settings, &mut summary.skipped)?;
        sources.push(tree);
    }
    check_globs(&sources, settings, &trees)?;
    Ok(sources)
}

/// Converts one tree of the input into `writer` (a new tree, or, appending, entries after
/// those of the output's tree of that name); `None` when interrupted.
fn write_tree(
    writer: &mut FileWriter,
    source: &mut SourceTree<'_>,
    pool: &rayon::ThreadPool,
    options: &Settings,
    summary: &mut ConvertSummary,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Option<TreeSummary>> {
    let specs = branch_specs(source, options);
    let name = source.name().to_owned();
    let existing = writer.trees().iter().find(|t| t.name == name);
    let (mut tree, event_index, index_dropped) = match existing {
        Some(meta) => {
            same_schema(meta, &specs)?;
            if options.index.is_some() {
                return Err(Error::Options(format!(
                    "tree {name:?}: an event index is chosen for new trees only; entries appended \
                     to a tree go into the index it has (add one with `evtc index`)"
                )));
            }
            let keys = meta.event_index_keys();
            (writer.extend(&name)?, keys, None)
        }
        None => {
            let (event_index, index_dropped) = event_index(source, &specs, options)?;
            let mut tree = writer.tree(&name, specs.iter().map(|(s, _)| s.clone()).collect())?;
            if let Some((major, minor)) = &event_index {
                tree.index_by(major, minor)?;
            }
            (tree, event_index, index_dropped)
        }
    };
    let total = source.entries();
    let chunk = source.chunk_entries();
    let mut done = 0;
    while done < total {
        let end = (done + chunk).min(total);
        summary.value_bytes += pool.install(|| source.read(done..end))?;
        source.fill(&mut tree)?;
        tree.commit()?;
        done = end;
        progress(Progress {
            tree: &name,
            entries: done,
            total,
            bytes: summary.value_bytes,
        });
        if options
            .interrupt
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
        {
            return Ok(None);
        }
    }
    tree.finish()?;
    Ok(Some(TreeSummary {
        name,
        entries: total,
        branches: specs.len(),
        event_index,
        index_dropped,
    }))
}

/// Refuses to append entries whose branches are not those of the output's tree `meta` (names
/// and types, in order), naming the branches that differ.
fn same_schema(meta: &evtc_format::TreeMeta, specs: &[(BranchSpec, Option<usize>)]) -> Result<()> {
    let have: Vec<(&str, DataType)> = meta
        .branches
        .iter()
        .map(|b| (b.name.as_str(), b.dtype))
        .collect();
    let got: Vec<(&str, DataType)> = specs.iter().map(|(s, _)| (s.name(), s.dtype())).collect();
    if have == got {
        return Ok(());
    }
    /// The first names of a long list, and how many more.
    fn names(list: &[&str]) -> String {
        const SHOWN: usize = 12;
        match list.len().checked_sub(SHOWN) {
            Some(more) if more > 0 => format!("{} and {more} more", list[..SHOWN].join(", ")),
            _ => list.join(", "),
        }
    }
    let mut differences = Vec::new();
    let missing: Vec<&str> = have
        .iter()
        .filter(|(n, _)| !got.iter().any(|(g, _)| g == n))
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        differences.push(format!("the input lacks {}", names(&missing)));
    }
    let extra: Vec<&str> = got
        .iter()
        .filter(|(n, _)| !have.iter().any(|(h, _)| h == n))
        .map(|(n, _)| *n)
        .collect();
    if !extra.is_empty() {
        differences.push(format!("the file lacks {}", names(&extra)));
    }
    for (n, t) in &got {
        if let Some((_, was)) = have.iter().find(|(h, w)| h == n && w != t) {
            differences.push(format!("{n} is {was} in the file, {t} in the input"));
        }
    }
    if differences.is_empty() {
        differences.push("the branches are in another order".into());
    }
    Err(Error::Options(format!(
        "tree {:?}: the input's branches are not the file's, so its entries cannot be appended: {}",
        meta.name,
        differences.join("; ")
    )))
}

/// An event index's key branches: (major, minor).
type IndexKeys = (String, String);

/// The event index a converted tree gets (the one asked for, else the input's when its keys are
/// two integer branches of the output), and why the input's was dropped, if it was.
fn event_index(
    source: &SourceTree<'_>,
    specs: &[(BranchSpec, Option<usize>)],
    options: &Settings,
) -> Result<(Option<IndexKeys>, Option<String>)> {
    if let Some(keys) = &options.index {
        return Ok((Some(keys.clone()), None));
    }
    let Some((major, minor)) = source.index_keys()? else {
        return Ok((None, None));
    };
    let key = |name: &str| {
        specs
            .iter()
            .find(|(s, _)| s.name() == name)
            .is_some_and(|(s, _)| matches!(s.dtype(), DataType::Scalar(t) if t.is_integer()))
    };
    Ok(if key(&major) && key(&minor) {
        (Some((major, minor)), None)
    } else {
        let why = format!(
            "its index on ({major}, {minor}) is not kept: its keys are not two integer branches \
             of the output"
        );
        (None, Some(why))
    })
}

/// Which of `columns` the branch globs keep (all without globs), with the counters of kept
/// arrays.
pub(crate) fn kept_columns(columns: &[source::ColumnInfo], branches: &[Glob]) -> Vec<bool> {
    let mut keep: Vec<bool> = columns
        .iter()
        .map(|c| branches.is_empty() || branches.iter().any(|g| g.matches(&c.name)))
        .collect();
    for i in 0..columns.len() {
        if keep[i]
            && let Some(counter) = &columns[i].counter
            && let Some(j) = columns.iter().position(|c| &c.name == counter)
        {
            keep[j] = true;
        }
    }
    keep
}

/// The output branches of a tree, each with the index of the source column that feeds it
/// (`None` for the extra branch of a list of lists, filled together with its column).
fn branch_specs(
    source: &mut SourceTree<'_>,
    options: &Settings,
) -> Vec<(BranchSpec, Option<usize>)> {
    let columns = source.columns();
    let keep = kept_columns(columns, &options.branches);
    let mut specs = Vec::new();
    for (i, c) in columns.iter().enumerate() {
        if !keep[i] {
            continue;
        }
        let counter = c.counter.as_ref().filter(|n| {
            columns
                .iter()
                .any(|o| &o.name == *n && matches!(o.dtype, DataType::Scalar(t) if t.is_integer()))
        });
        let counter = counter.filter(|_| c.nested == 0);
        let spec = options.branch_spec(&c.name, c.dtype, counter, &c.shape);
        specs.push((spec, Some(i)));
        let boundaries = match options.boundaries {
            BoundaryChoice::Offsets => Boundaries::Offsets,
            _ => Boundaries::Counts,
        };
        let mut sizes_name = c.name.clone();
        for _ in 0..c.nested {
            sizes_name.push_str("/sizes");
            let sizes = BranchSpec::jagged(sizes_name.clone(), evtc_format::ScalarType::U32)
                .boundaries(boundaries);
            specs.push((sizes, None));
        }
    }
    source.select(&specs);
    specs
}

/// The output branch of an evtc branch written again with `settings` (a merge's or a skim's
/// `recompress`): its name, type, counter and dimensions kept.
pub(crate) fn respec(meta: &evtc_format::BranchMeta, settings: &Settings) -> BranchSpec {
    let shape = meta.shape().unwrap_or_default();
    settings.branch_spec(&meta.name, meta.dtype, meta.counter.as_ref(), &shape)
}
