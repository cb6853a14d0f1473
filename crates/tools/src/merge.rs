//! Merging files into one, as ROOT's `hadd` does ([`merge`]): evtc inputs through
//! [`evtc_format::merge`] (baskets copied where their layout allows), ROOT inputs converted on
//! the way.

use std::path::{Path, PathBuf};
use std::time::Instant;

use evtc_format::{BranchMeta, MergeProgress, Schemas};
use serde::Serialize;

use crate::source::FileKind;
use crate::{Error, Result, Settings, convert};

/// How to merge: which branches, copying or writing again, and the settings of ROOT inputs'
/// conversion and of writing.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// Which branches the merged trees have when the inputs' differ.
    pub schemas: Schemas,
    /// Write every branch again with `settings` (codec, preconditioner, RAC,
    /// boundaries, per-branch rules) instead of copying the inputs' baskets.
    pub recompress: bool,
    /// The settings of ROOT inputs' conversion, of writing again (with `recompress`), and the
    /// writer's (threads; clusters with `recompress`).
    pub settings: Settings,
}

/// What a merge did.
#[derive(Debug, Clone, Serialize)]
pub struct MergeReport {
    /// The inputs, in order.
    pub inputs: usize,
    /// Of which ROOT files, converted on the way.
    pub converted: usize,
    /// Their sizes, summed.
    pub input_bytes: u64,
    /// The output's size.
    pub output_bytes: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The merged trees.
    pub trees: Vec<MergedTreeReport>,
}

/// What a merge did with one tree.
#[derive(Debug, Clone, Serialize)]
pub struct MergedTreeReport {
    /// The tree's name.
    pub name: String,
    /// Its entries.
    pub entries: u64,
    /// The inputs that had it.
    pub inputs: usize,
    /// Its branches.
    pub branches: usize,
    /// Baskets copied as stored.
    pub copied_baskets: u64,
    /// (branch, input) pairs written again.
    pub rewritten: Vec<(String, String)>,
    /// (branch, input) pairs filled with the branch's default (`--union`).
    pub defaulted: Vec<(String, String)>,
    /// Branches left out (`--intersect`).
    pub dropped: Vec<String>,
    /// The output's event index (major, minor): kept when every input had one on the same keys.
    pub event_index: Option<(String, String)>,
}

/// Where a merge is, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum MergeStep<'a> {
    /// Converting ROOT input `index` (0-based) of `total`.
    Converting {
        /// The input's path.
        path: &'a Path,
        /// Its place among the ROOT inputs.
        index: usize,
        /// The ROOT inputs.
        total: usize,
    },
    /// Merging tree `tree`: input `input` of `inputs`, `entries` written so far.
    Merging {
        /// The tree.
        tree: &'a str,
        /// The input being read (0-based).
        input: usize,
        /// The inputs that have the tree.
        inputs: usize,
        /// Entries written so far.
        entries: u64,
    },
}

/// The input paths of `arguments`: each argument is a path, or `@FILE`, a text file of paths,
/// one per line (blank lines and lines starting with `#` skipped), as `hadd` takes them.
///
/// # Errors
/// [`Error::Options`] for a list that cannot be read, naming it, or for no input at all.
pub fn expand_inputs(arguments: &[String]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for argument in arguments {
        match argument.strip_prefix('@') {
            Some(list) => {
                let text = std::fs::read_to_string(list).map_err(|e| {
                    Error::Options(format!("cannot read the input list {list}: {e}"))
                })?;
                out.extend(
                    text.lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with('#'))
                        .map(PathBuf::from),
                );
            }
            None => out.push(PathBuf::from(argument)),
        }
    }
    if out.is_empty() {
        return Err(Error::Options("no input files to merge".into()));
    }
    Ok(out)
}

