//! `evtc merge OUTPUT INPUT...`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use evtc_format::size;
use evtc_tools::{MergeOptions, MergeStep, Schemas, expand_inputs, merge};

use crate::convert::JobArgs;
use crate::settings::SettingsArgs;

/// Arguments of `evtc merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file to write; it appears only when the merge succeeds.
    output: PathBuf,
    /// The files to merge, in order: evtc files, ROOT files (converted on the way), or
    /// `@LIST`, a text file of paths, one per line.
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
    /// Keep every branch of any input; where an input lacks one, it holds its type's default
    /// there (and the file records where).
    #[arg(long, conflicts_with = "intersect")]
    union: bool,
    /// Keep only the branches every input has.
    #[arg(long)]
    intersect: bool,
    /// Write every branch again with the codec options below instead of copying the inputs'
    /// baskets.
    #[arg(long)]
    recompress: bool,
    #[command(flatten)]
    settings: SettingsArgs<crate::settings::Merge>,
    #[command(flatten)]
    job: JobArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let settings = args.settings.settings;
    crate::check_output(&args.output)?;
    crate::refuse_existing(&args.output, settings.overwrite)?;
    let inputs = expand_inputs(&args.inputs)?;
    if let Some(missing) = inputs.iter().find(|p| !p.exists()) {
        bail!("input {} does not exist", missing.display());
    }
    let options = MergeOptions {
        schemas: if args.union {
            Schemas::Union
        } else if args.intersect {
            Schemas::Intersect
        } else {
            Schemas::Same
        },
        recompress: args.recompress,
        settings,
    };
    let bar = crate::progress_bar(
        args.job.silent(),
        "{prefix} [{bar:30}] {pos}/{len} inputs, {msg}",
    );
    bar.set_length(inputs.len() as u64);
    let report = merge(&args.output, &inputs, &options, &mut |step| match step {
        MergeStep::Converting { path, index, total } => {
            bar.set_prefix("converting");
            bar.set_length(total as u64);
            bar.set_position(index as u64);
            bar.set_message(path.display().to_string());
        }
        MergeStep::Merging {
            tree,
            input,
            inputs,
            entries,
        } => {
            bar.set_prefix(format!("merging {tree}"));
            bar.set_length(inputs as u64);
            bar.set_position(input as u64 + 1);
            bar.set_message(format!("{entries} entries"));
        }
    })
    .with_context(|| format!("merging into {}", args.output.display()))?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if args.job.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if !args.job.quiet {
        writeln!(
            out,
            "merged {} inputs ({}{}) -> {} ({}) in {:.2} s ({:.0} MB/s of input)",
            report.inputs,
            size::human(report.input_bytes),
            if report.converted > 0 {
                format!(", {} ROOT files converted", report.converted)
            } else {
                String::new()
            },
            args.output.display(),
            size::human(report.output_bytes),
            report.seconds,
            report.input_bytes as f64 / report.seconds.max(1e-9) / 1e6
        )?;
        for t in &report.trees {
            writeln!(
                out,
                "  tree {}: {} from {}, {}; {} copied, {} written again",
                t.name,
                crate::count(t.entries, "entry", "entries"),
                crate::count(t.inputs as u64, "input", "inputs"),
                crate::count(t.branches as u64, "branch", "branches"),
                crate::count(t.copied_baskets, "basket", "baskets"),
                crate::count(t.rewritten.len() as u64, "branch-input", "branch-inputs")
            )?;
            for (branch, input) in &t.defaulted {
                writeln!(out, "    {branch}: defaults where {input} lacks it")?;
            }
            if !t.dropped.is_empty() {
                writeln!(out, "    left out: {}", t.dropped.join(", "))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
