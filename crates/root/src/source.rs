//! Positional reads: the one trait every byte of a ROOT file comes through.

use crate::error::{Error, Result};

/// A source of bytes read at absolute offsets, shared between threads.
///
/// Implemented for [`std::fs::File`] (positional reads, no shared cursor) and for in-memory
/// buffers (`Vec<u8>`), which the fuzz target and tests use.
pub trait ReadAt: Send + Sync {
    /// Total length in bytes.
    ///
    /// # Errors
    /// I/O errors from the operating system.
    fn len(&self) -> std::io::Result<u64>;

    /// Whether the source holds no bytes.
    ///
    /// # Errors
    /// As for [`ReadAt::len`].
    fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Fills `buf` with the bytes at `offset`.
    ///
    /// # Errors
    /// I/O errors, including `UnexpectedEof` when the range runs past the end.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;
}

impl ReadAt for std::fs::File {
    fn len(&self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    #[cfg(unix)]
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }

    #[cfg(windows)]
    fn read_exact_at(&self, mut offset: u64, mut buf: &mut [u8]) -> std::io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match self.seek_read(buf, offset) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl ReadAt for Vec<u8> {
    fn len(&self) -> std::io::Result<u64> {
        Ok(self.as_slice().len() as u64)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| std::io::ErrorKind::UnexpectedEof)?;
        let bytes = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// Reads `len` bytes at `offset`, after checking the range against the file length (so a size read
/// off disk never allocates more than the file holds).
pub(crate) fn read_range<R: ReadAt + ?Sized>(
    source: &R,
    file_len: u64,
    offset: u64,
    len: u64,
    what: &dyn Fn() -> String,
) -> Result<Vec<u8>> {
    let end = offset.checked_add(len);
    if end.is_none_or(|end| end > file_len) {
        return Err(Error::corrupt(
            what(),
            offset,
            format!("{len} bytes from here run past the end of the file ({file_len} bytes)"),
        ));
    }
    let mut buf = vec![0; len as usize];
    source
        .read_exact_at(offset, &mut buf)
        .map_err(|source| Error::Io {
            what: what(),
            offset,
            source,
        })?;
    Ok(buf)
}
