//! How one evtc column reads from an RNTuple ([`FieldColumn`]): the list levels above its
//! values and the physical columns that hold them. Kept apart from the planning that makes
//! them, so that the crate's column type can name them without depending on the planner.

use std::sync::Arc;

use super::meta::Descriptor;
use crate::types::ScalarType;

/// The physical columns of one element sequence of a field: per representation index, the
/// column id (a field's columns are chosen per cluster by the representation in use there).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Columns(pub(crate) Vec<u32>);

/// One list level above a column's values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Level {
    /// A collection's items (also a `std::optional`, a `std::unique_ptr`, a string's
    /// characters): the index column of its offsets.
    Collection(Columns),
    /// `n` items per item above (`std::array`, `std::bitset`).
    Array(u64),
    /// The item of alternative `tag` (1-based) of a variant, where it holds that alternative:
    /// zero or one per item above.
    Alternative { switch: Columns, tag: u32 },
}

/// What a column's values are.
#[derive(Debug, Clone)]
pub(crate) enum Leaf {
    /// The values of a column, as `output`.
    Values {
        columns: Columns,
        output: ScalarType,
    },
    /// The sizes of the collection whose index column the field shows (`RNTupleCardinality`).
    Cardinality {
        columns: Columns,
        output: ScalarType,
    },
    /// A variant's alternative per item: the 0-based index of the alternative held, -1 for none.
    Tag { switch: Columns },
}

/// How one evtc column reads from an RNTuple.
#[derive(Debug)]
pub(crate) struct FieldColumn {
    pub(crate) descriptor: Arc<Descriptor>,
    /// The field's path, for errors (`hits._0.x`, as ROOT names it).
    pub(crate) path: String,
    pub(crate) levels: Vec<Level>,
    pub(crate) leaf: Leaf,
}

impl FieldColumn {
    /// What the column's list offsets are read from: equal for columns below one collection.
    pub(crate) fn offsets_key(&self) -> OffsetsKey {
        OffsetsKey(self.levels.clone())
    }
}

/// What makes two columns' list offsets equal ([`Column::offsets_key`]): the list levels above
/// their values, down to the index columns they read.
///
/// [`Column::offsets_key`]: crate::Column::offsets_key
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OffsetsKey(Vec<Level>);
