//! The error type of `evtc-format`.

use std::fmt;
use std::path::PathBuf;

use crate::meta::DataType;

/// A `Result` whose error defaults to this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where in a file something went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// Tree name, if known.
    pub tree: Option<String>,
    /// Branch name, if known.
    pub branch: Option<String>,
    /// Basket number within the branch, if known.
    pub basket: Option<usize>,
    /// File offset of the record involved.
    pub offset: u64,
}

impl Location {
    /// A location at `offset` with nothing else known.
    pub fn at(offset: u64) -> Location {
        Location {
            offset,
            ..Location::default()
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(tree) = &self.tree {
            write!(f, "tree {tree:?}, ")?;
        }
        if let Some(branch) = &self.branch {
            write!(f, "branch {branch:?}, ")?;
        }
        if let Some(basket) = self.basket {
            write!(f, "basket {basket}, ")?;
        }
        write!(f, "file offset {}", self.offset)
    }
}

/// Everything that can go wrong writing or reading an evtc file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error, with the file it concerns.
    #[error("{}: {source}", path.as_ref().map_or_else(|| "I/O".to_owned(), |p| p.display().to_string()))]
    Io {
        /// The file, if known.
        path: Option<PathBuf>,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The bytes are not an evtc file (wrong magic).
    #[error("not an evtc file: {0}")]
    NotEvtc(String),
    /// The file was written by a newer, incompatible format version.
    #[error(
        "file format version {major}.{minor} is not supported: this reader reads version {supported}.x"
    )]
    UnsupportedVersion {
        /// The file's major version.
        major: u16,
        /// The file's minor version.
        minor: u16,
        /// The major version this reader supports.
        supported: u16,
    },
    /// The file is shorter than its structures say.
    #[error("truncated file: {what} at {location} needs {needed} bytes, the file has {file_len}")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where.
        location: Location,
        /// Bytes needed from the start of the file.
        needed: u64,
        /// The file's length.
        file_len: u64,
    },
    /// A CRC32 did not match.
    #[error(
        "checksum mismatch in {what} at {location}: stored {stored:#010x}, computed {computed:#010x}"
    )]
    Checksum {
        /// What was checked.
        what: &'static str,
        /// Where.
        location: Location,
        /// The stored CRC32.
        stored: u32,
        /// The CRC32 of the bytes read.
        computed: u32,
    },
    /// A structure holds impossible values.
    #[error("corrupt file at {location}: {reason}")]
    Corrupt {
        /// Where.
        location: Location,
        /// What is wrong.
        reason: String,
    },
    /// A compressed block failed to decode.
    #[error("corrupt basket at {location}: {source}")]
    Codec {
        /// Where.
        location: Location,
        /// The codec error.
        source: Box<evtc_codecs::Error>,
    },
    /// A compression error while writing.
    #[error("compressing tree {tree:?}, branch {branch:?}: {source}")]
    Compress {
        /// Tree name.
        tree: String,
        /// Branch name.
        branch: String,
        /// The codec error.
        source: Box<evtc_codecs::Error>,
    },
    /// A random-access basket could not be encoded.
    #[error("random-access compression of tree {tree:?}, branch {branch:?}: {source}")]
    Rac {
        /// Tree name.
        tree: String,
        /// Branch name.
        branch: String,
        /// The RAC error.
        source: Box<evtc_rac::Error>,
    },
    /// The file needs an extension this reader does not know.
    #[error("the file requires extension {key:?}, which this reader does not support")]
    RequiredExtension {
        /// The extension key.
        key: String,
    },
    /// No tree of that name.
    #[error("no tree {name:?} in the file (trees: {available})")]
    NoSuchTree {
        /// The requested name.
        name: String,
        /// The trees the file has, comma-separated.
        available: String,
    },
    /// No branch of that name.
    #[error("tree {tree:?} has no branch {name:?}")]
    NoSuchBranch {
        /// Tree name.
        tree: String,
        /// The requested name.
        name: String,
    },
    /// A branch was read as a type it does not have.
    #[error(
        "tree {tree:?}, branch {branch:?}: requested {requested}, but the branch holds {actual}"
    )]
    TypeMismatch {
        /// Tree name.
        tree: String,
        /// Branch name.
        branch: String,
        /// What the caller asked for.
        requested: String,
        /// The branch's type.
        actual: DataType,
    },
    /// An entry or entry range outside the tree.
    #[error("tree {tree:?}: entries {start}..{end} are outside 0..{entries}")]
    EntryOutOfRange {
        /// Tree name.
        tree: String,
        /// Start of the requested range.
        start: u64,
        /// End of the requested range.
        end: u64,
        /// The tree's entries.
        entries: u64,
    },
    /// A schema the writer cannot accept (duplicate names, bad counters, ...).
    #[error("invalid schema for tree {tree:?}: {reason}")]
    InvalidSchema {
        /// Tree name.
        tree: String,
        /// What is wrong.
        reason: String,
    },
    /// A basket larger than the reader's or writer's limit on uncompressed basket bytes (a
    /// lying index, a decompression bomb, or a writer setting that readers would refuse).
    #[error(
        "{what}: a basket of {bytes} uncompressed bytes is over the limit of {limit} bytes ({hint})"
    )]
    BasketTooLarge {
        /// Where: tree, branch, basket and offset, or the writer's option.
        what: String,
        /// The basket's uncompressed bytes (values and per-entry counts).
        bytes: u64,
        /// The limit in force.
        limit: u64,
        /// How to raise the limit.
        hint: &'static str,
    },
    /// Data handed to the writer does not fit the schema.
    #[error("tree {tree:?}, branch {branch:?}: {reason}")]
    InvalidFill {
        /// Tree name.
        tree: String,
        /// Branch name.
        branch: String,
        /// What is wrong.
        reason: String,
    },
    /// An entry filled into a UTF-8 branch is not valid UTF-8.
    #[error("tree {tree:?} branch {branch:?}: an entry of a UTF-8 branch is not valid UTF-8")]
    NotUtf8 {
        /// Tree name.
        tree: String,
        /// Branch name.
        branch: String,
    },
    /// A merge or skim that cannot be made as asked (no inputs, the output among them, entries
    /// out of order).
    #[error("{0}")]
    Request(String),
    /// No entry of the tree has the key looked up in its event index.
    #[error("tree {tree:?} has no entry with {key}")]
    EventNotFound {
        /// The tree.
        tree: String,
        /// The key, with the index's branch names: `(run, event) = (1, 5)`.
        key: String,
    },
    /// Several entries of the tree have the key looked up, where one was asked for.
    #[error("{key} is held by {} entries of tree {tree:?}: {}", entries.len(), list_entries(entries))]
    DuplicateEvent {
        /// The tree.
        tree: String,
        /// The key, with the index's branch names.
        key: String,
        /// The entries that have it.
        entries: Vec<u64>,
    },
    /// The tree has no event index.
    #[error("tree {tree:?} has no event index")]
    NoEventIndex {
        /// The tree.
        tree: String,
    },
    /// Another writer is updating the file (it holds the file's lock).
    #[error("{}: another writer is updating this file (it holds its lock); try again when it is done", path.display())]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The output path exists, and the writer was not asked to replace it
    /// ([`WriteOptions::overwrite`](crate::WriteOptions::overwrite)); the file there is untouched.
    #[error("{} exists; it is not replaced unless asked to", path.display())]
    OutputExists {
        /// The existing file.
        path: PathBuf,
    },
    /// An error reading one of several files (a merge's inputs), with the file's path.
    #[error("{}: {source}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What went wrong in it.
        source: Box<Error>,
    },
}

