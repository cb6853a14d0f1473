//! File metadata: the postcard-encoded structures of docs/format.md section 4.

use std::fmt;

use serde::{Deserialize, Serialize};

pub use evtc_codecs::ScalarType;

/// The type of a branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataType {
    /// One value per entry.
    Scalar(ScalarType),
    /// Exactly `n` values per entry (`x[3]`).
    FixedArray(ScalarType, u32),
    /// Any number of values per entry (`Muon_pt[nMuon]`, `std::vector<float>`).
    Jagged(ScalarType),
    /// A byte string per entry.
    Bytes,
    /// A UTF-8 string per entry.
    Utf8,
}

impl DataType {
    /// The type of the stored values.
    pub fn scalar(self) -> ScalarType {
        match self {
            DataType::Scalar(t) | DataType::FixedArray(t, _) | DataType::Jagged(t) => t,
            DataType::Bytes | DataType::Utf8 => ScalarType::U8,
        }
    }

    /// Whether entries have varying numbers of values.
    pub fn is_variable(self) -> bool {
        matches!(self, DataType::Jagged(_) | DataType::Bytes | DataType::Utf8)
    }

    /// Values per entry for scalars (1) and fixed arrays (n); `None` for variable-length types.
    pub fn fixed_len(self) -> Option<usize> {
        match self {
            DataType::Scalar(_) => Some(1),
            DataType::FixedArray(_, n) => Some(n as usize),
            _ => None,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Scalar(t) => write!(f, "{t}"),
            DataType::FixedArray(t, n) => write!(f, "{t}[{n}]"),
            DataType::Jagged(t) => write!(f, "{t}[]"),
            DataType::Bytes => f.write_str("bytes"),
            DataType::Utf8 => f.write_str("string"),
        }
    }
}

/// How the entry boundaries of a branch are stored (docs/format.md 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Boundaries {
    /// Scalars and fixed arrays: boundaries follow from the type.
    Fixed,
    /// Per-entry u32 element offsets stored with the values in one block, as ROOT does.
    Offsets,
    /// Per-entry u32 counts in their own block.
    Counts,
    /// No boundaries stored: they come from the counter branch.
    None,
}

impl fmt::Display for Boundaries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Boundaries::Fixed => "fixed",
            Boundaries::Offsets => "offsets",
            Boundaries::Counts => "counts",
            Boundaries::None => "none",
        })
    }
}

/// Key of the required branch extension that marks, since version 1.1, a RAC branch with
/// boundaries `counts` whose units store their entries' sizes instead of a counts block after the
/// RAC payload (docs/format.md 3.3). A 1.0 reader, which would look for that block, refuses the file.
pub const EXT_RAC_ENTRY_SIZES: &str = "rac-entry-sizes";

/// Key of the required branch extension that marks, since version 1.8, an lzma RAC branch with a
/// dictionary: its units are raw LZMA2 data against the dictionary as preset dictionary rather
/// than xz streams (docs/format.md 3.3). A reader of 1.0-1.7, which would decode them as xz
/// streams, refuses the file by the extension's name.
pub const EXT_RAC_LZMA_DICTIONARY: &str = "rac-lzma-dictionary";

/// Key of the optional branch extension that records, since version 1.3, that a float branch's
/// values were rounded to fewer mantissa bits before they were written (lossy, asked for by the
/// writer's user); its value is one byte, the mantissa bits kept (docs/format.md 4.2).
pub const EXT_MANTISSA_BITS: &str = "mantissa-bits";

/// Key of the optional branch extension that records, since version 1.3, that a float branch's
/// values were quantized into a range before they were written (lossy, asked for by the writer's
/// user); its value is the range's ends as two f64 and the bits as one byte (docs/format.md 4.2).
pub const EXT_QUANTIZED: &str = "quantized";

/// Key of the optional branch extension that records, since version 1.4, the dimensions of a
/// multi-dimensional fixed array (ROOT's `x[2][3]`), whose values are stored flat in row-major
/// order; its value is the dimensions as little-endian u32, at least two, whose product is the
/// array's length (docs/format.md 4.2).
pub const EXT_SHAPE: &str = "shape";

