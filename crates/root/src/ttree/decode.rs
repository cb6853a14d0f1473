//! Decoding the entries of a loaded basket into column data ([`Loaded::decode`]), one function
//! per [`Layout`].

use std::ops::Range;

use super::column::{BranchColumn, Layout, ListHeader, RowPart};
use crate::column::Column;
use crate::cursor::Cursor;
use crate::data::{ColumnData, Values};
use crate::error::{Error, Result};
use crate::reduced::Stored;
use crate::types::{ColumnKind, ScalarType};

use super::interp::{Plan, Walk};

/// How a string's bytes are stored: as they are.
const BYTES: Stored = Stored::Plain(ScalarType::U8);

/// The values of a split collection's objects' length member for some entries, and each
/// entry's bounds in them.
pub(super) type ObjectLengths = (Vec<i64>, Vec<u64>);

/// A decompressed basket of a column: its data and its entry offsets (empty for fixed layouts).
pub(super) struct Loaded<'a> {
    pub(super) column: &'a Column,
    pub(super) branch: &'a BranchColumn,
    /// The basket's index in the column.
    pub(super) index: usize,
    /// Entries in the basket.
    pub(super) held: usize,
    pub(super) data: &'a [u8],
    pub(super) offsets: &'a [u32],
}

impl Loaded<'_> {
    fn bad(&self, detail: impl Into<String>) -> Error {
        let b = &self.branch.baskets[self.index];
        let what = format!(
            "basket {} of branch {:?} (key at byte {})",
            self.index, self.column.name, b.seek
        );
        Error::corrupt(what, 0, detail)
    }

    /// The bytes of entry `e`.
    fn entry(&self, e: usize) -> Result<&[u8]> {
        if self.offsets.len() != self.held + 1 {
            return Err(self.bad("a variable-length branch's basket has no entry offsets"));
        }
        Ok(&self.data[self.offsets[e] as usize..self.offsets[e + 1] as usize])
    }

    fn push(&self, values: &mut Values, stored: Stored, bytes: &[u8]) -> Result<()> {
        values
            .extend_stored(stored, bytes)
            .map_err(|d| self.bad(d.to_string()))
    }

    /// Decodes entries `range` into `out`; `lengths`, for the arrays in a split collection's
    /// objects, their length member's values for these entries.
    pub(super) fn decode(
        &self,
        range: Range<usize>,
        lengths: Option<&ObjectLengths>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let missing = |what: &str| self.bad(format!("internal: {what}"));
        match self.branch.layout {
            Layout::Fixed {
                stored,
                len,
                offset,
                stride,
            } => self.fixed(stored, len, offset, stride, range, out),
            Layout::Jagged { stored } => self.jagged(stored, range, out),
            Layout::Vector { stored } => self.vectors(stored, range, out),
            Layout::VectorVector { stored } => self.vectors_of_vectors(stored, range, out),
            Layout::CharStar => self.char_stars(range, out),
            Layout::String { header } => self.strings(header, range, out),
            Layout::ObjectVector {
                stored,
                offset,
                stride,
                member_wise,
            } => self.object_vectors(stored, offset, stride, member_wise, range, out),
            Layout::Interpreted { target } => self.interpreted(target, lengths, range, out),
            Layout::FlaggedArray { stored } => self.flagged_arrays(stored, range, out),
            Layout::ArraysInCollection { stored, len } => {
                self.arrays_in_collection(stored, len, range, out)
            }
            Layout::LeafRow { target } => self.leaf_rows(target, range, out),
            Layout::PointerArraysInCollection { stored } => {
                let lengths = lengths.ok_or_else(|| {
                    missing("a pointer array in a collection without its length member")
                })?;
                self.pointer_arrays(stored, lengths, range, out)
            }
            Layout::StringList { header } => self.string_lists(header, range, out),
        }
    }

    /// Entries of `stride` bytes, `len` values at `offset` in each.
    fn fixed(
        &self,
        stored: Stored,
        len: usize,
        offset: usize,
        stride: usize,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let bytes = range
            .start
            .checked_mul(stride)
            .zip(range.end.checked_mul(stride))
            .and_then(|(a, b)| self.data.get(a..b))
            .ok_or_else(|| {
                self.bad(format!(
                    "{} entries of {stride} bytes do not fit in {} bytes",
                    range.end,
                    self.data.len()
                ))
            })?;
        let width = stored.size() * len;
        if width == stride {
            return self.push(&mut out.values, stored, bytes);
        }
        for e in bytes.chunks_exact(stride) {
            self.push(&mut out.values, stored, &e[offset..offset + width])?;
        }
        Ok(())
    }

    /// Values only, bounded by the entry offsets.
    fn jagged(&self, stored: Stored, range: Range<usize>, out: &mut ColumnData) -> Result<()> {
        self.entry(range.start)?; // checks that the basket has offsets
        let size = stored.size() as u64;
        let offsets = &self.offsets[range.start..=range.end];
        let mut last = *out.offsets.last().unwrap_or(&0);
        out.offsets.reserve(range.len());
        for w in offsets.windows(2) {
            let bytes = u64::from(w[1] - w[0]);
            if bytes % size != 0 {
                return Err(self.bad(format!(
                    "an entry has {bytes} bytes, not a multiple of {size}"
                )));
            }
            last += bytes / size;
            out.offsets.push(last);
        }
        let (a, b) = (offsets[0] as usize, offsets[range.len()] as usize);
        self.push(&mut out.values, stored, &self.data[a..b])
    }

    /// A `std::vector<T>` per entry.
    fn vectors(&self, stored: Stored, range: Range<usize>, out: &mut ColumnData) -> Result<()> {
        for e in range {
            let mut c = Cursor::new(self.entry(e)?, 0, "");
            let n = vector_header(&mut c, e).map_err(|d| self.bad(d))?;
            let values = take_values(&mut c, n, stored.size(), e).map_err(|d| self.bad(d))?;
            self.push(&mut out.values, stored, values)?;
            let last = *out.offsets.last().unwrap_or(&0);
            out.offsets.push(last + n as u64);
        }
        Ok(())
    }

    /// A `std::vector<std::vector<T>>` per entry.
    fn vectors_of_vectors(
        &self,
        stored: Stored,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        for e in range {
            let mut c = Cursor::new(self.entry(e)?, 0, "");
            let outer = vector_header(&mut c, e).map_err(|d| self.bad(d))?;
            if outer > c.remaining() / 4 {
                return Err(self.bad(format!("entry {e}: {outer} inner vectors cannot fit")));
            }
            for _ in 0..outer {
                let n = c
                    .count("inner vector size")
                    .map_err(|_| self.bad(format!("entry {e}: truncated inner vector")))?;
                let values = take_values(&mut c, n, stored.size(), e).map_err(|d| self.bad(d))?;
                self.push(&mut out.values, stored, values)?;
                out.close(0);
            }
            out.end_entry();
        }
        Ok(())
    }

    /// A `char*` member per entry: a 32-bit length, then the characters.
    fn char_stars(&self, range: Range<usize>, out: &mut ColumnData) -> Result<()> {
        for e in range {
            let bytes = self.entry(e)?;
            let mut c = Cursor::new(bytes, 0, "");
            let chars = c.char_star().ok().filter(|_| c.remaining() == 0);
            let chars = chars.ok_or_else(|| {
                self.bad(format!(
                    "entry {e}: {} bytes are not a 32-bit length and as many characters",
                    bytes.len()
                ))
            })?;
            self.push(&mut out.values, BYTES, chars)?;
            out.end_entry();
        }
        Ok(())
    }

    /// A TString-encoded string per entry, after an object header with `header`.
    fn strings(&self, header: bool, range: Range<usize>, out: &mut ColumnData) -> Result<()> {
        let Values::U8(values) = &mut out.values else {
            return Err(self.bad("internal: string column without byte values"));
        };
        for e in range {
            let mut bytes = self.entry(e)?;
            if header {
                let mut c = Cursor::new(bytes, 0, "");
                object_header(&mut c, e).map_err(|d| self.bad(d))?;
                bytes = &bytes[6..];
            }
            // An empty entry is an empty string (a char* leaf writes nothing for it).
            if !bytes.is_empty() {
                let (s, _) = tstring(bytes).ok_or_else(|| {
                    self.bad(format!(
                        "entry {e}: a string runs past its {} bytes",
                        bytes.len()
                    ))
                })?;
                values.extend_from_slice(s);
            }
            out.offsets.push(values.len() as u64);
        }
        Ok(())
    }

    /// A `std::vector` of fixed-size objects per entry: the member at `offset` of each.
    fn object_vectors(
        &self,
        stored: Stored,
        offset: usize,
        stride: usize,
        member_wise: Option<usize>,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let prefix = self.branch.entry_prefix.as_deref().unwrap_or(&[]);
        let size = stored.size();
        let mut walker = member_wise
            .zip(self.branch.plan.as_deref())
            .map(|(target, plan)| Walker::new(plan, target));
        for e in range {
            let bytes = self.entry(e)?;
            let mut c = Cursor::new(bytes, 0, "");
            let n = vector_header(&mut c, e).map_err(|d| self.bad(d))?;
            // A version with bit 14 (kStreamedMemberWise): each member of all objects in turn,
            // which the interpreter reads.
            if bytes[4] & 0x40 != 0 {
                let walker = walker.as_mut().ok_or_else(|| {
                    self.bad(format!(
                        "entry {e}: the vector was written member-wise, and the interpreter \
                         cannot plan its class"
                    ))
                })?;
                walker
                    .entry(bytes, out, &[])
                    .map_err(|why| self.bad(format!("entry {e}: {why}")))?;
                out.end_entry();
                continue;
            }
            let objects = &bytes[10..];
            if n.checked_mul(stride) != Some(objects.len()) {
                return Err(self.bad(format!(
                    "entry {e}: {n} objects of {stride} bytes in {} bytes",
                    objects.len()
                )));
            }
            for (k, object) in objects.chunks_exact(stride).enumerate() {
                if !object.starts_with(prefix) {
                    return Err(self.bad(format!(
                        "entry {e}: object {k} is not of the planned class and size"
                    )));
                }
                self.push(&mut out.values, stored, &object[offset..offset + size])?;
            }
            out.end_entry();
        }
        Ok(())
    }

    /// Objects of varying size walked through the column's plan, keeping its `target`.
    fn interpreted(
        &self,
        target: usize,
        lengths: Option<&ObjectLengths>,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let Some(plan) = self.branch.plan.as_deref() else {
            return Err(self.bad("internal: an interpreted column without its plan"));
        };
        // The arrays of a split collection's objects: each entry's lengths fill counter slot 0
        // before the walk.
        let mut walker = Walker::new(plan, target);
        let mut given = Vec::new();
        for (j, e) in range.enumerate() {
            given.clear();
            if let Some((values, bounds)) = lengths {
                for &n in &values[bounds[j] as usize..bounds[j + 1] as usize] {
                    given.push(u64::try_from(n).map_err(|_| {
                        self.bad(format!("entry {e}: an object's array length is {n}"))
                    })?);
                }
            }
            walker
                .entry(self.entry(e)?, out, &given)
                .map_err(|why| self.bad(format!("entry {e}: {why}")))?;
            if self.column.kind.is_variable() {
                out.end_entry();
            }
        }
        Ok(())
    }

    /// A `T* x //[n]` member per entry: a byte (1 if there are values), then the values.
    fn flagged_arrays(
        &self,
        stored: Stored,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let size = stored.size();
        for e in range {
            let bytes = self.entry(e)?;
            let values = match bytes.split_first() {
                Some((1, values)) if values.len() % size == 0 => values,
                Some((0, [])) => &[],
                _ => {
                    return Err(self.bad(format!(
                        "entry {e}: {} bytes are not a flag and whole values of {size} bytes",
                        bytes.len()
                    )));
                }
            };
            self.push(&mut out.values, stored, values)?;
            let last = *out.offsets.last().unwrap_or(&0);
            out.offsets.push(last + (values.len() / size) as u64);
        }
        Ok(())
    }

    /// A fixed array of `len` values per object of a split collection.
    fn arrays_in_collection(
        &self,
        stored: Stored,
        len: usize,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let width = stored.size() * len;
        for e in range {
            let bytes = self.entry(e)?;
            if bytes.len() % width != 0 {
                return Err(self.bad(format!(
                    "entry {e}: {} bytes are not whole arrays of {width} bytes",
                    bytes.len()
                )));
            }
            for array in bytes.chunks_exact(width) {
                self.push(&mut out.values, stored, array)?;
                out.close(0);
            }
            out.end_entry();
        }
        Ok(())
    }

    /// Leaf `target` of a leaf-list whose rows vary in size.
    fn leaf_rows(&self, target: usize, range: Range<usize>, out: &mut ColumnData) -> Result<()> {
        let Some(parts) = self.branch.row.as_deref() else {
            return Err(self.bad("internal: a row leaf without its row"));
        };
        let stored = parts[target].stored;
        let mut spans = Vec::with_capacity(parts.len());
        for e in range {
            let bytes = self.entry(e)?;
            let end = RowPart::spans(parts, bytes, &mut spans)
                .map_err(|why| self.bad(format!("entry {e}: {why}")))?;
            if end != bytes.len() {
                return Err(self.bad(format!(
                    "entry {e}: the row ends at byte {end} of {}",
                    bytes.len()
                )));
            }
            let (start, end) = spans[target];
            self.push(&mut out.values, stored, &bytes[start..end])?;
            if parts[target].counter.is_some() {
                out.offsets.push(out.values.len() as u64);
            }
        }
        Ok(())
    }

    /// A `T* x //[n]` member of a split collection's objects: per object, a presence byte, then
    /// as many values as its length member says.
    fn pointer_arrays(
        &self,
        stored: Stored,
        (values, bounds): &ObjectLengths,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        for (j, e) in range.enumerate() {
            let mut c = Cursor::new(self.entry(e)?, 0, "");
            let objects = bounds[j] as usize..bounds[j + 1] as usize;
            for (k, &n) in values[objects.clone()].iter().enumerate() {
                let present = c
                    .u8()
                    .map_err(|_| self.bad(format!("entry {e}: object {k}'s array is cut short")))?;
                let n = if present == 0 { 0 } else { n };
                let n = usize::try_from(n)
                    .map_err(|_| self.bad(format!("entry {e}: object {k}'s length is {n}")))?;
                let values = take_values(&mut c, n, stored.size(), e).map_err(|d| self.bad(d))?;
                self.push(&mut out.values, stored, values)?;
                out.close(0);
            }
            if c.remaining() != 0 {
                return Err(self.bad(format!(
                    "entry {e}: {} bytes after the arrays of its {} objects",
                    c.remaining(),
                    objects.len()
                )));
            }
            out.end_entry();
        }
        Ok(())
    }

    /// A list of TString-encoded strings per entry, after `header`.
    fn string_lists(
        &self,
        header: ListHeader,
        range: Range<usize>,
        out: &mut ColumnData,
    ) -> Result<()> {
        for e in range {
            let mut bytes = self.entry(e)?;
            // A vector says how many strings it holds; a collection's strings fill the entry.
            let mut count = None;
            if header == ListHeader::Vector {
                let mut c = Cursor::new(bytes, 0, "");
                count = Some(vector_header(&mut c, e).map_err(|d| self.bad(d))?);
                bytes = &bytes[10..];
            }
            let mut strings = 0usize;
            while count.map_or(!bytes.is_empty(), |n| strings < n) {
                let (s, used) = tstring(bytes).ok_or_else(|| {
                    self.bad(format!("entry {e}: string {strings} runs past the entry"))
                })?;
                self.push(&mut out.values, BYTES, s)?;
                out.close(0);
                bytes = &bytes[used..];
                strings += 1;
            }
            if !bytes.is_empty() {
                return Err(self.bad(format!(
                    "entry {e}: {} bytes after its {strings} strings",
                    bytes.len()
                )));
            }
            out.end_entry();
        }
        Ok(())
    }
}