impl Error {
    /// This error, naming `path` (unless it is an I/O error that names a file already).
    pub fn in_file(self, path: &std::path::Path) -> Error {
        match self {
            e @ (Error::Io { path: Some(_), .. } | Error::InFile { .. }) => e,
            e => Error::InFile {
                path: path.to_owned(),
                source: Box::new(e),
            },
        }
    }

    pub(crate) fn io(path: Option<&std::path::Path>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.map(ToOwned::to_owned),
            source,
        }
    }

    /// The error of naming (or starting) a new file at `path`: [`Error::OutputExists`] where a
    /// file is there and `replace` was not asked for, else [`Error::Io`].
    pub(crate) fn output(path: &std::path::Path, source: std::io::Error, replace: bool) -> Error {
        if !replace && source.kind() == std::io::ErrorKind::AlreadyExists {
            Error::OutputExists {
                path: path.to_owned(),
            }
        } else {
            Error::io(Some(path), source)
        }
    }

    pub(crate) fn corrupt(location: Location, reason: impl Into<String>) -> Error {
        Error::Corrupt {
            location,
            reason: reason.into(),
        }
    }
}

/// Up to ten entry numbers, comma-separated, then how many more.
fn list_entries(entries: &[u64]) -> String {
    let shown: Vec<String> = entries.iter().take(10).map(u64::to_string).collect();
    match entries.len() {
        n if n > 10 => format!("{} and {} more", shown.join(", "), n - 10),
        _ => shown.join(", "),
    }
}
