//! TBranch, TLeaf and TBasket records as a TTree record streams them: ROOT's object streaming,
//! decoded just far enough to find every branch's type, layout and baskets (TBranch 10-13,
//! TBranchElement 8-10, TLeaf 2; other TBranch and TBranchElement versions, such as ROOT 4's
//! and g4tools' TBranch 8 and TBranchElement 1, member by member from the file's streamer infos,
//! see `members`). Every object carries a byte count, so fields this reader does not need are
//! skipped by jumping to the object's end, and an object of an unknown class inside an array is
//! skipped the same way. `tree` maps these records onto columns.

use std::sync::Arc;

use super::column::{BasketRef, EmbeddedBasket};
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::objects::{Parser, Tagged};
use crate::old_versions::{Members, Step};

/// A branch as streamed.
#[derive(Debug, Default)]
pub(crate) struct RawBranch {
    pub(crate) class: String,
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) compress: i32,
    /// `fEntryOffsetLen`: whether baskets written to keys end with entry offsets (non-zero).
    pub(crate) entry_offset_len: i32,
    pub(crate) write_basket: usize,
    pub(crate) entries: i64,
    pub(crate) tot_bytes: i64,
    pub(crate) zip_bytes: i64,
    pub(crate) branches: Vec<RawBranch>,
    pub(crate) leaves: Vec<RawLeaf>,
    pub(crate) embedded: Vec<(usize, Arc<EmbeddedBasket>)>,
    pub(crate) basket_bytes: Vec<i32>,
    pub(crate) basket_entry: Vec<i64>,
    pub(crate) basket_seek: Vec<i64>,
    pub(crate) file_name: String,
    pub(crate) element: Option<Element>,
}

impl RawBranch {
    /// The branch's baskets: those with keys of their own, then those embedded in the record,
    /// each with the entries it holds. When they do not tile the entries in order (a later
    /// basket that starts before an earlier one ends), the entries are assigned as ROOT's
    /// `TBranch::GetEntry` finds them ([`root_lookup`]).
    pub(crate) fn baskets(&self, what: &str) -> Result<Arc<[BasketRef]>> {
        let bad =
            |detail: String| Error::corrupt(what, 0, format!("branch {:?}: {detail}", self.name));
        let entries = u64::try_from(self.entries)
            .map_err(|_| bad(format!("negative entry count {}", self.entries)))?;
        let n = self.write_basket;
        if n > self.basket_seek.len() || n > self.basket_entry.len() || n > self.basket_bytes.len()
        {
            return Err(bad(format!(
                "{n} baskets written but only {} recorded",
                self.basket_seek.len()
            )));
        }
        // A basket below fWriteBasket without a key (seek 0) was never written out: it and the
        // ones after it are in the record (a tree saved, by AutoSave or a crash-recovery
        // write, while its baskets were still in memory).
        let n = self.basket_seek[..n]
            .iter()
            .take_while(|&&seek| seek != 0)
            .count();
        let mut out = Vec::with_capacity(n + self.embedded.len());
        for i in 0..n {
            let first = u64::try_from(self.basket_entry[i])
                .map_err(|_| bad(format!("basket {i} starts at a negative entry")))?;
            let seek = u64::try_from(self.basket_seek[i])
                .map_err(|_| bad(format!("basket {i} has a negative file offset")))?;
            let bytes = u32::try_from(self.basket_bytes[i])
                .map_err(|_| bad(format!("basket {i} has a negative size")))?;
            out.push(BasketRef {
                first_entry: first,
                entries: 0,
                skip: 0,
                seek,
                bytes,
                embedded: None,
            });
        }
        // Baskets in the record at positions of baskets with keys were also written to keys of
        // their own (a tree saved while a basket was still in memory): the key is the copy read,
        // so that no entry is counted twice.
        for (i, basket) in self.embedded.iter().filter(|(i, _)| *i >= n) {
            let first = self
                .basket_entry
                .get(*i)
                .map_or(0, |&e| u64::try_from(e).unwrap_or(0));
            out.push(BasketRef {
                first_entry: first,
                entries: basket.entries,
                skip: 0,
                seek: 0,
                bytes: 0,
                embedded: Some(basket.clone()),
            });
        }
        // A basket with a key ends where the next one starts, the last one with the branch.
        for i in 0..out.len() {
            if out[i].embedded.is_none() {
                let end = out.get(i + 1).map_or(entries, |b| b.first_entry);
                out[i].entries = end.saturating_sub(out[i].first_entry);
            }
        }
        match tiling(&out, entries) {
            Ok(()) => Ok(out.into()),
            // ROOT reads such a table all the same (a basket's key gives its entry count when
            // it is read, and is checked then); the tiling's own error names the first misfit
            // when ROOT's lookup cannot assign every entry either.
            Err(misfit) => root_lookup(&out, entries)
                .map(Into::into)
                .map_err(|why| bad(format!("{misfit}; read as ROOT reads it: {why}"))),
        }
    }
}

