//! A column's decoded values in native types ([`Values`]) and their list boundaries
//! ([`ColumnData`], the Arrow layout), with the decoding of ROOT's big-endian and
//! reduced-precision values into them.

use crate::reduced::Stored;
use crate::types::{ColumnKind, ScalarType};

/// A column's values, in native types.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Values {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Applies `$body` to the vector inside any variant of [`Values`].
#[macro_export]
macro_rules! with_values {
    ($values:expr, $v:ident => $body:expr) => {
        match $values {
            $crate::Values::Bool($v) => $body,
            $crate::Values::I8($v) => $body,
            $crate::Values::U8($v) => $body,
            $crate::Values::I16($v) => $body,
            $crate::Values::U16($v) => $body,
            $crate::Values::I32($v) => $body,
            $crate::Values::U32($v) => $body,
            $crate::Values::I64($v) => $body,
            $crate::Values::U64($v) => $body,
            $crate::Values::F32($v) => $body,
            $crate::Values::F64($v) => $body,
        }
    };
}

macro_rules! values_from {
    ($($variant:ident: $t:ty),*) => {$(
        impl From<Vec<$t>> for Values {
            fn from(v: Vec<$t>) -> Values {
                Values::$variant(v)
            }
        }
    )*};
}

values_from!(
    Bool: bool, I8: i8, U8: u8, I16: i16, U16: u16, I32: i32, U32: u32, I64: i64, U64: u64,
    F32: f32, F64: f64
);

impl Values {
    /// An empty vector of type `t`.
    pub fn new(t: ScalarType) -> Values {
        match t {
            ScalarType::Bool => Values::Bool(Vec::new()),
            ScalarType::I8 => Values::I8(Vec::new()),
            ScalarType::U8 => Values::U8(Vec::new()),
            ScalarType::I16 => Values::I16(Vec::new()),
            ScalarType::U16 => Values::U16(Vec::new()),
            ScalarType::I32 => Values::I32(Vec::new()),
            ScalarType::U32 => Values::U32(Vec::new()),
            ScalarType::I64 => Values::I64(Vec::new()),
            ScalarType::U64 => Values::U64(Vec::new()),
            ScalarType::F32 => Values::F32(Vec::new()),
            ScalarType::F64 => Values::F64(Vec::new()),
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        with_values!(self, v => v.len())
    }

    /// Bytes the values take in memory.
    pub fn byte_len(&self) -> usize {
        with_values!(self, v => std::mem::size_of_val(v.as_slice()))
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every value, keeping the allocation.
    pub fn clear(&mut self) {
        with_values!(self, v => v.clear())
    }

    /// Gives back the spare room of values read by appending (a vector grown by doubling holds
    /// up to twice its length): when more than an eighth of it is spare, the values move to an
    /// allocation of their exact size.
    pub fn fit(&mut self) {
        with_values!(self, v => fit(v))
    }

    /// Appends `other`'s values `range`; `false` (and nothing appended) when `other` holds
    /// another type or `range` is out of its bounds.
    pub fn extend_from(&mut self, other: &Values, range: std::ops::Range<usize>) -> bool {
        macro_rules! extend {
            ($($variant:ident),*) => {
                match (self, other) {
                    $((Values::$variant(a), Values::$variant(b)) => match b.get(range) {
                        Some(part) => {
                            a.extend_from_slice(part);
                            true
                        }
                        None => false,
                    },)*
                    _ => false,
                }
            };
        }
        extend!(Bool, I8, U8, I16, U16, I32, U32, I64, U64, F32, F64)
    }

    /// Appends big-endian values of the stored type.
    pub(crate) fn extend_stored(&mut self, stored: Stored, bytes: &[u8]) -> Result<(), String> {
        match (stored, self) {
            (Stored::Truncated { bits, .. }, Values::F32(v)) => {
                v.extend(bytes.chunks_exact(3).map(|b| truncated(b, bits)));
            }
            (Stored::Truncated { bits, .. }, Values::F64(v)) => {
                v.extend(bytes.chunks_exact(3).map(|b| f64::from(truncated(b, bits))));
            }
            (Stored::Scaled { factor, min, .. }, Values::F32(v)) => {
                v.extend(scaled(bytes, factor, min).map(|x| x as f32));
            }
            (Stored::Scaled { factor, min, .. }, Values::F64(v)) => {
                v.extend(scaled(bytes, factor, min));
            }
            (Stored::Double32, Values::F64(v)) => {
                v.extend(
                    bytes
                        .chunks_exact(4)
                        .map(|b| f64::from(f32::from_be_bytes([b[0], b[1], b[2], b[3]]))),
                );
            }
            (Stored::Plain(_), Values::Bool(v)) => v.extend(bytes.iter().map(|&b| b != 0)),
            (Stored::Plain(_), Values::I8(v)) => v.extend(bytes.iter().map(|&b| b as i8)),
            (Stored::Plain(_), Values::U8(v)) => v.extend_from_slice(bytes),
            (Stored::Plain(_), Values::I16(v)) => extend_be(v, bytes, i16::from_be_bytes),
            (Stored::Plain(_), Values::U16(v)) => extend_be(v, bytes, u16::from_be_bytes),
            (Stored::Plain(_), Values::I32(v)) => extend_be(v, bytes, i32::from_be_bytes),
            (Stored::Plain(_), Values::U32(v)) => extend_be(v, bytes, u32::from_be_bytes),
            (Stored::Plain(_), Values::I64(v)) => extend_be(v, bytes, i64::from_be_bytes),
            (Stored::Plain(_), Values::U64(v)) => extend_be(v, bytes, u64::from_be_bytes),
            (Stored::Plain(_), Values::F32(v)) => extend_be(v, bytes, f32::from_be_bytes),
            (Stored::Plain(_), Values::F64(v)) => extend_be(v, bytes, f64::from_be_bytes),
            (stored, values) => {
                return Err(format!(
                    "internal: {stored:?} values into a {} vector",
                    values.len()
                ));
            }
        }
        Ok(())
    }
}

fn extend_be<T, const N: usize>(v: &mut Vec<T>, bytes: &[u8], from: fn([u8; N]) -> T) {
    v.extend(
        bytes
            .chunks_exact(N)
            .map(|c| from(c.try_into().unwrap_or([0; N]))),
    );
}

/// ROOT's `TBufferFile::ReadWithNbits`: an exponent byte, then `bits` mantissa bits and a
/// sign bit above them in a 16-bit word (`bits` is 1 to 22, as ROOT's C arithmetic allows).
fn truncated(b: &[u8], bits: u8) -> f32 {
    let bits = u32::from(bits);
    let exponent = u32::from(b[0]);
    let mantissa = u32::from(u16::from_be_bytes([b[1], b[2]]));
    let value =
        f32::from_bits(exponent << 23 | (mantissa & ((1 << (bits + 1)) - 1)) << (23 - bits));
    if mantissa & (1 << (bits + 1)) != 0 {
        -value
    } else {
        value
    }
}

/// ROOT's `TBufferFile::ReadWithFactor`: 32-bit unsigned integers `i`, each the value
/// `i / factor + min` (in double precision; a `Float16_t` is then rounded to float).
fn scaled(bytes: &[u8], factor: f64, min: f64) -> impl Iterator<Item = f64> + '_ {
    bytes
        .chunks_exact(4)
        .map(move |b| f64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])) / factor + min)
}

