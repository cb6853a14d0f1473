//! RNTuples (ROOT's successor to TTree, binary format 1.0 of ROOT 6.34 and later), read from the
//! specification (`tree/ntuple/doc/BinaryFormatSpecification.md` in ROOT's repository): the
//! anchor (a `ROOT::RNTuple` key), the header, footer and page-list envelopes, and the columns'
//! pages, into the same [`Column`](crate::Column)s and [`ColumnData`](crate::ColumnData) as a
//! TTree's branches.
//!
//! - `wire`: the envelopes' serialization (frames, locators);
//! - `meta`: header, footer and page lists;
//! - `element`: column types and their on-disk encodings;
//! - `plan`: fields into columns;
//! - `read`: pages into column data.

mod cache;
pub(crate) mod element;
pub(crate) mod field;
mod field_reader;
mod meta;
mod plan;
mod wire;

use std::sync::Arc;

pub(crate) use element::ColumnType;
pub(crate) use field_reader::FieldReader;

use crate::column::{Tree, TreeKind};
use crate::compression::decompress;
use crate::error::{Error, Result};
use crate::file::{Key, RootFile};
use crate::source::ReadAt;
use cache::IndexCache;
use meta::{AliasColumn, ColumnDesc, Descriptor, FieldDesc};
use wire::Locator;

/// The envelope type ids.
const HEADER: u16 = 0x01;
const FOOTER: u16 = 0x02;
const PAGE_LIST: u16 = 0x03;

/// The anchor: where the header and footer are.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    version: [u16; 4],
    header: (u64, u64, u64),
    footer: (u64, u64, u64),
    max_key_size: u64,
}

/// The anchor's fields after the object header: four 16-bit versions and seven 64-bit fields,
/// then the XXH3-64 of those bytes.
const ANCHOR_FIELDS: usize = 4 * 2 + 7 * 8;
/// An anchor object's header: a byte count and a class version.
const OBJECT_HEADER: usize = 6;

impl Anchor {
    /// Parses an anchor object (`ROOT::RNTuple`, as its key stores it): a byte count and class
    /// version, the big-endian fields, and an XXH3-64 of everything between the header and
    /// itself (later class versions may append fields before it).
    fn parse(object: &[u8], what: &str) -> Result<Anchor> {
        let bad = |detail: String| Error::corrupt(what, 0, detail);
        if object.len() < OBJECT_HEADER + ANCHOR_FIELDS + 8 {
            return Err(bad(format!(
                "{} bytes are too few for an anchor",
                object.len()
            )));
        }
        let (hashed, checksum) = object[OBJECT_HEADER..].split_at(object.len() - OBJECT_HEADER - 8);
        let fields = &hashed[..ANCHOR_FIELDS];
        let stored = u64::from_be_bytes(evtc_codecs::le::array(checksum, 0));
        let computed = xxhash_rust::xxh3::xxh3_64(hashed);
        if stored != computed {
            return Err(bad(format!(
                "anchor checksum mismatch: stored {stored:#018x}, computed {computed:#018x}"
            )));
        }
        let u16_at = |at: usize| u16::from_be_bytes([fields[at], fields[at + 1]]);
        let u64_at = |at: usize| u64::from_be_bytes(evtc_codecs::le::array(fields, at));
        let version = [u16_at(0), u16_at(2), u16_at(4), u16_at(6)];
        if version[0] != 1 {
            return Err(bad(format!(
                "RNTuple format {}.{}.{}.{}: this reader reads epoch 1 (ROOT 6.34 and later)",
                version[0], version[1], version[2], version[3]
            )));
        }
        Ok(Anchor {
            version,
            header: (u64_at(8), u64_at(16), u64_at(24)),
            footer: (u64_at(32), u64_at(40), u64_at(48)),
            max_key_size: u64_at(56),
        })
    }
}

impl<R: ReadAt> RootFile<R> {
    /// Reads the RNTuple behind anchor `key`, named `name`, into a tree of columns.
    pub(crate) fn rntuple(&self, key: &Key, name: String) -> Result<Tree> {
        let what = format!("RNTuple {name:?} anchor (key at byte {})", key.seek_key);
        let object = self.read_object(key, &what)?;
        let anchor = Anchor::parse(&object, &what)?;
        let descriptor = Arc::new(self.descriptor(&anchor, &name)?);
        let planned = plan::plan(&descriptor);
        Ok(Tree {
            name,
            title: String::new(),
            entries: descriptor.entries,
            auto_flush: descriptor.clusters.first().map(|c| c.entries),
            index: None,
            columns: planned.columns,
            unsupported: planned.unsupported,
            kind: TreeKind::RNTuple,
            fields: planned.fields,
        })
    }

