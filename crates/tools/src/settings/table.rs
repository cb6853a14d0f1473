//! The table of settings ([`SETTINGS`]): each row's names, help, jobs and parser.

use evtc_codecs::Codec;
use evtc_format::{ClusterSize, RacMode, size};

use super::{Jobs, Setting, Settings, Shape};
use crate::options::{BranchSettings, parse_index_keys};

/// The codec whose defaults help texts show beside the default codec's.
fn lzma() -> Codec {
    Codec::lzma(9).unwrap_or(Codec::DEFAULT)
}

/// A switch's value.
pub(super) fn switch(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

/// A value through its `FromStr`, the error as text.
fn parse<T: std::str::FromStr>(value: &str) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    value.trim().parse().map_err(|e: T::Err| e.to_string())
}

/// A RAC mode, also as a switch (`true` is `on`).
fn rac_mode(value: &str) -> Result<RacMode, String> {
    parse(value).or_else(|e| {
        switch(value)
            .map(|on| if on { RacMode::On } else { RacMode::Off })
            .map_err(|_| e)
    })
}

/// A size (`256KiB`).
fn bytes(value: &str) -> Result<u64, String> {
    size::parse(value)
}

/// A per-branch rule, `GLOB=VALUE`, of one field.
fn rule(
    settings: &mut Settings,
    value: &str,
    set: impl FnOnce(&mut BranchSettings, &str) -> Result<(), String>,
) -> Result<(), String> {
    let (glob, value) = value
        .split_once('=')
        .ok_or_else(|| "not GLOB=VALUE (example: 'Muon_*=lz4')".to_owned())?;
    let mut branch = BranchSettings::default();
    set(&mut branch, value)?;
    settings.branch_rules.push((parse(glob)?, branch));
    Ok(())
}

/// The values of one field of the per-branch rules, for [`Setting`]'s `show` (rules start
/// empty: no default).
fn no_default(_: &Settings) -> Option<String> {
    None
}

