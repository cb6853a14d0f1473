//! NanoAOD-like particle collections.
//!
//! A collection has a count per event (Poisson) and, per particle, pt (exponential around a
//! collection-specific scale), eta (normal, cut to the detector acceptance), phi (uniform) and
//! mass. Like NanoAOD, eta and phi are stored with 12 mantissa bits and mass with 10; pt keeps full
//! precision. [`events`] builds a whole NanoAOD-like event table on them: the five collections
//! with their ids, flags and cross-collection indices, event-level values and trigger bits.

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
    /// Booleans (trigger bits, ids, filter flags).
    Bool(Vec<bool>),
    /// Unsigned bytes (NanoAOD's `UChar_t` counts and working-point bit masks).
    U8(Vec<u8>),
    /// Signed 32-bit integers (ids, charges, indices into other collections).
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
            Values::U8(v) => v.len(),
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
            Values::Bool(_) | Values::U8(_) => 1,
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

/// Number of trigger-bit columns `HLT_path00` .. `HLT_path39` in [`events`] (besides
/// `HLT_IsoMu24`).
pub const TRIGGERS: usize = 40;

/// Number of columns of [`events`].
pub const COLUMNS: usize = 114;

/// One of `choices`, drawn with the given weights.
fn pick<T: Copy>(rng: &mut Rng, choices: &[(T, u64)]) -> T {
    let mut at = rng.below(choices.iter().map(|c| c.1).sum());
    for &(value, weight) in choices {
        if at < weight {
            return value;
        }
        at -= weight;
    }
    choices[choices.len() - 1].0
}

/// The values of each event: `values` cut by `counts`.
fn per_event<'a, T>(counts: &'a [u32], values: &'a [T]) -> impl Iterator<Item = &'a [T]> + 'a {
    let mut at = 0;
    counts.iter().map(move |&n| {
        let event = &values[at..at + n as usize];
        at += n as usize;
        event
    })
}

/// NanoAOD's cross references between the collections of an event: per particle, the index of
/// its partner in the other collection of the same event, or -1. Both sides of a pair name each
/// other.
struct Links {
    /// `Jet_muonIdx1`, `Jet_muonIdx2`.
    jet_muon: [Vec<i32>; 2],
    /// `Jet_electronIdx1`.
    jet_electron: Vec<i32>,
    /// `Muon_jetIdx`.
    muon_jet: Vec<i32>,
    /// `Electron_jetIdx`.
    electron_jet: Vec<i32>,
    /// `Electron_photonIdx`.
    electron_photon: Vec<i32>,
    /// `Photon_electronIdx`.
    photon_electron: Vec<i32>,
    /// `Tau_jetIdx` (a jet has no tau index, as in NanoAOD).
    tau_jet: Vec<i32>,
}