    /// The header, footer and page lists of the RNTuple at `anchor`.
    fn descriptor(&self, anchor: &Anchor, name: &str) -> Result<Descriptor> {
        let what = |part: &str| format!("RNTuple {name:?} {part}");
        let (seek, bytes, len) = anchor.header;
        let header_bytes = self.envelope(
            Locator::File {
                offset: seek,
                size: bytes,
            },
            len,
            HEADER,
            anchor.max_key_size,
            &what("header"),
        )?;
        let header_checksum = header_bytes.1;
        let header = meta::header(&header_bytes.0)?;
        let (seek, bytes, len) = anchor.footer;
        let (footer, _) = self.envelope(
            Locator::File {
                offset: seek,
                size: bytes,
            },
            len,
            FOOTER,
            anchor.max_key_size,
            &what("footer"),
        )?;
        let footer = meta::footer(&footer)?;
        if footer.header_checksum != header_checksum {
            return Err(Error::corrupt(
                what("footer"),
                0,
                "its header checksum is not the header's: the two do not belong together",
            ));
        }
        let _ = (
            header.flags,
            footer.flags,
            &header.description,
            &header.writer,
        );
        let mut fields = header.schema.fields;
        let mut columns = header.schema.columns;
        let mut aliases = header.schema.aliases;
        fields.extend(footer.extension.fields);
        columns.extend(footer.extension.columns);
        aliases.extend(footer.extension.aliases);
        self.check_schema(&fields, &columns, &aliases, &what("header"))?;
        let mut clusters = Vec::new();
        for (g, group) in footer.groups.iter().enumerate() {
            let part = what(&format!("page list of cluster group {g}"));
            let (len, locator) = group.page_list;
            let (payload, _) =
                self.envelope(locator, len, PAGE_LIST, anchor.max_key_size, &part)?;
            let list = meta::page_list(&payload, columns.len())?;
            if list.header_checksum != header_checksum {
                return Err(Error::corrupt(
                    part,
                    0,
                    "its header checksum is not the header's",
                ));
            }
            if list.clusters.len() != group.clusters as usize {
                return Err(Error::corrupt(
                    part,
                    0,
                    format!(
                        "{} clusters where the footer says {}",
                        list.clusters.len(),
                        group.clusters
                    ),
                ));
            }
            let first = list.clusters.iter().map(|c| c.first_entry).min();
            let end = list
                .clusters
                .iter()
                .map(|c| c.first_entry + c.entries)
                .max();
            if !list.clusters.is_empty()
                && (first != Some(group.min_entry)
                    || end != group.min_entry.checked_add(group.entry_span))
            {
                return Err(Error::corrupt(
                    part,
                    0,
                    format!(
                        "its clusters span entries {}..{}, the footer says {}..{}",
                        first.unwrap_or(0),
                        end.unwrap_or(0),
                        group.min_entry,
                        group.min_entry.saturating_add(group.entry_span)
                    ),
                ));
            }
            clusters.extend(list.clusters);
        }
        clusters.sort_by_key(|c| c.first_entry);
        let mut entries = 0u64;
        for (k, c) in clusters.iter_mut().enumerate() {
            if c.first_entry != entries {
                return Err(Error::corrupt(
                    what("page lists"),
                    0,
                    format!(
                        "cluster {k} starts at entry {}, where the clusters before it end at {entries}",
                        c.first_entry
                    ),
                ));
            }
            entries = entries
                .checked_add(c.entries)
                .ok_or_else(|| Error::corrupt(what("page lists"), 0, "entry count overflows"))?;
            c.columns.resize(columns.len(), None);
        }
        let compression = clusters
            .first()
            .and_then(|c| c.columns.iter().flatten().find(|c| !c.suppressed))
            .map_or(0, |c| c.compression as i32);
        Ok(Descriptor {
            name: header.name,
            fields,
            columns,
            aliases,
            clusters,
            entries,
            max_key_size: anchor.max_key_size,
            compression,
            metadata_bytes: anchor.header.1 + anchor.footer.1,
            index_cache: IndexCache::default(),
        })
    }

