//! Reversible preconditioners that make numeric data more compressible.
//!
//! All of them work on a byte buffer read as little-endian elements of 1, 2, 4 or 8 bytes
//! ([`Width`]); the `len % width` trailing bytes that do not form a whole element are copied
//! unchanged to the end of the output. Output and input always have the same length.
//!
//! - **Byte shuffle** (byte-stream split, as in Blosc and Parquet's `BYTE_STREAM_SPLIT`): for `n`
//!   elements, `out[b * n + e] = in[e * w + b]`: all first bytes, then all second bytes, ...
//! - **Bitshuffle** (the bit transposition of Masui et al. 2015): the first `n - n % 8` elements are
//!   cut into blocks of [`BITSHUFFLE_BLOCK_BYTES`]` / w` elements (the last block is shorter, still a
//!   multiple of 8 elements). In a block of `m` elements, bit-plane `p = b * 8 + k` is `m / 8` bytes
//!   long and its bit `e` (bits numbered LSB first within each byte) is bit `k` of byte `b` of element
//!   `e`. Planes are stored in order of `p`. The last `n % 8` elements are copied unchanged.
//! - **Delta** (delta + zigzag) for offsets, counts and sorted integers.
//! - **Delta-shuffle**: delta + zigzag, then the byte shuffle: sorted integers whose differences
//!   are small, for codecs with entropy coding (zstd, zlib, lzma) that then code each byte plane
//!   of the differences on its own.
//! - **Zigzag-shuffle** (`zigzag-shuffle:W`): zigzag of each value (`(x << 1) ^ (x >> (bits - 1))`,
//!   as in delta but of the value, not of a difference), then the byte shuffle: small signed
//!   integers (parton flavours, `-1`-or-index references), whose negative values would otherwise
//!   fill the high byte planes with `0xFF`. RNTuple's `SplitInt` columns are this encoding.
//!
//! Those keep the length of their input. Six more make the data *shorter*; they are applied
//! through [`Precondition::encode`] and [`Precondition::decode`], and the block envelope stores
//! their output's length (see `BlockEncoder`):
//!
//! - **FOR** (`for:W`): frame of reference and bit-packing with patched exceptions, per block of
//!   1024 values (layout in [`pack`]): values in a narrow range, small ids and flags; for codecs
//!   without entropy coding (LZ4) and under zstd too.
//! - **Delta-FOR** (`delta-for:W`): differences of consecutive values, then as `for`: sorted
//!   integers, offsets, positions, where LZ4 alone finds nothing.
//! - **Delta-varint** (`delta-varint:W`): delta + zigzag as LEB128 varints (layout in the
//!   `varint` module): sorted integers under an entropy coder, one byte per small difference.
//! - **Sparse** (`sparse:W`): the most common value, then the gaps between the values that
//!   differ from it and those values (layout in [`sparse`]): trigger and filter flags that are
//!   nearly always one value.
//! - **Runs** (`runs:W`): run-length encoding, each run's value (byte-shuffled) and length
//!   (layout in [`runs`]): values repeated in runs, which the codec then decodes once per run.
//! - **Bit-planes** (`bitplanes:W`): bitshuffle without its constant bit-planes, which two masks
//!   per block stand for (layout in [`bitplanes`]): rounded floats and small integers, whose
//!   all-zero planes the codec would otherwise decode as long matches of the byte before.
//!
//! Shuffle and bitshuffle have a scalar kernel (the layout's oracle) and SSE2, AVX2 and AVX-512
//! (with GFNI) kernels, each in its own module; `for` and `delta-for` a scalar and an AVX2
//! decoder, `delta-varint` an AVX2 path for runs of one-byte varints (4- and 8-byte values);
//! [`Kernel::best`] picks one once per process by CPU feature detection.

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx512;
pub mod bitplanes;
mod delta;
pub mod pack;
#[cfg(target_arch = "x86_64")]
mod pack_avx2;
pub mod runs;
mod scalar;
pub mod sparse;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod sse2;
pub mod varint;

use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Bitshuffle transposes blocks of this many input bytes (the last block may be shorter).
pub const BITSHUFFLE_BLOCK_BYTES: usize = 8192;

/// Where one bit-plane of a bitshuffle block lies: its bytes, or the byte that fills it (a plane
/// of all zeros or all ones, which `bitplanes` leaves out).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Plane<'a> {
    /// The plane's bytes.
    Bytes(&'a [u8]),
    /// `0x00` or `0xFF` throughout.
    Constant(u8),
}

/// Where a SIMD bitunshuffle finds the bit-planes of a block.
#[derive(Clone, Copy)]
pub(crate) enum PlaneSource<'a> {
    /// A bitshuffled block: plane `p` at `p * plane_len` (the input and the plane length).
    Block(&'a [u8], usize),
    /// Each plane wherever it lies, or constant (`bitplanes`).
    Planes(&'a [Plane<'a>]),
}

