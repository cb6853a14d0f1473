//! RNTuples written from columns ([`NtupleWriter`]), to binary format 1.0 (ROOT 6.34 and
//! later), from the specification (`tree/ntuple/doc/BinaryFormatSpecification.md` in ROOT's
//! repository), beside the reader (`crate::rntuple`) and sharing its model: a field per
//! [`ColumnKind`], filled from the [`ColumnData`] the readers produce.
//!
//! The header envelope is written when the writer starts. Entries come in batches
//! ([`NtupleWriter::append`]): each column's elements gather into pages of
//! [`NtupleOptions::page_bytes`] uncompressed, each compressed with its field's codec in ROOT's
//! blocks and followed by its XXH3-64 as soon as it is full, and kept with its cluster's other
//! pages until the cluster ends ([`NtupleWriter::end_cluster`], or by itself at
//! [`NtupleOptions::cluster_bytes`] compressed, as ROOT's writer does); a cluster's pages go to the
//! file in one `RBlob`. [`NtupleWriter::finish`] writes the page list, the footer and the
//! anchor, a `ROOT::RNTuple` key of the file's top directory.
//!
//! - `envelope`: frames, locators and envelopes;
//! - `schema`: fields into field records and columns;
//! - `page`: a page's elements as stored.

mod envelope;
mod page;
mod schema;

use std::collections::HashMap;
use std::io::{Seek, Write};

use evtc_codecs::{Codec, Compressor};

use super::file::{MAX_KEY_SIZE, RootWriter};
use super::streamer::rntuple_anchor;
use crate::compression::{compress, nearest_setting};
use crate::data::ColumnData;
use crate::error::{Error, Result};
use crate::types::ColumnKind;
use envelope::{Writer, envelope};
use page::Elements;
use schema::{ColumnRecord, FieldRecord, Source};

/// The envelope type ids.
const HEADER: u16 = 0x01;
const FOOTER: u16 = 0x02;
const PAGE_LIST: u16 = 0x03;
/// The format version written: 1.0.0.0 (every reader of epoch 1 reads it).
const VERSION: [u16; 4] = [1, 0, 0, 0];

/// How a field stores floating-point values.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum FloatStorage {
    /// As they are (`SplitReal32`, `SplitReal64`).
    #[default]
    Plain,
    /// Sign, exponent and this many mantissa bits (`Real32Trunc` of floats, 1-22 bits: evtc's
    /// `float_precision` values, stored without further loss); doubles are stored whole.
    Truncated {
        /// Mantissa bits kept.
        mantissa_bits: u32,
    },
    /// `2^bits` evenly spaced values from `min` to `max` (`Real32Quant`, 1-32 bits).
    Quantized {
        /// The range's lower end.
        min: f64,
        /// The range's upper end.
        max: f64,
        /// Bits per value.
        bits: u32,
    },
}

/// A top-level field to write.
#[derive(Debug, Clone)]
pub struct NtupleField {
    /// Its name.
    pub name: String,
    /// What an entry holds: a scalar (a fundamental type), a fixed array (`std::array`), a
    /// list (`std::vector`, or `ROOT::VecOps::RVec` with [`NtupleField::rvec`]), lists of
    /// lists, a string (`std::string`) or lists of strings.
    pub kind: ColumnKind,
    /// A fixed array's dimensions, outermost first, when it has two or more (nested
    /// `std::array`s); empty otherwise.
    pub dims: Vec<usize>,
    /// The outermost list is a `ROOT::VecOps::RVec<T>`, as RDataFrame writes NanoAOD's
    /// branches, rather than a `std::vector<T>`.
    pub rvec: bool,
    /// The codec of its pages (`none`: the columns' unsplit encodings, as ROOT writes
    /// uncompressed RNTuples).
    pub codec: Codec,
    /// How its floats are stored.
    pub floats: FloatStorage,
}

impl NtupleField {
    /// A field of `kind`, compressed with `codec`, its floats as they are.
    pub fn new(name: impl Into<String>, kind: ColumnKind, codec: Codec) -> NtupleField {
        NtupleField {
            name: name.into(),
            kind,
            dims: Vec::new(),
            rvec: false,
            codec,
            floats: FloatStorage::Plain,
        }
    }
}

