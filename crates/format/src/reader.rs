//! Reading evtc files: [`FileReader`], [`TreeReader`], [`BranchReader`] and [`BranchCursor`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use evtc_codecs::{Algorithm, BlockDecoder, BlockHeader, DecoderDictionary, Lz4Dictionary};
use evtc_rac::{DecodeDictionary, RacDecoder, SeekTable};
use rayon::prelude::*;

use crate::error::{Error, Location, Result};
use crate::io::{LocalFile, ReadAt};
use crate::meta::{
    BasketIndex, BasketLoc, Boundaries, BranchMeta, DataType, EXT_RAC_ENTRY_SIZES, FileMeta,
    ScalarType, TreeMeta,
};
use crate::record::{
    self, FILE_HEADER_LEN, RECORD_HEADER_LEN, RecordHeader, RecordKind, TRAILER_LEN, Trailer,
};
use crate::schema::DEFAULT_MAX_BASKET_BYTES;
use crate::types::{Scalar, decode_counts};

/// The most a record of `algorithm` can expand when decoded (uncompressed bytes per stored byte),
/// from each codec's format: LZ4 needs a byte per 255 bytes of match (256x), deflate at least 2
/// bits per 258-byte match (1032x), zstd at least 4 bytes per 128 KiB block (an RLE block,
/// 32768x), xz's LZMA2 at least 11 bytes (chunk header, range coder flush) per 2 MiB chunk
/// (under 2^18x; xz itself reaches 6,850x on zeros). Stored blocks, shuffles and seek tables
/// expand less; 1 MiB of slack covers headers and per-entry counts of tiny records.
fn max_expansion(algorithm: u8) -> u64 {
    match Algorithm::from_id(algorithm) {
        Ok(Algorithm::None) => 1,
        Ok(Algorithm::Lz4 | Algorithm::Lz4Hc) => 256,
        Ok(Algorithm::Zlib) => 1032,
        Ok(Algorithm::Zstd) => 32768,
        Ok(Algorithm::Lzma) | Err(_) => 1 << 18,
    }
}

/// Reader settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    verify_checksums: bool,
    threads: usize,
    max_basket_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions {
            verify_checksums: true,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_basket_bytes: DEFAULT_MAX_BASKET_BYTES,
        }
    }
}

impl ReadOptions {
    /// Whether to verify record checksums (default: yes). Structure is always checked.
    pub fn verify_checksums(mut self, verify: bool) -> ReadOptions {
        self.verify_checksums = verify;
        self
    }

    /// Threads that decompress baskets in bulk reads (default: all cores; 1 reads on the calling thread).
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
}

/// Variable-length data in the Arrow layout: entry `i` is `values[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Jagged<T> {
    /// `entries + 1` offsets into `values`, starting at 0.
    pub offsets: Vec<u64>,
    /// All values, back to back.
    pub values: Vec<T>,
}

impl<T> Jagged<T> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values of entry `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn entry(&self, i: usize) -> &[T] {
        &self.values[self.offsets[i] as usize..self.offsets[i + 1] as usize]
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
    indexes: Vec<Vec<OnceLock<Arc<BasketIndex>>>>,
    dictionaries: Vec<Vec<OnceLock<Arc<ReaderDictionary>>>>,
    pool: Option<rayon::ThreadPool>,
}

/// A branch's RAC dictionary, read on first use.
enum ReaderDictionary {
    Zstd(DecoderDictionary),
    Lz4(Lz4Dictionary),
}

impl ReaderDictionary {
    fn as_decode(&self) -> DecodeDictionary<'_> {
        match self {
            ReaderDictionary::Zstd(d) => DecodeDictionary::Zstd(d),
            ReaderDictionary::Lz4(d) => DecodeDictionary::Lz4Prefix(d),
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
        let source = LocalFile::open(path).map_err(|e| Error::io(Some(path), e))?;
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
        let trailer_at = file_len - TRAILER_LEN;
        let mut trailer = [0u8; TRAILER_LEN as usize];
        source
            .read_exact_at(trailer_at, &mut trailer)
            .map_err(|e| Error::io(source.path(), e))?;
        let trailer = Trailer::decode(&trailer, trailer_at)?;
        let location = Location::at(trailer.footer_offset);
        if trailer.footer_offset < FILE_HEADER_LEN
            || trailer.footer_offset.checked_add(trailer.footer_len) != Some(trailer_at)
        {
            return Err(Error::corrupt(
                location,
                format!(
                    "the trailer puts the footer at {}..+{}, which is not the end of the records (file length {file_len})",
                    trailer.footer_offset, trailer.footer_len
                ),
            ));
        }
        let pool = if options.threads > 1 {
            rayon::ThreadPoolBuilder::new()
                .num_threads(options.threads)
                .build()
                .ok()
        } else {
            None
        };
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
            indexes: Vec::new(),
            dictionaries: Vec::new(),
            pool,
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

    /// Reads the record at `offset..offset + len`, checks its header (kind, lengths, CRCs) and
    /// returns the header and body.
    fn read_record(
        &self,
        offset: u64,
        len: u64,
        kind: RecordKind,
        location: &Location,
        end: u64,
    ) -> Result<(RecordHeader, Body)> {
        self.read_record_into(offset, len, kind, location, end, Vec::new())
    }

    /// As [`FileReader::read_record`], reading into `buffer` (reused: only growth is zero-filled).
    fn read_record_into(
        &self,
        offset: u64,
        len: u64,
        kind: RecordKind,
        location: &Location,
        end: u64,
        buffer: Vec<u8>,
    ) -> Result<(RecordHeader, Body)> {
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
        let mut bytes = buffer;
        if bytes.len() >= len_usize {
            bytes.truncate(len_usize);
        } else {
            bytes
                .try_reserve_exact(len_usize - bytes.len())
                .map_err(|_| {
                    Error::corrupt(
                        location.clone(),
                        format!("cannot allocate {len} bytes for a record"),
                    )
                })?;
            bytes.resize(len_usize, 0);
        }
        self.source
            .read_exact_at(offset, &mut bytes)
            .map_err(|e| Error::io(self.source.path(), e))?;
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
        let bytes = Body(bytes);
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

    /// `f` over `items` with their positions: on the file's own pool when it has one (more than
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

/// How a basket body is laid out.
#[derive(Clone)]
pub(crate) enum BasketKind<'d> {
    /// Basket kind 0: compressed blocks.
    Blocks,
    /// Basket kind 1: a RAC payload, with the branch's dictionary if it has one, and the
    /// basket-local entries wanted (all when `None`).
    Rac(Option<&'d DecodeDictionary<'d>>, Option<Range<usize>>),
}

/// A record read whole; derefs to its body.
struct Body(Vec<u8>);

impl std::ops::Deref for Body {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0[RECORD_HEADER_LEN..]
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
                .find(|e| e.required && e.key != EXT_RAC_ENTRY_SIZES)
            {
                return Err(Error::RequiredExtension {
                    key: ext.key.clone(),
                });
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

/// One tree of an open file.
pub struct TreeReader<'a, R: ReadAt = LocalFile> {
    file: &'a FileReader<R>,
    tree: usize,
}

impl<R: ReadAt> Clone for TreeReader<'_, R> {
    fn clone(&self) -> Self {
        TreeReader {
            file: self.file,
            tree: self.tree,
        }
    }
}

impl<R: ReadAt> std::fmt::Debug for TreeReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeReader")
            .field("name", &self.meta().name)
            .finish()
    }
}

impl<'a, R: ReadAt> TreeReader<'a, R> {
    /// The tree's metadata.
    pub fn meta(&self) -> &'a TreeMeta {
        &self.file.meta.trees[self.tree]
    }

    /// The tree name.
    pub fn name(&self) -> &'a str {
        &self.meta().name
    }

    /// Number of entries.
    pub fn entries(&self) -> u64 {
        self.meta().entries
    }

    /// The branches, with types and sizes.
    pub fn branches(&self) -> &'a [BranchMeta] {
        &self.meta().branches
    }

    /// The branch named `name`.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`].
    pub fn branch(&self, name: &str) -> Result<BranchReader<'a, R>> {
        let branch = self
            .branches()
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| Error::NoSuchBranch {
                tree: self.name().to_owned(),
                name: name.to_owned(),
            })?;
        Ok(BranchReader {
            tree: self.clone(),
            branch,
        })
    }

    fn check_range(&self, range: &Range<u64>) -> Result<()> {
        if range.start > range.end || range.end > self.entries() {
            return Err(Error::EntryOutOfRange {
                tree: self.name().to_owned(),
                start: range.start,
                end: range.end,
                entries: self.entries(),
            });
        }
        Ok(())
    }
}

/// One branch of a tree: bulk, range and entry reads.
pub struct BranchReader<'a, R: ReadAt = LocalFile> {
    tree: TreeReader<'a, R>,
    branch: usize,
}

