//! Encoding a basket's entries into units and their seek table.

use evtc_codecs::{
    Crc32, EncoderDictionary, Kernel, Precondition, UnitCompressor, UnitDictionary, plane_cuts,
};

use crate::sizes::{pack_sizes, put_varint};
use crate::{Error, FLAG_DICTIONARY, FLAG_ENTRY_SIZES, RacOptions, Result, SeekTable, Unit};

/// Encodes baskets; reuses scratch memory across calls.
#[derive(Debug, Default)]
pub struct RacEncoder {
    scratch: Vec<u8>,
}

impl RacEncoder {
    /// A fresh encoder.
    pub fn new() -> RacEncoder {
        RacEncoder::default()
    }

    /// Appends the data part of one unit of `raw` bytes to `out`: the compressed preconditioned
    /// bytes, for a packing preconditioner behind their length (crate docs), or `raw` as is when
    /// neither is shorter.
    fn compress_unit(
        &mut self,
        precondition: Precondition,
        compressor: &mut UnitCompressor<'_>,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let at = out.len();
        if precondition.keeps_length() {
            let source = if precondition == Precondition::None {
                raw
            } else {
                self.scratch.resize(raw.len(), 0);
                Kernel::best().apply(precondition, raw, &mut self.scratch);
                &self.scratch[..]
            };
            let cuts = plane_cuts(compressor.codec(), precondition, source);
            if compressor.compress_segmented(source, &cuts, out)? >= raw.len() {
                out.truncate(at);
                out.extend_from_slice(raw);
            }
            return Ok(());
        }
        self.scratch.clear();
        Kernel::best().encode(precondition, raw, &mut self.scratch);
        if self.scratch.len() >= raw.len() {
            // Readers bound the packed length by the data's: store the data as is.
            out.extend_from_slice(raw);
            return Ok(());
        }
        let packed = self.scratch.len() as u64;
        put_varint(out, 2 * packed);
        let cuts = plane_cuts(compressor.codec(), precondition, &self.scratch);
        let n = compressor.compress_segmented(&self.scratch, &cuts, out)?;
        if n as u64 >= packed {
            out.truncate(at);
            put_varint(out, 2 * packed + 1);
            out.extend_from_slice(&self.scratch);
        }
        if out.len() - at >= raw.len() {
            out.truncate(at);
            out.extend_from_slice(raw);
        }
        Ok(())
    }

    /// Encodes the entries of one basket into a RAC payload appended to `out`. Entry `i` is
    /// `data[ends[i - 1]..ends[i]]` (`ends[-1] = 0`); `dictionary` is the branch's zstd dictionary
    /// or prefix (lz4, lzma), if any.
    ///
    /// # Errors
    /// [`Error::Usage`] if `ends` is not non-decreasing up to `data.len()`; codec errors.
    pub fn encode(
        &mut self,
        options: &RacOptions,
        dictionary: Option<&EncodeDictionary<'_>>,
        data: &[u8],
        ends: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<SeekTable> {
        if ends.windows(2).any(|w| w[0] > w[1]) || ends.last().copied().unwrap_or(0) != data.len() {
            return Err(Error::Usage(
                "entry ends must increase up to the data length".into(),
            ));
        }
        let (zstd_dict, prefix) = match dictionary {
            Some(EncodeDictionary::Zstd(d)) => (Some(*d), &[][..]),
            Some(EncodeDictionary::Prefix(p)) => (None, *p),
            None => (None, &[][..]),
        };
        let uses_dictionary = match options.codec.algorithm().properties().unit_dictionary {
            UnitDictionary::Trained => zstd_dict.is_some(),
            UnitDictionary::Prefix { .. } => !prefix.is_empty(),
            UnitDictionary::None => false,
        };
        let mut compressor = UnitCompressor::new(options.codec, zstd_dict, prefix)?;
        let mut units = Vec::new();
        let mut stored = Vec::with_capacity(data.len() / 2);
        let (mut first, mut start) = (0usize, 0usize);
        while first < ends.len() {
            // Take entries until the unit reaches min_unit_bytes.
            let mut last = first;
            while last + 1 < ends.len() && ends[last] - start < options.min_unit_bytes {
                last += 1;
            }
            let end = ends[last];
            let raw = &data[start..end];
            let at = stored.len();
            if options.entry_sizes {
                let start_of = |e: usize| if e == 0 { 0 } else { ends[e - 1] };
                let lengths = (first..=last).map(|e| (ends[e] - start_of(e)) as u64);
                pack_sizes(lengths, &mut stored);
            }
            self.compress_unit(options.precondition, &mut compressor, raw, &mut stored)?;
            let stored_len = (stored.len() - at) as u64;
            units.push(Unit {
                first_entry: first as u64,
                entries: (last - first + 1) as u64,
                raw_offset: start as u64,
                raw_len: raw.len() as u64,
                offset: at as u64,
                stored_len,
                crc32: Crc32::new().update(&stored[at..]).finish(),
            });
            first = last + 1;
            start = end;
        }
        let table = SeekTable {
            codec: options.codec,
            flags: if uses_dictionary { FLAG_DICTIONARY } else { 0 }
                | if options.entry_sizes {
                    FLAG_ENTRY_SIZES
                } else {
                    0
                },
            precondition: options.precondition,
            units,
        };
        table.write_payload(&stored, out);
        Ok(table)
    }
}

/// A branch's dictionary on the encoding side.
#[derive(Debug, Clone, Copy)]
pub enum EncodeDictionary<'d> {
    /// A prepared zstd dictionary.
    Zstd(&'d EncoderDictionary),
    /// Sample bytes that stand before each unit as its history (LZ4's external dictionary,
    /// LZMA2's preset dictionary).
    Prefix(&'d [u8]),
}
