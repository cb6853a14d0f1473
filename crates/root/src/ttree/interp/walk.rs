//! The walk of one entry's bytes through a [`Plan`]'s tree of [`Node`]s, keeping one column's
//! values and list boundaries.
//!
//! [`Plan`]: super::Plan

use super::Node;
use crate::cursor::Cursor;
use crate::data::ColumnData;
use crate::reduced::Stored;
use crate::types::ScalarType;

/// `TObject::kIsReferenced`: a process ID follows the bits.
const IS_REFERENCED: u32 = 1 << 4;
/// The byte-count flag of an object header.
const BYTE_COUNT: u32 = 0x4000_0000;
/// A class tag (rather than a reference to an object) in `WriteObjectAny`'s output.
const CLASS_TAG: u32 = 0x8000_0000;
/// The tag before a class name written for the first time.
const NEW_CLASS_TAG: u32 = 0xFFFF_FFFF;
/// A vector's version bit for member-wise streaming (each member of all elements in turn).
const MEMBER_WISE: u16 = 1 << 14;

/// What the walk of one entry keeps: column `target`'s values and the boundaries of its lists
/// below the entry's own (the entry's offset is the caller's to end).
pub(crate) struct Walk<'o> {
    pub(crate) target: usize,
    pub(crate) out: &'o mut ColumnData,
    /// Whether the target holds strings (each string ends an item of the first level).
    pub(crate) strings: bool,
    /// The lengths read from each counter slot in this entry
    /// ([`Plan::counters`](super::Plan::counters) of them; empty at the start of each entry,
    /// but for lengths given before the walk, [`Plan::lengths`](super::Plan::lengths)): the
    /// `k`-th array of a member reads the `k`-th value of its counter, whether the objects are
    /// streamed one by one (counter, array, counter, array) or member-wise (every counter, then
    /// every array).
    pub(crate) counters: &'o mut [Vec<u64>],
    /// How many lengths each pointer array has used in this entry
    /// ([`Plan::readers`](super::Plan::readers) of them; zeros at the start of each entry).
    pub(crate) read: &'o mut [usize],
}

