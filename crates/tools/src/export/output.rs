//! A ROOT file being written from column data ([`RootOutput`]): its trees one after another,
//! each an RNTuple or a TTree, its branches stored as the settings say, the file under its name
//! only once finished.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use evtc_codecs::{Codec, Quantization};
use evtc_format::{ClusterSize, Output};
use evtc_root::{
    ColumnData, ColumnKind, NtupleField, NtupleOptions, NtupleWriter, RootWriter, TTreeOptions,
    TTreeWriter, TreeBranch, Values,
};

use super::fields::{self, Storage};
use crate::{Error, OutputFormat, Result, Settings, TreeSummary};

/// A TTree's baskets without a `basket_size`: up to 4 MiB uncompressed, about one per branch
/// per cluster of NanoAOD's size, as ROOT's `TTree::OptimizeBaskets` grows them (RDataFrame's
/// Snapshot of the NanoAOD-like sample: 3.3 MB).
pub(crate) const TTREE_BASKET_BYTES: usize = 4 << 20;

/// A TTree's bytes of values per cluster without a `cluster_size`: 128 MiB, of the order of
/// ROOT's default AutoFlush (30 MB of compressed baskets, counted as baskets are written:
/// RDataFrame's Snapshot of the NanoAOD-like sample puts 161,328 of its 200,000 entries, about
/// 85 MB of values, in its first cluster).
const TTREE_CLUSTER_VALUES: u64 = 128 << 20;

/// A branch of a tree written by [`RootOutput`].
#[derive(Debug, Clone, PartialEq)]
pub struct RootBranch {
    /// Its name: RNTuple field names hold no `.`, space, `/` or `\`, TTree branch names no
    /// space, `/`, `[` or `]`.
    pub name: String,
    /// What an entry holds.
    pub kind: ColumnKind,
    /// A fixed array's dimensions when it has two or more (`[2, 3]` for a
    /// `ColumnKind::Fixed(_, 6)`); empty otherwise.
    pub dims: Vec<usize>,
    /// For a list of numbers: the integer scalar branch before it holding each entry's length,
    /// as NanoAOD's `nMuon` for `Muon_pt` (a leaf-count array `Muon_pt[nMuon]/F` in a TTree, a
    /// `ROOT::VecOps::RVec<float>` field in an RNTuple).
    pub counter: Option<String>,
}

impl RootBranch {
    /// A branch of `kind` without dimensions or counter.
    pub fn new(name: impl Into<String>, kind: ColumnKind) -> RootBranch {
        RootBranch {
            name: name.into(),
            kind,
            dims: Vec::new(),
            counter: None,
        }
    }
}

/// What [`RootOutput::finish`] wrote.
#[derive(Debug, Clone)]
pub struct RootOutputSummary {
    /// The file's bytes.
    pub bytes: u64,
    /// Its trees, in the order written.
    pub trees: Vec<TreeSummary>,
    /// What could not be kept as it was asked for, in words.
    pub notes: Vec<String>,
}

