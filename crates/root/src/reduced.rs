//! How ROOT stores values (`Stored`: plain, or `Float16_t`/`Double32_t` with its reduced
//! precision), and the range and bit count of a reduced float (`FloatRange`), as streamer
//! elements and leaf titles declare them (`//[xmin,xmax,nbits]`).

use crate::types::ScalarType;

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

/// `Float16_t`/`Double32_t` parameters as `TStreamerElement` holds them (`fXmin`, `fXmax`,
/// `fFactor`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct FloatRange {
    pub(crate) xmin: f64,
    pub(crate) xmax: f64,
    pub(crate) factor: f64,
}

impl FloatRange {
    /// ROOT's `TStreamerElement::GetRange`: `[xmin,xmax]` or `[xmin,xmax,nbits]` in a comment
    /// (a first bracket without a comma is an array dimension and is passed over). `pi`, `2pi`,
    /// `2*pi`, `twopi`, `pi/2` and `pi/4`, signed, are understood. With `xmin < xmax` values are
    /// stored as `nbits`-bit integers scaled by `factor`; with no range and `nbits < 15` as floats
    /// truncated to `nbits` mantissa bits (`xmin` then holds `nbits + 0.1`).
    pub(crate) fn from_title(title: &str) -> FloatRange {
        let none = FloatRange::default();
        let Some((left, right, comma)) = brackets(title, 0).or_else(|| {
            // The first bracket may be a dimension: try the next one.
            let right = title
                .find('[')
                .and_then(|l| title[l..].find(']').map(|r| l + r))?;
            brackets(title, right)
        }) else {
            return none;
        };
        let mut right = right;
        let mut nbits = 32;
        if let Some(comma2) = title[comma + 1..right].find(',').map(|c| comma + 1 + c) {
            nbits = scan_int(&title[comma2 + 1..right]).unwrap_or(32);
            if !(2..=32).contains(&nbits) {
                nbits = 32;
            }
            right = comma2;
        }
        let mut xmin = bound(&title[left + 1..comma]);
        let xmax = bound(&title[comma + 1..right]);
        let bigint = if nbits < 32 {
            f64::from(1u32 << nbits)
        } else {
            f64::from(u32::MAX)
        };
        let mut factor = 0.0;
        if xmin < xmax {
            factor = bigint / (xmax - xmin);
        }
        if xmin >= xmax && nbits < 15 {
            xmin = f64::from(nbits) + 0.1;
        }
        FloatRange { xmin, xmax, factor }
    }

    /// The parameters of a `TLeafF16`/`TLeafD32` leaf, from its title (`x[n]/d[0,1,12]`): the
    /// text from the bracket after `/d` or `/f` (ROOT 6.40 titles), or the whole title when it
    /// starts with `d[` or `f[` (class version 1); none otherwise.
    pub(crate) fn from_leaf_title(title: &str, letter: char) -> FloatRange {
        let tag = format!("/{letter}[");
        let bracket = match title.find(&tag) {
            Some(at) => &title[at + 2..],
            None if title.starts_with(&tag[1..]) => &title[1..],
            None => return FloatRange::default(),
        };
        FloatRange::from_title(bracket)
    }

    /// The mantissa bits of a truncated float (`(int)fXmin` when there is no factor), 0 when
    /// the values are not truncated.
    pub(crate) fn nbits(self) -> i32 {
        if self.factor != 0.0 {
            0
        } else {
            // C's (int) conversion: truncation toward zero.
            self.xmin as i32
        }
    }
}

/// `[`, `]` and the first `,` between them, searching from `from`.
fn brackets(s: &str, from: usize) -> Option<(usize, usize, usize)> {
    let left = from + s.get(from..)?.find('[')?;
    let right = left + s[left..].find(']')?;
    let comma = left + s[left..].find(',')?;
    (comma < right).then_some((left, right, comma))
}

/// One bound of a range: a number, or a multiple of pi.
fn bound(text: &str) -> f64 {
    let s: String = text.to_lowercase().chars().filter(|&c| c != ' ').collect();
    if !s.contains("pi") {
        return scan_float(&s).unwrap_or(0.0);
    }
    let pi = std::f64::consts::PI;
    let value = if s.contains("2pi") || s.contains("2*pi") || s.contains("twopi") {
        2.0 * pi
    } else if s.contains("pi/2") {
        pi / 2.0
    } else if s.contains("pi/4") {
        pi / 4.0
    } else {
        pi
    };
    if s.contains('-') { -value } else { value }
}

