//! `merge`: baskets copied byte for byte where the inputs' branches are laid out alike, entries
//! written again where not, for every codec and RAC setting; schemas that differ; bad inputs.

mod common;

use std::path::{Path, PathBuf};

use common::{same_values, verifies, write_input};
use evtc_codecs::Codec;
use evtc_format::{
    BranchSpec, EXT_MERGE_DEFAULTS, FileReader, FileWriter, MergeOptions, RacMode, ScalarType,
    Schemas, WriteOptions, merge,
};

/// Three inputs of 3,000, 5,000 and 2,000 entries written with `options`.
fn inputs(dir: &Path, options: &WriteOptions) -> Vec<PathBuf> {
    let mut first = 0;
    let mut paths = Vec::new();
    for (i, n) in [3000u64, 5000, 2000].into_iter().enumerate() {
        let path = dir.join(format!("in{i}.evtc"));
        write_input(&path, first, n, options.clone(), false);
        first += n;
        paths.push(path);
    }
    paths
}

fn small(options: WriteOptions) -> WriteOptions {
    // Several baskets and clusters per input.
    options
        .basket_size(4 << 10)
        .cluster_size("1000".parse().expect("entries"))
}

#[test]
fn inputs_written_alike_are_copied_byte_for_byte_for_every_codec() {
    for codec in ["zstd:5", "lz4", "lzma:6", "zlib:6", "none"] {
        for rac in [RacMode::Off, RacMode::On] {
            let dir = tempfile::tempdir().unwrap();
            // No RAC dictionaries: a dictionary is trained per file, and units compressed
            // against another are written again (see the next test).
            let options = small(
                WriteOptions::default()
                    .codec(codec.parse::<Codec>().unwrap())
                    .rac(rac)
                    .rac_dictionary(false),
            );
            let ins = inputs(dir.path(), &options);
            let out = dir.path().join("out.evtc");
            let summary = merge(&out, &ins, &MergeOptions::default(), &mut |_| {}).unwrap();
            let tree = &summary.trees[0];
            assert!(
                tree.rewritten.is_empty(),
                "{codec} {rac:?}: {:?}",
                tree.rewritten
            );
            assert_eq!(tree.entries, 10_000);
            verifies(&out);
            same_values(&out, 10_000);
            // Every basket body is an input's, in order.
            let merged = FileReader::open(&out).unwrap();
            let merged = merged.tree("Events").unwrap();
            let opened: Vec<FileReader> =
                ins.iter().map(|p| FileReader::open(p).unwrap()).collect();
            let mut copied = 0;
            for name in ["run", "nMuon", "Muon_pt", "tag", "p"] {
                let out_branch = merged.branch(name).unwrap();
                let mut bodies = Vec::new();
                for file in &opened {
                    let branch = file.tree("Events").unwrap().branch(name).unwrap();
                    for i in 0..branch.baskets().unwrap().baskets.len() {
                        bodies.push(branch.raw_basket(i).unwrap().body);
                    }
                }
                assert_eq!(out_branch.baskets().unwrap().baskets.len(), bodies.len());
                for (i, body) in bodies.iter().enumerate() {
                    assert_eq!(&out_branch.raw_basket(i).unwrap().body, body, "{name} {i}");
                }
                copied += bodies.len() as u64;
            }
            assert_eq!(tree.copied_baskets, copied);
            // The inputs' clusters, one after the other.
            let ends = &merged.meta().cluster_ends;
            assert_eq!(ends[..4], [1000, 2000, 3000, 4000]);
            assert_eq!(*ends.last().unwrap(), 10_000);
        }
    }
}

#[test]
fn branches_laid_out_otherwise_are_written_again() {
    let dir = tempfile::tempdir().unwrap();
    // RAC with dictionaries: each input trains its own, so the later inputs' RAC branches are
    // written again with the first input's; and one input under another codec.
    let rac = small(WriteOptions::default().rac(RacMode::On));
    let lz4 = small(WriteOptions::default().codec(Codec::LZ4));
    let ins = vec![
        dir.path().join("a.evtc"),
        dir.path().join("b.evtc"),
        dir.path().join("c.evtc"),
    ];
    write_input(&ins[0], 0, 3000, rac.clone(), false);
    write_input(&ins[1], 3000, 4000, rac, false);
    write_input(&ins[2], 7000, 3000, lz4, false);
    let out = dir.path().join("out.evtc");
    let summary = merge(&out, &ins, &MergeOptions::default(), &mut |_| {}).unwrap();
    let tree = &summary.trees[0];
    let rewritten_in = |input: &Path| -> Vec<&str> {
        tree.rewritten
            .iter()
            .filter(|(_, i)| Path::new(i) == input)
            .map(|(b, _)| b.as_str())
            .collect()
    };
    // The first input is the layout: copied whole.
    assert!(rewritten_in(&ins[0]).is_empty());
    // Another codec: every branch written again.
    assert_eq!(rewritten_in(&ins[2]).len(), 5);
    assert!(tree.copied_baskets > 0);
    verifies(&out);
    same_values(&out, 10_000);
    let merged = FileReader::open(&out).unwrap();
    assert!(
        merged
            .tree("Events")
            .unwrap()
            .branches()
            .iter()
            .any(|b| b.rac)
    );
}

