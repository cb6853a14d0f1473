//! Settings: `evtc bench` advising, plotting and applying, and lossy float storage (mantissa
//! bits, quantization) where asked and shown.

use super::*;

#[test]
fn bench_advises_plots_and_applies() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("nano.evtc").display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "4000", &file,
    ]));
    let codecs = ["--codecs", "none,lz4,zstd:1,zstd:5"];

    let json: Value = serde_json::from_str(&ok(&evtc(
        &[
            &["advise", &file, "--json", "--sample", "1MiB"][..],
            &codecs[..],
        ]
        .concat(),
    )))
    .expect("JSON");
    let branches = json["trees"][0]["branches"].as_array().expect("branches");
    assert_eq!(branches.len(), 114);
    assert!(
        branches
            .iter()
            .all(|b| b["outcomes"].as_array().is_some_and(|o| !o.is_empty()))
    );
    let goals: Vec<&str> = json["goals"]
        .as_array()
        .expect("goals")
        .iter()
        .map(|g| g["goal"].as_str().expect("goal"))
        .collect();
    assert_eq!(goals, ["size", "read", "balanced", "random"]);
    assert!(
        json["current"]["stored_bytes"]
            .as_u64()
            .is_some_and(|b| b > 0)
    );

    let svg = dir.path().join("advice.svg");
    let out = dir.path().join("read.evtc");
    let text = ok(&evtc(
        &[
            &[
                "advise",
                &file,
                "--quiet",
                "--goal",
                "read",
                "--no-rac",
                "--plot",
                &svg.display().to_string(),
                "--apply",
                &out.display().to_string(),
            ][..],
            &codecs[..],
        ]
        .concat(),
    ));
    assert!(text.contains("--goal read:"), "{text}");
    assert!(text.contains("uniform zstd:5"), "{text}");
    assert!(text.contains("applied --goal read"), "{text}");
    let drawn = std::fs::read_to_string(&svg).expect("plot");
    assert!(drawn.starts_with("<svg") && drawn.contains("file size, MB"));
    let out = out.display().to_string();
    ok(&evtc(&["verify", &out]));
    let rows = |f: &str| {
        ok(&evtc(&[
            "dump",
            f,
            "--entries",
            "0..40",
            "--format",
            "json",
        ]))
    };
    assert_eq!(rows(&file), rows(&out));

    // A ROOT file is benched before conversion.
    let root = repo("data/nano_sample.root").display().to_string();
    let text = ok(&evtc(&[
        "advise", &root, "--quiet", "--codecs", "lz4", "--no-rac", "--sample", "256KiB",
    ]));
    assert!(text.contains("(root,"), "{text}");

    // A PNG is the SVG rasterised, its text in the system's fonts: a picture where fonts are
    // installed, a clear error where none are.
    let png = dir.path().join("advice.png");
    let out = evtc(&[
        "advise",
        &file,
        "--quiet",
        "--codecs",
        "lz4",
        "--no-rac",
        "--sample",
        "256KiB",
        "--plot",
        &png.display().to_string(),
    ]);
    if out.status.success() {
        let bytes = std::fs::read(&png).expect("png");
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    } else {
        fails(&out, "system's fonts", None);
    }
    let pdf = dir.path().join("advice.pdf").display().to_string();
    fails(
        &evtc(&["advise", &file, "--plot", &pdf]),
        ".svg or .png",
        None,
    );
    fails(
        &evtc(&["advise", &file, "--goal", "fast"]),
        "unknown goal",
        None,
    );
    fails(
        &evtc(&["advise", &file, "--float-tolerance", "Muon_*=0"]),
        "tolerance 0",
        None,
    );
}

