#!/usr/bin/env python3
"""Reading over XRootD with a delay per round trip: evtc against uproot on the same data, served
by a real XRootD server (the distribution's xrootd-server) on a loopback port behind a proxy that
holds every packet half the delay in each direction.

Usage (from the repository root, the package installed as for bench.py, its files made, and
xrootd-server, fsspec-xrootd and the XRootD client installed):

    .venv/bin/python benches/python/xrootd_read.py [--delay-ms 20] [--events 200000] [--repeat 5]

Reads 12 branches, every branch, and every branch in steps (`iterate`) of the NanoAOD-like file:
evtc on the zstd:5 evtc file through the XRootD client (`evtc.open("root://...")`) and through
fsspec-xrootd (the same reader over fsspec's `cat_ranges`), uproot on the ROOT 505 file
(`uproot.open("root://...")`, fsspec-xrootd, its default for root://). A read is timed twice: with
the open (`open` + read, the file opened before in the process, as a second read of a dataset is)
and alone (the file already open). Prints the median wall time, the bytes the proxy sent, and
for evtc the compressed bytes of the baskets read. Every library reads on one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

import uproot

import evtc
from evtc import _lib
from evtc._source import FsspecSource
from evtc.reading import File

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "evtc-bench" / "python"
sys.path.insert(0, str(REPO / "python" / "tests"))
from servers import LatencyProxy, xrootd_server  # noqa: E402

BRANCHES = [
    "event", "MET_pt", "MET_phi", "PV_npvs", "nJet", "Jet_pt", "Jet_eta", "Jet_phi",
    "nMuon", "Muon_pt", "Muon_eta", "Muon_phi",
]  # fmt: skip


def cpu() -> str:
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def stored_bytes(path: pathlib.Path, names: list[str] | None) -> int:
    """The compressed bytes of the baskets of `names` (every branch for None), from inspect."""
    cli = os.environ.get("EVTC_CLI") or next(
        (str(p) for p in (REPO / "target" / k / "evtc" for k in ("release", "debug")) if p.exists()),
        "evtc",
    )
    out = subprocess.run([cli, "inspect", str(path), "--json"], check=True, capture_output=True)
    info = json.loads(out.stdout)
    tree = next(t for t in info["trees"] if t["name"] == "Events")
    return sum(b["stored_bytes"] for b in tree["branches"] if names is None or b["name"] in names)


def timed(fn, proxy: LatencyProxy, repeat: int) -> tuple[float, int]:
    """The median seconds of `repeat` runs (after one untimed) and the bytes of the last."""
    fn()
    times = []
    for _ in range(repeat):
        before = proxy.bytes_to_client
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        sent = proxy.bytes_to_client - before
    return statistics.median(times), sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    evtc_file = DATA / f"nano_{args.events}_zstd5.evtc"
    root_file = DATA / f"nano_{args.events}_505.root"
    version = subprocess.run(["xrootd", "-v"], capture_output=True, text=True)
    with xrootd_server([evtc_file, root_file]) as served, LatencyProxy(
        served.port, args.delay_ms / 1e3
    ) as proxy:
        url = f"root://127.0.0.1:{proxy.port}//"
        evtc_url, root_url = url + evtc_file.name, url + root_file.name

        def xrdcl(names, step=None):
            tree = evtc.open(evtc_url, threads=1)["Events"]
            return tree.arrays(names) if step is None else [len(a) for a in tree.iterate(names, step_size=step)]

        def fsspec(names, step=None):
            source = FsspecSource(evtc_url)
            tree = File(_lib.Reader(source=source, threads=1), evtc_url, source)["Events"]
            return tree.arrays(names) if step is None else [len(a) for a in tree.iterate(names, step_size=step)]

        def up(names, step=None):
            with uproot.open(root_url, array_cache=None, object_cache=None) as f:
                tree = f["Events"]
                return tree.arrays(names) if step is None else [len(a) for a in tree.iterate(names, step_size=step)]

        opened = {
            "xrdcl": evtc.open(evtc_url, threads=1)["Events"],
            "uproot": uproot.open(root_url, array_cache=None, object_cache=None)["Events"],
        }
        lines = [
            f"## Reading over XRootD, {args.delay_ms:.0f} ms per round trip ({args.events:,} events)",
            "",
            f"xrootd {version.stdout.strip() or version.stderr.strip()} on a loopback port behind a "
            f"proxy adding {args.delay_ms:.0f} ms per round trip; {cpu()}; one thread each; "
            f"median of {args.repeat}. evtc reads the zstd:5 evtc file through the XRootD client "
            "(`evtc.open(url)`) or fsspec-xrootd; uproot the ROOT 505 file through fsspec-xrootd. "
            "`open + read` opens the file (opened before in the process) and reads; `read` reads "
            "from an open file. Bytes: what the server sent through the proxy; for evtc also the "
            "compressed bytes of the baskets read.",
            "",
            "| read | evtc XrdCl s | evtc fsspec s | uproot s | uproot / evtc | evtc bytes | / baskets | uproot bytes |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for label, names, step in (
            ("12 branches, open + read", BRANCHES, None),
            ("every branch, open + read", None, None),
            ("every branch in 50,000-entry steps, open + read", None, 50_000),
        ):
            t_x, b_x = timed(lambda: xrdcl(names, step), proxy, args.repeat)
            t_f, _ = timed(lambda: fsspec(names, step), proxy, args.repeat)
            t_u, b_u = timed(lambda: up(names, step), proxy, args.repeat)
            base_bytes = stored_bytes(evtc_file, names)
            lines.append(
                f"| {label} | {t_x:.3f} | {t_f:.3f} | {t_u:.3f} | **{t_u / t_x:.1f}x** | "
                f"{b_x / 1e6:.2f} MB | {b_x / base_bytes:.2f} | {b_u / 1e6:.2f} MB |"
            )
        for label, names in (("12 branches, read", BRANCHES), ("every branch, read", None)):
            t_x, b_x = timed(lambda: opened["xrdcl"].arrays(names), proxy, args.repeat)
            t_u, b_u = timed(lambda: opened["uproot"].arrays(names), proxy, args.repeat)
            base_bytes = stored_bytes(evtc_file, names)
            lines.append(
                f"| {label} | {t_x:.3f} | | {t_u:.3f} | **{t_u / t_x:.1f}x** | "
                f"{b_x / 1e6:.2f} MB | {b_x / base_bytes:.2f} | {b_u / 1e6:.2f} MB |"
            )
    print("\n".join(lines + [""]))


if __name__ == "__main__":
    main()
