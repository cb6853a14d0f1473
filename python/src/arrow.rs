//! Arrow export: a tree's branches as an Arrow C stream (the Arrow PyCapsule interface), built
//! with arrow-rs over the decoded buffers (values and offsets are moved, not copied; booleans are
//! bit-packed, as Arrow requires). Consumers (pyarrow, Polars, DuckDB) pull record batches
//! through the stream; each batch is read when asked for, without the GIL.

use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{
    ArrayRef, BooleanArray, FixedSizeListArray, LargeBinaryArray, LargeListArray, LargeStringArray,
    PrimitiveArray, RecordBatch, RecordBatchReader,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Schema, SchemaRef};
use evtc_root::{Values, with_values};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::errors;
use crate::reader::{Column, Offsets, Reader};

/// What the Python layer knows of a column: `(name, kind, dtype, shape, sizes branches)`, kind
/// one of `scalar`, `fixed`, `jagged`, `string`, `bytes`, and of those three with a nesting
/// depth (`jagged2`: lists of lists, `string2`: lists of strings, `string3`: lists of lists of
/// strings); `shape` the dimensions of a fixed array; the sizes branches of a nested list
/// converted into an evtc file, innermost first (empty otherwise).
pub(crate) type ColumnSpec = (String, String, String, Vec<usize>, Vec<String>);

fn leaf_type(dtype: &str) -> PyResult<DataType> {
    Ok(match dtype {
        "bool" => DataType::Boolean,
        "int8" => DataType::Int8,
        "uint8" => DataType::UInt8,
        "int16" => DataType::Int16,
        "uint16" => DataType::UInt16,
        "int32" => DataType::Int32,
        "uint32" => DataType::UInt32,
        "int64" => DataType::Int64,
        "uint64" => DataType::UInt64,
        "float32" => DataType::Float32,
        "float64" => DataType::Float64,
        other => return Err(errors::value(format!("no Arrow type for dtype {other:?}"))),
    })
}

fn item(t: DataType) -> FieldRef {
    Arc::new(Field::new("item", t, false))
}

/// The Arrow type of a column (lists hold non-null items, as evtc's lists do).
fn arrow_type(kind: &str, dtype: &str, shape: &[usize]) -> PyResult<DataType> {
    let leaf = leaf_type(dtype)?;
    // The deepest kind: values `MAX_DEPTH` lists deep, or strings in as many lists.
    const DEEPEST: usize = evtc_root::ColumnKind::MAX_DEPTH + 1;
    let (base, depth) = match kind.char_indices().find(|(_, c)| c.is_ascii_digit()) {
        Some((i, _)) => (&kind[..i], kind[i..].parse::<usize>().unwrap_or(0)),
        None => (kind, 1),
    };
    let mut t = match (base, depth) {
        ("scalar", 1) => return Ok(leaf),
        ("fixed", 1) => {
            let mut t = leaf;
            for &n in shape.iter().rev() {
                let n = i32::try_from(n).map_err(errors::value)?;
                t = DataType::FixedSizeList(item(t), n);
            }
            return Ok(t);
        }
        ("jagged", 1..=DEEPEST) => DataType::LargeList(item(leaf)),
        ("string", 1..=DEEPEST) => DataType::LargeUtf8,
        ("bytes", 1..=DEEPEST) => DataType::LargeBinary,
        _ => return Err(errors::value(format!("no branch kind {kind:?}"))),
    };
    for _ in 1..depth {
        t = DataType::LargeList(item(t));
    }
    Ok(t)
}

fn leaf_array(values: Values) -> ArrayRef {
    fn primitive<T: arrow_array::ArrowPrimitiveType>(v: Vec<T::Native>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
    }
    match values {
        Values::Bool(v) => Arc::new(BooleanArray::from(v)),
        Values::I8(v) => primitive::<Int8Type>(v),
        Values::U8(v) => primitive::<UInt8Type>(v),
        Values::I16(v) => primitive::<Int16Type>(v),
        Values::U16(v) => primitive::<UInt16Type>(v),
        Values::I32(v) => primitive::<Int32Type>(v),
        Values::U32(v) => primitive::<UInt32Type>(v),
        Values::I64(v) => primitive::<Int64Type>(v),
        Values::U64(v) => primitive::<UInt64Type>(v),
        Values::F32(v) => primitive::<Float32Type>(v),
        Values::F64(v) => primitive::<Float64Type>(v),
    }
}

/// Arrow offsets from the reader's (u64, from 0, below 2^63): the same bytes as i64.
fn offsets(offsets: Vec<u64>) -> Result<OffsetBuffer<i64>, ArrowError> {
    if offsets.last().is_some_and(|&o| o > i64::MAX as u64) || offsets.is_empty() {
        return Err(ArrowError::InvalidArgumentError(
            "offsets out of range".into(),
        ));
    }
    let offsets: Vec<i64> = bytemuck::allocation::cast_vec(offsets);
    Ok(OffsetBuffer::new(ScalarBuffer::from(offsets)))
}

/// Inner offsets of a converted list of lists from its sizes branch's values.
fn sizes_to_offsets(sizes: &Values) -> Result<Vec<u64>, ArrowError> {
    let mut out = Vec::with_capacity(sizes.len() + 1);
    out.push(0u64);
    let mut at = 0u64;
    let mut bad = false;
    with_values!(sizes, v => for x in v.iter() {
        match u64::try_from(*x as i128) {
            Ok(n) => {
                at += n;
                out.push(at);
            }
            Err(_) => bad = true,
        }
    });
    if bad {
        return Err(ArrowError::InvalidArgumentError(
            "negative list size".into(),
        ));
    }
    Ok(out)
}

