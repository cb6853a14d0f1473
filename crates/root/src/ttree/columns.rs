//! How one branch becomes columns: a leaf's kind ([`leaf_column`]), a branch element's
//! ([`element_column`]), STL types ([`stl_layout`]), unsplit objects of fixed size
//! ([`unsplit_object`], [`object_vector`]) and, for objects of varying size, the interpreter's
//! plan ([`interpreted`]); the file's streamer infos give members their types and ranges.

use std::sync::Arc;

use super::branch::{Element, RawBranch, RawLeaf};
use super::column::{BasketRef, BranchColumn, Layout, ListHeader};
use crate::column::{Column, Source};
use crate::reduced::FloatRange;
use crate::reduced::{ReducedFloat, Stored};
use crate::streamer::{Custom, StreamerElement, Streamers};
use crate::typename::{compact, map_types, scalar_type, vector_element};
use crate::types::{ColumnKind, RootTypeName, ScalarType};

/// What every column of one branch shares: the branch, its baskets and its sizes.
pub(crate) struct ColumnTemplate<'b> {
    pub(crate) branch: &'b RawBranch,
    baskets: Arc<[BasketRef]>,
}

impl<'b> ColumnTemplate<'b> {
    pub(crate) fn new(branch: &'b RawBranch, baskets: Arc<[BasketRef]>) -> ColumnTemplate<'b> {
        ColumnTemplate { branch, baskets }
    }

    /// A column `name` of the branch, of `kind`, laid out as `layout`, counted by `counter`;
    /// ROOT calls its type `root_type`. The fields for special layouts are empty.
    pub(crate) fn column(
        &self,
        name: String,
        kind: ColumnKind,
        layout: Layout,
        counter: Option<String>,
        root_type: String,
    ) -> Column {
        let b = self.branch;
        Column {
            name,
            kind,
            counter,
            root_type,
            dims: Vec::new(),
            compression: b.compress,
            tot_bytes: u64::try_from(b.tot_bytes).unwrap_or(0),
            zip_bytes: u64::try_from(b.zip_bytes).unwrap_or(0),
            source: Source::Branch(
                Box::new(BranchColumn {
                    layout,
                    baskets: self.baskets.clone(),
                    entry_offsets: b.entry_offset_len > 0,
                    lengths: None,
                    row: None,
                    entry_prefix: None,
                    custom_header: None,
                    plan: None,
                }),
                None,
            ),
        }
    }

    /// [`ColumnTemplate::column`], with `set` filling in the fields of a special layout.
    pub(crate) fn column_with(
        &self,
        name: String,
        kind: ColumnKind,
        layout: Layout,
        counter: Option<String>,
        root_type: String,
        set: impl FnOnce(&mut BranchColumn),
    ) -> Column {
        let mut column = self.column(name, kind, layout, counter, root_type);
        if let Source::Branch(branch, _) = &mut column.source {
            set(branch);
        }
        column
    }
}

/// The C++ type a leaf class holds.
pub(crate) fn leaf_type_name(leaf: &RawLeaf) -> &'static str {
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
pub(crate) fn leaf_column(leaf: &RawLeaf) -> Result<(ColumnKind, Layout, Option<String>), String> {
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

/// The layout of an STL container or string of type `type_name` streamed as a whole: a branch of
/// its own (`member` false) or a member of a split object (`member` true: a `std::string` then
/// has an object header). `None` if the type is not an STL container or string; an error says
/// why a container is not read.
pub(crate) fn stl_layout(
    type_name: &str,
    member: bool,
) -> Option<Result<(ColumnKind, Layout), String>> {
    let compact = compact(type_name);
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
            ColumnKind::Strings(1),
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
            ColumnKind::Nested(t, 2),
            Layout::VectorVector { stored },
        )));
    }
    Some(Err(format!(
        "a std::vector of `{outer}` (not a number type evtc reads)"
    )))
}

