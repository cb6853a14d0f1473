//! `evtc convert INPUT OUTPUT`.

use std::path::PathBuf;
use std::process::ExitCode;

use evtc_codecs::{Codec, Quantization};
use evtc_convert::{
    BoundaryChoice, BranchSettings, ConvertOptions, Glob, PreconditionChoice, convert,
    parse_index_keys,
};
use evtc_format::size;
use evtc_format::{ClusterSize, RacMode};

/// Arguments of `evtc convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A ROOT file (its TTrees are imported) or an evtc file (re-compressed).
    input: PathBuf,
    /// The evtc file to write; it appears only when the conversion succeeds.
    output: PathBuf,
    #[command(flatten)]
    write: WriteArgs,
    /// Trees to convert (repeatable; default: every tree).
    #[arg(long = "tree", value_name = "NAME")]
    trees: Vec<String>,
    /// Branches to keep, by glob (repeatable; default: every branch).
    #[arg(long = "branches", value_name = "GLOB")]
    branches: Vec<Glob>,
    /// Skip branches the ROOT reader does not support instead of failing.
    #[arg(long)]
    skip_unsupported: bool,
    #[command(flatten)]
    job: JobArgs,
    /// On Ctrl-C or SIGTERM, keep what was written so far as OUTPUT.partial (for `evtc
    /// recover`) instead of removing it.
    #[arg(long)]
    keep_partial: bool,
    /// Give every tree an event index keyed by two integer branches (default: the input
    /// tree's index, a ROOT TTreeIndex on two branches or an evtc index, if it has one).
    #[arg(long, value_name = "MAJOR,MINOR", value_parser = parse_index_keys)]
    index: Option<(String, String)>,
    /// Append to OUTPUT, an existing evtc file, in place: entries of a tree it has go after
    /// the tree's (same branches and types; written as its branches are), other trees are
    /// added. Nothing in it is rewritten; a failure or interruption leaves it as it was.
    #[arg(long, conflicts_with_all = ["keep_partial", "force"])]
    append: bool,
    #[command(flatten)]
    force: crate::Force,
}

/// The output's codec and layout settings, which `evtc convert` and `evtc merge --recompress`
/// share.
#[derive(Debug, clap::Args)]
pub struct WriteArgs {
    /// Codec of every branch: none, lz4, lz4hc:N, zlib:N, lzma:N, zstd:N, or a ROOT setting (505).
    #[arg(long, default_value = "zstd:5")]
    codec: Codec,
    /// Codec of the branches matching a glob, as GLOB=SPEC (repeatable; the last match wins).
    #[arg(long = "branch-codec", value_name = "GLOB=SPEC", value_parser = parse_rule::<Codec>)]
    branch_codec: Vec<(Glob, Codec)>,
    /// Preconditioner of the values: auto, none, shuffle, bitshuffle, delta, delta-shuffle, for,
    /// delta-for, delta-varint, zigzag-shuffle, sparse, runs or bitplanes.
    #[arg(long, default_value = "auto")]
    precondition: PreconditionChoice,
    /// Preconditioner of the branches matching a glob, as GLOB=NAME (repeatable).
    #[arg(long = "branch-precondition", value_name = "GLOB=NAME", value_parser = parse_rule::<PreconditionChoice>)]
    branch_precondition: Vec<(Glob, PreconditionChoice)>,
    /// RAC of the branches matching a glob, as GLOB=on|off|auto (repeatable).
    #[arg(long = "branch-rac", value_name = "GLOB=MODE", value_parser = parse_rule::<RacMode>)]
    branch_rac: Vec<(Glob, RacMode)>,
    /// Lossy: float branches matching a glob keep only this many mantissa bits, as GLOB=BITS
    /// (repeatable; f32 1-22, f64 1-51; each value moves by at most 2^-(BITS+1) of itself).
    #[arg(long = "float-precision", value_name = "GLOB=BITS", value_parser = parse_rule::<u32>)]
    float_precision: Vec<(Glob, u32)>,
    /// Lossy: float branches matching a glob are quantized into a range with 2^BITS values, as
    /// GLOB=MIN:MAX:BITS (repeatable; each value moves by at most half a step,
    /// (MAX-MIN)/(2^BITS-1)/2; a value outside the range fails the conversion).
    #[arg(long = "float-quantize", value_name = "GLOB=MIN:MAX:BITS", value_parser = parse_rule::<Quantization>)]
    float_quantize: Vec<(Glob, Quantization)>,
    /// Entry boundaries of variable-length branches: offsets, counts or none (default: counts;
    /// none with a counter, except in RAC branches, whose units then store their entries' sizes).
    #[arg(long, value_name = "KIND", default_value = "auto")]
    offsets: BoundaryChoice,
    /// Random-access compression: per-entry units with a seek table (off, on or auto; the flag
    /// alone is on).
    #[arg(long, value_name = "MODE", default_value = "off", num_args = 0..=1, default_missing_value = "on")]
    rac: RacMode,
    /// Minimum uncompressed bytes per RAC unit (default 2KiB, 8KiB under LZMA; 1 = one entry per
    /// unit).
    #[arg(long, value_name = "SIZE", value_parser = size::parse)]
    rac_unit: Option<u64>,
    /// Do not train per-branch dictionaries for RAC branches.
    #[arg(long)]
    no_rac_dictionary: bool,
    /// Cluster size: entries (`1000`) or uncompressed bytes (`30MB`), like ROOT's AutoFlush.
    #[arg(long, value_name = "N|SIZE")]
    autoflush: Option<ClusterSize>,
    /// Target uncompressed bytes per basket (default 256KiB, 1MiB for LZMA branches).
    #[arg(long, value_name = "SIZE", value_parser = size::parse)]
    basket_size: Option<u64>,
    /// Write one basket per branch per cluster.
    #[arg(long)]
    flush_at_cluster: bool,
    /// Do not wait for the output to reach the disk (no fsync) before giving it its name: for
    /// scratch files. After a system crash such an output may be incomplete under its name (a
    /// killed evtc still leaves nothing behind).
    #[arg(long)]
    no_sync: bool,
}

