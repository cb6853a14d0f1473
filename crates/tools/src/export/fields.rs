//! What a tree's columns become in a ROOT file: one field (or branch) per column, a nested
//! list's chain of evtc branches (`X`, `X/sizes`, ...) joined into one, the codec and float
//! storage of each, names ROOT accepts; and what had to change, as notes.

use evtc_codecs::{Algorithm, Codec, Quantization};
use evtc_root::{ColumnData, ColumnKind, FloatStorage, Values};

use super::RootBranch;
use crate::source::SourceTree;
use crate::{Error, OutputFormat, Result, Settings, kept_columns};

/// One field of the output.
#[derive(Debug, Clone)]
pub(super) struct Field {
    /// The output branch (its counter, a NanoAOD-like array's, kept before it).
    pub(super) branch: RootBranch,
    pub(super) storage: Storage,
    /// The input branch's name (the output's, unless ROOT needed another).
    pub(super) source_name: String,
    /// The selected input columns feeding it (positions in [`Plan::columns`]): its values,
    /// then, for a nested list written by evtc as a chain, `X/sizes`, `X/sizes/sizes`, ...
    pub(super) parts: Vec<usize>,
}

/// The output fields of a tree and the input columns they read.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) fields: Vec<Field>,
    /// The input columns to read, in order.
    pub(super) columns: Vec<usize>,
    /// What could not be kept as it was, in words.
    pub(super) notes: Vec<String>,
}

/// Plans the fields of `source`'s kept columns.
///
/// # Errors
/// [`Error::Options`] for two branches whose names ROOT makes the same.
pub(super) fn plan(
    source: &SourceTree<'_>,
    settings: &Settings,
    tree: &str,
    format: OutputFormat,
) -> Result<Plan> {
    let columns = source.columns();
    let keep = kept_columns(columns, &settings.branches);
    let evtc = (0..columns.len()).any(|i| source.branch_meta(i).is_some());
    let position = |name: &str| columns.iter().position(|c| c.name == name);
    // Branches that belong to another's chain (`X/sizes` of a kept `X`) are written with it.
    let mut consumed = vec![false; columns.len()];
    let mut plan = Plan {
        fields: Vec::new(),
        columns: Vec::new(),
        notes: Vec::new(),
    };
    let mut renamed = Vec::new();
    let (mut rac, mut preconditioned) = (0usize, 0usize);
    for (i, c) in columns.iter().enumerate() {
        if !keep[i] || consumed[i] {
            continue;
        }
        let mut chain = vec![i];
        if evtc && c.kind.is_variable() {
            let mut name = format!("{}/sizes", c.name);
            while let Some(j) = position(&name) {
                consumed[j] = true;
                chain.push(j);
                name.push_str("/sizes");
            }
        }
        let depth = chain.len() - 1;
        let kind = match (c.kind, depth) {
            (kind, 0) => kind,
            (ColumnKind::Jagged(t), d) => ColumnKind::Nested(t, (d + 1) as u8),
            (ColumnKind::String, d) => ColumnKind::Strings(d as u8),
            (kind, _) => kind,
        };
        let meta = source.branch_meta(i);
        if let Some(meta) = meta {
            rac += usize::from(meta.rac);
            preconditioned += usize::from(meta.precondition != 0);
        }
        let name = root_name(&c.name, format);
        if name != c.name {
            renamed.push(format!("{} as {name}", c.name));
        }
        let storage = storage(&c.name, kind, settings, meta);
        // A counter kept, written before the array (as ROOT needs it for a leaf-count array).
        let counter = c.counter.clone().filter(|n| {
            position(n).is_some_and(|j| keep[j] && j < i)
                && matches!(kind, ColumnKind::Jagged(_))
                && plan.fields.iter().any(|f| &f.source_name == n)
        });
        let parts = chain
            .iter()
            .map(|&j| {
                plan.columns.push(j);
                plan.columns.len() - 1
            })
            .collect();
        let dims = c.shape.iter().map(|&d| d as usize).collect();
        plan.fields.push(Field {
            branch: RootBranch {
                name: name.clone(),
                kind,
                dims,
                counter,
            },
            storage,
            source_name: c.name.clone(),
            parts,
        });
    }
    // A renamed branch whose new name another branch has gets a suffix: `vhit.x` beside a
    // `vhit_x` is written as `vhit_x_2`.
    let mut taken: std::collections::HashSet<String> = plan
        .fields
        .iter()
        .filter(|f| f.branch.name == f.source_name)
        .map(|f| f.branch.name.clone())
        .collect();
    for f in plan
        .fields
        .iter_mut()
        .filter(|f| f.branch.name != f.source_name)
    {
        let base = f.branch.name.clone();
        let mut n = 1;
        while !taken.insert(f.branch.name.clone()) {
            n += 1;
            f.branch.name = format!("{base}_{n}");
        }
        if n > 1 {
            renamed.retain(|r| !r.starts_with(&format!("{} as ", f.source_name)));
            renamed.push(format!("{} as {}", f.source_name, f.branch.name));
        }
    }
    // Counters by their output names.
    let names: std::collections::HashMap<String, String> = plan
        .fields
        .iter()
        .map(|f| (f.source_name.clone(), f.branch.name.clone()))
        .collect();
    for f in &mut plan.fields {
        f.branch.counter = f.branch.counter.take().and_then(|c| names.get(&c).cloned());
    }
    if !renamed.is_empty() {
        plan.notes.push(format!(
            "tree {tree:?}: {} branches renamed, as ROOT does not allow their characters: {}",
            renamed.len(),
            renamed.join(", ")
        ));
    }
    if rac > 0 {
        plan.notes.push(format!(
            "tree {tree:?}: random-access compression of {rac} branches not kept (ROOT has none; \
             their pages and baskets are compressed whole)"
        ));
    }
    if preconditioned > 0 {
        plan.notes.push(format!(
            "tree {tree:?}: evtc's preconditioners of {preconditioned} branches {}",
            match format {
                OutputFormat::TTree => "not kept (TTree baskets hold plain big-endian values)",
                _ => "replaced by RNTuple's own encodings (byte split, zigzag, deltas)",
            }
        ));
    }
    Ok(plan)
}