/// Key of the optional tree extension that records, since version 1.10, the entries of
/// branches that a merge filled with their type's default because an input lacked them
/// (`evtc merge --union`); its value is 20-byte items, one per branch and input: the branch's
/// number in the tree (u32), the first entry and the entry count (u64), little-endian
/// (docs/format.md 4.2).
pub const EXT_MERGE_DEFAULTS: &str = "merge-defaults";

/// Key of the required branch extension that lists, since version 1.12, the earlier parts of a
/// branch's basket index when an append wrote the baskets it added in an index record of their
/// own instead of writing the whole index again; its value is a `Vec<IndexSegment>` in
/// postcard encoding, in entry order, followed by the record at `index_offset`
/// (docs/format.md 3.5). A reader of 1.0-1.11, which would read the last part only, refuses the
/// file by the extension's name.
pub const EXT_INDEX_SEGMENTS: &str = "index-segments";

/// One of the earlier parts of a branch's basket index ([`EXT_INDEX_SEGMENTS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexSegment {
    /// File offset of the branch-index record holding this part.
    pub offset: u64,
    /// Length of that record, header included.
    pub len: u64,
    /// Baskets it lists.
    pub baskets: u64,
}

/// An addition of a later minor version (docs/format.md 4.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extension {
    /// What the extension is.
    pub key: String,
    /// Whether a reader that does not know `key` must refuse the file (or branch).
    pub required: bool,
    /// The extension's own encoding.
    pub value: Vec<u8>,
}

/// Everything the footer says about one branch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchMeta {
    /// Branch name, unique in its tree.
    pub name: String,
    /// Type of the branch.
    pub dtype: DataType,
    /// The counter branch of a variable-length branch, if any.
    pub counter: Option<String>,
    /// How entry boundaries are stored.
    pub boundaries: Boundaries,
    /// Algorithm id of the codec the writer used.
    pub codec: u8,
    /// Level of that codec.
    pub level: i8,
    /// Preconditioner id of the values.
    pub precondition: u8,
    /// Element width of the values' preconditioner.
    pub width: u8,
    /// Preconditioner id of the counts or offsets (width 4).
    pub count_precondition: u8,
    /// Whether the branch's baskets are random-access baskets (kind 1).
    pub rac: bool,
    /// Minimum uncompressed bytes per RAC unit the writer used.
    pub rac_unit_bytes: u32,
    /// File offset of the branch's dictionary record, 0 for none.
    pub dictionary_offset: u64,
    /// Length of the branch's dictionary record, 0 for none.
    pub dictionary_len: u64,
    /// Entries in the branch (equals the tree's).
    pub entries: u64,
    /// Uncompressed bytes of values, counts and offsets.
    pub raw_bytes: u64,
    /// Bytes of the branch's basket records on disk.
    pub stored_bytes: u64,
    /// Number of baskets.
    pub baskets: u64,
    /// File offset of the branch's index record.
    pub index_offset: u64,
    /// Length of the branch's index record.
    pub index_len: u64,
    /// Extensions.
    pub extensions: Vec<Extension>,
}

impl BranchMeta {
    /// This description without what a file wrote of the branch: its entries, bytes, baskets
    /// and index none (what a schema record holds, and where a writer of the branch starts).
    pub(crate) fn unwritten(&self) -> BranchMeta {
        BranchMeta {
            entries: 0,
            raw_bytes: 0,
            stored_bytes: 0,
            baskets: 0,
            index_offset: 0,
            index_len: 0,
            ..self.clone()
        }
    }

    /// Whether the branch's RAC units store their entries' sizes (the required extension
    /// [`EXT_RAC_ENTRY_SIZES`], version 1.1), rather than a counts block or a counter.
    pub fn rac_entry_sizes(&self) -> bool {
        self.extensions.iter().any(|e| e.key == EXT_RAC_ENTRY_SIZES)
    }

    /// Whether the branch is marked as an lzma RAC branch with a dictionary (the required
    /// extension [`EXT_RAC_LZMA_DICTIONARY`], version 1.8), whose units are raw LZMA2 data.
    pub fn rac_lzma_dictionary(&self) -> bool {
        self.extensions
            .iter()
            .any(|e| e.key == EXT_RAC_LZMA_DICTIONARY)
    }

