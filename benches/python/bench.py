#!/usr/bin/env python3
"""The Python package's benchmarks (issue 12), evtc against uproot on the same data, same run.

Usage (from the repository root, with the package installed as a release build):

    EVTC_PY_PROFILE=release scripts/test-all        # or: MATURIN_PEP517_ARGS="--profile release" .venv/bin/pip install ./python
    ROOT_PYTHON=.venv-root/bin/python .venv/bin/python benches/python/bench.py [--events 200000]

ROOT_PYTHON is a Python with ROOT (PyPI's ROOT, as for `cargo bench --bench peers`): it writes the
NanoAOD-like TTree files with `crates/root/tests/fixtures/make_fixtures.py --nano`. Files are kept in
target/evtc-bench/python/ and reused; the report is printed and written to
target/evtc-bench/python.md. Single thread (evtc `threads=1`; uproot's default executors), hot page
cache, medians of repeated runs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import time

import awkward as ak
import numpy as np
import uproot

import evtc

REPO = pathlib.Path(__file__).resolve().parents[2]
OUT = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "evtc-bench"
DATA = OUT / "python"


def cpu_name() -> str:
    """The CPU's model name (Linux), else what `platform` knows."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(fns, repeat: int) -> list[float]:
    """Median times of `fns`, run in turn `repeat` times, so that each sees the same load."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def root_file(setting: int, events: int) -> pathlib.Path:
    path = DATA / f"nano_{events}_{setting}.root"
    if not path.exists():
        root_python = os.environ.get("ROOT_PYTHON", str(REPO / ".venv-root" / "bin" / "python"))
        if not pathlib.Path(root_python).exists():
            sys.exit(f"bench: a Python with ROOT is needed (ROOT_PYTHON={root_python} not found)")
        script = REPO / "crates" / "root" / "tests" / "fixtures" / "make_fixtures.py"
        tmp = path.with_suffix(".tmp.root")
        subprocess.run(
            [root_python, str(script), "--nano", str(events), "--setting", str(setting), str(tmp)],
            check=True,
        )
        tmp.rename(path)
    return path


def rntuple_file(events: int) -> pathlib.Path:
    """The NanoAOD-like data of `root_file(505, events)` as an RNTuple written by ROOT 6.40's
    RNTupleImporter (zstd:5, `benches/peers/root_side.py rntuple-import`)."""
    path = DATA / f"nano_{events}_505_rntuple.root"
    if not path.exists():
        root_python = os.environ.get("ROOT_PYTHON", str(REPO / ".venv-root" / "bin" / "python"))
        tmp = path.with_suffix(".tmp.root")
        script = REPO / "benches" / "peers" / "root_side.py"
        subprocess.run(
            [root_python, str(script), "rntuple-import", str(root_file(505, events)), str(tmp), "505"],
            check=True,
        )
        tmp.rename(path)
    return path


def evtc_file(source: pathlib.Path, name: str, **options) -> pathlib.Path:
    path = DATA / name
    if not path.exists():
        evtc.convert(source, path, **options)
    return path


def read_all_evtc(path: pathlib.Path) -> ak.Array:
    return evtc.open(path, threads=1)["Events"].arrays(library="ak")


def read_all_uproot(path: pathlib.Path) -> ak.Array:
    with uproot.open(path, array_cache=None, object_cache=None) as f:
        return f["Events"].arrays(library="ak")


def bench_full_read(events: int, repeat: int) -> list[str]:
    r505 = root_file(505, events)
    r404 = root_file(404, events)
    e_zstd = evtc_file(r505, f"nano_{events}_zstd5.evtc", codec="zstd:5")
    e_lz4 = evtc_file(r404, f"nano_{events}_lz4.evtc", codec="lz4")
    # Same values on both sides before timing anything.
    a, b = read_all_evtc(e_zstd), read_all_uproot(r505)
    assert a.fields == b.fields and all(ak.array_equal(a[f], b[f], equal_nan=True) for f in a.fields)
    # The values' bytes (without the lists' offsets), as the Rust benches count them.
    raw = sum(ak.flatten(a[f], axis=None).nbytes for f in a.fields) / 1e6
    rows = []
    for label, e_path, r_path in (("zstd:5 / ROOT 505", e_zstd, r505), ("lz4 / ROOT 404 (lz4)", e_lz4, r404)):
        t_e, t_r, t_er = interleaved(
            [lambda: read_all_evtc(e_path), lambda: read_all_uproot(r_path), lambda: read_all_evtc(r_path)],
            repeat,
        )
        rows.append(
            f"| {label} | {e_path.stat().st_size / 1e6:.1f} | {r_path.stat().st_size / 1e6:.1f} "
            f"| {t_e * 1e3:.0f} ({raw / t_e:.0f} MB/s) | {t_r * 1e3:.0f} ({raw / t_r:.0f} MB/s) "
            f"| **{t_r / t_e:.1f}x** | {t_er * 1e3:.0f} ({t_r / t_er:.1f}x) |"
        )
    return [
        f"## Read every branch into Awkward arrays ({events:,} events, 114 branches, {raw:.1f} MB of values)",
        "",
        "`evtc.open(f, threads=1)[\"Events\"].arrays()` against "
        "`uproot.open(f, array_cache=None, object_cache=None)[\"Events\"].arrays()`, open included, "
        f"median of {repeat} runs taken in turn (evtc, uproot, evtc on ROOT). The ROOT files are written by ROOT 6.40 (`make_fixtures.py --nano`); the "
        "evtc files are converted from them (`evtc.convert`, zstd:5 and lz4). The last column is evtc's "
        "own ROOT reader on the ROOT file (`evtc.open` of the .root file) and its speed-up over uproot.",
        "",
        "| codec | evtc MB | ROOT MB | evtc ms | uproot ms | evtc / uproot | evtc on the ROOT file ms |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def bench_rntuple_read(events: int, repeat: int) -> list[str]:
    rntuple = rntuple_file(events)
    r505 = root_file(505, events)
    # Same values on both sides before timing anything. uproot also gives the importer's untyped
    # `_collectionN` records, whose columns are the projected fields' (evtc does not repeat
    # them), and reads the cardinality fields (`nMuon`) as int64 where ROOT has uint32.
    a, b = read_all_evtc(rntuple), read_all_uproot(rntuple)
    assert set(a.fields) == {f for f in b.fields if not f.startswith("_collection")}
    assert all(ak.array_equal(a[f], b[f], equal_nan=True, dtype_exact=False) for f in a.fields)
    raw = sum(ak.flatten(a[f], axis=None).nbytes for f in a.fields) / 1e6
    t_e, t_r, t_et = interleaved(
        [lambda: read_all_evtc(rntuple), lambda: read_all_uproot(rntuple), lambda: read_all_evtc(r505)],
        repeat,
    )
    return [
        f"## Read every field of an RNTuple ({events:,} events, {len(a.fields)} fields, {raw:.1f} MB of values)",
        "",
        "The NanoAOD-like data as an RNTuple written by ROOT 6.40's `RNTupleImporter` (zstd:5): "
        "`evtc.open(f, threads=1)[\"Events\"].arrays()` against "
        "`uproot.open(f, array_cache=None, object_cache=None)[\"Events\"].arrays()`, open included, "
        f"median of {repeat} runs taken in turn, the same values checked first (uproot also gives the "
        "importer's `_collectionN` records, made of the same columns); the last column is evtc "
        "reading the same data from the TTree (ROOT 505) it was imported from.",
        "",
        "| RNTuple MB | evtc ms | uproot ms | evtc / uproot | evtc on the TTree ms |",
        "|---|---|---|---|---|",
        f"| {rntuple.stat().st_size / 1e6:.1f} | {t_e * 1e3:.0f} ({raw / t_e:.0f} MB/s) "
        f"| {t_r * 1e3:.0f} ({raw / t_r:.0f} MB/s) | **{t_r / t_e:.1f}x** | {t_et * 1e3:.0f} |",
        "",
    ]


def bench_many_branches(repeat: int) -> list[str]:
    n = 20_000
    e_path = DATA / "branches_20000.evtc"
    r_path = DATA / "branches_20000.root"
    data = {f"b{i}": np.arange(10, dtype=np.float32) + i for i in range(n)}
    if not e_path.exists():
        with evtc.recreate(e_path) as f:
            f["Events"] = data
    if not r_path.exists():
        tmp = r_path.with_suffix(".tmp.root")
        with uproot.recreate(tmp) as f:
            f["Events"] = data
        tmp.rename(r_path)

    def evtc_keys():
        assert len(evtc.open(e_path)["Events"].keys()) == n

    def uproot_keys():
        with uproot.open(r_path) as f:
            assert len(f["Events"].keys()) == n

    t_e = median_time(evtc_keys, repeat)
    t_r = median_time(uproot_keys, 1)  # minutes per run: once
    return [
        f"## Open and list a {n:,}-branch tree",
        "",
        f"`evtc.open(f)[\"Events\"].keys()` on an evtc file of {n:,} float branches (10 entries), and "
        "`uproot.open(f)[\"Events\"].keys()` on the same schema written by uproot as a ROOT file; "
        f"evtc: median of {repeat}; uproot: one run (it takes minutes).",
        "",
        "| | evtc | uproot |",
        "|---|---|---|",
        f"| open + keys() | {t_e * 1e3:.1f} ms | {t_r:.1f} s |",
        "",
    ]


def bench_dask_graph(repeat: int) -> list[str]:
    n = 100
    folder = DATA / "hundred"
    folder.mkdir(exist_ok=True)
    e_src = evtc_file(REPO / "data" / "nano_sample.root", "nano_sample.evtc", codec="zstd:5")
    r_src = REPO / "data" / "nano_sample.root"
    e_files, r_files = [], []
    for i in range(n):
        for src, suffix, files in ((e_src, "evtc", e_files), (r_src, "root", r_files)):
            path = folder / f"nano_{i:03}.{suffix}"
            if not path.exists():
                shutil.copyfile(src, path)
            files.append(str(path))

    def evtc_graph():
        assert evtc.dask(e_files, step_size=10_000).npartitions >= n

    def uproot_graph():
        uproot.dask({f: "Events" for f in r_files}, step_size=10_000)

    t_e, t_r = interleaved([evtc_graph, uproot_graph], repeat)
    return [
        f"## Build a Dask graph over {n} files",
        "",
        f"`evtc.dask(files, step_size=10_000)` over {n} copies of the 20,000-event sample as evtc "
        "(partition boundaries from each footer), and `uproot.dask({file: \"Events\"}, step_size=10_000)` "
        "over the same number of copies of the ROOT sample; both open every file; medians.",
        "",
        "| | evtc.dask | uproot.dask |",
        "|---|---|---|",
        f"| graph over {n} files | {t_e * 1e3:.0f} ms | {t_r * 1e3:.0f} ms |",
        "",
    ]


def bench_single_entries(events: int, reads: int) -> list[str]:
    r505 = root_file(505, events)
    e_rac = evtc_file(r505, f"nano_{events}_zstd5_rac.evtc", codec="zstd:5", rac=True)
    e_plain = evtc_file(r505, f"nano_{events}_zstd5.evtc", codec="zstd:5")
    entries = np.random.default_rng(12).integers(0, events, reads)

    def per_read(fn) -> float:
        times = []
        for i in entries:
            t0 = time.perf_counter()
            fn(int(i))
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    rac = evtc.open(e_rac, threads=1)["Events"]["Muon_pt"]
    plain = evtc.open(e_plain, threads=1)["Events"]["Muon_pt"]
    f = uproot.open(r505, array_cache=None, object_cache=None)
    up = f["Events"]["Muon_pt"]
    for i in entries[:20]:  # the same values
        assert np.array_equal(rac[int(i)], up.array(entry_start=i, entry_stop=i + 1, library="np")[0])
    t_rac = per_read(lambda i: rac[i])
    t_plain = per_read(lambda i: plain[i])
    t_up = per_read(lambda i: up.array(entry_start=i, entry_stop=i + 1, library="ak"))
    f.close()
    return [
        f"## {reads:,} random single-entry reads of `Muon_pt` ({events:,} events)",
        "",
        "Median time per read at seeded random entries: evtc's `tree[\"Muon_pt\"][i]` (a cursor read; "
        "with RAC only the unit holding the entry is decompressed) on the zstd:5 file with and without "
        "RAC, and uproot's `array(entry_start=i, entry_stop=i + 1)` on the ROOT 505 file.",
        "",
        "| | evtc RAC | evtc (no RAC) | uproot |",
        "|---|---|---|---|",
        f"| median per read | {t_rac * 1e6:.0f} us | {t_plain * 1e6:.0f} us | {t_up * 1e6:.0f} us |",
        f"| uproot / evtc | **{t_up / t_rac:.0f}x** | {t_up / t_plain:.1f}x | 1 |",
        "",
    ]


_RUST_BUILT: list[bool] = []


def rust_read_all(path: pathlib.Path, threads: int) -> float:
    """The Rust bulk read of every branch (`examples/read_all.rs`, built here), median seconds."""
    binary = REPO / "target" / "release" / "examples" / "read_all"
    if not _RUST_BUILT:
        # Built once per run, from this tree (a binary left by an earlier build may be stale).
        subprocess.run(["cargo", "build", "--release", "-q", "--example", "read_all"], cwd=REPO, check=True)
        _RUST_BUILT.append(True)
    out = subprocess.run([str(binary), str(path), "Events", str(threads)], check=True, capture_output=True, text=True)
    return float(out.stdout.split(":")[1].split("ms")[0]) / 1e3


def bench_threads(events: int, repeat: int) -> list[str]:
    """Every branch into Awkward arrays with 1 and 2 threads: evtc against the Rust bulk read of
    the same file and against uproot with as many decompression threads."""
    from concurrent.futures import ThreadPoolExecutor

    r505 = root_file(505, events)
    e_zstd = evtc_file(r505, f"nano_{events}_zstd5.evtc", codec="zstd:5")
    rows = []
    for threads in (1, 2):
        def evtc_read():
            return evtc.open(e_zstd, threads=threads)["Events"].arrays()

        def uproot_read():
            pool = ThreadPoolExecutor(threads) if threads > 1 else None
            options = {"decompression_executor": uproot.ThreadPoolExecutor(threads)} if pool else {}
            with uproot.open(r505, array_cache=None, object_cache=None, **options) as f:
                result = f["Events"].arrays()
            if pool:
                pool.shutdown()
            return result

        def timed(fn) -> float:
            t0 = time.perf_counter()
            result = fn()
            elapsed = time.perf_counter() - t0
            del result
            return elapsed

        # evtc and the Rust read in turn, each the median of 9 reads in a loop (the Rust read
        # in a process of its own; evtc opening the file for each), the ratio taken pair by
        # pair; then evtc and uproot in turn, for their ratio (uproot's allocations in between
        # make evtc's output memory come back from the kernel, zeroed).
        def evtc_loop() -> float:
            return statistics.median(timed(evtc_read) for _ in range(9))

        pairs = [(evtc_loop(), rust_read_all(e_zstd, threads)) for _ in range(repeat)]
        alone = statistics.median(e for e, _ in pairs)
        t_r = statistics.median(r for _, r in pairs)
        speed = statistics.median(r / e for e, r in pairs)
        times: list[list[float]] = [[], []]
        for _ in range(repeat):
            for fn, ts in zip([evtc_read, uproot_read], times):
                ts.append(timed(fn))
        t_e, t_u = (statistics.median(ts) for ts in times)
        rows.append((threads, alone, t_r, speed, t_e, t_u))
    (_, e1, r1, *_), (_, e2, r2, *_) = rows
    lines = [
        f"## Every branch with 1 and 2 threads ({events:,} events, zstd:5)",
        "",
        "`evtc.open(f, threads=N)[\"Events\"].arrays()` (fresh open, into Awkward arrays; the "
        "median of 9 reads in a loop) in turn with the Rust bulk read of the same file in a "
        "process of its own (`examples/read_all.rs`: every branch read whole, the branches in "
        f"parallel on the file's threads; the median of its 9 reads), {repeat} pairs, their ratio "
        "taken pair by pair; then evtc and uproot on the ROOT 505 file with N decompression threads "
        "(`decompression_executor=uproot.ThreadPoolExecutor(N)`), "
        f"{repeat} runs taken in turn; medians, each run timed up to its result.",
        "",
        "| threads | evtc ms | Rust read ms | evtc / Rust (speed) | evtc ms, in turn with uproot | uproot ms | evtc / uproot |",
        "|---|---|---|---|---|---|---|",
    ]
    for threads, alone, t_r, speed, t_e, t_u in rows:
        lines.append(
            f"| {threads} | {alone * 1e3:.1f} | {t_r * 1e3:.1f} | {speed:.2f}x | {t_e * 1e3:.1f} "
            f"| {t_u * 1e3:.0f} | **{t_u / t_e:.1f}x** |"
        )
    lines += ["", f"2 threads against 1: evtc {e1 / e2:.2f}x, the Rust read {r1 / r2:.2f}x.", ""]
    return lines


def bench_numpy_library(events: int, repeat: int) -> list[str]:
    """Every branch with `library="np"` (jagged branches as object arrays of one NumPy array per
    entry) against `library="ak"`, and uproot's `library="np"`, fresh opens taken in turn."""
    r505 = root_file(505, events)
    e_zstd = evtc_file(r505, f"nano_{events}_zstd5.evtc", codec="zstd:5")

    def evtc_np():
        return evtc.open(e_zstd, threads=1)["Events"].arrays(library="np")

    def uproot_np():
        with uproot.open(r505, array_cache=None, object_cache=None) as f:
            return f["Events"].arrays(library="np")

    a, b = evtc_np(), uproot_np()
    assert all(np.array_equal(a["Muon_pt"][i], b["Muon_pt"][i]) for i in range(0, events, 997))
    entries = sum(1 for name, v in a.items() if v.dtype == object) * events
    del a, b
    # NumPy making as many views itself, in its own C loop (iterating a 2-D array by rows).
    rows = np.empty((entries, 1), dtype=np.float32)

    def numpy_views():
        return list(rows)

    # Timed without freeing the result (tens of millions of objects for "np").
    times: list[list[float]] = [[], [], [], []]
    for _ in range(max(3, repeat // 2)):
        for fn, ts in zip([lambda: read_all_evtc(e_zstd), evtc_np, uproot_np, numpy_views], times):
            t0 = time.perf_counter()
            result = fn()
            ts.append(time.perf_counter() - t0)
            del result
    t_ak, t_np, t_up, t_views = (statistics.median(ts) for ts in times)
    return [
        f"## Every branch as NumPy arrays (`library=\"np\"`, {events:,} events)",
        "",
        "`evtc.open(f, threads=1)[\"Events\"].arrays(library=\"np\")` on the zstd:5 file: jagged "
        f"branches are object arrays of one NumPy view per entry ({entries:,} of them), made in "
        "Rust; against the same read into Awkward arrays, and uproot's `library=\"np\"` on the "
        f"ROOT 505 file (a Python loop over the entries); fresh opens, median of {max(3, repeat // 2)} "
        "runs taken in turn, each timed up to its result (not its freeing). NumPy's own views: "
        f"`list()` of a 2-D array of {entries:,} rows, NumPy making as many views in its C loop.",
        "",
        "| evtc np ms | evtc ak ms | np / ak | uproot np ms | uproot / evtc np | NumPy's own views ms |",
        "|---|---|---|---|---|---|",
        f"| {t_np * 1e3:.0f} | {t_ak * 1e3:.0f} | {t_np / t_ak:.1f}x | {t_up * 1e3:.0f} "
        f"| **{t_up / t_np:.1f}x** | {t_views * 1e3:.0f} |",
        "",
    ]


BATCH_BRANCHES = [
    "event", "MET_pt", "MET_phi", "PV_npvs", "nJet", "Jet_pt", "Jet_eta", "nMuon", "Muon_pt", "Muon_eta",
]


def bench_random_batches(events: int, batches: int) -> list[str]:
    """Batches of 1,024 seeded random entries of 10 branches: evtc's `arrays(entries=...)`
    against uproot reading the same entries (each entry as a one-entry range, as a loader of
    single entries does, and the ten branches whole, then the entries taken)."""
    r505 = root_file(505, events)
    e_rac = evtc_file(r505, f"nano_{events}_zstd5_rac.evtc", codec="zstd:5", rac=True)
    e_plain = evtc_file(r505, f"nano_{events}_zstd5.evtc", codec="zstd:5")
    rng = np.random.default_rng(21)
    picks = [rng.integers(0, events, 1024) for _ in range(batches)]
    rac = evtc.open(e_rac, threads=1)["Events"]
    plain = evtc.open(e_plain, threads=1)["Events"]
    f = uproot.open(r505, array_cache=None, object_cache=None)
    up = f["Events"]
    want = up.arrays(BATCH_BRANCHES)[picks[0]]
    got = rac.arrays(BATCH_BRANCHES, entries=picks[0])
    assert all(ak.array_equal(got[b], want[b]) for b in BATCH_BRANCHES)

    def per_batch(fn) -> float:
        return statistics.median(timed(fn, p) for p in picks)

    def timed(fn, p) -> float:
        t0 = time.perf_counter()
        fn(p)
        return time.perf_counter() - t0

    t_rac = per_batch(lambda p: rac.arrays(BATCH_BRANCHES, entries=p))
    # The Rust read alone: the units holding the entries decoded, the values gathered.
    reader = rac.file._reader
    t_units = per_batch(lambda p: reader.read_entries("Events", BATCH_BRANCHES, p.astype(np.uint64)))
    t_plain = per_batch(lambda p: plain.arrays(BATCH_BRANCHES, entries=p))
    t_whole = per_batch(lambda p: up.arrays(BATCH_BRANCHES)[p])
    # uproot entry by entry: 64 of the 1,024 entries timed, scaled to the batch.
    sample = picks[0][:64]
    t0 = time.perf_counter()
    for i in sample:
        up.arrays(BATCH_BRANCHES, entry_start=int(i), entry_stop=int(i) + 1)
    t_each = (time.perf_counter() - t0) / len(sample) * 1024
    f.close()
    return [
        f"## Random batches: 1,024 entries of 10 branches ({events:,} events)",
        "",
        f"`tree.arrays(branches, entries=idx)` for {batches} batches of 1,024 seeded random entries of "
        f"{', '.join(BATCH_BRANCHES)} (the tree open; median per batch), on the zstd:5 file with and "
        "without RAC, against uproot on the ROOT 505 file: each entry read as a one-entry range "
        "(64 entries timed, scaled to 1,024), and the ten branches read whole, then the entries "
        "taken (`arrays(branches)[idx]`). The Rust read alone (the units holding the entries "
        f"decoded and their values gathered, no Awkward arrays built) takes {t_units * 1e3:.1f} ms "
        f"of evtc's {t_rac * 1e3:.1f} ms with RAC ({t_rac / t_units:.2f}x).",
        "",
        "| evtc RAC ms | evtc (no RAC) ms | uproot entry by entry ms | uproot whole + take ms | "
        "RAC / entry by entry | RAC / whole + take |",
        "|---|---|---|---|---|---|",
        f"| {t_rac * 1e3:.1f} | {t_plain * 1e3:.1f} | {t_each * 1e3:.0f} | {t_whole * 1e3:.1f} "
        f"| **{t_each / t_rac:.0f}x** | **{t_whole / t_rac:.1f}x** |",
        "",
    ]


def bench_iterate(events: int, repeat: int) -> list[str]:
    r505 = root_file(505, events)
    e_zstd = evtc_file(r505, f"nano_{events}_zstd5.evtc", codec="zstd:5")
    evtc_tree = evtc.open(e_zstd, threads=1)["Events"]
    root_tree = uproot.open(r505, array_cache=None, object_cache=None)["Events"]
    rows = []
    for step in (10_000, 50_000):
        t_e, t_r = interleaved(
            [
                lambda: sum(len(a) for a in evtc_tree.iterate(step_size=step)),
                lambda: sum(len(a) for a in root_tree.iterate(step_size=step)),
            ],
            repeat,
        )
        rows.append(
            f"| {step:,} | {events // step} | {t_e * 1e3:.0f} | {t_r * 1e3:.0f} | **{t_r / t_e:.1f}x** |"
        )
    return [
        f"## Every branch in steps: `iterate` ({events:,} events, 114 branches)",
        "",
        "`tree.iterate(step_size=N)` over every branch into Awkward arrays, the file open once: evtc "
        "on the zstd:5 evtc file (`threads=1`), uproot on the ROOT 505 file (`array_cache=None`); "
        f"median of {repeat} runs taken in turn.",
        "",
        "| entries per step | steps | evtc ms | uproot ms | evtc / uproot |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ]


def bench_event_lookup(events: int, lookups: int) -> list[str]:
    """Finding an event's entry by (run, event): evtc's event index against reading the two
    branches with uproot and searching them, each with a fresh open, as a user looking one event
    up does."""
    r505 = root_file(505, events)
    indexed = evtc_file(r505, f"nano_{events}_505_indexed.evtc", index=("run", "event"))
    keys = evtc.open(indexed)["Events"].arrays(["run", "event"], library="np")
    rng = np.random.default_rng(7)
    picks = [int(e) for e in rng.integers(0, events, lookups)]
    wanted = [(int(keys["run"][e]), int(keys["event"][e])) for e in picks]

    def evtc_fresh(key):
        return evtc.open(indexed, threads=1)["Events"].entry_of(*key)

    def uproot_fresh(key):
        with uproot.open(r505, array_cache=None, object_cache=None) as f:
            a = f["Events"].arrays(["run", "event"], library="np")
        return int(np.flatnonzero((a["run"] == key[0]) & (a["event"] == key[1]))[0])

    tree = evtc.open(indexed, threads=1)["Events"]
    assert all(evtc_fresh(k) == uproot_fresh(k) == e for k, e in list(zip(wanted, picks))[:5])

    def per_lookup(fn, keys) -> float:
        t0 = time.perf_counter()
        for k in keys:
            fn(k)
        return (time.perf_counter() - t0) / len(keys)

    few = wanted[: max(1, lookups // 50)]
    t_u = statistics.median(per_lookup(uproot_fresh, [k]) for k in few)
    t_e = per_lookup(evtc_fresh, wanted)
    t_w = per_lookup(lambda k: tree.entry_of(*k), wanted)
    # Every event at once: the keys looked up in key order, each index block decoded once.
    t0 = time.perf_counter()
    at_once = tree.arrays(["run"], events=wanted, library="np")["run"]
    t_all = (time.perf_counter() - t0) / len(wanted)
    assert at_once.tolist() == [k[0] for k in wanted]
    return [
        f"## Look an event up by (run, event) ({events:,} events)",
        "",
        "`evtc.open(f)[\"Events\"].entry_of(run, event)` in the file's event index (made by "
        "`convert(index=(\"run\", \"event\"))`) against `uproot.open(f)[\"Events\"].arrays([\"run\", "
        "\"event\"])` of the ROOT 505 file and a NumPy search, both with a fresh open per lookup; "
        f"evtc's mean over {lookups:,} random events, uproot's median over {len(few)}; the last two "
        "columns are evtc looking up in a tree already open, one event at a time and all "
        f"{lookups:,} in one `arrays([\"run\"], events=keys)` (their `run` values read too), per event.",
        "",
        "| uproot read + search ms | evtc open + lookup us | evtc / uproot | evtc lookup, open tree us "
        "| evtc all at once, us per event |",
        "|---|---|---|---|---|",
        f"| {t_u * 1e3:.1f} | {t_e * 1e6:.0f} | **{t_u / t_e:.0f}x** | {t_w * 1e6:.0f} | {t_all * 1e6:.1f} |",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--reads", type=int, default=1_000)
    parser.add_argument(
        "--only",
        choices=[
            "read", "rntuple", "iterate", "branches", "dask", "entries", "lookup", "batches", "numpy", "threads"
        ],
    )
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)

    lines = [
        "# Python package (`benches/python/bench.py`)",
        "",
        f"Machine: {cpu_name()}, {os.cpu_count()} cores; Python "
        f"{platform.python_version()}, evtc {evtc.__version__}, uproot {uproot.__version__}, "
        f"awkward {ak.__version__}. Single thread, hot page cache. Load average at the start: "
        f"{os.getloadavg()[0]:.1f} (the machine is shared).",
        "",
    ]
    if args.only in (None, "read"):
        lines += bench_full_read(args.events, args.repeat)
    if args.only in (None, "rntuple"):
        lines += bench_rntuple_read(args.events, args.repeat)
    if args.only in (None, "iterate"):
        lines += bench_iterate(args.events, args.repeat)
    if args.only in (None, "branches"):
        lines += bench_many_branches(args.repeat * 4)
    if args.only in (None, "dask"):
        lines += bench_dask_graph(args.repeat)
    if args.only in (None, "entries"):
        lines += bench_single_entries(args.events, args.reads)
    if args.only in (None, "threads"):
        lines += bench_threads(args.events, args.repeat)
    if args.only in (None, "numpy"):
        lines += bench_numpy_library(args.events, args.repeat)
    if args.only in (None, "batches"):
        lines += bench_random_batches(args.events, args.repeat * 4)
    if args.only in (None, "lookup"):
        lines += bench_event_lookup(args.events, args.reads)
    report = "\n".join(lines)
    print(report)
    (OUT / ("python.md" if args.only is None else f"python-{args.only}.md")).write_text(report + "\n")


if __name__ == "__main__":
    main()
