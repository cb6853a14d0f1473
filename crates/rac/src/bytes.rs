//! Where a RAC payload's bytes go: what random access costs in size, part by part.

use evtc_codecs::frame_overhead;

use crate::sizes::{get_varint, sizes_len};
use crate::{Error, Result, SeekTable};

/// A RAC payload's bytes by what they hold ([`SeekTable::payload_bytes`]); payloads add up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PayloadBytes {
    /// Units.
    pub units: u64,
    /// The seek table without the units' checksums: its length field, header, unit count, each
    /// unit's entries and lengths, and the table's own CRC32.
    pub table: u64,
    /// The units' CRC32s in the table, 4 bytes a unit.
    pub checksums: u64,
    /// The entries' sizes at the start of each unit (tables with entry sizes).
    pub entry_sizes: u64,
    /// Each unit's codec framing ([`frame_overhead`]) and the length prefix of packed units.
    pub framing: u64,
    /// Coded data: what is left of the units.
    pub data: u64,
    /// Units whose framing evtc does not take apart (LZMA), counted in `data` whole.
    pub unframed_units: u64,
}

impl std::ops::AddAssign for PayloadBytes {
    fn add_assign(&mut self, o: PayloadBytes) {
        self.units += o.units;
        self.table += o.table;
        self.checksums += o.checksums;
        self.entry_sizes += o.entry_sizes;
        self.framing += o.framing;
        self.data += o.data;
        self.unframed_units += o.unframed_units;
    }
}

impl PayloadBytes {
    /// Every byte counted.
    pub fn total(&self) -> u64 {
        self.table + self.checksums + self.entry_sizes + self.framing + self.data
    }
}

impl SeekTable {
    /// Where the bytes of the RAC payload `payload` go, this its parsed table: table, checksums,
    /// entry sizes, framing and data of each unit.
    ///
    /// # Errors
    /// [`Error::CorruptTable`] or [`Error::CorruptUnit`] for a payload its table does not describe.
    pub fn payload_bytes(&self, payload: &[u8]) -> Result<PayloadBytes> {
        let table_len = SeekTable::table_len(payload)?;
        let units_region = payload
            .get(4 + table_len..)
            .ok_or_else(|| Error::CorruptTable("table runs past the payload".into()))?;
        let count = self.units.len() as u64;
        let mut bytes = PayloadBytes {
            units: count,
            table: 4 + table_len as u64 - 4 * count,
            checksums: 4 * count,
            ..PayloadBytes::default()
        };
        let packs = !self.precondition.keeps_length();
        for (i, unit) in self.units.iter().enumerate() {
            let stored = self.stored_unit(i, units_region)?;
            let sizes = if self.has_entry_sizes() {
                sizes_len(stored, unit.entries).ok_or_else(|| Error::CorruptUnit {
                    unit: i,
                    reason: "entry sizes run past the unit".into(),
                })?
            } else {
                0
            };
            let mut data = &stored[sizes..];
            let mut framing = 0;
            // Stored as is: no codec, no framing.
            if data.len() as u64 != unit.raw_len {
                let mut coded = true;
                if packs {
                    let mut at = 0;
                    let prefix = get_varint(data, &mut at)?;
                    coded = prefix & 1 == 0;
                    framing += at;
                    data = &data[at..];
                }
                if coded {
                    match frame_overhead(self.codec.algorithm(), data) {
                        Some(n) => framing += n,
                        None => bytes.unframed_units += 1,
                    }
                }
            }
            bytes.entry_sizes += sizes as u64;
            bytes.framing += framing as u64;
            bytes.data += (stored.len() - sizes - framing) as u64;
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use evtc_codecs::{Codec, Precondition, Width};

    use crate::{RacEncoder, RacOptions, SeekTable};

    /// Every byte of a payload is counted once, in the part that holds it.
    #[test]
    #[cfg(feature = "zstd")]
    fn a_payload_is_accounted_for_to_the_byte() {
        // Entries of 1 to 8 small integers: units with entry sizes, zstd frames, packed or not.
        let counts: Vec<usize> = (0..2000).map(|i| 1 + i % 8).collect();
        let data: Vec<u8> = counts
            .iter()
            .enumerate()
            .flat_map(|(i, &n)| (0..n).flat_map(move |k| ((i + k) as u32 % 13).to_le_bytes()))
            .collect();
        let ends: Vec<usize> = counts
            .iter()
            .scan(0, |at, &n| {
                *at += 4 * n;
                Some(*at)
            })
            .collect();
        for precondition in [
            Precondition::Shuffle(Width::W4),
            Precondition::For(Width::W4),
        ] {
            for entry_sizes in [false, true] {
                let options = RacOptions {
                    codec: Codec::zstd(5).unwrap(),
                    precondition,
                    min_unit_bytes: 512,
                    entry_sizes,
                };
                let mut payload = Vec::new();
                RacEncoder::new()
                    .encode(&options, None, &data, &ends, &mut payload)
                    .unwrap();
                let (table, _) = SeekTable::parse(&payload).unwrap();
                let bytes = table.payload_bytes(&payload).unwrap();
                assert_eq!(
                    bytes.total(),
                    payload.len() as u64,
                    "{precondition} {entry_sizes}"
                );
                assert_eq!(bytes.units, table.units().len() as u64);
                assert_eq!(bytes.checksums, 4 * bytes.units);
                assert_eq!(bytes.entry_sizes > 0, entry_sizes);
                // A zstd frame's header and a block header at least, per unit.
                assert!(bytes.framing >= 8 * bytes.units, "{bytes:?}");
                assert_eq!(bytes.unframed_units, 0);
            }
        }
    }
}
