//! The main job until the `evtc` command line exists: generate a NanoAOD-like sample, write it as an
//! evtc file with zstd:5 and random-access compression, and print the file's summary (as
//! `evtc inspect` will) and a few entries read back through the RAC seek tables.
//!
//! `cargo run --release --example nano_to_evtc [EVENTS] [OUT]` (default 100,000 events,
//! `target/sample.evtc`).

use std::time::Instant;

use evtc::codecs::{Algorithm, Codec};
use evtc::datagen::nano::{self, Values};
use evtc::format::{BranchSpec, FileReader, FileWriter, RacMode, ScalarType, Value, WriteOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let events: usize = match args.next() {
        Some(arg) => arg
            .parse()
            .map_err(|_| format!("EVENTS must be a number, got {arg:?}"))?,
        None => 100_000,
    };
    let out = args.next().unwrap_or_else(|| "target/sample.evtc".into());

    let columns = nano::events(events, 1);
    let raw: usize = columns
        .iter()
        .map(|c| c.values.len() * c.values.value_size())
        .sum();
    let specs = columns
        .iter()
        .map(|c| {
            let t = match c.values {
                Values::Bool(_) => ScalarType::Bool,
                Values::I32(_) => ScalarType::I32,
                Values::U32(_) => ScalarType::U32,
                Values::U64(_) => ScalarType::U64,
                Values::F32(_) => ScalarType::F32,
            };
            match &c.counter {
                Some(counter) => BranchSpec::jagged(&c.name, t).counter(counter),
                None => BranchSpec::scalar(&c.name, t),
            }
        })
        .collect();

    let started = Instant::now();
    let options = WriteOptions::default()
        .codec(Codec::zstd(5)?)
        .rac(RacMode::Auto);
    let mut file = FileWriter::create(&out, options)?;
    let mut tree = file.tree("Events", specs)?;
    let mut at = vec![0usize; columns.len()];
    for start in (0..events).step_by(10_000) {
        let end = (start + 10_000).min(events);
        for (b, c) in columns.iter().enumerate() {
            let counts: Option<&[u32]> = c.counter.as_ref().map(|name| {
                match &columns
                    .iter()
                    .find(|o| &o.name == name)
                    .expect("counter column")
                    .values
                {
                    Values::U32(v) => &v[start..end],
                    _ => unreachable!("counters are u32"),
                }
            });
            let (from, to) = match counts {
                Some(counts) => (
                    at[b],
                    at[b] + counts.iter().map(|&n| n as usize).sum::<usize>(),
                ),
                None => (start, end),
            };
            at[b] = to;
            macro_rules! fill {
                ($v:expr) => {
                    match counts {
                        Some(counts) => tree.fill_jagged(b, counts, &$v[from..to]),
                        None => tree.fill_column(b, &$v[from..to]),
                    }
                };
            }
            match &c.values {
                Values::Bool(v) => fill!(v),
                Values::I32(v) => fill!(v),
                Values::U32(v) => fill!(v),
                Values::U64(v) => fill!(v),
                Values::F32(v) => fill!(v),
            }?;
        }
        tree.commit()?;
    }
    tree.finish()?;
    file.finish()?;
    let elapsed = started.elapsed().as_secs_f64();
    let size = std::fs::metadata(&out)?.len();

    let file = FileReader::open(&out)?;
    let events_tree = file.tree("Events")?;
    let meta = events_tree.meta();
    println!(
        "{out}: tree \"Events\", {} entries, {} clusters, {} branches",
        meta.entries,
        meta.cluster_ends.len(),
        meta.branches.len()
    );
    println!(
        "{:<24} {:>10} {:>7} {:>9} {:>4} {:>5} {:>8} {:>10} {:>10} {:>6}",
        "branch", "type", "codec", "bounds", "rac", "dict", "baskets", "raw B", "stored B", "ratio"
    );
    for b in &meta.branches {
        let codec = Algorithm::from_id(b.codec)
            .map(|a| Codec::new(a, i32::from(b.level)).map_or("?".into(), |c| c.to_string()))?;
        println!(
            "{:<24} {:>10} {:>7} {:>9} {:>4} {:>5} {:>8} {:>10} {:>10} {:>6.2}",
            b.name,
            b.dtype.to_string(),
            codec,
            b.boundaries.to_string(),
            if b.rac { "on" } else { "off" },
            if b.dictionary_len > 0 { "yes" } else { "no" },
            b.baskets,
            b.raw_bytes,
            b.stored_bytes,
            b.raw_bytes as f64 / b.stored_bytes.max(1) as f64
        );
    }
    println!(
        "total: {:.1} MB of values -> {:.1} MB file, ratio {:.2}, written in {:.2} s ({:.0} MB/s)",
        raw as f64 / 1e6,
        size as f64 / 1e6,
        raw as f64 / size as f64,
        elapsed,
        raw as f64 / elapsed / 1e6
    );

    // A few entries back, through the seek tables of the RAC branches.
    let mut rows = events_tree.rows(&["event", "nMuon", "Muon_pt", "HLT_path03"])?;
    for entry in [0, meta.entries / 2, meta.entries - 1] {
        let row = rows.get(entry)?;
        let shown: Vec<String> = row.iter().map(show).collect();
        println!(
            "entry {entry}: event={} nMuon={} Muon_pt={} HLT_path03={}",
            shown[0], shown[1], shown[2], shown[3]
        );
    }
    Ok(())
}

fn show(value: &Value) -> String {
    match value {
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(show).collect::<Vec<_>>().join(", ")
        ),
        Value::F32(x) => format!("{x:.2}"),
        Value::Bool(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        other => format!("{other:?}"),
    }
}
