#!/usr/bin/env bash
# Times `evtc convert` of the NanoAOD-like ROOT file (setting 505) to zstd:5, lz4 and lzma:9 with 1
# and 2 threads, with peak memory from GNU time; prints a markdown table (docs/benchmarks.md quotes it).
# Needs target/root-bench/nano_200000_505.root (made by `cargo bench --bench peers` or
# `make_fixtures.py --nano 200000 --setting 505`) and GNU time at /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/../.."
input=${1:-target/root-bench/nano_200000_505.root}
cargo build --release -q -p evtc-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| codec | threads | seconds (best of 3) | values MB/s | output MB | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for codec in zstd:5 lz4 lzma:9; do
    for threads in 1 2; do
        best=""
        for _ in 1 2 3; do
            /usr/bin/time -f "%e %M" -o "$out/time" target/release/evtc convert "$input" "$out/o.evtc" \
                --codec "$codec" --threads "$threads" --json > "$out/summary.json"
            read -r secs rss < "$out/time"
            if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; best_rss=$rss; fi
        done
        values=$(python3 -c "import json;print(json.load(open('$out/summary.json'))['value_bytes'])")
        size=$(stat -c %s "$out/o.evtc")
        awk -v c="$codec" -v t="$threads" -v s="$best" -v v="$values" -v o="$size" -v r="$best_rss" \
            'BEGIN{printf "| %s | %d | %.2f | %.0f | %.2f | %.0f |\n", c, t, s, v/s/1e6, o/1e6, r/1024}'
    done
done
