//! Reads besides the property test: RAC cursors and range reads, shared seek tables, memory-mapped
//! files, range reads that split a basket, and outputs large and reused.

use super::*;

/// zstd:3 in RAC units of 256 bytes and baskets of 4 KiB: many baskets and units from little data.
fn small_rac_units() -> WriteOptions {
    WriteOptions::default()
        .codec(Codec::zstd(3).unwrap())
        .basket_size(4096)
        .rac(RacMode::On)
        .rac_unit_bytes(256)
}

/// A cursor's first read in a RAC unit undoes the preconditioner for that entry's values only, a
/// second read in the unit undoes the rest: every order of reads must give a full read's values,
/// for each preconditioner, with counters read from RAC units too.
#[test]
fn rac_cursors_read_one_entry_then_the_rest_of_its_unit() {
    let dir = tempfile::tempdir().unwrap();
    let entries = 1500u32;
    let counts: Vec<u32> = (0..entries).map(|e| (e * 13 + e / 7) % 6).collect();
    let total = counts.iter().sum::<u32>();
    // Values with every bit of the mantissa in use, so that a misplaced bit shows.
    let values: Vec<f32> = (0..total)
        .map(|i| f32::from_bits(0x3f80_0000 | (i.wrapping_mul(2_654_435_761) >> 9)))
        .collect();
    let xyz: Vec<i16> = (0..entries as i16 * 3)
        .map(|i| i.wrapping_mul(-977))
        .collect();
    let constructors: [fn(Width) -> Precondition; 5] = [
        |_| Precondition::None,
        Precondition::Shuffle,
        Precondition::BitShuffle,
        Precondition::ZigzagShuffle,
        Precondition::Delta,
    ];
    for make in constructors {
        let path = dir.path().join(format!("{}.evtc", make(Width::W4)));
        let mut file = FileWriter::create(&path, small_rac_units()).unwrap();
        let mut tree = file
            .tree(
                "T",
                vec![
                    BranchSpec::scalar("n", ScalarType::U32).precondition(make(Width::W4)),
                    BranchSpec::jagged("v", ScalarType::F32)
                        .counter("n")
                        .precondition(make(Width::W4)),
                    BranchSpec::jagged("w", ScalarType::F32)
                        .boundaries(Boundaries::Counts)
                        .precondition(make(Width::W4)),
                    BranchSpec::fixed("xyz", ScalarType::I16, 3).precondition(make(Width::W2)),
                ],
            )
            .unwrap();
        tree.fill_column(0, &counts).unwrap();
        tree.fill_jagged(1, &counts, &values).unwrap();
        tree.fill_jagged(2, &counts, &values).unwrap();
        tree.fill_column(3, &xyz).unwrap();
        tree.commit().unwrap();
        tree.finish().unwrap();
        file.finish().unwrap();

        // Seeded jumps (mostly a new unit each), pairs of neighbours (the second read finishes
        // the unit), then every entry backwards.
        let mut x = 0x9e37_79b9_u64;
        let mut jumps = Vec::new();
        for _ in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let e = x % u64::from(entries);
            jumps.extend([e, e, (e + 1).min(u64::from(entries) - 1), e]);
        }
        let order: Vec<u64> = jumps
            .into_iter()
            .chain((0..u64::from(entries)).rev())
            .collect();
        let offsets: Vec<usize> = std::iter::once(0)
            .chain(counts.iter().scan(0, |sum, &c| {
                *sum += c as usize;
                Some(*sum)
            }))
            .collect();
        // Positional reads (the unit's bytes kept in the cursor) and a memory map (lent again
        // when the unit is finished).
        // SAFETY: nothing truncates or writes the file while it is open.
        let mapped = unsafe { ReadOptions::default().memory_map(true) };
        let (plain, mapped) = (
            FileReader::open(&path).unwrap(),
            FileReader::open_with(&path, mapped).unwrap(),
        );
        let (plain, mapped) = (plain.tree("T").unwrap(), mapped.tree("T").unwrap());
        for (tree, name) in [(&plain, "v"), (&plain, "w"), (&mapped, "v"), (&mapped, "w")] {
            let branch = tree.branch(name).unwrap();
            assert!(branch.meta().rac, "{name}");
            let mut cursor = branch.cursor::<f32>().unwrap();
            for &e in &order {
                let e = e as usize;
                assert_eq!(
                    cursor.get(e as u64).unwrap(),
                    &values[offsets[e]..offsets[e + 1]],
                    "{} {name} entry {e}",
                    make(Width::W4)
                );
            }
        }
        let mut n = plain.branch("n").unwrap().cursor::<u32>().unwrap();
        let mut xyz_cursor = plain.branch("xyz").unwrap().cursor::<i16>().unwrap();
        for &e in &order {
            let e = e as usize;
            assert_eq!(n.get(e as u64).unwrap(), &counts[e..e + 1], "n entry {e}");
            assert_eq!(
                xyz_cursor.get(e as u64).unwrap(),
                &xyz[e * 3..e * 3 + 3],
                "xyz entry {e}"
            );
        }
    }
}

