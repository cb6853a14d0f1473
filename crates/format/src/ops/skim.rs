//! Skimming an evtc file ([`skim`]): chosen entries and branches of its trees into a new file,
//! as ROOT's `TTree::CopyTree` with a selection does. Baskets whose entries are all chosen are
//! copied as they are stored (a cluster's in one read); of a random-access basket whose entries
//! are chosen in part, the units whose entries are all chosen are copied as stored too, into
//! baskets of their own; the other chosen entries are read and written again, in the input's
//! layout ([`BranchSpec::like`]) unless told otherwise. Clusters follow the input's (those left
//! empty are dropped).

use std::ops::Range;
use std::path::Path;

use evtc_codecs::{crc32, le};
use evtc_rac::SeekTable;

use crate::error::{Error, Location, Result};
use crate::meta::BranchMeta;
use crate::ops::transfer::{Pair, SPAN_BYTES, copy_baskets, copy_span, rewrite};
use crate::reader::{BranchReader, FileReader, RawBasket, ReadOptions, TreeReader};
use crate::schema::{BranchSpec, ClusterSize, WriteOptions};
use crate::writer::{FileWriter, TreeWriter};

/// What to keep of one tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSelection {
    /// The tree.
    pub tree: String,
    /// The entries to keep, ascending, each once.
    pub entries: Vec<u64>,
    /// The branches to keep, by name (`None`: all); a kept branch's counter must be kept too.
    pub branches: Option<Vec<String>>,
}

/// How to skim ([`skim`]).
#[derive(Default)]
pub struct SkimOptions<'a> {
    /// The output's writer settings (threads, sync, limits; clusters with `respec`).
    pub write: WriteOptions,
    /// The input's reader settings.
    pub read: ReadOptions,
    /// When set, every branch is written again as this spec (from the input branch's layout)
    /// says, and clusters follow `write`'s: nothing is copied.
    pub respec: Option<&'a dyn Fn(&BranchMeta) -> BranchSpec>,
}

impl std::fmt::Debug for SkimOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkimOptions")
            .field("write", &self.write)
            .field("recompress", &self.respec.is_some())
            .finish_non_exhaustive()
    }
}

/// What a skim did with one tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkimmedTree {
    /// The tree's name.
    pub name: String,
    /// Entries kept.
    pub entries: u64,
    /// Entries in the input.
    pub of: u64,
    /// Branches kept.
    pub branches: usize,
    /// Baskets copied as stored (all their entries kept).
    pub copied_baskets: u64,
    /// Baskets of which some entries were kept, read and written again (random-access ones:
    /// the units not copied).
    pub rewritten_baskets: u64,
    /// RAC units copied as stored from random-access baskets of which some entries were kept
    /// (all the unit's entries kept).
    pub copied_units: u64,
    /// The key branches of the output's event index, kept when the input tree has one and
    /// both key branches are kept, as (major, minor).
    pub event_index: Option<(String, String)>,
}

/// Where a skim is: for progress reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkimProgress<'a> {
    /// The tree being skimmed.
    pub tree: &'a str,
    /// Input entries gone through.
    pub done: u64,
    /// The tree's input entries.
    pub total: u64,
}

