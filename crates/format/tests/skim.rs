//! `skim`: chosen entries and branches into a new file, whole baskets (and whole RAC units of
//! the others) copied and the chosen entries of the others written again, for every codec and
//! RAC setting; bad selections.

mod common;

use std::path::Path;

use common::{muons, verifies, write_input};
use evtc_codecs::Codec;
use evtc_format::{
    BranchSpec, FileReader, RacMode, SkimOptions, TreeSelection, WriteOptions, skim,
};

fn options(codec: &str, rac: RacMode) -> WriteOptions {
    WriteOptions::default()
        .codec(codec.parse::<Codec>().unwrap())
        .rac(rac)
        .basket_size(4 << 10)
        .cluster_size("1000".parse().unwrap())
}

fn select(entries: Vec<u64>, branches: Option<&[&str]>) -> TreeSelection {
    TreeSelection {
        tree: "Events".into(),
        entries,
        branches: branches.map(|b| b.iter().map(|s| (*s).to_owned()).collect()),
    }
}

/// The skim holds the test data's `entries`, for the branches it has.
fn holds(path: &Path, entries: &[u64]) {
    let file = FileReader::open(path).unwrap();
    let tree = file.tree("Events").unwrap();
    assert_eq!(tree.entries(), entries.len() as u64);
    let has = |n: &str| tree.branches().iter().any(|b| b.name == n);
    if has("run") {
        let run = tree.branch("run").unwrap().read::<u32>().unwrap();
        let want: Vec<u32> = entries.iter().map(|&e| (e / 1000) as u32).collect();
        assert_eq!(run, want);
    }
    if has("Muon_pt") {
        let pt = tree
            .branch("Muon_pt")
            .unwrap()
            .read_jagged::<f32>()
            .unwrap();
        for (k, &e) in entries.iter().enumerate() {
            let (a, b) = (pt.offsets[k] as usize, pt.offsets[k + 1] as usize);
            let want: Vec<f32> = (0..muons(e)).map(|j| e as f32 * 0.5 + j as f32).collect();
            assert_eq!(pt.values[a..b], want[..], "entry {e}");
        }
    }
    if has("p") {
        let p = tree.branch("p").unwrap().read::<f64>().unwrap();
        for (k, &e) in entries.iter().enumerate() {
            assert_eq!(p[3 * k..3 * k + 3], [e as f64, -(e as f64), 0.25]);
        }
    }
    if has("tag") {
        let tag = tree.branch("tag").unwrap().read_jagged::<u8>().unwrap();
        for (k, &e) in entries.iter().enumerate() {
            assert_eq!(tag.offsets[k + 1] - tag.offsets[k], e % 3);
        }
    }
}

#[test]
fn chosen_entries_for_every_codec_and_rac_setting() {
    for codec in ["zstd:5", "lz4", "lzma:6", "none"] {
        for rac in [RacMode::Off, RacMode::On] {
            let dir = tempfile::tempdir().unwrap();
            let input = dir.path().join("in.evtc");
            write_input(&input, 0, 10_000, options(codec, rac), false);
            // Every 10th entry, the whole of entries 4000..6000 (whole clusters), and
            // 7123..7877 (whole RAC units of baskets kept in part).
            let mut entries: Vec<u64> = (0..10_000).step_by(10).collect();
            entries.extend(4000..6000);
            entries.extend(7123..7877);
            entries.sort_unstable();
            entries.dedup();
            let out = dir.path().join("skim.evtc");
            let done = skim(
                &input,
                &out,
                &[select(entries.clone(), None)],
                &SkimOptions::default(),
                &mut |_| {},
            )
            .unwrap();
            let t = &done[0];
            assert_eq!(
                (t.entries, t.of, t.branches),
                (entries.len() as u64, 10_000, 5)
            );
            assert!(
                t.copied_baskets > 0 && t.rewritten_baskets > 0,
                "{codec} {rac:?}: {t:?}"
            );
            // (LZMA's units of at least 8 KiB fill these 4 KiB baskets: one unit each.)
            let units = rac == RacMode::On && !codec.starts_with("lzma");
            assert_eq!(t.copied_units > 0, units, "{codec} {rac:?}: {t:?}");
            verifies(&out);
            holds(&out, &entries);
        }
    }
}