/// A file's bytes, counting the positional reads made of them (none lent in place).
struct CountedReads {
    bytes: Vec<u8>,
    reads: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl ReadAt for CountedReads {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.bytes.read_exact_at(offset, buf)
    }
}

/// A cursor made for one read finds the seek table of a RAC basket that another cursor of the
/// file has read: it reads the unit it needs and nothing else, and gives the same values.
#[test]
fn fresh_cursors_share_the_files_seek_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.evtc");
    let values: Vec<f32> = (0..4000u32)
        .map(|i| f32::from_bits(0x3f80_0000 | (i.wrapping_mul(2_654_435_761) >> 9)))
        .collect();
    let mut file = FileWriter::create(&path, small_rac_units()).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::fixed("v", ScalarType::F32, 4)])
        .unwrap();
    tree.fill_column(0, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let reads = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let source = CountedReads {
        bytes: std::fs::read(&path).unwrap(),
        reads: reads.clone(),
    };
    let reads = || reads.load(std::sync::atomic::Ordering::Relaxed);
    let file = FileReader::from_source(source, ReadOptions::default()).unwrap();
    let tree = file.tree("T").unwrap();
    let branch = tree.branch("v").unwrap();
    assert!(branch.meta().rac);
    let index = branch.baskets().unwrap();
    assert!(index.baskets.len() > 2, "{} baskets", index.baskets.len());
    let read_with_fresh_cursor = |entry: u64| {
        let before = reads();
        let got = branch.cursor::<f32>().unwrap().get(entry).unwrap().to_vec();
        let e = entry as usize;
        assert_eq!(got, &values[e * 4..e * 4 + 4], "entry {entry}");
        reads() - before
    };
    // The file's first read also reads the branch's dictionary. Then the first read of a basket
    // reads its record's head, its seek table and a unit; a later cursor in the same basket
    // (another unit, then the same one) reads the unit only.
    read_with_fresh_cursor(0);
    let basket = index.baskets[1];
    let (first, last) = (basket.first_entry, basket.first_entry + basket.entries - 1);
    assert_eq!(read_with_fresh_cursor(first), 3);
    assert_eq!(read_with_fresh_cursor(last), 1);
    assert_eq!(read_with_fresh_cursor(first), 1);
    // Another basket's table is its own.
    assert_eq!(read_with_fresh_cursor(index.baskets[2].first_entry), 3);
}

/// Range reads of RAC branches decode only the units of baskets they cover in part; every range
/// must still give exactly the values of a full read.
#[test]
fn rac_range_reads_match_full_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rac.evtc");
    let options = small_rac_units();
    let mut file = FileWriter::create(&path, options).unwrap();
    let mut tree = file
        .tree(
            "T",
            vec![
                BranchSpec::scalar("n", ScalarType::U32),
                BranchSpec::jagged("v", ScalarType::F32).counter("n"),
                BranchSpec::fixed("xyz", ScalarType::I16, 3),
                BranchSpec::jagged("c", ScalarType::U8).boundaries(Boundaries::Counts),
            ],
        )
        .unwrap();
    let entries = 3000u32;
    let counts: Vec<u32> = (0..entries).map(|e| (e * 7) % 5).collect();
    let values: Vec<f32> = (0..counts.iter().sum::<u32>())
        .map(|i| i as f32 * 0.5)
        .collect();
    let xyz: Vec<i16> = (0..entries as i16 * 3).collect();
    let bytes: Vec<u8> = (0..counts.iter().sum::<u32>())
        .map(|i| (i % 251) as u8)
        .collect();
    tree.fill_column(0, &counts).unwrap();
    tree.fill_jagged(1, &counts, &values).unwrap();
    tree.fill_column(2, &xyz).unwrap();
    tree.fill_jagged(3, &counts, &bytes).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let v = tree.branch("v").unwrap();
    let xyz_branch = tree.branch("xyz").unwrap();
    let c = tree.branch("c").unwrap();
    assert!(v.meta().rac && v.baskets().unwrap().baskets.len() > 3);
    let all_v = v.read_jagged::<f32>().unwrap();
    assert_eq!(v.decode_all().unwrap(), all_v.values.len() as u64);
    assert_eq!(xyz_branch.decode_all().unwrap(), xyz.len() as u64);
    let all_c = c.read_jagged::<u8>().unwrap();
    for (a, b) in [
        (0, 1),
        (17, 18),
        (5, 2999),
        (1234, 2222),
        (2999, 3000),
        (400, 400),
    ] {
        let part = v.read_jagged_range::<f32>(a..b).unwrap();
        for (i, e) in (a..b).enumerate() {
            assert_eq!(
                part.entry(i),
                all_v.entry(e as usize),
                "v entry {e} of {a}..{b}"
            );
        }
        let part = c.read_jagged_range::<u8>(a..b).unwrap();
        for (i, e) in (a..b).enumerate() {
            assert_eq!(
                part.entry(i),
                all_c.entry(e as usize),
                "c entry {e} of {a}..{b}"
            );
        }
        let part = xyz_branch.read_range::<i16>(a..b).unwrap();
        assert_eq!(part, xyz[a as usize * 3..b as usize * 3], "xyz {a}..{b}");
    }
}