/// What every command that writes a file (`convert`, `merge`, `skim`, `add-columns`) takes
/// besides its codec options: threads, reporting and the input readers' limit.
#[derive(Debug, clap::Args)]
pub struct JobArgs {
    /// Threads for reading, converting and compressing (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar and no summary.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// Largest uncompressed input basket to decode (default 256MiB); raise it for trusted files.
    #[arg(long, value_name = "SIZE", value_parser = size::parse)]
    max_basket_size: Option<u64>,
}

impl JobArgs {
    /// `options` with these threads (all cores by default) and the readers' basket limit.
    pub(crate) fn apply(&self, options: ConvertOptions) -> ConvertOptions {
        let threads = self
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        options
            .threads(threads)
            .max_basket_bytes(self.max_basket_size)
    }

    /// Whether the command prints no progress (asked to be quiet, or to print JSON).
    pub(crate) fn silent(&self) -> bool {
        self.quiet || self.json
    }
}

impl WriteArgs {
    /// `options` with these settings (codec, layout, per-branch rules).
    pub(crate) fn apply(&self, mut options: ConvertOptions) -> ConvertOptions {
        options = options
            .codec(self.codec)
            .rac(self.rac)
            .rac_dictionary(!self.no_rac_dictionary)
            .flush_at_cluster(self.flush_at_cluster)
            .sync(!self.no_sync)
            .precondition(self.precondition)
            .boundaries(self.offsets);
        if let Some(bytes) = self.rac_unit {
            options = options.rac_unit_bytes(bytes as usize);
        }
        if let Some(size) = self.autoflush {
            options = options.cluster_size(size);
        }
        if let Some(bytes) = self.basket_size {
            options = options.basket_size(bytes as usize);
        }
        for (glob, settings) in self.branch_settings() {
            options = options.branch_rule(glob, settings);
        }
        options
    }
}

/// Parses a per-branch rule, `GLOB=VALUE`.
pub(crate) fn parse_rule<T>(s: &str) -> Result<(Glob, T), String>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    let (glob, value) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not GLOB=VALUE (example: 'Muon_*=lz4')"))?;
    Ok((
        glob.parse()?,
        value.parse().map_err(|e: T::Err| e.to_string())?,
    ))
}

impl WriteArgs {
    /// The per-branch rules of the command line, in the order of their kinds (each field is
    /// decided by the last rule of its own kind that matches).
    fn branch_settings(&self) -> Vec<(Glob, BranchSettings)> {
        /// Each `GLOB=VALUE` rule of one flag as the setting `set` makes of its value.
        fn rules<'a, T: Copy>(
            pairs: &'a [(Glob, T)],
            set: impl Fn(&mut BranchSettings, T) + 'a,
        ) -> impl Iterator<Item = (Glob, BranchSettings)> + 'a {
            pairs.iter().map(move |(glob, value)| {
                let mut settings = BranchSettings::default();
                set(&mut settings, *value);
                (glob.clone(), settings)
            })
        }
        rules(&self.branch_codec, |s, c| s.codec = Some(c))
            .chain(rules(&self.branch_precondition, |s, p| {
                s.precondition = Some(p)
            }))
            .chain(rules(&self.branch_rac, |s, m| s.rac = Some(m)))
            .chain(rules(&self.float_precision, |s, b| {
                s.mantissa_bits = Some(b)
            }))
            .chain(rules(&self.float_quantize, |s, q| s.quantize = Some(q)))
            .collect()
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    crate::check_paths(&args.input, &args.output)?;
    if !args.append {
        args.force.check(&args.output)?;
    }
    let mut options = args.write.apply(
        args.job
            .apply(ConvertOptions::default())
            .overwrite(args.force.force)
            .trees(args.trees.clone())
            .branches(args.branches.clone())
            .skip_unsupported(args.skip_unsupported)
            .index(args.index.clone())
            .append(args.append),
    );
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
        Err(evtc_convert::Error::Interrupted { kept }) => {
            bar.finish_and_clear();
            let hint = kept.map_or_else(
                || {
                    if args.append {
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
            if args.append { "appended" } else { "converted" },
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
                "  tree {}: {} entries, {} branches{index}",
                t.name, t.entries, t.branches
            )?;
            if let Some(why) = &t.index_dropped {
                writeln!(out, "  tree {}: {why}", t.name)?;
            }
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
