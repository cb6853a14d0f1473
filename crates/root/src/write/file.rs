//! A ROOT file being written ([`RootWriter`]): the file header, the `TFile` key with the top
//! directory's record, keys for objects (listed in the directory) and for RNTuple blobs (not
//! listed), and at the end the streamer infos, the directory's key list and the free
//! segments, after which the header and directory record are written again with where those
//! are.
//!
//! Keys are written in ROOT 6's long form (version 1004: 64-bit seek fields), whatever their
//! offset, as ROOT 6.40 does; the header and directory record switch to their long forms when
//! the file passes 2 GiB.

use std::io::{Seek, SeekFrom, Write};

use evtc_codecs::{Codec, Compressor};

use super::buffer::{ObjectBuffer, put_string, string_len};
use super::streamer::{ClassInfo, streamer_list};
use crate::compression::{compress, nearest_setting};
use crate::error::{Error, Result};

/// Where the top directory's `TFile` key starts (`fBEGIN`).
const BEGIN: u64 = 100;
/// The version ROOT readers see in the header: 6.34/00, the first with RNTuple 1.0.
const FILE_VERSION: i32 = 63400;
/// The fixed part of a long-form key header: sizes, version, date, key length, cycle, seeks.
const KEY_FIXED: usize = 4 + 2 + 4 + 4 + 2 + 2 + 8 + 8;
/// Bytes of a directory record (`TDirectoryFile::Streamer`), both forms.
const DIRECTORY_RECORD: usize = 60;
/// The largest key ROOT's RNTuple writer makes (`RNTuple::fMaxKeySize`): 1 GiB.
pub(crate) const MAX_KEY_SIZE: u64 = 1 << 30;

/// One key's header fields.
#[derive(Debug, Clone)]
struct KeyHeader {
    nbytes: u32,
    objlen: u32,
    datime: u32,
    cycle: i16,
    seek: u64,
    class: String,
    name: String,
    title: String,
}

impl KeyHeader {
    /// The key header's length for these names.
    fn key_len(class: &str, name: &str, title: &str) -> usize {
        KEY_FIXED + string_len(class) + string_len(name) + string_len(title)
    }

    /// The header's bytes (long form: version 1004).
    fn bytes(&self) -> Vec<u8> {
        let key_len = KeyHeader::key_len(&self.class, &self.name, &self.title);
        let mut b = Vec::with_capacity(key_len);
        b.extend_from_slice(&(self.nbytes as i32).to_be_bytes());
        b.extend_from_slice(&1004i16.to_be_bytes());
        b.extend_from_slice(&(self.objlen as i32).to_be_bytes());
        b.extend_from_slice(&self.datime.to_be_bytes());
        b.extend_from_slice(&(key_len as i16).to_be_bytes());
        b.extend_from_slice(&self.cycle.to_be_bytes());
        b.extend_from_slice(&self.seek.to_be_bytes());
        b.extend_from_slice(&BEGIN.to_be_bytes());
        for s in [&self.class, &self.name, &self.title] {
            put_string(&mut b, s);
        }
        b
    }
}

/// A ROOT file being written to `W`; [`RootWriter::finish`] completes it. Objects are written
/// as they come; nothing but the key list is kept in memory.
#[derive(Debug)]
pub struct RootWriter<W: Write + Seek> {
    out: W,
    /// Where the next record goes: the end of the file so far.
    end: u64,
    /// The file's name as its `TFile` key records it.
    name: String,
    title: String,
    /// The file's default compression (`fCompress`), for its own records.
    codec: Codec,
    datime: u32,
    uuid: [u8; 16],
    /// The top directory's keys, in the order written.
    keys: Vec<KeyHeader>,
    /// The classes whose streamer infos the file carries.
    classes: Vec<ClassInfo>,
    compressor: Compressor,
}

impl<W: Write + Seek> RootWriter<W> {
    /// Starts a ROOT file in `out` (at its start), named `name` in its `TFile` key (the file
    /// name, as ROOT records it) and compressing its own records with `codec`.
    ///
    /// # Errors
    /// [`Error::WriteIo`].
    pub fn new(mut out: W, name: &str, codec: Codec) -> Result<RootWriter<W>> {
        let datime = datime_now();
        let mut writer = RootWriter {
            end: 0,
            name: name.to_owned(),
            title: String::new(),
            codec,
            datime,
            uuid: uuid(name, datime),
            keys: Vec::new(),
            classes: Vec::new(),
            compressor: Compressor::new(),
            out: {
                out.seek(SeekFrom::Start(0)).map_err(io("the file start"))?;
                out
            },
        };
        // The header (written again by `finish`), then the top directory's key and record.
        writer.put(&[0; BEGIN as usize], "the file header")?;
        let top = writer.top_key();
        writer.put(&top, "the top directory")?;
        Ok(writer)
    }

