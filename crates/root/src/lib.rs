//! `evtc-root` reads ROOT files (written by ROOT 5.23 to 6.40, and by uproot 5), their TTrees
//! and RNTuples, into typed columns, so that evtc can import them, and writes RNTuples and
//! TTrees that ROOT and uproot read ([`RootWriter`], [`NtupleWriter`], [`TTreeWriter`]). It
//! knows ROOT's byte layout and the codecs (through `evtc-codecs`), nothing of evtc files.
//!
//! - [`RootFile`] opens a file (positional reads through [`ReadAt`]), lists its trees
//!   ([`RootFile::trees`], subdirectories and cycles included, `TNtuple`s too) and reads one
//!   ([`RootFile::tree`]).
//! - A [`Tree`] lists its importable [`Column`]s (scalars, fixed arrays with their dimensions,
//!   `x[n]` arrays with their counter, `std::vector<T>` and vectors of vectors to any depth,
//!   sets, `std::bitset<N>` (a list of `N` booleans), maps (a column of keys and one of
//!   values), strings (`char*` members too) and lists of them to any depth,
//!   leaf-list leaves, split object and collection members, the members
//!   of unsplit objects, planned from the file's streamer infos and, for objects of varying
//!   size, read by an interpreter of them) and the branches it cannot import, with the reason.
//! - [`ColumnReader`] decodes baskets straight into [`ColumnData`] (values + offsets, the Arrow
//!   layout) for any entry range, one basket in memory at a time.
//! - An RNTuple (binary format 1.0, ROOT 6.34 and later) opens through the same
//!   [`RootFile::tree`]: its fields' columns are [`Column`]s, its records, lists, optional
//!   values and variants the [`Tree::fields`] above them ([`TreeKind::RNTuple`]).
//! - [`RootWriter`] writes a ROOT file of RNTuples ([`NtupleWriter`]) or TTrees
//!   ([`TTreeWriter`]) from [`ColumnData`].
//!
//! Corrupt or truncated files give an [`Error`] naming the structure and offset, never a panic;
//! sizes read from the file are checked against the file before anything is allocated.
//!
//! ```no_run
//! use evtc_root::{RootFile, Values};
//!
//! let file = RootFile::open("nano.root")?;
//! let tree = file.tree("Events")?;
//! let column = tree.column("Muon_pt").expect("a Muon_pt branch");
//! let data = file.read_column(column, 0..tree.entries)?;
//! if let Values::F32(pt) = &data.values {
//!     println!("{} muons in {} events", pt.len(), data.offsets.len() - 1);
//! }
//! # Ok::<(), evtc_root::Error>(())
//! ```
#![deny(missing_docs)]

mod column;
mod column_reader;
mod compression;
mod cursor;
mod data;
mod error;
mod file;
mod objects;
mod old_versions;
mod reduced;
mod rntuple;
mod source;
mod streamer;
mod ttree;
mod typename;
mod types;
mod write;

pub use column::{BasketInfo, Column, FieldKind, FieldNode, Tree, TreeKind, UnsupportedBranch};
pub use column_reader::ColumnReader;
pub use data::{ColumnData, Values};
pub use error::{Error, Result};
pub use file::{DEFAULT_MAX_BASKET_BYTES, Key, RootFile, TreeEntry};
pub use rntuple::field::OffsetsKey;
pub use rntuple::{ClusterLayout, ColumnLayout, NtupleLayout};
pub use source::ReadAt;
pub use types::{ColumnKind, RootTypeName, ScalarType};
pub use write::{
    FloatStorage, NtupleField, NtupleOptions, NtupleSummary, NtupleWriter, RootWriter,
    TTreeOptions, TTreeSummary, TTreeWriter, TreeBranch,
};

/// Opens `data` as a ROOT file and reads every column of every tree, ignoring errors: the fuzz
/// target's body, also used by the corruption tests. Returns how many columns read cleanly.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn read_everything(data: Vec<u8>) -> usize {
    let Ok(file) = RootFile::from_source(data) else {
        return 0;
    };
    let Ok(trees) = file.trees() else {
        return 0;
    };
    let mut ok = 0;
    for entry in trees {
        let Ok(tree) = file.tree(&format!("{};{}", entry.path, entry.cycle)) else {
            continue;
        };
        for column in &tree.columns {
            ok += usize::from(file.read_column(column, 0..tree.entries).is_ok());
        }
    }
    ok
}
