#!/usr/bin/env python3
"""Memory under load: a read's peak against the arrays it returns, iterate's peak against its
step, and a Dask worker's resident set over 1,000 partitions.

Usage (from the repository root, the package installed as for bench.py, its files made):

    .venv/bin/python benches/python/memory.py [--events 200000] [--partitions 1000]

Each read runs in a fresh process; its cost is the growth of the peak resident set (ru_maxrss)
over the resident set after opening the file and reading 10 entries, against the distinct
buffers of the arrays returned (a counter's offsets shared by its collection's branches counted
once). The Dask run reads `Muon_pt` of 1,000 partitions (one per file: symbolic links to the
20,000-event sample's evtc file) on a LocalCluster of one worker process, and samples the
worker's resident set every 100 partitions. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys

import evtc

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "evtc-bench" / "python"

CHILD = r"""
import json, resource, sys
import awkward as ak, numpy as np, evtc

path, threads, step = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
def now():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
def distinct(a):
    seen = {}
    for v in ak.to_buffers(a)[2].values():
        arr = np.asarray(v)
        seen[(arr.__array_interface__["data"][0], arr.nbytes)] = arr.nbytes
    return sum(seen.values())
tree = evtc.open(path, threads=threads)["Events"]
tree.arrays(entry_stop=10)
before = now()
if step == "all":
    a = tree.arrays()
    out = {"arrays": distinct(a), "growth": peak() - before}
else:
    largest = 0
    for a in tree.iterate(step_size=int(step)):
        largest = max(largest, distinct(a))
        del a
    out = {"arrays": largest, "growth": peak() - before}
print(json.dumps(out))
"""


def cpu() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def child(path: pathlib.Path, threads: int, step: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(threads), step],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def worker_rss() -> int:
    return int(open("/proc/self/statm").read().split()[1]) * 4096


def dask_run(partitions: int) -> list[tuple[int, float]]:
    import awkward as ak
    import distributed

    source = DATA / "nano_sample_zstd5.evtc"
    if not source.exists():
        evtc.convert(REPO / "data" / "nano_sample.root", source, codec="zstd:5")
    folder = DATA / "links"
    folder.mkdir(exist_ok=True)
    for i in range(len(list(folder.iterdir())), partitions):
        (folder / f"f{i:06}.evtc").symlink_to(source)
    paths = sorted(str(p) for p in folder.iterdir())[:partitions]
    samples = []
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        for done in range(0, partitions, 100):
            lazy = evtc.dask(paths[done : done + 100], step_size=10**9)
            ak.sum(lazy.Muon_pt).compute()
            rss = next(iter(client.run(worker_rss).values()))
            samples.append((done + 100, rss / 1e6))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=1_000)
    args = parser.parse_args()
    evtc_file = DATA / f"nano_{args.events}_zstd5.evtc"
    root_file = DATA / f"nano_{args.events}_505.root"
    print(f"{cpu()}, {os.cpu_count()} cores\n")
    print("| read | arrays MB | peak growth MB | growth / arrays |")
    print("|---|---|---|---|")
    for label, path, threads, step in (
        ("evtc file, every branch, 1 thread", evtc_file, 1, "all"),
        ("evtc file, every branch, 2 threads", evtc_file, 2, "all"),
        ("ROOT file (evtc's reader), every branch, 1 thread", root_file, 1, "all"),
        ("evtc file, iterate in steps of 20,000 entries", evtc_file, 1, "20000"),
        ("evtc file, iterate in steps of 50,000 entries", evtc_file, 1, "50000"),
    ):
        r = child(path, threads, step)
        print(
            f"| {label} | {r['arrays'] / 1e6:.1f} | {r['growth'] / 1e6:.1f} | "
            f"{r['growth'] / r['arrays']:.2f} |"
        )
    print("\n| partitions done | worker resident set MB |")
    print("|---|---|")
    for done, rss in dask_run(args.partitions):
        print(f"| {done:,} | {rss:.0f} |")


if __name__ == "__main__":
    main()