    /// The `TFile` key with the top directory's record as it stands.
    fn top_key(&self) -> Vec<u8> {
        self.top_key_with(0, 0, 0)
    }

    /// The `TFile` key and the top directory's record pointing to its key list.
    fn top_key_with(&self, seek_keys: u64, nbytes_keys: u32, _end: u64) -> Vec<u8> {
        let names = string_len(&self.name) + string_len(&self.title);
        let objlen = names + DIRECTORY_RECORD;
        let key_len = KeyHeader::key_len("TFile", &self.name, &self.title);
        let mut b = KeyHeader {
            nbytes: (key_len + objlen) as u32,
            objlen: objlen as u32,
            datime: self.datime,
            cycle: 1,
            seek: BEGIN,
            class: "TFile".into(),
            name: self.name.clone(),
            title: self.title.clone(),
        }
        .bytes();
        // The key's own fSeekPdir is 0: the top directory has no parent.
        let pdir = KEY_FIXED - 8;
        b[pdir..pdir + 8].copy_from_slice(&0u64.to_be_bytes());
        put_string(&mut b, &self.name);
        put_string(&mut b, &self.title);
        let big = seek_keys > i32::MAX as u64;
        let start = b.len();
        b.extend_from_slice(&(if big { 1005i16 } else { 5 }).to_be_bytes());
        b.extend_from_slice(&self.datime.to_be_bytes());
        b.extend_from_slice(&self.datime.to_be_bytes());
        b.extend_from_slice(&(nbytes_keys as i32).to_be_bytes());
        b.extend_from_slice(&((key_len + names) as i32).to_be_bytes());
        if big {
            b.extend_from_slice(&BEGIN.to_be_bytes());
            b.extend_from_slice(&0u64.to_be_bytes());
            b.extend_from_slice(&seek_keys.to_be_bytes());
        } else {
            b.extend_from_slice(&(BEGIN as i32).to_be_bytes());
            b.extend_from_slice(&0i32.to_be_bytes());
            b.extend_from_slice(&(seek_keys as i32).to_be_bytes());
        }
        b.extend_from_slice(&1u16.to_be_bytes());
        b.extend_from_slice(&self.uuid);
        b.resize(start + DIRECTORY_RECORD, 0);
        b
    }

    /// Appends `bytes` at the end of the file.
    fn put(&mut self, bytes: &[u8], what: &str) -> Result<()> {
        self.out.write_all(bytes).map_err(io(what))?;
        self.end += bytes.len() as u64;
        Ok(())
    }

    /// Adds `class` to the streamer infos the file carries (once).
    pub(crate) fn declare(&mut self, class: ClassInfo) {
        if !self.classes.iter().any(|c| c.name == class.name) {
            self.classes.push(class);
        }
    }

    /// Where the next record goes (the file's end so far).
    pub(crate) fn position(&self) -> u64 {
        self.end
    }

    /// The file's date, as its keys record it.
    pub(crate) fn datime(&self) -> u32 {
        self.datime
    }

    /// Appends a record made by the caller: a key `header` (whose seek is
    /// [`RootWriter::position`]) and its stored object; not listed in the directory (a
    /// basket).
    ///
    /// # Errors
    /// [`Error::WriteIo`].
    pub(crate) fn write_raw(&mut self, header: &[u8], stored: &[u8]) -> Result<()> {
        self.put(header, "a basket")?;
        self.put(stored, "a basket")
    }

    /// Writes an object of `class` named `name` (listed in the top directory, with the next
    /// free cycle of its name): `fill` writes its body into a buffer that knows the key's
    /// length; the body is compressed with `codec` when that makes it smaller. Returns where
    /// the key starts.
    ///
    /// # Errors
    /// [`Error::WriteIo`]; the compressor's errors as [`Error::Unwritable`].
    pub(crate) fn write_object(
        &mut self,
        class: &str,
        name: &str,
        title: &str,
        codec: Codec,
        fill: impl FnOnce(&mut ObjectBuffer),
    ) -> Result<u64> {
        let key_len = KeyHeader::key_len(class, name, title);
        let mut object = ObjectBuffer::new(key_len as u32);
        fill(&mut object);
        let cycle = self
            .keys
            .iter()
            .filter(|k| k.name == name)
            .map(|k| k.cycle)
            .max()
            .unwrap_or(0)
            + 1;
        let key = self.write_key(class, name, title, cycle, codec, &object.bytes)?;
        let seek = key.seek;
        self.keys.push(key);
        Ok(seek)
    }