impl PlaneSource<'_> {
    /// Whether the source holds the `8 * w` planes of a `w`-byte width with at least `bytes` bytes
    /// of each.
    pub(crate) fn holds(&self, w: usize, bytes: usize) -> bool {
        match *self {
            PlaneSource::Block(input, plane_len) => {
                plane_len >= bytes && input.len() >= 8 * w * plane_len
            }
            PlaneSource::Planes(planes) => {
                planes.len() == 8 * w
                    && planes.iter().all(|plane| match plane {
                        Plane::Bytes(bytes_of) => bytes_of.len() >= bytes,
                        Plane::Constant(_) => true,
                    })
            }
        }
    }
}

/// The width of the elements a preconditioner works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Width {
    /// 1-byte elements (bool, i8, u8).
    W1 = 1,
    /// 2-byte elements (i16, u16).
    W2 = 2,
    /// 4-byte elements (i32, u32, f32).
    W4 = 4,
    /// 8-byte elements (i64, u64, f64).
    W8 = 8,
}

impl Width {
    /// Every width, smallest first.
    pub const ALL: [Width; 4] = [Width::W1, Width::W2, Width::W4, Width::W8];

    /// The width in bytes.
    pub fn bytes(self) -> usize {
        self as usize
    }

    /// The width of `bytes`-byte elements.
    ///
    /// # Errors
    /// [`Error::BadElementWidth`] unless `bytes` is 1, 2, 4 or 8.
    pub fn new(bytes: u8) -> Result<Width> {
        match bytes {
            1 => Ok(Width::W1),
            2 => Ok(Width::W2),
            4 => Ok(Width::W4),
            8 => Ok(Width::W8),
            other => Err(Error::BadElementWidth(other)),
        }
    }
}

/// A preconditioner and the element width it works on.
///
/// The id ([`Precondition::id`]) is stored in evtc's block envelope and never changes: `0` none, `1`
/// shuffle, `2` bitshuffle, `3` delta, `4` delta-shuffle, `5` for, `6` delta-for, `7` delta-varint,
/// `8` zigzag-shuffle, `9` sparse, `10` runs, `11` bitplanes.
///
/// ```
/// use evtc_codecs::{Precondition, Width};
/// let values: Vec<u8> = (0..100u32).flat_map(|v| (v * 3).to_le_bytes()).collect();
/// let mut shuffled = vec![0; values.len()];
/// let mut back = vec![0; values.len()];
/// let p = Precondition::BitShuffle(Width::W4);
/// p.apply(&values, &mut shuffled);
/// p.undo(&shuffled, &mut back);
/// assert_eq!(back, values);
/// assert_eq!("bitshuffle:4".parse::<Precondition>()?, p);
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Precondition {
    /// No preconditioning.
    #[default]
    None,
    /// Byte shuffle (byte-stream split).
    Shuffle(Width),
    /// Bit transposition.
    BitShuffle(Width),
    /// Delta + zigzag of little-endian integers.
    Delta(Width),
    /// Delta + zigzag, then the byte shuffle.
    DeltaShuffle(Width),
    /// Frame of reference and bit-packing with patched exceptions (changes the length).
    For(Width),
    /// Differences of consecutive values, then as [`Precondition::For`] (changes the length).
    DeltaFor(Width),
    /// Delta + zigzag as LEB128 varints (changes the length).
    DeltaVarint(Width),
    /// Zigzag of each value, then the byte shuffle.
    ZigzagShuffle(Width),
    /// The most common value and the positions and values of the others (changes the length).
    Sparse(Width),
    /// Run-length encoding: each run's value and length (changes the length).
    Runs(Width),
    /// Bitshuffle without its constant bit-planes (changes the length).
    BitPlanes(Width),
}

impl Precondition {
    /// The preconditioner's id in the block envelope.
    pub fn id(self) -> u8 {
        match self {
            Precondition::None => 0,
            Precondition::Shuffle(_) => 1,
            Precondition::BitShuffle(_) => 2,
            Precondition::Delta(_) => 3,
            Precondition::DeltaShuffle(_) => 4,
            Precondition::For(_) => 5,
            Precondition::DeltaFor(_) => 6,
            Precondition::DeltaVarint(_) => 7,
            Precondition::ZigzagShuffle(_) => 8,
            Precondition::Sparse(_) => 9,
            Precondition::Runs(_) => 10,
            Precondition::BitPlanes(_) => 11,
        }
    }