impl Links {
    /// Pairs, event by event: a muon with a random jet of the event 40% of the time (a jet
    /// lists at most two muons), an electron with a jet 30% (at most one per jet), a photon
    /// with an electron 25% (one to one), a tau with a jet 90% (one tau per jet). A draw that
    /// lands on a full jet or a paired electron leaves the particle unpaired.
    fn new(counts: [&[u32]; 5], rng: &mut Rng) -> Links {
        let [jets, muons, electrons, photons, taus] = counts;
        let mut l = Links {
            jet_muon: [Vec::new(), Vec::new()],
            jet_electron: Vec::new(),
            muon_jet: Vec::new(),
            electron_jet: Vec::new(),
            electron_photon: Vec::new(),
            photon_electron: Vec::new(),
            tau_jet: Vec::new(),
        };
        for e in 0..jets.len() {
            let nj = u64::from(jets[e]);
            let jet0 = l.jet_electron.len();
            let jets_end = jet0 + nj as usize;
            l.jet_muon[0].resize(jets_end, -1);
            l.jet_muon[1].resize(jets_end, -1);
            l.jet_electron.resize(jets_end, -1);
            for m in 0..muons[e] as i32 {
                let mut jet = -1;
                if nj > 0 && rng.below(10) < 4 {
                    let j = rng.below(nj) as usize;
                    if let Some(slot) = l.jet_muon.iter_mut().find(|s| s[jet0 + j] < 0) {
                        slot[jet0 + j] = m;
                        jet = j as i32;
                    }
                }
                l.muon_jet.push(jet);
            }
            for x in 0..electrons[e] as i32 {
                let mut jet = -1;
                if nj > 0 && rng.below(10) < 3 {
                    let j = rng.below(nj) as usize;
                    if l.jet_electron[jet0 + j] < 0 {
                        l.jet_electron[jet0 + j] = x;
                        jet = j as i32;
                    }
                }
                l.electron_jet.push(jet);
            }
            let ne = u64::from(electrons[e]);
            let el0 = l.electron_photon.len();
            l.electron_photon.resize(el0 + ne as usize, -1);
            for p in 0..photons[e] as i32 {
                let mut electron = -1;
                if ne > 0 && rng.below(4) == 0 {
                    let x = rng.below(ne) as usize;
                    if l.electron_photon[el0 + x] < 0 {
                        l.electron_photon[el0 + x] = p;
                        electron = x as i32;
                    }
                }
                l.photon_electron.push(electron);
            }
            let tau0 = l.tau_jet.len();
            for _ in 0..taus[e] {
                let mut jet = -1;
                if nj > 0 && rng.below(10) < 9 {
                    let j = rng.below(nj) as i32;
                    if !l.tau_jet[tau0..].contains(&j) {
                        jet = j;
                    }
                }
                l.tau_jet.push(jet);
            }
        }
        l
    }
}

