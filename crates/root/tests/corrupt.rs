//! Truncated and byte-flipped ROOT files must give errors, never panics or huge allocations.

use std::path::Path;

use evtc_root::{Error, RootFile, read_everything};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .expect("fixture")
}

#[test]
fn not_a_root_file() {
    let err = RootFile::from_source(b"EVTC\r\n\x1a\n....".to_vec()).expect_err("not ROOT");
    assert!(matches!(err, Error::NotRoot(m) if &m == b"EVTC"), "{err}");
    let err = RootFile::from_source(Vec::new()).expect_err("empty");
    assert!(matches!(err, Error::NotRoot(_)), "{err}");
}

#[test]
fn every_truncation_is_an_error() {
    for name in ["layout.root", "embedded.root", "kinds_505.root"] {
        let data = fixture(name);
        let full = read_everything(data.clone());
        assert!(full > 0, "{name} reads");
        // The file's tail (streamer info, free-segment list) is not needed to read trees, but
        // most cuts lose the key list, the tree record or a basket.
        let step = (data.len() / 400).max(1);
        let (mut cuts, mut lossy) = (0, 0);
        for cut in (0..data.len()).step_by(step) {
            let got = read_everything(data[..cut].to_vec());
            assert!(got <= full, "{name} cut at {cut}");
            cuts += 1;
            lossy += usize::from(got < full);
        }
        assert!(
            lossy * 10 >= cuts * 9,
            "{name}: only {lossy} of {cuts} cuts lost data"
        );
    }
}

#[test]
fn byte_flips_never_panic() {
    for name in [
        "layout.root",
        "embedded.root",
        "kinds_404.root",
        "uproot.root",
    ] {
        let data = fixture(name);
        let step = (data.len() / 300).max(1);
        for at in (0..data.len()).step_by(step) {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = data.clone();
                bad[at] ^= flip;
                read_everything(bad);
            }
        }
    }
}

#[test]
fn flipped_basket_byte_names_the_branch_and_basket() {
    let data = fixture("kinds_505.root");
    let file = RootFile::from_source(data.clone()).expect("open");
    let tree = file.tree("Events").expect("tree");
    let column = tree.column("Muon_pt").expect("column");
    // Corrupt the middle of the branch's first basket (its zstd data).
    let seek = column.baskets().next().expect("a basket").seek;
    let mut bad = data;
    bad[seek as usize + 120] ^= 0x55;
    let file = RootFile::from_source(bad).expect("open");
    let tree = file.tree("Events").expect("tree");
    let err = file
        .read_column(tree.column("Muon_pt").expect("column"), 0..tree.entries)
        .expect_err("corrupt basket")
        .to_string();
    assert!(err.contains("basket 0 of branch \"Muon_pt\""), "{err}");
}

#[test]
fn rntuple_truncations_and_byte_flips_never_panic() {
    for name in [
        "rntuple_kinds_505.root",
        "rntuple_fields.root",
        "rntuple_multikey.root",
        "rntuple_extension.root",
    ] {
        let data = fixture(name);
        let full = read_everything(data.clone());
        assert!(full > 0, "{name} reads");
        let step = (data.len() / 300).max(1);
        for cut in (0..data.len()).step_by(step) {
            assert!(
                read_everything(data[..cut].to_vec()) <= full,
                "{name} cut at {cut}"
            );
        }
        for at in (0..data.len()).step_by(step) {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = data.clone();
                bad[at] ^= flip;
                read_everything(bad);
            }
        }
    }
}

#[test]
fn flipped_rntuple_bytes_name_the_envelope_or_the_field_cluster_and_page() {
    let data = fixture("rntuple_kinds_505.root");
    let file = RootFile::from_source(data.clone()).expect("open");
    let layout = file.ntuple_layout("ntpl").expect("layout");
    let tree = file.tree("ntpl").expect("ntpl");
    let column = tree.column("f").expect("f");
    let reference = file.read_column(column, 0..tree.entries).expect("reads");
    // Every byte of the file: a flip anywhere gives the same values or an error that says
    // where, never other values (envelopes and pages carry checksums).
    let mut errors = Vec::new();
    for at in 0..data.len() {
        let mut bad = data.clone();
        bad[at] ^= 0x10;
        let Ok(file) = RootFile::from_source(bad) else {
            continue;
        };
        let read = file
            .tree("ntpl")
            .and_then(|t| file.read_column(t.column("f").expect("f"), 0..t.entries));
        match read {
            Ok(values) => assert_eq!(values, reference, "a flip at {at} changed the values"),
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert!(!layout.clusters.is_empty());
    let named = |needle: &str| errors.iter().any(|e| e.contains(needle));
    assert!(named("checksum mismatch"), "{errors:?}");
    assert!(
        named("RNTuple \"ntpl\" header"),
        "the header envelope is named"
    );
    assert!(
        named("field \"f\" of RNTuple \"ntpl\", cluster 0, column"),
        "pages are named"
    );
    assert!(named(", page 0"), "pages are named");
}