impl Walk<'_> {
    /// Reads `node` from `c`; errors say what did not fit.
    pub(crate) fn node(&mut self, node: &Node, c: &mut Cursor<'_>) -> Result<(), String> {
        match node {
            Node::Basic {
                stored,
                len,
                column,
                counter,
                listed,
            } => {
                let bytes = c
                    .take(stored.size() * len)
                    .map_err(|_| "a value runs past the entry".to_owned())?;
                if *column == Some(self.target) {
                    self.out.values.extend_stored(*stored, bytes)?;
                    if *listed {
                        self.list_end(Some(0));
                    }
                }
                if let Some(slot) = counter {
                    // A signed big-endian integer of 1, 2, 4 or 8 bytes (an unsigned counter
                    // with its top bit set is refused below as negative: no array is that long).
                    let n = crate::cursor::signed_be(bytes)
                        .ok_or("a pointer array's counter holds no value")?;
                    let n = u64::try_from(n)
                        .map_err(|_| format!("a pointer array's length is negative ({n})"))?;
                    self.counters[*slot].push(n);
                }
            }
            Node::Pointer {
                stored,
                counter,
                reader,
                column,
            } => self.pointer(*stored, (*counter, *reader), *column, c)?,
            Node::Arrays {
                counter,
                reader,
                element,
            } => {
                while self.read[*reader] < self.counters[*counter].len() {
                    self.loop_objects(*counter, *reader, element, c)?;
                }
            }
            Node::Loop {
                counter,
                reader,
                element,
            } => {
                let (end, _) = object_header(c)?;
                self.loop_objects(*counter, *reader, element, c)?;
                if end.is_some_and(|end| c.pos() != end) {
                    return Err(
                        "an array of objects behind a pointer does not fill its byte count".into(),
                    );
                }
            }
            Node::TObject { unique_id, bits } => self.tobject(*unique_id, *bits, c)?,
            Node::TArray { stored, column } => {
                let n = c.i32().map_err(|_| "a TArray runs past the entry")?;
                let bytes = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_mul(stored.size()))
                    .filter(|&b| b <= c.remaining())
                    .ok_or_else(|| format!("a TArray of {n} values does not fit in the entry"))?;
                let values = c.take(bytes).map_err(|_| "a TArray runs past the entry")?;
                if *column == Some(self.target) {
                    self.out.values.extend_stored(*stored, values)?;
                    self.list_end(Some(0));
                }
            }
            Node::RefArray { column } => self.ref_array(*column, c)?,
            Node::Skip { tagged, len } => skip_objects(*tagged, *len, c)?,
            Node::ClassName { class } => class_name(class, c)?,
            Node::Object { header, parts } => {
                let end = if *header { object_header(c)?.0 } else { None };
                for part in parts {
                    self.node(part, c)?;
                }
                if let Some(end) = end
                    && c.pos() != end
                {
                    return Err(format!(
                        "an object's parts end at byte {} of the entry where its byte count \
                         says {end}",
                        c.pos()
                    ));
                }
            }
            Node::Vector { header, element } => self.vector(*header, element, c)?,
            Node::Fill { element } => {
                while c.remaining() > 0 {
                    self.node(element, c)?;
                }
                self.list_end(self.distance(element));
            }
            Node::Array { len, element } => {
                for _ in 0..*len {
                    self.node(element, c)?;
                }
                self.list_end(self.distance(element));
            }
            Node::Str { header, column } => self.string(*header, *column, c)?,
            Node::CharStar { column } => {
                let chars = c
                    .char_star()
                    .map_err(|_| "a char* string runs past the entry")?;
                self.keep_string(*column, chars)?;
            }
            Node::Map { key, value } => self.map(key, value, c)?,
        }
        Ok(())
    }

    /// A pointer array (`T* array; //[n]`): a byte saying whether it is there, then as many
    /// values as the next length of counter slot `counter.0` (read by reader `counter.1`).
    fn pointer(
        &mut self,
        stored: Stored,
        (counter, reader): (usize, usize),
        column: Option<usize>,
        c: &mut Cursor<'_>,
    ) -> Result<(), String> {
        let n = self.next_length(counter, reader)?;
        let present = c.u8().map_err(|_| "a pointer array runs past the entry")?;
        let n = if present == 0 { 0 } else { n };
        let bytes = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(stored.size()))
            .filter(|&b| b <= c.remaining())
            .ok_or_else(|| format!("a pointer array of {n} values runs past the entry"))?;
        let bytes = c
            .take(bytes)
            .map_err(|_| "a pointer array runs past the entry")?;
        if column == Some(self.target) {
            self.out.values.extend_stored(stored, bytes)?;
            self.list_end(Some(0));
        }
        Ok(())
    }

    /// A map: its object header (marked member-wise), the pair's class version (and checksum
    /// after version 0), the size, then the keys and the values as [`Walk::members`] reads them.
    fn map(&mut self, key: &Node, value: &Node, c: &mut Cursor<'_>) -> Result<(), String> {
        let (end, version) = object_header(c)?;
        if version & MEMBER_WISE == 0 {
            return Err(
                "a map written pair by pair (object-wise), which evtc does not read".into(),
            );
        }
        // Before header version 8 (ROOT 5) no pair version was written.
        if version & !MEMBER_WISE < 8 {
            return Err(format!(
                "a map written member-wise with header version {}, before ROOT 6's layout",
                version & !MEMBER_WISE
            ));
        }
        if c.u16().map_err(|_| "a map header runs past the entry")? == 0 {
            c.skip(4).map_err(|_| "a map header runs past the entry")?;
        }
        let n = c
            .count("map size")
            .map_err(|_| "a map's size runs past the entry")?;
        if n > c.remaining() {
            return Err(format!("a map of {n} pairs cannot fit in the entry"));
        }
        self.members(key, n, c)?;
        self.members(value, n, c)?;
        self.list_end(self.distance(key).or_else(|| self.distance(value)));
        if end.is_some_and(|end| c.pos() != end) {
            return Err("a map's keys and values do not fill its byte count".into());
        }
        Ok(())
    }

    /// The length of the next array read by pointer array `reader` from its counter slot.
    fn next_length(&mut self, counter: usize, reader: usize) -> Result<u64, String> {
        let k = self.read[reader];
        let n = *self.counters[counter]
            .get(k)
            .ok_or("a pointer array before its length")?;
        self.read[reader] = k + 1;
        Ok(n)
    }

    /// The objects of one `T* x; //[n]` array: as many as its counter's next length.
    fn loop_objects(
        &mut self,
        counter: usize,
        reader: usize,
        element: &Node,
        c: &mut Cursor<'_>,
    ) -> Result<(), String> {
        let n = self.next_length(counter, reader)?;
        // Every object takes its header's 6 bytes at least: a lying length fails here.
        if n > c.remaining() as u64 {
            return Err(format!(
                "an array of {n} objects behind a pointer cannot fit in the entry"
            ));
        }
        for _ in 0..n {
            self.node(element, c)?;
        }
        self.list_end(self.distance(element));
        Ok(())
    }

    /// One member of `n` objects streamed member-wise: an STL member, or a `T* x; //[n]` array of
    /// objects, as one object header, then each object's without its own (nothing at all when
    /// `n` is 0); any other `n` times.
    fn members(&mut self, part: &Node, n: usize, c: &mut Cursor<'_>) -> Result<(), String> {
        match part {
            Node::Loop {
                counter,
                reader,
                element,
            } => self.grouped(c, n, |w, c| w.loop_objects(*counter, *reader, element, c)),
            Node::Vector {
                header: true,
                element,
            } => self.grouped(c, n, |w, c| w.vector(false, element, c)),
            Node::Str {
                header: true,
                column,
            } => self.grouped(c, n, |w, c| w.string(false, *column, c)),
            part => {
                for _ in 0..n {
                    self.node(part, c)?;
                }
                Ok(())
            }
        }
    }

    /// Marks the end of a list whose elements hold the target `distance` lists further in
    /// (`Some(0)`: the elements are the target's values or strings; `None`: the target is not
    /// in them). The outermost list is the entry, whose end the caller marks.
    fn list_end(&mut self, distance: Option<usize>) {
        if let Some(d) = distance {
            let level = d + usize::from(self.strings);
            if level < self.out.levels.len() {
                self.out.close(level);
            }
        }
    }

    /// A vector: with `header`, its byte count and version (a version marked member-wise: the
    /// elements' class version, then each member of all elements in turn), then its size and
    /// elements.
    fn vector(&mut self, header: bool, element: &Node, c: &mut Cursor<'_>) -> Result<(), String> {
        let mut member_wise = false;
        let end = if header {
            let (end, version) = object_header(c)?;
            if version & MEMBER_WISE != 0 {
                let Node::Object { header: true, .. } = element else {
                    return Err("a vector of non-objects marked member-wise".into());
                };
                let v = c.u16().map_err(|_| "a vector header runs past the entry")?;
                if v == 0 {
                    c.skip(4)
                        .map_err(|_| "a vector header runs past the entry")?;
                }
                member_wise = true;
            }
            end
        } else {
            None
        };
        let n = c
            .count("vector size")
            .map_err(|_| "a vector's size runs past the entry")?;
        // Every element takes a byte at least: a lying size fails here, not later.
        if n > c.remaining() {
            return Err(format!("a vector of {n} elements cannot fit in the entry"));
        }
        match element {
            Node::Object { parts, .. } if member_wise => {
                // Each target is in one part, so its values come in element order.
                for part in parts {
                    self.members(part, n, c)?;
                }
            }
            element => {
                for _ in 0..n {
                    self.node(element, c)?;
                }
            }
        }
        self.list_end(self.distance(element));
        if let Some(end) = end
            && c.pos() != end
        {
            return Err("a vector's elements do not fill its byte count".into());
        }
        Ok(())
    }

    /// One object header, then `n` parts read by `part`, which must fill its byte count;
    /// nothing at all when `n` is 0.
    fn grouped(
        &mut self,
        c: &mut Cursor<'_>,
        n: usize,
        part: impl Fn(&mut Self, &mut Cursor<'_>) -> Result<(), String>,
    ) -> Result<(), String> {
        if n == 0 {
            return Ok(());
        }
        let (end, _) = object_header(c)?;
        for _ in 0..n {
            part(self, c)?;
        }
        if end.is_some_and(|end| c.pos() != end) {
            return Err("the members of a member-wise vector do not fill their byte count".into());
        }
        Ok(())
    }

    /// A string: with `header`, after an object header whose byte count it must fill.
    fn string(
        &mut self,
        header: bool,
        column: Option<usize>,
        c: &mut Cursor<'_>,
    ) -> Result<(), String> {
        let end = if header { object_header(c)?.0 } else { None };
        let len = match c.u8().map_err(|_| "a string runs past the entry")? {
            255 => c
                .count("string length")
                .map_err(|_| "a string runs past the entry")?,
            n => usize::from(n),
        };
        let bytes = c
            .take(len)
            .map_err(|_| "a string runs past the entry".to_owned())?;
        self.keep_string(column, bytes)?;
        if let Some(end) = end
            && c.pos() != end
        {
            return Err("a string does not fill its byte count".into());
        }
        Ok(())
    }

    /// Keeps a string's characters if `column` is the target.
    fn keep_string(&mut self, column: Option<usize>, chars: &[u8]) -> Result<(), String> {
        if column == Some(self.target) {
            self.out
                .values
                .extend_stored(Stored::Plain(ScalarType::U8), chars)?;
            if self.strings {
                self.out.close(0);
            }
        }
        Ok(())
    }

    /// How many lists lie between `node` and the target's values or strings (`Some(0)`: `node`
    /// holds them itself), or `None` if the target is not in `node`.
    fn distance(&self, node: &Node) -> Option<usize> {
        let mine = |column: &Option<usize>| *column == Some(self.target);
        match node {
            Node::Basic { column, listed, .. } => mine(column).then_some(usize::from(*listed)),
            Node::Str { column, .. } | Node::CharStar { column } => mine(column).then_some(0),
            // A pointer array is a list of its own.
            Node::Pointer { column, .. } => mine(column).then_some(1),
            Node::Object { parts, .. } => parts.iter().find_map(|p| self.distance(p)),
            Node::Vector { element, .. }
            | Node::Fill { element }
            | Node::Array { element, .. }
            | Node::Loop { element, .. }
            | Node::Arrays { element, .. } => self.distance(element).map(|d| d + 1),
            Node::Map { key, value } => self
                .distance(key)
                .or_else(|| self.distance(value))
                .map(|d| d + 1),
            Node::TObject { unique_id, bits } => (mine(unique_id) || mine(bits)).then_some(0),
            // A TArray's values and a TRefArray's unique IDs are a list of their own.
            Node::TArray { column, .. } | Node::RefArray { column } => mine(column).then_some(1),
            Node::Skip { .. } | Node::ClassName { .. } => None,
        }
    }

    /// A `TObject` as its streamer writes it, keeping its unique ID or bits if either is the
    /// target.
    fn tobject(
        &mut self,
        unique_id: Option<usize>,
        bits: Option<usize>,
        c: &mut Cursor<'_>,
    ) -> Result<(), String> {
        let past = |_| "a TObject runs past the entry";
        let v = c.u16().map_err(past)?;
        // Written by ROOT 3 with a byte count: its second half and the version follow.
        if u32::from(v) << 16 & BYTE_COUNT != 0 {
            c.skip(4).map_err(past)?;
        }
        let id = c.take(4).map_err(past)?;
        let flags = c.take(4).map_err(past)?;
        for (column, bytes) in [(unique_id, id), (bits, flags)] {
            if column == Some(self.target) {
                self.out
                    .values
                    .extend_stored(Stored::Plain(ScalarType::U32), bytes)?;
            }
        }
        if u32::from_be_bytes([flags[0], flags[1], flags[2], flags[3]]) & IS_REFERENCED != 0 {
            c.skip(2).map_err(past)?;
        }
        Ok(())
    }

    /// A `TRefArray` as its streamer writes it, keeping its unique IDs if `column` is the
    /// target.
    fn ref_array(&mut self, column: Option<usize>, c: &mut Cursor<'_>) -> Result<(), String> {
        let past = |_| "a TRefArray runs past the entry";
        let (end, _) = object_header(c)?;
        self.tobject(None, None, c)?;
        self.string(false, None, c)?;
        let n = c.i32().map_err(past)?;
        c.skip(4 + 2).map_err(past)?; // the lower bound and the process ID
        let bytes = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(4))
            .filter(|&b| b <= c.remaining())
            .ok_or_else(|| format!("a TRefArray of {n} references does not fit in the entry"))?;
        let uids = c.take(bytes).map_err(past)?;
        if column == Some(self.target) {
            self.out
                .values
                .extend_stored(Stored::Plain(ScalarType::U32), uids)?;
            self.list_end(Some(0));
        }
        if end.is_some_and(|end| c.pos() != end) {
            return Err("a TRefArray does not fill its byte count".into());
        }
        Ok(())
    }
}