/// A memory-mapped file reads RAC entries and whole baskets from the map itself
/// ([`ReadAt::bytes_at`]) and equals the positional reads, corrupt bytes included; an empty or cut
/// file mapped is refused as the unmapped one is.
#[test]
fn mapped_files_read_as_positional_reads_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mapped.evtc");
    let options = small_rac_units();
    let mut file = FileWriter::create(&path, options).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::jagged("v", ScalarType::F32)])
        .unwrap();
    let counts: Vec<u32> = (0..2000u32).map(|e| (e * 7) % 5).collect();
    let values: Vec<f32> = (0..counts.iter().sum::<u32>())
        .map(|i| i as f32 * 0.25)
        .collect();
    tree.fill_jagged(0, &counts, &values).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let source = LocalFile::open(&path).unwrap();
    assert!(!source.is_mapped() && source.bytes_at(0, 4).is_none());
    // SAFETY: nothing truncates or writes these files while they are open.
    let mapped = unsafe { LocalFile::open_mapped(&path) }.unwrap();
    assert!(mapped.is_mapped());
    assert_eq!(mapped.bytes_at(0, 4), Some(&b"EVTC"[..]));
    assert_eq!(mapped.bytes_at(mapped.len() - 2, 4), None, "past the end");
    let plain = FileReader::open(&path).unwrap();
    // SAFETY: as above.
    let options = unsafe { ReadOptions::default().memory_map(true) };
    let file = FileReader::open_with(&path, options.clone()).unwrap();
    let (plain, tree) = (plain.tree("T").unwrap(), file.tree("T").unwrap());
    let branch = tree.branch("v").unwrap();
    assert!(branch.meta().rac);
    let all = plain.branch("v").unwrap().read_jagged::<f32>().unwrap();
    assert_eq!(branch.read_jagged::<f32>().unwrap(), all);
    let mut cursor = branch.cursor::<f32>().unwrap();
    for e in (0..2000).rev().step_by(7).chain(0..2000) {
        assert_eq!(cursor.get(e as u64).unwrap(), all.entry(e), "entry {e}");
    }

    // Baskets of blocks (no RAC) are checked and decoded where the map holds them; a flipped
    // byte in one is the same checksum error either way.
    let blocks = dir.path().join("blocks.evtc");
    let mut file = FileWriter::create(&blocks, WriteOptions::default()).unwrap();
    let mut tree = file
        .tree("T", vec![BranchSpec::scalar("x", ScalarType::I32)])
        .unwrap();
    let xs: Vec<i32> = (0..50_000).map(|i| (i * 37) % 1001).collect();
    tree.fill_column(0, &xs).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();
    let read = |path: &std::path::Path, options: &ReadOptions| {
        let file = FileReader::open_with(path, options.clone()).unwrap();
        let branch = file.tree("T").unwrap().branch("x").unwrap();
        let loc = branch.baskets().unwrap().baskets[0];
        let mut out = Vec::new();
        (branch.read_into::<i32>(&mut out).map(|()| out), loc)
    };
    let (values, loc) = read(&blocks, &options);
    assert_eq!(values.unwrap(), xs);
    let mut bytes = std::fs::read(&blocks).unwrap();
    bytes[(loc.offset + loc.record_len / 2) as usize] ^= 0x10;
    let flipped = dir.path().join("flipped.evtc");
    std::fs::write(&flipped, &bytes).unwrap();
    for options in [ReadOptions::default(), options.clone()] {
        let err = read(&flipped, &options).0.unwrap_err().to_string();
        assert!(
            err.contains("checksum") && err.contains("basket 0"),
            "{err}"
        );
    }

    for len in [0, 20] {
        let cut = dir.path().join(format!("cut-{len}.evtc"));
        std::fs::write(&cut, &std::fs::read(&path).unwrap()[..len]).unwrap();
        let err = FileReader::open_with(&cut, options.clone()).unwrap_err();
        assert!(
            err.to_string().contains("too short for an evtc file"),
            "{err}"
        );
    }
}

