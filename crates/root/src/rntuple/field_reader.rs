//! Reading an RNTuple column ([`FieldReader`]): cluster by cluster, the index (or switch)
//! columns of the list levels give each level's item counts and the range of items below, down
//! to the range of values; pages are read, checked, decompressed and decoded as needed, the last
//! one of each column kept for the next read.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::element::{self, ColumnType};
use super::field::{Columns, FieldColumn, Leaf, Level};
use super::meta::{ClusterColumn, PageDesc};
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

/// The items of some entries of a collection: the first one's start in the level below, and
/// each one's end, `index[span]` (relative to the cluster).
struct Ends {
    start: u64,
    index: Arc<Vec<u64>>,
    span: Range<usize>,
}

impl Ends {
    fn ends(&self) -> &[u64] {
        &self.index[self.span.clone()]
    }

    /// Where the last item ends (the start, for none).
    fn end(&self) -> u64 {
        self.ends().last().copied().unwrap_or(self.start)
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

    /// Appends entries `range` to `out` (shaped for the column's kind; with `bounds` false,
    /// only the values, `out`'s offsets and levels untouched).
    pub(crate) fn read(
        &mut self,
        range: Range<u64>,
        bounds: bool,
        out: &mut ColumnData,
    ) -> Result<()> {
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
                self.read_cluster(&plan, k, lo..hi, bounds, out)?;
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
        bounds: bool,
        out: &mut ColumnData,
    ) -> Result<()> {
        let lists = bounds
            && !matches!(
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
                    let ends = self.offsets(at, columns, items.clone())?;
                    at.per_entry = None;
                    if let Some(bounds) = bounds {
                        // Each item's end, from the output's last bound on (`e >= start`:
                        // the sum is `last + (e - start)`, whatever the wrapping on the way).
                        let base = bounds.last().unwrap_or(&0).wrapping_sub(ends.start);
                        bounds.extend(ends.ends().iter().map(|&e| base.wrapping_add(e)));
                    }
                    ends.start..ends.end()
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
                let ends = self.offsets(at, columns, items)?;
                let lengths = ends.ends().iter().scan(ends.start, |previous, &end| {
                    let n = end - *previous;
                    *previous = end;
                    Some(i128::from(n))
                });
                push_integers(&mut out.values, *output, lengths);
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
    /// where their items below start, and where each one's end (checked not to decrease).
    fn offsets(&mut self, at: Place, columns: &Columns, items: Range<u64>) -> Result<Ends> {
        let k = at.cluster;
        let from = items.start.saturating_sub(1);
        let (index, at_from, checked) = self.index(at, columns, from..items.end)?;
        let (start, span) = if items.start == 0 {
            (0, at_from..at_from + (items.end - from) as usize)
        } else {
            (
                index[at_from],
                at_from + 1..at_from + (items.end - from) as usize,
            )
        };
        let ends = Ends { start, index, span };
        if !checked {
            let first = (items.start == 0).then_some(0);
            self.check_offsets(
                k,
                columns,
                first.into_iter().chain(ends.ends().iter().copied()),
            )?;
        }
        Ok(ends)
    }

    /// Checks that a collection's offsets in cluster `k` never decrease.
    fn check_offsets(
        &self,
        k: usize,
        columns: &Columns,
        offsets: impl Iterator<Item = u64> + Clone,
    ) -> Result<()> {
        let Some((previous, end)) = offsets.clone().zip(offsets.skip(1)).find(|(a, b)| b < a)
        else {
            return Ok(());
        };
        let which = self.in_cluster(k, columns).column;
        Err(Error::corrupt(
            self.what(k, which, None),
            0,
            format!("the collection offsets decrease, {previous} then {end}"),
        ))
    }

    /// Index elements `items` of `columns` in cluster `at.cluster`, as a vector, the position
    /// of the first of them in it, and whether the vector was checked not to decrease: the
    /// whole cluster's index column from the RNTuple's
    /// [`IndexCache`](super::cache::IndexCache) (decoded, checked and stored here when
    /// missing), or just `items` for a column added after the cluster's first entries.
    fn index(
        &mut self,
        at: Place,
        columns: &Columns,
        items: Range<u64>,
    ) -> Result<(Arc<Vec<u64>>, usize, bool)> {
        let plan = Arc::clone(&self.plan);
        let InCluster { column, part } = in_cluster(&plan, at.cluster, columns);
        let whole = part.filter(|_| plan.descriptor.columns[column as usize].first_element == 0);
        let Some(part) = whole else {
            let mut index = Elements::Index(Vec::new());
            self.elements(at, columns, items, Want::Index, &mut index)?;
            let Elements::Index(index) = index else {
                return Err(self.internal("an index column without offsets"));
            };
            return Ok((Arc::new(index), 0, false));
        };
        let cache = &plan.descriptor.index_cache;
        if let Some(all) = cache.get(column, at.cluster)
            && items.end <= all.len() as u64
        {
            return Ok((all, items.start as usize, true));
        }
        let held = part.elements();
        if items.end > held {
            return Err(Error::corrupt(
                self.what(at.cluster, column, None),
                0,
                format!(
                    "elements {}..{} are asked for, the cluster holds {held}",
                    items.start, items.end
                ),
            ));
        }
        let mut index = Elements::Index(Vec::new());
        self.elements(at, columns, 0..held, Want::Index, &mut index)?;
        let Elements::Index(index) = index else {
            return Err(self.internal("an index column without offsets"));
        };
        self.check_offsets(at.cluster, columns, index.iter().copied())?;
        let all = Arc::new(index);
        cache.put(column, at.cluster, Arc::clone(&all));
        Ok((all, items.start as usize, true))
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
        let mut switch = Elements::Switch(Vec::new());
        self.elements(at, columns, items, Want::Switch, &mut switch)?;
        match switch {
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
        // The values are appended straight onto the output.
        let mut values = Elements::Values(std::mem::replace(&mut out.values, Values::new(output)));
        let result = self.elements(at, columns, items, Want::Values(output), &mut values);
        if let Elements::Values(v) = values {
            out.values = v;
        }
        result
    }

    /// Appends elements `items` (relative to cluster `k`) of `columns`, in the representation
    /// the cluster uses, to `out` (of `want`'s kind): a page the items cover whole is decoded
    /// straight onto `out` (through scratch space when the field's type is not the column's);
    /// one they cover in part is decoded once and kept, for the next read to go on from.
    fn elements(
        &mut self,
        at: Place,
        columns: &Columns,
        items: Range<u64>,
        want: Want,
        out: &mut Elements,
    ) -> Result<()> {
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
            want.zeros(n, out);
            return Ok(());
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
            let zeros = items.end.min(skip).saturating_sub(items.start);
            want.zeros(zeros as usize, out);
            if items.end > skip {
                let rest = items.start.max(skip) - skip..items.end - skip;
                let at = Place {
                    per_entry: None,
                    ..at
                };
                self.elements(at, columns, rest, want, out)?;
            }
            return Ok(());
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
        want.reserve(n, out);
        let mut first = 0u64;
        for (p, page) in part.pages.iter().enumerate() {
            let end = first + page.elements;
            if end > items.start && first < items.end {
                let cached = self
                    .pages
                    .get(&column)
                    .is_some_and(|c| c.cluster == k && c.index == p);
                let whole = items.start <= first && end <= items.end;
                if cached {
                    let page = &self.pages[&column];
                    let from = (items.start.max(first) - page.first) as usize;
                    let to = (items.end.min(end) - page.first) as usize;
                    want.take(&page.elements, from..to, out);
                } else if whole && want.is_natural(t) {
                    self.page(k, column, p, page, t, &desc, out)?;
                } else {
                    // Decoded into the kept page (its buffer reused), then taken from it.
                    let mut kept = self
                        .pages
                        .remove(&column)
                        .map(|page| page.elements)
                        .filter(|e| e.is_natural(t))
                        .unwrap_or_else(|| Elements::natural(t));
                    kept.clear();
                    self.page(k, column, p, page, t, &desc, &mut kept)?;
                    let from = (items.start.max(first) - first) as usize;
                    let to = (items.end.min(end) - first) as usize;
                    want.take(&kept, from..to, out);
                    self.pages.insert(
                        column,
                        Page {
                            cluster: k,
                            index: p,
                            first,
                            elements: kept,
                        },
                    );
                }
            }
            first = end;
        }
        Ok(())
    }

    /// Reads, checks, decompresses and decodes page `p` of column `column` in cluster `k`,
    /// appending its elements to `out` (of the column's natural kind).
    #[allow(clippy::too_many_arguments)]
    fn page(
        &mut self,
        k: usize,
        column: u32,
        p: usize,
        page: &PageDesc,
        t: ColumnType,
        desc: &super::meta::ColumnDesc,
        out: &mut Elements,
    ) -> Result<()> {
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
                self.file
                    .read_payload_into(located, max_key, &what, &mut self.stored)?;
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
                    // The thread's decompressor: readers are many and short-lived (one per
                    // column), a zstd context each would cost more than small pages.
                    evtc_codecs::with_decompressor(|dec| {
                        decompress(dec, &self.stored, len, &mut self.raw, &|| what.clone())
                    })?;
                }
            }
        }
        decode(&self.raw, n, t, bits, desc.range, &mut self.split, out)
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
    /// Whether a column of type `t` decodes to exactly what is wanted.
    fn is_natural(self, t: ColumnType) -> bool {
        match self {
            Want::Values(output) => t.natural() == Some(output),
            Want::Index => t.decoded() == element::Decoded::Index,
            Want::Switch => t.decoded() == element::Decoded::Switch,
        }
    }

    fn reserve(self, n: usize, out: &mut Elements) {
        match out {
            Elements::Values(v) => crate::with_values!(v, v => v.reserve(n)),
            Elements::Index(v) => v.reserve(n),
            Elements::Switch(v) => v.reserve(n),
        }
    }

    /// Appends `n` zeros to `out`.
    fn zeros(self, n: usize, out: &mut Elements) {
        match out {
            Elements::Values(v) => {
                crate::with_values!(v, v => v.resize(v.len() + n, Default::default()));
            }
            Elements::Index(v) => v.resize(v.len() + n, 0),
            Elements::Switch(v) => v.resize(v.len() + n, (0, 0)),
        }
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

impl Elements {
    /// No elements, of the kind a column of type `t` decodes to.
    fn natural(t: ColumnType) -> Elements {
        match (t.natural(), t.decoded()) {
            (Some(scalar), _) => Elements::Values(Values::new(scalar)),
            (None, element::Decoded::Switch) => Elements::Switch(Vec::new()),
            (None, _) => Elements::Index(Vec::new()),
        }
    }

    /// Whether these are of the kind a column of type `t` decodes to.
    fn is_natural(&self, t: ColumnType) -> bool {
        match self {
            Elements::Values(v) => t.natural() == Some(to_scalar(v)),
            Elements::Index(_) => t.decoded() == element::Decoded::Index,
            Elements::Switch(_) => t.decoded() == element::Decoded::Switch,
        }
    }

    fn clear(&mut self) {
        match self {
            Elements::Values(v) => crate::with_values!(v, v => v.clear()),
            Elements::Index(v) => v.clear(),
            Elements::Switch(v) => v.clear(),
        }
    }
}

/// Appends values `range` of `from` to `to`, converted as C++ converts between the types (the
/// plan lets only integers into integers and floats into floats).
fn convert(from: &Values, range: Range<usize>, to: &mut Values) {
    macro_rules! cast {
        ($src:expr, $dst:expr, $t:ty) => {
            $dst.extend($src[range].iter().map(|&x| x as $t))
        };
    }
    // The same type: copied; integers of another type: through i128, wrapping as C++ does.
    macro_rules! ints {
        ($src:expr) => {{
            let src = &$src[range];
            match to {
                Values::Bool(b) => b.extend(src.iter().map(|&x| i128::from(x) != 0)),
                Values::I8(b) => b.extend(src.iter().map(|&x| i128::from(x) as i8)),
                Values::U8(b) => b.extend(src.iter().map(|&x| i128::from(x) as u8)),
                Values::I16(b) => b.extend(src.iter().map(|&x| i128::from(x) as i16)),
                Values::U16(b) => b.extend(src.iter().map(|&x| i128::from(x) as u16)),
                Values::I32(b) => b.extend(src.iter().map(|&x| i128::from(x) as i32)),
                Values::U32(b) => b.extend(src.iter().map(|&x| i128::from(x) as u32)),
                Values::I64(b) => b.extend(src.iter().map(|&x| i128::from(x) as i64)),
                Values::U64(b) => b.extend(src.iter().map(|&x| i128::from(x) as u64)),
                Values::F32(_) | Values::F64(_) => {}
            }
        }};
    }
    match (from, &mut *to) {
        (Values::F32(a), Values::F32(b)) => b.extend_from_slice(&a[range]),
        (Values::F64(a), Values::F64(b)) => b.extend_from_slice(&a[range]),
        (Values::F32(a), Values::F64(b)) => b.extend(a[range].iter().map(|&x| f64::from(x))),
        (Values::F64(a), Values::F32(b)) => cast!(a, b, f32),
        (Values::Bool(a), Values::Bool(b)) => b.extend_from_slice(&a[range]),
        (Values::I8(a), Values::I8(b)) => b.extend_from_slice(&a[range]),
        (Values::U8(a), Values::U8(b)) => b.extend_from_slice(&a[range]),
        (Values::I16(a), Values::I16(b)) => b.extend_from_slice(&a[range]),
        (Values::U16(a), Values::U16(b)) => b.extend_from_slice(&a[range]),
        (Values::I32(a), Values::I32(b)) => b.extend_from_slice(&a[range]),
        (Values::U32(a), Values::U32(b)) => b.extend_from_slice(&a[range]),
        (Values::I64(a), Values::I64(b)) => b.extend_from_slice(&a[range]),
        (Values::U64(a), Values::U64(b)) => b.extend_from_slice(&a[range]),
        (Values::Bool(a), _) => ints!(a),
        (Values::I8(a), _) => ints!(a),
        (Values::U8(a), _) => ints!(a),
        (Values::I16(a), _) => ints!(a),
        (Values::U16(a), _) => ints!(a),
        (Values::I32(a), _) => ints!(a),
        (Values::U32(a), _) => ints!(a),
        (Values::I64(a), _) => ints!(a),
        (Values::U64(a), _) => ints!(a),
        (Values::F32(_) | Values::F64(_), _) => {}
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

/// Decodes the `n` elements of type `t` (`bits` each) of an uncompressed page, appending them
/// to `out`, which must be of the type's natural kind ([`Elements::natural`]).
fn decode(
    raw: &[u8],
    n: usize,
    t: ColumnType,
    bits: u32,
    range: Option<(f64, f64)>,
    split: &mut Vec<u8>,
    out: &mut Elements,
) -> std::result::Result<(), String> {
    use ColumnType::*;
    let width = (bits / 8) as usize;
    let need = element::page_bytes(n as u64, bits).unwrap_or(u64::MAX);
    if (raw.len() as u64) < need {
        return Err(format!(
            "{} bytes for {n} elements of {bits} bits",
            raw.len()
        ));
    }
    #[cfg(target_endian = "little")]
    if unsplit_into(raw, n, t, out) {
        return Ok(());
    }
    // The little-endian element bytes, byte planes joined for the split types.
    let le: &[u8] = match t {
        SplitInt16 | SplitUInt16 | SplitInt32 | SplitUInt32 | SplitInt64 | SplitUInt64
        | SplitReal16 | SplitReal32 | SplitReal64 | SplitIndex32 | SplitIndex64 => {
            element::unsplit(raw, n, width, split);
            &split[..n * width]
        }
        _ => &raw[..need as usize],
    };
    let mismatch = || format!("internal: a {} page decoded into another kind", t.name());
    macro_rules! ints {
        ($out:ident, $t:ty, $variant:ident) => {{
            const N: usize = std::mem::size_of::<$t>();
            let Elements::Values(Values::$variant(v)) = $out else {
                return Err(mismatch());
            };
            v.extend(
                le.chunks_exact(N)
                    .map(|c| <$t>::from_le_bytes(evtc_codecs::le::array(c, 0))),
            );
        }};
    }
    macro_rules! zigzag {
        ($out:ident, $u:ty, $s:ty, $variant:ident) => {{
            const N: usize = std::mem::size_of::<$u>();
            let Elements::Values(Values::$variant(v)) = $out else {
                return Err(mismatch());
            };
            v.extend(le.chunks_exact(N).map(|c| {
                let z = <$u>::from_le_bytes(evtc_codecs::le::array(c, 0));
                element::unzigzag(u64::from(z)) as $s
            }));
        }};
    }
    match (t, out) {
        (Bit, Elements::Values(Values::Bool(v))) => element::unpack_bools(raw, n, v),
        (Byte | UInt8, Elements::Values(Values::U8(v))) => v.extend_from_slice(le),
        (Char | Int8, Elements::Values(Values::I8(v))) => v.extend(le.iter().map(|&b| b as i8)),
        (Int16, out) => ints!(out, i16, I16),
        (UInt16 | SplitUInt16, out) => ints!(out, u16, U16),
        (Int32, out) => ints!(out, i32, I32),
        (UInt32 | SplitUInt32, out) => ints!(out, u32, U32),
        (Int64, out) => ints!(out, i64, I64),
        (UInt64 | SplitUInt64, out) => ints!(out, u64, U64),
        (SplitInt16, out) => zigzag!(out, u16, i16, I16),
        (SplitInt32, out) => zigzag!(out, u32, i32, I32),
        (SplitInt64, out) => zigzag!(out, u64, i64, I64),
        (Real16 | SplitReal16, Elements::Values(Values::F32(v))) => v.extend(
            le.chunks_exact(2)
                .map(|c| element::half_to_f32(u16::from_le_bytes([c[0], c[1]]))),
        ),
        (Real32 | SplitReal32, out) => ints!(out, f32, F32),
        (Real64 | SplitReal64, out) => ints!(out, f64, F64),
        (Real32Trunc, Elements::Values(Values::F32(v))) => {
            v.reserve(n);
            element::unpack_bits(raw, n, bits, |x| v.push(f32::from_bits(x << (32 - bits))));
        }
        (Real32Quant, Elements::Values(Values::F64(v))) => {
            let (min, max) = range.ok_or("a quantized column without its range")?;
            let steps = if bits == 32 {
                f64::from(u32::MAX)
            } else {
                f64::from((1u32 << bits) - 1)
            };
            v.reserve(n);
            element::unpack_bits(raw, n, bits, |q| {
                v.push(min + f64::from(q) * (max - min) / steps);
            });
        }
        (Index32 | SplitIndex32 | Index64 | SplitIndex64, Elements::Index(v)) => {
            let start = v.len();
            if width == 4 {
                v.extend(
                    le.chunks_exact(4)
                        .map(|c| u64::from(u32::from_le_bytes(evtc_codecs::le::array(c, 0)))),
                );
            } else {
                v.extend(
                    le.chunks_exact(8)
                        .map(|c| u64::from_le_bytes(evtc_codecs::le::array(c, 0))),
                );
            }
            if matches!(t, SplitIndex32 | SplitIndex64) {
                // Deltas within the page, the first stored as is.
                let mut sum = 0u64;
                for o in &mut v[start..] {
                    sum = sum.wrapping_add(*o);
                    *o = sum;
                }
            }
        }
        (Switch, Elements::Switch(v)) => v.extend(
            le.chunks_exact(12)
                .map(|c| (evtc_codecs::le::u64_at(c, 0), evtc_codecs::le::u32_at(c, 8))),
        ),
        _ => return Err(mismatch()),
    }
    Ok(())
}

/// On a little-endian machine, a split column's byte planes joined straight into `out`'s
/// memory, then zigzag- or delta-decoded in place: one pass over the values where joining into
/// scratch bytes and converting them take two. False (nothing done) for the other types, and
/// for 32-bit index columns, which widen.
#[cfg(target_endian = "little")]
fn unsplit_into(raw: &[u8], n: usize, t: ColumnType, out: &mut Elements) -> bool {
    use ColumnType::*;
    use evtc_codecs::{Kernel, Precondition, Width};
    macro_rules! join {
        ($v:expr, $ty:ty, $width:expr) => {{
            let start = $v.len();
            $v.resize(start + n, Default::default());
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut $v[start..]);
            let len = bytes.len();
            Kernel::best().undo(Precondition::Shuffle($width), &raw[..len], bytes);
            &mut $v[start..]
        }};
    }
    match (t, out) {
        (SplitUInt16, Elements::Values(Values::U16(v))) => {
            let _ = join!(v, u16, Width::W2);
        }
        (SplitUInt32, Elements::Values(Values::U32(v))) => {
            let _ = join!(v, u32, Width::W4);
        }
        (SplitUInt64, Elements::Values(Values::U64(v))) => {
            let _ = join!(v, u64, Width::W8);
        }
        (SplitReal32, Elements::Values(Values::F32(v))) => {
            let _ = join!(v, f32, Width::W4);
        }
        (SplitReal64, Elements::Values(Values::F64(v))) => {
            let _ = join!(v, f64, Width::W8);
        }
        (SplitInt16, Elements::Values(Values::I16(v))) => {
            for x in join!(v, i16, Width::W2) {
                *x = element::unzigzag(u64::from(*x as u16)) as i16;
            }
        }
        (SplitInt32, Elements::Values(Values::I32(v))) => {
            for x in join!(v, i32, Width::W4) {
                *x = element::unzigzag(u64::from(*x as u32)) as i32;
            }
        }
        (SplitInt64, Elements::Values(Values::I64(v))) => {
            for x in join!(v, i64, Width::W8) {
                *x = element::unzigzag(*x as u64);
            }
        }
        (SplitIndex64, Elements::Index(v)) => {
            // Deltas within the page, the first stored as is.
            let mut sum = 0u64;
            for o in join!(v, u64, Width::W8) {
                sum = sum.wrapping_add(*o);
                *o = sum;
            }
        }
        _ => return false,
    }
    true
}
