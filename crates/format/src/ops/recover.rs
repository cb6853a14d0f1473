//! Scanning a file's records without its footer, and recovering the complete part of a file
//! whose footer or tail was lost (a writer killed before `finish`, a truncated copy).
//!
//! Every record carries its own header and body CRC32 (docs/format.md 3), so a scan from the
//! file header finds every sound record up to the first torn or damaged one. Recovery then keeps,
//! for each tree, the longest run of entries from 0 at whose end every branch's sound baskets end
//! together (every complete cluster, at least), reads the baskets with the branch settings of the
//! tree's settled schema record (3.1), and writes a new file of those records with fresh branch
//! indexes, footer and trailer. Basket and dictionary records are copied byte for byte.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use evtc_codecs::BlockHeader;
use evtc_rac::SeekTable;

use crate::error::{Error, Location, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::{BasketIndex, BasketLoc, FileMeta, TreeMeta, TreeSchema};
use crate::output::Output;
use crate::record::{
    self, FILE_HEADER_LEN, NO_BRANCH, RECORD_HEADER_LEN, RecordHeader, RecordKind, TRAILER_LEN,
    Trailer,
};

/// What a scan of a file's records found.
#[derive(Debug)]
pub struct Scan {
    /// Records whose header and body checksums are sound, in file order, up to `end`.
    pub records: usize,
    /// The offset after the last sound record.
    pub end: u64,
    /// The file's length.
    pub file_len: u64,
    /// Why the scan stopped before the end of the file (a torn or damaged record); `None` when
    /// it stopped at the end, or with fewer bytes left than a record header.
    pub stopped: Option<Error>,
}

/// Reads every record of `source` from the file header on, checking each record's header and
/// body CRC32 (every checksum of the file but the trailer's). Stops at the first record that is
/// torn or damaged (reported in [`Scan::stopped`]), or when fewer bytes than a record header are
/// left (a complete file's 32-byte trailer). Works on files without a footer.
///
/// Memory is one record body at a time, never more than the bytes the file has.
///
/// # Errors
/// The file header is not an evtc file's; I/O errors.
pub fn scan_records<R: ReadAt>(source: &R) -> Result<Scan> {
    scan(source, source.len(), |_, _, _| Ok(()))
}

/// [`scan_records`] of the first `len` bytes of `source` (at most its length): of the version a
/// reader reads ([`FileReader::committed_len`]) when an append to the file was interrupted.
///
/// # Errors
/// As for [`scan_records`].
///
/// [`FileReader::committed_len`]: crate::FileReader::committed_len
pub fn scan_records_until<R: ReadAt>(source: &R, len: u64) -> Result<Scan> {
    scan(source, len.min(source.len()), |_, _, _| Ok(()))
}

/// [`scan_records`], calling `visit` with each sound record's offset, header and body.
fn scan<R: ReadAt>(
    source: &R,
    file_len: u64,
    mut visit: impl FnMut(u64, &RecordHeader, &[u8]) -> Result<()>,
) -> Result<Scan> {
    let io = |e| Error::io(source.path(), e);
    let mut header = [0u8; FILE_HEADER_LEN as usize];
    if file_len < FILE_HEADER_LEN {
        return Err(Error::NotEvtc(format!(
            "{file_len} bytes, fewer than the 16-byte file header"
        )));
    }
    source.read_exact_at(0, &mut header).map_err(io)?;
    record::check_file_header(&header)?;
    let mut offset = FILE_HEADER_LEN;
    let mut records = 0;
    let mut body = Vec::new();
    let stopped = loop {
        if file_len - offset < RECORD_HEADER_LEN as u64 {
            break None;
        }
        let location = Location::at(offset);
        let mut bytes = [0u8; RECORD_HEADER_LEN];
        source.read_exact_at(offset, &mut bytes).map_err(io)?;
        let header = match RecordHeader::decode(&bytes, &location) {
            Ok(h) => h,
            // The trailer of a version that an append followed, or a copy of it (2.4).
            Err(_) if is_trailer(&bytes, offset) => {
                offset += TRAILER_LEN;
                continue;
            }
            Err(e) => break Some(e),
        };
        let body_at = offset + RECORD_HEADER_LEN as u64;
        if header.body_len > file_len - body_at {
            break Some(Error::Truncated {
                what: "record body",
                location,
                needed: header.body_len,
                file_len,
            });
        }
        body.clear();
        body.resize(header.body_len as usize, 0);
        source.read_exact_at(body_at, &mut body).map_err(io)?;
        let computed = evtc_codecs::crc32(&body);
        if computed != header.body_crc {
            break Some(Error::Checksum {
                what: "record body",
                location,
                stored: header.body_crc,
                computed,
            });
        }
        visit(offset, &header, &body)?;
        records += 1;
        offset = body_at + header.body_len;
    };
    Ok(Scan {
        records,
        end: offset,
        file_len,
        stopped,
    })
}

/// Whether `bytes` start with a sound trailer (read at `offset`).
fn is_trailer(bytes: &[u8; RECORD_HEADER_LEN], offset: u64) -> bool {
    let mut trailer = [0u8; TRAILER_LEN as usize];
    trailer.copy_from_slice(&bytes[..TRAILER_LEN as usize]);
    Trailer::decode(&trailer, offset).is_ok()
}

/// What [`recover`] restored, tree by tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The trees, in file order.
    pub trees: Vec<RecoveredTree>,
    /// Bytes of the damaged file read as sound records.
    pub sound_bytes: u64,
    /// Bytes of the damaged file after the last sound record (a torn record, a trailer).
    pub tail_bytes: u64,
    /// Why the scan stopped before the end, if it did.
    pub stopped: Option<String>,
    /// Whether the damaged file had a sound footer (it was complete).
    pub had_footer: bool,
}

