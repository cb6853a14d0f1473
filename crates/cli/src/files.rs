//! File arguments that name several files: globs in the last path component (`data/*.evtc`),
//! expanded here so that they work quoted and on every shell.

use std::path::PathBuf;

use anyhow::{Context, bail};
use evtc_tools::Glob;

/// Every file `args` name, in order: an argument that is a file stays as it is; one whose file
/// name holds `*` or `?` is the sorted files of its directory that match it.
///
/// # Errors
/// A pattern that matches no file, or whose directory cannot be listed.
pub fn expand(args: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for arg in args {
        let name = arg.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if arg.exists() || !(name.contains('*') || name.contains('?')) {
            out.push(arg.clone());
            continue;
        }
        let pattern: Glob = name.parse().map_err(anyhow::Error::msg)?;
        let dir = match arg.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut matched: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("listing {} for {}", dir.display(), arg.display()))?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| e.file_name().to_str().is_some_and(|n| pattern.matches(n)))
            .map(|e| arg.with_file_name(e.file_name()))
            .collect();
        if matched.is_empty() {
            bail!("{}: the pattern matches no file", arg.display());
        }
        matched.sort();
        out.extend(matched);
    }
    Ok(out)
}
