//! A tree's columns: the public column model ([`ScalarType`], [`ColumnKind`], [`Column`],
//! [`Tree`]), the TTree record (TTree 16-20), and the mapping of its branches (as `branch`
//! streams them) onto columns, with the file's streamer infos for members and objects (`plan`).

use std::fmt;
use std::sync::Arc;

use crate::branch::{Element, RawBranch, RawLeaf};
use crate::error::{Error, Result};
use crate::objects::Parser;
use crate::streamer::{FloatRange, StreamerElement, Streamers};

/// The type of one value, as it comes out of the reader (native endianness).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `Bool_t` (`/O`).
    Bool,
    /// `Char_t` (`/B`).
    I8,
    /// `UChar_t` (`/b`).
    U8,
    /// `Short_t` (`/S`).
    I16,
    /// `UShort_t` (`/s`).
    U16,
    /// `Int_t` (`/I`).
    I32,
    /// `UInt_t` (`/i`).
    U32,
    /// `Long64_t` (`/L`).
    I64,
    /// `ULong64_t` (`/l`).
    U64,
    /// `Float_t` (`/F`), and `Float16_t` (`/f`) widened on reading.
    F32,
    /// `Double_t` (`/D`), and `Double32_t` (`/d`) widened on reading.
    F64,
}

impl ScalarType {
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// The C++ type name ROOT uses.
    pub fn root_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "Bool_t",
            ScalarType::I8 => "Char_t",
            ScalarType::U8 => "UChar_t",
            ScalarType::I16 => "Short_t",
            ScalarType::U16 => "UShort_t",
            ScalarType::I32 => "Int_t",
            ScalarType::U32 => "UInt_t",
            ScalarType::I64 => "Long64_t",
            ScalarType::U64 => "ULong64_t",
            ScalarType::F32 => "Float_t",
            ScalarType::F64 => "Double_t",
        }
    }

    fn from_cpp(name: &str) -> Option<ScalarType> {
        Some(match name.trim() {
            "bool" | "Bool_t" => ScalarType::Bool,
            "char" | "Char_t" | "signed char" | "int8_t" => ScalarType::I8,
            "unsigned char" | "UChar_t" | "uint8_t" => ScalarType::U8,
            "short" | "Short_t" | "int16_t" => ScalarType::I16,
            "unsigned short" | "UShort_t" | "uint16_t" => ScalarType::U16,
            "int" | "Int_t" | "int32_t" => ScalarType::I32,
            "unsigned int" | "UInt_t" | "uint32_t" => ScalarType::U32,
            "long" | "Long_t" | "long long" | "Long64_t" | "int64_t" => ScalarType::I64,
            "unsigned long" | "ULong_t" | "unsigned long long" | "ULong64_t" | "uint64_t" => {
                ScalarType::U64
            }
            "float" | "Float_t" => ScalarType::F32,
            "double" | "Double_t" => ScalarType::F64,
            _ => return None,
        })
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.root_name())
    }
}

/// The shape of a column's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnKind {
    /// One value per entry.
    Scalar(ScalarType),
    /// Exactly `n` values per entry (`x[3]/F`, `m[2][2]/S` flattened).
    Fixed(ScalarType, usize),
    /// Any number of values per entry (`Muon_pt[nMuon]/F`, `std::vector<float>`).
    Jagged(ScalarType),
    /// A list of lists per entry (`std::vector<std::vector<T>>`).
    JaggedJagged(ScalarType),
    /// A byte string per entry (`std::string`, `char*` leaves).
    String,
    /// A list of byte strings per entry (`std::vector<std::string>`, the `TString`s of a split
    /// collection's objects): the strings' bytes, entry offsets into the strings and the
    /// strings' offsets into the bytes ([`ColumnData::inner_offsets`], as for lists of lists).
    ///
    /// [`ColumnData::inner_offsets`]: crate::ColumnData::inner_offsets
    StringList,
}

impl ColumnKind {
    /// The C++ type ROOT holds such entries in: `Float_t`, `Float_t[3]`, `Float_t[]` (a counter
    /// array or vector), `vector<vector<Float_t>>`, `string`.
    pub fn cpp_name(self) -> String {
        match self {
            ColumnKind::Scalar(t) => t.root_name().to_owned(),
            ColumnKind::Fixed(t, n) => format!("{t}[{n}]"),
            ColumnKind::Jagged(t) => format!("{t}[]"),
            ColumnKind::JaggedJagged(t) => format!("vector<vector<{t}>>"),
            ColumnKind::String => "string".to_owned(),
            ColumnKind::StringList => "vector<string>".to_owned(),
        }
    }

