//! `evtc add-columns FILE --from OTHER`: add another evtc file's branches to a tree, in place.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use evtc_format::size;
use evtc_tools::add_columns;

use crate::convert::JobArgs;
use crate::settings::SettingsArgs;

/// Arguments of `evtc add-columns`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file whose tree gets the branches; updated in place.
    file: PathBuf,
    /// The evtc file holding the branches, in a tree of the same name and length.
    #[arg(long, value_name = "OTHER")]
    from: PathBuf,
    #[command(flatten)]
    settings: SettingsArgs<crate::settings::AddColumns>,
    #[command(flatten)]
    job: JobArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    for path in [&args.file, &args.from] {
        if !path.is_file() {
            anyhow::bail!("{} does not exist or is not a file", path.display());
        }
    }
    let options = args.settings.settings;
    let bar = crate::progress_bar(
        args.job.silent(),
        "[{bar:30}] {pos}/{len} entries, {per_sec}",
    );
    let report = add_columns(&args.file, &args.from, &options, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })
    .with_context(|| {
        format!(
            "adding branches of {} to {}",
            args.from.display(),
            args.file.display()
        )
    })?;
    bar.finish_and_clear();
    let mut out = std::io::stdout().lock();
    if args.job.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if !args.job.quiet {
        writeln!(
            out,
            "added {} of {} to tree {} of {} ({}) in {:.2} s: {} -> {}",
            crate::count(report.added.len() as u64, "branch", "branches"),
            args.from.display(),
            report.tree,
            args.file.display(),
            crate::count(report.entries, "entry", "entries"),
            report.seconds,
            size::human(report.bytes_before),
            size::human(report.bytes_after)
        )?;
        writeln!(out, "  added: {}", report.added.join(", "))?;
        if !report.shared.is_empty() {
            writeln!(
                out,
                "  not added, the tree has them (the branches they count store their own counts): {}",
                report.shared.join(", ")
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
