//! Event indexes (docs/format.md 3.6): a tree's entries sorted by the values of two integer
//! branches, the major and minor keys (a run and an event number), stored in an event-index
//! record so that the entry of a key is found in O(log n) without reading the branches: ROOT's
//! `TTreeIndex`.
//!
//! The record holds a directory (the first key of every block of [`BLOCK_ROWS`] rows), then the
//! blocks; a lookup reads the directory and the one or two blocks the key can be in.

mod add;
mod lookup;

use serde::{Deserialize, Serialize};

use evtc_codecs::{BlockEncoder, Codec, Precondition, Width};

use crate::error::{Error, Result};
use crate::meta::{BranchMeta, DataType, ScalarType};

pub use add::{IndexSummary, add_event_index};
pub use lookup::EventIndexReader;

/// The tree extension naming a tree's event index (docs/format.md 4.2).
pub const EXT_EVENT_INDEX: &str = "event-index";

/// Rows per block of an event-index record.
pub(crate) const BLOCK_ROWS: u32 = 4096;

/// The largest block a reader accepts (rows per block).
pub(crate) const MAX_BLOCK_ROWS: u32 = 1 << 20;

/// Bytes of the directory's head: rows (u64), rows per block (u32), blocks (u32).
pub(crate) const DIRECTORY_HEAD: usize = 16;

/// Bytes of one directory item: first major, first minor, offset, length (u64 each).
pub(crate) const DIRECTORY_ITEM: usize = 32;

/// Bytes of one row (major, minor, entry as u64) in a block's uncompressed data.
pub(crate) const ROW_BYTES: usize = 24;

/// The value of the [`EXT_EVENT_INDEX`] extension: which branches the keys are and where the
/// event-index record is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct IndexLocation {
    /// The major key's branch.
    pub(crate) major: String,
    /// The minor key's branch.
    pub(crate) minor: String,
    /// Rows: the tree's entries.
    pub(crate) rows: u64,
    /// The record's offset (its header).
    pub(crate) offset: u64,
    /// The record's length (header and body).
    pub(crate) len: u64,
}

impl crate::meta::TreeMeta {
    /// The key branches (major, minor) of the tree's event index, if it has one (its
    /// [`EXT_EVENT_INDEX`] extension; `None` too when that does not decode).
    pub fn event_index_keys(&self) -> Option<(String, String)> {
        let ext = self.extensions.iter().find(|e| e.key == EXT_EVENT_INDEX)?;
        let location: IndexLocation = postcard::from_bytes(&ext.value).ok()?;
        Some((location.major, location.minor))
    }
}

/// One row: the keys' order-preserving forms ([`key_bits`]) and the entry.
pub(crate) type Row = (u64, u64, u64);

const SIGN: u64 = 1 << 63;

/// Whether a branch of type `dtype` can be a key: an integer scalar.
pub(crate) fn is_key_type(dtype: DataType) -> bool {
    matches!(dtype, DataType::Scalar(t) if t.is_integer())
}

/// The order-preserving 64-bit form of `value` as a key of type `ty`: unsigned values as they
/// are, signed ones (as i64) with the sign bit flipped, so that keys of one type compare as
/// their values do. `None` if `value` is outside the type's range (no entry can have it).
pub(crate) fn key_bits(ty: ScalarType, value: i128) -> Option<u64> {
    let (min, max): (i128, i128) = match ty {
        ScalarType::I8 => (i8::MIN.into(), i8::MAX.into()),
        ScalarType::U8 => (0, u8::MAX.into()),
        ScalarType::I16 => (i16::MIN.into(), i16::MAX.into()),
        ScalarType::U16 => (0, u16::MAX.into()),
        ScalarType::I32 => (i32::MIN.into(), i32::MAX.into()),
        ScalarType::U32 => (0, u32::MAX.into()),
        ScalarType::I64 => (i64::MIN.into(), i64::MAX.into()),
        ScalarType::U64 => (0, u64::MAX.into()),
        ScalarType::Bool | ScalarType::F32 | ScalarType::F64 => return None,
    };
    if !(min..=max).contains(&value) {
        return None;
    }
    Some(if signed(ty) {
        (value as i64 as u64) ^ SIGN
    } else {
        value as u64
    })
}

