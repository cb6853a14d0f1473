//! Every entry read through its unit equals the data, for every codec, granularity, dictionary
//! choice and preconditioner (those that make the data shorter included); corrupt payloads give
//! errors, never panics.

use evtc_codecs::{
    Algorithm, Codec, DecoderDictionary, EncoderDictionary, Precondition, PrefixDictionary, Width,
};
use evtc_rac::{
    DecodeDictionary, EncodeDictionary, RacDecoder, RacEncoder, RacOptions, SeekTable,
    train_dictionary, trial_units,
};
use proptest::prelude::*;

fn entries() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop_oneof![
            prop::collection::vec(0u8..4, 0..40),
            (any::<u32>(), 1usize..10).prop_map(|(v, n)| std::iter::repeat_n(v, n)
                .flat_map(u32::to_le_bytes)
                .collect()),
        ],
        1..200,
    )
}

fn check(
    codec: &str,
    min_unit_bytes: usize,
    use_dict: bool,
    precondition: Precondition,
    entry_sizes: bool,
    entries: &[Vec<u8>],
) -> Result<(), TestCaseError> {
    let codec: Codec = codec.parse().unwrap();
    let data: Vec<u8> = entries.concat();
    let mut ends = Vec::new();
    let mut at = 0;
    for e in entries {
        at += e.len();
        ends.push(at);
    }
    let options = RacOptions {
        codec,
        precondition,
        min_unit_bytes,
        entry_sizes,
    };
    let dict_bytes = if use_dict {
        train_dictionary(&options, &data, &ends, 1024)
    } else {
        None
    };
    let enc_zstd = dict_bytes
        .as_ref()
        .filter(|_| codec.algorithm() == evtc_codecs::Algorithm::Zstd)
        .map(|d| EncoderDictionary::new(d, codec.level()).unwrap());
    let dec_zstd = dict_bytes
        .as_ref()
        .filter(|_| codec.algorithm() == evtc_codecs::Algorithm::Zstd)
        .map(|d| DecoderDictionary::new(d).unwrap());
    let dec_lz4 = dict_bytes
        .as_deref()
        .map(evtc_codecs::PrefixDictionary::new);
    let (enc, dec) = match (&enc_zstd, &dec_zstd, &dict_bytes) {
        (Some(e), Some(d), _) => (
            Some(EncodeDictionary::Zstd(e)),
            Some(DecodeDictionary::Zstd(d)),
        ),
        (_, _, Some(p)) => (
            Some(EncodeDictionary::Prefix(p)),
            dec_lz4.as_ref().map(DecodeDictionary::Prefix),
        ),
        _ => (None, None),
    };
    let mut payload = vec![];
    let table = RacEncoder::new()
        .encode(&options, enc.as_ref(), &data, &ends, &mut payload)
        .unwrap();
    let (parsed, units) = SeekTable::parse(&payload).unwrap();
    prop_assert_eq!(&parsed, &table);
    prop_assert_eq!(parsed.entries(), entries.len() as u64);
    let mut decoder = RacDecoder::new();
    for (i, entry) in entries.iter().enumerate() {
        let u = parsed.unit_of_entry(i as u64).unwrap();
        let unit = parsed.units()[u];
        let mut out = vec![0; unit.raw_len as usize];
        decoder
            .decode_unit(&parsed, u, units, dec.as_ref(), &mut out, true)
            .unwrap();
        let start = if i == 0 { 0 } else { ends[i - 1] } - unit.raw_offset as usize;
        prop_assert_eq!(&out[start..start + entry.len()], &entry[..]);
        let stored = &units[unit.offset as usize..(unit.offset + unit.stored_len) as usize];
        // The entry's bytes alone, then the rest of the unit.
        let part = start..start + entry.len();
        let mut in_part = vec![0xA5; out.len()];
        let whole = decoder
            .decode_stored_unit_part(
                &parsed,
                u,
                stored,
                dec.as_ref(),
                &mut in_part,
                true,
                Some(part.clone()),
            )
            .unwrap();
        prop_assert_eq!(&in_part[part.clone()], &entry[..]);
        if !whole {
            decoder.finish_unit(&mut in_part).unwrap();
        }
        prop_assert_eq!(&in_part, &out);
        prop_assert!(decoder.finish_unit(&mut in_part).is_err(), "finished twice");
        let past = decoder.decode_stored_unit_part(
            &parsed,
            u,
            stored,
            dec.as_ref(),
            &mut in_part,
            true,
            Some(out.len()..out.len() + 1),
        );
        prop_assert!(matches!(past, Err(evtc_rac::Error::Usage(_))), "{:?}", past);
        let mut sizes = vec![];
        let found = parsed.entry_sizes(u, stored, &mut sizes);
        prop_assert_eq!(found.is_ok(), entry_sizes);
        if entry_sizes {
            check_entry_sizes(&parsed, u, stored, entries, &sizes)?;
        }
    }
    let mut all = vec![0; data.len()];
    decoder
        .decode_all(&parsed, units, dec.as_ref(), &mut all, true)
        .unwrap();
    prop_assert_eq!(&all, &data);
    // The units after the first, copied into a payload of their own, decode to their bytes.
    let n = parsed.units().len();
    if n > 1 {
        let mut copied = vec![];
        let table = parsed.copy_units(1..n, units, &mut copied).unwrap();
        let (again, region) = SeekTable::parse(&copied).unwrap();
        prop_assert_eq!(&again, &table);
        prop_assert_eq!(
            again.entries(),
            parsed.entries() - parsed.units()[0].entries
        );
        let from = parsed.units()[1].raw_offset as usize;
        let mut rest = vec![0; data.len() - from];
        decoder
            .decode_all(&again, region, dec.as_ref(), &mut rest, true)
            .unwrap();
        prop_assert_eq!(&rest[..], &data[from..]);
    }
    prop_assert!(parsed.copy_units(n..n + 1, units, &mut vec![]).is_err());
    prop_assert!(parsed.copy_units(0..0, units, &mut vec![]).is_err());
    Ok(())
}

