//! Reading an RNTuple column ([`FieldReader`]): cluster by cluster, the index (or switch)
//! columns of the list levels give each level's item counts and the range of items below, down
//! to the range of values; pages are read, checked, decompressed and decoded as needed, the last
//! one of each column kept for the next read.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use evtc_codecs::Decompressor;

use super::element::{self, ColumnType};
use super::meta::{ClusterColumn, PageDesc};
use super::plan::{Columns, FieldColumn, Leaf, Level};
use super::wire::Locator;
use crate::column::Column;
use crate::compression::decompress;
use crate::data::{ColumnData, Values};
use crate::error::{Error, Result};
use crate::file::RootFile;
use crate::source::ReadAt;
use crate::types::{ColumnKind, ScalarType};

/// Reads one column of an RNTuple field for entry ranges.
#[derive(Debug)]
pub(crate) struct FieldReader<'f, R: ReadAt> {
    file: &'f RootFile<R>,
    column: Column,
    plan: Arc<FieldColumn>,
    dec: Decompressor,
    /// The last page decoded of each physical column, by column id.
    pages: HashMap<u32, Page>,
    stored: Vec<u8>,
    raw: Vec<u8>,
    split: Vec<u8>,
}

/// A decoded page: which it is, and its elements.
#[derive(Debug)]
struct Page {
    cluster: usize,
    index: usize,
    /// The page's first element in the cluster.
    first: u64,
    elements: Elements,
}

/// A page's elements, in the column's natural type.
#[derive(Debug)]
enum Elements {
    Values(Values),
    Index(Vec<u64>),
    Switch(Vec<(u64, u32)>),
}

impl Elements {
    fn len(&self) -> usize {
        match self {
            Elements::Values(v) => v.len(),
            Elements::Index(v) => v.len(),
            Elements::Switch(v) => v.len(),
        }
    }
}

/// Where one physical column's elements are in a cluster: its part of the page list, or none
/// (a deferred column before its first element reads as zeros).
struct InCluster<'a> {
    column: u32,
    part: Option<&'a ClusterColumn>,
}

impl<'f, R: ReadAt> FieldReader<'f, R> {
    pub(crate) fn new(file: &'f RootFile<R>, column: &Column, plan: &Arc<FieldColumn>) -> Self {
        FieldReader {
            file,
            column: column.clone(),
            plan: Arc::clone(plan),
            dec: Decompressor::new(),
            pages: HashMap::new(),
            stored: Vec::new(),
            raw: Vec::new(),
            split: Vec::new(),
        }
    }

    /// Drops the decoded pages.
    pub(crate) fn forget(&mut self) {
        self.pages.clear();
    }

    /// Appends entries `range` to `out` (shaped for the column's kind).
    pub(crate) fn read(&mut self, range: Range<u64>, out: &mut ColumnData) -> Result<()> {
        let plan = Arc::clone(&self.plan);
        let d = &plan.descriptor;
        if range.start > range.end || range.end > d.entries {
            return Err(Error::OutOfRange {
                branch: self.column.name.clone(),
                start: range.start,
                end: range.end,
                entries: d.entries,
            });
        }
        let first = d
            .clusters
            .partition_point(|c| c.first_entry + c.entries <= range.start);
        for k in first..d.clusters.len() {
            let c = &d.clusters[k];
            if c.first_entry >= range.end {
                break;
            }
            let lo = range.start.max(c.first_entry) - c.first_entry;
            let hi = range.end.min(c.first_entry + c.entries) - c.first_entry;
            if lo < hi {
                self.read_cluster(&plan, k, lo..hi, out)?;
            }
        }
        Ok(())
    }