/// The value whose [`key_bits`] are `bits`.
pub(crate) fn key_value(ty: ScalarType, bits: u64) -> i128 {
    if signed(ty) {
        i128::from((bits ^ SIGN) as i64)
    } else {
        i128::from(bits)
    }
}

fn signed(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
    )
}

/// Appends the [`key_bits`] of the little-endian values of type `ty` in `bytes`.
pub(crate) fn extend_key_bits(ty: ScalarType, bytes: &[u8], out: &mut Vec<u64>) {
    let width = ty.size();
    out.reserve(bytes.len() / width);
    for value in bytes.chunks_exact(width) {
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(value);
        let raw = u64::from_le_bytes(le);
        out.push(if signed(ty) {
            // Sign-extend from `width` bytes, then flip the sign bit.
            let shift = 64 - 8 * width as u32;
            (((raw << shift) as i64) >> shift) as u64 ^ SIGN
        } else {
            raw
        });
    }
}

/// The key branches of an index: position in the tree, name and type, checked to be integer
/// scalars.
#[derive(Debug, Clone)]
pub(crate) struct KeyBranches {
    pub(crate) major: (usize, String, ScalarType),
    pub(crate) minor: (usize, String, ScalarType),
}

impl KeyBranches {
    /// Finds `major` and `minor` among `branches` of tree `tree`.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`]; [`Error::InvalidSchema`] for a branch that is not an integer
    /// scalar.
    pub(crate) fn find(
        tree: &str,
        branches: &[BranchMeta],
        major: &str,
        minor: &str,
    ) -> Result<KeyBranches> {
        let find = |name: &str| {
            let (i, b) = branches
                .iter()
                .enumerate()
                .find(|(_, b)| b.name == name)
                .ok_or_else(|| Error::NoSuchBranch {
                    tree: tree.to_owned(),
                    name: name.to_owned(),
                })?;
            if !is_key_type(b.dtype) {
                return Err(Error::InvalidSchema {
                    tree: tree.to_owned(),
                    reason: format!(
                        "branch {name:?} is {}, not an integer scalar: it cannot key an event \
                         index",
                        b.dtype
                    ),
                });
            }
            Ok((i, name.to_owned(), b.dtype.scalar()))
        };
        Ok(KeyBranches {
            major: find(major)?,
            minor: find(minor)?,
        })
    }
}

/// The rows of the keys `majors[e]`, `minors[e]` of every entry `e`, sorted by major key, minor
/// key and entry.
pub(crate) fn sorted_rows(majors: &[u64], minors: &[u64]) -> Vec<Row> {
    let mut rows: Vec<Row> = majors
        .iter()
        .zip(minors)
        .enumerate()
        .map(|(e, (&a, &b))| (a, b, e as u64))
        .collect();
    // Entries are in order already: runs of equal keys need no stable sort, and data written in
    // key order (the usual case) is sorted on the first pass.
    if !rows.is_sorted() {
        rows.sort_unstable();
    }
    rows
}

