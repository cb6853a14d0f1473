#!/usr/bin/env bash
# Times `evtc convert` of the NanoAOD-like ROOT file (setting 505) to zstd:5, lz4 and lzma:9 with 1
# and 2 threads, with peak memory from GNU time; then the same data read from a TTree and from an
# RNTuple (ROOT 6.40's RNTupleImporter, zstd:5), both converted to zstd:5. Prints markdown tables
# (docs/benchmarks.md quotes them).
# Needs target/root-bench/nano_200000_505.root (made by `cargo bench --bench peers` or
# `make_fixtures.py --nano 200000 --setting 505`) and GNU time at /usr/bin/time; the RNTuple is
# written next to it by `benches/peers/root_side.py rntuple-import` (a Python with ROOT:
# EVTC_PYTHON, default .venv-root/bin/python) when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
input=${1:-target/root-bench/nano_200000_505.root}
rntuple=${input%.root}_rntuple.root
python=${EVTC_PYTHON:-.venv-root/bin/python}
cargo build --release -q -p evtc-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Best of 3 runs of `evtc convert INPUT` with codec $2 and $3 threads: "seconds rss values size".
best_of_3() {
    local best="" best_rss=""
    for _ in 1 2 3; do
        /usr/bin/time -f "%e %M" -o "$out/time" target/release/evtc convert --force "$1" "$out/o.evtc" \
            --codec "$2" --threads "$3" --json > "$out/summary.json"
        read -r secs rss < "$out/time"
        if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; best_rss=$rss; fi
    done
    local values
    values=$(python3 -c "import json;print(json.load(open('$out/summary.json'))['value_bytes'])")
    echo "$best $best_rss $values $(stat -c %s "$out/o.evtc")"
}

echo "| codec | threads | seconds (best of 3) | values MB/s | output MB | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for codec in zstd:5 lz4 lzma:9; do
    for threads in 1 2; do
        read -r secs rss values size < <(best_of_3 "$input" "$codec" "$threads")
        awk -v c="$codec" -v t="$threads" -v s="$secs" -v v="$values" -v o="$size" -v r="$rss" \
            'BEGIN{printf "| %s | %d | %.2f | %.0f | %.2f | %.0f |\n", c, t, s, v/s/1e6, o/1e6, r/1024}'
    done
done

if [ ! -e "$rntuple" ]; then
    "$python" benches/peers/root_side.py rntuple-import "$input" "$rntuple" 505
fi
echo
echo "| input | threads | seconds (best of 3) | values MB/s | RNTuple / TTree |"
echo "|---|---|---|---|---|"
for threads in 1 2; do
    read -r tree_s _ tree_values _ < <(best_of_3 "$input" zstd:5 "$threads")
    read -r ntuple_s _ ntuple_values _ < <(best_of_3 "$rntuple" zstd:5 "$threads")
    awk -v t="$threads" -v s="$tree_s" -v v="$tree_values" -v f="$(basename "$input")" \
        'BEGIN{printf "| TTree (%s) | %d | %.2f | %.0f | |\n", f, t, s, v/s/1e6}'
    awk -v t="$threads" -v s="$ntuple_s" -v v="$ntuple_values" -v ts="$tree_s" -v tv="$tree_values" \
        -v f="$(basename "$rntuple")" \
        'BEGIN{printf "| RNTuple (%s) | %d | %.2f | %.0f | %.2fx |\n", f, t, s, v/s/1e6, (v/s)/(tv/ts)}'
done