/// Consecutive range reads (as `iterate` makes them) read what one whole read does, with and
/// without the cache of baskets used in part; the cache is what the second step reads: after the
/// first step, the basket it ended inside is overwritten on disk, and only a reader that kept it
/// reads on.
#[test]
fn consecutive_range_reads_reuse_the_basket_they_split() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.evtc");
    let options = WriteOptions::default()
        .basket_size(8 << 10)
        .cluster_size(ClusterSize::Entries(100_000));
    let mut file = FileWriter::create(&path, options).unwrap();
    let specs = vec![
        BranchSpec::scalar("n", ScalarType::U32),
        BranchSpec::jagged("v", ScalarType::F32).counter("n"),
        BranchSpec::jagged("c", ScalarType::I16).boundaries(Boundaries::Counts),
        BranchSpec::scalar("flag", ScalarType::Bool),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    let counts: Vec<u32> = (0..20_000u32).map(|e| e % 4).collect();
    let total: u32 = counts.iter().sum();
    let v: Vec<f32> = (0..total).map(|i| i as f32 * 0.5).collect();
    let c: Vec<i16> = (0..total).map(|i| (i % 1000) as i16 - 500).collect();
    let flag: Vec<bool> = (0..20_000u32).map(|e| e % 3 == 0).collect();
    tree.fill_column(0, &counts).unwrap();
    tree.fill_jagged(1, &counts, &v).unwrap();
    tree.fill_jagged(2, &counts, &c).unwrap();
    tree.fill_column(3, &flag).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let step = 1_234u64;
    let read_steps = |reader: &FileReader| -> (Vec<u32>, Jagged<f32>, Jagged<i16>) {
        let tree = reader.tree("T").unwrap();
        let (mut n, mut v, mut c) = (Vec::new(), Vec::new(), Vec::new());
        let (mut vo, mut co) = (vec![0u64], vec![0u64]);
        for at in (0..20_000).step_by(step as usize) {
            let range = at..(at + step).min(20_000);
            n.extend(
                tree.branch("n")
                    .unwrap()
                    .read_range::<u32>(range.clone())
                    .unwrap(),
            );
            let part = tree
                .branch("v")
                .unwrap()
                .read_jagged_range::<f32>(range.clone());
            let part = part.unwrap();
            let base = *vo.last().unwrap();
            vo.extend(part.offsets[1..].iter().map(|o| o + base));
            v.extend(part.values);
            let part = tree
                .branch("c")
                .unwrap()
                .read_jagged_range::<i16>(range)
                .unwrap();
            let base = *co.last().unwrap();
            co.extend(part.offsets[1..].iter().map(|o| o + base));
            c.extend(part.values);
        }
        let v = Jagged {
            offsets: vo.into(),
            values: v,
        };
        let c = Jagged {
            offsets: co.into(),
            values: c,
        };
        (n, v, c)
    };
    for cache in [0, evtc_format::DEFAULT_BASKET_CACHE_BYTES] {
        let reader = FileReader::open_with(&path, ReadOptions::default().basket_cache_bytes(cache));
        let reader = reader.unwrap();
        let tree = reader.tree("T").unwrap();
        let (n, vj, cj) = read_steps(&reader);
        assert_eq!(n, counts, "cache {cache}");
        assert_eq!(vj, tree.branch("v").unwrap().read_jagged::<f32>().unwrap());
        assert_eq!(cj, tree.branch("c").unwrap().read_jagged::<i16>().unwrap());
        assert_eq!(&vj.values, &v);
    }

    // The first step ends inside a basket of each branch; overwrite that basket on disk.
    let n0 = counts[..step as usize].iter().sum::<u32>() as usize;
    let n1 = counts[..2 * step as usize].iter().sum::<u32>() as usize;
    let (from, to) = (step as usize, 2 * step as usize);
    let read_v = |b: &BranchReader<'_, LocalFile>, r| Ok(b.read_jagged_range::<f32>(r)?.values);
    read_past_an_overwritten_split(&path, "v", step, read_v, &v[n0..n1]);
    let read_c = |b: &BranchReader<'_, LocalFile>, r| Ok(b.read_jagged_range::<i16>(r)?.values);
    read_past_an_overwritten_split(&path, "c", step, read_c, &c[n0..n1]);
    let read_n = |b: &BranchReader<'_, LocalFile>, r| b.read_range::<u32>(r);
    read_past_an_overwritten_split(&path, "n", step, read_n, &counts[from..to]);
    let read_flag = |b: &BranchReader<'_, LocalFile>, r| b.read_range::<bool>(r);
    read_past_an_overwritten_split(&path, "flag", step, read_flag, &flag[from..to]);
}

