//! Byte sources: local files, and Python objects (fsspec files, file-like objects) read through
//! `evtc-format`'s one I/O trait, with coalesced prefetching for bulk reads.

use std::sync::{Arc, Mutex};

use evtc_format::ReadAt;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The source every reader reads through.
pub(crate) type Source = Arc<dyn ReadAt>;

/// Two byte ranges closer than this are fetched in one request by [`PySource::prefetch`]: a
/// remote request costs about a round trip, which is worth this many bytes on most links.
const COALESCE_GAP: u64 = 256 * 1024;

/// A Python object with `size` (bytes) and `read_at(offset, length) -> bytes`, as
/// `evtc/_source.py` makes from fsspec URLs and file-like objects.
pub(crate) struct PySource {
    object: Py<PyAny>,
    len: u64,
    /// Ranges fetched ahead of a bulk read: (offset, bytes), sorted by offset.
    prefetched: Mutex<Vec<(u64, Arc<Vec<u8>>)>>,
}

impl PySource {
    pub(crate) fn new(object: &Bound<'_, PyAny>) -> PyResult<PySource> {
        let len: u64 = object.getattr("size")?.extract()?;
        Ok(PySource {
            object: object.clone().unbind(),
            len,
            prefetched: Mutex::new(Vec::new()),
        })
    }

    fn fetch(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        Python::attach(|py| {
            let bytes = self
                .object
                .bind(py)
                .call_method1("read_at", (offset, len))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let bytes = bytes
                .cast::<PyBytes>()
                .map_err(|_| std::io::Error::other("read_at must return bytes"))?;
            let data = bytes.as_bytes();
            if data.len() != len {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("read_at({offset}, {len}) returned {} bytes", data.len()),
                ));
            }
            Ok(data.to_vec())
        })
    }

    /// Fetches `ranges` (offset, length) in as few requests as coalescing allows and keeps them,
    /// with those fetched before, until [`PySource::forget`]. Returns the number of requests made.
    pub(crate) fn prefetch(&self, mut ranges: Vec<(u64, u64)>) -> std::io::Result<usize> {
        ranges.retain(|&(_, len)| len > 0);
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (start, len) in ranges {
            let end = start.saturating_add(len).min(self.len);
            match merged.last_mut() {
                Some((_, last_end)) if start <= last_end.saturating_add(COALESCE_GAP) => {
                    *last_end = (*last_end).max(end);
                }
                _ => merged.push((start, end)),
            }
        }
        let mut fetched = Vec::with_capacity(merged.len());
        for &(start, end) in &merged {
            let len = usize::try_from(end - start).map_err(std::io::Error::other)?;
            fetched.push((start, Arc::new(self.fetch(start, len)?)));
        }
        let mut prefetched = self.prefetched.lock().expect("not poisoned");
        prefetched.extend(fetched);
        prefetched.sort_unstable_by_key(|(start, _)| *start);
        Ok(merged.len())
    }

    /// Drops the prefetched ranges.
    pub(crate) fn forget(&self) {
        self.prefetched.lock().expect("not poisoned").clear();
    }
}

impl ReadAt for PySource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        {
            let prefetched = self.prefetched.lock().expect("not poisoned");
            // Ranges of two prefetches may overlap: look at every range starting at or before
            // `offset`, nearest first (there are few).
            let at = prefetched.partition_point(|(start, _)| *start <= offset);
            for (start, data) in prefetched[..at].iter().rev() {
                let from = (offset - start) as usize;
                if let Some(src) = data.get(from..from + buf.len()) {
                    buf.copy_from_slice(src);
                    return Ok(());
                }
            }
        }
        let data = self.fetch(offset, buf.len())?;
        buf.copy_from_slice(&data);
        Ok(())
    }
}

/// `evtc-format`'s source as `evtc-root`'s, so that both readers share one Python source.
pub(crate) struct RootSource(pub(crate) Source);

impl evtc_root::ReadAt for RootSource {
    fn len(&self) -> std::io::Result<u64> {
        Ok(self.0.len())
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_exact_at(offset, buf)
    }
}
