//! The file-level writer: [`FileWriter`] creates a file (or, through `update`, appends to one),
//! writes its records, and finishes it with its footer and trailer.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::branch::{BranchState, build_branches};
use super::encode::schema_record;
use super::update::Update;
use super::{FileRef, OwnedTreeWriter, TreeWriter};
use crate::error::{Error, Result};
use crate::meta::{Extension, FileMeta, TreeMeta};
use crate::output::Output;
use crate::record::{self, NO_BRANCH, RecordHeader, RecordKind, Trailer};
use crate::schema::{BranchSpec, WriteOptions};

/// Writes an evtc file: create it, write its trees one after the other, then [`FileWriter::finish`].
///
/// Data goes to an unnamed file in the target's directory (Linux; elsewhere a visible
/// `NAME.partial` removed on drop), named as the target only when `finish` succeeds (after an
/// fsync): a writer dropped or killed before that leaves nothing behind, and the target name never
/// holds a half-written file. [`FileWriter::keep_partial`] keeps what was written so far under a
/// name of the caller's choice, for `evtc recover`.
///
/// ```
/// use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("events.evtc");
/// let mut file = FileWriter::create(&path, WriteOptions::default())?;
/// let mut tree = file.tree("Events", vec![
///     BranchSpec::scalar("nMuon", ScalarType::U32),
///     BranchSpec::jagged("Muon_pt", ScalarType::F32).counter("nMuon"),
/// ])?;
/// tree.fill_column(0, &[2u32, 0, 1])?;
/// tree.fill_jagged(1, &[2, 0, 1], &[31.5f32, 12.25, 40.0])?;
/// tree.commit()?;
/// tree.finish()?;
/// file.finish()?;
///
/// let reader = FileReader::open(&path)?;
/// let pt = reader.tree("Events")?.branch("Muon_pt")?.read_jagged::<f32>()?;
/// assert_eq!(*pt.offsets, [0, 2, 2, 3]);
/// assert_eq!(pt.values, [31.5, 12.25, 40.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileWriter {
    pub(super) path: PathBuf,
    pub(super) output: Option<Output>,
    pub(super) out: std::io::BufWriter<std::fs::File>,
    pub(super) offset: u64,
    pub(super) trees: Vec<TreeMeta>,
    pub(super) open_tree: Option<String>,
    pub(super) options: WriteOptions,
    pub(super) pool: Option<rayon::ThreadPool>,
    /// The file's own extensions, for its footer.
    pub(super) extensions: Vec<Extension>,
    /// Set when the writer appends to an existing file ([`FileWriter::append`]).
    pub(super) update: Option<Box<Update>>,
}

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("path", &self.path)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl FileWriter {
    /// Starts writing `path` (through an unnamed file in the same directory).
    ///
    /// # Errors
    /// [`Error::OutputExists`] if a file is at `path` and [`WriteOptions::overwrite`] is off;
    /// [`Error::Io`] if `path` is a directory, or its directory does not exist or is not
    /// writable.
    pub fn create(path: impl AsRef<Path>, options: WriteOptions) -> Result<FileWriter> {
        let path = path.as_ref().to_owned();
        FileWriter::check_options(&path, &options)?;
        let output = Output::create(&path, options.overwrite)
            .map_err(|e| Error::output(&path, e, options.overwrite))?;
        let file = output
            .file()
            .try_clone()
            .map_err(|e| Error::io(Some(&path), e))?;
        let pool = FileWriter::pool(&options, &path)?;
        let mut writer = FileWriter {
            path,
            output: Some(output),
            out: std::io::BufWriter::with_capacity(1 << 20, file),
            offset: 0,
            trees: Vec::new(),
            open_tree: None,
            options,
            pool,
            extensions: Vec::new(),
            update: None,
        };
        writer.write(&record::file_header())?;
        Ok(writer)
    }

    /// The trees of the file: those finished so far, and, for a writer that appends
    /// ([`FileWriter::append`]), the file's (with what this writer added to them).
    pub fn trees(&self) -> &[TreeMeta] {
        &self.trees
    }

    /// Refuses options that would write baskets readers refuse.
    pub(super) fn check_options(path: &Path, options: &WriteOptions) -> Result<()> {
        let basket_size = options.basket_size_for(options.codec);
        if basket_size as u64 > options.max_basket_bytes {
            return Err(Error::BasketTooLarge {
                what: format!("writing {}: the basket size", path.display()),
                bytes: basket_size as u64,
                limit: options.max_basket_bytes,
                hint: "readers refuse larger baskets by default; raise \
                       WriteOptions::max_basket_bytes to write them anyway",
            });
        }
        Ok(())
    }

    /// The thread pool of a writer with [`WriteOptions::threads`] above one.
    pub(super) fn pool(options: &WriteOptions, path: &Path) -> Result<Option<rayon::ThreadPool>> {
        if options.threads <= 1 {
            return Ok(None);
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .map(Some)
            .map_err(|e| Error::io(Some(path), std::io::Error::other(e)))
    }

    /// Starts a tree with the given branches. Trees are written one at a time: finish this one with
    /// [`TreeWriter::finish`] before starting the next.
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] for duplicate names, an unknown or non-integer counter, a counter
    /// on a fixed-size branch, `Boundaries::None` without a counter, or a second tree of the same name.
    pub fn tree(
        &mut self,
        name: impl Into<String>,
        branches: Vec<BranchSpec>,
    ) -> Result<TreeWriter<'_>> {
        let name = name.into();
        self.check_no_open_tree(&name)?;
        if self.trees.iter().any(|t| t.name == name) {
            return Err(Error::InvalidSchema {
                tree: name,
                reason: "the file already has a tree of this name".into(),
            });
        }
        let mut states = build_branches(&name, branches, &self.options)?;
        let tree_no = u32::try_from(self.trees.len()).map_err(|_| Error::InvalidSchema {
            tree: name.clone(),
            reason: "too many trees".into(),
        })?;
        self.write(&schema_record(tree_no, &name, &[], &states, false))?;
        self.write_dictionaries(tree_no, &mut states)?;
        self.open_tree = Some(name.clone());
        Ok(TreeWriter::new(
            FileRef::Borrowed(self),
            tree_no,
            name,
            states,
        ))
    }

    /// Refuses to start tree `name` while another is being written.
    pub(super) fn check_no_open_tree(&self, name: &str) -> Result<()> {
        match &self.open_tree {
            Some(open) => Err(Error::InvalidSchema {
                tree: name.to_owned(),
                reason: format!("tree {open:?} is still being written"),
            }),
            None => Ok(()),
        }
    }

    /// Writes the dictionaries that branches laid out as another file's bring
    /// ([`BranchSpec::like`]).
    pub(super) fn write_dictionaries(
        &mut self,
        tree_no: u32,
        states: &mut [BranchState],
    ) -> Result<()> {
        for state in states {
            if let Some(dictionary) = &state.dictionary {
                let header = RecordHeader::metadata(RecordKind::Dictionary, tree_no, state.number);
                let record = record::encode_record(header, &dictionary.bytes);
                state.meta.dictionary_offset = self.start_record(record.len() as u64)?;
                state.meta.dictionary_len = record.len() as u64;
                self.write(&record)?;
            }
        }
        Ok(())
    }

    /// As [`FileWriter::tree`], but the tree writer owns the file writer, so that it can be kept
    /// without a borrow (in a binding to another language, where a tree stays open between calls).
    /// [`OwnedTreeWriter::finish`] gives the file writer back.
    ///
    /// # Errors
    /// As for [`FileWriter::tree`]. The file writer is then dropped: nothing appears at its path.
    pub fn into_tree(
        self,
        name: impl Into<String>,
        branches: Vec<BranchSpec>,
    ) -> Result<OwnedTreeWriter> {
        let mut file = Box::new(self);
        let (tree_no, name, states) = {
            let tree = file.tree(name, branches)?;
            (tree.tree_no, tree.name, tree.branches)
        };
        Ok(OwnedTreeWriter(TreeWriter::new(
            FileRef::Owned(file),
            tree_no,
            name,
            states,
        )))
    }

    /// Writes the footer and trailer, syncs the file to disk (unless [`WriteOptions::sync`] is off)
    /// and gives it the target path (replacing a file there only with
    /// [`WriteOptions::overwrite`]).
    ///
    /// # Errors
    /// [`Error::InvalidSchema`] if a tree was started but not finished; [`Error::OutputExists`]
    /// if a file appeared at the path while this one was written (without
    /// [`WriteOptions::overwrite`]; the new file is then dropped); [`Error::Io`].
    pub fn finish(mut self) -> Result<()> {
        if let Some(open) = self.open_tree.take() {
            return Err(Error::InvalidSchema {
                tree: open,
                reason: "the tree was not finished (call TreeWriter::finish); nothing was written"
                    .into(),
            });
        }
        let meta = FileMeta {
            major: record::MAJOR,
            minor: record::MINOR,
            writer: concat!("evtc-format ", env!("CARGO_PKG_VERSION")).into(),
            trees: std::mem::take(&mut self.trees),
            extensions: std::mem::take(&mut self.extensions),
        };
        let body = postcard::to_stdvec(&meta).expect("metadata serializes");
        let header = RecordHeader::metadata(RecordKind::Footer, 0, NO_BRANCH);
        let footer = record::encode_record(header, &body);
        let trailer = Trailer {
            footer_offset: self.start_record(footer.len() as u64)?,
            footer_len: footer.len() as u64,
        };
        self.write(&footer)?;
        if self.update.is_some() {
            // The new version exists once its trailer ends the file: everything before it is
            // on disk first, so that a crash never leaves a trailer pointing to lost bytes.
            self.sync()?;
            self.write_raw(&trailer.encode())?;
            self.sync()?;
            if let Some(update) = &mut self.update {
                update.finished = true;
            }
            return Ok(());
        }
        self.write_raw(&trailer.encode())?;
        let path = self.path.clone();
        self.sync()?;
        let replace = self.options.overwrite;
        self.output
            .take()
            .expect("the output lives until finish")
            .persist(&path, replace)
            .map_err(|e| Error::output(&path, e, replace))?;
        if let Some(dir) = path
            .parent()
            .filter(|p| self.options.sync && !p.as_os_str().is_empty())
        {
            // Make the rename durable too; not all platforms can open a directory, so best effort.
            if let Ok(dir) = std::fs::File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    /// Stops writing and keeps the records written so far as `path` (typically
    /// `NAME.partial`, see [`FileWriter::partial_path`]): a file without footer that
    /// `evtc recover` turns into a valid file of its complete clusters. For a writer that must
    /// stop early (an interrupted conversion); the target name stays untouched.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn keep_partial(mut self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        if self.update.is_some() {
            return Err(Error::Request(format!(
                "{}: an append keeps no partial file; the file stays as it was",
                self.path.display()
            )));
        }
        self.out.flush().map_err(|e| Error::io(Some(path), e))?;
        self.output
            .take()
            .expect("the output lives until finish")
            .persist(path, true)
            .map_err(|e| Error::io(Some(path), e))
    }

    /// Where [`FileWriter::keep_partial`] keeps the partial file of `target` by convention:
    /// `NAME.partial` beside it.
    pub fn partial_path(target: impl AsRef<Path>) -> PathBuf {
        crate::output::partial_path(target.as_ref())
    }

    /// Writes the buffered bytes and, unless [`WriteOptions::sync`] is off, syncs them to disk.
    pub(super) fn sync(&mut self) -> Result<()> {
        self.out
            .flush()
            .map_err(|e| Error::io(Some(&self.path), e))?;
        if self.options.sync {
            self.out
                .get_ref()
                .sync_all()
                .map_err(|e| Error::io(Some(&self.path), e))?;
        }
        Ok(())
    }

    /// Writes one record (or the file header).
    pub(super) fn write(&mut self, record: &[u8]) -> Result<()> {
        self.write_parts(&[record])
    }

    /// Writes one record given in parts (a header and a borrowed body). An append first writes
    /// a copy of its base version's trailer when the record would end more than
    /// [`record::TRAILER_COPY_INTERVAL`] bytes after the last (docs/format.md 2.4).
    pub(super) fn write_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        self.start_record(parts.iter().map(|p| p.len() as u64).sum())?;
        for part in parts {
            self.write_raw(part)?;
        }
        Ok(())
    }

    /// The offset at which a record of `len` bytes written next starts: after the trailer copy
    /// an append writes first when one is due ([`FileWriter::write_parts`]).
    pub(super) fn start_record(&mut self, len: u64) -> Result<u64> {
        if let Some(copy) = self
            .update
            .as_mut()
            .and_then(|u| u.trailer_copy_due(self.offset, len))
        {
            self.write_raw(&copy)?;
        }
        Ok(self.offset)
    }

    pub(super) fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(Some(&self.path), e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // An append that did not finish takes its bytes back: the file is its base version
        // again (a killed process leaves them, and readers skip them: docs/format.md 2.4).
        if let Some(update) = self.update.as_ref().filter(|u| !u.finished) {
            let _ = self.out.flush();
            let _ = self.out.get_ref().set_len(update.base_len);
        }
    }
}
