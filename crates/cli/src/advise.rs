//! `evtc advise FILE`: the codec advisor. Measures a file's own branches under candidate settings
//! and recommends per-branch settings for a goal (`evtc_tools::advise`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use evtc_codecs::Codec;
use evtc_tools::advise::{Advice, AdviseOptions, BranchAdvice, FilePoint, Goal, advise};
use evtc_tools::{Glob, Settings};

use crate::plot;
use evtc_format::size::{self, human};

/// Arguments of `evtc advise`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An evtc or ROOT file.
    file: PathBuf,
    /// What to recommend settings for: size, read, balanced or random.
    #[arg(long, default_value = "balanced")]
    goal: Goal,
    /// Uncompressed bytes to sample over the whole file (the same share of every branch).
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = size::parse)]
    sample: u64,
    /// Codecs to try, comma-separated (default: none, lz4, lz4hc:9, zlib:1, zlib:6, zstd:1,
    /// zstd:5, zstd:9, zstd:19, lzma:1, lzma:9).
    #[arg(long, value_delimiter = ',')]
    codecs: Vec<Codec>,
    /// Do not try RAC.
    #[arg(long)]
    no_rac: bool,
    /// Also measure the external baseline: the sampled bytes cut blindly into 4 KiB - 1 MiB
    /// blocks, compressed per block (the 2017 study's SquashFS comparison).
    #[arg(long)]
    external: bool,
    /// Relative tolerance of float branches matching a glob, as GLOB=TOL (repeatable): reduced
    /// precision is tried for them, and may be recommended. Nothing lossy is tried without it.
    #[arg(long = "float-tolerance", value_name = "GLOB=TOL", value_parser = parse_rule::<f64>)]
    float_tolerance: Vec<(Glob, f64)>,
    /// Basket size of the trials.
    #[arg(long, value_name = "SIZE", value_parser = size::parse)]
    basket_size: Option<u64>,
    /// Trees to measure (repeatable; default: every tree).
    #[arg(long = "tree", value_name = "NAME")]
    trees: Vec<String>,
    /// Branches to measure, by glob (repeatable; default: every branch).
    #[arg(long = "branches", value_name = "GLOB")]
    branches: Vec<Glob>,
    /// Threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Print every setting tried for every branch.
    #[arg(long)]
    all: bool,
    /// Print the advice as JSON.
    #[arg(long)]
    json: bool,
    /// Draw file size against read speed, and per-branch ratios, into an SVG or PNG file.
    #[arg(long, value_name = "OUT.svg|OUT.png")]
    plot: Option<PathBuf>,
    /// Convert the file with the goal's recommended settings into OUT.
    #[arg(long, value_name = "OUT")]
    apply: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    force: crate::Force,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.file.exists() {
        bail!("input {} does not exist", args.file.display());
    }
    if let Some(plot) = &args.plot
        && !matches!(
            plot.extension().and_then(|e| e.to_str()),
            Some("svg" | "png")
        )
    {
        bail!(
            "--plot {}: plots are drawn as .svg or .png files",
            plot.display()
        );
    }
    // The outputs are checked before the measurement, which may take minutes.
    for output in [&args.plot, &args.apply].into_iter().flatten() {
        crate::check_output(output)?;
        args.force.check(output)?;
    }
    let threads = args.threads.unwrap_or_else(evtc_format::cores);
    let mut options = AdviseOptions {
        sample_bytes: args.sample,
        rac: !args.no_rac,
        external: args.external,
        float_tolerance: args.float_tolerance.clone(),
        trees: args.trees.clone(),
        branches: args.branches.clone(),
        threads,
        ..AdviseOptions::default()
    };
    if !args.codecs.is_empty() {
        options.codecs = args.codecs.clone();
    }
    if let Some(bytes) = args.basket_size {
        options.basket_bytes = usize::try_from(bytes).context("--basket-size is too large")?;
    }
    let bar = crate::progress_bar(
        args.quiet || args.json,
        "{spinner} trials {pos}/{len} {wide_bar} {eta}",
    );
    let advice = advise(&args.file, &options, &|done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    })
    .with_context(|| format!("measuring {}", args.file.display()))?;
    bar.finish_and_clear();
    if let Some(path) = &args.plot {
        plot::draw(&advice, args.goal, path)
            .with_context(|| format!("drawing {}", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &advice)?;
        writeln!(out)?;
    } else {
        print_advice(&mut out, &advice, args.goal, args.all, args.apply.is_some())?;
    }
    if let Some(output) = &args.apply {
        let mut base = Settings {
            threads,
            overwrite: args.force.force,
            ..Settings::default()
        };
        if let Some(limit) = options.max_basket_bytes {
            base.max_basket_size = limit;
        }
        let summary = advice
            .apply(args.goal, &args.file, output, &base, &mut |_| {})
            .with_context(|| format!("applying the advice to {}", output.display()))?;
        if !args.json {
            writeln!(
                out,
                "\napplied --goal {}: {} -> {} ({}) in {:.1} s",
                args.goal,
                args.file.display(),
                output.display(),
                human(summary.output_bytes),
                summary.seconds
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_advice(
    out: &mut dyn Write,
    advice: &Advice,
    goal: Goal,
    all: bool,
    applying: bool,
) -> std::io::Result<()> {
    let branches: usize = advice.trees.iter().map(|t| t.branches.len()).sum();
    writeln!(
        out,
        "{} ({}, {}): {} sampled from {} of {} in {:.1} s",
        advice.input,
        advice.input_format,
        human(advice.input_bytes),
        human(advice.sample_bytes),
        crate::count(branches as u64, "branch", "branches"),
        crate::count(advice.trees.len() as u64, "tree", "trees"),
        advice.seconds
    )?;
    let Some(chosen) = advice.goal(goal) else {
        return Ok(());
    };
    for (tree, choices) in advice.trees.iter().zip(&chosen.choices) {
        writeln!(
            out,
            "\ntree {}: {}, {} sampled; --goal {goal}",
            tree.name,
            crate::count(tree.entries, "entry", "entries"),
            tree.sampled_entries
        )?;
        writeln!(
            out,
            "  {:<28} {:<14} {:>10} {:<34} {:>7} {:>9} {:<28}",
            "branch", "type", "raw", "recommended", "ratio", "read MB/s", "current"
        )?;
        for (b, choice) in tree.branches.iter().zip(choices) {
            print_branch(out, b, *choice, all)?;
        }
    }
    print_file_points(out, advice)?;
    let p = &chosen.predicted;
    let versus = advice.current.as_ref().or_else(|| {
        advice
            .uniform
            .iter()
            .find(|u| u.label == Codec::DEFAULT.to_string())
    });
    if let Some(v) = versus {
        writeln!(
            out,
            "\n--goal {goal}: {} at {:.0} MB/s, against {} at {:.0} MB/s ({}){}",
            human(p.stored_bytes),
            p.read_mb_per_s,
            human(v.stored_bytes),
            v.read_mb_per_s,
            if advice.current.is_some() {
                "the file's current settings".to_owned()
            } else {
                format!("evtc's default, {}", Codec::DEFAULT)
            },
            if applying {
                ""
            } else {
                "; write it with --apply OUT"
            }
        )?;
    }
    Ok(())
}

/// One branch's row: the recommended setting (outcome `choice`) against the current one, its
/// boundaries and reduced precision, and with `all` every setting tried.
fn print_branch(
    out: &mut dyn Write,
    b: &BranchAdvice,
    choice: Option<usize>,
    all: bool,
) -> std::io::Result<()> {
    let Some(o) = choice.and_then(|i| b.outcomes.get(i)) else {
        return writeln!(
            out,
            "  {:<28} {:<14} {:>10} (no entries)",
            b.name, b.dtype, 0
        );
    };
    let current = b
        .current
        .and_then(|i| b.outcomes.get(i))
        .map_or(String::new(), |c| format!("{} ({:.2})", c.setting, c.ratio));
    writeln!(
        out,
        "  {:<28} {:<14} {:>10} {:<34} {:>7.2} {:>9.0} {:<28}",
        b.name,
        b.dtype,
        human(b.raw_bytes),
        o.setting,
        o.ratio,
        o.decompress_mb_per_s,
        current
    )?;
    if let Some(t) = &b.boundaries {
        writeln!(
            out,
            "  {:<28} boundaries: {} (counts {}, offsets {})",
            "",
            t.recommended,
            human(t.counts_bytes),
            human(t.offsets_bytes)
        )?;
    }
    if let Some(err) = b.lossy_max_error {
        let fewest = |lossy: bool| {
            b.outcomes
                .iter()
                .filter(|o| o.mantissa_bits.is_some() == lossy)
                .min_by_key(|o| o.stored_bytes)
        };
        if let (Some(l), Some(e)) = (fewest(true), fewest(false)) {
            writeln!(
                out,
                "  {:<28} reduced precision: {} at best with {} mantissa bits, {} lossless; \
                 largest relative error on the sample {err:.2e}",
                "",
                human(l.stored_bytes),
                l.mantissa_bits.unwrap_or(0),
                human(e.stored_bytes)
            )?;
        }
    }
    if all {
        for o in &b.outcomes {
            let entry = o
                .entry_read_us
                .map_or(String::new(), |us| format!(" {us:.2} us/entry"));
            writeln!(
                out,
                "      {:<36} {:>10} {:>7.2} {:>8.0} MB/s write {:>8.0} MB/s read{entry}",
                o.setting,
                human(o.stored_bytes),
                o.ratio,
                o.compress_mb_per_s,
                o.decompress_mb_per_s
            )?;
        }
    }
    Ok(())
}

/// The whole file's predicted size and speeds: of its current settings, of each codec applied
/// to every branch, of each goal and of the external baseline.
fn print_file_points(out: &mut dyn Write, advice: &Advice) -> std::io::Result<()> {
    writeln!(out, "\nwhole file (predicted from the sample):")?;
    writeln!(
        out,
        "  {:<26} {:>10} {:>7} {:>10} {:>11}",
        "settings", "size", "ratio", "read MB/s", "write MB/s"
    )?;
    let row = |out: &mut dyn Write, label: &str, p: &FilePoint| {
        writeln!(
            out,
            "  {:<26} {:>10} {:>7.2} {:>10.0} {:>11.1}",
            label,
            human(p.stored_bytes),
            p.ratio,
            p.read_mb_per_s,
            p.write_mb_per_s
        )
    };
    if let Some(current) = &advice.current {
        row(out, &current.label, current)?;
    }
    for p in &advice.uniform {
        row(out, &format!("uniform {}", p.label), p)?;
    }
    for g in &advice.goals {
        row(out, &format!("--goal {}", g.predicted.label), &g.predicted)?;
    }
    for p in &advice.external {
        row(out, &p.label, p)?;
    }
    Ok(())
}

/// Parses a per-branch rule, `GLOB=VALUE`.
fn parse_rule<T>(s: &str) -> Result<(Glob, T), String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let (glob, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not GLOB=VALUE (example: 'Jet_*=1e-4')"))?;
    Ok((
        glob.parse()?,
        value.parse().map_err(|e: T::Err| e.to_string())?,
    ))
}
