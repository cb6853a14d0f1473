//! The RNTuple envelopes' serialization as written: little-endian integers, strings, record
//! and list frames, locators and envelopes with their XXH3-64 (the counterpart of
//! `rntuple/wire.rs`).

/// An envelope (or part of one) being written.
#[derive(Debug, Default)]
pub(super) struct Writer {
    pub(super) bytes: Vec<u8>,
}

/// A frame whose size is written when it closes.
#[must_use = "a frame's size is written by Writer::close"]
#[derive(Debug)]
pub(super) struct Frame {
    start: usize,
    list: bool,
}

impl Writer {
    pub(super) fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn i32(&mut self, v: i32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(super) fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A string: its 32-bit length, then its UTF-8 bytes.
    pub(super) fn string(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// Opens a record frame.
    pub(super) fn record(&mut self) -> Frame {
        let start = self.bytes.len();
        self.i64(0);
        Frame { start, list: false }
    }

    /// Opens a list frame of `items` items.
    pub(super) fn list(&mut self, items: usize) -> Frame {
        let start = self.bytes.len();
        self.i64(0);
        self.u32(items as u32);
        Frame { start, list: true }
    }

    /// Closes a frame: its size (negative for a list) counts its preamble and payload.
    pub(super) fn close(&mut self, frame: Frame) {
        let size = (self.bytes.len() - frame.start) as i64;
        let size = if frame.list { -size } else { size };
        self.bytes[frame.start..frame.start + 8].copy_from_slice(&size.to_le_bytes());
    }

    /// A list frame of record frames, one per item, each written by `item`.
    pub(super) fn records<T>(&mut self, items: &[T], mut item: impl FnMut(&mut Writer, &T)) {
        let list = self.list(items.len());
        for it in items {
            let record = self.record();
            item(self, it);
            self.close(record);
        }
        self.close(list);
    }

    /// A standard locator: the 32-bit size, then the 64-bit offset; a large locator (type
    /// 0x01) when the size does not fit.
    pub(super) fn locator(&mut self, offset: u64, size: u64) {
        match i32::try_from(size) {
            Ok(size) => {
                self.i32(size);
                self.u64(offset);
            }
            Err(_) => {
                // Size 20 (this word, then two 64-bit values), type 0x01 as -1 in the top byte.
                self.u32(0xFF00_0000 | 20);
                self.u64(size);
                self.u64(offset);
            }
        }
    }

    /// An envelope link: the envelope's uncompressed size, then its locator.
    pub(super) fn envelope_link(&mut self, len: u64, offset: u64, size: u64) {
        self.u64(len);
        self.locator(offset, size);
    }
}

/// An envelope of type `kind` around `payload`: the type and total length in one 64-bit word,
/// the payload, then the XXH3-64 of both. Returns the envelope and its checksum.
pub(super) fn envelope(kind: u16, payload: &[u8]) -> (Vec<u8>, u64) {
    let len = (payload.len() + 16) as u64;
    let mut out = Vec::with_capacity(len as usize);
    out.extend_from_slice(&(u64::from(kind) | len << 16).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxhash_rust::xxh3::xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    (out, sum)
}
