//! The error type of `evtc-root`.

/// A `Result` whose error defaults to this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while reading a ROOT file.
///
/// Every variant that comes from the file's bytes says where: the structure being read and a byte
/// offset (in the file, or inside a decompressed object, as the message says).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused a read.
    #[error("I/O error reading {what} at byte {offset}: {source}")]
    Io {
        /// What was being read.
        what: String,
        /// Where in the file.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file does not start with ROOT's magic `root`.
    #[error("not a ROOT file: the first four bytes are {0:?}, not \"root\"")]
    NotRoot([u8; 4]),
    /// A structure is truncated, points outside the file or holds impossible values.
    #[error("corrupt {what} at byte {offset}: {detail}")]
    Corrupt {
        /// The structure, e.g. `key list of directory "sub"` or `TTree "Events" record`.
        what: String,
        /// The byte offset: in the file, or in the decompressed object named by `what`.
        offset: u64,
        /// What was wrong.
        detail: String,
    },
    /// A compressed block failed to decompress or its checksum did not match.
    #[error("{what}: compressed block at byte {offset}: {detail}")]
    Decompress {
        /// The record being decompressed, e.g. `basket 3 of branch "Muon_pt"`.
        what: String,
        /// The block's offset inside the record's compressed bytes.
        offset: u64,
        /// What was wrong.
        detail: String,
    },
    /// No object of that name (and cycle) in the file.
    #[error("no object {path:?} in the file; it holds: {available}")]
    NotFound {
        /// The path that was asked for.
        path: String,
        /// The objects that exist, comma-separated.
        available: String,
    },
    /// The object exists but is not a `TTree`.
    #[error("{path:?} is a {class}, not a TTree")]
    NotATree {
        /// The path that was asked for.
        path: String,
        /// Its class.
        class: String,
    },
    /// A class version this reader does not know how to decode.
    #[error("{what}: class {class} version {version} is not supported (supported: {supported})")]
    UnsupportedVersion {
        /// The object being read.
        what: String,
        /// The ROOT class.
        class: String,
        /// The version found.
        version: i16,
        /// The versions this reader decodes.
        supported: &'static str,
    },
    /// A branch whose kind this reader does not import.
    #[error("branch {branch:?} ({class}): {reason}")]
    Unsupported {
        /// The branch's full name.
        branch: String,
        /// Its class or type, as ROOT names it.
        class: String,
        /// Why it is not supported.
        reason: String,
    },
    /// A basket whose uncompressed size is over the reader's limit
    /// ([`RootFile::set_max_basket_bytes`](crate::RootFile::set_max_basket_bytes)).
    #[error(
        "{what}: {bytes} uncompressed bytes, over the limit of {limit} bytes (raise the readers' \
         basket limit, RootFile::set_max_basket_bytes, if the file is trusted)"
    )]
    BasketTooLarge {
        /// The basket, by branch and key offset.
        what: String,
        /// Its uncompressed size (the key's `fObjlen`).
        bytes: u64,
        /// The limit in force.
        limit: u64,
    },
    /// Column data handed to [`ColumnReader::read`](crate::ColumnReader::read) that was not
    /// made by [`ColumnData::new`](crate::ColumnData::new) for the column's kind.
    #[error(
        "branch {branch:?}: the output is not shaped for its {kind} values (make it with \
         ColumnData::new for the column's kind)"
    )]
    OutputShape {
        /// The branch (column) name.
        branch: String,
        /// The column's C++ type.
        kind: String,
    },
    /// The operating system refused a write of a ROOT file being written.
    #[error("I/O error writing {what}: {source}")]
    WriteIo {
        /// What was being written.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// What a writer was given cannot be written as ROOT reads it (a type ROOT has no field or
    /// leaf for, data that does not match its declared shape, a name ROOT refuses).
    #[error("{what}: {reason}")]
    Unwritable {
        /// The tree, field or branch.
        what: String,
        /// Why.
        reason: String,
    },
    /// A column was asked for entries past those its branch holds (a range outside the tree,
    /// or a branch filled fewer times than its tree).
    #[error(
        "branch {branch:?}: entries {start}..{end} asked for, but it holds {entries} (past a \
         branch's last filled entry, ROOT's GetEntry reads nothing and keeps the previous value)"
    )]
    OutOfRange {
        /// The branch (column) name.
        branch: String,
        /// First requested entry.
        start: u64,
        /// One past the last requested entry.
        end: u64,
        /// Entries the branch holds.
        entries: u64,
    },
}

impl Error {
    pub(crate) fn corrupt(
        what: impl Into<String>,
        offset: u64,
        detail: impl Into<String>,
    ) -> Error {
        Error::Corrupt {
            what: what.into(),
            offset,
            detail: detail.into(),
        }
    }
}
