//! Branch declarations and writer settings.

use evtc_codecs::{Codec, Precondition, Width};

use crate::meta::{Boundaries, BranchMeta, DataType, ScalarType};

/// A branch to create: name, type and optional per-branch settings.
///
/// ```
/// use evtc_format::{BranchSpec, ScalarType};
/// use evtc_codecs::Codec;
/// let n = BranchSpec::scalar("nMuon", ScalarType::U32);
/// let pt = BranchSpec::jagged("Muon_pt", ScalarType::F32).counter("nMuon").codec(Codec::LZ4);
/// # let _ = (n, pt);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSpec {
    pub(crate) name: String,
    pub(crate) dtype: DataType,
    pub(crate) counter: Option<String>,
    pub(crate) boundaries: Option<Boundaries>,
    pub(crate) codec: Option<Codec>,
    pub(crate) precondition: Option<Precondition>,
    pub(crate) rac: Option<RacMode>,
    pub(crate) mantissa_bits: Option<u32>,
    pub(crate) quantize: Option<evtc_codecs::Quantization>,
    pub(crate) shape: Option<Vec<u32>>,
    /// A branch laid out as another file's ([`BranchSpec::like`]).
    pub(crate) preset: Option<Box<Preset>>,
}

/// The settled layout of a branch of another file, which a [`BranchSpec::like`] branch takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Preset {
    pub(crate) meta: BranchMeta,
    /// The branch's dictionary record's body, when `meta` names one.
    pub(crate) dictionary: Option<Vec<u8>>,
}

impl BranchSpec {
    /// A branch of type `dtype`.
    pub fn new(name: impl Into<String>, dtype: DataType) -> BranchSpec {
        BranchSpec {
            name: name.into(),
            dtype,
            counter: None,
            boundaries: None,
            codec: None,
            precondition: None,
            rac: None,
            mantissa_bits: None,
            quantize: None,
            shape: None,
            preset: None,
        }
    }

    /// A branch laid out exactly as `meta`, a branch of another file, is: its type, counter,
    /// boundaries, codec, preconditioners, RAC with its unit size and `dictionary` (the body of
    /// its dictionary record, [`BranchReader::dictionary_bytes`]), and extensions (a lossy
    /// reduction it records is applied to the values filled). Nothing is left to decide at
    /// its first basket, so that the other file's baskets can be copied into it as they are
    /// ([`TreeWriter::copy_basket`]) between entries filled as usual.
    ///
    /// [`BranchReader::dictionary_bytes`]: crate::BranchReader::dictionary_bytes
    /// [`TreeWriter::copy_basket`]: crate::TreeWriter::copy_basket
    pub fn like(meta: &BranchMeta, dictionary: Option<Vec<u8>>) -> BranchSpec {
        BranchSpec {
            counter: meta.counter.clone(),
            boundaries: Some(meta.boundaries),
            preset: Some(Box::new(Preset {
                meta: meta.clone(),
                dictionary,
            })),
            ..BranchSpec::new(meta.name.clone(), meta.dtype)
        }
    }

    /// One value per entry.
    pub fn scalar(name: impl Into<String>, t: ScalarType) -> BranchSpec {
        BranchSpec::new(name, DataType::Scalar(t))
    }

    /// `len` values per entry.
    pub fn fixed(name: impl Into<String>, t: ScalarType, len: u32) -> BranchSpec {
        BranchSpec::new(name, DataType::FixedArray(t, len))
    }

    /// Any number of values per entry.
    pub fn jagged(name: impl Into<String>, t: ScalarType) -> BranchSpec {
        BranchSpec::new(name, DataType::Jagged(t))
    }

    /// A byte string per entry.
    pub fn bytes(name: impl Into<String>) -> BranchSpec {
        BranchSpec::new(name, DataType::Bytes)
    }

    /// A UTF-8 string per entry.
    pub fn utf8(name: impl Into<String>) -> BranchSpec {
        BranchSpec::new(name, DataType::Utf8)
    }

    /// The integer scalar branch holding this variable-length branch's per-entry lengths.
    pub fn counter(mut self, counter: impl Into<String>) -> BranchSpec {
        self.counter = Some(counter.into());
        self
    }

