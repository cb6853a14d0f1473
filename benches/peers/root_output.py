#!/usr/bin/env python3
"""evtc's ROOT output against ROOT's own writers, in one run, one thread each (#50's targets).

For each input tree: the 200,000-event NanoAOD-like TTree of the peers bench (written by ROOT 6.40
with setting 505), and real files of scikit-hep-testdata (`src/skhep_testdata/data/` of its git
repository, copied into target/evtc-bench/real/ by hand; those missing are left out): CMS 2015
open-data ttbar NanoAOD (200 events, 947 branches), uproot's HZZ and Zmumu trees:

- RNTuple: `evtc convert IN OUT --to rntuple --codec 505 --threads 1` against RDataFrame's
  Snapshot to an RNTuple with the same setting (ROOT's 505: zstd level 10), single-threaded:
  file sizes, and write times (medians of REPEATS runs taken in turn; Snapshot's first run in the
  process, which compiles its code, apart);
- TTree: `--to ttree --codec 505` against Snapshot to a TTree with 505 and the input TTree;
- reading: ROOT's RDataFrame over each RNTuple (a typed MET histogram, jets' HT and muons' pT,
  one event loop; `evtc_rdf_nano` in root_loops.C) and RNTupleReader's LoadEntry loop over
  every field, medians of REPEATS runs taken in turn.

Run with a Python that has ROOT, after `cargo build --release -p evtc-cli`:

    .venv-root/bin/python benches/peers/root_output.py [--events 200000] [--repeats 5]

Prints Markdown tables (for docs/benchmarks.md) and the CPU.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import ROOT

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = REPO / "target" / "evtc-bench" / "root-output"
EVTC = REPO / "target" / "release" / "evtc"

sys.path.insert(0, str(HERE))
import root_side  # noqa: E402


def cpu() -> str:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def nano(events: int) -> pathlib.Path:
    """The NanoAOD-like TTree of `events` events, setting 505 (make_fixtures.py --nano)."""
    path = REPO / "target" / "evtc-bench" / "python" / f"nano_{events}_505.root"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        script = REPO / "crates" / "root" / "tests" / "fixtures" / "make_fixtures.py"
        tmp = path.with_suffix(".tmp.root")
        subprocess.run(
            [sys.executable, str(script), "--nano", str(events), "--setting", "505", str(tmp)],
            check=True,
        )
        tmp.rename(path)
    return path


def evtc_tools(source: pathlib.Path, out: pathlib.Path, to: str) -> float:
    """Seconds of one `evtc convert --to` run, one thread."""
    start = time.perf_counter()
    subprocess.run(
        [str(EVTC), "convert", str(source), str(out), "--to", to, "--codec", "505",
         "--threads", "1", "--no-sync", "--force", "--quiet"],
        check=True,
    )
    return time.perf_counter() - start


def snapshot(source: pathlib.Path, tree: str, out: pathlib.Path, to: str) -> float:
    """Seconds of one RDataFrame Snapshot of `tree` to `to`, setting 505, one thread."""
    options = ROOT.RDF.RSnapshotOptions()
    if to == "rntuple":
        options.fOutputFormat = ROOT.RDF.ESnapshotOutputFormat.kRNTuple
    options.fCompressionAlgorithm = ROOT.RCompressionSetting.EAlgorithm.EValues(5)
    options.fCompressionLevel = 5
    start = time.perf_counter()
    ROOT.RDataFrame(tree, str(source)).Snapshot(tree, str(out), "", options)
    return time.perf_counter() - start


def mb(path: pathlib.Path) -> float:
    return path.stat().st_size / 1e6


def bench(name: str, source: pathlib.Path, tree: str, repeats: int, nano_columns: bool) -> list[str]:
    folder = DATA / name
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    reads = []
    for to in ("rntuple", "ttree"):
        ours, theirs = folder / f"evtc_{to}.root", folder / f"snapshot_{to}.root"
        try:
            first = snapshot(source, tree, theirs, to)  # compiles Snapshot's code in this process
        except Exception as e:  # noqa: BLE001 - ROOT's error, reported
            reason = str(e).strip().splitlines()[-1][:120]
            e_time = statistics.median(evtc_tools(source, ours, to) for _ in range(repeats))
            rows.append(
                f"| {name} | {to} | {mb(ours):.3f} | - | - | {e_time:.2f} | - | - | - | "
                f"Snapshot fails: {reason} |"
            )
            if to == "rntuple":
                return rows  # nothing of ROOT's to read against
            continue
        evtc_times, root_times = [], []
        for _ in range(repeats):
            evtc_times.append(evtc_tools(source, ours, to))
            root_times.append(snapshot(source, tree, theirs, to))
        e, r = statistics.median(evtc_times), statistics.median(root_times)
        line = (
            f"| {name} | {to} | {mb(ours):.3f} | {mb(theirs):.3f} | {mb(ours) / mb(theirs):.3f} "
            f"| {e:.2f} | {r:.2f} | {first:.2f} | {r / e:.2f}x |"
        )
        if to == "ttree" and "rntuple" not in source.name:
            line += f" input TTree {mb(source):.3f} MB |"
        else:
            line += " |"
        rows.append(line)
        if to == "rntuple":
            reads = [ours, theirs]
    # Reading both RNTuples with ROOT.
    loops = {p: [] for p in reads}
    analyses = {p: [] for p in reads}
    for p in reads:  # warm-up: page cache, dictionaries
        ROOT.evtc_rntuple_loop(str(p), tree)
        if nano_columns:
            ROOT.evtc_rdf_nano(str(p))
    for _ in range(repeats):
        for p in reads:
            loops[p].append(ROOT.evtc_rntuple_loop(str(p), tree))
            if nano_columns:
                analyses[p].append(ROOT.evtc_rdf_nano(str(p)))
    ours, theirs = reads
    loop_e, loop_r = statistics.median(loops[ours]), statistics.median(loops[theirs])
    read = f"| {name} | LoadEntry, every field | {loop_e * 1e3:.0f} | {loop_r * 1e3:.0f} | {loop_r / loop_e:.2f}x |"
    rows.append(read)
    if nano_columns:
        a_e, a_r = statistics.median(analyses[ours]), statistics.median(analyses[theirs])
        rows.append(
            f"| {name} | RDataFrame MET, HT, muon pT | {a_e * 1e3:.0f} | {a_r * 1e3:.0f} | {a_r / a_e:.2f}x |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not EVTC.exists():
        sys.exit(f"{EVTC} is missing: cargo build --release -p evtc-cli")
    ROOT.gROOT.SetBatch(True)
    ROOT.gErrorIgnoreLevel = ROOT.kWarning
    root_side.load()
    real = REPO / "target" / "evtc-bench" / "real"
    inputs = [
        (f"NanoAOD-like, {args.events} events", nano(args.events), "Events", True),
        ("CMS 2015 ttbar NanoAOD", real / "nanoAOD_2015_CMS_Open_Data_ttbar.root", "Events", True),
        ("uproot's HZZ", real / "uproot-HZZ.root", "events", False),
        ("uproot's Zmumu", real / "uproot-Zmumu.root", "events", False),
    ]
    writes, reads = [], []
    for name, source, tree, nano_columns in inputs:
        if not source.exists():
            print(f"{source} is missing: left out", file=sys.stderr)
            continue
        for row in bench(name, source, tree, args.repeats, nano_columns):
            (reads if "LoadEntry" in row or "RDataFrame" in row else writes).append(row)
    print(f"CPU: {cpu()}; ROOT {ROOT.gROOT.GetVersion()}; one thread; medians of {args.repeats} runs in turn\n")
    print("| input | output | evtc MB | Snapshot MB | evtc / Snapshot size | evtc s | Snapshot s | Snapshot's first run s | Snapshot / evtc time | |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(writes))
    print()
    print("| input | ROOT reading | evtc's RNTuple ms | Snapshot's RNTuple ms | Snapshot / evtc |")
    print("|---|---|---:|---:|---:|")
    print("\n".join(reads))


if __name__ == "__main__":
    main()
