//! Merging evtc files ([`merge`]): each tree of the inputs, one input after the other, into one
//! file, as ROOT's `hadd` does. Baskets are copied as they are stored wherever the input's branch
//! is laid out as the output's (its baskets then read the same in either file); otherwise its
//! entries are read and written again. Clusters are kept.
//!
//! The output's branches are laid out as the first input that has them ([`BranchSpec::like`]):
//! type, counter, boundaries, codec, RAC and its dictionary, extensions. An input's branch is
//! copied when its type, counter, boundaries, codec algorithm, RAC, entry-size and dictionary
//! extensions, lossy reductions and dictionary bytes are the output's: the codec level and the
//! preconditioner may differ, since every block and seek table names its own. At most one input
//! is open at a time, and at most one cluster of one branch is in memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::meta::{BranchMeta, DataType, EXT_MERGE_DEFAULTS, Extension, ScalarType};
use crate::ops::transfer::{Pair, SPAN_BYTES, by_type, copy_baskets, copy_span, rewrite};
use crate::reader::{FileReader, ReadOptions, TreeReader};
use crate::schema::{BranchSpec, ClusterSize, WriteOptions};
use crate::writer::{FileWriter, TreeWriter};

/// Which branches a merged tree has when its inputs' differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schemas {
    /// Every input has the same branches, or the merge is refused naming the differences.
    #[default]
    Same,
    /// Every branch of any input; where an input lacks one, it reads as its type's default
    /// there (zeros, empty lists, or zeros as many as its counter says), recorded in the tree's
    /// extension [`EXT_MERGE_DEFAULTS`].
    Union,
    /// The branches every input has.
    Intersect,
}

impl std::str::FromStr for Schemas {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Schemas, String> {
        match s {
            "same" => Ok(Schemas::Same),
            "union" => Ok(Schemas::Union),
            "intersect" => Ok(Schemas::Intersect),
            other => Err(format!(
                "unknown schema rule {other:?} (expected same, union or intersect)"
            )),
        }
    }
}

/// Where a merge is: for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergeProgress<'a> {
    /// The tree being merged.
    pub tree: &'a str,
    /// The input being read (0-based) and the number of inputs.
    pub input: usize,
    /// The number of inputs.
    pub inputs: usize,
    /// The tree's entries written so far.
    pub entries: u64,
}

/// How to merge ([`merge`]).
pub struct MergeOptions<'a> {
    /// Which branches the output's trees have.
    pub schemas: Schemas,
    /// The output's writer settings. Where baskets are copied, only their threads (for the
    /// entries written again), sync and limits matter; clusters follow the inputs'.
    pub write: WriteOptions,
    /// The inputs' reader settings.
    pub read: ReadOptions,
    /// When set, every branch is written again, as this spec (from the output branch's layout
    /// in the first input that has it) says, and clusters follow `write`'s: a re-encoding
    /// merge, copying nothing.
    pub respec: Option<&'a dyn Fn(&BranchMeta) -> BranchSpec>,
}

impl Default for MergeOptions<'_> {
    fn default() -> Self {
        MergeOptions {
            schemas: Schemas::Same,
            write: WriteOptions::default(),
            read: ReadOptions::default(),
            respec: None,
        }
    }
}

impl std::fmt::Debug for MergeOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergeOptions")
            .field("schemas", &self.schemas)
            .field("write", &self.write)
            .field("recompress", &self.respec.is_some())
            .finish_non_exhaustive()
    }
}

/// What a merge did, tree by tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeSummary {
    /// The merged trees, in output order.
    pub trees: Vec<MergedTree>,
}

/// What a merge did with one tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergedTree {
    /// The tree's name.
    pub name: String,
    /// Its entries in the output.
    pub entries: u64,
    /// The inputs that had it.
    pub inputs: usize,
    /// Its branches in the output.
    pub branches: usize,
    /// Baskets copied as they were stored.
    pub copied_baskets: u64,
    /// Branch-inputs whose entries were written again (their layout differed, or a re-encoding
    /// merge), as (branch, input path).
    pub rewritten: Vec<(String, String)>,
    /// Branches an input lacked, filled with their type's default there (union), as (branch,
    /// input path).
    pub defaulted: Vec<(String, String)>,
    /// Branches left out because an input lacked them (intersection).
    pub dropped: Vec<String>,
    /// The key branches of the output's event index: kept when every input had an index of the
    /// same keys (docs/format.md 3.6), as (major, minor).
    pub event_index: Option<(String, String)>,
}

