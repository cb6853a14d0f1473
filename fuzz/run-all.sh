#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60), one after the other, with libFuzzer's
# memory limits low enough that an allocation sized by a lying header is a crash:
# -malloc_limit_mb=512 (any single allocation over 512 MiB) and -rss_limit_mb=1024.
#
#   bash fuzz/run-all.sh 600        # needs `cargo install cargo-fuzz` and a nightly toolchain
#   FUZZ_SANITIZER=none bash fuzz/run-all.sh 600   # without AddressSanitizer: several times faster
#
# Without a sanitizer libFuzzer's -malloc_limit_mb does nothing; the targets' own allocator
# (fuzz_targets/limit_alloc.rs) aborts on any allocation over 512 MiB in either build.
#
# New inputs go to target/fuzz-corpus/TARGET (the committed seeds in fuzz/corpus/TARGET are read,
# not written); crashes to fuzz/artifacts/TARGET. The last lines per target (executions, speed,
# peak RSS) are printed and kept in target/fuzz-TARGET.log.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
sanitizer=${FUZZ_SANITIZER:-address}
status=0
for target in $(cargo +nightly fuzz list); do
    scratch=../target/fuzz-corpus/$target
    mkdir -p "$scratch"
    log=../target/fuzz-$target.log
    echo "== $target ($seconds s)"
    if ! cargo +nightly fuzz run -s "$sanitizer" "$target" "$scratch" "corpus/$target" -- \
        -max_total_time="$seconds" -malloc_limit_mb=512 -rss_limit_mb=1024 \
        -print_final_stats=1 >"$log" 2>&1; then
        echo "   CRASH: see $log and fuzz/artifacts/$target"
        status=1
    fi
    grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" "$log" \
        | sed 's/^/   /' || true
done
exit $status
