//! A tree's columns: the public column model ([`Column`], [`Tree`]; the value types are in
//! `types`), the TTree record (TTree 16-20), and the walk of its branches (as `branch` streams
//! them) that maps each onto columns (`columns` says how, for each kind of branch).

use std::sync::Arc;

use crate::branch::RawBranch;
use crate::columns::{
    element_column, interpreted, leaf_column, leaf_dims, leaf_type_name, member, member_columns,
    object_vector, unsplit_object,
};
use crate::error::{Error, Result};
use crate::members::Step;
use crate::objects::Parser;
use crate::streamer::Streamers;
use crate::types::{ColumnKind, ScalarType, Stored};

/// How a column's entries are laid out in a basket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Layout {
    /// `len` values at `offset` in each `stride`-byte entry.
    Fixed {
        stored: Stored,
        len: usize,
        offset: usize,
        stride: usize,
    },
    /// Values only; entry boundaries from the basket's entry offsets.
    Jagged { stored: Stored },
    /// `std::vector<T>`: a 10-byte header (byte count, version, size) then the values.
    Vector { stored: Stored },
    /// `std::vector<std::vector<T>>`: a 10-byte header, then per inner vector a size and values.
    VectorVector { stored: Stored },
    /// A TString-encoded string per entry (one length byte, or 255 and a 32-bit length);
    /// `header`: after a 6-byte object header (byte count, version), as a `std::string` member
    /// of a split object is streamed.
    String { header: bool },
    /// A `char*` member of a split object (kCharStar): a 32-bit big-endian length, then the
    /// characters.
    CharStar,
    /// A `std::vector` of `stride`-byte objects streamed one by one (a 10-byte vector header,
    /// then the objects, each starting with [`Column::entry_prefix`]): the value at `offset` in
    /// each object. An entry whose vector was streamed member-wise (each member of all objects
    /// in turn) is read through column `member_wise` of [`Column::plan`], if there is one.
    ObjectVector {
        stored: Stored,
        offset: usize,
        stride: usize,
        member_wise: Option<usize>,
    },
    /// Column `target` of the column's interpreted plan ([`Column::plan`]): objects of varying
    /// size walked entry by entry.
    Interpreted { target: usize },
    /// A `T* x //[n]` member: a byte (1 if there are values, else 0), then the values.
    FlaggedArray { stored: Stored },
    /// A fixed array member of a split collection's objects: `len` values per object, all the
    /// entry's objects back to back.
    ArraysInCollection { stored: Stored, len: usize },
    /// Leaf `target` of a leaf-list whose rows vary in size (`id/I:n/I:x[n]/D`, Geant4's
    /// row-wise ntuples): each entry is one row, the leaves ([`Column::row`]) in order, each
    /// counted leaf as many values as the earlier leaf it names.
    LeafRow { target: usize },
    /// A `T* x //[n]` member of a split collection's objects: per object, a byte (1 if there
    /// are values, else 0), then as many values as its `n`, a member of its own branch
    /// ([`Column::counter_column`], found by `Column::lengths`).
    PointerArraysInCollection { stored: Stored },
    /// A list of TString-encoded strings per entry, after `header`.
    StringList { header: ListHeader },
}

/// One leaf of a row of [`Layout::LeafRow`] ([`Column::row`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RowPart {
    pub(crate) stored: Stored,
    /// Values of a leaf without a counter (1, or a fixed array's length).
    pub(crate) len: usize,
    /// The earlier leaf (its index in the row) whose value is this leaf's length.
    pub(crate) counter: Option<usize>,
}

impl RowPart {
    /// The `[start, end)` of each leaf of the row at the start of `bytes` (in `spans`); returns
    /// where the row ends.
    pub(crate) fn spans(
        parts: &[RowPart],
        bytes: &[u8],
        spans: &mut Vec<(usize, usize)>,
    ) -> std::result::Result<usize, String> {
        spans.clear();
        let mut at = 0usize;
        for (k, part) in parts.iter().enumerate() {
            let n = match part.counter {
                None => part.len,
                Some(j) => {
                    let (start, end) = spans[j];
                    // A signed big-endian integer (the counter leaf's type).
                    let v = crate::cursor::signed_be(&bytes[start..end])
                        .ok_or_else(|| format!("leaf {k}'s counter holds no value"))?;
                    usize::try_from(v).map_err(|_| format!("leaf {k}'s count is {v}"))?
                }
            };
            let end = n
                .checked_mul(part.stored.size())
                .and_then(|len| at.checked_add(len))
                .filter(|&end| end <= bytes.len())
                .ok_or_else(|| format!("leaf {k} of {n} values runs past the entry"))?;
            spans.push((at, end));
            at = end;
        }
        Ok(at)
    }
}