/// The entry sizes a unit stores (`sizes`, read from it), and the value ends and counts made
/// from them, against the entries it holds.
fn check_entry_sizes(
    parsed: &SeekTable,
    u: usize,
    stored: &[u8],
    entries: &[Vec<u8>],
    sizes: &[u64],
) -> Result<(), TestCaseError> {
    let unit = parsed.units()[u];
    let first = unit.first_entry as usize;
    let want: Vec<u64> = entries[first..first + unit.entries as usize]
        .iter()
        .map(|e| e.len() as u64)
        .collect();
    // Where each entry ends in values of 1, 2, 4 and 8 bytes, counted from 7: the
    // running sums, or an error where some entry holds part of a value.
    for value_shift in 0..4u32 {
        let mut ends = vec![];
        let found = parsed.entry_value_ends(u, stored, value_shift, 7, &mut ends);
        let whole = want.iter().all(|&l| l % (1 << value_shift) == 0);
        prop_assert_eq!(found.is_ok(), whole, "{:?}", found);
        if whole {
            let running: Vec<u64> = want
                .iter()
                .scan(7, |end, &l| {
                    *end += l >> value_shift;
                    Some(*end)
                })
                .collect();
            // The first half of them alone.
            let half = unit.entries / 2;
            let mut first = vec![];
            parsed
                .first_entry_value_ends(u, stored, value_shift, 7, half, &mut first)
                .unwrap();
            prop_assert_eq!(&first[..], &running[..half as usize]);
            let past = parsed.first_entry_value_ends(
                u,
                stored,
                value_shift,
                7,
                unit.entries + 1,
                &mut first,
            );
            prop_assert!(matches!(past, Err(evtc_rac::Error::Usage(_))), "{:?}", past);
            prop_assert_eq!(ends, running);
        } else {
            prop_assert!(ends.is_empty());
        }
        // As counts of values: the sizes shifted down, or the same error.
        let mut counts = vec![9];
        let found = parsed.entry_value_counts(u, stored, value_shift, &mut counts);
        prop_assert_eq!(found.is_ok(), whole, "{:?}", found);
        let mut want_counts = vec![9];
        if whole {
            want_counts.extend(want.iter().map(|&l| (l >> value_shift) as u32));
        }
        prop_assert_eq!(counts, want_counts);
    }
    prop_assert_eq!(sizes, &want[..]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn entries_roundtrip(entries in entries(), codec in prop::sample::select(vec!["none", "lz4", "zstd:1", "zstd:5", "zlib:1", "lz4hc:4", "lzma:1"]),
                         min in prop::sample::select(vec![0usize, 64, 1000]), dict in any::<bool>(),
                         p in prop::sample::select(vec![Precondition::None, Precondition::Shuffle(Width::W4),
                                                        Precondition::Runs(Width::W4), Precondition::Runs(Width::W1),
                                                        Precondition::Sparse(Width::W1), Precondition::For(Width::W4),
                                                        Precondition::BitPlanes(Width::W4), Precondition::BitPlanes(Width::W1)]),
                         sizes in any::<bool>()) {
        check(codec, min, dict, p, sizes, &entries)?;
    }

    #[test]
    fn corrupt_payloads_never_panic(entries in entries(), at in any::<usize>(), byte in any::<u8>(), entry_sizes in any::<bool>(),
                                    precondition in prop::sample::select(vec![Precondition::None, Precondition::Runs(Width::W4), Precondition::BitPlanes(Width::W4)]),
                                    codec in prop::sample::select(vec!["zstd:3", "lzma:1", "none"]),
                                    dict in any::<bool>()) {
        let data: Vec<u8> = entries.concat();
        let mut ends = Vec::new();
        let mut end = 0;
        for e in &entries { end += e.len(); ends.push(end); }
        let options = RacOptions { codec: codec.parse().unwrap(), precondition, min_unit_bytes: 32, entry_sizes };
        // lzma units against a prefix are raw LZMA2, with no xz checks of their own.
        let prefix = if dict && codec == "lzma:1" { train_dictionary(&options, &data, &ends, 1024) } else { None };
        let (enc, dec) = match &prefix {
            Some(p) => (Some(EncodeDictionary::Prefix(p)), Some(PrefixDictionary::new(p))),
            None => (None, None),
        };
        let dec = dec.as_ref().map(DecodeDictionary::Prefix);
        let mut payload = vec![];
        RacEncoder::new().encode(&options, enc.as_ref(), &data, &ends, &mut payload).unwrap();
        let at = at % payload.len();
        payload[at] = byte;
        if let Ok((table, units)) = SeekTable::parse(&payload) {
            let mut decoder = RacDecoder::new();
            for u in 0..table.units().len() {
                let mut out = vec![0; (table.units()[u].raw_len as usize).min(1 << 20)];
                let _ = decoder.decode_unit(&table, u, units, dec.as_ref(), &mut out, false);
                let unit = table.units()[u];
                if let Some(stored) = units.get(unit.offset as usize..(unit.offset + unit.stored_len) as usize) {
                    let part = Some(0..out.len().min(4));
                    if matches!(decoder.decode_stored_unit_part(&table, u, stored, dec.as_ref(), &mut out, false, part), Ok(false)) {
                        let _ = decoder.finish_unit(&mut out);
                    }
                    let _ = table.entry_sizes(u, stored, &mut vec![]);
                    let _ = table.entry_value_ends(u, stored, 2, 0, &mut vec![]);
                    let _ = table.entry_value_counts(u, stored, 2, &mut vec![]);
                }
            }
        }
        for cut in [0, 3, payload.len() / 2] {
            let _ = SeekTable::parse(&payload[..cut]);
        }
    }
}

#[test]
fn dictionaries_shrink_tiny_units() {
    // Small entries sharing structure across entries (values repeat across events, not within
    // one): what a dictionary learns and a lone entry cannot.
    let mut rng = evtc_datagen::Rng::new(5);
    let table: Vec<u32> = (0..16).map(|_| rng.next_u64() as u32).collect();
    let entries: Vec<Vec<u8>> = (0..5000)
        .map(|_| {
            (0..12)
                .flat_map(|_| table[rng.below(16) as usize].to_le_bytes())
                .collect()
        })
        .collect();
    let data = entries.concat();
    let ends: Vec<usize> = (1..=entries.len()).map(|i| i * 48).collect();
    for codec in ["zstd:5", "lz4", "lzma:6"] {
        let codec: Codec = codec.parse().unwrap();
        let options = RacOptions {
            codec,
            precondition: Precondition::None,
            min_unit_bytes: 0,
            entry_sizes: false,
        };
        let dict = train_dictionary(&options, &data, &ends, 4096).unwrap();
        let zstd = (codec.algorithm() == Algorithm::Zstd)
            .then(|| EncoderDictionary::new(&dict, codec.level()).unwrap());
        let enc = match &zstd {
            Some(z) => EncodeDictionary::Zstd(z),
            None => EncodeDictionary::Prefix(&dict),
        };
        let encode = |d: Option<&EncodeDictionary<'_>>| {
            let mut out = vec![];
            RacEncoder::new()
                .encode(&options, d, &data, &ends, &mut out)
                .unwrap();
            out
        };
        let (plain, with_dict) = (encode(None), encode(Some(&enc)));
        assert!(
            with_dict.len() < plain.len(),
            "{codec}: dictionary {} vs plain {}",
            with_dict.len(),
            plain.len()
        );
        // The units need the dictionary, of their codec's kind.
        let (table, units) = SeekTable::parse(&with_dict).unwrap();
        let mut out = vec![0; 48];
        let mut decoder = RacDecoder::new();
        assert!(matches!(
            decoder.decode_unit(&table, 7, units, None, &mut out, true),
            Err(evtc_rac::Error::Usage(_))
        ));
        let zstd_dec = DecoderDictionary::new(&dict).unwrap();
        let prefix = PrefixDictionary::new(&dict);
        let (right, wrong) = match codec.algorithm() {
            Algorithm::Zstd => (
                DecodeDictionary::Zstd(&zstd_dec),
                DecodeDictionary::Prefix(&prefix),
            ),
            _ => (
                DecodeDictionary::Prefix(&prefix),
                DecodeDictionary::Zstd(&zstd_dec),
            ),
        };
        let wrong = decoder.decode_unit(&table, 7, units, Some(&wrong), &mut out, true);
        assert!(matches!(wrong, Err(evtc_rac::Error::Usage(_))), "{wrong:?}");
        decoder
            .decode_unit(&table, 7, units, Some(&right), &mut out, true)
            .unwrap();
        assert_eq!(out, entries[7]);
    }
}

