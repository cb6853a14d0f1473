#!/usr/bin/env python3
"""ROOT 6.40's side of `cargo bench --bench peers` (see benches/peers.rs); prints JSON.

  root_side.py rntuple TTREE_FILE OUT     write the tree as an RNTuple (RDataFrame Snapshot, zstd:5)
  root_side.py rntuple-trunc TTREE_FILE OUT BITS
                                          the same through RNTupleImporter, every float field
                                          Real32Trunc(BITS) (BITS - 9 mantissa bits kept; 0:
                                          none, the same importer losslessly)
  root_side.py fromraw RAW OUT SETTING N   write little-endian floats, N per entry, as a TTree
                                          with one array branch x[N]/F (the RAC study's trees)
  root_side.py time [--repeat N] FILE...  time the TTree loop (or RNTuple loop for files whose
                                          name contains "rntuple") and, for trees with Jet_pt,
                                          random TBranch::GetEntry reads of it; median of N runs,
                                          in seconds and us
"""

import json
import os
import statistics
import sys

import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    ROOT.gROOT.SetBatch(True)
    ROOT.gSystem.SetBuildDir(os.path.join(HERE, "..", "..", "target", "root-bench", "aclic"), True)
    if ROOT.gROOT.ProcessLine(f".L {os.path.join(HERE, 'root_loops.C')}+O") != 0:
        sys.exit("ACLiC could not compile root_loops.C")


def has_branch(path, name):
    f = ROOT.TFile.Open(path)
    try:
        return bool(f.Get("Events").GetBranch(name))
    finally:
        f.Close()


def main():
    if sys.argv[1] == "rntuple":
        options = ROOT.RDF.RSnapshotOptions()
        options.fOutputFormat = ROOT.RDF.ESnapshotOutputFormat.kRNTuple
        options.fCompressionAlgorithm = ROOT.RCompressionSetting.EAlgorithm.kZSTD
        options.fCompressionLevel = 5
        ROOT.RDataFrame("Events", sys.argv[2]).Snapshot("Events", sys.argv[3], "", options)
        return
    if sys.argv[1] == "rntuple-trunc":
        load()
        ROOT.evtc_import_truncated(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    if sys.argv[1] == "fromraw":
        load()
        raw, out, setting, per_entry = sys.argv[2:6]
        ROOT.evtc_write_floats(raw, out, int(setting), int(per_entry))
        return
    args = sys.argv[2:]
    repeat = 3
    if args[0] == "--repeat":
        repeat, args = int(args[1]), args[2:]
    load()
    out = {}
    for path in args:
        rntuple = "rntuple" in os.path.basename(path)
        loop = ROOT.evtc_rntuple_loop if rntuple else ROOT.evtc_ttree_loop
        loop(path)  # warm-up: page cache, dictionaries
        result = {"loop_s": statistics.median(loop(path) for _ in range(repeat))}
        if not rntuple and has_branch(path, "Jet_pt"):
            ROOT.evtc_tbranch_random(path, "Jet_pt", "nJet", 100)
            result["random_us"] = statistics.median(
                ROOT.evtc_tbranch_random(path, "Jet_pt", "nJet", 1000) for _ in range(repeat)
            )
        out[path] = result
    print(json.dumps(out))


if __name__ == "__main__":
    main()