/// What comes before the items of a list in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListHeader {
    /// Nothing: as many items as fill the entry (the `TString`s of a collection's objects).
    None,
    /// A vector's byte count, version and size (`std::vector<std::string>`).
    Vector,
}

/// Where one basket of a column is.
#[derive(Debug, Clone)]
pub(crate) struct BasketRef {
    pub(crate) first_entry: u64,
    pub(crate) entries: u64,
    pub(crate) seek: u64,
    pub(crate) bytes: u32,
    /// A basket stored inside the TTree record instead of a key of its own.
    pub(crate) embedded: Option<Arc<EmbeddedBasket>>,
}

/// The decoded contents of a basket embedded in the tree record.
#[derive(Debug)]
pub(crate) struct EmbeddedBasket {
    pub(crate) data: Vec<u8>,
    /// Entry offsets relative to `data` (entries + 1 values), when the branch has them.
    pub(crate) offsets: Option<Vec<u32>>,
    pub(crate) entries: u64,
}

/// One column of a tree: a branch, or one leaf of a leaf-list branch.
#[derive(Debug, Clone)]
pub struct Column {
    /// The full name: the branch name, `parent/child` for members of split structs (as uproot
    /// names them), `branch/leaf` for leaves of a leaf-list.
    pub name: String,
    /// The shape and value type.
    pub kind: ColumnKind,
    /// For `x[n]` arrays: the counter branch whose values are this column's entry lengths.
    pub counter: Option<String>,
    /// ROOT's description of the type (leaf title or class name), for display.
    pub root_type: String,
    /// For fixed arrays of two or more dimensions (`x[2][3]`): the dimensions, row-major (the
    /// values are flat); empty otherwise.
    pub dims: Vec<usize>,
    /// The branch's compression setting (`fCompress`, e.g. 505).
    pub compression: i32,
    /// Uncompressed bytes of the branch's baskets (ROOT's `fTotBytes`).
    pub tot_bytes: u64,
    /// Compressed bytes of the branch's baskets (ROOT's `fZipBytes`).
    pub zip_bytes: u64,
    pub(crate) layout: Layout,
    pub(crate) baskets: Arc<[BasketRef]>,
    /// Whether baskets in keys of their own end with entry offsets (the branch's
    /// `fEntryOffsetLen` is non-zero), as ROOT's `TBasket::ReadBasketBuffers` decides.
    pub(crate) entry_offsets: bool,
    /// For `x[n]` arrays whose baskets may lack entry offsets: the counter's column, to rebuild
    /// them from.
    pub(crate) counter_column: Option<Box<Column>>,
    /// Of [`Layout::PointerArraysInCollection`]: the column of the member holding each object's
    /// array length, a sibling in the same collection.
    pub(crate) lengths: Option<String>,
    /// Of [`Layout::LeafRow`]: the leaves of a row.
    pub(crate) row: Option<Arc<[RowPart]>>,
    /// Bytes every entry must start with (the class name `TBranchObject` writes before each
    /// object; for [`Layout::ObjectVector`], every object): a reader refuses an entry that
    /// holds another class.
    pub(crate) entry_prefix: Option<Arc<[u8]>>,
    /// For an object of a class with a custom streamer: the object header (byte count and
    /// version) its Streamer writes before the members if it calls WriteClassBuffer. A basket
    /// whose entries all start with it and hold the members after it is read without the
    /// headers; any other basket must hold the members alone.
    pub(crate) custom_header: Option<Arc<[u8]>>,
    /// For [`Layout::Interpreted`] columns (and [`Layout::ObjectVector`] ones, for vectors
    /// streamed member-wise): the plan of the branch's objects.
    pub(crate) plan: Option<Arc<crate::interp::Plan>>,
}

