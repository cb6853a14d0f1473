//! The RNTuple envelopes' serialization: little-endian integers, strings, record and list frames,
//! locators and envelope links (the specification's "Basic Types", "Frames" and "Locators").
//!
//! A [`Reader`] reads one envelope's payload; every read is bounds-checked, and a frame's
//! declared size bounds what its items may read (a reader skips what it does not know to the
//! frame's end, as the specification asks for forward compatibility).

use crate::error::{Error, Result};

/// Reads the little-endian fields of one envelope.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Where the current frame ends (`buf.len()` outside any frame).
    end: usize,
    what: &'a str,
}

/// Where a page or an envelope is: a byte range of the file, or a special locator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Locator {
    /// `size` bytes at `offset` (standard and large locators).
    File { offset: u64, size: u64 },
    /// A page of zeros that is not stored (ROOT's `kTypePageZero`).
    Zero,
    /// A locator type this reader does not know.
    Unknown(u8),
}

/// A list frame's bounds: its item count and where it ends.
pub(crate) struct List {
    pub(crate) items: usize,
    end: usize,
}

/// A record frame's end.
pub(crate) struct Record {
    end: usize,
}

impl<'a> Reader<'a> {
    /// A reader over an envelope's payload; `what` names it in errors.
    pub(crate) fn new(buf: &'a [u8], what: &'a str) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            end: buf.len(),
            what,
        }
    }

    /// An error at the reader's position.
    pub(crate) fn error(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.what, self.pos as u64, detail)
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let Some(end) = self.pos.checked_add(n).filter(|&e| e <= self.end) else {
            return Err(self.error(format!(
                "needs {n} bytes, {} are left in the {}",
                self.end - self.pos,
                if self.end == self.buf.len() {
                    "envelope"
                } else {
                    "frame"
                }
            )));
        };
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        Ok(evtc_codecs::le::array(self.take(N)?, 0))
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub(crate) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A string: a 32-bit length, then UTF-8 bytes (invalid UTF-8 is replaced, never refused).
    pub(crate) fn string(&mut self) -> Result<String> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    /// Feature flags: 64-bit words, another one following while the last is negative. Returns
    /// the flags of the first 63 bits and whether any later word was read.
    pub(crate) fn feature_flags(&mut self) -> Result<(u64, bool)> {
        let first = self.u64()?;
        let mut word = first;
        let mut more = false;
        while (word as i64) < 0 {
            word = self.u64()?;
            more = true;
        }
        Ok((first & !(1 << 63), more))
    }

    /// The preamble of a frame: its size (bytes of the preamble and payload) and, for a list, the
    /// item count; checked against the enclosing frame.
    fn frame(&mut self, list: bool) -> Result<(usize, usize)> {
        let start = self.pos;
        let size = self.i64()?;
        let is_list = size < 0;
        if is_list != list {
            self.pos = start;
            return Err(self.error(format!(
                "a {} frame where a {} frame belongs",
                if is_list { "list" } else { "record" },
                if list { "list" } else { "record" }
            )));
        }
        let items = if list { self.u32()? as usize } else { 0 };
        let size = usize::try_from(size.unsigned_abs())
            .ok()
            .filter(|&size| size >= self.pos - start)
            .filter(|&size| start.checked_add(size).is_some_and(|end| end <= self.end))
            .ok_or_else(|| {
                Error::corrupt(
                    self.what,
                    start as u64,
                    format!(
                        "a frame of {} bytes does not fit in the {} bytes left",
                        size.unsigned_abs(),
                        self.end - start
                    ),
                )
            })?;
        Ok((start + size, items))
    }

    /// Enters a list frame; its items are read until [`Reader::close_list`].
    pub(crate) fn list(&mut self) -> Result<(List, usize)> {
        let outer = self.end;
        let (end, items) = self.frame(true)?;
        self.end = end;
        Ok((List { items, end }, outer))
    }

    /// Leaves a list frame at its declared end, restoring the enclosing frame's end `outer`.
    pub(crate) fn close_list(&mut self, list: List, outer: usize) {
        self.pos = list.end;
        self.end = outer;
    }

    /// Enters a record frame.
    pub(crate) fn record(&mut self) -> Result<(Record, usize)> {
        let outer = self.end;
        let (end, _) = self.frame(false)?;
        self.end = end;
        Ok((Record { end }, outer))
    }

    /// Leaves a record frame at its declared end (skipping fields this reader does not know).
    pub(crate) fn close_record(&mut self, record: Record, outer: usize) {
        self.pos = record.end;
        self.end = outer;
    }

    /// Bytes left in the current frame.
    pub(crate) fn remaining_in_frame(&self) -> usize {
        self.end - self.pos
    }

    /// Whether the current frame has bytes left.
    pub(crate) fn has_more(&self) -> bool {
        self.pos < self.end
    }

    /// Reads a list frame of `items`, each read by `item` (which may read frames of its own).
    /// Items are never preallocated beyond what the frame's bytes can hold.
    pub(crate) fn list_of<T>(
        &mut self,
        min_item_bytes: usize,
        mut item: impl FnMut(&mut Reader<'a>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let (list, outer) = self.list()?;
        if list.items > (list.end - self.pos) / min_item_bytes.max(1) {
            return Err(self.error(format!(
                "a list of {} items cannot fit in its {} bytes",
                list.items,
                list.end - self.pos
            )));
        }
        let mut out = Vec::with_capacity(list.items);
        for _ in 0..list.items {
            out.push(item(self)?);
        }
        self.close_list(list, outer);
        Ok(out)
    }

    /// Reads a list frame of record frames, each read by `item` inside its record.
    pub(crate) fn records_of<T>(
        &mut self,
        mut item: impl FnMut(&mut Reader<'a>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.list_of(8, |r| {
            let (record, outer) = r.record()?;
            let value = item(r)?;
            r.close_record(record, outer);
            Ok(value)
        })
    }

    /// A locator: a standard one (32-bit size, 64-bit offset), a large one, a zero page, or a
    /// type this reader does not know (its payload skipped by its own size).
    pub(crate) fn locator(&mut self) -> Result<Locator> {
        let head = self.i32()?;
        if head >= 0 {
            let offset = self.u64()?;
            return Ok(Locator::File {
                offset,
                size: head as u64,
            });
        }
        // Non-standard: the low 16 bits are the locator's own size (this word included), the
        // top byte's magnitude (as a signed 8-bit value) its type.
        let head = head as u32;
        let size = (head & 0xFFFF) as usize;
        let kind = ((head >> 24) as u8 as i8).unsigned_abs();
        let payload = size
            .checked_sub(4)
            .ok_or_else(|| self.error(format!("a locator of {size} bytes")))?;
        let payload = self.take(payload)?;
        match kind {
            0x01 if payload.len() >= 16 => Ok(Locator::File {
                size: evtc_codecs::le::u64_at(payload, 0),
                offset: evtc_codecs::le::u64_at(payload, 8),
            }),
            0x01 => Err(self.error("a large locator without its 16-byte payload")),
            0x00 => Ok(Locator::Zero),
            other => Ok(Locator::Unknown(other)),
        }
    }

    /// An envelope link: the envelope's uncompressed size, then its locator.
    pub(crate) fn envelope_link(&mut self) -> Result<(u64, Locator)> {
        let len = self.u64()?;
        Ok((len, self.locator()?))
    }
}
