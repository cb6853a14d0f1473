//! The file's `TStreamerInfo` records: for each class and class version, its members in order,
//! with their types and the comments ROOT keeps in their titles (where `Float16_t` and
//! `Double32_t` members declare their range and bit count, `//[xmin,xmax,nbits]`).

use std::collections::HashMap;

use crate::error::Result;
use crate::objects::{Parser, Tagged};

/// One member of a class, as its `TStreamerElement` describes it.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamerElement {
    /// The member's name.
    pub(crate) name: String,
    /// The member's comment: `[-pi,pi,16]` for a ranged `Double32_t`.
    pub(crate) title: String,
    /// `fType`: the member's streamer type (9 `Double32_t`, 19 `Float16_t`, +20 fixed arrays).
    pub(crate) kind: i32,
    /// The member's C++ type name (for a base class element, the base class).
    pub(crate) type_name: String,
    /// Values in a fixed-array member (`fArrayLength`; 0 for non-arrays).
    pub(crate) array_length: usize,
    /// A multi-dimensional array member's dimensions (`fMaxIndex[..fArrayDim]`, `[2, 3]` for
    /// `x[2][3]`); empty for other members.
    pub(crate) dims: Vec<usize>,
    /// The `Float16_t`/`Double32_t` parameters as `TStreamerElement::Streamer` sets them:
    /// streamed by version 3; from the title by later versions when the element's `kHasRange`
    /// bit is set; else none.
    pub(crate) range: FloatRange,
    /// Of a `T* x; //[n]` member (a `TStreamerBasicPointer`): the member holding its length.
    pub(crate) count_name: String,
}

/// A type name without white space (and without a leading `const`): ROOT writes
/// `vector<vector<int> >` in one place and `vector<vector<int>>` in another; infos are found,
/// and types matched, by this form.
pub(crate) fn compact(class: &str) -> String {
    // A `const` value streams as the value does.
    let class = class.trim_start();
    let class = class.strip_prefix("const ").unwrap_or(class);
    class.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `TStreamerElement::kHasRange`, a `TObject` bit.
const HAS_RANGE: u32 = 1 << 6;

/// One class version's layout.
#[derive(Debug, Clone)]
pub(crate) struct StreamerInfo {
    pub(crate) class: String,
    pub(crate) version: i32,
    pub(crate) elements: Vec<StreamerElement>,
}

/// Every `TStreamerInfo` of a file, or why they could not be read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Streamers {
    infos: HashMap<String, Vec<StreamerInfo>>,
    /// Why the file's streamer infos could not be read (they are then empty).
    pub(crate) error: Option<String>,
}

impl Streamers {
    /// No streamer infos, for the given reason.
    pub(crate) fn unavailable(reason: String) -> Streamers {
        Streamers {
            infos: HashMap::new(),
            error: Some(reason),
        }
    }

    /// Parses the `TList` of streamer infos stored under the key of `key_len` bytes.
    pub(crate) fn parse(record: &[u8], key_len: u16, what: &str) -> Result<Streamers> {
        let mut p = Parser::new(record, key_len, what);
        let (end, n, version) = p.collection_header(true)?;
        let mut infos: HashMap<String, Vec<StreamerInfo>> = HashMap::new();
        for _ in 0..n {
            if let Tagged::Object { class, end } = p.tagged()? {
                if class == "TStreamerInfo" {
                    let info = streamer_info(&mut p)?;
                    infos.entry(compact(&info.class)).or_default().push(info);
                } else if end.is_none() {
                    return Err(p.c.error(format!(
                        "cannot skip an object of class {class} without a byte count"
                    )));
                }
                p.end(end)?;
            }
            // TList::Streamer: from version 4 every object is followed by its option string,
            // whose 255 escape to a 32-bit length exists from version 5 (ROOT 4 and g4tools
            // write version 4).
            if version > 3 {
                let options = match p.c.u8()? {
                    255 if version > 4 => p.c.count("TList option length")?,
                    n => usize::from(n),
                };
                p.c.skip(options)?;
            }
        }
        p.end(end)?;
        Ok(Streamers { infos, error: None })
    }

    /// The only layout of `class` in the file (a class streamed inside another object carries its
    /// version in the data; with one layout in the file there is no choice to make).
    pub(crate) fn only_info(&self, class: &str) -> Option<&StreamerInfo> {
        match self.infos.get(&compact(class))?.as_slice() {
            [info] => Some(info),
            _ => None,
        }
    }

