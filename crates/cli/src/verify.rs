//! `evtc verify FILE`: structure and checksums; `--deep` also decodes every basket.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use evtc_format::{FileReader, LocalFile, ReadAt, scan_records, scan_records_until};

/// Arguments of `evtc verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file to check.
    file: PathBuf,
    /// Also decompress every basket and check decoded sizes and entry boundaries.
    #[arg(long)]
    deep: bool,
    /// Largest uncompressed basket to accept (default 256MiB); raise it for trusted files.
    #[arg(long, value_name = "SIZE", value_parser = evtc_format::size::parse)]
    max_basket_size: Option<u64>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let options = crate::read_options(args.max_basket_size);
    let reader = match FileReader::open_with(&args.file, options) {
        Ok(r) => r,
        Err(e) => {
            writeln!(out, "{}: FAILED: {e}", args.file.display())?;
            if let Some(hint) = recover_hint(&args.file) {
                writeln!(out, "{hint}")?;
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    // Every record's header and body checksum, those no index points to (tree schemas) too.
    let source = LocalFile::open(&args.file)?;
    // The version readers read: the whole file, or less after an interrupted update.
    let committed = reader.committed_len();
    let scan = scan_records_until(&source, committed)?;
    let records = scan.records;
    let records_end = committed - evtc_format::layout::TRAILER_LEN;
    let mut problems = 0usize;
    if let Some(tail) = source.len().checked_sub(committed).filter(|&t| t > 0) {
        writeln!(
            out,
            "note: the last {tail} bytes are an interrupted update's, after the file's last \
             complete version (readers read that version; the next update, or `evtc recover`, \
             removes them)"
        )?;
    }
    if let Some(e) = scan.stopped {
        writeln!(out, "records: {e}")?;
        problems += 1;
    } else if scan.end != records_end {
        writeln!(
            out,
            "records: they end at byte {}, the trailer starts at {records_end}",
            scan.end
        )?;
        problems += 1;
    }
    let (mut baskets, mut branches) = (0usize, 0usize);
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
            "{}: OK ({what} of {}, {}, {}; {})",
            args.file.display(),
            crate::count(reader.trees().len() as u64, "tree", "trees"),
            crate::count(branches as u64, "branch", "branches"),
            crate::count(baskets as u64, "basket", "baskets"),
            crate::count(records as u64, "record", "records")
        )?;
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(out, "{}: FAILED: {problems} problems", args.file.display())?;
        Ok(ExitCode::FAILURE)
    }
}

/// For an evtc file that does not open (no valid trailer or footer): how many sound records a
/// scan finds, and that `evtc recover` can restore them.
pub fn recover_hint(path: &Path) -> Option<String> {
    let source = LocalFile::open(path).ok()?;
    let scan = scan_records(&source).ok()?;
    (scan.records > 0).then(|| {
        format!(
            "{} sound records in its first {} bytes: `evtc recover {} OUT` restores its complete \
             clusters",
            scan.records,
            scan.end,
            path.display()
        )
    })
}
