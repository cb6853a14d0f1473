//! Reading columns of either kind of tree: [`ColumnReader`] reads a TTree branch's baskets or
//! an RNTuple field's pages into [`ColumnData`] for any entry range.

use std::ops::Range;

use crate::column::{Column, Source};
use crate::data::{ColumnData, Values};
use crate::error::{Error, Result};
use crate::file::RootFile;
use crate::rntuple::FieldReader;
use crate::source::ReadAt;
use crate::ttree::baskets::BasketReader;

/// Reads one column in entry ranges, keeping what it decoded last (a basket, a cluster's pages)
/// so that consecutive ranges decompress it once.
#[derive(Debug)]
pub struct ColumnReader<'f, R: ReadAt = std::fs::File> {
    column: Column,
    inner: Inner<'f, R>,
}

#[derive(Debug)]
enum Inner<'f, R: ReadAt> {
    Baskets(Box<BasketReader<'f, R>>),
    Pages(Box<FieldReader<'f, R>>),
}

impl<R: ReadAt> RootFile<R> {
    /// A reader for `column` of a tree of this file.
    pub fn column_reader(&self, column: &Column) -> ColumnReader<'_, R> {
        let inner = match &column.source {
            Source::Branch(branch, counter) => Inner::Baskets(Box::new(BasketReader::new(
                self,
                column,
                branch,
                counter.as_deref(),
            ))),
            Source::Field(field) => Inner::Pages(Box::new(FieldReader::new(self, column, field))),
        };
        ColumnReader {
            column: column.clone(),
            inner,
        }
    }

    /// Reads the entries `range` of `column` into new vectors of their exact size.
    ///
    /// # Errors
    /// [`Error::OutOfRange`], and corrupt or truncated baskets or pages.
    pub fn read_column(&self, column: &Column, range: Range<u64>) -> Result<ColumnData> {
        let mut out = ColumnData::new(column.kind);
        self.column_reader(column).read(range, &mut out)?;
        out.fit();
        Ok(out)
    }
}

impl<R: ReadAt> ColumnReader<'_, R> {
    /// Drops what the reader keeps decoded (the next read decompresses again), keeping the
    /// buffers.
    pub fn forget(&mut self) {
        match &mut self.inner {
            Inner::Baskets(r) => r.forget(),
            Inner::Pages(r) => r.forget(),
        }
    }

    /// The column being read.
    pub fn column(&self) -> &Column {
        &self.column
    }

    /// Appends the entries `range` to `out` (made by [`ColumnData::new`] for this column's kind).
    ///
    /// # Errors
    /// [`Error::OutputShape`] if `out` is not shaped for this column's kind;
    /// [`Error::OutOfRange`] for entries past the column's end; [`Error::Corrupt`] and
    /// [`Error::Decompress`] naming the branch or field, the basket or page and the offset for
    /// bad data.
    pub fn read(&mut self, range: Range<u64>, out: &mut ColumnData) -> Result<()> {
        let kind = self.column.kind;
        let shaped = std::mem::discriminant(&out.values)
            == std::mem::discriminant(&Values::new(kind.scalar()))
            && out.offsets.is_empty() != kind.is_variable()
            && out.levels.len() == kind.levels()
            && out.levels.iter().all(|level| !level.is_empty());
        if !shaped {
            return Err(Error::OutputShape {
                branch: self.column.name.clone(),
                kind: kind.cpp_name(),
            });
        }
        match &mut self.inner {
            Inner::Baskets(r) => r.read(range, out),
            Inner::Pages(r) => r.read(range, true, out),
        }
    }

    /// Appends the values of entries `range` to `values` (made by [`Values::new`] for this
    /// column's scalar type), without their list offsets: for a column whose
    /// [`Column::offsets_key`] equals that of a column read over the same range, whose offsets
    /// are this one's. A TTree branch's baskets are read whole (its offsets made and dropped).
    ///
    /// # Errors
    /// Those of [`ColumnReader::read`].
    pub fn read_values(&mut self, range: Range<u64>, values: &mut Values) -> Result<()> {
        let kind = self.column.kind;
        if std::mem::discriminant(values) != std::mem::discriminant(&Values::new(kind.scalar())) {
            return Err(Error::OutputShape {
                branch: self.column.name.clone(),
                kind: kind.cpp_name(),
            });
        }
        let mut out = ColumnData::new(kind);
        out.values = std::mem::replace(values, Values::new(kind.scalar()));
        let result = match &mut self.inner {
            Inner::Baskets(_) => self.read(range, &mut out),
            Inner::Pages(r) => {
                out.offsets.clear();
                out.levels.clear();
                r.read(range, false, &mut out)
            }
        };
        *values = out.values;
        result
    }
}