impl Column {
    /// The branch's baskets, in entry order.
    pub fn baskets(&self) -> impl ExactSizeIterator<Item = BasketInfo> + '_ {
        self.baskets.iter().map(|b| BasketInfo {
            first_entry: b.first_entry,
            entries: b.entries,
            seek: b.seek,
            bytes: b.bytes,
            embedded: b.embedded.is_some(),
        })
    }
}

/// Where one basket of a column is, for display (`evtc inspect --baskets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BasketInfo {
    /// First entry in the basket.
    pub first_entry: u64,
    /// Entries in the basket.
    pub entries: u64,
    /// File offset of the basket's key (0 for embedded baskets).
    pub seek: u64,
    /// Bytes on disk, key included (0 for embedded baskets).
    pub bytes: u32,
    /// Whether the basket lives inside the TTree record.
    pub embedded: bool,
}

/// A branch this reader does not import, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedBranch {
    /// The branch's full name.
    pub name: String,
    /// Its class or type.
    pub class: String,
    /// Why it is not imported.
    pub reason: String,
}

impl UnsupportedBranch {
    /// The error a strict import reports for this branch.
    pub fn to_error(&self) -> Error {
        Error::Unsupported {
            branch: self.name.clone(),
            class: self.class.clone(),
            reason: self.reason.clone(),
        }
    }
}

/// A tree's metadata: its columns in branch order, and the branches that cannot be imported.
#[derive(Debug, Clone)]
pub struct Tree {
    /// The tree's name (its path in the file).
    pub name: String,
    /// The tree's title.
    pub title: String,
    /// Number of entries.
    pub entries: u64,
    /// Entries per cluster (ROOT's `fAutoFlush` when positive), if the tree records one.
    pub auto_flush: Option<u64>,
    /// The importable columns.
    pub columns: Vec<Column>,
    /// The branches that are not importable.
    pub unsupported: Vec<UnsupportedBranch>,
}