    /// How to store entry boundaries (default: `counts` without a counter; with one, `none`, or
    /// `counts` if the branch uses RAC, whose units then hold their entries' sizes).
    pub fn boundaries(mut self, boundaries: Boundaries) -> BranchSpec {
        self.boundaries = Some(boundaries);
        self
    }

    /// This branch's codec (default: the file's).
    pub fn codec(mut self, codec: Codec) -> BranchSpec {
        self.codec = Some(codec);
        self
    }

    /// This branch's values preconditioner (default: [`auto_precondition`], and for floats the
    /// smaller of shuffle and bitshuffle on the first basket).
    pub fn precondition(mut self, precondition: Precondition) -> BranchSpec {
        self.precondition = Some(precondition);
        self
    }

    /// Lossy: rounds this float branch's values to `bits` mantissa bits before compressing them
    /// (to nearest, ties to even: a value moves by at most 2^-(bits+1) of itself; see
    /// [`evtc_codecs::round_mantissa_f32`]), so that the low bits compress to nothing. The branch
    /// records it (docs/format.md 4.2, `mantissa-bits`). Only for `f32` (bits 1-22) and `f64`
    /// (1-51) values.
    pub fn mantissa_bits(mut self, bits: u32) -> BranchSpec {
        self.mantissa_bits = Some(bits);
        self
    }

    /// Lossy: quantizes this float branch's values into `quantization`'s range before compressing
    /// them (each moves by at most [`Quantization::max_error`]; a value outside the range is a
    /// fill error naming the entry). Readers get floats back; the branch records it
    /// (docs/format.md 4.2, `quantized`). Only for `f32` and `f64` values, and not together with
    /// [`BranchSpec::mantissa_bits`].
    ///
    /// [`Quantization::max_error`]: evtc_codecs::Quantization::max_error
    pub fn quantize(mut self, quantization: evtc_codecs::Quantization) -> BranchSpec {
        self.quantize = Some(quantization);
        self
    }

    /// The dimensions of this fixed-array branch's values (`[2, 3]` for ROOT's `x[2][3]`),
    /// stored flat in row-major order: two or more, whose product is the array's length. The
    /// branch records them (docs/format.md 4.2, `shape`) for readers that give arrays their
    /// shape.
    pub fn shape(mut self, dims: Vec<u32>) -> BranchSpec {
        self.shape = Some(dims);
        self
    }

    /// Random-access compression for this branch (default: the file's).
    pub fn rac(mut self, mode: RacMode) -> BranchSpec {
        self.rac = Some(mode);
        self
    }

    /// The branch name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The counter branch that gives this branch's entry lengths, if one was set.
    pub fn counter_name(&self) -> Option<&str> {
        self.counter.as_deref()
    }

    /// The branch type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The branch's own codec, if one was set (else the file's).
    pub fn codec_setting(&self) -> Option<Codec> {
        self.codec
    }

    /// The branch's own random-access compression, if set (else the file's).
    pub fn rac_setting(&self) -> Option<RacMode> {
        self.rac
    }
}

/// The preconditioner evtc starts from for values of type `t`:
///
/// - `f32`, `f64`: byte shuffle (exponent and high mantissa bytes compress together);
/// - `bool`: bitshuffle of width 1 (seven of eight bit-planes are zero);
/// - 2-, 4- and 8-byte integers: bitshuffle at their width (small values leave high planes empty);
/// - `i8`, `u8`, strings: none.
///
/// A branch whose preconditioner is left to the writer ([`BranchSpec::precondition`] not called)
/// starts from this one; at its first basket the writer encodes up to 256 KiB of it with each
/// preconditioner that fits the width ([`Precondition::candidates`]: none, bitshuffle,
/// bitplanes, `for`, `sparse` and `runs` for one-byte values, all twelve for wider ones;
/// packing ones that do not shorten the first 16 KiB are dropped; a sample over 128 KiB screens
/// the others on its first 64 KiB, LZMA at level 4 at most, and measures the best two on all of
/// it) and keeps the smallest; the default stays unless another is at least 1% smaller. The counts of a branch with
/// boundaries `counts` are chosen the same way. RAC branches of floats choose between the two
/// shuffles on their units.
pub fn auto_precondition(t: ScalarType) -> Precondition {
    let width = t.width();
    match t {
        ScalarType::F32 | ScalarType::F64 => Precondition::Shuffle(width),
        ScalarType::Bool => Precondition::BitShuffle(Width::W1),
        ScalarType::I8 | ScalarType::U8 => Precondition::None,
        _ => Precondition::BitShuffle(width),
    }
}