/// Concatenates the trees of `inputs` (evtc or ROOT files), in order, into a new evtc file at
/// `output` ([`evtc_format::merge`] says how); ROOT inputs are converted first, with
/// `options.settings`, into temporary evtc files beside `output`, removed at the end.
///
/// # Errors
/// As for [`evtc_format::merge`] and [`convert`], naming the input; [`Error::Input`] for an input
/// that is neither an evtc nor a ROOT file. Nothing is left at `output` on error.
pub fn merge(
    output: &Path,
    inputs: &[PathBuf],
    options: &MergeOptions,
    progress: &mut dyn FnMut(MergeStep<'_>),
) -> Result<MergeReport> {
    let started = Instant::now();
    let roots: Vec<bool> = inputs
        .iter()
        .map(|p| Ok(FileKind::of_path(p)? == FileKind::Root))
        .collect::<Result<_>>()?;
    let total = roots.iter().filter(|&&r| r).count();
    // ROOT inputs, converted into a scratch directory beside the output (the same file
    // system), which goes away with this function.
    let scratch = if total > 0 {
        let dir = output
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(
            tempfile::Builder::new()
                .prefix(".evtc-merge-")
                .tempdir_in(dir)
                .map_err(|e| {
                    Error::Options(format!(
                        "cannot make a scratch directory in {}: {e}",
                        dir.display()
                    ))
                })?,
        )
    } else {
        None
    };
    let mut paths = Vec::with_capacity(inputs.len());
    let mut index = 0;
    for (i, (path, root)) in inputs.iter().zip(&roots).enumerate() {
        if !root {
            paths.push(path.clone());
            continue;
        }
        progress(MergeStep::Converting { path, index, total });
        index += 1;
        let dir = scratch.as_ref().expect("made for ROOT inputs").path();
        let converted = dir.join(format!("{i}.evtc"));
        convert(path, &converted, &options.settings, &mut |_| {}).map_err(|e| {
            Error::Options(format!("converting {} to merge it: {e}", path.display()))
        })?;
        paths.push(converted);
    }
    let respec = |meta: &BranchMeta| crate::respec(meta, &options.settings);
    let read = options.settings.read_options().threads(1);
    let merged = evtc_format::merge(
        output,
        &paths,
        &evtc_format::MergeOptions {
            schemas: options.schemas,
            write: options.settings.write_options(),
            read,
            respec: options.recompress.then_some(&respec as _),
        },
        &mut |p: MergeProgress<'_>| {
            progress(MergeStep::Merging {
                tree: p.tree,
                input: p.input,
                inputs: p.inputs,
                entries: p.entries,
            });
        },
    )
    .map_err(|e| rename_scratch(e, &paths, inputs))?;
    let trees = merged
        .trees
        .into_iter()
        .map(|t| MergedTreeReport {
            rewritten: original_names(t.rewritten, &paths, inputs),
            defaulted: original_names(t.defaulted, &paths, inputs),
            name: t.name,
            entries: t.entries,
            inputs: t.inputs,
            branches: t.branches,
            copied_baskets: t.copied_baskets,
            dropped: t.dropped,
            event_index: t.event_index,
        })
        .collect();
    Ok(MergeReport {
        inputs: inputs.len(),
        converted: total,
        input_bytes: inputs
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum(),
        output_bytes: std::fs::metadata(output).map_or(0, |m| m.len()),
        seconds: started.elapsed().as_secs_f64(),
        trees,
    })
}

/// Input paths in (branch, path) pairs given back for the scratch copies of ROOT inputs.
fn original_names(
    pairs: Vec<(String, String)>,
    paths: &[PathBuf],
    inputs: &[PathBuf],
) -> Vec<(String, String)> {
    pairs
        .into_iter()
        .map(|(branch, path)| {
            let original = paths
                .iter()
                .position(|p| p.display().to_string() == path)
                .map_or(path, |i| inputs[i].display().to_string());
            (branch, original)
        })
        .collect()
}

/// An error that names a scratch copy named with its ROOT input instead.
fn rename_scratch(error: evtc_format::Error, paths: &[PathBuf], inputs: &[PathBuf]) -> Error {
    let text = error.to_string();
    for (path, input) in paths.iter().zip(inputs) {
        let shown = path.display().to_string();
        if path != input && text.contains(&shown) {
            return Error::Options(text.replace(&shown, &input.display().to_string()));
        }
    }
    Error::Format(error)
}
