//! Reading evtc files: [`FileReader`] (opening and validating a file, reading its records) here;
//! [`TreeReader`] and [`BranchReader`] in `tree`, bulk reads in `bulk`, [`BranchCursor`] in
//! `cursor`, [`RowReader`] in `rows`, basket decoding in `decode`, the caches that a file's reads
//! and cursors share in `cache`.

use std::cell::RefCell;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use evtc_codecs::{Algorithm, BlockDecoder, DecoderDictionary, PrefixDictionary};
use evtc_rac::DecodeDictionary;
use rayon::prelude::*;

use crate::error::{Error, Location, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::{
    BasketIndex, Boundaries, DataType, EXT_INDEX_SEGMENTS, EXT_RAC_ENTRY_SIZES,
    EXT_RAC_LZMA_DICTIONARY, EXT_SHAPE, FileMeta, TreeMeta,
};
use crate::record::{
    self, FILE_HEADER_LEN, RECORD_HEADER_LEN, RecordHeader, RecordKind, TRAILER_LEN,
};
use crate::schema::DEFAULT_MAX_BASKET_BYTES;

mod bulk;
mod cache;
mod chain;
mod cursor;
mod decode;
mod friends;
mod rows;
mod take;
mod tree;
mod versions;

pub(crate) use versions::last_complete;

pub use bulk::Jagged;
use cache::SharedCache;
pub use chain::{ChainedRows, ChainedTrees};
use cursor::BasketTable;
pub use cursor::BranchCursor;
pub(crate) use decode::decode_body;
#[cfg(feature = "fuzzing")]
pub(crate) use decode::split_rac;
pub use friends::FriendTrees;
pub use rows::{RowReader, Value, ValueRef};
pub use tree::{BranchReader, RawBasket, TreeReader};

use decode::{BlockError, Counts, check_entry_sizes_flag, decode_block_into};

/// The required branch extensions this reader knows.
const KNOWN_REQUIRED: [&str; 3] = [
    EXT_INDEX_SEGMENTS,
    EXT_RAC_ENTRY_SIZES,
    EXT_RAC_LZMA_DICTIONARY,
];

/// The most a record of `algorithm` can expand when decoded (uncompressed bytes per stored byte),
/// from each codec's format: LZ4 needs a byte per 255 bytes of match (256x), deflate at least 2
/// bits per 258-byte match (1032x), zstd at least 4 bytes per 128 KiB block (an RLE block,
/// 32768x), xz's LZMA2 at least 11 bytes (chunk header, range coder flush) per 2 MiB chunk
/// (under 2^18x; xz itself reaches 6,850x on zeros). Stored blocks, shuffles and seek tables
/// expand less; 1 MiB of slack covers headers and per-entry counts of tiny records.
fn max_expansion(algorithm: u8) -> u64 {
    Algorithm::from_id(algorithm)
        .unwrap_or(Algorithm::Lzma)
        .properties()
        .max_expansion
}

/// The pool of `threads` threads that every reader of the process asking for that many shares
/// (evtc files' readers, and other readers given it, such as the Python package's of ROOT
/// files): files opened for one read each (as Python code often opens them) then reuse warm
/// threads and the memory their allocator keeps, instead of starting threads of their own whose
/// first writes fault fresh pages in. Made at the first call for a thread count, kept for the
/// process's life. `None` if the threads cannot be started.
pub fn shared_pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    /// The pools made so far, with their thread counts.
    type Pools = std::sync::Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>>;
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, pool)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(Arc::clone(pool));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("evtc-read-{i}-of-{threads}"))
        .build()
        .ok()
        .map(Arc::new)?;
    pools.push((threads, Arc::clone(&pool)));
    Some(pool)
}

/// Reader settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    verify_checksums: bool,
    threads: usize,
    max_basket_bytes: u64,
    memory_map: bool,
    basket_cache_bytes: usize,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            verify_checksums: true,
            threads: crate::cores::cores(),
            max_basket_bytes: DEFAULT_MAX_BASKET_BYTES,
            memory_map: false,
            basket_cache_bytes: DEFAULT_BASKET_CACHE_BYTES,
        }
    }
}

impl ReadOptions {
    /// Whether to verify record checksums (default: yes). Structure is always checked.
    pub fn verify_checksums(mut self, verify: bool) -> ReadOptions {
        self.verify_checksums = verify;
        self
    }

