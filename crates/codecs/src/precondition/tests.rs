use std::ops::Range;

use proptest::prelude::*;

use super::*;

/// Bit `i` of a byte buffer, LSB first.
fn bit(bytes: &[u8], i: usize) -> u8 {
    (bytes[i / 8] >> (i % 8)) & 1
}

/// The bitshuffle layout straight from the module docs, one bit at a time.
fn bitshuffle_by_definition(w: usize, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let n8 = input.len() / w / 8 * 8;
    let block = BITSHUFFLE_BLOCK_BYTES / w;
    let mut start = 0;
    while start < n8 {
        let m = block.min(n8 - start);
        let src = &input[start * w..(start + m) * w];
        let dst = &mut out[start * w..(start + m) * w];
        dst.fill(0);
        for b in 0..w {
            for k in 0..8 {
                for e in 0..m {
                    let i = (b * 8 + k) * m + e;
                    dst[i / 8] |= bit(src, (e * w + b) * 8 + k) << (i % 8);
                }
            }
        }
        start += m;
    }
    out
}

fn shuffle_by_definition(w: usize, input: &[u8]) -> Vec<u8> {
    let n = input.len() / w;
    let mut out = input.to_vec();
    for e in 0..n {
        for b in 0..w {
            out[b * n + e] = input[e * w + b];
        }
    }
    out
}

fn run(kernel: Kernel, p: Precondition, input: &[u8]) -> Vec<u8> {
    let mut out = vec![0xAA; input.len()];
    kernel.apply(p, input, &mut out);
    out
}

fn run_undo(kernel: Kernel, p: Precondition, input: &[u8]) -> Vec<u8> {
    let mut out = vec![0x55; input.len()];
    kernel.undo(p, input, &mut out);
    out
}

fn kernels() -> Vec<Kernel> {
    Isa::ALL.into_iter().filter_map(Kernel::new).collect()
}

fn width() -> impl Strategy<Value = Width> {
    prop::sample::select(Width::ALL.to_vec())
}

/// Lengths around the SIMD step sizes and the bitshuffle block.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(any::<u8>(), 8000..8400),
        prop::collection::vec(any::<u8>(), 16_000..20_000),
    ]
}

#[test]
fn scalar_kernel_matches_the_documented_layouts() {
    let input: Vec<u8> = (0..20_011u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for w in Width::ALL {
        let wb = w.bytes();
        assert_eq!(
            run(Kernel::scalar(), Precondition::BitShuffle(w), &input),
            bitshuffle_by_definition(wb, &input),
            "bitshuffle:{wb}"
        );
        let body = input.len() / wb * wb;
        let mut expected = shuffle_by_definition(wb, &input[..body]);
        expected.extend_from_slice(&input[body..]);
        assert_eq!(
            run(Kernel::scalar(), Precondition::Shuffle(w), &input),
            expected,
            "shuffle:{wb}"
        );
    }
}

#[test]
fn the_best_kernel_is_simd_on_x86_64() {
    if cfg!(target_arch = "x86_64") {
        assert_ne!(Kernel::best().isa(), Isa::Scalar);
    }
}

#[test]
fn delta_handles_wrapping_and_small_steps() {
    let values: Vec<i64> = vec![0, 5, 3, i64::MAX, i64::MIN, -1, 7];
    let input: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let encoded = run(Kernel::best(), Precondition::Delta(Width::W8), &input);
    let zigzags: Vec<u64> = encoded
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(&zigzags[..3], &[0, 10, 3]);
    assert_eq!(
        run_undo(Kernel::best(), Precondition::Delta(Width::W8), &encoded),
        input
    );
}

#[test]
fn zigzag_shuffle_is_the_shuffle_of_each_values_zigzag() {
    let values: Vec<i32> = vec![0, -1, 1, -5, 21, i32::MIN, i32::MAX, -2];
    let input: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let p = Precondition::ZigzagShuffle(Width::W4);
    let encoded = run(Kernel::best(), p, &input);
    // Written from the module docs: zigzag(x) = (x << 1) ^ (x >> 31), then plane b holds byte b
    // of every value.
    let zigzags: Vec<u32> = values
        .iter()
        .map(|&x| ((x << 1) ^ (x >> 31)) as u32)
        .collect();
    assert_eq!(&zigzags[..5], &[0, 1, 2, 9, 42]);
    let n = values.len();
    let mut expected = vec![0; input.len()];
    for (e, z) in zigzags.iter().enumerate() {
        for (b, byte) in z.to_le_bytes().into_iter().enumerate() {
            expected[b * n + e] = byte;
        }
    }
    assert_eq!(encoded, expected);
    // Small values, negative ones included, leave the high planes zero.
    for plane in 2..4 {
        assert!(encoded[plane * n..plane * n + 5].iter().all(|&b| b == 0));
    }
    assert_eq!(run_undo(Kernel::best(), p, &encoded), input);
}

#[test]
fn ids_and_specs_roundtrip() {
    for w in Width::ALL {
        for p in [
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
        ] {
            assert_eq!(
                Precondition::from_parts(p.id(), p.width() as u8).unwrap(),
                p
            );
            assert_eq!(p.to_string().parse::<Precondition>().unwrap(), p);
        }
    }
    assert_eq!(Precondition::from_parts(0, 1).unwrap(), Precondition::None);
    assert!(Precondition::from_parts(12, 4).is_err());
    assert!(Precondition::from_parts(1, 3).is_err());
    assert!(Precondition::from_parts(0, 4).is_err());
    for bad in [
        "",
        "shuffle",
        "shuffle:3",
        "bitshuffle:16",
        "zigzag:4",
        "delta:x",
    ] {
        assert!(bad.parse::<Precondition>().is_err(), "{bad}");
    }
}

/// Every element count up to two AVX2 steps and a half (and a few bytes over), so that every
/// split of a bitshuffle block into 256-, 128- and shorter steps, and a lone group of 8, meets
/// the scalar oracle.
#[test]
fn bitunshuffle_kernels_handle_every_block_tail() {
    for w in Width::ALL {
        let wb = w.bytes();
        for elements in (0..=640).step_by(8).chain([641, 643]) {
            let input: Vec<u8> = (0..elements * wb)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761).rotate_left(11) as u8)
                .collect();
            let p = Precondition::BitShuffle(w);
            let expected = run_undo(Kernel::scalar(), p, &input);
            for kernel in kernels() {
                assert_eq!(
                    run_undo(kernel, p, &input),
                    expected,
                    "{:?} {p}, {elements} elements",
                    kernel.isa()
                );
            }
        }
    }
}