    /// Whether the output has the input's length: false for the packing preconditioners `for`,
    /// `delta-for`, `delta-varint`, `sparse`, `runs` and `bitplanes`, which only
    /// [`Precondition::encode`] and [`Precondition::decode`] apply.
    pub fn keeps_length(self) -> bool {
        !matches!(
            self,
            Precondition::For(_)
                | Precondition::DeltaFor(_)
                | Precondition::DeltaVarint(_)
                | Precondition::Sparse(_)
                | Precondition::Runs(_)
                | Precondition::BitPlanes(_)
        )
    }

    /// What a block is written with when this packing preconditioner does not make its data
    /// shorter ([`BlockEncoder::encode`](crate::BlockEncoder::encode)): `bitplanes` that leaves
    /// out no plane is the `bitshuffle` it was made from, the other packing preconditioners give
    /// way to none; a preconditioner that keeps the length is itself.
    ///
    /// ```
    /// use evtc_codecs::{Precondition, Width};
    /// let w = Width::W4;
    /// assert_eq!(Precondition::BitPlanes(w).unpacked(), Precondition::BitShuffle(w));
    /// assert_eq!(Precondition::Sparse(w).unpacked(), Precondition::None);
    /// assert_eq!(Precondition::Shuffle(w).unpacked(), Precondition::Shuffle(w));
    /// ```
    pub fn unpacked(self) -> Precondition {
        match self {
            Precondition::BitPlanes(w) => Precondition::BitShuffle(w),
            p if p.keeps_length() => p,
            _ => Precondition::None,
        }
    }

    /// The element width (1 for [`Precondition::None`]).
    pub fn width(self) -> Width {
        match self {
            Precondition::None => Width::W1,
            Precondition::Shuffle(w)
            | Precondition::BitShuffle(w)
            | Precondition::Delta(w)
            | Precondition::DeltaShuffle(w)
            | Precondition::For(w)
            | Precondition::DeltaFor(w)
            | Precondition::DeltaVarint(w)
            | Precondition::ZigzagShuffle(w)
            | Precondition::Sparse(w)
            | Precondition::Runs(w)
            | Precondition::BitPlanes(w) => w,
        }
    }

    /// The preconditioner with envelope id `id` and element width `width` bytes.
    ///
    /// # Errors
    /// [`Error::UnknownPreconditionId`] or [`Error::BadElementWidth`].
    pub fn from_parts(id: u8, width: u8) -> Result<Precondition> {
        let width = Width::new(width)?;
        match id {
            0 if width == Width::W1 => Ok(Precondition::None),
            0 => Err(Error::BadElementWidth(width as u8)),
            1 => Ok(Precondition::Shuffle(width)),
            2 => Ok(Precondition::BitShuffle(width)),
            3 => Ok(Precondition::Delta(width)),
            4 => Ok(Precondition::DeltaShuffle(width)),
            5 => Ok(Precondition::For(width)),
            6 => Ok(Precondition::DeltaFor(width)),
            7 => Ok(Precondition::DeltaVarint(width)),
            8 => Ok(Precondition::ZigzagShuffle(width)),
            9 => Ok(Precondition::Sparse(width)),
            10 => Ok(Precondition::Runs(width)),
            11 => Ok(Precondition::BitPlanes(width)),
            other => Err(Error::UnknownPreconditionId(other)),
        }
    }

    /// The preconditioners worth trying on values `width` bytes wide: none, bitshuffle,
    /// `bitplanes`, `for`, `sparse` and `runs` for one-byte values; every one for wider values,
    /// floats included (the packing ones find floats of one exponent, constants and runs of equal
    /// values: `for` stores a constant mass in a few bytes, `delta-varint` runs of equal floats in
    /// a byte each).
    pub fn candidates(width: Width) -> Vec<Precondition> {
        let mut candidates = vec![
            Precondition::None,
            Precondition::BitShuffle(width),
            Precondition::BitPlanes(width),
        ];
        if width != Width::W1 {
            candidates.extend([
                Precondition::Shuffle(width),
                Precondition::Delta(width),
                Precondition::DeltaShuffle(width),
                Precondition::ZigzagShuffle(width),
                Precondition::DeltaFor(width),
                Precondition::DeltaVarint(width),
            ]);
        }
        candidates.extend([
            Precondition::For(width),
            Precondition::Sparse(width),
            Precondition::Runs(width),
        ]);
        candidates
    }

    /// Writes the preconditioned `input` to `out`, with the best kernel of this CPU.
    ///
    /// # Panics
    /// If `out.len() != input.len()`, or for `for` and `delta-for`, which change the length (use
    /// [`Precondition::encode`]).
    pub fn apply(self, input: &[u8], out: &mut [u8]) {
        Kernel::best().apply(self, input, out);
    }

