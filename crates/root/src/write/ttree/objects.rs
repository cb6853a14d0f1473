//! The records of a TTree as ROOT 6 streams them (`TTree` version 20, `TBranch` 13,
//! `TBranchElement` 10, `TLeaf` 2 and its typed leaves 1, `TTreeIndex` 2), and the key header
//! of a basket (`TBasket` version 3).

use super::super::buffer::{ObjectBuffer, put_string, string_len};
use super::basket::Layout;
use super::{Branch, TTreeWriter};
use crate::types::{ColumnKind, ScalarType};

/// `TBranch::fEntryOffsetLen` of branches with variable-size entries (ROOT's default for a
/// tree, `fDefaultEntryOffsetLen`), which is also their baskets' `fNevBufSize`.
pub(super) const ENTRY_OFFSET_LEN: i32 = 1000;
/// `TObject::fBits` ROOT writes: a tree's `TNamed` (`kMustCleanup`), a branch's, a branch
/// element's, an owning collection (`TCollection::kIsOwner`).
const TREE_BITS: u32 = 0x0000_0008;
const BRANCH_BITS: u32 = 0x0040_0000;
const BRANCH_ELEMENT_BITS: u32 = 0x0050_0000;
const OWNER_BITS: u32 = 0x0000_4000;
/// `ROOT::TIOFeatures`: a foreign class written with version 0 and its checksum.
const IO_FEATURES_CHECKSUM: u32 = 0x1aa1_2f10;
/// The fixed part of a long-form key header (as the file writer's).
const KEY_FIXED: usize = 4 + 2 + 4 + 4 + 2 + 2 + 8 + 8;
/// A basket's own fields after the key header: version, buffer size, entry size, entries,
/// last position, flag.
const BASKET_FIELDS: usize = 2 + 4 + 4 + 4 + 4 + 1;

/// The key length of a basket of branch `branch` of tree `tree`.
pub(super) fn basket_key_len(branch: &str, tree: &str) -> usize {
    KEY_FIXED + string_len("TBasket") + string_len(branch) + string_len(tree) + BASKET_FIELDS
}

/// A basket's key header.
#[derive(Debug)]
pub(super) struct BasketHeader<'a> {
    pub(super) branch: &'a str,
    pub(super) tree: &'a str,
    /// ROOT numbers a branch's baskets in the key's cycle.
    pub(super) cycle: i16,
    pub(super) objlen: usize,
    pub(super) stored: usize,
    pub(super) nev_buf_size: i32,
    pub(super) entries: i32,
    /// Where the entry offsets start in the key's buffer (the key length plus the data's).
    pub(super) last: i32,
}

impl BasketHeader<'_> {
    /// The header's bytes for a key at `seek`, datime `datime`.
    pub(super) fn bytes(&self, seek: u64, datime: u32) -> Vec<u8> {
        let key_len = basket_key_len(self.branch, self.tree);
        let mut b = Vec::with_capacity(key_len);
        b.extend_from_slice(&((key_len + self.stored) as i32).to_be_bytes());
        b.extend_from_slice(&1004i16.to_be_bytes());
        b.extend_from_slice(&(self.objlen as i32).to_be_bytes());
        b.extend_from_slice(&datime.to_be_bytes());
        b.extend_from_slice(&(key_len as i16).to_be_bytes());
        b.extend_from_slice(&self.cycle.to_be_bytes());
        b.extend_from_slice(&seek.to_be_bytes());
        b.extend_from_slice(&100u64.to_be_bytes());
        for s in ["TBasket", self.branch, self.tree] {
            put_string(&mut b, s);
        }
        b.extend_from_slice(&3i16.to_be_bytes());
        b.extend_from_slice(&((key_len + self.objlen) as i32).to_be_bytes());
        b.extend_from_slice(&self.nev_buf_size.to_be_bytes());
        b.extend_from_slice(&self.entries.to_be_bytes());
        b.extend_from_slice(&self.last.to_be_bytes());
        b.push(0);
        b
    }
}

/// ROOT's leaf type code and leaf class of values of type `t`.
fn leaf_type(t: ScalarType) -> (char, &'static str) {
    match t {
        ScalarType::Bool => ('O', "TLeafO"),
        ScalarType::I8 => ('B', "TLeafB"),
        ScalarType::U8 => ('b', "TLeafB"),
        ScalarType::I16 => ('S', "TLeafS"),
        ScalarType::U16 => ('s', "TLeafS"),
        ScalarType::I32 => ('I', "TLeafI"),
        ScalarType::U32 => ('i', "TLeafI"),
        ScalarType::I64 => ('L', "TLeafL"),
        ScalarType::U64 => ('l', "TLeafL"),
        ScalarType::F32 => ('F', "TLeafF"),
        ScalarType::F64 => ('D', "TLeafD"),
    }
}

