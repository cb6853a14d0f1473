//! The codec id: a compression algorithm together with its level.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A compression algorithm, without its level.
///
/// The numeric value is the algorithm's id in evtc's on-disk envelope (see
/// [`BlockHeader`](crate::BlockHeader)); it is part of the file format and never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Algorithm {
    /// Stored as is.
    None = 0,
    /// zlib (RFC 1950) through `flate2` with the zlib-rs backend.
    Zlib = 1,
    /// LZMA2 in the xz container, through liblzma (xz 5.8, built from source by the `liblzma` crate).
    Lzma = 2,
    /// LZ4 block format, fast mode: compressed by `lz4_flex`, decoded by liblz4.
    Lz4 = 3,
    /// LZ4 block format, high-compression mode, through liblz4 (`lz4`).
    Lz4Hc = 4,
    /// Zstandard through libzstd (`zstd`).
    Zstd = 5,
}

impl Algorithm {
    /// Every algorithm, in id order.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::None,
        Algorithm::Zlib,
        Algorithm::Lzma,
        Algorithm::Lz4,
        Algorithm::Lz4Hc,
        Algorithm::Zstd,
    ];

    /// What evtc knows of the algorithm, as data: its row of the codec table.
    pub const fn properties(self) -> &'static Properties {
        &PROPERTIES[self as usize]
    }

    /// The lowercase name used in codec specs (`zstd`, `lz4hc`, ...).
    pub fn name(self) -> &'static str {
        self.properties().name
    }

    /// The cargo feature of `evtc-codecs` that brings the algorithm's backend (`lz4` for lz4hc;
    /// `none` and `lz4` are always built).
    pub fn feature(self) -> &'static str {
        self.properties().feature
    }

    /// Whether this build can compress with the algorithm (any build decodes LZ4 of either level).
    pub fn is_built(self) -> bool {
        self.properties().built
    }

    /// The accepted level range, inclusive, or `None` for algorithms without levels.
    pub fn level_range(self) -> Option<(i32, i32)> {
        self.properties().levels
    }

    /// The algorithm with the given envelope id.
    ///
    /// # Errors
    /// [`Error::UnknownAlgorithmId`] for an id no algorithm has.
    pub fn from_id(id: u8) -> Result<Algorithm> {
        Algorithm::ALL
            .get(usize::from(id))
            .copied()
            .ok_or(Error::UnknownAlgorithmId(id))
    }
}

/// How the units of a random-access branch share context under an algorithm (evtc-rac).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitDictionary {
    /// Units are compressed alone.
    None,
    /// A dictionary trained from the branch's entries (zstd's `ZDICT`).
    Trained,
    /// A prefix of sample entries the decoder starts from, at most `window` bytes where the
    /// format bounds it (LZ4's 64 KiB window; LZMA2's preset dictionary is unbounded).
    Prefix {
        /// The most prefix bytes a unit can refer to.
        window: Option<usize>,
    },
}

/// What evtc knows of one compression algorithm: the data behind [`Algorithm`]'s methods and the
/// choices that other crates make by algorithm. Adding an algorithm means a backend module, an
/// [`Algorithm`] variant and a row of this table (docs/codecs.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Properties {
    /// The lowercase name used in codec specs.
    pub name: &'static str,
    /// The cargo feature of `evtc-codecs` that brings the backend.
    pub feature: &'static str,
    /// Whether this build compresses with it.
    pub built: bool,
    /// The accepted levels, inclusive; `None` without levels.
    pub levels: Option<(i32, i32)>,
    /// The level a bare name means (`zstd` is `zstd:5`).
    pub default_level: i32,
    /// The two-byte magic and method byte of ROOT's compressed block header (`ZS`, 1), `None`
    /// for stored data.
    pub root_block: Option<([u8; 2], u8)>,
    /// Uncompressed bytes per basket when none is set: LZMA's model learns from everything
    /// before it in the block, so larger baskets make smaller files (docs/benchmarks.md).
    pub basket_bytes: usize,
    /// Least uncompressed bytes per random-access unit when none is set: LZMA's decoder starts
    /// each unit afresh at a cost of microseconds, which small units pay over and over.
    pub rac_unit_bytes: usize,
    /// How random-access units share context.
    pub unit_dictionary: UnitDictionary,
    /// The most a block's uncompressed size can exceed its compressed size (a decoder's bound
    /// on what it allocates): LZ4 at most 255 bytes per extra length byte, deflate 258 bytes per
    /// match at 2 bits, zstd 128 KiB per 4-byte RLE block, LZMA2 2 MiB per 11-byte chunk.
    pub max_expansion: u64,
    /// Least bytes of a shuffled plane that is compressed as a block of its own (planes start
    /// the model afresh); `None` where planes are not cut.
    pub min_plane_bytes: Option<usize>,
}