/// The body of an event-index record of `rows` (sorted): the directory, then the blocks.
///
/// # Errors
/// [`Error::Compress`] if the codec fails.
pub(crate) fn encode_body(tree: &str, rows: &[Row]) -> Result<Vec<u8>> {
    let blocks = rows.len().div_ceil(BLOCK_ROWS as usize);
    let directory_len = DIRECTORY_HEAD + DIRECTORY_ITEM * blocks + 4;
    let mut encoder = BlockEncoder::new();
    let mut data = Vec::new();
    let mut raw = Vec::with_capacity(BLOCK_ROWS as usize * ROW_BYTES);
    let mut items = Vec::with_capacity(DIRECTORY_ITEM * blocks);
    for chunk in rows.chunks(BLOCK_ROWS as usize) {
        raw.clear();
        for part in 0..3 {
            for row in chunk {
                let value = [row.0, row.1, row.2][part];
                raw.extend_from_slice(&value.to_le_bytes());
            }
        }
        let offset = (directory_len + data.len()) as u64;
        // Delta, zigzag and shuffle make a run number's constant stretch and the sorted event
        // numbers mostly zero bytes, which LZ4 decodes fastest.
        encoder
            .encode(
                Codec::LZ4,
                Precondition::DeltaShuffle(Width::W8),
                &raw,
                &mut data,
            )
            .map_err(|source| Error::Compress {
                tree: tree.to_owned(),
                branch: "(event index)".to_owned(),
                source: Box::new(source),
            })?;
        let len = (directory_len + data.len()) as u64 - offset;
        for value in [chunk[0].0, chunk[0].1, offset, len] {
            items.extend_from_slice(&value.to_le_bytes());
        }
    }
    let mut body = Vec::with_capacity(directory_len + data.len());
    body.extend_from_slice(&(rows.len() as u64).to_le_bytes());
    body.extend_from_slice(&BLOCK_ROWS.to_le_bytes());
    body.extend_from_slice(&(blocks as u32).to_le_bytes());
    body.extend_from_slice(&items);
    let crc = evtc_codecs::crc32(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body.extend_from_slice(&data);
    Ok(body)
}

/// The keys, per entry, an index gathers while a tree is written: from the values filled into
/// its key branches, or given for entries copied from another file.
#[derive(Debug)]
pub(crate) struct IndexKeys {
    pub(crate) branches: KeyBranches,
    pub(crate) majors: Vec<u64>,
    pub(crate) minors: Vec<u64>,
}

impl IndexKeys {
    /// Keys of the key branches `branches`, none yet.
    pub(crate) fn new(branches: KeyBranches) -> IndexKeys {
        IndexKeys {
            branches,
            majors: Vec::new(),
            minors: Vec::new(),
        }
    }

    /// Takes note of the little-endian `bytes` filled into branch `branch`, if it is a key.
    pub(crate) fn filled(&mut self, branch: usize, bytes: &[u8]) {
        if branch == self.branches.major.0 {
            extend_key_bits(self.branches.major.2, bytes, &mut self.majors);
        }
        if branch == self.branches.minor.0 {
            extend_key_bits(self.branches.minor.2, bytes, &mut self.minors);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_bits_keep_the_order_of_values() {
        for ty in [ScalarType::I8, ScalarType::I32, ScalarType::I64] {
            let values = [-128i128, -1, 0, 1, 127];
            let bits: Vec<u64> = values.iter().map(|&v| key_bits(ty, v).unwrap()).collect();
            assert!(bits.is_sorted(), "{ty}: {bits:?}");
            for (&v, &b) in values.iter().zip(&bits) {
                assert_eq!(key_value(ty, b), v);
            }
        }
        assert_eq!(key_bits(ScalarType::U64, u64::MAX.into()), Some(u64::MAX));
        assert_eq!(key_bits(ScalarType::U8, 256), None);
        assert_eq!(key_bits(ScalarType::I16, -32769), None);
        assert_eq!(key_bits(ScalarType::U32, -1), None);
        assert_eq!(key_bits(ScalarType::F32, 1), None);
    }

    #[test]
    fn filled_bytes_give_the_key_bits_of_their_values() {
        let mut out = Vec::new();
        extend_key_bits(ScalarType::I16, &[0xFF, 0xFF, 0x02, 0x00], &mut out);
        assert_eq!(
            out,
            [
                key_bits(ScalarType::I16, -1).unwrap(),
                key_bits(ScalarType::I16, 2).unwrap()
            ]
        );
        out.clear();
        extend_key_bits(ScalarType::U32, &0xFFFF_FFF0u32.to_le_bytes(), &mut out);
        assert_eq!(out, [0xFFFF_FFF0]);
    }

    #[test]
    fn rows_sort_by_key_then_entry() {
        let rows = sorted_rows(&[2, 1, 2, 1], &[5, 9, 5, 3]);
        assert_eq!(rows, [(1, 3, 3), (1, 9, 1), (2, 5, 0), (2, 5, 2)]);
    }
}