/// ROOT's name of the class of a `std::vector` or `std::string` branch's objects.
fn class_name(kind: ColumnKind) -> String {
    fn vectors(depth: usize, item: &str) -> String {
        (0..depth).fold(item.to_owned(), |inner, _| {
            if inner.ends_with('>') {
                format!("vector<{inner} >")
            } else {
                format!("vector<{inner}>")
            }
        })
    }
    let item = |t: ScalarType| match t {
        ScalarType::Bool => "bool",
        ScalarType::I8 => "char",
        ScalarType::U8 => "unsigned char",
        ScalarType::I16 => "short",
        ScalarType::U16 => "unsigned short",
        ScalarType::I32 => "int",
        ScalarType::U32 => "unsigned int",
        ScalarType::I64 => "Long64_t",
        ScalarType::U64 => "ULong64_t",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    };
    match kind {
        ColumnKind::Jagged(t) => vectors(1, item(t)),
        ColumnKind::Nested(t, d) => vectors(usize::from(d), item(t)),
        ColumnKind::String => "string".to_owned(),
        ColumnKind::Strings(d) => vectors(usize::from(d), "string"),
        ColumnKind::Scalar(_) | ColumnKind::Fixed(..) => String::new(),
    }
}

/// The checksum ROOT records of a class of `name`: for STL collections, of the name alone;
/// `std::string`'s as ROOT 6 computes it.
fn class_checksum(name: &str) -> u32 {
    if name == "string" {
        return 1_852_773_892;
    }
    name.bytes()
        .fold(0u32, |id, c| id.wrapping_mul(3).wrapping_add(u32::from(c)))
}

impl TTreeWriter {
    /// The `TTree` record: the tree's members, its branches with their leaves and basket
    /// tables, the leaves again (as references), and its index.
    pub(super) fn tree_record(&self, b: &mut ObjectBuffer) {
        let tree = b.begin(20);
        b.tnamed(&self.name, self.title(), TREE_BITS);
        let line = b.begin(2);
        for v in [602i16, 1, 1] {
            b.i16(v);
        }
        b.end(line);
        fill_attributes(b);
        let marker = b.begin(3);
        b.i16(1);
        b.i16(1);
        b.f32(1.0);
        b.end(marker);
        let (tot, zip) = self.branches.iter().fold((0, 0), |(t, z), br| {
            let (bt, bz) = branch_bytes(br);
            (t + bt, z + bz)
        });
        for v in [self.entries as i64, tot, zip, zip, zip] {
            b.i64(v); // fEntries, fTotBytes, fZipBytes, fSavedBytes, fFlushedBytes
        }
        b.f64(1.0); // fWeight
        b.i32(0); // fTimerInterval
        b.i32(25); // fScanField
        b.i32(0); // fUpdate
        b.i32(ENTRY_OFFSET_LEN); // fDefaultEntryOffsetLen
        let (auto_flush, ranges) = self.cluster_ranges();
        b.i32(ranges.len() as i32); // fNClusterRange
        for v in [
            1_000_000_000_000i64,
            1_000_000_000_000,
            0,
            -300_000_000,
            auto_flush,
            1_000_000,
        ] {
            // fMaxEntries, fMaxEntryLoop, fMaxVirtualSize, fAutoSave, fAutoFlush, fEstimate
            b.i64(v);
        }
        // fClusterRangeEnd and fClusterSize: a flag byte, then the values.
        for column in [0, 1] {
            b.u8(u8::from(!ranges.is_empty()));
            for r in &ranges {
                b.i64(if column == 0 { r.0 } else { r.1 });
            }
        }
        io_features(b);
        let mut leaf_tags = Vec::with_capacity(self.branches.len());
        let branches = b.begin(3);
        b.tobject(OWNER_BITS);
        b.string("");
        b.i32(self.branches.len() as i32);
        b.i32(0);
        for branch in &self.branches {
            let tag = self.branch_record(b, branch, &leaf_tags);
            leaf_tags.push((branch.spec.name.clone(), tag));
        }
        b.end(branches);
        let leaves = b.begin(3);
        b.tobject(0);
        b.string("");
        b.i32(leaf_tags.len() as i32);
        b.i32(0);
        for (_, tag) in &leaf_tags {
            b.reference(Some(*tag));
        }
        b.end(leaves);
        b.reference(None); // fAliases
        b.i32(0); // fIndexValues (TArrayD)
        b.i32(0); // fIndex (TArrayI)
        match &self.index {
            Some(index) => index_record(b, &index.major, &index.minor, &index.keys),
            None => b.reference(None),
        }
        b.reference(None); // fFriends
        b.reference(None); // fUserInfo
        b.reference(None); // fBranchRef
        b.end(tree);
    }