    /// Inverse of [`Precondition::apply`].
    ///
    /// # Panics
    /// As [`Precondition::apply`].
    pub fn undo(self, input: &[u8], out: &mut [u8]) {
        Kernel::best().undo(self, input, out);
    }

    /// Appends the preconditioned `input` to `out`: as long as `input` for the preconditioners
    /// that keep the length, of a length that depends on the data for `for` and `delta-for`.
    pub fn encode(self, input: &[u8], out: &mut Vec<u8>) {
        Kernel::best().encode(self, input, out);
    }

    /// Inverse of [`Precondition::encode`]: decodes `input` into `out`, which has the original's
    /// length.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if `input` is not a valid encoding of `out.len()` bytes (for the
    /// preconditioners that keep the length: unless both have the same length).
    pub fn decode(self, input: &[u8], out: &mut [u8]) -> Result<()> {
        Kernel::best().decode(self, input, out)
    }
}

/// Makes the preconditioner of one kind at a width.
type Make = fn(Width) -> Precondition;

/// Every preconditioner's name, with the preconditioner of that name at a width: the one table
/// the spellings of `Precondition` (and of evtc-tools's choices) come from.
const NAMES: [(&str, Make); 12] = [
    ("none", |_| Precondition::None),
    ("shuffle", Precondition::Shuffle),
    ("bitshuffle", Precondition::BitShuffle),
    ("delta", Precondition::Delta),
    ("delta-shuffle", Precondition::DeltaShuffle),
    ("for", Precondition::For),
    ("delta-for", Precondition::DeltaFor),
    ("delta-varint", Precondition::DeltaVarint),
    ("zigzag-shuffle", Precondition::ZigzagShuffle),
    ("sparse", Precondition::Sparse),
    ("runs", Precondition::Runs),
    ("bitplanes", Precondition::BitPlanes),
];

impl Precondition {
    /// Every preconditioner's name, in id order (`none`, `shuffle`, ...).
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(name, _)| *name)
    }

    /// The preconditioner's name, without its width (`bitshuffle`).
    pub fn name(self) -> &'static str {
        let same = |p: Precondition| std::mem::discriminant(&p) == std::mem::discriminant(&self);
        NAMES
            .iter()
            .find(|(_, make)| same(make(Width::W1)))
            .map_or("none", |(name, _)| name)
    }

    /// The preconditioner called `name` (without width) at `width`, if there is one.
    pub fn from_name(name: &str, width: Width) -> Option<Precondition> {
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, make)| make(width))
    }
}

impl fmt::Display for Precondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Precondition::None => f.write_str("none"),
            p => write!(f, "{}:{}", p.name(), p.width().bytes()),
        }
    }
}

impl FromStr for Precondition {
    type Err = Error;

    /// Parses `none`, or a preconditioner's name and width (`shuffle:4`, `bitshuffle:8`, ...:
    /// [`Precondition::names`]) with the width in 1, 2, 4, 8.
    fn from_str(spec: &str) -> Result<Precondition> {
        let bad = || Error::UnknownPrecondition(spec.to_owned());
        if spec == "none" {
            return Ok(Precondition::None);
        }
        let (name, width) = spec.split_once(':').ok_or_else(bad)?;
        let width = Width::new(width.parse().map_err(|_| bad())?)?;
        match Precondition::from_name(name, width) {
            Some(Precondition::None) | None => Err(bad()),
            Some(p) => Ok(p),
        }
    }
}

/// An instruction set the shuffle kernels are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// Portable Rust; the oracle for the others.
    Scalar,
    /// x86 SSE2, 16 elements per step.
    Sse2,
    /// x86 AVX2, 32 elements per step.
    Avx2,
    /// x86 AVX-512 (F, BW and VBMI) with GFNI: byte shuffles of 64 elements per step, bit
    /// transposes of 512 (an 8x8 bit matrix per instruction); AVX2 for the rest.
    Avx512,
}

impl Isa {
    /// Every instruction set, slowest first.
    pub const ALL: [Isa; 4] = [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512];

    /// Whether this CPU can run the kernels for this instruction set.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar => true,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Isa::Sse2 => std::arch::is_x86_feature_detected!("sse2"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Isa::Avx512 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vbmi")
                    && std::arch::is_x86_feature_detected!("gfni")
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            _ => false,
        }
    }
}

/// Calls the const-generic kernel `f::<W>` for a runtime width.
macro_rules! by_width {
    ($width:expr, $($f:ident)::+, $n:expr, $input:expr, $out:expr) => {
        match $width {
            Width::W1 => $($f)::+::<1>($n, $input, $out),
            Width::W2 => $($f)::+::<2>($n, $input, $out),
            Width::W4 => $($f)::+::<4>($n, $input, $out),
            Width::W8 => $($f)::+::<8>($n, $input, $out),
        }
    };
}

