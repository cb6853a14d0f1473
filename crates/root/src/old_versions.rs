//! Records of class versions this reader has no fixed layout for (the `TTree` 5, `TBranch` 8 and
//! `TBranchElement` 1 of ROOT 4 files and of Geant4's g4tools, which writes those versions
//! today), read member by member as the file's own `TStreamerInfo` lists them.
//!
//! [`Parser::walk`] reads the members in order: numbers (as `f64`, exact up to 2^53) and
//! strings are kept by name, base classes and embedded objects are skipped by their byte counts,
//! fixed arrays by their size, pointer arrays by the earlier member that counts them; the caller
//! reads the members it needs itself (the branch and leaf arrays, the basket tables) and may stop
//! the walk, the rest of the record being skipped by its own byte count.

use std::collections::HashMap;

use crate::error::Result;
use crate::objects::Parser;
use crate::streamer::{StreamerElement, basic};
use crate::types::ScalarType;

/// What the caller of [`Parser::walk`] did with a member.
pub(crate) enum Step {
    /// Read it.
    Read,
    /// Left it to the walk.
    Walk,
    /// Read it, and wants no more members.
    Stop,
}

/// The numbers and strings a [`Parser::walk`] read, by member name.
#[derive(Debug, Default)]
pub(crate) struct Members {
    numbers: HashMap<String, f64>,
    strings: HashMap<String, String>,
}

impl Members {
    /// The number member `name`, if it was read.
    pub(crate) fn number(&self, name: &str) -> Option<f64> {
        self.numbers.get(name).copied()
    }

    /// The number member `name` as a count or size: a whole number from 0 to 2^53.
    pub(crate) fn count(&self, name: &str) -> Option<usize> {
        self.number(name)
            .filter(|v| v.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(v))
            .map(|v| v as usize)
    }

    /// The string member `name` (a `TString`, or `fName`/`fTitle` of a `TNamed` base).
    pub(crate) fn string(&self, name: &str) -> Option<&str> {
        self.strings.get(name).map(String::as_str)
    }
}

/// Bytes of a basic value of streamer type `kind` (1-19).
fn basic_size(kind: i32) -> Option<usize> {
    match kind {
        // Double32_t and Float16_t as streamed without a range: 32 bits.
        9 | 19 => Some(4),
        _ => basic(kind).map(ScalarType::size),
    }
}

/// The counter of a pointer array member, from its comment: `[fMaxBaskets] Length of baskets`.
fn counter(title: &str) -> Option<&str> {
    title.trim_start().strip_prefix('[')?.split(']').next()
}

impl Parser<'_> {
    /// Reads `elements` (members of one class version, in stream order) with `custom` first:
    /// it reads the members it knows ([`Step::Read`] or [`Step::Stop`]) and leaves the others to
    /// the walk ([`Step::Walk`]), seeing what was read so far.
    ///
    /// # Errors
    /// The record's errors, or [`crate::Error::Corrupt`] for a member this walk cannot read or
    /// skip (an object without a byte count, an array whose counter is unknown).
    pub(crate) fn walk(
        &mut self,
        class: &str,
        elements: &[StreamerElement],
        mut custom: impl FnMut(&mut Self, &StreamerElement, &Members) -> Result<Step>,
    ) -> Result<Members> {
        let mut members = Members::default();
        for el in elements {
            match custom(self, el, &members)? {
                Step::Read => continue,
                Step::Stop => break,
                Step::Walk => {}
            }
            let unreadable = |why: &str| {
                format!(
                    "member `{}` of class {class} (a `{}`, streamer type {}) {why}",
                    el.name, el.type_name, el.kind
                )
            };
            match el.kind {
                67 => {
                    let (name, title) = self.named()?;
                    members.strings.insert("fName".into(), name);
                    members.strings.insert("fTitle".into(), title);
                }
                66 => {
                    self.tobject()?;
                }
                0 | 61 | 300 | 500 => self.skip_object()?,
                63 | 64 => self.skip_any()?,
                65 => {
                    let s = self.c.string()?;
                    members.strings.insert(el.name.clone(), s);
                }
                kind @ 1..=19 => {
                    let value = self
                        .basic(kind)
                        .map_err(|_| self.c.error(unreadable("runs past the record")))?;
                    members.numbers.insert(el.name.clone(), value);
                }
                kind @ 21..=39 => {
                    let size = basic_size(kind - 20)
                        .ok_or_else(|| self.c.error(unreadable("is an array of unknown values")))?;
                    self.c.skip(size.saturating_mul(el.array_length))?;
                }
                kind @ 41..=59 => {
                    let size = basic_size(kind - 40)
                        .ok_or_else(|| self.c.error(unreadable("is an array of unknown values")))?;
                    let n = counter(&el.title)
                        .and_then(|name| members.count(name))
                        .ok_or_else(|| {
                            self.c
                                .error(unreadable("is an array whose counter was not read"))
                        })?;
                    if self.c.u8()? != 0 {
                        self.c.skip(size.saturating_mul(n))?;
                    }
                }
                _ => return Err(self.c.error(unreadable("cannot be read or skipped"))),
            }
        }
        Ok(members)
    }

    /// A basic value of streamer type `kind` (1-19), as `f64`.
    fn basic(&mut self, kind: i32) -> Result<f64> {
        let c = &mut self.c;
        Ok(match kind {
            1 => f64::from(c.u8()? as i8),
            2 => f64::from(c.i16()?),
            3 | 6 => f64::from(c.i32()?),
            4 | 16 => c.i64()? as f64,
            5 | 9 | 19 => f64::from(f32::from_bits(c.u32()?)),
            8 => f64::from_bits(c.i64()? as u64),
            11 | 18 => f64::from(c.u8()?),
            12 => f64::from(c.u16()?),
            13 | 15 => f64::from(c.u32()?),
            _ => c.i64()? as u64 as f64,
        })
    }
}