/// Reads entries `0..step` of branch `name` from a copy of the file at `path`, overwrites the
/// basket that the step ends inside, and reads `step..2 * step` with `read`: with the basket
/// cache the basket kept by the first step gives `expected`; without it the read fails.
fn read_past_an_overwritten_split<X: PartialEq + std::fmt::Debug>(
    path: &std::path::Path,
    name: &str,
    step: u64,
    read: impl Fn(&BranchReader<'_, LocalFile>, std::ops::Range<u64>) -> evtc_format::Result<Vec<X>>,
    expected: &[X],
) {
    for cache in [0, evtc_format::DEFAULT_BASKET_CACHE_BYTES] {
        let copy = path.with_file_name(format!("{name}-{cache}.evtc"));
        std::fs::copy(path, &copy).unwrap();
        let reader = FileReader::open_with(&copy, ReadOptions::default().basket_cache_bytes(cache));
        let reader = reader.unwrap();
        let tree = reader.tree("T").unwrap();
        let branch = tree.branch(name).unwrap();
        let index = branch.baskets().unwrap();
        let split = *index
            .baskets
            .iter()
            .find(|b| b.first_entry < step && step < b.first_entry + b.entries)
            .expect("a basket split by the first step");
        read(&branch, 0..step).unwrap();
        let mut bytes = std::fs::read(&copy).unwrap();
        // The record's body: past its header, short of its end (whatever the trailer holds).
        let body = split.offset as usize + evtc_format::layout::RECORD_HEADER_LEN
            ..(split.offset + split.record_len) as usize - 8;
        for b in &mut bytes[body] {
            *b ^= 0x5a;
        }
        std::fs::write(&copy, &bytes).unwrap();
        let second = read(&branch, step..2 * step);
        if cache == 0 {
            assert!(
                second.is_err(),
                "{name}: without the cache the overwritten basket is read"
            );
        } else {
            assert_eq!(&second.unwrap()[..], expected, "{name}");
        }
    }
}

/// Outputs of several MiB (which the reader asks Linux to back with huge pages) read back exactly,
/// into fresh buffers and into reused ones, jagged and fixed.
#[test]
fn large_outputs_read_back_fresh_and_reused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.evtc");
    let mut file = FileWriter::create(&path, WriteOptions::default()).unwrap();
    let specs = vec![
        BranchSpec::scalar("x", ScalarType::F64),
        BranchSpec::jagged("v", ScalarType::U32),
    ];
    let mut tree = file.tree("T", specs).unwrap();
    let entries = 1_500_000u32;
    let x: Vec<f64> = (0..entries).map(|e| f64::from(e).sqrt()).collect();
    let counts: Vec<u32> = (0..entries).map(|e| e % 3).collect();
    let v: Vec<u32> = (0..counts.iter().sum::<u32>())
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    tree.fill_column(0, &x).unwrap();
    tree.fill_jagged(1, &counts, &v).unwrap();
    tree.commit().unwrap();
    tree.finish().unwrap();
    file.finish().unwrap();

    let file = FileReader::open(&path).unwrap();
    let tree = file.tree("T").unwrap();
    let (xs, vs) = (tree.branch("x").unwrap(), tree.branch("v").unwrap());
    assert!(xs.baskets().unwrap().baskets.len() > 1, "several baskets");
    let mut reused: Vec<f64> = Vec::new();
    let mut jagged = Jagged::default();
    for _ in 0..2 {
        assert_eq!(xs.read::<f64>().unwrap(), x);
        xs.read_into(&mut reused).unwrap();
        assert_eq!(reused, x);
        let fresh = vs.read_jagged::<u32>().unwrap();
        assert_eq!(fresh.values, v);
        vs.read_jagged_into(&mut jagged).unwrap();
        assert_eq!(jagged, fresh);
    }
    assert_eq!(jagged.entry(5), &v[4..6]);
}
