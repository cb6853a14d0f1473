//! Interrupted and hostile runs: conversions stopped midway, recovery, output paths and
//! permissions, and files whose sizes lie, refused in bounded memory.

use super::*;

/// Files in `dir` other than `keep`.
fn leftovers(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| !keep.contains(&name.as_str()))
        .collect()
}

#[cfg(unix)]
#[test]
fn interrupted_conversions_leave_nothing_or_a_recoverable_partial_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.evtc");
    let input_s = input.display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "60000", &input_s,
    ]));
    let output = dir.path().join("out.evtc");
    let out_s = output.display().to_string();
    let partial = dir.path().join("out.evtc.partial");
    let convert = |keep: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_evtc"));
        cmd.args([
            "convert",
            &input_s,
            &out_s,
            "--codec",
            "lzma:1",
            "--autoflush",
            "1000",
        ])
        .args(["--threads", "1", "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        if keep {
            cmd.arg("--keep-partial");
        }
        cmd.spawn().expect("spawn")
    };
    let signal = |pid: u32, sig: &str| {
        let status = Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .expect("kill");
        // The process may have finished already.
        let _ = status;
    };
    let mut recovered = 0;
    for (i, delay) in [20u64, 60, 120, 200, 350, 500, 800, 1200]
        .into_iter()
        .enumerate()
    {
        for sig in ["-INT", "-TERM", "-KILL"] {
            let keep = sig != "-KILL" && i % 2 == 0;
            let child = convert(keep);
            std::thread::sleep(std::time::Duration::from_millis(delay));
            signal(child.id(), sig);
            let result = child.wait_with_output().expect("wait");
            if result.status.success() {
                // Finished before the signal: a complete file, nothing else.
                ok(&evtc(&["verify", &out_s]));
                std::fs::remove_file(&output).expect("remove");
                continue;
            }
            assert!(!output.exists(), "{sig} after {delay} ms left {out_s}");
            if keep && partial.exists() {
                assert_eq!(
                    leftovers(dir.path(), &["in.evtc", "out.evtc.partial"]),
                    Vec::<String>::new()
                );
                let restored = dir.path().join("restored.evtc");
                let r = restored.display().to_string();
                ok(&evtc(&["recover", &partial.display().to_string(), &r]));
                ok(&evtc(&["verify", "--deep", &r]));
                let n = entries_of(&restored);
                if n > 0 {
                    let range = format!("0..{}", n.min(2500));
                    let dump =
                        |f: &str| ok(&evtc(&["dump", f, "--entries", &range, "--format", "csv"]));
                    assert_eq!(
                        dump(&r),
                        dump(&input_s),
                        "restored entries differ from the source"
                    );
                    recovered += 1;
                }
                std::fs::remove_file(&restored).expect("remove");
                std::fs::remove_file(&partial).expect("remove");
            }
            assert_eq!(
                leftovers(dir.path(), &["in.evtc"]),
                Vec::<String>::new(),
                "{sig} after {delay} ms"
            );
        }
    }
    assert!(
        recovered > 0,
        "no interruption produced a partial file with entries"
    );
}

/// The entry count of an evtc file's first tree, through `evtc inspect --json`.
fn entries_of(path: &Path) -> u64 {
    let out = ok(&evtc(&["inspect", "--json", &path.display().to_string()]));
    let v: Value = serde_json::from_str(&out).expect("JSON");
    v["trees"][0]["entries"].as_u64().expect("entries")
}

