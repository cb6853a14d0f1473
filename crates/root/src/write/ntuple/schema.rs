//! An RNTuple's schema as written: each [`NtupleField`] as the tree of field records ROOT
//! makes of its C++ type, and the physical columns attached to them, each knowing which part
//! of the field's [`ColumnData`](crate::ColumnData) it stores.

use evtc_codecs::{Algorithm, Codec};

use super::page::Floats;
use super::{FloatStorage, NtupleField};
use crate::error::{Error, Result};
use crate::rntuple::ColumnType;
use crate::types::{ColumnKind, ScalarType};

/// The structural roles (the specification's field description).
const ROLE_LEAF: u16 = 0;
const ROLE_COLLECTION: u16 = 1;
/// The repetitive-field flag: a fixed-size array.
const FLAG_REPETITIVE: u16 = 0x01;

/// One field record.
#[derive(Debug, Clone)]
pub(super) struct FieldRecord {
    pub(super) parent: u32,
    pub(super) role: u16,
    pub(super) flags: u16,
    pub(super) name: String,
    pub(super) type_name: String,
    pub(super) array_size: Option<u64>,
}

/// Which part of a field's data a column stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// The entries' boundaries (`ColumnData::offsets`).
    Offsets,
    /// The boundaries of list level `i` (`ColumnData::levels[i]`).
    Level(usize),
    /// The values.
    Values,
}

/// One physical column.
#[derive(Debug, Clone)]
pub(super) struct ColumnRecord {
    pub(super) kind: ColumnType,
    pub(super) bits: u16,
    /// The field record it is attached to.
    pub(super) field_id: u32,
    /// The [`NtupleField`] whose data it stores.
    pub(super) field: usize,
    pub(super) source: Source,
    pub(super) floats: Floats,
    pub(super) codec: Codec,
}

impl ColumnRecord {
    /// A quantized column's value range.
    pub(super) fn range(&self) -> Option<(f64, f64)> {
        match self.floats {
            Floats::Quant { min, max, .. } => Some((min, max)),
            _ => None,
        }
    }
}

/// The C++ shape of a field, outside in.
#[derive(Debug, Clone)]
enum Shape {
    Leaf(ScalarType),
    String,
    Array(u64, Box<Shape>),
    List(Box<Shape>),
}

impl Shape {
    fn of(field: &NtupleField) -> Shape {
        let lists =
            |depth: u8, inner: Shape| (0..depth).fold(inner, |s, _| Shape::List(Box::new(s)));
        match field.kind {
            ColumnKind::Scalar(t) => Shape::Leaf(t),
            ColumnKind::Fixed(t, n) => {
                let dims: Vec<u64> = if field.dims.len() >= 2 {
                    field.dims.iter().map(|&d| d as u64).collect()
                } else {
                    vec![n as u64]
                };
                dims.iter()
                    .rev()
                    .fold(Shape::Leaf(t), |s, &d| Shape::Array(d, Box::new(s)))
            }
            ColumnKind::Jagged(t) => lists(1, Shape::Leaf(t)),
            ColumnKind::Nested(t, depth) => lists(depth, Shape::Leaf(t)),
            ColumnKind::String => Shape::String,
            ColumnKind::Strings(depth) => lists(depth, Shape::String),
        }
    }

    /// The normalized C++ type name; `rvec` names the outermost list `ROOT::VecOps::RVec`.
    fn type_name(&self, rvec: bool) -> String {
        match self {
            Shape::Leaf(t) => scalar_name(*t).to_owned(),
            Shape::String => "std::string".to_owned(),
            Shape::Array(n, s) => format!("std::array<{},{n}>", s.type_name(false)),
            Shape::List(s) if rvec => format!("ROOT::VecOps::RVec<{}>", s.type_name(false)),
            Shape::List(s) => format!("std::vector<{}>", s.type_name(false)),
        }
    }

    /// List levels at and below this node (a string counts as one: its characters).
    fn lists(&self) -> usize {
        match self {
            Shape::Leaf(_) => 0,
            Shape::String => 1,
            Shape::Array(_, s) => s.lists(),
            Shape::List(s) => 1 + s.lists(),
        }
    }
}

/// RNTuple's normalized name of a fundamental type.
fn scalar_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "bool",
        ScalarType::I8 => "std::int8_t",
        ScalarType::U8 => "std::uint8_t",
        ScalarType::I16 => "std::int16_t",
        ScalarType::U16 => "std::uint16_t",
        ScalarType::I32 => "std::int32_t",
        ScalarType::U32 => "std::uint32_t",
        ScalarType::I64 => "std::int64_t",
        ScalarType::U64 => "std::uint64_t",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// Plans every field: their records (each top-level field followed by its subfields, as ROOT
/// orders them) and columns.
///
/// # Errors
/// [`Error::Unwritable`] for a name RNTuple refuses or a reduced float ROOT has no column for.
pub(super) fn plan(fields: &[NtupleField]) -> Result<(Vec<FieldRecord>, Vec<ColumnRecord>)> {
    let mut records = Vec::new();
    let mut columns = Vec::new();
    for (index, field) in fields.iter().enumerate() {
        check_name(&field.name)?;
        let shape = Shape::of(field);
        let mut planner = Planner {
            records: &mut records,
            columns: &mut columns,
            field,
            index,
            lists: shape.lists(),
            seen: 0,
        };
        planner.add(&shape, &field.name, None, field.rvec)?;
    }
    Ok((records, columns))
}

