//! ROOT's object streaming (`TBufferFile`): byte counts, class versions, class tags and
//! references, `TObject` and `TNamed`. The tree and streamer-info parsers build on these.

use std::collections::HashMap;

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::streamer::Streamers;

const BYTE_COUNT_MASK: u32 = 0x4000_0000;
const CLASS_MASK: u32 = 0x8000_0000;
const NEW_CLASS_TAG: u32 = 0xFFFF_FFFF;
const MAP_OFFSET: u32 = 2;
const MEMBERWISE: i16 = 0x4000;

/// What `TBufferFile::ReadObjectAny` finds at the cursor.
pub(crate) enum Tagged {
    /// A null pointer.
    Null,
    /// A reference to an object read earlier (not followed).
    Reference,
    /// An object of `class`, whose body ends at `end` (when it has a byte count).
    Object { class: String, end: Option<usize> },
}

/// A cursor over one record, with the record's class-tag map.
pub(crate) struct Parser<'a> {
    pub(crate) c: Cursor<'a>,
    /// Class names by their tag (position in the buffer, counting the key header, plus 2).
    classes: HashMap<u32, String>,
    /// Positions in tags count the key header, which is not in the buffer.
    origin: u32,
    pub(crate) what: &'a str,
    /// The file's streamer infos, for records of class versions without a fixed layout here.
    pub(crate) streamers: Option<&'a Streamers>,
}

impl<'a> Parser<'a> {
    /// A parser over `record`, an object whose key header was `key_len` bytes.
    pub(crate) fn new(record: &'a [u8], key_len: u16, what: &'a str) -> Parser<'a> {
        Parser {
            c: Cursor::new(record, 0, what),
            classes: HashMap::new(),
            origin: u32::from(key_len),
            what,
            streamers: None,
        }
    }

    /// The parser, reading records of class versions it has no fixed layout for through
    /// `streamers` (see `members`).
    pub(crate) fn with_streamers(mut self, streamers: &'a Streamers) -> Parser<'a> {
        self.streamers = Some(streamers);
        self
    }

    pub(crate) fn version_error(
        &self,
        class: &str,
        version: i16,
        supported: &'static str,
    ) -> Error {
        Error::UnsupportedVersion {
            what: self.what.to_owned(),
            class: class.to_owned(),
            version,
            supported,
        }
    }

    /// A byte count (if present) and version; returns the object's end.
    pub(crate) fn header(&mut self) -> Result<(Option<usize>, i16)> {
        let start = self.c.pos();
        let bcnt = self.c.u32()?;
        let end = if bcnt & BYTE_COUNT_MASK != 0 {
            let end = start + 4 + (bcnt & !BYTE_COUNT_MASK) as usize;
            if end > start + 4 + self.c.remaining() {
                return Err(self.c.error(format!(
                    "an object's byte count ({}) runs past the record",
                    bcnt & !BYTE_COUNT_MASK
                )));
            }
            Some(end)
        } else {
            self.c.seek(start)?;
            None
        };
        let version = self.c.i16()?;
        if version & MEMBERWISE != 0 && version > 0 {
            return Err(self
                .c
                .error("member-wise streamed objects are not supported"));
        }
        Ok((end, version))
    }

    /// Moves to an object's end, when its byte count gave one.
    pub(crate) fn end(&mut self, end: Option<usize>) -> Result<()> {
        match end {
            Some(end) => self.c.seek(end),
            None => Ok(()),
        }
    }

    pub(crate) fn skip_object(&mut self) -> Result<()> {
        let (end, _) = self.header()?;
        match end {
            Some(end) => self.c.seek(end),
            None => Err(self
                .c
                .error("an object without a byte count cannot be skipped")),
        }
    }

    /// A `TObject`: returns its bits.
    pub(crate) fn tobject(&mut self) -> Result<u32> {
        let version = self.c.i16()?;
        if version & MEMBERWISE != 0 {
            self.c.skip(4)?;
        }
        let _unique_id = self.c.u32()?;
        let bits = self.c.u32()?;
        if bits & (1 << 4) != 0 {
            self.c.skip(2)?;
        }
        Ok(bits)
    }

    /// A TNamed: returns name and title.
    pub(crate) fn named(&mut self) -> Result<(String, String)> {
        self.named_with_bits().map(|(name, title, _)| (name, title))
    }

    /// A TNamed: returns name, title and its `TObject` bits.
    pub(crate) fn named_with_bits(&mut self) -> Result<(String, String, u32)> {
        let (end, _) = self.header()?;
        let bits = self.tobject()?;
        let name = self.c.string()?;
        let title = self.c.string()?;
        self.end(end)?;
        Ok((name, title, bits))
    }

    /// The start of `TBufferFile::ReadObjectAny`: null, a reference, or a (new or known) class
    /// whose object follows. The caller reads the object, then calls [`Parser::end`].
    pub(crate) fn tagged(&mut self) -> Result<Tagged> {
        let beg = self.c.pos();
        let bcnt = self.c.u32()?;
        let (tag, end) = if bcnt & BYTE_COUNT_MASK == 0 || bcnt == NEW_CLASS_TAG {
            (bcnt, None)
        } else {
            let end = beg + 4 + (bcnt & !BYTE_COUNT_MASK) as usize;
            if end > beg + 4 + self.c.remaining() {
                return Err(self.c.error("an object's byte count runs past the record"));
            }
            (self.c.u32()?, Some(end))
        };
        if tag & CLASS_MASK == 0 {
            self.end(end)?;
            return Ok(if tag == 0 {
                Tagged::Null
            } else {
                Tagged::Reference
            });
        }
        let class = if tag == NEW_CLASS_TAG {
            let tag_pos = (self.c.pos() as u32).wrapping_sub(4);
            let name = self.c.cstring()?;
            self.classes
                .insert(tag_pos.wrapping_add(self.origin + MAP_OFFSET), name.clone());
            name
        } else {
            let reference = tag & !CLASS_MASK;
            match self.classes.get(&reference) {
                Some(name) => name.clone(),
                None => {
                    return Err(self
                        .c
                        .error(format!("reference to unknown class tag {reference}")));
                }
            }
        };
        Ok(Tagged::Object { class, end })
    }

    /// The header of a `TObjArray` (or, with `list`, a `TList`): returns its end, number of
    /// objects and version, checked against the bytes left. A `TList` of version 5 or more follows each
    /// object with an option string.
    pub(crate) fn collection_header(&mut self, list: bool) -> Result<(Option<usize>, usize, i16)> {
        let (end, version) = self.header()?;
        let (has_object, has_name) = if list {
            (version > 3, version > 3)
        } else {
            (version > 2, version > 1)
        };
        if has_object {
            self.tobject()?;
        }
        if has_name {
            let _name = self.c.string()?;
        }
        let n = self
            .c
            .count(if list { "TList size" } else { "TObjArray size" })?;
        if !list {
            let _lower = self.c.i32()?;
        }
        if n > self.c.remaining() / 4 {
            return Err(self.c.error(format!(
                "a collection of {n} objects cannot fit in the record"
            )));
        }
        Ok((end, n, version))
    }
}