    /// Entries `entries` (relative to cluster `k`) into `out`.
    fn read_cluster(
        &mut self,
        plan: &FieldColumn,
        k: usize,
        entries: Range<u64>,
        out: &mut ColumnData,
    ) -> Result<()> {
        let lists = !matches!(
            self.column.kind,
            ColumnKind::Scalar(_) | ColumnKind::Fixed(..)
        );
        let depth = plan.levels.len();
        let mut items = entries;
        // Items per entry while only fixed-size arrays are above (where a column added late may
        // start in the middle of a cluster).
        let mut at = Place {
            cluster: k,
            per_entry: Some(1),
        };
        for (i, level) in plan.levels.iter().enumerate() {
            let bounds = match (lists, i) {
                (false, _) => None,
                (true, 0) => Some(&mut out.offsets),
                (true, i) => out.levels.get_mut(depth - 1 - i),
            };
            items = match level {
                Level::Array(n) => {
                    if let Some(bounds) = bounds {
                        let mut last = *bounds.last().unwrap_or(&0);
                        for _ in items.clone() {
                            last += n;
                            bounds.push(last);
                        }
                    }
                    at.per_entry = at.per_entry.and_then(|p| p.checked_mul(*n));
                    items.start * n..items.end * n
                }
                Level::Collection(columns) => {
                    let (starts, ends) = self.offsets(at, columns, items.clone())?;
                    at.per_entry = None;
                    if let Some(bounds) = bounds {
                        let mut last = *bounds.last().unwrap_or(&0);
                        bounds.extend(ends.iter().map(|&e| {
                            last += e;
                            last
                        }));
                    }
                    starts
                }
                Level::Alternative { switch, tag } => {
                    let held = self.alternative(at, switch, *tag, items.clone())?;
                    at.per_entry = None;
                    if let Some(bounds) = bounds {
                        let mut last = *bounds.last().unwrap_or(&0);
                        bounds.extend(held.1.iter().map(|&one| {
                            last += u64::from(one);
                            last
                        }));
                    }
                    held.0
                }
            };
        }
        match &plan.leaf {
            Leaf::Values { columns, output } => self.values(at, columns, items, *output, out),
            Leaf::Cardinality { columns, output } => {
                let (_, lengths) = self.offsets(at, columns, items)?;
                push_integers(&mut out.values, *output, lengths.iter().map(|&n| n as i128));
                Ok(())
            }
            Leaf::Tag { switch } => {
                let tags = self.switch(at, switch, items)?;
                let Values::I8(v) = &mut out.values else {
                    return Err(self.internal("a variant's tag column is not of i8"));
                };
                v.extend(
                    tags.iter()
                        .map(|&(_, t)| (t as i64 - 1).clamp(-1, 127) as i8),
                );
                Ok(())
            }
        }
    }

    fn internal(&self, detail: &str) -> Error {
        Error::corrupt(
            format!(
                "field {:?} of RNTuple {:?}",
                self.plan.path, self.plan.descriptor.name
            ),
            0,
            format!("internal: {detail}"),
        )
    }

    /// Names a cluster's column in errors.
    fn what(&self, k: usize, column: u32, page: Option<usize>) -> String {
        let page = page.map_or(String::new(), |p| format!(", page {p}"));
        format!(
            "field {:?} of RNTuple {:?}, cluster {k}, column {column}{page}",
            self.plan.path, self.plan.descriptor.name
        )
    }

