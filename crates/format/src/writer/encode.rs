//! Encoding of sealed baskets and tree-schema records into record bodies.

use std::cell::RefCell;
use std::sync::Arc;

use evtc_codecs::{BlockEncoder, Codec, Precondition, Width};
use evtc_rac::{EncodeDictionary, RacEncoder, RacOptions};

use super::Sealed;
use super::branch::{BranchState, WriterDictionary};
use crate::error::{Error, Result};
use crate::meta::{Boundaries, BranchMeta, EXT_INDEX_SEGMENTS, TreeSchema};
use crate::record::{self, NO_BRANCH, RecordHeader, RecordKind};
use crate::schema::RacMode;

thread_local! {
    /// Each thread's block encoder (baskets are encoded on the writer's pool).
    static ENCODER: RefCell<BlockEncoder> = RefCell::new(BlockEncoder::new());
}

/// A tree-schema record (docs/format.md 3.1): as writing starts, or, `settled`, with every
/// branch's final settings (basket kind byte 1), which recovery reads.
pub(super) fn schema_record(
    tree_no: u32,
    name: &str,
    kept: &[BranchMeta],
    branches: &[BranchState],
    settled: bool,
) -> Vec<u8> {
    let schema = TreeSchema {
        name: name.to_owned(),
        branches: kept
            .iter()
            .chain(branches.iter().map(|s| &s.meta))
            .map(|meta| BranchMeta {
                extensions: meta
                    .extensions
                    .iter()
                    .filter(|e| e.key != EXT_INDEX_SEGMENTS)
                    .cloned()
                    .collect(),
                ..meta.unwritten()
            })
            .collect(),
    };
    let body = postcard::to_stdvec(&schema).expect("schema serializes");
    let header = RecordHeader {
        basket_kind: u8::from(settled),
        ..RecordHeader::metadata(RecordKind::TreeSchema, tree_no, NO_BRANCH)
    };
    record::encode_record(header, &body)
}

/// What compressing a basket of one branch needs, owned, so that a batch can compress on the pool
/// while the writer goes on.
pub(super) struct Encoding {
    pub(super) name: String,
    pub(super) number: u32,
    pub(super) codec: Codec,
    pub(super) precondition: Precondition,
    pub(super) count_precondition: Precondition,
    pub(super) boundaries: Boundaries,
    pub(super) fixed_len: Option<usize>,
    pub(super) value_size: usize,
    /// On or off: the branch's layout is settled before its baskets are encoded.
    pub(super) rac: RacMode,
    pub(super) rac_unit_bytes: usize,
    pub(super) dictionary: Option<Arc<WriterDictionary>>,
}

impl Encoding {
    pub(super) fn of(state: &BranchState) -> Encoding {
        debug_assert!(
            state.settled,
            "a branch's layout is settled before it is encoded"
        );
        Encoding {
            name: state.meta.name.clone(),
            number: state.number,
            codec: state.codec,
            precondition: state.precondition,
            count_precondition: state.count_precondition,
            boundaries: state.meta.boundaries,
            fixed_len: state.meta.dtype.fixed_len(),
            value_size: state.value_size(),
            rac: state.rac,
            rac_unit_bytes: state.rac_unit_bytes,
            dictionary: state.dictionary.clone(),
        }
    }

    /// The width of the values, for codecs that model it (1 for strings and bytes).
    fn value_width(&self) -> Width {
        Width::new(self.value_size as u8).unwrap_or(Width::W1)
    }
}