/// A set of shuffle, bitshuffle and delta kernels for one instruction set this CPU supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    isa: Isa,
}

impl Kernel {
    /// The fastest kernel this CPU supports, detected once per process.
    pub fn best() -> Kernel {
        static BEST: OnceLock<Kernel> = OnceLock::new();
        *BEST.get_or_init(|| {
            let isa = Isa::ALL
                .into_iter()
                .rev()
                .find(|isa| isa.is_supported())
                .unwrap_or(Isa::Scalar);
            Kernel { isa }
        })
    }

    /// The portable kernel.
    pub fn scalar() -> Kernel {
        Kernel { isa: Isa::Scalar }
    }

    /// The kernel for `isa`, if this CPU supports it.
    pub fn new(isa: Isa) -> Option<Kernel> {
        isa.is_supported().then_some(Kernel { isa })
    }

    /// The instruction set of this kernel.
    pub fn isa(self) -> Isa {
        self.isa
    }

    /// Applies `precondition` to `input`, writing `out`.
    ///
    /// # Panics
    /// If `out.len() != input.len()`, or if `precondition` does not keep the length
    /// ([`Precondition::keeps_length`]).
    pub fn apply(self, precondition: Precondition, input: &[u8], out: &mut [u8]) {
        assert_eq!(
            input.len(),
            out.len(),
            "preconditioner output must be as long as its input"
        );
        let w = precondition.width().bytes();
        let body = input.len() - input.len() % w;
        out[body..].copy_from_slice(&input[body..]);
        let (input, out) = (&input[..body], &mut out[..body]);
        match precondition {
            Precondition::None => out.copy_from_slice(input),
            Precondition::Shuffle(width) => self.shuffle(width, input, out),
            Precondition::BitShuffle(width) => self.bitshuffle(width, input, out),
            Precondition::Delta(width) => delta::encode(width, input, out),
            Precondition::DeltaShuffle(width) => {
                let mut differences = vec![0; input.len()];
                delta::encode(width, input, &mut differences);
                self.shuffle(width, &differences, out);
            }
            Precondition::ZigzagShuffle(width) => {
                let mut zigzagged = vec![0; input.len()];
                delta::zigzag(width, input, &mut zigzagged);
                self.shuffle(width, &zigzagged, out);
            }
            Precondition::For(_)
            | Precondition::DeltaFor(_)
            | Precondition::DeltaVarint(_)
            | Precondition::Sparse(_)
            | Precondition::Runs(_)
            | Precondition::BitPlanes(_) => {
                panic!("{precondition} changes the length: apply it with Precondition::encode")
            }
        }
    }

    /// Undoes `precondition`: `undo(apply(x)) == x`.
    ///
    /// # Panics
    /// As [`Kernel::apply`].
    pub fn undo(self, precondition: Precondition, input: &[u8], out: &mut [u8]) {
        assert_eq!(
            input.len(),
            out.len(),
            "preconditioner output must be as long as its input"
        );
        let w = precondition.width().bytes();
        let body = input.len() - input.len() % w;
        out[body..].copy_from_slice(&input[body..]);
        let (input, out) = (&input[..body], &mut out[..body]);
        match precondition {
            Precondition::None => out.copy_from_slice(input),
            Precondition::Shuffle(width) => self.unshuffle(width, input, out),
            Precondition::BitShuffle(width) => self.bitunshuffle(width, input, out),
            Precondition::Delta(width) => delta::decode(width, input, out),
            Precondition::DeltaShuffle(width) => {
                self.unshuffle(width, input, out);
                delta::decode_in_place(width, out);
            }
            Precondition::ZigzagShuffle(width) => {
                self.unshuffle(width, input, out);
                delta::unzigzag_in_place(width, out);
            }
            Precondition::For(_)
            | Precondition::DeltaFor(_)
            | Precondition::DeltaVarint(_)
            | Precondition::Sparse(_)
            | Precondition::Runs(_)
            | Precondition::BitPlanes(_) => {
                panic!("{precondition} changes the length: undo it with Precondition::decode")
            }
        }
    }

