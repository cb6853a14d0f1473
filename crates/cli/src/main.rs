//! `evtc`: convert ROOT and evtc files, inspect them, verify them, dump entries, generate samples,
//! and advise on a file's settings by measuring its own data.
//!
//! A thin layer over the library crates: argument parsing, progress and printing. Errors exit
//! with status 1 and a one-line cause; a closed pipe (`evtc dump ... | head`) exits 0.

mod advise;
mod columns;
mod convert;
mod dump;
mod files;
mod generate;
mod index;
mod inspect;
mod interrupt;
mod merge;
mod plot;
mod recover;
mod settings;
mod skim;
mod verify;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Columnar event-data files with tunable, random-access compression.
#[derive(Debug, Parser)]
#[command(name = "evtc", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Convert a ROOT file (TTree import) or an evtc file (re-compression) into a new evtc file.
    Convert(convert::Args),
    /// Concatenate the trees of evtc (and ROOT) files into one evtc file, copying baskets where
    /// the inputs' layouts allow (ROOT's hadd).
    Merge(merge::Args),
    /// Write the entries a list or a selection keeps, and the branches globs keep, of an evtc
    /// file's tree into a new evtc file, copying whole baskets (ROOT's CopyTree).
    Skim(skim::Args),
    /// Give a tree of an evtc file an event index on two integer branches (run, event), so that
    /// `evtc dump --event` and Python's `entry_of` find an event without reading the branches
    /// (ROOT's TTreeIndex).
    Index(index::Args),
    /// Add the branches of another evtc file's tree (ML scores, calibrations) to the tree of
    /// the same name and length in an evtc file, in place, without rewriting its branches.
    AddColumns(columns::Args),
    /// Print trees, branches, codecs and sizes of an evtc or ROOT file.
    Inspect(inspect::Args),
    /// Check an evtc file's structure and checksums (and, with --deep, every basket's contents).
    Verify(verify::Args),
    /// Print entries of an evtc file as a table, JSON or CSV.
    Dump(dump::Args),
    /// Restore the complete clusters of a damaged evtc file (no footer: a killed writer's
    /// partial file, a truncated copy) into a new file.
    Recover(recover::Args),
    /// Write one of the deterministic sample data sets as an evtc file.
    Generate(generate::Args),
    /// The codec advisor: measure an evtc or ROOT file's own branches under candidate codecs,
    /// preconditioners and RAC, and recommend per-branch settings for a goal (size, read,
    /// balanced, random).
    #[command(visible_alias = "bench")]
    Advise(advise::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Convert(args) => convert::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Skim(args) => skim::run(args),
        Command::Index(args) => index::run(args),
        Command::AddColumns(args) => columns::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Dump(args) => dump::run(args),
        Command::Recover(args) => recover::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Advise(args) => advise::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let hint = hint(&e).map_or_else(String::new, |h| format!(" ({h})"));
            let _ = writeln!(std::io::stderr(), "evtc: error: {}{hint}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause once: library errors often print their
/// source in their own message already.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.ends_with(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

/// A progress bar of `template` (indicatif's), drawn five times a second; hidden when the
/// command prints nothing but its result (`--quiet`, `--json`).
/// `n` and its noun, `one` or `many`: "1 cluster", "3 clusters".
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn progress_bar(hidden: bool, template: &str) -> indicatif::ProgressBar {
    if hidden {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// `--force` (`-f`): replace an output that exists, as hadd's `-f`; without it a command that
/// writes a new file refuses an existing one and leaves it untouched.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Force {
    /// Replace OUTPUT if it exists (without it, an existing OUTPUT is an error and stays as it
    /// is).
    #[arg(long, short)]
    pub force: bool,
}

impl Force {
    /// Refuses an `output` that exists, unless forced, before any work (the writer refuses it
    /// too, when the output gets its name).
    fn check(self, output: &std::path::Path) -> anyhow::Result<()> {
        refuse_existing(output, self.force)
    }
}

/// Refuses an `output` that exists unless `force`, before any work (the writer refuses it too,
/// when the output gets its name).
fn refuse_existing(output: &std::path::Path, force: bool) -> anyhow::Result<()> {
    {
        if !force && output.symlink_metadata().is_ok() {
            return Err(evtc_format::Error::OutputExists {
                path: output.to_owned(),
            }
            .into());
        }
        Ok(())
    }
}

/// Checks a command's input and output paths before any work: the input exists, the output is
/// a file name in a directory that exists.
fn check_paths(input: &std::path::Path, output: &std::path::Path) -> anyhow::Result<()> {
    if !input.exists() {
        anyhow::bail!("input {} does not exist", input.display());
    }
    check_output(output)
}

/// Checks an output path before any work: a file name in a directory that exists.
fn check_output(output: &std::path::Path) -> anyhow::Result<()> {
    if output.is_dir() {
        anyhow::bail!(
            "output {} is a directory; give a file name",
            output.display()
        );
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        anyhow::bail!("output directory {} does not exist", dir.display());
    }
    Ok(())
}

/// Reader options with `--max-basket-size`, when given.
fn read_options(max_basket_size: Option<u64>) -> evtc_format::ReadOptions {
    let options = evtc_format::ReadOptions::default();
    match max_basket_size {
        Some(bytes) => options.max_basket_bytes(bytes),
        None => options,
    }
}

/// What the command line offers for an error: the flag that gets past it.
fn hint(e: &anyhow::Error) -> Option<&'static str> {
    e.chain().find_map(|cause| {
        if let Some(
            evtc_tools::Error::Unsupported(_) | evtc_tools::Error::UnreadableBranch { .. },
        ) = cause.downcast_ref()
        {
            return Some("pass --skip-unsupported to convert the other branches");
        }
        if let Some(evtc_tools::Error::RootOutputUnsaid { .. }) = cause.downcast_ref() {
            return Some("pass --to rntuple or --to ttree, or --to evtc");
        }
        // A format error, alone or as a conversion's (which displays it as its own), or in
        // one of several files (a chain's).
        let mut format = cause.downcast_ref().or(match cause.downcast_ref() {
            Some(evtc_tools::Error::Format(e)) => Some(e),
            _ => None,
        });
        while let Some(evtc_format::Error::InFile { source, .. }) = format {
            format = Some(&**source);
        }
        if let Some(evtc_format::Error::OutputExists { .. }) = format {
            return Some("pass --force (-f) to replace it");
        }
        let too_large = matches!(format, Some(evtc_format::Error::BasketTooLarge { .. }))
            || matches!(
                cause.downcast_ref(),
                Some(evtc_root::Error::BasketTooLarge { .. })
            );
        too_large.then_some("--max-basket-size raises the limit for a trusted file")
    })
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    let broken = Some(std::io::ErrorKind::BrokenPipe);
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().map(std::io::Error::kind) == broken
            || c.downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == broken
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use evtc_tools::{Jobs, SETTINGS};

    /// The commands that take settings, with their job.
    const COMMANDS: [(&str, Jobs); 4] = [
        ("convert", Jobs::CONVERT),
        ("merge", Jobs::MERGE),
        ("skim", Jobs::SKIM),
        ("add-columns", Jobs::ADD_COLUMNS),
    ];

    #[test]
    fn every_command_takes_its_jobs_settings_under_their_names() {
        let cli = super::Cli::command();
        for (command, job) in COMMANDS {
            let sub = cli.find_subcommand(command).expect(command);
            for s in SETTINGS {
                let long = s.long();
                let arg = sub
                    .get_arguments()
                    .find(|a| a.get_long() == Some(long.as_str()));
                assert_eq!(
                    arg.is_some(),
                    s.jobs.contains(job),
                    "evtc {command} --{long} (setting {})",
                    s.name
                );
                if let (Some(arg), Some((_, short))) = (arg, s.flag) {
                    assert_eq!(arg.get_short(), short, "evtc {command} --{long}");
                }
            }
        }
    }

    /// The row of docs/cli.md's settings table of each setting, from the library's table.
    fn rows() -> Vec<String> {
        SETTINGS
            .iter()
            .map(|s| {
                let jobs: Vec<String> = s.jobs.names().map(|j| j.replace('_', "-")).collect();
                let jobs = if s.jobs == Jobs::ALL {
                    "all".to_owned()
                } else {
                    jobs.join(", ")
                };
                let option = match s.flag {
                    Some((_, Some(short))) => format!("`-{short}`, `--{}`", s.long()),
                    _ => format!("`--{}`", s.long()),
                };
                let default = s
                    .default_value()
                    .map_or_else(String::new, |d| format!("`{d}`"));
                let old: Vec<String> = s.aliases.iter().map(|a| format!("`{a}`")).collect();
                format!(
                    "| `{}` | {option} | {} | {default} | {jobs} | {} |",
                    s.name,
                    s.placeholder.replace('|', "\\|"),
                    old.join(", ")
                )
            })
            .collect()
    }

    #[test]
    fn the_command_docs_show_every_setting_as_the_library_defines_it() {
        let docs = include_str!("../../../docs/cli.md");
        let table: Vec<&str> = docs
            .lines()
            .skip_while(|l| !l.starts_with("| setting | option |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .collect();
        assert_eq!(
            table,
            rows(),
            "docs/cli.md's settings table is not the library's (its rows:\n{})",
            rows().join("\n")
        );
    }
}
