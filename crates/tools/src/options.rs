//! The values of settings: per-branch settings ([`BranchSettings`]), the choices the writer can
//! be left to make ([`PreconditionChoice`], [`BoundaryChoice`]), and their spellings (`FromStr`
//! and `Display`: `delta`, `counts`), which [`Settings`](crate::Settings) parses.

use evtc_codecs::{Codec, Precondition, Quantization, Width};
use evtc_format::RacMode;

/// How entry boundaries of variable-length branches are stored (see docs/format.md 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundaryChoice {
    /// The format's default: `counts` without a counter branch; with one, `none`, or `counts`
    /// where the branch uses RAC (its units then hold their entries' sizes, so that reading one
    /// entry touches one unit).
    #[default]
    Auto,
    /// Per-entry offsets with the values, as ROOT stores them.
    Offsets,
    /// Per-entry counts in their own stream.
    Counts,
    /// No boundaries where a counter branch gives them (`counts` elsewhere).
    None,
}

impl std::fmt::Display for BoundaryChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BoundaryChoice::Auto => "auto",
            BoundaryChoice::Offsets => "offsets",
            BoundaryChoice::Counts => "counts",
            BoundaryChoice::None => "none",
        })
    }
}

impl std::str::FromStr for BoundaryChoice {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<BoundaryChoice, String> {
        Ok(match s {
            "auto" => BoundaryChoice::Auto,
            "offsets" => BoundaryChoice::Offsets,
            "counts" => BoundaryChoice::Counts,
            "none" => BoundaryChoice::None,
            other => {
                return Err(format!(
                    "unknown entry boundaries {other:?}: expected auto, offsets, counts or none"
                ));
            }
        })
    }
}

/// The preconditioner applied to every branch's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreconditionChoice {
    /// Left to the writer, which measures the candidates on each branch's first basket
    /// ([`evtc_format::auto_precondition`] says how).
    #[default]
    Auto,
    /// No preconditioner.
    None,
    /// Byte shuffle at the value width.
    Shuffle,
    /// Bit shuffle at the value width.
    BitShuffle,
    /// Delta coding at the value width.
    Delta,
    /// Delta coding, then the byte shuffle, at the value width.
    DeltaShuffle,
    /// Frame of reference and bit-packing at the value width.
    For,
    /// Delta coding, then frame of reference and bit-packing, at the value width.
    DeltaFor,
    /// Delta coding as LEB128 varints at the value width.
    DeltaVarint,
    /// Zigzag of each value, then the byte shuffle, at the value width.
    ZigzagShuffle,
    /// The most common value and the positions and values of the others, at the value width.
    Sparse,
    /// Run-length encoding of the values, at the value width.
    Runs,
    /// Bitshuffle without its constant bit-planes, at the value width.
    BitPlanes,
}

impl PreconditionChoice {
    /// The preconditioner of this choice for values `width` bytes wide; `None` for `Auto`.
    pub fn at(self, width: Width) -> Option<Precondition> {
        Some(match self {
            PreconditionChoice::Auto => return None,
            PreconditionChoice::None => Precondition::None,
            PreconditionChoice::Shuffle => Precondition::Shuffle(width),
            PreconditionChoice::BitShuffle => Precondition::BitShuffle(width),
            PreconditionChoice::Delta => Precondition::Delta(width),
            PreconditionChoice::DeltaShuffle => Precondition::DeltaShuffle(width),
            PreconditionChoice::For => Precondition::For(width),
            PreconditionChoice::DeltaFor => Precondition::DeltaFor(width),
            PreconditionChoice::DeltaVarint => Precondition::DeltaVarint(width),
            PreconditionChoice::ZigzagShuffle => Precondition::ZigzagShuffle(width),
            PreconditionChoice::Sparse => Precondition::Sparse(width),
            PreconditionChoice::Runs => Precondition::Runs(width),
            PreconditionChoice::BitPlanes => Precondition::BitPlanes(width),
        })
    }
}