/// A ROOT file of RNTuples or TTrees being written from column data, tree after tree: the
/// writer behind `evtc convert --to` and Python's `evtc.recreate(path, format=...)`.
///
/// Entries given by [`fill`](RootOutput::fill) gather into clusters of the settings'
/// `cluster_size` (without one, an RNTuple's clusters end at about 128 MiB compressed, as
/// ROOT's writer ends them); each branch is stored with the codec and float precision the settings'
/// rules give its name (`branch_codec`, `float_precision`, `float_quantize`), else `codec`.
/// The file is written under a temporary name and appears under its own only when
/// [`finish`](RootOutput::finish) succeeds; dropped before, it leaves nothing.
///
/// ```
/// use evtc_tools::{OutputFormat, RootBranch, RootOutput, Settings};
/// use evtc_root::{ColumnData, ColumnKind, ScalarType, Values};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("muons.root");
/// let mut settings = Settings::default();
/// settings.set("branch_codec", "Muon_*=lz4")?;
/// let mut file = RootOutput::create(&path, OutputFormat::RNTuple, &settings)?;
/// let mut pt = RootBranch::new("Muon_pt", ColumnKind::Jagged(ScalarType::F32));
/// pt.counter = Some("nMuon".into());
/// file.tree("Events", vec![RootBranch::new("nMuon", ColumnKind::Scalar(ScalarType::I32)), pt])?;
/// let n = ColumnData { values: Values::I32(vec![2, 0, 1]), offsets: vec![], levels: vec![] };
/// let pt = ColumnData {
///     values: Values::F32(vec![31.5, 12.0, 48.25]),
///     offsets: vec![0, 2, 2, 3],
///     levels: vec![],
/// };
/// file.fill(vec![n, pt])?;
/// let summary = file.finish()?;
/// assert_eq!(summary.trees[0].entries, 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RootOutput {
    path: PathBuf,
    output: Output,
    root: RootWriter<BufWriter<File>>,
    format: OutputFormat,
    settings: Settings,
    open: Option<OpenTree>,
    trees: Vec<TreeSummary>,
    notes: Vec<String>,
}

impl std::fmt::Debug for RootOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RootOutput")
            .field("path", &self.path)
            .field("format", &self.format)
            .field("trees", &self.trees)
            .finish_non_exhaustive()
    }
}

/// The tree being written.
struct OpenTree {
    name: String,
    out: TreeOut,
    names: Vec<String>,
    kinds: Vec<ColumnKind>,
    /// Each branch's counter branch, by position.
    counters: Vec<Option<usize>>,
    storage: Vec<Storage>,
    /// Entries given by `fill` and not yet written, per branch.
    buffer: Vec<ColumnData>,
    buffered: usize,
    /// The bytes of values given to a TTree's open cluster.
    cluster_values: u64,
    entries: u64,
    event_index: Option<(String, String)>,
    index_dropped: Option<String>,
}

/// A tree's writer: an RNTuple's or a TTree's.
enum TreeOut {
    Ntuple(NtupleWriter),
    Tree(TTreeWriter),
}

impl RootOutput {
    /// Starts a ROOT file at `path` (under a temporary name until [`finish`]) of `format`'s
    /// trees, written with `settings`.
    ///
    /// # Errors
    /// [`Error::Options`] for `format` evtc or settings a ROOT file cannot take (`append`,
    /// `keep_partial`, and those of evtc's own storage: `rac`, `precondition`, `boundaries`,
    /// `branch_rac`, `branch_precondition`, `rac_unit`, `rac_dictionary`); [`evtc_format::Error::OutputExists`] for an existing `path` without
    /// `settings.overwrite`; an I/O error creating the file.
    ///
    /// [`finish`]: RootOutput::finish
    pub fn create(path: &Path, format: OutputFormat, settings: &Settings) -> Result<RootOutput> {
        if format == OutputFormat::Evtc {
            return Err(Error::Options(
                "a ROOT output is an RNTuple's or a TTree's, not evtc".into(),
            ));
        }
        if settings.append {
            return Err(Error::Options(
                "append adds to an evtc file; a ROOT output is written whole".into(),
            ));
        }
        if settings.keep_partial {
            return Err(Error::Options(
                "keep_partial keeps an evtc file's records; a ROOT output is kept whole or not \
                 at all"
                    .into(),
            ));
        }
        let evtc_only = evtc_only(settings);
        if !evtc_only.is_empty() {
            let (is, it) = match evtc_only.len() {
                1 => ("is a setting", "it"),
                _ => ("are settings", "them"),
            };
            return Err(Error::Options(format!(
                "{} {is} of evtc's own storage; a ROOT file has no place for {it}",
                evtc_only.join(", ")
            )));
        }
        let output = Output::create(path, settings.overwrite)
            .map_err(|e| output_error(path, e, settings.overwrite))?;
        let file = output.file().try_clone().map_err(|e| io_error(path, e))?;
        let file_name = path
            .file_name()
            .map_or_else(|| "out.root".into(), |n| n.to_string_lossy().into_owned());
        let root = RootWriter::new(
            BufWriter::with_capacity(1 << 20, file),
            &file_name,
            settings.codec.unwrap_or(Codec::DEFAULT),
        )?;
        Ok(RootOutput {
            path: path.to_owned(),
            output,
            root,
            format,
            settings: settings.clone(),
            open: None,
            trees: Vec::new(),
            notes: Vec::new(),
        })
    }

