//! Giving a tree of an existing file an event index.

use std::path::Path;

use serde::Serialize;

use super::{EXT_EVENT_INDEX, IndexLocation, KeyBranches, Row, encode_body, extend_key_bits};
use crate::error::{Error, Result};
use crate::meta::{Extension, ScalarType};
use crate::ops::transfer::by_type;
use crate::reader::{FileReader, TreeReader};
use crate::record::{self, NO_BRANCH, RecordHeader, RecordKind};
use crate::schema::WriteOptions;
use crate::types::Scalar;
use crate::writer::FileWriter;

/// What [`add_event_index`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexSummary {
    /// The tree.
    pub tree: String,
    /// The major key's branch.
    pub major: String,
    /// The minor key's branch.
    pub minor: String,
    /// Rows (the tree's entries).
    pub rows: u64,
    /// Keys held by more than one entry.
    pub duplicate_keys: u64,
    /// Bytes of the index record.
    pub bytes: u64,
}

impl IndexSummary {
    /// The summary of `rows` (sorted) of a tree's index of `bytes` bytes.
    pub(crate) fn of(tree: &str, keys: (&str, &str), rows: &[Row], bytes: u64) -> IndexSummary {
        let duplicate_keys = rows
            .chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
            .filter(|run| run.len() > 1)
            .count() as u64;
        IndexSummary {
            tree: tree.to_owned(),
            major: keys.0.to_owned(),
            minor: keys.1.to_owned(),
            rows: rows.len() as u64,
            duplicate_keys,
            bytes,
        }
    }
}

/// Gives tree `tree` of the evtc file at `path` (`None`: its first tree) an event index keyed by
/// the integer scalar branches `major` and `minor` (replacing an index it had): reads the two
/// branches, sorts their
/// keys, and writes the index record and a new footer after the file's end, in place
/// ([`FileWriter::append`]): nothing in the file is rewritten, and a process stopped at any
/// moment leaves the file as it was.
///
/// ```
/// # use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("later.evtc");
/// # let mut file = FileWriter::create(&path, WriteOptions::default())?;
/// # let mut tree = file.tree("Events", vec![
/// #     BranchSpec::scalar("run", ScalarType::I32),
/// #     BranchSpec::scalar("event", ScalarType::U64),
/// # ])?;
/// # tree.fill_column(0, &[1i32, 1, 1])?;
/// # tree.fill_column(1, &[7u64, 7, 3])?;
/// # tree.commit()?;
/// # tree.finish()?;
/// # file.finish()?;
/// let summary = evtc_format::add_event_index(&path, Some("Events"), "run", "event")?;
/// assert_eq!((summary.rows, summary.duplicate_keys), (3, 1));
/// let file = FileReader::open(&path)?;
/// let index = file.tree("Events")?.event_index()?.unwrap();
/// assert_eq!(index.entries_of(1, 7)?, [0, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::NoSuchTree`], [`Error::NoSuchBranch`]; [`Error::Request`] for a file without
/// trees; [`Error::InvalidSchema`] for a key branch
/// that is not an integer scalar; [`Error::Busy`] while another writer updates the file; read
/// errors of the file; [`Error::Io`] writing it.
///
/// [`Error::NoSuchTree`]: crate::Error::NoSuchTree
/// [`Error::NoSuchBranch`]: crate::Error::NoSuchBranch
/// [`Error::Request`]: crate::Error::Request
/// [`Error::InvalidSchema`]: crate::Error::InvalidSchema
/// [`Error::Busy`]: crate::Error::Busy
/// [`Error::Io`]: crate::Error::Io
pub fn add_event_index(
    path: impl AsRef<Path>,
    tree: Option<&str>,
    major: &str,
    minor: &str,
) -> Result<IndexSummary> {
    let path = path.as_ref();
    // The lock first: the keys read are those of the version the index goes into.
    let mut writer = FileWriter::append(path, WriteOptions::default())?;
    let reader = FileReader::open(path)?;
    let tree = match tree {
        Some(tree) => tree,
        None => match reader.trees().first() {
            Some(first) => first.name.as_str(),
            None => {
                return Err(Error::Request(format!(
                    "{} holds no trees to index",
                    path.display()
                )));
            }
        },
    };
    let events = reader.tree(tree)?;
    let keys = KeyBranches::find(tree, events.branches(), major, minor)?;
    let majors = key_column(&events, &keys.major)?;
    let minors = key_column(&events, &keys.minor)?;
    let rows = super::sorted_rows(&majors, &minors);
    drop((majors, minors));
    let body = encode_body(tree, &rows)?;
    let tree_no = events.number();
    let header = RecordHeader {
        entries: rows.len() as u64,
        ..RecordHeader::metadata(RecordKind::EventIndex, tree_no as u32, NO_BRANCH)
    };
    let index_record = record::encode_record(header, &body);
    let summary = IndexSummary::of(tree, (major, minor), &rows, index_record.len() as u64);
    writer.add_tree_record(tree_no, &index_record, |offset| {
        let location = IndexLocation {
            major: major.to_owned(),
            minor: minor.to_owned(),
            rows: rows.len() as u64,
            offset,
            len: index_record.len() as u64,
        };
        Extension {
            key: EXT_EVENT_INDEX.to_owned(),
            required: false,
            value: postcard::to_stdvec(&location).expect("the location serializes"),
        }
    })?;
    writer.finish()?;
    Ok(summary)
}

/// The key bits of every entry of a key branch.
fn key_column(
    tree: &TreeReader<'_>,
    (_, name, ty): &(usize, String, ScalarType),
) -> Result<Vec<u64>> {
    let branch = tree.branch(name)?;
    let mut bytes = Vec::new();
    macro_rules! go {
        ($t:ty) => {{
            let values: Vec<$t> = branch.read()?;
            <$t as Scalar>::extend_bytes(&values, &mut bytes);
        }};
    }
    by_type!(*ty, go);
    let mut out = Vec::with_capacity(tree.entries() as usize);
    extend_key_bits(*ty, &bytes, &mut out);
    Ok(out)
}