    /// Threads that decompress baskets in bulk reads (default: all cores; 1 reads on the calling
    /// thread). The readers of a process that ask for the same count share one pool of threads,
    /// started by the first.
    pub fn threads(mut self, threads: usize) -> ReadOptions {
        self.threads = threads.max(1);
        self
    }

    /// The largest uncompressed basket (values and per-entry counts) to decode (default
    /// [`DEFAULT_MAX_BASKET_BYTES`], 256 MiB): a branch whose index claims a larger basket is
    /// refused with [`Error::BasketTooLarge`] before anything is allocated for it, so a lying
    /// index or a decompression bomb cannot take more memory than this per basket.
    pub fn max_basket_bytes(mut self, bytes: u64) -> ReadOptions {
        self.max_basket_bytes = bytes.max(1);
        self
    }

    /// The most bytes of decoded baskets that range reads keep for each other (default
    /// [`DEFAULT_BASKET_CACHE_BYTES`], 128 MiB; 0 keeps none). A range read that uses a basket
    /// only in part (as each step of a loop over consecutive ranges does with the basket it ends
    /// inside) keeps its decoded values, and the next read starting in that basket copies them
    /// instead of decoding the basket again; the oldest are dropped first. Reads of whole
    /// baskets, and RAC baskets (which decode only the units a range needs), keep none.
    pub fn basket_cache_bytes(mut self, bytes: usize) -> ReadOptions {
        self.basket_cache_bytes = bytes;
        self
    }

    /// Whether [`FileReader::open_with`] memory-maps the file (default: no, positional reads).
    ///
    /// A mapped file is read without a system call or a copy per read: random single-entry reads
    /// of RAC branches, whose cost is otherwise a third in the system call, gain most; bulk reads
    /// check and decode each basket where the map holds it, instead of copying it out of the page
    /// cache first (most of what a bulk read of a fast codec's file spends beyond decoding). Other
    /// sources ([`FileReader::from_source`]) ignore it.
    ///
    /// # Safety
    /// As for [`LocalFile::open_mapped`]: the file must not be truncated or written to while the
    /// reader lives (a truncated mapped file ends the process with `SIGBUS`).
    pub unsafe fn memory_map(mut self, map: bool) -> ReadOptions {
        self.memory_map = map;
        self
    }
}

/// An open evtc file.
///
/// Opening reads the trailer and the footer only; a branch's basket index is read the first time
/// the branch is read, and its baskets only when their entries are.
///
/// ```no_run
/// use evtc_format::FileReader;
/// let file = FileReader::open("events.evtc")?;
/// for tree in file.trees() {
///     println!("{}: {} entries, {} branches", tree.name, tree.entries, tree.branches.len());
/// }
/// let events = file.tree("Events")?;
/// let n_muon: Vec<u32> = events.branch("nMuon")?.read()?;
/// let muon_pt = events.branch("Muon_pt")?.read_jagged::<f32>()?;
/// # Ok::<(), evtc_format::Error>(())
/// ```
pub struct FileReader<R: ReadAt = LocalFile> {
    source: R,
    meta: FileMeta,
    options: ReadOptions,
    /// End of the record region (the footer's offset).
    records_end: u64,
    /// The length of the version read: the file's, or less after an interrupted append.
    committed_len: u64,
    indexes: Vec<Vec<OnceLock<Arc<BasketIndex>>>>,
    dictionaries: Vec<Vec<OnceLock<Arc<ReaderDictionary>>>>,
    /// The process's pool of this many threads ([`shared_pool`]); none for one thread.
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The entry offsets of counter branches from recent bulk reads, so that the jagged
    /// branches sharing a counter decode it once.
    counter_cache: SharedCache<CounterKey, [u64]>,
    /// The parsed seek tables of the RAC baskets that cursors have read, shared by every cursor:
    /// a cursor made for one entry (by a task or a thread of its own) finds its basket's table
    /// without reading and parsing it again.
    tables: SharedCache<TableKey, BasketTable>,
    /// Baskets that range reads decoded and used in part ([`ReadOptions::basket_cache_bytes`]).
    baskets: SharedCache<BasketKey, DecodedBasket>,
}

