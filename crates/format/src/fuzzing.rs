//! Entry points for fuzzing the decode path below the checksums (not a stable API).

use crate::error::Location;
use crate::meta::{Boundaries, BranchMeta, DataType, ScalarType};
use crate::reader::{BasketKind, decode_body};
use crate::types::Scalar;

/// Decodes `body` as a basket of `entries` entries of a branch whose type and boundary encoding
/// `kind` selects, sized from the first block header as a reader sized it from the index.
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
            let Ok(header) = evtc_codecs::BlockHeader::parse(body) else {
                return;
            };
            let bytes = header.uncompressed_len.min(1 << 24) as usize;
            let bytes = if boundaries == Boundaries::Offsets {
                bytes.saturating_sub(4 * (entries + 1))
            } else {
                bytes
            };
            bytes / t.size()
        }
    };
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
        rac: false,
        rac_unit_bytes: 0,
        dictionary_offset: 0,
        dictionary_len: 0,
        entries: entries as u64,
        raw_bytes: 0,
        stored_bytes: 0,
        baskets: 1,
        index_offset: 0,
        index_len: 0,
        extensions: Vec::new(),
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
