//! Skimming an evtc file ([`skim`]): the entries a list, a mask or a selection expression keeps,
//! and the branches globs keep, through [`evtc_format::skim`] (whole baskets copied as stored).

use std::path::Path;
use std::time::Instant;

use evtc_format::{BranchMeta, DataType, FileReader, ScalarType, TreeReader, TreeSelection};
use serde::Serialize;

use crate::select::{Column, Selection};
use crate::source::FileKind;
use crate::{Error, Glob, Result, Settings};

/// Which entries a skim keeps.
#[derive(Debug, Clone, Default)]
pub enum Entries {
    /// Every entry (a skim of branches).
    #[default]
    All,
    /// These entries (written in the file's order, each once, whatever the order given).
    List(Vec<u64>),
    /// The entries whose flag is set: one flag per entry of the tree.
    Mask(Vec<bool>),
    /// The entries a selection expression passes.
    Where(Selection),
}

/// How to skim: the entries kept, and the settings (the tree, from `settings.trees`: the one
/// given, else the file's only tree; the branches kept, by glob, from `settings.branches`,
/// with the counters of kept branches and the `name/sizes` branches of kept nested lists).
#[derive(Debug, Clone, Default)]
pub struct SkimOptions {
    /// The entries kept.
    pub entries: Entries,
    /// Write every kept branch again with `settings` instead of copying whole baskets.
    pub recompress: bool,
    /// The tree, the branches, the writing settings (with `recompress`, the codecs and layout
    /// too) and the reader's limit.
    pub settings: Settings,
}

/// What a skim did.
#[derive(Debug, Clone, Serialize)]
pub struct SkimReport {
    /// The tree.
    pub tree: String,
    /// Entries kept.
    pub entries: u64,
    /// Entries in the input.
    pub of: u64,
    /// Branches kept.
    pub branches: usize,
    /// Baskets copied as stored.
    pub copied_baskets: u64,
    /// Baskets read and written again (some of their entries kept; of random-access ones, the
    /// units not copied).
    pub rewritten_baskets: u64,
    /// RAC units copied as stored from random-access baskets kept in part.
    pub copied_units: u64,
    /// The output's event index (major, minor): kept when the input has one and both key
    /// branches are kept.
    pub event_index: Option<(String, String)>,
    /// Seconds spent evaluating the selection expression (0 without one).
    pub selection_seconds: f64,
    /// Input file size.
    pub input_bytes: u64,
    /// Output file size.
    pub output_bytes: u64,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Entries listed in the text file at `path`: one per line, or a half-open range `A..B`;
/// blank lines and lines starting with `#` skipped.
///
/// # Errors
/// [`Error::Options`] naming the file and the line that is not an entry or a range.
pub fn read_entry_list(path: &Path) -> Result<Vec<u64>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Options(format!(
            "cannot read the entry list {}: {e}",
            path.display()
        ))
    })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || {
            Error::Options(format!(
                "{} line {}: {line:?} is not an entry number or a range A..B",
                path.display(),
                n + 1
            ))
        };
        match line.split_once("..") {
            Some((a, b)) => {
                let (a, b): (u64, u64) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                out.extend(a..b);
            }
            None => out.push(line.parse().map_err(|_| bad())?),
        }
    }
    Ok(out)
}

