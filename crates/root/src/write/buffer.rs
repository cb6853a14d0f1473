//! ROOT's object streaming as it writes (`TBufferFile`): big-endian fields, byte counts,
//! class versions, class tags, `TObject`, `TNamed` and `TString`, the counterpart of
//! `objects.rs`'s parser.
//!
//! A class tag is the position of a class's first appearance in the record, counted from the
//! start of the key (whose header is not in the buffer: [`ObjectBuffer::new`]'s `origin`),
//! plus 2; later objects of the same class refer to it by that tag with the top bit set.

use std::collections::HashMap;

const BYTE_COUNT_MASK: u32 = 0x4000_0000;
const CLASS_MASK: u32 = 0x8000_0000;
const NEW_CLASS_TAG: u32 = 0xFFFF_FFFF;
const MAP_OFFSET: u32 = 2;

/// One record's bytes being written.
#[derive(Debug)]
pub(crate) struct ObjectBuffer {
    pub(crate) bytes: Vec<u8>,
    /// The key header's length: positions in tags count it.
    origin: u32,
    /// Class tags by class name.
    classes: HashMap<&'static str, u32>,
}

/// Where an object's byte count goes, to be filled when the object ends.
#[must_use = "an object's byte count is written by ObjectBuffer::end"]
#[derive(Debug)]
pub(crate) struct Open(usize);

impl ObjectBuffer {
    /// A buffer for an object stored under a key of `origin` bytes.
    pub(crate) fn new(origin: u32) -> ObjectBuffer {
        ObjectBuffer {
            bytes: Vec::new(),
            origin,
            classes: HashMap::new(),
        }
    }

    pub(crate) fn i16(&mut self, v: i16) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn i32(&mut self, v: i32) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub(crate) fn i64(&mut self, v: i64) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub(crate) fn f32(&mut self, v: f32) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    /// A `TString`: a length byte (255 then a 32-bit length for 255 bytes or more), then the
    /// bytes.
    pub(crate) fn string(&mut self, s: &str) {
        put_string(&mut self.bytes, s);
    }

    /// A C string: the bytes, then a zero byte.
    pub(crate) fn cstring(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
    }

    /// The position of the next byte, as tags count it.
    fn position(&self) -> u32 {
        self.origin + self.bytes.len() as u32
    }

    /// Starts an object's body: a byte count to come, then its class version.
    pub(crate) fn begin(&mut self, version: i16) -> Open {
        let open = Open(self.bytes.len());
        self.u32(0);
        self.i16(version);
        open
    }

    /// Ends the object started at `open`: its byte count is what follows it.
    pub(crate) fn end(&mut self, open: Open) {
        let count = (self.bytes.len() - open.0 - 4) as u32;
        self.bytes[open.0..open.0 + 4].copy_from_slice(&(count | BYTE_COUNT_MASK).to_be_bytes());
    }

    /// Starts an object written through a pointer (`TBufferFile::WriteObjectAny`): a byte count
    /// to come, then the class (its name the first time, its tag after); the caller writes
    /// the object's body and ends it with [`ObjectBuffer::end`].
    pub(crate) fn begin_tagged(&mut self, class: &'static str) -> Open {
        let open = Open(self.bytes.len());
        self.u32(0);
        match self.classes.get(class) {
            Some(&tag) => self.u32(tag | CLASS_MASK),
            None => {
                let tag = self.position() + MAP_OFFSET;
                self.u32(NEW_CLASS_TAG);
                self.cstring(class);
                self.classes.insert(class, tag);
            }
        }
        open
    }

    /// The tag by which later pointers refer to the object whose writing `open` began (its
    /// byte count's position, counted from the key's start, plus 2).
    pub(crate) fn tag(&self, open: &Open) -> u32 {
        self.origin + open.0 as u32 + MAP_OFFSET
    }

    /// A pointer to an object written before in this record (by its [`ObjectBuffer::tag`]),
    /// or null.
    pub(crate) fn reference(&mut self, tag: Option<u32>) {
        self.u32(tag.unwrap_or(0));
    }

    /// A `TObject`: version 1, unique id 0, and `bits`.
    pub(crate) fn tobject(&mut self, bits: u32) {
        self.i16(1);
        self.u32(0);
        self.u32(bits);
    }

    /// A `TNamed`: its byte count and version, a `TObject` of `bits`, the name and title.
    pub(crate) fn tnamed(&mut self, name: &str, title: &str, bits: u32) {
        let open = self.begin(1);
        self.tobject(bits);
        self.string(name);
        self.string(title);
        self.end(open);
    }
}

/// Appends a `TString` to `out`.
pub(crate) fn put_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if bytes.len() < 255 {
        out.push(bytes.len() as u8);
    } else {
        out.push(255);
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

/// The bytes of a `TString` of `s`.
pub(crate) fn string_len(s: &str) -> usize {
    let n = s.len();
    if n < 255 { 1 + n } else { 5 + n }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_count_the_key_and_refer_back() {
        let mut b = ObjectBuffer::new(100);
        let first = b.begin_tagged("TFoo");
        b.end(first);
        let second = b.begin_tagged("TFoo");
        b.end(second);
        // The first: byte count 4 + 5 (tag and "TFoo\0"), the new-class tag at position 104.
        assert_eq!(&b.bytes[..4], &(0x4000_0009u32).to_be_bytes());
        assert_eq!(&b.bytes[4..8], &[0xFF; 4]);
        assert_eq!(&b.bytes[8..13], b"TFoo\0");
        // The second refers to tag 104 + 2.
        assert_eq!(&b.bytes[13..17], &(0x4000_0004u32).to_be_bytes());
        assert_eq!(&b.bytes[17..21], &(106 | CLASS_MASK).to_be_bytes());
        let mut long = Vec::new();
        put_string(&mut long, &"x".repeat(300));
        assert_eq!(&long[..5], &[255, 0, 0, 1, 44]);
        assert_eq!(string_len(&"x".repeat(300)), long.len());
    }
}
