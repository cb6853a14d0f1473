#!/usr/bin/env bash
# Reduced float precision on the NanoAOD-like ROOT file (setting 505): evtc's rounding to N
# mantissa bits (`evtc convert --float-precision '*=N'`, zstd:5) against RNTuple's Real32Trunc(N + 9)
# columns written by ROOT 6.40's RNTupleImporter (zstd:5, `root_side.py rntuple-trunc`), each
# against its own lossless file written the same way. Prints a markdown table of file sizes and
# full-read times: evtc `verify --deep` (every basket decoded, 2 threads) as a whole process,
# best of 7; ROOT's RNTupleReader::LoadEntry loop over every field, median of 5, in
# process. Compare within a system, not across (the read harnesses differ).
# Needs target/root-bench/nano_200000_505.root (made by `cargo bench --bench peers`), ROOT from
# PyPI in .venv-root (or EVTC_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/../.."
input=${1:-target/root-bench/nano_200000_505.root}
python=${EVTC_PYTHON:-.venv-root/bin/python}
cargo build --release -q -p evtc-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
best_read() {
    python3 - "$1" <<'PY'
import subprocess, sys, time
runs = []
for _ in range(7):
    start = time.perf_counter()
    subprocess.run(["target/release/evtc", "verify", "--deep", sys.argv[1]], check=True, stdout=subprocess.DEVNULL)
    runs.append(time.perf_counter() - start)
print(min(runs))
PY
}
echo "| file | mantissa bits | MB | x lossless | full read s |"
echo "|---|---:|---:|---:|---:|"
for bits in lossless 12 3; do
    if [ "$bits" = lossless ]; then
        target/release/evtc convert --force --quiet "$input" "$out/e_$bits.evtc"
    else
        target/release/evtc convert --force --quiet "$input" "$out/e_$bits.evtc" --float-precision "*=$bits"
    fi
    size=$(stat -c %s "$out/e_$bits.evtc")
    [ "$bits" = lossless ] && base=$size
    awk -v b="$bits" -v s="$size" -v l="$base" -v r="$(best_read "$out/e_$bits.evtc")" \
        'BEGIN{printf "| evtc zstd:5 | %s | %.2f | %.3f | %.3f |\n", b, s/1e6, s/l, r}'
done
for bits in lossless 12 3; do
    trunc=0
    [ "$bits" != lossless ] && trunc=$((bits + 9))
    "$python" benches/peers/root_side.py rntuple-trunc "$input" "$out/rntuple_$bits.root" "$trunc" 2>/dev/null
    size=$(stat -c %s "$out/rntuple_$bits.root")
    [ "$bits" = lossless ] && base=$size
    secs=$("$python" benches/peers/root_side.py time --repeat 5 "$out/rntuple_$bits.root" 2>/dev/null \
        | python3 -c "import json,sys; print(list(json.load(sys.stdin).values())[0]['loop_s'])")
    label="RNTuple zstd:5"
    [ "$bits" != lossless ] && label="RNTuple zstd:5, Real32Trunc($trunc)"
    awk -v n="$label" -v b="$bits" -v s="$size" -v l="$base" -v r="$secs" \
        'BEGIN{printf "| %s | %s | %.2f | %.3f | %.3f |\n", n, b, s/1e6, s/l, r}'
done
