//! The settings' table and parser.

use super::*;

#[test]
fn every_setting_takes_its_example_and_shows_its_default() {
    for s in SETTINGS {
        let mut settings = Settings::default();
        settings
            .set(s.name, s.example)
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
        match s.shape {
            Shape::Switch => {
                let default = s.default_value().expect("a switch has a default");
                assert!(default == "true" || default == "false", "{}", s.name);
            }
            Shape::List | Shape::Rule => assert_eq!(s.default_value(), None, "{}", s.name),
            Shape::Value => {}
        }
        // A default shown is a value the setting takes.
        if let Some(default) = s.default_value()
            && !default.contains(" under ")
        {
            Settings::default()
                .set(s.name, &default)
                .unwrap_or_else(|e| panic!("{} default {default:?}: {e}", s.name));
        }
    }
}

#[test]
fn names_are_unique_and_old_names_note_the_new_one() {
    let mut names: Vec<&str> = SETTINGS
        .iter()
        .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()))
        .collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "a name twice");
    let mut settings = Settings::default();
    let renamed = settings.set("autoflush", "30MB").expect("old name");
    assert_eq!(
        renamed,
        Some(Renamed {
            old: "autoflush",
            new: "cluster_size"
        })
    );
    assert_eq!(settings.cluster_size, Some(ClusterSize::Bytes(30_000_000)));
    assert_eq!(
        settings.set("cluster_entries", "1000"),
        Ok(Some(Renamed {
            old: "cluster_entries",
            new: "cluster_size"
        }))
    );
    assert_eq!(settings.cluster_size, Some(ClusterSize::Entries(1000)));
}

#[test]
fn bad_settings_name_what_is_wrong() {
    let mut settings = Settings::default();
    let e = settings.set("cluster_sise", "1000").unwrap_err();
    assert_eq!(
        e.to_string(),
        "no setting \"cluster_sise\" (did you mean cluster_size?)"
    );
    let e = settings.set("codec", "zstd:99").unwrap_err();
    assert!(e.to_string().starts_with("codec \"zstd:99\": "), "{e}");
    let e = settings.set("sync", "maybe").unwrap_err();
    assert_eq!(e.to_string(), "sync \"maybe\": expected true or false");
    let e = settings.set("branch_codec", "lz4").unwrap_err();
    assert!(e.to_string().contains("GLOB=VALUE"), "{e}");
    let e = settings.set("threads", "0").unwrap_err();
    assert!(e.to_string().contains("at least 1"), "{e}");
    let e = settings.set_for(Jobs::WRITER, "tree=Events").unwrap_err();
    assert_eq!(
        e.to_string(),
        "tree is not a setting of writer (it is of convert, skim, add_columns)"
    );
    let e = settings.set_for(Jobs::CONVERT, "codec").unwrap_err();
    assert!(matches!(e, SettingError::NotAPair(_)), "{e}");
}

#[test]
fn rules_keep_their_order_and_switches_their_spellings() {
    let mut settings = Settings::default();
    for pair in [
        "branch_codec=Muon_*=lz4",
        "branch_codec=Muon_pt=zstd:9",
        "branch_rac=Muon_*=true",
        "float_quantize=Muon_eta=-3:3:12",
    ] {
        settings.set_for(Jobs::CONVERT, pair).expect(pair);
    }
    let spec = settings.branch_spec(
        "Muon_pt",
        DataType::Jagged(evtc_format::ScalarType::F32),
        None,
        &[],
    );
    assert_eq!(spec.codec_setting(), Some("zstd:9".parse().expect("codec")));
    assert_eq!(spec.rac_setting(), Some(RacMode::On));
    for (text, on) in [
        ("on", true),
        ("off", false),
        ("yes", true),
        ("0", false),
        ("TRUE", true),
    ] {
        settings.set("sync", text).expect(text);
        assert_eq!(settings.sync, on, "{text}");
    }
}

#[test]
fn command_line_spellings() {
    let long = |name: &str| setting(name).expect(name).0.long();
    assert_eq!(long("cluster_size"), "cluster-size");
    assert_eq!(long("sync"), "no-sync");
    assert_eq!(long("rac_dictionary"), "no-rac-dictionary");
    assert_eq!(long("flush_at_cluster"), "flush-at-cluster");
    assert_eq!(long("overwrite"), "force");
}
