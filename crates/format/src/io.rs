//! Positional reads: the one trait every byte of a file is read through.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A source of bytes that can be read at any offset, from several threads at once.
///
/// Local files and in-memory buffers implement it; an object-store backend only needs these two
/// methods.
pub trait ReadAt: Send + Sync {
    /// Total length in bytes.
    fn len(&self) -> u64;

    /// Whether the source is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`.
    ///
    /// # Errors
    /// Any I/O error, including reading past the end.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;

    /// The path behind this source, for error messages.
    fn path(&self) -> Option<&Path> {
        None
    }

    /// The bytes at `offset..offset + len` borrowed from the source itself, when it holds them in
    /// memory (a buffer, a memory-mapped file); `None` when they must be copied with
    /// [`ReadAt::read_exact_at`], or lie past the end. Readers use it to skip a copy (and, for
    /// mapped files, the system call) where they only look at the bytes.
    fn bytes_at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let _ = (offset, len);
        None
    }
}

/// `bytes[offset..offset + len]`, or `None` past the end.
fn slice_at(bytes: &[u8], offset: u64, len: usize) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    bytes.get(start..start.checked_add(len)?)
}

/// A local file, read with positional reads (`pread`, no shared cursor) or, when opened with
/// [`LocalFile::open_mapped`], memory-mapped.
///
/// Positional reads are the default: a file truncated while it is open is then an I/O error, where
/// under a memory map it kills the process (`SIGBUS`). A mapped file spares the system call and the
/// copy of each read, which is most of the cost of a random single-entry read of a RAC branch.
#[derive(Debug)]
pub struct LocalFile {
    file: File,
    len: u64,
    path: PathBuf,
    map: Option<memmap2::Mmap>,
}

impl LocalFile {
    /// Opens `path` for reading.
    ///
    /// # Errors
    /// The I/O error of opening or inspecting the file.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<LocalFile> {
        let path = path.as_ref().to_owned();
        let file = File::open(&path)?;
        let len = file.metadata()?.len();
        Ok(LocalFile {
            file,
            len,
            path,
            map: None,
        })
    }

    /// Opens `path` for reading through a read-only memory map of the whole file (an empty file
    /// is read as with [`LocalFile::open`]).
    ///
    /// On Linux the map is advised `MADV_HUGEPAGE`, so that the pages it faults in enter the page
    /// cache as large folios, as `read`'s readahead brings them, not one page at a time (later
    /// positional reads of small folios are slower; docs/benchmarks.md). On a cold file a fault
    /// may then read ahead more (up to a few MiB) than a plain map's 128 KiB around it.
    ///
    /// # Errors
    /// The I/O error of opening, inspecting or mapping the file.
    ///
    /// # Safety
    /// The file's mapped bytes must not be truncated or changed while this `LocalFile` (or any
    /// reader over it) lives: reading a page cut off by truncation raises `SIGBUS`, which ends
    /// the process, and bytes changing under a reader are undefined behaviour. Files written once
    /// and then only read, as evtc files are, meet this, and so do files updated in place
    /// (`FileWriter::append` writes past the end), except one mapped while it held an
    /// interrupted update's bytes: the next update cuts those off (readers never read them, so a
    /// reader that does not touch them is not hurt). Files another process is writing anew do
    /// not meet it.
    pub unsafe fn open_mapped(path: impl AsRef<Path>) -> std::io::Result<LocalFile> {
        let mut file = LocalFile::open(path)?;
        if file.len > 0 {
            // SAFETY: the caller promises the file is neither truncated nor modified while mapped.
            let map = unsafe { memmap2::Mmap::map(&file.file)? };
            // Advice only: a kernel without transparent huge pages ignores or refuses it, and the
            // map reads the same either way.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            file.map = Some(map);
        }
        Ok(file)
    }

    /// Whether the file is memory-mapped ([`LocalFile::open_mapped`]).
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }
}

impl ReadAt for LocalFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if let Some(map) = &self.map {
            return map[..].read_exact_at(offset, buf);
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
        }
        #[cfg(windows)]
        {
            let mut done = 0;
            while done < buf.len() {
                let n = std::os::windows::fs::FileExt::seek_read(
                    &self.file,
                    &mut buf[done..],
                    offset + done as u64,
                )?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                done += n;
            }
            Ok(())
        }
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn bytes_at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        slice_at(self.map.as_deref()?, offset, len)
    }
}

impl ReadAt for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| std::io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn bytes_at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        slice_at(self, offset, len)
    }
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.as_slice().read_exact_at(offset, buf)
    }

    fn bytes_at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        slice_at(self, offset, len)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for Arc<T> {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        (**self).read_exact_at(offset, buf)
    }

    fn path(&self) -> Option<&Path> {
        (**self).path()
    }

    fn bytes_at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        (**self).bytes_at(offset, len)
    }
}
