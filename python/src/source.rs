//! Byte sources: local files, and Python objects (fsspec files, file-like objects) read through
//! `evtc-format`'s one I/O trait, with coalesced prefetching for bulk reads.

use std::sync::{Arc, Mutex};

use evtc_format::ReadAt;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The source every reader reads through.
pub(crate) type Source = Arc<dyn ReadAt>;

/// Two byte ranges closer than this are fetched in one request by [`PySource::prefetch`]: a
/// remote request costs about a round trip, which is worth this many bytes on most links. A
/// source whose several ranges cost one round trip (XRootD's vector reads) says its own gap in
/// `coalesce_gap`.
const COALESCE_GAP: u64 = 256 * 1024;

/// A prefetch splits longer ranges into pieces of this many bytes, which a source that fetches
/// several ranges at once (`read_ranges`) fetches in parallel: one connection's throughput
/// then does not bound a large read.
const PIECE_BYTES: u64 = 4 << 20;

/// A source that fetches several ranges at once gets this many bytes of the file's start and of
/// its end when it is opened, in one round trip: the headers, the trailer, the footer and
/// (written last) the branches' indexes of an evtc file (102 kB for a real NanoAOD file of 947
/// branches); the header, keys and streamer infos of a ROOT file. (`evtc._lib.OPEN_BYTES` for
/// the Python sources.)
pub(crate) const OPEN_BYTES: (u64, u64) = (64 << 10, 256 << 10);

/// A range fetched ahead: its offset, its bytes and the numbers of the prefetches that need it
/// (the one that fetched it, and later ones that found it held).
type Prefetched = (u64, Arc<Vec<u8>>, Vec<u64>);

/// A Python object with `size` (bytes) and `read_at(offset, length) -> bytes`, as
/// `evtc/_source.py` makes from fsspec URLs and file-like objects; optionally
/// `read_ranges(starts, stops) -> [bytes]`, which fetches several ranges at once (fsspec's
/// `cat_ranges`: concurrent requests).
pub(crate) struct PySource {
    object: Py<PyAny>,
    len: u64,
    /// Whether the object has `read_ranges`.
    concurrent: bool,
    /// Ranges closer than this are fetched as one (the object's `coalesce_gap`, else
    /// [`COALESCE_GAP`]).
    gap: u64,
    /// The prefetch that fetched the file's start and end at open.
    opened: u64,
    /// Ranges fetched ahead of a bulk read, sorted by offset.
    prefetched: Mutex<Vec<Prefetched>>,
    /// The number of the next prefetch.
    next_prefetch: std::sync::atomic::AtomicU64,
}