/// How an RNTuple is written.
#[derive(Debug, Clone)]
pub struct NtupleOptions {
    /// The largest uncompressed page (default 1 MiB, ROOT's largest page by default).
    pub page_bytes: usize,
    /// The compressed bytes at which a cluster ends by itself, after the batch that reaches
    /// them (default 128 MiB, ROOT's `RNTupleWriteOptions::GetApproxZippedClusterSize`).
    pub cluster_bytes: u64,
    /// The codec of the header, footer and page lists (default `zstd:5`, RNTuple's default).
    pub envelope_codec: Codec,
    /// The description stored in the header.
    pub description: String,
}

impl Default for NtupleOptions {
    fn default() -> NtupleOptions {
        NtupleOptions {
            page_bytes: 1 << 20,
            cluster_bytes: 128 << 20,
            envelope_codec: Codec::DEFAULT,
            description: String::new(),
        }
    }
}

/// One page as recorded in the page list.
#[derive(Debug, Clone, Copy)]
struct PageRecord {
    elements: u32,
    offset: u64,
    size: u64,
}

/// One column's part of a cluster.
#[derive(Debug, Clone)]
struct ClusterColumn {
    first_element: u64,
    pages: Vec<PageRecord>,
}

/// One cluster as recorded in the page list.
#[derive(Debug, Clone)]
struct ClusterRecord {
    first_entry: u64,
    entries: u64,
    columns: Vec<ClusterColumn>,
}

/// What a finished RNTuple holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NtupleSummary {
    /// Entries written.
    pub entries: u64,
    /// Clusters written.
    pub clusters: usize,
    /// Pages written.
    pub pages: usize,
    /// Bytes of pages as stored (compressed, checksums included).
    pub page_bytes: u64,
}

/// A column's elements of the open cluster not yet in a page.
#[derive(Debug)]
enum Pending {
    Values(crate::data::Values),
    /// Cluster-relative end offsets.
    Index(Vec<u64>),
}

impl Pending {
    fn elements(&self) -> Elements<'_> {
        match self {
            Pending::Values(v) => Elements::Values(v),
            Pending::Index(i) => Elements::Index(i),
        }
    }

    /// Drops the first `n` elements.
    fn drop_front(&mut self, n: usize) {
        match self {
            Pending::Values(v) => crate::with_values!(v, v => {
                v.drain(..n);
            }),
            Pending::Index(i) => {
                i.drain(..n);
            }
        }
    }
}

/// The cluster being written: its pages so far, compressed, and what is not yet a page.
#[derive(Debug)]
struct OpenCluster {
    blob: Vec<u8>,
    columns: Vec<ClusterColumn>,
    pending: Vec<Pending>,
    /// Each index column's last end offset in the cluster.
    ends: Vec<u64>,
    /// Pages already stored, by a 128-bit hash of the encoded page, its length and codec.
    stored: HashMap<(u128, usize, Codec), (u64, u64)>,
    entries: u64,
}

impl OpenCluster {
    /// A cluster of no columns (a placeholder).
    fn empty() -> OpenCluster {
        OpenCluster {
            blob: Vec::new(),
            columns: Vec::new(),
            pending: Vec::new(),
            ends: Vec::new(),
            stored: HashMap::new(),
            entries: 0,
        }
    }
}

/// An RNTuple being written into a [`RootWriter`]'s file, batch by batch.
///
/// ```
/// use evtc_codecs::Codec;
/// use evtc_root::{ColumnData, ColumnKind, NtupleField, NtupleOptions, NtupleWriter, RootWriter,
///                 ScalarType, Values};
///
/// let mut file = RootWriter::new(std::io::Cursor::new(Vec::new()), "out.root", Codec::DEFAULT)?;
/// let fields = vec![
///     NtupleField::new("n", ColumnKind::Scalar(ScalarType::U32), Codec::DEFAULT),
///     NtupleField::new("pt", ColumnKind::Jagged(ScalarType::F32), Codec::DEFAULT),
/// ];
/// let mut ntuple = NtupleWriter::new(&mut file, "Events", fields, NtupleOptions::default())?;
/// let n = ColumnData { values: Values::U32(vec![2, 0, 1]), offsets: vec![], levels: vec![] };
/// let pt = ColumnData {
///     values: Values::F32(vec![31.5, 12.0, 48.25]),
///     offsets: vec![0, 2, 2, 3],
///     levels: vec![],
/// };
/// ntuple.write_cluster(&mut file, &[n, pt])?;
/// let summary = ntuple.finish(&mut file)?;
/// assert_eq!(summary.entries, 3);
/// let bytes = file.finish()?.into_inner();
/// # let _ = bytes;
/// # Ok::<(), evtc_root::Error>(())
/// ```
#[derive(Debug)]
pub struct NtupleWriter {
    name: String,
    fields: Vec<NtupleField>,
    columns: Vec<ColumnRecord>,
    options: NtupleOptions,
    /// The header envelope's checksum, which the footer and page lists repeat.
    header_checksum: u64,
    /// The header's (offset, stored bytes, length).
    header: (u64, u64, u64),
    clusters: Vec<ClusterRecord>,
    entries: u64,
    /// Each column's elements written so far.
    elements: Vec<u64>,
    compressor: Compressor,
    pages: usize,
    page_bytes: u64,
    open: OpenCluster,
    /// Page encoding scratch.
    scratch: Vec<u8>,
}

