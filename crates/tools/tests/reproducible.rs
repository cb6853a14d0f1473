//! The same input and options give byte-identical files whatever the number of threads.

use std::path::{Path, PathBuf};

use evtc_format::{ClusterSize, RacMode};
use evtc_tools::{Settings, convert};

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nano_sample.root")
}

/// Converts `input` with 1, 2 and 4 threads and checks the three outputs are the same bytes.
fn same_bytes_for_any_threads(input: &Path, settings: Settings) {
    let dir = tempfile::tempdir().unwrap();
    let outputs: Vec<Vec<u8>> = [1, 2, 4]
        .into_iter()
        .map(|threads| {
            let out = dir.path().join(format!("t{threads}.evtc"));
            let options = Settings {
                threads,
                sync: false,
                ..settings.clone()
            };
            convert(input, &out, &options, &mut |_| ()).unwrap();
            std::fs::read(&out).unwrap()
        })
        .collect();
    for (threads, bytes) in [2, 4].into_iter().zip(&outputs[1..]) {
        assert!(
            *bytes == outputs[0],
            "{}: {threads} threads wrote {} bytes, 1 thread {} (or the same length, other bytes)",
            input.display(),
            bytes.len(),
            outputs[0].len()
        );
    }
}

#[test]
fn root_conversions_do_not_depend_on_threads() {
    same_bytes_for_any_threads(&sample(), Settings::default());
    // RAC writes dictionaries as branches settle; small baskets make many batches.
    let rac = Settings {
        rac: RacMode::On,
        basket_size: Some(16 << 10),
        cluster_size: Some(ClusterSize::Entries(3000)),
        ..Settings::default()
    };
    same_bytes_for_any_threads(&sample(), rac);
}

#[test]
fn evtc_recompression_does_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.evtc");
    let options = Settings {
        sync: false,
        ..Settings::default()
    };
    convert(&sample(), &first, &options, &mut |_| ()).unwrap();
    let lz4 = Settings {
        codec: Some("lz4".parse().unwrap()),
        basket_size: Some(8 << 10),
        cluster_size: Some(ClusterSize::Entries(1000)),
        ..Settings::default()
    };
    same_bytes_for_any_threads(&first, lz4);
}
