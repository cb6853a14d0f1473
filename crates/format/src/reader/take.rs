//! Reading chosen entries in any order (random batches for machine learning, events found by
//! their keys): only the baskets, or with RAC the units, that hold them are decoded.

use super::{BranchReader, Jagged};
use crate::error::{Error, Result};
use crate::io::ReadAt;
use crate::types::Scalar;

impl<R: ReadAt> BranchReader<'_, R> {
    /// The values of `entries` (any order, repeats allowed) of a scalar or fixed-size branch,
    /// in that order (fixed arrays flattened). The entries are visited in file order through a
    /// cursor, so each basket (with RAC, each unit) holding some of them is decoded once.
    ///
    /// ```
    /// # use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("take.evtc");
    /// # let mut file = FileWriter::create(&path, WriteOptions::default())?;
    /// # let mut tree = file.tree("T", vec![BranchSpec::scalar("x", ScalarType::U32)])?;
    /// # tree.fill_column(0, &(0..1000u32).collect::<Vec<_>>())?;
    /// # tree.commit()?;
    /// # tree.finish()?;
    /// # file.finish()?;
    /// let file = FileReader::open(&path)?;
    /// let x = file.tree("T")?.branch("x")?;
    /// assert_eq!(x.read_entries::<u32>(&[999, 3, 3, 500])?, [999, 3, 3, 500]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if the branch does not hold `T` or is variable-length;
    /// [`Error::EntryOutOfRange`] for an entry past the tree's; I/O and corruption errors.
    pub fn read_entries<T: Scalar>(&self, entries: &[u64]) -> Result<Vec<T>> {
        let fixed = self.meta().dtype.fixed_len();
        self.type_check::<T>(|| T::TYPE.to_string(), fixed.is_some())?;
        let len = fixed.unwrap_or(1);
        let order = self.file_order(entries)?;
        let mut cursor = self.cursor::<T>()?;
        let mut out = vec![T::default(); entries.len() * len];
        for &i in &order {
            out[i * len..(i + 1) * len].copy_from_slice(cursor.get(entries[i])?);
        }
        Ok(out)
    }

    /// The values of `entries` (any order, repeats allowed) of a variable-length branch, in
    /// that order, as [`BranchReader::read_entries`] reads them.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if the branch does not hold `T` or is not variable-length; as
    /// for [`BranchReader::read_entries`].
    pub fn read_jagged_entries<T: Scalar>(&self, entries: &[u64]) -> Result<Jagged<T>> {
        let variable = self.meta().dtype.is_variable();
        self.type_check::<T>(|| format!("{}[]", T::TYPE), variable)?;
        let order = self.file_order(entries)?;
        let mut cursor = self.cursor::<T>()?;
        // In file order: each entry's values appended, and where they start.
        let mut gathered = Vec::new();
        let mut at = vec![(0usize, 0usize); entries.len()];
        let mut previous: Option<(u64, (usize, usize))> = None;
        for &i in &order {
            let e = entries[i];
            at[i] = match previous {
                Some((p, span)) if p == e => span,
                _ => {
                    let values = cursor.get(e)?;
                    let span = (gathered.len(), values.len());
                    gathered.extend_from_slice(values);
                    previous = Some((e, span));
                    span
                }
            };
        }
        let mut offsets = Vec::with_capacity(entries.len() + 1);
        offsets.push(0u64);
        let mut values = Vec::with_capacity(at.iter().map(|&(_, n)| n).sum());
        for &(start, n) in &at {
            values.extend_from_slice(&gathered[start..start + n]);
            offsets.push(values.len() as u64);
        }
        Ok(Jagged {
            offsets: offsets.into(),
            values,
        })
    }

    /// The positions of `entries` sorted by entry (stably), after checking they are in the tree.
    fn file_order(&self, entries: &[u64]) -> Result<Vec<usize>> {
        let total = self.tree.entries();
        if let Some(&bad) = entries.iter().find(|&&e| e >= total) {
            return Err(Error::EntryOutOfRange {
                tree: self.tree.name().to_owned(),
                start: bad,
                end: bad.saturating_add(1),
                entries: total,
            });
        }
        let mut order: Vec<usize> = (0..entries.len()).collect();
        if !entries.is_sorted() {
            order.sort_by_key(|&i| entries[i]);
        }
        Ok(order)
    }
}

#[cfg(test)]
mod tests {
    use crate::{BranchSpec, FileReader, FileWriter, RacMode, ScalarType, WriteOptions};

    #[test]
    fn entries_in_any_order_with_repeats_read_as_a_range_read_has_them() {
        let dir = tempfile::tempdir().unwrap();
        for rac in [RacMode::Off, RacMode::On] {
            let path = dir.path().join(format!("t-{rac}.evtc"));
            let options = WriteOptions::default().rac(rac).basket_size(4096);
            let mut file = FileWriter::create(&path, options).unwrap();
            let mut tree = file
                .tree(
                    "T",
                    vec![
                        BranchSpec::fixed("p", ScalarType::F64, 2),
                        BranchSpec::jagged("v", ScalarType::I16),
                    ],
                )
                .unwrap();
            let n = 20_000u64;
            let p: Vec<f64> = (0..n).flat_map(|e| [e as f64, -(e as f64)]).collect();
            let counts: Vec<u32> = (0..n).map(|e| (e % 5) as u32).collect();
            let v: Vec<i16> = (0..n)
                .flat_map(|e| (0..e % 5).map(move |k| (e as i16).wrapping_add(k as i16)))
                .collect();
            tree.fill_column(0, &p).unwrap();
            tree.fill_jagged(1, &counts, &v).unwrap();
            tree.commit().unwrap();
            tree.finish().unwrap();
            file.finish().unwrap();

            let file = FileReader::open(&path).unwrap();
            let tree = file.tree("T").unwrap();
            let picks = [19_999u64, 7, 7, 12_345, 0, 8, 7, 19_999];
            let got = tree
                .branch("p")
                .unwrap()
                .read_entries::<f64>(&picks)
                .unwrap();
            let want: Vec<f64> = picks
                .iter()
                .flat_map(|&e| [e as f64, -(e as f64)])
                .collect();
            assert_eq!(got, want);
            let all = tree.branch("v").unwrap().read_jagged::<i16>().unwrap();
            let got = tree
                .branch("v")
                .unwrap()
                .read_jagged_entries::<i16>(&picks)
                .unwrap();
            assert_eq!(got.len(), picks.len());
            for (k, &e) in picks.iter().enumerate() {
                assert_eq!(got.entry(k), all.entry(e as usize), "entry {e}, {rac:?}");
            }
            let empty = tree
                .branch("v")
                .unwrap()
                .read_jagged_entries::<i16>(&[])
                .unwrap();
            assert_eq!((empty.len(), &*empty.offsets), (0, &[0u64][..]));
            let err = tree
                .branch("p")
                .unwrap()
                .read_entries::<f64>(&[3, n])
                .unwrap_err();
            assert!(err.to_string().contains("outside"), "{err}");
            let err = tree
                .branch("v")
                .unwrap()
                .read_entries::<i16>(&[3])
                .unwrap_err();
            assert!(matches!(err, crate::Error::TypeMismatch { .. }), "{err}");
        }
    }
}