    /// The representation of `columns` that cluster `k` uses: the first whose column is listed
    /// there and not suppressed; none when no representation is listed (a deferred column).
    fn in_cluster(&self, k: usize, columns: &Columns) -> InCluster<'_> {
        in_cluster(&self.plan, k, columns)
    }

    /// For items `items` of a collection (relative to cluster `k`) with index columns `columns`:
    /// the range of their items below and each one's item count.
    fn offsets(
        &mut self,
        at: Place,
        columns: &Columns,
        items: Range<u64>,
    ) -> Result<(Range<u64>, Vec<u64>)> {
        let k = at.cluster;
        let from = items.start.saturating_sub(1);
        let index = self.elements(at, columns, from..items.end, Want::Index)?;
        let Elements::Index(index) = index else {
            return Err(self.internal("an index column without offsets"));
        };
        let (mut previous, ends) = if items.start == 0 {
            (0, &index[..])
        } else {
            (index[0], &index[1..])
        };
        let start = previous;
        let mut lengths = Vec::with_capacity(ends.len());
        for &end in ends {
            let n = end.checked_sub(previous).ok_or_else(|| {
                let which = self.in_cluster(k, columns).column;
                Error::corrupt(
                    self.what(k, which, None),
                    0,
                    format!("the collection offsets decrease, {previous} then {end}"),
                )
            })?;
            lengths.push(n);
            previous = end;
        }
        Ok((start..previous, lengths))
    }

    /// For items `items` (relative to cluster `k`) of a variant with switch columns `columns`:
    /// the range of alternative `tag`'s items they hold, and whether each holds one.
    fn alternative(
        &mut self,
        at: Place,
        columns: &Columns,
        tag: u32,
        items: Range<u64>,
    ) -> Result<(Range<u64>, Vec<u8>)> {
        let k = at.cluster;
        let switch = self.switch(at, columns, items)?;
        let mut range: Option<Range<u64>> = None;
        let mut held = Vec::with_capacity(switch.len());
        for &(index, t) in &switch {
            if t != tag {
                held.push(0);
                continue;
            }
            held.push(1);
            match &mut range {
                None => range = Some(index..index + 1),
                Some(r) if r.end == index => r.end += 1,
                Some(r) => {
                    let which = self.in_cluster(k, columns).column;
                    return Err(Error::corrupt(
                        self.what(k, which, None),
                        0,
                        format!(
                            "alternative {tag}'s items are not in entry order ({} after {})",
                            index,
                            r.end - 1
                        ),
                    ));
                }
            }
        }
        Ok((range.unwrap_or(0..0), held))
    }

    fn switch(
        &mut self,
        at: Place,
        columns: &Columns,
        items: Range<u64>,
    ) -> Result<Vec<(u64, u32)>> {
        match self.elements(at, columns, items, Want::Switch)? {
            Elements::Switch(v) => Ok(v),
            _ => Err(self.internal("a switch column without switch elements")),
        }
    }

    /// Values `items` (relative to cluster `k`) of value columns `columns`, as `output`, onto
    /// `out.values`.
    fn values(
        &mut self,
        at: Place,
        columns: &Columns,
        items: Range<u64>,
        output: ScalarType,
        out: &mut ColumnData,
    ) -> Result<()> {
        let Elements::Values(values) = self.elements(at, columns, items, Want::Values(output))?
        else {
            return Err(self.internal("a value column without values"));
        };
        append(&mut out.values, values);
        Ok(())
    }

    /// Elements `items` (relative to cluster `k`) of `columns`, in the representation the
    /// cluster uses: from the cached page where it holds them, else page by page.
    fn elements(
        &mut self,
        at: Place,
        columns: &Columns,
        items: Range<u64>,
        want: Want,
    ) -> Result<Elements> {
        let k = at.cluster;
        let plan = Arc::clone(&self.plan);
        let InCluster { column, part } = in_cluster(&plan, k, columns);
        // Item ranges come from offsets in the file: bounded before anything is allocated.
        let limit = self.file.max_basket_bytes();
        if items.end - items.start > limit {
            return Err(Error::BasketTooLarge {
                what: self.what(k, column, None),
                bytes: items.end - items.start,
                limit,
            });
        }
        let n = (items.end - items.start) as usize;
        let Some(part) = part else {
            // Not in this cluster's page list: a column added later, zeros before its start.
            return Ok(want.zeros(n));
        };
        // A column added in the middle of this cluster starts after the cluster's first items:
        // those before it are zeros.
        let cluster = &plan.descriptor.clusters[k];
        let skip = match at.per_entry {
            Some(per) if plan.descriptor.columns[column as usize].first_element != 0 => part
                .element_offset
                .saturating_sub(cluster.first_entry.saturating_mul(per)),
            _ => 0,
        };
        if skip > 0 {
            let mut out = want.empty(n);
            let zeros = items.end.min(skip).saturating_sub(items.start);
            want.append(&want.zeros(zeros as usize), &mut out);
            if items.end > skip {
                let rest = items.start.max(skip) - skip..items.end - skip;
                let at = Place {
                    per_entry: None,
                    ..at
                };
                want.append(&self.elements(at, columns, rest, want)?, &mut out);
            }
            return Ok(out);
        }
        let held = part.elements();
        if items.end > held {
            return Err(Error::corrupt(
                self.what(k, column, None),
                0,
                format!(
                    "elements {}..{} are asked for, the cluster holds {held}",
                    items.start, items.end
                ),
            ));
        }
        let desc = self.plan.descriptor.columns[column as usize].clone();
        let t = ColumnType::from_code(desc.kind)
            .ok_or_else(|| self.internal("a column of an unknown type was planned"))?;
        let mut out = want.empty(n);
        let mut first = 0u64;
        for (p, page) in part.pages.iter().enumerate() {
            let end = first + page.elements;
            if end > items.start && first < items.end {
                let cached = self
                    .pages
                    .get(&column)
                    .is_some_and(|c| c.cluster == k && c.index == p);
                if !cached {
                    let elements = self.page(k, column, p, page, t, &desc)?;
                    self.pages.insert(
                        column,
                        Page {
                            cluster: k,
                            index: p,
                            first,
                            elements,
                        },
                    );
                }
                let page = &self.pages[&column];
                let from = (items.start.max(first) - page.first) as usize;
                let to = (items.end.min(end) - page.first) as usize;
                want.take(&page.elements, from..to, &mut out);
            }
            first = end;
        }
        Ok(out)
    }

    /// Reads, checks, decompresses and decodes page `p` of column `column` in cluster `k`.
    fn page(
        &mut self,
        k: usize,
        column: u32,
        p: usize,
        page: &PageDesc,
        t: ColumnType,
        desc: &super::meta::ColumnDesc,
    ) -> Result<Elements> {
        let what = self.what(k, column, Some(p));
        let bits = t
            .element_bits(desc.bits)
            .ok_or_else(|| Error::corrupt(&what, 0, "an element size the type does not allow"))?;
        let n = usize::try_from(page.elements)
            .map_err(|_| Error::corrupt(&what, 0, "more elements than memory holds"))?;
        let len = element::page_bytes(page.elements, bits)
            .filter(|&len| len <= self.file.max_basket_bytes())
            .ok_or_else(|| Error::BasketTooLarge {
                what: what.clone(),
                bytes: page.elements.saturating_mul(u64::from(bits)) / 8,
                limit: self.file.max_basket_bytes(),
            })? as usize;
        match page.locator {
            Locator::Zero => {
                self.raw.clear();
                self.raw.resize(len, 0);
            }
            locator => {
                let max_key = self.plan.descriptor.max_key_size;
                let located = match (locator, page.checksum) {
                    (Locator::File { offset, size }, true) => Locator::File {
                        offset,
                        size: size + 8,
                    },
                    (other, _) => other,
                };
                self.stored = self.file.read_payload(located, max_key, &what)?;
                if page.checksum {
                    let body = self.stored.len() - 8;
                    let stored = evtc_codecs::le::u64_at(&self.stored, body);
                    let computed = xxhash_rust::xxh3::xxh3_64(&self.stored[..body]);
                    if stored != computed {
                        return Err(Error::corrupt(
                            &what,
                            0,
                            format!(
                                "page checksum mismatch: stored {stored:#018x}, computed \
                                 {computed:#018x}"
                            ),
                        ));
                    }
                    self.stored.truncate(body);
                }
                if self.stored.len() == len {
                    std::mem::swap(&mut self.raw, &mut self.stored);
                } else {
                    decompress(&mut self.dec, &self.stored, len, &mut self.raw, &|| {
                        what.clone()
                    })?;
                }
            }
        }
        decode(&self.raw, n, t, bits, desc.range, &mut self.split)
            .map_err(|detail| Error::corrupt(&what, 0, detail))
    }
}

