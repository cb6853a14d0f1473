"""The same RDataFrame analyses over evtc (include/evtc_rdf.hxx), a TTree and an RNTuple of the
same NanoAOD-like data: a MET histogram (one branch: I/O-bound) and a dimuon mass (nMuon,
Muon_pt/eta/phi/mass/charge), with 1 thread and with ROOT's implicit multi-threading on every
core. For the MET histogram, also the same loop over MET_pt's values already in memory (a
data source that only returns a pointer to each value): ROOT's own cost of the loop and the
histogram, the least any source can take. The analyses are compiled C++ (typed
RDataFrame calls declared once), timed in C++ from booking the action to its result: the times
are event loops, not JIT compilation nor the Python call into the interpreter. Medians of
REPEATS runs after a warm-up run, files in the page cache; the ratios are taken within this run.

Run (ROOT from PyPI in .venv-root, the release library):

    cargo build --release -p evtc-capi
    .venv-root/bin/python benches/rdf/rdf_bench.py \\
        --evtc target/evtc-bench/python/nano_200000_zstd5.evtc \\
        --ttree target/evtc-bench/python/nano_200000_505.root \\
        --rntuple target/evtc-bench/python/nano_200000_505_rntuple.root

(the files of `benches/python/bench.py`: 200,000 events, zstd level 5 in all three).
"""

from __future__ import annotations

import argparse
import os
import statistics

import ROOT

ANALYSES = r"""
#include "evtc_rdf.hxx"
#include <chrono>

// The milliseconds of the last analysis, from booking its action to its result (the event
// loop): timed in C++, so that the Python call into the interpreter is not counted.
double evtc_bench_ms = 0;

double evtc_bench_met(ROOT::RDataFrame df) {
  auto start = std::chrono::steady_clock::now();
  auto h = df.Histo1D<float>({"met", "", 40, 0.0, 200.0}, "MET_pt");
  double entries = h->GetEntries();
  evtc_bench_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return entries;
}

// The floor of the MET histogram: the same loop over MET_pt's values already in memory (read
// once), served by the least a data source can be (the evtc file's cluster ranges; a reader
// returning a pointer to the value): ROOT's own loop and histogram, no source's reading.
std::vector<float>& evtc_bench_met_values(const std::string& path) {
  static std::vector<float> met = evtc::File(path).tree("Events").read<float>("MET_pt");
  return met;
}

class R__CLING_PTRCHECK(off) EvtcBenchValueReader final : public ROOT::Detail::RDF::RColumnReaderBase {
 public:
  explicit EvtcBenchValueReader(const float* values) : values_(values) {}

 private:
  void* GetImpl(Long64_t entry) final { return const_cast<float*>(values_ + entry); }
  const float* values_;
};

class EvtcBenchMemorySource final : public ROOT::RDF::RDataSource {
 public:
  EvtcBenchMemorySource(const std::vector<float>& values, std::vector<std::uint64_t> ends)
      : values_(values), clusters_{std::move(ends)} {}
  const std::vector<std::string>& GetColumnNames() const final { return names_; }
  bool HasColumn(std::string_view name) const final { return name == names_[0]; }
  std::string GetTypeName(std::string_view) const final { return "float"; }
  void Initialize() final { given_ = false; }
  std::vector<std::pair<ULong64_t, ULong64_t>> GetEntryRanges() final {
    if (given_) return {};
    given_ = true;
    return clusters_.ranges();  // the evtc source's ranges
  }
  bool SetEntry(unsigned int, ULong64_t) final { return true; }
  std::unique_ptr<ROOT::Detail::RDF::RColumnReaderBase> GetColumnReaders(
      unsigned int, std::string_view, const std::type_info&) final {
    return std::make_unique<EvtcBenchValueReader>(values_.data());
  }
  std::string GetLabel() final { return "memory"; }

 protected:
  std::string AsString() final { return "MET_pt in memory"; }

 private:
  Record_t GetColumnReadersImpl(std::string_view, const std::type_info&) final { return {}; }
  const std::vector<float>& values_;
  evtc::rdf_detail::Clusters clusters_;
  std::vector<std::string> names_{"MET_pt"};
  bool given_ = false;
};

double evtc_bench_met_memory(const std::string& path) {
  const std::vector<float>& met = evtc_bench_met_values(path);
  ROOT::RDataFrame df(std::make_unique<EvtcBenchMemorySource>(met, evtc::File(path).tree("Events").cluster_ends()));
  return evtc_bench_met(df);
}

double evtc_bench_dimuon(ROOT::RDataFrame df) {
  auto start = std::chrono::steady_clock::now();
  using RVecF = ROOT::RVec<float>;
  using RVecI = ROOT::RVec<std::int32_t>;
  auto h = df.Filter([](std::int32_t n) { return n == 2; }, {"nMuon"})
               .Filter([](const RVecI& q) { return q[0] != q[1]; }, {"Muon_charge"})
               .Define("m",
                       [](const RVecF& pt, const RVecF& eta, const RVecF& phi, const RVecF& m) {
                         return ROOT::VecOps::InvariantMass(pt, eta, phi, m);
                       },
                       {"Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass"})
               .Histo1D<float>({"m", "", 60, 0.0, 150.0}, "m");
  double entries = h->GetEntries();
  evtc_bench_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return entries;
}
"""


