//! The column model: a tree ([`Tree`]) of importable [`Column`]s and the branches it refuses
//! ([`UnsupportedBranch`]), and where and how each column's values lie in the file: its baskets
//! ([`BasketRef`]) and their byte layout ([`Layout`]).

use std::sync::Arc;

use crate::error::Error;
use crate::reduced::Stored;
use crate::rntuple::field::{FieldColumn, Level};
use crate::ttree::interp::Plan;
use crate::types::ColumnKind;

/// How a column's entries are laid out in a basket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Layout {
    /// `len` values at `offset` in each `stride`-byte entry.
    Fixed {
        stored: Stored,
        len: usize,
        offset: usize,
        stride: usize,
    },
    /// Values only; entry boundaries from the basket's entry offsets.
    Jagged { stored: Stored },
    /// `std::vector<T>`: a 10-byte header (byte count, version, size) then the values.
    Vector { stored: Stored },
    /// `std::vector<std::vector<T>>`: a 10-byte header, then per inner vector a size and values.
    VectorVector { stored: Stored },
    /// A TString-encoded string per entry (one length byte, or 255 and a 32-bit length);
    /// `header`: after a 6-byte object header (byte count, version), as a `std::string` member
    /// of a split object is streamed.
    String { header: bool },
    /// A `char*` member of a split object (kCharStar): a 32-bit big-endian length, then the
    /// characters.
    CharStar,
    /// A `std::vector` of `stride`-byte objects streamed one by one (a 10-byte vector header,
    /// then the objects, each starting with [`BranchColumn::entry_prefix`]): the value at
    /// `offset` in each object. An entry whose vector was streamed member-wise (each member of
    /// all objects in turn) is read through column `member_wise` of [`BranchColumn::plan`], if
    /// there is one.
    ObjectVector {
        stored: Stored,
        offset: usize,
        stride: usize,
        member_wise: Option<usize>,
    },
    /// Column `target` of the column's interpreted plan ([`BranchColumn::plan`]): objects of
    /// varying size walked entry by entry.
    Interpreted { target: usize },
    /// A `T* x //[n]` member: a byte (1 if there are values, else 0), then the values.
    FlaggedArray { stored: Stored },
    /// A fixed array member of a split collection's objects: `len` values per object, all the
    /// entry's objects back to back.
    ArraysInCollection { stored: Stored, len: usize },
    /// Leaf `target` of a leaf-list whose rows vary in size (`id/I:n/I:x[n]/D`, Geant4's
    /// row-wise ntuples): each entry is one row, the leaves ([`BranchColumn::row`]) in order, each
    /// counted leaf as many values as the earlier leaf it names.
    LeafRow { target: usize },
    /// A `T* x //[n]` member of a split collection's objects: per object, a byte (1 if there
    /// are values, else 0), then as many values as its `n`, a member of its own branch
    /// ([`BranchColumn::counter_column`], found by `BranchColumn::lengths`).
    PointerArraysInCollection { stored: Stored },
    /// A list of TString-encoded strings per entry, after `header`.
    StringList { header: ListHeader },
}

/// One leaf of a row of [`Layout::LeafRow`] ([`BranchColumn::row`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RowPart {
    pub(crate) stored: Stored,
    /// Values of a leaf without a counter (1, or a fixed array's length).
    pub(crate) len: usize,
    /// The earlier leaf (its index in the row) whose value is this leaf's length.
    pub(crate) counter: Option<usize>,
}

impl RowPart {
    /// The `[start, end)` of each leaf of the row at the start of `bytes` (in `spans`); returns
    /// where the row ends.
    pub(crate) fn spans(
        parts: &[RowPart],
        bytes: &[u8],
        spans: &mut Vec<(usize, usize)>,
    ) -> std::result::Result<usize, String> {
        spans.clear();
        let mut at = 0usize;
        for (k, part) in parts.iter().enumerate() {
            let n = match part.counter {
                None => part.len,
                Some(j) => {
                    let (start, end) = spans[j];
                    // A signed big-endian integer (the counter leaf's type).
                    let v = crate::cursor::signed_be(&bytes[start..end])
                        .ok_or_else(|| format!("leaf {k}'s counter holds no value"))?;
                    usize::try_from(v).map_err(|_| format!("leaf {k}'s count is {v}"))?
                }
            };
            let end = n
                .checked_mul(part.stored.size())
                .and_then(|len| at.checked_add(len))
                .filter(|&end| end <= bytes.len())
                .ok_or_else(|| format!("leaf {k} of {n} values runs past the entry"))?;
            spans.push((at, end));
            at = end;
        }
        Ok(at)
    }
}

