//! Filling a tree's branches: entry by entry or column batch by column batch.

use super::TreeWriter;
use super::branch::{BranchState, Reduction};
use crate::error::{Error, Result};
use crate::meta::DataType;
use crate::types::Scalar;

impl TreeWriter<'_> {
    /// The error for a value outside the branch's quantization range.
    fn outside_range(&self, branch: usize, entry: u64, value: f64) -> Error {
        let range = self.branches.get(branch).and_then(|b| match b.reduction {
            Some(Reduction::Quantize(q)) => Some(format!("[{}, {}]", q.min(), q.max())),
            _ => None,
        });
        self.fill_error(
            branch,
            format!(
                "value {value} of entry {entry} is outside the quantization range {}",
                range.unwrap_or_default()
            ),
        )
    }

    pub(super) fn fill_error(&self, branch: usize, reason: impl Into<String>) -> Error {
        let name = self
            .branches
            .get(branch)
            .map_or_else(|| format!("#{branch}"), |b| b.meta.name.clone());
        Error::InvalidFill {
            tree: self.name.clone(),
            branch: name,
            reason: reason.into(),
        }
    }

    fn state<T: Scalar>(&mut self, branch: usize) -> Result<&mut BranchState> {
        let Some(state) = self.branches.get(branch) else {
            return Err(self.fill_error(branch, format!("no branch number {branch}")));
        };
        let actual = state.meta.dtype;
        if actual.scalar() != T::TYPE {
            return Err(Error::TypeMismatch {
                tree: self.name.clone(),
                branch: state.meta.name.clone(),
                requested: T::TYPE.to_string(),
                actual,
            });
        }
        Ok(&mut self.branches[branch])
    }

    /// Fills one entry of a scalar branch.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if `T` is not the branch's type; [`Error::InvalidFill`] if the branch
    /// is not a scalar.
    pub fn fill<T: Scalar>(&mut self, branch: usize, value: T) -> Result<()> {
        self.fill_column(branch, std::slice::from_ref(&value))
    }

    /// Fills one entry of a fixed-size or variable-length branch.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`]; [`Error::InvalidFill`] for a scalar branch or a fixed array of another length.
    pub fn fill_array<T: Scalar>(&mut self, branch: usize, values: &[T]) -> Result<()> {
        let dtype = self.state::<T>(branch)?.meta.dtype;
        match dtype {
            DataType::FixedArray(_, n) if values.len() == n as usize => {
                self.fill_column(branch, values)
            }
            DataType::FixedArray(_, n) => Err(self.fill_error(
                branch,
                format!(
                    "an entry of this fixed array has {n} values, got {}",
                    values.len()
                ),
            )),
            DataType::Scalar(_) => {
                Err(self.fill_error(branch, "a scalar branch takes fill, not fill_array"))
            }
            _ => {
                let count = u32::try_from(values.len()).map_err(|_| {
                    self.fill_error(branch, "more than 2^32 - 1 values in one entry")
                })?;
                self.fill_jagged(branch, &[count], values)
            }
        }
    }

    /// Fills one entry of a byte-string or UTF-8 string branch.
    ///
    /// # Errors
    /// [`Error::InvalidFill`] if the branch is not a string branch.
    pub fn fill_str(&mut self, branch: usize, value: &str) -> Result<()> {
        self.fill_bytes(branch, value.as_bytes())
    }

    /// Fills one entry of a byte-string branch (or a UTF-8 branch, after checking the encoding).
    ///
    /// # Errors
    /// [`Error::InvalidFill`] if the branch is not a string branch or the bytes are not UTF-8 for a
    /// UTF-8 branch.
    pub fn fill_bytes(&mut self, branch: usize, value: &[u8]) -> Result<()> {
        match self.branches.get(branch).map(|b| b.meta.dtype) {
            Some(DataType::Bytes | DataType::Utf8) => self.fill_array(branch, value),
            _ => Err(self.fill_error(branch, "not a string branch")),
        }
    }

    /// Fills many entries of a scalar branch (`values.len()` entries) or a fixed-size array branch
    /// (`values.len() / n` entries).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`]; [`Error::InvalidFill`] for variable-length branches or a length that
    /// is not a multiple of the array length.
    pub fn fill_column<T: Scalar>(&mut self, branch: usize, values: &[T]) -> Result<()> {
        let state = self.state::<T>(branch)?;
        let Some(len) = state.meta.dtype.fixed_len() else {
            return Err(self.fill_error(
                branch,
                "a variable-length branch takes fill_jagged or fill_array",
            ));
        };
        if !values.len().is_multiple_of(len) {
            return Err(self.fill_error(
                branch,
                format!(
                    "{} values are not a whole number of {len}-value entries",
                    values.len()
                ),
            ));
        }
        let start = state.values.len();
        T::extend_bytes(values, &mut state.values);
        if let Some((i, x)) = state.reduce_from(start) {
            let entry = state.first_entry + state.buffered + (i / len) as u64;
            return Err(self.outside_range(branch, entry, x));
        }
        state.buffered += (values.len() / len) as u64;
        if let Some(keys) = self.index.as_mut() {
            keys.filled(branch, &self.branches[branch].values[start..]);
        }
        Ok(())
    }

    /// Fills many entries of a variable-length branch: entry `i` has `counts[i]` values, taken in
    /// order from `values`.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`]; [`Error::InvalidFill`] for fixed-size branches, counts that do not
    /// add up to `values.len()`, or invalid UTF-8 in a UTF-8 branch.
    pub fn fill_jagged<T: Scalar>(
        &mut self,
        branch: usize,
        counts: &[u32],
        values: &[T],
    ) -> Result<()> {
        let state = self.state::<T>(branch)?;
        if !state.meta.dtype.is_variable() {
            return Err(self.fill_error(branch, "a fixed-size branch takes fill or fill_column"));
        }
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if total != values.len() as u64 {
            return Err(self.fill_error(
                branch,
                format!(
                    "counts add up to {total} values but {} were given",
                    values.len()
                ),
            ));
        }
        let utf8 = state.meta.dtype == DataType::Utf8;
        let start = state.values.len();
        T::extend_bytes(values, &mut state.values);
        if utf8 {
            let mut at = start;
            for &c in counts {
                let end = at + c as usize;
                if std::str::from_utf8(&state.values[at..end]).is_err() {
                    state.values.truncate(start);
                    let branch = state.meta.name.clone();
                    return Err(Error::NotUtf8 {
                        tree: self.name.clone(),
                        branch,
                    });
                }
                at = end;
            }
        }
        if let Some((i, x)) = state.reduce_from(start) {
            // The entry holding value `i`.
            let (mut entry, mut end) = (state.first_entry + state.buffered, 0u64);
            for &c in counts {
                end += u64::from(c);
                if i as u64 >= end {
                    entry += 1;
                } else {
                    break;
                }
            }
            return Err(self.outside_range(branch, entry, x));
        }
        state.counts.extend_from_slice(counts);
        state.buffered += counts.len() as u64;
        Ok(())
    }
}
