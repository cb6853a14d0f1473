//! The file structure: header, keys, directories and cycles.

use std::path::Path;
use std::sync::OnceLock;

use evtc_codecs::Decompressor;

use crate::column::{Tree, TreeKind};
use crate::compression::decompress;
use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::source::{ReadAt, read_range};
use crate::streamer::Streamers;

/// An open ROOT file: its header and top directory, read through positional reads.
#[derive(Debug)]
pub struct RootFile<R: ReadAt = std::fs::File> {
    source: R,
    len: u64,
    version: i32,
    compression: i32,
    top: Directory,
    /// Where the `TList` of streamer infos is (`fSeekInfo`, `fNbytesInfo`).
    info: (u64, u64),
    streamers: OnceLock<Streamers>,
    max_basket_bytes: u64,
}

/// The largest uncompressed basket [`RootFile`] decodes by default: 256 MiB (ROOT's own baskets
/// are 32 KB to a few MB; a larger one is a decompression bomb or a lying key).
pub const DEFAULT_MAX_BASKET_BYTES: u64 = 256 << 20;

/// One object in a directory, as its key describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The object's class, e.g. `TTree` or `TDirectoryFile`.
    pub class_name: String,
    /// The object's name.
    pub name: String,
    /// The object's title.
    pub title: String,
    /// The cycle (ROOT keeps several versions of an object as `name;1`, `name;2`, ...).
    pub cycle: i16,
    /// File offset of the key.
    pub seek_key: u64,
    /// Bytes of key plus (compressed) object on disk.
    pub nbytes: u32,
    /// Uncompressed object size.
    pub obj_len: u32,
    /// Bytes of the key header.
    pub key_len: u16,
}

/// A directory's keys (the top directory, or a `TDirectory` inside the file).
#[derive(Debug, Clone)]
struct Directory {
    keys: Vec<Key>,
}

/// A tree found in the file, with its path (`dir/name`) and cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Path from the top directory, `/`-separated.
    pub path: String,
    /// The key's cycle.
    pub cycle: i16,
    /// The tree's title (the key's).
    pub title: String,
    /// A TTree or an RNTuple.
    pub kind: TreeKind,
}

impl RootFile<std::fs::File> {
    /// Opens a ROOT file by path and reads its header and top directory.
    ///
    /// # Errors
    /// I/O errors; [`Error::NotRoot`] for other files; [`Error::Corrupt`] for truncated or
    /// inconsistent headers.
    pub fn open(path: impl AsRef<Path>) -> Result<RootFile> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|source| Error::Io {
            what: format!("opening {}", path.display()),
            offset: 0,
            source,
        })?;
        RootFile::from_source(file)
    }
}

impl<R: ReadAt> RootFile<R> {
    /// Reads the header and top directory from any positional source.
    ///
    /// # Errors
    /// As for [`RootFile::open`].
    pub fn from_source(source: R) -> Result<RootFile<R>> {
        let len = source.len().map_err(|source| Error::Io {
            what: "file length".into(),
            offset: 0,
            source,
        })?;
        let header = read_range(&source, len, 0, len.min(64), &|| "file header".into())?;
        if header.len() < 4 || &header[..4] != b"root" {
            let mut magic = [0; 4];
            let n = header.len().min(4);
            magic[..n].copy_from_slice(&header[..n]);
            return Err(Error::NotRoot(magic));
        }
        let mut c = Cursor::new(&header, 0, "file header");
        c.skip(4)?;
        let version = c.i32()?;
        let big = version >= 1_000_000;
        let begin = u64::try_from(c.i32()?).map_err(|_| c.error("negative fBEGIN"))?;
        let _end = c.seek_field(big)?;
        let _seek_free = c.seek_field(big)?;
        let _nbytes_free = c.i32()?;
        let _nfree = c.i32()?;
        let nbytes_name = u64::try_from(c.i32()?).map_err(|_| c.error("negative fNbytesName"))?;
        let _units = c.u8()?;
        let compression = c.i32()?;
        let seek_info = c.seek_field(big)?;
        let nbytes_info = u64::try_from(c.i32()?).map_err(|_| c.error("negative fNbytesInfo"))?;
        let mut file = RootFile {
            source,
            len,
            version: version % 1_000_000,
            compression,
            top: Directory { keys: Vec::new() },
            info: (seek_info, nbytes_info),
            streamers: OnceLock::new(),
            max_basket_bytes: DEFAULT_MAX_BASKET_BYTES,
        };
        file.top = file.read_directory(begin + nbytes_name, "top directory")?;
        Ok(file)
    }