/// The dimensions of a multi-dimensional fixed-array leaf from its title (`m[2][3]/D`: `[2, 3]`),
/// if it has two or more numeric ones whose product is the array's length; empty otherwise.
pub(crate) fn leaf_dims(title: &str, kind: ColumnKind) -> Vec<usize> {
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
pub(crate) fn element_column(
    b: &RawBranch,
    streamers: &Streamers,
) -> Result<(ColumnKind, Layout, String), (String, String)> {
    let Some(e) = &b.element else {
        return Err((
            b.class.clone(),
            "branch element without its class data".into(),
        ));
    };
    if e.streamer_type == -1 {
        return stl_branch(&e.class_name);
    }
    let m = ElementMember { b, e, streamers };
    // 0: a member of a split object; 31 and 41: a member of the objects of a split TClonesArray
    // or std::vector<Class>, all of an entry's objects' values back to back.
    let in_collection = match e.ftype {
        0 => false,
        31 | 41 => true,
        t => return Err(m.refuse(&format!("branch element type {t}"))),
    };
    match e.streamer_type {
        // A TString member, its length and characters in each entry (each object's, back to
        // back, in a collection).
        65 if in_collection => Ok((
            ColumnKind::Strings(1),
            Layout::StringList {
                header: ListHeader::None,
            },
            "TString[]".into(),
        )),
        65 => Ok((
            ColumnKind::String,
            Layout::String { header: false },
            "TString".into(),
        )),
        // In a collection, each object's STL member without its own header, all after one
        // object header: the interpreter's to read (`interpreted`).
        300 if in_collection => Err(m.refuse("an STL member of a collection's objects")),
        // An STL container or string member (kSTL), streamed whole in each entry.
        300 => m.stl_member(),
        // A `T* x //[n]` array (kOffsetP).
        t @ 41..=59 => m.pointer_array(t - 40, in_collection),
        27 => Err(m.refuse("a fixed array of `char*` strings")),
        // A `char*` member (kCharStar), its length and characters in each entry; in a
        // collection, each object's back to back: the interpreter's to read (`interpreted`).
        7 if in_collection => Err(m.refuse("a `char*` member of a collection's objects")),
        7 => Ok((ColumnKind::String, Layout::CharStar, "char*".into())),
        // A `T* x //[n]` array of objects (kStreamLoop): one object header, then the objects
        // (in a collection, each object's array, as long as another member's branch says): the
        // interpreter's to read (`interpreted`).
        501 => Err(m.refuse("an array of objects behind a pointer")),
        t @ 1..=19 => m.basic(t, false, in_collection),
        t @ 21..=39 => m.basic(t - 20, true, in_collection),
        t if t >= 61 => Err(m.refuse("an object, string or collection member")),
        t => Err(m.refuse(&format!("code {t}"))),
    }
}

/// A branch of a whole STL container or string of `class` (streamer type -1).
fn stl_branch(class: &str) -> Result<(ColumnKind, Layout, String), (String, String)> {
    match stl_layout(class, false) {
        Some(Ok((kind, layout))) => {
            let shown = if kind == ColumnKind::String && class != "TString" {
                "std::string"
            } else {
                class
            };
            Ok((kind, layout, shown.to_owned()))
        }
        Some(Err(reason)) => Err((class.to_owned(), format!("{reason}: not supported"))),
        None => Err((
            class.to_owned(),
            "unsplit objects are not supported (only their split members are)".into(),
        )),
    }
}

/// A branch element that is a member of a split object or of a split collection's objects.
struct ElementMember<'a> {
    b: &'a RawBranch,
    e: &'a Element,
    streamers: &'a Streamers,
}

type ElementResult = Result<(ColumnKind, Layout, String), (String, String)>;