def frame(kind: str, path: str):
    if kind == "evtc":
        return ROOT.evtc.MakeDataFrame(path, "Events")
    return ROOT.RDataFrame("Events", path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evtc", required=True)
    parser.add_argument("--ttree", required=True)
    parser.add_argument("--rntuple", required=True)
    parser.add_argument("--library", default="target/release/libevtc_c.so")
    parser.add_argument("--include", default="crates/capi/include")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if ROOT.gSystem.Load(args.library) < 0:
        raise SystemExit(f"cannot load {args.library}")
    ROOT.gInterpreter.AddIncludePath(args.include)
    if not ROOT.gInterpreter.Declare(ANALYSES):
        raise SystemExit("the analyses do not compile")
    files = {"evtc": args.evtc, "TTree": args.ttree, "RNTuple": args.rntuple}
    cores = os.cpu_count() or 1
    cpu = next(
        (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
        "unknown CPU",
    )
    print(f"# RDataFrame over evtc, TTree and RNTuple\n\nMachine: {cpu}, {cores} cores; ROOT {ROOT.gROOT.GetVersion()}.\n")
    print(
        "| analysis | threads | evtc ms | TTree ms | RNTuple ms | in memory ms | TTree / evtc "
        "| RNTuple / evtc | TTree / in memory |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for threads in (1, cores):
        if threads > 1:
            ROOT.EnableImplicitMT(threads)
        for name, run in (("MET histogram", ROOT.evtc_bench_met), ("dimuon mass", ROOT.evtc_bench_dimuon)):
            runs = {k: (lambda run=run, k=k, path=path: run(frame(k, path))) for k, path in files.items()}
            if name == "MET histogram":
                runs["memory"] = lambda: ROOT.evtc_bench_met_memory(args.evtc)
            times: dict[str, list[float]] = {k: [] for k in runs}
            entries = {k: go() for k, go in runs.items()}  # warm-up: page cache, first-use costs
            if len(set(entries.values())) != 1:
                raise SystemExit(f"{name}: the histograms differ in entries: {entries}")
            for _ in range(args.repeats):
                for k, go in runs.items():  # in turn, so that drifts hit all alike
                    go()
                    times[k].append(ROOT.evtc_bench_ms)
            ms = {k: statistics.median(v) for k, v in times.items()}
            memory = (f"{ms['memory']:.1f}", f"{ms['TTree'] / ms['memory']:.2f}x") if "memory" in ms else ("-", "-")
            print(
                f"| {name} | {threads} | {ms['evtc']:.1f} | {ms['TTree']:.1f} | {ms['RNTuple']:.1f} | {memory[0]} "
                f"| {ms['TTree'] / ms['evtc']:.2f}x | {ms['RNTuple'] / ms['evtc']:.2f}x | {memory[1]} |"
            )


if __name__ == "__main__":
    main()