/// The event index of a merged tree as its inputs go in.
#[derive(Debug, Default)]
enum IndexMerge {
    /// No input yet.
    #[default]
    Start,
    /// Every input so far had an index of these keys: the keys of their entries, in order.
    Keys {
        major: String,
        minor: String,
        majors: Vec<u64>,
        minors: Vec<u64>,
    },
    /// An input had none, or another.
    None,
}

/// One output tree: its branches and the inputs that have it, with their entries.
struct TreePlan {
    name: String,
    /// Each output branch: its name, type and counter, and the first input that has it.
    branches: Vec<(String, DataType, Option<String>, usize)>,
    /// The inputs that have the tree.
    inputs: Vec<usize>,
    dropped: Vec<String>,
}

/// Concatenates the trees of `inputs` (evtc files), in order, into a new file at `output`, named
/// only when complete (as [`FileWriter`] does); `progress` hears of each cluster merged.
///
/// ```
/// use evtc_format::{merge, BranchSpec, FileReader, FileWriter, MergeOptions, ScalarType, WriteOptions};
/// let dir = tempfile::tempdir()?;
/// let mut inputs = Vec::new();
/// for (i, values) in [[1u32, 2], [3, 4]].iter().enumerate() {
///     let path = dir.path().join(format!("part{i}.evtc"));
///     let mut file = FileWriter::create(&path, WriteOptions::default())?;
///     let mut tree = file.tree("Events", vec![BranchSpec::scalar("run", ScalarType::U32)])?;
///     tree.fill_column(0, values)?;
///     tree.commit()?;
///     tree.finish()?;
///     file.finish()?;
///     inputs.push(path);
/// }
/// let out = dir.path().join("all.evtc");
/// let summary = merge(&out, &inputs, &MergeOptions::default(), &mut |_| {})?;
/// assert_eq!(summary.trees[0].copied_baskets, 2);
/// let run = FileReader::open(&out)?.tree("Events")?.branch("run")?.read::<u32>()?;
/// assert_eq!(run, [1, 2, 3, 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::InvalidSchema`] naming the input, tree and branches when schemas differ (under
/// [`Schemas::Same`]) or a branch's type or counter differs between inputs (always);
/// [`Error::Request`] for no inputs or an output that is one of them; every reader and writer
/// error, naming its file ([`Error::InFile`]). Nothing is left at `output` on error.
pub fn merge(
    output: &Path,
    inputs: &[PathBuf],
    options: &MergeOptions<'_>,
    progress: &mut dyn FnMut(MergeProgress<'_>),
) -> Result<MergeSummary> {
    if inputs.is_empty() {
        return Err(Error::Request("no inputs to merge".into()));
    }
    refuse_output_among_inputs(output, inputs)?;
    let plans = plan(inputs, options)?;
    let write = match options.respec {
        Some(_) => options.write.clone(),
        // Clusters follow the inputs' (`TreeWriter::end_cluster`).
        None => options
            .write
            .clone()
            .cluster_size(ClusterSize::Entries(u64::MAX))
            .max_cluster_bytes(u64::MAX),
    };
    let mut file = FileWriter::create(output, write)?;
    let mut summary = MergeSummary::default();
    for plan in &plans {
        summary
            .trees
            .push(merge_tree(&mut file, inputs, plan, options, progress)?);
    }
    file.finish()?;
    Ok(summary)
}

fn invalid(tree: &str, reason: String) -> Error {
    Error::InvalidSchema {
        tree: tree.to_owned(),
        reason,
    }
}

/// Refuses an output that is one of the inputs (by their canonical paths).
fn refuse_output_among_inputs(output: &Path, inputs: &[PathBuf]) -> Result<()> {
    let canonical = |p: &Path| -> Option<PathBuf> {
        let name = p.file_name()?;
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.canonicalize().ok()?,
            _ => std::env::current_dir().ok()?,
        };
        Some(dir.join(name))
    };
    let out = canonical(output);
    if let Some(input) = inputs.iter().find(|i| out.is_some() && canonical(i) == out) {
        return Err(Error::Request(format!(
            "the output {} is one of the inputs ({}): merge into a new file",
            output.display(),
            input.display()
        )));
    }
    Ok(())
}