/// A NanoAOD-like event table of `events` events, [`COLUMNS`] (114) columns:
///
/// - event identifiers `run`, `luminosityBlock`, `event`;
/// - 5 collections, each a `u32` counter (`nJet`) and its variable-length branches: Jet (15),
///   Muon (15), Electron (13), Photon (6), Tau (6). Besides the kinematics (pt, eta, phi, mass),
///   NanoAOD's many small members: ids and working points (`Jet_jetId`, `Jet_puId` in
///   {0, 4, 6, 7}, `Jet_hadronFlavour` in {0, 4, 5}, `Jet_partonFlavour`, `Muon_nStations`,
///   `Electron_cutBased` 0..=4, `Tau_decayMode` in {0, 1, 2, 10, 11}), `u8` members
///   (`Jet_nConstituents`, the bit mask `Tau_idDeepTau2017v2p1VSjet`), boolean ids and flags
///   (`Muon_looseId` ⊇ `Muon_tightId`, `Electron_convVeto`, `Photon_pixelSeed`), reduced-mantissa
///   floats (`Jet_area`, `Jet_qgl`, `Muon_dxy`, `Electron_sieie`) and the indices that link the
///   collections (`Jet_muonIdx1`, `Jet_muonIdx2`, `Jet_electronIdx1`, `Muon_jetIdx`,
///   `Electron_jetIdx`, `Electron_photonIdx`, `Photon_electronIdx`, `Tau_jetIdx`): each an index
///   into the other collection of the same event or -1, both sides of a pair naming each other;
/// - 8 event-level floats and integers (`MET_*`, `PV_*`, `fixedGridRhoFastjetAll`) and 2
///   boolean filter flags (`Flag_goodVertices`, `Flag_METFilters`);
/// - 41 trigger bits: `HLT_IsoMu24` (a muon above 24 GeV) and `HLT_path00` .. `HLT_path39`, each
///   true in a few percent of events.
///
/// The 77 columns of earlier versions keep their values (the columns added since draw from a
/// random stream of their own), so files and results made with them stay comparable.
pub fn events(events: usize, seed: u64) -> Vec<Column> {
    let mut rng = Rng::new(seed);
    let mut more = Rng::new(seed ^ 0x6E61_6E6F_2D31_3134);
    let mut columns = Vec::with_capacity(COLUMNS);
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
    let all = collections
        .map(|(_, kind, salt)| particles(kind, events, seed.wrapping_mul(31).wrapping_add(salt)));
    let mut links = Links::new(all.each_ref().map(|p| &p.counts[..]), &mut more);
    // Scalar sum of the particles' pt (for MET_sumEt) and the single-muon trigger.
    let mut visible = vec![0.0f64; events];
    for p in &all {
        for (sum, pts) in visible.iter_mut().zip(per_event(&p.counts, &p.pt)) {
            *sum += pts.iter().map(|&pt| f64::from(pt)).sum::<f64>();
        }
    }
    let iso_mu24: Vec<bool> = per_event(&all[1].counts, &all[1].pt)
        .map(|pts| pts.first().is_some_and(|&pt| pt > 24.0))
        .collect();
    for ((name, _, _), p) in collections.into_iter().zip(all) {
        let counter = format!("n{name}");
        let total = p.pt.len();
        columns.push(scalar(&counter, Values::U32(p.counts)));
        columns.push(jagged(
            &format!("{name}_pt"),
            &counter,
            Values::F32(p.pt.clone()),
        ));
        columns.push(jagged(
            &format!("{name}_eta"),
            &counter,
            Values::F32(p.eta.clone()),
        ));
        columns.push(jagged(&format!("{name}_phi"), &counter, Values::F32(p.phi)));
        let kinematics = Members {
            mass: p.mass,
            pt: &p.pt,
            eta: &p.eta,
            total,
        };
        let members = match name {
            "Jet" => jet_members(kinematics, &mut rng, &mut more, &mut links),
            "Muon" => muon_members(kinematics, &mut rng, &mut more, &mut links),
            "Electron" => electron_members(kinematics, &mut rng, &mut more, &mut links),
            "Photon" => photon_members(kinematics, &mut more, &mut links),
            _ => tau_members(kinematics, &mut more, &mut links),
        };
        for (member, values) in members {
            columns.push(jagged(&format!("{name}_{member}"), &counter, values));
        }
    }
    columns.extend(event_columns(
        events, &visible, iso_mu24, &mut rng, &mut more,
    ));
    debug_assert_eq!(columns.len(), COLUMNS);
    columns
}