/// The codec table, in [`Algorithm`] id order.
const PROPERTIES: [Properties; 6] = [
    Properties {
        name: "none",
        feature: "none",
        built: true,
        levels: None,
        default_level: 0,
        root_block: None,
        basket_bytes: 256 << 10,
        rac_unit_bytes: 2 << 10,
        unit_dictionary: UnitDictionary::None,
        max_expansion: 1,
        min_plane_bytes: None,
    },
    Properties {
        name: "zlib",
        feature: "zlib",
        built: cfg!(feature = "zlib"),
        levels: Some((1, 9)),
        default_level: 6,
        root_block: Some((*b"ZL", 8)),
        basket_bytes: 256 << 10,
        rac_unit_bytes: 2 << 10,
        unit_dictionary: UnitDictionary::None,
        max_expansion: 1032,
        min_plane_bytes: None,
    },
    Properties {
        name: "lzma",
        feature: "lzma",
        built: cfg!(feature = "lzma"),
        levels: Some((1, 9)),
        default_level: 7,
        root_block: Some((*b"XZ", 0)),
        basket_bytes: 1 << 20,
        rac_unit_bytes: 8 << 10,
        unit_dictionary: UnitDictionary::Prefix { window: None },
        max_expansion: 1 << 18,
        min_plane_bytes: Some(64),
    },
    Properties {
        name: "lz4",
        feature: "lz4",
        built: true,
        levels: None,
        default_level: 0,
        root_block: Some((*b"L4", 1)),
        basket_bytes: 256 << 10,
        rac_unit_bytes: 2 << 10,
        unit_dictionary: UnitDictionary::Prefix {
            window: Some(64 << 10),
        },
        max_expansion: 256,
        min_plane_bytes: None,
    },
    Properties {
        name: "lz4hc",
        feature: "lz4",
        built: cfg!(feature = "lz4"),
        levels: Some((1, 12)),
        default_level: 9,
        root_block: Some((*b"L4", 1)),
        basket_bytes: 256 << 10,
        rac_unit_bytes: 2 << 10,
        unit_dictionary: UnitDictionary::None,
        max_expansion: 256,
        min_plane_bytes: None,
    },
    Properties {
        name: "zstd",
        feature: "zstd",
        built: cfg!(feature = "zstd"),
        levels: Some((ZSTD_MIN_LEVEL, 22)),
        default_level: 5,
        root_block: Some((*b"ZS", 1)),
        basket_bytes: 256 << 10,
        rac_unit_bytes: 2 << 10,
        unit_dictionary: UnitDictionary::Trained,
        max_expansion: 32768,
        min_plane_bytes: Some(4096),
    },
];

/// The most negative zstd level evtc accepts (zstd's "fast" levels trade ratio for speed).
pub const ZSTD_MIN_LEVEL: i32 = -7;

/// A codec: an [`Algorithm`] and, where the algorithm has one, a level.
///
/// Construct one with the checked constructors ([`Codec::zstd`], ...), by parsing the human spelling
/// (`"zstd:5"`, `"lz4hc:9"`, `"lz4"`, `"zlib:6"`, `"lzma:7"`, `"none"`) or a ROOT compression setting
/// ([`Codec::from_root_setting`]). A `Codec` always holds a valid level.
///
/// ```
/// use evtc_codecs::Codec;
/// let codec: Codec = "zstd:5".parse()?;
/// assert_eq!(codec, Codec::zstd(5)?);
/// assert_eq!(codec.to_string(), "zstd:5");
/// assert_eq!(Codec::from_root_setting(505)?, Codec::zstd(10)?); // ROOT's 505 is zstd level 10
/// assert!("zstd:23".parse::<Codec>().is_err());
/// # Ok::<(), evtc_codecs::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Codec {
    algorithm: Algorithm,
    level: i8,
}