/// Opens input `i`.
fn open(inputs: &[PathBuf], i: usize, options: &ReadOptions) -> Result<FileReader> {
    FileReader::open_with(&inputs[i], options.clone()).map_err(|e| e.in_file(&inputs[i]))
}

/// Reads every input's footer (one open at a time) and decides each output tree's branches.
fn plan(inputs: &[PathBuf], options: &MergeOptions<'_>) -> Result<Vec<TreePlan>> {
    let mut plans: Vec<TreePlan> = Vec::new();
    // Per tree: the branch names each input has, for the intersection.
    let mut seen: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    for i in 0..inputs.len() {
        let file = open(inputs, i, &options.read)?;
        for tree in file.trees() {
            let at = match plans.iter().position(|p| p.name == tree.name) {
                Some(at) => at,
                None => {
                    plans.push(TreePlan {
                        name: tree.name.clone(),
                        branches: Vec::new(),
                        inputs: Vec::new(),
                        dropped: Vec::new(),
                    });
                    plans.len() - 1
                }
            };
            let plan = &mut plans[at];
            let first = plan.inputs.is_empty();
            plan.inputs.push(i);
            for b in &tree.branches {
                match plan.branches.iter().find(|(n, ..)| *n == b.name) {
                    Some((_, dtype, counter, from)) => {
                        if *dtype != b.dtype || *counter != b.counter {
                            return Err(invalid(
                                &tree.name,
                                format!(
                                    "branch {:?} is {}{} in {} but {}{} in {}",
                                    b.name,
                                    dtype,
                                    counted(counter),
                                    inputs[*from].display(),
                                    b.dtype,
                                    counted(&b.counter),
                                    inputs[i].display()
                                ),
                            ));
                        }
                    }
                    None => {
                        if !first && options.schemas == Schemas::Same {
                            return Err(differs(inputs, plan, i, &b.name, "has"));
                        }
                        plan.branches
                            .push((b.name.clone(), b.dtype, b.counter.clone(), i));
                    }
                }
            }
            if options.schemas == Schemas::Same
                && let Some((name, ..)) = plan
                    .branches
                    .iter()
                    .find(|(n, ..)| !tree.branches.iter().any(|b| &b.name == n))
            {
                let name = name.clone();
                return Err(differs(inputs, plan, i, &name, "lacks"));
            }
            seen.entry(tree.name.clone())
                .or_default()
                .push(tree.branches.iter().map(|b| b.name.clone()).collect());
        }
    }
    if options.schemas == Schemas::Same
        && let Some(plan) = plans.iter().find(|p| p.inputs.len() != inputs.len())
    {
        let missing = (0..inputs.len())
            .find(|i| !plan.inputs.contains(i))
            .unwrap_or(0);
        return Err(invalid(
            &plan.name,
            format!(
                "{} has no tree {:?}, which {} has (merge --union or --intersect merges the \
                 trees some inputs lack)",
                inputs[missing].display(),
                plan.name,
                inputs[plan.inputs[0]].display()
            ),
        ));
    }
    if options.schemas == Schemas::Intersect {
        plans.retain(|p| p.inputs.len() == inputs.len());
        for plan in &mut plans {
            let lists = &seen[&plan.name];
            let (kept, dropped): (Vec<_>, Vec<_>) = plan
                .branches
                .drain(..)
                .partition(|(n, ..)| lists.iter().all(|l| l.contains(n)));
            plan.branches = kept;
            plan.dropped = dropped.into_iter().map(|(n, ..)| n).collect();
            // A branch whose counter was dropped cannot be written without it.
            let names: Vec<String> = plan.branches.iter().map(|(n, ..)| n.clone()).collect();
            if let Some((n, _, Some(c), _)) = plan
                .branches
                .iter()
                .find(|(_, _, c, _)| c.as_ref().is_some_and(|c| !names.contains(c)))
            {
                return Err(invalid(
                    &plan.name,
                    format!("branch {n:?} is in every input, but its counter {c:?} is not"),
                ));
            }
        }
    }
    Ok(plans)
}

