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