    /// Finishes the tree being written, if any, and starts the tree `name` of `branches`.
    ///
    /// # Errors
    /// [`Error::Options`] for a second tree of one name; [`evtc_root::Error::Unwritable`] for
    /// a name ROOT refuses, two branches of one name, or a counter that is not an integer
    /// scalar branch before its list.
    pub fn tree(&mut self, name: &str, branches: Vec<RootBranch>) -> Result<()> {
        self.end_tree()?;
        if self.trees.iter().any(|t| t.name == name) {
            return Err(Error::Options(format!(
                "the file has a tree {name:?} already"
            )));
        }
        let fields = branches
            .into_iter()
            .map(|b| {
                let storage = fields::storage(&b.name, b.kind, &self.settings, None);
                (b, storage)
            })
            .collect();
        self.begin(name, fields, None)
    }

    /// Starts the tree `name` of `branches`, each stored as given, with the event index on
    /// `index`'s branches when the format has one (a TTree's `TTreeIndex`).
    pub(super) fn begin(
        &mut self,
        name: &str,
        branches: Vec<(RootBranch, Storage)>,
        index: Option<(String, String)>,
    ) -> Result<()> {
        let mut event_index = None;
        let mut index_dropped = None;
        let out = match self.format {
            OutputFormat::TTree => {
                let specs = branches
                    .iter()
                    .map(|(b, s)| TreeBranch {
                        name: b.name.clone(),
                        kind: b.kind,
                        dims: b.dims.clone(),
                        counter: b.counter.clone(),
                        codec: s.codec,
                    })
                    .collect();
                let options = TTreeOptions {
                    basket_bytes: self
                        .settings
                        .basket_size
                        .map_or(TTREE_BASKET_BYTES, |b| b as usize),
                    codec: self.settings.codec.unwrap_or(Codec::DEFAULT),
                    ..TTreeOptions::default()
                };
                let mut tree = TTreeWriter::new(name, specs, options)?;
                let lossy = branches
                    .iter()
                    .filter(|(_, s)| s.floats != evtc_root::FloatStorage::Plain)
                    .count();
                if lossy > 0 {
                    self.notes.push(format!(
                        "tree {name:?}: {lossy} branches of reduced-precision floats written as \
                         full floats (their values as reduced)"
                    ));
                }
                if let Some((major, minor)) = index {
                    match tree.index_by(&major, &minor) {
                        Ok(()) => event_index = Some((major, minor)),
                        Err(e) => index_dropped = Some(e.to_string()),
                    }
                }
                TreeOut::Tree(tree)
            }
            _ => {
                if index.is_some() {
                    index_dropped = Some(
                        "RNTuple has no event index (a TTree output keeps it as a TTreeIndex)"
                            .into(),
                    );
                }
                let fields = branches
                    .iter()
                    .map(|(b, s)| NtupleField {
                        name: b.name.clone(),
                        kind: b.kind,
                        dims: b.dims.clone(),
                        rvec: matches!(b.kind, ColumnKind::Jagged(_)) && b.counter.is_some(),
                        codec: s.codec,
                        floats: s.floats,
                    })
                    .collect();
                let options = NtupleOptions {
                    envelope_codec: self.settings.codec.unwrap_or(Codec::DEFAULT),
                    ..NtupleOptions::default()
                };
                TreeOut::Ntuple(NtupleWriter::new(&mut self.root, name, fields, options)?)
            }
        };
        let kinds: Vec<ColumnKind> = branches.iter().map(|(b, _)| b.kind).collect();
        self.open = Some(OpenTree {
            name: name.to_owned(),
            out,
            names: branches.iter().map(|(b, _)| b.name.clone()).collect(),
            counters: branches
                .iter()
                .map(|(b, _)| {
                    let counter = b.counter.as_ref()?;
                    branches.iter().position(|(c, _)| &c.name == counter)
                })
                .collect(),
            buffer: kinds.iter().map(|&k| ColumnData::new(k)).collect(),
            kinds,
            storage: branches.into_iter().map(|(_, s)| s).collect(),
            buffered: 0,
            cluster_values: 0,
            entries: 0,
            event_index,
            index_dropped,
        });
        Ok(())
    }