/// Writes the chosen entries and branches of `input`'s trees (`selections`, in output order)
/// into a new file at `output`, named only when complete; `progress` hears of each cluster.
///
/// ```
/// use evtc_format::{skim, BranchSpec, FileReader, FileWriter, ScalarType, SkimOptions,
///     TreeSelection, WriteOptions};
/// let dir = tempfile::tempdir()?;
/// let input = dir.path().join("all.evtc");
/// let mut file = FileWriter::create(&input, WriteOptions::default())?;
/// let mut tree = file.tree("Events", vec![BranchSpec::scalar("event", ScalarType::U64)])?;
/// tree.fill_column(0, &(0..1000u64).collect::<Vec<_>>())?;
/// tree.commit()?;
/// tree.finish()?;
/// file.finish()?;
///
/// let out = dir.path().join("skim.evtc");
/// let keep = TreeSelection { tree: "Events".into(), entries: vec![3, 500, 999], branches: None };
/// skim(&input, &out, &[keep], &SkimOptions::default(), &mut |_| {})?;
/// let event = FileReader::open(&out)?.tree("Events")?.branch("event")?.read::<u64>()?;
/// assert_eq!(event, [3, 500, 999]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::Request`] for entries out of order, repeated or past the tree's end, or an output
/// that is the input; [`Error::NoSuchTree`] and [`Error::NoSuchBranch`]; [`Error::InvalidSchema`]
/// for a kept branch whose counter is not kept; every reader and writer error. Nothing is left
/// at `output` on error.
pub fn skim(
    input: &Path,
    output: &Path,
    selections: &[TreeSelection],
    options: &SkimOptions<'_>,
    progress: &mut dyn FnMut(SkimProgress<'_>),
) -> Result<Vec<SkimmedTree>> {
    if let (Ok(a), Ok(b)) = (input.canonicalize(), output.canonicalize())
        && a == b
    {
        return Err(Error::Request(format!(
            "the output {} is the input: skim into a new file",
            output.display()
        )));
    }
    let reader = FileReader::open_with(input, options.read.clone())?;
    let write = match options.respec {
        Some(_) => options.write.clone(),
        None => options
            .write
            .clone()
            .cluster_size(ClusterSize::Entries(u64::MAX))
            .max_cluster_bytes(u64::MAX),
    };
    let mut file = FileWriter::create(output, write)?;
    let mut done = Vec::with_capacity(selections.len());
    for selection in selections {
        done.push(skim_tree(&mut file, &reader, selection, options, progress)?);
    }
    file.finish()?;
    Ok(done)
}

/// Checks that `entries` ascend, each once, below `total`.
fn check_entries(tree: &str, entries: &[u64], total: u64) -> Result<()> {
    if let Some(w) = entries.windows(2).find(|w| w[1] <= w[0]) {
        return Err(Error::Request(format!(
            "tree {tree:?}: the entries to keep must ascend, each once: {} comes after {}",
            w[1], w[0]
        )));
    }
    if let Some(&last) = entries.last().filter(|&&e| e >= total) {
        return Err(Error::Request(format!(
            "tree {tree:?}: entry {last} is past its {total} entries"
        )));
    }
    Ok(())
}

/// Skims one tree into `file`.
fn skim_tree(
    file: &mut FileWriter,
    reader: &FileReader,
    selection: &TreeSelection,
    options: &SkimOptions<'_>,
    progress: &mut dyn FnMut(SkimProgress<'_>),
) -> Result<SkimmedTree> {
    let tree = reader.tree(&selection.tree)?;
    let entries = &selection.entries;
    check_entries(&selection.tree, entries, tree.entries())?;
    let kept: Vec<usize> = match &selection.branches {
        None => (0..tree.branches().len()).collect(),
        Some(names) => {
            let mut kept = Vec::with_capacity(names.len());
            for name in names {
                let at = tree
                    .branches()
                    .iter()
                    .position(|b| &b.name == name)
                    .ok_or_else(|| Error::NoSuchBranch {
                        tree: selection.tree.clone(),
                        name: name.clone(),
                    })?;
                kept.push(at);
            }
            // In the input's order, which puts counters before what they count.
            kept.sort_unstable();
            kept.dedup();
            kept
        }
    };
    let metas: Vec<&BranchMeta> = kept.iter().map(|&i| &tree.branches()[i]).collect();
    if let Some((b, c)) = metas.iter().find_map(|m| {
        m.counter
            .as_ref()
            .filter(|c| !metas.iter().any(|o| &&o.name == c))
            .map(|c| (&m.name, c))
    }) {
        return Err(Error::InvalidSchema {
            tree: selection.tree.clone(),
            reason: format!("branch {b:?} is kept without its counter {c:?}"),
        });
    }
    let mut specs = Vec::with_capacity(kept.len());
    for &i in &kept {
        let meta = &tree.branches()[i];
        specs.push(match options.respec {
            Some(respec) => respec(meta),
            None => {
                let dictionary = tree.branch(&meta.name)?.dictionary_bytes()?;
                BranchSpec::like(meta, dictionary)
            }
        });
    }
    let pairs: Vec<Pair> = kept
        .iter()
        .enumerate()
        .map(|(b, &from)| (from, b))
        .collect();
    let mut out = file.tree(&selection.tree, specs)?;
    tree.load_indexes(SPAN_BYTES)?;
    let mut summary = SkimmedTree {
        name: selection.tree.clone(),
        entries: entries.len() as u64,
        of: tree.entries(),
        branches: kept.len(),
        ..SkimmedTree::default()
    };
    let mut span = Vec::new();
    let mut start = 0;
    for &end in &tree.meta().cluster_ends {
        let picks = &entries
            [entries.partition_point(|&e| e < start)..entries.partition_point(|&e| e < end)];
        if picks.is_empty() {
            start = end;
            continue;
        }
        if options.respec.is_some() {
            for &(from, b) in &pairs {
                rewrite(&mut out, b, &tree, from, start..end, Some(picks))?;
            }
        } else if picks.len() as u64 == end - start {
            summary.copied_baskets +=
                copy_span(&mut out, (reader, &tree), &pairs, start..end, &mut span)?;
        } else {
            for &(from, b) in &pairs {
                basket_by_basket(&mut out, b, &tree, from, picks, &mut summary)?;
            }
        }
        out.commit()?;
        if options.respec.is_none() {
            out.end_cluster()?;
        }
        progress(SkimProgress {
            tree: &selection.tree,
            done: end,
            total: tree.entries(),
        });
        start = end;
    }
    if let Some(index) = tree.event_index()? {
        let (major, minor) = index.key_names();
        let names = |i: &usize| tree.branches()[*i].name.as_str();
        if kept.iter().any(|i| names(i) == major) && kept.iter().any(|i| names(i) == minor) {
            let (majors, minors) = index.keys_by_entry()?;
            let pick = |keys: &[u64]| entries.iter().map(|&e| keys[e as usize]).collect();
            out.set_index_keys(major, minor, pick(&majors), pick(&minors))?;
            summary.event_index = Some((major.to_owned(), minor.to_owned()));
        }
    }
    out.finish()?;
    Ok(summary)
}

/// The chosen entries `picks` (of one cluster) of input branch `from` into output branch `b`:
/// each basket whose entries are all chosen copied, the chosen entries of the others written
/// again, except whole RAC units ([`unit_by_unit`]); counted in `summary`.
fn basket_by_basket(
    out: &mut TreeWriter<'_>,
    b: usize,
    tree: &TreeReader<'_>,
    from: usize,
    picks: &[u64],
    summary: &mut SkimmedTree,
) -> Result<()> {
    let branch = tree.branch(&tree.branches()[from].name)?;
    let index = branch.baskets()?;
    let (Some(&lo), Some(&hi)) = (picks.first(), picks.last()) else {
        return Ok(());
    };
    let first = index
        .baskets
        .partition_point(|l| l.first_entry + l.entries <= lo);
    for (i, loc) in index.baskets.iter().enumerate().skip(first) {
        if loc.first_entry > hi {
            break;
        }
        let range = loc.first_entry..loc.first_entry + loc.entries;
        let sub = within(picks, &range);
        if sub.is_empty() {
            continue;
        }
        if sub.len() as u64 == loc.entries {
            summary.copied_baskets += copy_baskets(out, b, tree, from, range)?;
        } else if !unit_by_unit(out, b, &branch, (from, i), sub, summary)? {
            rewrite(out, b, tree, from, range, Some(sub))?;
            summary.rewritten_baskets += 1;
        }
    }
    Ok(())
}

/// The part of `picks` (ascending) within `range`.
fn within<'p>(picks: &'p [u64], range: &Range<u64>) -> &'p [u64] {
    &picks[picks.partition_point(|&e| e < range.start)..picks.partition_point(|&e| e < range.end)]
}