fn counted(counter: &Option<String>) -> String {
    counter
        .as_ref()
        .map_or_else(String::new, |c| format!(" counted by {c:?}"))
}

/// The error for input `i`, which `has` (or `lacks`) branch `name` where the first input does
/// not (does).
fn differs(inputs: &[PathBuf], plan: &TreePlan, i: usize, name: &str, has: &str) -> Error {
    invalid(
        &plan.name,
        format!(
            "{} {has} branch {name:?}, unlike {} (merge --union keeps every branch, --intersect \
             the common ones)",
            inputs[i].display(),
            inputs[plan.inputs[0]].display()
        ),
    )
}

/// How one branch of one input goes into the output.
enum Way {
    /// Its baskets copied.
    Copy(usize),
    /// Its entries read and written again.
    Rewrite(usize),
    /// Missing: its type's default.
    Default,
}

/// Writes one output tree from its inputs.
fn merge_tree(
    file: &mut FileWriter,
    inputs: &[PathBuf],
    plan: &TreePlan,
    options: &MergeOptions<'_>,
    progress: &mut dyn FnMut(MergeProgress<'_>),
) -> Result<MergedTree> {
    // The output's branches, laid out as the first input that has each.
    let mut layouts: Vec<(BranchMeta, Option<Vec<u8>>)> = Vec::with_capacity(plan.branches.len());
    let mut opened: Option<(usize, FileReader)> = None;
    for (name, _, _, from) in &plan.branches {
        if opened.as_ref().is_none_or(|(i, _)| i != from) {
            opened = Some((*from, open(inputs, *from, &options.read)?));
        }
        let reader = &opened.as_ref().expect("opened above").1;
        let tree = reader.tree(&plan.name)?;
        let branch = tree.branch(name)?;
        let dictionary = match options.respec {
            Some(_) => None,
            None => branch.dictionary_bytes()?,
        };
        layouts.push((branch.meta().clone(), dictionary));
    }
    drop(opened);
    let specs: Vec<BranchSpec> = layouts
        .iter()
        .map(|(meta, dictionary)| match options.respec {
            Some(respec) => respec(meta),
            None => BranchSpec::like(meta, dictionary.clone()),
        })
        .collect();
    let out = file.tree(&plan.name, specs)?;
    let mut merging = TreeMerge {
        out,
        layouts,
        merged: MergedTree {
            name: plan.name.clone(),
            inputs: plan.inputs.len(),
            branches: plan.branches.len(),
            dropped: plan.dropped.clone(),
            ..MergedTree::default()
        },
        defaults: Vec::new(),
        span: Vec::new(),
        index: IndexMerge::Start,
    };
    for (k, &i) in plan.inputs.iter().enumerate() {
        let reader = open(inputs, i, &options.read)?;
        merging
            .input(&reader, &inputs[i], (k, plan), options, progress)
            .map_err(|e| e.in_file(&inputs[i]))?;
    }
    merging.finish()
}

/// One output tree being written: its layouts and what was done so far.
struct TreeMerge<'f> {
    out: TreeWriter<'f>,
    /// Each output branch's layout and dictionary.
    layouts: Vec<(BranchMeta, Option<Vec<u8>>)>,
    merged: MergedTree,
    /// The `merge-defaults` extension's items so far.
    defaults: Vec<u8>,
    /// The records of a cluster read at once, reused.
    span: Vec<u8>,
    index: IndexMerge,
}

