//! Compresses a generated NanoAOD-like sample with every codec family and prints a summary table:
//! the codec guide (docs/codecs.md), measured on your machine.
//!
//! `cargo run --release --example codec_summary [EVENTS]` (default 200,000 events).

use std::time::Instant;

use evtc::codecs::{BlockDecoder, BlockEncoder, Codec, Precondition, Width};
use evtc::datagen::{ints, le_bytes, nano};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let events: usize = match std::env::args().nth(1) {
        Some(arg) => arg
            .parse()
            .map_err(|_| format!("EVENTS must be a number, got {arg:?}"))?,
        None => 200_000,
    };
    let jets = nano::jets(events, 1);
    let muons = nano::muons(events, 2);
    // (column, bytes, preconditioner evtc picks for its type)
    let columns = [
        (
            "nJet",
            le_bytes(&jets.counts),
            Precondition::BitShuffle(Width::W4),
        ),
        (
            "Jet_pt",
            le_bytes(&jets.pt),
            Precondition::Shuffle(Width::W4),
        ),
        (
            "Jet_eta",
            le_bytes(&jets.eta),
            Precondition::Shuffle(Width::W4),
        ),
        (
            "Jet_phi",
            le_bytes(&jets.phi),
            Precondition::Shuffle(Width::W4),
        ),
        (
            "Jet_mass",
            le_bytes(&jets.mass),
            Precondition::Shuffle(Width::W4),
        ),
        (
            "nMuon",
            le_bytes(&muons.counts),
            Precondition::BitShuffle(Width::W4),
        ),
        (
            "Muon_pt",
            le_bytes(&muons.pt),
            Precondition::Shuffle(Width::W4),
        ),
        (
            "Muon_eta",
            le_bytes(&muons.eta),
            Precondition::Shuffle(Width::W4),
        ),
        (
            "Muon_offsets",
            le_bytes(&ints::offsets(&muons.counts)),
            Precondition::Delta(Width::W8),
        ),
    ];
    let raw: usize = columns.iter().map(|(_, bytes, _)| bytes.len()).sum();
    println!(
        "{events} NanoAOD-like events, {} columns, {:.1} MB raw; 256 KiB baskets\n",
        columns.len(),
        raw as f64 / 1e6
    );
    println!(
        "{:<10} {:>8} {:>8} {:>14} {:>16}",
        "codec", "precond", "ratio", "write MB/s", "read MB/s"
    );

    let mut encoder = BlockEncoder::new();
    let mut decoder = BlockDecoder::new();
    for spec in [
        "none", "lz4", "lz4hc:9", "zlib:6", "zstd:1", "zstd:5", "zstd:9", "lzma:7",
    ] {
        let codec: Codec = spec.parse()?;
        for auto in [false, true] {
            if codec == Codec::NONE && auto {
                continue;
            }
            let mut baskets = Vec::new();
            let started = Instant::now();
            for (_, bytes, precondition) in &columns {
                let precondition = if auto {
                    *precondition
                } else {
                    Precondition::None
                };
                for chunk in bytes.chunks(256 << 10) {
                    let mut block = Vec::new();
                    encoder.encode(codec, precondition, chunk, &mut block)?;
                    baskets.push(block);
                }
            }
            let write = started.elapsed();
            let stored: usize = baskets.iter().map(Vec::len).sum();
            let started = Instant::now();
            let mut out = Vec::new();
            let mut decoded = 0;
            for block in &baskets {
                decoder.decode(block, &mut out)?;
                decoded += out.len();
            }
            let read = started.elapsed();
            assert_eq!(decoded, raw, "every byte comes back");
            println!(
                "{:<10} {:>8} {:>8.2} {:>14.0} {:>16.0}",
                spec,
                if auto { "auto" } else { "none" },
                raw as f64 / stored as f64,
                raw as f64 / write.as_secs_f64() / 1e6,
                raw as f64 / read.as_secs_f64() / 1e6,
            );
        }
    }
    Ok(())
}