    /// Adds entries to the tree being written: `data[i]` holds branch `i`'s, every branch the
    /// same number, shaped as `evtc-root`'s readers make them (offsets from 0). They are
    /// written when a cluster is full (the settings' `cluster_size`) and at the end.
    ///
    /// Returns the entries added.
    ///
    /// # Errors
    /// [`Error::Options`] without a tree, for data of other branches, kinds or lengths, or a
    /// value outside a `float_quantize` range; the writers' errors (a counter that disagrees
    /// with its list); I/O errors.
    pub fn fill(&mut self, data: Vec<ColumnData>) -> Result<u64> {
        let tree = self.open.as_mut().ok_or_else(|| {
            Error::Options("no tree is being written: start one with tree()".into())
        })?;
        let entries = entries_of(tree, &data)?;
        let target = match self
            .settings
            .cluster_size
            .unwrap_or(evtc_format::DEFAULT_CLUSTER_SIZE)
        {
            ClusterSize::Entries(n) => usize::try_from(n.max(1)).unwrap_or(usize::MAX),
            ClusterSize::Bytes(bytes) => {
                let per_entry = data.iter().map(data_bytes).sum::<usize>() / entries.max(1);
                usize::try_from(bytes).unwrap_or(usize::MAX) / per_entry.max(1)
            }
        }
        .max(1);
        let mut at = 0;
        while at < entries {
            let tree = self.open.as_mut().ok_or_else(|| {
                Error::Options("no tree is being written: start one with tree()".into())
            })?;
            let take = (target.saturating_sub(tree.buffered)).min(entries - at);
            for ((buffer, d), (&kind, branch)) in tree
                .buffer
                .iter_mut()
                .zip(&data)
                .zip(tree.kinds.iter().zip(&tree.names))
            {
                buffer.append_entries(d, kind, at..at + take).map_err(|e| {
                    Error::Options(format!("tree {:?} branch {branch:?}: {e}", tree.name))
                })?;
            }
            tree.buffered += take;
            at += take;
            if tree.buffered >= target {
                self.flush()?;
            }
        }
        Ok(entries as u64)
    }

    /// Writes the entries gathered as one cluster.
    fn flush(&mut self) -> Result<()> {
        let Some(tree) = self.open.as_mut() else {
            return Ok(());
        };
        if tree.buffered == 0 {
            return Ok(());
        }
        let cluster = std::mem::replace(
            &mut tree.buffer,
            tree.kinds.iter().map(|&k| ColumnData::new(k)).collect(),
        );
        tree.buffered = 0;
        self.write_cluster(cluster)
    }