impl Codec {
    /// No compression.
    pub const NONE: Codec = Codec {
        algorithm: Algorithm::None,
        level: 0,
    };
    /// LZ4 in fast mode.
    pub const LZ4: Codec = Codec {
        algorithm: Algorithm::Lz4,
        level: 0,
    };
    /// evtc's default codec, `zstd:5`.
    ///
    /// zstd, as RNTuple's default (ROOT's setting 505, which is zstd level 10): it decodes
    /// several times faster than zlib:6 at a similar ratio, and level 5 sits where higher levels
    /// start costing much more write time for little ratio (`cargo bench --bench codecs`;
    /// docs/benchmarks.md).
    pub const DEFAULT: Codec = Codec {
        algorithm: Algorithm::Zstd,
        level: 5,
    };

    /// The codecs that trials and `evtc advise` try by default: every algorithm at the levels
    /// the ROOT I/O studies compare (none, lz4, lz4hc:9, zlib:1/6, zstd:1/5/9/19, lzma:1/9).
    pub const TRIAL_SET: [Codec; 11] = [
        Codec::NONE,
        Codec::LZ4,
        Codec::at(Algorithm::Lz4Hc, 9),
        Codec::at(Algorithm::Zlib, 1),
        Codec::at(Algorithm::Zlib, 6),
        Codec::at(Algorithm::Zstd, 1),
        Codec::DEFAULT,
        Codec::at(Algorithm::Zstd, 9),
        Codec::at(Algorithm::Zstd, 19),
        Codec::at(Algorithm::Lzma, 1),
        Codec::at(Algorithm::Lzma, 9),
    ];

    /// A codec from constants known to be in range (for [`Codec::TRIAL_SET`]).
    const fn at(algorithm: Algorithm, level: i8) -> Codec {
        Codec { algorithm, level }
    }

    /// A codec from an algorithm and level; the level is ignored (must be 0) for `none` and `lz4`.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] if the algorithm does not accept `level`.
    pub fn new(algorithm: Algorithm, level: i32) -> Result<Codec> {
        let ok = match algorithm.level_range() {
            None => level == 0,
            Some((lo, hi)) => (lo..=hi).contains(&level) && level != 0,
        };
        if !ok {
            return Err(Error::LevelOutOfRange {
                algorithm: algorithm.name(),
                level,
            });
        }
        // The range check above keeps every level inside -7..=22.
        let level = i8::try_from(level).map_err(|_| Error::LevelOutOfRange {
            algorithm: algorithm.name(),
            level,
        })?;
        Ok(Codec { algorithm, level })
    }

    /// zlib at `level` 1-9.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] outside 1-9.
    pub fn zlib(level: i32) -> Result<Codec> {
        Codec::new(Algorithm::Zlib, level)
    }

    /// LZMA (xz) at `level` 1-9.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] outside 1-9.
    pub fn lzma(level: i32) -> Result<Codec> {
        Codec::new(Algorithm::Lzma, level)
    }

    /// LZ4 high-compression at `level` 1-12.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] outside 1-12.
    pub fn lz4hc(level: i32) -> Result<Codec> {
        Codec::new(Algorithm::Lz4Hc, level)
    }

    /// zstd at `level` 1-22, or a negative fast level down to [`ZSTD_MIN_LEVEL`].
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for 0 and outside -7..=22.
    pub fn zstd(level: i32) -> Result<Codec> {
        Codec::new(Algorithm::Zstd, level)
    }

    /// The algorithm.
    pub fn algorithm(self) -> Algorithm {
        self.algorithm
    }

    /// The level (0 for `none` and `lz4`).
    pub fn level(self) -> i32 {
        i32::from(self.level)
    }

