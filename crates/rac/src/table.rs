//! The seek table: parsing, writing and looking up units and their entries.

use evtc_codecs::{Algorithm, Codec, Precondition, crc32};

use crate::sizes::{
    PARTIAL_VALUE, PackedSizes, check_values, corrupt_unit, get_varint, grow, put_varint,
    sizes_len, unpack_fields, unpack_sizes,
};
use crate::{Error, FLAG_DICTIONARY, FLAG_ENTRY_SIZES, Result, Unit};
use evtc_codecs::le;

/// The seek table of a RAC payload (layout in the crate docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeekTable {
    /// Codec of the units.
    pub codec: Codec,
    /// Flags ([`FLAG_DICTIONARY`]).
    pub flags: u8,
    /// Preconditioner of the units.
    pub precondition: Precondition,
    pub(crate) units: Vec<Unit>,
}

impl SeekTable {
    /// The stored bytes of unit `unit` in a payload's units region.
    ///
    /// # Errors
    /// [`Error::Usage`] if there is no such unit; [`Error::CorruptUnit`] if it runs past the region.
    pub fn stored_unit<'r>(&self, unit: usize, units_region: &'r [u8]) -> Result<&'r [u8]> {
        let u = self
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        usize::try_from(u.offset)
            .ok()
            .and_then(|start| {
                units_region.get(start..start.checked_add(usize::try_from(u.stored_len).ok()?)?)
            })
            .ok_or_else(|| Error::CorruptUnit {
                unit,
                reason: "runs past the payload".into(),
            })
    }

    /// Checks unit `unit`'s stored bytes against its CRC32, as the decoders do when asked to
    /// verify: for a reader that reads the unit's entry sizes before decoding it.
    ///
    /// # Errors
    /// [`Error::Usage`] if there is no such unit; [`Error::CorruptUnit`] on a mismatch.
    pub fn check_unit(&self, unit: usize, stored: &[u8]) -> Result<()> {
        let u = self
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        let computed = crc32(stored);
        if computed != u.crc32 {
            return Err(corrupt_unit(
                unit,
                &format!(
                    "checksum mismatch: stored {:#010x}, computed {computed:#010x}",
                    u.crc32
                ),
            ));
        }
        Ok(())
    }

    /// Whether units store their entries' lengths ([`FLAG_ENTRY_SIZES`]).
    pub fn has_entry_sizes(&self) -> bool {
        self.flags & FLAG_ENTRY_SIZES != 0
    }

    /// Appends the byte lengths of the entries of unit `unit` to `out`, read from the unit's stored
    /// bytes (as for [`RacDecoder::decode_stored_unit`](crate::RacDecoder::decode_stored_unit)). Checks that there is one per entry and
    /// that they add up to the unit's uncompressed length; does not check the unit's CRC32 (decode
    /// the unit first, or check it, to tell damage from a bad table).
    ///
    /// # Errors
    /// [`Error::Usage`] if the table has no entry sizes or no such unit; [`Error::CorruptUnit`] if the
    /// sizes are damaged.
    pub fn entry_sizes(&self, unit: usize, stored: &[u8], out: &mut Vec<u64>) -> Result<()> {
        let (u, sizes) = self.packed_sizes(unit, stored)?;
        let start = out.len();
        out.try_reserve(u.entries as usize)
            .map_err(|_| corrupt_unit(unit, "too many entries for memory"))?;
        let total = unpack_sizes(sizes.packed, u.entries, sizes.shift, sizes.bits, out);
        if total != u128::from(u.raw_len) {
            out.truncate(start);
            return Err(corrupt_unit(
                unit,
                &format!(
                    "entry sizes add up to {total} bytes, the unit holds {}",
                    u.raw_len
                ),
            ));
        }
        Ok(())
    }

    /// Appends the number of values of `1 << value_shift` bytes in each entry of unit `unit` to
    /// `out`: its entry sizes ([`SeekTable::entry_sizes`]) as counts, in one pass, for a bulk
    /// reader that keeps counts. Checks as [`SeekTable::entry_sizes`] does, that every entry holds
    /// whole values, and that each count fits a `u32`.
    ///
    /// # Errors
    /// As for [`SeekTable::entry_value_ends`]; [`Error::CorruptUnit`] for an entry of 2^32 values
    /// or more.
    pub fn entry_value_counts(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        let (u, sizes, (up, down)) = self.value_sizes(unit, stored, value_shift)?;
        let first = grow(out, u.entries, unit)?;
        let (mut total, mut wide, mut partial) = (0u128, false, false);
        let counts = &mut out[first..];
        if down == 0 && sizes.bits + up <= 32 && u.entries <= u64::from(u32::MAX) {
            // The usual case: every count fits a u32 and their sum a u64, so a tight unpacking
            // loop, then a sum the compiler vectorises.
            unpack_fields(sizes.packed, sizes.bits, counts, |field| {
                (field << up) as u32
            });
            total = u128::from(counts.iter().map(|&c| u64::from(c)).sum::<u64>());
        } else {
            unpack_fields(sizes.packed, sizes.bits, counts, |field| {
                partial |= field & ((1 << down) - 1) != 0;
                let count = field << up >> down;
                total += u128::from(count);
                wide |= count > u64::from(u32::MAX);
                count as u32
            });
        }
        let problem = if partial {
            Some(PARTIAL_VALUE)
        } else {
            wide.then_some("an entry holds 2^32 values or more")
        };
        check_values(out, first, (unit, u), value_shift, problem, (total, true))
    }

    /// Appends where each entry of unit `unit` ends, counted in values of `1 << value_shift` bytes
    /// from `start` (the unit's first value), to `out`: the running sums of its entry sizes
    /// ([`SeekTable::entry_sizes`]) in one pass, for a reader that slices entries out of the
    /// unit's values. Checks as [`SeekTable::entry_sizes`] does, and that every entry holds whole
    /// values.
    ///
    /// # Errors
    /// As for [`SeekTable::entry_sizes`]; [`Error::CorruptUnit`] if an entry or the unit does not
    /// hold whole values.
    pub fn entry_value_ends(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        start: u64,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        self.value_ends(unit, stored, value_shift, start, None, out)
    }

    /// As [`SeekTable::entry_value_ends`], for the first `entries` entries of unit `unit` only: for
    /// a reader of one entry, which needs where it and those before it end. Their sizes are
    /// checked to stay inside the unit, not to add up to it (which needs every size): check the
    /// unit's CRC32 first ([`SeekTable::check_unit`]) to know they are the ones written.
    ///
    /// # Errors
    /// As for [`SeekTable::entry_value_ends`]; [`Error::Usage`] if the unit has fewer entries.
    pub fn first_entry_value_ends(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        start: u64,
        entries: u64,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        self.value_ends(unit, stored, value_shift, start, Some(entries), out)
    }

    /// [`SeekTable::entry_value_ends`] of every entry of the unit, or of its first `entries`.
    fn value_ends(
        &self,
        unit: usize,
        stored: &[u8],
        value_shift: u32,
        start: u64,
        entries: Option<u64>,
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let (u, sizes, (up, down)) = self.value_sizes(unit, stored, value_shift)?;
        let n = match entries {
            Some(n) if n > u.entries => {
                return Err(Error::Usage(format!(
                    "unit {unit} holds {} entries, not {n}",
                    u.entries
                )));
            }
            Some(n) => n,
            None => u.entries,
        };
        let most = (u64::MAX >> (64 - sizes.bits.max(1))) << up;
        let cannot_overflow = n
            .checked_mul(most)
            .and_then(|m| m.checked_add(start))
            .is_some();
        let first = grow(out, n, unit)?;
        let (mut end, mut overflow, mut partial) = (start, false, false);
        let (packed, bits, ends) = (sizes.packed, sizes.bits, &mut out[first..]);
        if down == 0 && cannot_overflow {
            // The usual case, a tight loop: no entry can hold part of a value, no sum overflow.
            unpack_fields(packed, bits, ends, |field| {
                end += field << up;
                end
            });
        } else {
            unpack_fields(packed, bits, ends, |field| {
                partial |= field & ((1 << down) - 1) != 0;
                let (sum, over) = end.overflowing_add(field << up >> down);
                (end, overflow) = (sum, overflow | over);
                end
            });
        }
        let problem = if overflow {
            Some("entry sizes overflow")
        } else {
            partial.then_some(PARTIAL_VALUE)
        };
        let values = u128::from(end.wrapping_sub(start));
        let all = entries.is_none();
        check_values(out, first, (unit, u), value_shift, problem, (values, all))
    }

    /// Unit `unit` and its packed entry sizes, checked to lie in `stored` with a field width and
    /// shift that fit 64 bits.
    fn packed_sizes<'s>(&self, unit: usize, stored: &'s [u8]) -> Result<(&Unit, PackedSizes<'s>)> {
        if !self.has_entry_sizes() {
            return Err(Error::Usage("the units store no entry sizes".into()));
        }
        let u = self
            .units
            .get(unit)
            .ok_or_else(|| Error::Usage(format!("no unit {unit}")))?;
        let len = sizes_len(stored, u.entries)
            .ok_or_else(|| corrupt_unit(unit, "entry sizes run past the unit"))?;
        let (shift, bits) = (u32::from(stored[0]), u32::from(stored[1]));
        // Lengths must fit 64 bits once shifted: every field's width plus the shift.
        if bits + shift > 64 {
            return Err(corrupt_unit(unit, "entry-size field width out of range"));
        }
        Ok((
            u,
            PackedSizes {
                shift,
                bits,
                packed: &stored[2..len],
            },
        ))
    }

    /// [`SeekTable::packed_sizes`] of a unit that holds whole values of `1 << value_shift` bytes,
    /// with the shifts that turn a field into a count of values: fields shifted left by `shift`
    /// are byte lengths, so a field shifted left by `up`, or right by `down` (with no bit lost when
    /// the entry holds whole values), counts its entry's values (`bits + shift <= 64`: no shift
    /// overflows).
    fn value_sizes<'s>(
        &self,
        unit: usize,
        stored: &'s [u8],
        value_shift: u32,
    ) -> Result<(&Unit, PackedSizes<'s>, (u32, u32))> {
        let (u, sizes) = self.packed_sizes(unit, stored)?;
        if value_shift >= 64 || u.raw_len & ((1 << value_shift) - 1) != 0 {
            return Err(corrupt_unit(unit, "the unit does not hold whole values"));
        }
        let shifts = match sizes.shift.checked_sub(value_shift) {
            Some(up) => (up, 0),
            None => (0, value_shift - sizes.shift),
        };
        Ok((u, sizes, shifts))
    }

    /// The units, in entry order.
    pub fn units(&self) -> &[Unit] {
        &self.units
    }

    /// Total entries.
    pub fn entries(&self) -> u64 {
        self.units.last().map_or(0, |u| u.first_entry + u.entries)
    }

    /// Total uncompressed bytes.
    pub fn raw_len(&self) -> u64 {
        self.units.last().map_or(0, |u| u.raw_offset + u.raw_len)
    }

    /// The unit holding `entry`, if the basket has it.
    pub fn unit_of_entry(&self, entry: u64) -> Option<usize> {
        let units = &self.units;
        let total = self.entries();
        if entry >= total {
            return None;
        }
        // Units hold about as many entries as each other: the unit an even split puts the entry
        // in, or a neighbour, is nearly always the one; a random read then loads one or two units
        // where a binary search over a basket's hundred loads seven, one after the other.
        let guess = ((entry as f64 / total as f64) * units.len() as f64) as usize;
        let holds = |i: usize| {
            let u = &units[i];
            u.first_entry <= entry && entry - u.first_entry < u.entries
        };
        let guess = guess.min(units.len() - 1);
        let near = [guess, guess + 1, guess.wrapping_sub(1)];
        if let Some(i) = near.into_iter().find(|&i| i < units.len() && holds(i)) {
            return Some(i);
        }
        let i = units.partition_point(|u| u.first_entry + u.entries <= entry);
        (i < units.len()).then_some(i)
    }

    /// Appends to `out` a RAC payload of the units `units` of this table (consecutive, in
    /// order), their stored bytes copied from `units_region` as they are: the same codec, flags
    /// and preconditioner, a seek table of those units alone. For a writer that keeps some of a
    /// basket's units (a skim) without decompressing them; the units' CRCs are copied, not
    /// checked. Returns the new table.
    ///
    /// # Errors
    /// [`Error::Usage`] for an empty range or one past the table; [`Error::CorruptUnit`] for a
    /// unit that runs past `units_region`.
    pub fn copy_units(
        &self,
        units: std::ops::Range<usize>,
        units_region: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<SeekTable> {
        let kept = self
            .units
            .get(units.clone())
            .filter(|kept| !kept.is_empty())
            .ok_or_else(|| {
                Error::Usage(format!(
                    "units {}..{} of a table of {}",
                    units.start,
                    units.end,
                    self.units.len()
                ))
            })?;
        let (first, last) = (kept[0], kept[kept.len() - 1]);
        // Consecutive units lie back to back in the region, as their entries and raw bytes do.
        let stored = usize::try_from(first.offset)
            .ok()
            .zip(usize::try_from(last.offset.saturating_add(last.stored_len)).ok())
            .and_then(|(start, end)| units_region.get(start..end))
            .ok_or_else(|| corrupt_unit(units.end - 1, "runs past the payload"))?;
        let table = SeekTable {
            codec: self.codec,
            flags: self.flags,
            precondition: self.precondition,
            units: kept
                .iter()
                .map(|u| Unit {
                    first_entry: u.first_entry - first.first_entry,
                    raw_offset: u.raw_offset - first.raw_offset,
                    offset: u.offset - first.offset,
                    ..*u
                })
                .collect(),
        };
        table.write_payload(stored, out);
        Ok(table)
    }

    /// Appends the payload of this table and its units' stored bytes `units` to `out` (layout
    /// in the crate docs).
    pub(crate) fn write_payload(&self, units: &[u8], out: &mut Vec<u8>) {
        let encoded = self.encode();
        out.extend_from_slice(&(encoded.len() as u32).to_le_bytes());
        out.extend_from_slice(&encoded);
        out.extend_from_slice(units);
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = vec![
            1,
            self.codec.algorithm() as u8,
            self.codec.level() as i8 as u8,
            self.flags,
        ];
        out.push(self.precondition.id());
        out.push(self.precondition.width() as u8);
        put_varint(&mut out, self.units.len() as u64);
        for u in &self.units {
            put_varint(&mut out, u.entries);
            put_varint(&mut out, u.raw_len);
            put_varint(&mut out, u.stored_len);
        }
        for u in &self.units {
            out.extend_from_slice(&u.crc32.to_le_bytes());
        }
        let crc = crc32(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses the seek table at the start of a RAC payload; returns it and the units region.
    ///
    /// # Errors
    /// [`Error::CorruptTable`] for a checksum mismatch, truncation, unknown fields or units that
    /// do not fit the units region.
    pub fn parse(payload: &[u8]) -> Result<(SeekTable, &[u8])> {
        let len = SeekTable::table_len(payload)?;
        let table = payload
            .get(4..4usize.saturating_add(len))
            .ok_or_else(|| Error::CorruptTable("table runs past the payload".into()))?;
        let units_region = &payload[4 + len..];
        Ok((
            SeekTable::parse_table(table, units_region.len() as u64)?,
            units_region,
        ))
    }

    /// The length of the seek table, from the first 4 bytes of a RAC payload (for reading the table
    /// alone, then single units, with positional reads).
    ///
    /// # Errors
    /// [`Error::CorruptTable`] if fewer than 4 bytes are given.
    pub fn table_len(payload_start: &[u8]) -> Result<usize> {
        let len = payload_start
            .get(..4)
            .ok_or_else(|| Error::CorruptTable("payload shorter than the table length".into()))?;
        Ok(le::u32_at(len, 0) as usize)
    }

    /// Parses a seek table (the `T` bytes after the length) of a payload whose units region is
    /// `units_len` bytes long.
    ///
    /// # Errors
    /// As for [`SeekTable::parse`].
    pub fn parse_table(table: &[u8], units_len: u64) -> Result<SeekTable> {
        let bad = |m: &str| Error::CorruptTable(m.to_owned());
        if table.len() < 11 {
            return Err(bad("table too short"));
        }
        let (body, stored) = table.split_at(table.len() - 4);
        let stored = le::u32_at(stored, 0);
        let computed = crc32(body);
        if stored != computed {
            return Err(Error::CorruptTable(format!(
                "checksum mismatch: stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        if body[0] != 1 {
            return Err(Error::CorruptTable(format!("unknown version {}", body[0])));
        }
        let algorithm = Algorithm::from_id(body[1])?;
        let codec = Codec::new(algorithm, i32::from(body[2] as i8))
            .map_err(|_| bad("invalid codec level"))?;
        let flags = body[3];
        if flags & !(FLAG_DICTIONARY | FLAG_ENTRY_SIZES) != 0 {
            return Err(Error::CorruptTable(format!("unknown flags {flags:#04x}")));
        }
        let precondition = Precondition::from_parts(body[4], body[5])?;
        let mut at = 6;
        let count = get_varint(body, &mut at)?;
        // Every unit takes at least 3 varint bytes and 4 CRC bytes: bound the count before allocating.
        if count > (body.len() / 7) as u64 {
            return Err(bad("unit count larger than the table can hold"));
        }
        let mut units = Vec::with_capacity(count as usize);
        let (mut entry, mut raw, mut offset) = (0u64, 0u64, 0u64);
        for _ in 0..count {
            let entries = get_varint(body, &mut at)?;
            let raw_len = get_varint(body, &mut at)?;
            let stored_len = get_varint(body, &mut at)?;
            if entries == 0 {
                return Err(bad("a unit with no entries"));
            }
            if stored_len > raw_len && algorithm == Algorithm::None && flags & FLAG_ENTRY_SIZES == 0
            {
                return Err(bad("stored unit longer than its data"));
            }
            units.push(Unit {
                first_entry: entry,
                entries,
                raw_offset: raw,
                raw_len,
                offset,
                stored_len,
                crc32: 0,
            });
            entry = entry
                .checked_add(entries)
                .ok_or_else(|| bad("entry count overflows"))?;
            raw = raw
                .checked_add(raw_len)
                .ok_or_else(|| bad("length overflows"))?;
            offset = offset
                .checked_add(stored_len)
                .ok_or_else(|| bad("length overflows"))?;
        }
        for u in &mut units {
            let crc = body
                .get(at..at + 4)
                .ok_or_else(|| bad("truncated unit checksums"))?;
            u.crc32 = le::u32_at(crc, 0);
            at += 4;
        }
        if at != body.len() {
            return Err(bad("bytes after the unit checksums"));
        }
        if offset != units_len {
            return Err(Error::CorruptTable(format!(
                "units add up to {offset} bytes, the payload holds {units_len}"
            )));
        }
        Ok(SeekTable {
            codec,
            flags,
            precondition,
            units,
        })
    }
}
