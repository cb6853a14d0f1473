//! Where a TTree column's values are: its baskets ([`BasketRef`]) and their byte layout
//! ([`Layout`]), what the TTree reader keeps of a branch in a [`crate::column::Column`].

use std::sync::Arc;

use crate::reduced::Stored;
use crate::ttree::interp::Plan;

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
    /// (the counter of [`crate::column::Source::Branch`], found by `BranchColumn::lengths`).
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

/// A column of a TTree branch: its baskets and their byte layout.
#[derive(Debug, Clone)]
pub(crate) struct BranchColumn {
    pub(crate) layout: Layout,
    pub(crate) baskets: Arc<[BasketRef]>,
    /// Whether baskets in keys of their own end with entry offsets (the branch's
    /// `fEntryOffsetLen` is non-zero), as ROOT's `TBasket::ReadBasketBuffers` decides.
    pub(crate) entry_offsets: bool,
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
