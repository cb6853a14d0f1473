//! `evtc skim INPUT OUTPUT`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use evtc_format::size;
use evtc_tools::{Entries, Selection, SkimOptions, read_entry_list, skim};

use crate::convert::JobArgs;
use crate::settings::SettingsArgs;

/// Arguments of `evtc skim`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file to skim.
    input: PathBuf,
    /// The evtc file to write; it appears only when the skim succeeds.
    output: PathBuf,
    /// The entries to keep, a text file: an entry number or a range A..B per line.
    #[arg(long, value_name = "FILE", conflicts_with = "selection")]
    entries: Option<PathBuf>,
    /// The entries to keep, by a selection over the tree's branches:
    /// 'nMuon >= 2 && MET_pt > 50', 'any(Muon_pt > 20 && abs(Muon_eta) < 2.4)'
    /// (functions: abs, any, all, count, len, sum, min, max).
    #[arg(long = "where", value_name = "EXPR", value_parser = parse_selection)]
    selection: Option<Selection>,
    /// Write every kept branch again with the codec options below instead of copying whole
    /// baskets.
    #[arg(long)]
    recompress: bool,
    #[command(flatten)]
    settings: SettingsArgs<crate::settings::Skim>,
    #[command(flatten)]
    job: JobArgs,
}

fn parse_selection(text: &str) -> Result<Selection, String> {
    Selection::parse(text)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::check_paths(&args.input, &args.output)?;
    crate::refuse_existing(&args.output, args.settings.settings.overwrite)?;
    let entries = match (&args.entries, &args.selection) {
        (Some(list), _) => Entries::List(read_entry_list(list)?),
        (None, Some(selection)) => Entries::Where(selection.clone()),
        (None, None) => Entries::All,
    };
    let options = SkimOptions {
        entries,
        recompress: args.recompress,
        settings: args.settings.settings,
    };
    let bar = crate::progress_bar(args.job.silent(), "{prefix} [{bar:30}] {pos}/{len} entries");
    let report = skim(&args.input, &args.output, &options, &mut |p| {
        bar.set_prefix(p.tree.to_owned());
        bar.set_length(p.total);
        bar.set_position(p.done);
    })
    .with_context(|| format!("skimming {}", args.input.display()))?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if args.job.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if !args.job.quiet {
        writeln!(
            out,
            "skimmed {} ({}) -> {} ({}) in {:.2} s",
            args.input.display(),
            size::human(report.input_bytes),
            args.output.display(),
            size::human(report.output_bytes),
            report.seconds
        )?;
        writeln!(
            out,
            "  tree {}: {} of {} ({:.1}%), {}; {} copied, {} written again{}",
            report.tree,
            report.entries,
            crate::count(report.of, "entry", "entries"),
            100.0 * report.entries as f64 / report.of.max(1) as f64,
            crate::count(report.branches as u64, "branch", "branches"),
            crate::count(report.copied_baskets as u64, "basket", "baskets"),
            report.rewritten_baskets,
            match report.copied_units {
                0 => String::new(),
                n => format!("; {n} RAC units copied from baskets kept in part"),
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
