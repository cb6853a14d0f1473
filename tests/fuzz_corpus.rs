//! Replays the fuzz corpus and every kept crasher through the fuzz harnesses on stable Rust: a
//! crash found once stays fixed.

use std::path::Path;

fn replay(target: &str, harness: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in [
        root.join("corpus").join(target),
        root.join("regressions").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).unwrap();
            harness(&data);
            count += 1;
        }
    }
    count
}

#[test]
fn decode_block_corpus() {
    assert!(
        replay("decode_block", evtc::fuzzing::decode_block) > 0,
        "the decode_block corpus is empty"
    );
}

#[test]
fn open_file_corpus() {
    assert!(
        replay("open_file", evtc::fuzzing::open_file) > 0,
        "the open_file corpus is empty"
    );
}

#[test]
fn decode_basket_corpus() {
    assert!(
        replay("decode_basket", evtc::fuzzing::decode_basket) > 0,
        "the decode_basket corpus is empty"
    );
}

#[test]
fn root_file_corpus() {
    assert!(
        replay("root_file", evtc::fuzzing::root_file) > 0,
        "the root_file corpus is empty"
    );
}

#[test]
fn rntuple_file_corpus() {
    assert!(
        replay("rntuple_file", evtc::fuzzing::rntuple_file) > 0,
        "the rntuple_file corpus is empty"
    );
}

#[test]
fn recover_corpus() {
    assert!(
        replay("recover", evtc::fuzzing::recover) > 0,
        "the recover corpus is empty"
    );
}

