#!/usr/bin/env bash
# Times `evtc skim` on the 200,000-event NanoAOD-like file (ROOT 505, converted to evtc zstd:5),
# one thread, with benches/peers/paired.py (medians of 5 runs after a warm-up, ratios pair by
# pair; each run's output removed and the disk synced before it, untimed):
#  1. 10% of the entries, scattered (every tenth), against `evtc convert` of the whole file
#     (values MB/s of the input for both: the skim goes through every basket);
#  2. the selection `nMuon >= 2 && MET_pt > 50` by `--where`, against the same skim driven from
#     Python (the two branches read with `tree.arrays`, the mask computed with Awkward,
#     `tree.skim(out, mask)`).
# Needs target/root-bench/nano_200000_505.root (see convert_time.sh) and the Python package
# installed in .venv (a release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p evtc-cli
work=$(mktemp -d target/skim-bench.XXXX)
trap 'rm -rf "$work"' EXIT
target/release/evtc convert --force target/root-bench/nano_200000_505.root "$work/nano.evtc" --quiet
seq 0 10 199999 > "$work/tenth.txt"
values=$(target/release/evtc convert --force "$work/nano.evtc" "$work/again.evtc" --threads 1 --json \
    | python3 -c "import json,sys; print(json.load(sys.stdin)['value_bytes'])")
echo "input: $(stat -c %s "$work/nano.evtc") bytes, $values bytes of values"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== 10% of the entries, scattered, against a conversion"
python3 benches/peers/paired.py -n 5 --prepare "rm -f $work/tenth.evtc $work/converted.evtc; sync" \
    --vs "target/release/evtc convert --force $work/nano.evtc $work/converted.evtc --threads 1 --quiet" \
    -- target/release/evtc skim --force "$work/nano.evtc" "$work/tenth.evtc" --entries "$work/tenth.txt" \
    --threads 1 --quiet
echo "== a selection: --where against Python"
cat > "$work/skim.py" <<PY
import evtc
t = evtc.open("$work/nano.evtc", threads=1)["Events"]
a = t.arrays(["nMuon", "MET_pt"])
t.skim("$work/py.evtc", (a.nMuon >= 2) & (a.MET_pt > 50), threads=1)
PY
python3 benches/peers/paired.py -n 5 --prepare "rm -f $work/where.evtc $work/py.evtc; sync" \
    --vs ".venv/bin/python $work/skim.py" \
    -- target/release/evtc skim --force "$work/nano.evtc" "$work/where.evtc" \
    --where "nMuon >= 2 && MET_pt > 50" --threads 1 --quiet
target/release/evtc skim --force "$work/nano.evtc" "$work/where.evtc" \
    --where "nMuon >= 2 && MET_pt > 50" --threads 1 --json
cmp <(target/release/evtc dump "$work/where.evtc" --format json) \
    <(target/release/evtc dump "$work/py.evtc" --format json) && echo "the two skims hold the same entries"
