//! Reads every branch of a tree of an evtc file into memory, the branches in parallel on the
//! file's threads, and prints the median time: the Rust bulk read that the Python package's
//! `arrays()` is measured against (`benches/python/bench.py --only threads`).
//!
//! `cargo run --release --example read_all FILE [TREE] [THREADS...]` (default tree `Events`,
//! threads 1 and 2); prints one line per thread count: `threads N: MEDIAN ms (MB/s)`.

use std::time::Instant;

use evtc::format::{FileReader, Jagged, ReadOptions, Scalar, TreeReader};
use rayon::prelude::*;

/// Reads branch `name` whole; returns its bytes of values.
fn read_branch(tree: &TreeReader<'_>, name: &str) -> Result<usize, evtc::format::Error> {
    let branch = tree.branch(name)?;
    let dtype = branch.meta().dtype;
    fn bytes<T: Scalar>(
        branch: &evtc::format::BranchReader<'_>,
        variable: bool,
    ) -> Result<usize, evtc::format::Error> {
        let size = std::mem::size_of::<T>();
        Ok(if variable {
            let jagged: Jagged<T> = branch.read_jagged()?;
            jagged.values.len() * size + jagged.offsets.len() * 8
        } else {
            branch.read::<T>()?.len() * size
        })
    }
    let variable = dtype.is_variable();
    use evtc::format::ScalarType as S;
    match dtype.scalar() {
        S::Bool => bytes::<bool>(&branch, variable),
        S::I8 => bytes::<i8>(&branch, variable),
        S::U8 => bytes::<u8>(&branch, variable),
        S::I16 => bytes::<i16>(&branch, variable),
        S::U16 => bytes::<u16>(&branch, variable),
        S::I32 => bytes::<i32>(&branch, variable),
        S::U32 => bytes::<u32>(&branch, variable),
        S::I64 => bytes::<i64>(&branch, variable),
        S::U64 => bytes::<u64>(&branch, variable),
        S::F32 => bytes::<f32>(&branch, variable),
        S::F64 => bytes::<f64>(&branch, variable),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: read_all FILE [TREE] [THREADS...]")?;
    let tree_name = args.next().unwrap_or_else(|| "Events".to_owned());
    let mut thread_counts: Vec<usize> = args.map(|a| a.parse()).collect::<Result<_, _>>()?;
    if thread_counts.is_empty() {
        thread_counts = vec![1, 2];
    }
    for threads in thread_counts {
        let mut times = Vec::new();
        let mut total = 0;
        for _ in 0..9 {
            let started = Instant::now();
            let file = FileReader::open_with(&path, ReadOptions::default().threads(threads))?;
            let tree = file.tree(&tree_name)?;
            let names: Vec<&str> = tree.branches().iter().map(|b| b.name.as_str()).collect();
            let sizes: Vec<usize> = if file.threads() > 1 {
                file.install(|| {
                    names
                        .par_iter()
                        .map(|name| read_branch(&tree, name))
                        .collect::<Result<_, _>>()
                })?
            } else {
                names
                    .iter()
                    .map(|name| read_branch(&tree, name))
                    .collect::<Result<_, _>>()?
            };
            times.push(started.elapsed().as_secs_f64());
            total = sizes.iter().sum::<usize>();
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "threads {threads}: {:.1} ms ({:.0} MB/s)",
            median * 1e3,
            total as f64 / median / 1e6
        );
    }
    Ok(())
}
