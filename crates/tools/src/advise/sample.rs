//! Samples of a file's branches: the same share of every tree's entries, read in windows spread
//! over the tree, so a branch's sample is in proportion to its size.

use evtc_format::DataType;
use evtc_root::{ColumnData, with_values};

use crate::source::SourceTree;
use crate::{Result, Settings, branch_specs};

/// Windows a tree's sample is read in, spread evenly over its entries (fewer for small samples).
const WINDOWS: u64 = 8;

/// One branch's sampled entries.
#[derive(Debug)]
pub(super) struct BranchSample {
    pub(super) name: String,
    pub(super) dtype: DataType,
    /// A counter branch gives the entry boundaries (the writer's default stores none).
    pub(super) has_counter: bool,
    /// The values' bytes, little-endian, entry after entry.
    pub(super) values: Vec<u8>,
    /// Values per entry, for variable-length branches.
    pub(super) counts: Vec<u32>,
    /// Entries sampled.
    pub(super) entries: u64,
    /// The values at reduced precision, where a float tolerance was stated for the branch.
    pub(super) reduced: Option<Reduced>,
}

/// A branch sample's floats rounded to fewer mantissa bits.
#[derive(Debug)]
pub(super) struct Reduced {
    /// Mantissa bits kept.
    pub(super) bits: u32,
    /// The rounded values' bytes.
    pub(super) values: Vec<u8>,
    /// The largest relative error the rounding made on the sample.
    pub(super) max_error: f64,
}

impl BranchSample {
    /// Bytes per value.
    pub(super) fn value_size(&self) -> usize {
        self.dtype.scalar().size()
    }

    /// Where each sampled entry ends in [`BranchSample::values`] (saturating: a reader's
    /// inconsistent counts show as ends past the values, which the RAC trial refuses).
    pub(super) fn entry_ends(&self) -> Vec<usize> {
        let size = self.value_size();
        if self.dtype.is_variable() {
            let mut end = 0usize;
            self.counts
                .iter()
                .map(|&c| {
                    end = end.saturating_add((c as usize).saturating_mul(size));
                    end
                })
                .collect()
        } else {
            let entry = size * self.dtype.fixed_len().unwrap_or(1);
            (1..=self.entries as usize).map(|i| i * entry).collect()
        }
    }
}

/// The sampled branches of one tree.
#[derive(Debug)]
pub(super) struct TreeSample {
    pub(super) name: String,
    pub(super) entries: u64,
    pub(super) sampled_entries: u64,
    pub(super) branches: Vec<BranchSample>,
}

/// Reads `fraction` of `source`'s entries (at least one) in up to [`WINDOWS`] evenly spread
/// windows, keeping the branches `options.branches` selects.
pub(super) fn sample_tree(
    source: &mut SourceTree<'_>,
    options: &Settings,
    fraction: f64,
) -> Result<TreeSample> {
    let specs = branch_specs(source, options);
    let columns = source.columns().to_vec();
    let entries = source.entries();
    let want = ((entries as f64 * fraction).ceil() as u64).clamp(entries.min(1), entries);
    // Windows never overlap: each starts `entries / windows` after the last.
    let (windows, per_window) = if want >= entries {
        (1, entries)
    } else {
        let windows = WINDOWS.min(want).max(1);
        (
            windows,
            want.div_ceil(windows).min(entries / windows).max(1),
        )
    };
    let mut branches: Vec<BranchSample> = Vec::new();
    let mut sampled = 0;
    for w in 0..windows {
        let start = w * entries / windows;
        let end = (start + per_window).min(entries);
        if start >= end {
            continue;
        }
        source.read(start..end)?;
        sampled += end - start;
        for (slot, (column, data)) in source.chunk().enumerate() {
            if branches.len() <= slot {
                let info = &columns[column];
                let has_counter = specs
                    .iter()
                    .find(|(s, c)| *c == Some(column) && s.name() == info.name)
                    .is_some_and(|(s, _)| s.counter_name().is_some());
                branches.push(BranchSample {
                    name: info.name.clone(),
                    dtype: info.dtype,
                    has_counter,
                    values: Vec::new(),
                    counts: Vec::new(),
                    entries: 0,
                    reduced: None,
                });
            }
            append(&mut branches[slot], data);
        }
    }
    Ok(TreeSample {
        name: source.name().to_owned(),
        entries,
        sampled_entries: sampled,
        branches,
    })
}

/// Appends a chunk of a column to its sample.
fn append(sample: &mut BranchSample, data: &ColumnData) {
    with_values!(&data.values, v => sample.values.extend_from_slice(bytemuck::cast_slice(v)));
    if data.offsets.is_empty() {
        let per_entry = sample.dtype.fixed_len().unwrap_or(1).max(1);
        sample.entries += (data.values.len() / per_entry) as u64;
        return;
    }
    // Of nested lists: an entry's values span its inner lists.
    let boundaries = data.entry_bounds(0);
    sample.counts.extend(
        boundaries
            .windows(2)
            .map(|w| u32::try_from(w[1].saturating_sub(w[0])).unwrap_or(u32::MAX)),
    );
    sample.entries += boundaries.len().saturating_sub(1) as u64;
}