/// The event-level columns after the collections: missing transverse momentum, primary vertex,
/// pile-up density, filter flags and triggers (`visible`: each event's scalar sum of the
/// particles' pt; `iso_mu24`: the single-muon trigger).
fn event_columns(
    events: usize,
    visible: &[f64],
    iso_mu24: Vec<bool>,
    rng: &mut Rng,
    more: &mut Rng,
) -> Vec<Column> {
    let mut columns = Vec::new();
    let met: Vec<f32> = (0..events).map(|_| rng.exponential(30.0) as f32).collect();
    let sum_et = met
        .iter()
        .zip(visible)
        .map(|(&met, &visible)| (visible + f64::from(met) + more.exponential(200.0)) as f32)
        .collect();
    columns.push(scalar_column("MET_pt", Values::F32(met)));
    let phi = (0..events)
        .map(|_| {
            round_mantissa(
                rng.range(-std::f64::consts::PI, std::f64::consts::PI) as f32,
                12,
            )
        })
        .collect();
    columns.push(scalar_column("MET_phi", Values::F32(phi)));
    columns.push(scalar_column("MET_sumEt", Values::F32(sum_et)));
    columns.push(scalar_column(
        "PV_npvs",
        Values::I32((0..events).map(|_| rng.poisson(30.0) as i32).collect()),
    ));
    columns.push(scalar_column(
        "PV_z",
        Values::F32(
            (0..events)
                .map(|_| round_mantissa((rng.normal() * 3.5) as f32, 10))
                .collect(),
        ),
    ));
    let ndof: Vec<f32> = (0..events)
        .map(|_| round_mantissa((10.0 + more.exponential(60.0)) as f32, 8))
        .collect();
    let chi2 = ndof
        .iter()
        .map(|&n| {
            round_mantissa(
                (f64::from(n) * (1.0 + 0.15 * more.normal()).max(0.3)) as f32,
                8,
            )
        })
        .collect();
    columns.push(scalar_column("PV_ndof", Values::F32(ndof)));
    columns.push(scalar_column("PV_chi2", Values::F32(chi2)));
    columns.push(scalar_column(
        "fixedGridRhoFastjetAll",
        Values::F32((0..events).map(|_| rng.range(5.0, 40.0) as f32).collect()),
    ));
    // Flag_METFilters is the AND of the filters, Flag_goodVertices among them.
    let good: Vec<bool> = (0..events).map(|_| more.below(1000) < 995).collect();
    let filters = good.iter().map(|&g| g && more.below(1000) < 985).collect();
    columns.push(scalar_column("Flag_goodVertices", Values::Bool(good)));
    columns.push(scalar_column("Flag_METFilters", Values::Bool(filters)));
    columns.push(scalar_column("HLT_IsoMu24", Values::Bool(iso_mu24)));
    for t in 0..TRIGGERS {
        let rate = 1 + (t as u64 * 7) % 13;
        let bits = (0..events).map(|_| rng.below(100) < rate).collect();
        columns.push(scalar_column(
            &format!("HLT_path{t:02}"),
            Values::Bool(bits),
        ));
    }
    columns
}

/// A column of one value per event.
fn scalar_column(name: &str, values: Values) -> Column {
    Column {
        name: name.into(),
        counter: None,
        values,
    }
}

/// A collection's kinematics its other members are drawn from.
struct Members<'a> {
    mass: Vec<f32>,
    pt: &'a [f32],
    eta: &'a [f32],
    /// Objects in all events.
    total: usize,
}

/// Takes a link column's indices.
fn take_links(values: &mut Vec<i32>) -> Values {
    Values::I32(std::mem::take(values))
}

/// The members of the jets beyond their kinematics.
fn jet_members(
    p: Members<'_>,
    rng: &mut Rng,
    more: &mut Rng,
    links: &mut Links,
) -> Vec<(&'static str, Values)> {
    let mut members = Vec::new();
    members.push(("mass", Values::F32(p.mass)));
    let btag: Vec<f32> = (0..p.total)
        .map(|_| round_mantissa(rng.uniform() as f32, 10))
        .collect();
    let id = (0..p.total)
        .map(|_| if rng.below(10) < 8 { 6 } else { 2 })
        .collect();
    let area = (0..p.total)
        .map(|_| round_mantissa((0.5 + 0.03 * more.normal()) as f32, 10))
        .collect();
    let qgl = (0..p.total)
        .map(|_| {
            if more.below(100) < 3 {
                -1.0
            } else {
                round_mantissa(more.uniform().powf(0.8) as f32, 10)
            }
        })
        .collect();
    let constituents =
        p.pt.iter()
            .map(|&pt| (5 + more.poisson(8.0 + f64::from(pt) / 10.0)).min(255) as u8)
            .collect();
    // b jets (5) where the b tag is high, charm (4) 8%, light (0) the rest.
    let hadron: Vec<i32> = btag
        .iter()
        .map(|&b| {
            let b5 = 0.02 + 0.3 * f64::from(b).powi(4);
            match more.uniform() {
                u if u < b5 => 5,
                u if u < b5 + 0.08 => 4,
                _ => 0,
            }
        })
        .collect();
    let parton = hadron
        .iter()
        .map(|&h| {
            let sign = if more.below(2) == 0 { -1 } else { 1 };
            match h {
                0 => pick(
                    more,
                    &[
                        (21, 45),
                        (sign, 15),
                        (2 * sign, 15),
                        (3 * sign, 15),
                        (0, 10),
                    ],
                ),
                flavour => sign * flavour,
            }
        })
        .collect();
    // Pile-up id working points (tight 1, medium 2, loose 4), all passed above 50 GeV.
    let pu =
        p.pt.iter()
            .map(|&pt| {
                if pt >= 50.0 {
                    7
                } else {
                    pick(more, &[(0, 15), (4, 15), (6, 20), (7, 50)])
                }
            })
            .collect();
    members.push(("btagDeepFlavB", Values::F32(btag)));
    members.push(("jetId", Values::I32(id)));
    members.push(("area", Values::F32(area)));
    members.push(("qgl", Values::F32(qgl)));
    members.push(("nConstituents", Values::U8(constituents)));
    members.push(("hadronFlavour", Values::I32(hadron)));
    members.push(("partonFlavour", Values::I32(parton)));
    members.push(("puId", Values::I32(pu)));
    members.push(("muonIdx1", take_links(&mut links.jet_muon[0])));
    members.push(("muonIdx2", take_links(&mut links.jet_muon[1])));
    members.push(("electronIdx1", take_links(&mut links.jet_electron)));
    members
}

