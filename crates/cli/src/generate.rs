//! `evtc generate --kind nano|rac|ints --events N OUT`: the benchmarks' deterministic data sets.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::ValueEnum;
use evtc_datagen::nano::{self, Values};
use evtc_format::{BranchSpec, FileWriter, ScalarType, TreeWriter, WriteOptions};

/// Arguments of `evtc generate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The data set.
    #[arg(long, value_enum)]
    kind: Kind,
    /// Number of events.
    #[arg(long, default_value_t = 100_000)]
    events: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Codec of the output [default: zstd:5, the library's].
    #[arg(long)]
    codec: Option<evtc_codecs::Codec>,
    /// The evtc file to write.
    output: PathBuf,
    #[command(flatten)]
    force: crate::Force,
}

/// The data sets `evtc generate` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Kind {
    /// A NanoAOD-like Events tree, 114 branches.
    Nano,
    /// The RAC study's TFloat and TSmall trees.
    Rac,
    /// Sorted positions and Poisson counts.
    Ints,
}

const CHUNK: usize = 10_000;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::check_output(&args.output)?;
    args.force.check(&args.output)?;
    let mut options = WriteOptions::default().overwrite(args.force.force);
    if let Some(codec) = args.codec {
        options = options.codec(codec);
    }
    let mut file = FileWriter::create(&args.output, options)
        .with_context(|| format!("creating {}", args.output.display()))?;
    match args.kind {
        Kind::Nano => nano_tree(&mut file, args.events, args.seed)?,
        Kind::Rac => {
            for (name, len, data) in [
                (
                    "TFloat",
                    evtc_datagen::rac::TFLOAT_LEN,
                    evtc_datagen::rac::tfloat(args.events, args.seed),
                ),
                (
                    "TSmall",
                    evtc_datagen::rac::TSMALL_LEN,
                    evtc_datagen::rac::tsmall(args.events, args.seed),
                ),
            ] {
                let mut tree = file.tree(
                    name,
                    vec![BranchSpec::fixed("event", ScalarType::F32, len as u32)],
                )?;
                for chunk in data.chunks(len * CHUNK) {
                    tree.fill_column(0, chunk)?;
                    tree.commit()?;
                }
                tree.finish()?;
            }
        }
        Kind::Ints => {
            let positions = evtc_datagen::ints::sorted_positions(args.events, args.seed);
            let counts = evtc_datagen::ints::poisson_counts(args.events, 3.0, args.seed);
            let mut tree = file.tree(
                "Ints",
                vec![
                    BranchSpec::scalar("position", ScalarType::I32),
                    BranchSpec::scalar("count", ScalarType::U32),
                ],
            )?;
            for (p, c) in positions.chunks(CHUNK).zip(counts.chunks(CHUNK)) {
                tree.fill_column(0, p)?;
                tree.fill_column(1, c)?;
                tree.commit()?;
            }
            tree.finish()?;
        }
    }
    file.finish()?;
    let size = std::fs::metadata(&args.output).map_or(0, |m| m.len());
    println!(
        "wrote {} ({} events of {}, {})",
        args.output.display(),
        args.events,
        args.kind
            .to_possible_value()
            .map_or(String::new(), |v| v.get_name().to_owned()),
        evtc_format::size::human(size)
    );
    Ok(ExitCode::SUCCESS)
}

fn nano_tree(file: &mut FileWriter, events: usize, seed: u64) -> anyhow::Result<()> {
    let columns = nano::events(events, seed);
    let specs = columns
        .iter()
        .map(|c| {
            let t = match c.values {
                Values::Bool(_) => ScalarType::Bool,
                Values::U8(_) => ScalarType::U8,
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
    let mut tree = file.tree("Events", specs)?;
    let mut at = vec![0usize; columns.len()];
    for start in (0..events).step_by(CHUNK) {
        let end = (start + CHUNK).min(events);
        for (b, c) in columns.iter().enumerate() {
            let counts = c.counter.as_ref().and_then(|name| {
                match &columns.iter().find(|o| &o.name == name)?.values {
                    Values::U32(v) => Some(&v[start..end]),
                    _ => None,
                }
            });
            fill(&mut tree, b, &c.values, counts, start..end, &mut at[b])?;
        }
        tree.commit()?;
    }
    tree.finish()?;
    Ok(())
}

fn fill(
    tree: &mut TreeWriter<'_>,
    b: usize,
    values: &Values,
    counts: Option<&[u32]>,
    entries: std::ops::Range<usize>,
    at: &mut usize,
) -> anyhow::Result<()> {
    let (from, to) = match counts {
        Some(counts) => (*at, *at + counts.iter().map(|&n| n as usize).sum::<usize>()),
        None => (entries.start, entries.end),
    };
    *at = to;
    macro_rules! fill {
        ($v:expr) => {
            match counts {
                Some(counts) => tree.fill_jagged(b, counts, &$v[from..to]),
                None => tree.fill_column(b, &$v[from..to]),
            }
        };
    }
    match values {
        Values::Bool(v) => fill!(v),
        Values::U8(v) => fill!(v),
        Values::I32(v) => fill!(v),
        Values::U32(v) => fill!(v),
        Values::U64(v) => fill!(v),
        Values::F32(v) => fill!(v),
    }?;
    Ok(())
}
