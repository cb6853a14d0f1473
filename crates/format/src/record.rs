//! The fixed-size structures of docs/format.md: file header, trailer and record header.

use evtc_codecs::{Crc32, crc32};

use crate::error::{Error, Location, Result};
use evtc_codecs::le;

/// File magic: `"EVTC\r\n\x1a\n"`.
pub const FILE_MAGIC: [u8; 8] = *b"EVTC\r\n\x1a\n";
/// Trailer magic.
pub const TRAILER_MAGIC: [u8; 8] = *b"EVTCTAIL";
/// Record magic.
pub const RECORD_MAGIC: [u8; 4] = *b"EVRC";
/// The format version this crate writes.
pub const MAJOR: u16 = 1;
/// The format minor version this crate writes.
pub const MINOR: u16 = 12;
/// File header length.
pub const FILE_HEADER_LEN: u64 = 16;
/// Trailer length.
pub const TRAILER_LEN: u64 = 32;
/// The most bytes an append writes between two copies of the trailer of the version it
/// appends to (besides one record longer than this), so that a reader finds that version near
/// the end of a file whose append was interrupted (docs/format.md 2.4).
pub const TRAILER_COPY_INTERVAL: u64 = 64 << 20;
/// Record header length.
pub const RECORD_HEADER_LEN: usize = 48;
/// Branch number of tree-level records.
pub const NO_BRANCH: u32 = u32::MAX;

/// The file header bytes this crate writes.
pub fn file_header() -> [u8; FILE_HEADER_LEN as usize] {
    let mut out = [0u8; FILE_HEADER_LEN as usize];
    out[..8].copy_from_slice(&FILE_MAGIC);
    out[8..10].copy_from_slice(&MAJOR.to_le_bytes());
    out[10..12].copy_from_slice(&MINOR.to_le_bytes());
    out
}

/// Checks a file header; returns its version.
pub fn check_file_header(bytes: &[u8; FILE_HEADER_LEN as usize]) -> Result<(u16, u16)> {
    if bytes[..8] != FILE_MAGIC {
        if bytes[..4] == FILE_MAGIC[..4] {
            return Err(Error::NotEvtc(
                "the magic is damaged (line-ending conversion?)".into(),
            ));
        }
        return Err(Error::NotEvtc("wrong magic at the start".into()));
    }
    let version = (
        u16::from_le_bytes([bytes[8], bytes[9]]),
        u16::from_le_bytes([bytes[10], bytes[11]]),
    );
    check_version(version.0, version.1)?;
    Ok(version)
}

fn check_version(major: u16, minor: u16) -> Result<()> {
    if major != MAJOR {
        return Err(Error::UnsupportedVersion {
            major,
            minor,
            supported: MAJOR,
        });
    }
    Ok(())
}

/// The trailer: where the footer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// File offset of the footer record.
    pub footer_offset: u64,
    /// Length of the footer record.
    pub footer_len: u64,
}

impl Trailer {
    /// Encodes the trailer.
    pub fn encode(&self) -> [u8; TRAILER_LEN as usize] {
        let mut out = [0u8; TRAILER_LEN as usize];
        out[0..8].copy_from_slice(&self.footer_offset.to_le_bytes());
        out[8..16].copy_from_slice(&self.footer_len.to_le_bytes());
        out[16..18].copy_from_slice(&MAJOR.to_le_bytes());
        out[18..20].copy_from_slice(&MINOR.to_le_bytes());
        let crc = crc32(&out[..20]);
        out[20..24].copy_from_slice(&crc.to_le_bytes());
        out[24..32].copy_from_slice(&TRAILER_MAGIC);
        out
    }

    /// Decodes and checks a trailer read at file offset `offset`.
    pub fn decode(bytes: &[u8; TRAILER_LEN as usize], offset: u64) -> Result<Trailer> {
        if bytes[24..32] != TRAILER_MAGIC {
            return Err(Error::NotEvtc(
                "no evtc trailer at the end (truncated, or still being written?)".into(),
            ));
        }
        let stored = le::u32_at(bytes, 20);
        let computed = crc32(&bytes[..20]);
        if stored != computed {
            return Err(Error::Checksum {
                what: "trailer",
                location: Location::at(offset),
                stored,
                computed,
            });
        }
        check_version(
            u16::from_le_bytes([bytes[16], bytes[17]]),
            u16::from_le_bytes([bytes[18], bytes[19]]),
        )?;
        Ok(Trailer {
            footer_offset: le::u64_at(bytes, 0),
            footer_len: le::u64_at(bytes, 8),
        })
    }
}

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// A tree's schema.
    TreeSchema = 1,
    /// A basket.
    Basket = 2,
    /// A branch's basket index.
    BranchIndex = 3,
    /// The footer.
    Footer = 4,
    /// A branch's compression dictionary.
    Dictionary = 5,
    /// A tree's event index (since 1.11).
    EventIndex = 6,
}

