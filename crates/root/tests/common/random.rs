//! Random column data for the writer tests, from a seed: every kind the readers make.

use evtc_root::{ColumnData, ColumnKind, Values};

/// A small xorshift generator: the data depends on nothing outside the test.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `entries` entries of a field of `kind`: random values, list lengths 0-4.
pub fn data(kind: ColumnKind, dims: &[usize], entries: usize, rng: &mut Rng) -> ColumnData {
    let mut d = ColumnData::new(kind);
    let mut value = |d: &mut ColumnData, rng: &mut Rng| {
        let r = rng.next();
        match &mut d.values {
            Values::Bool(v) => v.push(r & 1 == 1),
            Values::I8(v) => v.push(r as i8),
            Values::U8(v) => v.push(b'a' + (r % 26) as u8),
            Values::I16(v) => v.push(r as i16),
            Values::U16(v) => v.push(r as u16),
            Values::I32(v) => v.push((r as i32) >> (r % 31)),
            Values::U32(v) => v.push((r as u32) >> (r % 31)),
            Values::I64(v) => v.push(r as i64 >> (r % 63)),
            Values::U64(v) => v.push(r >> (r % 63)),
            Values::F32(v) => v.push((r % 100_000) as f32 / 7.0 - 5000.0),
            Values::F64(v) => v.push((r % 1_000_000) as f64 / 3.0 - 1e5),
        }
    };
    for _ in 0..entries {
        match kind {
            ColumnKind::Scalar(_) => value(&mut d, rng),
            ColumnKind::Fixed(_, n) => {
                let per = if dims.len() >= 2 {
                    dims.iter().product()
                } else {
                    n
                };
                for _ in 0..per {
                    value(&mut d, rng);
                }
            }
            _ => {
                // Lists of lists: each level's items are lists of the level below.
                fn fill(
                    d: &mut ColumnData,
                    level: usize,
                    rng: &mut Rng,
                    value: &mut dyn FnMut(&mut ColumnData, &mut Rng),
                ) {
                    for _ in 0..rng.below(5) {
                        if level == 0 {
                            value(d, rng);
                        } else {
                            fill(d, level - 1, rng, value);
                            let end = match level.checked_sub(2) {
                                None => d.values.len(),
                                Some(below) => d.levels[below].len() - 1,
                            };
                            d.levels[level - 1].push(end as u64);
                        }
                    }
                }
                let levels = d.levels.len();
                fill(&mut d, levels, rng, &mut value);
                let end = match levels.checked_sub(1) {
                    None => d.values.len(),
                    Some(below) => d.levels[below].len() - 1,
                };
                d.offsets.push(end as u64);
            }
        }
    }
    d
}

/// Appends `more` (whose boundaries start at 0) to `all`.
pub fn append(all: &mut ColumnData, more: &ColumnData) {
    fn shifted(all: &mut Vec<u64>, more: &[u64]) {
        let base = all.last().copied().unwrap_or(0);
        all.extend(more.iter().skip(1).map(|&b| b + base));
    }
    let values = all.values.len();
    evtc_root::with_values!(&mut all.values, v => {
        if let Some(more) = crate_values(&more.values, v) { v.extend_from_slice(more) }
    });
    let _ = values;
    for (a, m) in all.levels.iter_mut().zip(&more.levels) {
        shifted(a, m);
    }
    if !all.offsets.is_empty() {
        shifted(&mut all.offsets, &more.offsets);
    }
}

/// `values` as the same element type as `like`'s vector, if it is of that type.
fn crate_values<'a, T: 'static>(values: &'a Values, _like: &Vec<T>) -> Option<&'a [T]> {
    let any: &dyn std::any::Any = match values {
        Values::Bool(v) => v,
        Values::I8(v) => v,
        Values::U8(v) => v,
        Values::I16(v) => v,
        Values::U16(v) => v,
        Values::I32(v) => v,
        Values::U32(v) => v,
        Values::I64(v) => v,
        Values::U64(v) => v,
        Values::F32(v) => v,
        Values::F64(v) => v,
    };
    any.downcast_ref::<Vec<T>>().map(Vec::as_slice)
}
