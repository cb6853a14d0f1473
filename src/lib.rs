//! evtc: a columnar container for particle-physics event data with tunable, random-access compression.
//!
//! This facade re-exports evtc's library crates so that one dependency brings them all:
//!
//! - [`codecs`] (`evtc-codecs`): every codec ROOT uses behind one [`codecs::Codec`] type,
//!   shuffle/bitshuffle/delta preconditioners with SIMD kernels, CRC32 and the block envelope.
//! - [`format`](mod@format) (`evtc-format`): the file format; [`format::FileWriter`] and
//!   [`format::FileReader`].
//! - [`rac`] (`evtc-rac`): random-access compression: units, seek tables, dictionaries.
//! - [`tools`] (`evtc-tools`): the jobs on whole files behind the `evtc` command, the Python
//!   package and the C API: convert (ROOT or evtc files into evtc files with new settings, or
//!   into ROOT files), merge, skim, add columns, the selection language and the codec advisor,
//!   with the one settings vocabulary they share and the one test of what an input file is.
//! - [`root`] (`evtc-root`): ROOT files, read and written without ROOT: TTrees and RNTuples
//!   read into columns, RNTuples and TTrees written from them.
//! - [`datagen`] (`evtc-datagen`): deterministic NanoAOD-like and RAC-study data for tests and
//!   benchmarks.
//!
//! ```
//! use evtc::codecs::{BlockDecoder, BlockEncoder, Codec, Precondition, Width};
//!
//! let jets = evtc::datagen::nano::jets(10_000, 1);
//! let raw = evtc::datagen::le_bytes(&jets.pt);
//! let mut block = Vec::new();
//! BlockEncoder::new().encode(Codec::zstd(5)?, Precondition::Shuffle(Width::W4), &raw, &mut block)?;
//! let mut back = Vec::new();
//! BlockDecoder::new().decode(&block, &mut back)?;
//! assert_eq!(back, raw);
//! # Ok::<(), evtc::codecs::Error>(())
//! ```
#![deny(missing_docs)]

pub use evtc_codecs as codecs;
pub use evtc_datagen as datagen;
pub use evtc_format as format;
pub use evtc_rac as rac;
pub use evtc_root as root;
pub use evtc_tools as tools;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

/// The README's Rust examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
