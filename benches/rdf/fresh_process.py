"""What a user waits for: a fresh Python process that imports ROOT, opens the data and runs one
RDataFrame analysis (a dimuon mass written as strings, as analyses are: two Filters, a Define, a
Histo1D; one thread), over a TTree and over evtc through the header-only data source
(evtc_rdf.hxx, compiled by ROOT's interpreter in every process) and through libevtc_rdf
(scripts/build-rdf: compiled ahead of time, one gSystem.Load). Each process then runs the same
analysis a second time (the interpreter's work for the strings is done): the event loop.

The three kinds run one after the other in each of ROUNDS rounds; the medians are compared
within this run (the machine is shared). Whole-process times are measured by this script, from
starting the process to its exit.

Run (ROOT from PyPI in .venv-root, the release library):

    cargo build --release -p evtc-capi && scripts/build-rdf
    .venv-root/bin/python benches/rdf/fresh_process.py \\
        --evtc target/evtc-bench/python/nano_200000_zstd5.evtc \\
        --ttree target/evtc-bench/python/nano_200000_505.root
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import ROOT
kind, path, library, include = sys.argv[1:5]
if kind == "compiled":
    assert ROOT.gSystem.Load(library) >= 0, library
    make = lambda: ROOT.evtc.MakeDataFrame(path, "Events")
elif kind == "header":
    assert ROOT.gSystem.Load(library) >= 0, library
    ROOT.gInterpreter.AddIncludePath(include)
    assert ROOT.gInterpreter.Declare('#include "evtc_rdf.hxx"')
    make = lambda: ROOT.evtc.MakeDataFrame(path, "Events")
else:
    make = lambda: ROOT.RDataFrame("Events", path)
times = []
for _ in range(2):
    start = time.perf_counter()
    h = (make().Filter("nMuon == 2").Filter("Muon_charge[0] != Muon_charge[1]")
         .Define("m", "ROOT::VecOps::InvariantMass(Muon_pt, Muon_eta, Muon_phi, Muon_mass)")
         .Histo1D(("m", "", 60, 0.0, 150.0), "m"))
    entries = h.GetEntries()
    times.append(time.perf_counter() - start)
print(json.dumps({"entries": entries, "first": times[0], "second": times[1]}))
"""


def run(kind: str, path: str, library: str, include: str) -> dict:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, kind, path, library, include],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process"] = time.perf_counter() - start
    return result


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    release = os.path.join(here, "..", "..", "target", "release")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evtc", required=True)
    parser.add_argument("--ttree", required=True)
    parser.add_argument("--lib-dir", default=release, help="libevtc_c.so, libevtc_rdf.so, include/")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    lib = os.path.abspath(args.lib_dir)
    kinds = {
        "ttree": (args.ttree, "", ""),
        "compiled": (args.evtc, os.path.join(lib, "libevtc_rdf.so"), ""),
        "header": (args.evtc, os.path.join(lib, "libevtc_c.so"), os.path.join(lib, "include")),
    }
    results: dict[str, list[dict]] = {k: [] for k in kinds}
    for _ in range(args.rounds):
        for kind, (path, library, include) in kinds.items():
            results[kind].append(run(kind, path, library, include))
    entries = {k: {r["entries"] for r in v} for k, v in results.items()}
    if len({e for v in entries.values() for e in v}) != 1:
        sys.exit(f"the histograms differ: {entries}")
    median = {
        k: {m: statistics.median(r[m] for r in v) for m in ("process", "first", "second")}
        for k, v in results.items()
    }
    print(f"{args.rounds} rounds, medians in seconds (one thread)\n")
    print("| source | whole process | first analysis | second analysis |")
    print("|---|---|---|---|")
    for kind, m in median.items():
        print(f"| {kind} | {m['process']:.2f} | {m['first']:.3f} | {m['second']:.3f} |")
    t = median["ttree"]
    for kind in ("compiled", "header"):
        m = median[kind]
        print(
            f"\nTTree / evtc {kind}: whole process {t['process'] / m['process']:.2f}x, "
            f"second analysis {t['second'] / m['second']:.2f}x"
        )


if __name__ == "__main__":
    main()
