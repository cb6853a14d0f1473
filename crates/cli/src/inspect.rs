//! `evtc inspect FILE`: like ROOT's `TTree::Print()`, for evtc and ROOT files.
//!
//! `--json` prints a [`Report`]; its fields are a stable interface (new fields may be added).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use evtc_codecs::{Algorithm, Codec, Precondition};
use evtc_format::FileReader;
use evtc_root::{NtupleLayout, RootFile, TreeKind};
use evtc_tools::FileKind;
use serde::Serialize;

use evtc_format::size::human;

/// Arguments of `evtc inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An evtc or ROOT file; several files (or a glob, `'data/*.evtc'`) are each reported, then
    /// their totals per tree.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// List every basket of every branch.
    #[arg(long)]
    baskets: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// The whole report (`--json`).
#[derive(Debug, Serialize)]
pub struct Report {
    /// The path as given.
    pub file: String,
    /// `evtc` or `root`.
    pub format: &'static str,
    /// File size in bytes.
    pub size: u64,
    /// Trees, in file order.
    pub trees: Vec<TreeReport>,
}

/// One tree.
#[derive(Debug, Serialize)]
pub struct TreeReport {
    /// Tree name (path for ROOT trees in subdirectories; `;cycle` for ROOT).
    pub name: String,
    /// `evtc`, `TTree` or `RNTuple`.
    pub kind: &'static str,
    /// Entries.
    pub entries: u64,
    /// Clusters (evtc and RNTuple), or `null` for a TTree.
    pub clusters: Option<u64>,
    /// Uncompressed bytes of all branches.
    pub raw_bytes: u64,
    /// On-disk bytes of all branches' baskets.
    pub stored_bytes: u64,
    /// Branches.
    pub branches: Vec<BranchReport>,
    /// ROOT branches the importer cannot convert.
    pub unsupported: Vec<Unsupported>,
    /// An RNTuple's storage: its clusters and physical columns, `null` for other trees.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntuple: Option<NtupleReport>,
    /// The tree's event index as (major, minor): an evtc index's key branches, or a ROOT
    /// `TTreeIndex`'s expressions; `null` without one.
    pub event_index: Option<(String, String)>,
}

/// An RNTuple's storage.
#[derive(Debug, Serialize)]
pub struct NtupleReport {
    /// The binary format version (`1.0.2.0`).
    pub version: String,
    /// Stored bytes of the header and footer.
    pub metadata_bytes: u64,
    /// Pages of all columns.
    pub pages: u64,
    /// The clusters.
    pub clusters: Vec<ClusterReport>,
    /// The physical columns: the encodings of the fields' values.
    pub columns: Vec<ColumnReport>,
}

/// One cluster of an RNTuple.
#[derive(Debug, Serialize)]
pub struct ClusterReport {
    /// First entry.
    pub first_entry: u64,
    /// Entries.
    pub entries: u64,
    /// Pages.
    pub pages: u64,
    /// Uncompressed bytes of its pages.
    pub raw_bytes: u64,
    /// Stored bytes of its pages.
    pub stored_bytes: u64,
}

/// One physical column of an RNTuple.
#[derive(Debug, Serialize)]
pub struct ColumnReport {
    /// Column id.
    pub id: u32,
    /// The field it belongs to (`hits._0.x`).
    pub field: String,
    /// Column type (`SplitReal32`).
    #[serde(rename = "type")]
    pub column_type: String,
    /// Bits per element.
    pub bits: u16,
    /// Representation index.
    pub representation: u16,
    /// First element of a column added after the first entries.
    pub first_element: i64,
    /// Codec of its pages (`zstd:5`).
    pub codec: String,
    /// Pages.
    pub pages: u64,
    /// Elements.
    pub elements: u64,
    /// Uncompressed bytes.
    pub raw_bytes: u64,
    /// Stored bytes.
    pub stored_bytes: u64,
    /// raw / stored.
    pub ratio: f64,
}

