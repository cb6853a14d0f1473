//! `evtc dump FILE`: entries as a table, JSON or CSV.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use evtc_format::size;
use evtc_format::{ChainedTrees, DataType, FileReader, Value};
use evtc_tools::FileKind;

/// Arguments of `evtc dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The evtc file; several files (or a glob, `'data/*.evtc'`) are read as one dataset, their
    /// entries numbered across the files (ROOT's TChain).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The tree (default: the file's only tree, or its first).
    #[arg(long)]
    tree: Option<String>,
    /// Branches to print (default: all): repeat the flag, or separate names with commas; a
    /// comma inside `<...>` belongs to the name (`tm/map<string,string>.first`).
    #[arg(long, value_name = "NAMES")]
    branches: Vec<String>,
    /// Entries to print, half-open `START..END` (`100..120`, `..10`, `5..`); default all.
    #[arg(long, value_parser = parse_range)]
    entries: Option<(Option<u64>, Option<u64>)>,
    /// The entries of an event, MAJOR:MINOR (`1:123456`), found through the tree's event index
    /// (`evtc index`): repeat the flag for several; every entry of a key held by several.
    #[arg(long, value_name = "MAJOR:MINOR", value_parser = parse_event, conflicts_with = "entries")]
    event: Vec<(i128, i128)>,
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

fn parse_event(s: &str) -> Result<(i128, i128), String> {
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?} is not an event like 1:123456 (MAJOR:MINOR)"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<i128>()
            .map_err(|_| format!("{x:?} in {s:?} is not an integer"))
    };
    Ok((num(a)?, num(b)?))
}

