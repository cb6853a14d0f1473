//! Integer columns: sorted positions, per-entry counts and the offsets built from them.

use super::Rng;

/// `n` sorted positive 32-bit positions with gaps drawn from a heavy-tailed distribution, like
/// read positions along a genome or hit addresses along a detector.
pub fn sorted_positions(n: usize, seed: u64) -> Vec<i32> {
    let mut rng = Rng::new(seed);
    let mut at = 1_000i64;
    (0..n)
        .map(|_| {
            let gap = if rng.below(20) == 0 {
                rng.below(5_000)
            } else {
                rng.below(40)
            };
            at = (at + gap as i64).min(i64::from(i32::MAX));
            at as i32
        })
        .collect()
}

/// Per-entry element counts, Poisson with mean `mean` (the `nMuon` of a jagged branch).
pub fn poisson_counts(n: usize, mean: f64, seed: u64) -> Vec<u32> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.poisson(mean)).collect()
}

/// Arrow-style offsets for `counts`: `counts.len() + 1` values starting at 0, each the running sum.
pub fn offsets(counts: &[u32]) -> Vec<i64> {
    let mut offsets = Vec::with_capacity(counts.len() + 1);
    let mut at = 0i64;
    offsets.push(at);
    for &c in counts {
        at += i64::from(c);
        offsets.push(at);
    }
    offsets
}

/// ROOT-style per-entry byte offsets of a basket of 4-byte values: entry `i` starts at
/// `key_len + 4 * (counts[0] + ... + counts[i-1])`, as `TBasket::fEntryOffset` stores them.
pub fn root_entry_offsets(counts: &[u32], key_len: i32) -> Vec<i32> {
    let mut at = key_len;
    counts
        .iter()
        .map(|&c| {
            let start = at;
            at = at.saturating_add(4 * c as i32);
            start
        })
        .collect()
}