/// Compresses one sealed basket into a whole basket record.
pub(super) fn encode_basket(
    tree: &str,
    tree_no: u32,
    state: &Encoding,
    sealed: &Sealed,
) -> Result<Vec<u8>> {
    let compress_error = |source| Error::Compress {
        tree: tree.to_owned(),
        branch: state.name.clone(),
        source: Box::new(source),
    };
    if state.boundaries == Boundaries::Offsets && sealed.elements > u64::from(u32::MAX) {
        return Err(Error::InvalidFill {
            tree: tree.to_owned(),
            branch: state.name.clone(),
            reason: "a basket with offsets holds at most 2^32 - 1 values; lower the cluster size"
                .into(),
        });
    }
    ENCODER.with(|encoder| {
        let mut encoder = encoder.borrow_mut();
        let mut body = Vec::with_capacity(sealed.values.len() / 2 + 64);
        let rac = state.rac == RacMode::On;
        if rac {
            let ends = entry_ends(state, sealed);
            let dictionary = state.dictionary.as_deref().map(|d| match &d.zstd {
                Some(z) => EncodeDictionary::Zstd(z),
                None => EncodeDictionary::Prefix(&d.bytes),
            });
            let mut payload = Vec::with_capacity(sealed.values.len() / 2 + 64);
            RacEncoder::new()
                .encode(
                    &rac_options(state),
                    dictionary.as_ref(),
                    &sealed.values,
                    &ends,
                    &mut payload,
                )
                .map_err(|e| Error::Rac {
                    tree: tree.to_owned(),
                    branch: state.name.clone(),
                    source: Box::new(e),
                })?;
            body.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            body.extend_from_slice(&payload);
        } else {
            // With offsets, the values' block holds the entries' offsets after the values.
            let joined;
            let values = if matches!(state.boundaries, Boundaries::Offsets) {
                let mut with_offsets =
                    Vec::with_capacity(sealed.values.len() + 4 * (sealed.counts.len() + 1));
                with_offsets.extend_from_slice(&sealed.values);
                let mut at = 0u32;
                with_offsets.extend_from_slice(&at.to_le_bytes());
                for &c in &sealed.counts {
                    at = at.wrapping_add(c);
                    with_offsets.extend_from_slice(&at.to_le_bytes());
                }
                joined = with_offsets;
                &joined[..]
            } else {
                &sealed.values[..]
            };
            let mut encode = |precondition, width, data: &[u8], trial: &Option<Vec<u8>>| {
                let at = body.len();
                match trial {
                    Some(blocks) => body.extend_from_slice(blocks),
                    None => {
                        encoder
                            .encode_values(state.codec, precondition, width, data, &mut body)
                            .map_err(compress_error)?;
                    }
                }
                // The trial's blocks are what encoding the data gives (tests check it).
                if cfg!(debug_assertions) && trial.is_some() {
                    let mut again = Vec::new();
                    encoder
                        .encode_values(state.codec, precondition, width, data, &mut again)
                        .map_err(compress_error)?;
                    assert!(body[at..] == again[..], "trial blocks of {}", state.name);
                }
                Ok(())
            };
            let blocks = &sealed.trial_blocks;
            encode(
                state.precondition,
                state.value_width(),
                values,
                &blocks.values,
            )?;
            // With counts, a second block of the entries' u32 counts.
            if matches!(state.boundaries, Boundaries::Counts) {
                let counts: Vec<u8> = sealed.counts.iter().flat_map(|c| c.to_le_bytes()).collect();
                encode(state.count_precondition, Width::W4, &counts, &blocks.counts)?;
            }
        }
        let header = RecordHeader {
            kind: RecordKind::Basket,
            basket_kind: u8::from(rac),
            tree: tree_no,
            branch: state.number,
            first_entry: sealed.first_entry,
            entries: sealed.entries,
            body_len: 0,
            body_crc: 0,
        };
        Ok(record::encode_record(header, &body))
    })
}

/// The RAC options of a branch.
pub(super) fn rac_options(state: &Encoding) -> RacOptions {
    RacOptions {
        codec: state.codec,
        precondition: state.precondition,
        min_unit_bytes: state.rac_unit_bytes,
        entry_sizes: state.boundaries == Boundaries::Counts,
    }
}

/// Byte end of each entry of a sealed basket in its values.
pub(super) fn entry_ends(state: &Encoding, sealed: &Sealed) -> Vec<usize> {
    let size = state.value_size;
    match state.fixed_len {
        Some(len) => (1..=sealed.entries as usize)
            .map(|i| i * len * size)
            .collect(),
        None => {
            let mut at = 0;
            sealed
                .counts
                .iter()
                .map(|&c| {
                    at += c as usize * size;
                    at
                })
                .collect()
        }
    }
}
