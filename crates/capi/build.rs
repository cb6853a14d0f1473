//! Puts, beside the built library in `target/<profile>/`, what a C or C++ build needs: the
//! headers (`include/evtc.h`, `include/evtc.hpp`, the RDataFrame source's), a pkg-config file
//! (`pkgconfig/evtc.pc`) and a CMake package (`cmake/evtc/evtcConfig.cmake`, target
//! `evtc::evtc`), all pointing there.

use std::path::{Path, PathBuf};

/// The headers of include/ that go beside the library.
const HEADERS: [&str; 4] = ["evtc.h", "evtc.hpp", "evtc_rdf.hxx", "evtc_rdf_lib.hxx"];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let Some(dir) = out.ancestors().nth(3).map(Path::to_path_buf) else {
        return;
    };
    for header in HEADERS {
        println!("cargo:rerun-if-changed=include/{header}");
    }
    let include = dir.join("include");
    let pkgconfig = dir.join("pkgconfig");
    let cmake = dir.join("cmake").join("evtc");
    for d in [&include, &pkgconfig, &cmake] {
        std::fs::create_dir_all(d).expect("create the install directories");
    }
    for header in HEADERS {
        std::fs::copy(manifest.join("include").join(header), include.join(header))
            .expect("copy the headers");
    }
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let prefix = dir.display();
    std::fs::write(
        pkgconfig.join("evtc.pc"),
        format!(
            "prefix={prefix}\nlibdir=${{prefix}}\nincludedir=${{prefix}}/include\n\n\
             Name: evtc\nDescription: Columnar event-data files with random-access compression \
             (C API)\nVersion: {version}\nLibs: -L${{libdir}} -levtc_c\n\
             Libs.private: -lpthread -ldl -lm\nCflags: -I${{includedir}}\n"
        ),
    )
    .expect("write evtc.pc");
    let (shared, archive) = if cfg!(target_os = "macos") {
        ("libevtc_c.dylib", "libevtc_c.a")
    } else if cfg!(windows) {
        ("evtc_c.dll", "evtc_c.lib")
    } else {
        ("libevtc_c.so", "libevtc_c.a")
    };
    std::fs::write(
        cmake.join("evtcConfig.cmake"),
        format!(
            "# evtc's C API, built by `cargo build -p evtc-capi`: find_package(evtc) then link\n\
             # evtc::evtc (shared) or evtc::evtc_static.\n\
             add_library(evtc::evtc SHARED IMPORTED)\n\
             set_target_properties(evtc::evtc PROPERTIES\n  IMPORTED_LOCATION \"{prefix}/{shared}\"\n  \
             INTERFACE_INCLUDE_DIRECTORIES \"{prefix}/include\")\n\
             add_library(evtc::evtc_static STATIC IMPORTED)\n\
             set_target_properties(evtc::evtc_static PROPERTIES\n  IMPORTED_LOCATION \"{prefix}/{archive}\"\n  \
             INTERFACE_INCLUDE_DIRECTORIES \"{prefix}/include\"\n  INTERFACE_LINK_LIBRARIES \"pthread;dl;m\")\n\
             set(evtc_VERSION {version})\n"
        ),
    )
    .expect("write evtcConfig.cmake");
}
