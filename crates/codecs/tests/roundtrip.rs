//! Every codec x level sample x preconditioner x element width roundtrips, through the raw contexts and
//! through the block envelope.

use evtc_codecs::{
    Algorithm, BlockDecoder, BlockEncoder, BlockHeader, Codec, Compressor, DecoderDictionary,
    Decompressor, EncoderDictionary, Precondition, Width, train_dictionary,
};
use proptest::prelude::*;

/// A sample of levels per algorithm: the extremes and the middle.
fn codecs() -> Vec<Codec> {
    let mut codecs = vec![Codec::NONE, Codec::LZ4];
    for level in [1, 6, 9] {
        codecs.push(Codec::zlib(level).unwrap());
    }
    for level in [1, 6] {
        codecs.push(Codec::lzma(level).unwrap());
    }
    for level in [1, 9, 12] {
        codecs.push(Codec::lz4hc(level).unwrap());
    }
    for level in [-7, -1, 1, 5, 19, 22] {
        codecs.push(Codec::zstd(level).unwrap());
    }
    codecs
}

fn preconditions() -> Vec<Precondition> {
    let mut all = vec![Precondition::None];
    for w in Width::ALL {
        all.extend([
            Precondition::Shuffle(w),
            Precondition::BitShuffle(w),
            Precondition::Delta(w),
            Precondition::DeltaShuffle(w),
            Precondition::For(w),
            Precondition::DeltaFor(w),
            Precondition::DeltaVarint(w),
            Precondition::ZigzagShuffle(w),
            Precondition::Sparse(w),
            Precondition::Runs(w),
            Precondition::BitPlanes(w),
        ]);
    }
    all
}

/// Random bytes, and the structured data of physics columns.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..3000),
        // Runs of equal 4-byte values (TSmall-like).
        (prop::collection::vec((any::<u32>(), 1usize..12), 0..300)).prop_map(|runs| runs
            .into_iter()
            .flat_map(|(v, n)| std::iter::repeat_n(v, n))
            .flat_map(u32::to_le_bytes)
            .collect()),
        // Sorted integers (genomic positions, offsets).
        (prop::collection::vec(0u64..1000, 0..800)).prop_map(|steps| steps
            .into_iter()
            .scan(0u64, |acc, step| {
                *acc += step;
                Some(*acc)
            })
            .flat_map(u64::to_le_bytes)
            .collect()),
        // Floats with few distinct values, and a ragged tail.
        (prop::collection::vec(0usize..5, 0..1000), 0usize..4).prop_map(|(picks, tail)| {
            let table = [0.0f32, 1.5, -2.25, 91.1875, 1e-3];
            let mut bytes: Vec<u8> = picks
                .into_iter()
                .flat_map(|i| table[i].to_le_bytes())
                .collect();
            bytes.extend(std::iter::repeat_n(7u8, tail));
            bytes
        }),
    ]
}

fn check_raw(codec: Codec, input: &[u8]) {
    let mut compressed = vec![0xEE; 3]; // compress appends: existing bytes stay.
    let n = Compressor::new()
        .compress(codec, input, &mut compressed)
        .unwrap();
    assert_eq!(n, compressed.len() - 3);
    assert_eq!(&compressed[..3], &[0xEE; 3]);
    let mut back = vec![0; input.len()];
    Decompressor::new()
        .decompress(codec.algorithm(), &compressed[3..], &mut back)
        .unwrap();
    assert_eq!(back, input, "{codec}");
}

#[test]
fn empty_and_one_byte_inputs() {
    for codec in codecs() {
        check_raw(codec, b"");
        check_raw(codec, b"x");
        for p in preconditions() {
            for input in [&b""[..], b"x"] {
                let mut block = Vec::new();
                BlockEncoder::new()
                    .encode(codec, p, input, &mut block)
                    .unwrap();
                let mut back = Vec::new();
                BlockDecoder::new().decode(&block, &mut back).unwrap();
                assert_eq!(back, input);
            }
        }
    }
}

#[test]
fn contexts_are_reusable_across_codecs_and_levels() {
    let mut compressor = Compressor::new();
    let mut decompressor = Decompressor::new();
    let input: Vec<u8> = (0..100_000u32)
        .flat_map(|i| (i / 7).to_le_bytes())
        .collect();
    for _ in 0..2 {
        for codec in codecs() {
            let mut compressed = Vec::new();
            compressor.compress(codec, &input, &mut compressed).unwrap();
            let mut back = vec![0; input.len()];
            decompressor
                .decompress(codec.algorithm(), &compressed, &mut back)
                .unwrap();
            assert_eq!(back, input, "{codec}");
        }
    }
}

