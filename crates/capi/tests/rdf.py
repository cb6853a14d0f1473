"""The same analysis through RDataFrame over an evtc file and over the ROOT file it was converted
from: a MET histogram and a dimuon mass from Muon_pt/eta/phi/mass with opposite charges, with 1
thread and with implicit multi-threading; then over the file twice as a chain (evtc_open_chain)
against ROOT's TChain of the ROOT file twice. The data source is the header-only evtc_rdf.hxx,
compiled by ROOT's interpreter, or libevtc_rdf (scripts/build-rdf), loaded by one call. Exits 1
naming what differs. Usage:

    python rdf.py header LIBEVTC_C INCLUDE_DIR FILE.evtc FILE.root
    python rdf.py compiled LIBEVTC_RDF FILE.evtc FILE.root"""

import sys

import ROOT

mode = sys.argv[1]
if mode == "header":
    library, include, evtc_file, root_file = sys.argv[2:6]
    if ROOT.gSystem.Load(library) < 0:
        sys.exit(f"cannot load {library}")
    ROOT.gInterpreter.AddIncludePath(include)
    if not ROOT.gInterpreter.Declare('#include "evtc_rdf.hxx"'):
        sys.exit("evtc_rdf.hxx does not compile")
elif mode == "compiled":
    library, evtc_file, root_file = sys.argv[2:5]
    # One call: the dictionary beside the library declares evtc::MakeDataFrame.
    if ROOT.gSystem.Load(library) < 0:
        sys.exit(f"cannot load {library}")
else:
    sys.exit(f"unknown mode {mode}: header or compiled")


def analysis(df):
    met = df.Histo1D(("met", "", 40, 0.0, 200.0), "MET_pt")
    mass = (
        df.Filter("nMuon == 2", "two muons")
        .Filter("Muon_charge[0] != Muon_charge[1]", "opposite charges")
        .Define("m", "ROOT::VecOps::InvariantMass(Muon_pt, Muon_eta, Muon_phi, Muon_mass)")
        .Histo1D(("m", "", 60, 0.0, 150.0), "m")
    )
    count = df.Filter("nJet > 3").Count()
    return [met, mass], count


def contents(h):
    return [h.GetBinContent(i) for i in range(h.GetNbinsX() + 2)]


failures = []
for threads in (1, 2):
    if threads > 1:
        ROOT.EnableImplicitMT(threads)
    (e_hists, e_count), (r_hists, r_count) = (
        analysis(ROOT.evtc.MakeDataFrame(evtc_file, "Events")),
        analysis(ROOT.RDataFrame("Events", root_file)),
    )
    for e, r in zip(e_hists, r_hists):
        if contents(e) != contents(r):
            failures.append(f"{threads} threads: histogram {e.GetName()} differs")
        if e.GetEntries() == 0:
            failures.append(f"{threads} threads: histogram {e.GetName()} is empty")
    if e_count.GetValue() != r_count.GetValue():
        failures.append(f"{threads} threads: {e_count.GetValue()} events with nJet > 3, ROOT {r_count.GetValue()}")
    # Only the columns the graph uses are read; a column read as another type is an error.
    try:
        ROOT.evtc.MakeDataFrame(evtc_file, "Events").Sum["double"]("MET_pt").GetValue()
        failures.append("reading a float column as double did not fail")
    except Exception as error:  # noqa: BLE001 - ROOT's C++ exceptions arrive as several types
        if "MET_pt is float" not in str(error):
            failures.append(f"the type error does not name the column and its type: {error}")
# The file twice as one chain (a TChain of it twice): every count doubles, as ROOT's own chain.
paths = ROOT.std.vector["std::string"]()
for _ in range(2):
    paths.push_back(evtc_file)
chain = ROOT.TChain("Events")
chain.Add(root_file)
chain.Add(root_file)
(e_hists, e_count), (r_hists, r_count) = (
    analysis(ROOT.evtc.MakeDataFrame(paths, "Events")),
    analysis(ROOT.RDataFrame(chain)),
)
for e, r in zip(e_hists, r_hists):
    if contents(e) != contents(r):
        failures.append(f"a chain: histogram {e.GetName()} differs from the TChain's")
if e_count.GetValue() != r_count.GetValue():
    failures.append(f"a chain: {e_count.GetValue()} events with nJet > 3, the TChain {r_count.GetValue()}")
if failures:
    sys.exit("\n".join(failures))
print("ok")