/// The preconditioner of per-entry counts (u32): bitshuffle, which packs small counts into few
/// non-zero bit-planes.
pub const COUNT_PRECONDITION: Precondition = Precondition::BitShuffle(Width::W4);

/// Whether baskets use random-access compression (per-entry units with a seek table, see evtc-rac).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RacMode {
    /// Whole-basket compression.
    #[default]
    Off,
    /// Random-access baskets for every basket of the branch.
    On,
    /// Random-access baskets when they pay: decided at the branch's first basket, on when it
    /// holds at least 16 RAC units of bytes (a random read then decodes at most 1/16 of what
    /// reading the basket would: a smaller basket decodes in a few microseconds anyway, and a
    /// branch that fits in one small basket would only pay RAC's write cost and seek table) and
    /// its entries average at most 1/8 of the basket size target (so a basket holds at least 8
    /// entries and one entry costs at most 1/8 of a basket to read). Never for entries as large
    /// as a basket.
    Auto,
}

/// Units' worth of bytes a branch's first basket must hold for [`RacMode::Auto`] to turn RAC on.
pub const RAC_AUTO_MIN_UNITS: usize = 16;

impl RacMode {
    /// Whether RAC applies to a branch whose first basket holds `first_basket_bytes` in entries of
    /// `entry_bytes` average size, with baskets of `basket_size` and RAC units of `unit_bytes`.
    pub fn applies(
        self,
        entry_bytes: f64,
        first_basket_bytes: usize,
        basket_size: usize,
        unit_bytes: usize,
    ) -> bool {
        match self {
            RacMode::Off => false,
            RacMode::On => true,
            RacMode::Auto => {
                entry_bytes * 8.0 <= basket_size as f64
                    && first_basket_bytes >= RAC_AUTO_MIN_UNITS * unit_bytes.max(1)
            }
        }
    }
}

impl std::fmt::Display for RacMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RacMode::Off => "off",
            RacMode::On => "on",
            RacMode::Auto => "auto",
        })
    }
}

impl std::str::FromStr for RacMode {
    type Err = String;

    fn from_str(s: &str) -> Result<RacMode, String> {
        match s {
            "off" => Ok(RacMode::Off),
            "on" => Ok(RacMode::On),
            "auto" => Ok(RacMode::Auto),
            other => Err(format!(
                "unknown RAC mode {other:?}: expected off, on or auto"
            )),
        }
    }
}

/// When a cluster ends (ROOT's AutoFlush).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterSize {
    /// Every this many entries.
    Entries(u64),
    /// When this many uncompressed bytes have been filled; as in ROOT, the entry count of the
    /// first cluster then holds for the rest of the tree.
    Bytes(u64),
}

impl std::str::FromStr for ClusterSize {
    type Err = String;

    /// A number of entries (`1000`), or a size with a unit (`30MB`, see [`crate::size::parse`]),
    /// as ROOT's AutoFlush takes a positive or a negative number.
    fn from_str(s: &str) -> Result<ClusterSize, String> {
        match s.trim().parse::<u64>() {
            Ok(0) => Err("a cluster of 0 entries".to_owned()),
            Ok(n) => Ok(ClusterSize::Entries(n)),
            Err(_) => match crate::size::parse(s)? {
                0 => Err("a cluster of 0 bytes".to_owned()),
                bytes => Ok(ClusterSize::Bytes(bytes)),
            },
        }
    }
}

impl std::fmt::Display for ClusterSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClusterSize::Entries(n) => write!(f, "{n}"),
            ClusterSize::Bytes(n) => write!(f, "{n}B"),
        }
    }
}

