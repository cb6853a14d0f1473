//! Writing ROOT files: the file structure (keys, directory, streamer infos, free segments),
//! RNTuples and TTrees, from the same column model the readers produce.

mod buffer;
mod file;
mod ntuple;
mod streamer;

pub use file::RootWriter;
pub use ntuple::{FloatStorage, NtupleField, NtupleOptions, NtupleSummary, NtupleWriter};
