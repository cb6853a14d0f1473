//! The object interpreter: reads objects whose streamed size varies (objects holding vectors and
//! strings, vectors of objects, vectors of vectors of objects, vectors streamed member-wise;
//! object members of split objects and of split collections' objects that ROOT did not split
//! further, each with its header; the STL members and `char*` members of split collections'
//! objects) by walking the file's streamer infos entry by entry.
//!
//! [`plan`] turns a class (or an STL type) into a tree of [`Node`]s and lists its basic and
//! string members as columns, each with the number of lists above it: 0 (one value, a fixed
//! array or a string per entry), 1 (a list per entry), 2 (a list of lists), and so on up to
//! [`ColumnKind::MAX_DEPTH`]; a fixed array inside a list, and a fixed array of objects, are one
//! list more. Sets are read as the vectors they are streamed as, and a `std::bitset<N>` as the
//! `N` bools it is streamed as; `char*` members (a 32-bit length, then the characters) as
//! strings; maps (written member-wise: all keys, then all values) as two columns, `.first` and
//! `.second`, of one list each. `T* x; //[n]` members (ROOT writes a byte, 1 when the array is
//! there, then `n` values, `n` being the object's counter member read before it) are one list
//! more. A column reader walks each entry through the tree, keeping the values of its own
//! column only. Every object header's byte count is checked against what its parts took, and
//! every entry must be used up exactly: a stream that differs from the plan is an error, never
//! misread.

mod walk;

pub(crate) use walk::Walk;

use crate::reduced::{ReducedFloat, Stored};
use crate::streamer::{Custom, StreamerElement, StreamerInfo, Streamers};
use crate::types::{ColumnKind, RootTypeName, ScalarType};

/// Nesting deeper than this is refused (a class cannot contain itself by value).
const MAX_DEPTH: usize = 16;

/// How one part of a streamed object is read.
#[derive(Debug)]
pub(crate) enum Node {
    /// A basic value or a fixed array of `len`, of column `column` (if it is one); with
    /// `counter`, the length of a pointer array, kept in that counter slot. A fixed array
    /// inside a list is a list of its column's (`listed`).
    Basic {
        stored: Stored,
        len: usize,
        column: Option<usize>,
        counter: Option<usize>,
        listed: bool,
    },
    /// A `T* x; //[n]` array: a byte (0: no array), then as many values as the counter slot's
    /// next length for this array, `reader` (several arrays may share one counter).
    Pointer {
        stored: Stored,
        counter: usize,
        reader: usize,
        column: Option<usize>,
    },
    /// A `T* x; //[n]` array of objects (kStreamLoop): one object header, then as many objects
    /// of class `T`, each with its header, as the counter slot's next length for this array,
    /// `reader`; a list.
    Loop {
        counter: usize,
        reader: usize,
        element: Box<Node>,
    },
    /// The `T* x; //[n]` arrays of the objects of a split collection, after one object header:
    /// as many arrays as counter slot `counter` holds lengths (given before the walk: the
    /// objects' counter member is a branch of its own), each read as [`Node::Loop`] reads its
    /// objects; a list of lists.
    Arrays {
        counter: usize,
        reader: usize,
        element: Box<Node>,
    },
    /// A `TObject`: version (without a byte count), unique ID, bits (and a process ID when
    /// referenced); as a base or member, bookkeeping without columns; streamed on its own (a
    /// branch of `TObject`s), its unique ID and bits are columns.
    TObject {
        unique_id: Option<usize>,
        bits: Option<usize>,
    },
    /// A `TArrayX` (its own streamer): a 32-bit length, then the values, without a header; a
    /// list.
    TArray {
        stored: Stored,
        column: Option<usize>,
    },
    /// A `TRefArray` (its own streamer): a header, a `TObject`, the name, the number of
    /// references, the lower bound and the process ID, then a 32-bit unique ID per reference
    /// (a list, `column`); the referenced objects are elsewhere and not followed.
    RefArray { column: Option<usize> },
    /// `len` pointers to objects that evtc does not follow, skipped: `tagged`, as
    /// `TBuffer::WriteObjectAny` writes them (0 for null, a reference to an object written
    /// before, or a byte count, a class tag and the object); else the object inline, with its
    /// header (a `//->` member).
    Skip { tagged: bool, len: usize },
    /// The class name `TLeafObject` writes before a `TBranchObject`'s object: a length byte,
    /// the name and a NUL; it must be `class` (the branch's).
    ClassName { class: String },
    /// An object: with `header`, its byte count and version (and a checksum after version 0),
    /// checked against what its parts take; without, its members alone.
    Object { header: bool, parts: Vec<Node> },
    /// A `std::vector`: with `header`, its byte count and version; then its size and elements.
    Vector { header: bool, element: Box<Node> },
    /// A string (a length byte, or 255 and a 32-bit length, then the characters): with
    /// `header`, after an object header (`std::string` members).
    Str { header: bool, column: Option<usize> },
    /// A `char*` member (kCharStar): a 32-bit length, then the characters.
    CharStar { column: Option<usize> },
    /// Objects, each with its header, as many as fill the entry: a list (the object members of
    /// a split collection's objects).
    Fill { element: Box<Node> },
    /// A fixed array of `len` objects (`TLorentzVector p[4]`), each with its header: a list of
    /// `len` per array.
    Array { len: usize, element: Box<Node> },
    /// A map (`std::map`, `unordered_map`, `multimap`), with its object header, written
    /// member-wise: the pair's class version, the size, then every key, then every value (an
    /// STL key or value: one object header before them all).
    Map { key: Box<Node>, value: Box<Node> },
}

