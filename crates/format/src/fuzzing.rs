//! Entry points for fuzzing the decode path below the checksums (not a stable API).

use crate::error::Location;
use crate::meta::{Boundaries, BranchMeta, DataType, EXT_RAC_ENTRY_SIZES, Extension, ScalarType};
use crate::reader::{BasketKind, decode_body, split_rac};
use crate::types::Scalar;
use evtc_rac::SeekTable;

/// Decodes `body` as a basket of `entries` entries of a branch whose type and boundary encoding
/// `kind` selects (with boundaries `counts` and bit 6 set, RAC units with entry sizes), sized from
/// the first block header as a reader sized it from the index.
pub fn decode_basket_body(kind: u8, entries: usize, body: &[u8]) {
    let t = ScalarType::ALL[usize::from(kind) % ScalarType::ALL.len()];
    let boundaries = [
        Boundaries::Fixed,
        Boundaries::Offsets,
        Boundaries::Counts,
        Boundaries::None,
    ][usize::from(kind / 11) % 4];
    let dtype = match boundaries {
        Boundaries::Fixed if kind & 0x80 != 0 => DataType::FixedArray(t, 3),
        Boundaries::Fixed => DataType::Scalar(t),
        _ => DataType::Jagged(t),
    };
    let elements = match dtype.fixed_len() {
        Some(len) => entries * len,
        None => {
            // A blocks basket's first block, or a RAC basket's seek table.
            let bytes = match evtc_codecs::BlockHeader::parse(body) {
                Ok(header) => header.uncompressed_len,
                Err(_) => match split_rac(body).and_then(|(p, _)| SeekTable::parse(p).ok()) {
                    Some((table, _)) => table.raw_len(),
                    None => return,
                },
            };
            let bytes = bytes.min(1 << 24) as usize;
            let bytes = if boundaries == Boundaries::Offsets {
                bytes.saturating_sub(4 * (entries + 1))
            } else {
                bytes
            };
            bytes / t.size()
        }
    };
    let entry_sizes = boundaries == Boundaries::Counts && kind & 0x40 != 0;
    let meta = BranchMeta {
        name: "fuzz".into(),
        dtype,
        counter: (boundaries == Boundaries::None).then(|| "n".into()),
        boundaries,
        codec: 0,
        level: 0,
        precondition: 0,
        width: 1,
        count_precondition: 0,
        rac: entry_sizes,
        rac_unit_bytes: 0,
        dictionary_offset: 0,
        dictionary_len: 0,
        entries: entries as u64,
        raw_bytes: 0,
        stored_bytes: 0,
        baskets: 1,
        index_offset: 0,
        index_len: 0,
        extensions: if entry_sizes {
            vec![Extension {
                key: EXT_RAC_ENTRY_SIZES.into(),
                required: true,
                value: Vec::new(),
            }]
        } else {
            Vec::new()
        },
    };
    fn run<T: Scalar>(meta: &BranchMeta, entries: usize, elements: usize, body: &[u8]) {
        let mut values = vec![T::default(); elements];
        let half = Some(entries / 2..entries);
        for kind in [
            BasketKind::Blocks,
            BasketKind::Rac(None, None),
            BasketKind::Rac(None, half),
        ] {
            let _ = decode_body(
                meta,
                entries,
                body,
                &mut values,
                false,
                &Location::default(),
                kind,
            );
        }
    }
    match t {
        ScalarType::Bool => run::<bool>(&meta, entries, elements, body),
        ScalarType::I8 => run::<i8>(&meta, entries, elements, body),
        ScalarType::U8 => run::<u8>(&meta, entries, elements, body),
        ScalarType::I16 => run::<i16>(&meta, entries, elements, body),
        ScalarType::U16 => run::<u16>(&meta, entries, elements, body),
        ScalarType::I32 => run::<i32>(&meta, entries, elements, body),
        ScalarType::U32 => run::<u32>(&meta, entries, elements, body),
        ScalarType::I64 => run::<i64>(&meta, entries, elements, body),
        ScalarType::U64 => run::<u64>(&meta, entries, elements, body),
        ScalarType::F32 => run::<f32>(&meta, entries, elements, body),
        ScalarType::F64 => run::<f64>(&meta, entries, elements, body),
    }
}

/// Rewrites a complete file whose last record before the footer is the index of its last tree's
/// last branch (as the writer leaves it): that index's first basket now claims `elements` values,
/// and the footer and trailer are rewritten so that every checksum holds. A hostile file whose
/// only lie is a size, for the tests and seeds of the memory bounds.
///
/// # Panics
/// If `file` is not such a file (a test bug, not an input error).
pub fn with_lying_index(file: &[u8], elements: u64) -> Vec<u8> {
    use crate::meta::{BasketIndex, FileMeta};
    use crate::record::{NO_BRANCH, RecordHeader, RecordKind, TRAILER_LEN, Trailer, encode_record};

    let trailer_at = file.len() - TRAILER_LEN as usize;
    let trailer = Trailer::decode(
        file[trailer_at..].try_into().expect("a trailer"),
        trailer_at as u64,
    )
    .expect("a sound trailer");
    let footer = &file[trailer.footer_offset as usize + 48..trailer_at];
    let mut meta: FileMeta = postcard::from_bytes(footer).expect("a footer");
    let tree = meta.trees.len() - 1;
    let branch = meta.trees[tree].branches.len() - 1;
    let b = &mut meta.trees[tree].branches[branch];
    let at = b.index_offset as usize;
    assert_eq!(
        at + b.index_len as usize,
        trailer.footer_offset as usize,
        "the index is the last record before the footer"
    );
    let mut index: BasketIndex =
        postcard::from_bytes(&file[at + 48..at + b.index_len as usize]).expect("an index");
    index.baskets[0].elements = elements;
    let header = |kind, tree: usize, branch: u32| RecordHeader::metadata(kind, tree as u32, branch);
    let index = encode_record(
        header(RecordKind::BranchIndex, tree, branch as u32),
        &postcard::to_stdvec(&index).expect("encodes"),
    );
    b.index_len = index.len() as u64;
    let mut out = file[..at].to_vec();
    out.extend_from_slice(&index);
    let footer_offset = out.len() as u64;
    let footer = encode_record(
        header(RecordKind::Footer, 0, NO_BRANCH),
        &postcard::to_stdvec(&meta).expect("encodes"),
    );
    out.extend_from_slice(&footer);
    out.extend_from_slice(
        &Trailer {
            footer_offset,
            footer_len: footer.len() as u64,
        }
        .encode(),
    );
    out
}