/// A seeded xorshift64 stream of pseudo-random words.
fn xorshift() -> impl FnMut() -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[test]
fn incompressible_data_is_stored() {
    let mut next = xorshift();
    let input: Vec<u8> = (0..4096).map(|_| (next() >> 56) as u8).collect();
    let mut block = Vec::new();
    let header = BlockEncoder::new()
        .encode(
            Codec::LZ4,
            Precondition::Shuffle(Width::W4),
            &input,
            &mut block,
        )
        .unwrap();
    assert_eq!(header.codec, Codec::NONE);
    assert_eq!(header.precondition, Precondition::None);
    assert_eq!(block.len(), input.len() + BlockHeader::LEN);
}

/// `bitplanes` on values with no constant bit-plane (small signed integers: the sign planes vary)
/// would only add its masks: the block is the bitshuffle it was made from, not the unshuffled
/// values, and as small as an asked-for bitshuffle.
#[test]
fn bitplanes_that_leave_out_no_plane_give_way_to_bitshuffle() {
    let mut next = xorshift();
    let input: Vec<u8> = (0..16_384)
        .flat_map(|_| ((next() >> 59) as i32 - 16).to_le_bytes())
        .collect();
    for codec in [Codec::LZ4, Codec::zstd(5).unwrap()] {
        let (mut planes, mut shuffled) = (Vec::new(), Vec::new());
        let mut encoder = BlockEncoder::new();
        let header = encoder
            .encode(
                codec,
                Precondition::BitPlanes(Width::W4),
                &input,
                &mut planes,
            )
            .unwrap();
        assert_eq!(
            header.precondition,
            Precondition::BitShuffle(Width::W4),
            "{codec}"
        );
        encoder
            .encode(
                codec,
                Precondition::BitShuffle(Width::W4),
                &input,
                &mut shuffled,
            )
            .unwrap();
        assert_eq!(planes, shuffled, "{codec}");
        let mut out = vec![0u8; input.len()];
        BlockDecoder::new().decode_into(&planes, &mut out).unwrap();
        assert_eq!(out, input, "{codec}");
    }
}

#[test]
fn large_blocks_beyond_roots_16_mib_limit() {
    let input: Vec<u8> = (0..(20u32 << 20) / 4)
        .flat_map(|i| (i / 3).to_le_bytes())
        .collect();
    for codec in [Codec::LZ4, Codec::zstd(1).unwrap(), Codec::zlib(1).unwrap()] {
        let mut block = Vec::new();
        let header = BlockEncoder::new()
            .encode(
                codec,
                Precondition::BitShuffle(Width::W4),
                &input,
                &mut block,
            )
            .unwrap();
        assert_eq!(header.uncompressed_len, input.len() as u64);
        let mut back = Vec::new();
        BlockDecoder::new().decode(&block, &mut back).unwrap();
        assert!(back == input, "{codec}");
    }
}

#[test]
fn zstd_dictionaries_roundtrip_and_shrink_small_frames() {
    // 2,000 small events sharing structure, as RAC units would.
    let events: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| {
            format!(
                "event {i}: muons=[{:.2}, {:.2}] jets={}",
                (i % 17) as f32 * 1.25,
                (i % 5) as f32,
                i % 9
            )
            .into_bytes()
        })
        .collect();
    let samples: Vec<u8> = events.concat();
    let sizes: Vec<usize> = events.iter().map(Vec::len).collect();
    let dict = train_dictionary(&samples, &sizes, 4096).unwrap();
    let encoder = EncoderDictionary::new(&dict, 5).unwrap();
    let decoder = DecoderDictionary::new(&dict).unwrap();
    let (mut with_dict, mut without) = (0, 0);
    let mut compressor = Compressor::new();
    let mut decompressor = Decompressor::new();
    for event in &events {
        let mut out = Vec::new();
        with_dict += compressor
            .compress_with_dictionary(&encoder, event, &mut out)
            .unwrap();
        let mut back = vec![0; event.len()];
        decompressor
            .decompress_with_dictionary(&decoder, &out, &mut back)
            .unwrap();
        assert_eq!(&back, event);
        without += compressor
            .compress(Codec::zstd(5).unwrap(), event, &mut Vec::new())
            .unwrap();
    }
    assert!(
        with_dict * 3 < without * 2,
        "dictionary {with_dict} vs plain {without}"
    );
    assert!(train_dictionary(&samples, &sizes[1..], 4096).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn raw_codecs_roundtrip(input in data()) {
        for codec in codecs() {
            check_raw(codec, &input);
        }
    }

    #[test]
    fn blocks_roundtrip_for_every_codec_and_preconditioner(input in data()) {
        let mut encoder = BlockEncoder::new();
        let mut decoder = BlockDecoder::new();
        for codec in codecs() {
            for p in preconditions() {
                let mut block = vec![1, 2, 3];
                let header = encoder.encode(codec, p, &input, &mut block).unwrap();
                prop_assert_eq!(block.len() as u64, 3 + header.block_len());
                prop_assert!(header.block_len() <= input.len() as u64 + BlockHeader::LEN as u64);
                let mut back = Vec::new();
                prop_assert_eq!(decoder.decode(&block[3..], &mut back).unwrap(), header);
                prop_assert_eq!(&back, &input, "{} {}", codec, p);
            }
        }
    }
}

