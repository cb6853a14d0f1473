//! Conversions into ROOT files ([`export`]): each tree of the input (an evtc file, or a ROOT
//! file's TTrees and RNTuples) becomes an RNTuple (or a TTree) of the same name, its branches
//! fields (branches) of the same ROOT types, in clusters of the settings' cluster size, each
//! field compressed with its branch's codec unless the settings say otherwise. What ROOT has no
//! place for (random-access compression, evtc's preconditioners, names with dots) is said in
//! the summary's notes.
//!
//! - `fields`: a tree's columns into fields, and their data chunk by chunk.

mod fields;

use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use evtc_codecs::Codec;
use evtc_format::{ClusterSize, Output};
use evtc_root::{
    ColumnData, NtupleOptions, NtupleWriter, RootWriter, TTreeOptions, TTreeWriter, TreeBranch,
};

use crate::source::{Input, SourceTree};
use crate::{ConvertSummary, Error, OutputFormat, Progress, Result, Settings, TreeSummary};

/// Converts `input` into a ROOT file at `output` of `format`'s trees.
///
/// # Errors
/// As for [`convert`](crate::convert); [`Error::Options`] for settings ROOT output cannot take
/// (`append`, `keep_partial`) and branches whose ROOT names collide.
pub(crate) fn export(
    input: &Path,
    output: &Path,
    settings: &Settings,
    format: OutputFormat,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ConvertSummary> {
    let started = Instant::now();
    if settings.append {
        return Err(Error::Options(
            "append adds to an evtc file; a ROOT output is written whole".into(),
        ));
    }
    if settings.keep_partial {
        return Err(Error::Options(
            "keep_partial keeps an evtc file's records; a ROOT output is kept whole or not at all"
                .into(),
        ));
    }
    let input_file = Input::open(input, Some(settings.max_basket_size))?;
    let input_bytes = std::fs::metadata(input).map_or(0, |m| m.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(settings.threads.max(1))
        .build()
        .map_err(|e| Error::Options(format!("cannot start {} threads: {e}", settings.threads)))?;
    let mut summary = ConvertSummary {
        input_format: input_file.format(),
        output_format: format.to_string(),
        input_bytes,
        output_bytes: 0,
        value_bytes: 0,
        seconds: 0.0,
        trees: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
    };
    let trees = input_file.tree_names(&settings.trees)?;
    let mut sources = Vec::new();
    for name in &trees {
        let tree = input_file.tree(name)?;
        crate::skip_unsupported(&tree, name, settings, &mut summary.skipped)?;
        sources.push(tree);
    }
    crate::check_globs(&sources, settings, &trees)?;
    let out = Output::create(output, settings.overwrite)
        .map_err(|e| output_error(output, e, settings.overwrite))?;
    let file = out.file().try_clone().map_err(|e| io_error(output, e))?;
    let file_name = output
        .file_name()
        .map_or_else(|| "out.root".into(), |n| n.to_string_lossy().into_owned());
    let file_codec = settings.codec.unwrap_or(Codec::DEFAULT);
    let mut root = RootWriter::new(
        BufWriter::with_capacity(1 << 20, file),
        &file_name,
        file_codec,
    )?;
    for source in &mut sources {
        match write_tree(
            &mut root,
            source,
            &pool,
            settings,
            format,
            &mut summary,
            progress,
        )? {
            Some(tree) => summary.trees.push(tree),
            None => return Err(Error::Interrupted { kept: None }),
        }
    }
    let file = root
        .finish()?
        .into_inner()
        .map_err(|e| io_error(output, e.into_error()))?;
    if settings.sync {
        file.sync_all().map_err(|e| io_error(output, e))?;
    }
    out.persist(output, settings.overwrite)
        .map_err(|e| output_error(output, e, settings.overwrite))?;
    summary.output_bytes = std::fs::metadata(output).map_or(0, |m| m.len());
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The error of creating or naming the output: it exists, or the system's.
fn output_error(path: &Path, e: std::io::Error, overwrite: bool) -> Error {
    if !overwrite && e.kind() == std::io::ErrorKind::AlreadyExists {
        evtc_format::Error::OutputExists {
            path: path.to_owned(),
        }
        .into()
    } else {
        io_error(path, e)
    }
}

/// An I/O error on the output.
fn io_error(path: &Path, source: std::io::Error) -> Error {
    evtc_format::Error::Io {
        path: Some(path.to_owned()),
        source,
    }
    .into()
}

/// Entries per cluster of `source` with `settings`' cluster size.
fn cluster_entries(source: &SourceTree<'_>, settings: &Settings) -> u64 {
    match settings.cluster_size {
        ClusterSize::Entries(n) => n.max(1),
        ClusterSize::Bytes(bytes) => {
            let per_entry = source.raw_bytes() / source.entries().max(1);
            (bytes / per_entry.max(1)).clamp(1, source.entries().max(1))
        }
    }
}

/// A tree being written: an RNTuple or a TTree.
enum TreeOut {
    Ntuple(NtupleWriter),
    Tree(TTreeWriter),
}

impl TreeOut {
    /// Starts the tree `name` of `plan`'s fields in `root`, as `format`, with `source`'s event
    /// index when the output keeps it (a TTree's `TTreeIndex`; its keys' output names are
    /// returned); notes what is not kept.
    fn start<W: Write + std::io::Seek>(
        root: &mut RootWriter<W>,
        name: &str,
        plan: &fields::Plan,
        index: Option<(String, String)>,
        settings: &Settings,
        format: OutputFormat,
        notes: &mut Vec<String>,
    ) -> Result<(TreeOut, Option<(String, String)>)> {
        let codec = settings.codec.unwrap_or(Codec::DEFAULT);
        match format {
            OutputFormat::TTree => {
                let branches = plan
                    .fields
                    .iter()
                    .map(|f| TreeBranch {
                        name: f.field.name.clone(),
                        kind: f.field.kind,
                        dims: f.field.dims.clone(),
                        counter: f.counter.clone(),
                        codec: f.field.codec,
                    })
                    .collect();
                let options = TTreeOptions {
                    basket_bytes: settings
                        .basket_size
                        .map_or(TTreeOptions::default().basket_bytes, |b| b as usize),
                    codec,
                    ..TTreeOptions::default()
                };
                let mut tree = TTreeWriter::new(name, branches, options)?;
                let lossy = plan
                    .fields
                    .iter()
                    .filter(|f| f.field.floats != evtc_root::FloatStorage::Plain)
                    .count();
                if lossy > 0 {
                    notes.push(format!(
                        "tree {name:?}: {lossy} branches of reduced-precision floats written as \
                         full floats (their values as evtc stored them)"
                    ));
                }
                let mut kept = None;
                if let Some((major, minor)) = index {
                    let output = |key: &str| {
                        plan.fields
                            .iter()
                            .find(|f| f.source_name == key)
                            .map(|f| f.field.name.clone())
                    };
                    match (output(&major), output(&minor)) {
                        (Some(a), Some(b)) if tree.index_by(&a, &b).is_ok() => kept = Some((a, b)),
                        _ => notes.push(format!(
                            "tree {name:?}: its event index on ({major}, {minor}) is not kept: \
                             its keys are not two integer branches of the output"
                        )),
                    }
                }
                Ok((TreeOut::Tree(tree), kept))
            }
            _ => {
                if index.is_some() {
                    notes.push(format!(
                        "tree {name:?}: its event index is not kept (RNTuple has none; TTree \
                         output keeps it as a TTreeIndex)"
                    ));
                }
                let fields = plan.fields.iter().map(|f| f.field.clone()).collect();
                let options = NtupleOptions {
                    envelope_codec: codec,
                    ..NtupleOptions::default()
                };
                let ntuple = NtupleWriter::new(root, name, fields, options)?;
                Ok((TreeOut::Ntuple(ntuple), None))
            }
        }
    }

    fn write_cluster<W: Write + std::io::Seek>(
        &mut self,
        root: &mut RootWriter<W>,
        data: &[ColumnData],
    ) -> Result<()> {
        match self {
            TreeOut::Ntuple(w) => w.write_cluster(root, data)?,
            TreeOut::Tree(w) => w.write_cluster(root, data)?,
        }
        Ok(())
    }

    fn finish<W: Write + std::io::Seek>(self, root: &mut RootWriter<W>) -> Result<()> {
        match self {
            TreeOut::Ntuple(w) => {
                w.finish(root)?;
            }
            TreeOut::Tree(w) => {
                w.finish(root)?;
            }
        }
        Ok(())
    }
}

/// Converts one tree into an RNTuple or a TTree of `root`; `None` when interrupted.
fn write_tree<W: Write + std::io::Seek>(
    root: &mut RootWriter<W>,
    source: &mut SourceTree<'_>,
    pool: &rayon::ThreadPool,
    settings: &Settings,
    format: OutputFormat,
    summary: &mut ConvertSummary,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Option<TreeSummary>> {
    let tree = source.name().to_owned();
    let plan = fields::plan(source, settings, &tree, format)?;
    summary.notes.extend(plan.notes.iter().cloned());
    let name = fields::root_name(&tree, OutputFormat::RNTuple);
    if name != tree {
        summary
            .notes
            .push(format!("tree {tree:?} written as {name:?}"));
    }
    let index = source.index_keys()?;
    let (mut out, event_index) = TreeOut::start(
        root,
        &name,
        &plan,
        index,
        settings,
        format,
        &mut summary.notes,
    )?;
    source.select_columns(&plan.columns);
    let total = source.entries();
    let chunk = cluster_entries(source, settings);
    let mut done = 0;
    while done < total {
        let end = (done + chunk).min(total);
        summary.value_bytes += pool.install(|| source.read(done..end))?;
        let mut data: Vec<Option<_>> = source.take_chunk().into_iter().map(Some).collect();
        let cluster = plan
            .fields
            .iter()
            .map(|f| f.assemble(&mut data))
            .collect::<Result<Vec<_>>>()?;
        out.write_cluster(root, &cluster)?;
        done = end;
        progress(Progress {
            tree: &tree,
            entries: done,
            total,
            bytes: summary.value_bytes,
        });
        if settings
            .interrupt
            .as_ref()
            .is_some_and(|flag| flag.load(Ordering::Relaxed))
        {
            return Ok(None);
        }
    }
    out.finish(root)?;
    Ok(Some(TreeSummary {
        name,
        entries: total,
        branches: plan.fields.len(),
        event_index,
        index_dropped: None,
    }))
}
