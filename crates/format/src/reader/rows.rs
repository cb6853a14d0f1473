//! Row reads over several branches: [`RowReader`], its owned [`Value`]s and borrowed
//! [`ValueRef`]s.

use super::{BranchCursor, TreeReader};
use crate::error::{Error, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::{DataType, ScalarType};

/// One value of a row read with [`TreeReader::rows`]: a scalar, a list (fixed-size and
/// variable-length arrays), or a string.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// `i8`.
    I8(i8),
    /// `u8`.
    U8(u8),
    /// `i16`.
    I16(i16),
    /// `u16`.
    U16(u16),
    /// `i32`.
    I32(i32),
    /// `u32`.
    U32(u32),
    /// `i64`.
    I64(i64),
    /// `u64`.
    U64(u64),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// The values of an array entry.
    List(Vec<Value>),
    /// A UTF-8 string entry.
    Str(String),
    /// A byte-string entry.
    Bytes(Vec<u8>),
}

/// The values of one branch at one entry as [`RowReader::visit`] lends them, borrowed from the
/// cursor's decoded basket: a scalar branch gives a one-value slice, an array branch its entry's
/// values, a string branch the string.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ValueRef<'r> {
    /// `bool` values.
    Bool(&'r [bool]),
    /// `i8` values.
    I8(&'r [i8]),
    /// `u8` values (of a branch that is not a string).
    U8(&'r [u8]),
    /// `i16` values.
    I16(&'r [i16]),
    /// `u16` values.
    U16(&'r [u16]),
    /// `i32` values.
    I32(&'r [i32]),
    /// `u32` values.
    U32(&'r [u32]),
    /// `i64` values.
    I64(&'r [i64]),
    /// `u64` values.
    U64(&'r [u64]),
    /// `f32` values.
    F32(&'r [f32]),
    /// `f64` values.
    F64(&'r [f64]),
    /// A UTF-8 string entry.
    Str(&'r str),
    /// A byte-string entry.
    Bytes(&'r [u8]),
}

macro_rules! value_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x)
            }
        }
    )*};
}
value_from!(bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// A typed cursor behind a dynamic row column.
pub(super) enum AnyCursor<'a, R: ReadAt> {
    Bool(BranchCursor<'a, R, bool>),
    I8(BranchCursor<'a, R, i8>),
    U8(BranchCursor<'a, R, u8>),
    I16(BranchCursor<'a, R, i16>),
    U16(BranchCursor<'a, R, u16>),
    I32(BranchCursor<'a, R, i32>),
    U32(BranchCursor<'a, R, u32>),
    I64(BranchCursor<'a, R, i64>),
    U64(BranchCursor<'a, R, u64>),
    F32(BranchCursor<'a, R, f32>),
    F64(BranchCursor<'a, R, f64>),
}

fn owned<T: Copy + Into<Value>>(dtype: DataType, values: &[T]) -> Value {
    match dtype {
        DataType::Scalar(_) => values
            .first()
            .map_or(Value::List(Vec::new()), |&v| v.into()),
        _ => Value::List(values.iter().map(|&v| v.into()).collect()),
    }
}

impl ValueRef<'_> {
    /// The owned [`Value`] of these values of a branch of type `dtype`: a scalar for scalar
    /// branches, a list for arrays, a string for strings.
    pub fn to_value(self, dtype: DataType) -> Value {
        match self {
            ValueRef::Bool(x) => owned(dtype, x),
            ValueRef::I8(x) => owned(dtype, x),
            ValueRef::U8(x) => owned(dtype, x),
            ValueRef::I16(x) => owned(dtype, x),
            ValueRef::U16(x) => owned(dtype, x),
            ValueRef::I32(x) => owned(dtype, x),
            ValueRef::U32(x) => owned(dtype, x),
            ValueRef::I64(x) => owned(dtype, x),
            ValueRef::U64(x) => owned(dtype, x),
            ValueRef::F32(x) => owned(dtype, x),
            ValueRef::F64(x) => owned(dtype, x),
            ValueRef::Str(x) => Value::Str(x.to_owned()),
            ValueRef::Bytes(x) => Value::Bytes(x.to_vec()),
        }
    }
}

/// Entry reads over a set of branches, one [`Value`] per branch and entry, with a basket cache per
/// branch (sequential reads decompress each basket once). Made by [`TreeReader::rows`].
pub struct RowReader<'a, R: ReadAt = LocalFile> {
    columns: Vec<(DataType, AnyCursor<'a, R>)>,
    next: u64,
    entries: u64,
}

impl<R: ReadAt> std::fmt::Debug for RowReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowReader")
            .field("columns", &self.columns.len())
            .field("next", &self.next)
            .finish()
    }
}

impl<'a, R: ReadAt> TreeReader<'a, R> {
    /// Row reads of the named branches, in the order given.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`].
    pub fn rows(&self, names: &[&str]) -> Result<RowReader<'a, R>> {
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let branch = self.branch(name)?;
            let dtype = branch.meta().dtype;
            let cursor = match dtype.scalar() {
                ScalarType::Bool => AnyCursor::Bool(branch.cursor()?),
                ScalarType::I8 => AnyCursor::I8(branch.cursor()?),
                ScalarType::U8 => AnyCursor::U8(branch.cursor()?),
                ScalarType::I16 => AnyCursor::I16(branch.cursor()?),
                ScalarType::U16 => AnyCursor::U16(branch.cursor()?),
                ScalarType::I32 => AnyCursor::I32(branch.cursor()?),
                ScalarType::U32 => AnyCursor::U32(branch.cursor()?),
                ScalarType::I64 => AnyCursor::I64(branch.cursor()?),
                ScalarType::U64 => AnyCursor::U64(branch.cursor()?),
                ScalarType::F32 => AnyCursor::F32(branch.cursor()?),
                ScalarType::F64 => AnyCursor::F64(branch.cursor()?),
            };
            columns.push((dtype, cursor));
        }
        Ok(RowReader {
            columns,
            next: 0,
            entries: self.entries(),
        })
    }
}

impl<R: ReadAt> RowReader<'_, R> {
    /// The values of `entry`, one per branch.
    ///
    /// # Errors
    /// [`Error::EntryOutOfRange`]; I/O and corruption errors; invalid UTF-8 in a UTF-8 branch.
    pub fn get(&mut self, entry: u64) -> Result<Vec<Value>> {
        let mut row = Vec::with_capacity(self.columns.len());
        visit_columns(&mut self.columns, entry, |_, dtype, values| {
            row.push(values.to_value(dtype));
        })?;
        Ok(row)
    }

    /// Calls `f` with each branch's position and values at `entry`, borrowed from the cursors'
    /// decoded baskets: the entry loop of a C++-style analysis, with no allocation per entry.
    ///
    /// ```no_run
    /// # use evtc_format::{FileReader, ValueRef};
    /// let file = FileReader::open("events.evtc")?;
    /// let tree = file.tree("Events")?;
    /// let mut rows = tree.rows(&["nMuon", "Muon_pt"])?;
    /// let mut sum = 0.0;
    /// for entry in 0..tree.entries() {
    ///     rows.visit(entry, |_, values| {
    ///         if let ValueRef::F32(pt) = values {
    ///             sum += pt.iter().sum::<f32>();
    ///         }
    ///     })?;
    /// }
    /// # Ok::<(), evtc_format::Error>(())
    /// ```
    ///
    /// # Errors
    /// As for [`RowReader::get`]; `f` has been called for the branches before the failing one.
    pub fn visit(&mut self, entry: u64, mut f: impl FnMut(usize, ValueRef<'_>)) -> Result<()> {
        visit_columns(&mut self.columns, entry, |i, _, values| f(i, values))
    }
}

/// Reads `entry` of every column and calls `f` with its position, type and values.
fn visit_columns<R: ReadAt>(
    columns: &mut [(DataType, AnyCursor<'_, R>)],
    entry: u64,
    mut f: impl FnMut(usize, DataType, ValueRef<'_>),
) -> Result<()> {
    for (i, (dtype, cursor)) in columns.iter_mut().enumerate() {
        let values = match cursor {
            AnyCursor::U8(c) => match *dtype {
                DataType::Utf8 => {
                    // A copy of the reader (references and indices) names the branch on error.
                    let branch = c.state.branch.clone();
                    let bytes = c.get(entry)?;
                    ValueRef::Str(std::str::from_utf8(bytes).map_err(|_| {
                        Error::corrupt(
                            branch.location(None, 0),
                            format!("entry {entry} is not valid UTF-8"),
                        )
                    })?)
                }
                DataType::Bytes => ValueRef::Bytes(c.get(entry)?),
                _ => ValueRef::U8(c.get(entry)?),
            },
            AnyCursor::Bool(c) => ValueRef::Bool(c.get(entry)?),
            AnyCursor::I8(c) => ValueRef::I8(c.get(entry)?),
            AnyCursor::I16(c) => ValueRef::I16(c.get(entry)?),
            AnyCursor::U16(c) => ValueRef::U16(c.get(entry)?),
            AnyCursor::I32(c) => ValueRef::I32(c.get(entry)?),
            AnyCursor::U32(c) => ValueRef::U32(c.get(entry)?),
            AnyCursor::I64(c) => ValueRef::I64(c.get(entry)?),
            AnyCursor::U64(c) => ValueRef::U64(c.get(entry)?),
            AnyCursor::F32(c) => ValueRef::F32(c.get(entry)?),
            AnyCursor::F64(c) => ValueRef::F64(c.get(entry)?),
        };
        f(i, *dtype, values);
    }
    Ok(())
}

impl<R: ReadAt> Iterator for RowReader<'_, R> {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.entries {
            return None;
        }
        let entry = self.next;
        self.next += 1;
        Some(self.get(entry))
    }
}