impl Tree {
    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

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
        let (partial, whole): (Vec<Column>, Vec<Column>) = std::mem::take(&mut self.columns)
            .into_iter()
            .partition(|c| c.baskets.last().map_or(0, |b| b.first_entry + b.entries) != entries);
        self.columns = whole;
        for c in partial {
            let held = c.baskets.last().map_or(0, |b| b.first_entry + b.entries);
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
                let name = c.counter.as_deref().or(c.lengths.as_deref())?;
                let counter = self.columns.iter().find(|k| k.name == name)?;
                Some(Box::new(counter.clone()))
            })
            .collect();
        let mut kept = Vec::with_capacity(self.columns.len());
        for (mut column, counter) in std::mem::take(&mut self.columns).into_iter().zip(counters) {
            if let (Some(lengths), None) = (&column.lengths, &counter) {
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
            column.counter_column = counter;
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
        let unsupported = |class: &str, reason: &str| UnsupportedBranch {
            name: name.clone(),
            class: class.to_owned(),
            reason: reason.to_owned(),
        };
        if !b.file_name.is_empty() {
            self.unsupported.push(unsupported(
                &b.class,
                &format!("its baskets are in another file, {:?}", b.file_name),
            ));
            return Ok(());
        }
        let ftype = b.element.as_ref().map(|e| e.ftype);
        if !b.branches.is_empty() {
            match (b.class.as_str(), ftype) {
                // A split object: its members are branches of their own (some files' top-level
                // ones have fType -1; uproot reads them as split objects too); a base class
                // split into its members (1).
                ("TBranchElement", None | Some(-1..=2)) => {}
                // A split collection of objects (TClonesArray 3, std::vector<Class> 4): this
                // branch holds each entry's object count; each member's branch, that member of
                // every object: one jagged column per member, all counted by this branch.
                ("TBranchElement", Some(3 | 4)) => {
                    let baskets = b.baskets(what)?;
                    let class = b.element.as_ref().map_or("", |e| e.class_name.as_str());
                    self.columns.push(Column {
                        name: name.clone(),
                        kind: ColumnKind::Scalar(ScalarType::I32),
                        counter: None,
                        root_type: format!("{class} (objects per entry)"),
                        dims: Vec::new(),
                        compression: b.compress,
                        tot_bytes: u64::try_from(b.tot_bytes).unwrap_or(0),
                        zip_bytes: u64::try_from(b.zip_bytes).unwrap_or(0),
                        layout: Layout::Fixed {
                            stored: Stored::Plain(ScalarType::I32),
                            len: 1,
                            offset: 0,
                            stride: 4,
                        },
                        baskets,
                        entry_offsets: b.entry_offset_len > 0,
                        counter_column: None,
                        lengths: None,
                        row: None,
                        entry_prefix: None,
                        custom_header: None,
                        plan: None,
                    });
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
                    self.unsupported.push(unsupported(class, &reason));
                    return Ok(());
                }
            }
            for child in &b.branches {
                self.add_branch(child, Some(&name), streamers, what)?;
            }
            return Ok(());
        }
        let baskets = b.baskets(what)?;
        let column = |col_name: String, kind, layout, counter, root_type: String| Column {
            name: col_name,
            kind,
            counter,
            root_type,
            dims: Vec::new(),
            compression: b.compress,
            tot_bytes: u64::try_from(b.tot_bytes).unwrap_or(0),
            zip_bytes: u64::try_from(b.zip_bytes).unwrap_or(0),
            layout,
            baskets: baskets.clone(),
            entry_offsets: b.entry_offset_len > 0,
            counter_column: None,
            lengths: None,
            row: None,
            entry_prefix: None,
            custom_header: None,
            plan: None,
        };
        match b.class.as_str() {
            // (A `char*` leaf written without entry offsets is split into entries by its
            // strings' lengths: `RootFile::tree` refuses it if a basket does not split.)
            "TBranch" if b.leaves.len() == 1 => match leaf_column(&b.leaves[0]) {
                Ok((kind, layout, counter)) => {
                    let leaf = &b.leaves[0];
                    let root_type = format!("{} ({})", leaf.title, leaf_type_name(leaf));
                    self.columns.push(Column {
                        dims: leaf_dims(&leaf.title, kind),
                        ..column(name, kind, layout, counter, root_type)
                    });
                }
                Err(reason) => self
                    .unsupported
                    .push(unsupported(&b.leaves[0].class, &reason)),
            },
            "TBranch" if !b.leaves.is_empty() => {
                // A leaf-list ("px/F:py/F:pz/F"): each leaf a column, packed in one entry.
                let mut stride = 0;
                let mut parts = Vec::new();
                let mut row: Vec<(ColumnKind, RowPart, Option<String>)> = Vec::new();
                for (k, leaf) in b.leaves.iter().enumerate() {
                    let counted = |counter: &str| {
                        b.leaves[..k].iter().position(|l| {
                            l.name == counter
                                && !l.has_count
                                && l.len <= 1
                                && matches!(
                                    l.class.as_str(),
                                    "TLeafB" | "TLeafS" | "TLeafI" | "TLeafL"
                                )
                        })
                    };
                    match leaf_column(leaf) {
                        Ok((kind, Layout::Fixed { stored, len, .. }, None)) => {
                            parts.push((leaf, kind, stored, len, stride));
                            stride += stored.size() * len;
                            row.push((
                                kind,
                                RowPart {
                                    stored,
                                    len,
                                    counter: None,
                                },
                                None,
                            ));
                        }
                        // `x[n]` counted by an earlier leaf of the same list: rows of varying
                        // size.
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
                            self.unsupported.push(unsupported(
                                &b.title,
                                &format!(
                                    "leaf-list member {:?} is not a scalar or fixed array",
                                    leaf.name
                                ),
                            ));
                            return Ok(());
                        }
                    }
                }
                if row.len() > parts.len() {
                    let shape: Arc<[RowPart]> = row.iter().map(|(_, p, _)| *p).collect();
                    for (target, (leaf, (kind, _, counter))) in b.leaves.iter().zip(row).enumerate()
                    {
                        let col_name = format!("{name}/{}", leaf.name);
                        let root_type = format!("{} ({})", leaf.title, leaf_type_name(leaf));
                        self.columns.push(Column {
                            dims: leaf_dims(&leaf.title, kind),
                            row: Some(shape.clone()),
                            ..column(
                                col_name,
                                kind,
                                Layout::LeafRow { target },
                                counter,
                                root_type,
                            )
                        });
                    }
                    return Ok(());
                }
                for (leaf, kind, stored, len, offset) in parts {
                    let layout = Layout::Fixed {
                        stored,
                        len,
                        offset,
                        stride,
                    };
                    let col_name = format!("{name}/{}", leaf.name);
                    let root_type = format!("{} ({})", leaf.title, leaf_type_name(leaf));
                    self.columns.push(Column {
                        dims: leaf_dims(&leaf.title, kind),
                        ..column(col_name, kind, layout, None, root_type)
                    });
                }
            }
            "TBranchElement" => match element_column(b, streamers) {
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
                        lengths,
                        ..column(name, kind, layout, counter, root_type)
                    });
                }
                Err((class, reason)) => {
                    // Objects of fixed size are read at fixed offsets; others, and what those
                    // cannot plan, through the interpreter.
                    let fixed = match object_vector(b, streamers) {
                        Some(Ok(columns)) => {
                            // ROOT may stream the vector member-wise instead (marked in each
                            // entry): the interpreter reads those entries.
                            let plan = interpreted(b, streamers).and_then(Result::ok).map(Arc::new);
                            self.columns.extend(columns.into_iter().map(
                                |(path, t, stored, offset, stride, header, type_name)| {
                                    let member_wise = plan.as_ref().and_then(|p| {
                                        p.targets.iter().position(|target| {
                                            target.path.trim_start_matches('.') == path
                                                && target.kind == ColumnKind::Jagged(t)
                                        })
                                    });
                                    Column {
                                        entry_prefix: Some(header),
                                        plan: member_wise.and(plan.clone()),
                                        ..column(
                                            format!("{name}.{path}"),
                                            ColumnKind::Jagged(t),
                                            Layout::ObjectVector {
                                                stored,
                                                offset,
                                                stride,
                                                member_wise,
                                            },
                                            None,
                                            format!("{type_name}[]"),
                                        )
                                    }
                                },
                            ));
                            return Ok(());
                        }
                        Some(Err(why)) => Some(why),
                        None => match unsplit_object(b, streamers) {
                            Some(Ok(object)) => {
                                self.columns.extend(member_columns(&name, object, &column));
                                return Ok(());
                            }
                            Some(Err(why)) => Some(why),
                            None => None,
                        },
                    };
                    match interpreted(b, streamers) {
                        Some(Ok(plan)) => {
                            let plan = Arc::new(plan);
                            let named = |path: &str| match path {
                                "" => name.clone(),
                                p if p.starts_with('.') => format!("{name}{p}"),
                                p => format!("{name}.{p}"),
                            };
                            // The arrays of a split collection's objects: their lengths are the
                            // collection's counter member, a sibling branch.
                            let lengths = plan.lengths.as_ref().and_then(|count| {
                                name.rsplit_once('.')
                                    .map(|(collection, _)| format!("{collection}.{count}"))
                            });
                            for (i, t) in plan.targets.iter().enumerate() {
                                self.columns.push(Column {
                                    plan: Some(plan.clone()),
                                    lengths: lengths.clone(),
                                    ..column(
                                        named(&t.path),
                                        t.kind,
                                        Layout::Interpreted { target: i },
                                        None,
                                        t.type_name.clone(),
                                    )
                                });
                            }
                            for (path, type_name, why) in &plan.refused {
                                self.unsupported.push(UnsupportedBranch {
                                    name: named(path),
                                    class: type_name.clone(),
                                    reason: why.clone(),
                                });
                            }
                        }
                        Some(Err(why)) => self.unsupported.push(unsupported(&class, &why)),
                        None => {
                            let why = fixed.unwrap_or(reason);
                            self.unsupported.push(unsupported(&class, &why));
                        }
                    }
                }
            },
            class => {
                let class = b.element.as_ref().map_or(class, |e| &e.class_name);
                match unsplit_object(b, streamers) {
                    Some(Ok(object)) => {
                        self.columns.extend(member_columns(&name, object, &column));
                    }
                    Some(Err(why)) => self.unsupported.push(unsupported(class, &why)),
                    None => self.unsupported.push(unsupported(
                        class,
                        "unsplit objects are not supported (only their split members are)",
                    )),
                }
            }
        }
        Ok(())
    }
}
