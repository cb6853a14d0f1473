#!/usr/bin/env bash
# Times merging 100 files of the NanoAOD-like sample (data/nano_sample.root, 20,000 events, 114
# branches): `evtc merge` of 100 evtc copies (zstd:5, converted from it), one thread, against
# ROOT 6.40's `hadd -ff` of 100 copies of the ROOT file (its fast merge: baskets copied), in
# turn, with benches/peers/paired.py (medians of 5 runs after a warm-up, the ratio taken pair
# by pair; before each run, untimed, the previous outputs are removed and the disk synced).
# Twice: `evtc merge` as it runs by default (the output synced to disk before it gets its name)
# and with --no-sync (as hadd writes: no fsync). Prints the figures docs/benchmarks.md quotes.
# Needs ROOT from PyPI in .venv-root (hadd).
set -euo pipefail
cd "$(dirname "$0")/../.."
root_pkg=$(ls -d .venv-root/lib/python3*/site-packages/ROOT | head -1)
hadd="$root_pkg/bin/hadd"
cargo build --release -q -p evtc-cli
work=$(mktemp -d target/merge-bench.XXXX)
trap 'rm -rf "$work"' EXIT
target/release/evtc convert --force data/nano_sample.root "$work/sample.evtc" --quiet
for i in $(seq -w 1 100); do
    cp data/nano_sample.root "$work/r$i.root"
    cp "$work/sample.evtc" "$work/e$i.evtc"
done
sync
evtc_bytes=$(cat "$work"/e*.evtc | wc -c)
root_bytes=$(cat "$work"/r*.root | wc -c)
echo "inputs: 100 evtc files, $evtc_bytes bytes; 100 ROOT files, $root_bytes bytes"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
hadd_cmd="sh -c 'exec $hadd -ff -f $work/out.root $work/r*.root > /dev/null 2>&1'"
for sync_flag in "" "--no-sync"; do
    echo "== evtc merge ${sync_flag:-(synced)} against hadd -ff"
    LD_LIBRARY_PATH="$root_pkg/lib" python3 benches/peers/paired.py -n 5 \
        --prepare "rm -f $work/out.evtc $work/out.root; sync" --vs "$hadd_cmd" \
        -- sh -c "exec target/release/evtc merge --force --threads 1 --quiet $sync_flag $work/out.evtc $work/e*.evtc"
done
target/release/evtc merge --force --threads 1 --quiet "$work/out.evtc" "$work"/e*.evtc
target/release/evtc verify --deep "$work/out.evtc"