impl From<Precondition> for PreconditionChoice {
    /// The choice of `precondition`'s kind (its width is always the values' own).
    fn from(precondition: Precondition) -> PreconditionChoice {
        match precondition {
            Precondition::None => PreconditionChoice::None,
            Precondition::Shuffle(_) => PreconditionChoice::Shuffle,
            Precondition::BitShuffle(_) => PreconditionChoice::BitShuffle,
            Precondition::Delta(_) => PreconditionChoice::Delta,
            Precondition::DeltaShuffle(_) => PreconditionChoice::DeltaShuffle,
            Precondition::For(_) => PreconditionChoice::For,
            Precondition::DeltaFor(_) => PreconditionChoice::DeltaFor,
            Precondition::DeltaVarint(_) => PreconditionChoice::DeltaVarint,
            Precondition::ZigzagShuffle(_) => PreconditionChoice::ZigzagShuffle,
            Precondition::Sparse(_) => PreconditionChoice::Sparse,
            Precondition::Runs(_) => PreconditionChoice::Runs,
            Precondition::BitPlanes(_) => PreconditionChoice::BitPlanes,
        }
    }
}

impl std::fmt::Display for PreconditionChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.at(Width::W1) {
            None => f.write_str("auto"),
            Some(p) => f.write_str(p.name()),
        }
    }
}

impl std::str::FromStr for PreconditionChoice {
    type Err = String;

    /// `auto`, or a preconditioner's name without its width (`none`, `delta`, `bitshuffle`: the
    /// names of [`Precondition::names`]).
    fn from_str(s: &str) -> std::result::Result<PreconditionChoice, String> {
        if s == "auto" {
            return Ok(PreconditionChoice::Auto);
        }
        Precondition::from_name(s, Width::W1)
            .map(PreconditionChoice::from)
            .ok_or_else(|| {
                let names: Vec<&str> = std::iter::once("auto")
                    .chain(Precondition::names())
                    .collect();
                format!(
                    "unknown preconditioner {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// Settings of the branches a glob matches, over the file-wide ones; a field left `None` keeps
/// the file-wide setting (or an earlier rule's).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BranchSettings {
    /// The codec.
    pub codec: Option<Codec>,
    /// The preconditioner.
    pub precondition: Option<PreconditionChoice>,
    /// Random-access compression.
    pub rac: Option<RacMode>,
    /// Entry boundaries of variable-length branches.
    pub boundaries: Option<BoundaryChoice>,
    /// Float values rounded to this many mantissa bits (lossy: see
    /// [`evtc_codecs::round_mantissa_f32`]).
    pub mantissa_bits: Option<u32>,
    /// Float values quantized into a range (lossy: see [`Quantization`]); a value outside it
    /// fails the conversion.
    pub quantize: Option<Quantization>,
}

impl BranchSettings {
    /// Settings that change the codec alone.
    pub fn codec(codec: Codec) -> BranchSettings {
        BranchSettings {
            codec: Some(codec),
            ..BranchSettings::default()
        }
    }
}

/// The two key branches of an event index as users write them: `run,event`.
///
/// ```
/// assert_eq!(
///     evtc_tools::parse_index_keys("run,event"),
///     Ok(("run".to_owned(), "event".to_owned()))
/// );
/// assert!(evtc_tools::parse_index_keys("run").is_err());
/// ```
///
/// # Errors
/// A message naming the text when it is not two non-empty names separated by a comma.
pub fn parse_index_keys(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once(',') {
        Some((major, minor))
            if !major.trim().is_empty() && !minor.trim().is_empty() && !minor.contains(',') =>
        {
            Ok((major.trim().to_owned(), minor.trim().to_owned()))
        }
        _ => Err(format!(
            "{s:?} is not two branch names separated by a comma (MAJOR,MINOR, e.g. run,event)"
        )),
    }
}