    /// The earlier parts of the branch's basket index ([`EXT_INDEX_SEGMENTS`], version 1.12),
    /// in entry order; empty when the record at `index_offset` holds the whole index.
    ///
    /// # Errors
    /// The extension's value does not decode (its postcard error).
    pub fn index_segments(&self) -> std::result::Result<Vec<IndexSegment>, postcard::Error> {
        match self.extensions.iter().find(|e| e.key == EXT_INDEX_SEGMENTS) {
            Some(e) => postcard::from_bytes(&e.value),
            None => Ok(Vec::new()),
        }
    }

    /// The mantissa bits this float branch's values were rounded to before writing
    /// ([`EXT_MANTISSA_BITS`]), if they were.
    pub fn mantissa_bits(&self) -> Option<u32> {
        self.extensions
            .iter()
            .find(|e| e.key == EXT_MANTISSA_BITS)
            .and_then(|e| e.value.first())
            .map(|&b| u32::from(b))
    }

    /// The branch's type as displayed: its [`DataType`], with its dimensions for a
    /// multi-dimensional fixed array (`f64[2][3]`).
    pub fn type_name(&self) -> String {
        match (self.dtype, self.shape()) {
            (DataType::FixedArray(t, _), Some(dims)) => {
                let dims: String = dims.iter().map(|d| format!("[{d}]")).collect();
                format!("{t}{dims}")
            }
            (dtype, _) => dtype.to_string(),
        }
    }

    /// The dimensions of this fixed-array branch ([`EXT_SHAPE`]), if it records them and they
    /// are well formed (two or more, their product the array's length).
    pub fn shape(&self) -> Option<Vec<u32>> {
        let v = &self.extensions.iter().find(|e| e.key == EXT_SHAPE)?.value;
        let dims: Vec<u32> = v
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let DataType::FixedArray(_, n) = self.dtype else {
            return None;
        };
        let product = dims.iter().try_fold(1u32, |p, &d| p.checked_mul(d));
        (v.len() % 4 == 0 && dims.len() >= 2 && product == Some(n)).then_some(dims)
    }

    /// The quantization this float branch's values went through before writing
    /// ([`EXT_QUANTIZED`]), if they did (and the record is well formed).
    pub fn quantization(&self) -> Option<evtc_codecs::Quantization> {
        let v = &self
            .extensions
            .iter()
            .find(|e| e.key == EXT_QUANTIZED)?
            .value;
        let (min, rest) = v.split_first_chunk::<8>()?;
        let (max, rest) = rest.split_first_chunk::<8>()?;
        let [bits] = rest else { return None };
        evtc_codecs::Quantization::new(
            f64::from_le_bytes(*min),
            f64::from_le_bytes(*max),
            u32::from(*bits),
        )
        .ok()
    }
}

/// Everything the footer says about one tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeMeta {
    /// Tree name, unique in the file.
    pub name: String,
    /// Number of entries.
    pub entries: u64,
    /// Entries at which clusters end, strictly increasing, the last equal to `entries`.
    pub cluster_ends: Vec<u64>,
    /// The branches.
    pub branches: Vec<BranchMeta>,
    /// Extensions.
    pub extensions: Vec<Extension>,
}

/// The tree-schema record: a tree's name and branches as writing starts (for recovery).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSchema {
    /// Tree name.
    pub name: String,
    /// Branches, with zero sizes and index locations.
    pub branches: Vec<BranchMeta>,
}

/// The footer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileMeta {
    /// Format major version.
    pub major: u16,
    /// Format minor version.
    pub minor: u16,
    /// The software that wrote the file.
    pub writer: String,
    /// The trees.
    pub trees: Vec<TreeMeta>,
    /// Extensions.
    pub extensions: Vec<Extension>,
}

/// Where one basket is and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BasketLoc {
    /// File offset of the basket record.
    pub offset: u64,
    /// Length of the record, header included.
    pub record_len: u64,
    /// First entry in the basket.
    pub first_entry: u64,
    /// Number of entries.
    pub entries: u64,
    /// Number of values.
    pub elements: u64,
}

/// The branch-index record: every basket of a branch, in entry order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BasketIndex {
    /// The baskets.
    pub baskets: Vec<BasketLoc>,
}
