//! Where random access costs bytes: the same data written without RAC and with it (`evtc convert
//! IN off.evtc --rac off`, `evtc convert IN on.evtc --rac on`), and the RAC file's baskets taken
//! apart ([`evtc::rac::SeekTable::payload_bytes`]): seek tables, the units' checksums, the entries'
//! sizes stored in each unit, each unit's codec framing, the branches' dictionaries, and the coded
//! data, against the file without RAC. docs/benchmarks.md gives its tables.
//!
//! `cargo run --release --example rac_bytes -- OFF.evtc ON.evtc [COUNT]`: the totals, then the
//! `COUNT` branches (default 8) whose RAC costs the most bytes.

use std::collections::HashMap;

use evtc::format::FileReader;
use evtc::rac::{PayloadBytes, SeekTable};

/// One branch in both files.
#[derive(Default)]
struct Branch {
    name: String,
    /// Bytes of the branch's baskets without RAC.
    off: u64,
    /// Bytes of the branch's baskets with RAC (without its dictionary).
    on: u64,
    dictionary: u64,
    payload: PayloadBytes,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(off), Some(on)) = (args.get(1), args.get(2)) else {
        return Err("usage: rac_bytes OFF.evtc ON.evtc [COUNT]".into());
    };
    let count: usize = args.get(3).map_or(Ok(8), |c| c.parse())?;
    let off = FileReader::open(off)?;
    let on = FileReader::open(on)?;
    let mut stored_off: HashMap<(String, String), u64> = HashMap::new();
    for meta in off.trees() {
        for b in &meta.branches {
            stored_off.insert((meta.name.clone(), b.name.clone()), b.stored_bytes);
        }
    }
    let mut branches = Vec::new();
    for meta in on.trees() {
        let tree = on.tree(&meta.name)?;
        for b in &meta.branches {
            let key = (meta.name.clone(), b.name.clone());
            let mut branch = Branch {
                name: format!("{}/{}", meta.name, b.name),
                off: *stored_off
                    .get(&key)
                    .ok_or_else(|| format!("{}/{} is not in the file without RAC", key.0, key.1))?,
                on: b.stored_bytes,
                dictionary: b.dictionary_len,
                ..Branch::default()
            };
            let reader = tree.branch(&b.name)?;
            for i in 0..b.baskets as usize {
                let basket = reader.raw_basket(i)?;
                if !basket.rac {
                    continue;
                }
                // A RAC basket's body: the payload's length (u64), the payload, then any block
                // of counts (docs/format.md).
                let payload = basket
                    .body
                    .get(..8)
                    .and_then(|len| usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok())
                    .and_then(|len| basket.body.get(8..8 + len))
                    .ok_or_else(|| format!("{}: basket {i} has no RAC payload", branch.name))?;
                let (table, _) = SeekTable::parse(payload)?;
                let bytes = table.payload_bytes(payload)?;
                branch.payload += bytes;
            }
            branches.push(branch);
        }
    }
    let mut total = Branch {
        name: "all branches".into(),
        ..Branch::default()
    };
    for b in &branches {
        total.off += b.off;
        total.on += b.on;
        total.dictionary += b.dictionary;
        total.payload += b.payload;
    }
    println!(
        "| branch | without RAC | with RAC | ratio | units | seek tables | unit checksums | entry sizes | codec framing | dictionaries | coded data and records - those without RAC |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    row(&total);
    branches.sort_by_key(|b| std::cmp::Reverse((b.on + b.dictionary).saturating_sub(b.off)));
    for b in branches.iter().take(count) {
        row(b);
    }
    if total.payload.unframed_units > 0 {
        println!(
            "\n{} units' framing is not taken apart (LZMA): it is in their coded data.",
            total.payload.unframed_units
        );
    }
    Ok(())
}

/// One table row; the parts as shares of the bytes RAC adds (on + dictionary - off).
fn row(b: &Branch) {
    let added = (b.on + b.dictionary) as f64 - b.off as f64;
    let share = |n: f64| {
        if added > 0.0 {
            format!("{n:.0} ({:.0}%)", 100.0 * n / added)
        } else {
            format!("{n:.0}")
        }
    };
    let p = &b.payload;
    // What the codec makes of the data beyond what it made without RAC (matches lost across
    // units, each unit's entropy tables), with what both files' basket records hold besides:
    // headers, a RAC payload's length, a block of counts.
    let records = b.on - p.total();
    let context = (p.data + records) as f64 - b.off as f64;
    println!(
        "| {} | {} | {} | {:.3} | {} | {} | {} | {} | {} | {} | {} |",
        b.name,
        b.off,
        b.on + b.dictionary,
        (b.on + b.dictionary) as f64 / b.off.max(1) as f64,
        p.units,
        share(p.table as f64),
        share(p.checksums as f64),
        share(p.entry_sizes as f64),
        share(p.framing as f64),
        share(b.dictionary as f64),
        share(context),
    );
}
