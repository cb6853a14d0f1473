//! Writing ROOT files: the file structure (keys, directory, streamer infos, free segments),
//! RNTuples and TTrees, from the same column model the readers produce.

mod buffer;
mod file;
mod ntuple;
mod streamer;
mod ttree;

use crate::data::ColumnData;
use crate::types::ColumnKind;

pub use file::RootWriter;
pub use ntuple::{FloatStorage, NtupleField, NtupleOptions, NtupleSummary, NtupleWriter};
pub use ttree::{TTreeOptions, TTreeSummary, TTreeWriter, TreeBranch};

/// The entries of `data` if it fits a column of `kind` (of dimensions `dims`, for a fixed array
/// of two or more): its values and boundaries agree.
pub(crate) fn shape_entries(
    kind: ColumnKind,
    dims: &[usize],
    data: &ColumnData,
) -> std::result::Result<u64, String> {
    if !data.values.is_empty() || !matches!(kind, ColumnKind::String | ColumnKind::Strings(_)) {
        let t = kind.scalar();
        let same = std::mem::discriminant(&data.values)
            == std::mem::discriminant(&crate::data::Values::new(t));
        if !same {
            return Err(format!("its values are not of type {t}"));
        }
    }
    if data.levels.len() != kind.levels() {
        return Err(format!(
            "{} list levels below the entries for a {} field",
            data.levels.len(),
            kind.cpp_name()
        ));
    }
    let bounded = |bounds: &[u64], items: usize, what: &str| {
        let ok = bounds.first() == Some(&0)
            && bounds.windows(2).all(|w| w[0] <= w[1])
            && bounds.last().copied() == Some(items as u64);
        if ok {
            Ok(())
        } else {
            Err(format!(
                "the boundaries of its {what} do not run from 0 up to the {items} items below"
            ))
        }
    };
    match kind {
        ColumnKind::Scalar(_) => Ok(data.values.len() as u64),
        ColumnKind::Fixed(_, n) => {
            let per = if dims.len() >= 2 {
                dims.iter().product::<usize>()
            } else {
                n
            };
            if per == 0 || !data.values.len().is_multiple_of(per) {
                return Err(format!(
                    "{} values are not whole entries of {per}",
                    data.values.len()
                ));
            }
            Ok((data.values.len() / per) as u64)
        }
        _ => {
            let mut items = data.values.len();
            for (i, level) in data.levels.iter().enumerate() {
                bounded(level, items, &format!("list level {i}"))?;
                items = level.len().saturating_sub(1);
            }
            bounded(&data.offsets, items, "entries")?;
            Ok(data.offsets.len() as u64 - 1)
        }
    }
}
