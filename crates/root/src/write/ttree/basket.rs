//! A branch's entries as a TTree basket holds them (big-endian, as `TBufferFile` writes): the
//! values of fixed-size leaves back to back; for variable-size entries each entry's bytes,
//! then the entries' offsets. Leaf-count arrays (`Muon_pt[nMuon]/F`) store their values alone;
//! `std::vector` and `std::string` branches each entry as ROOT streams the object.

use crate::data::{ColumnData, Values};
use crate::types::ColumnKind;

/// How a branch's entries are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// Fixed-size entries of `bytes` each (scalars, fixed arrays): no entry offsets.
    Fixed { bytes: usize },
    /// A leaf-count array: each entry's values, counted by another branch.
    Counted,
    /// A `std::vector` (of vectors ...) or a `std::string`, or vectors of strings: each entry
    /// streamed as ROOT streams the object.
    Object,
}

/// The version ROOT's STL collections are streamed with (`TStreamerInfo`'s class version 9,
/// read by every ROOT 6).
const COLLECTION_VERSION: u16 = 9;

/// Appends entries `range` of `data` (a column of `kind`) to `out` laid out as `layout`,
/// pushing each entry's start (relative to `out`'s start) to `starts` for variable layouts.
pub(super) fn encode(
    kind: ColumnKind,
    layout: Layout,
    data: &ColumnData,
    range: std::ops::Range<usize>,
    out: &mut Vec<u8>,
    starts: &mut Vec<usize>,
) {
    match layout {
        Layout::Fixed { bytes } => {
            let per = bytes / kind.scalar().size();
            values_be(&data.values, range.start * per..range.end * per, out);
        }
        Layout::Counted => {
            for e in range {
                starts.push(out.len());
                let (a, b) = (data.offsets[e] as usize, data.offsets[e + 1] as usize);
                values_be(&data.values, a..b, out);
            }
        }
        Layout::Object => {
            for e in range {
                starts.push(out.len());
                object(kind, data, e, out);
            }
        }
    }
}

/// One entry of a `std::vector`/`std::string` branch, streamed: the outermost vector with its
/// byte count and version, the lists inside with their length alone, strings as `TString`s.
fn object(kind: ColumnKind, data: &ColumnData, entry: usize, out: &mut Vec<u8>) {
    let strings = matches!(kind, ColumnKind::String | ColumnKind::Strings(_));
    // The lists around the values: a vector of lists of lists has as many as its depth; a
    // vector of strings one fewer than its levels' (the last bounds the strings' bytes).
    let lists = if strings {
        kind.levels()
    } else {
        kind.levels() + 1
    };
    // Level bounds outside in: the entries' (offsets), then levels[last] .. levels[0].
    let mut bounds: Vec<&[u64]> = vec![&data.offsets];
    bounds.extend(data.levels.iter().rev().map(Vec::as_slice));
    if matches!(kind, ColumnKind::String) {
        let (a, b) = (
            data.offsets[entry] as usize,
            data.offsets[entry + 1] as usize,
        );
        string(&data.values, a, b, out);
        return;
    }
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&COLLECTION_VERSION.to_be_bytes());
    let shape = Lists {
        values: &data.values,
        bounds: &bounds,
        strings,
        lists,
    };
    shape.items(0, entry, out);
    let count = (out.len() - start - 4) as u32 | 0x4000_0000;
    out[start..start + 4].copy_from_slice(&count.to_be_bytes());
}

/// An entry's lists: the bounds of each level, outside in.
struct Lists<'a> {
    values: &'a Values,
    /// The entries' offsets, then each level's bounds below them.
    bounds: &'a [&'a [u64]],
    /// Whether the innermost items are strings (bounded by the last level).
    strings: bool,
    /// How many levels are lists.
    lists: usize,
}

impl Lists<'_> {
    /// Item `item` of list level `level` (0: the entries): its length, then its items.
    fn items(&self, level: usize, item: usize, out: &mut Vec<u8>) {
        let bound = |level: usize, item: usize| {
            let b = self.bounds[level];
            (b[item] as usize, b[item + 1] as usize)
        };
        let (a, b) = bound(level, item);
        out.extend_from_slice(&((b - a) as i32).to_be_bytes());
        if level + 1 < self.lists {
            for inner in a..b {
                self.items(level + 1, inner, out);
            }
        } else if self.strings {
            // The innermost list's strings, bounded by the next level.
            for s in a..b {
                let (x, y) = bound(level + 1, s);
                string(self.values, x, y, out);
            }
        } else {
            values_be(self.values, a..b, out);
        }
    }
}

/// Bytes `a..b` of `values` (string characters) as a `TString`.
fn string(values: &Values, a: usize, b: usize, out: &mut Vec<u8>) {
    let Values::U8(bytes) = values else {
        return;
    };
    let n = b - a;
    if n < 255 {
        out.push(n as u8);
    } else {
        out.push(255);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    }
    out.extend_from_slice(&bytes[a..b]);
}

/// Values `range` of `values`, big-endian.
pub(super) fn values_be(values: &Values, range: std::ops::Range<usize>, out: &mut Vec<u8>) {
    macro_rules! be {
        ($v:expr) => {
            for x in &$v[range] {
                out.extend_from_slice(&x.to_be_bytes());
            }
        };
    }
    match values {
        Values::Bool(v) => out.extend(v[range].iter().map(|&b| u8::from(b))),
        Values::I8(v) => out.extend(v[range].iter().map(|&b| b as u8)),
        Values::U8(v) => out.extend_from_slice(&v[range]),
        Values::I16(v) => be!(v),
        Values::U16(v) => be!(v),
        Values::I32(v) => be!(v),
        Values::U32(v) => be!(v),
        Values::I64(v) => be!(v),
        Values::U64(v) => be!(v),
        Values::F32(v) => be!(v),
        Values::F64(v) => be!(v),
    }
}
