#!/usr/bin/env python3
"""Planning evtc.dask over many files: the time to build the Dask graph (every file's footer read
for its entries and clusters), for 1,000 to 100,000 files.

Usage (from the repository root, the package installed as for bench.py):

    .venv/bin/python benches/python/dask_plan.py [--files 1000 10000 100000] [--repeat 3]

The files are symbolic links, in a directory of their own, to one evtc file of the 20,000-event
sample (114 branches): each is opened by its own name (a path lookup, an open, the trailer and
footer read and parsed), but their bytes are one file's, so the page cache holds them: this
measures the planning's own cost, not a disk's. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import statistics
import time

import evtc

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "evtc-bench" / "python"


def cpu() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    source = DATA / "nano_sample_zstd5.evtc"
    if not source.exists():
        evtc.convert(REPO / "data" / "nano_sample.root", source, codec="zstd:5")
    folder = DATA / "links"
    folder.mkdir(exist_ok=True)
    have = len(list(folder.iterdir()))
    for i in range(have, max(args.files)):
        (folder / f"f{i:06}.evtc").symlink_to(source)
    paths = sorted(str(p) for p in folder.iterdir())
    lines = [
        f"| files | evtc.dask s (median of {args.repeat}) | files / s | partitions |",
        "|---|---|---|---|",
    ]
    for n in args.files:
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            d = evtc.dask(paths[:n], step_size="100 MB")
            times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        lines.append(f"| {n:,} | {t:.2f} | {n / t:,.0f} | {d.npartitions:,} |")
    print(f"{cpu()}, {os.cpu_count()} cores\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