/// How one branch is stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Storage {
    pub(super) codec: Codec,
    pub(super) floats: FloatStorage,
    /// Mantissa bits to round the floats to as they are written (a `float_precision` rule).
    pub(super) round: Option<u32>,
    /// The range and bits to quantize the floats to (a `float_quantize` rule), for a format
    /// that stores full floats.
    pub(super) quantize: Option<Quantization>,
}

/// How the branch `name` of `kind` is stored: its codec and float storage from the settings'
/// last matching rules, else the settings' codec, else the input branch's own (`meta`, an evtc
/// branch's), else the default.
pub(super) fn storage(
    name: &str,
    kind: ColumnKind,
    settings: &Settings,
    meta: Option<&evtc_format::BranchMeta>,
) -> Storage {
    let rules = settings
        .branch_rules
        .iter()
        .rev()
        .filter(|(g, _)| g.matches(name))
        .map(|(_, s)| s);
    let input_codec =
        meta.and_then(|m| Codec::new(Algorithm::from_id(m.codec).ok()?, i32::from(m.level)).ok());
    let codec = rules
        .clone()
        .find_map(|s| s.codec)
        .or(settings.codec)
        .or(input_codec)
        .unwrap_or(Codec::DEFAULT);
    let is_float =
        kind.scalar().is_float() && !matches!(kind, ColumnKind::String | ColumnKind::Strings(_));
    let rule_bits = rules
        .clone()
        .find_map(|s| s.mantissa_bits)
        .filter(|_| is_float);
    let rule_quant = rules.clone().find_map(|s| s.quantize).filter(|_| is_float);
    let floats = match (rule_quant, rule_bits) {
        (Some(q), _) => quantized(q),
        (None, Some(bits)) => FloatStorage::Truncated {
            mantissa_bits: bits,
        },
        (None, None) => match meta.map(|m| (m.quantization(), m.mantissa_bits())) {
            Some((Some(q), _)) => quantized(q),
            Some((None, Some(bits))) => FloatStorage::Truncated {
                mantissa_bits: bits,
            },
            _ => FloatStorage::Plain,
        },
    };
    Storage {
        codec,
        floats,
        round: rule_bits.filter(|_| rule_quant.is_none()),
        quantize: rule_quant,
    }
}

/// `q` as RNTuple's quantized floats.
fn quantized(q: Quantization) -> FloatStorage {
    FloatStorage::Quantized {
        min: q.min(),
        max: q.max(),
        bits: q.bits(),
    }
}

/// `name` as ROOT takes it in `format`: RNTuple names without `.`, space, `/` or `\`, TTree
/// branch names without space, `/`, `[` or `]` (each written as `_`).
pub(super) fn root_name(name: &str, format: OutputFormat) -> String {
    let refused = |c: char| match format {
        OutputFormat::TTree => matches!(c, ' ' | '/' | '[' | ']'),
        _ => matches!(c, '.' | ' ' | '/' | '\\'),
    };
    name.chars()
        .map(|c| if refused(c) || c.is_control() { '_' } else { c })
        .collect()
}

impl Field {
    /// The field's data of a chunk: its column's data, or a chain's joined into nested lists
    /// (`X`'s values; each `X/sizes...` as a list level's boundaries, the last one's entries
    /// as the entries').
    pub(super) fn assemble(&self, chunk: &mut [Option<ColumnData>]) -> Result<ColumnData> {
        let mut take = |part: usize| {
            chunk[part].take().ok_or_else(|| {
                Error::Options(format!(
                    "internal: column data of {:?} read twice",
                    self.source_name
                ))
            })
        };
        let mut data = take(self.parts[0])?;
        if self.parts.len() > 1 {
            let mut levels = Vec::new();
            let mut outer = Vec::new();
            for &part in &self.parts[1..] {
                let sizes = take(part)?;
                let Values::U32(lengths) = &sizes.values else {
                    return Err(Error::Options(format!(
                        "branch {:?}: its sizes branch does not hold u32 lengths",
                        self.source_name
                    )));
                };
                let mut bounds = Vec::with_capacity(lengths.len() + 1);
                bounds.push(0u64);
                let mut end = 0u64;
                for &n in lengths {
                    end += u64::from(n);
                    bounds.push(end);
                }
                levels.push(bounds);
                outer = sizes.offsets;
            }
            data.offsets = outer;
            data.levels = levels;
        }
        Ok(data)
    }
}