    /// Sets the largest uncompressed basket to decode (default [`DEFAULT_MAX_BASKET_BYTES`]); a
    /// larger one is refused with [`Error::BasketTooLarge`] before it is decompressed.
    pub fn set_max_basket_bytes(&mut self, bytes: u64) {
        self.max_basket_bytes = bytes.max(1);
    }

    /// The largest uncompressed basket this reader decodes.
    pub fn max_basket_bytes(&self) -> u64 {
        self.max_basket_bytes
    }

    /// ROOT's version of the writer, e.g. `64000` for 6.40/00.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The file's default compression setting (`fCompress`, e.g. 505).
    pub fn compression(&self) -> i32 {
        self.compression
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty (never true for a file that opened).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The keys of the top directory.
    pub fn keys(&self) -> &[Key] {
        &self.top.keys
    }

    /// Every tree in the file, in subdirectories too, every cycle.
    ///
    /// # Errors
    /// Corrupt subdirectory records.
    pub fn trees(&self) -> Result<Vec<TreeEntry>> {
        let mut out = Vec::new();
        self.collect_trees(&self.top, "", &mut out, 0)?;
        Ok(out)
    }

    fn collect_trees(
        &self,
        dir: &Directory,
        prefix: &str,
        out: &mut Vec<TreeEntry>,
        depth: usize,
    ) -> Result<()> {
        for key in &dir.keys {
            let path = format!("{prefix}{}", key.name);
            if let Some(kind) = tree_kind(&key.class_name) {
                out.push(TreeEntry {
                    path,
                    cycle: key.cycle,
                    title: key.title.clone(),
                    kind,
                });
            } else if is_directory(&key.class_name) && depth < 64 {
                let sub = self.subdirectory(key)?;
                self.collect_trees(&sub, &format!("{path}/"), out, depth + 1)?;
            }
        }
        Ok(())
    }

    /// The file's streamer infos, read on first use. A file whose streamer infos cannot be read
    /// still opens: the members that need them are then refused with that reason.
    pub(crate) fn streamers(&self) -> &Streamers {
        self.streamers.get_or_init(|| {
            let (seek, nbytes) = self.info;
            let what = format!("streamer infos (key at byte {seek})");
            let read = || -> Result<Streamers> {
                if seek == 0 {
                    return Err(Error::corrupt(
                        &what,
                        0,
                        "the file records no streamer infos",
                    ));
                }
                let bytes = self.read(seek, nbytes, &what)?;
                let key = read_key(&mut Cursor::new(&bytes, seek, &what))?;
                let record = self.read_object(&key, &what)?;
                Streamers::parse(&record, key.key_len, &what)
            };
            read().unwrap_or_else(|e| Streamers::unavailable(e.to_string()))
        })
    }

    /// Reads the tree at `path`: `name`, `dir/sub/name`, optionally with `;cycle` (default: the
    /// newest cycle), a TTree or an RNTuple.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::NotATree`], and corrupt or unsupported tree records.
    pub fn tree(&self, path: &str) -> Result<Tree> {
        let key = self.key(path)?;
        let name = path.rsplit_once(';').map_or(path, |(p, _)| p).to_owned();
        match tree_kind(&key.class_name) {
            Some(TreeKind::TTree) => self.ttree(&key, name),
            Some(TreeKind::RNTuple) => self.rntuple(&key, name),
            None => Err(Error::NotATree {
                path: path.to_owned(),
                class: key.class_name,
            }),
        }
    }

    /// Finds the key at `path` (with optional `;cycle`).
    pub(crate) fn key(&self, path: &str) -> Result<Key> {
        let (path_part, cycle) = match path.rsplit_once(';') {
            Some((p, c)) => (p, Some(c.parse::<i16>().map_err(|_| self.not_found(path))?)),
            None => (path, None),
        };
        let mut dir = self.top.clone();
        let mut parts = path_part.split('/').filter(|p| !p.is_empty()).peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_some() {
                let key = dir
                    .keys
                    .iter()
                    .filter(|k| k.name == part && is_directory(&k.class_name))
                    .max_by_key(|k| k.cycle)
                    .ok_or_else(|| self.not_found(path))?
                    .clone();
                dir = self.subdirectory(&key)?;
            } else {
                return dir
                    .keys
                    .iter()
                    .filter(|k| k.name == part && cycle.is_none_or(|c| k.cycle == c))
                    .max_by_key(|k| k.cycle)
                    .cloned()
                    .ok_or_else(|| self.not_found(path));
            }
        }
        Err(self.not_found(path))
    }

