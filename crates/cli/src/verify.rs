//! `evtc verify FILE`: structure and checksums; `--deep` also decodes every basket.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use evtc_format::FileReader;

/// Arguments of `evtc verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file to check.
    file: PathBuf,
    /// Also decompress every basket and check decoded sizes and entry boundaries.
    #[arg(long)]
    deep: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let reader = match FileReader::open(&args.file) {
        Ok(r) => r,
        Err(e) => {
            writeln!(out, "{}: FAILED: {e}", args.file.display())?;
            return Ok(ExitCode::FAILURE);
        }
    };
    let (mut problems, mut baskets, mut branches) = (0usize, 0usize, 0usize);
    for meta in reader.trees() {
        let tree = match reader.tree(&meta.name) {
            Ok(t) => t,
            Err(e) => {
                writeln!(out, "tree {}: {e}", meta.name)?;
                problems += 1;
                continue;
            }
        };
        for b in &meta.branches {
            branches += 1;
            let result = tree.branch(&b.name).and_then(|branch| {
                let n = branch.check_baskets()?;
                if args.deep {
                    branch.decode_all()?;
                }
                Ok(n)
            });
            match result {
                Ok(n) => baskets += n,
                Err(e) => {
                    writeln!(out, "tree {} branch {}: {e}", meta.name, b.name)?;
                    problems += 1;
                }
            }
        }
    }
    let what = if args.deep {
        "checksums and contents"
    } else {
        "structure and checksums"
    };
    if problems == 0 {
        writeln!(
            out,
            "{}: OK ({what} of {} trees, {branches} branches, {baskets} baskets)",
            args.file.display(),
            reader.trees().len()
        )?;
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(out, "{}: FAILED: {problems} problems", args.file.display())?;
        Ok(ExitCode::FAILURE)
    }
}