    /// The value type (`U8` for strings).
    pub fn scalar(self) -> ScalarType {
        match self {
            ColumnKind::Scalar(t)
            | ColumnKind::Fixed(t, _)
            | ColumnKind::Jagged(t)
            | ColumnKind::JaggedJagged(t) => t,
            ColumnKind::String | ColumnKind::StringList => ScalarType::U8,
        }
    }
}

/// How values are stored in the baskets (big-endian).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Stored {
    Plain(ScalarType),
    /// `Float16_t` or `Double32_t` truncated to `bits` mantissa bits (ROOT's `ReadWithNbits`):
    /// an exponent byte and a 16-bit sign-and-mantissa, widened to `output`.
    Truncated {
        output: ScalarType,
        bits: u8,
    },
    /// `Float16_t` or `Double32_t` with a range (ROOT's `ReadWithFactor`): a 32-bit unsigned
    /// integer `i` holding `i / factor + min`, computed in double precision.
    Scaled {
        output: ScalarType,
        factor: f64,
        min: f64,
    },
    /// `Double32_t` with neither range nor bit count: a 32-bit float.
    Double32,
}

/// Which of ROOT's two reduced-precision float types a member or leaf is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReducedFloat {
    Float16,
    Double32,
}

impl Stored {
    pub(crate) fn size(self) -> usize {
        match self {
            Stored::Plain(t) => t.size(),
            Stored::Truncated { .. } => 3,
            Stored::Scaled { .. } | Stored::Double32 => 4,
        }
    }

    pub(crate) fn output(self) -> ScalarType {
        match self {
            Stored::Plain(t) => t,
            Stored::Truncated { output, .. } | Stored::Scaled { output, .. } => output,
            Stored::Double32 => ScalarType::F64,
        }
    }

    /// How ROOT's `ReadFloat16` / `ReadDouble32` read a value with these parameters: scaled
    /// when there is a factor, else truncated to `(int)xmin` bits (12 by default for
    /// `Float16_t`), else (`Double32_t`) a plain float. Bit counts ROOT's writer cannot have
    /// produced are refused.
    pub(crate) fn reduced(kind: ReducedFloat, range: FloatRange) -> Result<Stored, String> {
        let output = match kind {
            ReducedFloat::Float16 => ScalarType::F32,
            ReducedFloat::Double32 => ScalarType::F64,
        };
        if range.factor != 0.0 {
            return Ok(Stored::Scaled {
                output,
                factor: range.factor,
                min: range.xmin,
            });
        }
        match (range.nbits(), kind) {
            (0, ReducedFloat::Float16) => Ok(Stored::Truncated { output, bits: 12 }),
            (0, ReducedFloat::Double32) => Ok(Stored::Double32),
            // ROOT's writer and reader share the arithmetic for any count whose shifts are
            // defined (nbits + 1 < 24); beyond that C's shifts are undefined.
            (bits @ 1..=22, _) => Ok(Stored::Truncated {
                output,
                bits: bits as u8,
            }),
            (bits, _) => Err(format!(
                "its range gives {bits} mantissa bits, which ROOT cannot read back (1 to 22)"
            )),
        }
    }
}

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
    /// A `std::vector` of `stride`-byte objects streamed one by one (a 10-byte vector header,
    /// then the objects, each starting with [`Column::entry_prefix`]): the value at `offset` in
    /// each object.
    ObjectVector {
        stored: Stored,
        offset: usize,
        stride: usize,
    },
    /// Column `target` of the column's interpreted plan ([`Column::plan`]): objects of varying
    /// size walked entry by entry.
    Interpreted { target: usize },
    /// A `T* x //[n]` member: a byte (1 if there are values, else 0), then the values.
    FlaggedArray { stored: Stored },
    /// A fixed array member of a split collection's objects: `len` values per object, all the
    /// entry's objects back to back.
    ArraysInCollection { stored: Stored, len: usize },
    /// A list of TString-encoded strings per entry, after `header`.
    StringList { header: ListHeader },
    /// A list of lists per entry: the `std::vector<T>` members of a split collection's objects,
    /// after an object header (byte count, version), each a size and its values, as many as
    /// fill the entry.
    VectorsInCollection { stored: Stored },
}