    /// Checks that the schema's references point inside it.
    fn check_schema(
        &self,
        fields: &[FieldDesc],
        columns: &[ColumnDesc],
        aliases: &[AliasColumn],
        what: &str,
    ) -> Result<()> {
        let bad = |detail: String| Error::corrupt(what, 0, detail);
        for (id, f) in fields.iter().enumerate() {
            if f.parent as usize >= fields.len() {
                return Err(bad(format!(
                    "field {id} has parent {}, which does not exist",
                    f.parent
                )));
            }
            if f.parent as usize > id {
                return Err(bad(format!(
                    "field {id} comes before its parent {}",
                    f.parent
                )));
            }
            if f.source.is_some_and(|s| s as usize >= fields.len()) {
                return Err(bad(format!(
                    "projected field {id} shows a field that does not exist"
                )));
            }
        }
        for (id, c) in columns.iter().enumerate() {
            if c.field as usize >= fields.len() {
                return Err(bad(format!(
                    "column {id} belongs to field {}, which does not exist",
                    c.field
                )));
            }
        }
        for a in aliases {
            if a.field as usize >= fields.len() || a.physical as usize >= columns.len() {
                return Err(bad(format!(
                    "an alias column of field {} shows column {}, one of which does not exist",
                    a.field, a.physical
                )));
            }
        }
        Ok(())
    }

    /// Reads the envelope at `locator` of `len` uncompressed bytes and type `kind`: decompresses
    /// it, checks its XXH3-64 and its preamble, and returns its payload and its checksum.
    fn envelope(
        &self,
        locator: Locator,
        len: u64,
        kind: u16,
        max_key_size: u64,
        what: &str,
    ) -> Result<(Vec<u8>, u64)> {
        let limit = self.max_basket_bytes();
        if len > limit {
            return Err(Error::BasketTooLarge {
                what: what.to_owned(),
                bytes: len,
                limit,
            });
        }
        if len < 16 {
            return Err(Error::corrupt(
                what,
                0,
                format!("an envelope of {len} bytes"),
            ));
        }
        let stored = self.read_payload(locator, max_key_size, what)?;
        let mut bytes = Vec::new();
        if stored.len() as u64 == len {
            bytes = stored;
        } else {
            let mut dec = evtc_codecs::Decompressor::new();
            decompress(&mut dec, &stored, len as usize, &mut bytes, &|| {
                what.to_owned()
            })?;
        }
        let body = bytes.len() - 8;
        let stored_sum = evtc_codecs::le::u64_at(&bytes, body);
        let computed = xxhash_rust::xxh3::xxh3_64(&bytes[..body]);
        if stored_sum != computed {
            return Err(Error::corrupt(
                what,
                body as u64,
                format!("checksum mismatch: stored {stored_sum:#018x}, computed {computed:#018x}"),
            ));
        }
        let preamble = evtc_codecs::le::u64_at(&bytes, 0);
        let (id, length) = ((preamble & 0xFFFF) as u16, preamble >> 16);
        if id != kind {
            return Err(Error::corrupt(
                what,
                0,
                format!("an envelope of type {id} where type {kind} belongs"),
            ));
        }
        if length != len {
            return Err(Error::corrupt(
                what,
                0,
                format!("the envelope says it has {length} bytes, its locator {len}"),
            ));
        }
        bytes.truncate(body);
        bytes.drain(..8);
        Ok((bytes, computed))
    }

    /// [`RootFile::read_payload`] into `buf`, whose allocation is reused when the payload is in
    /// one key (a page, nearly always).
    pub(crate) fn read_payload_into(
        &self,
        locator: Locator,
        max_key_size: u64,
        what: &str,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match locator {
            Locator::File { offset, size } if max_key_size == 0 || size <= max_key_size => {
                self.read_into(offset, size, buf, what)
            }
            locator => {
                *buf = self.read_payload(locator, max_key_size, what)?;
                Ok(())
            }
        }
    }