/// The members of the muons beyond their kinematics.
fn muon_members(
    p: Members<'_>,
    rng: &mut Rng,
    more: &mut Rng,
    links: &mut Links,
) -> Vec<(&'static str, Values)> {
    let mut members = Vec::new();
    members.push(("mass", Values::F32(p.mass)));
    let charge = (0..p.total)
        .map(|_| if rng.below(2) == 0 { -1 } else { 1 })
        .collect();
    members.push(("charge", Values::I32(charge)));
    let iso = (0..p.total)
        .map(|_| round_mantissa(rng.exponential(0.1) as f32, 8))
        .collect();
    members.push(("pfRelIso04_all", Values::F32(iso)));
    let tight: Vec<bool> = (0..p.total).map(|_| rng.below(10) < 7).collect();
    let dxy = (0..p.total)
        .map(|_| round_mantissa((0.003 * more.normal()) as f32, 10))
        .collect();
    let dz = (0..p.total)
        .map(|_| round_mantissa((0.008 * more.normal()) as f32, 10))
        .collect();
    let stations = (0..p.total)
        .map(|_| pick(more, &[(0, 2), (1, 10), (2, 30), (3, 38), (4, 20)]))
        .collect();
    let layers = (0..p.total)
        .map(|_| (6 + more.poisson(6.0)).min(18) as i32)
        .collect();
    // Tight and medium muons are loose ones; loose ones are PF candidates.
    let loose: Vec<bool> = tight.iter().map(|&t| t || more.below(10) < 9).collect();
    let medium = tight
        .iter()
        .zip(&loose)
        .map(|(&t, &l)| l && (t || more.below(10) < 6))
        .collect();
    let pf = loose.iter().map(|&l| l || more.below(2) == 0).collect();
    members.push(("tightId", Values::Bool(tight)));
    members.push(("dxy", Values::F32(dxy)));
    members.push(("dz", Values::F32(dz)));
    members.push(("nStations", Values::I32(stations)));
    members.push(("nTrackerLayers", Values::I32(layers)));
    members.push(("looseId", Values::Bool(loose)));
    members.push(("mediumId", Values::Bool(medium)));
    members.push(("isPFcand", Values::Bool(pf)));
    members.push(("jetIdx", take_links(&mut links.muon_jet)));
    members
}