/// `sscanf("%d")`: an optionally signed decimal prefix after leading blanks.
fn scan_int(s: &str) -> Option<i32> {
    let s = s.trim_start();
    let digits = s
        .char_indices()
        .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && (c == '+' || c == '-')))
        .count();
    s[..digits].parse().ok()
}

/// `sscanf("%lg")`: the longest prefix that is a decimal floating-point number.
fn scan_float(s: &str) -> Option<f64> {
    let s = s.trim_start();
    let candidate = s
        .char_indices()
        .take_while(|&(_, c)| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | 'e' | 'E'))
        .count();
    (1..=candidate).rev().find_map(|n| s[..n].parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(title: &str) -> (f64, f64, f64) {
        let r = FloatRange::from_title(title);
        (r.xmin, r.xmax, r.factor)
    }

    #[test]
    fn ranges_as_root_parses_them() {
        let pi = std::f64::consts::PI;
        assert_eq!(range("[-pi,pi,16]"), (-pi, pi, 65536.0 / (2.0 * pi)));
        assert_eq!(range("[0,100]"), (0.0, 100.0, f64::from(u32::MAX) / 100.0));
        assert_eq!(range("[-5, 5, 8] comment"), (-5.0, 5.0, 256.0 / 10.0));
        assert_eq!(range("[0,2pi,10]"), (0.0, 2.0 * pi, 1024.0 / (2.0 * pi)));
        assert_eq!(range("[-pi/2,pi/4]").0, -pi / 2.0);
        // No range: the bit count rides in xmin, when under 15.
        assert_eq!(range("[0,0,10]"), (10.1, 0.0, 0.0));
        assert_eq!(range("[0,0,20]"), (0.0, 0.0, 0.0));
        assert_eq!(range("[-2,2,24]"), (-2.0, 2.0, 16777216.0 / 4.0));
        // A first bracket without a comma is a dimension.
        assert_eq!(range("x[3][-10,10,20]"), (-10.0, 10.0, 1048576.0 / 20.0));
        assert_eq!(range("x[n][0,1,12]"), (0.0, 1.0, 4096.0));
        // Illegal bit counts become 32.
        assert_eq!(range("[0,1,40]"), (0.0, 1.0, f64::from(u32::MAX)));
        assert_eq!(range("[0,1,1]").2, f64::from(u32::MAX));
        // Nothing to parse.
        assert_eq!(range("just a comment"), (0.0, 0.0, 0.0));
        assert_eq!(range("x[3]"), (0.0, 0.0, 0.0));
        // xmin >= xmax with 32 bits: ROOT keeps xmin, and reads (int)xmin bits.
        assert_eq!(range("[5,1]"), (5.0, 1.0, 0.0));
        assert_eq!(range("[-5,-10]"), (-5.0, -10.0, 0.0));
        assert_eq!(range("[1e2,2.5e2,8]"), (100.0, 250.0, 256.0 / 150.0));
    }

    #[test]
    fn leaf_titles() {
        let leaf = |t: &str, l| {
            let r = FloatRange::from_leaf_title(t, l);
            (r.xmin, r.xmax, r.factor)
        };
        assert_eq!(leaf("ld/d[0,10,16]", 'd'), (0.0, 10.0, 6553.6));
        assert_eq!(leaf("lfn/f[0,0,6]", 'f'), (6.1, 0.0, 0.0));
        assert_eq!(leaf("ldarr[3]/d[-2,2,24]", 'd'), (-2.0, 2.0, 4194304.0));
        assert_eq!(leaf("x[n][3]/d[0,1,12]", 'd'), (0.0, 1.0, 4096.0));
        assert_eq!(leaf("d[0,10,16]", 'd'), (0.0, 10.0, 6553.6));
        assert_eq!(leaf("ldp", 'd'), (0.0, 0.0, 0.0));
        assert_eq!(leaf("x[3]", 'd'), (0.0, 0.0, 0.0));
    }

    #[test]
    fn nbits_from_the_range() {
        assert_eq!(FloatRange::from_title("[0,0,10]").nbits(), 10);
        assert_eq!(FloatRange::from_title("[0,1,10]").nbits(), 0);
        assert_eq!(FloatRange::from_title("").nbits(), 0);
    }
}