impl<R: ReadAt> Clone for BranchReader<'_, R> {
    fn clone(&self) -> Self {
        BranchReader {
            tree: self.tree.clone(),
            branch: self.branch,
        }
    }
}

impl<R: ReadAt> std::fmt::Debug for BranchReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BranchReader")
            .field("name", &self.meta().name)
            .finish()
    }
}

/// One decoded basket's per-entry counts, where the basket stores them.
type Counts = Option<Vec<u32>>;

impl<'a, R: ReadAt> BranchReader<'a, R> {
    /// The branch's metadata.
    pub fn meta(&self) -> &'a BranchMeta {
        &self.tree.meta().branches[self.branch]
    }

    /// The tree this branch belongs to.
    pub fn tree(&self) -> &TreeReader<'a, R> {
        &self.tree
    }

    fn file(&self) -> &'a FileReader<R> {
        self.tree.file
    }

    fn location(&self, basket: Option<usize>, offset: u64) -> Location {
        Location {
            tree: Some(self.tree.name().to_owned()),
            branch: Some(self.meta().name.clone()),
            basket,
            offset,
        }
    }

    fn type_check<T: Scalar>(&self, requested: impl FnOnce() -> String, ok: bool) -> Result<()> {
        if ok && self.meta().dtype.scalar() == T::TYPE {
            return Ok(());
        }
        Err(Error::TypeMismatch {
            tree: self.tree.name().to_owned(),
            branch: self.meta().name.clone(),
            requested: requested(),
            actual: self.meta().dtype,
        })
    }

    /// The branch's basket index (read from the file on first use, then cached).
    ///
    /// # Errors
    /// I/O and corruption errors.
    pub fn baskets(&self) -> Result<Arc<BasketIndex>> {
        let cell = &self.file().indexes[self.tree.tree][self.branch];
        if let Some(index) = cell.get() {
            return Ok(index.clone());
        }
        let meta = self.meta();
        let (location, body) =
            self.read_branch_record(meta.index_offset, meta.index_len, RecordKind::BranchIndex)?;
        let index: BasketIndex = postcard::from_bytes(&body).map_err(|e| {
            Error::corrupt(
                location.clone(),
                format!("basket index does not decode: {e}"),
            )
        })?;
        self.validate_index(&index)?;
        Ok(cell.get_or_init(|| Arc::new(index)).clone())
    }

    /// Reads every basket record of the branch and checks its header and body checksums and that
    /// it belongs to this branch, without decompressing anything (`evtc verify`). Returns the
    /// number of baskets checked.
    ///
    /// # Errors
    /// The first truncated, misplaced or checksum-failing record, with its location.
    pub fn check_baskets(&self) -> Result<usize> {
        let index = self.baskets()?;
        self.dictionary()?;
        let file = self.file();
        let mut buffer = Vec::new();
        for (i, b) in index.baskets.iter().enumerate() {
            let location = self.location(Some(i), b.offset);
            let (header, body) = file.read_record_into(
                b.offset,
                b.record_len,
                RecordKind::Basket,
                &location,
                file.records_end,
                std::mem::take(&mut buffer),
            )?;
            if header.tree as usize != self.tree.tree || header.branch as usize != self.branch {
                return Err(Error::corrupt(
                    location,
                    "the basket record belongs to another branch",
                ));
            }
            buffer = body.0;
        }
        Ok(index.baskets.len())
    }

    /// Reads a record that belongs to this branch (its index or dictionary) and checks that it does.
    fn read_branch_record(
        &self,
        offset: u64,
        len: u64,
        kind: RecordKind,
    ) -> Result<(Location, Body)> {
        let file = self.file();
        let location = self.location(None, offset);
        let (header, body) = file.read_record(offset, len, kind, &location, file.records_end)?;
        if header.tree as usize != self.tree.tree || header.branch as usize != self.branch {
            return Err(Error::corrupt(
                location,
                format!("the {kind:?} record belongs to another branch"),
            ));
        }
        Ok((location, body))
    }

    /// The branch's RAC dictionary, if it has one (read on first use).
    fn dictionary(&self) -> Result<Option<Arc<ReaderDictionary>>> {
        let meta = self.meta();
        if meta.dictionary_len == 0 {
            return Ok(None);
        }
        let cell = &self.file().dictionaries[self.tree.tree][self.branch];
        if let Some(d) = cell.get() {
            return Ok(Some(d.clone()));
        }
        let (location, bytes) = self.read_branch_record(
            meta.dictionary_offset,
            meta.dictionary_len,
            RecordKind::Dictionary,
        )?;
        let dictionary = if Algorithm::from_id(meta.codec).ok() == Some(Algorithm::Zstd) {
            ReaderDictionary::Zstd(DecoderDictionary::new(&bytes).map_err(|e| Error::Codec {
                location: location.clone(),
                source: Box::new(e),
            })?)
        } else {
            ReaderDictionary::Lz4(Lz4Dictionary::new(&bytes))
        };
        Ok(Some(cell.get_or_init(|| Arc::new(dictionary)).clone()))
    }

    fn validate_index(&self, index: &BasketIndex) -> Result<()> {
        let meta = self.meta();
        let clusters = &self.tree.meta().cluster_ends;
        let size = meta.dtype.scalar().size() as u64;
        let mut next = 0u64;
        for (i, loc) in index.baskets.iter().enumerate() {
            let location = self.location(Some(i), loc.offset);
            let bad = |reason: String| Err(Error::corrupt(location.clone(), reason));
            if loc.first_entry != next || loc.entries == 0 {
                return bad(format!(
                    "basket covers entries {}..+{} but {next} comes next",
                    loc.first_entry, loc.entries
                ));
            }
            let end = loc
                .first_entry
                .checked_add(loc.entries)
                .filter(|&e| e <= meta.entries);
            let Some(end) = end else {
                return bad("basket runs past the branch's entries".into());
            };
            let cluster = clusters.partition_point(|&c| c <= loc.first_entry);
            if clusters.get(cluster).is_none_or(|&c| end > c) {
                return bad("basket crosses a cluster boundary".into());
            }
            if loc.offset < FILE_HEADER_LEN
                || loc
                    .offset
                    .checked_add(loc.record_len)
                    .is_none_or(|e| e > self.file().records_end)
            {
                return bad("basket lies outside the records".into());
            }
            if let Some(len) = meta.dtype.fixed_len() {
                if Some(loc.elements) != loc.entries.checked_mul(len as u64) {
                    return bad(format!(
                        "{} values for {} entries of {len}",
                        loc.elements, loc.entries
                    ));
                }
            }
            // Values and per-entry counts are what a decode allocates: bound both by the record.
            let raw = loc
                .elements
                .saturating_mul(size)
                .max(loc.entries.saturating_mul(4));
            let limit = self.file().options.max_basket_bytes;
            if raw > limit {
                return Err(Error::BasketTooLarge {
                    what: location.to_string(),
                    bytes: raw,
                    limit,
                    hint: "raise ReadOptions::max_basket_bytes (evtc: --max-basket-size) if the \
                           file is trusted",
                });
            }
            if raw
                > loc
                    .record_len
                    .saturating_mul(max_expansion(meta.codec))
                    .saturating_add(1 << 20)
            {
                return bad(format!(
                    "basket claims {raw} bytes of values in a {}-byte record",
                    loc.record_len
                ));
            }
            next = end;
        }
        if next != meta.entries {
            return Err(Error::corrupt(
                self.location(None, meta.index_offset),
                format!(
                    "baskets cover {next} entries, the branch has {}",
                    meta.entries
                ),
            ));
        }
        Ok(())
    }

    /// Decodes basket `i` into `values` (exactly `loc.elements` long) and returns its per-entry
    /// counts when the basket stores them.
    ///
    /// With `raw`, `T` is `u8` and `values` receives the values' little-endian bytes
    /// (`loc.elements * size` of them). With `wanted` (basket-local entries), a RAC basket decodes
    /// only the units that hold those entries; the other values stay zero.
    fn decode_basket<T: Scalar>(
        &self,
        i: usize,
        loc: &BasketLoc,
        values: &mut [T],
        raw: bool,
        wanted: Option<Range<usize>>,
    ) -> Result<Counts> {
        if self.read_stored_in_place(i, loc, values)? {
            return Ok(None);
        }
        let file = self.file();
        let location = self.location(Some(i), loc.offset);
        let buffer = RECORD_BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()));
        let (header, body) = file.read_record_into(
            loc.offset,
            loc.record_len,
            RecordKind::Basket,
            &location,
            file.records_end,
            buffer,
        )?;
        let counts =
            self.decode_basket_body(loc, values, raw, (header, &body), location, wanted)?;
        RECORD_BUFFER.with(|b| *b.borrow_mut() = body.0);
        Ok(counts)
    }

    /// The fast path of a basket that is one stored block (codec `none`, no preconditioner,
    /// fixed-size little-endian values): its payload is read straight into `values`, with the
    /// record's checksums verified as usual. Returns false when the general path must decode it
    /// (including every malformed case, which that path reports).
    fn read_stored_in_place<T: Scalar>(
        &self,
        i: usize,
        loc: &BasketLoc,
        values: &mut [T],
    ) -> Result<bool> {
        let meta = self.meta();
        let file = self.file();
        let stored = !meta.rac
            && Algorithm::from_id(meta.codec).ok() == Some(Algorithm::None)
            && meta.precondition == 0
            && meta.boundaries == Boundaries::Fixed;
        let Some(out) = T::as_bytes_mut(values).filter(|_| stored) else {
            return Ok(false);
        };
        const HEAD: usize = RECORD_HEADER_LEN + BlockHeader::LEN;
        if loc.record_len != (HEAD + out.len()) as u64
            || loc
                .offset
                .checked_add(loc.record_len)
                .is_none_or(|e| e > file.records_end)
        {
            return Ok(false);
        }
        let location = self.location(Some(i), loc.offset);
        let mut head = [0u8; HEAD];
        file.source
            .read_exact_at(loc.offset, &mut head)
            .and_then(|()| file.source.read_exact_at(loc.offset + HEAD as u64, out))
            .map_err(|e| Error::io(file.source.path(), e))?;
        let (record, envelope) = head.split_at(RECORD_HEADER_LEN);
        let header = RecordHeader::decode(record.try_into().expect("header bytes"), &location)?;
        if header.kind != RecordKind::Basket
            || header.body_len != loc.record_len - RECORD_HEADER_LEN as u64
        {
            return Err(Error::corrupt(
                location,
                "basket record header does not match the basket index",
            ));
        }
        if file.options.verify_checksums {
            let computed = evtc_codecs::Crc32::new()
                .update(envelope)
                .update(out)
                .finish();
            if computed != header.body_crc {
                return Err(Error::Checksum {
                    what: "record body",
                    location,
                    stored: header.body_crc,
                    computed,
                });
            }
        }
        self.check_basket_header(loc, &header, &location)?;
        let block = BlockHeader::parse(envelope).map_err(|e| Error::Codec {
            location: location.clone(),
            source: Box::new(e),
        })?;
        if block.codec.algorithm() != Algorithm::None
            || block.precondition.id() != 0
            || block.uncompressed_len != out.len() as u64
            || block.payload_len != out.len() as u64
        {
            return Err(Error::corrupt(
                location,
                "stored block does not match the branch",
            ));
        }
        Ok(true)
    }

    /// Checks a basket record's header against the branch and the basket index.
    fn check_basket_header(
        &self,
        loc: &BasketLoc,
        header: &RecordHeader,
        location: &Location,
    ) -> Result<()> {
        if header.tree as usize != self.tree.tree
            || header.branch as usize != self.branch
            || header.first_entry != loc.first_entry
            || header.entries != loc.entries
        {
            return Err(Error::corrupt(
                location.clone(),
                "basket header does not match the basket index",
            ));
        }
        if header.basket_kind != u8::from(self.meta().rac) {
            return Err(Error::corrupt(
                location.clone(),
                format!("unexpected basket kind {}", header.basket_kind),
            ));
        }
        Ok(())
    }

    fn decode_basket_body<T: Scalar>(
        &self,
        loc: &BasketLoc,
        values: &mut [T],
        raw: bool,
        (header, body): (RecordHeader, &[u8]),
        location: Location,
        wanted: Option<Range<usize>>,
    ) -> Result<Counts> {
        self.check_basket_header(loc, &header, &location)?;
        let dictionary = if header.basket_kind == 1 {
            self.dictionary()?
        } else {
            None
        };
        let dictionary = dictionary.as_deref().map(ReaderDictionary::as_decode);
        decode_body(
            self.meta(),
            loc.entries as usize,
            body,
            values,
            raw,
            &location,
            if header.basket_kind == 1 {
                BasketKind::Rac(dictionary.as_ref(), wanted)
            } else {
                BasketKind::Blocks
            },
        )
    }

    /// Decodes the baskets covering `range` into one buffer. Returns the values from the first
    /// basket's first entry, each basket's counts (if stored), and the first basket's first entry.
    /// With `raw`, `T` is `u8` and the buffer holds the values' bytes.
    fn decode_range<T: Scalar>(
        &self,
        range: &Range<u64>,
        raw: bool,
    ) -> Result<(Vec<T>, Vec<Counts>, u64, u64)> {
        let mut values = Vec::new();
        let (counts, start, end) = self.decode_range_into(range, raw, &mut values)?;
        Ok((values, counts, start, end))
    }

    /// As [`BranchReader::decode_range`], into `values` (its allocation reused when large enough).
    fn decode_range_into<T: Scalar>(
        &self,
        range: &Range<u64>,
        raw: bool,
        values: &mut Vec<T>,
    ) -> Result<(Vec<Counts>, u64, u64)> {
        let unit = if raw {
            self.meta().dtype.scalar().size() as u64
        } else {
            1
        };
        let index = self.baskets()?;
        let baskets = &index.baskets;
        let first = baskets.partition_point(|b| b.first_entry + b.entries <= range.start);
        let last = if range.is_empty() {
            first
        } else {
            baskets.partition_point(|b| b.first_entry < range.end)
        };
        let selected = &baskets[first..last];
        let total: u64 = selected.iter().map(|b| b.elements * unit).sum();
        let total = usize::try_from(total)
            .map_err(|_| Error::corrupt(self.location(None, 0), "branch too large for memory"))?;
        // Probe that the allocation can succeed (a corrupt index must give an error, not an
        // abort), then allocate zeroed memory: `vec!` of a zero value asks the allocator for
        // zeroed pages, which the OS zeroes lazily, so the decoding threads fault them in as they
        // write instead of one thread filling the whole output first.
        if values.capacity() >= total {
            values.clear();
            values.resize(total, T::default());
        } else {
            Vec::<T>::new().try_reserve_exact(total).map_err(|_| {
                Error::corrupt(
                    self.location(None, 0),
                    format!("cannot allocate {total} values"),
                )
            })?;
            *values = vec![T::default(); total];
        }
        let mut slices = Vec::with_capacity(selected.len());
        let mut rest = values.as_mut_slice();
        for b in selected {
            let (head, tail) = rest.split_at_mut((b.elements * unit) as usize);
            slices.push(head);
            rest = tail;
        }
        let jobs: Vec<_> = slices.into_iter().zip(selected).collect();
        let counts = self.file().map_indexed(jobs, |j, (slice, loc)| {
            // Baskets only partly inside the range decode only the RAC units they need.
            let lo = range.start.saturating_sub(loc.first_entry).min(loc.entries) as usize;
            let hi = (range.end - loc.first_entry.min(range.end)).min(loc.entries) as usize;
            let wanted = (lo > 0 || hi < loc.entries as usize).then_some(lo..hi);
            self.decode_basket(first + j, loc, slice, raw, wanted)
        });
        let counts = counts.into_iter().collect::<Result<Vec<_>>>()?;
        let start = selected.first().map_or(range.start, |b| b.first_entry);
        let end = selected
            .last()
            .map_or(range.start, |b| b.first_entry + b.entries);
        Ok((counts, start, end))
    }

    /// Reads every value of a scalar or fixed-size branch (fixed arrays flattened, entry-major).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if the branch does not hold `T` or is variable-length; I/O and
    /// corruption errors.
    pub fn read<T: Scalar>(&self) -> Result<Vec<T>> {
        self.read_range(0..self.tree.entries())
    }

    /// Decodes every basket of the branch into its own type, as a bulk read does (checking sizes,
    /// entry boundaries and values), and returns the number of values. `evtc verify --deep` runs
    /// it on every branch.
    ///
    /// # Errors
    /// As for [`BranchReader::read`] and [`BranchReader::read_jagged`].
    pub fn decode_all(&self) -> Result<u64> {
        let variable = self.meta().dtype.is_variable();
        macro_rules! read {
            ($t:ty) => {
                if variable {
                    self.read_jagged::<$t>()?.values.len()
                } else {
                    self.read::<$t>()?.len()
                }
            };
        }
        let n = match self.meta().dtype.scalar() {
            ScalarType::Bool => read!(bool),
            ScalarType::I8 => read!(i8),
            ScalarType::U8 => read!(u8),
            ScalarType::I16 => read!(i16),
            ScalarType::U16 => read!(u16),
            ScalarType::I32 => read!(i32),
            ScalarType::U32 => read!(u32),
            ScalarType::I64 => read!(i64),
            ScalarType::U64 => read!(u64),
            ScalarType::F32 => read!(f32),
            ScalarType::F64 => read!(f64),
        };
        Ok(n as u64)
    }

    /// Reads every value of a scalar or fixed-size branch into `out` (cleared first), reusing its
    /// allocation: reading many branches or files in a loop through one buffer spares the
    /// operating system zeroing and mapping a fresh allocation each time.
    ///
    /// # Errors
    /// As for [`BranchReader::read`].
    pub fn read_into<T: Scalar>(&self, out: &mut Vec<T>) -> Result<()> {
        self.type_check::<T>(
            || T::TYPE.to_string(),
            self.meta().dtype.fixed_len().is_some(),
        )?;
        let range = 0..self.tree.entries();
        let (_, start, end) = self.decode_range_into::<T>(&range, false, out)?;
        if (start, end) != (range.start, range.end) {
            return Err(Error::corrupt(
                self.location(None, 0),
                format!(
                    "baskets cover entries {start}..{end}, the tree has {}",
                    range.end
                ),
            ));
        }
        Ok(())
    }

    /// Reads the values of entries `range` of a scalar or fixed-size branch. In random-access
    /// (RAC) baskets that the range covers only in part, only the units holding the range are
    /// decompressed (also for [`BranchReader::read_jagged_range`]).
    ///
    /// # Errors
    /// As for [`BranchReader::read`]; [`Error::EntryOutOfRange`].
    pub fn read_range<T: Scalar>(&self, range: Range<u64>) -> Result<Vec<T>> {
        let len = self.meta().dtype.fixed_len();
        self.type_check::<T>(|| T::TYPE.to_string(), len.is_some())?;
        self.tree.check_range(&range)?;
        let len = len.expect("checked") as u64;
        let (mut values, _, start, end) = self.decode_range::<T>(&range, false)?;
        values.truncate(((range.end.min(end) - start) * len) as usize);
        values.drain(..((range.start - start.min(range.start)) * len) as usize);
        Ok(values)
    }

    /// Per-entry value counts of entries `range` of a variable-length branch.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] for fixed-size branches; I/O and corruption errors.
    pub fn read_counts(&self, range: Range<u64>) -> Result<Vec<u64>> {
        let meta = self.meta();
        if !meta.dtype.is_variable() {
            return Err(Error::TypeMismatch {
                tree: self.tree.name().to_owned(),
                branch: meta.name.clone(),
                requested: "a variable-length type".into(),
                actual: meta.dtype,
            });
        }
        self.tree.check_range(&range)?;
        if meta.boundaries == Boundaries::None {
            return self.counter()?.read_as_counts(range);
        }
        let (_, counts, start, end) = self.jagged_parts::<u8>(&range, true)?;
        let skip = (range.start.max(start) - start) as usize;
        let take = (range.end.min(end).max(range.start) - range.start.max(start)) as usize;
        Ok(counts[skip..skip + take].to_vec())
    }

    fn counter(&self) -> Result<BranchReader<'a, R>> {
        let name = self
            .meta()
            .counter
            .as_deref()
            .expect("validated: none boundaries have a counter");
        self.tree.branch(name)
    }

    /// Reads an integer scalar branch as counts.
    fn read_as_counts(&self, range: Range<u64>) -> Result<Vec<u64>> {
        let t = self.meta().dtype.scalar();
        let (bytes, _, start, end) = self.decode_range::<u8>(&range, true)?;
        let size = t.size();
        let from = ((range.start - start.min(range.start)) as usize) * size;
        let to = ((range.end.min(end) - start) as usize) * size;
        let mut counts = Vec::with_capacity(to.saturating_sub(from) / size);
        decode_counts(t, &bytes[from..to], &mut counts).map_err(|at| {
            Error::corrupt(
                self.location(None, 0),
                format!("counter value {} is negative", range.start + at as u64),
            )
        })?;
        Ok(counts)
    }

    /// Reads every entry of a variable-length branch (jagged arrays, byte strings, UTF-8 strings
    /// as `u8`) in the Arrow layout.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] for fixed-size branches or another element type; I/O and corruption errors.
    pub fn read_jagged<T: Scalar>(&self) -> Result<Jagged<T>> {
        self.read_jagged_range(0..self.tree.entries())
    }

    /// Reads entries `range` of a variable-length branch.
    ///
    /// # Errors
    /// As for [`BranchReader::read_jagged`]; [`Error::EntryOutOfRange`].
    pub fn read_jagged_range<T: Scalar>(&self, range: Range<u64>) -> Result<Jagged<T>> {
        self.type_check::<T>(|| format!("{}[]", T::TYPE), self.meta().dtype.is_variable())?;
        self.tree.check_range(&range)?;
        self.read_jagged_range_typed(range)
    }

    /// Decodes the baskets covering `range` and the per-entry counts of all their entries.
    fn jagged_parts<T: Scalar>(
        &self,
        range: &Range<u64>,
        raw: bool,
    ) -> Result<(Vec<T>, Vec<u64>, u64, u64)> {
        let (values, counts, start, end) = self.decode_range::<T>(range, raw)?;
        let n_values = if raw {
            values.len() / self.meta().dtype.scalar().size()
        } else {
            values.len()
        };
        let counts: Vec<u64> = if self.meta().boundaries == Boundaries::None {
            let counts = self.counter()?.read_as_counts(start..end)?;
            let sum: u64 = counts.iter().sum();
            if sum != n_values as u64 {
                return Err(Error::corrupt(
                    self.location(None, 0),
                    format!(
                        "counter {:?} adds up to {sum} values for entries {start}..{end}, the baskets hold {}",
                        self.meta().counter.as_deref().unwrap_or(""),
                        n_values
                    ),
                ));
            }
            counts
        } else {
            counts
                .into_iter()
                .flatten()
                .flatten()
                .map(u64::from)
                .collect()
        };
        if counts.len() as u64 != end - start {
            return Err(Error::corrupt(
                self.location(None, 0),
                format!("{} entry counts for entries {start}..{end}", counts.len()),
            ));
        }
        Ok((values, counts, start, end))
    }

    fn read_jagged_range_typed<T: Scalar>(&self, range: Range<u64>) -> Result<Jagged<T>> {
        let (mut values, counts, start, end) = self.jagged_parts::<T>(&range, false)?;
        let skip = (range.start.max(start) - start) as usize;
        let take = (range.end.min(end).max(range.start) - range.start.max(start)) as usize;
        let first_value: u64 = counts[..skip].iter().sum();
        let mut offsets = Vec::with_capacity(take + 1);
        let mut at = 0u64;
        offsets.push(0);
        for &c in &counts[skip..skip + take] {
            at += c;
            offsets.push(at);
        }
        values.truncate((first_value + at) as usize);
        values.drain(..first_value as usize);
        Ok(Jagged { offsets, values })
    }

    /// Reads every entry of a UTF-8 or byte-string branch as strings (bytes that are not UTF-8 are
    /// replaced, for byte-string branches).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] for other branches; corruption errors, including invalid UTF-8 in a
    /// UTF-8 branch.
    pub fn read_strings(&self) -> Result<Vec<String>> {
        let dtype = self.meta().dtype;
        if !matches!(dtype, DataType::Utf8 | DataType::Bytes) {
            return Err(Error::TypeMismatch {
                tree: self.tree.name().to_owned(),
                branch: self.meta().name.clone(),
                requested: "string".into(),
                actual: dtype,
            });
        }
        let raw = self.read_jagged_range_typed::<u8>(0..self.tree.entries())?;
        (0..raw.len())
            .map(|i| match std::str::from_utf8(raw.entry(i)) {
                Ok(s) => Ok(s.to_owned()),
                Err(_) if dtype == DataType::Bytes => {
                    Ok(String::from_utf8_lossy(raw.entry(i)).into_owned())
                }
                Err(_) => Err(Error::corrupt(
                    self.location(None, 0),
                    format!("entry {i} is not valid UTF-8"),
                )),
            })
            .collect()
    }

    /// A cursor for entry-by-entry reads of this branch (ROOT's `GetEntry`), which keeps the last
    /// decoded basket so that sequential reads decompress each basket once.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] if the branch does not hold `T`.
    pub fn cursor<T: Scalar>(&self) -> Result<BranchCursor<'a, R, T>> {
        self.type_check::<T>(|| T::TYPE.to_string(), true)?;
        Ok(BranchCursor {
            branch: self.clone(),
            index: None,
            basket: None,
            values: Vec::new(),
            offsets: Vec::new(),
            rac: None,
            decoder: RacDecoder::new(),
            scratch: Vec::new(),
            stored: Vec::new(),
            counter: None,
            offsets_base: 0,
            tables: HashMap::new(),
        })
    }
}