impl TreeMerge<'_> {
    /// Appends the tree's entries of `reader` (at `path`, the `k`-th input of `plan`), cluster
    /// by cluster, branch by branch.
    fn input(
        &mut self,
        reader: &FileReader,
        path: &Path,
        (k, plan): (usize, &TreePlan),
        options: &MergeOptions<'_>,
        progress: &mut dyn FnMut(MergeProgress<'_>),
    ) -> Result<()> {
        let tree = reader.tree(&plan.name)?;
        self.gather_index(&tree)?;
        let shown = path.display().to_string();
        let ways: Vec<Way> = self
            .layouts
            .iter()
            .map(|(meta, dictionary)| way(&tree, meta, dictionary.as_deref(), options))
            .collect::<Result<_>>()?;
        let base = self.out.entries();
        for (b, ((meta, _), way)) in self.layouts.iter().zip(&ways).enumerate() {
            match way {
                Way::Copy(_) => {}
                Way::Rewrite(_) => self
                    .merged
                    .rewritten
                    .push((meta.name.clone(), shown.clone())),
                Way::Default => {
                    self.merged
                        .defaulted
                        .push((meta.name.clone(), shown.clone()));
                    if tree.entries() > 0 {
                        self.defaults.extend_from_slice(&(b as u32).to_le_bytes());
                        self.defaults.extend_from_slice(&base.to_le_bytes());
                        self.defaults
                            .extend_from_slice(&tree.entries().to_le_bytes());
                    }
                }
            }
        }
        // The branch indexes, one read for all (a writer puts them together).
        tree.load_indexes(SPAN_BYTES)?;
        let all_copied = ways.iter().all(|w| matches!(w, Way::Copy(_)));
        let mut start = 0;
        for &end in &tree.meta().cluster_ends {
            if all_copied {
                let pairs: Vec<Pair> = ways
                    .iter()
                    .enumerate()
                    .filter_map(|(b, w)| match w {
                        Way::Copy(from) => Some((*from, b)),
                        _ => None,
                    })
                    .collect();
                self.merged.copied_baskets += copy_span(
                    &mut self.out,
                    (reader, &tree),
                    &pairs,
                    start..end,
                    &mut self.span,
                )?;
            }
            for (b, way) in ways.iter().enumerate() {
                let out = &mut self.out;
                match *way {
                    Way::Copy(_) if all_copied => {}
                    Way::Copy(from) => {
                        self.merged.copied_baskets +=
                            copy_baskets(out, b, &tree, from, start..end)?;
                    }
                    Way::Rewrite(from) => rewrite(out, b, &tree, from, start..end, None)?,
                    Way::Default => {
                        let meta = &self.layouts[b].0;
                        fill_default(out, b, meta, &tree, &self.layouts, start..end)?;
                    }
                }
            }
            self.out.commit()?;
            if options.respec.is_none() {
                self.out.end_cluster()?;
            }
            progress(MergeProgress {
                tree: &plan.name,
                input: k,
                inputs: plan.inputs.len(),
                entries: self.out.entries(),
            });
            start = end;
        }
        Ok(())
    }

    /// Appends the keys of `tree`'s entries to the index the output gets, or gives the index
    /// up when `tree` has none or one of other keys (or the output lacks a key branch).
    fn gather_index(&mut self, tree: &TreeReader<'_>) -> Result<()> {
        let index = tree.event_index()?;
        let kept = |name: &str| self.layouts.iter().any(|(m, _)| m.name == name);
        self.index = match (std::mem::take(&mut self.index), index) {
            (IndexMerge::Start, Some(index))
                if kept(index.key_names().0) && kept(index.key_names().1) =>
            {
                let (majors, minors) = index.keys_by_entry()?;
                IndexMerge::Keys {
                    major: index.key_names().0.to_owned(),
                    minor: index.key_names().1.to_owned(),
                    majors,
                    minors,
                }
            }
            (
                IndexMerge::Keys {
                    major,
                    minor,
                    mut majors,
                    mut minors,
                },
                Some(index),
            ) if index.key_names() == (major.as_str(), minor.as_str()) => {
                let (more_majors, more_minors) = index.keys_by_entry()?;
                majors.extend(more_majors);
                minors.extend(more_minors);
                IndexMerge::Keys {
                    major,
                    minor,
                    majors,
                    minors,
                }
            }
            _ => IndexMerge::None,
        };
        Ok(())
    }

    /// Writes the tree's indexes and its `merge-defaults` extension, if any.
    fn finish(mut self) -> Result<MergedTree> {
        if let IndexMerge::Keys {
            major,
            minor,
            majors,
            minors,
        } = std::mem::take(&mut self.index)
        {
            self.out.set_index_keys(&major, &minor, majors, minors)?;
            self.merged.event_index = Some((major, minor));
        }
        if !self.defaults.is_empty() {
            self.out.set_extension(Extension {
                key: EXT_MERGE_DEFAULTS.into(),
                required: false,
                value: std::mem::take(&mut self.defaults),
            });
        }
        self.merged.entries = self.out.entries();
        self.out.finish()?;
        Ok(self.merged)
    }
}