    /// Parses a ROOT compression setting, `algorithm * 100 + level`, with ROOT's meaning:
    ///
    /// | setting | ROOT algorithm | evtc codec |
    /// |---|---|---|
    /// | `0`, `100`, `200`, `400`, `500` | level 0 of any algorithm: no compression | `none` |
    /// | `1`-`9` | `kUseGlobal`: the process-wide default, which is zlib in a stock ROOT | `zlib:N` |
    /// | `101`-`109` | `kZLIB` | `zlib:N` |
    /// | `201`-`209` | `kLZMA` | `lzma:N` |
    /// | `301`-`309` | `kOldCompressionAlgo` (ROOT's legacy "CS" deflate) | error: not supported |
    /// | `401`-`403` | `kLZ4`: ROOT uses LZ4's fast mode below level 4 | `lz4` |
    /// | `404`-`409` | `kLZ4`: ROOT uses LZ4HC at that level from 4 up | `lz4hc:N` |
    /// | `501`-`509` | `kZSTD`: ROOT passes twice the level to zstd (`ZSTD_compressCCtx(..., 2 * level)`) | `zstd:2N` |
    ///
    /// `101` is ROOT's compiled default for TTree files, `404` its "analysis" setting, `505` its
    /// "general purpose" setting (RNTuple's default: zstd level 10) and `207` its "smallest"
    /// setting.
    ///
    /// # Errors
    /// [`Error::InvalidRootSetting`] for negative settings, unknown algorithms, the legacy algorithm 3 and
    /// levels outside the table.
    pub fn from_root_setting(setting: i32) -> Result<Codec> {
        let invalid = |reason: &'static str| Error::InvalidRootSetting { setting, reason };
        if setting < 0 {
            return Err(invalid("settings are never negative"));
        }
        let (algorithm, level) = (setting / 100, setting % 100);
        if level == 0 {
            return if algorithm <= 5 {
                Ok(Codec::NONE)
            } else {
                Err(invalid("unknown algorithm (ROOT knows 0-5)"))
            };
        }
        match algorithm {
            0 | 1 if level <= 9 => Codec::zlib(level),
            2 if level <= 9 => Codec::lzma(level),
            3 => Err(invalid(
                "ROOT's legacy compression algorithm 3 is not supported; use 1 (zlib)",
            )),
            4 if level < 4 => Ok(Codec::LZ4),
            4 if level <= 9 => Codec::lz4hc(level),
            5 if level <= 9 => Codec::zstd(2 * level),
            0..=5 => Err(invalid("level out of range for this algorithm")),
            _ => Err(invalid("unknown algorithm (ROOT knows 0-5)")),
        }
    }

    /// The ROOT compression setting with the same meaning, if ROOT has one.
    ///
    /// `lz4` maps to `401`; `lz4hc:1-3` and `lz4hc:10-12`, and zstd's odd, negative and
    /// above-18 levels have no ROOT equivalent and give `None` (ROOT's setting `50N` is zstd
    /// level `2N`).
    pub fn root_setting(self) -> Option<i32> {
        let level = self.level();
        match self.algorithm {
            Algorithm::None => Some(0),
            Algorithm::Zlib => Some(100 + level),
            Algorithm::Lzma => Some(200 + level),
            Algorithm::Lz4 => Some(401),
            Algorithm::Lz4Hc => (4..=9).contains(&level).then_some(400 + level),
            Algorithm::Zstd => {
                (level % 2 == 0 && (2..=18).contains(&level)).then_some(500 + level / 2)
            }
        }
    }
}

impl Default for Codec {
    fn default() -> Codec {
        Codec::DEFAULT
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.algorithm.level_range() {
            None => f.write_str(self.algorithm.name()),
            Some(_) => write!(f, "{}:{}", self.algorithm.name(), self.level),
        }
    }
}

impl FromStr for Codec {
    type Err = Error;