/// Entry sizes take the fewest bits their values need: 6-float entries of 0 to 20 floats cost
/// 5 bits each (lengths are multiples of 4, shifted out), and damaged sizes are errors.
#[test]
fn entry_sizes_are_packed_and_checked() {
    let counts: Vec<usize> = (0..100).map(|i| (i * 5) % 21).collect();
    let data: Vec<u8> = counts.iter().flat_map(|&n| vec![1u8; 4 * n]).collect();
    let ends: Vec<usize> = counts
        .iter()
        .scan(0, |at, &n| {
            *at += 4 * n;
            Some(*at)
        })
        .collect();
    let options = RacOptions {
        codec: Codec::NONE,
        precondition: Precondition::None,
        min_unit_bytes: usize::MAX,
        entry_sizes: true,
    };
    let mut payload = vec![];
    RacEncoder::new()
        .encode(&options, None, &data, &ends, &mut payload)
        .unwrap();
    let (table, units) = SeekTable::parse(&payload).unwrap();
    assert!(table.has_entry_sizes());
    assert_eq!(table.units().len(), 1);
    // shift 2, 5 bits, 100 fields in 63 bytes, then the data as is.
    assert_eq!(&units[..2], &[2, 5]);
    assert_eq!(units.len(), 2 + 63 + data.len());
    let mut sizes = vec![];
    table.entry_sizes(0, units, &mut sizes).unwrap();
    assert_eq!(
        sizes,
        counts.iter().map(|&n| 4 * n as u64).collect::<Vec<_>>()
    );
    // A flipped size no longer adds up to the unit; a truncated unit cannot hold its sizes.
    let mut damaged = units.to_vec();
    damaged[2] ^= 0x04;
    let err = table.entry_sizes(0, &damaged, &mut sizes).unwrap_err();
    assert!(err.to_string().contains("add up"), "{err}");
    let err = table.entry_sizes(0, &units[..10], &mut vec![]).unwrap_err();
    assert!(err.to_string().contains("run past"), "{err}");
    // As ends in 4-byte values: the running counts. Damage, sizes that are not whole 8-byte
    // values and sums past 2^64 are errors that leave nothing behind.
    let mut ends = vec![100];
    table.entry_value_ends(0, units, 2, 10, &mut ends).unwrap();
    let running: Vec<u64> = counts
        .iter()
        .scan(10, |end, &n| {
            *end += n as u64;
            Some(*end)
        })
        .collect();
    assert_eq!(ends[0], 100);
    assert_eq!(ends[1..], running);
    for (stored, shift, start, reason) in [
        (&damaged[..], 2, 0, "add up"),
        (units, 3, 0, "whole"),
        (units, 2, u64::MAX - 5, "overflow"),
        (units, 0, u64::MAX - 5, "overflow"),
    ] {
        let mut ends = vec![];
        let err = table
            .entry_value_ends(0, stored, shift, start, &mut ends)
            .unwrap_err();
        assert!(err.to_string().contains(reason), "{err}");
        assert!(ends.is_empty());
    }
    // As counts: the same counts, the same errors but for the sums (no start to overflow).
    let mut got = vec![];
    table.entry_value_counts(0, units, 2, &mut got).unwrap();
    assert!(got.iter().map(|&n| n as usize).eq(counts.iter().copied()));
    for (stored, shift, reason) in [(&damaged[..], 2, "add up"), (units, 3, "whole")] {
        let mut got = vec![];
        let err = table
            .entry_value_counts(0, stored, shift, &mut got)
            .unwrap_err();
        assert!(err.to_string().contains(reason), "{err}");
        assert!(got.is_empty());
    }
}

