//! A ROOT branch whose data cannot be read (a damaged basket): the conversion fails naming it,
//! or with `skip_unsupported` leaves it out, says so in the summary, and converts the rest,
//! into evtc and into ROOT files alike.

use std::path::{Path, PathBuf};

use evtc_root::RootFile;
use evtc_tools::{Error, OutputFormat, Settings, convert};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../root/tests/fixtures")
        .join(name)
}

/// `kinds_505.root` with the last 32 bytes of branch `F`'s first basket overwritten: its
/// zstd frame no longer decodes.
fn damaged(dir: &Path) -> PathBuf {
    let source = fixture("kinds_505.root");
    let file = RootFile::open(&source).expect("fixture");
    let tree = file.tree("Events").expect("tree");
    let basket = tree
        .column("F")
        .expect("branch F")
        .baskets()
        .next()
        .expect("a basket");
    let mut bytes = std::fs::read(&source).expect("read");
    let end = (basket.seek + u64::from(basket.bytes)) as usize;
    for b in &mut bytes[end - 32..end] {
        *b ^= 0x5a;
    }
    let path = dir.join("damaged.root");
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn an_unreadable_branch_fails_the_conversion_naming_it_or_is_left_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = damaged(dir.path());
    for to in [None, Some(OutputFormat::RNTuple), Some(OutputFormat::TTree)] {
        let out = dir.path().join(match to {
            None => "out.evtc".to_owned(),
            Some(f) => format!("out_{f}.root"),
        });
        let strict = Settings {
            to,
            sync: false,
            ..Settings::default()
        };
        let err = convert(&input, &out, &strict, &mut |_| {}).expect_err("unreadable");
        assert!(
            matches!(&err, Error::UnreadableBranch { branch, .. } if branch == "F"),
            "{to:?}: {err}"
        );
        assert!(!out.exists(), "{to:?}: a failed conversion leaves nothing");
        let lenient = Settings {
            skip_unsupported: true,
            ..strict
        };
        let summary = convert(&input, &out, &lenient, &mut |_| {}).expect("the rest");
        let skipped: Vec<_> = summary.skipped.iter().map(|s| s.branch.as_str()).collect();
        assert!(skipped.contains(&"F"), "{to:?}: {skipped:?}");
        let reason = &summary
            .skipped
            .iter()
            .find(|s| s.branch == "F")
            .expect("F")
            .reason;
        assert!(reason.contains("cannot be read"), "{reason}");
        assert_eq!(summary.trees[0].entries, 2000);
        // Every other branch is there with its values.
        let want = RootFile::open(fixture("kinds_505.root")).expect("fixture");
        let want_tree = want.tree("Events").expect("tree");
        match to {
            None => {
                let got = evtc_format::FileReader::open(&out).expect("evtc");
                let tree = got.tree("Events").expect("tree");
                assert!(tree.branch("F").is_err());
                let d = tree.branch("D").expect("D").read::<f64>().expect("read");
                let want_d = want
                    .read_column(want_tree.column("D").expect("D"), 0..2000)
                    .expect("read");
                assert_eq!(evtc_root::Values::F64(d.to_vec()), want_d.values);
            }
            Some(_) => {
                let got = RootFile::open(&out).expect("ROOT output");
                let tree = got.tree("Events").expect("tree");
                assert!(tree.column("F").is_none());
                let d = got
                    .read_column(tree.column("D").expect("D"), 0..2000)
                    .expect("read");
                let want_d = want
                    .read_column(want_tree.column("D").expect("D"), 0..2000)
                    .expect("read");
                assert_eq!(d.values, want_d.values);
            }
        }
    }
}
