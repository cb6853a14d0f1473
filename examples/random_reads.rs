//! Single-entry reads at seeded random entries of an evtc file's branches, as an analysis that
//! looks events up reads them: each branch read 2,000 times through one cursor, 7 passes, the
//! best pass's microseconds per entry (warm: the file's caches hold what earlier passes read), the
//! first pass's, and the median of 21 reads each on a freshly opened file (cold).
//!
//! `cargo run --release --example random_reads -- FILE TREE BRANCH...` (float branches).

use std::time::Instant;

use evtc::format::FileReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(tree_name)) = (args.get(1), args.get(2)) else {
        return Err("usage: random_reads FILE TREE BRANCH...".into());
    };
    for name in &args[3..] {
        let mut cold = Vec::new();
        for k in 0..21u64 {
            let file = FileReader::open(path)?;
            let tree = file.tree(tree_name)?;
            let mut cursor = tree.branch(name)?.cursor::<f32>()?;
            let entry = (k * 7919) % tree.entries();
            let start = Instant::now();
            std::hint::black_box(cursor.get(entry)?.len());
            cold.push(start.elapsed().as_secs_f64() * 1e6);
        }
        cold.sort_by(f64::total_cmp);
        let file = FileReader::open(path)?;
        let tree = file.tree(tree_name)?;
        let branch = tree.branch(name)?;
        let n = tree.entries();
        let mut x: u64 = 12345;
        let entries: Vec<u64> = (0..2000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) % n
            })
            .collect();
        let mut passes = Vec::new();
        for _ in 0..7 {
            let mut cursor = branch.cursor::<f32>()?;
            let start = Instant::now();
            let mut values = 0;
            for &e in &entries {
                values += cursor.get(e)?.len();
            }
            std::hint::black_box(values);
            passes.push(start.elapsed().as_secs_f64() * 1e6 / entries.len() as f64);
        }
        let best = passes.iter().copied().fold(f64::MAX, f64::min);
        println!(
            "{name}: warm {best:.2} us/entry, first pass {:.2} us/entry, cold {:.1} us",
            passes[0], cold[10]
        );
    }
    Ok(())
}