#[test]
fn every_algorithm_is_covered() {
    let covered: Vec<Algorithm> = codecs().iter().map(|c| c.algorithm()).collect();
    for algorithm in Algorithm::ALL {
        assert!(covered.contains(&algorithm), "{algorithm:?}");
    }
}

/// Segmented zstd frames decode with the plain decoder at every segment length (including a
/// remainder shorter than a segment), and shuffled floats compress smaller with a table per plane.
#[test]
fn segmented_zstd_frames_roundtrip_and_shrink_shuffled_floats() {
    // Exponentially distributed momenta (mean 30) from a xorshift generator, with NanoAOD's
    // reduced precision (10 mantissa bits).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let floats: Vec<f32> = (0..54_655)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            f32::from_bits((-30.0 * (1.0 - u).ln() as f32).to_bits() & !0x1FFF)
        })
        .collect();
    let raw: Vec<u8> = floats.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut shuffled = vec![0; raw.len()];
    evtc_codecs::Kernel::best().apply(Precondition::Shuffle(Width::W4), &raw, &mut shuffled);
    let codec = Codec::zstd(5).unwrap();
    let mut compressor = Compressor::new();
    let mut whole = Vec::new();
    compressor.compress(codec, &shuffled, &mut whole).unwrap();
    for segment in [
        0,
        1,
        1000,
        shuffled.len() / 4,
        shuffled.len() - 1,
        shuffled.len(),
    ] {
        let mut out = vec![7u8; 3];
        let cuts: Vec<usize> = match segment {
            0 => Vec::new(),
            s => (s..shuffled.len()).step_by(s).collect(),
        };
        let n = compressor
            .compress_segmented(codec, &shuffled, &cuts, &mut out)
            .unwrap();
        assert_eq!(out.len(), 3 + n);
        let mut back = vec![0; shuffled.len()];
        Decompressor::new()
            .decompress(Algorithm::Zstd, &out[3..], &mut back)
            .unwrap();
        assert_eq!(back, shuffled, "segment {segment}");
        if segment == shuffled.len() / 4 {
            assert!(
                (n as f64) < 0.97 * whole.len() as f64,
                "per-plane tables: {n} bytes, shared: {}",
                whole.len()
            );
        }
    }
    // Other codecs ignore the segments.
    let mut lz4 = Vec::new();
    compressor
        .compress_segmented(Codec::LZ4, &shuffled, &[1000, 2000], &mut lz4)
        .unwrap();
    let mut plain = Vec::new();
    compressor
        .compress(Codec::LZ4, &shuffled, &mut plain)
        .unwrap();
    assert_eq!(lz4, plain);
}

/// One decompressor alternating between LZ4 dictionaries decodes every unit against the right one
/// (it keeps a copy of the last dictionary before its output).
#[test]
fn lz4_dictionaries_switch_in_one_decompressor() {
    use evtc_codecs::{PrefixDictionary, UnitCompressor};
    let dict_a: Vec<u8> = b"pt eta phi mass charge ".repeat(40);
    let dict_b: Vec<u8> = (0..2000u32)
        .flat_map(|i| (i * 7919).to_le_bytes())
        .collect();
    let unit_a = b"mass charge pt eta phi mass charge pt".repeat(3);
    let unit_b: Vec<u8> = (100..300u32)
        .flat_map(|i| (i * 7919).to_le_bytes())
        .collect();
    let compress = |prefix: &[u8], unit: &[u8]| {
        let mut out = Vec::new();
        UnitCompressor::new(Codec::LZ4, None, prefix)
            .unwrap()
            .compress(unit, &mut out)
            .unwrap();
        out
    };
    let (packed_a, packed_b) = (compress(&dict_a, &unit_a), compress(&dict_b, &unit_b));
    // Both units reach into their dictionaries.
    assert!(packed_a.len() < compress(&[], &unit_a).len());
    assert!(packed_b.len() < compress(&[], &unit_b).len());
    let (a, b) = (
        PrefixDictionary::new(&dict_a),
        PrefixDictionary::new(&dict_b),
    );
    let mut decompressor = Decompressor::new();
    for _ in 0..3 {
        for (dict, packed, unit) in [(&a, &packed_a, &unit_a[..]), (&b, &packed_b, &unit_b[..])] {
            let mut out = vec![0; unit.len()];
            decompressor
                .decompress_unit(Algorithm::Lz4, None, Some(dict), packed, &mut out)
                .unwrap();
            assert_eq!(out, unit);
            // The wrong dictionary is an error or other bytes, never the unit by chance.
            let other = if std::ptr::eq(dict, &a) { &b } else { &a };
            let mut wrong = vec![0; unit.len()];
            let result =
                decompressor.decompress_unit(Algorithm::Lz4, None, Some(other), packed, &mut wrong);
            assert!(result.is_err() || wrong != unit);
        }
    }
}