/// When clusters end unless told: every 32 MiB of uncompressed data, like ROOT's 30 MB AutoFlush.
pub const DEFAULT_CLUSTER_SIZE: ClusterSize = ClusterSize::Bytes(32 << 20);

/// File-wide writer settings.
///
/// ```
/// use evtc_format::{ClusterSize, WriteOptions};
/// let options = WriteOptions::default()
///     .codec("lz4".parse()?)
///     .basket_size(128 << 10)
///     .cluster_size(ClusterSize::Entries(10_000))
///     .threads(2);
/// # let _ = options;
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    pub(crate) codec: Codec,
    /// Set by [`WriteOptions::basket_size`]; else [`WriteOptions::basket_size_for`]'s default.
    pub(crate) basket_size: Option<usize>,
    pub(crate) cluster: ClusterSize,
    pub(crate) flush_at_cluster: bool,
    pub(crate) threads: usize,
    pub(crate) max_cluster_bytes: u64,
    pub(crate) rac: RacMode,
    /// Set by [`WriteOptions::rac_unit_bytes`]; else [`WriteOptions::rac_unit_bytes_for`]'s
    /// default.
    pub(crate) rac_unit_bytes: Option<usize>,
    pub(crate) rac_dictionary: bool,
    pub(crate) sync: bool,
    pub(crate) overwrite: bool,
    pub(crate) max_basket_bytes: u64,
}

/// The default minimum bytes of a RAC unit under LZMA ([`WriteOptions::rac_unit_bytes_for`]):
/// the codec table's.
pub const LZMA_RAC_UNIT_BYTES: usize = evtc_codecs::Algorithm::Lzma.properties().rac_unit_bytes;

/// The largest uncompressed basket (values and per-entry counts) readers accept and writers write
/// by default: 256 MiB, a thousand times evtc's default basket size. [`ReadOptions`] and
/// [`WriteOptions`] raise it.
///
/// [`ReadOptions`]: crate::ReadOptions
pub const DEFAULT_MAX_BASKET_BYTES: u64 = 256 << 20;

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            codec: Codec::DEFAULT,
            basket_size: None,
            cluster: DEFAULT_CLUSTER_SIZE,
            flush_at_cluster: false,
            threads: crate::cores::cores(),
            max_cluster_bytes: 1 << 30,
            rac: RacMode::Off,
            rac_unit_bytes: None,
            rac_dictionary: true,
            sync: true,
            overwrite: false,
            max_basket_bytes: DEFAULT_MAX_BASKET_BYTES,
        }
    }
}

impl WriteOptions {
    /// The file's random-access compression mode.
    pub fn rac_mode(&self) -> RacMode {
        self.rac
    }

    /// The default codec of every branch (default `zstd:5`).
    pub fn codec(mut self, codec: Codec) -> WriteOptions {
        self.codec = codec;
        self
    }

    /// Target uncompressed bytes per basket of every branch (default: see
    /// [`WriteOptions::basket_size_for`]); a basket is cut at the first entry boundary at or past
    /// it. Ignored with [`WriteOptions::flush_at_cluster`].
    pub fn basket_size(mut self, bytes: usize) -> WriteOptions {
        self.basket_size = Some(bytes.max(1));
        self
    }

    /// The target uncompressed bytes per basket of a branch written with `codec`: the size set by
    /// [`WriteOptions::basket_size`], else 256 KiB, and 1 MiB under LZMA, whose model learns
    /// from everything before it in the block (larger baskets make smaller files; see
    /// docs/benchmarks.md); a random read of a branch without RAC then decodes up to 1 MiB.
    pub fn basket_size_for(&self, codec: Codec) -> usize {
        match (self.basket_size, codec.algorithm()) {
            (Some(bytes), _) => bytes,
            (None, algorithm) => algorithm
                .properties()
                .basket_bytes
                .min(usize::try_from(self.max_basket_bytes).unwrap_or(usize::MAX)),
        }
    }

    /// When clusters end (default: every 32 MiB of uncompressed data, like ROOT's 30 MB AutoFlush).
    pub fn cluster_size(mut self, size: ClusterSize) -> WriteOptions {
        self.cluster = match size {
            ClusterSize::Entries(n) => ClusterSize::Entries(n.max(1)),
            ClusterSize::Bytes(n) => ClusterSize::Bytes(n.max(1)),
        };
        self
    }