/// What comes before the items of a list in an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListHeader {
    /// Nothing: as many items as fill the entry (the `TString`s of a collection's objects).
    None,
    /// An object header (byte count, version), then as many items as fill the entry (the
    /// `std::string`s of a collection's objects).
    Object,
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
    /// Bytes every entry must start with (the class name `TBranchObject` writes before each
    /// object; for [`Layout::ObjectVector`], every object): a reader refuses an entry that
    /// holds another class.
    pub(crate) entry_prefix: Option<Arc<[u8]>>,
    /// For an object of a class with a custom streamer: the object header (byte count and
    /// version) its Streamer writes before the members if it calls WriteClassBuffer. A basket
    /// whose entries all start with it and hold the members after it is read without the
    /// headers; any other basket must hold the members alone.
    pub(crate) custom_header: Option<Arc<[u8]>>,
    /// For [`Layout::Interpreted`] columns: the plan of the branch's objects.
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
        let mut p = Parser::new(record, key_len, what);
        if derived {
            let _ = p.header()?;
        }
        let (end, version) = p.header()?;
        if !(16..=20).contains(&version) {
            return Err(p.version_error("TTree", version, "16-20"));
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
        let mut tree = Tree {
            name,
            title,
            entries,
            auto_flush: u64::try_from(auto_flush).ok().filter(|&n| n > 0),
            columns: Vec::new(),
            unsupported: Vec::new(),
        };
        for branch in &branches {
            tree.add_branch(branch, None, streamers, what)?;
        }
        tree.refuse_partial_branches();
        tree.make_names_unique();
        tree.attach_counters();
        Ok(tree)
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
    fn attach_counters(&mut self) {
        let counters: Vec<Option<Box<Column>>> = self
            .columns
            .iter()
            .map(|c| {
                let name = c.counter.as_deref()?;
                let counter = self.columns.iter().find(|k| k.name == name)?;
                Some(Box::new(counter.clone()))
            })
            .collect();
        for (column, counter) in self.columns.iter_mut().zip(counters) {
            column.counter_column = counter;
        }
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
                // A split object: its members are branches of their own.
                ("TBranchElement", None | Some(0..=2)) => {}
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
                        entry_prefix: None,
                        custom_header: None,
                        plan: None,
                    });
                }
                _ => {
                    let class = b
                        .element
                        .as_ref()
                        .map_or(b.class.as_str(), |e| &e.class_name);
                    self.unsupported.push(unsupported(
                        class,
                        "nested split collections of objects are not supported",
                    ));
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
            entry_prefix: None,
            custom_header: None,
            plan: None,
        };
        match b.class.as_str() {
            "TBranch" if b.leaves.len() == 1 => match leaf_column(&b.leaves[0]) {
                Ok((_, Layout::String { header: false }, _)) if b.entry_offset_len == 0 => {
                    // TLeafC writes no bytes at all for an empty string.
                    self.unsupported.push(unsupported(
                        "char*",
                        "written without entry offsets (fEntryOffsetLen 0), and ROOT writes \
                         nothing for an empty char* string: its entries cannot be told apart",
                    ));
                }
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
                for leaf in &b.leaves {
                    match leaf_column(leaf) {
                        Ok((kind, Layout::Fixed { stored, len, .. }, None)) => {
                            parts.push((leaf, kind, stored, len, stride));
                            stride += stored.size() * len;
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
                    self.columns.push(Column {
                        dims,
                        ..column(name, kind, layout, counter, root_type)
                    });
                }
                Err((class, reason)) => {
                    // Objects of fixed size are read at fixed offsets; others, and what those
                    // cannot plan, through the interpreter.
                    let fixed = match object_vector(b, streamers) {
                        Some(Ok(columns)) => {
                            self.columns.extend(columns.into_iter().map(
                                |(path, t, stored, offset, stride, header, type_name)| Column {
                                    entry_prefix: Some(header),
                                    ..column(
                                        format!("{name}.{path}"),
                                        ColumnKind::Jagged(t),
                                        Layout::ObjectVector {
                                            stored,
                                            offset,
                                            stride,
                                        },
                                        None,
                                        format!("{type_name}[]"),
                                    )
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
                            for (i, t) in plan.targets.iter().enumerate() {
                                self.columns.push(Column {
                                    plan: Some(plan.clone()),
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

/// The C++ type a leaf class holds.
fn leaf_type_name(leaf: &RawLeaf) -> &'static str {
    match (leaf.class.as_str(), leaf.is_unsigned) {
        ("TLeafO", _) => "Bool_t",
        ("TLeafB", false) => "Char_t",
        ("TLeafB", true) => "UChar_t",
        ("TLeafS", false) => "Short_t",
        ("TLeafS", true) => "UShort_t",
        ("TLeafI", false) => "Int_t",
        ("TLeafI", true) => "UInt_t",
        ("TLeafL" | "TLeafG", false) => "Long64_t",
        ("TLeafL" | "TLeafG", true) => "ULong64_t",
        ("TLeafF", _) => "Float_t",
        ("TLeafD", _) => "Double_t",
        ("TLeafF16", _) => "Float16_t",
        ("TLeafD32", _) => "Double32_t",
        ("TLeafC", _) => "char*",
        _ => "?",
    }
}

/// A column from a plain branch's single leaf.
fn leaf_column(leaf: &RawLeaf) -> Result<(ColumnKind, Layout, Option<String>), String> {
    let unsigned = leaf.is_unsigned;
    let stored = match leaf.class.as_str() {
        "TLeafO" => Stored::Plain(ScalarType::Bool),
        "TLeafB" if unsigned => Stored::Plain(ScalarType::U8),
        "TLeafB" => Stored::Plain(ScalarType::I8),
        "TLeafS" if unsigned => Stored::Plain(ScalarType::U16),
        "TLeafS" => Stored::Plain(ScalarType::I16),
        "TLeafI" if unsigned => Stored::Plain(ScalarType::U32),
        "TLeafI" => Stored::Plain(ScalarType::I32),
        "TLeafL" | "TLeafG" if unsigned => Stored::Plain(ScalarType::U64),
        "TLeafL" | "TLeafG" => Stored::Plain(ScalarType::I64),
        "TLeafF" => Stored::Plain(ScalarType::F32),
        "TLeafD" => Stored::Plain(ScalarType::F64),
        // The range and bit count, if any, are in the title (`x[0,10,16]`), as ROOT reads them.
        "TLeafF16" => Stored::reduced(
            ReducedFloat::Float16,
            FloatRange::from_leaf_title(&leaf.title, 'f'),
        )?,
        "TLeafD32" => Stored::reduced(
            ReducedFloat::Double32,
            FloatRange::from_leaf_title(&leaf.title, 'd'),
        )?,
        "TLeafC" if !leaf.has_count => {
            return Ok((ColumnKind::String, Layout::String { header: false }, None));
        }
        class => return Err(format!("leaf class {class} is not supported")),
    };
    let t = stored.output();
    let len =
        usize::try_from(leaf.len).map_err(|_| format!("negative leaf length {}", leaf.len))?;
    if leaf.has_count {
        // `x[n]` or `x[n][3]`: the counter gives entry lengths only when each row is one value.
        let counter = leaf
            .title
            .split_once('[')
            .and_then(|(_, rest)| rest.split_once(']'))
            .map(|(c, _)| c.to_owned())
            .filter(|c| len == 1 && c.parse::<u64>().is_err());
        return Ok((ColumnKind::Jagged(t), Layout::Jagged { stored }, counter));
    }
    let layout = Layout::Fixed {
        stored,
        len: len.max(1),
        offset: 0,
        stride: stored.size() * len.max(1),
    };
    let kind = if len > 1 {
        ColumnKind::Fixed(t, len)
    } else {
        ColumnKind::Scalar(t)
    };
    Ok((kind, layout, None))
}

/// The number type of a C++ type name with its white space removed (`unsignedint`, `Float_t`).
pub(crate) fn scalar_type(s: &str) -> Option<ScalarType> {
    ScalarType::from_cpp(s).or(match s {
        "Longlong" | "longlong" => Some(ScalarType::I64),
        "unsignedlonglong" => Some(ScalarType::U64),
        "unsignedint" => Some(ScalarType::U32),
        "unsignedshort" => Some(ScalarType::U16),
        "unsignedchar" => Some(ScalarType::U8),
        "unsignedlong" => Some(ScalarType::U64),
        _ => None,
    })
}

/// The element type of `std::vector<T>` (white space removed), with or without an allocator
/// (RDataFrame's `vector<T,ROOT::Detail::VecOps::RAdoptAllocator<T>>`), and of
/// `ROOT::VecOps::RVec<T>`, which ROOT stores as a `std::vector<T>`.
pub(crate) fn vector_element(compact: &str) -> Option<String> {
    let s = compact;
    let inner = s
        .strip_prefix("vector<")
        .or_else(|| s.strip_prefix("std::vector<"))
        .or_else(|| s.strip_prefix("ROOT::VecOps::RVec<"))
        .or_else(|| s.strip_prefix("ROOT::RVec<"))
        .and_then(|s| s.strip_suffix('>'))?;
    let mut depth = 0;
    let end = inner
        .char_indices()
        .find(|&(_, c)| {
            depth += match c {
                '<' => 1,
                '>' => -1,
                _ => 0,
            };
            c == ',' && depth == 0
        })
        .map_or(inner.len(), |(i, _)| i);
    let (element, allocator) = inner.split_at(end);
    let allocator = allocator.trim_start_matches(',');
    (allocator.is_empty()
        || allocator.starts_with("allocator<")
        || allocator.starts_with("std::allocator<")
        || allocator.starts_with("ROOT::Detail::VecOps::RAdoptAllocator<"))
    .then(|| element.to_owned())
}

/// The layout of an STL container or string of type `type_name` streamed as a whole: a branch of
/// its own (`member` false) or a member of a split object (`member` true: a `std::string` then
/// has an object header). `None` if the type is not an STL container or string; an error says
/// why a container is not read.
fn stl_layout(type_name: &str, member: bool) -> Option<Result<(ColumnKind, Layout), String>> {
    let compact = crate::streamer::compact(type_name);
    let inner = scalar_type;
    let strip = vector_element;
    if compact == "string" || compact == "std::string" {
        return Some(Ok((ColumnKind::String, Layout::String { header: member })));
    }
    // TString's own streamer writes the characters alone.
    if compact == "TString" && !member {
        return Some(Ok((ColumnKind::String, Layout::String { header: false })));
    }
    // An element type: a plain number, or `Double32_t`, which a collection streams as a
    // 32-bit float (no member comment gives it a range) and reads back as a double.
    let element = |s: &str| match s {
        "Double32_t" => Some((ScalarType::F64, Stored::Double32)),
        _ => inner(s).map(|t| (t, Stored::Plain(t))),
    };
    let outer = strip(&compact)?;
    if matches!(outer.as_str(), "string" | "std::string" | "TString") {
        return Some(Ok((
            ColumnKind::StringList,
            Layout::StringList {
                header: ListHeader::Vector,
            },
        )));
    }
    if let Some((t, stored)) = element(&outer) {
        return Some(Ok((ColumnKind::Jagged(t), Layout::Vector { stored })));
    }
    if let Some((t, stored)) = strip(&outer).as_deref().and_then(element) {
        return Some(Ok((
            ColumnKind::JaggedJagged(t),
            Layout::VectorVector { stored },
        )));
    }
    Some(Err(format!(
        "a std::vector of `{outer}` (not a number type evtc reads)"
    )))
}

/// The dimensions of a multi-dimensional fixed-array leaf from its title (`m[2][3]/D`: `[2, 3]`),
/// if it has two or more numeric ones whose product is the array's length; empty otherwise.
fn leaf_dims(title: &str, kind: ColumnKind) -> Vec<usize> {
    let ColumnKind::Fixed(_, len) = kind else {
        return Vec::new();
    };
    let name = title.split('/').next().unwrap_or(title);
    let dims: Option<Vec<usize>> = name
        .split('[')
        .skip(1)
        .map(|part| part.split_once(']').and_then(|(d, _)| d.parse().ok()))
        .collect();
    match dims {
        Some(d)
            if d.len() >= 2 && d.iter().try_fold(1usize, |a, &x| a.checked_mul(x)) == Some(len) =>
        {
            d
        }
        _ => Vec::new(),
    }
}

/// A column from a `TBranchElement` without sub-branches.
fn element_column(
    b: &RawBranch,
    streamers: &Streamers,
) -> Result<(ColumnKind, Layout, String), (String, String)> {
    let Some(e) = &b.element else {
        return Err((
            b.class.clone(),
            "branch element without its class data".into(),
        ));
    };
    let class = e.class_name.clone();
    if e.streamer_type == -1 {
        return match stl_layout(&class, false) {
            Some(Ok((kind, layout))) => {
                let shown = if kind == ColumnKind::String && class != "TString" {
                    "std::string".to_owned()
                } else {
                    class
                };
                Ok((kind, layout, shown))
            }
            Some(Err(reason)) => Err((class, format!("{reason}: not supported"))),
            None => Err((
                class,
                "unsplit objects are not supported (only their split members are)".into(),
            )),
        };
    }
    // A refusal in C++ terms: the member, its class and its type, from the streamer info.
    let refuse = |what: &str| match member(b, e, streamers) {
        Ok(m) => (
            m.type_name.clone(),
            format!(
                "member `{}` of class `{}` is a `{}` ({what}): not supported",
                m.name, e.class_name, m.type_name
            ),
        ),
        Err(why) => (
            class.clone(),
            format!(
                "{what} (streamer type {}): not supported; {why}",
                e.streamer_type
            ),
        ),
    };
    // 0: a member of a split object; 31 and 41: a member of the objects of a split TClonesArray
    // or std::vector<Class>, all of an entry's objects' values back to back.
    let in_collection = match e.ftype {
        0 => false,
        31 | 41 => true,
        t => return Err(refuse(&format!("branch element type {t}"))),
    };
    // 65: a TString member, its length and characters in each entry (each object's, back to
    // back, in a collection).
    if e.streamer_type == 65 {
        return Ok(if in_collection {
            (
                ColumnKind::StringList,
                Layout::StringList {
                    header: ListHeader::None,
                },
                "TString[]".into(),
            )
        } else {
            (
                ColumnKind::String,
                Layout::String { header: false },
                "TString".into(),
            )
        });
    }
    // 300 in a collection: each object's STL member without its own header, all after one
    // object header.
    if e.streamer_type == 300 && in_collection {
        let m = member(b, e, streamers).map_err(|why| {
            (
                class.clone(),
                format!("an STL member whose type the streamer info does not give: {why}"),
            )
        })?;
        let compact = crate::streamer::compact(&m.type_name);
        if compact == "string" || compact == "std::string" {
            return Ok((
                ColumnKind::StringList,
                Layout::StringList {
                    header: ListHeader::Object,
                },
                format!("{}[]", m.type_name),
            ));
        }
        return match stl_layout(&m.type_name, true) {
            Some(Ok((ColumnKind::Jagged(t), Layout::Vector { stored }))) => Ok((
                ColumnKind::JaggedJagged(t),
                Layout::VectorsInCollection { stored },
                format!("{}[]", m.type_name),
            )),
            _ => Err(refuse("an STL container in each object of a collection")),
        };
    }
    // 300: an STL container or string member (kSTL), streamed whole in each entry.
    if e.streamer_type == 300 && !in_collection {
        let m = member(b, e, streamers).map_err(|why| {
            (
                class.clone(),
                format!("an STL member whose type the streamer info does not give: {why}"),
            )
        })?;
        return match stl_layout(&m.type_name, true) {
            Some(Ok((kind, layout))) => Ok((kind, layout, m.type_name.clone())),
            Some(Err(reason)) => Err(refuse(&reason)),
            None => Err(refuse("an STL container evtc does not read")),
        };
    }
    // 41-59: a `T* x //[n]` array (kOffsetP): a byte saying whether there are values, then
    // the values; in a collection's objects their counts are in another member.
    if let t @ 41..=59 = e.streamer_type {
        if in_collection {
            return Err(refuse(&format!(
                "a variable-length array in each object of a collection, code {t}"
            )));
        }
        let m = member(b, e, streamers).map_err(|r| (class.clone(), r))?;
        let stored = match t - 40 {
            9 => Stored::reduced(ReducedFloat::Double32, m.range),
            19 => Stored::reduced(ReducedFloat::Float16, m.range),
            code => crate::plan::basic(code)
                .map(Stored::Plain)
                .ok_or_else(|| format!("basic type code {code}")),
        }
        .map_err(|r| (class.clone(), r))?;
        return Ok((
            ColumnKind::Jagged(stored.output()),
            Layout::FlaggedArray { stored },
            m.type_name.clone(),
        ));
    }
    let (code, array) = match e.streamer_type {
        t @ 1..=19 => (t, false),
        t @ 21..=39 => (t - 20, true),
        t if t >= 61 => return Err(refuse("an object, string or collection member")),
        t => return Err(refuse(&format!("code {t}"))),
    };
    let mut root_type = None;
    let mut reduced = |kind| {
        let member = member(b, e, streamers).map_err(|r| (class.clone(), r))?;
        root_type = Some(format!("{} {}", member.type_name, member.title.trim()));
        Stored::reduced(kind, member.range).map_err(|r| (class.clone(), r))
    };
    let stored = match code {
        9 => reduced(ReducedFloat::Double32)?,
        19 => reduced(ReducedFloat::Float16)?,
        t => match crate::plan::basic(t) {
            Some(t) => Stored::Plain(t),
            None => return Err(refuse(&format!("basic type code {t}"))),
        },
    };
    let len = if array {
        b.leaves
            .first()
            .map_or(1, |l| usize::try_from(l.len).unwrap_or(1))
            .max(1)
    } else {
        1
    };
    let t = stored.output();
    if in_collection {
        let root_type = root_type.unwrap_or_else(|| t.root_name().to_owned());
        if array {
            // Each object's array: a list of `len` values per object.
            let len = member(b, e, streamers).map_or(len, |m| m.array_length.max(1));
            return Ok((
                ColumnKind::JaggedJagged(t),
                Layout::ArraysInCollection { stored, len },
                format!("{root_type}[{len}][]"),
            ));
        }
        return Ok((
            ColumnKind::Jagged(t),
            Layout::Jagged { stored },
            format!("{root_type}[]"),
        ));
    }
    let kind = if array {
        ColumnKind::Fixed(t, len)
    } else {
        ColumnKind::Scalar(t)
    };
    let layout = Layout::Fixed {
        stored,
        len,
        offset: 0,
        stride: stored.size() * len,
    };
    let root_type = root_type.unwrap_or_else(|| t.root_name().to_owned());
    let root_type = if array {
        format!("{root_type}[{len}]")
    } else {
        root_type
    };
    Ok((kind, layout, root_type))
}

/// An unsplit object of fixed size: a column per basic member, `branch.member.submember`, each
/// read at its offset in every `stride`-byte entry.
fn member_columns(
    name: &str,
    object: UnsplitObject,
    column: &dyn Fn(String, ColumnKind, Layout, Option<String>, String) -> Column,
) -> Vec<Column> {
    let UnsplitObject {
        members,
        stride,
        prefix,
        custom_header,
    } = object;
    members
        .into_iter()
        .map(|m| {
            let t = m.stored.output();
            let kind = if m.len > 1 {
                ColumnKind::Fixed(t, m.len)
            } else {
                ColumnKind::Scalar(t)
            };
            let layout = Layout::Fixed {
                stored: m.stored,
                len: m.len,
                offset: m.offset,
                stride,
            };
            Column {
                entry_prefix: prefix.clone(),
                custom_header: custom_header.clone(),
                dims: if m.len > 1 { m.dims } else { Vec::new() },
                ..column(
                    format!("{name}.{}", m.path),
                    kind,
                    layout,
                    None,
                    m.type_name,
                )
            }
        })
        .collect()
}

/// One basic member of the objects of an [`object_vector`]: its path, value type, how it is
/// stored, its offset in an object, the object's size, the header every object starts with and
/// the member's C++ type.
type VectorMember = (String, ScalarType, Stored, usize, usize, Arc<[u8]>, String);

/// For an unsplit `std::vector` of objects of a fixed-size class (`std::vector<TLorentzVector>`)
/// streamed object by object: one member per basic member of the class, each a jagged column
/// (an object's value per object, as for a split collection); or why it cannot be read. `None`
/// if the branch is not such a vector.
fn object_vector(
    b: &RawBranch,
    streamers: &Streamers,
) -> Option<Result<Vec<VectorMember>, String>> {
    let e = b.element.as_ref()?;
    if b.class != "TBranchElement" || e.streamer_type != -1 {
        return None;
    }
    let compact = crate::streamer::compact(&e.class_name);
    let class = vector_element(&compact)?;
    let refuse = |why: String| {
        Some(Err(format!(
            "a `{}` is read member by member when its objects have a fixed size: {why}",
            e.class_name
        )))
    };
    let Some(info) = streamers.only_info(&class) else {
        return refuse(format!(
            "the file has no single streamer info for class `{class}`"
        ));
    };
    let (members, stride) = match crate::plan::fixed_object(streamers, info, true) {
        Ok((members, _)) if members.is_empty() => {
            return refuse(format!("class `{class}` has no members evtc reads"));
        }
        Ok(plan) => plan,
        Err(why) => return refuse(why),
    };
    if let Some(m) = members.iter().find(|m| m.len != 1) {
        return refuse(format!(
            "member `{}` is an array of {} values in each object",
            m.path, m.len
        ));
    }
    // Each object: its byte count (version and members) and its class's version.
    let mut header = (0x4000_0000 | (stride as u32).saturating_sub(4))
        .to_be_bytes()
        .to_vec();
    header.extend_from_slice(&(info.version as u16).to_be_bytes());
    let header: Arc<[u8]> = header.into();
    Some(Ok(members
        .into_iter()
        .map(|m| {
            let t = m.stored.output();
            (
                m.path,
                t,
                m.stored,
                m.offset,
                stride,
                header.clone(),
                m.type_name,
            )
        })
        .collect()))
}

/// The interpreter's plan for a `TBranchElement` whose objects vary in size: an unsplit object
/// of a class without a custom streamer, an unsplit `std::vector` (of objects, of vectors of
/// objects), or an STL member of a split object; `None` for other branches; an error says why
/// a part cannot be read.
fn interpreted(
    b: &RawBranch,
    streamers: &Streamers,
) -> Option<Result<crate::interp::Plan, String>> {
    use crate::interp::{Root, plan};
    let e = b.element.as_ref()?;
    if b.class != "TBranchElement" {
        return None;
    }
    let compact = crate::streamer::compact(&e.class_name);
    let result = match (e.streamer_type, e.ftype) {
        (-1, _) if vector_element(&compact).is_some() => plan(streamers, Root::Stl(&e.class_name)),
        // A class with a custom streamer (fType -1) writes what the streamer info cannot tell.
        (-1, 0) => match streamers.info(&e.class_name, e.class_version) {
            Some(info) => plan(
                streamers,
                Root::Class {
                    info,
                    header: false,
                },
            ),
            None => Err(format!(
                "the file has no streamer info for class `{}` version {}",
                e.class_name, e.class_version
            )),
        },
        (300, 0) => match member(b, e, streamers) {
            Ok(m) => plan(streamers, Root::Stl(&m.type_name)),
            Err(why) => Err(why),
        },
        _ => return None,
    };
    Some(
        result.and_then(|p| match (p.targets.is_empty(), p.refused.first()) {
            (false, _) => Ok(p),
            (true, Some((path, type_name, why))) => {
                Err(format!("`{path}` is a `{type_name}`: {why}"))
            }
            (true, None) => Err(format!("`{}` has no members evtc reads", e.class_name)),
        }),
    )
}

/// The plan of an unsplit object branch.
struct UnsplitObject {
    members: Vec<crate::plan::FixedMember>,
    /// Bytes per entry.
    stride: usize,
    /// What each entry starts with before the object.
    prefix: Option<Arc<[u8]>>,
    /// See [`Column::custom_header`].
    custom_header: Option<Arc<[u8]>>,
}

/// For an unsplit object branch (`TBranchObject`, or `TBranchElement` of streamer type -1), the
/// plan of its
/// fixed-size members from the file's streamer info, or why there is none; `None` for other
/// branches.
fn unsplit_object(b: &RawBranch, streamers: &Streamers) -> Option<Result<UnsplitObject, String>> {
    let e = b.element.as_ref()?;
    // TBranchObject calls the object's Streamer: each entry starts with its byte count and
    // version. A TBranchElement streams the members only, unless its class has a custom
    // streamer (fType -1), whose bytes the streamer info cannot describe: those written by
    // WriteClassBuffer (TVector3) are the members after the same header, those of others
    // (TDatime) are often the members alone; the reader takes a basket as one or the other
    // only if every entry fits it (`Column::custom_header`).
    let (header, custom) = match b.class.as_str() {
        "TBranchObject" => (true, false),
        "TBranchElement" if e.streamer_type == -1 => (false, e.ftype == -1),
        _ => return None,
    };
    let info = if header {
        streamers.only_info(&e.class_name)
    } else {
        streamers.info(&e.class_name, e.class_version)
    };
    let info = match info {
        Some(info) => info,
        None => {
            return Some(Err(format!(
                "an unsplit `{}` needs the class's streamer info, which the file {}",
                e.class_name,
                streamers
                    .error
                    .as_deref()
                    .map_or_else(|| "lacks".to_owned(), |err| format!("cannot give ({err})"))
            )));
        }
    };
    let version = info.version;
    let plan = crate::plan::fixed_object(streamers, info, header).and_then(|(members, stride)| {
        if members.is_empty() {
            Err(format!(
                "class `{}` has no members evtc reads",
                e.class_name
            ))
        } else {
            Ok((members, stride))
        }
    });
    let plan = plan.map(|(mut members, stride)| {
        if !header {
            // The byte count (the version and the members) and the class's version.
            let custom_header = custom.then(|| {
                let mut h = (0x4000_0000 | (stride as u32 + 2)).to_be_bytes().to_vec();
                h.extend_from_slice(&(version as u16).to_be_bytes());
                h.into()
            });
            return UnsplitObject {
                members,
                stride,
                prefix: None,
                custom_header,
            };
        }
        // TLeafObject::FillBasket writes the class name (a length byte, the name, a NUL) before
        // each object.
        let mut prefix = vec![e.class_name.len() as u8];
        prefix.extend_from_slice(e.class_name.as_bytes());
        prefix.push(0);
        for m in &mut members {
            m.offset += prefix.len();
        }
        UnsplitObject {
            members,
            stride: stride + prefix.len(),
            prefix: Some(prefix.into()),
            custom_header: None,
        }
    });
    Some(plan.map_err(|why| {
        format!(
            "an unsplit `{}` is read member by member when its size is fixed: {why}",
            e.class_name
        )
    }))
}

/// The streamer element of a split member: element `fID` of the parent class's streamer info
/// (the class version the branch was written with), checked by name and type.
fn member<'s>(
    b: &RawBranch,
    e: &Element,
    streamers: &'s Streamers,
) -> Result<&'s StreamerElement, String> {
    if let Some(error) = &streamers.error {
        return Err(format!(
            "the file's streamer infos, which hold this member's range and bit count, \
             cannot be read: {error}"
        ));
    }
    let info = streamers
        .info(&e.class_name, e.class_version)
        .ok_or_else(|| {
            format!(
                "the file has no streamer info for class {} version {}, which holds this \
                 member's range and bit count",
                e.class_name, e.class_version
            )
        })?;
    let last = b.name.rsplit('.').next().unwrap_or(&b.name);
    let name = last.split_once('[').map_or(last, |(n, _)| n);
    let by_id = usize::try_from(e.id)
        .ok()
        .and_then(|i| info.elements.get(i))
        .filter(|el| el.name == name);
    let element = by_id
        .or_else(|| info.elements.iter().find(|el| el.name == name))
        .ok_or_else(|| {
            format!(
                "class {} version {} has no member {name:?} in the file's streamer info",
                e.class_name, e.class_version
            )
        })?;
    // An STL member is kStreamer (500) in the file's streamer info and kSTL (300) in the
    // branch (ROOT's TStreamerInfo::Compile turns one into the other).
    if element.kind != e.streamer_type && !(e.streamer_type == 300 && element.kind == 500) {
        return Err(format!(
            "member {name:?} of class {} has streamer type {} in the streamer info but {} in \
             the branch",
            e.class_name, element.kind, e.streamer_type
        ));
    }
    Ok(element)
}
