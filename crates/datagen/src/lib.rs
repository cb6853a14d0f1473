//! Deterministic synthetic event data for evtc's tests, benchmarks and `evtc generate`.
//!
//! Every generator takes a seed and returns the same values on every machine and every run (the
//! generator is xoshiro256** with SplitMix64 seeding, written out here so that no dependency update
//! can change the data behind a published benchmark).
//!
//! - [`nano`]: NanoAOD-like particle columns (counts per event; pt, eta, phi, mass per particle) and
//!   a 114-branch NanoAOD-like event table ([`nano::events`]).
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

pub mod nano;

pub mod ints;

pub mod rac;

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

    /// `values` cut by `counts`, event by event.
    fn split<'a, T>(counts: &[u32], values: &'a [T]) -> Vec<&'a [T]> {
        let mut at = 0;
        counts
            .iter()
            .map(|&n| {
                at += n as usize;
                &values[at - n as usize..at]
            })
            .collect()
    }

    /// The NanoAOD-like table of 5,000 events, with typed views of its columns by name.
    struct Table {
        events: usize,
        columns: Vec<nano::Column>,
    }

    impl Table {
        fn new() -> Table {
            let events = 5_000;
            Table {
                events,
                columns: nano::events(events, 11),
            }
        }

        fn find(&self, name: &str) -> &nano::Column {
            self.columns
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("no column {name}"))
        }

        fn counts(&self, name: &str) -> &[u32] {
            match &self.find(name).values {
                nano::Values::U32(v) => v,
                other => panic!("{name} is not a u32 counter: {other:?}"),
            }
        }

        fn ints(&self, name: &str) -> &[i32] {
            match &self.find(name).values {
                nano::Values::I32(v) => v,
                other => panic!("{name} is not i32: {other:?}"),
            }
        }

        fn bools(&self, name: &str) -> &[bool] {
            match &self.find(name).values {
                nano::Values::Bool(v) => v,
                other => panic!("{name} is not bool: {other:?}"),
            }
        }

        fn floats(&self, name: &str) -> &[f32] {
            match &self.find(name).values {
                nano::Values::F32(v) => v,
                other => panic!("{name} is not f32: {other:?}"),
            }
        }

        /// A counted column's values, split by event.
        fn per_event(&self, counter: &str, name: &str) -> Vec<&[i32]> {
            split(self.counts(counter), self.ints(name))
        }
    }

    #[test]
    fn nano_columns_are_deterministic_and_counted() {
        let t = Table::new();
        assert_eq!(t.columns, nano::events(t.events, 11));
        assert_eq!(t.columns.len(), nano::COLUMNS);
        assert!(t.columns.len() >= 100, "{} columns", t.columns.len());
        let mut names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), t.columns.len(), "duplicate names");
        // One value per event, or as many as the counter says; a collection's branches are named
        // after its counter.
        for c in &t.columns {
            let expected = match &c.counter {
                None => t.events,
                Some(counter) => {
                    assert!(
                        c.name.starts_with(&format!("{}_", &counter[1..])),
                        "{}",
                        c.name
                    );
                    t.counts(counter).iter().map(|&n| n as usize).sum()
                }
            };
            assert_eq!(c.values.len(), expected, "{}", c.name);
        }
        assert_eq!(
            t.columns.iter().filter(|c| c.counter.is_some()).count(),
            55,
            "variable-length columns"
        );
    }

    #[test]
    fn nano_indices_point_into_their_event_and_pairs_name_each_other() {
        let t = Table::new();
        // Indices: into the other collection of the same event, or -1.
        for (name, counter, target) in [
            ("Jet_muonIdx1", "nJet", "nMuon"),
            ("Jet_muonIdx2", "nJet", "nMuon"),
            ("Jet_electronIdx1", "nJet", "nElectron"),
            ("Muon_jetIdx", "nMuon", "nJet"),
            ("Electron_jetIdx", "nElectron", "nJet"),
            ("Electron_photonIdx", "nElectron", "nPhoton"),
            ("Photon_electronIdx", "nPhoton", "nElectron"),
            ("Tau_jetIdx", "nTau", "nJet"),
        ] {
            assert_eq!(t.find(name).counter.as_deref(), Some(counter), "{name}");
            let mut linked = 0;
            for (e, values) in t.per_event(counter, name).iter().enumerate() {
                let n = t.counts(target)[e] as i32;
                for &i in *values {
                    assert!(
                        i == -1 || (0..n).contains(&i),
                        "{name}[event {e}] = {i}, {target} = {n}"
                    );
                    linked += usize::from(i >= 0);
                }
            }
            assert!(linked > 100, "{name}: only {linked} links");
        }
        // Both sides of a pair name each other.
        let jet_muon = [
            t.per_event("nJet", "Jet_muonIdx1"),
            t.per_event("nJet", "Jet_muonIdx2"),
        ];
        let jet_electron = t.per_event("nJet", "Jet_electronIdx1");
        let muon_jet = t.per_event("nMuon", "Muon_jetIdx");
        let electron_jet = t.per_event("nElectron", "Electron_jetIdx");
        let electron_photon = t.per_event("nElectron", "Electron_photonIdx");
        let photon_electron = t.per_event("nPhoton", "Photon_electronIdx");
        let tau_jet = t.per_event("nTau", "Tau_jetIdx");
        let pointing = |from: &[i32], to: usize| -> Vec<i32> {
            (0..from.len() as i32)
                .filter(|&i| from[i as usize] == to as i32)
                .collect()
        };
        for e in 0..t.events {
            for j in 0..jet_muon[0][e].len() {
                let listed: Vec<i32> = [jet_muon[0][e][j], jet_muon[1][e][j]]
                    .into_iter()
                    .filter(|&m| m >= 0)
                    .collect();
                assert!(jet_muon[0][e][j] >= 0 || jet_muon[1][e][j] < 0, "event {e}");
                assert_eq!(listed, pointing(muon_jet[e], j), "event {e}, jet {j}");
                let electrons = pointing(electron_jet[e], j);
                assert_eq!(jet_electron[e][j], electrons.first().copied().unwrap_or(-1));
                assert!(electrons.len() <= 1);
            }
            for (x, &p) in electron_photon[e].iter().enumerate() {
                let photons = pointing(photon_electron[e], x);
                assert_eq!(p, photons.first().copied().unwrap_or(-1), "event {e}");
                assert!(photons.len() <= 1);
            }
            let mut taus: Vec<i32> = tau_jet[e].iter().copied().filter(|&j| j >= 0).collect();
            taus.sort_unstable();
            assert!(taus.windows(2).all(|w| w[0] < w[1]), "one tau per jet");
        }
    }

    #[test]
    fn nano_ids_are_in_nanoaods_ranges() {
        let t = Table::new();
        let within = |name: &str, allowed: &[i32]| {
            assert!(
                t.ints(name).iter().all(|v| allowed.contains(v)),
                "{name} outside {allowed:?}"
            );
            for &v in allowed {
                assert!(t.ints(name).contains(&v), "{name} never {v}");
            }
        };
        within("Jet_jetId", &[2, 6]);
        within("Jet_hadronFlavour", &[0, 4, 5]);
        within("Jet_puId", &[0, 4, 6, 7]);
        within("Muon_nStations", &[0, 1, 2, 3, 4]);
        within("Electron_cutBased", &[0, 1, 2, 3, 4]);
        within("Photon_cutBased", &[0, 1, 2, 3]);
        within("Tau_decayMode", &[0, 1, 2, 10, 11]);
        within("Muon_charge", &[-1, 1]);
        assert!(
            t.ints("Muon_nTrackerLayers")
                .iter()
                .all(|n| (6..=18).contains(n))
        );
        for (&h, &p) in t
            .ints("Jet_hadronFlavour")
            .iter()
            .zip(t.ints("Jet_partonFlavour"))
        {
            assert!(h == 0 || p.abs() == h, "hadron {h}, parton {p}");
            assert!([0, 1, 2, 3, 4, 5, 21].contains(&p.abs()), "parton {p}");
        }
        match &t.find("Jet_nConstituents").values {
            nano::Values::U8(v) => assert!(v.iter().all(|&n| n >= 5)),
            other => panic!("Jet_nConstituents: {other:?}"),
        }
        match &t.find("Tau_idDeepTau2017v2p1VSjet").values {
            nano::Values::U8(v) => {
                assert!(v.iter().all(|&m| (u16::from(m) + 1).is_power_of_two()));
            }
            other => panic!("Tau_idDeepTau2017v2p1VSjet: {other:?}"),
        }
    }

    #[test]
    fn nano_flags_and_event_values_follow_the_particles() {
        let t = Table::new();
        // Flags: tight and medium muons are loose; the MET filters include good vertices.
        let implies = |a: &[bool], b: &[bool]| a.iter().zip(b).all(|(&x, &y)| !x || y);
        let loose = t.bools("Muon_looseId");
        assert!(implies(t.bools("Muon_tightId"), loose));
        assert!(implies(t.bools("Muon_mediumId"), loose));
        let good = t.bools("Flag_goodVertices");
        assert!(implies(t.bools("Flag_METFilters"), good));
        assert!(good.iter().filter(|&&g| g).count() > t.events * 9 / 10);
        // Event-level values follow the particles.
        let leading = split(t.counts("nMuon"), t.floats("Muon_pt"));
        for (e, &fired) in t.bools("HLT_IsoMu24").iter().enumerate() {
            assert_eq!(fired, leading[e].first().is_some_and(|&pt| pt > 24.0));
        }
        assert!(
            t.floats("MET_sumEt")
                .iter()
                .zip(t.floats("MET_pt"))
                .all(|(s, m)| s >= m)
        );
        assert!(
            t.floats("Jet_qgl")
                .iter()
                .all(|&q| q == -1.0 || (0.0..=1.0).contains(&q))
        );
        // NanoAOD's reduced mantissas: 10 bits for these.
        for name in ["Jet_area", "Muon_dxy", "Electron_sieie"] {
            assert!(
                t.floats(name)
                    .iter()
                    .all(|x| x.to_bits() & ((1 << 13) - 1) == 0),
                "{name}"
            );
        }
    }

    #[test]
    fn mantissa_rounding() {
        assert_eq!(round_mantissa(1.0, 10), 1.0);
        let x = round_mantissa(1.234_567_9, 10);
        assert_eq!(x.to_bits() & ((1 << 13) - 1), 0);
        assert!((x - 1.234_567_9).abs() < 1e-3);
    }
}
