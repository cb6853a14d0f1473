//! TTrees: the TTree record (TTree 16-20, and older versions through the file's streamer
//! infos), and the walk of its branches (as `branch` streams them) that maps each onto columns
//! (`columns` says how, for each kind of branch).

use std::sync::Arc;

use crate::column::{Column, Source, Tree, TreeKind, UnsupportedBranch};
use crate::error::{Error, Result};
use crate::file::{Key, RootFile};
use crate::objects::{Parser, Tagged};
use crate::old_versions::Step;
use crate::reduced::Stored;
use crate::source::ReadAt;
use crate::streamer::Streamers;
use crate::types::{ColumnKind, ScalarType};
use baskets::BasketReader;
use branch::RawBranch;
use branch::RawLeaf;
use column::{BasketRef, Layout, RowPart};
use columns::{
    ColumnTemplate, VectorMember, element_column, interpreted, leaf_column, leaf_dims,
    leaf_type_name, member, member_columns, object_vector, unsplit_object,
};
use interp::Plan;

pub(crate) mod baskets;
pub(crate) mod branch;
pub(crate) mod column;
mod columns;
mod decode;
pub(crate) mod interp;
mod plan;

impl<R: ReadAt> RootFile<R> {
    /// Reads the TTree (or TNtuple) behind `key`, named `name`.
    pub(crate) fn ttree(&self, key: &Key, name: String) -> Result<Tree> {
        let what = format!("TTree {name:?} (key at byte {})", key.seek_key);
        let record = self.read_object(key, &what)?;
        // A TNtuple or TNtupleD is a TTree (its base class, after the derived class's own
        // header) and a variable count.
        let derived = key.class_name != "TTree";
        let mut tree = Tree::parse(&record, key.key_len, derived, name, self.streamers(), &what)?;
        self.refuse_misfit_plans(&mut tree);
        Ok(tree)
    }

    /// Objects planned from the streamer infos (vectors of objects, objects of varying size)
    /// may be streamed otherwise than planned (a vector written member-wise is marked in each
    /// entry only): each such branch's first basket is read when the tree is opened, and the
    /// columns it does not fit are refused with the reason (so that `--skip-unsupported` leaves
    /// them out instead of failing the conversion). A `char*` leaf written without entry offsets
    /// is split into entries by its strings' lengths, which fails where an empty string left no
    /// bytes: every basket of such a leaf is read too, and the leaf refused if one does not split.
    /// A `std::bitset` read as the vector of bools its collection proxy streams is probed like
    /// objects: some writers (ROOT 6.08 among them) wrote a split object's bitset member as no
    /// bytes at all.
    fn refuse_misfit_plans(&self, tree: &mut Tree) {
        // The columns of one branch share its baskets and walk the same bytes: one probe each.
        let mut probed: std::collections::HashMap<*const BasketRef, Option<String>> =
            std::collections::HashMap::new();
        let misfits: Vec<(usize, String)> = tree
            .columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let b = c.branch()?;
                let probe: fn(&mut BasketReader<'_, R>) -> Option<String> = match b.layout {
                    Layout::ObjectVector { .. } | Layout::Interpreted { .. } => {
                        |r: &mut BasketReader<'_, R>| {
                            r.first_basket_misfit().map(|why| {
                                format!(
                                    "its first basket does not read as its class is laid out: \
                                     {why}"
                                )
                            })
                        }
                    }
                    Layout::Vector { .. } | Layout::VectorVector { .. }
                        if c.root_type.contains("bitset<") =>
                    {
                        |r: &mut BasketReader<'_, R>| {
                            r.first_basket_misfit().map(|why| {
                                format!(
                                    "its first basket does not read as a std::bitset is streamed \
                                     (an object header, the size, a byte per bit): {why}"
                                )
                            })
                        }
                    }
                    Layout::String { header: false } if !b.entry_offsets => {
                        |r: &mut BasketReader<'_, R>| {
                            r.unsplittable_basket().map(|why| {
                                format!("its entries cannot be told apart in a basket: {why}")
                            })
                        }
                    }
                    _ => return None,
                };
                let key = b.baskets.as_ptr();
                let why = probed.entry(key).or_insert_with(|| {
                    let counter = match &c.source {
                        Source::Branch(_, counter) => counter.as_deref(),
                        Source::Field(_) => None,
                    };
                    probe(&mut BasketReader::new(self, c, b, counter))
                });
                Some((i, why.clone()?))
            })
            .collect();
        for (i, why) in misfits.into_iter().rev() {
            let c = tree.columns.remove(i);
            tree.unsupported.push(UnsupportedBranch {
                name: c.name,
                class: c.root_type,
                reason: why,
            });
        }
    }
}

