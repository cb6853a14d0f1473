//! Parsing the `TList` of `TStreamerInfo` records into [`Streamers`].

use std::collections::HashMap;

use super::{FloatRange, StreamerElement, StreamerInfo, Streamers};
use crate::error::Result;
use crate::objects::{Parser, Tagged};
use crate::typename::compact;

/// Adds `info` to the infos of its class, unless the class has an info of the same version and
/// layout already: a file may list a class version twice (ATLAS files hold `ElementLinkBase`
/// twice at version 1, written by builds whose checksums differ), and one layout is one layout.
fn add(infos: &mut HashMap<String, Vec<StreamerInfo>>, info: StreamerInfo) {
    let known = infos.entry(compact(&info.class)).or_default();
    if !known.iter().any(|k| same_layout(k, &info)) {
        known.push(info);
    }
}

/// Whether two infos describe one layout: the same version and the same members in order (name,
/// streamer type, C++ type up to white space, array shape, range, count member, base version;
/// the comments aside).
fn same_layout(a: &StreamerInfo, b: &StreamerInfo) -> bool {
    a.version == b.version
        && a.elements.len() == b.elements.len()
        && a.elements.iter().zip(&b.elements).all(|(x, y)| {
            x.name == y.name
                && x.kind == y.kind
                && compact(&x.type_name) == compact(&y.type_name)
                && x.array_length == y.array_length
                && x.dims == y.dims
                && x.range == y.range
                && x.count_name == y.count_name
                && x.base_version == y.base_version
        })
}

/// `TStreamerElement::kHasRange`, a `TObject` bit.
const HAS_RANGE: u32 = 1 << 6;

impl Streamers {
    /// Parses the `TList` of streamer infos stored under the key of `key_len` bytes.
    pub(crate) fn parse(record: &[u8], key_len: u16, what: &str) -> Result<Streamers> {
        let mut p = Parser::new(record, key_len, what);
        let (end, n, version) = p.collection_header(true)?;
        let mut infos: HashMap<String, Vec<StreamerInfo>> = HashMap::new();
        for _ in 0..n {
            if let Tagged::Object { class, end } = p.tagged()? {
                if class == "TStreamerInfo" {
                    add(&mut infos, streamer_info(&mut p)?);
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
            let (mut el, own_version) = element(p, kind == "TStreamerSTLstring")?;
            if kind == "TStreamerBase" && own_version >= 2 {
                // fBaseVersion: the version of the base class this class was written with.
                el.base_version = Some(p.c.i32()?);
            }
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
/// below `TStreamerElement`), then the `TStreamerElement` base; returns the element and the
/// subclass's version (the subclasses' own fields are read or skipped by the caller).
fn element(p: &mut Parser<'_>, grandchild: bool) -> Result<(StreamerElement, i16)> {
    let (_, own_version) = p.header()?;
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
    let element = StreamerElement {
        name,
        title,
        kind,
        type_name,
        array_length,
        dims,
        range,
        count_name: String::new(),
        base_version: None,
    };
    Ok((element, own_version))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(version: i32, members: &[(&str, &str)]) -> StreamerInfo {
        StreamerInfo {
            class: "ElementLinkBase".into(),
            version,
            elements: members
                .iter()
                .map(|(name, type_name)| StreamerElement {
                    name: (*name).into(),
                    type_name: (*type_name).into(),
                    kind: 13,
                    title: format!("the {name}"),
                    ..StreamerElement::default()
                })
                .collect(),
        }
    }

    #[test]
    fn a_layout_listed_twice_is_one_and_others_stay_apart() {
        let mut infos = HashMap::new();
        add(
            &mut infos,
            info(
                1,
                &[
                    ("m_persKey", "unsigned int"),
                    ("m_persIndex", "unsigned int"),
                ],
            ),
        );
        // The same version and members, another comment: the same layout.
        let mut again = info(
            1,
            &[
                ("m_persKey", "unsigned int"),
                ("m_persIndex", "unsigned int"),
            ],
        );
        again.elements[0].title = "another comment".into();
        add(&mut infos, again);
        let streamers = Streamers {
            infos: infos.clone(),
            error: None,
        };
        assert!(streamers.single_info("ElementLinkBase").is_ok());
        // The same version with other members, and another version: kept apart, and a class
        // inside another object is then refused, naming the versions.
        add(&mut infos, info(1, &[("m_persKey", "unsigned int")]));
        add(
            &mut infos,
            info(
                2,
                &[
                    ("m_persKey", "unsigned int"),
                    ("m_persIndex", "unsigned int"),
                ],
            ),
        );
        let streamers = Streamers { infos, error: None };
        let why = streamers.single_info("ElementLinkBase").unwrap_err();
        assert!(
            why.contains("3 streamer infos") && why.contains("versions 1, 1, 2"),
            "{why}"
        );
    }
}