    fn not_found(&self, path: &str) -> Error {
        let available = match self.trees() {
            Ok(trees) if !trees.is_empty() => trees
                .iter()
                .map(|t| {
                    let kind = match t.kind {
                        TreeKind::TTree => "TTree",
                        TreeKind::RNTuple => "RNTuple",
                    };
                    format!("{};{} ({kind})", t.path, t.cycle)
                })
                .collect::<Vec<_>>()
                .join(", "),
            _ => "no trees".to_owned(),
        };
        Error::NotFound {
            path: path.to_owned(),
            available,
        }
    }

    fn subdirectory(&self, key: &Key) -> Result<Directory> {
        self.read_directory(
            key.seek_key + u64::from(key.key_len),
            &format!("directory {:?}", key.name),
        )
    }

    /// Reads a directory record at `offset` and the key list it points to.
    fn read_directory(&self, offset: u64, what: &str) -> Result<Directory> {
        let bytes = self.read(offset, (self.len.saturating_sub(offset)).min(64), what)?;
        let mut c = Cursor::new(&bytes, offset, what);
        let version = c.i16()?;
        let big = version > 1000;
        let _created = c.u32()?;
        let _modified = c.u32()?;
        let nbytes_keys = u64::try_from(c.i32()?).map_err(|_| c.error("negative fNbytesKeys"))?;
        let _nbytes_name = c.i32()?;
        let _seek_dir = c.seek_field(big)?;
        let _seek_parent = c.seek_field(big)?;
        let seek_keys = c.seek_field(big)?;
        if seek_keys == 0 {
            return Ok(Directory { keys: Vec::new() });
        }
        let what = format!("key list of {what}");
        let bytes = self.read(seek_keys, nbytes_keys, &what)?;
        let mut c = Cursor::new(&bytes, seek_keys, &what);
        let _header = read_key(&mut c)?;
        let n = c.count("number of keys")?;
        // Each key takes at least 26 bytes: no allocation beyond what the record holds.
        if n > c.remaining() / 26 + 1 {
            return Err(c.error(format!("{n} keys cannot fit in {} bytes", c.remaining())));
        }
        let keys = (0..n)
            .map(|_| read_key_entry(&mut c))
            .collect::<Result<_>>()?;
        Ok(Directory { keys })
    }

    /// Reads and decompresses the object behind `key`.
    pub(crate) fn read_object(&self, key: &Key, what: &str) -> Result<Vec<u8>> {
        let data_len = u64::from(key.nbytes)
            .checked_sub(u64::from(key.key_len))
            .ok_or_else(|| Error::corrupt(what, key.seek_key, "key longer than its record"))?;
        let raw = self.read(key.seek_key + u64::from(key.key_len), data_len, what)?;
        if data_len == u64::from(key.obj_len) {
            return Ok(raw);
        }
        let mut out = Vec::new();
        decompress(
            &mut Decompressor::new(),
            &raw,
            key.obj_len as usize,
            &mut out,
            &|| what.to_owned(),
        )?;
        Ok(out)
    }

    /// Reads `len` bytes at `offset`, checked against the file length.
    pub(crate) fn read(&self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
        read_range(&self.source, self.len, offset, len, &|| what.to_owned())
    }

    /// Reads `len` bytes at `offset` into `buf` (reusing its allocation), checked against the
    /// file length.
    pub(crate) fn read_into(
        &self,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        what: &str,
    ) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(Error::corrupt(
                what,
                offset,
                format!(
                    "{len} bytes from here run past the end of the file ({} bytes)",
                    self.len
                ),
            ));
        }
        buf.resize(len as usize, 0);
        self.source
            .read_exact_at(offset, buf)
            .map_err(|source| Error::Io {
                what: what.to_owned(),
                offset,
                source,
            })
    }
}

