//! The file's `TStreamerInfo` records: for each class and class version, its members in order,
//! with their types and the comments ROOT keeps in their titles (where `Float16_t` and
//! `Double32_t` members declare their range and bit count, `//[xmin,xmax,nbits]`).

use std::collections::HashMap;

use crate::reduced::FloatRange;
use crate::typename::compact;
use crate::types::ScalarType;

mod parse;

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
    /// Of a base class (a `TStreamerBase` of version 2 or later): the base class's version the
    /// class was written with, which names the base's streamer info when the file has several.
    pub(crate) base_version: Option<i32>,
}

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
    pub(super) infos: HashMap<String, Vec<StreamerInfo>>,
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

    /// The layout of base class `base` (a base element of another class's info): the version
    /// the element names ([`StreamerElement::base_version`]) when the file has that one, else
    /// the only layout of the class.
    pub(crate) fn base_info(&self, base: &StreamerElement) -> Result<&StreamerInfo, String> {
        base.base_version
            .and_then(|v| {
                self.infos
                    .get(&compact(&base.name))?
                    .iter()
                    .find(|i| i.version == v)
            })
            .map_or_else(|| self.single_info(&base.name), Ok)
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

/// The basic type of streamer code `code` (1-19 but the reduced floats and `char*`).
pub(crate) fn basic(code: i32) -> Option<ScalarType> {
    Some(match code {
        1 => ScalarType::I8,
        2 => ScalarType::I16,
        3 | 6 => ScalarType::I32,
        4 | 16 => ScalarType::I64,
        5 => ScalarType::F32,
        8 => ScalarType::F64,
        11 => ScalarType::U8,
        12 => ScalarType::U16,
        13 | 15 => ScalarType::U32,
        14 | 17 => ScalarType::U64,
        18 => ScalarType::Bool,
        _ => return None,
    })
}

/// A ROOT class whose `Streamer` is written by hand, so that its streamer info does not describe
/// its bytes; evtc reads these by their known layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Custom {
    /// `TObject::Streamer`: a version without a byte count, the unique ID and the bits (and a
    /// process ID when the object is referenced).
    Object,
    /// `TArrayC`, `TArrayS`, `TArrayI`, `TArrayL`, `TArrayL64`, `TArrayF`, `TArrayD`: the length
    /// (a 32-bit integer) and the values, without a version or a byte count.
    Array(ScalarType),
    /// `TRefArray::Streamer`: a byte count and version, a `TObject`, the name, the number of
    /// references, the lower bound, the process ID, then a 32-bit unique ID per reference.
    RefArray,
}

impl Custom {
    /// The known layout of `class`, if its streamer is one of these.
    pub(crate) fn of(class: &str) -> Option<Custom> {
        Some(match compact(class).as_str() {
            "TObject" => Custom::Object,
            "TArrayC" => Custom::Array(ScalarType::I8),
            "TArrayS" => Custom::Array(ScalarType::I16),
            "TArrayI" => Custom::Array(ScalarType::I32),
            // Long_t is streamed as 64 bits.
            "TArrayL" | "TArrayL64" => Custom::Array(ScalarType::I64),
            "TArrayF" => Custom::Array(ScalarType::F32),
            "TArrayD" => Custom::Array(ScalarType::F64),
            "TRefArray" => Custom::RefArray,
            _ => return None,
        })
    }
}