/// The major and minor names of the `TTreeIndex` in a TTree record's `fTreeIndex`, read from
/// just after its `fBranches`: `fLeaves` (a TObjArray), `fAliases` (a TList pointer),
/// `fIndexValues` (a TArrayD: length and values), `fIndex` (a TArrayI), then `fTreeIndex` (a
/// `TVirtualIndex` pointer). A `TTreeIndex` streams its `TVirtualIndex` base (a TNamed), then
/// `fMajorName` and `fMinorName`. `None` for another index class or none.
fn tree_index(p: &mut Parser<'_>) -> Result<Option<(String, String)>> {
    p.skip_object()?; // fLeaves
    skip_pointer(p)?; // fAliases
    for width in [8, 4] {
        // fIndexValues, fIndex
        let n = p.c.count("TArray length")?;
        p.c.skip(
            n.checked_mul(width)
                .ok_or_else(|| p.c.error("TArray length overflows"))?,
        )?;
    }
    match p.tagged()? {
        Tagged::Object { class, end } if class == "TTreeIndex" => {
            let (_, _version) = p.header()?;
            let (base_end, _) = p.header()?; // TVirtualIndex
            let _ = p.named()?;
            p.end(base_end)?;
            let major = p.c.string()?;
            let minor = p.c.string()?;
            p.end(end)?;
            Ok(Some((major, minor)))
        }
        _ => Ok(None),
    }
}

/// Skips an object pointer (`TBufferFile::WriteObjectAny`): null, a reference, or an object
/// with a byte count.
fn skip_pointer(p: &mut Parser<'_>) -> Result<()> {
    match p.tagged()? {
        Tagged::Object { end: Some(end), .. } => p.c.seek(end),
        Tagged::Object { end: None, class } => Err(p.c.error(format!(
            "an object of class {class} without a byte count cannot be skipped"
        ))),
        Tagged::Null | Tagged::Reference => Ok(()),
    }
}

impl Tree {
    /// Parses a TTree record (its key header was `key_len` bytes: class tags count it); with
    /// `derived`, the record of a class derived from TTree (`TNtuple`), whose own header comes
    /// first.
    pub(crate) fn parse(
        record: &[u8],
        key_len: u16,
        derived: bool,
        name: String,
        streamers: &Streamers,
        what: &str,
    ) -> Result<Tree> {
        let mut p = Parser::new(record, key_len, what).with_streamers(streamers);
        if derived {
            let _ = p.header()?;
        }
        let (end, version) = p.header()?;
        if !(16..=20).contains(&version) {
            return Tree::parse_old(p, end, version, name, streamers, what);
        }
        let (_, title) = p.named()?;
        p.skip_object()?; // TAttLine
        p.skip_object()?; // TAttFill
        p.skip_object()?; // TAttMarker
        let entries = p.c.i64()?;
        let _tot_bytes = p.c.i64()?;
        let _zip_bytes = p.c.i64()?;
        let _saved_bytes = p.c.i64()?;
        if version >= 18 {
            let _flushed_bytes = p.c.i64()?;
        }
        p.c.skip(8 + 4 * 3)?; // fWeight, fTimerInterval, fScanField, fUpdate
        if version >= 17 {
            let _default_entry_offset_len = p.c.i32()?;
        }
        let cluster_ranges = if version >= 19 {
            p.c.count("fNClusterRange")?
        } else {
            0
        };
        p.c.skip(8 * 4)?; // fMaxEntries, fMaxEntryLoop, fMaxVirtualSize, fAutoSave
        let auto_flush = if version >= 18 { p.c.i64()? } else { 0 };
        let _estimate = p.c.i64()?;
        if version >= 19 {
            for _ in 0..2 {
                // fClusterRangeEnd, fClusterSize: a presence byte, then the array.
                if p.c.u8()? != 0 {
                    p.c.skip(
                        cluster_ranges
                            .checked_mul(8)
                            .ok_or_else(|| p.c.error("fNClusterRange overflows"))?,
                    )?;
                }
            }
        }
        if version >= 20 {
            p.skip_object()?; // fIOFeatures
        }
        let branches = p.branch_array()?;
        // The index is an extra: a record it cannot be read from still has its branches.
        let index = tree_index(&mut p).ok().flatten();
        p.c.seek(end.unwrap_or(record.len()).min(record.len()))?;
        let entries = u64::try_from(entries)
            .map_err(|_| Error::corrupt(what, 0, format!("negative entry count {entries}")))?;
        let tree = Tree {
            name,
            title,
            entries,
            auto_flush: u64::try_from(auto_flush).ok().filter(|&n| n > 0),
            columns: Vec::new(),
            unsupported: Vec::new(),
            kind: TreeKind::TTree,
            fields: Vec::new(),
            index,
        };
        tree.with_branches(&branches, streamers, what)
    }