impl ElementMember<'_> {
    /// The member's streamer element, or why the streamer info does not give it.
    fn member(&self) -> Result<&StreamerElement, String> {
        member(self.b, self.e, self.streamers)
    }

    fn class(&self) -> String {
        self.e.class_name.clone()
    }

    /// A refusal in C++ terms: the member, its class and its type, from the streamer info.
    fn refuse(&self, what: &str) -> (String, String) {
        match self.member() {
            Ok(m) => (
                m.type_name.clone(),
                format!(
                    "member `{}` of class `{}` is a `{}` ({what}): not supported",
                    m.name, self.e.class_name, m.type_name
                ),
            ),
            Err(why) => (
                self.class(),
                format!(
                    "{what} (streamer type {}): not supported; {why}",
                    self.e.streamer_type
                ),
            ),
        }
    }

    /// An STL container or string member (kSTL), streamed whole in each entry.
    fn stl_member(&self) -> ElementResult {
        let m = self.member().map_err(|why| {
            (
                self.class(),
                format!("an STL member whose type the streamer info does not give: {why}"),
            )
        })?;
        match stl_layout(&m.type_name, true) {
            Some(Ok((kind, layout))) => Ok((kind, layout, m.type_name.clone())),
            Some(Err(reason)) => Err(self.refuse(&reason)),
            None => Err(self.refuse("an STL container evtc does not read")),
        }
    }

    /// A `T* x //[n]` array of basic type `code` (kOffsetP): a byte saying whether there are
    /// values, then the values; in a collection's objects their counts are in another member.
    fn pointer_array(&self, code: i32, in_collection: bool) -> ElementResult {
        let m = self.member().map_err(|r| (self.class(), r))?;
        let stored = match code {
            9 => Stored::reduced(ReducedFloat::Double32, m.range),
            19 => Stored::reduced(ReducedFloat::Float16, m.range),
            code => crate::streamer::basic(code)
                .map(Stored::Plain)
                .ok_or_else(|| format!("basic type code {code}")),
        }
        .map_err(|r| (self.class(), r))?;
        if in_collection {
            // A list per object, each as long as the object's counter member says.
            return Ok((
                ColumnKind::Nested(stored.output(), 2),
                Layout::PointerArraysInCollection { stored },
                format!("{}[][]", stored.output().root_name()),
            ));
        }
        Ok((
            ColumnKind::Jagged(stored.output()),
            Layout::FlaggedArray { stored },
            m.type_name.clone(),
        ))
    }

    /// A member of basic type `code`, a fixed array of them with `array`.
    fn basic(&self, code: i32, array: bool, in_collection: bool) -> ElementResult {
        let mut root_type = None;
        let mut reduced = |kind| {
            let member = self.member().map_err(|r| (self.class(), r))?;
            root_type = Some(format!("{} {}", member.type_name, member.title.trim()));
            Stored::reduced(kind, member.range).map_err(|r| (self.class(), r))
        };
        let stored = match code {
            9 => reduced(ReducedFloat::Double32)?,
            19 => reduced(ReducedFloat::Float16)?,
            t => match crate::streamer::basic(t) {
                Some(t) => Stored::Plain(t),
                None => return Err(self.refuse(&format!("basic type code {t}"))),
            },
        };
        let len = if array {
            self.b
                .leaves
                .first()
                .map_or(1, |l| usize::try_from(l.len).unwrap_or(1))
                .max(1)
        } else {
            1
        };
        let t = stored.output();
        let root_type = root_type.unwrap_or_else(|| t.root_name().to_owned());
        Ok(match (in_collection, array) {
            // Each object's array: a list of `len` values per object.
            (true, true) => {
                let len = self.member().map_or(len, |m| m.array_length.max(1));
                (
                    ColumnKind::Nested(t, 2),
                    Layout::ArraysInCollection { stored, len },
                    format!("{root_type}[{len}][]"),
                )
            }
            (true, false) => (
                ColumnKind::Jagged(t),
                Layout::Jagged { stored },
                format!("{root_type}[]"),
            ),
            (false, array) => {
                let layout = Layout::Fixed {
                    stored,
                    len,
                    offset: 0,
                    stride: stored.size() * len,
                };
                if array {
                    (
                        ColumnKind::Fixed(t, len),
                        layout,
                        format!("{root_type}[{len}]"),
                    )
                } else {
                    (ColumnKind::Scalar(t), layout, root_type)
                }
            }
        })
    }
}

/// An unsplit object of fixed size: a column per basic member, `branch.member.submember`, each
/// read at its offset in every `stride`-byte entry.
pub(crate) fn member_columns(
    name: &str,
    object: UnsplitObject,
    template: &ColumnTemplate<'_>,
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
            let dims = if m.len > 1 { m.dims } else { Vec::new() };
            let path = format!("{name}.{}", m.path);
            Column {
                dims,
                ..template.column_with(path, kind, layout, None, m.type_name, |b| {
                    b.entry_prefix = prefix.clone();
                    b.custom_header = custom_header.clone();
                })
            }
        })
        .collect()
}

/// One basic member of the objects of an [`object_vector`]: its path, value type, how it is
/// stored, its offset in an object, the object's size, the header every object starts with and
/// the member's C++ type.
pub(crate) type VectorMember = (String, ScalarType, Stored, usize, usize, Arc<[u8]>, String);