#[test]
fn float_precision_is_lossy_where_asked_and_shown() {
    let (dir, file, out, report) = converted_nano("--float-precision", "Muon_*=10");
    for b in report["trees"][0]["branches"].as_array().expect("branches") {
        let name = b["name"].as_str().expect("name");
        let float = b["type"].as_str().is_some_and(|t| t.starts_with("f32"));
        let expected = (name.starts_with("Muon_") && float).then_some(10);
        assert_eq!(b["mantissa_bits"].as_u64(), expected, "{name}");
    }
    assert!(ok(&evtc(&["inspect", &out])).contains("mantissa:10"));
    let values = |f: &str| dumped_floats(f, "Muon_pt");
    let (exact, lossy) = (values(&file), values(&out));
    assert_eq!(exact.len(), lossy.len());
    assert!(!exact.is_empty() && exact != lossy);
    for (a, b) in exact.iter().zip(&lossy) {
        assert!(((b - a) / a).abs() <= 2f64.powi(-11), "{a} -> {b}");
    }
    fails(
        &evtc(&[
            "convert",
            &file,
            &dir.path().join("bad.evtc").display().to_string(),
            "--float-precision",
            "Muon_pt=30",
        ]),
        "30 mantissa bits",
        Some(&dir.path().join("bad.evtc")),
    );
}

#[test]
fn float_quantize_is_lossy_within_half_a_step_and_refuses_the_outside() {
    let (dir, file, out, report) = converted_nano("--float-quantize", "Muon_eta=-3.2:3.2:10");
    for b in report["trees"][0]["branches"].as_array().expect("branches") {
        let expected = (b["name"] == "Muon_eta").then_some("-3.2:3.2:10");
        assert_eq!(b["quantization"].as_str(), expected, "{}", b["name"]);
    }
    assert!(ok(&evtc(&["inspect", &out])).contains("quantized:-3.2:3.2:10"));
    let values = |f: &str| dumped_floats(f, "Muon_eta");
    let (exact, quantized) = (values(&file), values(&out));
    assert_eq!(exact.len(), quantized.len());
    let half_step = 6.4 / 1023.0 / 2.0;
    let mut grid = std::collections::BTreeSet::new();
    for (a, b) in exact.iter().zip(&quantized) {
        assert!((b - a).abs() <= half_step * 1.0001, "{a} -> {b}");
        grid.insert(b.to_bits());
    }
    assert!(grid.len() <= 1024);
    let bad = dir.path().join("bad.evtc");
    fails(
        &evtc(&[
            "convert",
            &file,
            &bad.display().to_string(),
            "--float-quantize",
            "Muon_eta=-1:1:10",
        ]),
        "outside the quantization range [-1, 1]",
        Some(&bad),
    );
    fails(
        &evtc(&[
            "convert",
            &file,
            &bad.display().to_string(),
            "--float-quantize",
            "Muon_eta=1:-1:10",
        ]),
        "bad quantization",
        Some(&bad),
    );
}

/// The values of a float branch of an evtc file, every entry's in order, as `evtc dump --format
/// json` prints them.
fn dumped_floats(file: &str, branch: &str) -> Vec<f64> {
    let rows: Value = serde_json::from_str(&ok(&evtc(&[
        "dump",
        file,
        "--branches",
        branch,
        "--format",
        "json",
    ])))
    .expect("JSON");
    rows.as_array()
        .expect("rows")
        .iter()
        .flat_map(|r| r[branch].as_array().cloned().unwrap_or_default())
        .map(|v| v.as_f64().expect("number"))
        .collect()
}

/// A generated 3,000-event nano file converted with one more flag: the directory, both paths
/// and the output's `inspect --json` report.
fn converted_nano(flag: &str, value: &str) -> (tempfile::TempDir, String, String, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("nano.evtc").display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "3000", &file,
    ]));
    let out = dir.path().join("converted.evtc").display().to_string();
    ok(&evtc(&["convert", "--quiet", &file, &out, flag, value]));
    let report = serde_json::from_str(&ok(&evtc(&["inspect", "--json", &out]))).expect("JSON");
    (dir, file, out, report)
}
