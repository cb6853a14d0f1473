//! Decoding units, whole or in part.

use std::ops::Range;

use evtc_codecs::precondition::bitplanes;
use evtc_codecs::{
    DecoderDictionary, Kernel, Precondition, PrefixDictionary, UnitDictionary, with_decompressor,
};

use crate::sizes::{get_varint, sizes_len};
use crate::{Error, FLAG_DICTIONARY, Result, SeekTable};

/// A branch's dictionary on the decoding side.
#[derive(Debug, Clone, Copy)]
pub enum DecodeDictionary<'d> {
    /// A prepared zstd dictionary.
    Zstd(&'d DecoderDictionary),
    /// The prefix the units were compressed with (lz4, lzma).
    Prefix(&'d PrefixDictionary),
}

/// Decodes units; reuses its scratch memory, and decompresses with its thread's backend contexts
/// ([`evtc_codecs::with_decompressor`]), so that a decoder made for a single read creates none.
#[derive(Debug, Default)]
pub struct RacDecoder {
    scratch: Vec<u8>,
    /// The packed bytes a codec decodes for a preconditioner that makes data shorter, apart from
    /// `scratch`, into which a `bitplanes` unit read in part expands its bitshuffle.
    packed: Vec<u8>,
    /// The preconditioner and length of the unit whose preconditioned bytes `scratch` holds,
    /// when [`RacDecoder::decode_stored_unit_part`] undid the preconditioner for part of it only.
    unfinished: Option<(Precondition, usize)>,
}

impl RacDecoder {
    /// A fresh decoder.
    pub fn new() -> RacDecoder {
        RacDecoder::default()
    }

    /// Decodes unit `unit` into `out` (exactly its uncompressed length), verifying its CRC32 when
    /// `verify` is set.
    ///
    /// # Errors
    /// [`Error::CorruptUnit`] for checksum or size problems; [`Error::Usage`] if the table needs a
    /// dictionary that was not given; codec errors.
    pub fn decode_unit(
        &mut self,
        table: &SeekTable,
        unit: usize,
        units_region: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
    ) -> Result<()> {
        let stored = table.stored_unit(unit, units_region)?;
        self.decode_stored_unit(table, unit, stored, dictionary, out, verify)
    }

    /// Decodes unit `unit` of `table` from its stored bytes alone (read with a positional read at
    /// `4 + T + unit.offset` of the payload), verifying its CRC32 when `verify` is set.
    ///
    /// # Errors
    /// As for [`RacDecoder::decode_unit`]; [`Error::CorruptUnit`] if `stored` has the wrong length.
    pub fn decode_stored_unit(
        &mut self,
        table: &SeekTable,
        unit: usize,
        stored: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
    ) -> Result<()> {
        self.decode_stored_unit_part(table, unit, stored, dictionary, out, verify, None)
            .map(|_| ())
    }

    /// As [`RacDecoder::decode_stored_unit`], for a reader that needs the bytes `part` of the
    /// unit's data (one entry's values; `None`: all of them): decompresses the unit and, where the
    /// unit's preconditioner allows ([`Kernel::undo_part`]: shuffles and bitshuffle), undoes it for
    /// `part` only (and for the bytes of its elements' groups), leaving the rest of `out` as it
    /// was. Returns whether `out` holds the whole unit; if not, [`RacDecoder::finish_unit`]
    /// completes it as long as this decoder decodes nothing else in between.
    ///
    /// # Errors
    /// As for [`RacDecoder::decode_stored_unit`]; [`Error::Usage`] if `part` lies outside the unit.
    #[allow(clippy::too_many_arguments)]
    pub fn decode_stored_unit_part(
        &mut self,
        table: &SeekTable,
        unit: usize,
        stored: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
        part: Option<Range<usize>>,
    ) -> Result<bool> {
        if let Some(part) = &part
            && (part.start > part.end || part.end > out.len())
        {
            return Err(Error::Usage(format!(
                "bytes {part:?} are not in a unit of {} bytes",
                out.len()
            )));
        }
        self.unfinished = None;
        let u = table
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        let bad = |reason: String| Error::CorruptUnit { unit, reason };
        if stored.len() as u64 != u.stored_len {
            return Err(bad("wrong stored length".into()));
        }
        if out.len() as u64 != u.raw_len {
            return Err(Error::Usage(format!(
                "unit {unit} holds {} bytes, the buffer {}",
                u.raw_len,
                out.len()
            )));
        }
        if verify {
            table.check_unit(unit, stored)?;
        }
        let stored = if table.has_entry_sizes() {
            let len = sizes_len(stored, u.entries)
                .ok_or_else(|| bad("entry sizes run past the unit".into()))?;
            &stored[len..]
        } else {
            stored
        };
        if stored.len() as u64 == u.raw_len {
            out.copy_from_slice(stored);
            return Ok(true);
        }
        let algorithm = table.codec.algorithm();
        let shared = algorithm.properties().unit_dictionary;
        let (zstd_dict, prefix) = match (table.flags & FLAG_DICTIONARY != 0, dictionary) {
            (false, _) => (None, None),
            (true, Some(DecodeDictionary::Zstd(d))) if shared == UnitDictionary::Trained => {
                (Some(*d), None)
            }
            (true, Some(DecodeDictionary::Prefix(p)))
                if matches!(shared, UnitDictionary::Prefix { .. }) =>
            {
                (None, Some(*p))
            }
            (true, None) => {
                return Err(Error::Usage(
                    "the units need the branch's dictionary".into(),
                ));
            }
            (true, Some(_)) => {
                return Err(Error::Usage(format!(
                    "the dictionary given is not one for {} units",
                    algorithm.name()
                )));
            }
        };
        let precondition = table.precondition;
        if precondition == Precondition::None {
            with_decompressor(|d| d.decompress_unit(algorithm, zstd_dict, prefix, stored, out))?;
            return Ok(true);
        }
        if precondition.keeps_length() {
            let len = out.len();
            let scratch = evtc_codecs::scratch(&mut self.scratch, len);
            with_decompressor(|d| {
                d.decompress_unit(algorithm, zstd_dict, prefix, stored, scratch)
            })?;
            let kernel = Kernel::best();
            if let Some(part) = part
                && kernel.undo_part(precondition, scratch, out, part)
            {
                self.unfinished = Some((precondition, len));
                return Ok(false);
            }
            kernel.undo(precondition, scratch, out);
            return Ok(true);
        }
        let mut at = 0;
        let head = get_varint(stored, &mut at).map_err(|_| bad("no packed length".into()))?;
        let packed = head >> 1;
        // Shorter than the data, so never a larger allocation than the output.
        if packed >= u.raw_len {
            return Err(bad(format!(
                "{packed} packed bytes for {} bytes of data",
                u.raw_len
            )));
        }
        let packed = packed as usize;
        let rest = &stored[at..];
        let packed_bytes = if head & 1 == 1 {
            if rest.len() != packed {
                return Err(bad(format!(
                    "{} stored bytes for {packed} packed bytes",
                    rest.len()
                )));
            }
            rest
        } else {
            let scratch = evtc_codecs::scratch(&mut self.packed, packed);
            with_decompressor(|d| d.decompress_unit(algorithm, zstd_dict, prefix, rest, scratch))?;
            scratch
        };
        let kernel = Kernel::best();
        // A `bitplanes` unit read for part of its values: its bitshuffle, then that part of it
        // (the rest when the unit is finished).
        if let (Precondition::BitPlanes(width), Some(part)) = (precondition, part) {
            let len = out.len();
            let image = evtc_codecs::scratch(&mut self.scratch, len);
            bitplanes::expand(width, packed_bytes, image)?;
            let bitshuffle = Precondition::BitShuffle(width);
            if kernel.undo_part(bitshuffle, image, out, part) {
                self.unfinished = Some((bitshuffle, len));
                return Ok(false);
            }
            kernel.undo(bitshuffle, image, out);
            return Ok(true);
        }
        kernel.decode(precondition, packed_bytes, out)?;
        Ok(true)
    }

    /// Completes into `out` the unit that the last [`RacDecoder::decode_stored_unit_part`] decoded
    /// in part (`out` holds that part already, and is as long as the unit).
    ///
    /// # Errors
    /// [`Error::Usage`] if the last decode left no unit unfinished, or `out` is not its length.
    pub fn finish_unit(&mut self, out: &mut [u8]) -> Result<()> {
        match self.unfinished.take() {
            Some((precondition, len)) if len == out.len() => {
                Kernel::best().undo(precondition, &self.scratch[..len], out);
                Ok(())
            }
            Some((_, len)) => Err(Error::Usage(format!(
                "the unfinished unit holds {len} bytes, the buffer {}",
                out.len()
            ))),
            None => Err(Error::Usage("no unit was decoded in part".into())),
        }
    }

    /// Decodes every unit into `out` (the basket's whole uncompressed data).
    ///
    /// # Errors
    /// As for [`RacDecoder::decode_unit`].
    pub fn decode_all(
        &mut self,
        table: &SeekTable,
        units_region: &[u8],
        dictionary: Option<&DecodeDictionary<'_>>,
        out: &mut [u8],
        verify: bool,
    ) -> Result<()> {
        if out.len() as u64 != table.raw_len() {
            return Err(Error::Usage(format!(
                "the units hold {} bytes, the buffer {}",
                table.raw_len(),
                out.len()
            )));
        }
        for (i, u) in table.units.iter().enumerate() {
            let range = u.raw_offset as usize..(u.raw_offset + u.raw_len) as usize;
            self.decode_unit(table, i, units_region, dictionary, &mut out[range], verify)?;
        }
        Ok(())
    }
}