/// Checks [`Kernel::undo_part`] of `part` against the whole undo: the part's bytes match it, every
/// other byte either matches it or was left as it was, and nothing outside the part's groups of 8
/// elements (its elements, for the byte-wise preconditioners) was written.
fn check_undo_part(kernel: Kernel, p: Precondition, input: &[u8], part: Range<usize>) {
    const UNTOUCHED: u8 = 0xA5;
    let whole = run_undo(Kernel::scalar(), p, input);
    let mut out = vec![UNTOUCHED; input.len()];
    assert!(kernel.undo_part(p, input, &mut out, part.clone()));
    let what = format!(
        "{:?} {p}, {} bytes, part {part:?}",
        kernel.isa(),
        input.len()
    );
    assert_eq!(out[part.clone()], whole[part.clone()], "{what}");
    let w = p.width().bytes();
    let group = if matches!(p, Precondition::BitShuffle(_)) {
        8 * w
    } else {
        w
    };
    let reach = part.start / group * group..part.end.div_ceil(group) * group;
    let body = input.len() - input.len() % w;
    for (i, (&got, &want)) in out.iter().zip(&whole).enumerate() {
        let inside = reach.contains(&i) || (i >= body && part.end > body);
        assert!(
            got == want && inside || got == UNTOUCHED,
            "{what}: byte {i} is {got:#x}, whole undo {want:#x}"
        );
    }
}