/// One branch.
#[derive(Debug, Serialize)]
pub struct BranchReport {
    /// Branch name.
    pub name: String,
    /// Type (`f32`, `f32[3]`, `f32[]`, `string`; ROOT: the leaf title or class).
    #[serde(rename = "type")]
    pub dtype: String,
    /// Counter branch of a variable-length branch.
    pub counter: Option<String>,
    /// Codec spec (`zstd:5`).
    pub codec: String,
    /// Preconditioner (`shuffle:4`), `null` for ROOT.
    pub precondition: Option<String>,
    /// Entry-boundary encoding (`fixed`, `offsets`, `counts`, `none`), `null` for ROOT.
    pub boundaries: Option<String>,
    /// Mantissa bits the values were rounded to when written (lossy), `null` if they were not.
    pub mantissa_bits: Option<u32>,
    /// The quantization the values went through when written (lossy), as `MIN:MAX:BITS`, `null`
    /// if they did not.
    pub quantization: Option<String>,
    /// Whether baskets are random-access (RAC).
    pub rac: bool,
    /// Whether a shared RAC dictionary is stored.
    pub dictionary: bool,
    /// Bytes of the dictionary record (0 without), not included in `stored_bytes`.
    pub dictionary_bytes: u64,
    /// Number of baskets (0 for an RNTuple's fields, whose pages are counted per physical
    /// column in `ntuple`).
    pub baskets: u64,
    /// Uncompressed bytes.
    pub raw_bytes: u64,
    /// On-disk bytes.
    pub stored_bytes: u64,
    /// raw / stored.
    pub ratio: f64,
    /// Baskets, with `--baskets`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basket_list: Option<Vec<BasketReport>>,
}

/// One basket (`--baskets`).
#[derive(Debug, Serialize)]
pub struct BasketReport {
    /// File offset.
    pub offset: u64,
    /// Bytes on disk.
    pub bytes: u64,
    /// First entry.
    pub first_entry: u64,
    /// Entries.
    pub entries: u64,
}

/// A ROOT branch the importer cannot convert.
#[derive(Debug, Serialize)]
pub struct Unsupported {
    /// Branch name.
    pub name: String,
    /// Class.
    pub class: String,
    /// Why.
    pub reason: String,
}

/// The totals of several files (`evtc inspect` of more than one).
#[derive(Debug, Serialize)]
pub struct Totals {
    /// The files.
    pub files: usize,
    /// Their bytes.
    pub size: u64,
    /// Each tree name's totals, in the order the files first have them.
    pub trees: Vec<TreeTotal>,
}

/// One tree name's totals over the files that have it.
#[derive(Debug, Serialize)]
pub struct TreeTotal {
    /// Tree name.
    pub name: String,
    /// The files that have it.
    pub files: usize,
    /// Entries in all of them.
    pub entries: u64,
    /// Uncompressed bytes of all branches in all of them.
    pub raw_bytes: u64,
    /// On-disk bytes of all branches' baskets in all of them.
    pub stored_bytes: u64,
}