/// Every setting, in the order help texts list them.
pub static SETTINGS: &[Setting] = &[
    Setting {
        name: "codec",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "CODEC",
        example: "lz4",
        help: "Codec of every branch: none, lz4, lz4hc:N, zlib:N, lzma:N, zstd:N, or a ROOT setting (505).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| parse(v).map(|v| s.codec = Some(v)),
        show: |s| Some(s.codec.unwrap_or(Codec::DEFAULT).to_string()),
    },
    Setting {
        name: "branch_codec",
        aliases: &["branch_codecs"],
        shape: Shape::Rule,
        placeholder: "GLOB=CODEC",
        example: "Muon_*=zstd:9",
        help: "Codec of the branches a glob matches (repeatable; the last match wins).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| rule(s, v, |b, v| parse(v).map(|v| b.codec = Some(v))),
        show: no_default,
    },
    Setting {
        name: "precondition",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "NAME",
        example: "delta",
        help: "Preconditioner of the values: auto, none, shuffle, bitshuffle, delta, delta-shuffle, for, delta-for, delta-varint, zigzag-shuffle, sparse, runs or bitplanes.",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| parse(v).map(|v| s.precondition = v),
        show: |s| Some(s.precondition.to_string()),
    },
    Setting {
        name: "branch_precondition",
        aliases: &["branch_preconditions"],
        shape: Shape::Rule,
        placeholder: "GLOB=NAME",
        example: "event=delta",
        help: "Preconditioner of the branches a glob matches (repeatable).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| rule(s, v, |b, v| parse(v).map(|v| b.precondition = Some(v))),
        show: no_default,
    },
    Setting {
        name: "rac",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "MODE",
        example: "auto",
        help: "Random-access compression: per-entry units with a seek table (off, on or auto; the option alone is on).",
        jobs: Jobs::ALL,
        flag: None,
        bare: Some("on"),
        set: |s, v| rac_mode(v).map(|v| s.rac = v),
        show: |s| Some(s.rac.to_string()),
    },
    Setting {
        name: "branch_rac",
        aliases: &[],
        shape: Shape::Rule,
        placeholder: "GLOB=MODE",
        example: "Jet_*=on",
        help: "Random-access compression of the branches a glob matches: on, off or auto (repeatable).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| rule(s, v, |b, v| rac_mode(v).map(|v| b.rac = Some(v))),
        show: no_default,
    },
    Setting {
        name: "rac_unit",
        aliases: &["rac_unit_bytes"],
        shape: Shape::Value,
        placeholder: "SIZE",
        example: "4KiB",
        help: "Least uncompressed bytes of a RAC unit (1: one entry per unit).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| bytes(v).map(|v| s.rac_unit = Some(v)),
        show: |s| {
            let write = s.write_options();
            Some(match s.rac_unit {
                Some(n) => n.to_string(),
                None => format!(
                    "{}, {} under lzma",
                    size::spell(write.rac_unit_bytes_for(Codec::DEFAULT) as u64),
                    size::spell(write.rac_unit_bytes_for(lzma()) as u64)
                ),
            })
        },
    },
    Setting {
        name: "rac_dictionary",
        aliases: &[],
        shape: Shape::Switch,
        placeholder: "BOOL",
        example: "false",
        help: "Train a dictionary for RAC branches where it pays (off: never).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| switch(v).map(|v| s.rac_dictionary = v),
        show: |s| Some(s.rac_dictionary.to_string()),
    },
    Setting {
        name: "boundaries",
        aliases: &["offsets"],
        shape: Shape::Value,
        placeholder: "KIND",
        example: "counts",
        help: "Entry boundaries of variable-length branches: auto (counts; none with a counter, except in RAC branches, whose units then store their entries' sizes), offsets, counts or none.",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| parse(v).map(|v| s.boundaries = v),
        show: |s| Some(s.boundaries.to_string()),
    },
    Setting {
        name: "float_precision",
        aliases: &[],
        shape: Shape::Rule,
        placeholder: "GLOB=BITS",
        example: "Jet_*=12",
        help: "Lossy: float branches a glob matches keep only this many mantissa bits (repeatable; f32 1-22, f64 1-51; each value moves by at most 2^-(BITS+1) of itself).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| rule(s, v, |b, v| parse(v).map(|v| b.mantissa_bits = Some(v))),
        show: no_default,
    },
    Setting {
        name: "float_quantize",
        aliases: &[],
        shape: Shape::Rule,
        placeholder: "GLOB=MIN:MAX:BITS",
        example: "Muon_eta=-3:3:12",
        help: "Lossy: float branches a glob matches are quantized into a range with 2^BITS values (repeatable; each value moves by at most half a step; a value outside the range fails the job).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| rule(s, v, |b, v| parse(v).map(|v| b.quantize = Some(v))),
        show: no_default,
    },
    Setting {
        name: "cluster_size",
        aliases: &["autoflush", "cluster_entries"],
        shape: Shape::Value,
        placeholder: "N|SIZE",
        example: "1000",
        help: "Cluster size, as ROOT's AutoFlush: entries (1000) or uncompressed bytes (30MB).",
        jobs: Jobs::NEW_TREES,
        flag: None,
        bare: None,
        set: |s, v| parse(v).map(|v| s.cluster_size = Some(v)),
        show: |s| {
            Some(match s.cluster_size {
                Some(ClusterSize::Entries(n)) => n.to_string(),
                Some(ClusterSize::Bytes(n)) => size::spell(n),
                None => format!(
                    "{}, 128MiB under ttree, 128MiB compressed under rntuple",
                    match evtc_format::DEFAULT_CLUSTER_SIZE {
                        ClusterSize::Entries(n) => n.to_string(),
                        ClusterSize::Bytes(n) => size::spell(n),
                    }
                ),
            })
        },
    },
    Setting {
        name: "basket_size",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "SIZE",
        example: "128KiB",
        help: "Target uncompressed bytes of a basket.",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| bytes(v).map(|v| s.basket_size = Some(v)),
        show: |s| {
            let write = s.write_options();
            Some(match s.basket_size {
                Some(n) => n.to_string(),
                None => format!(
                    "{}, {} under lzma, {} under ttree",
                    size::spell(write.basket_size_for(Codec::DEFAULT) as u64),
                    size::spell(write.basket_size_for(lzma()) as u64),
                    size::spell(crate::export::TTREE_BASKET_BYTES as u64)
                ),
            })
        },
    },
    Setting {
        name: "flush_at_cluster",
        aliases: &[],
        shape: Shape::Switch,
        placeholder: "BOOL",
        example: "true",
        help: "Write one basket per branch per cluster.",
        jobs: Jobs::NEW_TREES,
        flag: None,
        bare: None,
        set: |s, v| switch(v).map(|v| s.flush_at_cluster = v),
        show: |s| Some(s.flush_at_cluster.to_string()),
    },
    Setting {
        name: "sync",
        aliases: &[],
        shape: Shape::Switch,
        placeholder: "BOOL",
        example: "false",
        help: "Wait for the output to reach the disk (fsync) before it gets its name; off for scratch files (after a system crash such an output may be incomplete under its name; a killed job still leaves nothing).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| switch(v).map(|v| s.sync = v),
        show: |s| Some(s.sync.to_string()),
    },
    Setting {
        name: "threads",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "N",
        example: "2",
        help: "Threads that read the input and compress the output (default: every core).",
        jobs: Jobs::ALL,
        flag: None,
        bare: None,
        set: |s, v| {
            s.threads = parse::<usize>(v)?;
            if s.threads == 0 {
                return Err("at least 1 thread".into());
            }
            Ok(())
        },
        show: |_| None,
    },
    Setting {
        name: "overwrite",
        aliases: &[],
        shape: Shape::Switch,
        placeholder: "BOOL",
        example: "true",
        help: "Replace the output if it exists (without it, an existing output is an error and stays as it is).",
        jobs: Jobs::CONVERT
            .with(Jobs::MERGE)
            .with(Jobs::SKIM)
            .with(Jobs::WRITER),
        flag: Some(("force", Some('f'))),
        bare: None,
        set: |s, v| switch(v).map(|v| s.overwrite = v),
        show: |s| Some(s.overwrite.to_string()),
    },
    Setting {
        name: "max_basket_size",
        aliases: &["max_basket_bytes"],
        shape: Shape::Value,
        placeholder: "SIZE",
        example: "1GiB",
        help: "Largest uncompressed input basket to decode; raise it for trusted files.",
        jobs: Jobs::READING,
        flag: None,
        bare: None,
        set: |s, v| bytes(v).map(|v| s.max_basket_size = v),
        show: |s| Some(size::spell(s.max_basket_size)),
    },
    Setting {
        name: "tree",
        aliases: &["trees"],
        shape: Shape::List,
        placeholder: "NAME",
        example: "Events",
        help: "Trees to read (repeatable; default: every tree, for skim and add-columns the only one).",
        jobs: Jobs::CONVERT.with(Jobs::SKIM).with(Jobs::ADD_COLUMNS),
        flag: None,
        bare: None,
        set: |s, v| {
            s.trees.push(v.to_owned());
            Ok(())
        },
        show: no_default,
    },
    Setting {
        name: "branches",
        aliases: &[],
        shape: Shape::List,
        placeholder: "GLOB",
        example: "Muon_*",
        help: "Branches to keep, by glob (repeatable; default: every branch); the counters of kept branches are kept too.",
        jobs: Jobs::CONVERT.with(Jobs::SKIM).with(Jobs::ADD_COLUMNS),
        flag: None,
        bare: None,
        set: |s, v| parse(v).map(|g| s.branches.push(g)),
        show: no_default,
    },
    Setting {
        name: "skip_unsupported",
        aliases: &[],
        shape: Shape::Switch,
        placeholder: "BOOL",
        example: "true",
        help: "Leave out the ROOT branches the reader does not support, or whose data cannot be read (a damaged basket), instead of failing.",
        jobs: Jobs::CONVERT.with(Jobs::MERGE),
        flag: None,
        bare: None,
        set: |s, v| switch(v).map(|v| s.skip_unsupported = v),
        show: |s| Some(s.skip_unsupported.to_string()),
    },
    Setting {
        name: "index",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "MAJOR,MINOR",
        example: "run,event",
        help: "Give every tree an event index keyed by two integer branches (default: the input tree's index, a ROOT TTreeIndex on two branches or an evtc index, if it has one).",
        jobs: Jobs::CONVERT,
        flag: None,
        bare: None,
        set: |s, v| parse_index_keys(v).map(|v| s.index = Some(v)),
        show: no_default,
    },
    Setting {
        name: "to",
        aliases: &[],
        shape: Shape::Value,
        placeholder: "FORMAT",
        example: "rntuple",
        help: "The file to write: evtc, rntuple or ttree (a ROOT file of RNTuples or TTrees, read by ROOT 6.34 and later and uproot); an output named *.root needs it.",
        jobs: Jobs::CONVERT.with(Jobs::WRITER),
        flag: None,
        bare: None,
        set: |s, v| parse(v).map(|v| s.to = Some(v)),
        show: no_default,
    },
    Setting {
        name: "append",
        aliases: &[],
        shape: Shape::Switch,
        placeholder: "BOOL",
        example: "true",
        help: "Append to the output, an existing evtc file, in place: entries of a tree it has go after the tree's (same branches and types), other trees are added; nothing in it is rewritten, and a failure leaves it as it was.",
        jobs: Jobs::CONVERT,
        flag: None,
        bare: None,
        set: |s, v| switch(v).map(|v| s.append = v),
        show: |s| Some(s.append.to_string()),
    },
];