/// The members of the electrons beyond their kinematics.
fn electron_members(
    p: Members<'_>,
    rng: &mut Rng,
    more: &mut Rng,
    links: &mut Links,
) -> Vec<(&'static str, Values)> {
    let mut members = Vec::new();
    members.push(("mass", Values::F32(p.mass)));
    let charge = (0..p.total)
        .map(|_| if rng.below(2) == 0 { -1 } else { 1 })
        .collect();
    members.push(("charge", Values::I32(charge)));
    let dxy = (0..p.total)
        .map(|_| round_mantissa((0.005 * more.normal()) as f32, 10))
        .collect();
    let dz = (0..p.total)
        .map(|_| round_mantissa((0.012 * more.normal()) as f32, 10))
        .collect();
    // Narrower showers in the barrel (|eta| < 1.479) than in the endcaps.
    let sieie = p
        .eta
        .iter()
        .map(|&eta| {
            let (mean, width) = if eta.abs() < 1.479 {
                (0.0100, 0.0012)
            } else {
                (0.0270, 0.0030)
            };
            round_mantissa((mean + width * more.normal()).max(0.002) as f32, 10)
        })
        .collect();
    // 0 fail, 1 veto, 2 loose, 3 medium, 4 tight; every working point has the
    // conversion veto.
    let cut: Vec<i32> = (0..p.total)
        .map(|_| pick(more, &[(0, 15), (1, 10), (2, 15), (3, 20), (4, 40)]))
        .collect();
    let conv_veto = cut.iter().map(|&c| c >= 1 || more.below(2) == 0).collect();
    let pf = (0..p.total).map(|_| more.below(100) < 85).collect();
    members.push(("dxy", Values::F32(dxy)));
    members.push(("dz", Values::F32(dz)));
    members.push(("sieie", Values::F32(sieie)));
    members.push(("cutBased", Values::I32(cut)));
    members.push(("convVeto", Values::Bool(conv_veto)));
    members.push(("isPFcand", Values::Bool(pf)));
    members.push(("jetIdx", take_links(&mut links.electron_jet)));
    members.push(("photonIdx", take_links(&mut links.electron_photon)));
    members
}

/// The members of the photons beyond their kinematics.
fn photon_members(
    p: Members<'_>,
    more: &mut Rng,
    links: &mut Links,
) -> Vec<(&'static str, Values)> {
    let mut members = Vec::new();
    // 0 fail, 1 loose, 2 medium, 3 tight; electrons faking photons have a pixel seed.
    let cut = (0..p.total)
        .map(|_| pick(more, &[(0, 30), (1, 20), (2, 20), (3, 30)]))
        .collect();
    let pixel = links
        .photon_electron
        .iter()
        .map(|&e| {
            if e >= 0 {
                more.below(10) < 8
            } else {
                more.below(100) < 5
            }
        })
        .collect();
    members.push(("cutBased", Values::I32(cut)));
    members.push(("pixelSeed", Values::Bool(pixel)));
    members.push(("electronIdx", take_links(&mut links.photon_electron)));
    members
}

/// The members of the taus beyond their kinematics.
fn tau_members(p: Members<'_>, more: &mut Rng, links: &mut Links) -> Vec<(&'static str, Values)> {
    let mut members = Vec::new();
    let mode = (0..p.total)
        .map(|_| pick(more, &[(0, 25), (1, 45), (2, 10), (10, 15), (11, 5)]))
        .collect();
    // Eight cumulative working points (VVVLoose = 1 .. VVTight = 128).
    let deep_tau = (0..p.total)
        .map(|_| {
            let passed = pick(
                more,
                &[
                    (0u32, 5),
                    (1, 5),
                    (2, 5),
                    (3, 10),
                    (4, 10),
                    (5, 15),
                    (6, 20),
                    (7, 15),
                    (8, 15),
                ],
            );
            ((1u32 << passed) - 1) as u8
        })
        .collect();
    members.push(("decayMode", Values::I32(mode)));
    members.push(("idDeepTau2017v2p1VSjet", Values::U8(deep_tau)));
    members.push(("jetIdx", take_links(&mut links.tau_jet)));
    members
}