/// What comes before the items of a list in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListHeader {
    /// Nothing: as many items as fill the entry (the `TString`s of a collection's objects).
    None,
    /// A vector's byte count, version and size (`std::vector<std::string>`).
    Vector,
}

/// Where one basket of a column is.
#[derive(Debug, Clone)]
pub(crate) struct BasketRef {
    pub(crate) first_entry: u64,
    /// Entries read from the basket, from position `skip` in it. The basket may hold more: a
    /// later basket that starts before this one ends is read instead, as ROOT does.
    pub(crate) entries: u64,
    /// The basket's entries before the first one read: non-zero when a later basket starts
    /// before this one ends and ROOT reads those entries from it instead (see
    /// `RawBranch::baskets`); several references may then share one basket.
    pub(crate) skip: u64,
    pub(crate) seek: u64,
    pub(crate) bytes: u32,
    /// A basket stored inside the TTree record instead of a key of its own.
    pub(crate) embedded: Option<Arc<EmbeddedBasket>>,
}

impl BasketRef {
    /// Whether `other` refers to the same basket (in the file, or in the tree record).
    pub(crate) fn same_basket(&self, other: &BasketRef) -> bool {
        self.seek == other.seek
            && match (&self.embedded, &other.embedded) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

/// The decoded contents of a basket embedded in the tree record.
#[derive(Debug)]
pub(crate) struct EmbeddedBasket {
    pub(crate) data: Vec<u8>,
    /// Entry offsets relative to `data` (entries + 1 values), when the branch has them.
    pub(crate) offsets: Option<Vec<u32>>,
    pub(crate) entries: u64,
}

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
    Branch(Box<BranchColumn>),
    Field(Arc<FieldColumn>),
}

/// What makes two columns' list offsets equal ([`Column::offsets_key`]): the list levels above
/// their values, down to the index columns they read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OffsetsKey(Vec<Level>);

/// A column of a TTree branch: its baskets and their byte layout.
#[derive(Debug, Clone)]
pub(crate) struct BranchColumn {
    pub(crate) layout: Layout,
    pub(crate) baskets: Arc<[BasketRef]>,
    /// Whether baskets in keys of their own end with entry offsets (the branch's
    /// `fEntryOffsetLen` is non-zero), as ROOT's `TBasket::ReadBasketBuffers` decides.
    pub(crate) entry_offsets: bool,
    /// For `x[n]` arrays whose baskets may lack entry offsets: the counter's column, to rebuild
    /// them from.
    pub(crate) counter_column: Option<Box<Column>>,
    /// Of [`Layout::PointerArraysInCollection`]: the column of the member holding each object's
    /// array length, a sibling in the same collection.
    pub(crate) lengths: Option<String>,
    /// Of [`Layout::LeafRow`]: the leaves of a row.
    pub(crate) row: Option<Arc<[RowPart]>>,
    /// Bytes every entry must start with (the class name `TBranchObject` writes before each
    /// object; for [`Layout::ObjectVector`], every object): a reader refuses an entry that
    /// holds another class.
    pub(crate) entry_prefix: Option<Arc<[u8]>>,
    /// For an object of a class with a custom streamer: the object header (byte count and
    /// version) its Streamer writes before the members if it calls WriteClassBuffer. A basket
    /// whose entries all start with it and hold the members after it is read without the
    /// headers; any other basket must hold the members alone.
    pub(crate) custom_header: Option<Arc<[u8]>>,
    /// For [`Layout::Interpreted`] columns (and [`Layout::ObjectVector`] ones, for vectors
    /// streamed member-wise): the plan of the branch's objects.
    pub(crate) plan: Option<Arc<Plan>>,
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
            Source::Field(field) if self.kind.is_variable() => {
                Some(OffsetsKey(field.levels.clone()))
            }
            _ => None,
        }
    }

    /// The TTree branch the column reads, if it is one.
    pub(crate) fn branch(&self) -> Option<&BranchColumn> {
        match &self.source {
            Source::Branch(b) => Some(b),
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