#[test]
fn runs_units_store_each_run_once_and_lzma_stores_random_planes_as_is() {
    // 1,000 entries of six equal floats each (the RAC study's TFloat), values spread over every
    // mantissa bit, in units of about 8 KiB.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let entries: Vec<Vec<u8>> = (0..1000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = (state >> 40) as f32 / 16_777_216.0 * 2000.0 - 1000.0;
            std::iter::repeat_n(value, 6)
                .flat_map(f32::to_le_bytes)
                .collect()
        })
        .collect();
    let data = entries.concat();
    let ends: Vec<usize> = (1..=1000).map(|i| i * 24).collect();
    let size = |codec: &str, precondition| {
        let options = RacOptions {
            codec: codec.parse().unwrap(),
            precondition,
            min_unit_bytes: 8 << 10,
            entry_sizes: false,
        };
        let mut payload = Vec::new();
        RacEncoder::new()
            .encode(&options, None, &data, &ends, &mut payload)
            .unwrap();
        let (table, units) = SeekTable::parse(&payload).unwrap();
        let mut back = vec![0; data.len()];
        RacDecoder::new()
            .decode_all(&table, units, None, &mut back, true)
            .unwrap();
        assert_eq!(back, data, "{codec} {precondition}");
        payload.len()
    };
    let runs = Precondition::Runs(Width::W4);
    let shuffle = Precondition::Shuffle(Width::W4);
    // Each run's value once (5 bytes of 24 with its length) before any codec, and smaller
    // compressed too.
    assert!(size("none", runs) < data.len() / 4);
    assert!(size("lzma:6", runs) < size("lzma:6", shuffle));
    assert!(size("zstd:5", runs) < size("zstd:5", shuffle));
}