#[test]
fn recover_refuses_what_it_cannot_do_and_inspect_points_to_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.evtc");
    let input_s = input.display().to_string();
    ok(&evtc(&[
        "generate", "--kind", "nano", "--events", "3000", &input_s,
    ]));
    let bytes = std::fs::read(&input).expect("read");
    let cut = dir.path().join("cut.evtc");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).expect("write");
    let cut_s = cut.display().to_string();
    for cmd in ["inspect", "verify"] {
        let out = evtc(&[cmd, &cut_s]);
        assert!(!out.status.success());
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("evtc recover"), "{cmd}: {text}");
    }
    let out_dir = dir.path().display().to_string();
    fails(
        &evtc(&["recover", &cut_s, &out_dir]),
        "is a directory",
        None,
    );
    fails(&evtc(&["recover", &cut_s, &cut_s]), "onto itself", None);
    let not = dir.path().join("not.evtc");
    std::fs::write(&not, b"hello, world, not evtc").expect("write");
    let restored = dir.path().join("r.evtc");
    fails(
        &evtc(&[
            "recover",
            &not.display().to_string(),
            &restored.display().to_string(),
        ]),
        "not an evtc file",
        Some(&restored),
    );
    // A complete file recovers to the same entries.
    let r = restored.display().to_string();
    let report = ok(&evtc(&["recover", &input_s, &r, "--json"]));
    let report: Value = serde_json::from_str(&report).expect("JSON");
    assert_eq!(report["had_footer"], true);
    assert_eq!(report["trees"][0]["entries"], 3000);
    assert_eq!(
        ok(&evtc(&["dump", &r, "--format", "csv"])),
        ok(&evtc(&["dump", &input_s, "--format", "csv"]))
    );
}

#[cfg(unix)]
#[test]
fn output_files_follow_the_umask_and_output_paths_are_checked_first() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("g.evtc");
    ok(&evtc(&[
        "generate",
        "--kind",
        "ints",
        "--events",
        "100",
        &out.display().to_string(),
    ]));
    // What the umask gives an ordinary new file.
    let plain = dir.path().join("plain");
    std::fs::write(&plain, b"x").expect("write");
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&out), mode(&plain));
    let here = dir.path().display().to_string();
    fails(
        &evtc(&[
            "convert",
            &fixture("kinds_505.root"),
            &here,
            "--skip-unsupported",
        ]),
        "is a directory",
        None,
    );
}

/// An evtc file whose one (variable-length) branch's index claims `elements` values in its only
/// basket, with every checksum right: only the sizes lie.
fn lying_file(path: &Path, elements: u64) {
    use evtc_format::{BranchSpec, FileWriter, ScalarType, WriteOptions};
    let honest = path.with_extension("honest");
    let options = WriteOptions::default().basket_size(1 << 20).sync(false);
    let mut file = FileWriter::create(&honest, options).expect("create");
    let mut tree = file
        .tree("T", vec![BranchSpec::jagged("x", ScalarType::U32)])
        .expect("tree");
    // Incompressible values: a record large enough that the codec's ratio bound alone would
    // let the lie through.
    let mut x = 12345u32;
    let values: Vec<u32> = (0..40_000)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            x
        })
        .collect();
    tree.fill_jagged(0, &[2; 20_000], &values).expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    file.finish().expect("finish");
    let bytes = std::fs::read(&honest).expect("read");
    std::fs::write(
        path,
        evtc_format::fuzzing::with_lying_index(&bytes, elements),
    )
    .expect("write");
}

/// Bytes of private writable memory a child of [`run_bounded`] may map: far less than the files
/// of these tests claim, far more than evtc needs to refuse them.
#[cfg(target_os = "linux")]
const MEMORY_BOUND: u64 = 128 << 20;

/// Runs `evtc args` with its data memory (`RLIMIT_DATA`: every private writable mapping, touched
/// or not) limited to [`MEMORY_BOUND`], so that an allocation sized by a lying header fails (and
/// the process aborts with an allocation error) instead of succeeding. The child's peak resident
/// memory from `wait4` cannot tell: a spawned child's high-water mark starts at its parent's,
/// this test harness's, which other tests running at the same time raise.
#[cfg(target_os = "linux")]
fn run_bounded(args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_evtc"));
    command.args(args);
    // SAFETY: the closure only calls setrlimit, which is async-signal-safe, on the child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: MEMORY_BOUND,
                rlim_max: MEMORY_BOUND,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().expect("run evtc")
}

