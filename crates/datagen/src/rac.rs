//! The event kinds of Zhang & Bockelman (2017), "Exploring compression techniques for ROOT IO".
//!
//! TFloat: 6 equal floats per event (a 39-byte event in ROOT with its overhead). TSmall: 1,000
//! floats made of runs of 6 equal random values (4 kB). TLarge: 1,000,000 floats built the same way
//! (4 MB).

use super::Rng;

/// Floats per TFloat event.
pub const TFLOAT_LEN: usize = 6;
/// Floats per TSmall event.
pub const TSMALL_LEN: usize = 1_000;
/// Floats per TLarge event.
pub const TLARGE_LEN: usize = 1_000_000;

/// `events` events of `len` floats each, made of runs of 6 equal random values (a run restarts at
/// each event), back to back.
pub fn runs_of_six(events: usize, len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(events * len);
    for _ in 0..events {
        let mut left = len;
        while left > 0 {
            let value = rng.range(-1000.0, 1000.0) as f32;
            let run = left.min(6);
            out.extend(std::iter::repeat_n(value, run));
            left -= run;
        }
    }
    out
}

/// `events` TFloat events.
pub fn tfloat(events: usize, seed: u64) -> Vec<f32> {
    runs_of_six(events, TFLOAT_LEN, seed)
}

/// `events` TSmall events.
pub fn tsmall(events: usize, seed: u64) -> Vec<f32> {
    runs_of_six(events, TSMALL_LEN, seed)
}

/// `events` TLarge events.
pub fn tlarge(events: usize, seed: u64) -> Vec<f32> {
    runs_of_six(events, TLARGE_LEN, seed)
}
