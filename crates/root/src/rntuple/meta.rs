//! An RNTuple's metadata: the header envelope (the schema: fields, columns, alias columns), the
//! footer (schema extension, cluster groups) and the page lists (clusters and their pages),
//! parsed into a [`Descriptor`].

use super::cache::IndexCache;
use super::wire::{Locator, Reader};
use crate::error::Result;

/// Everything known of an RNTuple after its header, footer and page lists: the schema (header
/// and extension together) and every cluster's pages.
#[derive(Debug)]
pub(crate) struct Descriptor {
    pub(crate) name: String,
    pub(crate) fields: Vec<FieldDesc>,
    pub(crate) columns: Vec<ColumnDesc>,
    pub(crate) aliases: Vec<AliasColumn>,
    pub(crate) clusters: Vec<Cluster>,
    pub(crate) entries: u64,
    /// The anchor's largest key: payloads over it are stored in several keys.
    pub(crate) max_key_size: u64,
    /// ROOT's compression setting of the first cluster's pages (for display).
    pub(crate) compression: i32,
    /// Bytes of the header and footer envelopes as stored.
    pub(crate) metadata_bytes: u64,
    /// The collections' offsets of recent clusters, decoded once for every field below them.
    pub(crate) index_cache: IndexCache,
}

/// The structural role of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A leaf, or a wrapper around one (`std::atomic`, an enum).
    Plain,
    /// The parent of a collection (`std::vector`, `std::string` has no child field).
    Collection,
    /// The parent of a record (a class, `std::pair`, `std::tuple`).
    Record,
    /// The parent of a variant.
    Variant,
    /// An object streamed by ROOT's streamer into a byte column.
    Streamer,
    /// A role this reader does not know.
    Unknown(u16),
}

/// Field flags.
pub(crate) const FIELD_REPETITIVE: u16 = 0x01;
pub(crate) const FIELD_PROJECTED: u16 = 0x02;
pub(crate) const FIELD_CHECKSUM: u16 = 0x04;

/// One field of the schema.
#[derive(Debug, Clone)]
pub(crate) struct FieldDesc {
    pub(crate) parent: u32,
    pub(crate) role: Role,
    pub(crate) name: String,
    pub(crate) type_name: String,
    pub(crate) type_alias: String,
    /// The repetition count of a fixed-size array or bitset.
    pub(crate) array_size: Option<u64>,
    /// The field a projected field shows.
    pub(crate) source: Option<u32>,
}

/// Column flags.
const COLUMN_DEFERRED: u16 = 0x01;
const COLUMN_RANGE: u16 = 0x02;

/// One physical column of the schema.
#[derive(Debug, Clone)]
pub(crate) struct ColumnDesc {
    /// The column type's on-disk code.
    pub(crate) kind: u16,
    pub(crate) bits: u16,
    pub(crate) field: u32,
    pub(crate) representation: u16,
    /// The first element of a deferred column (negative: deferred and suppressed).
    pub(crate) first_element: i64,
    /// The value range of a column with one (`Real32Quant`).
    pub(crate) range: Option<(f64, f64)>,
}

/// A column attached to a projected field, showing a physical column's data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AliasColumn {
    pub(crate) physical: u32,
    pub(crate) field: u32,
}

/// One page of a column in a cluster.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageDesc {
    pub(crate) elements: u64,
    /// An XXH3-64 of the stored bytes follows the page.
    pub(crate) checksum: bool,
    pub(crate) locator: Locator,
}

/// A column's part of a cluster.
#[derive(Debug, Clone)]
pub(crate) struct ClusterColumn {
    /// The column's first element in this cluster.
    pub(crate) element_offset: u64,
    /// Suppressed: the field uses another representation in this cluster.
    pub(crate) suppressed: bool,
    /// ROOT's compression setting of the pages.
    pub(crate) compression: u32,
    pub(crate) pages: Vec<PageDesc>,
}

impl ClusterColumn {
    /// The elements the column holds in this cluster.
    pub(crate) fn elements(&self) -> u64 {
        self.pages.iter().map(|p| p.elements).sum()
    }
}