impl NtupleWriter {
    /// Starts the RNTuple `name` of `fields` in `file`, writing its header.
    ///
    /// # Errors
    /// [`Error::Unwritable`] for a name RNTuple refuses, a float storage ROOT has no column
    /// for or no fields; [`Error::WriteIo`].
    pub fn new<W: Write + Seek>(
        file: &mut RootWriter<W>,
        name: &str,
        fields: Vec<NtupleField>,
        options: NtupleOptions,
    ) -> Result<NtupleWriter> {
        if name.is_empty() || name.contains('/') {
            return Err(Error::Unwritable {
                what: format!("RNTuple {name:?}"),
                reason: "an RNTuple needs a name without '/'".into(),
            });
        }
        let (records, columns) = schema::plan(&fields)?;
        let mut w = Writer::default();
        w.u64(0); // feature flags
        w.string(name);
        w.string(&options.description);
        w.string(concat!("evtc-root ", env!("CARGO_PKG_VERSION")));
        schema_description(&mut w, &records, &columns);
        let (bytes, header_checksum) = envelope(HEADER, &w.bytes);
        let mut writer = NtupleWriter {
            name: name.to_owned(),
            elements: vec![0; columns.len()],
            fields,
            columns,
            options,
            header_checksum,
            header: (0, 0, 0),
            clusters: Vec::new(),
            entries: 0,
            compressor: Compressor::new(),
            pages: 0,
            page_bytes: 0,
            open: OpenCluster::empty(),
            scratch: Vec::new(),
        };
        writer.open = writer.new_cluster();
        writer.header = writer.write_envelope(file, &bytes, "header")?;
        Ok(writer)
    }