/// ROOT files evtc writes, for the ROOT readers' targets: fixtures of every kind converted to
/// RNTuples (`rntuple_file`) and TTrees (`root_file`) in clusters of 64 entries, as
/// `(target, name, bytes)`.
fn written_root_seeds(dir: &Path) -> Vec<(&'static str, String, Vec<u8>)> {
    use evtc::tools::{OutputFormat, Settings, convert};

    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/root/tests/fixtures");
    let mut out = Vec::new();
    for fixture in ["kinds_505.root", "rntuple_kinds_505.root", "deep.root"] {
        for (to, target) in [
            (OutputFormat::RNTuple, "rntuple_file"),
            (OutputFormat::TTree, "root_file"),
        ] {
            let name = format!("written-{to}-{fixture}");
            let path = dir.join(&name);
            let mut settings = Settings {
                to: Some(to),
                sync: false,
                threads: 1,
                ..Settings::default()
            };
            settings.set("cluster_size", "64").unwrap();
            settings.set("skip_unsupported", "true").unwrap();
            convert(&fixtures.join(fixture), &path, &settings, &mut |_| {}).unwrap();
            out.push((target, name, std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// The ROOT readers' targets accept what evtc's writers write: every column of every tree
/// reads cleanly, and the harnesses return.
#[test]
fn the_root_targets_accept_what_the_writers_write() {
    let dir = tempfile::tempdir().unwrap();
    for (target, name, bytes) in written_root_seeds(dir.path()) {
        let file = evtc::root::RootFile::from_source(bytes.clone()).unwrap();
        let columns: usize = file
            .trees()
            .unwrap()
            .iter()
            .map(|t| file.tree(&t.path).unwrap().columns.len())
            .sum();
        assert!(columns > 0, "{name}");
        assert_eq!(
            evtc::root::read_everything(bytes.clone()),
            columns,
            "{name}"
        );
        match target {
            "rntuple_file" => evtc::fuzzing::rntuple_file(&bytes),
            _ => evtc::fuzzing::root_file(&bytes),
        }
    }
}

/// Writes the seed corpus: `cargo test --test fuzz_corpus -- --ignored write_seed_corpus`.
#[test]
#[ignore = "writes fuzz/corpus; run by hand when the seeds should change"]
fn write_seed_corpus() {
    use evtc::codecs::{BlockEncoder, Codec, Precondition, Width};
    use evtc::format::{
        Boundaries, BranchSpec, ClusterSize, FileWriter, RacMode, ScalarType, WriteOptions,
    };

    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus");
    let write = |target: &str, name: &str, data: &[u8]| {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    };

    let values: Vec<u8> = (0..300u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
    for spec in ["none", "lz4", "lz4hc:9", "zlib:6", "lzma:6", "zstd:5"] {
        for p in [
            Precondition::None,
            Precondition::BitShuffle(Width::W4),
            Precondition::Delta(Width::W4),
            Precondition::BitPlanes(Width::W4),
        ] {
            let mut block = Vec::new();
            BlockEncoder::new()
                .encode(spec.parse::<Codec>().unwrap(), p, &values, &mut block)
                .unwrap();
            write(
                "decode_block",
                &format!(
                    "{}-{}",
                    spec.replace(':', ""),
                    p.to_string().replace(':', "")
                ),
                &block,
            );
            // decode_basket: kind (u32 scalar, fixed boundaries = 6), 300 entries, one block.
            let mut basket = vec![6u8];
            basket.extend_from_slice(&300u16.to_le_bytes());
            basket.extend_from_slice(&block);
            write(
                "decode_basket",
                &format!(
                    "u32-{}-{}",
                    spec.replace(':', ""),
                    p.to_string().replace(':', "")
                ),
                &basket,
            );
        }
    }

    let dir = tempfile::tempdir().unwrap();
    for (name, codec, boundaries, rac) in [
        ("zstd-counts", "zstd:1", Boundaries::Counts, RacMode::Off),
        ("lz4-offsets", "lz4", Boundaries::Offsets, RacMode::Off),
        ("none-counts", "none", Boundaries::Counts, RacMode::Off),
        ("zstd-rac", "zstd:3", Boundaries::Counts, RacMode::On),
        ("lz4-rac", "lz4", Boundaries::Counts, RacMode::On),
    ] {
        let path = dir.path().join(name);
        let options = WriteOptions::default()
            .codec(codec.parse().unwrap())
            .basket_size(48)
            .cluster_size(ClusterSize::Entries(16))
            .threads(1)
            .rac(rac)
            .rac_unit_bytes(16)
            .sync(false);
        let mut file = FileWriter::create(&path, options).unwrap();
        let mut tree = file
            .tree(
                "Events",
                vec![
                    BranchSpec::scalar("n", ScalarType::U8),
                    BranchSpec::jagged("pt", ScalarType::F32).counter("n"),
                    BranchSpec::jagged("ids", ScalarType::I64).boundaries(boundaries),
                    BranchSpec::fixed("xyz", ScalarType::F64, 3),
                    BranchSpec::scalar("ok", ScalarType::Bool),
                    BranchSpec::utf8("name"),
                ],
            )
            .unwrap();
        for e in 0..40u8 {
            tree.fill(0, e % 3).unwrap();
            tree.fill_array(1, &vec![f32::from(e); usize::from(e % 3)])
                .unwrap();
            tree.fill_array(2, &vec![i64::from(e); usize::from(e % 4)])
                .unwrap();
            tree.fill_array(3, &[1.0, f64::from(e), 3.0]).unwrap();
            tree.fill(4, e % 2 == 1).unwrap();
            tree.fill_str(5, &format!("e{e}")).unwrap();
            tree.end_entry().unwrap();
        }
        tree.finish().unwrap();
        let mut tree = file
            .tree("Runs", vec![BranchSpec::scalar("run", ScalarType::U32)])
            .unwrap();
        tree.fill_column(0, &[1u32, 2, 3]).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        write("open_file", name, &bytes);
        // Indexes that claim far more values than the basket holds: the memory bounds' seeds.
        for (lie, elements) in [("4g", 1u64 << 30), ("max", u64::MAX / 8)] {
            let lying = evtc::format::fuzzing::with_lying_index(&bytes, elements);
            write("open_file", &format!("{name}-lying-{lie}"), &lying);
        }
        // recover: the whole file, and cut inside its first and second tree.
        write("recover", name, &bytes);
        write(
            "recover",
            &format!("{name}-cut-half"),
            &bytes[..bytes.len() / 2],
        );
        write(
            "recover",
            &format!("{name}-cut-end"),
            &bytes[..bytes.len() - 100],
        );
    }

    write(
        "open_file",
        "lzma-rac-dict",
        &lzma_dictionary_seed(dir.path()),
    );

    write("open_file", "event-index", &event_index_seed(dir.path()));

    for (target, name, bytes) in written_root_seeds(dir.path()) {
        write(target, &name, &bytes);
    }
}

/// A file with an event index (format 1.11), written in `dir`: its directory and its block of
/// rows, a key held twice.
fn event_index_seed(dir: &Path) -> Vec<u8> {
    use evtc::format::{BranchSpec, FileWriter, ScalarType, WriteOptions};

    let path = dir.join("event-index");
    let options = WriteOptions::default().threads(1).sync(false);
    let mut file = FileWriter::create(&path, options).unwrap();
    let mut tree = file
        .tree(
            "Events",
            vec![
                BranchSpec::scalar("run", ScalarType::I32),
                BranchSpec::scalar("event", ScalarType::U64),
            ],
        )
        .unwrap();
    tree.index_by("run", "event").unwrap();
    let runs: Vec<i32> = (0..60).map(|e| e / 20 - 1).collect();
    let mut events: Vec<u64> = (0..60u64).map(|e| (e * 37) % 61).collect();
    events[59] = events[58];
    tree.fill_column(0, &runs).unwrap();
    tree.fill_column(1, &events).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    std::fs::read(&path).unwrap()
}

/// A file with an lzma RAC branch with a dictionary (format 1.8), written in `dir`: units of
/// raw LZMA2 against it.
fn lzma_dictionary_seed(dir: &Path) -> Vec<u8> {
    use evtc::codecs::Precondition;
    use evtc::format::{BranchSpec, FileWriter, RacMode, ScalarType, WriteOptions};

    let path = dir.join("lzma-rac-dict");
    let options = WriteOptions::default()
        .codec("lzma:6".parse().unwrap())
        .rac(RacMode::On)
        .rac_unit_bytes(64)
        .threads(1)
        .sync(false);
    let mut file = FileWriter::create(&path, options).unwrap();
    let spec = BranchSpec::fixed("ids", ScalarType::U32, 4).precondition(Precondition::None);
    let mut tree = file.tree("Events", vec![spec]).unwrap();
    let table = [7u32, 1 << 20, 31_337, 5, 1 << 30, 99, 4_000_000, 12];
    let ids: Vec<u32> = (0..4 * 600u32)
        .map(|i| table[(i.wrapping_mul(2_654_435_761) >> 29) as usize])
        .collect();
    tree.fill_column(0, &ids).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let reader = evtc::format::FileReader::open(&path).unwrap();
    let meta = reader
        .tree("Events")
        .unwrap()
        .branch("ids")
        .unwrap()
        .meta()
        .clone();
    assert!(meta.dictionary_len > 0, "the seed has its dictionary");
    bytes
}