/// Entries of no bytes train no prefix: an empty one would be a dictionary that no unit uses.
#[test]
fn empty_entries_train_no_prefix() {
    for codec in ["lz4", "lzma:6"] {
        let options = RacOptions {
            codec: codec.parse().unwrap(),
            precondition: Precondition::None,
            min_unit_bytes: 0,
            entry_sizes: true,
        };
        assert_eq!(train_dictionary(&options, &[], &[0, 0, 0], 1024), None);
        assert!(train_dictionary(&options, &[1, 2, 3], &[1, 3], 1024).is_some());
    }
}

/// An lzma prefix is kept only if it makes the units smaller: units of random bytes, which LZMA
/// cannot shrink and which are stored as they are, keep none; units of a few shared values do.
#[test]
fn lzma_prefixes_that_no_unit_uses_are_not_kept() {
    let options = RacOptions {
        codec: "lzma:6".parse().unwrap(),
        precondition: Precondition::None,
        min_unit_bytes: 2048,
        entry_sizes: true,
    };
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let random: Vec<u8> = (0..64 << 10).map(|_| next() as u8).collect();
    let shared: Vec<u8> = (0..64 << 10)
        .map(|i| [3u8, 141, 59, 26][(next() % 4) as usize] ^ (i % 7) as u8)
        .collect();
    let ends: Vec<usize> = (1..=1024).map(|i| i * 64).collect();
    let random_trial = trial_units(&options, true, false, &random, &ends).unwrap();
    assert!(random_trial.dictionary.is_none());
    let shared_trial = trial_units(&options, true, false, &shared, &ends).unwrap();
    assert!(shared_trial.dictionary.is_some());
}