    /// Writes `payload` as an RNTuple blob: an unlisted `RBlob` key, the payload stored as it
    /// is (already compressed page by page). Returns where the payload starts.
    ///
    /// # Errors
    /// [`Error::WriteIo`]; [`Error::Unwritable`] for a payload over [`MAX_KEY_SIZE`].
    pub(crate) fn write_blob(&mut self, payload: &[u8]) -> Result<u64> {
        if payload.len() as u64 > MAX_KEY_SIZE {
            return Err(Error::Unwritable {
                what: "an RNTuple blob".into(),
                reason: format!(
                    "{} bytes, over the largest key ({MAX_KEY_SIZE} bytes)",
                    payload.len()
                ),
            });
        }
        let key = self.write_key("RBlob", "", "", 1, Codec::NONE, payload)?;
        Ok(key.seek + KeyHeader::key_len("RBlob", "", "") as u64)
    }

    /// Writes a key and its object at the end of the file.
    fn write_key(
        &mut self,
        class: &str,
        name: &str,
        title: &str,
        cycle: i16,
        codec: Codec,
        object: &[u8],
    ) -> Result<KeyHeader> {
        let key_len = KeyHeader::key_len(class, name, title);
        let mut stored = Vec::new();
        compress(&mut self.compressor, codec, object, &mut stored).map_err(|e| {
            Error::Unwritable {
                what: format!("object {name:?} ({class})"),
                reason: e.to_string(),
            }
        })?;
        let nbytes = key_len + stored.len();
        let too_big = |what: &str| Error::Unwritable {
            what: format!("object {name:?} ({class})"),
            reason: format!("{what} over 2 GiB, the largest key ROOT reads"),
        };
        let header = KeyHeader {
            nbytes: u32::try_from(nbytes)
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or_else(|| too_big("its stored size is"))?,
            objlen: u32::try_from(object.len())
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or_else(|| too_big("its size is"))?,
            datime: self.datime,
            cycle,
            seek: self.end,
            class: class.to_owned(),
            name: name.to_owned(),
            title: title.to_owned(),
        };
        let what = format!("object {name:?} ({class})");
        self.put(&header.bytes(), &what)?;
        self.put(&stored, &what)?;
        Ok(header)
    }

    /// Writes the streamer infos, the top directory's key list and the free segments, then
    /// the header and the directory record again; returns the output.
    ///
    /// # Errors
    /// [`Error::WriteIo`].
    pub fn finish(mut self) -> Result<W> {
        let codec = self.codec;
        let classes = std::mem::take(&mut self.classes);
        let key_len = KeyHeader::key_len("TList", "StreamerInfo", "Doubly linked list");
        let list = streamer_list(&classes, key_len as u32);
        let info = self.write_key(
            "TList",
            "StreamerInfo",
            "Doubly linked list",
            1,
            codec,
            &list,
        )?;
        // The key list: the number of keys, then each key's header.
        let mut listed = (self.keys.len() as i32).to_be_bytes().to_vec();
        for key in &self.keys {
            listed.extend_from_slice(&key.bytes());
        }
        let name = self.name.clone();
        let keys = self.write_key("", &name, "", 1, Codec::NONE, &listed)?;
        // One free segment, from the end of the file on; its record's own size is known first.
        let free_len = KeyHeader::key_len("", &name, "") as u64 + 2 + 4 + 4;
        let file_end = self.end + free_len;
        let big = file_end > i32::MAX as u64;
        let free_record = if big {
            let mut f = 1001u16.to_be_bytes().to_vec();
            f.extend_from_slice(&file_end.to_be_bytes());
            f.extend_from_slice(&2_000_000_000_000u64.to_be_bytes());
            f
        } else {
            let mut f = 1u16.to_be_bytes().to_vec();
            f.extend_from_slice(&(file_end as u32).to_be_bytes());
            f.extend_from_slice(&2_000_000_000u32.to_be_bytes());
            f
        };
        let free = self.write_key("", &name, "", 1, Codec::NONE, &free_record)?;
        let end = self.end;
        let header = self.header(end, &free, &info);
        let top = self.top_key_with(keys.seek, keys.nbytes, end);
        self.out
            .seek(SeekFrom::Start(0))
            .map_err(io("the file header"))?;
        self.out.write_all(&header).map_err(io("the file header"))?;
        self.out
            .seek(SeekFrom::Start(BEGIN))
            .map_err(io("the top directory"))?;
        self.out.write_all(&top).map_err(io("the top directory"))?;
        self.out
            .seek(SeekFrom::Start(end))
            .map_err(io("the file end"))?;
        self.out.flush().map_err(io("the file"))?;
        Ok(self.out)
    }