/// Whether `baskets` tile entries `0..entries` in order, or where they do not.
fn tiling(baskets: &[BasketRef], entries: u64) -> std::result::Result<(), String> {
    let mut next = 0u64;
    for (i, b) in baskets.iter().enumerate() {
        if b.first_entry != next {
            return Err(format!(
                "basket {i} starts at entry {}, expected {next}",
                b.first_entry
            ));
        }
        next = next
            .checked_add(b.entries)
            .ok_or_else(|| format!("basket {i} overflows the entry count"))?;
    }
    if next != entries {
        return Err(format!("baskets hold {next} entries, the branch {entries}"));
    }
    Ok(())
}

/// The entries `0..entries` as ROOT's `TBranch::GetEntry` reads them in order from baskets
/// whose first entries (`fBasketEntry`) do not tile them: entry `e` comes from the basket
/// `TMath::BinarySearch` finds (the first whose first entry is `e`, else the last one before
/// `e`, as `std::lower_bound` probes the table), at position `e - first` in it; the entries after
/// `e` come from the same basket up to the next basket's first entry. Each run of entries
/// becomes a reference to its basket that skips the basket's entries before the run. A
/// reference to an embedded basket is checked against its entry count here, one to a basket
/// with a key when the key is read.
fn root_lookup(baskets: &[BasketRef], entries: u64) -> std::result::Result<Vec<BasketRef>, String> {
    let starts: Vec<u64> = baskets.iter().map(|b| b.first_entry).collect();
    // Runs are at most two per basket in any table ROOT reads sensibly; a table that makes
    // more is refused rather than expanded entry by entry.
    let limit = 2 * baskets.len() + 2;
    let mut out: Vec<BasketRef> = Vec::new();
    let mut e = 0u64;
    while e < entries {
        let k = binary_search(&starts, e)
            .ok_or_else(|| format!("entry {e} comes before the first basket's first entry"))?;
        let skip = e - starts[k];
        let next = starts.get(k + 1).copied().unwrap_or(entries).min(entries);
        // An entry past the next basket's start is read alone, and the lookup starts again.
        let run = if next > e { next - e } else { 1 };
        let b = &baskets[k];
        if let Some(embedded) = &b.embedded
            && skip + run > embedded.entries
        {
            return Err(format!(
                "entries {e}..{} come from positions {skip}..{} of basket {k}, which holds {}",
                e + run,
                skip + run,
                embedded.entries
            ));
        }
        match out.last_mut() {
            // The same basket, continuing where the last run ended.
            Some(last)
                if last.same_basket(b)
                    && last.first_entry + last.entries == e
                    && last.skip + last.entries == skip =>
            {
                last.entries += run;
            }
            _ => {
                if out.len() == limit {
                    return Err(format!(
                        "the baskets' first entries split the entries into more than {limit} runs"
                    ));
                }
                out.push(BasketRef {
                    first_entry: e,
                    entries: run,
                    skip,
                    ..b.clone()
                });
            }
        }
        e += run;
    }
    Ok(out)
}

