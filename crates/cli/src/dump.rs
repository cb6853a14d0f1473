//! `evtc dump FILE`: entries as a table, JSON or CSV.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use evtc_format::size;
use evtc_format::{DataType, FileReader, Value};

/// Arguments of `evtc dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file.
    file: PathBuf,
    /// The tree (default: the file's only tree, or its first).
    #[arg(long)]
    tree: Option<String>,
    /// Branches to print, comma-separated or repeated (default: all).
    #[arg(long, value_delimiter = ',')]
    branches: Vec<String>,
    /// Entries to print, half-open `START..END` (`100..120`, `..10`, `5..`); default all.
    #[arg(long, value_parser = parse_range)]
    entries: Option<(Option<u64>, Option<u64>)>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Largest uncompressed basket to decode (default 256MiB); raise it for trusted files.
    #[arg(long, value_name = "SIZE", value_parser = size::parse)]
    max_basket_size: Option<u64>,
}

/// How `evtc dump` prints entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// Aligned columns.
    Table,
    /// A JSON array of one object per entry.
    Json,
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
}

fn parse_range(s: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?} is not a range like 100..120"))?;
    let num = |x: &str| -> Result<Option<u64>, String> {
        if x.is_empty() {
            Ok(None)
        } else {
            x.parse()
                .map(Some)
                .map_err(|_| format!("{x:?} in {s:?} is not an entry number"))
        }
    };
    Ok((num(a)?, num(b)?))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let reader = FileReader::open_with(&args.file, crate::read_options(args.max_basket_size))
        .with_context(|| format!("reading {}", args.file.display()))?;
    let name = match &args.tree {
        Some(t) => t.clone(),
        None => match reader.trees().first() {
            Some(t) => t.name.clone(),
            None => bail!("{} holds no trees", args.file.display()),
        },
    };
    let tree = reader.tree(&name)?;
    let names: Vec<String> = if args.branches.is_empty() {
        tree.branches().iter().map(|b| b.name.clone()).collect()
    } else {
        args.branches.clone()
    };
    let dtypes: Vec<DataType> = names
        .iter()
        .map(|n| tree.branch(n).map(|b| b.meta().dtype))
        .collect::<Result<_, _>>()?;
    let entries = tree.entries();
    let range: Range<u64> = match args.entries {
        Some((a, b)) => a.unwrap_or(0)..b.unwrap_or(entries),
        None => 0..entries,
    };
    if range.start > range.end || range.end > entries {
        bail!(
            "--entries {}..{} is outside tree {name}'s {entries} entries",
            range.start,
            range.end
        );
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut rows = tree.rows(&refs)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => {
            write!(out, "[")?;
            for (i, e) in range.enumerate() {
                let row = rows.get(e)?;
                let object: serde_json::Map<String, serde_json::Value> = names
                    .iter()
                    .zip(&row)
                    .zip(&dtypes)
                    .map(|((n, v), t)| (n.clone(), json(v, *t)))
                    .collect();
                let sep = if i == 0 { "\n" } else { ",\n" };
                write!(out, "{sep}  {}", serde_json::Value::Object(object))?;
            }
            writeln!(out, "\n]")?;
        }
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(&mut out);
            writer
                .write_record(std::iter::once("entry").chain(names.iter().map(String::as_str)))?;
            for e in range {
                let row = rows.get(e)?;
                let cells = row.iter().zip(&dtypes).map(|(v, t)| text(v, *t));
                writer.write_record(std::iter::once(e.to_string()).chain(cells))?;
            }
            writer.flush()?;
        }
        Format::Table => {
            let mut table = vec![
                std::iter::once("entry".to_owned())
                    .chain(names.iter().cloned())
                    .collect::<Vec<_>>(),
            ];
            for e in range {
                let row = rows.get(e)?;
                table.push(
                    std::iter::once(e.to_string())
                        .chain(row.iter().zip(&dtypes).map(|(v, t)| text(v, *t)))
                        .collect(),
                );
            }
            let widths: Vec<usize> = (0..table[0].len())
                .map(|c| {
                    table
                        .iter()
                        .map(|r| r[c].chars().count())
                        .max()
                        .unwrap_or(0)
                        .min(60)
                })
                .collect();
            for r in &table {
                let line: Vec<String> = r
                    .iter()
                    .zip(&widths)
                    .map(|(cell, w)| format!("{cell:w$}"))
                    .collect();
                writeln!(out, "{}", line.join("  ").trim_end())?;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn is_string(t: DataType) -> bool {
    matches!(t, DataType::Bytes | DataType::Utf8)
}

fn string_of(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::List(items) => {
            let bytes: Vec<u8> = items
                .iter()
                .map(|i| if let Value::U8(b) = i { *b } else { b'?' })
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        }
        other => text(other, DataType::Scalar(evtc_format::ScalarType::U8)),
    }
}

/// A value as JSON: numbers, booleans, arrays, strings (NaN and infinities as [`float`] spells
/// them).
fn json(v: &Value, t: DataType) -> serde_json::Value {
    use serde_json::Value as J;
    if is_string(t) {
        return J::from(string_of(v));
    }
    match v {
        Value::Bool(x) => J::from(*x),
        Value::I8(x) => J::from(*x),
        Value::U8(x) => J::from(*x),
        Value::I16(x) => J::from(*x),
        Value::U16(x) => J::from(*x),
        Value::I32(x) => J::from(*x),
        Value::U32(x) => J::from(*x),
        Value::I64(x) => J::from(*x),
        Value::U64(x) => J::from(*x),
        Value::F32(x) => float(f64::from(*x)),
        Value::F64(x) => float(*x),
        Value::List(items) => J::Array(
            items
                .iter()
                .map(|i| json(i, DataType::Scalar(evtc_format::ScalarType::U8)))
                .collect(),
        ),
        Value::Str(s) => J::from(s.clone()),
        Value::Bytes(b) => J::from(String::from_utf8_lossy(b).into_owned()),
    }
}

/// A float as JSON: a number when finite; JSON has none for NaN and the infinities, so they are
/// the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (which JavaScript's `Number()` and
/// Python's `float()` turn back into the values), never `null`.
fn float(x: f64) -> serde_json::Value {
    match x {
        x if x.is_nan() => "NaN".into(),
        f64::INFINITY => "Infinity".into(),
        f64::NEG_INFINITY => "-Infinity".into(),
        x => x.into(),
    }
}

/// A value as text for the table and CSV: arrays as `[a, b]`.
fn text(v: &Value, t: DataType) -> String {
    if is_string(t) {
        return string_of(v);
    }
    match v {
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| text(i, DataType::Scalar(evtc_format::ScalarType::U8)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Str(s) => s.clone(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Bool(x) => x.to_string(),
        Value::I8(x) => x.to_string(),
        Value::U8(x) => x.to_string(),
        Value::I16(x) => x.to_string(),
        Value::U16(x) => x.to_string(),
        Value::I32(x) => x.to_string(),
        Value::U32(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::U64(x) => x.to_string(),
        Value::F32(x) => x.to_string(),
        Value::F64(x) => x.to_string(),
    }
}
