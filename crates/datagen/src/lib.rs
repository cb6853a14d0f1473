//! Deterministic synthetic event data for evtc's tests, benchmarks and `evtc generate`.
//!
//! Every generator takes a seed and returns the same values on every machine and every run (the
//! generator is xoshiro256** with SplitMix64 seeding, written out here so that no dependency update
//! can change the data behind a published benchmark).
//!
//! - [`nano`]: NanoAOD-like particle columns (counts per event; pt, eta, phi, mass per particle).
//! - [`ints`]: sorted positive 32-bit integers ("genomic positions"), counts and offsets.
//! - [`rac`]: the three event kinds of the 2017 random-access-compression study (TFloat, TSmall,
//!   TLarge).
//!
//! ```
//! let muons = evtc_datagen::nano::muons(1_000, 7);
//! assert_eq!(muons.counts.len(), 1_000);
//! assert_eq!(muons.pt.len(), muons.counts.iter().map(|&n| n as usize).sum::<usize>());
//! assert_eq!(evtc_datagen::nano::muons(1_000, 7), muons); // deterministic
//! ```
#![deny(missing_docs)]

/// A small, fast, deterministic PRNG (xoshiro256**).
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded from `seed` through SplitMix64.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in `[0, n)` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Poisson with mean `lambda` (Knuth's method; fine for the small means of particle counts).
    pub fn poisson(&mut self, lambda: f64) -> u32 {
        let limit = (-lambda).exp();
        let mut k = 0;
        let mut p = self.uniform();
        while p > limit {
            k += 1;
            p *= self.uniform();
        }
        k
    }
}

/// Rounds `x` to `bits` explicit mantissa bits, as NanoAOD stores many of its float columns.
pub fn round_mantissa(x: f32, bits: u32) -> f32 {
    if bits >= 23 {
        return x;
    }
    let drop = 23 - bits;
    let raw = x.to_bits();
    let half = 1u32 << (drop - 1);
    f32::from_bits(raw.wrapping_add(half) & !((1u32 << drop) - 1))
}

/// Little-endian bytes of a slice of numbers, the layout every evtc column uses.
pub fn le_bytes<T: LeBytes>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(values));
    for v in values {
        v.extend_le(&mut out);
    }
    out
}