    /// A TTree record of a class version without a fixed layout here (ROOT 4's and Geant4
    /// g4tools' version 5: `fEntries` a double, no cluster ranges), read up to its branches as
    /// the file's streamer info lists its members; the rest is skipped by the byte count.
    fn parse_old(
        mut p: Parser<'_>,
        end: Option<usize>,
        version: i16,
        name: String,
        streamers: &Streamers,
        what: &str,
    ) -> Result<Tree> {
        let info = streamers.info("TTree", i32::from(version)).ok_or_else(|| {
            p.version_error(
                "TTree",
                version,
                "16-20, or as the file's streamer info describes it",
            )
        })?;
        let mut branches = None;
        let members = p.walk("TTree", &info.elements, |p, el, _| {
            if el.name != "fBranches" {
                return Ok(Step::Walk);
            }
            branches = Some(p.branch_array()?);
            Ok(Step::Stop)
        })?;
        let Some(branches) = branches else {
            return Err(Error::corrupt(
                what,
                0,
                format!("the streamer info of TTree {version} lists no fBranches"),
            ));
        };
        if let Some(end) = end {
            p.c.seek(end)?;
        }
        let entries = members
            .count("fEntries")
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| {
                Error::corrupt(
                    what,
                    0,
                    format!("fEntries {:?} is not a count", members.number("fEntries")),
                )
            })?;
        let tree = Tree {
            name,
            title: members.string("fTitle").unwrap_or_default().to_owned(),
            entries,
            auto_flush: members
                .count("fAutoFlush")
                .and_then(|n| u64::try_from(n).ok())
                .filter(|&n| n > 0),
            columns: Vec::new(),
            unsupported: Vec::new(),
            kind: TreeKind::TTree,
            fields: Vec::new(),
            index: None,
        };
        tree.with_branches(&branches, streamers, what)
    }

    /// The tree with `branches` made its columns (or refused).
    fn with_branches(
        mut self,
        branches: &[RawBranch],
        streamers: &Streamers,
        what: &str,
    ) -> Result<Tree> {
        for branch in branches {
            self.add_branch(branch, None, streamers, what)?;
        }
        self.refuse_partial_branches();
        self.make_names_unique();
        self.attach_counters();
        Ok(self)
    }

    /// Branches filled a different number of times than their tree (filled for some entries
    /// only, or added after the first fills) have no value for some entries, or values that
    /// belong to other entries: they are refused, saying what ROOT would return.
    fn refuse_partial_branches(&mut self) {
        let entries = self.entries;
        // Entries a branch's baskets hold.
        let held = |c: &Column| c.baskets().last().map_or(0, |b| b.first_entry + b.entries);
        let (partial, whole): (Vec<Column>, Vec<Column>) = std::mem::take(&mut self.columns)
            .into_iter()
            .partition(|c| held(c) != entries);
        self.columns = whole;
        for c in partial {
            let held = held(&c);
            self.unsupported.push(UnsupportedBranch {
                name: c.name,
                class: c.kind.cpp_name(),
                reason: if held < entries {
                    format!(
                        "the branch holds {held} entries, its tree {entries}: past a branch's \
                         last filled entry ROOT's GetEntry reads nothing and keeps the previous \
                         value, so entries {held}..{entries} have none of their own"
                    )
                } else {
                    format!(
                        "the branch holds {held} entries, its tree {entries}: it was filled more \
                         often than its tree, so its entries do not line up with the tree's"
                    )
                },
            });
        }
    }

    /// Gives each `x[n]` column its counter's column, from which a reader rebuilds the entry
    /// offsets of a basket written without them (the branch's `fEntryOffsetLen` is 0, or a
    /// basket has no room for them after its data), as ROOT reads such baskets: entry by entry,
    /// `n` values each.
    ///
    /// Pointer arrays in a collection's objects get the column of their length member, without
    /// which they cannot be read: one whose length member has no column is refused.
    fn attach_counters(&mut self) {
        let counters: Vec<Option<Box<Column>>> = self
            .columns
            .iter()
            .map(|c| {
                let lengths = c.branch().and_then(|b| b.lengths.as_deref());
                let name = c.counter.as_deref().or(lengths)?;
                let counter = self.columns.iter().find(|k| k.name == name)?;
                Some(Box::new(counter.clone()))
            })
            .collect();
        let mut kept = Vec::with_capacity(self.columns.len());
        for (mut column, counter) in std::mem::take(&mut self.columns).into_iter().zip(counters) {
            let lengths = column.branch().and_then(|b| b.lengths.clone());
            if let (Some(lengths), None) = (lengths, &counter) {
                self.unsupported.push(UnsupportedBranch {
                    name: column.name.clone(),
                    class: column.root_type.clone(),
                    reason: format!(
                        "a variable-length array in each object of a collection whose length \
                         member `{lengths}` is not a column evtc reads"
                    ),
                });
                continue;
            }
            if let Source::Branch(_, slot) = &mut column.source {
                *slot = counter;
            }
            kept.push(column);
        }
        self.columns = kept;
    }

    /// ROOT lets two branches of a tree share a name (Delphes' `Particle_size`, members of split
    /// classes that repeat a name): the first keeps it, the `k`-th of the same name becomes
    /// `name#k` (the next free `k` from 2), columns and refused branches alike, in branch order.
    fn make_names_unique(&mut self) {
        let mut seen = std::collections::HashSet::new();
        let names = self
            .columns
            .iter_mut()
            .map(|c| &mut c.name)
            .chain(self.unsupported.iter_mut().map(|u| &mut u.name));
        for name in names {
            if !seen.insert(name.clone()) {
                let unique = (2..)
                    .map(|k| format!("{name}#{k}"))
                    .find(|n| !seen.contains(n))
                    .expect("some suffix is free");
                seen.insert(unique.clone());
                *name = unique;
            }
        }
    }

    /// Refuses the branch (or member) `name` of C++ type `class`, for `reason`.
    fn refuse(&mut self, name: &str, class: &str, reason: impl Into<String>) {
        self.unsupported.push(UnsupportedBranch {
            name: name.to_owned(),
            class: class.to_owned(),
            reason: reason.into(),
        });
    }

    /// Adds the columns of branch `b` and of its sub-branches, or refuses what cannot be read;
    /// `parent` is the full name of the split object or collection `b` is a member of.
    fn add_branch(
        &mut self,
        b: &RawBranch,
        parent: Option<&str>,
        streamers: &Streamers,
        what: &str,
    ) -> Result<()> {
        // uproot's full paths: `parent/child` at every level of a split object.
        let name = match parent {
            Some(p) => format!("{p}/{}", b.name),
            None => b.name.clone(),
        };
        // `TBranch::SetFile` names another file for the baskets it writes from then on, and
        // ROOT reads every written basket from there; baskets still in memory when the tree
        // was written (`fWriteBasket` 0) are in the tree's record, read as any branch's.
        if !b.file_name.is_empty() && b.write_basket > 0 {
            let reason = format!(
                "its baskets are in another file, {:?} (the branch's fFileName, which ROOT \
                 opens beside this file): evtc reads one file",
                b.file_name
            );
            self.refuse(&name, &b.class, reason);
            return Ok(());
        }
        if !b.branches.is_empty() {
            return self.add_split(b, name, streamers, what);
        }
        let template = ColumnTemplate::new(b, b.baskets(what)?);
        match b.class.as_str() {
            // (A `char*` leaf written without entry offsets is split into entries by its
            // strings' lengths: `RootFile::tree` refuses it if a basket does not split.)
            "TBranch" if b.leaves.len() == 1 => self.add_leaf(&template, name),
            "TBranch" if !b.leaves.is_empty() => self.add_leaf_list(&template, &name),
            "TBranchElement" => self.add_element(&template, name, parent, streamers),
            class => {
                let class = b.element.as_ref().map_or(class, |e| &e.class_name);
                // A `TBranchObject`: at fixed offsets when the object's size is fixed, else
                // through the interpreter.
                let fixed = match unsplit_object(b, streamers) {
                    Some(Ok(object)) => {
                        let columns = member_columns(&name, object, &template);
                        self.columns.extend(columns);
                        return Ok(());
                    }
                    Some(Err(why)) => why,
                    None => "unsplit objects are not supported (only their split members are)"
                        .to_owned(),
                };
                match interpreted(b, streamers) {
                    Some(Ok(plan)) => self.add_interpreted(&template, &name, plan),
                    Some(Err(why)) => self.refuse(&name, class, why),
                    None => self.refuse(&name, class, fixed),
                }
            }
        }
        Ok(())
    }

    /// A branch with sub-branches: a split object (its members are branches of their own), or
    /// a split collection of objects, whose branch holds each entry's object count.
    fn add_split(
        &mut self,
        b: &RawBranch,
        name: String,
        streamers: &Streamers,
        what: &str,
    ) -> Result<()> {
        let ftype = b.element.as_ref().map(|e| e.ftype);
        match (b.class.as_str(), ftype) {
            // A split object (some files' top-level ones have fType -1; uproot reads them as
            // split objects too); a base class split into its members (1).
            ("TBranchElement", None | Some(-1..=2)) => {}
            // A split collection of objects (TClonesArray 3, std::vector<Class> 4): this
            // branch holds each entry's object count; each member's branch, that member of
            // every object: one jagged column per member, all counted by this branch.
            ("TBranchElement", Some(3 | 4)) => {
                let template = ColumnTemplate::new(b, b.baskets(what)?);
                let class = b.element.as_ref().map_or("", |e| e.class_name.as_str());
                let count = ScalarType::I32;
                let layout = Layout::Fixed {
                    stored: Stored::Plain(count),
                    len: 1,
                    offset: 0,
                    stride: 4,
                };
                let root_type = format!("{class} (objects per entry)");
                let column = template.column(
                    name.clone(),
                    ColumnKind::Scalar(count),
                    layout,
                    None,
                    root_type,
                );
                self.columns.push(column);
            }
            (_, ftype) => {
                let class = b
                    .element
                    .as_ref()
                    .map_or(b.class.as_str(), |e| &e.class_name);
                let reason = match ftype {
                    Some(31 | 41) => "a member of a split collection's objects split further \
                                      (nested split collections of objects) is not supported"
                        .to_owned(),
                    Some(t) => format!("a split branch of type {t} is not supported"),
                    None => format!("a {} with sub-branches is not supported", b.class),
                };
                self.refuse(&name, class, reason);
                return Ok(());
            }
        }
        for child in &b.branches {
            self.add_branch(child, Some(&name), streamers, what)?;
        }
        Ok(())
    }

    /// A plain branch of one leaf.
    fn add_leaf(&mut self, template: &ColumnTemplate<'_>, name: String) {
        let leaf = &template.branch.leaves[0];
        match leaf_column(leaf) {
            Ok((kind, layout, counter)) => {
                let root_type = format!("{} ({})", leaf.title, leaf_type_name(leaf));
                self.columns.push(Column {
                    dims: leaf_dims(&leaf.title, kind),
                    ..template.column(name, kind, layout, counter, root_type)
                });
            }
            Err(reason) => self.refuse(&name, &leaf.class, reason),
        }
    }

    /// A leaf-list ("px/F:py/F:pz/F"): each leaf a column, packed in one entry; rows of varying
    /// size when a leaf is an array counted by an earlier leaf of the same list.
    fn add_leaf_list(&mut self, template: &ColumnTemplate<'_>, name: &str) {
        let b = template.branch;
        let mut stride = 0;
        let mut parts = Vec::new();
        let mut row: Vec<(ColumnKind, RowPart, Option<String>)> = Vec::new();
        for (k, leaf) in b.leaves.iter().enumerate() {
            let counted = |counter: &str| {
                b.leaves[..k].iter().position(|l| {
                    l.name == counter
                        && !l.has_count
                        && l.len <= 1
                        && matches!(l.class.as_str(), "TLeafB" | "TLeafS" | "TLeafI" | "TLeafL")
                })
            };
            match leaf_column(leaf) {
                Ok((kind, Layout::Fixed { stored, len, .. }, None)) => {
                    parts.push((leaf, kind, stored, len, stride));
                    stride += stored.size() * len;
                    let part = RowPart {
                        stored,
                        len,
                        counter: None,
                    };
                    row.push((kind, part, None));
                }
                // `x[n]` counted by an earlier leaf of the same list: rows of varying size.
                Ok((kind, Layout::Jagged { stored }, Some(counter)))
                    if counted(&counter).is_some() =>
                {
                    let part = RowPart {
                        stored,
                        len: 1,
                        counter: counted(&counter),
                    };
                    row.push((kind, part, Some(format!("{name}/{counter}"))));
                }
                _ => {
                    let reason = format!(
                        "leaf-list member {:?} is not a scalar or fixed array",
                        leaf.name
                    );
                    self.refuse(name, &b.title, reason);
                    return;
                }
            }
        }
        let root_type = |leaf: &RawLeaf| format!("{} ({})", leaf.title, leaf_type_name(leaf));
        if row.len() > parts.len() {
            let shape: Arc<[RowPart]> = row.iter().map(|(_, p, _)| *p).collect();
            for (target, (leaf, (kind, _, counter))) in b.leaves.iter().zip(row).enumerate() {
                let layout = Layout::LeafRow { target };
                let col_name = format!("{name}/{}", leaf.name);
                let column =
                    template.column_with(col_name, kind, layout, counter, root_type(leaf), |b| {
                        b.row = Some(shape.clone());
                    });
                self.columns.push(Column {
                    dims: leaf_dims(&leaf.title, kind),
                    ..column
                });
            }
            return;
        }
        for (leaf, kind, stored, len, offset) in parts {
            let layout = Layout::Fixed {
                stored,
                len,
                offset,
                stride,
            };
            let col_name = format!("{name}/{}", leaf.name);
            self.columns.push(Column {
                dims: leaf_dims(&leaf.title, kind),
                ..template.column(col_name, kind, layout, None, root_type(leaf))
            });
        }
    }

    /// A `TBranchElement` without sub-branches: a member of a split object or collection, an
    /// STL container, or an unsplit object (read at fixed offsets, or through the interpreter).
    fn add_element(
        &mut self,
        template: &ColumnTemplate<'_>,
        name: String,
        parent: Option<&str>,
        streamers: &Streamers,
    ) {
        let b = template.branch;
        let ftype = b.element.as_ref().map(|e| e.ftype);
        let (class, reason) = match element_column(b, streamers) {
            Ok((kind, layout, root_type)) => {
                // Members of objects in a split collection are counted by its branch (lists
                // of strings or of lists by it too, but it counts the lists, not values).
                let counter = parent
                    .filter(|_| matches!(ftype, Some(31 | 41)))
                    .filter(|_| matches!(kind, ColumnKind::Jagged(_)))
                    .map(str::to_owned);
                // A member array's dimensions, from the streamer info.
                let dims = match (kind, &b.element) {
                    (ColumnKind::Fixed(..), Some(e)) => {
                        member(b, e, streamers).map_or(Vec::new(), |m| m.dims.clone())
                    }
                    _ => Vec::new(),
                };
                // A pointer array's lengths: the sibling member its streamer element names.
                let lengths = match (&layout, &b.element) {
                    (Layout::PointerArraysInCollection { .. }, Some(e)) => {
                        let count = member(b, e, streamers)
                            .map(|m| m.count_name.clone())
                            .unwrap_or_default();
                        name.rsplit_once('.')
                            .map(|(collection, _)| format!("{collection}.{count}"))
                    }
                    _ => None,
                };
                self.columns.push(Column {
                    dims,
                    ..template.column_with(name, kind, layout, counter, root_type, |b| {
                        b.lengths = lengths;
                    })
                });
                return;
            }
            Err(refused) => refused,
        };
        // Objects of fixed size are read at fixed offsets; others, and what those cannot plan,
        // through the interpreter.
        let fixed = match object_vector(b, streamers) {
            Some(Ok(members)) => {
                self.add_object_vector(template, &name, members, streamers);
                return;
            }
            Some(Err(why)) => Some(why),
            None => match unsplit_object(b, streamers) {
                Some(Ok(object)) => {
                    self.columns.extend(member_columns(&name, object, template));
                    return;
                }
                Some(Err(why)) => Some(why),
                None => None,
            },
        };
        match interpreted(b, streamers) {
            Some(Ok(plan)) => self.add_interpreted(template, &name, plan),
            Some(Err(why)) => self.refuse(&name, &class, why),
            None => self.refuse(&name, &class, fixed.unwrap_or(reason)),
        }
    }

    /// An unsplit `std::vector` of fixed-size objects: a jagged column per basic member. ROOT
    /// may stream the vector member-wise instead (marked in each entry): the interpreter reads
    /// those entries.
    fn add_object_vector(
        &mut self,
        template: &ColumnTemplate<'_>,
        name: &str,
        members: Vec<VectorMember>,
        streamers: &Streamers,
    ) {
        let plan = interpreted(template.branch, streamers)
            .and_then(Result::ok)
            .map(Arc::new);
        for (path, t, stored, offset, stride, header, type_name) in members {
            let member_wise = plan.as_ref().and_then(|p| {
                p.targets.iter().position(|target| {
                    target.path.trim_start_matches('.') == path
                        && target.kind == ColumnKind::Jagged(t)
                })
            });
            let layout = Layout::ObjectVector {
                stored,
                offset,
                stride,
                member_wise,
            };
            let kind = ColumnKind::Jagged(t);
            let root_type = format!("{type_name}[]");
            let path = format!("{name}.{path}");
            let column = template.column_with(path, kind, layout, None, root_type, |b| {
                b.entry_prefix = Some(header);
                b.plan = member_wise.and(plan.clone());
            });
            self.columns.push(column);
        }
    }

    /// Objects of varying size read through the interpreter's `plan`: a column per target, and
    /// the members it refuses.
    fn add_interpreted(&mut self, template: &ColumnTemplate<'_>, name: &str, plan: Plan) {
        let plan = Arc::new(plan);
        let named = |path: &str| match path {
            "" => name.to_owned(),
            p if p.starts_with('.') => format!("{name}{p}"),
            p => format!("{name}.{p}"),
        };
        // The arrays of a split collection's objects: their lengths are the collection's
        // counter member, a sibling branch.
        let lengths = plan.lengths.as_ref().and_then(|count| {
            name.rsplit_once('.')
                .map(|(collection, _)| format!("{collection}.{count}"))
        });
        for (i, t) in plan.targets.iter().enumerate() {
            let layout = Layout::Interpreted { target: i };
            let type_name = t.type_name.clone();
            let column =
                template.column_with(named(&t.path), t.kind, layout, None, type_name, |b| {
                    b.plan = Some(plan.clone());
                    b.lengths = lengths.clone();
                });
            self.columns.push(column);
        }
        for (path, type_name, why) in &plan.refused {
            self.refuse(&named(path), type_name, why.clone());
        }
    }
}