    /// (fAutoFlush, cluster ranges): ROOT's AutoFlush is the first cluster's entries; when
    /// later clusters (but the last) differ, each run of one size is a range (its last entry
    /// and its clusters' size).
    fn cluster_ranges(&self) -> (i64, Vec<(i64, i64)>) {
        let first = self.clusters.first().copied().unwrap_or(0) as i64;
        let body = &self.clusters[..self.clusters.len().saturating_sub(1)];
        if body.iter().all(|&c| c as i64 == first) {
            return (first, Vec::new());
        }
        let mut ranges: Vec<(i64, i64)> = Vec::new();
        let mut end = 0i64;
        for &c in &self.clusters {
            end += c as i64;
            match ranges.last_mut() {
                Some(last) if last.1 == c as i64 => last.0 = end - 1,
                _ => ranges.push((end - 1, c as i64)),
            }
        }
        (first, ranges)
    }

    /// One branch's record; returns its leaf's tag.
    fn branch_record(
        &self,
        b: &mut ObjectBuffer,
        branch: &Branch,
        leaves: &[(String, u32)],
    ) -> u32 {
        let spec = &branch.spec;
        let element = branch.layout == Layout::Object;
        let object = b.begin_tagged(if element { "TBranchElement" } else { "TBranch" });
        let own = if element { Some(b.begin(10)) } else { None };
        let base = b.begin(13);
        let (code, leaf_class) = leaf_type(spec.kind.scalar());
        let dims = dims_suffix(spec);
        let title = match (&spec.counter, element) {
            (_, true) => spec.name.clone(),
            (Some(counter), false) => format!("{}[{counter}]/{code}", spec.name),
            (None, false) => format!("{}{dims}/{code}", spec.name),
        };
        b.tnamed(
            &spec.name,
            &title,
            if element {
                BRANCH_ELEMENT_BITS
            } else {
                BRANCH_BITS
            },
        );
        fill_attributes(b);
        let n_baskets = branch.baskets.len();
        b.i32(crate::compression::nearest_setting(spec.codec)); // fCompress
        let basket_size = branch.baskets.iter().map(|k| k.total).max().unwrap_or(0);
        b.i32(basket_size.clamp(32_000, i32::MAX as u64) as i32); // fBasketSize
        b.i32(if matches!(branch.layout, Layout::Fixed { .. }) {
            0
        } else {
            ENTRY_OFFSET_LEN
        });
        b.i32(n_baskets as i32); // fWriteBasket
        b.i64(self.entries as i64); // fEntryNumber
        io_features(b);
        let max_baskets = n_baskets + 1;
        b.i32(0); // fOffset
        b.i32(max_baskets as i32);
        b.i32(if element && spec.kind != ColumnKind::String {
            99
        } else {
            0
        }); // fSplitLevel
        let (tot, zip) = branch_bytes(branch);
        for v in [self.entries as i64, 0, tot, zip] {
            b.i64(v); // fEntries, fFirstEntry, fTotBytes, fZipBytes
        }
        empty_array(b); // fBranches
        let leaves_array = b.begin(3);
        b.tobject(0);
        b.string("");
        b.i32(1);
        b.i32(0);
        let counter_tag = spec
            .counter
            .as_ref()
            .and_then(|c| leaves.iter().find(|(n, _)| n == c).map(|(_, t)| *t));
        let leaf_tag = self.leaf_record(b, branch, leaf_class, &dims, counter_tag);
        b.end(leaves_array);
        // fBaskets: the baskets live in their own keys; ROOT lists one more (the one it fills).
        let baskets = b.begin(3);
        b.tobject(0);
        b.string("");
        b.i32(max_baskets as i32);
        b.i32(0);
        for _ in 0..max_baskets {
            b.reference(None);
        }
        b.end(baskets);
        b.u8(1);
        for i in 0..max_baskets {
            b.i32(branch.baskets.get(i).map_or(0, |k| k.nbytes as i32));
        }
        b.u8(1);
        for i in 0..max_baskets {
            let entry = branch
                .baskets
                .get(i)
                .map_or(self.entries, |k| k.first_entry);
            b.i64(entry as i64);
        }
        b.u8(1);
        for i in 0..max_baskets {
            b.i64(branch.baskets.get(i).map_or(0, |k| k.seek as i64));
        }
        b.string(""); // fFileName
        b.end(base);
        if let Some(own) = own {
            let class = class_name(spec.kind);
            b.string(&class);
            b.string(""); // fParentName
            b.string(""); // fClonesName
            b.u32(class_checksum(&class));
            b.i16(if spec.kind == ColumnKind::String {
                2
            } else {
                6
            }); // fClassVersion
            b.i32(-1); // fID
            b.i32(if spec.kind == ColumnKind::String {
                -1
            } else {
                0
            }); // fType
            b.i32(-1); // fStreamerType
            b.i32(0); // fMaximum
            b.reference(None); // fBranchCount
            b.reference(None); // fBranchCount2
            b.end(own);
        }
        b.end(object);
        leaf_tag
    }