#[test]
fn whole_clusters_are_copied_and_branches_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.evtc");
    write_input(&input, 0, 5000, options("zstd:5", RacMode::Off), false);
    let out = dir.path().join("skim.evtc");
    let entries: Vec<u64> = (1000..3000).collect();
    let done = skim(
        &input,
        &out,
        &[select(entries.clone(), Some(&["Muon_pt", "nMuon", "run"]))],
        &SkimOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(done[0].rewritten_baskets, 0);
    holds(&out, &entries);
    let file = FileReader::open(&out).unwrap();
    let names: Vec<&str> = file.trees()[0]
        .branches
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    // In the input's order.
    assert_eq!(names, ["run", "nMuon", "Muon_pt"]);
    assert_eq!(file.trees()[0].cluster_ends, [1000, 2000]);

    // Written again with other settings: nothing copied.
    let out2 = dir.path().join("lz4.evtc");
    let respec = |meta: &evtc_format::BranchMeta| {
        let spec = BranchSpec::new(meta.name.clone(), meta.dtype).codec(Codec::LZ4);
        match &meta.counter {
            Some(c) => spec.counter(c.clone()),
            None => spec,
        }
    };
    let with = SkimOptions {
        respec: Some(&respec),
        ..SkimOptions::default()
    };
    let done = skim(
        &input,
        &out2,
        &[select(entries.clone(), None)],
        &with,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(done[0].copied_baskets, 0);
    holds(&out2, &entries);
    verifies(&out2);
}

#[test]
fn bad_selections_are_refused_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.evtc");
    write_input(&input, 0, 100, options("zstd:5", RacMode::Off), false);
    let out = dir.path().join("skim.evtc");
    let run = |selection: TreeSelection| {
        skim(
            &input,
            &out,
            &[selection],
            &SkimOptions::default(),
            &mut |_| {},
        )
        .unwrap_err()
        .to_string()
    };
    assert!(run(select(vec![5, 3], None)).contains("3 comes after 5"));
    assert!(run(select(vec![5, 5], None)).contains("each once"));
    assert!(run(select(vec![100], None)).contains("past its 100 entries"));
    assert!(run(select(vec![1], Some(&["Muon_pt"]))).contains("without its counter \"nMuon\""));
    assert!(run(select(vec![1], Some(&["nope"]))).contains("nope"));
    let wrong_tree = TreeSelection {
        tree: "Nope".into(),
        ..select(vec![1], None)
    };
    assert!(run(wrong_tree).contains("Nope"));
    assert!(!out.exists());
    let same = skim(
        &input,
        &input,
        &[select(vec![1], None)],
        &SkimOptions::default(),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(same.contains("is the input"), "{same}");
}

/// Reads a LEB128 varint at `at`; returns it and the position after it.
fn varint(bytes: &[u8], mut at: usize) -> (u64, usize) {
    let (mut value, mut shift) = (0u64, 0);
    loop {
        let byte = bytes[at];
        value |= u64::from(byte & 0x7f) << shift;
        at += 1;
        if byte & 0x80 == 0 {
            return (value, at);
        }
        shift += 7;
    }
}

/// A RAC basket whose seek table claims one entry fewer than the branch index gives it, under
/// valid checksums (the table's, the record body's and header's all made again): a skim that
/// would copy its units refuses it, naming the basket, and leaves no output.
#[test]
fn a_seek_table_that_disagrees_with_the_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.evtc");
    write_input(&input, 0, 3000, options("zstd:5", RacMode::On), false);
    let mut bytes = std::fs::read(&input).unwrap();
    // Body: u64 payload length, then the payload: u32 table length T, then the table: six
    // bytes, the unit count, and each unit's entry count first.
    let table = |loc: &evtc_format::BasketLoc| loc.offset as usize + 48 + 12;
    let file = FileReader::open(&input).unwrap();
    let index = file
        .tree("Events")
        .unwrap()
        .branch("p")
        .unwrap()
        .baskets()
        .unwrap();
    let loc = *(index.baskets.iter())
        .find(|loc| varint(&bytes, table(loc) + 6).0 > 1)
        .expect("a basket of several units");
    drop(file);
    let (record, body) = (loc.offset as usize, loc.offset as usize + 48);
    let body_len = loc.record_len as usize - 48;
    let table = table(&loc);
    let table_len = u32::from_le_bytes(bytes[table - 4..table].try_into().unwrap()) as usize;
    let at = varint(&bytes, table + 6).1;
    let (entries, _) = varint(&bytes, at);
    assert!(entries & 0x7f > 0, "the unit's count ends its first byte");
    bytes[at] -= 1;
    let table_crc = evtc_codecs::crc32(&bytes[table..table + table_len - 4]);
    bytes[table + table_len - 4..table + table_len].copy_from_slice(&table_crc.to_le_bytes());
    let body_crc = evtc_codecs::crc32(&bytes[body..body + body_len]);
    bytes[record + 40..record + 44].copy_from_slice(&body_crc.to_le_bytes());
    let header_crc = evtc_codecs::crc32(&bytes[record..record + 44]);
    bytes[record + 44..record + 48].copy_from_slice(&header_crc.to_le_bytes());
    std::fs::write(&input, &bytes).unwrap();

    // All but the basket's last entry: its other units are whole, to be copied.
    let first = loc.first_entry;
    let entries: Vec<u64> = (first..first + loc.entries - 1).collect();
    let out = dir.path().join("skim.evtc");
    let err = skim(
        &input,
        &out,
        &[select(entries, Some(&["p"]))],
        &SkimOptions::default(),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("seek table's entries or values differ from the branch index"),
        "{err}"
    );
    assert!(err.contains("\"p\""), "{err}");
    assert!(!out.exists());
    // A deep verification finds the basket wrong too.
    let file = FileReader::open(&input).unwrap();
    let p = file.tree("Events").unwrap().branch("p").unwrap();
    let deep = p.decode_all().unwrap_err().to_string();
    assert!(deep.contains("\"p\""), "{deep}");
}