/// Writes the kept entries and branches of one tree of `input` (an evtc file) into a new evtc
/// file at `output`, named only when complete.
///
/// # Errors
/// [`Error::Options`] for a ROOT input, a tree to name, a glob that matches no branch, a mask
/// of another length, a selection naming a missing or string branch or giving a list per
/// entry, entries past the tree's end; reader and writer errors. Nothing is left at `output`
/// on error.
pub fn skim(
    input: &Path,
    output: &Path,
    options: &SkimOptions,
    progress: &mut dyn FnMut(evtc_format::SkimProgress<'_>),
) -> Result<SkimReport> {
    let started = Instant::now();
    if FileKind::of_path(input)? == FileKind::Root {
        return Err(Error::Options(format!(
            "{} is a ROOT file: skim reads evtc files (`evtc convert` it first; its --branches \
             and --tree keep branches and trees)",
            input.display()
        )));
    }
    let settings = &options.settings;
    let read = settings.read_options().threads(settings.threads);
    let reader = FileReader::open_with(input, read.clone())?;
    let tree_name = settings.one_tree("skim", input, reader.trees())?;
    let tree = reader.tree(&tree_name)?;
    let branches = kept_branches(&tree, &settings.branches)?;
    let total = tree.entries();
    let selecting = Instant::now();
    let entries = match &options.entries {
        Entries::All => (0..total).collect(),
        Entries::List(list) => {
            let mut list = list.clone();
            list.sort_unstable();
            list.dedup();
            list
        }
        Entries::Mask(mask) => {
            if mask.len() as u64 != total {
                return Err(Error::Options(format!(
                    "the mask has {} flags, tree {tree_name:?} has {total} entries",
                    mask.len()
                )));
            }
            (0..total).filter(|&e| mask[e as usize]).collect()
        }
        Entries::Where(selection) => select(&tree, selection)?,
    };
    let selection_seconds = match options.entries {
        Entries::Where(_) => selecting.elapsed().as_secs_f64(),
        _ => 0.0,
    };
    let respec = |meta: &BranchMeta| crate::respec(meta, settings);
    // The input is opened again by the skim itself.
    drop(reader);
    let done = evtc_format::skim(
        input,
        output,
        &[TreeSelection {
            tree: tree_name,
            entries,
            branches,
        }],
        &evtc_format::SkimOptions {
            write: settings.write_options(),
            read,
            respec: options.recompress.then_some(&respec as _),
        },
        progress,
    )?;
    let t = done.into_iter().next().expect("one tree asked for");
    Ok(SkimReport {
        tree: t.name,
        entries: t.entries,
        of: t.of,
        branches: t.branches,
        copied_baskets: t.copied_baskets,
        rewritten_baskets: t.rewritten_baskets,
        copied_units: t.copied_units,
        event_index: t.event_index,
        selection_seconds,
        input_bytes: std::fs::metadata(input).map_or(0, |m| m.len()),
        output_bytes: std::fs::metadata(output).map_or(0, |m| m.len()),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The names of the branches `globs` keep (all without globs), with the counters of kept
/// branches and the `name/sizes` chains of kept nested lists; `None` for all.
pub(crate) fn kept_branches(tree: &TreeReader<'_>, globs: &[Glob]) -> Result<Option<Vec<String>>> {
    if globs.is_empty() {
        return Ok(None);
    }
    let all = tree.branches();
    if let Some(glob) = globs
        .iter()
        .find(|g| !all.iter().any(|b| g.matches(&b.name)))
    {
        return Err(Error::Options(format!(
            "branch pattern \"{glob}\" matches no branch of tree {:?}",
            tree.name()
        )));
    }
    let mut keep: Vec<bool> = all
        .iter()
        .map(|b| globs.iter().any(|g| g.matches(&b.name)))
        .collect();
    // Nested lists' sizes, then counters (a sizes branch has none).
    for i in 0..all.len() {
        if keep[i] {
            let mut sizes = format!("{}/sizes", all[i].name);
            while let Some(j) = all.iter().position(|b| b.name == sizes) {
                keep[j] = true;
                sizes.push_str("/sizes");
            }
        }
    }
    for i in 0..all.len() {
        if keep[i]
            && let Some(counter) = &all[i].counter
            && let Some(j) = all.iter().position(|b| &b.name == counter)
        {
            keep[j] = true;
        }
    }
    Ok(Some(
        all.iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(b, _)| b.name.clone())
            .collect(),
    ))
}

/// The entries of `tree` that `selection` passes, evaluated cluster by cluster over the
/// branches it names.
fn select(tree: &TreeReader<'_>, selection: &Selection) -> Result<Vec<u64>> {
    let names = selection.branches();
    for name in &names {
        let meta = tree
            .branches()
            .iter()
            .find(|b| &b.name == name)
            .ok_or_else(|| {
                Error::Options(format!(
                    "the selection names {name:?}, which is not a branch of tree {:?}",
                    tree.name()
                ))
            })?;
        if matches!(meta.dtype, DataType::Bytes | DataType::Utf8) {
            return Err(Error::Options(format!(
                "the selection names {name:?}, a string branch: selections compare numbers"
            )));
        }
    }
    let mut out = Vec::new();
    let mut start = 0;
    for &end in &tree.meta().cluster_ends {
        let mut columns = Vec::with_capacity(names.len());
        for name in &names {
            columns.push(read_column(tree, name, start..end)?);
        }
        let column = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .map(|i| columns[i].clone())
        };
        let pass = selection
            .evaluate((end - start) as usize, &column)
            .map_err(|e| Error::Options(format!("selection: {e}")))?;
        out.extend(
            pass.iter()
                .enumerate()
                .filter(|(_, p)| **p)
                .map(|(k, _)| start + k as u64),
        );
        start = end;
    }
    Ok(out)
}

/// Entries `range` of numeric branch `name` as `f64` values.
fn read_column(tree: &TreeReader<'_>, name: &str, range: std::ops::Range<u64>) -> Result<Column> {
    let branch = tree.branch(name)?;
    let dtype = branch.meta().dtype;
    macro_rules! go {
        ($t:ty) => {{
            if dtype.is_variable() {
                let jagged = branch.read_jagged_range::<$t>(range)?;
                Column::Lists {
                    offsets: jagged.offsets.to_vec(),
                    values: jagged.values.into_iter().map(|x| x as u8 as f64).collect(),
                }
            } else {
                let values = branch.read_range::<$t>(range)?;
                Column::Scalar(values.into_iter().map(|x| x as u8 as f64).collect())
            }
        }};
    }
    macro_rules! num {
        ($t:ty) => {{
            if dtype.is_variable() {
                let jagged = branch.read_jagged_range::<$t>(range)?;
                Column::Lists {
                    offsets: jagged.offsets.to_vec(),
                    values: jagged.values.into_iter().map(|x| x as f64).collect(),
                }
            } else {
                let values = branch.read_range::<$t>(range)?;
                Column::Scalar(values.into_iter().map(|x| x as f64).collect())
            }
        }};
    }
    Ok(match dtype.scalar() {
        ScalarType::Bool => go!(bool),
        ScalarType::I8 => num!(i8),
        ScalarType::U8 => num!(u8),
        ScalarType::I16 => num!(i16),
        ScalarType::U16 => num!(u16),
        ScalarType::I32 => num!(i32),
        ScalarType::U32 => num!(u32),
        ScalarType::I64 => num!(i64),
        ScalarType::U64 => num!(u64),
        ScalarType::F32 => num!(f32),
        ScalarType::F64 => num!(f64),
    })
}
