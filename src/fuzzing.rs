//! Fuzz harnesses, shared by the cargo-fuzz targets in `fuzz/` and by `tests/fuzz_corpus.rs`, which
//! replays the committed corpus and every kept crasher on stable Rust in CI.
//!
//! Each harness must return (with an error or with data) on any input; a panic is a bug.

use evtc_codecs::{Algorithm, BlockDecoder, Decompressor};
use evtc_format::{FileReader, ReadOptions, Scalar};

/// Decodes `data` as a block envelope with and without checksum verification, and feeds it raw to
/// every backend with a declared size taken from its first two bytes.
pub fn decode_block(data: &[u8]) {
    let mut out = Vec::new();
    let _ = BlockDecoder::new()
        .max_uncompressed_len(1 << 24)
        .decode(data, &mut out);
    let _ = BlockDecoder::new()
        .verify_checksums(false)
        .max_uncompressed_len(1 << 24)
        .decode(data, &mut out);
    if let [a, b, rest @ ..] = data {
        let declared = usize::from(u16::from_le_bytes([*a, *b]));
        let mut out = vec![0; declared];
        let mut decompressor = Decompressor::new();
        for algorithm in Algorithm::ALL {
            let _ = decompressor.decompress(algorithm, rest, &mut out);
        }
    }
}

/// Opens `data` as an evtc file and reads every branch of every tree, by bulk reads, range reads
/// of consecutive thirds (with their sizes and counts first) and entry reads, and looks events
/// up in each tree's event index, with checksums on and then off (so that the decoders see the
/// mutated bytes).
pub fn open_file(data: &[u8]) {
    for verify in [true, false] {
        let Ok(file) = FileReader::from_source(
            data.to_vec(),
            ReadOptions::default().verify_checksums(verify).threads(1),
        ) else {
            continue;
        };
        for tree in file.trees() {
            let Ok(reader) = file.tree(&tree.name) else {
                continue;
            };
            for branch in reader.branches() {
                let Ok(b) = reader.branch(&branch.name) else {
                    continue;
                };
                read_branch(&b, branch.dtype.scalar());
            }
            look_up_events(&reader);
        }
    }
}

/// Looks keys up in `tree`'s event index, if it has one: keys of its rows (as far as they
/// decode), absent keys and keys outside any key type, one at a time and all at once.
fn look_up_events<R: evtc_format::ReadAt>(tree: &evtc_format::TreeReader<'_, R>) {
    let Ok(Some(index)) = tree.event_index() else {
        return;
    };
    let mut keys = vec![(0, 0), (-1, 1), (i128::MAX, i128::MIN)];
    if let Ok(rows) = index.rows_in_order() {
        keys.extend(rows.iter().step_by(7).map(|&(a, b, _)| (a, b)));
    }
    for &(major, minor) in &keys[..3] {
        let _ = index.entries_of(major, minor);
        let _ = index.entry_of(major, minor);
    }
    let _ = index.entries_of_each(&keys);
    let _ = index.entry_of_each(&keys);
}

fn read_branch<R: evtc_format::ReadAt>(
    b: &evtc_format::BranchReader<'_, R>,
    t: evtc_format::ScalarType,
) {
    use evtc_format::ScalarType as S;
    match t {
        S::Bool => read_typed::<bool, R>(b),
        S::I8 => read_typed::<i8, R>(b),
        S::U8 => read_typed::<u8, R>(b),
        S::I16 => read_typed::<i16, R>(b),
        S::U16 => read_typed::<u16, R>(b),
        S::I32 => read_typed::<i32, R>(b),
        S::U32 => read_typed::<u32, R>(b),
        S::I64 => read_typed::<i64, R>(b),
        S::U64 => read_typed::<u64, R>(b),
        S::F32 => read_typed::<f32, R>(b),
        S::F64 => read_typed::<f64, R>(b),
    }
}

fn read_typed<T: Scalar, R: evtc_format::ReadAt>(b: &evtc_format::BranchReader<'_, R>) {
    let entries = b.tree().entries();
    let variable = b.meta().dtype.is_variable();
    if variable {
        let _ = b.read_jagged::<T>();
        let _ = b.read_strings();
    } else {
        let _ = b.read::<T>();
    }
    // Consecutive thirds, as a loop over steps reads them: baskets used in part (kept for the
    // next step), a counter's offsets of each range; each sized first, as C callers do.
    let cuts = [0, entries / 3, 2 * entries / 3, entries];
    for range in cuts.windows(2).map(|w| w[0]..w[1]) {
        let _ = b.value_count(range.clone());
        if variable {
            let _ = b.read_counts(range.clone());
            let _ = b.read_jagged_range::<T>(range);
        } else {
            let _ = b.read_range::<T>(range);
        }
    }
    if let Ok(mut cursor) = b.cursor::<T>() {
        // Entries apart (a RAC unit each: its first read readies that entry only), each with
        // the next one (the second read in a unit readies the rest).
        for e in (0..entries).step_by(((entries / 16) as usize).max(1)) {
            if cursor.get(e).is_err() || e + 1 < entries && cursor.get(e + 1).is_err() {
                break;
            }
        }
    }
}

/// Decodes `data` as the body of one basket: the first byte picks the branch type and boundary
/// encoding, the next two the entry count, the rest is the body.
pub fn decode_basket(data: &[u8]) {
    if let [kind, e0, e1, body @ ..] = data {
        let entries = usize::from(u16::from_le_bytes([*e0, *e1])) % 4096;
        evtc_format::fuzzing::decode_basket_body(*kind, entries, body);
    }
}

/// Recovers `data` as a damaged evtc file: whatever the input, recovery either refuses it or
/// writes a file that opens, whose every branch then reads (or fails) without a panic.
pub fn recover(data: &[u8]) {
    let mut out = Vec::new();
    if evtc_format::recover_into(&data.to_vec(), &mut out).is_ok() {
        if let Err(e) = FileReader::from_source(out.clone(), ReadOptions::default().threads(1)) {
            panic!("a recovered file does not open: {e}");
        }
        open_file(&out);
    }
}

/// Opens `data` as a ROOT file and reads every column of every tree.
pub fn root_file(data: &[u8]) {
    evtc_root::read_everything(data.to_vec());
}

/// Opens `data` as a ROOT file and, for each RNTuple in it, reads its layout and every column
/// whole and in two halves (the range reads that start inside a cluster's pages).
pub fn rntuple_file(data: &[u8]) {
    let Ok(file) = evtc_root::RootFile::from_source(data.to_vec()) else {
        return;
    };
    let Ok(trees) = file.trees() else {
        return;
    };
    for entry in trees {
        if entry.kind != evtc_root::TreeKind::RNTuple {
            continue;
        }
        let path = format!("{};{}", entry.path, entry.cycle);
        let _ = file.ntuple_layout(&path);
        let Ok(tree) = file.tree(&path) else {
            continue;
        };
        let half = tree.entries / 2;
        for column in &tree.columns {
            let mut reader = file.column_reader(column);
            for range in [0..tree.entries, 0..half, half..tree.entries] {
                let mut out = evtc_root::ColumnData::new(column.kind);
                let _ = reader.read(range, &mut out);
            }
        }
    }
}