    /// Writes `data` (every branch's entries, as [`fill`](RootOutput::fill) takes them) as one
    /// cluster of the tree being written, reduced floats reduced as the settings say.
    fn write_cluster(&mut self, mut data: Vec<ColumnData>) -> Result<()> {
        let Some(tree) = self.open.as_mut() else {
            return Err(Error::Options("no tree is being written".into()));
        };
        let ttree = matches!(tree.out, TreeOut::Tree(_));
        for ((d, s), branch) in data.iter_mut().zip(&tree.storage).zip(&tree.names) {
            if let Some(bits) = s.round {
                match &mut d.values {
                    Values::F32(v) => evtc_codecs::round_mantissas_f32(v, bits),
                    Values::F64(v) => evtc_codecs::round_mantissas_f64(v, bits),
                    _ => {}
                }
            }
            // A TTree's floats are full floats: quantized here (an RNTuple quantizes its own).
            if let (true, Some(q)) = (ttree, s.quantize) {
                quantize(&mut d.values, q).map_err(|x| {
                    Error::Options(format!(
                        "tree {:?} branch {branch:?}: {x} is outside its float_quantize range \
                         [{}, {}]",
                        tree.name,
                        q.min(),
                        q.max()
                    ))
                })?;
            }
        }
        let entries = entries_of(tree, &data)? as u64;
        match &mut tree.out {
            // Without a cluster size, ROOT's: the RNTuple's clusters end by their compressed
            // size, pages filling across batches.
            TreeOut::Ntuple(w) if self.settings.cluster_size.is_none() => {
                w.append(&mut self.root, &data)?;
            }
            TreeOut::Ntuple(w) => w.write_cluster(&mut self.root, &data)?,
            // Without a cluster size, a TTree's cluster ends after the batch that brings it to
            // 128 MiB of values, its baskets filling across batches.
            TreeOut::Tree(w) if self.settings.cluster_size.is_none() => {
                w.append(&mut self.root, &data)?;
                tree.cluster_values += data.iter().map(data_bytes).sum::<usize>() as u64;
                if tree.cluster_values >= TTREE_CLUSTER_VALUES {
                    w.end_cluster(&mut self.root)?;
                    tree.cluster_values = 0;
                }
            }
            TreeOut::Tree(w) => w.write_cluster(&mut self.root, &data)?,
        }
        tree.entries += entries;
        Ok(())
    }

    /// Finishes the tree being written, if any: its last entries, its records.
    pub(super) fn end_tree(&mut self) -> Result<()> {
        self.flush()?;
        let Some(tree) = self.open.take() else {
            return Ok(());
        };
        match tree.out {
            TreeOut::Ntuple(w) => {
                w.finish(&mut self.root)?;
            }
            TreeOut::Tree(w) => {
                w.finish(&mut self.root)?;
            }
        }
        self.trees.push(TreeSummary {
            name: tree.name,
            entries: tree.entries,
            branches: tree.kinds.len(),
            event_index: tree.event_index,
            index_dropped: tree.index_dropped,
        });
        Ok(())
    }

    /// Takes note of something not kept as asked, for the summary.
    pub(super) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// Finishes the last tree and the file, which appears under its name (replacing a file
    /// there only with the settings' `overwrite`).
    ///
    /// # Errors
    /// As for [`fill`](RootOutput::fill); [`evtc_format::Error::OutputExists`] when a file
    /// took the name meanwhile; I/O errors. Nothing appears under the name then.
    pub fn finish(mut self) -> Result<RootOutputSummary> {
        self.end_tree()?;
        let path = self.path;
        let file = self
            .root
            .finish()?
            .into_inner()
            .map_err(|e| io_error(&path, e.into_error()))?;
        if self.settings.sync {
            file.sync_all().map_err(|e| io_error(&path, e))?;
        }
        self.output
            .persist(&path, self.settings.overwrite)
            .map_err(|e| output_error(&path, e, self.settings.overwrite))?;
        Ok(RootOutputSummary {
            bytes: std::fs::metadata(&path).map_or(0, |m| m.len()),
            trees: self.trees,
            notes: self.notes,
        })
    }
}

