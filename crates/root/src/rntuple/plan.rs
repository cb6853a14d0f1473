//! How an RNTuple's fields become evtc columns: one column per leaf field (numbers, booleans,
//! strings), named by its path of record members (`hit.x`), with as many list levels as it has
//! collections, fixed-size arrays, optional values and variant alternatives above it. Each column
//! gets a [`FieldColumn`]: the chain of index (or switch) columns from its top-level field down,
//! and the column of its values, each as the physical columns of every representation.

use std::sync::Arc;

use super::element::{ColumnType, Decoded};
use super::field::{Columns, FieldColumn, Leaf, Level};
use super::meta::Descriptor;
use super::meta::{FieldDesc, Role};
use crate::column::{Column, FieldKind, FieldNode, Source, UnsupportedBranch};
use crate::typename::scalar_type;
use crate::types::{ColumnKind, ScalarType};

/// An RNTuple's columns, the fields it refuses, and the shape of its fields.
pub(crate) struct Planned {
    pub(crate) columns: Vec<Column>,
    pub(crate) unsupported: Vec<UnsupportedBranch>,
    pub(crate) fields: Vec<FieldNode>,
}

/// Plans every top-level field of `descriptor`.
pub(crate) fn plan(descriptor: &Arc<Descriptor>) -> Planned {
    let mut planner = Planner {
        d: descriptor,
        children: vec![Vec::new(); descriptor.fields.len()],
        columns: Vec::new(),
        unsupported: Vec::new(),
    };
    let mut top = Vec::new();
    for (id, f) in descriptor.fields.iter().enumerate() {
        let parent = f.parent as usize;
        if parent == id {
            top.push(id);
        } else if let Some(siblings) = planner.children.get_mut(parent) {
            siblings.push(id);
        }
    }
    // Untyped collections that projected fields show (RNTupleImporter's `_collection0` under
    // `nMuon` and `Muon_pt`) appear as the projections only.
    let projected: Vec<usize> = descriptor
        .fields
        .iter()
        .filter_map(|f| f.source.map(|s| s as usize))
        .collect();
    let mut fields = Vec::new();
    for id in top {
        let f = &descriptor.fields[id];
        if f.type_name.is_empty() && planner.shown_elsewhere(id, &projected) {
            continue;
        }
        let node = planner.field(id, f.name.clone(), f.name.clone(), Vec::new());
        fields.extend(node);
    }
    let order = planner.attach_counters();
    let mut new_index = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    fields.iter_mut().for_each(|f| renumber(f, &new_index));
    Planned {
        columns: planner.columns,
        unsupported: planner.unsupported,
        fields,
    }
}

struct Planner<'d> {
    d: &'d Arc<Descriptor>,
    children: Vec<Vec<usize>>,
    columns: Vec<Column>,
    unsupported: Vec<UnsupportedBranch>,
}