/// A basket's decoded values (their little-endian bytes) and per-entry counts, as a range read
/// that used it in part left it for the next.
pub(super) struct DecodedBasket {
    pub(super) values: Vec<u8>,
    pub(super) counts: Counts,
}

/// The default of [`ReadOptions::basket_cache_bytes`]: 128 MiB.
pub const DEFAULT_BASKET_CACHE_BYTES: usize = 128 << 20;

/// Appends to `offsets` the running sums of `counts`, continuing from its last value (0 when
/// empty). Returns false, having pushed only part, if a sum overflows (counter values read from
/// disk may be anything).
fn push_running_sums(offsets: &mut Vec<u64>, counts: impl IntoIterator<Item = u64>) -> bool {
    let mut at = offsets.last().copied().unwrap_or(0);
    for c in counts {
        let Some(next) = at.checked_add(c) else {
            return false;
        };
        at = next;
        offsets.push(at);
    }
    true
}

/// Appends to `offsets` the running sums of the `u32` counts of one basket or more, continuing
/// from its last value (0 when empty): [`push_running_sums`] in a tight loop where no sum can
/// overflow (always, unless `offsets` already ends near 2^64).
fn push_count_sums(offsets: &mut Vec<u64>, counts: &[u32]) -> bool {
    let at = offsets.last().copied().unwrap_or(0);
    let cannot_overflow = (counts.len() as u64)
        .checked_mul(u64::from(u32::MAX))
        .and_then(|most| most.checked_add(at))
        .is_some();
    if !cannot_overflow {
        return push_running_sums(offsets, counts.iter().map(|&c| u64::from(c)));
    }
    let first = offsets.len();
    offsets.resize(first + counts.len(), 0);
    fill_count_sums(at, counts, &mut offsets[first..]);
    true
}

/// Writes the running sums of `counts`, continuing from `at`, into `out` (as long as `counts`) and
/// returns the last; the caller has made sure that no sum overflows.
fn fill_count_sums(mut at: u64, counts: &[u32], out: &mut [u64]) -> u64 {
    for (offset, &count) in out.iter_mut().zip(counts) {
        at += u64::from(count);
        *offset = at;
    }
    at
}

/// Which counter-branch read a counter cache entry holds: tree, branch, first and end entry.
type CounterKey = (usize, usize, u64, u64);

/// The most bytes of counter offsets a file keeps (16 Mi entries).
const MAX_COUNTER_BYTES: usize = 128 << 20;

/// Which RAC basket a table cache entry is the seek table of: tree, branch, basket.
type TableKey = (usize, usize, usize);

/// Which basket a basket cache entry holds: tree, branch, basket.
type BasketKey = (usize, usize, usize);

/// The most bytes of parsed seek tables a file keeps (about 9,000 baskets of 128 units).
const MAX_TABLE_BYTES: usize = 64 << 20;

/// A branch's RAC dictionary, read on first use.
enum ReaderDictionary {
    Zstd(DecoderDictionary),
    Prefix(PrefixDictionary),
}

impl ReaderDictionary {
    fn as_decode(&self) -> DecodeDictionary<'_> {
        match self {
            ReaderDictionary::Zstd(d) => DecodeDictionary::Zstd(d),
            ReaderDictionary::Prefix(d) => DecodeDictionary::Prefix(d),
        }
    }
}

impl<R: ReadAt> std::fmt::Debug for FileReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("path", &self.source.path())
            .field("trees", &self.meta.trees.len())
            .finish_non_exhaustive()
    }
}

impl FileReader<LocalFile> {
    /// Opens the file at `path` with default options.
    ///
    /// # Errors
    /// [`Error::Io`], [`Error::NotEvtc`], [`Error::UnsupportedVersion`], or a corruption error.
    pub fn open(path: impl AsRef<Path>) -> Result<FileReader<LocalFile>> {
        FileReader::open_with(path, ReadOptions::default())
    }

    /// Opens the file at `path`.
    ///
    /// # Errors
    /// As for [`FileReader::open`].
    pub fn open_with(
        path: impl AsRef<Path>,
        options: ReadOptions,
    ) -> Result<FileReader<LocalFile>> {
        let path = path.as_ref();
        let source = if options.memory_map {
            // SAFETY: whoever set `memory_map` took on its contract (`ReadOptions::memory_map`).
            unsafe { LocalFile::open_mapped(path) }
        } else {
            LocalFile::open(path)
        };
        let source = source.map_err(|e| Error::io(Some(path), e))?;
        FileReader::from_source(source, options)
    }
}