/// One column of a batch as an Arrow array of type `t`; `sizes` are the sizes branches of a
/// nested list converted into an evtc file, innermost first (empty otherwise).
fn to_array(t: &DataType, column: Column, sizes: Vec<Column>) -> Result<ArrayRef, ArrowError> {
    let Column { values, levels } = column;
    let missing = || ArrowError::InvalidArgumentError("a list column without offsets".into());
    // evtc: the outermost sizes branch's lists are the entries' lists, and each sizes branch's
    // values the lengths of the next inner level. ROOT: the reader gives every level.
    let levels = match sizes.last() {
        Some(outer) => {
            let mut levels = vec![
                outer
                    .levels
                    .first()
                    .ok_or_else(missing)?
                    .as_slice()
                    .to_vec(),
            ];
            for s in sizes.iter().rev() {
                levels.push(sizes_to_offsets(&s.values)?);
            }
            levels
        }
        None => levels.into_iter().map(Offsets::into_vec).collect(),
    };
    build(t, values, &mut levels.into_iter())
}

/// The array of type `t` over `values`, each list level taking the next offsets of `levels`
/// (outermost first).
fn build(
    t: &DataType,
    values: Values,
    levels: &mut impl Iterator<Item = Vec<u64>>,
) -> Result<ArrayRef, ArrowError> {
    let missing = || ArrowError::InvalidArgumentError("a list column without offsets".into());
    Ok(match t {
        DataType::FixedSizeList(field, n) => Arc::new(FixedSizeListArray::try_new(
            field.clone(),
            *n,
            build(field.data_type(), values, levels)?,
            None,
        )?),
        DataType::LargeList(field) => {
            let outer = offsets(levels.next().ok_or_else(missing)?)?;
            let inner = build(field.data_type(), values, levels)?;
            Arc::new(LargeListArray::try_new(field.clone(), outer, inner, None)?)
        }
        DataType::LargeUtf8 | DataType::LargeBinary => {
            string_array(t, values, levels.next().ok_or_else(missing)?)?
        }
        _ => leaf_array(values),
    })
}

/// Strings (`t` is `LargeUtf8` or `LargeBinary`) of `values` split at `bounds`.
fn string_array(t: &DataType, values: Values, bounds: Vec<u64>) -> Result<ArrayRef, ArrowError> {
    let Values::U8(bytes) = values else {
        return Err(ArrowError::InvalidArgumentError(
            "a string column of non-byte values".into(),
        ));
    };
    let o = offsets(bounds)?;
    Ok(if *t == DataType::LargeUtf8 {
        Arc::new(LargeStringArray::try_new(o, Buffer::from_vec(bytes), None)?)
    } else {
        Arc::new(LargeBinaryArray::try_new(o, Buffer::from_vec(bytes), None)?)
    })
}

/// The record batches of a stream, read one step at a time.
struct Batches {
    reader: Py<Reader>,
    tree: String,
    /// Branches to read: the columns, then the sizes branches of converted nested lists.
    names: Vec<String>,
    /// Positions in `names` of each column's sizes branches, innermost first.
    sizes: Vec<Vec<usize>>,
    schema: SchemaRef,
    at: u64,
    stop: u64,
    step: u64,
}

impl Batches {
    fn batch(&self, start: u64, end: u64) -> Result<RecordBatch, ArrowError> {
        let reader = self.reader.get();
        let mut columns: Vec<Option<Column>> = reader
            .read_columns(&self.tree, &self.names, start..end)
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))?
            .into_iter()
            .map(Some)
            .collect();
        let mut arrays = Vec::with_capacity(self.schema.fields().len());
        for (i, field) in self.schema.fields().iter().enumerate() {
            let column = columns[i].take().expect("each column once");
            let sizes = self.sizes[i]
                .iter()
                .map(|&s| columns[s].take().expect("each sizes branch once"))
                .collect();
            arrays.push(to_array(field.data_type(), column, sizes)?);
        }
        RecordBatch::try_new(self.schema.clone(), arrays)
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.stop {
            return None;
        }
        let end = self.at.saturating_add(self.step).min(self.stop);
        let batch = self.batch(self.at, end);
        // After an error the stream ends.
        self.at = if batch.is_ok() { end } else { self.stop };
        Some(batch)
    }
}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// An Arrow C stream of `columns` of `tree` over entries `start..stop` in batches of `step`
/// entries, as a PyCapsule named `arrow_array_stream`.
/// An Arrow C stream (a PyCapsule named `arrow_array_stream`) of `columns` of `reader`'s tree
/// `tree` over entries `start..stop` in batches of `step` entries; each column is `(name, kind,
/// dtype, shape, sizes branch)`. Batches are read as the consumer asks for them.
#[pyfunction]
pub(crate) fn arrow_stream<'py>(
    reader: &Bound<'py, Reader>,
    tree: &str,
    columns: Vec<ColumnSpec>,
    start: u64,
    stop: u64,
    step: u64,
) -> PyResult<Bound<'py, PyCapsule>> {
    let py = reader.py();
    let mut fields = Vec::with_capacity(columns.len());
    let mut names: Vec<String> = columns.iter().map(|c| c.0.clone()).collect();
    let mut sizes = Vec::with_capacity(columns.len());
    for (name, kind, dtype, shape, sizes_branches) in &columns {
        fields.push(Field::new(name, arrow_type(kind, dtype, shape)?, false));
        sizes.push(
            sizes_branches
                .iter()
                .map(|s| {
                    names.push(s.clone());
                    names.len() - 1
                })
                .collect(),
        );
    }
    let batches = Batches {
        reader: reader.clone().unbind(),
        tree: tree.to_owned(),
        names,
        sizes,
        schema: Arc::new(Schema::new(fields)),
        at: start,
        stop,
        step: step.max(1),
    };
    let stream = FFI_ArrowArrayStream::new(Box::new(batches));
    PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
}