    /// Parses `none`, `lz4`, `zlib:N`, `lzma:N`, `lz4hc:N`, `zstd:N`, a bare algorithm name with a level
    /// (taking its default level: zlib 6, lzma 7, lz4hc 9, zstd 5), or a ROOT numeric setting (`505`).
    fn from_str(spec: &str) -> Result<Codec> {
        let spec = spec.trim();
        if !spec.is_empty() && spec.bytes().all(|b| b.is_ascii_digit()) {
            let setting = spec.parse::<i32>().map_err(|_| Error::InvalidRootSetting {
                setting: i32::MAX,
                reason: "number too large",
            })?;
            return Codec::from_root_setting(setting);
        }
        let (name, level) = match spec.split_once(':') {
            Some((name, level)) => (name, Some(level)),
            None => (spec, None),
        };
        let algorithm = Algorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownCodec(spec.to_owned()))?;
        let level = match level {
            Some(text) => text.parse::<i32>().map_err(|_| Error::BadLevel {
                spec: spec.to_owned(),
            })?,
            None => algorithm.properties().default_level,
        };
        Codec::new(algorithm, level)
    }
}

impl TryFrom<&str> for Codec {
    type Error = Error;

    fn try_from(spec: &str) -> Result<Codec> {
        spec.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_spellings_roundtrip() {
        for spec in [
            "none", "lz4", "zlib:1", "zlib:9", "lzma:7", "lz4hc:1", "lz4hc:12", "zstd:-7",
            "zstd:5", "zstd:22",
        ] {
            let codec: Codec = spec.parse().unwrap();
            assert_eq!(codec.to_string(), spec);
        }
        assert_eq!("ZSTD".parse::<Codec>().unwrap(), Codec::zstd(5).unwrap());
        assert_eq!("zlib".parse::<Codec>().unwrap(), Codec::zlib(6).unwrap());
    }

    #[test]
    fn bad_specs_are_errors() {
        for spec in [
            "", "brotli", "zstd:0", "zstd:23", "zstd:-8", "zlib:0", "zlib:10", "lz4:1", "lz4hc:13",
            "none:1", "zstd:x", "zstd:",
        ] {
            assert!(spec.parse::<Codec>().is_err(), "{spec} parsed");
        }
        let err = "brotli:3".parse::<Codec>().unwrap_err().to_string();
        assert!(err.contains("brotli"), "{err}");
        let err = "zstd:40".parse::<Codec>().unwrap_err().to_string();
        assert!(err.contains("40") && err.contains("zstd"), "{err}");
    }

    #[test]
    fn root_settings_have_roots_meaning() {
        let cases = [
            (0, "none"),
            (1, "zlib:1"),
            (9, "zlib:9"),
            (100, "none"),
            (101, "zlib:1"),
            (207, "lzma:7"),
            (401, "lz4"),
            (403, "lz4"),
            (404, "lz4hc:4"),
            (409, "lz4hc:9"),
            (501, "zstd:2"),
            (505, "zstd:10"),
            (509, "zstd:18"),
        ];
        for (setting, spec) in cases {
            assert_eq!(
                Codec::from_root_setting(setting).unwrap().to_string(),
                spec,
                "setting {setting}"
            );
            assert_eq!(
                setting.to_string().parse::<Codec>().unwrap().to_string(),
                spec
            );
        }
        for bad in [-1, 10, 110, 301, 410, 510, 523, 601, 99999] {
            assert!(Codec::from_root_setting(bad).is_err(), "setting {bad}");
        }
        assert_eq!(Codec::zstd(10).unwrap().root_setting(), Some(505));
        assert_eq!(Codec::zstd(5).unwrap().root_setting(), None);
        assert_eq!(Codec::LZ4.root_setting(), Some(401));
        assert_eq!(Codec::lz4hc(12).unwrap().root_setting(), None);
        assert_eq!(Codec::zstd(-1).unwrap().root_setting(), None);
    }

    #[test]
    fn algorithm_ids_are_stable() {
        for (id, algorithm) in Algorithm::ALL.into_iter().enumerate() {
            assert_eq!(algorithm as u8 as usize, id);
            assert_eq!(Algorithm::from_id(id as u8).unwrap(), algorithm);
        }
        assert!(Algorithm::from_id(6).is_err());
    }
}