    /// The stored bytes at `locator`: one key's, or, for a payload over `max_key_size`, the
    /// parts of several keys, the first of which ends with the offsets of the others.
    pub(crate) fn read_payload(
        &self,
        locator: Locator,
        max_key_size: u64,
        what: &str,
    ) -> Result<Vec<u8>> {
        let (offset, size) = match locator {
            Locator::File { offset, size } => (offset, size),
            Locator::Zero => {
                return Err(Error::corrupt(
                    what,
                    0,
                    "a zero-page locator for stored data",
                ));
            }
            Locator::Unknown(t) => {
                return Err(Error::corrupt(
                    what,
                    0,
                    format!("a locator of type {t:#04x}, which this reader does not know"),
                ));
            }
        };
        if max_key_size == 0 || size <= max_key_size {
            return self.read(offset, size, what);
        }
        // Several keys: the first holds the first part, then the offsets (64-bit, little-endian)
        // of the keys holding the rest, each part but the last `max_key_size` bytes; one more
        // key when the offsets do not fit in the room the last part leaves.
        let mut parts = size.div_ceil(max_key_size);
        let tail = size % max_key_size;
        let spare = if tail > 0 { max_key_size - tail } else { 0 };
        let mut extra = (parts - 1)
            .checked_mul(8)
            .ok_or_else(|| Error::corrupt(what, offset, "a payload split into too many keys"))?;
        if extra > spare {
            parts += 1;
            extra += 8;
        }
        let first_len = max_key_size
            .checked_sub(extra)
            .ok_or_else(|| Error::corrupt(what, offset, "a key too small for its part list"))?;
        let first = self.read(offset, max_key_size, what)?;
        let limit = self.max_basket_bytes();
        if size > limit {
            return Err(Error::BasketTooLarge {
                what: what.to_owned(),
                bytes: size,
                limit,
            });
        }
        let mut out = Vec::with_capacity(size as usize);
        out.extend_from_slice(&first[..first_len as usize]);
        let offsets = &first[first_len as usize..];
        for k in 0..(parts - 1) as usize {
            let at = evtc_codecs::le::u64_at(offsets, k * 8);
            let want = (size - out.len() as u64).min(max_key_size);
            if want == 0 {
                break;
            }
            let part = self.read(at, want, what)?;
            out.extend_from_slice(&part);
        }
        if out.len() as u64 != size {
            return Err(Error::corrupt(
                what,
                offset,
                format!("the keys of a {size}-byte payload hold {} bytes", out.len()),
            ));
        }
        Ok(out)
    }
}

/// An RNTuple's storage, for display (`evtc inspect`): its format version, envelopes,
/// clusters and physical columns with their encodings, pages and sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct NtupleLayout {
    /// The RNTuple's name.
    pub name: String,
    /// The binary format version its anchor gives (`1.0.2.0`).
    pub version: String,
    /// Entries.
    pub entries: u64,
    /// Stored bytes of the header and footer envelopes.
    pub metadata_bytes: u64,
    /// The clusters, in entry order.
    pub clusters: Vec<ClusterLayout>,
    /// The physical columns, by column id.
    pub columns: Vec<ColumnLayout>,
}

/// One cluster of an RNTuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterLayout {
    /// Its first entry.
    pub first_entry: u64,
    /// Its entries.
    pub entries: u64,
    /// Pages of all columns in it.
    pub pages: u64,
    /// Bytes of those pages as stored.
    pub stored_bytes: u64,
    /// Bytes of those pages uncompressed.
    pub raw_bytes: u64,
}

/// One physical column of an RNTuple.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnLayout {
    /// Its column id.
    pub id: u32,
    /// The path of its field, as ROOT names it (`hits._0.x`).
    pub field: String,
    /// Its column type (`SplitReal32`), or `unknown 0x..` for a type this reader does not know.
    pub column_type: String,
    /// Bits per element.
    pub bits: u16,
    /// Its representation index (0 for a field with one).
    pub representation: u16,
    /// Its first element, for a column added after the first entries (0 otherwise).
    pub first_element: i64,
    /// Pages over all clusters.
    pub pages: u64,
    /// Elements over all clusters.
    pub elements: u64,
    /// Bytes of its pages as stored.
    pub stored_bytes: u64,
    /// Bytes of its pages uncompressed.
    pub raw_bytes: u64,
    /// ROOT's compression setting of its pages (of the first cluster that holds any).
    pub compression: i32,
}

