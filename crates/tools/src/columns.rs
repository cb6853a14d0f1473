//! Adding another evtc file's branches to a tree of an existing file ([`add_columns`]), in
//! place: the tree's branches are not rewritten, the new ones follow its clusters.

use std::path::Path;
use std::time::Instant;

use evtc_format::{FileReader, FileWriter};
use serde::Serialize;

use crate::skim::kept_branches;
use crate::{Error, Result, Settings, respec};

/// What [`add_columns`] did.
#[derive(Debug, Clone, Serialize)]
pub struct AddColumnsReport {
    /// The tree.
    pub tree: String,
    /// Its entries.
    pub entries: u64,
    /// The branches added, in order.
    pub added: Vec<String>,
    /// Branches of the other file not added because the tree has them (counters the added
    /// branches share with it; those then store their own counts).
    pub shared: Vec<String>,
    /// The file's size before and after.
    pub bytes_before: u64,
    /// The file's size after.
    pub bytes_after: u64,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Adds branches of the evtc file `from` to the tree of the same name in the evtc file
/// `file`, entry by entry (`from`'s tree has as many entries), without rewriting the tree's
/// other branches: new baskets and a new footer go after the file's end, and a failure or
/// interruption leaves the file as it was (`FileWriter::append`).
///
/// # Errors
/// [`Error::Options`] for a missing tree, a tree of another length, a glob that matches
/// nothing, or branches the tree has already; the reading and writing errors.
pub fn add_columns(
    file: &Path,
    from: &Path,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<AddColumnsReport> {
    let started = Instant::now();
    if let (Ok(a), Ok(b)) = (file.canonicalize(), from.canonicalize())
        && a == b
    {
        return Err(Error::Options(format!(
            "refusing to add {}'s branches to itself",
            file.display()
        )));
    }
    let source =
        FileReader::open_with(from, settings.read_options()).map_err(|e| e.in_file(from))?;
    let name = settings.one_tree("add columns from", from, source.trees())?;
    let tree = source.tree(&name).map_err(|e| e.in_file(from))?;
    let wanted = kept_branches(&tree, &settings.branches)?
        .unwrap_or_else(|| tree.branches().iter().map(|b| b.name.clone()).collect());
    let bytes_before = std::fs::metadata(file).map_or(0, |m| m.len());
    let mut writer = FileWriter::append(file, settings.write_options())?;
    let target = writer
        .trees()
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| {
            Error::Options(format!(
                "{} has no tree {name:?} (its trees: {})",
                file.display(),
                writer
                    .trees()
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    if target.entries != tree.entries() {
        return Err(Error::Options(format!(
            "tree {name:?} has {} entries in {} and {} in {}: branches are added entry by entry",
            target.entries,
            file.display(),
            tree.entries(),
            from.display()
        )));
    }
    let explicit =
        |n: &str| settings.branches.is_empty() || settings.branches.iter().any(|g| g.matches(n));
    let has = |n: &str| target.branches.iter().any(|b| b.name == n);
    let clashes: Vec<&str> = wanted
        .iter()
        .map(String::as_str)
        .filter(|n| has(n) && explicit(n))
        .collect();
    if !clashes.is_empty() {
        return Err(Error::Options(format!(
            "tree {name:?} of {} has branches {} already; choose others with the branches option",
            file.display(),
            clashes.join(", ")
        )));
    }
    let (shared, added): (Vec<String>, Vec<String>) = wanted.into_iter().partition(|n| has(n));
    let specs = added
        .iter()
        .map(|n| {
            let mut meta = tree.branch(n)?.meta().clone();
            if meta.counter.as_ref().is_some_and(|c| shared.contains(c)) {
                meta.counter = None;
            }
            Ok(respec(&meta, settings))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut out = writer.add_branches(&name, specs)?;
    let total = tree.entries();
    let mut start = 0;
    for &end in &tree.meta().cluster_ends {
        for (b, n) in added.iter().enumerate() {
            out.fill_from(b, &tree, n, start..end)?;
        }
        out.commit()?;
        progress(end, total);
        start = end;
    }
    out.finish()?;
    writer.finish()?;
    Ok(AddColumnsReport {
        tree: name,
        entries: total,
        added,
        shared,
        bytes_before,
        bytes_after: std::fs::metadata(file).map_or(0, |m| m.len()),
        seconds: started.elapsed().as_secs_f64(),
    })
}