    /// Write exactly one basket per branch per cluster (default: off).
    pub fn flush_at_cluster(mut self, on: bool) -> WriteOptions {
        self.flush_at_cluster = on;
        self
    }

    /// Threads compressing baskets (default: all cores; 1 compresses on the calling thread).
    pub fn threads(mut self, threads: usize) -> WriteOptions {
        self.threads = threads.max(1);
        self
    }

    /// Random-access compression of every branch without its own setting (default: off).
    pub fn rac(mut self, mode: RacMode) -> WriteOptions {
        self.rac = mode;
        self
    }

    /// Minimum uncompressed bytes per RAC unit of every branch (default: see
    /// [`WriteOptions::rac_unit_bytes_for`]; 0: one entry per unit).
    pub fn rac_unit_bytes(mut self, bytes: usize) -> WriteOptions {
        self.rac_unit_bytes = Some(bytes);
        self
    }

    /// The minimum uncompressed bytes per RAC unit of a branch written with `codec`: the size set
    /// by [`WriteOptions::rac_unit_bytes`], else [`evtc_rac::DEFAULT_MIN_UNIT_BYTES`] (2 KiB), and
    /// [`LZMA_RAC_UNIT_BYTES`] (8 KiB) under LZMA, whose decoder starts each unit afresh at a
    /// cost of microseconds, which small units pay many times over in a bulk read
    /// (docs/benchmarks.md), while a random read of a NanoAOD-like jet still decodes one unit.
    pub fn rac_unit_bytes_for(&self, codec: Codec) -> usize {
        match (self.rac_unit_bytes, codec.algorithm()) {
            (Some(bytes), _) => bytes,
            (None, algorithm) => algorithm.properties().rac_unit_bytes,
        }
    }

    /// Whether RAC branches with zstd, lz4 or lzma get a dictionary trained from their first
    /// basket (default: yes). The dictionary is trained on the first half of the basket's entries
    /// and kept only if it makes the rest at least 3% smaller ([`evtc_rac::DICTIONARY_MIN_GAIN`]:
    /// it slows every zstd or lz4 unit's decode; under lzma, where it speeds units up, if it makes
    /// them no larger), and, when that basket is under half the basket size (the branch may have
    /// no other), the whole basket with the dictionary's own bytes too.
    pub fn rac_dictionary(mut self, on: bool) -> WriteOptions {
        self.rac_dictionary = on;
        self
    }

    /// Whether `finish` waits until the file is on disk (fsync of the file and its directory;
    /// default: yes). Turn off for scratch files, and to measure the writer rather than the disk.
    pub fn sync(mut self, on: bool) -> WriteOptions {
        self.sync = on;
        self
    }

    /// Whether a new file replaces a file already at its path (default: no, as ROOT's `hadd`
    /// without `-f`): without it, [`FileWriter::create`](crate::FileWriter::create) refuses an
    /// existing path with [`Error::OutputExists`](crate::Error::OutputExists), and a file that
    /// appears there while the new one is written is kept, the new one dropped.
    pub fn overwrite(mut self, on: bool) -> WriteOptions {
        self.overwrite = on;
        self
    }

    /// Upper bound on the uncompressed bytes a cluster may hold before it is cut early
    /// (default 1 GiB). This bounds writer memory in flush-at-cluster mode.
    pub fn max_cluster_bytes(mut self, bytes: u64) -> WriteOptions {
        self.max_cluster_bytes = bytes.max(1);
        self
    }

    /// The largest uncompressed basket the writer may write (default
    /// [`DEFAULT_MAX_BASKET_BYTES`], what readers accept by default): a larger basket size is
    /// refused when the file is created, and a basket that grows past it (one huge entry, one
    /// basket per cluster of huge clusters) fails the write. Files with larger baskets need
    /// readers whose `ReadOptions::max_basket_bytes` is raised as much.
    pub fn max_basket_bytes(mut self, bytes: u64) -> WriteOptions {
        self.max_basket_bytes = bytes.max(1);
        self
    }
}
