//! The evtc file format: trees of typed branches, cut into compressed baskets that end together at
//! cluster boundaries. [`FileWriter`] writes files, [`FileReader`] reads them.
//!
//! The byte layout is specified in `docs/format.md` (normative); this crate writes the version in
//! [`layout::MAJOR`].[`layout::MINOR`] and reads every earlier minor version of major 1.
//!
//! # Which API when
//! - Write: [`FileWriter::create`] with [`WriteOptions`], then [`FileWriter::tree`] with
//!   [`BranchSpec`]s. Fill entry by entry ([`TreeWriter::fill`], [`TreeWriter::fill_array`], then
//!   [`TreeWriter::end_entry`]), or by column batches ([`TreeWriter::fill_column`],
//!   [`TreeWriter::fill_jagged`], then [`TreeWriter::commit`]) for conversions.
//! - Bulk read (ROOT's BulkIO): [`BranchReader::read`], [`BranchReader::read_jagged`] and their
//!   `_range` forms; variable-length data comes back as [`Jagged`] (Arrow's offsets + values).
//! - Entry reads (ROOT's `GetEntry`): [`BranchReader::cursor`] gives a typed [`BranchCursor`] that
//!   caches the current basket; [`TreeReader::rows`] iterates rows of several branches as [`Value`]s.
//!
//! # Example
//! ```
//! use evtc_format::{Boundaries, BranchSpec, FileReader, FileWriter, ScalarType, WriteOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("nano.evtc");
//! let mut file = FileWriter::create(&path, WriteOptions::default().codec("lz4".parse()?))?;
//! let mut tree = file.tree("Events", vec![
//!     BranchSpec::scalar("run", ScalarType::U32),
//!     BranchSpec::scalar("nJet", ScalarType::U32),
//!     BranchSpec::jagged("Jet_pt", ScalarType::F32).counter("nJet"),
//!     BranchSpec::jagged("hits", ScalarType::I32).boundaries(Boundaries::Counts),
//! ])?;
//! for event in 0..1000u32 {
//!     let jets: Vec<f32> = (0..event % 4).map(|j| 20.0 + j as f32).collect();
//!     tree.fill(0, 1u32)?;
//!     tree.fill(1, jets.len() as u32)?;
//!     tree.fill_array(2, &jets)?;
//!     tree.fill_array(3, &[event as i32, -1])?;
//!     tree.end_entry()?;
//! }
//! tree.finish()?;
//! file.finish()?;
//!
//! let file = FileReader::open(&path)?;
//! let events = file.tree("Events")?;
//! let jet_pt = events.branch("Jet_pt")?.read_jagged::<f32>()?;
//! assert_eq!(jet_pt.entry(3), [20.0, 21.0, 22.0]);
//! let mut hits = events.branch("hits")?.cursor::<i32>()?;
//! assert_eq!(hits.get(999)?, [999, -1]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod cores;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod index;
mod io;
mod meta;
mod ops;
mod output;
mod reader;
mod record;
mod schema;
pub mod size;
mod types;
mod writer;

pub use cores::cores;
pub use error::{Error, Location, Result};
pub use index::{EXT_EVENT_INDEX, EventIndexReader, IndexSummary, add_event_index};
pub use io::{LocalFile, ReadAt};
pub use meta::{
    BasketIndex, BasketLoc, Boundaries, BranchMeta, DataType, EXT_INDEX_SEGMENTS,
    EXT_MANTISSA_BITS, EXT_MERGE_DEFAULTS, EXT_QUANTIZED, EXT_RAC_ENTRY_SIZES,
    EXT_RAC_LZMA_DICTIONARY, EXT_SHAPE, Extension, FileMeta, IndexSegment, ScalarType, TreeMeta,
    TreeSchema,
};
pub use ops::merge::{MergeOptions, MergeProgress, MergeSummary, MergedTree, Schemas, merge};
pub use ops::recover::{
    RecoveredTree, Recovery, Scan, recover, recover_into, scan_records, scan_records_until,
};
pub use ops::skim::{SkimOptions, SkimProgress, SkimmedTree, TreeSelection, skim};
pub use output::Output;
pub use reader::{
    BranchCursor, BranchReader, ChainedRows, ChainedTrees, DEFAULT_BASKET_CACHE_BYTES, FileReader,
    FriendTrees, Jagged, RawBasket, ReadOptions, RowReader, TreeReader, Value, ValueRef,
    shared_pool,
};
pub use schema::{
    BranchSpec, COUNT_PRECONDITION, ClusterSize, DEFAULT_CLUSTER_SIZE, DEFAULT_MAX_BASKET_BYTES,
    LZMA_RAC_UNIT_BYTES, RAC_AUTO_MIN_UNITS, RacMode, WriteOptions, auto_precondition,
};
pub use types::Scalar;
pub use writer::{FileWriter, OwnedTreeWriter, TreeWriter};

/// Record-level constants of the format (magic numbers, versions, header sizes).
pub mod layout {
    pub use crate::record::{
        FILE_HEADER_LEN, FILE_MAGIC, MAJOR, MINOR, NO_BRANCH, RECORD_HEADER_LEN, RECORD_MAGIC,
        TRAILER_LEN, TRAILER_MAGIC,
    };
}
