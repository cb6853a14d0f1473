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
use crate::read::{Column, Reader};

/// What the Python layer knows of a column: `(name, kind, dtype, shape, sizes branch)`, kind one
/// of `scalar`, `fixed`, `jagged`, `jagged2`, `string`, `bytes`, `string2`, `bytes2` (lists of
/// strings); `shape` the dimensions of a fixed array; the sizes branch of a list of lists (of
/// strings) converted into an evtc file.
pub(crate) type ColumnSpec = (String, String, String, Vec<usize>, Option<String>);

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
    Ok(match kind {
        "scalar" => leaf,
        "fixed" => {
            let mut t = leaf;
            for &n in shape.iter().rev() {
                let n = i32::try_from(n).map_err(errors::value)?;
                t = DataType::FixedSizeList(item(t), n);
            }
            t
        }
        "jagged" => DataType::LargeList(item(leaf)),
        "jagged2" => DataType::LargeList(item(DataType::LargeList(item(leaf)))),
        "string" => DataType::LargeUtf8,
        "bytes" => DataType::LargeBinary,
        "string2" => DataType::LargeList(item(DataType::LargeUtf8)),
        "bytes2" => DataType::LargeList(item(DataType::LargeBinary)),
        other => return Err(errors::value(format!("no branch kind {other:?}"))),
    })
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

/// One column of a batch as an Arrow array of type `t`.
fn to_array(t: &DataType, column: Column, sizes: Option<Column>) -> Result<ArrayRef, ArrowError> {
    let Column {
        values,
        offsets: outer,
        inner,
    } = column;
    let missing = || ArrowError::InvalidArgumentError("a list column without offsets".into());
    // A list of lists: the outer and inner offsets, from the sizes branch of a converted one.
    let nested = |outer: Option<Vec<u64>>, inner: Option<Vec<u64>>, sizes: Option<Column>| {
        Ok::<_, ArrowError>(match sizes {
            // evtc: the sizes branch's lists are the outer lists, its values the sizes.
            Some(s) => (s.offsets.ok_or_else(missing)?, sizes_to_offsets(&s.values)?),
            // ROOT: the reader gives both.
            None => (outer.ok_or_else(missing)?, inner.ok_or_else(missing)?),
        })
    };
    Ok(match t {
        DataType::FixedSizeList(..) => {
            fn nest(t: &DataType, leaf: ArrayRef) -> Result<ArrayRef, ArrowError> {
                match t {
                    DataType::FixedSizeList(field, n) => {
                        let inner = nest(field.data_type(), leaf)?;
                        Ok(Arc::new(FixedSizeListArray::try_new(
                            field.clone(),
                            *n,
                            inner,
                            None,
                        )?))
                    }
                    _ => Ok(leaf),
                }
            }
            nest(t, leaf_array(values))?
        }
        DataType::LargeList(field) => match field.data_type() {
            DataType::LargeList(leaf_field) => {
                let (outer, inner) = nested(outer, inner, sizes)?;
                let lists = LargeListArray::try_new(
                    leaf_field.clone(),
                    offsets(inner)?,
                    leaf_array(values),
                    None,
                )?;
                Arc::new(LargeListArray::try_new(
                    field.clone(),
                    offsets(outer)?,
                    Arc::new(lists),
                    None,
                )?)
            }
            strings @ (DataType::LargeUtf8 | DataType::LargeBinary) => {
                let (outer, inner) = nested(outer, inner, sizes)?;
                let strings = string_array(strings, values, inner)?;
                Arc::new(LargeListArray::try_new(
                    field.clone(),
                    offsets(outer)?,
                    strings,
                    None,
                )?)
            }
            _ => Arc::new(LargeListArray::try_new(
                field.clone(),
                offsets(outer.ok_or_else(missing)?)?,
                leaf_array(values),
                None,
            )?),
        },
        DataType::LargeUtf8 | DataType::LargeBinary => {
            string_array(t, values, outer.ok_or_else(missing)?)?
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
    /// Branches to read: the columns, then the sizes branches of converted lists of lists.
    names: Vec<String>,
    /// Position in `names` of each column's sizes branch.
    sizes: Vec<Option<usize>>,
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
            let sizes = self.sizes[i].and_then(|s| columns[s].take());
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
pub(crate) fn stream<'py>(
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
    for (name, kind, dtype, shape, sizes_branch) in &columns {
        fields.push(Field::new(name, arrow_type(kind, dtype, shape)?, false));
        sizes.push(sizes_branch.as_ref().map(|s| {
            names.push(s.clone());
            names.len() - 1
        }));
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