/// How the input's branch of the output's `meta` goes in: copied when laid out the same (see
/// the module's docs), else written again; its type's default when the input lacks it.
fn way(
    tree: &TreeReader<'_>,
    meta: &BranchMeta,
    dictionary: Option<&[u8]>,
    options: &MergeOptions<'_>,
) -> Result<Way> {
    let Some(at) = tree.branches().iter().position(|b| b.name == meta.name) else {
        return Ok(Way::Default);
    };
    if options.respec.is_some() {
        return Ok(Way::Rewrite(at));
    }
    let theirs = &tree.branches()[at];
    let same = theirs.dtype == meta.dtype
        && theirs.counter == meta.counter
        && theirs.boundaries == meta.boundaries
        && theirs.codec == meta.codec
        && theirs.rac == meta.rac
        && theirs.extensions == meta.extensions;
    if !same {
        return Ok(Way::Rewrite(at));
    }
    // A dictionary is the branch's: units compressed against another cannot be copied.
    let their_dictionary = tree.branch(&meta.name)?.dictionary_bytes()?;
    Ok(if their_dictionary.as_deref() == dictionary {
        Way::Copy(at)
    } else {
        Way::Rewrite(at)
    })
}

/// Fills entries `range` of output branch `b` (of `meta`), which the input lacks, with its
/// type's default: zeros, or empty lists, or zeros as many as its counter says when the input
/// has the counter.
fn fill_default(
    out: &mut TreeWriter<'_>,
    b: usize,
    meta: &BranchMeta,
    tree: &TreeReader<'_>,
    layouts: &[(BranchMeta, Option<Vec<u8>>)],
    range: std::ops::Range<u64>,
) -> Result<()> {
    let n = (range.end - range.start) as usize;
    let counts: Vec<u32> = match (&meta.counter, meta.dtype.fixed_len()) {
        (_, Some(_)) => Vec::new(),
        (Some(counter), None) if tree.branches().iter().any(|m| &m.name == counter) => {
            let counter_meta = &layouts
                .iter()
                .find(|(m, _)| &m.name == counter)
                .expect("a counter is a branch of the tree")
                .0;
            counts_of(tree, counter, counter_meta.dtype.scalar(), range)?
        }
        _ => vec![0; n],
    };
    macro_rules! go {
        ($t:ty) => {{
            match meta.dtype.fixed_len() {
                Some(len) => out.fill_column(b, &vec![<$t>::default(); n * len]),
                None => {
                    let total: usize = counts.iter().map(|&c| c as usize).sum();
                    out.fill_jagged(b, &counts, &vec![<$t>::default(); total])
                }
            }
        }};
    }
    by_type!(meta.dtype.scalar(), go)
}

/// The values of integer branch `counter` (of type `t`) for entries `range`, as counts.
fn counts_of(
    tree: &TreeReader<'_>,
    counter: &str,
    t: ScalarType,
    range: std::ops::Range<u64>,
) -> Result<Vec<u32>> {
    let branch = tree.branch(counter)?;
    macro_rules! go {
        ($t:ty) => {
            Ok(branch
                .read_range::<$t>(range)?
                .into_iter()
                .map(|v| u32::try_from(v as i128).unwrap_or(0))
                .collect())
        };
    }
    match t {
        ScalarType::I8 => go!(i8),
        ScalarType::U8 => go!(u8),
        ScalarType::I16 => go!(i16),
        ScalarType::U16 => go!(u16),
        ScalarType::I32 => go!(i32),
        ScalarType::U32 => go!(u32),
        ScalarType::I64 => go!(i64),
        ScalarType::U64 => go!(u64),
        other => Err(invalid(
            tree.name(),
            format!("counter {counter:?} is a {other} branch"),
        )),
    }
}
