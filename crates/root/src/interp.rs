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

use crate::cursor::Cursor;
use crate::read::ColumnData;
use crate::streamer::{StreamerElement, StreamerInfo, Streamers};
use crate::tree::{ColumnKind, ReducedFloat, ScalarType, Stored};

/// Nesting deeper than this is refused (a class cannot contain itself by value).
const MAX_DEPTH: usize = 16;
/// `TObject::kIsReferenced`: a process ID follows the bits.
const IS_REFERENCED: u32 = 1 << 4;
/// The byte-count flag of an object header.
const BYTE_COUNT: u32 = 0x4000_0000;
/// A vector's version bit for member-wise streaming (each member of all elements in turn).
const MEMBER_WISE: u16 = 1 << 14;

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
    /// `TObject` bookkeeping: version, unique ID, bits (and a process ID when referenced).
    TObject,
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
}

/// What a plan starts from.
pub(crate) enum Root<'a> {
    /// An object of this class: with its header (`TBranchObject`, a vector's element) or its
    /// members alone (`TBranchElement`).
    Class {
        info: &'a StreamerInfo,
        header: bool,
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
    /// `class`: one object header, then the objects, each with its header, as many as fill it
    /// (their count is another member's branch).
    LoopMember {
        class: &'a str,
        el: &'a StreamerElement,
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
    let root = match root {
        Root::Class { info, header } => p.class(info, header, "", 0, 0)?,
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
        Root::LoopMember { class, el } => {
            let info = p.loop_class(class, el)?;
            Node::Object {
                header: true,
                parts: vec![Node::Fill {
                    element: Box::new(p.class(info, true, "", 1, 1)?),
                }],
            }
        }
    };
    Ok(Plan {
        root,
        targets: p.targets,
        refused: p.refused,
        counters: p.counters,
        readers: p.readers,
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
        let mut parts = Vec::new();
        for el in &info.elements {
            let refuse = |what: &str| {
                format!(
                    "member `{}` of class `{}` is a `{}` ({what})",
                    el.name, info.class, el.type_name
                )
            };
            let path = format!("{prefix}{}", el.name);
            let node = match el.kind {
                0 if el.name == "TObject" => Node::TObject,
                66 => Node::TObject,
                0 => self.class(self.info(&el.name)?, true, prefix, lists, depth + 1)?,
                // An object, or a fixed array of them (kOffsetL + kObject, kAny).
                61 | 62 | 81 | 82 => {
                    let info = self.info(&el.type_name)?;
                    self.objects(info, el.array_length, &format!("{path}."), lists, depth + 1)?
                }
                // kCharStar: a `char*` string.
                7 => self.char_star(&path, lists),
                27 => return Err(refuse("an array of `char*` strings")),
                code @ (1..=19 | 21..=39) => {
                    let (code, len) = if code > 20 {
                        (code - 20, el.array_length)
                    } else {
                        (code, 1)
                    };
                    let stored = match code {
                        9 => Stored::reduced(ReducedFloat::Double32, el.range)?,
                        19 => Stored::reduced(ReducedFloat::Float16, el.range)?,
                        code => Stored::Plain(
                            crate::plan::basic(code).ok_or_else(|| refuse("an unknown type"))?,
                        ),
                    };
                    if len == 0 {
                        return Err(refuse("an array of unknown length"));
                    }
                    self.basic(stored, len, &path, &el.type_name, lists)
                }
                code @ 41..=59 => {
                    if el.array_length > 1 {
                        return Err(refuse("an array of pointer arrays"));
                    }
                    let stored = match code - 40 {
                        9 => Stored::reduced(ReducedFloat::Double32, el.range)?,
                        19 => Stored::reduced(ReducedFloat::Float16, el.range)?,
                        code => Stored::Plain(
                            crate::plan::basic(code).ok_or_else(|| refuse("an unknown type"))?,
                        ),
                    };
                    let counter = self
                        .counter(info, &mut parts, el)
                        .map_err(|why| refuse(&why))?;
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
                // kObjectp, kObjectP, kAnyp, kAnyP (and their arrays): pointers to objects.
                63 | 64 | 68 | 69 | 83 | 84 | 88 | 89 => {
                    return Err(refuse("a pointer to an object, which evtc does not follow"));
                }
                // kStreamLoop: `T* x //[n]`, an array of objects behind a pointer.
                501 => {
                    if el.array_length > 1 {
                        return Err(refuse("an array of arrays of objects behind pointers"));
                    }
                    let counter = self
                        .counter(info, &mut parts, el)
                        .map_err(|why| refuse(&why))?;
                    let class = self.loop_class(&info.class, el)?;
                    let element =
                        self.class(class, true, &format!("{path}."), lists + 1, depth + 1)?;
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
            };
            parts.push(node);
        }
        Ok(Node::Object { header, parts })
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
        self.streamers
            .only_info(class)
            .ok_or_else(|| format!("the file has no single streamer info for class `{class}`"))
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
        let compact = crate::streamer::compact(type_name);
        if matches!(compact.as_str(), "string" | "std::string") {
            return Ok(self.string(header, path, shown, lists));
        }
        if compact == "TString" {
            return Ok(self.string(false, path, shown, lists));
        }
        if depth > MAX_DEPTH {
            return Err(format!("`{type_name}` nests too deeply"));
        }
        if let Some((key, value)) = crate::columns::map_types(&compact) {
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
        let Some(element) = crate::columns::vector_element(&compact) else {
            return Err(format!(
                "`{path}` is a `{type_name}`, not a std::vector, set, map or string"
            ));
        };
        let element = if let Some(t) = crate::columns::scalar_type(&element) {
            self.basic(Stored::Plain(t), 1, path, &element, lists + 1)
        } else if element == "Double32_t" {
            self.basic(Stored::Double32, 1, path, &element, lists + 1)
        } else if crate::columns::vector_element(&element).is_some()
            || matches!(element.as_str(), "string" | "std::string" | "TString")
        {
            // The elements of an STL container are streamed without headers of their own.
            self.stl(&element, false, path, &element, lists + 1, depth + 1)?
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
        let compact = crate::streamer::compact(type_name);
        if let Some(t) = crate::columns::scalar_type(&compact) {
            return Ok(self.basic(Stored::Plain(t), 1, path, type_name, lists));
        }
        // A TString's streamer writes its characters alone: one after the other.
        if compact == "TString" {
            return Ok(self.string(false, path, type_name, lists));
        }
        if matches!(compact.as_str(), "string" | "std::string")
            || crate::columns::vector_element(&compact).is_some()
        {
            return self.stl(type_name, true, path, type_name, lists, depth + 1);
        }
        if crate::columns::map_types(&compact).is_some() {
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

/// What the walk of one entry keeps: column `target`'s values and the boundaries of its lists
/// below the entry's own (the entry's offset is the caller's to end).
pub(crate) struct Walk<'o> {
    pub(crate) target: usize,
    pub(crate) out: &'o mut ColumnData,
    /// Whether the target holds strings (each string ends an item of the first level).
    pub(crate) strings: bool,
    /// The lengths read from each counter slot in this entry ([`Plan::counters`] of them;
    /// empty at the start of each entry): the `k`-th array of a member reads the `k`-th value
    /// of its counter, whether the objects are streamed one by one (counter, array, counter,
    /// array) or member-wise (every counter, then every array).
    pub(crate) counters: &'o mut [Vec<u64>],
    /// How many lengths each pointer array has used in this entry ([`Plan::readers`] of them;
    /// zeros at the start of each entry).
    pub(crate) read: &'o mut [usize],
}

impl Walk<'_> {
    /// Reads `node` from `c`; errors say what did not fit.
    pub(crate) fn node(&mut self, node: &Node, c: &mut Cursor<'_>) -> Result<(), String> {
        match node {
            Node::Basic {
                stored,
                len,
                column,
                counter,
                listed,
            } => {
                let bytes = c
                    .take(stored.size() * len)
                    .map_err(|_| "a value runs past the entry".to_owned())?;
                if *column == Some(self.target) {
                    self.out.values.extend_stored(*stored, bytes)?;
                    if *listed {
                        self.list_end(Some(0));
                    }
                }
                if let Some(slot) = counter {
                    // A signed big-endian integer of 1, 2, 4 or 8 bytes (an unsigned counter
                    // with its top bit set is refused below as negative: no array is that long).
                    let n = crate::cursor::signed_be(bytes)
                        .ok_or("a pointer array's counter holds no value")?;
                    let n = u64::try_from(n)
                        .map_err(|_| format!("a pointer array's length is negative ({n})"))?;
                    self.counters[*slot].push(n);
                }
            }
            Node::Pointer {
                stored,
                counter,
                reader,
                column,
            } => {
                let n = self.next_length(*counter, *reader)?;
                let present = c.u8().map_err(|_| "a pointer array runs past the entry")?;
                let n = if present == 0 { 0 } else { n };
                let bytes = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_mul(stored.size()))
                    .filter(|&b| b <= c.remaining())
                    .ok_or_else(|| format!("a pointer array of {n} values runs past the entry"))?;
                let bytes = c
                    .take(bytes)
                    .map_err(|_| "a pointer array runs past the entry")?;
                if *column == Some(self.target) {
                    self.out.values.extend_stored(*stored, bytes)?;
                    self.list_end(Some(0));
                }
            }
            Node::Loop {
                counter,
                reader,
                element,
            } => {
                let (end, _) = object_header(c)?;
                self.loop_objects(*counter, *reader, element, c)?;
                if c.pos() != end {
                    return Err(
                        "an array of objects behind a pointer does not fill its byte count".into(),
                    );
                }
            }
            Node::TObject => {
                let v = c.u16().map_err(|_| "a TObject runs past the entry")?;
                if u32::from(v) << 16 & BYTE_COUNT != 0 {
                    c.skip(4).map_err(|_| "a TObject runs past the entry")?;
                }
                c.skip(4).map_err(|_| "a TObject runs past the entry")?;
                let bits = c.u32().map_err(|_| "a TObject runs past the entry")?;
                if bits & IS_REFERENCED != 0 {
                    c.skip(2).map_err(|_| "a TObject runs past the entry")?;
                }
            }
            Node::Object { header, parts } => {
                let end = if *header {
                    Some(object_header(c)?.0)
                } else {
                    None
                };
                for part in parts {
                    self.node(part, c)?;
                }
                if let Some(end) = end
                    && c.pos() != end
                {
                    return Err(format!(
                        "an object's parts end at byte {} of the entry where its byte count \
                         says {end}",
                        c.pos()
                    ));
                }
            }
            Node::Vector { header, element } => self.vector(*header, element, c)?,
            Node::Fill { element } => {
                while c.remaining() > 0 {
                    self.node(element, c)?;
                }
                self.list_end(self.distance(element));
            }
            Node::Array { len, element } => {
                for _ in 0..*len {
                    self.node(element, c)?;
                }
                self.list_end(self.distance(element));
            }
            Node::Str { header, column } => self.string(*header, *column, c)?,
            Node::CharStar { column } => {
                let chars = c
                    .char_star()
                    .map_err(|_| "a char* string runs past the entry")?;
                self.keep_string(*column, chars)?;
            }
            Node::Map { key, value } => self.map(key, value, c)?,
        }
        Ok(())
    }

    /// A map: its object header (marked member-wise), the pair's class version (and checksum
    /// after version 0), the size, then the keys and the values as [`Walk::members`] reads them.
    fn map(&mut self, key: &Node, value: &Node, c: &mut Cursor<'_>) -> Result<(), String> {
        let (end, version) = object_header(c)?;
        if version & MEMBER_WISE == 0 {
            return Err(
                "a map written pair by pair (object-wise), which evtc does not read".into(),
            );
        }
        // Before header version 8 (ROOT 5) no pair version was written.
        if version & !MEMBER_WISE < 8 {
            return Err(format!(
                "a map written member-wise with header version {}, before ROOT 6's layout",
                version & !MEMBER_WISE
            ));
        }
        if c.u16().map_err(|_| "a map header runs past the entry")? == 0 {
            c.skip(4).map_err(|_| "a map header runs past the entry")?;
        }
        let n = c
            .count("map size")
            .map_err(|_| "a map's size runs past the entry")?;
        if n > c.remaining() {
            return Err(format!("a map of {n} pairs cannot fit in the entry"));
        }
        self.members(key, n, c)?;
        self.members(value, n, c)?;
        self.list_end(self.distance(key).or_else(|| self.distance(value)));
        if c.pos() != end {
            return Err("a map's keys and values do not fill its byte count".into());
        }
        Ok(())
    }

    /// The length of the next array read by pointer array `reader` from its counter slot.
    fn next_length(&mut self, counter: usize, reader: usize) -> Result<u64, String> {
        let k = self.read[reader];
        let n = *self.counters[counter]
            .get(k)
            .ok_or("a pointer array before its length")?;
        self.read[reader] = k + 1;
        Ok(n)
    }

    /// The objects of one `T* x; //[n]` array: as many as its counter's next length.
    fn loop_objects(
        &mut self,
        counter: usize,
        reader: usize,
        element: &Node,
        c: &mut Cursor<'_>,
    ) -> Result<(), String> {
        let n = self.next_length(counter, reader)?;
        // Every object takes its header's 6 bytes at least: a lying length fails here.
        if n > c.remaining() as u64 {
            return Err(format!(
                "an array of {n} objects behind a pointer cannot fit in the entry"
            ));
        }
        for _ in 0..n {
            self.node(element, c)?;
        }
        self.list_end(self.distance(element));
        Ok(())
    }

    /// One member of `n` objects streamed member-wise: an STL member, or a `T* x; //[n]` array of
    /// objects, as one object header, then each object's without its own (nothing at all when
    /// `n` is 0); any other `n` times.
    fn members(&mut self, part: &Node, n: usize, c: &mut Cursor<'_>) -> Result<(), String> {
        match part {
            Node::Loop {
                counter,
                reader,
                element,
            } => self.grouped(c, n, |w, c| w.loop_objects(*counter, *reader, element, c)),
            Node::Vector {
                header: true,
                element,
            } => self.grouped(c, n, |w, c| w.vector(false, element, c)),
            Node::Str {
                header: true,
                column,
            } => self.grouped(c, n, |w, c| w.string(false, *column, c)),
            part => {
                for _ in 0..n {
                    self.node(part, c)?;
                }
                Ok(())
            }
        }
    }

    /// Marks the end of a list whose elements hold the target `distance` lists further in
    /// (`Some(0)`: the elements are the target's values or strings; `None`: the target is not
    /// in them). The outermost list is the entry, whose end the caller marks.
    fn list_end(&mut self, distance: Option<usize>) {
        if let Some(d) = distance {
            let level = d + usize::from(self.strings);
            if level < self.out.levels.len() {
                self.out.close(level);
            }
        }
    }

    /// A vector: with `header`, its byte count and version (a version marked member-wise: the
    /// elements' class version, then each member of all elements in turn), then its size and
    /// elements.
    fn vector(&mut self, header: bool, element: &Node, c: &mut Cursor<'_>) -> Result<(), String> {
        let mut member_wise = false;
        let end = if header {
            let (end, version) = object_header(c)?;
            if version & MEMBER_WISE != 0 {
                let Node::Object { header: true, .. } = element else {
                    return Err("a vector of non-objects marked member-wise".into());
                };
                let v = c.u16().map_err(|_| "a vector header runs past the entry")?;
                if v == 0 {
                    c.skip(4)
                        .map_err(|_| "a vector header runs past the entry")?;
                }
                member_wise = true;
            }
            Some(end)
        } else {
            None
        };
        let n = c
            .count("vector size")
            .map_err(|_| "a vector's size runs past the entry")?;
        // Every element takes a byte at least: a lying size fails here, not later.
        if n > c.remaining() {
            return Err(format!("a vector of {n} elements cannot fit in the entry"));
        }
        match element {
            Node::Object { parts, .. } if member_wise => {
                // Each target is in one part, so its values come in element order.
                for part in parts {
                    self.members(part, n, c)?;
                }
            }
            element => {
                for _ in 0..n {
                    self.node(element, c)?;
                }
            }
        }
        self.list_end(self.distance(element));
        if let Some(end) = end
            && c.pos() != end
        {
            return Err("a vector's elements do not fill its byte count".into());
        }
        Ok(())
    }

    /// One object header, then `n` parts read by `part`, which must fill its byte count;
    /// nothing at all when `n` is 0.
    fn grouped(
        &mut self,
        c: &mut Cursor<'_>,
        n: usize,
        part: impl Fn(&mut Self, &mut Cursor<'_>) -> Result<(), String>,
    ) -> Result<(), String> {
        if n == 0 {
            return Ok(());
        }
        let (end, _) = object_header(c)?;
        for _ in 0..n {
            part(self, c)?;
        }
        if c.pos() != end {
            return Err("the members of a member-wise vector do not fill their byte count".into());
        }
        Ok(())
    }

    /// A string: with `header`, after an object header whose byte count it must fill.
    fn string(
        &mut self,
        header: bool,
        column: Option<usize>,
        c: &mut Cursor<'_>,
    ) -> Result<(), String> {
        let end = if header {
            Some(object_header(c)?.0)
        } else {
            None
        };
        let len = match c.u8().map_err(|_| "a string runs past the entry")? {
            255 => c
                .count("string length")
                .map_err(|_| "a string runs past the entry")?,
            n => usize::from(n),
        };
        let bytes = c
            .take(len)
            .map_err(|_| "a string runs past the entry".to_owned())?;
        self.keep_string(column, bytes)?;
        if let Some(end) = end
            && c.pos() != end
        {
            return Err("a string does not fill its byte count".into());
        }
        Ok(())
    }

    /// Keeps a string's characters if `column` is the target.
    fn keep_string(&mut self, column: Option<usize>, chars: &[u8]) -> Result<(), String> {
        if column == Some(self.target) {
            self.out
                .values
                .extend_stored(Stored::Plain(ScalarType::U8), chars)?;
            if self.strings {
                self.out.close(0);
            }
        }
        Ok(())
    }

    /// How many lists lie between `node` and the target's values or strings (`Some(0)`: `node`
    /// holds them itself), or `None` if the target is not in `node`.
    fn distance(&self, node: &Node) -> Option<usize> {
        let mine = |column: &Option<usize>| *column == Some(self.target);
        match node {
            Node::Basic { column, listed, .. } => mine(column).then_some(usize::from(*listed)),
            Node::Str { column, .. } | Node::CharStar { column } => mine(column).then_some(0),
            // A pointer array is a list of its own.
            Node::Pointer { column, .. } => mine(column).then_some(1),
            Node::Object { parts, .. } => parts.iter().find_map(|p| self.distance(p)),
            Node::Vector { element, .. }
            | Node::Fill { element }
            | Node::Array { element, .. }
            | Node::Loop { element, .. } => self.distance(element).map(|d| d + 1),
            Node::Map { key, value } => self
                .distance(key)
                .or_else(|| self.distance(value))
                .map(|d| d + 1),
            Node::TObject => None,
        }
    }
}

/// Reads an object header (byte count, version, and a checksum after version 0: ROOT's
/// `WriteVersion` for classes without a dictionary version) and returns where the object ends
/// and its version.
fn object_header(c: &mut Cursor<'_>) -> Result<(usize, u16), String> {
    let start = c.pos();
    let bcnt = c
        .u32()
        .map_err(|_| "an object header runs past the entry")?;
    if bcnt & BYTE_COUNT == 0 {
        return Err("an object without a byte count".into());
    }
    let end = start + 4 + (bcnt & !BYTE_COUNT) as usize;
    let version = c
        .u16()
        .map_err(|_| "an object header runs past the entry")?;
    if version & !MEMBER_WISE == 0 {
        c.skip(4)
            .map_err(|_| "an object header runs past the entry")?; // checksum
    }
    Ok((end, version))
}
