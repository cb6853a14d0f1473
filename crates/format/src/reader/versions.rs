//! Finding the version of a file a reader opens: the trailer at the end, or, when an append
//! was interrupted (docs/format.md 2.4), the trailer of the last complete version before it.

use crate::error::{Error, Result};
use crate::io::ReadAt;
use crate::record::{FILE_HEADER_LEN, TRAILER_COPY_INTERVAL, TRAILER_LEN, TRAILER_MAGIC, Trailer};

/// Bytes read at a time while looking back for a trailer.
const CHUNK: u64 = 1 << 20;

/// The offset and contents of the trailer of the file's last complete version: the one at the
/// end, or the one an interrupted append left behind, which a copy within the last
/// [`TRAILER_COPY_INTERVAL`] plus a basket's bytes points to (or which is itself that close).
///
/// # Errors
/// The error of the trailer at the end when no complete version is found; I/O errors.
pub(crate) fn last_complete<R: ReadAt>(
    source: &R,
    max_basket_bytes: u64,
) -> Result<(u64, Trailer)> {
    let file_len = source.len();
    if file_len < FILE_HEADER_LEN + TRAILER_LEN {
        return Err(Error::NotEvtc(format!(
            "{file_len} bytes is too short for an evtc file"
        )));
    }
    let at = file_len - TRAILER_LEN;
    // The trailer at the end, or a copy there (an append stopped right after writing one).
    if let Some(found) = committed(source, at, file_len)? {
        return Ok(found);
    }
    let error = match trailer_at(source, at) {
        Ok(trailer) => trailer_not_after_footer(&trailer, file_len),
        Err(e @ (Error::NotEvtc(_) | Error::Checksum { .. })) => e,
        Err(e) => return Err(e),
    };
    let window = TRAILER_COPY_INTERVAL
        .saturating_add(max_basket_bytes)
        .saturating_add(CHUNK);
    let lowest = FILE_HEADER_LEN.max(at.saturating_sub(window));
    let mut end = at; // the trailers looked for start before `end`
    let mut chunk = Vec::new();
    while end > lowest {
        let start = end.saturating_sub(CHUNK).max(lowest);
        // The chunk reaches a trailer's length past `end`, so that none is cut in two.
        let len = (end - start + TRAILER_LEN - 1).min(file_len - start);
        chunk.resize(len as usize, 0);
        source
            .read_exact_at(start, &mut chunk)
            .map_err(|e| Error::io(source.path(), e))?;
        let magic = memchr::memmem::FinderRev::new(&TRAILER_MAGIC);
        let mut limit = chunk.len();
        while let Some(m) = magic.rfind(&chunk[..limit]) {
            limit = m + TRAILER_MAGIC.len() - 1;
            let Some(offset) = (start + m as u64).checked_sub(24) else {
                break;
            };
            if offset < start || offset >= end {
                continue;
            }
            if let Some(found) = committed(source, offset, file_len)? {
                return Ok(found);
            }
        }
        end = start;
    }
    Err(error)
}

/// The complete version a sound trailer at `offset` belongs to: itself when its footer ends
/// where it starts, else the trailer it is a copy of (docs/format.md 2.4).
fn committed<R: ReadAt>(source: &R, offset: u64, file_len: u64) -> Result<Option<(u64, Trailer)>> {
    let Ok(trailer) = trailer_at(source, offset) else {
        return Ok(None);
    };
    let Some(end) = trailer.footer_offset.checked_add(trailer.footer_len) else {
        return Ok(None);
    };
    if trailer.footer_offset < FILE_HEADER_LEN || end > offset || end > file_len - TRAILER_LEN {
        return Ok(None);
    }
    if end == offset {
        return Ok(Some((offset, trailer)));
    }
    match trailer_at(source, end) {
        Ok(original) if original == trailer => Ok(Some((end, trailer))),
        _ => Ok(None),
    }
}

fn trailer_at<R: ReadAt>(source: &R, offset: u64) -> Result<Trailer> {
    let mut bytes = [0u8; TRAILER_LEN as usize];
    source
        .read_exact_at(offset, &mut bytes)
        .map_err(|e| Error::io(source.path(), e))?;
    Trailer::decode(&bytes, offset)
}

fn trailer_not_after_footer(trailer: &Trailer, file_len: u64) -> Error {
    Error::corrupt(
        crate::error::Location::at(trailer.footer_offset),
        format!(
            "the trailer puts the footer at {}..+{}, which is not the end of the records (file length {file_len})",
            trailer.footer_offset, trailer.footer_len
        ),
    )
}