/// The entries of `events` in each tree's event index, numbered across the chain, in the order
/// asked (a key's entries in entry order); a key no entry has is an error, one several have is
/// said on stderr.
fn event_entries(
    chain: &ChainedTrees<'_>,
    files: &[PathBuf],
    events: &[(i128, i128)],
) -> anyhow::Result<Vec<u64>> {
    let mut keys = None;
    for (tree, file) in chain.trees().iter().zip(files) {
        let Some(index) = tree.event_index()? else {
            bail!(
                "tree {:?} of {} has no event index; build one with `evtc index {} --by MAJOR,MINOR`",
                tree.name(),
                file.display(),
                file.display()
            );
        };
        keys.get_or_insert_with(|| (index.major().to_owned(), index.minor().to_owned()));
    }
    let (major_name, minor_name) = keys.unwrap_or_default();
    let mut entries = Vec::new();
    for &(major, minor) in events {
        let found = chain.entries_of(major, minor)?;
        match found.len() {
            0 => bail!(
                "tree {:?} has no entry with ({major_name}, {minor_name}) = ({major}, {minor})",
                chain.trees()[0].name(),
            ),
            1 => {}
            n => eprintln!(
                "evtc: ({major_name}, {minor_name}) = ({major}, {minor}) is held by {n} entries; all are shown",
            ),
        }
        entries.extend(found);
    }
    Ok(entries)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let files = crate::files::expand(&args.files)?;
    let readers = files
        .iter()
        .map(|file| {
            if FileKind::of_path(file)? == FileKind::Root {
                bail!(
                    "{} is a ROOT file: evtc dump shows evtc files (`evtc inspect` lists its \
                     trees, `evtc convert` makes an evtc file of it)",
                    file.display()
                );
            }
            FileReader::open_with(file, crate::read_options(args.max_basket_size))
                .with_context(|| format!("reading {}", file.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let name = match &args.tree {
        Some(t) => t.clone(),
        None => match readers[0].trees().first() {
            Some(t) => t.name.clone(),
            None => bail!("{} holds no trees", files[0].display()),
        },
    };
    let trees = readers
        .iter()
        .zip(&files)
        .map(|(reader, file)| {
            reader
                .tree(&name)
                .with_context(|| format!("reading {}", file.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let chain = ChainedTrees::new(trees)?;
    let tree = &chain.trees()[0];
    let all: Vec<String> = tree.branches().iter().map(|b| b.name.clone()).collect();
    let names: Vec<String> = if args.branches.is_empty() {
        // A branch's `name/sizes` chain (docs/format.md 4.3) is shown folded into it.
        all.iter()
            .filter(|n| {
                n.strip_suffix("/sizes")
                    .is_none_or(|parent| !all.iter().any(|a| a == parent))
            })
            .cloned()
            .collect()
    } else {
        args.branches.iter().flat_map(|s| split_names(s)).collect()
    };
    let mut fetched = names.clone();
    let mut columns = Vec::with_capacity(names.len());
    for name in &names {
        let dtype = tree.branch(name)?.meta().dtype;
        let mut sizes = Vec::new();
        let mut level = format!("{name}/sizes");
        while all.contains(&level) {
            sizes.push(fetched.len());
            fetched.push(level.clone());
            level.push_str("/sizes");
        }
        // A string per entry, unless the sizes make lists of strings.
        let string = is_string(dtype) && sizes.is_empty();
        columns.push((string, sizes));
    }
    let entries = chain.entries();
    let asked: Range<u64> = match args.entries {
        Some((a, b)) => a.unwrap_or(0)..b.unwrap_or(entries),
        None => 0..entries,
    };
    if asked.start > asked.end {
        bail!(
            "--entries {}..{} ends before it starts",
            asked.start,
            asked.end
        );
    }
    // A range past the tree's end is cut at it, as Python's entry_start/entry_stop are.
    let range = asked.start.min(entries)..asked.end.min(entries);
    let shown: Box<dyn Iterator<Item = u64>> = if args.event.is_empty() {
        Box::new(range)
    } else {
        Box::new(event_entries(&chain, &files, &args.event)?.into_iter())
    };
    let refs: Vec<&str> = fetched.iter().map(String::as_str).collect();
    let mut rows = chain.rows(&refs)?;
    // Each shown column's value in entry `e`, its sizes chain folded in.
    let mut row = |e: u64| -> anyhow::Result<Vec<Value>> {
        let row = rows.get(e)?;
        names
            .iter()
            .zip(&columns)
            .enumerate()
            .map(|(i, (name, (_, sizes)))| {
                let chain: Vec<&Value> = sizes.iter().map(|&k| &row[k]).collect();
                nest(row[i].clone(), &chain).with_context(|| {
                    format!("branch {name:?}, entry {e}: its sizes branches do not add up")
                })
            })
            .collect()
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => {
            write!(out, "[")?;
            for (i, e) in shown.enumerate() {
                let row = row(e)?;
                // The branches in the order asked for (a JSON map would sort them).
                let fields: Vec<String> = names
                    .iter()
                    .zip(&row)
                    .zip(&columns)
                    .map(|((n, v), (string, _))| {
                        format!(
                            "{}:{}",
                            serde_json::Value::from(n.as_str()),
                            json(v, *string)
                        )
                    })
                    .collect();
                let sep = if i == 0 { "\n" } else { ",\n" };
                write!(out, "{sep}  {{{}}}", fields.join(","))?;
            }
            writeln!(out, "\n]")?;
        }
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(&mut out);
            writer
                .write_record(std::iter::once("entry").chain(names.iter().map(String::as_str)))?;
            for e in shown {
                let row = row(e)?;
                let cells = row.iter().zip(&columns).map(|(v, (s, _))| text(v, *s));
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
            for e in shown {
                let row = row(e)?;
                table.push(
                    std::iter::once(e.to_string())
                        .chain(row.iter().zip(&columns).map(|(v, (s, _))| text(v, *s)))
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
        other => text(other, false),
    }
}

/// A value as JSON: numbers, booleans, arrays, strings (NaN and infinities as [`float`] spells
/// them).
/// With `string`, the value is one string (a `bytes` or `utf8` entry).
fn json(v: &Value, string: bool) -> serde_json::Value {
    use serde_json::Value as J;
    if string {
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
        Value::List(items) => J::Array(items.iter().map(|i| json(i, false)).collect()),
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

/// A value as text for the table and CSV: arrays as `[a, b]`; with `string`, the value is one
/// string.
fn text(v: &Value, string: bool) -> String {
    if string {
        return string_of(v);
    }
    match v {
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| text(i, false))
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

/// An entry's value with its sizes chain folded in (docs/format.md 4.3): `chain[0]` splits the
/// values (characters) into lists (strings), `chain[1]` groups those into lists, and so on.
/// `None` when the sizes do not add up.
fn nest(value: Value, chain: &[&Value]) -> Option<Value> {
    let Some((first, rest)) = chain.split_first() else {
        return Some(value);
    };
    let items: Vec<Value> = match value {
        Value::Bytes(b) => split(&b, first)?
            .into_iter()
            .map(|c| Value::Bytes(c.to_vec()))
            .collect(),
        Value::Str(s) => split(s.as_bytes(), first)?
            .into_iter()
            .map(|c| Value::Str(String::from_utf8_lossy(c).into_owned()))
            .collect(),
        Value::List(items) => split(&items, first)?
            .into_iter()
            .map(|c| Value::List(c.to_vec()))
            .collect(),
        _ => return None,
    };
    // Each further level groups the lists made so far.
    rest.iter().try_fold(Value::List(items), |grouped, sizes| {
        let Value::List(items) = grouped else {
            return None;
        };
        Some(Value::List(
            split(&items, sizes)?
                .into_iter()
                .map(|c| Value::List(c.to_vec()))
                .collect(),
        ))
    })
}

/// `items` cut into consecutive pieces of the lengths `sizes` (a list of integers), which must
/// use every item.
fn split<'a, T>(items: &'a [T], sizes: &Value) -> Option<Vec<&'a [T]>> {
    let Value::List(sizes) = sizes else {
        return None;
    };
    let mut pieces = Vec::with_capacity(sizes.len());
    let mut at = 0usize;
    for size in sizes {
        let n = match size {
            Value::U32(n) => usize::try_from(*n).ok()?,
            Value::U64(n) => usize::try_from(*n).ok()?,
            _ => return None,
        };
        let end = at.checked_add(n).filter(|&end| end <= items.len())?;
        pieces.push(&items[at..end]);
        at = end;
    }
    (at == items.len()).then_some(pieces)
}

/// Branch names separated by commas, but for commas inside template brackets, which C++ type
/// names put in branch names (`map<string,string>`).
fn split_names(list: &str) -> Vec<String> {
    let mut names = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in list.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                names.push(list[start..i].to_owned());
                start = i + 1;
            }
            _ => {}
        }
    }
    names.push(list[start..].to_owned());
    names.retain(|n| !n.is_empty());
    names
}

#[cfg(test)]
mod tests {
    use super::split_names;

    #[test]
    fn names_split_at_commas_outside_template_brackets() {
        assert_eq!(split_names("a,b"), ["a", "b"]);
        assert_eq!(
            split_names("tm/map<string,string>.first,n"),
            ["tm/map<string,string>.first", "n"]
        );
        assert_eq!(split_names("m<a,v<b,c>>.x,"), ["m<a,v<b,c>>.x"]);
    }
}