    /// Undoes `precondition` for the bytes `part` of `input` only: writes those bytes of `out` as
    /// [`Kernel::undo`] would, and perhaps others around them (the rest of their elements, of
    /// bitshuffle's groups of 8 elements), leaving the rest of `out` as it was. For a reader of one
    /// entry of a RAC unit, which needs a few of its values. Returns false, writing nothing, for
    /// the preconditioners whose elements depend on the ones before (`delta`, `delta-shuffle`) or
    /// that change the length: undo those whole.
    ///
    /// # Panics
    /// As [`Kernel::undo`], and if `part` does not lie in `input`.
    pub fn undo_part(
        self,
        precondition: Precondition,
        input: &[u8],
        out: &mut [u8],
        part: Range<usize>,
    ) -> bool {
        assert_eq!(
            input.len(),
            out.len(),
            "preconditioner output must be as long as its input"
        );
        assert!(
            part.start <= part.end && part.end <= input.len(),
            "part outside the input"
        );
        if !matches!(
            precondition,
            Precondition::None
                | Precondition::Shuffle(_)
                | Precondition::BitShuffle(_)
                | Precondition::ZigzagShuffle(_)
        ) {
            return false;
        }
        // Widths are powers of two: shifts, not divisions (a few of which would cost as much as
        // undoing the part).
        let w = precondition.width().bytes();
        let shift = w.trailing_zeros();
        let n = input.len() >> shift;
        let body = n << shift;
        if part.end > body {
            out[body..].copy_from_slice(&input[body..]);
        }
        let elements = (part.start >> shift).min(n)..((part.end + w - 1) >> shift).min(n);
        if elements.is_empty() {
            return true;
        }
        let bytes = elements.start * w..elements.end * w;
        let (input, out) = (&input[..body], &mut out[..body]);
        match precondition {
            Precondition::Shuffle(_) => scalar::unshuffle_elements(w, n, elements, input, out),
            Precondition::ZigzagShuffle(width) => {
                scalar::unshuffle_elements(w, n, elements, input, out);
                delta::unzigzag_in_place(width, &mut out[bytes]);
            }
            Precondition::BitShuffle(width) => self.bitunshuffle_part(width, input, out, elements),
            _ => out[bytes.clone()].copy_from_slice(&input[bytes]),
        }
        true
    }

    /// Appends `precondition` applied to `input` to `out` (see [`Precondition::encode`]).
    pub fn encode(self, precondition: Precondition, input: &[u8], out: &mut Vec<u8>) {
        match precondition {
            Precondition::For(w) => pack::encode(w.bytes(), false, input, out),
            Precondition::DeltaFor(w) => pack::encode(w.bytes(), true, input, out),
            Precondition::DeltaVarint(w) => varint::encode(w.bytes(), input, out),
            Precondition::Sparse(w) => sparse::encode(w.bytes(), input, out),
            Precondition::Runs(w) => runs::encode(self, w, input, out),
            Precondition::BitPlanes(w) => bitplanes::encode(self, w, input, out),
            _ => {
                let start = out.len();
                out.resize(start + input.len(), 0);
                self.apply(precondition, input, &mut out[start..]);
            }
        }
    }