#[test]
fn a_re_encoding_merge_writes_every_branch_with_the_options_given() {
    let dir = tempfile::tempdir().unwrap();
    let ins = inputs(dir.path(), &small(WriteOptions::default()));
    let out = dir.path().join("out.evtc");
    let respec = |meta: &evtc_format::BranchMeta| {
        let mut spec = BranchSpec::new(meta.name.clone(), meta.dtype);
        if let Some(c) = &meta.counter {
            spec = spec.counter(c.clone());
        }
        spec.codec(Codec::LZ4)
    };
    let options = MergeOptions {
        respec: Some(&respec),
        ..MergeOptions::default()
    };
    let summary = merge(&out, &ins, &options, &mut |_| {}).unwrap();
    assert_eq!(summary.trees[0].copied_baskets, 0);
    verifies(&out);
    same_values(&out, 10_000);
    let file = FileReader::open(&out).unwrap();
    let lz4 = evtc_codecs::Algorithm::Lz4 as u8;
    assert!(file.trees()[0].branches.iter().all(|b| b.codec == lz4));
}

#[test]
fn schemas_that_differ_are_refused_or_united_or_intersected() {
    let dir = tempfile::tempdir().unwrap();
    let options = small(WriteOptions::default());
    let a = dir.path().join("a.evtc");
    let b = dir.path().join("b.evtc");
    write_input(&a, 0, 2000, options.clone(), false);
    write_input(&b, 2000, 3000, options, true);
    let ins = vec![a.clone(), b.clone()];
    let out = dir.path().join("out.evtc");

    let err = merge(&out, &ins, &MergeOptions::default(), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"extra\"") && err.contains("b.evtc"), "{err}");
    assert!(!out.exists());

    let union = MergeOptions {
        schemas: Schemas::Union,
        ..MergeOptions::default()
    };
    let summary = merge(&out, &ins, &union, &mut |_| {}).unwrap();
    assert_eq!(
        summary.trees[0].defaulted,
        [("extra".to_owned(), a.display().to_string())]
    );
    same_values(&out, 5000);
    verifies(&out);
    let file = FileReader::open(&out).unwrap();
    let tree = file.tree("Events").unwrap();
    let extra = tree.branch("extra").unwrap().read::<i16>().unwrap();
    assert!(extra[..2000].iter().all(|&x| x == 0));
    assert_eq!(
        extra[2000..],
        (2000..5000).map(|e| e as i16).collect::<Vec<_>>()[..]
    );
    // The file says which entries of which branch are defaults: branch 5, entries 0..2000.
    let ext = tree
        .meta()
        .extensions
        .iter()
        .find(|e| e.key == EXT_MERGE_DEFAULTS)
        .expect("merge-defaults");
    let mut want = 5u32.to_le_bytes().to_vec();
    want.extend_from_slice(&0u64.to_le_bytes());
    want.extend_from_slice(&2000u64.to_le_bytes());
    assert_eq!(ext.value, want);
    std::fs::remove_file(&out).unwrap();

    let intersect = MergeOptions {
        schemas: Schemas::Intersect,
        ..MergeOptions::default()
    };
    let summary = merge(&out, &ins, &intersect, &mut |_| {}).unwrap();
    assert_eq!(summary.trees[0].dropped, ["extra"]);
    let file = FileReader::open(&out).unwrap();
    assert_eq!(file.trees()[0].branches.len(), 5);
    same_values(&out, 5000);
}

#[test]
fn bad_inputs_give_clear_errors_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ins = inputs(dir.path(), &small(WriteOptions::default()));
    // The output is an input.
    let err = merge(&ins[1], &ins, &MergeOptions::default(), &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("is one of the inputs"), "{err}");
    // Not an evtc file.
    let junk = dir.path().join("junk.evtc");
    std::fs::write(&junk, b"not an evtc file at all, just some bytes").unwrap();
    let out = dir.path().join("out.evtc");
    let err = merge(
        &out,
        &[ins[0].clone(), junk.clone()],
        &MergeOptions::default(),
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("junk.evtc"), "{err}");
    assert!(!out.exists());
    // A branch of another type.
    let other = dir.path().join("other.evtc");
    let mut file = FileWriter::create(&other, WriteOptions::default()).unwrap();
    let mut tree = file
        .tree("Events", vec![BranchSpec::scalar("run", ScalarType::F64)])
        .unwrap();
    tree.fill_column(0, &[1.0f64]).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let union = MergeOptions {
        schemas: Schemas::Union,
        ..MergeOptions::default()
    };
    let err = merge(&out, &[ins[0].clone(), other], &union, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"run\"") && err.contains("other.evtc"),
        "{err}"
    );
    assert!(!out.exists());
}