/// A column's values for a range of entries, in the Arrow layout.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnData {
    /// The values, flattened (string bytes for string columns).
    pub values: Values,
    /// For jagged, nested and string columns: `entries + 1` boundaries, starting at 0, into
    /// the outermost of [`ColumnData::levels`] (into `values` when there are none). Empty for
    /// scalars and fixed arrays.
    pub offsets: Vec<u64>,
    /// The list levels below the entries ([`ColumnKind::levels`] of them), innermost first,
    /// each the boundaries of its items in the level before, starting at 0: the first bounds
    /// values (a list of lists' inner lists, a list of strings' strings), the next bounds the
    /// first's items, and so on.
    pub levels: Vec<Vec<u64>>,
}

impl ColumnData {
    /// Empty data for a column of this kind.
    pub fn new(kind: ColumnKind) -> ColumnData {
        ColumnData {
            values: Values::new(kind.scalar()),
            offsets: if kind.is_variable() {
                vec![0]
            } else {
                Vec::new()
            },
            levels: vec![vec![0]; kind.levels()],
        }
    }

    /// Gives back the spare room of the values and boundaries ([`Values::fit`]).
    pub fn fit(&mut self) {
        self.values.fit();
        for level in std::iter::once(&mut self.offsets).chain(&mut self.levels) {
            fit(level);
        }
    }

    /// Empties the data, keeping allocations.
    pub fn clear(&mut self) {
        self.values.clear();
        for level in std::iter::once(&mut self.offsets).chain(&mut self.levels) {
            let used = !level.is_empty();
            level.clear();
            if used {
                level.push(0);
            }
        }
    }

    /// Checks that this is data of `kind`: values of its type, as many as a fixed array's
    /// entries need, and for lists each level's boundaries starting at 0, in order and ending
    /// where the level below ends. Returns the number of entries.
    ///
    /// # Errors
    /// A message saying what does not fit.
    pub fn check(&self, kind: ColumnKind) -> Result<usize, String> {
        if std::mem::discriminant(&self.values)
            != std::mem::discriminant(&Values::new(kind.scalar()))
        {
            return Err(format!("values are not those of {}", kind.cpp_name()));
        }
        let values = self.values.len();
        match kind {
            ColumnKind::Scalar(_) => return Ok(values),
            ColumnKind::Fixed(_, n) if n > 0 && values.is_multiple_of(n) => return Ok(values / n),
            ColumnKind::Fixed(_, n) => {
                return Err(format!("{values} values are not entries of {n}"));
            }
            _ => {}
        }
        if self.levels.len() != kind.levels() {
            return Err(format!(
                "{} list levels below the entries; {} has {}",
                self.levels.len(),
                kind.cpp_name(),
                kind.levels()
            ));
        }
        // Inside out: each level's bounds end where the level below ends.
        let mut below = values;
        for (depth, bounds) in self.levels.iter().chain([&self.offsets]).enumerate() {
            let ok = bounds.first() == Some(&0)
                && bounds.windows(2).all(|w| w[0] <= w[1])
                && bounds.last().is_some_and(|&end| end == below as u64);
            if !ok {
                return Err(format!(
                    "the boundaries of list level {depth} do not start at 0, rise and end at {below}"
                ));
            }
            below = bounds.len() - 1;
        }
        Ok(below)
    }

