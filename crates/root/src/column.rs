//! The column model shared by both readers: a tree ([`Tree`]) of importable [`Column`]s and the
//! branches it refuses ([`UnsupportedBranch`]). Where and how a column's values lie in the file
//! is its reader's: a TTree branch's baskets and byte layout ([`BranchColumn`], in `ttree`), an
//! RNTuple field's columns and list levels ([`FieldColumn`], in `rntuple`).

use std::sync::Arc;

use crate::error::Error;
use crate::rntuple::field::{FieldColumn, OffsetsKey};
use crate::ttree::column::{BasketRef, BranchColumn};
use crate::types::ColumnKind;

/// One column of a tree: a branch, or one leaf of a leaf-list branch.
#[derive(Debug, Clone)]
pub struct Column {
    /// The full name: the branch name, `parent/child` for members of split structs (as uproot
    /// names them), `branch/leaf` for leaves of a leaf-list.
    pub name: String,
    /// The shape and value type.
    pub kind: ColumnKind,
    /// For `x[n]` arrays: the counter branch whose values are this column's entry lengths.
    pub counter: Option<String>,
    /// ROOT's description of the type (leaf title or class name), for display.
    pub root_type: String,
    /// For fixed arrays of two or more dimensions (`x[2][3]`): the dimensions, row-major (the
    /// values are flat); empty otherwise.
    pub dims: Vec<usize>,
    /// The branch's compression setting (`fCompress`, e.g. 505).
    pub compression: i32,
    /// Uncompressed bytes of the branch's baskets (ROOT's `fTotBytes`).
    pub tot_bytes: u64,
    /// Compressed bytes of the branch's baskets (ROOT's `fZipBytes`).
    pub zip_bytes: u64,
    /// Where the values are and how they are laid out.
    pub(crate) source: Source,
}

/// Where a column's values come from: a TTree branch's baskets, or an RNTuple field's pages.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A branch, and for `x[n]` arrays whose baskets may lack entry offsets (and arrays in a
    /// split collection's objects) the column whose values are each entry's lengths.
    Branch(Box<BranchColumn>, Option<Box<Column>>),
    Field(Arc<FieldColumn>),
}

impl Column {
    /// A key equal for two columns of one tree whose list offsets are equal over every entry
    /// range: the fields below one RNTuple collection (`Muon_pt`, `Muon_eta`, ... below
    /// `_collection0`) read the same index columns. A reader can take one column's offsets
    /// for all of them and read the others with [`ColumnReader::read_values`]. `None` for
    /// TTree branches (each stores its own entry offsets) and columns without list levels.
    ///
    /// [`ColumnReader::read_values`]: crate::ColumnReader::read_values
    pub fn offsets_key(&self) -> Option<OffsetsKey> {
        match &self.source {
            Source::Field(field) if self.kind.is_variable() => Some(field.offsets_key()),
            _ => None,
        }
    }

    /// The TTree branch the column reads, if it is one.
    pub(crate) fn branch(&self) -> Option<&BranchColumn> {
        match &self.source {
            Source::Branch(b, _) => Some(b),
            Source::Field(_) => None,
        }
    }

    /// The branch's baskets, in entry order (none for a column of an RNTuple field).
    pub fn baskets(&self) -> impl ExactSizeIterator<Item = BasketInfo> + '_ {
        let baskets: &[BasketRef] = self.branch().map_or(&[], |b| &b.baskets);
        baskets.iter().map(|b| BasketInfo {
            first_entry: b.first_entry,
            entries: b.entries,
            seek: b.seek,
            bytes: b.bytes,
            embedded: b.embedded.is_some(),
        })
    }
}

/// Where one basket of a column is, for display (`evtc inspect --baskets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BasketInfo {
    /// First entry in the basket.
    pub first_entry: u64,
    /// Entries in the basket.
    pub entries: u64,
    /// File offset of the basket's key (0 for embedded baskets).
    pub seek: u64,
    /// Bytes on disk, key included (0 for embedded baskets).
    pub bytes: u32,
    /// Whether the basket lives inside the TTree record.
    pub embedded: bool,
}

/// A branch this reader does not import, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedBranch {
    /// The branch's full name.
    pub name: String,
    /// Its class or type.
    pub class: String,
    /// Why it is not imported.
    pub reason: String,
}

impl UnsupportedBranch {
    /// The error a strict import reports for this branch.
    pub fn to_error(&self) -> Error {
        Error::Unsupported {
            branch: self.name.clone(),
            class: self.class.clone(),
            reason: self.reason.clone(),
        }
    }
}

/// A tree's metadata: its columns in branch order, and the branches that cannot be imported.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The tree's name (its path in the file).
    pub name: String,
    /// The tree's title.
    pub title: String,
    /// Number of entries.
    pub entries: u64,
    /// Entries per cluster (ROOT's `fAutoFlush` when positive), if the tree records one.
    pub auto_flush: Option<u64>,
    /// The importable columns.
    pub columns: Vec<Column>,
    /// The branches (fields) that are not importable.
    pub unsupported: Vec<UnsupportedBranch>,
    /// Which kind of tree it is.
    pub kind: TreeKind,
    /// Of an RNTuple: the shape of its top-level fields (records, lists, optional values, fixed
    /// arrays, variants) down to the columns that hold their values; empty for a TTree, whose
    /// columns are its branches.
    pub fields: Vec<FieldNode>,
    /// The major and minor expressions of the tree's `TTreeIndex` (`TTree::BuildIndex`), if it
    /// has one: branch names (`run`, `event`) or other expressions of `TTree::Draw`.
    pub index: Option<(String, String)>,
}

/// The kinds of tree ROOT writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeKind {
    /// A `TTree` (or `TNtuple`): branches cut into baskets.
    TTree,
    /// A `ROOT::RNTuple`: fields stored as columns of pages, in clusters.
    RNTuple,
}

/// One field of an RNTuple, and the fields or column below it.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldNode {
    /// The field's name (`x`; `_0` for the item of a pair or tuple; empty for a variant's tag).
    pub name: String,
    /// Its C++ type, as the file names it (its alias where it has one: `Double32_t`).
    pub type_name: String,
    /// What it is.
    pub kind: FieldKind,
    /// The fields below it: a record's members, a list's, an optional value's or an array's
    /// item, a variant's tag column and alternatives.
    pub children: Vec<FieldNode>,
}

/// What a field of an RNTuple is, as evtc reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Values: column `k` of the tree's columns.
    Column(usize),
    /// A record (class, struct, `std::pair`, `std::tuple`): its members.
    Record,
    /// A collection (`std::vector`, `ROOT::RVec`, sets and maps): a list of its item.
    List,
    /// `std::optional`, `std::unique_ptr`, a variant's alternative: zero or one item.
    Option,
    /// A fixed-size array of `n` items (`std::array`, `std::bitset`).
    Array(u64),
    /// `std::variant`: the tag column (the alternative held, -1 for none), then each
    /// alternative as an optional value.
    Variant,
}

impl Tree {
    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}