/// Numbers that [`le_bytes`] can serialize.
pub trait LeBytes: Copy {
    /// Appends the little-endian bytes of `self` to `out`.
    fn extend_le(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes_impl {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            fn extend_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes_impl!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

pub mod nano {
    //! NanoAOD-like particle collections.
    //!
    //! A collection has a count per event (Poisson) and, per particle, pt (exponential around a
    //! collection-specific scale), eta (normal, cut to the detector acceptance), phi (uniform) and
    //! mass. Like NanoAOD, eta and phi are stored with 12 mantissa bits and mass with 10; pt keeps full
    //! precision.

    use super::{Rng, round_mantissa};

    /// One particle collection: `counts[i]` particles in event `i`, their properties back to back.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Particles {
        /// Particles per event (`nMuon`).
        pub counts: Vec<u32>,
        /// Transverse momentum in GeV (`Muon_pt`).
        pub pt: Vec<f32>,
        /// Pseudorapidity (`Muon_eta`).
        pub eta: Vec<f32>,
        /// Azimuth in radians (`Muon_phi`).
        pub phi: Vec<f32>,
        /// Mass in GeV (`Muon_mass`).
        pub mass: Vec<f32>,
    }

    /// The shape of one collection.
    #[derive(Debug, Clone, Copy)]
    pub struct Kind {
        /// Mean particles per event.
        pub mean_count: f64,
        /// Mean pt above the threshold, GeV.
        pub pt_scale: f64,
        /// Minimum pt, GeV.
        pub pt_min: f64,
        /// |eta| acceptance.
        pub eta_max: f64,
        /// Mass: fixed (`spread == 0`) or exponential around `mass`.
        pub mass: f64,
        /// Relative spread of the mass.
        pub spread: f64,
    }

    /// Muons: few per event, fixed mass.
    pub const MUON: Kind = Kind {
        mean_count: 1.4,
        pt_scale: 18.0,
        pt_min: 3.0,
        eta_max: 2.4,
        mass: 0.105_658,
        spread: 0.0,
    };
    /// Electrons: few per event, fixed mass.
    pub const ELECTRON: Kind = Kind {
        mean_count: 1.1,
        pt_scale: 15.0,
        pt_min: 5.0,
        eta_max: 2.5,
        mass: 0.000_511,
        spread: 0.0,
    };
    /// Jets: several per event, varying mass.
    pub const JET: Kind = Kind {
        mean_count: 4.5,
        pt_scale: 30.0,
        pt_min: 15.0,
        eta_max: 4.7,
        mass: 8.0,
        spread: 1.0,
    };
    /// Photons.
    pub const PHOTON: Kind = Kind {
        mean_count: 0.9,
        pt_scale: 12.0,
        pt_min: 5.0,
        eta_max: 2.5,
        mass: 0.0,
        spread: 0.0,
    };
    /// Hadronic taus.
    pub const TAU: Kind = Kind {
        mean_count: 0.7,
        pt_scale: 20.0,
        pt_min: 18.0,
        eta_max: 2.3,
        mass: 1.2,
        spread: 0.3,
    };

    /// Generates `events` events of a collection.
    pub fn particles(kind: Kind, events: usize, seed: u64) -> Particles {
        let mut rng = Rng::new(seed);
        let counts: Vec<u32> = (0..events).map(|_| rng.poisson(kind.mean_count)).collect();
        let total: usize = counts.iter().map(|&n| n as usize).sum();
        let mut p = Particles {
            counts,
            pt: Vec::with_capacity(total),
            eta: Vec::with_capacity(total),
            phi: Vec::with_capacity(total),
            mass: Vec::with_capacity(total),
        };
        for &n in &p.counts {
            // Particles are sorted by decreasing pt within an event, as in NanoAOD.
            let start = p.pt.len();
            for _ in 0..n {
                p.pt.push((kind.pt_min + rng.exponential(kind.pt_scale)) as f32);
            }
            p.pt[start..].sort_by(|a, b| b.total_cmp(a));
            for _ in 0..n {
                let eta = (rng.normal() * kind.eta_max / 2.0).clamp(-kind.eta_max, kind.eta_max);
                p.eta.push(round_mantissa(eta as f32, 12));
                p.phi.push(round_mantissa(
                    rng.range(-std::f64::consts::PI, std::f64::consts::PI) as f32,
                    12,
                ));
                let mass = if kind.spread == 0.0 {
                    kind.mass
                } else {
                    rng.exponential(kind.mass * kind.spread)
                };
                p.mass.push(round_mantissa(mass as f32, 10));
            }
        }
        p
    }

    /// Muons for `events` events.
    pub fn muons(events: usize, seed: u64) -> Particles {
        particles(MUON, events, seed)
    }

    /// Jets for `events` events.
    pub fn jets(events: usize, seed: u64) -> Particles {
        particles(JET, events, seed)
    }

    /// The values of one column of a generated event table.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Values {
        /// Booleans (trigger bits, ids).
        Bool(Vec<bool>),
        /// Signed 32-bit integers.
        I32(Vec<i32>),
        /// Unsigned 32-bit integers (counters, run numbers).
        U32(Vec<u32>),
        /// Unsigned 64-bit integers (event numbers).
        U64(Vec<u64>),
        /// Floats.
        F32(Vec<f32>),
    }

    impl Values {
        /// Number of values.
        pub fn len(&self) -> usize {
            match self {
                Values::Bool(v) => v.len(),
                Values::I32(v) => v.len(),
                Values::U32(v) => v.len(),
                Values::U64(v) => v.len(),
                Values::F32(v) => v.len(),
            }
        }

        /// Whether there are no values.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }

        /// Bytes per value.
        pub fn value_size(&self) -> usize {
            match self {
                Values::Bool(_) => 1,
                Values::I32(_) | Values::U32(_) | Values::F32(_) => 4,
                Values::U64(_) => 8,
            }
        }
    }

    /// One column of a generated event table. With a `counter`, entry `i` holds `counter[i]` values
    /// (a NanoAOD collection branch such as `Jet_pt[nJet]`); without, one value per entry.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Column {
        /// Branch name, NanoAOD style.
        pub name: String,
        /// Name of the counter column of a collection branch.
        pub counter: Option<String>,
        /// The values, back to back.
        pub values: Values,
    }

    /// Number of trigger-bit columns in [`events`].
    pub const TRIGGERS: usize = 40;