thread_local! {
    static DECODER: RefCell<BlockDecoder> = RefCell::new(BlockDecoder::new().verify_checksums(false));
    /// Basket records are read into this buffer, reused so that only its growth is zero-filled.
    static RECORD_BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl<R: ReadAt> FileReader<R> {
    /// Opens an evtc file held by any [`ReadAt`] source (a buffer, a custom backend).
    ///
    /// # Errors
    /// As for [`FileReader::open`].
    pub fn from_source(source: R, options: ReadOptions) -> Result<FileReader<R>> {
        let file_len = source.len();
        if file_len < FILE_HEADER_LEN + TRAILER_LEN {
            return Err(Error::NotEvtc(format!(
                "{file_len} bytes is too short for an evtc file"
            )));
        }
        let mut header = [0u8; FILE_HEADER_LEN as usize];
        source
            .read_exact_at(0, &mut header)
            .map_err(|e| Error::io(source.path(), e))?;
        record::check_file_header(&header)?;
        let (trailer_at, trailer) = versions::last_complete(&source, options.max_basket_bytes)?;
        let location = Location::at(trailer.footer_offset);
        let pool = if options.threads > 1 {
            shared_pool(options.threads)
        } else {
            None
        };
        let baskets = SharedCache::new(options.basket_cache_bytes);
        let mut reader = FileReader {
            source,
            meta: FileMeta {
                major: 0,
                minor: 0,
                writer: String::new(),
                trees: Vec::new(),
                extensions: Vec::new(),
            },
            options,
            records_end: trailer.footer_offset,
            committed_len: trailer_at + TRAILER_LEN,
            indexes: Vec::new(),
            dictionaries: Vec::new(),
            pool,
            counter_cache: SharedCache::new(MAX_COUNTER_BYTES),
            tables: SharedCache::new(MAX_TABLE_BYTES),
            baskets,
        };
        let (_, body) = reader.read_record(
            trailer.footer_offset,
            trailer.footer_len,
            RecordKind::Footer,
            &location,
            file_len,
        )?;
        let meta: FileMeta = postcard::from_bytes(&body).map_err(|e| {
            Error::corrupt(location.clone(), format!("the footer does not decode: {e}"))
        })?;
        validate_meta(&meta, reader.records_end)?;
        reader.indexes = meta
            .trees
            .iter()
            .map(|t| t.branches.iter().map(|_| OnceLock::new()).collect())
            .collect();
        reader.dictionaries = meta
            .trees
            .iter()
            .map(|t| t.branches.iter().map(|_| OnceLock::new()).collect())
            .collect();
        reader.meta = meta;
        Ok(reader)
    }

    /// The footer: every tree and branch with types, settings and sizes.
    pub fn meta(&self) -> &FileMeta {
        &self.meta
    }

    /// The length of the file's version this reader reads: the file's length, or less when an
    /// append to the file was interrupted (its bytes after this length are not part of any
    /// version; the next append, or `evtc recover`, removes them). docs/format.md 2.4.
    pub fn committed_len(&self) -> u64 {
        self.committed_len
    }

    /// The path of the file read, when its source has one (a local file's).
    pub fn path(&self) -> Option<&Path> {
        self.source.path()
    }

    /// The trees.
    pub fn trees(&self) -> &[TreeMeta] {
        &self.meta.trees
    }

    /// The tree named `name`.
    ///
    /// # Errors
    /// [`Error::NoSuchTree`].
    pub fn tree(&self, name: &str) -> Result<TreeReader<'_, R>> {
        let tree = self
            .meta
            .trees
            .iter()
            .position(|t| t.name == name)
            .ok_or_else(|| Error::NoSuchTree {
                name: name.to_owned(),
                available: self
                    .meta
                    .trees
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok(TreeReader { file: self, tree })
    }

    /// The bytes at `offset..offset + len` of the record region, read at once into `buffer`
    /// (reused): for reading many neighbouring records in one go (a merge's cluster of baskets,
    /// a tree's indexes), each then checked by [`check_record`].
    pub(crate) fn read_span<'b>(
        &self,
        offset: u64,
        len: u64,
        buffer: &'b mut Vec<u8>,
    ) -> Result<&'b [u8]> {
        let location = Location {
            tree: None,
            branch: None,
            basket: None,
            offset,
        };
        if offset.checked_add(len).is_none_or(|e| e > self.records_end) {
            return Err(Error::Truncated {
                what: "records",
                location,
                needed: offset.saturating_add(len),
                file_len: self.records_end,
            });
        }
        let len = usize::try_from(len)
            .map_err(|_| Error::corrupt(location.clone(), "a span too large for memory"))?;
        if let Some(more) = len.checked_sub(buffer.len()) {
            buffer.try_reserve_exact(more).map_err(|_| {
                Error::corrupt(location, format!("cannot allocate {len} bytes for records"))
            })?;
        }
        // Reused: only its growth is zeroed.
        let bytes = evtc_codecs::scratch(buffer, len);
        self.source
            .read_exact_at(offset, bytes)
            .map_err(|e| Error::io(self.source.path(), e))?;
        Ok(bytes)
    }

    /// The end of the record region: the footer's offset.
    pub(crate) fn records_end(&self) -> u64 {
        self.records_end
    }

    /// Whether the reader checks body checksums.
    pub(crate) fn verifies(&self) -> bool {
        self.options.verify_checksums
    }

    /// Reads the record at `offset..offset + len`, checks its header (kind, lengths, CRCs) and
    /// returns the header and body.
    fn read_record(
        &self,
        offset: u64,
        len: u64,
        kind: RecordKind,
        location: &Location,
        end: u64,
    ) -> Result<(RecordHeader, Body<'_>)> {
        self.read_record_into(offset, len, kind, location, end, Vec::new())
    }

    /// As [`FileReader::read_record`], reading into `buffer` (reused: only growth is zero-filled),
    /// or borrowing the record from the source when it holds the bytes in memory (a mapped file,
    /// a buffer): the record is then checked where it lies, without a copy.
    fn read_record_into(
        &self,
        offset: u64,
        len: u64,
        kind: RecordKind,
        location: &Location,
        end: u64,
        buffer: Vec<u8>,
    ) -> Result<(RecordHeader, Body<'_>)> {
        if len < RECORD_HEADER_LEN as u64 || offset.checked_add(len).is_none_or(|e| e > end) {
            return Err(Error::Truncated {
                what: "record",
                location: location.clone(),
                needed: offset.saturating_add(len.max(RECORD_HEADER_LEN as u64)),
                file_len: end,
            });
        }
        let len_usize = usize::try_from(len)
            .map_err(|_| Error::corrupt(location.clone(), "record too large for memory"))?;
        let mut buffer = buffer;
        let borrowed = self.source.bytes_at(offset, len_usize);
        let bytes = match borrowed {
            Some(bytes) => bytes,
            None => {
                if let Some(more) = len_usize.checked_sub(buffer.len()) {
                    buffer.try_reserve_exact(more).map_err(|_| {
                        Error::corrupt(
                            location.clone(),
                            format!("cannot allocate {len} bytes for a record"),
                        )
                    })?;
                }
                let bytes = evtc_codecs::scratch(&mut buffer, len_usize);
                self.source
                    .read_exact_at(offset, bytes)
                    .map_err(|e| Error::io(self.source.path(), e))?;
                bytes
            }
        };
        let head: &[u8; RECORD_HEADER_LEN] = bytes[..RECORD_HEADER_LEN]
            .try_into()
            .expect("length checked");
        let header = RecordHeader::decode(head, location)?;
        if header.kind != kind {
            return Err(Error::corrupt(
                location.clone(),
                format!("expected a {kind:?} record, found {:?}", header.kind),
            ));
        }
        if header.body_len != len - RECORD_HEADER_LEN as u64 {
            return Err(Error::corrupt(
                location.clone(),
                format!(
                    "record body is {} bytes but {} were expected",
                    header.body_len,
                    len - RECORD_HEADER_LEN as u64
                ),
            ));
        }
        let bytes = Body {
            buffer,
            borrowed,
            len: len_usize,
        };
        if self.options.verify_checksums {
            let computed = evtc_codecs::crc32(&bytes);
            if computed != header.body_crc {
                return Err(Error::Checksum {
                    what: "record body",
                    location: location.clone(),
                    stored: header.body_crc,
                    computed,
                });
            }
        }
        Ok((header, bytes))
    }

    /// Runs `f` on the file's thread pool when it has one (more than one thread asked, see
    /// [`FileReader::threads`]), else on the calling thread: for a caller that reads several
    /// branches at once (with rayon's parallel iterators in `f`), so that the reads of baskets
    /// within each branch share the same threads instead of waiting on a pool of their own.
    /// Without a pool, parallel iterators in `f` run on rayon's global pool: read sequentially
    /// then.
    pub fn install<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    /// The threads reads use: those of the file's pool, or 1.
    pub fn threads(&self) -> usize {
        self.pool
            .as_ref()
            .map_or(1, |pool| pool.current_num_threads())
    }

    /// `f` over `items` with their positions: on the file's pool when it has one (more than
    /// one thread asked), else on the calling thread, in order.
    fn map_indexed<I, O, F>(&self, items: Vec<I>, f: F) -> Vec<O>
    where
        I: Send,
        O: Send,
        F: Fn(usize, I) -> O + Sync + Send,
    {
        match &self.pool {
            Some(pool) if items.len() > 1 => pool.install(|| {
                items
                    .into_par_iter()
                    .enumerate()
                    .map(|(j, item)| f(j, item))
                    .collect()
            }),
            _ => items
                .into_iter()
                .enumerate()
                .map(|(j, item)| f(j, item))
                .collect(),
        }
    }
}

