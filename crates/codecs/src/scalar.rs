//! The element types of values ([`ScalarType`]), shared by evtc's file format and its ROOT
//! reader: the types a branch, a column or a preconditioner's elements can have.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Width;

/// The type of one value (a branch's elements, a column's values). The variants' order is part
/// of evtc's file format (the tree schema stores the variant index, docs/format.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    /// `bool`, stored as one byte 0 or 1.
    Bool,
    /// `i8`.
    I8,
    /// `u8`.
    U8,
    /// `i16`.
    I16,
    /// `u16`.
    U16,
    /// `i32`.
    I32,
    /// `u32`.
    U32,
    /// `i64`.
    I64,
    /// `u64`.
    U64,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

impl ScalarType {
    /// Every scalar type.
    pub const ALL: [ScalarType; 11] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// Size of one value in bytes.
    pub fn size(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// Whether the type is `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// The Rust name of the type (`f32`, `bool`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    /// Whether this is an integer type (usable as a counter).
    pub fn is_integer(self) -> bool {
        !matches!(self, ScalarType::Bool | ScalarType::F32 | ScalarType::F64)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ScalarType {
    /// The preconditioners' element width of the type.
    pub fn width(self) -> Width {
        match self.size() {
            2 => Width::W2,
            4 => Width::W4,
            8 => Width::W8,
            _ => Width::W1,
        }
    }
}