impl RecordKind {
    fn from_u8(value: u8) -> Option<RecordKind> {
        match value {
            1 => Some(RecordKind::TreeSchema),
            2 => Some(RecordKind::Basket),
            3 => Some(RecordKind::BranchIndex),
            4 => Some(RecordKind::Footer),
            5 => Some(RecordKind::Dictionary),
            6 => Some(RecordKind::EventIndex),
            _ => None,
        }
    }
}

/// A record header (docs/format.md section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// What the record holds.
    pub kind: RecordKind,
    /// Basket kind (`0` blocks).
    pub basket_kind: u8,
    /// Tree number.
    pub tree: u32,
    /// Branch number, or [`NO_BRANCH`].
    pub branch: u32,
    /// First entry (baskets).
    pub first_entry: u64,
    /// Entry count (baskets).
    pub entries: u64,
    /// Body length.
    pub body_len: u64,
    /// CRC32 of the body.
    pub body_crc: u32,
}

impl RecordHeader {
    /// The header of a record that holds no entries (a tree schema, a dictionary, a branch index,
    /// the footer) of `tree` and `branch` ([`NO_BRANCH`] for none); [`encode_record`] fills in
    /// the body's length and checksum.
    pub fn metadata(kind: RecordKind, tree: u32, branch: u32) -> RecordHeader {
        RecordHeader {
            kind,
            basket_kind: 0,
            tree,
            branch,
            first_entry: 0,
            entries: 0,
            body_len: 0,
            body_crc: 0,
        }
    }

    /// Encodes the header, computing its own CRC.
    pub fn encode(&self) -> [u8; RECORD_HEADER_LEN] {
        let mut out = [0u8; RECORD_HEADER_LEN];
        out[0..4].copy_from_slice(&RECORD_MAGIC);
        out[4] = self.kind as u8;
        out[5] = self.basket_kind;
        out[8..12].copy_from_slice(&self.tree.to_le_bytes());
        out[12..16].copy_from_slice(&self.branch.to_le_bytes());
        out[16..24].copy_from_slice(&self.first_entry.to_le_bytes());
        out[24..32].copy_from_slice(&self.entries.to_le_bytes());
        out[32..40].copy_from_slice(&self.body_len.to_le_bytes());
        out[40..44].copy_from_slice(&self.body_crc.to_le_bytes());
        let crc = crc32(&out[..44]);
        out[44..48].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes a header read at `location`, checking magic, kind and (always) the header CRC.
    pub fn decode(bytes: &[u8; RECORD_HEADER_LEN], location: &Location) -> Result<RecordHeader> {
        if bytes[0..4] != RECORD_MAGIC {
            return Err(Error::corrupt(
                location.clone(),
                "no record magic where a record should start",
            ));
        }
        let stored = le::u32_at(bytes, 44);
        let computed = crc32(&bytes[..44]);
        if stored != computed {
            return Err(Error::Checksum {
                what: "record header",
                location: location.clone(),
                stored,
                computed,
            });
        }
        let kind = RecordKind::from_u8(bytes[4]).ok_or_else(|| {
            Error::corrupt(
                location.clone(),
                format!("unknown record kind {}", bytes[4]),
            )
        })?;
        let u64_at = |at: usize| le::u64_at(bytes, at);
        let u32_at = |at: usize| le::u32_at(bytes, at);
        Ok(RecordHeader {
            kind,
            basket_kind: bytes[5],
            tree: u32_at(8),
            branch: u32_at(12),
            first_entry: u64_at(16),
            entries: u64_at(24),
            body_len: u64_at(32),
            body_crc: u32_at(40),
        })
    }
}

/// A whole record: header for `body`, then `body`.
pub fn encode_record(mut header: RecordHeader, body: &[u8]) -> Vec<u8> {
    header.body_len = body.len() as u64;
    header.body_crc = Crc32::new().update(body).finish();
    let mut out = Vec::with_capacity(RECORD_HEADER_LEN + body.len());
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(body);
    out
}