/// LZMA units against a prefix are raw LZMA2 (no xz stream around them) that reaches into the
/// prefix; one decompressor decodes units of different prefixes and sizes in turn, and damaged,
/// truncated or mis-sized units are errors.
#[test]
fn lzma_units_against_a_prefix_roundtrip_and_check_their_size() {
    use evtc_codecs::{Error, PrefixDictionary, UnitCompressor, plane_cuts};
    let codec: Codec = "lzma:6".parse().unwrap();
    // Words drawn from a 64-word table (xorshift): what a prefix holds and a lone unit does not.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words: Vec<u32> = (0..64).map(|_| next() as u32).collect();
    let mut sample = |n: usize| -> Vec<u8> {
        (0..n)
            .flat_map(|_| words[(next() % 64) as usize].to_le_bytes())
            .collect()
    };
    let prefix_a = sample(4096);
    let prefix_b: Vec<u8> = b"Muon_pt Muon_eta Muon_phi ".repeat(300);
    let unit_a = sample(700);
    let unit_b = b"Muon_eta Muon_pt Muon_phi Muon_pt ".repeat(40);
    let mut shuffled = vec![0; unit_a.len()];
    Precondition::Shuffle(Width::W4).apply(&unit_a, &mut shuffled);
    let cuts = plane_cuts(codec, Precondition::Shuffle(Width::W4), &shuffled);
    assert!(!cuts.is_empty());
    let compress = |prefix: &[u8], unit: &[u8], cuts: &[usize]| {
        let mut out = Vec::new();
        UnitCompressor::new(codec, None, prefix)
            .unwrap()
            .compress_segmented(unit, cuts, &mut out)
            .unwrap();
        out
    };
    let packed_a = compress(&prefix_a, &unit_a, &[]);
    let packed_b = compress(&prefix_b, &unit_b, &[]);
    let packed_s = compress(&prefix_a, &shuffled, &cuts);
    for packed in [&packed_a, &packed_b, &packed_s] {
        assert!(!packed.starts_with(b"\xFD7zXZ\0"), "not an xz stream");
    }
    // Both reach into their prefixes.
    assert!(packed_a.len() < compress(&[], &unit_a, &[]).len());
    assert!(packed_b.len() < compress(&[], &unit_b, &[]).len());
    let (a, b) = (
        PrefixDictionary::new(&prefix_a),
        PrefixDictionary::new(&prefix_b),
    );
    let mut decompressor = Decompressor::new();
    let lzma = Algorithm::Lzma;
    for _ in 0..2 {
        for (dict, packed, unit) in [
            (&a, &packed_a, &unit_a[..]),
            (&b, &packed_b, &unit_b[..]),
            (&a, &packed_s, &shuffled[..]),
        ] {
            let mut out = vec![0; unit.len()];
            decompressor
                .decompress_unit(lzma, None, Some(dict), packed, &mut out)
                .unwrap();
            assert_eq!(out, unit);
            let mut short = vec![0; unit.len() - 1];
            let result = decompressor.decompress_unit(lzma, None, Some(dict), packed, &mut short);
            assert!(
                matches!(result, Err(Error::SizeMismatch { .. })),
                "{result:?}"
            );
            let mut long = vec![0; unit.len() + 1];
            let result = decompressor.decompress_unit(lzma, None, Some(dict), packed, &mut long);
            assert!(
                matches!(result, Err(Error::SizeMismatch { .. })),
                "{result:?}"
            );
            let result = decompressor.decompress_unit(
                lzma,
                None,
                Some(dict),
                &packed[..packed.len() - 1],
                &mut out,
            );
            assert!(matches!(result, Err(Error::Corrupt { .. })), "{result:?}");
            let mut trailing = packed.to_vec();
            trailing.push(0);
            let result = decompressor.decompress_unit(lzma, None, Some(dict), &trailing, &mut out);
            assert!(matches!(result, Err(Error::Corrupt { .. })), "{result:?}");
            // Every damaged byte is an error or other bytes, never a panic.
            for at in (0..packed.len()).step_by(7) {
                let mut damaged = packed.to_vec();
                damaged[at] ^= 0x5A;
                let _ = decompressor.decompress_unit(lzma, None, Some(dict), &damaged, &mut out);
            }
        }
    }
    let result = decompressor.decompress_with_prefix(Algorithm::Zstd, &a, &packed_a, &mut [0; 4]);
    assert!(matches!(result, Err(Error::Dictionary(_))), "{result:?}");
}
