//! Decoding plans from the file's streamer infos: where each basic member of an unsplit object
//! lies in its streamed bytes.
//!
//! An object streamed by `TBufferFile::WriteClassBuffer` is a byte count and a version, then its
//! members in streamer-info order (an unsplit branch writes its top object's members without that
//! header): base classes (each an object of its own, `TObject` a bare
//! version, unique ID and bits), basic values and fixed arrays, member objects. When every part
//! has a fixed size, every entry of an unsplit branch has the same size and each basic member
//! sits at the same offset: one [`Layout::Fixed`] column per member reads it. A reader checks
//! that each entry has exactly that size, so a stream that differs (a variable-size part, a
//! `TObject` with a reference) is refused, never misread.
//!
//! [`Layout::Fixed`]: crate::ttree::column::Layout::Fixed

use crate::reduced::{ReducedFloat, Stored};
use crate::streamer::{Custom, StreamerInfo, Streamers, basic};

/// One basic member of a fixed-size object.
#[derive(Debug, Clone)]
pub(crate) struct FixedMember {
    /// Dotted path below the object: `fP.fX`.
    pub(crate) path: String,
    /// How the values are stored.
    pub(crate) stored: Stored,
    /// Values per entry (fixed arrays), at least 1.
    pub(crate) len: usize,
    /// Byte offset in the entry.
    pub(crate) offset: usize,
    /// A multi-dimensional array's dimensions; empty otherwise.
    pub(crate) dims: Vec<usize>,
    /// The member's C++ type.
    pub(crate) type_name: String,
}

/// `TStreamerInfo::EReadWrite` codes of the element kinds a fixed-size object may hold.
const BASE: i32 = 0;
const OBJECT: i32 = 61;
const TOBJECT: i32 = 66;
/// An object streamed by its class: byte count (4) and version (2).
const HEADER_BYTES: usize = 6;
/// A `TObject` streamed as a base or member: version (2), unique ID (4), bits (4).
const TOBJECT_BYTES: usize = 10;
/// Nesting deeper than this is refused (a class cannot contain itself by value).
const MAX_DEPTH: usize = 16;

/// The basic members of an object of `info`'s class, streamed whole, and the size of one
/// object; or why its streamed size is not fixed. `TObject` parts are skipped (unique ID and
/// bits are bookkeeping, not data).
///
/// With `header`, entries start with the object's byte count and version (`TBranchObject`,
/// which calls the object's `Streamer`); without, with its first member (`TBranchElement`,
/// whose `FillLeavesMember` streams the members only).
pub(crate) fn fixed_object(
    streamers: &Streamers,
    info: &StreamerInfo,
    header: bool,
) -> Result<(Vec<FixedMember>, usize), String> {
    let mut members = Vec::new();
    let mut offset = 0;
    walk(streamers, info, "", &mut offset, &mut members, 0)?;
    if header {
        return Ok((members, offset));
    }
    for m in &mut members {
        m.offset -= HEADER_BYTES;
    }
    Ok((members, offset - HEADER_BYTES))
}

fn walk(
    streamers: &Streamers,
    info: &StreamerInfo,
    prefix: &str,
    offset: &mut usize,
    out: &mut Vec<FixedMember>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("class `{}` nests objects too deeply", info.class));
    }
    if Custom::of(&info.class).is_some() {
        // Its own streamer writes no header, or a varying size: the interpreter's to read.
        return Err(format!(
            "class `{}` is streamed by a streamer of its own, not member by member",
            info.class
        ));
    }
    *offset += HEADER_BYTES;
    let nested = |class: &str| streamers.single_info(class);
    for el in &info.elements {
        let refuse = || {
            format!(
                "member `{}` of class `{}` is a `{}`, whose streamed size is not fixed",
                el.name, info.class, el.type_name
            )
        };
        match el.kind {
            BASE if el.name == "TObject" => *offset += TOBJECT_BYTES,
            BASE => {
                let base = streamers.base_info(el)?;
                walk(streamers, base, prefix, offset, out, depth + 1)?;
            }
            TOBJECT => *offset += TOBJECT_BYTES,
            OBJECT => {
                let path = format!("{prefix}{}.", el.name);
                walk(
                    streamers,
                    nested(&el.type_name)?,
                    &path,
                    offset,
                    out,
                    depth + 1,
                )?;
            }
            code @ (1..=19 | 21..=39) => {
                let (code, len) = if code > 20 {
                    (code - 20, el.array_length)
                } else {
                    (code, 1)
                };
                if len == 0 {
                    return Err(refuse());
                }
                let stored = match code {
                    9 => Stored::reduced(ReducedFloat::Double32, el.range)?,
                    19 => Stored::reduced(ReducedFloat::Float16, el.range)?,
                    code => Stored::Plain(basic(code).ok_or_else(refuse)?),
                };
                out.push(FixedMember {
                    path: format!("{prefix}{}", el.name),
                    stored,
                    len,
                    offset: *offset,
                    dims: el.dims.clone(),
                    type_name: el.type_name.clone(),
                });
                *offset += stored.size() * len;
            }
            _ => return Err(refuse()),
        }
    }
    Ok(())
}