/// `TMath::BinarySearch(n, array, value)`: the index of the first element equal to `value` if
/// `std::lower_bound` finds one, else of the element before the one it finds; `None` when
/// `value` is below every element it probes. Probes exactly as `std::lower_bound` does, so an
/// unsorted table gives ROOT's answer.
fn binary_search(array: &[u64], value: u64) -> Option<usize> {
    let (mut first, mut count) = (0usize, array.len());
    while count > 0 {
        let step = count / 2;
        if array[first + step] < value {
            first += step + 1;
            count -= step + 1;
        } else {
            count = step;
        }
    }
    if array.get(first) == Some(&value) {
        Some(first)
    } else {
        first.checked_sub(1)
    }
}

#[derive(Debug)]
pub(crate) struct Element {
    pub(crate) class_name: String,
    pub(crate) class_version: i32,
    /// The member's index in the class's streamer info.
    pub(crate) id: i32,
    pub(crate) ftype: i32,
    pub(crate) streamer_type: i32,
}

/// A leaf as streamed.
#[derive(Debug)]
pub(crate) struct RawLeaf {
    pub(crate) class: String,
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) len: i32,
    pub(crate) is_unsigned: bool,
    pub(crate) has_count: bool,
}

enum Object {
    Branch(Box<RawBranch>),
    Leaf(RawLeaf),
    Basket(Arc<EmbeddedBasket>),
    Other,
}

enum Any {
    Null,
    Reference,
    Object(Object),
}