/// One cluster: an entry range and, per physical column (by column id), its pages.
#[derive(Debug, Clone)]
pub(crate) struct Cluster {
    pub(crate) first_entry: u64,
    pub(crate) entries: u64,
    /// Indexed by physical column id; `None` for a column the cluster's page list does not list
    /// (added to the schema after the cluster was written).
    pub(crate) columns: Vec<Option<ClusterColumn>>,
}

/// The schema description (the header's, or a schema extension's).
#[derive(Debug, Default)]
pub(crate) struct Schema {
    pub(crate) fields: Vec<FieldDesc>,
    pub(crate) columns: Vec<ColumnDesc>,
    pub(crate) aliases: Vec<AliasColumn>,
}

/// The header envelope.
#[derive(Debug)]
pub(crate) struct Header {
    pub(crate) flags: u64,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) writer: String,
    pub(crate) schema: Schema,
}

/// A cluster group: its entry range, cluster count and page list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClusterGroup {
    pub(crate) min_entry: u64,
    pub(crate) entry_span: u64,
    pub(crate) clusters: u32,
    /// The page list envelope's uncompressed size and locator.
    pub(crate) page_list: (u64, Locator),
}

/// The footer envelope.
#[derive(Debug)]
pub(crate) struct Footer {
    pub(crate) flags: u64,
    pub(crate) header_checksum: u64,
    pub(crate) extension: Schema,
    pub(crate) groups: Vec<ClusterGroup>,
}

/// A page list envelope: the clusters of one group.
#[derive(Debug)]
pub(crate) struct PageList {
    pub(crate) header_checksum: u64,
    pub(crate) clusters: Vec<Cluster>,
}

/// Parses the header envelope's payload.
pub(crate) fn header(payload: &[u8]) -> Result<Header> {
    let mut r = Reader::new(payload, "RNTuple header");
    let (flags, more) = r.feature_flags()?;
    if more {
        return Err(r.error("feature flags beyond bit 62 are set, which this reader does not know"));
    }
    let name = r.string()?;
    let description = r.string()?;
    let writer = r.string()?;
    let schema = schema(&mut r)?;
    Ok(Header {
        flags,
        name,
        description,
        writer,
        schema,
    })
}

/// The four lists of a schema description: fields, columns, alias columns, extra type
/// information (skipped: it serves schema evolution only).
fn schema(r: &mut Reader<'_>) -> Result<Schema> {
    let fields = r.records_of(field)?;
    let columns = r.records_of(column)?;
    let aliases = r.records_of(|r| {
        Ok(AliasColumn {
            physical: r.u32()?,
            field: r.u32()?,
        })
    })?;
    // Extra type information: record frames skipped whole.
    r.records_of(|_| Ok(()))?;
    Ok(Schema {
        fields,
        columns,
        aliases,
    })
}

fn field(r: &mut Reader<'_>) -> Result<FieldDesc> {
    let _field_version = r.u32()?;
    let _type_version = r.u32()?;
    let parent = r.u32()?;
    let role = match r.u16()? {
        0 => Role::Plain,
        1 => Role::Collection,
        2 => Role::Record,
        3 => Role::Variant,
        4 => Role::Streamer,
        other => Role::Unknown(other),
    };
    let flags = r.u16()?;
    let name = r.string()?;
    let type_name = r.string()?;
    let type_alias = r.string()?;
    let _description = r.string()?;
    let array_size = if flags & FIELD_REPETITIVE != 0 {
        Some(r.u64()?)
    } else {
        None
    };
    let source = if flags & FIELD_PROJECTED != 0 {
        Some(r.u32()?)
    } else {
        None
    };
    if flags & FIELD_CHECKSUM != 0 {
        let _checksum = r.u32()?;
    }
    Ok(FieldDesc {
        parent,
        role,
        name,
        type_name,
        type_alias,
        array_size,
        source,
    })
}