/// Skips a pointer to an object as `TBuffer::WriteObjectAny` writes it: 0 for null; a byte
/// count, a class tag and the object; or, without a byte count, a reference to an object
/// written before (a class tag without a byte count cannot be skipped).
fn skip_tagged(c: &mut Cursor<'_>) -> Result<(), String> {
    let start = c.pos();
    let tag = c
        .u32()
        .map_err(|_| "a pointer to an object runs past the entry")?;
    if tag & BYTE_COUNT != 0 {
        let end = start + 4 + (tag & !BYTE_COUNT) as usize;
        return c
            .seek(end)
            .map_err(|_| "an object behind a pointer runs past the entry".into());
    }
    if tag == NEW_CLASS_TAG || tag & CLASS_TAG != 0 {
        return Err("an object behind a pointer has no byte count to skip it by".into());
    }
    Ok(())
}

/// Reads an object header (a byte count, if written, the version, and a checksum after version
/// 0: ROOT's `WriteVersion` for classes without a dictionary version) and returns where the
/// object ends, when its byte count says, and its version.
fn object_header(c: &mut Cursor<'_>) -> Result<(Option<usize>, u16), String> {
    let start = c.pos();
    let past = |_| "an object header runs past the entry";
    let bcnt = c.u32().map_err(past)?;
    // `TBuffer::ReadVersion`: without the byte-count flag, the first two bytes are the version.
    let end = if bcnt & BYTE_COUNT != 0 {
        Some(start + 4 + (bcnt & !BYTE_COUNT) as usize)
    } else {
        c.seek(start).map_err(past)?;
        None
    };
    let version = c.u16().map_err(past)?;
    if version & !MEMBER_WISE == 0 {
        c.skip(4)
            .map_err(|_| "an object header runs past the entry")?; // checksum
    }
    Ok((end, version))
}