impl Parser<'_> {
    /// A TObjArray streamed as a member.
    fn obj_array(&mut self) -> Result<Vec<Option<Object>>> {
        let (end, n, _) = self.collection_header(false)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(match self.any()? {
                Any::Object(o) => Some(o),
                Any::Null | Any::Reference => None,
            });
        }
        self.end(end)?;
        Ok(out)
    }

    /// Skips whatever `TBufferFile::ReadObjectAny` finds (a pointer member).
    pub(crate) fn skip_any(&mut self) -> Result<()> {
        self.any().map(|_| ())
    }

    /// The leaves of a branch's `fLeaves`.
    fn leaf_array(&mut self) -> Result<Vec<RawLeaf>> {
        Ok(self
            .obj_array()?
            .into_iter()
            .filter_map(|o| match o {
                Some(Object::Leaf(l)) => Some(l),
                _ => None,
            })
            .collect())
    }

    /// The baskets a branch's `fBaskets` holds (those still in the record), by position.
    fn embedded_baskets(&mut self) -> Result<Vec<(usize, Arc<EmbeddedBasket>)>> {
        Ok(self
            .obj_array()?
            .into_iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                Some(Object::Basket(basket)) => Some((i, basket)),
                _ => None,
            })
            .collect())
    }

    pub(crate) fn branch_array(&mut self) -> Result<Vec<RawBranch>> {
        Ok(self
            .obj_array()?
            .into_iter()
            .filter_map(|o| match o {
                Some(Object::Branch(b)) => Some(*b),
                _ => None,
            })
            .collect())
    }

    /// `TBufferFile::ReadObjectAny`: null, a reference, or a (new or known) class and an object.
    fn any(&mut self) -> Result<Any> {
        let (class, end) = match self.tagged()? {
            Tagged::Null => return Ok(Any::Null),
            Tagged::Reference => return Ok(Any::Reference),
            Tagged::Object { class, end } => (class, end),
        };
        let object = match class.as_str() {
            "TBranch" | "TBranchElement" | "TBranchObject" | "TBranchSTL" | "TBranchClones"
            | "TBranchRef" => Object::Branch(Box::new(self.branch(&class)?)),
            c if c.starts_with("TLeaf") => Object::Leaf(self.leaf(&class)?),
            "TBasket" => match self.basket()? {
                Some(b) => Object::Basket(Arc::new(b)),
                None => Object::Other,
            },
            _ if end.is_some() => Object::Other,
            other => {
                return Err(self.c.error(format!(
                    "cannot skip an object of class {other} without a byte count"
                )));
            }
        };
        self.end(end)?;
        Ok(Any::Object(object))
    }

    fn branch(&mut self, class: &str) -> Result<RawBranch> {
        let (end, version) = self.header()?;
        let mut b = if class == "TBranch" {
            self.branch_fields(version)?
        } else {
            let (base_end, base_version) = self.header()?;
            let mut b = self.branch_fields(base_version)?;
            self.end(base_end)?;
            if class == "TBranchElement" && !(8..=10).contains(&version) {
                b.element = Some(self.old_element(version)?);
                b.class = class.to_owned();
                self.end(end)?;
                return Ok(b);
            }
            let class_name = self.c.string()?;
            if class == "TBranchElement" {
                let _parent = self.c.string()?;
                let _clones = self.c.string()?;
                let _checksum = self.c.u32()?;
                let class_version = if version >= 10 {
                    i32::from(self.c.i16()?)
                } else {
                    self.c.i32()?
                };
                let id = self.c.i32()?;
                let ftype = self.c.i32()?;
                let streamer_type = self.c.i32()?;
                b.element = Some(Element {
                    class_name,
                    class_version,
                    id,
                    ftype,
                    streamer_type,
                });
            } else {
                b.element = Some(Element {
                    class_name,
                    class_version: -1,
                    id: -1,
                    ftype: -1,
                    streamer_type: -2,
                });
            }
            b
        };
        b.class = class.to_owned();
        self.end(end)?;
        Ok(b)
    }

    /// The members of a `TBranchElement` of a version without a fixed layout here, after its
    /// `TBranch` base, as the file's streamer info lists them (version 1: the class name and
    /// version, `fID`, `fType`, `fStreamerType`).
    fn old_element(&mut self, version: i16) -> Result<Element> {
        let info = self
            .streamers
            .and_then(|s| s.info("TBranchElement", i32::from(version)))
            .ok_or_else(|| {
                self.version_error(
                    "TBranchElement",
                    version,
                    "8-10, or as the file's streamer info describes it",
                )
            })?;
        let after_base = info.elements.get(1..).unwrap_or_default();
        let m = self.walk("TBranchElement", after_base, |_, _, _| Ok(Step::Walk))?;
        let number = |name: &str| m.number(name).map_or(-1, |v| v as i32);
        Ok(Element {
            class_name: m.string("fClassName").unwrap_or_default().to_owned(),
            class_version: number("fClassVersion"),
            id: number("fID"),
            ftype: number("fType"),
            streamer_type: number("fStreamerType"),
        })
    }

    /// The members of a `TBranch` of a version without a fixed layout here (ROOT 4's and
    /// g4tools' 8), as the file's streamer info lists them: `fEntries` and the byte totals may
    /// be doubles, `fBasketEntry` 32-bit, and `fBasketSeek` 32- or 64-bit as its presence byte
    /// (1 or 2) says, as ROOT's own `TBranch::Streamer` reads it.
    fn old_branch_fields(&mut self, version: i16) -> Result<RawBranch> {
        let info = self
            .streamers
            .and_then(|s| s.info("TBranch", i32::from(version)))
            .ok_or_else(|| {
                self.version_error(
                    "TBranch",
                    version,
                    "10-13, or as the file's streamer info describes it",
                )
            })?;
        let mut b = RawBranch::default();
        let baskets = |m: &Members| {
            m.count("fMaxBaskets").ok_or_else(|| {
                "fMaxBaskets comes after the basket tables, or is not a count".to_owned()
            })
        };
        let m = self.walk("TBranch", &info.elements, |p, el, m| {
            let limit = |p: &Parser<'_>, n: usize, size: usize| {
                if n > p.c.remaining() / size + 1 {
                    Err(p
                        .c
                        .error(format!("fMaxBaskets {n} cannot fit in the record")))
                } else {
                    Ok(n)
                }
            };
            match el.name.as_str() {
                "fBranches" => b.branches = p.branch_array()?,
                "fLeaves" => b.leaves = p.leaf_array()?,
                "fBaskets" => b.embedded = p.embedded_baskets()?,
                "fBasketBytes" => {
                    let n = limit(p, baskets(m).map_err(|d| p.c.error(d))?, 4)?;
                    b.basket_bytes = p.array(n, |c| c.i32())?;
                }
                "fBasketEntry" => {
                    let n = limit(p, baskets(m).map_err(|d| p.c.error(d))?, 4)?;
                    b.basket_entry = if el.kind == 56 {
                        p.array(n, |c| c.i64())?
                    } else {
                        p.array(n, |c| c.i32().map(i64::from))?
                    };
                }
                "fBasketSeek" => {
                    let n = limit(p, baskets(m).map_err(|d| p.c.error(d))?, 4)?;
                    b.basket_seek = match p.c.u8()? {
                        0 => Vec::new(),
                        2 => (0..n).map(|_| p.c.i64()).collect::<Result<_>>()?,
                        _ => (0..n)
                            .map(|_| p.c.i32().map(i64::from))
                            .collect::<Result<_>>()?,
                    };
                }
                _ => return Ok(Step::Walk),
            }
            Ok(Step::Read)
        })?;
        let bad = |field: &str| {
            self.c.error(format!(
                "{field} of a TBranch {version} is missing or not a count"
            ))
        };
        b.name = m.string("fName").unwrap_or_default().to_owned();
        b.title = m.string("fTitle").unwrap_or_default().to_owned();
        b.compress = m.number("fCompress").unwrap_or(1.0) as i32;
        b.entry_offset_len = m.number("fEntryOffsetLen").unwrap_or(0.0) as i32;
        b.write_basket = m.count("fWriteBasket").ok_or_else(|| bad("fWriteBasket"))?;
        let whole = |field: &str| {
            m.count(field)
                .and_then(|n| i64::try_from(n).ok())
                .ok_or_else(|| bad(field))
        };
        b.entries = whole("fEntries")?;
        b.tot_bytes = whole("fTotBytes")?;
        b.zip_bytes = whole("fZipBytes")?;
        b.file_name = m.string("fFileName").unwrap_or_default().to_owned();
        Ok(b)
    }

    fn branch_fields(&mut self, version: i16) -> Result<RawBranch> {
        if !(10..=13).contains(&version) {
            return self.old_branch_fields(version);
        }
        let mut b = RawBranch::default();
        (b.name, b.title) = self.named()?;
        self.skip_object()?; // TAttFill
        b.compress = self.c.i32()?;
        let _basket_size = self.c.i32()?;
        b.entry_offset_len = self.c.i32()?;
        b.write_basket = self.c.count("fWriteBasket")?;
        let _entry_number = self.c.i64()?;
        if version >= 13 {
            self.skip_object()?; // fIOFeatures
        }
        let _offset = self.c.i32()?;
        let max_baskets = self.c.count("fMaxBaskets")?;
        let _split_level = self.c.i32()?;
        b.entries = self.c.i64()?;
        if version >= 11 {
            let _first_entry = self.c.i64()?;
        }
        b.tot_bytes = self.c.i64()?;
        b.zip_bytes = self.c.i64()?;
        b.branches = self.branch_array()?;
        b.leaves = self.leaf_array()?;
        b.embedded = self.embedded_baskets()?;
        if max_baskets > self.c.remaining() / 16 + 1 {
            return Err(self.c.error(format!(
                "fMaxBaskets {max_baskets} cannot fit in the record"
            )));
        }
        b.basket_bytes = self.array(max_baskets, |c| c.i32())?;
        b.basket_entry = self.array(max_baskets, |c| c.i64())?;
        b.basket_seek = self.array(max_baskets, |c| c.i64())?;
        b.file_name = self.c.string()?;
        Ok(b)
    }

    /// A basic array member: a presence byte, then `n` values if present.
    fn array<T>(
        &mut self,
        n: usize,
        read: impl Fn(&mut Cursor<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        if self.c.u8()? == 0 {
            return Ok(Vec::new());
        }
        (0..n).map(|_| read(&mut self.c)).collect()
    }

    fn leaf(&mut self, class: &str) -> Result<RawLeaf> {
        let (end, _) = self.header()?;
        let (base_end, version) = self.header()?;
        if version != 2 {
            return Err(self.version_error("TLeaf", version, "2"));
        }
        let (name, title) = self.named()?;
        let len = self.c.i32()?;
        let _len_type = self.c.i32()?;
        let _offset = self.c.i32()?;
        let _is_range = self.c.u8()?;
        let is_unsigned = self.c.u8()? != 0;
        let has_count = !matches!(self.any()?, Any::Null);
        self.end(base_end)?;
        self.end(end)?;
        Ok(RawLeaf {
            class: class.to_owned(),
            name,
            title,
            len,
            is_unsigned,
            has_count,
        })
    }

    /// A TBasket in a branch's basket array: its key header and, when its data was never written
    /// to a key of its own, the data.
    fn basket(&mut self) -> Result<Option<EmbeddedBasket>> {
        let start = self.c.pos();
        let nbytes = self.c.i32()?;
        let _key_version = self.c.i16()?;
        let _obj_len = self.c.i32()?;
        let _datime = self.c.u32()?;
        let key_len = usize::try_from(self.c.i16()?)
            .map_err(|_| self.c.error("negative basket key length"))?;
        let _cycle = self.c.i16()?;
        if key_len < 38 {
            return Err(self
                .c
                .error(format!("a basket key of {key_len} bytes is too short")));
        }
        self.c.seek(start + key_len - 19)?;
        let fields = BasketFields::read(&mut self.c)?;
        if usize::try_from(nbytes).is_ok_and(|n| n > key_len) {
            // Written to its own key: found through fBasketSeek.
            return Ok(None);
        }
        let entries = fields.entries;
        let border = fields.border(key_len).map_err(|d| self.c.error(d))?;
        // TBasket::Streamer: flag % 10 == 2 means the basket has no entry offsets, and a basket
        // of no entries streams no offsets array at all.
        let offsets = if fields.flag % 10 != 2 && entries > 0 {
            let _count = self.c.i32()?;
            if entries > self.c.remaining() / 4 {
                return Err(self
                    .c
                    .error(format!("{entries} entry offsets cannot fit in the record")));
            }
            let mut offsets = Vec::with_capacity(entries + 1);
            for _ in 0..entries {
                let o = self.c.i32()?;
                let o = usize::try_from(o)
                    .ok()
                    .and_then(|o| o.checked_sub(key_len))
                    .filter(|&o| o <= border);
                offsets.push(
                    o.ok_or_else(|| self.c.error("an entry offset points outside the basket"))?
                        as u32,
                );
            }
            offsets.push(border as u32);
            if offsets.windows(2).any(|w| w[0] > w[1]) {
                return Err(self.c.error("entry offsets are not increasing"));
            }
            Some(offsets)
        } else {
            None
        };
        self.c.skip(key_len)?; // a second copy of the key
        let data = self.c.take(border)?.to_vec();
        Ok(Some(EmbeddedBasket {
            data,
            offsets,
            entries: entries as u64,
        }))
    }
}

