//! `evtc index FILE --by MAJOR,MINOR`: give a tree of an evtc file an event index.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use evtc_format::{add_event_index, size};
use evtc_tools::parse_index_keys;

/// Arguments of `evtc index`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file; it is replaced, when the index is written, by a copy that has it.
    file: PathBuf,
    /// The key branches, two integer scalar branches: major,minor (`run,event`).
    #[arg(long, value_name = "MAJOR,MINOR", value_parser = parse_index_keys)]
    by: (String, String),
    /// The tree (default: the file's only tree, or its first).
    #[arg(long)]
    tree: Option<String>,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let (major, minor) = &args.by;
    let summary = add_event_index(&args.file, args.tree.as_deref(), major, minor)
        .with_context(|| format!("indexing {}", args.file.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        serde_json::to_writer_pretty(std::io::stdout().lock(), &summary)?;
        println!();
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "indexed tree {} of {} by ({major}, {minor}): {} rows, index {} in {seconds:.2} s",
        summary.tree,
        args.file.display(),
        summary.rows,
        size::human(summary.bytes),
    );
    if summary.duplicate_keys > 0 {
        println!(
            "  {} keys are held by more than one entry: a lookup of one gives all its entries",
            summary.duplicate_keys
        );
    }
    Ok(ExitCode::SUCCESS)
}