    /// Decodes `input`, the output of [`Kernel::encode`], into `out` (see [`Precondition::decode`]).
    ///
    /// # Errors
    /// As [`Precondition::decode`].
    pub fn decode(self, precondition: Precondition, input: &[u8], out: &mut [u8]) -> Result<()> {
        let delta = match precondition {
            Precondition::For(_) => false,
            Precondition::DeltaFor(_) => true,
            Precondition::DeltaVarint(w) => {
                let simd = matches!(self.isa, Isa::Avx2 | Isa::Avx512);
                return varint::decode(simd, &precondition.to_string(), w.bytes(), input, out);
            }
            Precondition::Sparse(w) => {
                return sparse::decode(&precondition.to_string(), w.bytes(), input, out);
            }
            Precondition::Runs(w) => {
                return runs::decode(self, &precondition.to_string(), w, input, out);
            }
            Precondition::BitPlanes(w) => return bitplanes::decode(self, w, input, out),
            _ if input.len() != out.len() => {
                return Err(Error::Corrupt {
                    codec: precondition.to_string(),
                    reason: format!(
                        "{} bytes cannot decode to {} bytes: the preconditioner keeps the length",
                        input.len(),
                        out.len()
                    ),
                });
            }
            _ => {
                self.undo(precondition, input, out);
                return Ok(());
            }
        };
        let name = precondition.to_string();
        let w = precondition.width().bytes();
        match self.isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 | Isa::Avx512 => match pack_avx2::Avx2::new() {
                Some(avx2) => pack::decode(&avx2, &name, w, delta, input, out),
                None => pack::decode(&pack::Scalar, &name, w, delta, input, out),
            },
            _ => pack::decode(&pack::Scalar, &name, w, delta, input, out),
        }
    }

    /// Byte shuffle of whole elements (`input.len()` a multiple of the width).
    fn shuffle(self, width: Width, input: &[u8], out: &mut [u8]) {
        let n = input.len() / width.bytes();
        if width == Width::W1 {
            out.copy_from_slice(input);
            return;
        }
        match self.isa {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: a Kernel with Isa::Avx512 exists only when the CPU supports its features
            // (Kernel::new, best).
            Isa::Avx512 => unsafe { by_width!(width, avx512::shuffle, n, input, out) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above, for AVX2.
            Isa::Avx2 => unsafe { by_width!(width, avx2::shuffle, n, input, out) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above, for SSE2.
            Isa::Sse2 => unsafe { by_width!(width, sse2::shuffle, n, input, out) },
            _ => scalar::shuffle_range(width.bytes(), n, 0, input, out),
        }
    }

    fn unshuffle(self, width: Width, input: &[u8], out: &mut [u8]) {
        let n = input.len() / width.bytes();
        if width == Width::W1 {
            out.copy_from_slice(input);
            return;
        }
        match self.isa {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: a Kernel with Isa::Avx512 exists only when the CPU supports its features.
            Isa::Avx512 => unsafe { by_width!(width, avx512::unshuffle, n, input, out) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above, for AVX2.
            Isa::Avx2 => unsafe { by_width!(width, avx2::unshuffle, n, input, out) },
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            // SAFETY: as above, for SSE2.
            Isa::Sse2 => unsafe { by_width!(width, sse2::unshuffle, n, input, out) },
            _ => scalar::unshuffle_range(width.bytes(), n, 0, input, out),
        }
    }

    fn bitshuffle(self, width: Width, input: &[u8], out: &mut [u8]) {
        let w = width.bytes();
        let n8 = input.len() / w / 8 * 8;
        out[n8 * w..].copy_from_slice(&input[n8 * w..]);
        for (start, m) in bitshuffle_blocks(w, n8) {
            let (src, dst) = (
                &input[start * w..(start + m) * w],
                &mut out[start * w..(start + m) * w],
            );
            match self.isa {
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                // SAFETY: a Kernel with Isa::Avx512 exists only when the CPU supports its
                // features (AVX2 among them).
                Isa::Avx512 => unsafe { by_width!(width, avx512::bitshuffle, m, src, dst) },
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                // SAFETY: as above, for AVX2.
                Isa::Avx2 => unsafe { by_width!(width, avx2::bitshuffle, m, src, dst) },
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                // SAFETY: as above, for SSE2.
                Isa::Sse2 => unsafe { by_width!(width, sse2::bitshuffle, m, src, dst) },
                _ => scalar::bitshuffle_range(w, m, 0, src, dst),
            }
        }
    }

    fn bitunshuffle(self, width: Width, input: &[u8], out: &mut [u8]) {
        let w = width.bytes();
        let n8 = input.len() / w / 8 * 8;
        out[n8 * w..].copy_from_slice(&input[n8 * w..]);
        for (start, m) in bitshuffle_blocks(w, n8) {
            let (src, dst) = (
                &input[start * w..(start + m) * w],
                &mut out[start * w..(start + m) * w],
            );
            match self.isa {
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                // SAFETY: a Kernel with Isa::Avx512 exists only when the CPU supports its
                // features (AVX2 among them).
                Isa::Avx512 => unsafe { by_width!(width, avx512::bitunshuffle, m, src, dst) },
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                // SAFETY: as above, for AVX2.
                Isa::Avx2 => unsafe { by_width!(width, avx2::bitunshuffle, m, src, dst) },
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                // SAFETY: as above, for SSE2.
                Isa::Sse2 => unsafe { by_width!(width, sse2::bitunshuffle, m, src, dst) },
                _ => by_width!(width, scalar::bitunshuffle, m, src, dst),
            }
        }
    }

    /// Bitunshuffles one block of `m` elements (a block of [`bitshuffle_blocks`], `m` a multiple
    /// of 8) into `out` from its planes wherever they lie (`planes[p]`, `m / 8` bytes or
    /// constant), without gathering them into a block first, where this kernel can (AVX2 or
    /// AVX-512: its steps, then the groups after the last step one by one). Returns whether it
    /// did; if not, `out` is untouched.
    pub(crate) fn bitunshuffle_planes(
        self,
        width: Width,
        m: usize,
        planes: &[Plane<'_>],
        out: &mut [u8],
    ) -> bool {
        let source = PlaneSource::Planes(planes);
        let stepped = match self.isa {
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Isa::Avx512 => {
                // Steps of 512 elements, then one of 256 if the block holds one more.
                let wide = m / avx512::WIDE;
                let rest = wide * (avx512::WIDE / avx2::WIDE)..m / avx2::WIDE;
                // SAFETY: a Kernel with Isa::Avx512 exists only when the CPU supports its
                // features (AVX2 among them).
                unsafe {
                    by_width!(width, avx512::bitunshuffle_steps, 0..wide, source, out);
                    by_width!(width, avx2::bitunshuffle_steps, rest, source, out);
                }
                m / avx2::WIDE * avx2::WIDE
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Isa::Avx2 => {
                let steps = 0..m / avx2::WIDE;
                // SAFETY: a Kernel with Isa::Avx2 exists only when the CPU supports AVX2.
                unsafe { by_width!(width, avx2::bitunshuffle_steps, steps, source, out) };
                m / avx2::WIDE * avx2::WIDE
            }
            _ => return false,
        };
        let groups = stepped / 8..m / 8;
        by_width!(
            width,
            scalar::bitunshuffle_groups_from_planes,
            groups,
            planes,
            out
        );
        true
    }

    /// [`Kernel::bitunshuffle`] of `elements` only, rounded out to groups of 8 (the elements after
    /// the last whole group are stored as they are).
    fn bitunshuffle_part(self, width: Width, input: &[u8], out: &mut [u8], elements: Range<usize>) {
        let w = width.bytes();
        let n8 = (input.len() >> w.trailing_zeros()) & !7;
        let tail = elements.start.max(n8) * w..elements.end.max(n8) * w;
        out[tail.clone()].copy_from_slice(&input[tail]);
        for (start, m) in bitshuffle_blocks(w, n8) {
            let from = elements.start.max(start);
            let to = elements.end.min(start + m);
            if from >= to {
                continue;
            }
            let groups = (from - start) / 8..(to - start).div_ceil(8);
            let (src, dst) = (
                &input[start * w..(start + m) * w],
                &mut out[start * w..(start + m) * w],
            );
            match self.isa {
                // A group or two: the scalar kernel, which needs no setup.
                _ if groups.len() <= 2 => scalar_groups(width, m, groups, src, dst),
                #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
                Isa::Avx512 | Isa::Avx2 | Isa::Sse2 => {
                    for g in groups.clone().step_by(sse2::WIDE / 8) {
                        let n = sse2::WIDE.min((groups.end - g) * 8);
                        let dst = &mut dst[g * 8 * w..];
                        // SAFETY: a Kernel with Isa::Avx512, Isa::Avx2 or Isa::Sse2 exists only
                        // when the CPU supports SSE2 (Kernel::new, best); the groups lie in the
                        // block.
                        unsafe {
                            match width {
                                Width::W1 => sse2::bitunshuffle_wide::<1>(src, m / 8, g, n, dst),
                                Width::W2 => sse2::bitunshuffle_wide::<2>(src, m / 8, g, n, dst),
                                Width::W4 => sse2::bitunshuffle_wide::<4>(src, m / 8, g, n, dst),
                                Width::W8 => sse2::bitunshuffle_wide::<8>(src, m / 8, g, n, dst),
                            }
                        }
                    }
                }
                _ => scalar_groups(width, m, groups, src, dst),
            }
        }
    }
}

/// [`scalar::bitunshuffle_groups`] of elements `width` bytes wide.
fn scalar_groups(width: Width, m: usize, groups: Range<usize>, input: &[u8], out: &mut [u8]) {
    match width {
        Width::W1 => scalar::bitunshuffle_groups::<1>(m, groups, input, out),
        Width::W2 => scalar::bitunshuffle_groups::<2>(m, groups, input, out),
        Width::W4 => scalar::bitunshuffle_groups::<4>(m, groups, input, out),
        Width::W8 => scalar::bitunshuffle_groups::<8>(m, groups, input, out),
    }
}

/// Repeats `value` (1, 2, 4 or 8 bytes: a width) over `out`, a whole number of values long, with
/// stores only: a byte fill when the value is one byte repeated (zero, most often), else 64-byte
/// copies of a pattern (copies that double what is filled would read as much as they write).
pub(crate) fn repeat(out: &mut [u8], value: &[u8]) {
    debug_assert!(
        [1, 2, 4, 8].contains(&value.len()) && out.len().is_multiple_of(value.len()),
        "a width's value over whole values"
    );
    if let [byte, rest @ ..] = value
        && rest.iter().all(|b| b == byte)
    {
        out.fill(*byte);
        return;
    }
    let mut pattern = [0u8; 64];
    for slot in pattern.chunks_exact_mut(value.len()) {
        slot.copy_from_slice(value);
    }
    let mut chunks = out.chunks_exact_mut(64);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&pattern);
    }
    let rest = chunks.into_remainder();
    let len = rest.len();
    rest.copy_from_slice(&pattern[..len]);
}

/// The `(first element, element count)` of each bitshuffle block of `n8` elements (a multiple of 8).
pub(crate) fn bitshuffle_blocks(w: usize, n8: usize) -> impl Iterator<Item = (usize, usize)> {
    let block = BITSHUFFLE_BLOCK_BYTES >> w.trailing_zeros();
    (0..n8)
        .step_by(block)
        .map(move |start| (start, block.min(n8 - start)))
}

#[cfg(test)]
mod tests;