/// A column of an interpreted object: its path below the branch, kind and C++ type (of one
/// value, with `[]` for each list around it).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) path: String,
    pub(crate) kind: ColumnKind,
    pub(crate) type_name: String,
}

/// The plan of an interpreted branch: its tree and its columns.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) root: Node,
    pub(crate) targets: Vec<Target>,
    /// Members that cannot be columns (too deeply nested lists, arrays in lists): path, C++
    /// type and reason.
    pub(crate) refused: Vec<(String, String, String)>,
    /// Counter slots: one per member that gives a pointer array's length.
    pub(crate) counters: usize,
    /// Pointer arrays, each reading its counter's lengths in turn.
    pub(crate) readers: usize,
    /// For the arrays of a split collection's objects ([`Node::Arrays`]): the member of the
    /// objects holding their lengths, whose branch gives counter slot 0 each entry's lengths
    /// before the walk.
    pub(crate) lengths: Option<String>,
}

/// What a plan starts from.
pub(crate) enum Root<'a> {
    /// An object of this class: with its header (`TBranchObject`, a vector's element) or its
    /// members alone (`TBranchElement`).
    Class {
        info: &'a StreamerInfo,
        header: bool,
    },
    /// A `TBranchObject`'s object: the class name, then an object of this class with its
    /// header.
    BranchObject { info: &'a StreamerInfo },
    /// An object of a class with a streamer of its own, after its class name when the branch
    /// is a `TBranchObject` (`class_name`).
    Custom {
        custom: Custom,
        class_name: Option<&'a str>,
    },
    /// An STL type streamed whole, with its header (a vector branch or member).
    Stl(&'a str),
    /// An object member of a split object (`each` false) or of a split collection's objects
    /// (`each`: all the entry's objects' in turn, as many as fill the entry) that ROOT did not
    /// split further: an object of this class with its header, or a fixed array of `len`.
    ObjectMember {
        info: &'a StreamerInfo,
        len: usize,
        each: bool,
    },
    /// An STL member of a split collection's objects: one object header, then each object's
    /// member without a header of its own, as many as fill the entry.
    StlMembers(&'a str),
    /// A `char*` member of a split collection's objects: each object's, back to back, as many
    /// as fill the entry.
    CharStars,
    /// A `T* x; //[n]` member of class objects (kStreamLoop, `el`) of a split object of class
    /// `class` (`each` false): one object header, then the objects, each with its header, as
    /// many as fill it (their count is another member's branch); of a split collection's objects
    /// (`each`): one object header, then each object's array, as long as its counter member's
    /// branch says ([`Plan::lengths`]).
    LoopMember {
        class: &'a str,
        el: &'a StreamerElement,
        each: bool,
    },
}

/// The plan of `root`, or why there is none (a part of unknown or unsupported kind).
pub(crate) fn plan(streamers: &Streamers, root: Root<'_>) -> Result<Plan, String> {
    let mut p = Planner {
        streamers,
        targets: Vec::new(),
        refused: Vec::new(),
        counters: 0,
        readers: 0,
    };
    let mut lengths = None;
    let root = match root {
        Root::Class { info, header } => p.class(info, header, "", 0, 0)?,
        Root::BranchObject { info } => Node::Object {
            header: false,
            parts: vec![
                Node::ClassName {
                    class: info.class.clone(),
                },
                p.class(info, true, "", 0, 0)?,
            ],
        },
        Root::Custom { custom, class_name } => {
            let node = p.custom(custom, "", 0);
            match class_name {
                Some(class) => Node::Object {
                    header: false,
                    parts: vec![
                        Node::ClassName {
                            class: class.to_owned(),
                        },
                        node,
                    ],
                },
                None => node,
            }
        }
        Root::Stl(type_name) => p.stl(type_name, true, "", "", 0, 0)?,
        Root::ObjectMember { info, len, each } => {
            let node = p.objects(info, len, "", usize::from(each), 1)?;
            if each {
                Node::Fill {
                    element: Box::new(node),
                }
            } else {
                node
            }
        }
        Root::StlMembers(type_name) => Node::Object {
            header: true,
            parts: vec![Node::Fill {
                element: Box::new(p.stl(type_name, false, "", type_name, 1, 1)?),
            }],
        },
        Root::CharStars => Node::Fill {
            element: Box::new(p.char_star("", 1)),
        },
        Root::LoopMember { class, el, each } => {
            let info = p.loop_class(class, el)?;
            // The arrays' lengths are given before the walk, in counter slot 0 (taken first).
            let slots = each.then(|| {
                p.counters += 1;
                p.readers += 1;
                (p.counters - 1, p.readers - 1)
            });
            let element = Box::new(p.class(info, true, "", 1 + usize::from(each), 1)?);
            let arrays = match slots {
                Some((counter, reader)) => {
                    lengths = Some(el.count_name.clone());
                    Node::Arrays {
                        counter,
                        reader,
                        element,
                    }
                }
                None => Node::Fill { element },
            };
            Node::Object {
                header: true,
                parts: vec![arrays],
            }
        }
    };
    Ok(Plan {
        root,
        targets: p.targets,
        refused: p.refused,
        counters: p.counters,
        readers: p.readers,
        lengths,
    })
}

struct Planner<'s> {
    streamers: &'s Streamers,
    targets: Vec<Target>,
    refused: Vec<(String, String, String)>,
    counters: usize,
    readers: usize,
}

impl<'s> Planner<'s> {
    fn class(
        &mut self,
        info: &StreamerInfo,
        header: bool,
        prefix: &str,
        lists: usize,
        depth: usize,
    ) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(format!("class `{}` nests objects too deeply", info.class));
        }
        if let Some(custom) = Custom::of(&info.class) {
            return Ok(self.custom(custom, prefix.trim_end_matches('.'), lists));
        }
        let mut parts = Vec::new();
        for el in &info.elements {
            let node = self.member(info, el, prefix, lists, depth, &mut parts)?;
            parts.push(node);
        }
        Ok(Node::Object { header, parts })
    }

    /// Member `el` of class `info` (its path `prefix` + its name), after the members `parts`.
    fn member(
        &mut self,
        info: &StreamerInfo,
        el: &StreamerElement,
        prefix: &str,
        lists: usize,
        depth: usize,
        parts: &mut [Node],
    ) -> Result<Node, String> {
        let refuse = |what: &str| {
            format!(
                "member `{}` of class `{}` is a `{}` ({what})",
                el.name, info.class, el.type_name
            )
        };
        let path = format!("{prefix}{}", el.name);
        Ok(match el.kind {
            0 if el.name == "TObject" => Node::TObject {
                unique_id: None,
                bits: None,
            },
            66 => Node::TObject {
                unique_id: None,
                bits: None,
            },
            // A `TNamed` base (or member): its header, a `TObject`, the name and title.
            67 => {
                let prefix = if el.name == "TNamed" {
                    prefix.to_owned()
                } else {
                    format!("{path}.")
                };
                self.named(&prefix, lists)
            }
            // A base `TArrayX`'s values are the object's `fArray`.
            0 => match Custom::of(&el.name) {
                Some(c @ Custom::Array(_)) => self.custom(c, &format!("{prefix}fArray"), lists),
                _ => {
                    let base = self.streamers.base_info(el)?;
                    self.class(base, true, prefix, lists, depth + 1)?
                }
            },
            // An object, or a fixed array of them (kOffsetL + kObject, kAny).
            61 | 62 | 81 | 82 => match Custom::of(&el.type_name) {
                Some(custom) if el.array_length <= 1 => self.custom(custom, &path, lists),
                Some(custom) => Node::Array {
                    len: el.array_length,
                    element: Box::new(self.custom(custom, &path, lists + 1)),
                },
                None => {
                    let info = self.info(&el.type_name)?;
                    let prefix = format!("{path}.");
                    self.objects(info, el.array_length, &prefix, lists, depth + 1)?
                }
            },
            // kCharStar: a `char*` string.
            7 => self.char_star(&path, lists),
            27 => return Err(refuse("an array of `char*` strings")),
            code @ (1..=19 | 21..=39) => {
                let (code, len) = if code > 20 {
                    (code - 20, el.array_length)
                } else {
                    (code, 1)
                };
                let stored = stored(code, el).ok_or_else(|| refuse("an unknown type"))??;
                if len == 0 {
                    return Err(refuse("an array of unknown length"));
                }
                self.basic(stored, len, &path, &el.type_name, lists)
            }
            code @ 41..=59 => {
                if el.array_length > 1 {
                    return Err(refuse("an array of pointer arrays"));
                }
                let stored = stored(code - 40, el).ok_or_else(|| refuse("an unknown type"))??;
                let counter = self.counter(info, parts, el).map_err(|why| refuse(&why))?;
                let type_name = el.type_name.trim_end_matches('*').trim();
                let column = self.basic_column(stored, 1, &path, type_name, lists + 1);
                self.readers += 1;
                Node::Pointer {
                    stored,
                    counter,
                    reader: self.readers - 1,
                    column,
                }
            }
            65 => self.string(false, &path, "TString", lists),
            300 | 500 => self.stl(&el.type_name, true, &path, &el.type_name, lists, depth)?,
            // kObjectp, kObjectP, kAnyp, kAnyP (and their arrays): pointers to objects,
            // skipped by their byte counts and refused as columns.
            63 | 64 | 68 | 69 | 83 | 84 | 88 | 89 => {
                self.refused.push((
                    path.clone(),
                    el.type_name.clone(),
                    "a pointer to an object, which evtc does not follow (the object's \
                     bytes are skipped)"
                        .into(),
                ));
                Node::Skip {
                    tagged: matches!(el.kind, 64 | 69 | 84 | 89),
                    len: el.array_length.max(1),
                }
            }
            // kStreamLoop: `T* x //[n]`, an array of objects behind a pointer.
            501 => {
                if el.array_length > 1 {
                    return Err(refuse("an array of arrays of objects behind pointers"));
                }
                let counter = self.counter(info, parts, el).map_err(|why| refuse(&why))?;
                let class = self.loop_class(&info.class, el)?;
                let element = self.class(class, true, &format!("{path}."), lists + 1, depth + 1)?;
                self.readers += 1;
                Node::Loop {
                    counter,
                    reader: self.readers - 1,
                    element: Box::new(element),
                }
            }
            code => {
                return Err(refuse(&format!(
                    "streamer element type {code}, which the interpreter does not read"
                )));
            }
        })
    }

    /// An object of class `info` with its header, or a fixed array of `len` of them (one list
    /// more).
    fn objects(
        &mut self,
        info: &StreamerInfo,
        len: usize,
        prefix: &str,
        lists: usize,
        depth: usize,
    ) -> Result<Node, String> {
        if len <= 1 {
            return self.class(info, true, prefix, lists, depth);
        }
        Ok(Node::Array {
            len,
            element: Box::new(self.class(info, true, prefix, lists + 1, depth)?),
        })
    }

    /// An object of a class with a streamer of its own, at `path` (empty: the branch itself):
    /// a `TObject`'s unique ID and bits as `path.fUniqueID` and `path.fBits`, a `TArrayX`'s
    /// values as the list `path`, a `TRefArray`'s unique IDs as the list `path.fUIDs`.
    fn custom(&mut self, custom: Custom, path: &str, lists: usize) -> Node {
        let join = |member: &str| match path {
            "" => member.to_owned(),
            p => format!("{p}.{member}"),
        };
        let u32s = Stored::Plain(ScalarType::U32);
        match custom {
            Custom::Object => Node::TObject {
                unique_id: self.basic_column(u32s, 1, &join("fUniqueID"), "UInt_t", lists),
                bits: self.basic_column(u32s, 1, &join("fBits"), "UInt_t", lists),
            },
            Custom::Array(t) => Node::TArray {
                stored: Stored::Plain(t),
                column: self.basic_column(Stored::Plain(t), 1, path, t.root_name(), lists + 1),
            },
            Custom::RefArray => Node::RefArray {
                column: self.basic_column(u32s, 1, &join("fUIDs"), "UInt_t", lists + 1),
            },
        }
    }

    /// A `TNamed` (`TNamed::Streamer`): its header, a `TObject`, then `prefix` + `fName` and
    /// `fTitle`.
    fn named(&mut self, prefix: &str, lists: usize) -> Node {
        let name = self.string(false, &format!("{prefix}fName"), "TString", lists);
        let title = self.string(false, &format!("{prefix}fTitle"), "TString", lists);
        Node::Object {
            header: true,
            parts: vec![
                Node::TObject {
                    unique_id: None,
                    bits: None,
                },
                name,
                title,
            ],
        }
    }

    /// The counter slot of the length of member `el` (`T* x; //[n]`): `n` must be an integer
    /// member of the same class streamed before it (`parts`, the nodes of the members before
    /// `el`, one per element of `info`).
    fn counter(
        &mut self,
        info: &StreamerInfo,
        parts: &mut [Node],
        el: &StreamerElement,
    ) -> Result<usize, String> {
        let at = info
            .elements
            .iter()
            .take(parts.len())
            .position(|e| e.name == el.count_name);
        match at.map(|j| &mut parts[j]) {
            Some(Node::Basic {
                stored: Stored::Plain(t),
                len: 1,
                counter,
                ..
            }) if !matches!(t, ScalarType::F32 | ScalarType::F64 | ScalarType::Bool) => {
                Ok(*counter.get_or_insert_with(|| {
                    self.counters += 1;
                    self.counters - 1
                }))
            }
            _ => Err(format!(
                "an array whose length `{}` is not an integer member before it",
                el.count_name
            )),
        }
    }

    /// The class of the objects of a `T* x; //[n]` member (kStreamLoop), each streamed by its
    /// class with a header; an array of pointers (`T** x`) is refused, and so is a class whose
    /// streamer info lists no members (its objects' bytes, written by a streamer of its own or
    /// none, are not described in the file).
    fn loop_class(&self, owner: &str, el: &StreamerElement) -> Result<&'s StreamerInfo, String> {
        let class = el.type_name.trim_end_matches('*').trim();
        let refuse = |what: &str| {
            format!(
                "member `{}` of class `{owner}` is a `{}` (an array of `{class}` {what}, counted \
                 by `{}`)",
                el.name, el.type_name, el.count_name
            )
        };
        if el.type_name.trim_end().ends_with("**") {
            return Err(refuse("pointers, which evtc does not follow"));
        }
        let info = self.info(class)?;
        if info.elements.is_empty() {
            return Err(refuse(
                "objects behind a pointer, a class whose streamer info lists no members: the \
                 file does not describe the objects' bytes",
            ));
        }
        Ok(info)
    }

    fn info(&self, class: &str) -> Result<&'s StreamerInfo, String> {
        self.streamers.single_info(class)
    }

    /// A part of STL type `type_name` (`header`: streamed with its own object header).
    fn stl(
        &mut self,
        type_name: &str,
        header: bool,
        path: &str,
        shown: &str,
        lists: usize,
        depth: usize,
    ) -> Result<Node, String> {
        let compact = crate::typename::compact(type_name);
        if matches!(compact.as_str(), "string" | "std::string") {
            return Ok(self.string(header, path, shown, lists));
        }
        if compact == "TString" {
            return Ok(self.string(false, path, shown, lists));
        }
        if depth > MAX_DEPTH {
            return Err(format!("`{type_name}` nests too deeply"));
        }
        if let Some((key, value)) = crate::typename::map_types(&compact) {
            if !header {
                return Err(format!(
                    "`{path}` is a `{type_name}` inside a container: maps are read as branches \
                     and as members of objects only"
                ));
            }
            let key = self.pair_member(&key, &format!("{path}.first"), lists + 1, depth)?;
            let value = self.pair_member(&value, &format!("{path}.second"), lists + 1, depth)?;
            return Ok(Node::Map {
                key: Box::new(key),
                value: Box::new(value),
            });
        }
        let Some(element) = crate::typename::vector_element(&compact) else {
            return Err(format!(
                "{}a `{type_name}`, not a std::vector, list, deque, set, map or string",
                if path.is_empty() {
                    String::new()
                } else {
                    format!("`{path}` is ")
                }
            ));
        };
        let element = if let Some(t) = crate::typename::scalar_type(&element) {
            self.basic(Stored::Plain(t), 1, path, &element, lists + 1)
        } else if element == "Double32_t" {
            self.basic(Stored::Double32, 1, path, &element, lists + 1)
        } else if crate::typename::vector_element(&element).is_some()
            || matches!(element.as_str(), "string" | "std::string" | "TString")
        {
            // The elements of an STL container are streamed without headers of their own.
            self.stl(&element, false, path, &element, lists + 1, depth + 1)?
        } else if let Some(custom) = Custom::of(&element) {
            self.custom(custom, path, lists + 1)
        } else {
            let info = self.info(&element)?;
            self.class(info, true, &format!("{path}."), lists + 1, depth + 1)?
        };
        Ok(Node::Vector {
            header,
            element: Box::new(element),
        })
    }

    /// The key or value of a map's pairs: a number, a `TString`, a string or vector (with the
    /// one object header a member-wise map writes before all of them), or an object (each with
    /// its own header).
    fn pair_member(
        &mut self,
        type_name: &str,
        path: &str,
        lists: usize,
        depth: usize,
    ) -> Result<Node, String> {
        let compact = crate::typename::compact(type_name);
        if let Some(t) = crate::typename::scalar_type(&compact) {
            return Ok(self.basic(Stored::Plain(t), 1, path, type_name, lists));
        }
        // A TString's streamer writes its characters alone: one after the other.
        if compact == "TString" {
            return Ok(self.string(false, path, type_name, lists));
        }
        if matches!(compact.as_str(), "string" | "std::string")
            || crate::typename::vector_element(&compact).is_some()
        {
            return self.stl(type_name, true, path, type_name, lists, depth + 1);
        }
        if crate::typename::map_types(&compact).is_some() {
            return Err(format!(
                "`{path}` is a `{type_name}`: maps of maps are not read"
            ));
        }
        // An object: each with its own header (byte count and version, checked).
        let info = self.info(&compact)?;
        self.class(info, true, &format!("{path}."), lists, depth + 1)
    }

    fn basic(
        &mut self,
        stored: Stored,
        len: usize,
        path: &str,
        type_name: &str,
        lists: usize,
    ) -> Node {
        let listed = len > 1 && lists > 0;
        let column = self.basic_column(stored, len, path, type_name, lists);
        Node::Basic {
            stored,
            len,
            column,
            counter: None,
            listed,
        }
    }

    /// The column of a basic member, `lists` lists deep.
    fn basic_column(
        &mut self,
        stored: Stored,
        len: usize,
        path: &str,
        type_name: &str,
        lists: usize,
    ) -> Option<usize> {
        let t = stored.output();
        match (lists, len) {
            (0, 1) => self.target(Some(ColumnKind::Scalar(t)), path, type_name, 0),
            (0, n) => self.target(Some(ColumnKind::Fixed(t, n)), path, type_name, 0),
            (lists, 1) => self.target(ColumnKind::of_lists(Some(t), lists), path, type_name, lists),
            // A fixed array in a list is one list more (`short[3][]`).
            (lists, n) => self.target(
                ColumnKind::of_lists(Some(t), lists + 1),
                path,
                &format!("{type_name}[{n}]"),
                lists,
            ),
        }
    }

    fn string(&mut self, header: bool, path: &str, type_name: &str, lists: usize) -> Node {
        let kind = ColumnKind::of_lists(None, lists);
        let column = self.target(kind, path, type_name, lists);
        Node::Str { header, column }
    }

    fn char_star(&mut self, path: &str, lists: usize) -> Node {
        let kind = ColumnKind::of_lists(None, lists);
        let column = self.target(kind, path, "char*", lists);
        Node::CharStar { column }
    }

    fn target(
        &mut self,
        kind: Option<ColumnKind>,
        path: &str,
        type_name: &str,
        lists: usize,
    ) -> Option<usize> {
        let Some(kind) = kind else {
            self.refused.push((
                path.to_owned(),
                type_name.to_owned(),
                format!(
                    "a value {lists} lists deep: evtc holds values at most {} lists deep",
                    ColumnKind::MAX_DEPTH
                ),
            ));
            return None;
        };
        // The C++ type of one value, then a `[]` per list around it (`unsigned int[][]`).
        self.targets.push(Target {
            path: path.to_owned(),
            kind,
            type_name: format!("{type_name}{}", "[]".repeat(lists)),
        });
        Some(self.targets.len() - 1)
    }
}

/// How a member of basic type `code` (ROOT's `kFloat`, `kDouble32`, ...) is stored; `None` for
/// a code that names no basic type, an error for a reduced float whose range cannot be read.
fn stored(code: i32, el: &StreamerElement) -> Option<Result<Stored, String>> {
    Some(match code {
        9 => Stored::reduced(ReducedFloat::Double32, el.range),
        19 => Stored::reduced(ReducedFloat::Float16, el.range),
        code => Ok(Stored::Plain(crate::streamer::basic(code)?)),
    })
}