#[cfg(target_os = "linux")]
#[test]
fn a_lying_basket_index_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("lying.evtc");
    // 2^30 u32 values: 4 GiB claimed by a 160 kB file, within zstd's 32768x bound.
    lying_file(&path, 1 << 30);
    let p = path.display().to_string();
    let converted = dir.path().join("converted.evtc");
    let c = converted.display().to_string();
    for args in [
        vec!["dump", &p, "--entries", "0..1"],
        vec!["dump", &p],
        vec!["verify", &p],
        vec!["verify", "--deep", &p],
        vec!["convert", &p, &c],
    ] {
        let out = run_bounded(&args);
        assert!(!out.status.success(), "{args:?} accepted a lying index");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("over the limit"), "{args:?}: {text}");
    }
    assert_eq!(
        leftovers(dir.path(), &["lying.evtc", "lying.honest"]),
        Vec::<String>::new()
    );
    // A plausible lie (one value fewer than the basket holds): structure and checksums are
    // sound, the decoded size is not.
    let small = dir.path().join("small-lie.evtc");
    lying_file(&small, 39_999);
    let s = small.display().to_string();
    ok(&evtc(&["verify", &s]));
    let out = evtc(&["verify", "--deep", &s]);
    assert!(
        !out.status.success(),
        "verify --deep accepted a wrong basket size"
    );
    // The refusal names the option that raises the limit.
    let out = evtc(&["dump", &p, "--entries", "0..1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-basket-size") && err.contains("4294967296"),
        "{err}"
    );
}

/// A file of one tree "T" with one u64 branch "x" of 10,000 entries: its bytes and the offset of
/// its first basket record.
fn one_branch_file(path: &Path, options: evtc_format::WriteOptions) -> (Vec<u8>, usize) {
    use evtc_format::{BranchSpec, FileReader, FileWriter, ScalarType};
    let mut w = FileWriter::create(path, options.sync(false)).expect("create");
    let mut tree = w
        .tree("T", vec![BranchSpec::scalar("x", ScalarType::U64)])
        .expect("tree");
    tree.fill_column(0, &(0..10_000u64).collect::<Vec<_>>())
        .expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    w.finish().expect("finish");
    let reader = FileReader::open(path).expect("open");
    let tree = reader.tree("T").expect("T");
    let index = tree.branch("x").expect("x").baskets().expect("index");
    let offset = index.baskets[0].offset as usize;
    (std::fs::read(path).expect("read"), offset)
}

/// Rewrites a record's body in `file` (at `offset`) with `edit`, then both record checksums.
fn edit_record(file: &mut [u8], offset: usize, edit: impl FnOnce(&mut [u8])) {
    let body_len = u64::from_le_bytes(file[offset + 32..offset + 40].try_into().expect("8"));
    let body = offset + 48..offset + 48 + body_len as usize;
    edit(&mut file[body.clone()]);
    let crc = evtc_codecs::crc32(&file[body]);
    file[offset + 40..offset + 44].copy_from_slice(&crc.to_le_bytes());
    let crc = evtc_codecs::crc32(&file[offset..offset + 44]);
    file[offset + 44..offset + 48].copy_from_slice(&crc.to_le_bytes());
}

