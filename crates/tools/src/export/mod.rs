//! Conversions into ROOT files ([`export`]): each tree of the input (an evtc file, or a ROOT
//! file's TTrees and RNTuples) becomes an RNTuple (or a TTree) of the same name, its branches
//! fields (branches) of the same ROOT types, in clusters of the settings' cluster size, each
//! field compressed with its branch's codec unless the settings say otherwise. What ROOT has no
//! place for (random-access compression, evtc's preconditioners, names with dots) is said in
//! the summary's notes.
//!
//! - `fields`: a tree's columns into fields, and their data chunk by chunk;
//! - `output`: [`RootOutput`], a ROOT file written tree by tree from column data.

mod fields;
mod output;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use evtc_format::ClusterSize;

pub(crate) use output::TTREE_BASKET_BYTES;
pub use output::{RootBranch, RootOutput, RootOutputSummary};

use crate::source::SourceTree;
use crate::{ConvertSummary, Error, OutputFormat, Progress, Result, Settings};

/// Converts `input` into a ROOT file at `output` of `format`'s trees, with what earlier
/// attempts `learned` (the unreadable branches left out).
///
/// # Errors
/// As for [`convert`](crate::convert) and [`RootOutput::create`]; [`Error::Options`] for
/// branches whose ROOT names collide.
pub(crate) fn export(
    input: &Path,
    output: &Path,
    settings: &Settings,
    format: OutputFormat,
    learned: &crate::Learned,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ConvertSummary> {
    let started = Instant::now();
    let (input_file, pool, mut summary) = crate::start(input, settings, format)?;
    let mut sources = crate::source_trees(&input_file, settings, learned, &mut summary)?;
    let mut root = RootOutput::create(output, format, settings)?;
    for source in &mut sources {
        if !write_tree(
            &mut root,
            source,
            &pool,
            settings,
            format,
            &mut summary,
            progress,
        )? {
            return Err(Error::Interrupted { kept: None });
        }
    }
    let written = root.finish()?;
    summary.output_bytes = written.bytes;
    summary.trees = written.trees;
    summary.notes.extend(written.notes);
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Entries per cluster of `source` with `settings`' cluster size.
fn cluster_entries(source: &SourceTree<'_>, settings: &Settings) -> u64 {
    match settings
        .cluster_size
        .unwrap_or(evtc_format::DEFAULT_CLUSTER_SIZE)
    {
        ClusterSize::Entries(n) => n.max(1),
        ClusterSize::Bytes(bytes) => {
            let per_entry = source.raw_bytes() / source.entries().max(1);
            (bytes / per_entry.max(1)).clamp(1, source.entries().max(1))
        }
    }
}

/// Converts one tree into an RNTuple or a TTree of `root`; `false` when interrupted.
fn write_tree(
    root: &mut RootOutput,
    source: &mut SourceTree<'_>,
    pool: &rayon::ThreadPool,
    settings: &Settings,
    format: OutputFormat,
    summary: &mut ConvertSummary,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<bool> {
    let tree = source.name().to_owned();
    let plan = fields::plan(source, settings, &tree, format)?;
    for note in &plan.notes {
        root.note(note.clone());
    }
    let name = fields::root_name(&tree, OutputFormat::RNTuple);
    if name != tree {
        root.note(format!("tree {tree:?} written as {name:?}"));
    }
    // The event index's keys by their output names.
    let index = source.index_keys()?.map(|(major, minor)| {
        let output = |key: &str| {
            plan.fields
                .iter()
                .find(|f| f.source_name == key)
                .map_or_else(|| key.to_owned(), |f| f.branch.name.clone())
        };
        (output(&major), output(&minor))
    });
    let branches = plan
        .fields
        .iter()
        .map(|f| (f.branch.clone(), f.storage))
        .collect();
    root.begin(&name, branches, index)?;
    source.select_columns(&plan.columns);
    let total = source.entries();
    let chunk = cluster_entries(source, settings);
    let mut done = 0;
    while done < total {
        let end = (done + chunk).min(total);
        summary.value_bytes += pool.install(|| source.read(done..end))?;
        let mut data: Vec<_> = source.take_chunk().into_iter().map(Some).collect();
        let cluster = plan
            .fields
            .iter()
            .map(|f| f.assemble(&mut data))
            .collect::<Result<Vec<_>>>()?;
        root.fill(cluster)?;
        done = end;
        progress(Progress {
            tree: &tree,
            entries: done,
            total,
            bytes: summary.value_bytes,
        });
        if settings
            .interrupt
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
        {
            return Ok(false);
        }
    }
    root.end_tree()?;
    Ok(true)
}