/// The kind of tree a key of `class` holds, if it holds one.
fn tree_kind(class: &str) -> Option<TreeKind> {
    match class {
        "TTree" | "TNtuple" | "TNtupleD" => Some(TreeKind::TTree),
        "ROOT::RNTuple" | "ROOT::Experimental::RNTuple" => Some(TreeKind::RNTuple),
        _ => None,
    }
}

fn is_directory(class: &str) -> bool {
    class == "TDirectory" || class == "TDirectoryFile"
}

/// Reads one key header at the key's own place (before its object's bytes): its declared length
/// must hold what was read, since the object starts there.
pub(crate) fn read_key(c: &mut Cursor<'_>) -> Result<Key> {
    let start = c.pos();
    let key = read_key_entry(c)?;
    if usize::from(key.key_len) < c.pos() - start {
        return Err(c.error(format!(
            "key {:?} declares a {}-byte header but holds {}",
            key.name,
            key.key_len,
            c.pos() - start
        )));
    }
    Ok(key)
}

/// Reads one key header of a directory's key list. Its `fKeylen` is the length of the key
/// written at `fSeekKey`, which may differ from this copy (ROOT lists a subdirectory's key with
/// class `TDirectoryFile` where the key on disk says `TDirectory`).
fn read_key_entry(c: &mut Cursor<'_>) -> Result<Key> {
    let nbytes = c.i32()?;
    let version = c.i16()?;
    let obj_len = c.i32()?;
    let _datime = c.u32()?;
    let key_len = c.i16()?;
    let cycle = c.i16()?;
    let big = version > 1000;
    let seek_key = c.seek_field(big)?;
    let _seek_pdir = c.seek_field(big)?;
    let class_name = c.string()?;
    let name = c.string()?;
    let title = c.string()?;
    let (Ok(nbytes), Ok(obj_len), Ok(key_len)) = (
        u32::try_from(nbytes),
        u32::try_from(obj_len),
        u16::try_from(key_len),
    ) else {
        return Err(c.error(format!(
            "key {name:?} has negative sizes (nbytes {nbytes}, objlen {obj_len}, keylen {key_len})"
        )));
    };
    Ok(Key {
        class_name,
        name,
        title,
        cycle,
        seek_key,
        nbytes,
        obj_len,
        key_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small-version key header: class, name and title as short TStrings.
    fn key_bytes(key_len: i16, class: &str, name: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&100i32.to_be_bytes()); // fNbytes
        b.extend_from_slice(&4i16.to_be_bytes()); // version
        b.extend_from_slice(&60i32.to_be_bytes()); // fObjlen
        b.extend_from_slice(&0u32.to_be_bytes()); // fDatime
        b.extend_from_slice(&key_len.to_be_bytes());
        b.extend_from_slice(&1i16.to_be_bytes()); // fCycle
        b.extend_from_slice(&500i32.to_be_bytes()); // fSeekKey
        b.extend_from_slice(&100i32.to_be_bytes()); // fSeekPdir
        for s in [class, name, ""] {
            b.push(s.len() as u8);
            b.extend_from_slice(s.as_bytes());
        }
        b
    }

    #[test]
    fn a_key_list_entry_may_be_longer_than_the_key_it_describes() {
        // ROOT 6.0x lists a subdirectory's key as `TDirectoryFile` while the key written at
        // fSeekKey says `TDirectory`: fKeylen (4 bytes shorter) describes the latter.
        let bytes = key_bytes(45, "TDirectoryFile", "macros");
        let listed = read_key_entry(&mut Cursor::new(&bytes, 0, "list")).expect("list entry");
        assert_eq!((listed.name.as_str(), listed.key_len), ("macros", 45));
        let own = read_key(&mut Cursor::new(&bytes, 0, "key")).expect_err("own key too short");
        assert!(
            own.to_string().contains("declares a 45-byte header"),
            "{own}"
        );
    }

    #[test]
    fn streamer_infos_of_a_fixture() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/kinds_505.root");
        let file = RootFile::open(path).expect("fixture opens");
        let streamers = file.streamers();
        assert_eq!(streamers.error, None);
        let point = streamers.info("EvtcPoint", 1).expect("EvtcPoint's layout");
        let names: Vec<_> = point.elements.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "id", "w"]);
        assert_eq!(point.elements[2].type_name, "int");
        let vector = streamers
            .info("TLorentzVector", 4)
            .expect("TLorentzVector's layout");
        assert!(vector.elements.iter().any(|e| e.name == "fP"));
    }
}
