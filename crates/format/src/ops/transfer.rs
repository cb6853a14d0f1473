//! Moving entries from one file's branch into another's, which merges and skims share: basket
//! records copied as they are stored (a cluster's in one read), or entries read and filled again.

use std::ops::Range;

use crate::error::{Error, Location, Result};
use crate::meta::ScalarType;
use crate::reader::{FileReader, TreeReader, check_record};
use crate::record::{RECORD_HEADER_LEN, RecordKind};
use crate::writer::{CopiedBasket, TreeWriter};

/// Runs the macro `$go` with the Rust type of scalar type `$t`.
macro_rules! by_type {
    ($t:expr, $go:ident) => {
        match $t {
            ScalarType::Bool => $go!(bool),
            ScalarType::I8 => $go!(i8),
            ScalarType::U8 => $go!(u8),
            ScalarType::I16 => $go!(i16),
            ScalarType::U16 => $go!(u16),
            ScalarType::I32 => $go!(i32),
            ScalarType::U32 => $go!(u32),
            ScalarType::I64 => $go!(i64),
            ScalarType::U64 => $go!(u64),
            ScalarType::F32 => $go!(f32),
            ScalarType::F64 => $go!(f64),
        }
    };
}
pub(crate) use by_type;

/// The most bytes of neighbouring records read at once (a cluster's baskets, a tree's indexes).
pub(crate) const SPAN_BYTES: u64 = 64 << 20;

/// A branch of the input (its position in the tree) going into a branch of the output.
pub(crate) type Pair = (usize, usize);

/// Copies the baskets holding entries `range` (a cluster, or whole baskets of one) of each input
/// branch of `pairs` into its output branch, reading their records in one read when they lie
/// within [`SPAN_BYTES`] (a writer writes a cluster's baskets together), else basket by basket;
/// `buffer` is reused for the read. Returns how many.
pub(crate) fn copy_span(
    out: &mut TreeWriter<'_>,
    (reader, tree): (&FileReader, &TreeReader<'_>),
    pairs: &[Pair],
    range: Range<u64>,
    buffer: &mut Vec<u8>,
) -> Result<u64> {
    let mut baskets = Vec::new();
    for &(from, b) in pairs {
        let branch = tree.branch(&tree.branches()[from].name)?;
        let index = branch.baskets()?;
        let first = index
            .baskets
            .partition_point(|l| l.first_entry < range.start);
        for (i, loc) in index.baskets.iter().enumerate().skip(first) {
            if loc.first_entry >= range.end {
                break;
            }
            baskets.push((b, from, i, *loc));
        }
    }
    let (Some(start), Some(end)) = (
        baskets.iter().map(|(.., l)| l.offset).min(),
        baskets.iter().map(|(.., l)| l.offset + l.record_len).max(),
    ) else {
        return Ok(0);
    };
    if end - start > SPAN_BYTES {
        let mut copied = 0;
        for &(from, b) in pairs {
            copied += copy_baskets(out, b, tree, from, range.clone())?;
        }
        return Ok(copied);
    }
    let bytes = reader.read_span(start, end - start, buffer)?;
    for (b, from, i, loc) in &baskets {
        let location = Location {
            tree: Some(tree.name().to_owned()),
            branch: Some(tree.branches()[*from].name.clone()),
            basket: Some(*i),
            offset: loc.offset,
        };
        let at = (loc.offset - start) as usize;
        let record = &bytes[at..at + loc.record_len as usize];
        let header = check_record(record, RecordKind::Basket, &location, reader.verifies())?;
        if header.tree as usize != tree.number()
            || header.branch as usize != *from
            || header.first_entry != loc.first_entry
            || header.entries != loc.entries
        {
            return Err(Error::corrupt(
                location,
                "the basket record does not match its place in the branch index",
            ));
        }
        out.copy_record(
            *b,
            CopiedBasket {
                rac: header.basket_kind == 1,
                entries: loc.entries,
                elements: loc.elements,
                body: &record[RECORD_HEADER_LEN..],
                body_crc: header.body_crc,
            },
        )?;
    }
    Ok(baskets.len() as u64)
}

/// Copies the baskets of input branch `from` holding entries `range` into output branch `b`,
/// one read each; returns how many.
pub(crate) fn copy_baskets(
    out: &mut TreeWriter<'_>,
    b: usize,
    tree: &TreeReader<'_>,
    from: usize,
    range: Range<u64>,
) -> Result<u64> {
    let branch = tree.branch(&tree.branches()[from].name)?;
    let index = branch.baskets()?;
    let first = index
        .baskets
        .partition_point(|l| l.first_entry < range.start);
    let mut copied = 0;
    for i in first..index.baskets.len() {
        if index.baskets[i].first_entry >= range.end {
            break;
        }
        out.copy_basket(b, &branch.raw_basket(i)?)?;
        copied += 1;
    }
    Ok(copied)
}

/// Reads entries `range` of input branch `from` and fills them into output branch `b`; with
/// `picks` (entries of `range`, ascending), only those.
pub(crate) fn rewrite(
    out: &mut TreeWriter<'_>,
    b: usize,
    tree: &TreeReader<'_>,
    from: usize,
    range: Range<u64>,
    picks: Option<&[u64]>,
) -> Result<()> {
    let branch = tree.branch(&tree.branches()[from].name)?;
    let dtype = branch.meta().dtype;
    let first = range.start;
    macro_rules! go {
        ($t:ty) => {{
            match (dtype.fixed_len(), picks) {
                (None, picks) => {
                    let jagged = branch.read_jagged_range::<$t>(range)?;
                    let o = &jagged.offsets;
                    let Some(picks) = picks else {
                        let counts: Vec<u32> = o.windows(2).map(|w| (w[1] - w[0]) as u32).collect();
                        return out.fill_jagged(b, &counts, &jagged.values);
                    };
                    let mut counts = Vec::with_capacity(picks.len());
                    let mut values = Vec::new();
                    for &e in picks {
                        let k = (e - first) as usize;
                        let (a, z) = (o[k] as usize, o[k + 1] as usize);
                        counts.push((z - a) as u32);
                        values.extend_from_slice(&jagged.values[a..z]);
                    }
                    out.fill_jagged(b, &counts, &values)
                }
                (Some(_), None) => out.fill_column(b, &branch.read_range::<$t>(range)?),
                (Some(len), Some(picks)) => {
                    let all = branch.read_range::<$t>(range)?;
                    let mut values = Vec::with_capacity(picks.len() * len);
                    for &e in picks {
                        let k = (e - first) as usize;
                        values.extend_from_slice(&all[k * len..(k + 1) * len]);
                    }
                    out.fill_column(b, &values)
                }
            }
        }};
    }
    by_type!(dtype.scalar(), go)
}

impl TreeWriter<'_> {
    /// Reads entries `range` of branch `name` of `tree` (another file's) and fills them into
    /// branch `b`, whose type must be the same: for copying a branch's values into a tree
    /// written otherwise (adding another file's branches to a tree,
    /// [`FileWriter::add_branches`](crate::FileWriter::add_branches)).
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`]; the reading errors; [`Error::InvalidFill`] for another type.
    pub fn fill_from(
        &mut self,
        b: usize,
        tree: &TreeReader<'_>,
        name: &str,
        range: Range<u64>,
    ) -> Result<()> {
        let from = tree
            .branches()
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| Error::NoSuchBranch {
                tree: tree.name().to_owned(),
                name: name.to_owned(),
            })?;
        rewrite(self, b, tree, from, range, None)
    }
}