/// Checks `record`, a whole record read at `location` (as [`FileReader::read_span`] gives
/// them): its header (magic, CRC), its kind, its body's length and, with `verify`, its body's
/// CRC. Returns the header.
pub(crate) fn check_record(
    record: &[u8],
    kind: RecordKind,
    location: &Location,
    verify: bool,
) -> Result<RecordHeader> {
    let head: &[u8; RECORD_HEADER_LEN] = record
        .get(..RECORD_HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or_else(|| Error::corrupt(location.clone(), "a record shorter than its header"))?;
    let header = RecordHeader::decode(head, location)?;
    if header.kind != kind {
        return Err(Error::corrupt(
            location.clone(),
            format!("expected a {kind:?} record, found {:?}", header.kind),
        ));
    }
    let body = &record[RECORD_HEADER_LEN..];
    if header.body_len != body.len() as u64 {
        return Err(Error::corrupt(
            location.clone(),
            format!(
                "record body is {} bytes but {} were expected",
                header.body_len,
                body.len()
            ),
        ));
    }
    if verify {
        let computed = evtc_codecs::crc32(body);
        if computed != header.body_crc {
            return Err(Error::Checksum {
                what: "record body",
                location: location.clone(),
                stored: header.body_crc,
                computed,
            });
        }
    }
    Ok(header)
}

/// How a basket body is laid out.
#[derive(Clone)]
pub(crate) enum BasketKind<'d> {
    /// Basket kind 0: compressed blocks.
    Blocks,
    /// Basket kind 1: a RAC payload, with the branch's dictionary if it has one, and the
    /// basket-local entries wanted (all when `None`).
    Rac(Option<&'d DecodeDictionary<'d>>, Option<Range<usize>>),
}

