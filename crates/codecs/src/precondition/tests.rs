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
fn ids_and_specs_roundtrip() {
    for w in Width::ALL {
        for p in [
            Precondition::Shuffle(w),
            Precondition::BitShuffle(w),
            Precondition::Delta(w),
        ] {
            assert_eq!(
                Precondition::from_parts(p.id(), p.width() as u8).unwrap(),
                p
            );
            assert_eq!(p.to_string().parse::<Precondition>().unwrap(), p);
        }
    }
    assert_eq!(Precondition::from_parts(0, 1).unwrap(), Precondition::None);
    assert!(Precondition::from_parts(4, 4).is_err());
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn simd_kernels_equal_the_scalar_oracle(input in data(), w in width()) {
        for p in [Precondition::Shuffle(w), Precondition::BitShuffle(w), Precondition::Delta(w)] {
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
        for p in [Precondition::None, Precondition::Shuffle(w), Precondition::BitShuffle(w), Precondition::Delta(w)] {
            for kernel in kernels() {
                let there = run(kernel, p, &input);
                prop_assert_eq!(&run_undo(kernel, p, &there), &input, "{:?} {}", kernel.isa(), p);
            }
        }
    }
}