/// The representation of `columns` that cluster `k` uses: the first whose column is listed
/// there and not suppressed; none when no representation is listed (a deferred column).
fn in_cluster<'p>(plan: &'p FieldColumn, k: usize, columns: &Columns) -> InCluster<'p> {
    let cluster = &plan.descriptor.clusters[k];
    for &c in &columns.0 {
        if let Some(Some(part)) = cluster.columns.get(c as usize)
            && !part.suppressed
        {
            return InCluster {
                column: c,
                part: Some(part),
            };
        }
    }
    InCluster {
        column: columns.0[0],
        part: None,
    }
}

/// Where a column is read: in which cluster, and how many of its elements each entry has when
/// that is fixed (only fixed-size arrays above it).
#[derive(Debug, Clone, Copy)]
struct Place {
    cluster: usize,
    per_entry: Option<u64>,
}

/// What a caller wants of a column's elements.
#[derive(Debug, Clone, Copy)]
enum Want {
    Values(ScalarType),
    Index,
    Switch,
}

impl Want {
    fn empty(self, n: usize) -> Elements {
        match self {
            Want::Values(t) => {
                let mut v = Values::new(t);
                reserve(&mut v, n);
                Elements::Values(v)
            }
            Want::Index => Elements::Index(Vec::with_capacity(n)),
            Want::Switch => Elements::Switch(Vec::with_capacity(n)),
        }
    }

    fn zeros(self, n: usize) -> Elements {
        match self {
            Want::Values(t) => {
                let mut v = Values::new(t);
                push_integers(&mut v, t, std::iter::repeat_n(0, n));
                Elements::Values(v)
            }
            Want::Index => Elements::Index(vec![0; n]),
            Want::Switch => Elements::Switch(vec![(0, 0); n]),
        }
    }

