//! `evtc recover DAMAGED OUT`: restore the complete clusters of a file without a valid footer.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use evtc_format::size;

/// Arguments of `evtc recover`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The damaged evtc file (a killed writer's `.partial` file, a truncated copy).
    damaged: PathBuf,
    /// The evtc file to write; it appears only when complete.
    output: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    force: crate::Force,
}

#[derive(serde::Serialize)]
struct Report<'a> {
    trees: Vec<TreeReport<'a>>,
    sound_bytes: u64,
    tail_bytes: u64,
    stopped: Option<&'a str>,
    had_footer: bool,
}

#[derive(serde::Serialize)]
struct TreeReport<'a> {
    name: &'a str,
    entries: u64,
    clusters: usize,
    baskets: u64,
    dropped_baskets: u64,
    dropped_entries: u64,
    note: Option<&'a str>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::check_output(&args.output)?;
    if let (Ok(a), Ok(b)) = (args.damaged.canonicalize(), args.output.canonicalize())
        && a == b
    {
        bail!("refusing to recover {} onto itself", args.damaged.display());
    }
    args.force.check(&args.output)?;
    let recovery = evtc_format::recover(&args.damaged, &args.output, args.force.force)
        .with_context(|| format!("recovering {}", args.damaged.display()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = Report {
            trees: recovery
                .trees
                .iter()
                .map(|t| TreeReport {
                    name: &t.name,
                    entries: t.entries,
                    clusters: t.clusters,
                    baskets: t.baskets,
                    dropped_baskets: t.dropped_baskets,
                    dropped_entries: t.dropped_entries,
                    note: t.note.as_deref(),
                })
                .collect(),
            sound_bytes: recovery.sound_bytes,
            tail_bytes: recovery.tail_bytes,
            stopped: recovery.stopped.as_deref(),
            had_footer: recovery.had_footer,
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "recovered {} -> {}: {} of sound records{}",
        args.damaged.display(),
        args.output.display(),
        size::human(recovery.sound_bytes),
        if recovery.had_footer {
            " (the file was complete)"
        } else {
            ""
        }
    )?;
    for t in &recovery.trees {
        writeln!(
            out,
            "  tree {}: {} in {} restored ({}); dropped {} ({}) that not every branch holds",
            t.name,
            crate::count(t.entries, "entry", "entries"),
            crate::count(t.clusters as u64, "cluster", "clusters"),
            crate::count(t.baskets, "basket", "baskets"),
            crate::count(t.dropped_entries, "entry", "entries"),
            crate::count(t.dropped_baskets, "basket", "baskets")
        )?;
        if let Some(note) = &t.note {
            writeln!(out, "    {note}")?;
        }
    }
    if let Some(stopped) = &recovery.stopped {
        writeln!(
            out,
            "  {} at the end could not be read: {stopped}",
            size::human(recovery.tail_bytes)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