/// Entry-by-entry reads of one branch with a one-basket cache.
///
/// ```no_run
/// # use evtc_format::FileReader;
/// let file = FileReader::open("events.evtc")?;
/// let tree = file.tree("Events")?;
/// let mut pt = tree.branch("Muon_pt")?.cursor::<f32>()?;
/// for entry in 0..tree.entries() {
///     let muons: &[f32] = pt.get(entry)?;
///     # let _ = muons;
/// }
/// # Ok::<(), evtc_format::Error>(())
/// ```
pub struct BranchCursor<'a, R: ReadAt, T> {
    branch: BranchReader<'a, R>,
    index: Option<Arc<BasketIndex>>,
    basket: Option<usize>,
    values: Vec<T>,
    /// Offsets into `values` of the cached basket's entries (`entries + 1`); for RAC baskets,
    /// element offsets of the basket's entries.
    offsets: Vec<u64>,
    /// The seek table of the current RAC basket and the unit held in `values`.
    rac: Option<RacState>,
    decoder: RacDecoder,
    scratch: Vec<u8>,
    /// The stored bytes of the last unit read.
    stored: Vec<u8>,
    /// A cursor over the counter branch, for boundaries that come from it.
    counter: Option<Box<CountCursor<'a, R>>>,
    /// The basket-local entry that `offsets[0]` belongs to (RAC branches with a counter keep the
    /// offsets of one unit's entries only).
    offsets_base: u64,
    /// Parsed seek tables of RAC baskets visited.
    tables: HashMap<usize, Arc<BasketTable>>,
}

