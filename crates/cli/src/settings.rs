//! The settings of a command as command-line options, made from the library's table
//! ([`evtc_tools::SETTINGS`]): every setting a job takes is the option `--name-with-dashes`
//! (a switch on by default is `--no-name`; `overwrite` is `--force`, `-f`), with the table's
//! help and default, and its old names as hidden options that still work and warn. Values are
//! parsed once, by [`Settings::set`]; a value it refuses is a usage error (exit 2).

use std::marker::PhantomData;

use clap::{Arg, ArgAction, ArgMatches, Command};
use evtc_tools::{Jobs, SETTINGS, Setting, SettingError, Settings, Shape};

/// A job whose settings a command takes.
pub trait Job {
    /// The job.
    const JOB: Jobs;
}

/// `evtc convert`.
#[derive(Debug)]
pub struct Convert;
/// `evtc merge`.
#[derive(Debug)]
pub struct Merge;
/// `evtc skim`.
#[derive(Debug)]
pub struct Skim;
/// `evtc add-columns`.
#[derive(Debug)]
pub struct AddColumns;

impl Job for Convert {
    const JOB: Jobs = Jobs::CONVERT;
}
impl Job for Merge {
    const JOB: Jobs = Jobs::MERGE;
}
impl Job for Skim {
    const JOB: Jobs = Jobs::SKIM;
}
impl Job for AddColumns {
    const JOB: Jobs = Jobs::ADD_COLUMNS;
}

/// The settings of job `J`, parsed from the command line.
#[derive(Debug)]
pub struct SettingsArgs<J> {
    /// The settings: the library's defaults, with what the command line set.
    pub settings: Settings,
    job: PhantomData<J>,
}

/// The settings job `J` takes.
fn settings_of<J: Job>() -> impl Iterator<Item = &'static Setting> {
    SETTINGS.iter().filter(|s| s.jobs.contains(J::JOB))
}

/// The option of setting `s` under `id` (its name, or an old name: hidden), `long` its
/// spelling.
fn arg(s: &'static Setting, id: &'static str, long: String, hidden: bool) -> Arg {
    let mut arg = Arg::new(id).long(long).hide(hidden);
    let mut help = s.help.trim_end_matches('.').to_owned();
    match s.shape {
        Shape::Switch => {
            arg = arg.action(ArgAction::SetTrue);
            if s.default_value().as_deref() == Some("true") {
                help.push_str(" [default: on; this option turns it off]");
            }
        }
        Shape::Value => {
            arg = arg.value_name(s.placeholder).action(ArgAction::Set);
            if let Some(bare) = s.bare {
                arg = arg.num_args(0..=1).default_missing_value(bare);
            }
            if let Some(default) = s.default_value() {
                help.push_str(&format!(" [default: {default}]"));
            }
        }
        Shape::List | Shape::Rule => {
            arg = arg.value_name(s.placeholder).action(ArgAction::Append);
        }
    }
    if let Some((_, Some(short))) = s.flag.filter(|_| !hidden) {
        arg = arg.short(short);
    }
    arg.help(help)
}

impl<J: Job> clap::Args for SettingsArgs<J> {
    fn augment_args(mut cmd: Command) -> Command {
        for s in settings_of::<J>() {
            cmd = cmd.arg(arg(s, s.name, s.long(), false));
            for &old in s.aliases {
                let dashed = old.replace('_', "-");
                let long = if s.long().starts_with("no-") {
                    format!("no-{dashed}")
                } else {
                    dashed
                };
                cmd = cmd.arg(arg(s, old, long, true));
            }
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<J: Job> clap::FromArgMatches for SettingsArgs<J> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut settings = Settings::default();
        for s in settings_of::<J>() {
            // Old names first: the setting's own name, given too, wins.
            for id in s.aliases.iter().chain(std::iter::once(&s.name)) {
                let values: Vec<String> = match s.shape {
                    Shape::Switch if matches.get_flag(id) => {
                        let on_by_default = s.default_value().as_deref() == Some("true");
                        vec![(!on_by_default).to_string()]
                    }
                    Shape::Switch => Vec::new(),
                    _ => matches
                        .get_many::<String>(id)
                        .map(|v| v.cloned().collect())
                        .unwrap_or_default(),
                };
                for value in values {
                    let renamed = settings.set(id, &value).map_err(|e| {
                        // Named as the command line spells what was given.
                        let message = match e {
                            SettingError::Invalid { reason, .. } => {
                                let given = matches.get_raw(id).is_some();
                                let flag = if *id == s.name || !given {
                                    s.long()
                                } else {
                                    id.replace('_', "-")
                                };
                                format!("--{flag} {value:?}: {reason}")
                            }
                            other => other.to_string(),
                        };
                        clap::Error::raw(clap::error::ErrorKind::ValueValidation, message)
                    })?;
                    if let Some(renamed) = renamed {
                        eprintln!(
                            "evtc: warning: --{} is now --{}",
                            renamed.old.replace('_', "-"),
                            s.long()
                        );
                    }
                }
            }
        }
        Ok(SettingsArgs {
            settings,
            job: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}
