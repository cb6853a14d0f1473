//! Corrupt files: truncation at every offset and byte flips across a small file give errors or
//! correct data, never a panic or a hang.

use evtc_format::{
    BranchSpec, Error, FileReader, FileWriter, ReadOptions, ScalarType, WriteOptions,
};

/// The small file compressed with zstd, and stored without preconditioners (the reader's fast
/// path that reads stored baskets straight into the output).
fn small_files() -> [Vec<u8>; 2] {
    [small_file("zstd:1"), small_file("none")]
}

/// A small file with every kind of branch and several baskets and clusters.
fn small_file(codec: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.evtc");
    let options = WriteOptions::default()
        .codec(codec.parse().unwrap())
        .basket_size(64)
        .cluster_size(evtc_format::ClusterSize::Entries(20))
        .threads(1);
    let mut file = FileWriter::create(&path, options).unwrap();
    let stored = codec == "none";
    let specs: Vec<BranchSpec> = vec![
        BranchSpec::scalar("n", ScalarType::U8),
        BranchSpec::jagged("pt", ScalarType::F32).counter("n"),
        BranchSpec::jagged("ids", ScalarType::I64).boundaries(evtc_format::Boundaries::Offsets),
        BranchSpec::jagged("hits", ScalarType::U16).boundaries(evtc_format::Boundaries::Counts),
        BranchSpec::fixed("xyz", ScalarType::F64, 3),
        BranchSpec::scalar("ok", ScalarType::Bool),
        BranchSpec::utf8("name"),
    ];
    let specs = specs
        .into_iter()
        .map(|s| {
            if stored {
                s.precondition(evtc_codecs::Precondition::None)
            } else {
                s
            }
        })
        .collect();
    let mut tree = file.tree("Events", specs).unwrap();
    for e in 0..50u8 {
        let n = e % 3;
        tree.fill(0, n).unwrap();
        tree.fill_array(1, &vec![f32::from(e) * 1.5; n as usize])
            .unwrap();
        tree.fill_array(2, &[i64::from(e), -1]).unwrap();
        tree.fill_array(3, &vec![u16::from(e); (e % 4) as usize])
            .unwrap();
        tree.fill_array(4, &[0.5, f64::from(e), 2.0]).unwrap();
        tree.fill(5, e % 2 == 0).unwrap();
        tree.fill_str(6, &format!("event-{e}")).unwrap();
        tree.end_entry().unwrap();
    }
    tree.finish().unwrap();
    file.finish().unwrap();
    std::fs::read(&path).unwrap()
}

/// Opens and fully reads every branch; returns a summary to compare with the intact file.
fn read_all(bytes: Vec<u8>, verify: bool) -> Result<String, Error> {
    let file = FileReader::from_source(
        bytes,
        ReadOptions::default().verify_checksums(verify).threads(1),
    )?;
    let tree = file.tree("Events")?;
    let mut out = String::new();
    out += &format!("{:?}", tree.branch("n")?.read::<u8>()?);
    out += &format!("{:?}", tree.branch("pt")?.read_jagged::<f32>()?);
    out += &format!("{:?}", tree.branch("ids")?.read_jagged::<i64>()?);
    out += &format!("{:?}", tree.branch("hits")?.read_jagged::<u16>()?);
    out += &format!("{:?}", tree.branch("xyz")?.read::<f64>()?);
    out += &format!("{:?}", tree.branch("ok")?.read::<bool>()?);
    out += &format!("{:?}", tree.branch("name")?.read_strings()?);
    for name in ["pt", "ids", "hits", "xyz", "name"] {
        out += &format!("{}", tree.branch(name)?.value_count(0..tree.entries())?);
    }
    let mut cursor = tree.branch("pt")?.cursor::<f32>()?;
    for e in 0..tree.entries() {
        out += &format!("{:?}", cursor.get(e)?);
    }
    Ok(out)
}

#[test]
fn the_small_file_reads() {
    for bytes in small_files() {
        let summary = read_all(bytes, true).unwrap();
        assert!(summary.contains("event-49"));
    }
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    for bytes in small_files() {
        for len in 0..bytes.len() {
            let result = read_all(bytes[..len].to_vec(), true);
            assert!(result.is_err(), "truncated to {len} bytes and still read");
        }
    }
}

#[test]
fn byte_flips_give_errors_with_checksums() {
    for bytes in small_files() {
        let intact = read_all(bytes.clone(), true).unwrap();
        for at in 0..bytes.len() {
            for flip in [0x01u8, 0x80] {
                let mut bad = bytes.clone();
                bad[at] ^= flip;
                match read_all(bad, true) {
                    Err(_) => {}
                    // A flip in bytes no reader looks at (reserved fields, the file header's flags) is harmless.
                    Ok(summary) => {
                        assert_eq!(summary, intact, "flip at {at} changed the data silently")
                    }
                }
            }
        }
    }
}

#[test]
fn byte_flips_without_checksums_never_panic() {
    for bytes in small_files() {
        for at in 0..bytes.len() {
            for value in [0x00u8, 0xFF, 0x7F] {
                let mut bad = bytes.clone();
                bad[at] = value;
                let _ = read_all(bad, false);
            }
        }
    }
}

#[test]
fn errors_name_where() {
    let mut bytes = small_file("zstd:1");
    // Corrupt the middle of the file, where baskets are.
    let at = bytes.len() / 3;
    bytes[at] ^= 0x55;
    let err = read_all(bytes, true).unwrap_err().to_string();
    assert!(err.contains("offset"), "{err}");
    let err = read_all(
        b"not an evtc file at all, just some bytes padding it out".to_vec(),
        true,
    )
    .unwrap_err();
    assert!(matches!(err, Error::NotEvtc(_)), "{err}");
    let mut newer = small_file("zstd:1");
    newer[8] = 2;
    let err = read_all(newer, true).unwrap_err();
    assert!(
        matches!(err, Error::UnsupportedVersion { major: 2, .. }),
        "{err}"
    );
}

/// A counter whose values claim more than the baskets of its jagged branch hold (checksums off,
/// so that the patched bytes are read): the size query that a caller sizes its buffer by says
/// so, rather than giving the counter's sum.
#[test]
fn a_counter_claiming_more_values_than_the_baskets_hold_is_refused_by_the_size_query() {
    let mut bytes = small_file("none");
    let options = ReadOptions::default().verify_checksums(false).threads(1);
    let file = FileReader::from_source(bytes.clone(), options.clone()).unwrap();
    let tree = file.tree("Events").unwrap();
    let entries = tree.entries();
    let pt = tree.branch("pt").unwrap();
    let held: u64 = pt
        .baskets()
        .unwrap()
        .baskets
        .iter()
        .map(|b| b.elements)
        .sum();
    assert_eq!(pt.value_count(0..entries).unwrap(), held);
    // The counter's first basket: a record header, then one stored block (a 24-byte envelope,
    // then the u8 values as they are).
    let first = tree.branch("n").unwrap().baskets().unwrap().baskets[0];
    drop(file);
    bytes[first.offset as usize + 48 + 24] = 200;
    let file = FileReader::from_source(bytes, options).unwrap();
    let pt = file.tree("Events").unwrap().branch("pt").unwrap();
    let basket = pt.baskets().unwrap().baskets[0];
    // The whole tree, and the entries of the first basket alone.
    for range in [0..entries, 0..basket.entries] {
        let err = pt.value_count(range).unwrap_err().to_string();
        let holds = format!("the basket holds {}", basket.elements);
        assert!(err.contains(&holds), "{err}");
        assert!(err.contains("\"pt\""), "{err}");
    }
}