/// Walks entries through an interpreted plan, keeping one column's values.
struct Walker<'p> {
    plan: &'p Plan,
    target: usize,
    counters: Vec<Vec<u64>>,
    read: Vec<usize>,
}

impl<'p> Walker<'p> {
    fn new(plan: &'p Plan, target: usize) -> Walker<'p> {
        Walker {
            plan,
            target,
            counters: vec![Vec::new(); plan.counters],
            read: vec![0; plan.readers],
        }
    }

    /// Reads one entry's `bytes` into `out`, all of them (the entry's own offset is the
    /// caller's to end); `given`, the entry's lengths of a plan's counter slot 0 that are not in
    /// its bytes ([`Plan::lengths`](Plan::lengths)).
    fn entry(&mut self, bytes: &[u8], out: &mut ColumnData, given: &[u64]) -> Result<(), String> {
        let mut c = Cursor::new(bytes, 0, "");
        self.counters.iter_mut().for_each(Vec::clear);
        self.read.fill(0);
        if let Some(slot) = self.counters.first_mut() {
            slot.extend_from_slice(given);
        }
        let strings = matches!(self.plan.targets[self.target].kind, ColumnKind::Strings(_));
        let mut walk = Walk {
            target: self.target,
            out,
            strings,
            counters: &mut self.counters,
            read: &mut self.read,
        };
        walk.node(&self.plan.root, &mut c)?;
        if c.remaining() != 0 {
            return Err(format!("{} bytes after the planned object", c.remaining()));
        }
        Ok(())
    }
}

/// The first TString-encoded string of `bytes` (a length byte, or 255 and a big-endian 32-bit
/// length, then the characters) and the bytes it takes; `None` if it runs past `bytes`.
pub(super) fn tstring(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let (len, skip): (usize, usize) = match *bytes.first()? {
        255 => {
            let l = bytes.get(1..5)?;
            (u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize, 5)
        }
        n => (usize::from(n), 1),
    };
    let end = skip.checked_add(len)?;
    Some((bytes.get(skip..end)?, end))
}

/// Reads the 10-byte header of a streamed `std::vector`: byte count, version, size.
fn vector_header(c: &mut Cursor<'_>, e: usize) -> Result<usize, String> {
    object_header(c, e)?;
    c.count("vector size")
        .map_err(|_| format!("entry {e}: truncated vector header"))
}

/// The byte count (with its flag) and version that start a streamed STL object.
fn object_header(c: &mut Cursor<'_>, e: usize) -> Result<(), String> {
    let bcnt = c
        .u32()
        .map_err(|_| format!("entry {e}: truncated object header"))?;
    if bcnt & 0x4000_0000 == 0 {
        return Err(format!("entry {e}: an object without a byte count"));
    }
    c.skip(2)
        .map_err(|_| format!("entry {e}: truncated object header"))
}

fn take_values<'a>(
    c: &mut Cursor<'a>,
    n: usize,
    size: usize,
    e: usize,
) -> Result<&'a [u8], String> {
    n.checked_mul(size)
        .and_then(|len| c.take(len).ok())
        .ok_or_else(|| format!("entry {e}: {n} values do not fit in the entry"))
}

/// Integer values as `i64` (an unsigned 64-bit value past `i64::MAX` as -1, which no length
/// is); `None` for floats.
pub(super) fn integers(values: &Values) -> Option<Vec<i64>> {
    Some(match values {
        Values::I8(v) => v.iter().map(|&x| x.into()).collect(),
        Values::U8(v) => v.iter().map(|&x| x.into()).collect(),
        Values::I16(v) => v.iter().map(|&x| x.into()).collect(),
        Values::U16(v) => v.iter().map(|&x| x.into()).collect(),
        Values::I32(v) => v.iter().map(|&x| x.into()).collect(),
        Values::U32(v) => v.iter().map(|&x| x.into()).collect(),
        Values::I64(v) => v.clone(),
        Values::U64(v) => v.iter().map(|&x| i64::try_from(x).unwrap_or(-1)).collect(),
        _ => return None,
    })
}
