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
}

/// A local file read with positional reads (`pread`): no shared cursor, no mmap (a file truncated
/// under an mmap kills the process; under `pread` it is an error).
#[derive(Debug)]
pub struct LocalFile {
    file: File,
    len: u64,
    path: PathBuf,
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
        Ok(LocalFile { file, len, path })
    }
}

impl ReadAt for LocalFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
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
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.as_slice().read_exact_at(offset, buf)
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
}
