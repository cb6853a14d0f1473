//! `evtc convert INPUT OUTPUT`.

use std::path::PathBuf;
use std::process::ExitCode;

use evtc_format::size;
use evtc_tools::convert;

use crate::settings::SettingsArgs;

/// Arguments of `evtc convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A ROOT file (its TTrees are imported) or an evtc file (re-compressed).
    input: PathBuf,
    /// The evtc file to write; it appears only when the conversion succeeds.
    output: PathBuf,
    #[command(flatten)]
    settings: SettingsArgs<crate::settings::Convert>,
    #[command(flatten)]
    job: JobArgs,
    /// On Ctrl-C or SIGTERM, keep what was written so far as OUTPUT.partial (for `evtc
    /// recover`) instead of removing it.
    #[arg(long, conflicts_with = "append")]
    keep_partial: bool,
}

/// How a command that writes a file (`convert`, `merge`, `skim`, `add-columns`) reports.
#[derive(Debug, clap::Args)]
pub struct JobArgs {
    /// No progress bar and no summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

impl JobArgs {
    /// Whether the command prints no progress (asked to be quiet, or to print JSON).
    pub(crate) fn silent(&self) -> bool {
        self.quiet || self.json
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::check_paths(&args.input, &args.output)?;
    let mut options = args.settings.settings;
    if !options.append {
        crate::refuse_existing(&args.output, options.overwrite)?;
    }
    options.interrupt = Some(crate::interrupt::flag());
    options.keep_partial = args.keep_partial;
    let bar = crate::progress_bar(
        args.job.silent(),
        "{prefix} [{bar:30}] {pos}/{len} entries, {per_sec}, {msg}",
    );
    let started = std::time::Instant::now();
    let summary = convert(&args.input, &args.output, &options, &mut |p| {
        bar.set_prefix(p.tree.to_owned());
        bar.set_length(p.total);
        bar.set_position(p.entries);
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("{:.1} MB/s", p.bytes as f64 / secs / 1e6));
    });
    let summary = match summary {
        Ok(summary) => summary,
        Err(evtc_tools::Error::Interrupted { kept }) => {
            bar.finish_and_clear();
            let hint = kept.map_or_else(
                || {
                    if options.append {
                        format!("{} is as it was", args.output.display())
                    } else {
                        "nothing was written".to_owned()
                    }
                },
                |p| {
                    format!(
                        "the records written so far are in {0}; `evtc recover {0} {1}` restores \
                         its complete clusters",
                        p.display(),
                        args.output.display()
                    )
                },
            );
            writeln_out(
                &mut std::io::stderr(),
                &format!("evtc: interrupted; {hint}"),
            )?;
            return Ok(ExitCode::from(130));
        }
        Err(e) => {
            return Err(
                anyhow::Error::new(e).context(format!("converting {}", args.input.display()))
            );
        }
    };
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if args.job.json {
        serde_json::to_writer_pretty(&mut out, &summary)?;
        writeln_out(&mut out, "")?;
    } else if !args.job.quiet {
        use std::io::Write;
        writeln!(
            out,
            "{} {} ({}, {}) -> {} ({}) in {:.2} s",
            if options.append {
                "appended"
            } else {
                "converted"
            },
            args.input.display(),
            summary.input_format,
            size::human(summary.input_bytes),
            args.output.display(),
            size::human(summary.output_bytes),
            summary.seconds
        )?;
        writeln!(
            out,
            "  size ratio output/input {:.3}; values {} ({:.1} MB/s)",
            summary.output_bytes as f64 / summary.input_bytes.max(1) as f64,
            size::human(summary.value_bytes),
            summary.value_bytes as f64 / summary.seconds.max(1e-9) / 1e6
        )?;
        for t in &summary.trees {
            let index = t
                .event_index
                .as_ref()
                .map(|(a, b)| format!(", event index ({a}, {b})"))
                .unwrap_or_default();
            writeln!(
                out,
                "  tree {}: {}, {}{index}",
                t.name,
                crate::count(t.entries, "entry", "entries"),
                crate::count(t.branches as u64, "branch", "branches")
            )?;
            if let Some(why) = &t.index_dropped {
                writeln!(out, "  tree {}: {why}", t.name)?;
            }
        }
        for note in &summary.notes {
            writeln!(out, "  note: {note}")?;
        }
        for s in &summary.skipped {
            writeln!(
                out,
                "  skipped {}/{} ({}): {}",
                s.tree, s.branch, s.class, s.reason
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn writeln_out(out: &mut impl std::io::Write, s: &str) -> std::io::Result<()> {
    writeln!(out, "{s}")
}