/// The fields at the end of every basket's key header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BasketFields {
    pub(crate) entries: usize,
    pub(crate) last: i32,
    /// `TBasket`'s streamed flag: for baskets inside the tree record, `flag % 10 == 2` means no
    /// entry offsets follow.
    pub(crate) flag: u8,
}

impl BasketFields {
    /// Reads `fVersion, fBufferSize, fNevBufSize, fNevBuf, fLast` and the flag byte.
    pub(crate) fn read(c: &mut Cursor<'_>) -> Result<BasketFields> {
        let _version = c.u16()?;
        let _buffer_size = c.i32()?;
        let _entry_size = c.i32()?;
        let entries = c.count("fNevBuf")?;
        let last = c.i32()?;
        let flag = c.u8()?;
        Ok(BasketFields {
            entries,
            last,
            flag,
        })
    }

    /// Bytes of entry data (before the entry offsets).
    pub(crate) fn border(&self, key_len: usize) -> Result<usize, String> {
        usize::try_from(self.last)
            .ok()
            .and_then(|l| l.checked_sub(key_len))
            .ok_or_else(|| format!("fLast {} is inside the {key_len}-byte key", self.last))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{binary_search, root_lookup, tiling};
    use crate::ttree::column::{BasketRef, EmbeddedBasket};

    /// Baskets in the record (their entry counts known) with these first entries and counts.
    fn embedded(table: &[(u64, u64)]) -> Vec<BasketRef> {
        table
            .iter()
            .map(|&(first_entry, entries)| BasketRef {
                first_entry,
                entries,
                skip: 0,
                seek: 0,
                bytes: 0,
                embedded: Some(Arc::new(EmbeddedBasket {
                    data: Vec::new(),
                    offsets: None,
                    entries,
                })),
            })
            .collect()
    }

    /// (first entry, entries, skip) of each run.
    fn runs(baskets: &[BasketRef]) -> Vec<(u64, u64, u64)> {
        baskets
            .iter()
            .map(|b| (b.first_entry, b.entries, b.skip))
            .collect()
    }

    #[test]
    fn binary_search_probes_as_std_lower_bound() {
        let sorted = [0, 10, 20, 30];
        assert_eq!(binary_search(&sorted, 0), Some(0));
        assert_eq!(binary_search(&sorted, 9), Some(0));
        assert_eq!(binary_search(&sorted, 10), Some(1));
        assert_eq!(binary_search(&sorted, 35), Some(3));
        assert_eq!(binary_search(&[5, 10], 4), None);
        // Equal first entries: the first of them.
        assert_eq!(binary_search(&[0, 10, 10, 20], 10), Some(1));
        // Unsorted tables: wherever lower_bound's probes lead, as in ROOT.
        assert_eq!(binary_search(&[0, 10, 0, 30, 40], 10), Some(2));
        assert_eq!(binary_search(&[0, 20, 0], 21), Some(2));
    }

    #[test]
    fn overlapping_baskets_are_read_as_root_reads_them() {
        // Four baskets of 10 entries starting at 0, 5, 15, 25, 35 entries: basket 0's last five
        // entries are never read.
        let baskets = embedded(&[(0, 10), (5, 10), (15, 10), (25, 10)]);
        assert!(tiling(&baskets, 35).is_err());
        let read = root_lookup(&baskets, 35).expect("lookup");
        assert_eq!(
            runs(&read),
            [(0, 5, 0), (5, 10, 0), (15, 10, 0), (25, 10, 0)]
        );
    }

    #[test]
    fn restarting_baskets_are_read_as_root_reads_them() {
        // A third basket that starts again at entry 0: entry 20 comes from basket 1 (the first
        // whose first entry equals it), then basket 2 from position 21 on.
        let baskets = embedded(&[(0, 20), (20, 10), (0, 30)]);
        let read = root_lookup(&baskets, 30).expect("lookup");
        assert_eq!(runs(&read), [(0, 20, 0), (20, 1, 0), (21, 9, 21)]);
        assert!(Arc::ptr_eq(
            read[2].embedded.as_ref().expect("embedded"),
            baskets[2].embedded.as_ref().expect("embedded")
        ));
        // The same table with a third basket too short for those positions is refused, naming
        // them, where ROOT would read past the basket.
        let short = embedded(&[(0, 20), (20, 10), (0, 10)]);
        let why = root_lookup(&short, 30).expect_err("refused");
        assert!(why.contains("positions 21..30 of basket 2"), "{why}");
    }
}