/// One tree restored by [`recover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveredTree {
    /// The tree's name.
    pub name: String,
    /// Entries restored (from entry 0).
    pub entries: u64,
    /// Clusters restored.
    pub clusters: usize,
    /// Baskets restored, all branches.
    pub baskets: u64,
    /// Sound baskets found past the restored entries (dropped: some branch lacks them).
    pub dropped_baskets: u64,
    /// Entries some but not all branches had past the restored ones (dropped).
    pub dropped_entries: u64,
    /// Why the tree restores no entries, if it does not.
    pub note: Option<String>,
}

/// A basket found by the scan.
#[derive(Debug, Clone, Copy)]
struct Found {
    offset: u64,
    record_len: u64,
    first_entry: u64,
    /// One past the last entry.
    end: u64,
    raw_len: u64,
}

#[derive(Debug, Default)]
struct FoundTree {
    initial: Option<TreeSchema>,
    settled: Option<TreeSchema>,
    dictionaries: HashMap<u32, (u64, u64)>,
    baskets: HashMap<u32, Vec<Found>>,
}

/// Restores the sound part of `damaged` (a file without a valid trailer or footer, or any evtc
/// file) into a new file at `output`: every tree, with the longest run of entries from 0 that
/// every branch holds in sound baskets ending together; everything after is dropped and
/// reported. The output appears only when complete (and synced to disk); a file already at
/// `output` is replaced only with `overwrite`.
///
/// # Errors
/// [`Error::OutputExists`] for an existing `output` without `overwrite`; [`Error::NotEvtc`] and
/// I/O errors; [`Error::Corrupt`] for sound records that contradict each other (a schema that
/// does not parse, a basket whose sizes do not add up).
pub fn recover(damaged: &Path, output: &Path, overwrite: bool) -> Result<Recovery> {
    let source = LocalFile::open(damaged).map_err(|e| Error::io(Some(damaged), e))?;
    let out = Output::create(output, overwrite).map_err(|e| Error::output(output, e, overwrite))?;
    let file = out
        .file()
        .try_clone()
        .map_err(|e| Error::io(Some(output), e))?;
    let mut sink = std::io::BufWriter::with_capacity(1 << 20, file);
    let recovery = recover_into(&source, &mut sink)?;
    let file = sink
        .into_inner()
        .map_err(|e| Error::io(Some(output), e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(Some(output), e))?;
    out.persist(output, overwrite)
        .map_err(|e| Error::output(output, e, overwrite))?;
    Ok(recovery)
}

/// [`recover`] from any positional source into any writer (which receives a whole evtc file).
///
/// # Errors
/// As for [`recover`].
pub fn recover_into<R: ReadAt, W: Write>(source: &R, output: W) -> Result<Recovery> {
    let mut trees: BTreeMap<u32, FoundTree> = BTreeMap::new();
    let mut had_footer = false;
    // A file whose append was interrupted: its last complete version, not the append's bytes.
    let len = crate::reader::last_complete(source, crate::schema::DEFAULT_MAX_BASKET_BYTES)
        .map_or(source.len(), |(at, _)| at + TRAILER_LEN);
    let scan = scan(source, len, |offset, header, body| {
        let location = || Location::at(offset);
        let tree = trees.entry(header.tree).or_default();
        match header.kind {
            RecordKind::TreeSchema => {
                let schema: TreeSchema = postcard::from_bytes(body).map_err(|e| {
                    Error::corrupt(location(), format!("tree schema does not parse: {e}"))
                })?;
                if header.basket_kind == 1 {
                    tree.settled = Some(schema);
                } else {
                    tree.initial = Some(schema);
                }
            }
            RecordKind::Dictionary => {
                tree.dictionaries.insert(
                    header.branch,
                    (offset, RECORD_HEADER_LEN as u64 + header.body_len),
                );
            }
            RecordKind::Basket => {
                let raw_len = basket_raw_len(header.basket_kind, body)
                    .map_err(|reason| Error::corrupt(location(), reason))?;
                let end = header
                    .first_entry
                    .checked_add(header.entries)
                    .ok_or_else(|| Error::corrupt(location(), "basket entries overflow"))?;
                tree.baskets.entry(header.branch).or_default().push(Found {
                    offset,
                    record_len: RECORD_HEADER_LEN as u64 + header.body_len,
                    first_entry: header.first_entry,
                    end,
                    raw_len,
                });
            }
            RecordKind::Footer => had_footer = true,
            RecordKind::BranchIndex | RecordKind::EventIndex => {}
        }
        Ok(())
    })?;
    let sound_bytes = scan.end - FILE_HEADER_LEN;
    // Tree numbers are positions in the footer: keep the trees numbered 0, 1, ... with a schema.
    let count = trees
        .iter()
        .enumerate()
        .take_while(|(i, (no, t))| {
            u32::try_from(*i) == Ok(**no) && (t.initial.is_some() || t.settled.is_some())
        })
        .count();

    let mut w = Sink {
        out: output,
        offset: 0,
    };
    w.write(&record::file_header())?;
    let mut metas = Vec::new();
    let mut report = Vec::new();
    let mut copy = Vec::new();
    for (no, found) in trees.into_iter().take(count) {
        let (meta, tree) = restore_tree(no, found, source, &mut w, &mut copy)?;
        metas.push(meta);
        report.push(tree);
    }
    let meta = FileMeta {
        major: record::MAJOR,
        minor: record::MINOR,
        writer: concat!("evtc-format ", env!("CARGO_PKG_VERSION"), " (recover)").into(),
        trees: metas,
        extensions: Vec::new(),
    };
    let body = postcard::to_stdvec(&meta).expect("metadata serializes");
    let footer = record::encode_record(
        RecordHeader::metadata(RecordKind::Footer, 0, NO_BRANCH),
        &body,
    );
    let trailer = Trailer {
        footer_offset: w.offset,
        footer_len: footer.len() as u64,
    };
    w.write(&footer)?;
    w.write(&trailer.encode())?;
    w.out.flush().map_err(|e| Error::io(None, e))?;
    Ok(Recovery {
        trees: report,
        sound_bytes,
        tail_bytes: source.len() - scan.end,
        stopped: scan.stopped.map(|e| e.to_string()),
        had_footer,
    })
}

/// Writes one tree's restored records; returns its footer entry and report.
fn restore_tree<R: ReadAt, W: Write>(
    no: u32,
    mut found: FoundTree,
    source: &R,
    w: &mut Sink<W>,
    copy: &mut Vec<u8>,
) -> Result<(TreeMeta, RecoveredTree)> {
    let settled = found.settled.is_some();
    let schema = found
        .settled
        .take()
        .or(found.initial.take())
        .expect("only trees with a schema are restored");
    let branches = schema.branches.len();
    // Each branch's sound baskets, contiguous from entry 0.
    let mut runs: Vec<Vec<Found>> = Vec::with_capacity(branches);
    let mut total_found = 0u64;
    for b in 0..branches {
        let mut baskets = found.baskets.remove(&(b as u32)).unwrap_or_default();
        total_found += baskets.len() as u64;
        baskets.sort_by_key(|f| f.first_entry);
        let mut next = 0;
        let run: Vec<Found> = baskets
            .into_iter()
            .take_while(|f| {
                let ok = f.first_entry == next;
                next = f.end;
                ok
            })
            .collect();
        runs.push(run);
    }
    let ends: Vec<Vec<u64>> = runs
        .iter()
        .map(|run| run.iter().map(|f| f.end).collect())
        .collect();
    // Entry counts at which every branch's baskets end together.
    let common: Vec<u64> = match ends.split_first() {
        Some((first, rest)) if settled => first
            .iter()
            .copied()
            .filter(|e| rest.iter().all(|r| r.binary_search(e).is_ok()))
            .collect(),
        _ => Vec::new(),
    };
    let entries = common.last().copied().unwrap_or(0);
    let furthest = ends
        .iter()
        .filter_map(|e| e.last())
        .copied()
        .max()
        .unwrap_or(0);
    let mut metas = Vec::with_capacity(branches);
    let mut kept = 0u64;
    for (b, (mut meta, run)) in schema.branches.into_iter().zip(runs).enumerate() {
        let b = b as u32;
        if meta.dictionary_len > 0 {
            let (offset, len) = found.dictionaries.get(&b).copied().ok_or_else(|| {
                Error::corrupt(
                    Location {
                        tree: Some(schema.name.clone()),
                        branch: Some(meta.name.clone()),
                        ..Location::at(meta.dictionary_offset)
                    },
                    "the branch's dictionary record is not among the sound records",
                )
            })?;
            meta.dictionary_offset = w.offset;
            meta.dictionary_len = len;
            w.copy_from(source, offset, len, copy)?;
        }
        let size = meta.dtype.scalar().size() as u64;
        let mut index = BasketIndex {
            baskets: Vec::new(),
        };
        let (mut raw, mut stored) = (0u64, 0u64);
        for f in run.iter().take_while(|f| f.end <= entries) {
            if f.raw_len % size != 0 {
                return Err(Error::corrupt(
                    Location {
                        tree: Some(schema.name.clone()),
                        branch: Some(meta.name.clone()),
                        ..Location::at(f.offset)
                    },
                    format!("{} value bytes are not whole {size}-byte values", f.raw_len),
                ));
            }
            index.baskets.push(BasketLoc {
                offset: w.offset,
                record_len: f.record_len,
                first_entry: f.first_entry,
                entries: f.end - f.first_entry,
                elements: f.raw_len / size,
            });
            let counts = if meta.dtype.is_variable() {
                (f.end - f.first_entry).saturating_mul(4)
            } else {
                0
            };
            raw = raw.saturating_add(f.raw_len).saturating_add(counts);
            stored += f.record_len;
            w.copy_from(source, f.offset, f.record_len, copy)?;
        }
        kept += index.baskets.len() as u64;
        meta.entries = entries;
        meta.raw_bytes = raw;
        meta.stored_bytes = stored;
        meta.baskets = index.baskets.len() as u64;
        let body = postcard::to_stdvec(&index).expect("index serializes");
        let record = record::encode_record(
            RecordHeader::metadata(RecordKind::BranchIndex, no, b),
            &body,
        );
        meta.index_offset = w.offset;
        meta.index_len = record.len() as u64;
        w.write(&record)?;
        metas.push(meta);
    }
    let tree = RecoveredTree {
        name: schema.name.clone(),
        entries,
        clusters: common.len(),
        baskets: kept,
        dropped_baskets: total_found - kept,
        dropped_entries: furthest - entries,
        note: if !settled && total_found > 0 {
            Some(
                "the tree's settled schema record is missing (written after its first cluster): \
                 its baskets cannot be read"
                    .to_owned(),
            )
        } else if entries == 0 && furthest > 0 {
            Some(format!(
                "no cluster is whole: the records end inside the first cluster (entries \
                 0..{furthest} of some branches only), and entries are restored a whole cluster \
                 at a time; files written with smaller clusters (--cluster-size) lose less"
            ))
        } else {
            None
        },
    };
    let meta = TreeMeta {
        name: schema.name,
        entries,
        cluster_ends: common,
        branches: metas,
        extensions: Vec::new(),
    };
    Ok((meta, tree))
}

/// The uncompressed bytes of a basket's values, from its first block header or its RAC seek
/// table.
fn basket_raw_len(basket_kind: u8, body: &[u8]) -> std::result::Result<u64, String> {
    match basket_kind {
        0 => BlockHeader::parse(body)
            .map(|h| h.uncompressed_len)
            .map_err(|e| format!("basket's first block: {e}")),
        1 => {
            let payload = body
                .get(8..)
                .ok_or("a random-access basket shorter than its payload length")?;
            SeekTable::parse(payload)
                .map(|(table, _)| table.raw_len())
                .map_err(|e| format!("basket's seek table: {e}"))
        }
        kind => Err(format!("unknown basket kind {kind}")),
    }
}

/// The recovered file being written.
struct Sink<W> {
    out: W,
    offset: u64,
}

impl<W: Write> Sink<W> {
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(|e| Error::io(None, e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Copies `len` bytes at `offset` of `source` (a record the scan checked).
    fn copy_from<R: ReadAt>(
        &mut self,
        source: &R,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        buf.clear();
        buf.resize(len as usize, 0);
        source
            .read_exact_at(offset, buf)
            .map_err(|e| Error::io(source.path(), e))?;
        self.write(buf)
    }
}