/// The settings of evtc's own storage that `settings` sets, by name.
fn evtc_only(settings: &Settings) -> Vec<&'static str> {
    let default = Settings::default();
    let rules = |set: fn(&crate::BranchSettings) -> bool| {
        settings.branch_rules.iter().any(|(_, rule)| set(rule))
    };
    [
        ("rac", settings.rac != default.rac),
        (
            "precondition",
            settings.precondition != default.precondition,
        ),
        (
            "boundaries",
            settings.boundaries != default.boundaries || rules(|r| r.boundaries.is_some()),
        ),
        ("rac_unit", settings.rac_unit.is_some()),
        (
            "rac_dictionary",
            settings.rac_dictionary != default.rac_dictionary,
        ),
        ("branch_rac", rules(|r| r.rac.is_some())),
        ("branch_precondition", rules(|r| r.precondition.is_some())),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

/// The entries of `data` for `tree`, every branch's the same and each of its kind.
fn entries_of(tree: &OpenTree, data: &[ColumnData]) -> Result<usize> {
    if data.len() != tree.kinds.len() {
        return Err(Error::Options(format!(
            "tree {:?} has {} branches; the data has {}",
            tree.name,
            tree.kinds.len(),
            data.len()
        )));
    }
    let mut entries = None;
    for ((d, &kind), branch) in data.iter().zip(&tree.kinds).zip(&tree.names) {
        let n = d
            .check(kind)
            .map_err(|e| Error::Options(format!("tree {:?} branch {branch:?}: {e}", tree.name)))?;
        if let Some(before) = entries.filter(|&e| e != n) {
            return Err(Error::Options(format!(
                "tree {:?}: branch {branch:?} has {n} entries, the branches before it {before}",
                tree.name
            )));
        }
        entries = Some(n);
    }
    for (i, counter) in tree.counters.iter().enumerate() {
        let Some(&c) = counter.as_ref() else { continue };
        let lengths = data[i].offsets.windows(2).map(|w| w[1] - w[0]);
        let counts: Vec<u64> = match &data[c].values {
            Values::I8(v) => v.iter().map(|&x| x as u64).collect(),
            Values::U8(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Values::I16(v) => v.iter().map(|&x| x as u64).collect(),
            Values::U16(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Values::I32(v) => v.iter().map(|&x| x as u64).collect(),
            Values::U32(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Values::I64(v) => v.iter().map(|&x| x as u64).collect(),
            Values::U64(v) => v.clone(),
            _ => continue,
        };
        if let Some(entry) = lengths.zip(&counts).position(|(n, &count)| n != count) {
            return Err(Error::Options(format!(
                "tree {:?}: entry {entry} of branch {:?} has {} items where its counter {:?} \
                 says {}",
                tree.name,
                tree.names[i],
                data[i].offsets[entry + 1] - data[i].offsets[entry],
                tree.names[c],
                counts[entry] as i64
            )));
        }
    }
    Ok(entries.unwrap_or(0))
}

/// The bytes of `data`'s values and boundaries.
fn data_bytes(data: &ColumnData) -> usize {
    data.values.byte_len()
        + 8 * (data.offsets.len() + data.levels.iter().map(Vec::len).sum::<usize>())
}

/// `values` quantized by `q` and back; the first value outside its range is the error.
fn quantize(values: &mut Values, q: Quantization) -> std::result::Result<(), f64> {
    match values {
        Values::F32(v) => {
            for x in v {
                *x = q.apply_f32(*x).ok_or(f64::from(*x))?;
            }
        }
        Values::F64(v) => {
            for x in v {
                *x = q.apply_f64(*x).ok_or(*x)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The error of creating or naming the output: it exists, or the system's.
pub(super) fn output_error(path: &Path, e: std::io::Error, overwrite: bool) -> Error {
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
pub(super) fn io_error(path: &Path, source: std::io::Error) -> Error {
    evtc_format::Error::Io {
        path: Some(path.to_owned()),
        source,
    }
    .into()
}