/// Skips `len` pointers to objects: `tagged`, as `TBuffer::WriteObjectAny` writes them; else
/// objects inline with their header (a `//->` member), whose byte count says where they end.
fn skip_objects(tagged: bool, len: usize, c: &mut Cursor<'_>) -> Result<(), String> {
    for _ in 0..len {
        if tagged {
            skip_tagged(c)?;
        } else {
            let (end, _) = object_header(c)?;
            let end = end.ok_or("an object behind a pointer has no byte count to skip it by")?;
            c.seek(end)
                .map_err(|_| "an object behind a pointer runs past the entry")?;
        }
    }
    Ok(())
}

/// Checks the class name written before an object (a length byte, the name, a NUL) against the
/// branch's `class`.
fn class_name(class: &str, c: &mut Cursor<'_>) -> Result<(), String> {
    let n = c.u8().map_err(|_| "a class name runs past the entry")?;
    let name = c
        .take(usize::from(n) + 1)
        .map_err(|_| "a class name runs past the entry")?;
    if name[..usize::from(n)] != *class.as_bytes() || name[usize::from(n)] != 0 {
        return Err(format!(
            "the entry holds an object of class `{}`, not the branch's `{class}`",
            String::from_utf8_lossy(&name[..usize::from(n)])
        ));
    }
    Ok(())
}
