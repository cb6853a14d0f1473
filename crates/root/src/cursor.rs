//! A bounds-checked big-endian reader over one record's bytes.

use crate::error::{Error, Result};

/// Reads ROOT's big-endian fields from a byte slice; every read is checked and a short read is a
/// [`Error::Corrupt`] naming the record and the position.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Added to positions in error messages (the record's file offset, or 0 inside decompressed
    /// objects).
    base: u64,
    what: &'a str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], base: u64, what: &'a str) -> Cursor<'a> {
        Cursor {
            buf,
            pos: 0,
            base,
            what,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn error(&self, detail: impl Into<String>) -> Error {
        Error::corrupt(self.what, self.base + self.pos as u64, detail)
    }

    /// Moves to an absolute position inside the buffer.
    pub(crate) fn seek(&mut self, pos: usize) -> Result<()> {
        if pos > self.buf.len() {
            return Err(self.error(format!(
                "a byte count points to {pos}, past the end of the {}-byte record",
                self.buf.len()
            )));
        }
        self.pos = pos;
        Ok(())
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "needs {n} more bytes, only {} left in the record",
                self.remaining()
            )));
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    pub(crate) fn skip(&mut self, n: usize) -> Result<()> {
        self.take(n).map(|_| ())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn i16(&mut self) -> Result<i16> {
        self.array().map(i16::from_be_bytes)
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        self.array().map(u16::from_be_bytes)
    }

    pub(crate) fn i32(&mut self) -> Result<i32> {
        self.array().map(i32::from_be_bytes)
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        self.array().map(u32::from_be_bytes)
    }

    pub(crate) fn i64(&mut self) -> Result<i64> {
        self.array().map(i64::from_be_bytes)
    }

    /// A non-negative 32-bit count or size.
    pub(crate) fn count(&mut self, field: &str) -> Result<usize> {
        let at = self.pos;
        let v = self.i32()?;
        usize::try_from(v).map_err(|_| {
            Error::corrupt(self.what, self.base + at as u64, format!("{field} is {v}"))
        })
    }

    /// A TString: one length byte, or 255 then a 32-bit length; then the bytes.
    pub(crate) fn string(&mut self) -> Result<String> {
        let len = match self.u8()? {
            255 => self.count("string length")?,
            n => usize::from(n),
        };
        Ok(String::from_utf8_lossy(self.take(len)?).into_owned())
    }

    /// A `char*` as ROOT streams a kCharStar member (`TStreamerInfo`'s kCharStar case, as
    /// `TBufferFile::WriteCharStar`): a 32-bit big-endian length, then as many characters (0
    /// and none for a null pointer or an empty string). Returns the characters.
    pub(crate) fn char_star(&mut self) -> Result<&'a [u8]> {
        let len = self.count("char* length")?;
        self.take(len)
    }

    /// A NUL-terminated C string (class names in object tags).
    pub(crate) fn cstring(&mut self) -> Result<String> {
        let rest = &self.buf[self.pos..];
        let Some(end) = rest.iter().position(|&b| b == 0) else {
            return Err(self.error("a class name has no terminating NUL"));
        };
        let s = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.pos += end + 1;
        Ok(s)
    }

    /// A file offset that is 64-bit when `big`, else 32-bit.
    pub(crate) fn seek_field(&mut self, big: bool) -> Result<u64> {
        let at = self.pos;
        let v = if big {
            self.i64()?
        } else {
            i64::from(self.i32()?)
        };
        u64::try_from(v).map_err(|_| {
            Error::corrupt(
                self.what,
                self.base + at as u64,
                format!("negative file offset {v}"),
            )
        })
    }
}

/// A signed big-endian integer of 1 to 8 bytes (a counter member or leaf as ROOT streams it);
/// `None` for no bytes.
pub(crate) fn signed_be(bytes: &[u8]) -> Option<i64> {
    let (&first, rest) = bytes.split_first()?;
    Some(
        rest.iter()
            .fold(i64::from(first as i8), |v, &b| v << 8 | i64::from(b)),
    )
}