/// The totals of `reports`.
fn totals(reports: &[Report]) -> Totals {
    let mut trees: Vec<TreeTotal> = Vec::new();
    for t in reports.iter().flat_map(|r| &r.trees) {
        let at = match trees.iter().position(|x| x.name == t.name) {
            Some(at) => at,
            None => {
                trees.push(TreeTotal {
                    name: t.name.clone(),
                    files: 0,
                    entries: 0,
                    raw_bytes: 0,
                    stored_bytes: 0,
                });
                trees.len() - 1
            }
        };
        let total = &mut trees[at];
        total.files += 1;
        total.entries += t.entries;
        total.raw_bytes += t.raw_bytes;
        total.stored_bytes += t.stored_bytes;
    }
    Totals {
        files: reports.len(),
        size: reports.iter().map(|r| r.size).sum(),
        trees,
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let files = crate::files::expand(&args.files)?;
    let reports = files
        .iter()
        .map(|f| report(f, args.baskets))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut out = std::io::stdout().lock();
    match (args.json, reports.as_slice()) {
        (true, [one]) => {
            serde_json::to_writer_pretty(&mut out, one)?;
            writeln!(out)?;
        }
        (true, _) => {
            let all = serde_json::json!({"files": reports, "total": totals(&reports)});
            serde_json::to_writer_pretty(&mut out, &all)?;
            writeln!(out)?;
        }
        (false, _) => {
            for (i, r) in reports.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                print(&mut out, r)?;
            }
            if reports.len() > 1 {
                let t = totals(&reports);
                writeln!(out, "\ntotal: {} files, {}", t.files, human(t.size))?;
                for tree in &t.trees {
                    writeln!(
                        out,
                        "  tree {}: {} in {}, {} raw, {} on disk, ratio {:.2}",
                        tree.name,
                        crate::count(tree.entries, "entry", "entries"),
                        crate::count(tree.files as u64, "file", "files"),
                        human(tree.raw_bytes),
                        human(tree.stored_bytes),
                        ratio(tree.raw_bytes, tree.stored_bytes)
                    )?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn ratio(raw: u64, stored: u64) -> f64 {
    if stored == 0 {
        0.0
    } else {
        raw as f64 / stored as f64
    }
}

/// Builds the report for an evtc or ROOT file.
pub fn report(path: &Path, baskets: bool) -> anyhow::Result<Report> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    let file = path.display().to_string();
    if FileKind::of_path(path)? == FileKind::Root {
        return root_report(path, file, size, baskets);
    }
    evtc_report(path, file, size, baskets)
}

/// The report of an evtc file.
fn evtc_report(path: &Path, file: String, size: u64, baskets: bool) -> anyhow::Result<Report> {
    let reader = match FileReader::open(path) {
        Ok(reader) => reader,
        Err(e) => {
            return Err(match crate::verify::recover_hint(path) {
                Some(hint) => anyhow::anyhow!("reading {file}: {e}\n{hint}"),
                None => anyhow::Error::new(e).context(format!("reading {file}")),
            });
        }
    };
    let mut trees = Vec::new();
    for meta in reader.trees() {
        let tree = reader.tree(&meta.name)?;
        let mut branches = Vec::new();
        for b in &meta.branches {
            let codec = Algorithm::from_id(b.codec)
                .and_then(|a| Codec::new(a, i32::from(b.level)))
                .map_or_else(|_| format!("id {}", b.codec), |c| c.to_string());
            let precondition = Precondition::from_parts(b.precondition, b.width)
                .map_or_else(|_| format!("id {}", b.precondition), |p| p.to_string());
            let basket_list = if baskets {
                let index = tree.branch(&b.name)?.baskets()?;
                Some(
                    index
                        .baskets
                        .iter()
                        .map(|l| BasketReport {
                            offset: l.offset,
                            bytes: l.record_len,
                            first_entry: l.first_entry,
                            entries: l.entries,
                        })
                        .collect(),
                )
            } else {
                None
            };
            branches.push(BranchReport {
                name: b.name.clone(),
                dtype: b.type_name(),
                counter: b.counter.clone(),
                codec,
                precondition: Some(precondition),
                boundaries: Some(b.boundaries.to_string()),
                mantissa_bits: b.mantissa_bits(),
                quantization: b.quantization().map(|q| q.to_string()),
                rac: b.rac,
                dictionary: b.dictionary_len > 0,
                dictionary_bytes: b.dictionary_len,
                baskets: b.baskets,
                raw_bytes: b.raw_bytes,
                stored_bytes: b.stored_bytes,
                ratio: ratio(b.raw_bytes, b.stored_bytes),
                basket_list,
            });
        }
        trees.push(TreeReport {
            name: meta.name.clone(),
            entries: meta.entries,
            kind: "evtc",
            clusters: Some(meta.cluster_ends.len() as u64),
            raw_bytes: branches.iter().map(|b| b.raw_bytes).sum(),
            stored_bytes: branches.iter().map(|b| b.stored_bytes).sum(),
            branches,
            unsupported: Vec::new(),
            ntuple: None,
            event_index: tree
                .event_index()?
                .map(|i| (i.major().to_owned(), i.minor().to_owned())),
        });
    }
    Ok(Report {
        file,
        format: "evtc",
        size,
        trees,
    })
}

/// The report of a ROOT file: its TTrees and RNTuples.
fn root_report(path: &Path, file: String, size: u64, baskets: bool) -> anyhow::Result<Report> {
    let root = RootFile::open(path).with_context(|| format!("reading {file}"))?;
    let mut trees = Vec::new();
    for entry in root.trees()? {
        let name = format!("{};{}", entry.path, entry.cycle);
        let tree = root
            .tree(&name)
            .with_context(|| format!("reading tree {name}"))?;
        let branches: Vec<BranchReport> = tree
            .columns
            .iter()
            .map(|c| root_branch(c, baskets))
            .collect();
        let ntuple = match tree.kind {
            TreeKind::RNTuple => Some(ntuple_report(&root.ntuple_layout(&name)?)),
            TreeKind::TTree => None,
        };
        trees.push(TreeReport {
            name,
            kind: match tree.kind {
                TreeKind::TTree => "TTree",
                TreeKind::RNTuple => "RNTuple",
            },
            entries: tree.entries,
            clusters: ntuple.as_ref().map(|n| n.clusters.len() as u64),
            raw_bytes: branches.iter().map(|b| b.raw_bytes).sum(),
            stored_bytes: branches.iter().map(|b| b.stored_bytes).sum(),
            branches,
            unsupported: tree
                .unsupported
                .iter()
                .map(|u| Unsupported {
                    name: u.name.clone(),
                    class: u.class.clone(),
                    reason: u.reason.clone(),
                })
                .collect(),
            ntuple,
            event_index: tree.index.clone(),
        });
    }
    Ok(Report {
        file,
        format: "root",
        size,
        trees,
    })
}

/// A column of a ROOT tree (a branch, or an RNTuple field's values).
fn root_branch(c: &evtc_root::Column, baskets: bool) -> BranchReport {
    BranchReport {
        name: c.name.clone(),
        dtype: c.root_type.clone(),
        counter: c.counter.clone(),
        codec: root_codec(c.compression),
        precondition: None,
        boundaries: None,
        mantissa_bits: None,
        quantization: None,
        rac: false,
        dictionary: false,
        dictionary_bytes: 0,
        baskets: c.baskets().len() as u64,
        raw_bytes: c.tot_bytes,
        stored_bytes: c.zip_bytes,
        ratio: ratio(c.tot_bytes, c.zip_bytes),
        basket_list: baskets.then(|| {
            c.baskets()
                .map(|b| BasketReport {
                    offset: b.seek,
                    bytes: u64::from(b.bytes),
                    first_entry: b.first_entry,
                    entries: b.entries,
                })
                .collect()
        }),
    }
}

fn root_codec(setting: i32) -> String {
    Codec::from_root_setting(setting).map_or_else(|_| format!("ROOT {setting}"), |k| k.to_string())
}

fn ntuple_report(layout: &NtupleLayout) -> NtupleReport {
    NtupleReport {
        version: layout.version.clone(),
        metadata_bytes: layout.metadata_bytes,
        pages: layout.clusters.iter().map(|c| c.pages).sum(),
        clusters: layout
            .clusters
            .iter()
            .map(|c| ClusterReport {
                first_entry: c.first_entry,
                entries: c.entries,
                pages: c.pages,
                raw_bytes: c.raw_bytes,
                stored_bytes: c.stored_bytes,
            })
            .collect(),
        columns: layout
            .columns
            .iter()
            .map(|c| ColumnReport {
                id: c.id,
                field: c.field.clone(),
                column_type: c.column_type.clone(),
                bits: c.bits,
                representation: c.representation,
                first_element: c.first_element,
                codec: root_codec(c.compression),
                pages: c.pages,
                elements: c.elements,
                raw_bytes: c.raw_bytes,
                stored_bytes: c.stored_bytes,
                ratio: ratio(c.raw_bytes, c.stored_bytes),
            })
            .collect(),
    }
}

fn print(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    writeln!(out, "{} ({} file, {})", r.file, r.format, human(r.size))?;
    for t in &r.trees {
        let clusters = t.clusters.map_or(String::new(), |c| {
            format!(", {}", crate::count(c, "cluster", "clusters"))
        });
        let kind = match &t.ntuple {
            Some(n) => format!(" (RNTuple {}, {} pages)", n.version, n.pages),
            None if t.kind == "TTree" => " (TTree)".to_owned(),
            None => String::new(),
        };
        let index = t
            .event_index
            .as_ref()
            .map_or(String::new(), |(a, b)| format!(", event index ({a}, {b})"));
        writeln!(
            out,
            "tree {}{kind}: {}{clusters}{index}",
            t.name,
            crate::count(t.entries, "entry", "entries")
        )?;
        let width = t
            .branches
            .iter()
            .map(|b| b.name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        writeln!(
            out,
            "  {:width$}  {:22} {:9} {:13} {:9} {:7} {:>7} {:>12} {:>12} {:>7}",
            "branch",
            "type",
            "codec",
            "precondition",
            "bounds",
            "rac",
            "baskets",
            "raw",
            "on disk",
            "ratio"
        )?;
        for b in &t.branches {
            let rac = match (b.rac, b.dictionary) {
                (true, true) => "on+dict",
                (true, false) => "on",
                _ => "-",
            };
            let dtype = match (b.mantissa_bits, &b.quantization) {
                (Some(bits), _) => format!("{} mantissa:{bits}", b.dtype),
                (None, Some(q)) => format!("{} quantized:{q}", b.dtype),
                (None, None) => b.dtype.clone(),
            };
            writeln!(
                out,
                "  {:width$}  {:22} {:9} {:13} {:9} {:7} {:>7} {:>12} {:>12} {:>7.2}",
                b.name,
                dtype,
                b.codec,
                b.precondition.as_deref().unwrap_or("-"),
                b.boundaries.as_deref().unwrap_or("-"),
                rac,
                b.baskets,
                human(b.raw_bytes),
                human(b.stored_bytes),
                b.ratio
            )?;
            for k in b.basket_list.iter().flatten() {
                writeln!(
                    out,
                    "      basket at {:>10}: {:>9} bytes, entries {}..{}",
                    k.offset,
                    k.bytes,
                    k.first_entry,
                    k.first_entry + k.entries
                )?;
            }
        }
        writeln!(
            out,
            "  total: {} raw, {} on disk, ratio {:.2}",
            human(t.raw_bytes),
            human(t.stored_bytes),
            ratio(t.raw_bytes, t.stored_bytes)
        )?;
        for u in &t.unsupported {
            writeln!(out, "  unsupported {} ({}): {}", u.name, u.class, u.reason)?;
        }
        if let Some(n) = &t.ntuple {
            print_ntuple(out, n)?;
        }
    }
    Ok(())
}

/// An RNTuple's physical columns and clusters.
fn print_ntuple(out: &mut impl Write, n: &NtupleReport) -> std::io::Result<()> {
    let width = n
        .columns
        .iter()
        .map(|c| c.field.len())
        .max()
        .unwrap_or(5)
        .max(5);
    writeln!(
        out,
        "  columns ({} of metadata):\n    {:>4}  {:width$}  {:13} {:>4} {:>4} {:9} {:>6} {:>10} {:>12} {:>12} {:>7}",
        human(n.metadata_bytes),
        "id",
        "field",
        "type",
        "bits",
        "repr",
        "codec",
        "pages",
        "elements",
        "raw",
        "on disk",
        "ratio"
    )?;
    for c in &n.columns {
        writeln!(
            out,
            "    {:>4}  {:width$}  {:13} {:>4} {:>4} {:9} {:>6} {:>10} {:>12} {:>12} {:>7.2}",
            c.id,
            c.field,
            c.column_type,
            c.bits,
            c.representation,
            c.codec,
            c.pages,
            c.elements,
            human(c.raw_bytes),
            human(c.stored_bytes),
            c.ratio
        )?;
    }
    writeln!(out, "  clusters:")?;
    for c in &n.clusters {
        writeln!(
            out,
            "    entries {}..{}: {} pages, {} raw, {} on disk",
            c.first_entry,
            c.first_entry + c.entries,
            c.pages,
            human(c.raw_bytes),
            human(c.stored_bytes)
        )?;
    }
    Ok(())
}