/// Reads a counter branch entry by entry, with the counter's own basket or unit cache.
enum CountCursor<'a, R: ReadAt> {
    I8(BranchCursor<'a, R, i8>),
    U8(BranchCursor<'a, R, u8>),
    I16(BranchCursor<'a, R, i16>),
    U16(BranchCursor<'a, R, u16>),
    I32(BranchCursor<'a, R, i32>),
    U32(BranchCursor<'a, R, u32>),
    I64(BranchCursor<'a, R, i64>),
    U64(BranchCursor<'a, R, u64>),
}

impl<'a, R: ReadAt> CountCursor<'a, R> {
    fn new(counter: &BranchReader<'a, R>) -> Result<CountCursor<'a, R>> {
        Ok(match counter.meta().dtype {
            DataType::Scalar(ScalarType::I8) => CountCursor::I8(counter.cursor()?),
            DataType::Scalar(ScalarType::U8) => CountCursor::U8(counter.cursor()?),
            DataType::Scalar(ScalarType::I16) => CountCursor::I16(counter.cursor()?),
            DataType::Scalar(ScalarType::U16) => CountCursor::U16(counter.cursor()?),
            DataType::Scalar(ScalarType::I32) => CountCursor::I32(counter.cursor()?),
            DataType::Scalar(ScalarType::U32) => CountCursor::U32(counter.cursor()?),
            DataType::Scalar(ScalarType::I64) => CountCursor::I64(counter.cursor()?),
            DataType::Scalar(ScalarType::U64) => CountCursor::U64(counter.cursor()?),
            other => {
                return Err(Error::corrupt(
                    counter.location(None, 0),
                    format!("a counter branch of type {other} is not an integer scalar"),
                ));
            }
        })
    }

    /// Appends the counter's values for `entries` to `out` as running element offsets.
    fn offsets(&mut self, entries: Range<u64>, out: &mut Vec<u64>) -> Result<()> {
        macro_rules! run {
            ($c:expr) => {{
                let mut at = out.last().copied().unwrap_or(0);
                let mut e = entries.start;
                while e < entries.end {
                    let run = $c.get_run(e, entries.end)?;
                    if run.is_empty() {
                        break;
                    }
                    let len = run.len() as u64;
                    let mut negative = false;
                    for &v in run {
                        let n = u64::try_from(v).unwrap_or_else(|_| {
                            negative = true;
                            0
                        });
                        at += n;
                        out.push(at);
                    }
                    if negative {
                        return Err(Error::corrupt(
                            $c.branch.location(None, 0),
                            format!("a counter value in entries {e}..{} is negative", e + len),
                        ));
                    }
                    e += len;
                }
                Ok(())
            }};
        }
        match self {
            CountCursor::I8(c) => run!(c),
            CountCursor::U8(c) => run!(c),
            CountCursor::I16(c) => run!(c),
            CountCursor::U16(c) => run!(c),
            CountCursor::I32(c) => run!(c),
            CountCursor::U32(c) => run!(c),
            CountCursor::I64(c) => run!(c),
            CountCursor::U64(c) => run!(c),
        }
    }
}

impl<R: ReadAt, T: Scalar> BranchCursor<'_, R, T> {
    /// The values of a scalar branch for entries `entry..` up to `end` or the end of the cached
    /// basket (or RAC unit), whichever comes first; at least one value.
    fn get_run(&mut self, entry: u64, end: u64) -> Result<&[T]> {
        self.get(entry)?;
        let (Some(index), Some(b)) = (&self.index, self.basket) else {
            return Ok(&[]);
        };
        let loc = index.baskets[b];
        let local = entry - loc.first_entry;
        let mut stop = end.min(loc.first_entry + loc.entries) - loc.first_entry;
        let mut base = 0;
        if let Some(RacState {
            table,
            unit: Some(u),
            ..
        }) = &self.rac
        {
            let unit = table.units()[*u];
            stop = stop.min(unit.first_entry + unit.entries);
            base = unit.first_entry;
        }
        Ok(self
            .values
            .get((local - base) as usize..(stop - base) as usize)
            .unwrap_or(&[]))
    }
}

impl<'a, R: ReadAt, T> BranchCursor<'a, R, T> {
    /// Appends running element offsets for `entries` (absolute) from the counter branch.
    fn counter_offsets(&mut self, entries: Range<u64>) -> Result<()> {
        let counter = match &mut self.counter {
            Some(c) => c,
            None => self
                .counter
                .insert(Box::new(CountCursor::new(&self.branch.counter()?)?)),
        };
        counter.offsets(entries, &mut self.offsets)
    }
}

/// Seek tables a cursor keeps, by basket: random reads that come back to a basket skip reading
/// and parsing its table. Bounded: the cache is emptied when it holds this many.
const MAX_CACHED_TABLES: usize = 4096;

/// A RAC basket's parsed seek table and where its parts are.
struct BasketTable {
    table: SeekTable,
    /// File offset of the RAC payload.
    payload_at: u64,
    /// Bytes of the RAC payload.
    rac_len: u64,
    /// File offset of the units region.
    units_at: u64,
}

impl std::ops::Deref for BasketTable {
    type Target = SeekTable;

    fn deref(&self) -> &SeekTable {
        &self.table
    }
}

/// What a cursor keeps of the RAC basket it is in.
struct RacState {
    table: Arc<BasketTable>,
    /// File offset of the units region.
    units_at: u64,
    /// The unit decoded into `values`, if any.
    unit: Option<usize>,
}

impl<R: ReadAt, T> std::fmt::Debug for BranchCursor<'_, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BranchCursor")
            .field("branch", &self.branch.meta().name)
            .field("basket", &self.basket)
            .finish()
    }
}

impl<'a, R: ReadAt, T: Scalar> BranchCursor<'a, R, T> {
    /// The values of `entry`: one for scalars, `n` for fixed arrays, any number for variable-length
    /// branches.
    ///
    /// # Errors
    /// [`Error::EntryOutOfRange`]; I/O and corruption errors.
    pub fn get(&mut self, entry: u64) -> Result<&[T]> {
        let tree = &self.branch.tree;
        tree.check_range(&(entry..entry + 1))?;
        let index = match &self.index {
            Some(index) => index.clone(),
            None => self.index.insert(self.branch.baskets()?).clone(),
        };
        let b = index
            .baskets
            .partition_point(|b| b.first_entry + b.entries <= entry);
        let loc = index.baskets[b];
        if self.branch.meta().rac {
            return self.get_rac(b, &loc, entry);
        }
        if self.basket != Some(b) {
            self.basket = None;
            self.values.clear();
            self.values.resize(loc.elements as usize, T::default());
            let counts = self
                .branch
                .decode_basket(b, &loc, &mut self.values, false, None)?;
            let meta = self.branch.meta();
            self.offsets.clear();
            self.offsets.push(0);
            match meta.dtype.fixed_len() {
                // Fixed-size entries need no offsets: entry i holds values i*len..(i+1)*len.
                Some(_) => self.offsets.clear(),
                None => {
                    match counts {
                        Some(c) => {
                            let mut at = 0;
                            for c in c {
                                at += u64::from(c);
                                self.offsets.push(at);
                            }
                        }
                        None => {
                            self.counter_offsets(loc.first_entry..loc.first_entry + loc.entries)?
                        }
                    }
                    let at = *self.offsets.last().unwrap_or(&0);
                    if at != loc.elements {
                        return Err(Error::corrupt(
                            self.branch.location(Some(b), loc.offset),
                            "counter and basket disagree",
                        ));
                    }
                }
            }
            self.offsets_base = 0;
            self.basket = Some(b);
        }
        let local = (entry - loc.first_entry) as usize;
        Ok(match self.branch.meta().dtype.fixed_len() {
            Some(len) => &self.values[local * len..(local + 1) * len],
            None => &self.values[self.offsets[local] as usize..self.offsets[local + 1] as usize],
        })
    }
}

/// Decodes a basket body (its blocks) of `entries` entries of a branch described by `meta` into
/// `values`; returns the per-entry counts where the basket stores them. With `raw`, `T` is `u8` and
/// `values` receives the values' bytes.
pub(crate) fn decode_body<T: Scalar>(
    meta: &BranchMeta,
    entries: usize,
    body: &[u8],
    values: &mut [T],
    raw: bool,
    location: &Location,
    kind: BasketKind<'_>,
) -> Result<Counts> {
    if let BasketKind::Rac(dictionary, wanted) = kind {
        return decode_rac_body(
            meta,
            entries,
            body,
            values,
            raw,
            location,
            (dictionary, wanted),
        );
    }
    let size = meta.dtype.scalar().size();
    let (value_bytes, n_values) = if raw {
        (values.len(), values.len() / size)
    } else {
        (values.len() * size, values.len())
    };
    let codec_error = |source| Error::Codec {
        location: location.clone(),
        source: Box::new(source),
    };
    let block_error = |e: BlockError| match e {
        BlockError::Codec(source) => Error::Codec {
            location: location.clone(),
            source: Box::new(source),
        },
        BlockError::Invalid(at) => Error::corrupt(
            location.clone(),
            format!(
                "value {at} of the basket is not a valid {}",
                meta.dtype.scalar()
            ),
        ),
    };
    let trailing = || Error::corrupt(location.clone(), "bytes after the basket's last block");
    let (first, rest) = split_block(body).map_err(codec_error)?;
    let counts = match meta.boundaries {
        Boundaries::Fixed | Boundaries::None => {
            if !rest.is_empty() {
                return Err(trailing());
            }
            decode_block_into(first, value_bytes, values).map_err(block_error)?;
            None
        }
        Boundaries::Counts => {
            decode_block_into(first, value_bytes, values).map_err(block_error)?;
            let (block, rest) = split_block(rest).map_err(codec_error)?;
            if !rest.is_empty() {
                return Err(trailing());
            }
            let mut counts = vec![0u32; entries];
            decode_block_into(block, entries * 4, &mut counts).map_err(block_error)?;
            Some(counts)
        }
        Boundaries::Offsets => {
            if !rest.is_empty() {
                return Err(trailing());
            }
            let total = value_bytes + 4 * (entries + 1);
            let mut joined = Vec::new();
            joined
                .try_reserve_exact(total)
                .map_err(|_| Error::corrupt(location.clone(), "basket too large for memory"))?;
            joined.resize(total, 0);
            decode_block_into(first, total, &mut joined).map_err(block_error)?;
            // In raw mode T is u8 and value_bytes == values.len(): decode copies.
            T::decode(&joined[..value_bytes], values)
                .map_err(|at| block_error(BlockError::Invalid(at)))?;
            let mut offsets = vec![0u32; entries + 1];
            u32::decode(&joined[value_bytes..], &mut offsets).expect("u32 always decodes");
            if offsets[0] != 0
                || offsets.windows(2).any(|w| w[0] > w[1])
                || offsets[entries] as usize != n_values
            {
                return Err(Error::corrupt(
                    location.clone(),
                    "entry offsets are not increasing from 0 to the value count",
                ));
            }
            Some(offsets.windows(2).map(|w| w[1] - w[0]).collect())
        }
    };
    if let Some(counts) = &counts {
        let sum: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if sum != n_values as u64 {
            return Err(Error::corrupt(
                location.clone(),
                format!("counts add up to {sum}, the basket has {n_values} values"),
            ));
        }
    }
    Ok(counts)
}

/// Decodes a random-access basket body: `u64` payload length, the RAC payload, then (boundaries
/// `counts`) the counts block.
fn decode_rac_body<T: Scalar>(
    meta: &BranchMeta,
    entries: usize,
    body: &[u8],
    values: &mut [T],
    raw: bool,
    location: &Location,
    (dictionary, wanted): (Option<&DecodeDictionary<'_>>, Option<Range<usize>>),
) -> Result<Counts> {
    let size = meta.dtype.scalar().size();
    let (value_bytes, n_values) = if raw {
        (values.len(), values.len() / size)
    } else {
        (values.len() * size, values.len())
    };
    let corrupt = |reason: String| Error::corrupt(location.clone(), reason);
    let (payload, rest) = split_rac(body)
        .ok_or_else(|| corrupt("random-access payload runs past the basket".into()))?;
    let (table, units) = SeekTable::parse(payload).map_err(|e| corrupt(e.to_string()))?;
    if table.entries() != entries as u64 || table.raw_len() != value_bytes as u64 {
        return Err(corrupt(format!(
            "seek table covers {} entries and {} bytes, the basket {entries} entries and {value_bytes} bytes",
            table.entries(),
            table.raw_len()
        )));
    }
    check_entry_sizes_flag(meta, &table, location)?;
    let mut decoder = RacDecoder::new();
    // Every unit, or only those holding the wanted entries.
    let mut decode = |bytes: &mut [u8]| -> Result<()> {
        let Some(wanted) = &wanted else {
            return decoder
                .decode_all(&table, units, dictionary, bytes, false)
                .map_err(|e| corrupt(e.to_string()));
        };
        for (u, unit) in table.units().iter().enumerate() {
            let (first, end) = (unit.first_entry, unit.first_entry + unit.entries);
            if end <= wanted.start as u64 || first >= wanted.end as u64 {
                continue;
            }
            let stored = table
                .stored_unit(u, units)
                .map_err(|e| corrupt(e.to_string()))?;
            let out = bytes
                .get_mut(unit.raw_offset as usize..(unit.raw_offset + unit.raw_len) as usize)
                .ok_or_else(|| corrupt(format!("unit {u} runs past the basket")))?;
            decoder
                .decode_stored_unit(&table, u, stored, dictionary, out, false)
                .map_err(|e| corrupt(e.to_string()))?;
        }
        Ok(())
    };
    match T::as_bytes_mut(values) {
        Some(bytes) => decode(bytes)?,
        None => {
            let mut scratch = vec![0u8; value_bytes];
            decode(&mut scratch)?;
            T::decode(&scratch, values).map_err(|at| {
                corrupt(format!("value {at} is not a valid {}", meta.dtype.scalar()))
            })?;
        }
    }
    let counts = match meta.boundaries {
        Boundaries::Counts if table.has_entry_sizes() => {
            if !rest.is_empty() {
                return Err(corrupt("bytes after the random-access payload".into()));
            }
            let mut counts = Vec::with_capacity(entries);
            let mut sizes = Vec::new();
            for u in 0..table.units().len() {
                let stored = table
                    .stored_unit(u, units)
                    .map_err(|e| corrupt(e.to_string()))?;
                sizes.clear();
                table
                    .entry_sizes(u, stored, &mut sizes)
                    .map_err(|e| corrupt(e.to_string()))?;
                for &bytes in &sizes {
                    counts.push(entry_count(bytes, size).ok_or_else(|| {
                        corrupt(format!(
                            "unit {u} has an entry of {bytes} bytes, not a count of {}",
                            meta.dtype.scalar()
                        ))
                    })?);
                }
            }
            Some(counts)
        }
        Boundaries::Counts => {
            let (block, tail) = split_block(rest).map_err(|e| Error::Codec {
                location: location.clone(),
                source: Box::new(e),
            })?;
            if !tail.is_empty() {
                return Err(corrupt("bytes after the basket's last block".into()));
            }
            let mut counts = vec![0u32; entries];
            decode_block_into(block, entries * 4, &mut counts).map_err(|e| match e {
                BlockError::Codec(source) => Error::Codec {
                    location: location.clone(),
                    source: Box::new(source),
                },
                BlockError::Invalid(at) => corrupt(format!("count {at} is invalid")),
            })?;
            let sum: u64 = counts.iter().map(|&c| u64::from(c)).sum();
            if sum != n_values as u64 {
                return Err(corrupt(format!(
                    "counts add up to {sum}, the basket has {n_values} values"
                )));
            }
            Some(counts)
        }
        _ if !rest.is_empty() => {
            return Err(corrupt("bytes after the random-access payload".into()));
        }
        _ => None,
    };
    Ok(counts)
}

/// The element count of an entry of `bytes` bytes of values of `size` bytes (a power of two: a
/// shift, not a division, on the entry-read path), if whole and a u32.
fn entry_count(bytes: u64, size: usize) -> Option<u32> {
    debug_assert!(size.is_power_of_two());
    (bytes & (size as u64 - 1) == 0)
        .then(|| u32::try_from(bytes >> size.trailing_zeros()).ok())
        .flatten()
}

/// Checks that a seek table stores entry sizes exactly when the branch says its units do.
fn check_entry_sizes_flag(meta: &BranchMeta, table: &SeekTable, location: &Location) -> Result<()> {
    if table.has_entry_sizes() != meta.rac_entry_sizes() {
        return Err(Error::corrupt(
            location.clone(),
            format!(
                "the seek table {} entry sizes, the branch {} (extension {EXT_RAC_ENTRY_SIZES})",
                if table.has_entry_sizes() {
                    "has"
                } else {
                    "has no"
                },
                if meta.rac_entry_sizes() {
                    "needs them"
                } else {
                    "has none"
                }
            ),
        ));
    }
    Ok(())
}

/// Splits a RAC basket body into the RAC payload and what follows it.
pub(crate) fn split_rac(body: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = usize::try_from(u64::from_le_bytes(body.get(..8)?.try_into().ok()?)).ok()?;
    let end = 8usize.checked_add(len)?;
    Some((body.get(8..end)?, body.get(end..)?))
}

impl<R: ReadAt, T: Scalar> BranchCursor<'_, R, T> {
    /// Entry reads of RAC baskets: positional reads of the record header and seek table once per
    /// basket, then of the one unit holding the entry.
    fn get_rac(&mut self, b: usize, loc: &BasketLoc, entry: u64) -> Result<&[T]> {
        let branch = self.branch.clone();
        let meta = branch.meta();
        let file = branch.file();
        let location = || branch.location(Some(b), loc.offset);
        let size = meta.dtype.scalar().size();
        // Positional reads within the basket's record, into `buf` (resized to `len`).
        let read_into = |offset: u64, len: usize, buf: &mut Vec<u8>| -> Result<()> {
            if offset
                .checked_add(len as u64)
                .is_none_or(|end| end > loc.offset + loc.record_len)
            {
                return Err(Error::corrupt(
                    location(),
                    "random-access basket structure runs past its record",
                ));
            }
            buf.resize(len, 0);
            file.source
                .read_exact_at(offset, buf)
                .map_err(|e| Error::io(file.source.path(), e))
        };
        let read = |offset: u64, len: usize| -> Result<Vec<u8>> {
            let mut buf = Vec::new();
            read_into(offset, len, &mut buf)?;
            Ok(buf)
        };
        if self.basket != Some(b) {
            self.basket = None;
            self.rac = None;
            let cached = self.tables.get(&b).cloned();
            let basket_table = match cached {
                Some(t) => t,
                None => {
                    let head = read(loc.offset, RECORD_HEADER_LEN + 12)?;
                    let header = RecordHeader::decode(
                        head[..RECORD_HEADER_LEN].try_into().expect("48 bytes"),
                        &location(),
                    )?;
                    if header.kind != RecordKind::Basket
                        || header.basket_kind != 1
                        || header.tree as usize != branch.tree.tree
                        || header.branch as usize != branch.branch
                        || header.first_entry != loc.first_entry
                        || header.entries != loc.entries
                        || header.body_len + RECORD_HEADER_LEN as u64 != loc.record_len
                    {
                        return Err(Error::corrupt(
                            location(),
                            "random-access basket header does not match the basket index",
                        ));
                    }
                    let rac_len = u64::from_le_bytes(
                        head[RECORD_HEADER_LEN..RECORD_HEADER_LEN + 8]
                            .try_into()
                            .expect("8 bytes"),
                    );
                    let table_len = SeekTable::table_len(&head[RECORD_HEADER_LEN + 8..])
                        .map_err(|e| Error::corrupt(location(), e.to_string()))?
                        as u64;
                    let payload_at = loc.offset + RECORD_HEADER_LEN as u64 + 8;
                    let units_len = rac_len
                        .checked_sub(4 + table_len)
                        .filter(|_| rac_len.checked_add(8).is_some_and(|n| n <= header.body_len))
                        .ok_or_else(|| {
                            Error::corrupt(location(), "seek table longer than the payload")
                        })?;
                    let table_bytes = read(payload_at + 4, table_len as usize)?;
                    let table = SeekTable::parse_table(&table_bytes, units_len)
                        .map_err(|e| Error::corrupt(location(), e.to_string()))?;
                    if table.entries() != loc.entries
                        || table.raw_len() != loc.elements.saturating_mul(size as u64)
                    {
                        return Err(Error::corrupt(
                            location(),
                            "seek table does not match the basket index",
                        ));
                    }
                    check_entry_sizes_flag(meta, &table, &location())?;
                    let t = Arc::new(BasketTable {
                        table,
                        payload_at,
                        rac_len,
                        units_at: payload_at + 4 + table_len,
                    });
                    if self.tables.len() >= MAX_CACHED_TABLES {
                        self.tables.clear();
                    }
                    self.tables.insert(b, t.clone());
                    t
                }
            };
            let (payload_at, rac_len) = (basket_table.payload_at, basket_table.rac_len);
            // Element offsets of the basket's entries; with entry sizes in the units or a counter,
            // of one unit's entries at a time (below), so that a read touches one unit (and with
            // a counter, one unit of the counter too).
            self.offsets.clear();
            self.offsets.push(0);
            self.offsets_base = 0;
            match meta.dtype.fixed_len() {
                // Fixed-size entries need no offsets: entry i holds values i*len..(i+1)*len.
                Some(_) => self.offsets.clear(),
                None if meta.boundaries != Boundaries::Counts || basket_table.has_entry_sizes() => {
                    self.offsets.clear()
                }
                None => {
                    let counts: Vec<u64> = match meta.boundaries {
                        Boundaries::Counts => {
                            let at = payload_at + rac_len;
                            let block = read(at, (loc.offset + loc.record_len - at) as usize)?;
                            let mut counts = vec![0u32; loc.entries as usize];
                            decode_block_into(&block, counts.len() * 4, &mut counts).map_err(
                                |e| match e {
                                    BlockError::Codec(source) => Error::Codec {
                                        location: location(),
                                        source: Box::new(source),
                                    },
                                    BlockError::Invalid(_) => {
                                        Error::corrupt(location(), "invalid counts")
                                    }
                                },
                            )?;
                            counts.into_iter().map(u64::from).collect()
                        }
                        _ => unreachable!("counter boundaries are read per unit"),
                    };
                    let mut at = 0;
                    for c in counts {
                        at += c;
                        self.offsets.push(at);
                    }
                    if at != loc.elements {
                        return Err(Error::corrupt(location(), "counts and basket disagree"));
                    }
                }
            }
            self.rac = Some(RacState {
                units_at: basket_table.units_at,
                table: basket_table,
                unit: None,
            });
            self.basket = Some(b);
        }
        let local = entry - loc.first_entry;
        let (u, unit) = {
            let table = &self.rac.as_ref().expect("set above").table;
            let u = table
                .unit_of_entry(local)
                .ok_or_else(|| Error::corrupt(location(), "entry not in the seek table"))?;
            (u, table.units()[u])
        };
        if meta.dtype.fixed_len().is_none()
            && meta.boundaries != Boundaries::Counts
            && (self.offsets.is_empty() || self.offsets_base != unit.first_entry)
        {
            self.offsets.clear();
            self.offsets.push(unit.raw_offset / size as u64);
            self.offsets_base = unit.first_entry;
            let first = loc.first_entry + unit.first_entry;
            if let Err(e) = self.counter_offsets(first..first + unit.entries) {
                self.offsets.clear();
                return Err(e);
            }
            if self.offsets.last().copied() != Some((unit.raw_offset + unit.raw_len) / size as u64)
            {
                self.offsets.clear();
                return Err(Error::corrupt(location(), "counter and unit disagree"));
            }
        }
        let state = self.rac.as_mut().expect("set above");
        if state.unit != Some(u) {
            state.unit = None;
            let stored = &mut self.stored;
            read_into(
                state.units_at + unit.offset,
                unit.stored_len as usize,
                stored,
            )?;
            let dictionary = branch.dictionary()?;
            let dictionary = dictionary.as_deref().map(ReaderDictionary::as_decode);
            self.scratch.resize(unit.raw_len as usize, 0);
            self.decoder
                .decode_stored_unit(
                    &state.table,
                    u,
                    stored,
                    dictionary.as_ref(),
                    &mut self.scratch,
                    file.options.verify_checksums,
                )
                .map_err(|e| Error::corrupt(location(), e.to_string()))?;
            if self.scratch.len() % size != 0 {
                return Err(Error::corrupt(
                    location(),
                    "a unit does not hold whole values",
                ));
            }
            self.values.clear();
            self.values.resize(self.scratch.len() / size, T::default());
            T::decode(&self.scratch, &mut self.values)
                .map_err(|at| Error::corrupt(location(), format!("value {at} is invalid")))?;
            if meta.dtype.fixed_len().is_none() && state.table.has_entry_sizes() {
                // Element offsets of the unit's entries, from the sizes it stores.
                let start = unit.raw_offset / size as u64;
                self.offsets.clear();
                self.offsets.push(start);
                self.offsets_base = unit.first_entry;
                state
                    .table
                    .entry_sizes(u, stored, &mut self.offsets)
                    .map_err(|e| Error::corrupt(location(), e.to_string()))?;
                let mut at = start;
                for offset in &mut self.offsets[1..] {
                    let Some(count) = entry_count(*offset, size) else {
                        self.offsets.clear();
                        return Err(Error::corrupt(
                            location(),
                            "an entry size is not a whole number of values",
                        ));
                    };
                    at += u64::from(count);
                    *offset = at;
                }
            }
            state.unit = Some(u);
        }
        let first_value = unit.raw_offset / size as u64;
        let (from, to) = match meta.dtype.fixed_len() {
            Some(len) => (local * len as u64, (local + 1) * len as u64),
            None => {
                let at = (local - self.offsets_base) as usize;
                match (self.offsets.get(at), self.offsets.get(at + 1)) {
                    (Some(&from), Some(&to)) => (from, to),
                    _ => return Err(Error::corrupt(location(), "entry outside the offsets")),
                }
            }
        };
        let (from, to) = (from.checked_sub(first_value), to.checked_sub(first_value));
        match (from, to) {
            (Some(from), Some(to)) if to as usize <= self.values.len() => {
                Ok(&self.values[from as usize..to as usize])
            }
            _ => Err(Error::corrupt(location(), "entry falls outside its unit")),
        }
    }
}

enum BlockError {
    Codec(evtc_codecs::Error),
    Invalid(usize),
}

/// Splits the first block off `bytes`.
fn split_block(bytes: &[u8]) -> Result<(&[u8], &[u8]), evtc_codecs::Error> {
    let header = BlockHeader::parse(bytes)?;
    let len = usize::try_from(header.block_len())
        .ok()
        .filter(|&len| len <= bytes.len())
        .ok_or(evtc_codecs::Error::Truncated {
            needed: header.block_len(),
            available: bytes.len(),
        })?;
    Ok(bytes.split_at(len))
}

/// Decodes one block of exactly `len` bytes into `out`.
fn decode_block_into<T: Scalar>(block: &[u8], len: usize, out: &mut [T]) -> Result<(), BlockError> {
    let header = BlockHeader::parse(block).map_err(BlockError::Codec)?;
    if header.uncompressed_len != len as u64 {
        return Err(BlockError::Codec(evtc_codecs::Error::OutputSize {
            expected: usize::try_from(header.uncompressed_len).unwrap_or(usize::MAX),
            actual: len,
        }));
    }
    if let Some(bytes) = T::as_bytes_mut(out) {
        return DECODER
            .with(|d| d.borrow_mut().decode_into(block, bytes))
            .map(|_| ())
            .map_err(BlockError::Codec);
    }
    let mut scratch = vec![0u8; len];
    DECODER
        .with(|d| d.borrow_mut().decode_into(block, &mut scratch))
        .map_err(BlockError::Codec)?;
    T::decode(&scratch, out).map_err(BlockError::Invalid)
}

/// One value of a row read with [`TreeReader::rows`]: a scalar, a list (fixed-size and
/// variable-length arrays), or a string.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// `i8`.
    I8(i8),
    /// `u8`.
    U8(u8),
    /// `i16`.
    I16(i16),
    /// `u16`.
    U16(u16),
    /// `i32`.
    I32(i32),
    /// `u32`.
    U32(u32),
    /// `i64`.
    I64(i64),
    /// `u64`.
    U64(u64),
    /// `f32`.
    F32(f32),
    /// `f64`.
    F64(f64),
    /// The values of an array entry.
    List(Vec<Value>),
    /// A UTF-8 string entry.
    Str(String),
    /// A byte-string entry.
    Bytes(Vec<u8>),
}

macro_rules! value_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x)
            }
        }
    )*};
}
value_from!(bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// A typed cursor behind a dynamic row column.
enum AnyCursor<'a, R: ReadAt> {
    Bool(BranchCursor<'a, R, bool>),
    I8(BranchCursor<'a, R, i8>),
    U8(BranchCursor<'a, R, u8>),
    I16(BranchCursor<'a, R, i16>),
    U16(BranchCursor<'a, R, u16>),
    I32(BranchCursor<'a, R, i32>),
    U32(BranchCursor<'a, R, u32>),
    I64(BranchCursor<'a, R, i64>),
    U64(BranchCursor<'a, R, u64>),
    F32(BranchCursor<'a, R, f32>),
    F64(BranchCursor<'a, R, f64>),
}

fn to_value<T: Scalar + Into<Value>>(dtype: DataType, values: &[T]) -> Value {
    match dtype {
        DataType::Scalar(_) => values
            .first()
            .map_or(Value::List(Vec::new()), |&v| v.into()),
        _ => Value::List(values.iter().map(|&v| v.into()).collect()),
    }
}

/// Entry reads over a set of branches, one [`Value`] per branch and entry, with a basket cache per
/// branch (sequential reads decompress each basket once). Made by [`TreeReader::rows`].
pub struct RowReader<'a, R: ReadAt = LocalFile> {
    columns: Vec<(DataType, AnyCursor<'a, R>)>,
    next: u64,
    entries: u64,
}

impl<R: ReadAt> std::fmt::Debug for RowReader<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowReader")
            .field("columns", &self.columns.len())
            .field("next", &self.next)
            .finish()
    }
}

impl<'a, R: ReadAt> TreeReader<'a, R> {
    /// Row reads of the named branches, in the order given.
    ///
    /// # Errors
    /// [`Error::NoSuchBranch`].
    pub fn rows(&self, names: &[&str]) -> Result<RowReader<'a, R>> {
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let branch = self.branch(name)?;
            let dtype = branch.meta().dtype;
            let cursor = match dtype.scalar() {
                ScalarType::Bool => AnyCursor::Bool(branch.cursor()?),
                ScalarType::I8 => AnyCursor::I8(branch.cursor()?),
                ScalarType::U8 => AnyCursor::U8(branch.cursor()?),
                ScalarType::I16 => AnyCursor::I16(branch.cursor()?),
                ScalarType::U16 => AnyCursor::U16(branch.cursor()?),
                ScalarType::I32 => AnyCursor::I32(branch.cursor()?),
                ScalarType::U32 => AnyCursor::U32(branch.cursor()?),
                ScalarType::I64 => AnyCursor::I64(branch.cursor()?),
                ScalarType::U64 => AnyCursor::U64(branch.cursor()?),
                ScalarType::F32 => AnyCursor::F32(branch.cursor()?),
                ScalarType::F64 => AnyCursor::F64(branch.cursor()?),
            };
            columns.push((dtype, cursor));
        }
        Ok(RowReader {
            columns,
            next: 0,
            entries: self.entries(),
        })
    }
}

impl<R: ReadAt> RowReader<'_, R> {
    /// The values of `entry`, one per branch.
    ///
    /// # Errors
    /// [`Error::EntryOutOfRange`]; I/O and corruption errors; invalid UTF-8 in a UTF-8 branch.
    pub fn get(&mut self, entry: u64) -> Result<Vec<Value>> {
        let mut row = Vec::with_capacity(self.columns.len());
        for (dtype, cursor) in &mut self.columns {
            let dtype = *dtype;
            let value = match cursor {
                AnyCursor::U8(c) => {
                    let location = c.branch.location(None, 0);
                    let bytes = c.get(entry)?;
                    match dtype {
                        DataType::Utf8 => Value::Str(
                            std::str::from_utf8(bytes)
                                .map_err(|_| {
                                    Error::corrupt(
                                        location,
                                        format!("entry {entry} is not valid UTF-8"),
                                    )
                                })?
                                .to_owned(),
                        ),
                        DataType::Bytes => Value::Bytes(bytes.to_vec()),
                        _ => to_value(dtype, bytes),
                    }
                }
                AnyCursor::Bool(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::I8(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::I16(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::U16(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::I32(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::U32(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::I64(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::U64(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::F32(c) => to_value(dtype, c.get(entry)?),
                AnyCursor::F64(c) => to_value(dtype, c.get(entry)?),
            };
            row.push(value);
        }
        Ok(row)
    }
}

impl<R: ReadAt> Iterator for RowReader<'_, R> {
    type Item = Result<Vec<Value>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.entries {
            return None;
        }
        let entry = self.next;
        self.next += 1;
        Some(self.get(entry))
    }
}