#[cfg(target_os = "linux")]
#[test]
fn lying_sizes_and_bombs_are_refused_in_bounded_memory() {
    use evtc_format::WriteOptions;
    let dir = tempfile::tempdir().expect("tempdir");
    let refused = |args: &[&str], needle: &str| {
        let out = run_bounded(args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{args:?} accepted it");
        assert!(err.contains(needle), "{args:?}: {err}");
    };

    // A ROOT basket key claiming 2 GiB uncompressed (fObjlen).
    let root = std::fs::read(fixture("kinds_505.root")).expect("fixture");
    let file = evtc_root::RootFile::open(fixture("kinds_505.root")).expect("open");
    let tree = file.tree("Events").expect("tree");
    let seek = tree
        .column("Muon_pt")
        .expect("Muon_pt")
        .baskets()
        .next()
        .expect("a basket")
        .seek;
    let mut lying = root.clone();
    lying[seek as usize + 6..seek as usize + 10].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
    let path = dir.path().join("lying.root");
    std::fs::write(&path, &lying).expect("write");
    let out = dir.path().join("out.evtc").display().to_string();
    let p = path.display().to_string();
    refused(
        &["convert", &p, &out, "--branches", "Muon_pt"],
        "over the limit",
    );
    // The same basket's header claiming 2^31-1 entries (fNevBuf) or data ending 2 GiB in
    // (fLast): the key header's length is at byte 14 of the key.
    let key_len = u16::from_be_bytes([root[seek as usize + 14], root[seek as usize + 15]]) as usize;
    let fields = seek as usize + key_len - 19;
    for (at, what) in [(fields + 10, "entry offsets"), (fields + 14, "fLast")] {
        let mut lying = root.clone();
        lying[at..at + 4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        std::fs::write(&path, &lying).expect("write");
        refused(&["convert", &p, &out, "--branches", "Muon_pt"], what);
    }

    // An evtc basket whose first block claims 2^40 bytes, checksums recomputed.
    let honest = dir.path().join("honest.evtc");
    let (mut bytes, offset) = one_branch_file(&honest, WriteOptions::default());
    edit_record(&mut bytes, offset, |body| {
        body[4..12].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let payload = u64::from_le_bytes(body[12..20].try_into().expect("8")) as usize;
        let crc = evtc_codecs::Crc32::new()
            .update(&body[..20])
            .update(&body[24..24 + payload])
            .finish();
        body[20..24].copy_from_slice(&crc.to_le_bytes());
    });
    let path = dir.path().join("block.evtc");
    std::fs::write(&path, &bytes).expect("write");
    let p = path.display().to_string();
    refused(&["dump", &p, "--entries", "0..1"], "basket");
    refused(&["verify", "--deep", &p], "FAILED");

    // A trailer whose footer length runs far past the file, its CRC recomputed.
    let mut bytes = std::fs::read(&honest).expect("read");
    let t = bytes.len() - 32;
    bytes[t + 8..t + 16].copy_from_slice(&(1u64 << 50).to_le_bytes());
    let crc = evtc_codecs::crc32(&bytes[t..t + 20]);
    bytes[t + 20..t + 24].copy_from_slice(&crc.to_le_bytes());
    let path = dir.path().join("footer.evtc");
    std::fs::write(&path, &bytes).expect("write");
    let p = path.display().to_string();
    refused(&["dump", &p], "footer");

    // An honest bomb: one basket of 300 MiB of zeros (zstd makes it a few kB), written with the
    // writer's limit raised, refused by readers at their default. Written by a child process,
    // so that this one stays small.
    let bomb = dir.path().join("bomb.evtc");
    let status = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--ignored", "--exact", "hostile::write_bomb", "--quiet"])
        .env("EVTC_TEST_BOMB", &bomb)
        .stdout(Stdio::null())
        .status()
        .expect("run the writer");
    assert!(status.success());
    assert!(std::fs::metadata(&bomb).expect("bomb").len() < 1 << 20);
    let b = bomb.display().to_string();
    refused(&["dump", &b, "--entries", "0..1"], "over the limit");
}

/// Writes the honest bomb of `lying_sizes_and_bombs_are_refused_in_bounded_memory` at
/// `$EVTC_TEST_BOMB` (run by that test in a child process; does nothing on its own).
#[test]
#[ignore = "run by lying_sizes_and_bombs_are_refused_in_bounded_memory"]
fn write_bomb() {
    use evtc_format::{BranchSpec, ClusterSize, FileWriter, ScalarType, WriteOptions};
    let Some(path) = std::env::var_os("EVTC_TEST_BOMB") else {
        return;
    };
    let options = WriteOptions::default()
        .basket_size(300 << 20)
        .cluster_size(ClusterSize::Entries(300))
        .max_basket_bytes(512 << 20)
        .threads(1)
        .sync(false);
    let mut w = FileWriter::create(&path, options).expect("create");
    let mut tree = w
        .tree("T", vec![BranchSpec::fixed("z", ScalarType::U8, 1 << 20)])
        .expect("tree");
    tree.fill_column(0, &vec![0u8; 300 << 20]).expect("fill");
    tree.commit().expect("commit");
    tree.finish().expect("finish");
    w.finish().expect("finish");
}

/// LEB128 varint at `at`: (value, bytes).
fn varint(bytes: &[u8], at: usize) -> (u64, usize) {
    let (mut value, mut n) = (0u64, 0);
    loop {
        let b = bytes[at + n];
        value |= u64::from(b & 0x7f) << (7 * n);
        n += 1;
        if b & 0x80 == 0 {
            return (value, n);
        }
    }
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(target_os = "linux")]
#[test]
fn a_lying_rac_seek_table_is_refused_in_bounded_memory() {
    use evtc_format::{RacMode, WriteOptions};
    let dir = tempfile::tempdir().expect("tempdir");
    let honest = dir.path().join("rac.evtc");
    let (mut bytes, offset) = one_branch_file(&honest, WriteOptions::default().rac(RacMode::On));
    // The record's body: RAC payload length P, then the payload: table length T, the table,
    // the units. Rewrite the table with its first unit claiming 2^40 uncompressed bytes.
    let body = offset + 48;
    let body_len =
        u64::from_le_bytes(bytes[offset + 32..offset + 40].try_into().expect("8")) as usize;
    let table_len = u32::from_le_bytes(bytes[body + 8..body + 12].try_into().expect("4")) as usize;
    let table = bytes[body + 12..body + 12 + table_len].to_vec();
    let (units, mut at) = varint(&table, 6);
    at += 6;
    let mut fields = Vec::new();
    for _ in 0..3 * units {
        let (v, n) = varint(&table, at);
        fields.push(v);
        at += n;
    }
    fields[1] = 1 << 40;
    let mut new_table = table[..6].to_vec();
    put_varint(&mut new_table, units);
    for v in fields {
        put_varint(&mut new_table, v);
    }
    new_table.extend_from_slice(&table[at..table.len() - 4]); // the units' CRCs
    let crc = evtc_codecs::crc32(&new_table);
    new_table.extend_from_slice(&crc.to_le_bytes());
    // The table grows by 4 bytes: the units lose their last 4 (the table is refused first).
    let grown = new_table.len() - table_len;
    let units_bytes = bytes[body + 12 + table_len..body + body_len - grown].to_vec();
    let mut new_body = Vec::new();
    let payload_len = 4 + new_table.len() + units_bytes.len();
    new_body.extend_from_slice(&(payload_len as u64).to_le_bytes());
    new_body.extend_from_slice(&(new_table.len() as u32).to_le_bytes());
    new_body.extend_from_slice(&new_table);
    new_body.extend_from_slice(&units_bytes);
    assert_eq!(
        new_body.len(),
        body_len,
        "a same-length rewrite keeps every offset"
    );
    bytes[body..body + body_len].copy_from_slice(&new_body);
    edit_record(&mut bytes, offset, |_| {});
    let path = dir.path().join("lying-rac.evtc");
    std::fs::write(&path, &bytes).expect("write");
    let p = path.display().to_string();
    for args in [
        vec!["dump", &p, "--entries", "0..1"],
        vec!["dump", &p],
        vec!["verify", "--deep", &p],
    ] {
        let out = run_bounded(&args);
        let text = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            !out.status.success(),
            "{args:?} accepted a lying seek table"
        );
        assert!(text.contains("seek table"), "{args:?}: {text}");
    }
}