    /// Appends all of `elements` to `out`.
    fn append(self, elements: &Elements, out: &mut Elements) {
        self.take(elements, 0..elements.len(), out);
    }

    /// Appends elements `range` of `page` to `out`, converting values to the wanted type.
    fn take(self, page: &Elements, range: Range<usize>, out: &mut Elements) {
        match (page, out) {
            (Elements::Index(p), Elements::Index(o)) => o.extend_from_slice(&p[range]),
            (Elements::Switch(p), Elements::Switch(o)) => o.extend_from_slice(&p[range]),
            (Elements::Values(p), Elements::Values(o)) => convert(p, range, o),
            _ => {}
        }
    }
}

fn reserve(values: &mut Values, n: usize) {
    crate::with_values!(values, v => v.reserve(n));
}

fn append(out: &mut Values, values: Values) {
    let n = values.len();
    convert(&values, 0..n, out);
}

/// Appends values `range` of `from` to `to`, converted as C++ converts between the types (the
/// plan lets only integers into integers and floats into floats).
fn convert(from: &Values, range: Range<usize>, to: &mut Values) {
    macro_rules! cast {
        ($src:expr, $dst:expr, $t:ty) => {
            $dst.extend($src[range].iter().map(|&x| x as $t))
        };
    }
    match (from, to) {
        (Values::F32(a), Values::F32(b)) => b.extend_from_slice(&a[range]),
        (Values::F64(a), Values::F64(b)) => b.extend_from_slice(&a[range]),
        (Values::F32(a), Values::F64(b)) => b.extend(a[range].iter().map(|&x| f64::from(x))),
        (Values::F64(a), Values::F32(b)) => cast!(a, b, f32),
        (Values::Bool(a), Values::Bool(b)) => b.extend_from_slice(&a[range]),
        (from, to) => {
            let ints: Vec<i128> = match from {
                Values::Bool(v) => v[range].iter().map(|&x| i128::from(x)).collect(),
                Values::I8(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::U8(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::I16(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::U16(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::I32(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::U32(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::I64(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::U64(v) => v[range].iter().map(|&x| x.into()).collect(),
                Values::F32(_) | Values::F64(_) => return,
            };
            let t = to_scalar(to);
            push_integers(to, t, ints.into_iter());
        }
    }
}

fn to_scalar(v: &Values) -> ScalarType {
    match v {
        Values::Bool(_) => ScalarType::Bool,
        Values::I8(_) => ScalarType::I8,
        Values::U8(_) => ScalarType::U8,
        Values::I16(_) => ScalarType::I16,
        Values::U16(_) => ScalarType::U16,
        Values::I32(_) => ScalarType::I32,
        Values::U32(_) => ScalarType::U32,
        Values::I64(_) => ScalarType::I64,
        Values::U64(_) => ScalarType::U64,
        Values::F32(_) => ScalarType::F32,
        Values::F64(_) => ScalarType::F64,
    }
}

/// Appends integers to values of type `t`, wrapping as C++'s integer conversions do.
fn push_integers(out: &mut Values, t: ScalarType, ints: impl Iterator<Item = i128>) {
    let _ = t;
    match out {
        Values::Bool(v) => v.extend(ints.map(|x| x != 0)),
        Values::I8(v) => v.extend(ints.map(|x| x as i8)),
        Values::U8(v) => v.extend(ints.map(|x| x as u8)),
        Values::I16(v) => v.extend(ints.map(|x| x as i16)),
        Values::U16(v) => v.extend(ints.map(|x| x as u16)),
        Values::I32(v) => v.extend(ints.map(|x| x as i32)),
        Values::U32(v) => v.extend(ints.map(|x| x as u32)),
        Values::I64(v) => v.extend(ints.map(|x| x as i64)),
        Values::U64(v) => v.extend(ints.map(|x| x as u64)),
        Values::F32(v) => v.extend(ints.map(|x| x as f32)),
        Values::F64(v) => v.extend(ints.map(|x| x as f64)),
    }
}

/// Decodes the `n` elements of type `t` (`bits` each) of an uncompressed page.
fn decode(
    raw: &[u8],
    n: usize,
    t: ColumnType,
    bits: u32,
    range: Option<(f64, f64)>,
    split: &mut Vec<u8>,
) -> std::result::Result<Elements, String> {
    use ColumnType::*;
    let width = (bits / 8) as usize;
    let need = element::page_bytes(n as u64, bits).unwrap_or(u64::MAX);
    if (raw.len() as u64) < need {
        return Err(format!(
            "{} bytes for {n} elements of {bits} bits",
            raw.len()
        ));
    }
    // The little-endian element bytes, byte planes joined for the split types.
    let le: &[u8] = match t {
        SplitInt16 | SplitUInt16 | SplitInt32 | SplitUInt32 | SplitInt64 | SplitUInt64
        | SplitReal16 | SplitReal32 | SplitReal64 | SplitIndex32 | SplitIndex64 => {
            element::unsplit(&raw[..n * width], n, width, split);
            split
        }
        _ => raw,
    };
    macro_rules! ints {
        ($t:ty, $variant:ident) => {{
            const N: usize = std::mem::size_of::<$t>();
            Values::$variant(
                le[..n * N]
                    .chunks_exact(N)
                    .map(|c| <$t>::from_le_bytes(evtc_codecs::le::array(c, 0)))
                    .collect(),
            )
        }};
    }
    macro_rules! zigzag {
        ($u:ty, $s:ty, $variant:ident) => {{
            const N: usize = std::mem::size_of::<$u>();
            Values::$variant(
                le[..n * N]
                    .chunks_exact(N)
                    .map(|c| {
                        let z = <$u>::from_le_bytes(evtc_codecs::le::array(c, 0)) as u64;
                        element::unzigzag(z) as $s
                    })
                    .collect(),
            )
        }};
    }
    Ok(Elements::Values(match t {
        Bit => {
            let mut v = Vec::with_capacity(n);
            element::unpack_bits(raw, n, 1, |b| v.push(b != 0));
            Values::Bool(v)
        }
        Byte | UInt8 => Values::U8(raw[..n].to_vec()),
        Char | Int8 => Values::I8(raw[..n].iter().map(|&b| b as i8).collect()),
        Int16 => ints!(i16, I16),
        UInt16 | SplitUInt16 => ints!(u16, U16),
        Int32 => ints!(i32, I32),
        UInt32 | SplitUInt32 => ints!(u32, U32),
        Int64 => ints!(i64, I64),
        UInt64 | SplitUInt64 => ints!(u64, U64),
        SplitInt16 => zigzag!(u16, i16, I16),
        SplitInt32 => zigzag!(u32, i32, I32),
        SplitInt64 => zigzag!(u64, i64, I64),
        Real16 | SplitReal16 => Values::F32(
            le[..n * 2]
                .chunks_exact(2)
                .map(|c| element::half_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        ),
        Real32 | SplitReal32 => ints!(f32, F32),
        Real64 | SplitReal64 => ints!(f64, F64),
        Real32Trunc => {
            let mut v = Vec::with_capacity(n);
            element::unpack_bits(raw, n, bits, |x| v.push(f32::from_bits(x << (32 - bits))));
            Values::F32(v)
        }
        Real32Quant => {
            let (min, max) = range.ok_or("a quantized column without its range")?;
            let steps = if bits == 32 {
                f64::from(u32::MAX)
            } else {
                f64::from((1u32 << bits) - 1)
            };
            let mut v = Vec::with_capacity(n);
            element::unpack_bits(raw, n, bits, |q| {
                v.push(min + f64::from(q) * (max - min) / steps);
            });
            Values::F64(v)
        }
        Index32 | SplitIndex32 | Index64 | SplitIndex64 => {
            let mut offsets: Vec<u64> = if width == 4 {
                le[..n * 4]
                    .chunks_exact(4)
                    .map(|c| u64::from(u32::from_le_bytes(evtc_codecs::le::array(c, 0))))
                    .collect()
            } else {
                le[..n * 8]
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(evtc_codecs::le::array(c, 0)))
                    .collect()
            };
            if matches!(t, SplitIndex32 | SplitIndex64) {
                // Deltas within the page, the first stored as is.
                let mut sum = 0u64;
                for o in &mut offsets {
                    sum = sum.wrapping_add(*o);
                    *o = sum;
                }
            }
            return Ok(Elements::Index(offsets));
        }
        Switch => {
            return Ok(Elements::Switch(
                raw[..n * 12]
                    .chunks_exact(12)
                    .map(|c| (evtc_codecs::le::u64_at(c, 0), evtc_codecs::le::u32_at(c, 8)))
                    .collect(),
            ));
        }
    }))
}
