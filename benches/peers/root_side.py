#!/usr/bin/env python3
"""ROOT 6.40's side of `cargo bench --bench peers` (see benches/peers.rs); prints JSON.

  root_side.py rntuple TTREE_FILE OUT [SETTING]
                                          write the tree as an RNTuple (RDataFrame Snapshot) with
                                          compression SETTING (ROOT's number, default 505: zstd:5)
  root_side.py rntuple-import TTREE_FILE OUT [SETTING]
                                          the same through RNTupleImporter (lossless)
  root_side.py rntuple-trunc TTREE_FILE OUT BITS
                                          the same through RNTupleImporter (zstd:5), every float
                                          field Real32Trunc(BITS) (BITS - 9 mantissa bits kept; 0:
                                          none, the same importer losslessly)
  root_side.py fromraw RAW OUT SETTING N   write little-endian floats, N per entry, as a TTree
                                          with one array branch x[N]/F (the RAC study's trees)
  root_side.py fromints POSITIONS COUNTS OUT SETTING
                                          write little-endian int32 positions and uint32 counts
                                          as a TTree with branches position/I and count/i
  root_side.py sizes FILE...              on-disk sizes of each file's "Events" (TTree: file,
                                          compression setting, per-branch TBranch::GetZipBytes and
                                          GetTotBytes; RNTuple: file, compression setting, per
                                          top-level field compressed and uncompressed bytes from
                                          RNTupleInspector), as JSON keyed by path
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
    """Compiles (once) and loads root_loops.C; EVTC_ACLIC_DIR overrides where ACLiC builds it."""
    ROOT.gROOT.SetBatch(True)
    build = os.environ.get("EVTC_ACLIC_DIR") or os.path.join(HERE, "..", "..", "target", "root-bench", "aclic")
    ROOT.gSystem.SetBuildDir(build, True)
    if ROOT.gROOT.ProcessLine(f".L {os.path.join(HERE, 'root_loops.C')}+O") != 0:
        sys.exit("ACLiC could not compile root_loops.C")


def has_branch(path, name):
    f = ROOT.TFile.Open(path)
    try:
        return bool(f.Get("Events").GetBranch(name))
    finally:
        f.Close()


def snapshot_rntuple(tree_file, out, setting=505):
    """The tree "Events" of `tree_file` as an RNTuple "Events" in `out` through RDataFrame's
    Snapshot, with ROOT compression `setting` (algorithm * 100 + level)."""
    options = ROOT.RDF.RSnapshotOptions()
    options.fOutputFormat = ROOT.RDF.ESnapshotOutputFormat.kRNTuple
    options.fCompressionAlgorithm = ROOT.RCompressionSetting.EAlgorithm.EValues(setting // 100)
    options.fCompressionLevel = setting % 100
    ROOT.RDataFrame("Events", tree_file).Snapshot("Events", out, "", options)


def object_class(f, name):
    key = f.GetKey(name)
    return key.GetClassName() if key else ""


def sizes(path):
    """What `root_side.py sizes` prints for one file (see the module's docstring)."""
    out = {"file_bytes": os.path.getsize(path), "root_version": str(ROOT.gROOT.GetVersion())}
    f = ROOT.TFile.Open(path)
    try:
        cls = object_class(f, "Events")
        if cls == "ROOT::RNTuple":
            insp = ROOT.Experimental.RNTupleInspector.Create("Events", path)
            desc = insp.GetDescriptor()
            settings = insp.GetCompressionSettings()
            out.update(
                kind="rntuple",
                entries=int(desc.GetNEntries()),
                compression=int(settings.value()) if settings.has_value() else None,
                compression_name=str(insp.GetCompressionSettingsAsString()),
                stored_bytes=int(insp.GetCompressedSize()),
                raw_bytes=int(insp.GetUncompressedSize()),
                columns={},
            )
            for field in desc.GetTopLevelFields():
                name = str(field.GetFieldName())
                fti = insp.GetFieldTreeInspector(name)
                out["columns"][name] = {
                    "type": str(field.GetTypeName()),
                    "stored_bytes": int(fti.GetCompressedSize()),
                    "raw_bytes": int(fti.GetUncompressedSize()),
                }
        else:
            tree = f.Get("Events")
            out.update(
                kind="ttree",
                entries=int(tree.GetEntries()),
                compression=int(f.GetCompressionSettings()),
                stored_bytes=int(tree.GetZipBytes()),
                raw_bytes=int(tree.GetTotBytes()),
                columns={},
            )
            for branch in tree.GetListOfBranches():
                out["columns"][str(branch.GetName())] = {
                    "type": str(branch.GetTitle()),
                    "stored_bytes": int(branch.GetZipBytes("*")),
                    "raw_bytes": int(branch.GetTotBytes("*")),
                }
    finally:
        f.Close()
    return out


def main():
    if sys.argv[1] == "rntuple":
        setting = int(sys.argv[4]) if len(sys.argv) > 4 else 505
        snapshot_rntuple(sys.argv[2], sys.argv[3], setting)
        return
    if sys.argv[1] == "rntuple-import":
        load()
        setting = int(sys.argv[4]) if len(sys.argv) > 4 else 505
        ROOT.evtc_import_truncated(sys.argv[2], sys.argv[3], 0, setting)
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
    if sys.argv[1] == "fromints":
        load()
        positions, counts, out, setting = sys.argv[2:6]
        if ROOT.evtc_write_ints(positions, counts, out, int(setting)) < 0:
            sys.exit(f"could not read {positions} and {counts} (or their lengths differ)")
        return
    if sys.argv[1] == "sizes":
        ROOT.gROOT.SetBatch(True)
        print(json.dumps({path: sizes(path) for path in sys.argv[2:]}))
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