impl PySource {
    pub(crate) fn new(object: &Bound<'_, PyAny>) -> PyResult<PySource> {
        let len: u64 = object.getattr("size")?.extract()?;
        let mut source = PySource {
            object: object.clone().unbind(),
            len,
            concurrent: object.hasattr("read_ranges")?,
            gap: match object.getattr("coalesce_gap") {
                Ok(gap) => gap.extract()?,
                Err(_) => COALESCE_GAP,
            },
            opened: 0,
            prefetched: Mutex::new(Vec::new()),
            next_prefetch: std::sync::atomic::AtomicU64::new(1),
        };
        if source.concurrent {
            let (head, tail) = OPEN_BYTES;
            let ranges = vec![
                (0, head.min(len)),
                (len.saturating_sub(tail), tail.min(len)),
            ];
            source.opened = source
                .prefetch(ranges)
                .map_err(|e| crate::errors::raise("FileError", e.to_string()))?;
        }
        Ok(source)
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

    /// Fetches `ranges` (offset, length) that are not held yet, in as few requests as coalescing
    /// allows, and keeps them, with those fetched before, until [`PySource::forget`] of the
    /// number returned.
    pub(crate) fn prefetch(&self, mut ranges: Vec<(u64, u64)>) -> std::io::Result<u64> {
        let id = self
            .next_prefetch
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A range past the file's end (a lying index) is left to the read that needs it, which
        // reports it. A range held already is kept for this prefetch too (an `iterate` step's
        // fetch ahead finds the baskets that straddle the steps held by the step before).
        ranges.retain(|&(start, len)| len > 0 && start < self.len && !self.hold(start, len, id));
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (start, len) in ranges {
            let end = start.saturating_add(len).min(self.len);
            match merged.last_mut() {
                Some((_, last_end)) if start <= last_end.saturating_add(self.gap) => {
                    *last_end = (*last_end).max(end);
                }
                _ => merged.push((start, end)),
            }
        }
        let fetched = if self.concurrent {
            self.fetch_all(&merged)?
        } else {
            let mut fetched = Vec::with_capacity(merged.len());
            for &(start, end) in &merged {
                let len = usize::try_from(end - start).map_err(std::io::Error::other)?;
                fetched.push((start, Arc::new(self.fetch(start, len)?)));
            }
            fetched
        };
        let mut prefetched = self.prefetched.lock().expect("not poisoned");
        prefetched.extend(
            fetched
                .into_iter()
                .map(|(start, data)| (start, data, vec![id])),
        );
        prefetched.sort_unstable_by_key(|(start, _, _)| *start);
        Ok(id)
    }

    /// Whether `len` bytes at `offset` were prefetched already; if so, the range holding them
    /// is kept for prefetch `id` too.
    fn hold(&self, offset: u64, len: u64, id: u64) -> bool {
        let mut prefetched = self.prefetched.lock().expect("not poisoned");
        let at = prefetched.partition_point(|(start, _, _)| *start <= offset);
        match prefetched[..at].iter_mut().find(|(start, data, _)| {
            offset.saturating_add(len) <= start + data.as_slice().len() as u64
        }) {
            Some((_, _, by)) => {
                if !by.contains(&id) {
                    by.push(id);
                }
                true
            }
            None => false,
        }
    }

    /// Fetches `ranges` (start, end) at once through `read_ranges`, longer ones cut into pieces
    /// of [`PIECE_BYTES`] fetched side by side and joined again.
    fn fetch_all(&self, ranges: &[(u64, u64)]) -> std::io::Result<Vec<(u64, Arc<Vec<u8>>)>> {
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for &(start, end) in ranges {
            let mut at = start;
            while at < end {
                let next = end.min(at.saturating_add(PIECE_BYTES));
                pieces.push((at, next));
                at = next;
            }
        }
        let starts: Vec<u64> = pieces.iter().map(|p| p.0).collect();
        let stops: Vec<u64> = pieces.iter().map(|p| p.1).collect();
        let datas: Vec<Vec<u8>> = Python::attach(|py| {
            let result = self
                .object
                .bind(py)
                .call_method1("read_ranges", (starts, stops))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            let mut datas = Vec::with_capacity(pieces.len());
            for item in result
                .try_iter()
                .map_err(|e| std::io::Error::other(e.to_string()))?
            {
                let item = item.map_err(|e| std::io::Error::other(e.to_string()))?;
                let bytes = item
                    .cast::<PyBytes>()
                    .map_err(|_| std::io::Error::other("read_ranges must return bytes"))?;
                datas.push(bytes.as_bytes().to_vec());
            }
            Ok::<_, std::io::Error>(datas)
        })?;
        if datas.len() != pieces.len() {
            return Err(std::io::Error::other(format!(
                "read_ranges returned {} ranges for {}",
                datas.len(),
                pieces.len()
            )));
        }
        let mut out = Vec::with_capacity(ranges.len());
        let mut datas = pieces.iter().zip(datas);
        for &(start, end) in ranges {
            let mut joined = Vec::with_capacity(usize::try_from(end - start).unwrap_or(0));
            while (joined.len() as u64) < end - start {
                let Some((&(piece_start, piece_end), data)) = datas.next() else {
                    break;
                };
                if data.len() as u64 != piece_end - piece_start {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "read_ranges gave {} bytes for {piece_start}..{piece_end}",
                            data.len()
                        ),
                    ));
                }
                joined.extend_from_slice(&data);
            }
            out.push((start, Arc::new(joined)));
        }
        Ok(out)
    }

    /// Drops the ranges that no prefetch but `id` needs (the file's start and end fetched at
    /// open are needed by the first read only).
    pub(crate) fn forget(&self, id: u64) {
        self.prefetched
            .lock()
            .expect("not poisoned")
            .retain_mut(|(_, _, by)| {
                by.retain(|&b| b != id && b != self.opened);
                !by.is_empty()
            });
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
            let at = prefetched.partition_point(|(start, _, _)| *start <= offset);
            for (start, data, _) in prefetched[..at].iter().rev() {
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