impl Descriptor {
    /// The field path of field `id` (`parent.child`).
    fn field_path(&self, id: usize) -> String {
        let mut parts = Vec::new();
        let mut at = id;
        // The schema check made every parent come before its children.
        while let Some(f) = self.fields.get(at) {
            parts.push(f.name.as_str());
            if f.parent as usize == at {
                break;
            }
            at = f.parent as usize;
        }
        parts.reverse();
        parts.join(".")
    }

    /// Stored and uncompressed bytes of column `c`'s pages in all clusters.
    pub(crate) fn column_bytes(&self, c: usize) -> (u64, u64) {
        let bits = self.columns.get(c).map_or(0, |d| u32::from(d.bits));
        let mut stored = 0u64;
        let mut raw = 0u64;
        for part in self
            .clusters
            .iter()
            .filter_map(|k| k.columns.get(c)?.as_ref())
        {
            for page in &part.pages {
                if let Locator::File { size, .. } = page.locator {
                    stored = stored.saturating_add(size);
                }
                raw = raw.saturating_add(element::page_bytes(page.elements, bits).unwrap_or(0));
            }
        }
        (stored, raw)
    }

    fn layout(&self, version: [u16; 4]) -> NtupleLayout {
        let columns = self
            .columns
            .iter()
            .enumerate()
            .map(|(c, d)| {
                let (stored_bytes, raw_bytes) = self.column_bytes(c);
                let parts = || {
                    self.clusters
                        .iter()
                        .filter_map(|k| k.columns.get(c)?.as_ref())
                };
                ColumnLayout {
                    id: c as u32,
                    field: self.field_path(d.field as usize),
                    column_type: element::ColumnType::from_code(d.kind).map_or_else(
                        || format!("unknown {:#04x}", d.kind),
                        |t| t.name().to_owned(),
                    ),
                    bits: d.bits,
                    representation: d.representation,
                    first_element: d.first_element,
                    pages: parts().map(|p| p.pages.len() as u64).sum(),
                    elements: parts().map(|p| p.elements()).sum(),
                    stored_bytes,
                    raw_bytes,
                    compression: parts()
                        .find(|p| !p.suppressed)
                        .map_or(0, |p| p.compression as i32),
                }
            })
            .collect();
        let clusters = self
            .clusters
            .iter()
            .map(|k| {
                let mut layout = ClusterLayout {
                    first_entry: k.first_entry,
                    entries: k.entries,
                    pages: 0,
                    stored_bytes: 0,
                    raw_bytes: 0,
                };
                for (c, part) in k.columns.iter().enumerate() {
                    let Some(part) = part else { continue };
                    let bits = self.columns.get(c).map_or(0, |d| u32::from(d.bits));
                    layout.pages += part.pages.len() as u64;
                    for page in &part.pages {
                        if let Locator::File { size, .. } = page.locator {
                            layout.stored_bytes += size;
                        }
                        layout.raw_bytes += element::page_bytes(page.elements, bits).unwrap_or(0);
                    }
                }
                layout
            })
            .collect();
        NtupleLayout {
            name: self.name.clone(),
            version: version.map(|v| v.to_string()).join("."),
            entries: self.entries,
            metadata_bytes: self.metadata_bytes,
            clusters,
            columns,
        }
    }
}

impl<R: ReadAt> RootFile<R> {
    /// The storage of the RNTuple at `path` (`name`, `dir/name`, with an optional `;cycle`):
    /// its clusters and physical columns with their encodings, pages and sizes.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::NotATree`] for a key that is not an RNTuple, and corrupt
    /// metadata.
    pub fn ntuple_layout(&self, path: &str) -> Result<NtupleLayout> {
        let key = self.key(path)?;
        if !matches!(
            key.class_name.as_str(),
            "ROOT::RNTuple" | "ROOT::Experimental::RNTuple"
        ) {
            return Err(Error::NotATree {
                path: path.to_owned(),
                class: key.class_name,
            });
        }
        let name = path.rsplit_once(';').map_or(path, |(p, _)| p);
        let what = format!("RNTuple {name:?} anchor (key at byte {})", key.seek_key);
        let anchor = Anchor::parse(&self.read_object(&key, &what)?, &what)?;
        Ok(self.descriptor(&anchor, name)?.layout(anchor.version))
    }
}