/// A record read whole, copied into a reused buffer or borrowed from the source; derefs to its
/// body.
struct Body<'s> {
    /// The record's bytes when copied, then whatever the reused buffer held beyond them.
    buffer: Vec<u8>,
    /// The record's bytes when the source holds them in memory (then `buffer` is only kept).
    borrowed: Option<&'s [u8]>,
    /// The record's length.
    len: usize,
}

impl Body<'_> {
    /// The buffer, for the next record to reuse.
    fn into_buffer(self) -> Vec<u8> {
        self.buffer
    }
}

impl std::ops::Deref for Body<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        let record = self.borrowed.unwrap_or_else(|| &self.buffer[..self.len]);
        &record[RECORD_HEADER_LEN..]
    }
}

/// Checks the footer's internal consistency (docs/format.md 4.1).
fn validate_meta(meta: &FileMeta, records_end: u64) -> Result<()> {
    if meta.major != record::MAJOR {
        return Err(Error::UnsupportedVersion {
            major: meta.major,
            minor: meta.minor,
            supported: record::MAJOR,
        });
    }
    for ext in meta
        .extensions
        .iter()
        .chain(meta.trees.iter().flat_map(|t| &t.extensions))
    {
        if ext.required {
            return Err(Error::RequiredExtension {
                key: ext.key.clone(),
            });
        }
    }
    for tree in &meta.trees {
        let location = |branch: Option<&str>| Location {
            tree: Some(tree.name.clone()),
            branch: branch.map(str::to_owned),
            basket: None,
            offset: records_end,
        };
        let ends = &tree.cluster_ends;
        if ends.windows(2).any(|w| w[0] >= w[1])
            || ends.last().copied().unwrap_or(0) != tree.entries
            || ends.first() == Some(&0)
        {
            return Err(Error::corrupt(
                location(None),
                "cluster boundaries are not increasing up to the entry count",
            ));
        }
        let mut positions: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(tree.branches.len());
        for (i, b) in tree.branches.iter().enumerate() {
            if let Some(ext) = b
                .extensions
                .iter()
                .find(|e| e.required && !KNOWN_REQUIRED.contains(&e.key.as_str()))
            {
                return Err(Error::RequiredExtension {
                    key: ext.key.clone(),
                });
            }
            let lzma_dictionary = b.rac
                && b.dictionary_len != 0
                && Algorithm::from_id(b.codec).ok() == Some(Algorithm::Lzma);
            let marked = b.rac_lzma_dictionary();
            if lzma_dictionary != marked {
                let reason = if marked {
                    format!("extension {EXT_RAC_LZMA_DICTIONARY} without an lzma RAC dictionary")
                } else {
                    format!("an lzma RAC dictionary without extension {EXT_RAC_LZMA_DICTIONARY}")
                };
                return Err(Error::corrupt(location(Some(&b.name)), reason));
            }
            if b.extensions.iter().any(|e| e.key == EXT_SHAPE) && b.shape().is_none() {
                return Err(Error::corrupt(
                    location(Some(&b.name)),
                    "its shape is not two or more dimensions whose product is its array length",
                ));
            }
            if b.rac_entry_sizes() && !(b.rac && b.boundaries == Boundaries::Counts) {
                return Err(Error::corrupt(
                    location(Some(&b.name)),
                    "only RAC branches with boundaries counts store entry sizes in their units",
                ));
            }
            if positions.insert(&b.name, i).is_some() {
                return Err(Error::corrupt(
                    location(Some(&b.name)),
                    "two branches have this name",
                ));
            }
            if b.entries != tree.entries {
                return Err(Error::corrupt(
                    location(Some(&b.name)),
                    format!(
                        "branch has {} entries, its tree {}",
                        b.entries, tree.entries
                    ),
                ));
            }
            if b.index_offset < FILE_HEADER_LEN
                || b.index_offset
                    .checked_add(b.index_len)
                    .is_none_or(|e| e > records_end)
            {
                return Err(Error::corrupt(
                    location(Some(&b.name)),
                    "basket index lies outside the records",
                ));
            }
            let fixed = !b.dtype.is_variable();
            let ok = match b.boundaries {
                Boundaries::Fixed => fixed,
                // Random-access baskets store counts, never offsets (docs/format.md 3.3).
                Boundaries::Offsets => !fixed && !b.rac,
                Boundaries::Counts => !fixed,
                Boundaries::None => !fixed && b.counter.is_some(),
            };
            if !ok || matches!(b.dtype, DataType::FixedArray(_, 0)) {
                return Err(Error::corrupt(
                    location(Some(&b.name)),
                    format!("type {} with boundaries {}", b.dtype, b.boundaries),
                ));
            }
            if let Some(counter) = &b.counter {
                let c = positions
                    .get(counter.as_str())
                    .filter(|&&at| at < i)
                    .map(|&at| &tree.branches[at]);
                if !matches!(c.map(|c| c.dtype), Some(DataType::Scalar(t)) if t.is_integer()) {
                    return Err(Error::corrupt(
                        location(Some(&b.name)),
                        format!("counter {counter:?} is not an integer branch before it"),
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{FileReader, push_count_sums, push_running_sums, validate_meta};
    use crate::meta::{EXT_RAC_LZMA_DICTIONARY, Extension, ScalarType};
    use crate::schema::{BranchSpec, RacMode, WriteOptions};
    use crate::{Error, FileWriter};

    /// An lzma RAC branch of tiny entries drawn from a shared table keeps a prefix dictionary and
    /// carries the required extension that makes readers of 1.0-1.7 refuse it by name; its values
    /// read back, and a footer where the extension and the dictionary disagree is corrupt.
    #[test]
    fn lzma_dictionaries_are_marked_by_their_extension() {
        let mut rng = evtc_datagen::Rng::new(3);
        let table: Vec<u32> = (0..64).map(|_| rng.next_u64() as u32).collect();
        let values: Vec<u32> = (0..20_000 * 6)
            .map(|_| table[rng.below(64) as usize])
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lzma-dict.evtc");
        let options = WriteOptions::default()
            .codec("lzma:6".parse().unwrap())
            .rac(RacMode::On)
            .sync(false);
        let mut file = FileWriter::create(&path, options).unwrap();
        let spec = |name: &str| {
            BranchSpec::fixed(name, ScalarType::U32, 6)
                .precondition(evtc_codecs::Precondition::None)
        };
        let mut tree = file.tree("T", vec![spec("x"), spec("y")]).unwrap();
        tree.fill_column(0, &values).unwrap();
        tree.fill_column(1, &vec![7u32; values.len()]).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();

        let file = FileReader::open(&path).unwrap();
        let tree = file.tree("T").unwrap();
        let marked = |b: &crate::BranchMeta| {
            b.extensions
                .iter()
                .any(|e| e.key == EXT_RAC_LZMA_DICTIONARY && e.required)
        };
        let x = tree.branch("x").unwrap();
        assert!(
            x.meta().dictionary_len > 0,
            "the shared table makes a dictionary"
        );
        assert!(marked(x.meta()));
        assert_eq!(x.read::<u32>().unwrap(), values);
        let mut cursor = x.cursor::<u32>().unwrap();
        assert_eq!(cursor.get(12_345).unwrap(), &values[12_345 * 6..12_346 * 6]);
        // Dictionaries came with version 1.8; this writer's files are of its version.
        assert_eq!(file.meta().minor, crate::record::MINOR);

        let end = file.records_end;
        let mut meta = file.meta().clone();
        meta.trees[0].branches[0]
            .extensions
            .retain(|e| e.key != EXT_RAC_LZMA_DICTIONARY);
        let error = validate_meta(&meta, end).unwrap_err();
        assert!(matches!(error, Error::Corrupt { .. }), "{error}");
        assert!(
            error.to_string().contains(EXT_RAC_LZMA_DICTIONARY),
            "{error}"
        );
        let mut meta = file.meta().clone();
        let y = &mut meta.trees[0].branches[1];
        assert_eq!(y.dictionary_len, 0, "constant values need no dictionary");
        y.extensions.push(Extension {
            key: EXT_RAC_LZMA_DICTIONARY.into(),
            required: true,
            value: Vec::new(),
        });
        let error = validate_meta(&meta, end).unwrap_err();
        assert!(
            error.to_string().contains(EXT_RAC_LZMA_DICTIONARY),
            "{error}"
        );
        let mut meta = file.meta().clone();
        meta.trees[0].branches[1].extensions.push(Extension {
            key: "from-the-future".into(),
            required: true,
            value: Vec::new(),
        });
        let error = validate_meta(&meta, end).unwrap_err();
        assert!(matches!(error, Error::RequiredExtension { .. }), "{error}");
    }

    #[test]
    fn running_sums_continue_and_refuse_overflow() {
        let mut offsets = vec![0, 5];
        assert!(push_running_sums(&mut offsets, [1, 0, 2]));
        assert_eq!(offsets, [0, 5, 6, 6, 8]);
        let mut offsets = vec![0];
        assert!(!push_running_sums(&mut offsets, [u64::MAX, 1, 3]));
        assert_eq!(offsets, [0, u64::MAX]);
        let mut offsets = vec![2];
        assert!(push_count_sums(&mut offsets, &[1, 0, u32::MAX]));
        assert_eq!(offsets, [2, 3, 3, 3 + u64::from(u32::MAX)]);
        let mut offsets = vec![u64::MAX - 2];
        assert!(!push_count_sums(&mut offsets, &[1, 3]));
        assert_eq!(offsets, [u64::MAX - 2, u64::MAX - 1]);
    }
}