    /// Appends entries `entries` of `other`, data of the same `kind`, with the boundaries of
    /// every list level moved to follow this data's.
    ///
    /// # Errors
    /// A message when `other` is not data of `kind` with those entries (another value type,
    /// boundaries out of order or out of bounds); nothing is appended then.
    pub fn append_entries(
        &mut self,
        other: &ColumnData,
        kind: ColumnKind,
        entries: std::ops::Range<usize>,
    ) -> Result<(), String> {
        let bad = || format!("no entries {entries:?} of {} data", kind.cpp_name());
        let (a, b) = (entries.start, entries.end);
        if a > b {
            return Err(bad());
        }
        if !kind.is_variable() {
            let per = match kind {
                ColumnKind::Fixed(_, n) => n,
                _ => 1,
            };
            return if self.values.extend_from(&other.values, a * per..b * per) {
                Ok(())
            } else {
                Err(bad())
            };
        }
        if self.offsets.is_empty() || self.levels.len() != other.levels.len() {
            return Err(bad());
        }
        // Outside in: each level's bounds of the items taken, rebased on this data's last.
        let mut parts: Vec<&[u64]> = Vec::with_capacity(other.levels.len() + 1);
        let mut range = (a, b);
        for level in std::iter::once(&other.offsets).chain(other.levels.iter().rev()) {
            let part = level.get(range.0..=range.1).ok_or_else(bad)?;
            if part.windows(2).any(|w| w[0] > w[1]) {
                return Err(bad());
            }
            range = (part[0] as usize, part[part.len() - 1] as usize);
            parts.push(part);
        }
        if !self.values.extend_from(&other.values, range.0..range.1) {
            return Err(bad());
        }
        let mine = std::iter::once(&mut self.offsets).chain(self.levels.iter_mut().rev());
        for (level, part) in mine.zip(parts) {
            let base = level.last().copied().unwrap_or(0);
            level.extend(part[1..].iter().map(|&x| x - part[0] + base));
        }
        Ok(())
    }

    /// Ends an item of list level `level` (0: of the values, a string or an innermost list;
    /// [`ColumnData::levels`]' length: an entry) where the level below now ends.
    pub(crate) fn close(&mut self, level: usize) {
        let end = match level.checked_sub(1) {
            None => self.values.len(),
            Some(below) => self.levels[below].len() - 1,
        };
        match self.levels.get_mut(level) {
            Some(bounds) => bounds.push(end as u64),
            None => self.offsets.push(end as u64),
        }
    }

    /// Ends an entry (a variable column's): its offset where the outermost level now ends.
    pub(crate) fn end_entry(&mut self) {
        self.close(self.levels.len());
    }

    /// Each entry's boundaries (`entries + 1`) in the items of list level `depth`: 0 the
    /// values, 1 what [`ColumnData::levels`]' first level bounds (a list of lists' inner
    /// lists, a list of strings' strings), and so on; `depth` = the number of levels gives
    /// `offsets` itself. Empty for scalars and fixed arrays.
    pub fn entry_bounds(&self, depth: usize) -> Vec<u64> {
        let through = self.levels.get(depth..).unwrap_or_default();
        self.offsets
            .iter()
            .map(|&o| {
                through
                    .iter()
                    .rev()
                    .fold(o, |o, level| level.get(o as usize).copied().unwrap_or(0))
            })
            .collect()
    }

    /// Per-entry lengths of a jagged or string column (values, or inner lists for lists of
    /// lists), or `None` for scalars and fixed arrays.
    pub fn counts(&self) -> Option<Vec<u32>> {
        (!self.offsets.is_empty()).then(|| {
            self.offsets
                .windows(2)
                .map(|w| (w[1] - w[0]) as u32)
                .collect()
        })
    }
}

/// `v` in an allocation of its exact size when more than an eighth of its room is spare. (An
/// allocator may keep a shrunk block where it is, so the values are copied to a new one.)
fn fit<T: Copy>(v: &mut Vec<T>) {
    if v.capacity() - v.len() > v.len() / 8 {
        let mut exact = Vec::with_capacity(v.len());
        exact.extend_from_slice(v);
        *v = exact;
    }
}