    /// The file header: where the file ends, the free segments and the streamer infos are.
    fn header(&self, end: u64, free: &KeyHeader, info: &KeyHeader) -> Vec<u8> {
        let big = end > i32::MAX as u64;
        let name_bytes = KeyHeader::key_len("TFile", &self.name, &self.title)
            + string_len(&self.name)
            + string_len(&self.title);
        let mut h = b"root".to_vec();
        h.extend_from_slice(&(FILE_VERSION + if big { 1_000_000 } else { 0 }).to_be_bytes());
        h.extend_from_slice(&(BEGIN as i32).to_be_bytes());
        let seek = |h: &mut Vec<u8>, v: u64| {
            if big {
                h.extend_from_slice(&v.to_be_bytes());
            } else {
                h.extend_from_slice(&(v as i32).to_be_bytes());
            }
        };
        seek(&mut h, end);
        seek(&mut h, free.seek);
        h.extend_from_slice(&(free.nbytes as i32).to_be_bytes());
        h.extend_from_slice(&1i32.to_be_bytes());
        h.extend_from_slice(&(name_bytes as i32).to_be_bytes());
        h.push(if big { 8 } else { 4 });
        h.extend_from_slice(&nearest_setting(self.codec).to_be_bytes());
        seek(&mut h, info.seek);
        h.extend_from_slice(&(info.nbytes as i32).to_be_bytes());
        h.extend_from_slice(&1u16.to_be_bytes());
        h.extend_from_slice(&self.uuid);
        h.resize(BEGIN as usize, 0);
        h
    }
}

/// An I/O error's mapping for writing `what`.
fn io(what: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::WriteIo {
        what: what.to_owned(),
        source,
    }
}

/// The time now as ROOT's `TDatime` packs it (UTC): years since 1995, month, day, hour,
/// minute, second in 6, 4, 5, 5, 6 and 6 bits.
fn datime_now() -> u32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil(days as i64);
    let year = (year - 1995).clamp(0, 63) as u32;
    year << 26
        | (month as u32) << 22
        | (day as u32) << 17
        | ((rest / 3600) as u32) << 12
        | (((rest / 60) % 60) as u32) << 6
        | (rest % 60) as u32
}

/// The year, month (1-12) and day (1-31) of `days` since 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A UUID for the file (version 4 layout; from the name, the time and the process).
fn uuid(name: &str, datime: u32) -> [u8; 16] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{name}/{datime}/{nanos}/{}", std::process::id());
    let a = xxhash_rust::xxh3::xxh3_64(seed.as_bytes());
    let b = xxhash_rust::xxh3::xxh3_64_with_seed(seed.as_bytes(), a);
    let mut u = [0; 16];
    u[..8].copy_from_slice(&a.to_be_bytes());
    u[8..].copy_from_slice(&b.to_be_bytes());
    u[6] = (u[6] & 0x0F) | 0x40;
    u[8] = (u[8] & 0x3F) | 0x80;
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_pack_as_root_does() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(20_429), (2025, 12, 7));
        assert_eq!(civil(-1), (1969, 12, 31));
    }

    #[test]
    fn an_empty_file_opens_with_the_reader() {
        let mut out = std::io::Cursor::new(Vec::new());
        let writer = RootWriter::new(&mut out, "empty.root", Codec::DEFAULT).expect("new");
        writer.finish().expect("finish");
        let bytes = out.into_inner();
        let file = crate::RootFile::from_source(bytes).expect("the reader opens it");
        assert!(file.keys().is_empty());
        assert_eq!(file.compression(), 503);
        assert_eq!(file.version(), FILE_VERSION);
    }
}