    /// Compresses and writes an envelope in a blob; returns its (offset, stored bytes,
    /// length).
    fn write_envelope<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        bytes: &[u8],
        what: &str,
    ) -> Result<(u64, u64, u64)> {
        let mut stored = Vec::new();
        compress(
            &mut self.compressor,
            self.options.envelope_codec,
            bytes,
            &mut stored,
        )
        .map_err(|e| self.unwritable(what, e.to_string()))?;
        let offset = file.write_blob(&stored)?;
        Ok((offset, stored.len() as u64, bytes.len() as u64))
    }

    fn unwritable(&self, what: &str, reason: impl Into<String>) -> Error {
        Error::Unwritable {
            what: format!("RNTuple {:?} {what}", self.name),
            reason: reason.into(),
        }
    }

    /// Writes one cluster: `data[i]` holds the entries of field `i`, all fields the same
    /// number of entries, shaped as the readers make them for the field's kind (offsets from
    /// 0). The same as [`append`](NtupleWriter::append) then
    /// [`end_cluster`](NtupleWriter::end_cluster).
    ///
    /// # Errors
    /// As for [`append`](NtupleWriter::append).
    pub fn write_cluster<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        data: &[ColumnData],
    ) -> Result<()> {
        self.append(file, data)?;
        self.end_cluster(file)
    }

    /// Adds entries to the open cluster: `data[i]` holds the entries of field `i`, all fields
    /// the same number of entries, shaped as the readers make them for the field's kind
    /// (offsets from 0). Full pages are compressed at once; the cluster ends after this batch
    /// if its pages reach [`NtupleOptions::cluster_bytes`].
    ///
    /// # Errors
    /// [`Error::Unwritable`] for data that does not fit its field (naming it), a quantized
    /// value outside its range, or a codec failure; [`Error::WriteIo`].
    pub fn append<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        data: &[ColumnData],
    ) -> Result<()> {
        let entries = self.check(data)?;
        if entries == 0 {
            return Ok(());
        }
        for c in 0..self.columns.len() {
            let column = &self.columns[c];
            let field = &data[column.field];
            let pending = &mut self.open.pending[c];
            match (column.source, pending) {
                (Source::Values, Pending::Values(v)) => {
                    if !v.extend_from(&field.values, 0..field.values.len()) {
                        return Err(self.unwritable("cluster", "internal: values of another type"));
                    }
                }
                (Source::Offsets, Pending::Index(i)) => {
                    let base = self.open.ends[c];
                    i.extend(field.offsets[1..].iter().map(|&o| o + base));
                    self.open.ends[c] = i.last().copied().unwrap_or(base);
                }
                (Source::Level(level), Pending::Index(i)) => {
                    let base = self.open.ends[c];
                    i.extend(field.levels[level][1..].iter().map(|&o| o + base));
                    self.open.ends[c] = i.last().copied().unwrap_or(base);
                }
                _ => return Err(self.unwritable("cluster", "internal: a column's elements")),
            }
            self.pages_of(c, false)?;
        }
        self.open.entries += entries;
        if self.open.blob.len() as u64 >= self.options.cluster_bytes {
            self.end_cluster(file)?;
        }
        Ok(())
    }

    /// Ends the open cluster, if it has entries: its last pages, its pages written to the file.
    ///
    /// # Errors
    /// [`Error::Unwritable`] for a codec failure; [`Error::WriteIo`].
    pub fn end_cluster<W: Write + Seek>(&mut self, file: &mut RootWriter<W>) -> Result<()> {
        if self.open.entries == 0 {
            return Ok(());
        }
        for c in 0..self.columns.len() {
            self.pages_of(c, true)?;
        }
        let open = std::mem::replace(&mut self.open, OpenCluster::empty());
        let mut columns = open.columns;
        self.pages += columns.iter().map(|c| c.pages.len()).sum::<usize>();
        self.page_bytes += open.blob.len() as u64;
        self.write_pages(file, open.blob, &mut columns)?;
        for (count, column) in self.elements.iter_mut().zip(&columns) {
            *count += column
                .pages
                .iter()
                .map(|p| u64::from(p.elements))
                .sum::<u64>();
        }
        self.clusters.push(ClusterRecord {
            first_entry: self.entries,
            entries: open.entries,
            columns,
        });
        self.entries += open.entries;
        self.open = self.new_cluster();
        Ok(())
    }

    /// An empty cluster after the clusters written.
    fn new_cluster(&self) -> OpenCluster {
        OpenCluster {
            blob: Vec::new(),
            columns: self
                .elements
                .iter()
                .map(|&first_element| ClusterColumn {
                    first_element,
                    pages: Vec::new(),
                })
                .collect(),
            pending: self
                .columns
                .iter()
                .map(|c| match c.source {
                    Source::Values => Pending::Values(crate::data::Values::new(
                        self.fields[c.field].kind.scalar(),
                    )),
                    _ => Pending::Index(Vec::new()),
                })
                .collect(),
            ends: vec![0; self.columns.len()],
            stored: HashMap::new(),
            entries: 0,
        }
    }

    /// Makes pages of column `c`'s pending elements: every full page, and with `all` the
    /// rest too. Each page is encoded, compressed and followed by its XXH3-64 in the cluster's
    /// blob; a page the same as one of the cluster's (the index columns of a collection's
    /// fields, NanoAOD's `Muon_*`, are the same) under the same codec is stored once.
    fn pages_of(&mut self, c: usize, all: bool) -> Result<()> {
        let column = &self.columns[c];
        let per_page = (self.options.page_bytes * 8 / usize::from(column.bits)).max(1);
        let pending = &self.open.pending[c];
        let n = pending.elements().len();
        let mut start = 0;
        while n - start >= per_page || (all && start < n) {
            let end = (start + per_page).min(n);
            self.scratch.clear();
            let encoded = page::encode(
                column.kind,
                column.floats,
                pending.elements(),
                start..end,
                &mut self.scratch,
            );
            let fail = |reason: String| Error::Unwritable {
                what: format!(
                    "RNTuple {:?} field {:?}",
                    self.name, self.fields[column.field].name
                ),
                reason,
            };
            encoded.map_err(fail)?;
            let key = (
                xxhash_rust::xxh3::xxh3_128(&self.scratch),
                self.scratch.len(),
                column.codec,
            );
            let blob = &mut self.open.blob;
            let (offset, size) = match self.open.stored.get(&key) {
                Some(&known) => known,
                None => {
                    let offset = blob.len() as u64;
                    compress(&mut self.compressor, column.codec, &self.scratch, blob)
                        .map_err(|e| fail(e.to_string()))?;
                    let size = blob.len() as u64 - offset;
                    let sum = xxhash_rust::xxh3::xxh3_64(&blob[offset as usize..]);
                    blob.extend_from_slice(&sum.to_le_bytes());
                    self.open.stored.insert(key, (offset, size));
                    (offset, size)
                }
            };
            self.open.columns[c].pages.push(PageRecord {
                elements: (end - start) as u32,
                offset,
                size,
            });
            start = end;
        }
        if start > 0 {
            self.open.pending[c].drop_front(start);
        }
        Ok(())
    }

    /// Writes a cluster's pages in blobs of at most [`MAX_KEY_SIZE`] bytes (whole pages each)
    /// and makes the pages' offsets absolute.
    fn write_pages<W: Write + Seek>(
        &mut self,
        file: &mut RootWriter<W>,
        blob: Vec<u8>,
        columns: &mut [ClusterColumn],
    ) -> Result<()> {
        if blob.len() as u64 <= MAX_KEY_SIZE {
            let base = file.write_blob(&blob)?;
            for page in columns.iter_mut().flat_map(|c| c.pages.iter_mut()) {
                page.offset += base;
            }
            return Ok(());
        }
        // Cut the blob between pages (each stored once, in order) into blobs of at most the
        // largest key, then point every page record into the blob that holds its page.
        let mut stored: Vec<(u64, u64)> = columns
            .iter()
            .flat_map(|c| c.pages.iter().map(|p| (p.offset, p.size + 8)))
            .collect();
        stored.sort_unstable();
        stored.dedup();
        let mut moved: HashMap<u64, u64> = HashMap::new();
        let mut i = 0;
        while i < stored.len() {
            let first = stored[i].0;
            let mut j = i;
            while j < stored.len() && stored[j].0 + stored[j].1 - first <= MAX_KEY_SIZE {
                j += 1;
            }
            if j == i {
                return Err(self.unwritable(
                    "page",
                    format!("a page of {} bytes, over the largest key", stored[i].1),
                ));
            }
            let last = stored[j - 1].0 + stored[j - 1].1;
            let base = file.write_blob(&blob[first as usize..last as usize])?;
            for &(offset, _) in &stored[i..j] {
                moved.insert(offset, offset - first + base);
            }
            i = j;
        }
        for page in columns.iter_mut().flat_map(|c| c.pages.iter_mut()) {
            page.offset = moved[&page.offset];
        }
        Ok(())
    }

    /// Checks that `data` fits the fields; returns its entries.
    fn check(&self, data: &[ColumnData]) -> Result<u64> {
        if data.len() != self.fields.len() {
            return Err(self.unwritable(
                "cluster",
                format!(
                    "{} columns of data for {} fields",
                    data.len(),
                    self.fields.len()
                ),
            ));
        }
        let mut entries = None;
        for (field, d) in self.fields.iter().zip(data) {
            let n = super::shape_entries(field.kind, &field.dims, d).map_err(|reason| {
                Error::Unwritable {
                    what: format!("RNTuple {:?} field {:?}", self.name, field.name),
                    reason,
                }
            })?;
            match entries {
                None => entries = Some(n),
                Some(e) if e != n => {
                    return Err(self.unwritable(
                        "cluster",
                        format!(
                            "field {:?} has {n} entries, the fields before {e}",
                            field.name
                        ),
                    ));
                }
                _ => {}
            }
        }
        Ok(entries.unwrap_or(0))
    }

    /// Ends the open cluster, then writes the page list, the footer and the anchor; the RNTuple
    /// is then complete.
    ///
    /// # Errors
    /// [`Error::WriteIo`]; [`Error::Unwritable`] for a codec failure.
    pub fn finish<W: Write + Seek>(mut self, file: &mut RootWriter<W>) -> Result<NtupleSummary> {
        self.end_cluster(file)?;
        let page_list = self.page_list();
        let (list, _) = envelope(PAGE_LIST, &page_list);
        let (list_offset, list_stored, list_len) = self.write_envelope(file, &list, "page list")?;
        let mut w = Writer::default();
        w.u64(0); // feature flags
        w.u64(self.header_checksum);
        // The schema extension: four empty lists.
        let extension = w.record();
        for _ in 0..4 {
            let list = w.list(0);
            w.close(list);
        }
        w.close(extension);
        let groups = w.list(1);
        let group = w.record();
        w.u64(0);
        w.u64(self.entries);
        w.u32(self.clusters.len() as u32);
        w.envelope_link(list_len, list_offset, list_stored);
        w.close(group);
        w.close(groups);
        let (footer, _) = envelope(FOOTER, &w.bytes);
        let footer = self.write_envelope(file, &footer, "footer")?;
        file.declare(rntuple_anchor());
        let anchor = anchor(self.header, footer);
        file.write_object("ROOT::RNTuple", &self.name, "", Codec::NONE, |b| {
            b.bytes.extend_from_slice(&anchor)
        })?;
        Ok(NtupleSummary {
            entries: self.entries,
            clusters: self.clusters.len(),
            pages: self.pages,
            page_bytes: self.page_bytes,
        })
    }

    /// The page list envelope's payload: the cluster summaries and every page's location.
    fn page_list(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(self.header_checksum);
        w.records(&self.clusters, |w, c| {
            w.u64(c.first_entry);
            w.u64(c.entries);
        });
        let clusters = w.list(self.clusters.len());
        for cluster in &self.clusters {
            let columns = w.list(cluster.columns.len());
            for (column, record) in cluster.columns.iter().zip(&self.columns) {
                let pages = w.list(column.pages.len());
                for page in &column.pages {
                    // Negative: a checksum follows the page.
                    w.i32(-(page.elements as i32));
                    w.locator(page.offset, page.size);
                }
                w.i64(column.first_element as i64);
                w.u32(nearest_setting(record.codec) as u32);
                w.close(pages);
            }
            w.close(columns);
        }
        w.close(clusters);
        w.bytes
    }
}