    /// A branch's leaf; returns its tag.
    fn leaf_record(
        &self,
        b: &mut ObjectBuffer,
        branch: &Branch,
        class: &'static str,
        dims: &str,
        counter: Option<u32>,
    ) -> u32 {
        let spec = &branch.spec;
        let element = branch.layout == Layout::Object;
        let object = b.begin_tagged(if element { "TLeafElement" } else { class });
        let tag = b.tag(&object);
        let own = b.begin(1);
        let leaf = b.begin(2);
        let title = match &spec.counter {
            Some(c) => format!("{}[{c}]", spec.name),
            None => format!("{}{dims}", spec.name),
        };
        b.tnamed(&spec.name, if element { &spec.name } else { &title }, 0);
        let t = spec.kind.scalar();
        let len = match spec.kind {
            ColumnKind::Fixed(_, n) => n,
            _ => 1,
        };
        b.i32(len as i32); // fLen
        b.i32(if element { 0 } else { t.size() as i32 }); // fLenType
        b.i32(0); // fOffset
        b.u8(u8::from(branch.is_counter)); // fIsRange
        b.u8(u8::from(!element && is_unsigned(t))); // fIsUnsigned
        b.reference(counter); // fLeafCount
        b.end(leaf);
        if element {
            b.i32(-1); // fID
            b.i32(-1); // fType
        } else {
            let max = branch.max_count;
            match t {
                ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => {
                    b.u8(0);
                    b.u8(max as u8);
                }
                ScalarType::I16 | ScalarType::U16 => {
                    b.i16(0);
                    b.i16(max as i16);
                }
                ScalarType::I32 | ScalarType::U32 => {
                    b.i32(0);
                    b.i32(max as i32);
                }
                ScalarType::I64 | ScalarType::U64 => {
                    b.i64(0);
                    b.i64(max);
                }
                ScalarType::F32 => {
                    b.f32(0.0);
                    b.f32(0.0);
                }
                ScalarType::F64 => {
                    b.f64(0.0);
                    b.f64(0.0);
                }
            }
        }
        b.end(own);
        b.end(object);
        tag
    }
}

/// A branch's bytes before and after compression (keys included), as ROOT counts them.
fn branch_bytes(branch: &Branch) -> (i64, i64) {
    branch.baskets.iter().fold((0, 0), |(t, z), k| {
        (t + k.total as i64, z + i64::from(k.nbytes))
    })
}

/// `[d0][d1]...` of a fixed array.
fn dims_suffix(spec: &super::TreeBranch) -> String {
    match spec.kind {
        ColumnKind::Fixed(..) if spec.dims.len() >= 2 => {
            spec.dims.iter().map(|d| format!("[{d}]")).collect()
        }
        ColumnKind::Fixed(_, n) => format!("[{n}]"),
        _ => String::new(),
    }
}

fn is_unsigned(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64
    )
}

/// `TAttFill` as ROOT writes a tree's and a branch's: color 0, style 1001.
fn fill_attributes(b: &mut ObjectBuffer) {
    let fill = b.begin(2);
    b.i16(0);
    b.i16(1001);
    b.end(fill);
}

/// `ROOT::TIOFeatures` with no feature.
fn io_features(b: &mut ObjectBuffer) {
    let open = b.begin(0);
    b.u32(IO_FEATURES_CHECKSUM);
    b.u8(0);
    b.end(open);
}

/// An empty `TObjArray`.
fn empty_array(b: &mut ObjectBuffer) {
    let open = b.begin(3);
    b.tobject(0);
    b.string("");
    b.i32(0);
    b.i32(0);
    b.end(open);
}

/// A `TTreeIndex` on `major` and `minor`: every entry's keys, sorted, with its entry number.
fn index_record(b: &mut ObjectBuffer, major: &str, minor: &str, keys: &[(i64, i64)]) {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (keys[i], i));
    let object = b.begin_tagged("TTreeIndex");
    let index = b.begin(2);
    let virtual_index = b.begin(1);
    b.tnamed("", "", 0);
    b.end(virtual_index);
    b.string(major);
    b.string(minor);
    b.i64(keys.len() as i64);
    for &i in &order {
        b.i64(keys[i].0);
    }
    for &i in &order {
        b.i64(keys[i].1);
    }
    for &i in &order {
        b.i64(i as i64);
    }
    b.end(index);
    b.end(object);
}