/// The chosen entries `picks` of basket `i` of input branch `from`, a random-access basket
/// whose entries are chosen in part: each run of units whose entries are all chosen is copied
/// as stored into a basket of its own ([`SeekTable::copy_units`]), the chosen entries of the
/// other units written again. Returns `false`, having written nothing, for a basket that is
/// not random-access, keeps its counts after its units (version 1.0 files) or has no unit
/// whose entries are all chosen.
fn unit_by_unit(
    out: &mut TreeWriter<'_>,
    b: usize,
    branch: &BranchReader<'_>,
    (from, i): (usize, usize),
    picks: &[u64],
    summary: &mut SkimmedTree,
) -> Result<bool> {
    let raw = branch.raw_basket(i)?;
    let payload_len = raw.body.get(..8).map(|p| le::u64_at(p, 0));
    let units_only = payload_len.is_some_and(|p| Some(p) == (raw.body.len() as u64).checked_sub(8));
    if !raw.rac || !units_only {
        return Ok(false);
    }
    let index = branch.baskets()?;
    let loc = index.baskets[i];
    let location = Location {
        tree: Some(branch.tree().name().to_owned()),
        branch: Some(branch.meta().name.clone()),
        basket: Some(i),
        offset: loc.offset,
    };
    let (table, region) = SeekTable::parse(&raw.body[8..])
        .map_err(|e| Error::corrupt(location.clone(), format!("its seek table: {e}")))?;
    let value_size = branch.meta().dtype.scalar().size() as u64;
    // (A validated index keeps the basket's entries within u64; a table that agrees with it
    // keeps its units' within the basket.)
    if table.entries() != loc.entries
        || Some(table.raw_len()) != loc.elements.checked_mul(value_size)
    {
        return Err(Error::corrupt(
            location,
            "the seek table's entries or values differ from the branch index's",
        ));
    }
    let units = table.units();
    // A unit's entries (absolute) and the chosen ones among them.
    let chosen = |unit: &evtc_rac::Unit| {
        let entries =
            loc.first_entry + unit.first_entry..loc.first_entry + unit.first_entry + unit.entries;
        let sub = within(picks, &entries);
        (entries, sub)
    };
    let whole = |unit: &evtc_rac::Unit| chosen(unit).1.len() as u64 == unit.entries;
    if !units.iter().any(whole) {
        // Nothing to copy: the basket's chosen entries are written again in one go.
        return Ok(false);
    }
    let tree = branch.tree();
    // Copies units `run` into a basket of their own.
    let mut copy = |run: Range<usize>, out: &mut TreeWriter<'_>| -> Result<()> {
        let mut body = vec![0; 8];
        let kept = table
            .copy_units(run.clone(), region, &mut body)
            .map_err(|e| Error::corrupt(location.clone(), e.to_string()))?;
        let payload = body.len() as u64 - 8;
        body[..8].copy_from_slice(&payload.to_le_bytes());
        summary.copied_units += run.len() as u64;
        out.copy_basket(
            b,
            &RawBasket {
                rac: true,
                entries: kept.entries(),
                elements: kept.raw_len() / value_size,
                body_crc: crc32(&body),
                body,
            },
        )
    };
    let mut run = None;
    let mut rewritten = false;
    for (k, unit) in units.iter().enumerate() {
        if whole(unit) {
            run.get_or_insert(k);
            continue;
        }
        if let Some(first) = run.take() {
            copy(first..k, out)?;
        }
        let (entries, sub) = chosen(unit);
        if !sub.is_empty() {
            rewrite(out, b, tree, from, entries, Some(sub))?;
            rewritten = true;
        }
    }
    if let Some(first) = run {
        copy(first..units.len(), out)?;
    }
    summary.rewritten_baskets += u64::from(rewritten);
    Ok(true)
}