/// The schema description: field, column, alias column and extra type information lists.
fn schema_description(w: &mut Writer, fields: &[FieldRecord], columns: &[ColumnRecord]) {
    w.records(fields, |w, f| {
        w.u32(0); // field version
        w.u32(0); // type version
        w.u32(f.parent);
        w.u16(f.role);
        w.u16(f.flags);
        w.string(&f.name);
        w.string(&f.type_name);
        w.string(""); // type alias
        w.string(""); // description
        if let Some(n) = f.array_size {
            w.u64(n);
        }
    });
    w.records(columns, |w, c| {
        w.u16(c.kind.code());
        w.u16(c.bits);
        w.u32(c.field_id);
        let range = c.range();
        w.u16(if range.is_some() { 0x02 } else { 0 });
        w.u16(0); // representation index
        if let Some((min, max)) = range {
            w.f64(min);
            w.f64(max);
        }
    });
    for _ in 0..2 {
        let list = w.list(0);
        w.close(list);
    }
}

/// The anchor object (`ROOT::RNTuple` version 2): its byte count and version, the big-endian
/// fields, then the XXH3-64 of the fields.
fn anchor(header: (u64, u64, u64), footer: (u64, u64, u64)) -> Vec<u8> {
    let mut fields = Vec::with_capacity(64);
    for v in VERSION {
        fields.extend_from_slice(&v.to_be_bytes());
    }
    for v in [
        header.0,
        header.1,
        header.2,
        footer.0,
        footer.1,
        footer.2,
        MAX_KEY_SIZE,
    ] {
        fields.extend_from_slice(&v.to_be_bytes());
    }
    let mut out = (0x4000_0000u32 | (2 + fields.len() as u32))
        .to_be_bytes()
        .to_vec();
    out.extend_from_slice(&2u16.to_be_bytes());
    out.extend_from_slice(&fields);
    out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&fields).to_be_bytes());
    out
}