    /// The only layout of `class` in the file, or why there is none to take: the file has no
    /// streamer info for the class (ROOT would need the class's compiled dictionary), or
    /// several versions of it.
    pub(crate) fn single_info(&self, class: &str) -> Result<&StreamerInfo, String> {
        match self.infos.get(&compact(class)).map(Vec::as_slice) {
            Some([info]) => Ok(info),
            None | Some([]) => Err(format!(
                "the file has no streamer info for class `{class}`: its layout is not in the \
                 file (ROOT reads it only with the class's compiled dictionary)"
            )),
            Some(infos) => Err(format!(
                "the file has {} streamer infos for class `{class}` (versions {}), and evtc \
                 reads a class inside another object only when the file has one",
                infos.len(),
                infos
                    .iter()
                    .map(|i| i.version.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }

    /// The layout of `class` at `version`; the only layout of `class` when the file has one.
    pub(crate) fn info(&self, class: &str, version: i32) -> Option<&StreamerInfo> {
        let infos = self.infos.get(&compact(class))?;
        infos
            .iter()
            .find(|i| i.version == version)
            .or(if infos.len() == 1 {
                infos.first()
            } else {
                None
            })
    }
}

/// A `TStreamerInfo`: `TNamed`, checksum, class version, then a `TObjArray` of elements.
fn streamer_info(p: &mut Parser<'_>) -> Result<StreamerInfo> {
    let (end, version) = p.header()?;
    if version < 2 {
        return Err(p.version_error("TStreamerInfo", version, "2 and later"));
    }
    let (class, _) = p.named()?;
    let _checksum = p.c.u32()?;
    let class_version = p.c.i32()?;
    let mut elements = Vec::new();
    if let Tagged::Object { class: array, end } = p.tagged()? {
        if array != "TObjArray" {
            return Err(p.c.error(format!(
                "the members of class {class} are a {array}, not a TObjArray"
            )));
        }
        let (array_end, n, _) = p.collection_header(false)?;
        elements.reserve(n);
        for _ in 0..n {
            // A null or a reference keeps its place: branches find members by index.
            let Tagged::Object { class: kind, end } = p.tagged()? else {
                elements.push(StreamerElement::default());
                continue;
            };
            if end.is_none() {
                return Err(p.c.error(format!("a {kind} without a byte count")));
            }
            // TStreamerSTLstring derives from TStreamerSTL, one class deeper than the others.
            let mut el = element(p, kind == "TStreamerSTLstring")?;
            if matches!(kind.as_str(), "TStreamerBasicPointer" | "TStreamerLoop") {
                // fCountVersion, fCountName, fCountClass.
                let _count_version = p.c.i32()?;
                el.count_name = p.c.string()?;
                let _count_class = p.c.string()?;
            }
            elements.push(el);
            p.end(end)?;
        }
        p.end(array_end)?;
        p.end(end)?;
    }
    p.end(end)?;
    Ok(StreamerInfo {
        class,
        version: class_version,
        elements,
    })
}

/// Any `TStreamerElement` subclass: its own header (and its base's, for a class two levels
/// below `TStreamerElement`), then the `TStreamerElement` base (the subclasses' own fields are
/// skipped by the caller).
fn element(p: &mut Parser<'_>, grandchild: bool) -> Result<StreamerElement> {
    let (_, _) = p.header()?;
    if grandchild {
        let (_, _) = p.header()?;
    }
    let (base_end, version) = p.header()?;
    let (name, title, bits) = p.named_with_bits()?;
    let kind = p.c.i32()?;
    let _size = p.c.i32()?;
    let array_length = usize::try_from(p.c.i32()?).unwrap_or(0);
    let array_dim = usize::try_from(p.c.i32()?).unwrap_or(0);
    let max_index = if version == 1 {
        p.c.count("fMaxIndex size")?
    } else {
        5
    };
    if max_index > p.c.remaining() / 4 {
        return Err(p
            .c
            .error(format!("fMaxIndex of {max_index} values overflows")));
    }
    let mut dims = Vec::new();
    for i in 0..max_index {
        let d = p.c.i32()?;
        if i < array_dim {
            dims.push(usize::try_from(d).unwrap_or(0));
        }
    }
    // One dimension is the array length itself; a shape that does not multiply to it is
    // ignored (the values stay flat).
    if dims.len() < 2
        || dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d)) != Some(array_length)
    {
        dims.clear();
    }
    let type_name = p.c.string()?;
    let range = if version == 3 {
        let mut f = || p.c.i64().map(|v| f64::from_bits(v as u64));
        FloatRange {
            xmin: f()?,
            xmax: f()?,
            factor: f()?,
        }
    } else if version > 3 && bits & HAS_RANGE != 0 {
        FloatRange::from_title(&title)
    } else {
        FloatRange::default()
    };
    p.end(base_end)?;
    Ok(StreamerElement {
        name,
        title,
        kind,
        type_name,
        array_length,
        dims,
        range,
        count_name: String::new(),
    })
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
