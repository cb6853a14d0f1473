//! `include/evtc.h` is what cbindgen makes of the sources with `cbindgen.toml`; `EVTC_BLESS=1`
//! writes it anew.

use std::path::Path;

#[test]
fn header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("config");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen")
        .write(&mut generated);
    let path = crate_dir.join("include/evtc.h");
    if std::env::var_os("EVTC_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write the header");
        return;
    }
    let checked_in = std::fs::read(&path).expect("include/evtc.h");
    assert!(
        checked_in == generated,
        "include/evtc.h is not what cbindgen makes of the sources: run \
         `EVTC_BLESS=1 cargo test -p evtc-capi --test header` and commit it"
    );
}