/// For an unsplit `std::vector` of objects of a fixed-size class (`std::vector<TLorentzVector>`)
/// streamed object by object: one member per basic member of the class, each a jagged column
/// (an object's value per object, as for a split collection); or why it cannot be read. `None`
/// if the branch is not such a vector.
pub(crate) fn object_vector(
    b: &RawBranch,
    streamers: &Streamers,
) -> Option<Result<Vec<VectorMember>, String>> {
    let e = b.element.as_ref()?;
    if b.class != "TBranchElement" || e.streamer_type != -1 {
        return None;
    }
    let compact = compact(&e.class_name);
    let class = vector_element(&compact)?;
    let refuse = |why: String| {
        Some(Err(format!(
            "a `{}` is read member by member when its objects have a fixed size: {why}",
            e.class_name
        )))
    };
    let info = match streamers.single_info(&class) {
        Ok(info) => info,
        Err(why) => return refuse(why),
    };
    let (members, stride) = match super::plan::fixed_object(streamers, info, true) {
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
pub(crate) fn interpreted(
    b: &RawBranch,
    streamers: &Streamers,
) -> Option<Result<super::interp::Plan, String>> {
    use super::interp::{Root, plan};
    let e = b.element.as_ref()?;
    let custom = Custom::of(&e.class_name);
    if b.class == "TBranchObject" {
        // The class name, then the object as its `Streamer` writes it.
        let class_name = Some(e.class_name.as_str());
        let result = match (custom, streamers.only_info(&e.class_name)) {
            (Some(custom), _) => plan(streamers, Root::Custom { custom, class_name }),
            (None, Some(info)) => plan(streamers, Root::BranchObject { info }),
            (None, None) => Err(format!(
                "the file has no single streamer info for class `{}`",
                e.class_name
            )),
        };
        return Some(result.and_then(|p| with_targets(p, &e.class_name)));
    }
    if b.class != "TBranchElement" {
        return None;
    }
    let compact = compact(&e.class_name);
    let result = match (e.streamer_type, e.ftype) {
        // A class with a streamer of its own that evtc knows (`TArrayD`, `TObject`).
        (-1, _) if custom.is_some() => plan(
            streamers,
            Root::Custom {
                custom: custom?,
                class_name: None,
            },
        ),
        (-1, _) if vector_element(&compact).is_some() || map_types(&compact).is_some() => {
            plan(streamers, Root::Stl(&e.class_name))
        }
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
        (300, 0) => member(b, e, streamers).and_then(|m| plan(streamers, Root::Stl(&m.type_name))),
        (300, 31 | 41) => {
            member(b, e, streamers).and_then(|m| plan(streamers, Root::StlMembers(&m.type_name)))
        }
        (7, 31 | 41) => plan(streamers, Root::CharStars),
        (501, 0 | 31 | 41) => member(b, e, streamers).and_then(|el| {
            plan(
                streamers,
                Root::LoopMember {
                    class: &e.class_name,
                    el,
                    each: e.ftype != 0,
                },
            )
        }),
        // An object member (kObject, kAny) of a split object that is not split further: the
        // object with its header in each entry; of a split collection's objects: each object's,
        // back to back.
        (61 | 62 | 81 | 82, 0 | 31 | 41) => member(b, e, streamers).and_then(|m| {
            let info = streamers.single_info(&m.type_name)?;
            plan(
                streamers,
                Root::ObjectMember {
                    info,
                    len: m.array_length,
                    each: matches!(e.ftype, 31 | 41),
                },
            )
        }),
        _ => return None,
    };
    Some(result.and_then(|p| with_targets(p, &e.class_name)))
}

/// A plan that reads something, or why the object of `class` gives no column.
fn with_targets(p: super::interp::Plan, class: &str) -> Result<super::interp::Plan, String> {
    match (p.targets.is_empty(), p.refused.first()) {
        (false, _) => Ok(p),
        (true, Some((path, type_name, why))) => Err(format!("`{path}` is a `{type_name}`: {why}")),
        (true, None) => Err(format!("`{class}` has no members evtc reads")),
    }
}

/// The plan of an unsplit object branch.
pub(crate) struct UnsplitObject {
    members: Vec<super::plan::FixedMember>,
    /// Bytes per entry.
    stride: usize,
    /// What each entry starts with before the object.
    prefix: Option<Arc<[u8]>>,
    /// See [`BranchColumn::custom_header`](crate::ttree::column::BranchColumn::custom_header).
    custom_header: Option<Arc<[u8]>>,
}

/// For an unsplit object branch (`TBranchObject`, or `TBranchElement` of streamer type -1), the
/// plan of its
/// fixed-size members from the file's streamer info, or why there is none; `None` for other
/// branches.
pub(crate) fn unsplit_object(
    b: &RawBranch,
    streamers: &Streamers,
) -> Option<Result<UnsplitObject, String>> {
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
    let plan = super::plan::fixed_object(streamers, info, header).and_then(|(members, stride)| {
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
                let mut h = (0x4000_0000 | (stride as u32).saturating_add(2))
                    .to_be_bytes()
                    .to_vec();
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
pub(crate) fn member<'s>(
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