fn column(r: &mut Reader<'_>) -> Result<ColumnDesc> {
    let kind = r.u16()?;
    let bits = r.u16()?;
    let field = r.u32()?;
    let flags = r.u16()?;
    let representation = r.u16()?;
    let first_element = if flags & COLUMN_DEFERRED != 0 {
        r.i64()?
    } else {
        0
    };
    let range = if flags & COLUMN_RANGE != 0 {
        Some((r.f64()?, r.f64()?))
    } else {
        None
    };
    Ok(ColumnDesc {
        kind,
        bits,
        field,
        representation,
        first_element,
        range,
    })
}

/// Parses the footer envelope's payload.
pub(crate) fn footer(payload: &[u8]) -> Result<Footer> {
    let mut r = Reader::new(payload, "RNTuple footer");
    let (flags, more) = r.feature_flags()?;
    if more {
        return Err(r.error("feature flags beyond bit 62 are set, which this reader does not know"));
    }
    let header_checksum = r.u64()?;
    let (record, outer) = r.record()?;
    // An empty record frame: no schema extension.
    let extension = if r.has_more() {
        schema(&mut r)?
    } else {
        Schema::default()
    };
    r.close_record(record, outer);
    let groups = r.records_of(|r| {
        let min_entry = r.u64()?;
        let entry_span = r.u64()?;
        let clusters = r.u32()?;
        let page_list = r.envelope_link()?;
        Ok(ClusterGroup {
            min_entry,
            entry_span,
            clusters,
            page_list,
        })
    })?;
    Ok(Footer {
        flags,
        header_checksum,
        extension,
        groups,
    })
}

/// Parses a page list envelope's payload; `columns` is the number of physical columns in the
/// schema (header and extension), which no cluster may list more of.
pub(crate) fn page_list(payload: &[u8], columns: usize) -> Result<PageList> {
    let mut r = Reader::new(payload, "RNTuple page list");
    let header_checksum = r.u64()?;
    let summaries = r.records_of(|r| {
        let first_entry = r.u64()?;
        let word = r.u64()?;
        // The entry count in the low 56 bits, flags in the top 8.
        let flags = (word >> 56) as u8;
        if flags & 0x01 != 0 {
            return Err(r.error(
                "a sharded cluster (flag 0x01), which RNTuple 1.0 reserves and this reader \
                 does not read",
            ));
        }
        Ok((first_entry, word & ((1 << 56) - 1)))
    })?;
    let mut index = 0usize;
    let per_cluster = r.list_of(12, |r| {
        index += 1;
        let columns_here = r.list_of(12, cluster_column)?;
        if columns_here.len() > columns {
            return Err(r.error(format!(
                "cluster {} lists {} columns, the schema has {columns}",
                index - 1,
                columns_here.len()
            )));
        }
        Ok(columns_here)
    })?;
    if per_cluster.len() != summaries.len() {
        return Err(r.error(format!(
            "{} cluster summaries but page locations of {} clusters",
            summaries.len(),
            per_cluster.len()
        )));
    }
    let clusters = summaries
        .into_iter()
        .zip(per_cluster)
        .map(|((first_entry, entries), listed)| Cluster {
            first_entry,
            entries,
            columns: listed.into_iter().map(Some).collect(),
        })
        .collect();
    Ok(PageList {
        header_checksum,
        clusters,
    })
}

/// One column's inner list of pages, then its element offset and, unless it is suppressed, its
/// compression settings.
fn cluster_column(r: &mut Reader<'_>) -> Result<ClusterColumn> {
    let (list, outer) = r.list()?;
    if list.items > r.remaining_in_frame() / 16 {
        return Err(r.error(format!("{} pages cannot fit in the page list", list.items)));
    }
    let mut pages = Vec::with_capacity(list.items);
    for _ in 0..list.items {
        let n = r.i32()?;
        let locator = r.locator()?;
        pages.push(PageDesc {
            elements: u64::from(n.unsigned_abs()),
            checksum: n < 0,
            locator,
        });
    }
    let offset = r.i64()?;
    let suppressed = offset < 0;
    let compression = if suppressed { 0 } else { r.u32()? };
    r.close_list(list, outer);
    Ok(ClusterColumn {
        element_offset: offset.unsigned_abs(),
        suppressed,
        compression,
        pages,
    })
}