impl Planner<'_> {
    /// Whether field `id` or one of its descendants is the source of a projected field.
    fn shown_elsewhere(&self, id: usize, projected: &[usize]) -> bool {
        projected.contains(&id)
            || self.children[id]
                .iter()
                .any(|&c| self.shown_elsewhere(c, projected))
    }

    fn refuse(
        &mut self,
        name: &str,
        f: &FieldDesc,
        reason: impl Into<String>,
    ) -> Option<FieldNode> {
        self.unsupported.push(UnsupportedBranch {
            name: name.to_owned(),
            class: type_name(f),
            reason: reason.into(),
        });
        None
    }

    /// The columns of field `id` (its own, or, projected, the alias columns that show another
    /// field's): the `k`-th column of each representation. `Err` names what is wrong.
    fn columns(&self, id: usize, k: usize) -> Result<Columns, String> {
        let d = self.d;
        let physical: Vec<u32> = if d.fields[id].source.is_some() {
            d.aliases
                .iter()
                .filter(|a| a.field as usize == id)
                .map(|a| a.physical)
                .collect()
        } else {
            (0..d.columns.len() as u32)
                .filter(|&c| d.columns[c as usize].field as usize == id)
                .collect()
        };
        let mut by_representation: Vec<Vec<u32>> = Vec::new();
        for c in physical {
            let desc = d
                .columns
                .get(c as usize)
                .ok_or_else(|| format!("an alias of column {c}, which does not exist"))?;
            let r = usize::from(desc.representation);
            if r > by_representation.len() {
                return Err(format!(
                    "column representation {r} without the ones before it"
                ));
            }
            if r == by_representation.len() {
                by_representation.push(Vec::new());
            }
            by_representation[r].push(c);
        }
        let columns: Option<Vec<u32>> = by_representation
            .iter()
            .map(|cols| cols.get(k).copied())
            .collect();
        match columns {
            Some(c) if !c.is_empty() => Ok(Columns(c)),
            _ => Err(format!(
                "the field has no column {k} in every representation"
            )),
        }
    }

    /// The type of the columns of `columns`, which must all have a type this reader knows and
    /// decode to the same kind of element.
    fn column_type(&self, columns: &Columns) -> Result<ColumnType, String> {
        let mut found: Option<ColumnType> = None;
        for &c in &columns.0 {
            let desc = &self.d.columns[c as usize];
            let t = ColumnType::from_code(desc.kind).ok_or_else(|| {
                format!(
                    "column {c} has type {:#04x}, which this reader does not know (a newer \
                     RNTuple format)",
                    desc.kind
                )
            })?;
            if t.element_bits(desc.bits).is_none() {
                return Err(format!(
                    "column {c} of type {} has {} bits per element",
                    t.name(),
                    desc.bits
                ));
            }
            if found.is_some_and(|f| f.decoded() != t.decoded()) {
                return Err("its representations store different kinds of elements".into());
            }
            found = Some(t);
        }
        found.ok_or_else(|| "no column".into())
    }

    /// The index columns of a collection-like field: column `k`, of index type.
    fn index(&self, id: usize, k: usize) -> Result<Columns, String> {
        let columns = self.columns(id, k)?;
        match self.column_type(&columns)?.decoded() {
            Decoded::Index => Ok(columns),
            _ => Err(format!("its column {k} is not an index column")),
        }
    }

    /// The planned shape of field `id` (path `path` as ROOT names it, column name `name`) under
    /// `levels`; its leaf fields become columns.
    fn field(
        &mut self,
        id: usize,
        name: String,
        path: String,
        levels: Vec<Level>,
    ) -> Option<FieldNode> {
        let d = Arc::clone(self.d);
        let f = &d.fields[id];
        let children = self.children[id].clone();
        let node = |kind, children| FieldNode {
            name: f.name.clone(),
            type_name: type_name(f),
            kind,
            children,
        };
        match f.role {
            Role::Record => Some(self.record(id, name, path, levels, None)),
            Role::Collection => {
                let index = match self.index(id, 0) {
                    Ok(index) => index,
                    Err(why) => return self.refuse(&name, f, why),
                };
                let [item] = children[..] else {
                    let reason = format!("a collection with {} item fields", children.len());
                    return self.refuse(&name, f, reason);
                };
                let mut levels = levels;
                levels.push(Level::Collection(index));
                let item_path = format!("{path}.{}", d.fields[item].name);
                let item = self.field(item, name, item_path, levels)?;
                let kind = if is_nullable(&f.type_name) {
                    FieldKind::Option
                } else {
                    FieldKind::List
                };
                Some(node(kind, vec![item]))
            }
            Role::Variant => self.variant(id, name, path, levels),
            Role::Streamer => self.refuse(
                &name,
                f,
                "a field of objects streamed by ROOT's streamer (their bytes follow the class's \
                 streamer info, not RNTuple's columns)",
            ),
            Role::Unknown(role) => self.refuse(
                &name,
                f,
                format!("structural role {role}, which this reader does not know"),
            ),
            Role::Plain => self.plain(id, name, path, levels),
        }
    }

    /// A record's members, as uproot names them: a tuple's or pair's `_0` as `0`; the members
    /// of base classes (`:_0`, `:_1`, ...) lifted into the record after its own, the last base
    /// first, those that two bases share a name between qualified with their base's class
    /// (`Child::x`). With `qualify`, members named in its set are shown as `Class::name`.
    fn record(
        &mut self,
        id: usize,
        name: String,
        path: String,
        levels: Vec<Level>,
        qualify: Option<&(String, Vec<String>)>,
    ) -> FieldNode {
        let d = Arc::clone(self.d);
        let f = &d.fields[id];
        let (bases, own): (Vec<usize>, Vec<usize>) = self.children[id]
            .iter()
            .partition(|&&c| d.fields[c].name.starts_with(':'));
        let shown = |member: &str| -> String {
            let plain = member_name(member);
            match qualify {
                Some((class, names)) if names.iter().any(|n| n == plain) => {
                    format!("{class}::{plain}")
                }
                _ => plain.to_owned(),
            }
        };
        let mut members = Vec::new();
        for c in own {
            let member = &d.fields[c].name;
            let shown = shown(member);
            let column = format!("{name}.{shown}");
            let field_path = format!("{path}.{member}");
            if let Some(mut node) = self.field(c, column, field_path, levels.clone()) {
                node.name = shown;
                members.push(node);
            }
        }
        // Names more than one base brings.
        let lifted: Vec<Vec<String>> = bases.iter().map(|&b| self.member_names(b)).collect();
        for (&b, names) in bases.iter().zip(&lifted).rev() {
            let shared: Vec<String> = names
                .iter()
                .filter(|n| lifted.iter().filter(|other| other.contains(n)).count() > 1)
                .cloned()
                .collect();
            let class = d.fields[b].type_name.clone();
            let base_path = format!("{path}.{}", d.fields[b].name);
            // Names shared here are qualified with this base's class; within a base whose own
            // bases share none, those of an enclosing base keep theirs.
            let local = (!shared.is_empty()).then_some((class, shared));
            let qualify = local.as_ref().or(qualify);
            if d.fields[b].role == Role::Record {
                let base = self.record(b, name.clone(), base_path, levels.clone(), qualify);
                members.extend(base.children);
            } else if let Some(base) = self.field(b, name.clone(), base_path, levels.clone()) {
                members.push(base);
            }
        }
        FieldNode {
            name: f.name.clone(),
            type_name: type_name(f),
            kind: FieldKind::Record,
            children: members,
        }
    }

    /// The member names a record shows (its own, then its bases' lifted ones).
    fn member_names(&self, id: usize) -> Vec<String> {
        let d = self.d;
        let mut names = Vec::new();
        for &c in &self.children[id] {
            let f = &d.fields[c];
            if f.name.starts_with(':') && f.role == Role::Record {
                names.extend(self.member_names(c));
            } else {
                names.push(member_name(&f.name).to_owned());
            }
        }
        names
    }

    /// A plain field: a leaf with columns, a fixed-size array, or a wrapper (`std::atomic`, an
    /// enum) of its one subfield.
    fn plain(
        &mut self,
        id: usize,
        name: String,
        path: String,
        mut levels: Vec<Level>,
    ) -> Option<FieldNode> {
        let d = Arc::clone(self.d);
        let f = &d.fields[id];
        let children = self.children[id].clone();
        let has_columns = self.columns(id, 0).is_ok();
        if let Some(n) = f.array_size {
            levels.push(Level::Array(n));
            let shape = FieldKind::Array(n);
            if has_columns {
                // `std::bitset<N>`: N bits per item in its own column.
                let leaf = self.leaf(id, &name, &path, levels)?;
                return Some(FieldNode {
                    name: f.name.clone(),
                    type_name: type_name(f),
                    kind: shape,
                    children: vec![leaf],
                });
            }
            let [item] = children[..] else {
                return self.refuse(&name, f, "a fixed-size array without its item field");
            };
            let item_path = format!("{path}.{}", d.fields[item].name);
            let item = self.field(item, name, item_path, levels)?;
            return Some(FieldNode {
                name: f.name.clone(),
                type_name: type_name(f),
                kind: shape,
                children: vec![item],
            });
        }
        if has_columns {
            return self.leaf(id, &name, &path, levels);
        }
        match children[..] {
            // `std::atomic<T>`, an enum: the subfield under the field's own name.
            [inner] => {
                let inner_path = format!("{path}.{}", d.fields[inner].name);
                let mut node = self.field(inner, name, inner_path, levels)?;
                node.name = f.name.clone();
                node.type_name = type_name(f);
                Some(node)
            }
            _ => self.refuse(&name, f, "a plain field without columns or one subfield"),
        }
    }

    /// A leaf field with columns: numbers, booleans, a string (index and characters), a
    /// cardinality, a bitset's bits.
    fn leaf(
        &mut self,
        id: usize,
        name: &str,
        path: &str,
        mut levels: Vec<Level>,
    ) -> Option<FieldNode> {
        let d = Arc::clone(self.d);
        let f = &d.fields[id];
        let base = f.type_name.trim_start_matches("std::");
        let planned = (|| -> Result<(Leaf, ColumnKind), String> {
            if base == "string" {
                levels.push(Level::Collection(self.index(id, 0)?));
                let chars = self.columns(id, 1)?;
                self.check_values(&chars, ScalarType::U8)?;
                let lists = levels.len() - 1;
                let kind = ColumnKind::of_lists(None, lists).ok_or_else(too_deep)?;
                return Ok((
                    Leaf::Values {
                        columns: chars,
                        output: ScalarType::U8,
                    },
                    kind,
                ));
            }
            if let Some(size) = cardinality(&f.type_name) {
                let index = self.index(id, 0)?;
                let kind = ColumnKind::of_lists(Some(size), levels.len()).ok_or_else(too_deep)?;
                return Ok((
                    Leaf::Cardinality {
                        columns: index,
                        output: size,
                    },
                    kind,
                ));
            }
            let output = if f.array_size.is_some() {
                ScalarType::Bool
            } else {
                number_type(&f.type_name).ok_or_else(|| {
                    format!("type `{}` is not a number type evtc reads", f.type_name)
                })?
            };
            let columns = self.columns(id, 0)?;
            self.check_values(&columns, output)?;
            Ok((Leaf::Values { columns, output }, kind_of(output, &levels)?))
        })();
        let (leaf, kind) = match planned {
            Ok(planned) => planned,
            Err(why) => return self.refuse(name, f, why),
        };
        self.push(name, path, f, kind, levels, leaf);
        Some(FieldNode {
            name: f.name.clone(),
            type_name: type_name(f),
            kind: FieldKind::Column(self.columns.len() - 1),
            children: Vec::new(),
        })
    }

    /// A variant: a column of the alternative each item holds, then each alternative's fields
    /// under a list level of zero or one item per item.
    fn variant(
        &mut self,
        id: usize,
        name: String,
        path: String,
        levels: Vec<Level>,
    ) -> Option<FieldNode> {
        let d = Arc::clone(self.d);
        let f = &d.fields[id];
        let switch = match self
            .columns(id, 0)
            .and_then(|c| match self.column_type(&c)?.decoded() {
                Decoded::Switch => Ok(c),
                _ => Err("its column is not a switch column".into()),
            }) {
            Ok(switch) => switch,
            Err(why) => return self.refuse(&name, f, why),
        };
        let kind = match ColumnKind::of_lists(Some(ScalarType::I8), levels.len()) {
            Some(kind) => kind,
            None => return self.refuse(&name, f, too_deep()),
        };
        self.push(
            &name,
            &path,
            f,
            kind,
            levels.clone(),
            Leaf::Tag {
                switch: switch.clone(),
            },
        );
        let tag_column = self.columns.len() - 1;
        let mut alternatives = vec![FieldNode {
            name: String::new(),
            type_name: "std::int8_t".into(),
            kind: FieldKind::Column(tag_column),
            children: Vec::new(),
        }];
        for (k, &c) in self.children[id].clone().iter().enumerate() {
            let mut levels = levels.clone();
            levels.push(Level::Alternative {
                switch: switch.clone(),
                tag: k as u32 + 1,
            });
            let member = &d.fields[c].name;
            if let Some(alternative) = self.field(
                c,
                format!("{name}.{member}"),
                format!("{path}.{member}"),
                levels,
            ) {
                alternatives.push(FieldNode {
                    name: member.clone(),
                    type_name: alternative.type_name.clone(),
                    kind: FieldKind::Option,
                    children: vec![alternative],
                });
            }
        }
        Some(FieldNode {
            name: f.name.clone(),
            type_name: type_name(f),
            kind: FieldKind::Variant,
            children: alternatives,
        })
    }

    /// Checks that `columns` hold values that read as `output`.
    fn check_values(&self, columns: &Columns, output: ScalarType) -> Result<(), String> {
        let t = self.column_type(columns)?;
        for &c in &columns.0 {
            let t = ColumnType::from_code(self.d.columns[c as usize].kind).unwrap_or(t);
            if !t.reads_as(output) {
                return Err(format!(
                    "its column of type {} does not read as {output}",
                    t.name()
                ));
            }
        }
        Ok(())
    }

    fn push(
        &mut self,
        name: &str,
        path: &str,
        f: &FieldDesc,
        kind: ColumnKind,
        levels: Vec<Level>,
        leaf: Leaf,
    ) {
        let dims = match (kind, levels.as_slice()) {
            (ColumnKind::Fixed(..), levels) if levels.len() > 1 => levels
                .iter()
                .filter_map(|l| match l {
                    Level::Array(n) => usize::try_from(*n).ok(),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        // The column's bytes: of its values, and of a string's offsets.
        let mut physical: Vec<u32> = match &leaf {
            Leaf::Values { columns, .. } | Leaf::Cardinality { columns, .. } => columns.0.clone(),
            Leaf::Tag { switch } => switch.0.clone(),
        };
        if let (ColumnKind::String | ColumnKind::Strings(_), Some(Level::Collection(index))) =
            (kind, levels.last())
        {
            physical.extend(&index.0);
        }
        let (zip_bytes, tot_bytes) = physical
            .iter()
            .map(|&c| self.d.column_bytes(c as usize))
            .fold((0u64, 0u64), |(z, t), (s, r)| (z + s, t + r));
        let plan = FieldColumn {
            descriptor: Arc::clone(self.d),
            path: path.to_owned(),
            levels,
            leaf,
        };
        self.columns.push(Column {
            name: name.to_owned(),
            kind,
            counter: None,
            root_type: type_name(f),
            dims,
            compression: self.d.compression,
            tot_bytes,
            zip_bytes,
            source: Source::Field(Arc::new(plan)),
        });
    }

    /// A column of one list level whose collection's index column a top-level cardinality field
    /// shows (RNTupleImporter's `Muon_pt` and `nMuon`) is counted by that field, as a TTree's
    /// `Muon_pt[nMuon]` is.
    /// Returns the columns' new order: `order[new]` is the old index.
    fn attach_counters(&mut self) -> Vec<usize> {
        let counters: Vec<(String, Columns)> = self
            .columns
            .iter()
            .filter_map(|c| match (&c.source, c.kind) {
                (Source::Field(plan), ColumnKind::Scalar(_)) => match &plan.leaf {
                    Leaf::Cardinality { columns, .. } if plan.levels.is_empty() => {
                        Some((c.name.clone(), columns.clone()))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for column in &mut self.columns {
            let Source::Field(plan) = &column.source else {
                continue;
            };
            if let (ColumnKind::Jagged(_), [Level::Collection(index)]) =
                (column.kind, plan.levels.as_slice())
            {
                column.counter = counters
                    .iter()
                    .find(|(_, c)| c == index)
                    .map(|(name, _)| name.clone());
            }
        }
        // A counter comes before the columns it counts (the importer writes `Muon_pt` before
        // `nMuon`): each moves to just before the first column that names it.
        let mut order: Vec<usize> = (0..self.columns.len()).collect();
        for (counter, _) in counters {
            let first_use = self
                .columns
                .iter()
                .position(|c| c.counter.as_deref() == Some(counter.as_str()));
            let at = self.columns.iter().position(|c| c.name == counter);
            if let (Some(first_use), Some(at)) = (first_use, at)
                && at > first_use
            {
                let column = self.columns.remove(at);
                self.columns.insert(first_use, column);
                let moved = order.remove(at);
                order.insert(first_use, moved);
            }
        }
        order
    }
}

/// Points the columns of `node` and its children at their new indices.
fn renumber(node: &mut FieldNode, new_index: &[usize]) {
    if let FieldKind::Column(k) = &mut node.kind {
        *k = new_index[*k];
    }
    node.children
        .iter_mut()
        .for_each(|c| renumber(c, new_index));
}

fn too_deep() -> String {
    format!(
        "more than {} list levels (collections, arrays, optional values)",
        ColumnKind::MAX_DEPTH
    )
}

/// The kind of a column of `output` values under `levels`: fixed-size arrays alone make a fixed
/// array of their product; any other level makes lists.
fn kind_of(output: ScalarType, levels: &[Level]) -> Result<ColumnKind, String> {
    if !levels.is_empty() && levels.iter().all(|l| matches!(l, Level::Array(_))) {
        let n = levels
            .iter()
            .try_fold(1u64, |n, l| match l {
                Level::Array(k) => n.checked_mul(*k),
                _ => Some(n),
            })
            .and_then(|n| usize::try_from(n).ok())
            .ok_or("a fixed-size array of more values than memory holds")?;
        return Ok(ColumnKind::Fixed(output, n));
    }
    ColumnKind::of_lists(Some(output), levels.len()).ok_or_else(too_deep)
}

/// The field's type as shown: its alias (`Double32_t`) where it has one.
fn type_name(f: &FieldDesc) -> String {
    if f.type_alias.is_empty() {
        f.type_name.clone()
    } else {
        f.type_alias.clone()
    }
}

/// A record member's name as shown: `_0` of a tuple or pair as `0`, as uproot names them.
fn member_name(name: &str) -> &str {
    match name.strip_prefix('_') {
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => digits,
        _ => name,
    }
}

/// `std::optional<T>` and `std::unique_ptr<T>`: collections of zero or one item.
fn is_nullable(type_name: &str) -> bool {
    let t = type_name.trim_start_matches("std::");
    t.starts_with("optional<") || t.starts_with("unique_ptr<")
}

/// The size type of `ROOT::RNTupleCardinality<T>`.
fn cardinality(type_name: &str) -> Option<ScalarType> {
    let inner = type_name
        .strip_prefix("ROOT::RNTupleCardinality<")
        .or_else(|| type_name.strip_prefix("ROOT::Experimental::RNTupleCardinality<"))?
        .strip_suffix('>')?;
    number_type(inner).filter(|t| matches!(t, ScalarType::U32 | ScalarType::U64))
}

/// The number type of a leaf field's type name (`std::int32_t`, `float`, `char`, `std::byte`).
fn number_type(type_name: &str) -> Option<ScalarType> {
    let t = type_name.trim_start_matches("std::");
    match t {
        "byte" => Some(ScalarType::U8),
        "char" => Some(ScalarType::I8),
        "Double32_t" => Some(ScalarType::F64),
        _ => scalar_type(&crate::typename::compact(t)),
    }
}
