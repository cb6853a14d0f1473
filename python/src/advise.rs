//! `advise`: the codec advisor behind `evtc advise` (`evtc_tools::advise`), its advice as JSON.

use std::path::PathBuf;

use evtc_tools::Settings;
use evtc_tools::advise::{AdviseOptions, Goal, advise as run};
use pyo3::prelude::*;

use crate::errors;
use crate::write::{codec, glob};

/// Benches a ROOT or evtc file's branches and returns the advice as a JSON string; with `apply`,
/// also converts the file with `goal`'s recommended settings and returns the conversion's output
/// size.
#[pyfunction]
#[pyo3(signature = (path, goal="balanced", sample_bytes=16 << 20, codecs=Vec::new(), rac=true, external=false, float_tolerance=Vec::new(), trees=Vec::new(), branches=Vec::new(), threads=1, apply=None, overwrite=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn advise(
    py: Python<'_>,
    path: PathBuf,
    goal: &str,
    sample_bytes: u64,
    codecs: Vec<String>,
    rac: bool,
    external: bool,
    float_tolerance: Vec<(String, f64)>,
    trees: Vec<String>,
    branches: Vec<String>,
    threads: usize,
    apply: Option<PathBuf>,
    overwrite: bool,
) -> PyResult<(String, Option<u64>)> {
    let goal: Goal = goal.parse().map_err(errors::value)?;
    // Refused before the measurement, which may take minutes (the writer refuses it again).
    if let Some(out) = apply
        .as_ref()
        .filter(|p| !overwrite && p.symlink_metadata().is_ok())
    {
        return Err(errors::format(evtc_format::Error::OutputExists {
            path: out.clone(),
        }));
    }
    let mut options = AdviseOptions {
        sample_bytes,
        rac,
        external,
        float_tolerance: float_tolerance
            .iter()
            .map(|(g, t)| Ok((glob(g)?, *t)))
            .collect::<PyResult<_>>()?,
        trees,
        branches: branches.iter().map(|g| glob(g)).collect::<PyResult<_>>()?,
        threads: threads.max(1),
        ..AdviseOptions::default()
    };
    if !codecs.is_empty() {
        options.codecs = codecs.iter().map(|c| codec(c)).collect::<PyResult<_>>()?;
    }
    let (advice, applied) = py
        .detach(|| {
            let advice = run(&path, &options, &|_, _| {})?;
            let applied = match &apply {
                Some(out) => {
                    let base = Settings {
                        threads: options.threads,
                        overwrite,
                        ..Settings::default()
                    };
                    Some(
                        advice
                            .apply(goal, &path, out, &base, &mut |_| {})?
                            .output_bytes,
                    )
                }
                None => None,
            };
            Ok((advice, applied))
        })
        .map_err(errors::convert)?;
    let json = serde_json::to_string(&advice).map_err(errors::value)?;
    Ok((json, applied))
}
