//! The `balanced` goal over a whole file: the fastest read whose size stays below the file
//! written uniformly with evtc's default codec.

use evtc_codecs::Codec;

use super::{Outcome, TreeAdvice, reference};

/// The share of the default codec's file size the balanced file may take at most.
pub(super) const SIZE_BUDGET: f64 = 0.99;

/// Per tree and branch, the outcome the balanced goal picks: each branch's outcome that
/// minimizes its read time plus a price per stored byte, at the lowest price at which the
/// file's total is at most [`SIZE_BUDGET`] of its total under the default codec's references
/// (a Lagrangian relaxation of "the fastest read of a file no larger than that": fast codecs
/// where the data do not compress, strong ones where they do). `None` when a branch has no
/// reference under the default codec, or no price meets the budget: then each branch is
/// picked on its own ([`Goal::pick`](super::Goal::pick)).
pub(super) fn choices(trees: &[TreeAdvice]) -> Option<Vec<Vec<Option<usize>>>> {
    let branches = || trees.iter().flat_map(|t| &t.branches);
    let mut budget = 0.0;
    for b in branches().filter(|b| !b.outcomes.is_empty()) {
        budget += reference(&b.outcomes, Codec::DEFAULT)?.stored_bytes as f64;
    }
    budget *= SIZE_BUDGET;
    let pick = |price: f64| -> (Vec<Vec<Option<usize>>>, f64) {
        let mut total = 0.0;
        let picks = trees
            .iter()
            .map(|t| {
                t.branches
                    .iter()
                    .map(|b| {
                        let i = cheapest(&b.outcomes, price)?;
                        total += b.outcomes[i].stored_bytes as f64;
                        Some(i)
                    })
                    .collect()
            })
            .collect();
        (picks, total)
    };
    let (fastest, total) = pick(0.0);
    if total <= budget {
        return Some(fastest);
    }
    // A price high enough that bytes decide, then bisection on it.
    let mut high = 1e-12;
    while pick(high).1 > budget {
        high *= 4.0;
        if high > 1e3 {
            return None;
        }
    }
    let mut low = high / 4.0;
    for _ in 0..60 {
        let middle = (low + high) / 2.0;
        if pick(middle).1 <= budget {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(pick(high).0)
}

/// The outcome of least read time plus `price` per stored byte (never one stored as is);
/// among equals, fewer bytes.
fn cheapest(outcomes: &[Outcome], price: f64) -> Option<usize> {
    outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| !o.stored_as_is)
        .min_by(|(_, a), (_, b)| {
            let cost = |o: &Outcome| o.read_seconds + price * o.stored_bytes as f64;
            cost(a)
                .total_cmp(&cost(b))
                .then(a.stored_bytes.cmp(&b.stored_bytes))
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use evtc_codecs::{Algorithm, Precondition};

    use super::*;
    use crate::advise::BranchAdvice;

    fn outcome(codec: Codec, bytes: u64, seconds: f64) -> Outcome {
        Outcome {
            setting: codec.to_string(),
            codec,
            precondition: Precondition::None,
            rac: false,
            mantissa_bits: None,
            stored_bytes: bytes,
            ratio: 1.0,
            compress_mb_per_s: 1.0,
            decompress_mb_per_s: 1.0,
            read_seconds: seconds,
            entry_read_us: None,
            stored_as_is: false,
        }
    }

    fn branch(outcomes: Vec<Outcome>) -> BranchAdvice {
        BranchAdvice {
            name: "b".into(),
            dtype: "f32".into(),
            raw_bytes: 0,
            sample_bytes: 0,
            outcomes,
            current: None,
            boundaries: None,
            lossy_max_error: None,
        }
    }

    #[test]
    fn the_fastest_file_within_the_budget_takes_fast_codecs_where_bytes_are_cheap() {
        let lzma = Codec::new(Algorithm::Lzma, 9).unwrap();
        let trees = vec![TreeAdvice {
            name: "T".into(),
            entries: 1,
            sampled_entries: 1,
            branches: vec![
                // Compresses no better under zstd:5 than under lz4: lz4 it is.
                branch(vec![
                    outcome(Codec::DEFAULT, 100, 10.0),
                    outcome(Codec::LZ4, 105, 2.0),
                ]),
                // Compresses: its bytes pay for the first branch's speed.
                branch(vec![
                    outcome(Codec::DEFAULT, 100, 10.0),
                    outcome(lzma, 60, 50.0),
                    outcome(Codec::LZ4, 150, 2.0),
                ]),
            ],
        }];
        // Budget 198 bytes: lz4 + lzma (165 bytes, 52 s) beats zstd:5 + lzma (160, 60 s).
        assert_eq!(choices(&trees), Some(vec![vec![Some(1), Some(1)]]));
        // Without a zstd:5 reference the file-wide rule does not apply.
        let mut without = trees.clone();
        without[0].branches[0].outcomes.remove(0);
        assert_eq!(choices(&without), None);
    }
}