#[test]
fn undo_part_writes_the_part_as_the_whole_undo_does() {
    for w in Width::ALL {
        let wb = w.bytes();
        // Up to three bitshuffle blocks, with a tail of elements past the last group and of bytes
        // past the last element.
        for len in [
            0,
            1,
            7 * wb + 3,
            64 * wb,
            333 * wb + 1,
            2 * BITSHUFFLE_BLOCK_BYTES + 77 * wb + 2,
        ] {
            let input: Vec<u8> = (0..len)
                .map(|i| (i as u32).wrapping_mul(2_654_435_761).rotate_left(7) as u8)
                .collect();
            let cuts = [
                0,
                1,
                wb,
                9 * wb + 1,
                130 * wb,
                len / 2,
                len.saturating_sub(3),
                len,
            ];
            for p in [
                Precondition::None,
                Precondition::Shuffle(w),
                Precondition::BitShuffle(w),
                Precondition::ZigzagShuffle(w),
            ] {
                for kernel in kernels() {
                    for &a in &cuts {
                        for &b in &cuts {
                            if a <= b && b <= len {
                                check_undo_part(kernel, p, &input, a..b);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn undo_part_refuses_the_preconditioners_that_need_the_whole_input() {
    let input: Vec<u8> = (0..400u32).map(|i| (i * 7) as u8).collect();
    for p in [
        Precondition::Delta(Width::W4),
        Precondition::DeltaShuffle(Width::W4),
        Precondition::For(Width::W4),
        Precondition::Runs(Width::W4),
    ] {
        let mut out = vec![0xA5; input.len()];
        assert!(
            !Kernel::best().undo_part(p, &input, &mut out, 16..32),
            "{p}"
        );
        assert!(out.iter().all(|&b| b == 0xA5), "{p} wrote bytes");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn simd_kernels_equal_the_scalar_oracle(input in data(), w in width()) {
        for p in [Precondition::Shuffle(w), Precondition::BitShuffle(w), Precondition::Delta(w), Precondition::DeltaShuffle(w), Precondition::ZigzagShuffle(w)] {
            let expected = run(Kernel::scalar(), p, &input);
            let expected_undo = run_undo(Kernel::scalar(), p, &input);
            for kernel in kernels() {
                prop_assert_eq!(&run(kernel, p, &input), &expected, "{:?} apply {}", kernel.isa(), p);
                prop_assert_eq!(&run_undo(kernel, p, &input), &expected_undo, "{:?} undo {}", kernel.isa(), p);
            }
        }
    }

    #[test]
    fn every_kernel_roundtrips(input in data(), w in width()) {
        for p in [Precondition::None, Precondition::Shuffle(w), Precondition::BitShuffle(w), Precondition::Delta(w), Precondition::DeltaShuffle(w), Precondition::ZigzagShuffle(w)] {
            for kernel in kernels() {
                let there = run(kernel, p, &input);
                prop_assert_eq!(&run_undo(kernel, p, &there), &input, "{:?} {}", kernel.isa(), p);
            }
        }
    }
}

/// Decodes `for` / `delta-for` output straight from the `pack` module docs, bit by bit.
fn unpack_by_definition(w: usize, delta: bool, packed: &[u8], len: usize) -> Vec<u8> {
    let bits = 8 * w;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let n = len / w;
    let lanes = 32 / w;
    let word_of = |bytes: &[u8]| {
        let mut v = 0u64;
        for (k, &byte) in bytes.iter().enumerate() {
            v |= u64::from(byte) << (8 * k);
        }
        v
    };
    let mut out = Vec::with_capacity(len);
    let (mut at, mut prev) = (0, 0u64);
    for start in (0..n).step_by(pack::BLOCK) {
        let m = pack::BLOCK.min(n - start);
        let (b, h) = (packed[at] as usize, packed[at + 1] as usize);
        let e = u16::from_le_bytes([packed[at + 2], packed[at + 3]]) as usize;
        let reference = word_of(&packed[at + 4..at + 4 + w]);
        at += 4 + w;
        let rows = m.div_ceil(lanes);
        let words = (rows * b).div_ceil(bits);
        let region = &packed[at..at + lanes * words * w];
        at += region.len();
        let mut u = vec![0u64; m];
        for (i, value) in u.iter_mut().enumerate() {
            let (lane, row) = (i % lanes, i / lanes);
            for k in 0..b {
                let bit = row * b + k;
                let word = &region[((bit / bits) * lanes + lane) * w..][..w];
                *value |= ((word_of(word) >> (bit % bits)) & 1) << k;
            }
        }
        let positions: Vec<usize> = (0..e)
            .map(|j| u16::from_le_bytes([packed[at + 2 * j], packed[at + 2 * j + 1]]) as usize)
            .collect();
        at += 2 * e;
        for (j, &position) in positions.iter().enumerate() {
            let mut high = 0u64;
            for k in 0..h {
                high |= u64::from(bit(&packed[at..], j * h + k)) << k;
            }
            u[position] |= high << b;
        }
        at += (e * h).div_ceil(8);
        for value in u {
            let mut x = value.wrapping_add(reference) & mask;
            if delta {
                prev = prev.wrapping_add(x) & mask;
                x = prev;
            }
            out.extend_from_slice(&x.to_le_bytes()[..w]);
        }
    }
    out.extend_from_slice(&packed[at..]);
    assert_eq!(out.len(), len);
    out
}

/// Decodes `delta-varint` output straight from the `varint` module docs.
fn varint_by_definition(w: usize, packed: &[u8], len: usize) -> Vec<u8> {
    let mask = if w == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * w)) - 1
    };
    let (mut at, mut prev) = (0, 0u64);
    let mut out = Vec::with_capacity(len);
    for _ in 0..len / w {
        let (mut z, mut shift) = (0u64, 0);
        loop {
            let byte = packed[at];
            at += 1;
            z |= u64::from(byte & 0x7F) << shift;
            shift += 7;
            if byte < 0x80 {
                break;
            }
        }
        let d = if z & 1 == 0 { z >> 1 } else { !(z >> 1) & mask };
        prev = prev.wrapping_add(d) & mask;
        out.extend_from_slice(&prev.to_le_bytes()[..w]);
    }
    out.extend_from_slice(&packed[at..]);
    assert_eq!(out.len(), len);
    out
}

fn encode(p: Precondition, input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Kernel::best().encode(p, input, &mut out);
    out
}

/// Integers of `w` bytes shaped as packing meets them: sorted with outliers in the gaps, small
/// ranges around any base, a few wide values among narrow ones, random bytes.
fn integers() -> impl Strategy<Value = (Width, Vec<u8>)> {
    let shaped = (width(), 0usize..3000, any::<u64>(), 0u32..64, 0u8..4).prop_map(
        |(w, n, seed, spread, shape)| {
            let wb = w.bytes();
            let mut state = seed | 1;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let base = next();
            let mut at = base;
            let mut bytes = Vec::with_capacity(n * wb + 3);
            for _ in 0..n {
                let r = next();
                let value = match shape {
                    0 => {
                        at = at.wrapping_add(if r % 20 == 0 { r >> 40 } else { r % 40 });
                        at
                    }
                    1 => base.wrapping_add(r >> (64 - spread.max(1))),
                    2 if r % 50 == 0 => r,
                    2 => r % 8,
                    _ => r,
                };
                bytes.extend_from_slice(&value.to_le_bytes()[..wb]);
            }
            bytes.extend((0..(seed % wb as u64)).map(|k| k as u8));
            (w, bytes)
        },
    );
    prop_oneof![
        shaped,
        (width(), prop::collection::vec(any::<u8>(), 0..5000)),
    ]
}

#[test]
fn packing_shrinks_narrow_integers() {
    // Sorted positions with gaps under 40 and 5% outliers: about 7 bits a value.
    let mut at = 1_000u32;
    let sorted: Vec<u8> = (0..100_000u32)
        .flat_map(|i| {
            at += if i % 20 == 7 {
                (i * 7919) % 5000
            } else {
                (i * 31) % 40
            };
            at.to_le_bytes()
        })
        .collect();
    let packed = encode(Precondition::DeltaFor(Width::W4), &sorted);
    assert!(
        packed.len() * 32 < sorted.len() * 8,
        "{} bytes",
        packed.len()
    );
    // One byte for each difference under 64.
    let packed = encode(Precondition::DeltaVarint(Width::W4), &sorted);
    assert!(
        packed.len() * 4 < sorted.len() * 11 / 10,
        "{} bytes",
        packed.len()
    );
    // Booleans: one bit each, plus headers.
    let flags: Vec<u8> = (0..80_000u32).map(|i| u8::from(i % 3 == 0)).collect();
    let packed = encode(Precondition::For(Width::W1), &flags);
    assert!(packed.len() < flags.len() / 7, "{} bytes", packed.len());
    // Values around a large base, negative ones included.
    let ids: Vec<u8> = (0..10_000i64)
        .flat_map(|i| (i % 9 - 4).to_le_bytes())
        .collect();
    let packed = encode(Precondition::For(Width::W8), &ids);
    assert!(packed.len() < ids.len() / 12, "{} bytes", packed.len());
}

#[test]
fn packing_decodes_what_the_docs_define() {
    let sorted: Vec<u8> = (0..5000u32)
        .map(|i| 7 + i * 3 + if i % 97 == 0 { 100_000 } else { 0 })
        .flat_map(u32::to_le_bytes)
        .chain([1, 2])
        .collect();
    for p in [
        Precondition::For(Width::W4),
        Precondition::DeltaFor(Width::W4),
    ] {
        let packed = encode(p, &sorted);
        let delta = matches!(p, Precondition::DeltaFor(_));
        assert_eq!(
            unpack_by_definition(4, delta, &packed, sorted.len()),
            sorted,
            "{p}"
        );
    }
    // 3 zigzags to 6; -2 (0xFFFF_FFFE) to 3; 200 to 400 = 0x190: 0x90 0x03.
    let values: Vec<u8> = [3u32, 1, 201]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(
        encode(Precondition::DeltaVarint(Width::W4), &values),
        [6, 3, 0x90, 0x03]
    );
}

#[test]
fn varints_refuse_corrupt_input() {
    let values: Vec<u8> = (0..3000u32).flat_map(|i| (i * i).to_le_bytes()).collect();
    let p = Precondition::DeltaVarint(Width::W4);
    let packed = encode(p, &values);
    let mut out = vec![0; values.len()];
    for kernel in kernels() {
        assert!(
            kernel
                .decode(p, &packed[..packed.len() - 1], &mut out)
                .is_err()
        );
        let mut longer = packed.clone();
        longer.push(0);
        assert!(kernel.decode(p, &longer, &mut out).is_err());
        // Six continuation bytes, or a fifth byte with bits beyond 32.
        for bad in [
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01][..],
            &[0xFF, 0xFF, 0xFF, 0xFF, 0x10],
        ] {
            let mut out = [0u8; 4];
            let error = kernel.decode(p, bad, &mut out).unwrap_err().to_string();
            assert!(
                error.contains("delta-varint:4") && error.contains("value 0"),
                "{error}"
            );
            // The same after 16 one-byte values and before 8 more: found where the AVX2 decoder
            // takes groups of 8 and the scalar one reads a word at a time, named by its index
            // in the block.
            let mut input = vec![2u8; 16];
            input.extend_from_slice(bad);
            input.extend_from_slice(&[2; 8]);
            let mut out = vec![0u8; 4 * 25];
            let error = kernel.decode(p, &input, &mut out).unwrap_err().to_string();
            assert!(
                error.contains("value 16 at byte 16"),
                "{:?}: {error}",
                kernel.isa()
            );
        }
    }
}

#[test]
fn varints_of_every_length_decode_on_every_kernel() {
    for w in Width::ALL {
        let wb = w.bytes();
        let mask = u64::MAX >> (64 - 8 * wb);
        // Differences whose zigzags take 1, 2, ... bytes up to the most a w-byte value can,
        // in runs long and short, so that each length meets each kernel's fast and slow paths.
        let mut values = Vec::new();
        let mut x = 0u64;
        for i in 0..2000usize {
            let bits = (i * 7 + i / 9) % (8 * wb);
            let d = (1u64 << bits) | (i as u64 & 1);
            x = x.wrapping_add(if i % 3 == 0 { d.wrapping_neg() } else { d }) & mask;
            values.extend_from_slice(&x.to_le_bytes()[..wb]);
        }
        values.extend_from_slice(&[7, 8, 9][..3.min(wb - 1)]);
        assert_packing_roundtrips(
            Precondition::DeltaVarint(w),
            &values,
            varint_by_definition,
            "",
        );
    }
}

/// Encodes `input` with `p`, checks the encoding with `by_definition` (a decoder written from the
/// module docs) and that every kernel decodes it back; `what` names the case in failures.
fn assert_packing_roundtrips(
    p: Precondition,
    input: &[u8],
    by_definition: fn(usize, &[u8], usize) -> Vec<u8>,
    what: &str,
) {
    let packed = encode(p, input);
    let w = p.width().bytes();
    assert_eq!(by_definition(w, &packed, input.len()), input, "{p} {what}");
    for kernel in kernels() {
        let mut back = vec![0xA5; input.len()];
        kernel.decode(p, &packed, &mut back).unwrap();
        assert_eq!(back, input, "{:?} {p} {what}", kernel.isa());
    }
}

#[test]
fn packing_refuses_corrupt_input() {
    let values: Vec<u8> = (0..3000u32)
        .flat_map(|i| (i * 5 % 77).to_le_bytes())
        .collect();
    let p = Precondition::For(Width::W4);
    let packed = encode(p, &values);
    let mut out = vec![0; values.len()];
    for kernel in kernels() {
        // Truncated, extended, or a header claiming more than a block holds.
        assert!(
            kernel
                .decode(p, &packed[..packed.len() - 1], &mut out)
                .is_err()
        );
        let mut longer = packed.clone();
        longer.push(0);
        assert!(kernel.decode(p, &longer, &mut out).is_err());
        let mut wide = packed.clone();
        wide[0] = 33;
        let error = kernel.decode(p, &wide, &mut out).unwrap_err().to_string();
        assert!(
            error.contains("for:4") && error.contains("block 0"),
            "{error}"
        );
        let mut exceptions = packed.clone();
        exceptions[2..4].copy_from_slice(&2000u16.to_le_bytes());
        assert!(kernel.decode(p, &exceptions, &mut out).is_err());
        // A preconditioner that keeps the length refuses other lengths.
        assert!(
            kernel
                .decode(Precondition::Shuffle(Width::W4), &packed, &mut out)
                .is_err()
        );
    }
}

/// Decodes `sparse` output straight from the `sparse` module docs.
fn sparse_by_definition(w: usize, packed: &[u8], len: usize) -> Vec<u8> {
    let varint = |at: &mut usize| {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = packed[*at];
            *at += 1;
            v |= u64::from(byte & 0x7F) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return v as usize;
            }
        }
    };
    let n = len / w;
    let mut out: Vec<u8> = packed[..w].repeat(n);
    let mut at = w;
    let k = varint(&mut at);
    let mut positions = Vec::new();
    let mut next = 0;
    for _ in 0..k {
        let p = next + varint(&mut at);
        positions.push(p);
        next = p + 1;
    }
    for p in positions {
        out[p * w..(p + 1) * w].copy_from_slice(&packed[at..at + w]);
        at += w;
    }
    out.extend_from_slice(&packed[at..]);
    assert_eq!(out.len(), len);
    out
}

#[test]
fn sparse_stores_rare_flags_as_gaps() {
    // One set flag in about fourteen, as a trigger bit: one gap byte per set flag.
    let flags: Vec<u8> = (0..10_000u32)
        .map(|i| u8::from(i.wrapping_mul(2_654_435_761) % 14 == 0))
        .collect();
    let ones = flags.iter().filter(|&&f| f == 1).count();
    let p = Precondition::Sparse(Width::W1);
    let packed = encode(p, &flags);
    assert_eq!(packed[0], 0, "the base is the common value");
    assert!(
        packed.len() <= 1 + 2 + 2 * ones,
        "{} bytes for {ones} flags",
        packed.len()
    );
    assert_eq!(sparse_by_definition(1, &packed, flags.len()), flags);
    // A base of the wider values, with a tail of three bytes.
    let mut wide: Vec<u8> = (0..1000u32)
        .flat_map(|i| if i % 100 == 7 { i } else { 0xDEAD_BEEF }.to_le_bytes())
        .collect();
    wide.extend_from_slice(&[1, 2, 3]);
    let p = Precondition::Sparse(Width::W4);
    let packed = encode(p, &wide);
    assert_eq!(&packed[..4], &0xDEAD_BEEFu32.to_le_bytes());
    assert_eq!(packed[4], 10);
    assert_eq!(sparse_by_definition(4, &packed, wide.len()), wide);
    let mut out = vec![0; wide.len()];
    for kernel in kernels() {
        kernel.decode(p, &packed, &mut out).unwrap();
        assert_eq!(out, wide);
        // An exception count the bytes cannot hold, a position past the end, a cut tail.
        let mut bad = packed.clone();
        bad[4] = 0x7F;
        assert!(kernel.decode(p, &bad, &mut out).is_err());
        let mut bad = packed.clone();
        bad[5] = 0x7F;
        bad.insert(6, 0x7F);
        assert!(kernel.decode(p, &bad, &mut out).is_err());
        assert!(
            kernel
                .decode(p, &packed[..packed.len() - 1], &mut out)
                .is_err()
        );
        // One gap byte too many before the values; a first gap (1000, two bytes) past the
        // 1000 values; no exceptions but a byte besides the tail.
        let mut bad = packed.clone();
        bad.insert(5, 0);
        let err = kernel.decode(p, &bad, &mut out).unwrap_err().to_string();
        assert!(err.contains("gaps of 10 exceptions end at byte"), "{err}");
        let mut bad = packed.clone();
        bad[5] = 0xE8;
        bad.insert(6, 0x07);
        let err = kernel.decode(p, &bad, &mut out).unwrap_err().to_string();
        assert!(
            err.contains("exception 0 lies past the 1000 values"),
            "{err}"
        );
        let none = encode(p, &[0xEF, 0xBE, 0xAD, 0xDE, 9]);
        assert_eq!(none, [0xEF, 0xBE, 0xAD, 0xDE, 0, 9]);
        let mut short = [0u8; 5];
        kernel.decode(p, &none, &mut short).unwrap();
        assert_eq!(short, [0xEF, 0xBE, 0xAD, 0xDE, 9]);
        assert!(
            kernel
                .decode(p, &[&none[..], &[1]].concat(), &mut short)
                .is_err()
        );
    }
}

/// Decodes `runs` output straight from the `runs` module docs.
fn runs_by_definition(w: usize, packed: &[u8], len: usize) -> Vec<u8> {
    let varint = |at: &mut usize| {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let byte = packed[*at];
            *at += 1;
            v |= u64::from(byte & 0x7F) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                return v as usize;
            }
        }
    };
    let mut at = 0;
    let runs = varint(&mut at);
    let planes = &packed[at..at + runs * w];
    at += runs * w;
    let mut out = Vec::new();
    for i in 0..runs {
        let value: Vec<u8> = (0..w).map(|b| planes[b * runs + i]).collect();
        let len = varint(&mut at) + 1;
        out.extend(value.repeat(len));
    }
    out.extend_from_slice(&packed[at..]);
    assert_eq!(out.len(), len);
    out
}

#[test]
fn runs_store_each_run_once() {
    // The RAC study's floats: runs of six equal values, then a tail of two bytes.
    let mut floats: Vec<u8> = (0..600u32)
        .flat_map(|i| ((i / 6) as f32 * 1.5 - 100.0).to_le_bytes())
        .collect();
    floats.extend_from_slice(&[9, 8]);
    let p = Precondition::Runs(Width::W4);
    let packed = encode(p, &floats);
    // 100 runs: the count (one byte), 400 bytes of values, 100 lengths, the tail.
    assert_eq!(packed.len(), 1 + 400 + 100 + 2);
    assert_eq!(packed[0], 100);
    assert!(packed[401..501].iter().all(|&len| len == 5));
    assert_eq!(runs_by_definition(4, &packed, floats.len()), floats);
    // One long run of one-byte flags, then a short one; an empty input.
    let flags: Vec<u8> = [vec![1u8; 70_000], vec![0u8; 3]].concat();
    let one = Precondition::Runs(Width::W1);
    assert_eq!(encode(one, &flags), [2, 1, 0, 0xEF, 0xA2, 0x04, 2]);
    assert_eq!(encode(one, &[]), [0]);
    let mut out = vec![0; floats.len()];
    for kernel in kernels() {
        kernel.decode(p, &packed, &mut out).unwrap();
        assert_eq!(out, floats);
        let mut back = vec![0; flags.len()];
        kernel.decode(one, &encode(one, &flags), &mut back).unwrap();
        assert_eq!(back, flags);
        kernel.decode(one, &[0], &mut []).unwrap();
        // More runs than values, a run past the end, runs that fall short, a cut tail.
        let mut bad = packed.clone();
        bad[0] = 0x7F;
        assert!(kernel.decode(p, &bad, &mut out).is_err());
        let mut bad = packed.clone();
        bad[500] = 0x7F;
        assert!(kernel.decode(p, &bad, &mut out).is_err());
        let mut bad = packed.clone();
        bad[401] = 4;
        assert!(kernel.decode(p, &bad, &mut out).is_err());
        assert!(
            kernel
                .decode(p, &packed[..packed.len() - 1], &mut out)
                .is_err()
        );
        assert!(kernel.decode(one, &[0], &mut [0]).is_err());
        assert!(kernel.decode(one, &[1, 7, 0], &mut []).is_err());
    }
}

/// Runs of every length from 1 to 20 (short runs are filled a burst of values at a time, past
/// their end, while the values ahead are free), then runs of one value to the end (where they
/// are not), at every width, with tail bytes.
#[test]
fn runs_decode_every_run_length_to_the_end() {
    for w in Width::ALL {
        let wb = w.bytes();
        let mut input = Vec::new();
        let mut value = 0u64;
        for len in (1..=20).chain((1..=20).rev()).chain([1; 30]) {
            value = value
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            for _ in 0..len {
                input.extend_from_slice(&value.to_le_bytes()[..wb]);
            }
        }
        input.extend_from_slice(&[3, 1, 4, 1, 5, 9, 2][..wb - 1]);
        assert_packing_roundtrips(Precondition::Runs(w), &input, runs_by_definition, "");
    }
}

/// The preconditioners that make data shorter, at width `w`.
fn packing(w: Width) -> [Precondition; 6] {
    [
        Precondition::For(w),
        Precondition::DeltaFor(w),
        Precondition::DeltaVarint(w),
        Precondition::Sparse(w),
        Precondition::Runs(w),
        Precondition::BitPlanes(w),
    ]
}

/// Decodes `bitplanes` output straight from the `bitplanes` module docs, one bit at a time.
fn bitplanes_by_definition(w: usize, packed: &[u8], len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    let n8 = len / w / 8 * 8;
    let block = BITSHUFFLE_BLOCK_BYTES / w;
    let (mut start, mut at) = (0, 0);
    while start < n8 {
        let m = block.min(n8 - start);
        let (zeros, ones) = (&packed[at..at + w], &packed[at + w..at + 2 * w]);
        at += 2 * w;
        let plane_len = m / 8;
        let mut image = Vec::new();
        for p in 0..8 * w {
            if bit(zeros, p) == 1 {
                image.extend(std::iter::repeat_n(0u8, plane_len));
            } else if bit(ones, p) == 1 {
                image.extend(std::iter::repeat_n(0xFFu8, plane_len));
            } else {
                image.extend_from_slice(&packed[at..at + plane_len]);
                at += plane_len;
            }
        }
        let dst = &mut out[start * w..(start + m) * w];
        for b in 0..w {
            for k in 0..8 {
                for e in 0..m {
                    dst[e * w + b] |= bit(&image, (b * 8 + k) * m + e) << k;
                }
            }
        }
        start += m;
    }
    out[n8 * w..].copy_from_slice(&packed[at..]);
    out
}

#[test]
fn bitplanes_leave_out_constant_planes() {
    // Positive floats rounded to 10 mantissa bits: the sign plane and the 13 low mantissa planes
    // are zeros, and one exponent bit is set in every value (ones); 100 values and a 3-byte tail.
    let mut floats: Vec<u8> = (0..100u32)
        .flat_map(|i| (f32::from_bits((20.0 + i as f32 * 3.7).to_bits() & !0x1FFF)).to_le_bytes())
        .collect();
    floats.extend_from_slice(&[1, 2, 3]);
    let p = Precondition::BitPlanes(Width::W4);
    let packed = encode(p, &floats);
    let image = bitshuffle_by_definition(4, &floats);
    // One block of 96 values (planes of 12 bytes), then 4 values and the tail as they are.
    let (zeros, ones) = (&packed[..4], &packed[4..8]);
    let constant = |p: usize, byte: u8| image[p * 12..(p + 1) * 12].iter().all(|&b| b == byte);
    for plane in 0..32 {
        assert_eq!(bit(zeros, plane) == 1, constant(plane, 0), "plane {plane}");
        assert_eq!(
            bit(ones, plane) == 1,
            constant(plane, 0xFF),
            "plane {plane}"
        );
    }
    let kept = 32
        - (zeros
            .iter()
            .chain(ones)
            .map(|b| b.count_ones())
            .sum::<u32>() as usize);
    assert!(kept <= 18, "{kept} planes kept");
    assert_eq!(packed.len(), 8 + kept * 12 + 4 * 4 + 3);
    assert_eq!(bitplanes_by_definition(4, &packed, floats.len()), floats);
    let mut expanded = vec![0; floats.len()];
    bitplanes::expand(Width::W4, &packed, &mut expanded).unwrap();
    assert_eq!(expanded, image);
    // Fewer than 8 values: no block, the input as is.
    assert_eq!(encode(p, &floats[..30]), &floats[..30]);
    let mut out = vec![0; floats.len()];
    for kernel in kernels() {
        kernel.decode(p, &packed, &mut out).unwrap();
        assert_eq!(out, floats);
        // A plane in both masks, a plane too few, a byte over, cut masks.
        let mut bad = packed.clone();
        bad[4] |= bad[0] | 1;
        bad[0] |= 1;
        assert!(kernel.decode(p, &bad, &mut out).is_err());
        assert!(
            kernel
                .decode(p, &packed[..packed.len() - 1], &mut out)
                .is_err()
        );
        assert!(
            kernel
                .decode(p, &[&packed[..], &[0]].concat(), &mut out)
                .is_err()
        );
        assert!(kernel.decode(p, &packed[..5], &mut out).is_err());
        let err = kernel.decode(p, &[], &mut out).unwrap_err().to_string();
        assert!(
            err.contains("bitplanes:4") && err.contains("masks"),
            "{err}"
        );
    }
}

/// Elements whose first byte is always 0x00 and whose last is always 0x41 (planes left out), the
/// others random, in bitshuffle blocks whole and cut: blocks of whole steps (512 elements for
/// AVX-512, 256 for AVX2), which the SIMD kernels decode from the planes where they lie, and
/// blocks with a remainder, whose groups after the last step they decode one by one from the
/// planes (the Scalar and SSE2 kernels gather the planes first), at every width and on every
/// kernel.
#[test]
fn bitplanes_decode_blocks_of_every_shape_on_every_kernel() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for w in Width::ALL {
        let wb = w.bytes();
        let block = BITSHUFFLE_BLOCK_BYTES / wb;
        for n in [
            8,
            256,
            264,
            512 + 8 * 13,
            768,
            block,
            block + 256,
            2 * block + 8 * 45,
        ] {
            let mut input = Vec::new();
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mut element = x.to_le_bytes();
                element[0] = 0;
                if wb > 1 {
                    element[wb - 1] = 0x41;
                }
                input.extend_from_slice(&element[..wb]);
            }
            input.extend_from_slice(&[5, 6, 7, 8, 9, 10, 11][..wb - 1]);
            assert_packing_roundtrips(
                Precondition::BitPlanes(w),
                &input,
                bitplanes_by_definition,
                &format!("{n} elements"),
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn packing_roundtrips_on_every_kernel_and_matches_the_docs((w, input) in integers()) {
        for p in packing(w) {
            let packed = encode(p, &input);
            let by_definition = match p {
                Precondition::DeltaVarint(_) => varint_by_definition(w.bytes(), &packed, input.len()),
                Precondition::Sparse(_) => sparse_by_definition(w.bytes(), &packed, input.len()),
                Precondition::Runs(_) => runs_by_definition(w.bytes(), &packed, input.len()),
                Precondition::BitPlanes(_) => bitplanes_by_definition(w.bytes(), &packed, input.len()),
                p => unpack_by_definition(w.bytes(), p == Precondition::DeltaFor(w), &packed, input.len()),
            };
            prop_assert_eq!(&by_definition, &input, "{}", p);
            for kernel in kernels() {
                let mut there = Vec::new();
                kernel.encode(p, &input, &mut there);
                prop_assert_eq!(&there, &packed, "{:?} encode {}", kernel.isa(), p);
                let mut back = vec![0xA5; input.len()];
                kernel.decode(p, &packed, &mut back).unwrap();
                prop_assert_eq!(&back, &input, "{:?} decode {}", kernel.isa(), p);
            }
        }
    }

    #[test]
    fn packing_never_panics_on_damaged_input(
        (w, input) in integers(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        for p in packing(w) {
            let mut packed = encode(p, &input);
            if packed.is_empty() {
                continue;
            }
            for (at, byte) in &flips {
                let i = at.index(packed.len());
                packed[i] ^= byte;
            }
            for kernel in kernels() {
                let mut out = vec![0; input.len()];
                let _ = kernel.decode(p, &packed, &mut out);
                let _ = kernel.decode(p, &packed[..cut.index(packed.len())], &mut out);
            }
        }
    }
}

#[test]
fn repeat_writes_the_value_over_every_length() {
    for w in [1, 2, 4, 8] {
        for value in [vec![0u8; w], vec![0xAB; w], (1..=w as u8).collect()] {
            // Past one 64-byte pattern and its remainders, from no value at all.
            for n in 0..=70 {
                let mut out = vec![0x55; n * w];
                repeat(&mut out, &value);
                assert_eq!(
                    out,
                    value.repeat(n),
                    "width {w}, value {value:?}, {n} values"
                );
            }
        }
    }
}