    /// A NanoAOD-like event table of `events` events: event identifiers, 5 collections (Jet, Muon,
    /// Electron, Photon, Tau) with their counters and 24 variable-length branches, 8 event-level
    /// floats and integers, and 40 boolean trigger bits (`HLT_*`, each true in a few percent of
    /// events). 77 columns in all.
    pub fn events(events: usize, seed: u64) -> Vec<Column> {
        let mut rng = Rng::new(seed);
        let mut columns = Vec::new();
        let scalar = |name: &str, values: Values| Column {
            name: name.into(),
            counter: None,
            values,
        };
        let jagged = |name: &str, counter: &str, values: Values| Column {
            name: name.into(),
            counter: Some(counter.into()),
            values,
        };
        columns.push(scalar("run", Values::U32(vec![1; events])));
        columns.push(scalar(
            "luminosityBlock",
            Values::U32((0..events).map(|e| 1 + (e / 2000) as u32).collect()),
        ));
        columns.push(scalar(
            "event",
            Values::U64((0..events).map(|e| 1_000_000 + 3 * e as u64).collect()),
        ));
        let collections: [(&str, Kind, u64); 5] = [
            ("Jet", JET, 1),
            ("Muon", MUON, 2),
            ("Electron", ELECTRON, 3),
            ("Photon", PHOTON, 4),
            ("Tau", TAU, 5),
        ];
        for (name, kind, salt) in collections {
            let p = particles(kind, events, seed.wrapping_mul(31).wrapping_add(salt));
            let counter = format!("n{name}");
            let total = p.pt.len();
            columns.push(scalar(&counter, Values::U32(p.counts.clone())));
            columns.push(jagged(&format!("{name}_pt"), &counter, Values::F32(p.pt)));
            columns.push(jagged(&format!("{name}_eta"), &counter, Values::F32(p.eta)));
            columns.push(jagged(&format!("{name}_phi"), &counter, Values::F32(p.phi)));
            match name {
                "Jet" => {
                    columns.push(jagged("Jet_mass", &counter, Values::F32(p.mass)));
                    let btag = (0..total)
                        .map(|_| round_mantissa(rng.uniform() as f32, 10))
                        .collect();
                    columns.push(jagged("Jet_btagDeepFlavB", &counter, Values::F32(btag)));
                    let id = (0..total)
                        .map(|_| if rng.below(10) < 8 { 6 } else { 2 })
                        .collect();
                    columns.push(jagged("Jet_jetId", &counter, Values::I32(id)));
                }
                "Muon" | "Electron" => {
                    columns.push(jagged(
                        &format!("{name}_mass"),
                        &counter,
                        Values::F32(p.mass),
                    ));
                    let charge = (0..total)
                        .map(|_| if rng.below(2) == 0 { -1 } else { 1 })
                        .collect();
                    columns.push(jagged(
                        &format!("{name}_charge"),
                        &counter,
                        Values::I32(charge),
                    ));
                    if name == "Muon" {
                        let iso = (0..total)
                            .map(|_| round_mantissa(rng.exponential(0.1) as f32, 8))
                            .collect();
                        columns.push(jagged("Muon_pfRelIso04_all", &counter, Values::F32(iso)));
                        let tight = (0..total).map(|_| rng.below(10) < 7).collect();
                        columns.push(jagged("Muon_tightId", &counter, Values::Bool(tight)));
                    }
                }
                _ => {}
            }
        }
        let met = (0..events).map(|_| rng.exponential(30.0) as f32).collect();
        columns.push(scalar("MET_pt", Values::F32(met)));
        let phi = (0..events)
            .map(|_| {
                round_mantissa(
                    rng.range(-std::f64::consts::PI, std::f64::consts::PI) as f32,
                    12,
                )
            })
            .collect();
        columns.push(scalar("MET_phi", Values::F32(phi)));
        columns.push(scalar(
            "PV_npvs",
            Values::I32((0..events).map(|_| rng.poisson(30.0) as i32).collect()),
        ));
        columns.push(scalar(
            "PV_z",
            Values::F32(
                (0..events)
                    .map(|_| round_mantissa((rng.normal() * 3.5) as f32, 10))
                    .collect(),
            ),
        ));
        columns.push(scalar(
            "fixedGridRhoFastjetAll",
            Values::F32((0..events).map(|_| rng.range(5.0, 40.0) as f32).collect()),
        ));
        for t in 0..TRIGGERS {
            let rate = 1 + (t as u64 * 7) % 13;
            let bits = (0..events).map(|_| rng.below(100) < rate).collect();
            columns.push(scalar(&format!("HLT_path{t:02}"), Values::Bool(bits)));
        }
        columns
    }
}

pub mod ints {
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
}

pub mod rac {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_shaped() {
        assert_eq!(Rng::new(1).next_u64(), Rng::new(1).next_u64());
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());

        let jets = nano::jets(10_000, 3);
        let mean = jets.counts.iter().sum::<u32>() as f64 / 10_000.0;
        assert!((4.3..4.7).contains(&mean), "mean jets {mean}");
        assert!(jets.pt.iter().all(|&pt| pt >= 15.0));
        assert!(jets.eta.iter().all(|&eta| eta.abs() <= 4.71)); // 12-bit rounding can step past the cut

        let positions = ints::sorted_positions(10_000, 1);
        assert!(positions.windows(2).all(|w| w[0] <= w[1]) && positions[0] > 0);

        let counts = ints::poisson_counts(100, 2.0, 9);
        let offsets = ints::offsets(&counts);
        assert_eq!(offsets.len(), 101);
        assert_eq!(
            *offsets.last().unwrap(),
            counts.iter().map(|&c| i64::from(c)).sum::<i64>()
        );

        let small = rac::tsmall(3, 5);
        assert_eq!(small.len(), 3_000);
        assert!(small[..6].iter().all(|&v| v == small[0]) && small[6] != small[0]);
        assert!(
            rac::tfloat(2, 5)[..6]
                .iter()
                .all(|&v| v == rac::tfloat(2, 5)[0])
        );
    }

    #[test]
    fn mantissa_rounding() {
        assert_eq!(round_mantissa(1.0, 10), 1.0);
        let x = round_mantissa(1.234_567_9, 10);
        assert_eq!(x.to_bits() & ((1 << 13) - 1), 0);
        assert!((x - 1.234_567_9).abs() < 1e-3);
    }
}
