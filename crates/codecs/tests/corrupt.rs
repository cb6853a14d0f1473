//! Corrupt input never panics: truncated, bit-flipped and lying blocks give typed errors.

use evtc_codecs::{
    Algorithm, BlockDecoder, BlockEncoder, BlockHeader, Codec, Decompressor, Error, Precondition,
    Width,
};
use proptest::prelude::*;

fn sample() -> Vec<u8> {
    (0..6000u32)
        .flat_map(|i| ((i / 5) as f32 * 0.25).to_le_bytes())
        .collect()
}

fn all_codecs() -> Vec<Codec> {
    ["none", "lz4", "lz4hc:9", "zlib:6", "lzma:6", "zstd:5"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect()
}

fn encode(codec: Codec) -> Vec<u8> {
    let mut block = Vec::new();
    BlockEncoder::new()
        .encode(
            codec,
            Precondition::Shuffle(Width::W4),
            &sample(),
            &mut block,
        )
        .unwrap();
    block
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    for codec in all_codecs() {
        let block = encode(codec);
        let mut decoder = BlockDecoder::new();
        for len in 0..block.len() {
            let err = decoder.decode(&block[..len], &mut Vec::new()).unwrap_err();
            assert!(
                matches!(err, Error::Truncated { .. }),
                "{codec} at {len}: {err}"
            );
        }
    }
}

#[test]
fn every_single_bit_flip_is_caught_by_the_checksum() {
    for codec in all_codecs() {
        let block = encode(codec);
        let mut decoder = BlockDecoder::new();
        for at in (0..block.len()).step_by(7) {
            let mut bad = block.clone();
            bad[at] ^= 1 << (at % 8);
            assert!(
                decoder.decode(&bad, &mut Vec::new()).is_err(),
                "{codec}: flip at {at} went unnoticed"
            );
        }
    }
}

#[test]
fn lying_sizes_are_refused_before_allocating() {
    let mut block = encode(Codec::zstd(5).unwrap());
    block[4..12].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let err = BlockDecoder::new()
        .decode(&block, &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");

    let mut block = encode(Codec::zstd(5).unwrap());
    block[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = BlockDecoder::new()
        .decode(&block, &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");

    let block = encode(Codec::LZ4);
    let err = BlockDecoder::new()
        .max_uncompressed_len(1000)
        .decode(&block, &mut Vec::new())
        .unwrap_err();
    assert!(matches!(err, Error::TooLarge { limit: 1000, .. }), "{err}");
}

#[test]
fn payloads_that_decode_to_the_wrong_size_are_refused() {
    let data = sample();
    for codec in all_codecs() {
        let mut compressed = Vec::new();
        evtc_codecs::compress(codec, &data, &mut compressed).unwrap();
        let mut decompressor = Decompressor::new();
        for declared in [data.len() - 1, data.len() + 1, data.len() / 2, 0] {
            let mut out = vec![0; declared];
            let err = decompressor
                .decompress(codec.algorithm(), &compressed, &mut out)
                .unwrap_err();
            assert!(
                matches!(err, Error::SizeMismatch { .. } | Error::Corrupt { .. }),
                "{codec} declared {declared}: {err}"
            );
        }
    }
}

#[test]
fn wrong_output_buffer_is_an_error() {
    let block = encode(Codec::LZ4);
    let mut out = vec![0; 10];
    let err = BlockDecoder::new()
        .decode_into(&block, &mut out)
        .unwrap_err();
    assert!(matches!(err, Error::OutputSize { actual: 10, .. }), "{err}");
}

#[test]
fn unknown_header_fields_are_errors() {
    for (at, value) in [(0, 9u8), (2, 12), (3, 3), (1, 99)] {
        let mut block = encode(Codec::zstd(5).unwrap());
        block[at] = value;
        assert!(BlockHeader::parse(&block).is_err(), "byte {at} = {value}");
        assert!(
            BlockDecoder::new()
                .verify_checksums(false)
                .decode(&block, &mut Vec::new())
                .is_err()
        );
    }
}

/// Sorted integers that `delta-for` packs to a tenth, in a block of `codec`.
fn packed_block(codec: Codec) -> Vec<u8> {
    let sorted: Vec<u8> = (0..6000u32)
        .flat_map(|i| (1000 + 3 * i + i % 7).to_le_bytes())
        .collect();
    let mut block = Vec::new();
    let header = BlockEncoder::new()
        .encode(
            codec,
            Precondition::DeltaFor(Width::W4),
            &sorted,
            &mut block,
        )
        .unwrap();
    assert_eq!(
        header.precondition,
        Precondition::DeltaFor(Width::W4),
        "{codec}"
    );
    block
}

#[test]
fn packed_payloads_with_lying_lengths_are_refused() {
    for codec in all_codecs().into_iter().filter(|c| *c != Codec::NONE) {
        let block = packed_block(codec);
        // The packed length (payload bytes 0..8) claims the whole block, more, or one byte less.
        for len in [24_000u64, u64::MAX, 0] {
            let mut lying = block.clone();
            lying[BlockHeader::LEN..BlockHeader::LEN + 8].copy_from_slice(&len.to_le_bytes());
            let err = BlockDecoder::new()
                .verify_checksums(false)
                .decode(&lying, &mut Vec::new())
                .unwrap_err();
            assert!(
                matches!(err, Error::Corrupt { .. } | Error::SizeMismatch { .. }),
                "{codec} packed length {len}: {err}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mutated_packed_blocks_never_panic(codec in prop::sample::select(all_codecs()[1..].to_vec()), at in 0usize..10_000, byte in any::<u8>()) {
        let mut block = packed_block(codec);
        let at = at % block.len();
        block[at] ^= byte;
        let _ = BlockDecoder::new().verify_checksums(false).decode(&block, &mut Vec::new());
    }

    /// With checksums off, garbage reaches the backends: they must return errors or data, never panic.
    #[test]
    fn backends_survive_garbage(garbage in prop::collection::vec(any::<u8>(), 0..600), declared in 0usize..5000) {
        let mut decompressor = Decompressor::new();
        for algorithm in Algorithm::ALL {
            let mut out = vec![0; declared];
            let _ = decompressor.decompress(algorithm, &garbage, &mut out);
        }
    }

    #[test]
    fn mutated_blocks_never_panic(codec in prop::sample::select(all_codecs()), at in 0usize..10_000, byte in any::<u8>()) {
        let mut block = encode(codec);
        let at = at % block.len();
        block[at] = byte;
        let _ = BlockDecoder::new().verify_checksums(false).decode(&block, &mut Vec::new());
    }
}