/// Refuses names the specification does not allow: empty, or with control characters, `.`,
/// space, `\` or `/`.
fn check_name(name: &str) -> Result<()> {
    let bad = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '.' | ' ' | '\\' | '/'));
    if name.is_empty() || bad.is_some() {
        return Err(Error::Unwritable {
            what: format!("field {name:?}"),
            reason: match bad {
                Some(c) => format!("RNTuple field names may not hold {c:?}"),
                None => "RNTuple fields need a name".into(),
            },
        });
    }
    Ok(())
}

struct Planner<'a> {
    records: &'a mut Vec<FieldRecord>,
    columns: &'a mut Vec<ColumnRecord>,
    field: &'a NtupleField,
    index: usize,
    /// The field's list levels in all.
    lists: usize,
    /// List levels met so far, outside in.
    seen: usize,
}

impl Planner<'_> {
    /// Adds the field record of `shape` named `name` under `parent` (none: top level), its
    /// columns, then its subfields.
    fn add(&mut self, shape: &Shape, name: &str, parent: Option<u32>, rvec: bool) -> Result<()> {
        let id = self.records.len() as u32;
        let (role, flags, array_size) = match shape {
            Shape::Leaf(_) | Shape::String => (ROLE_LEAF, 0, None),
            Shape::Array(n, _) => (ROLE_LEAF, FLAG_REPETITIVE, Some(*n)),
            Shape::List(_) => (ROLE_COLLECTION, 0, None),
        };
        self.records.push(FieldRecord {
            parent: parent.unwrap_or(id),
            role,
            flags,
            name: name.to_owned(),
            type_name: shape.type_name(rvec),
            array_size,
        });
        match shape {
            Shape::Leaf(t) => self.value_column(id, *t)?,
            Shape::String => {
                self.index_column(id);
                self.push(id, ColumnType::Char, 8, Source::Values, Floats::Plain);
            }
            Shape::Array(_, inner) => self.add(inner, "_0", Some(id), false)?,
            Shape::List(inner) => {
                self.index_column(id);
                self.add(inner, "_0", Some(id), false)?;
            }
        }
        Ok(())
    }

    /// Whether the field is stored compressed (split encodings) or not (plain ones, as ROOT
    /// writes uncompressed RNTuples).
    fn split(&self) -> bool {
        self.field.codec.algorithm() != Algorithm::None
    }

    fn push(&mut self, field_id: u32, kind: ColumnType, bits: u16, source: Source, floats: Floats) {
        self.columns.push(ColumnRecord {
            kind,
            bits,
            field_id,
            field: self.index,
            source,
            floats,
            codec: self.field.codec,
        });
    }

    /// The index column of the next list level.
    fn index_column(&mut self, field_id: u32) {
        let source = match self.seen {
            0 => Source::Offsets,
            j => Source::Level(self.lists - 1 - j),
        };
        self.seen += 1;
        let kind = if self.split() {
            ColumnType::SplitIndex64
        } else {
            ColumnType::Index64
        };
        self.push(field_id, kind, 64, source, Floats::Plain);
    }

    /// The column of a leaf's values of type `t`.
    fn value_column(&mut self, field_id: u32, t: ScalarType) -> Result<()> {
        use ColumnType::*;
        let split = self.split();
        let pick =
            |plain: ColumnType, split_kind: ColumnType| if split { split_kind } else { plain };
        let floats = match self.field.floats {
            FloatStorage::Plain => Floats::Plain,
            FloatStorage::Truncated { mantissa_bits }
                if t == ScalarType::F32 && (1..=22).contains(&mantissa_bits) =>
            {
                Floats::Trunc {
                    bits: 1 + 8 + mantissa_bits as u16,
                }
            }
            // Doubles (whose rounded values need not fit a float's exponent): stored whole, the
            // rounded mantissas' zero bits left to the codec.
            FloatStorage::Truncated { .. } if t.is_float() => Floats::Plain,
            FloatStorage::Quantized { min, max, bits }
                if t.is_float() && (1..=32).contains(&bits) =>
            {
                Floats::Quant {
                    bits: bits as u16,
                    min,
                    max,
                }
            }
            other => {
                return Err(Error::Unwritable {
                    what: format!("field {:?}", self.field.name),
                    reason: format!("{other:?} has no RNTuple column for {t} values"),
                });
            }
        };
        let (kind, bits) = match (t, floats) {
            (_, Floats::Trunc { bits }) => (Real32Trunc, bits),
            (_, Floats::Quant { bits, .. }) => (Real32Quant, bits),
            (ScalarType::Bool, _) => (Bit, 1),
            (ScalarType::I8, _) => (Int8, 8),
            (ScalarType::U8, _) => (UInt8, 8),
            (ScalarType::I16, _) => (pick(Int16, SplitInt16), 16),
            (ScalarType::U16, _) => (pick(UInt16, SplitUInt16), 16),
            (ScalarType::I32, _) => (pick(Int32, SplitInt32), 32),
            (ScalarType::U32, _) => (pick(UInt32, SplitUInt32), 32),
            (ScalarType::I64, _) => (pick(Int64, SplitInt64), 64),
            (ScalarType::U64, _) => (pick(UInt64, SplitUInt64), 64),
            (ScalarType::F32, _) => (pick(Real32, SplitReal32), 32),
            (ScalarType::F64, _) => (pick(Real64, SplitReal64), 64),
        };
        self.push(field_id, kind, bits, Source::Values, floats);
        Ok(())
    }
}
