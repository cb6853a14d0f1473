// ROOT's side of benches/peers.rs, compiled by ACLiC (`.L root_loops.C+O`) from root_side.py.
// Each function returns seconds of wall time for one run.
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "TBranch.h"
#include "TFile.h"
#include "TTree.h"
#include <ROOT/RDataFrame.hxx>
#include <ROOT/RField.hxx>
#include <ROOT/RNTupleImporter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>

static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every branch of every entry through TTree::GetEntry (the classic analysis loop).
double evtc_ttree_loop(const char* path) {
    auto start = std::chrono::steady_clock::now();
    std::unique_ptr<TFile> f(TFile::Open(path));
    auto* t = f->Get<TTree>("Events");
    Long64_t n = t->GetEntries();
    Long64_t bytes = 0;
    for (Long64_t i = 0; i < n; ++i) bytes += t->GetEntry(i);
    if (bytes <= 0) return -1;
    return seconds_since(start);
}

// Every field of every entry through RNTupleReader::LoadEntry.
double evtc_rntuple_loop(const char* path, const char* tree = "Events") {
    auto start = std::chrono::steady_clock::now();
    auto reader = ROOT::RNTupleReader::Open(tree, path);
    auto n = reader->GetNEntries();
    for (decltype(n) i = 0; i < n; ++i) reader->LoadEntry(i);
    return seconds_since(start);
}

// A NanoAOD analysis through RDataFrame, one thread, typed (no JIT): the MET histogram, the
// jets' scalar sum of pT and the muons' summed pT with |eta| < 2.4, booked together, one event
// loop. Works on a TTree or an RNTuple "Events" (RDataFrame tells them apart).
double evtc_rdf_nano(const char* path) {
    auto start = std::chrono::steady_clock::now();
    ROOT::RDataFrame df("Events", path);
    auto met = df.Histo1D<float>({"met", "", 40, 0.0, 200.0}, "MET_pt");
    auto ht = df.Define("ht", [](const ROOT::RVec<float>& pt) { return ROOT::VecOps::Sum(pt); },
                        {"Jet_pt"})
                  .Sum<float>("ht");
    auto mu = df.Define("mu",
                        [](const ROOT::RVec<float>& pt, const ROOT::RVec<float>& eta) {
                            return ROOT::VecOps::Sum(pt[abs(eta) < 2.4f]);
                        },
                        {"Muon_pt", "Muon_eta"})
                  .Sum<float>("mu");
    if (met->GetEntries() < 0 || *ht < 0 || *mu < 0) return -1;
    return seconds_since(start);
}

// `reads` single-entry reads of one counter-array branch at seeded random entries, each
// TBranch::GetEntry of the counter then the branch; returns microseconds per entry.
double evtc_tbranch_random(const char* path, const char* branch, const char* counter, int reads) {
    std::unique_ptr<TFile> f(TFile::Open(path));
    auto* t = f->Get<TTree>("Events");
    TBranch* b = t->GetBranch(branch);
    TBranch* c = t->GetBranch(counter);
    Long64_t n = t->GetEntries();
    std::mt19937_64 rng(7);
    std::vector<Long64_t> entries(reads);
    for (auto& e : entries) e = rng() % n;
    auto start = std::chrono::steady_clock::now();
    Long64_t bytes = 0;
    for (auto e : entries) {
        bytes += c->GetEntry(e);
        bytes += b->GetEntry(e);
    }
    if (bytes <= 0) return -1;
    return seconds_since(start) / reads * 1e6;
}

// Writes the floats of RAW (little-endian f32, `per_entry` per entry) as a TTree "Events" with one
// fixed-size array branch "x[per_entry]/F", compression `setting`, into OUT: the RAC study's trees
// (TFloat, TSmall) written by ROOT from the evtc generator's values.
void evtc_write_floats(const char* raw, const char* out, int setting, int per_entry) {
    FILE* in = fopen(raw, "rb");
    if (!in) return;
    TFile f(out, "RECREATE", "", setting);
    TTree t("Events", "RAC study");
    std::vector<float> x(per_entry);
    t.Branch("x", x.data(), ("x[" + std::to_string(per_entry) + "]/F").c_str());
    while (fread(x.data(), sizeof(float), per_entry, in) == (size_t)per_entry) t.Fill();
    fclose(in);
    t.Write();
    f.Close();
}

// Writes RAW_POSITIONS (little-endian int32) and RAW_COUNTS (little-endian uint32, as many) as a
// TTree "Events" with branches "position/I" and "count/i", compression `setting`, into OUT, with
// TTree::Branch's default buffer size and auto-flush: the sorted integers of `evtc generate --kind
// ints` written by ROOT (benches/peers/sizes.py). Returns the entries written, -1 on a read error.
long long evtc_write_ints(const char* raw_positions, const char* raw_counts, const char* out,
                          int setting) {
    FILE* p = fopen(raw_positions, "rb");
    FILE* c = fopen(raw_counts, "rb");
    if (!p || !c) {
        if (p) fclose(p);
        if (c) fclose(c);
        return -1;
    }
    TFile f(out, "RECREATE", "", setting);
    TTree t("Events", "sorted integers");
    Int_t position = 0;
    UInt_t count = 0;
    t.Branch("position", &position, "position/I");
    t.Branch("count", &count, "count/i");
    const size_t chunk = 1 << 16;
    std::vector<Int_t> ps(chunk);
    std::vector<UInt_t> cs(chunk);
    long long entries = 0;
    for (;;) {
        size_t np = fread(ps.data(), sizeof(Int_t), chunk, p);
        size_t nc = fread(cs.data(), sizeof(UInt_t), chunk, c);
        if (np != nc) {
            entries = -1;
            break;
        }
        for (size_t i = 0; i < np; ++i) {
            position = ps[i];
            count = cs[i];
            t.Fill();
        }
        entries += np;
        if (np < chunk) break;
    }
    fclose(p);
    fclose(c);
    t.Write();
    f.Close();
    return entries;
}

// Marks every float field below `field` (vector items included) as truncated to `bits` bits
// (RNTuple's Real32Trunc: sign, 8 exponent bits and bits - 9 mantissa bits, rounded towards 0);
// 0 bits leaves them as they are.
static void evtc_truncate(ROOT::RFieldBase& field, int bits) {
    auto* real = dynamic_cast<ROOT::RRealField<float>*>(&field);
    if (real && bits > 0) real->SetTruncated(bits);
    for (auto* sub : field.GetMutableSubfields()) evtc_truncate(*sub, bits);
}

// The tree `Events` of `in` as an RNTuple in `out` (compression `setting`, default 505: zstd:5)
// whose float fields are truncated; `bits` 0 imports losslessly.
void evtc_import_truncated(const char* in, const char* out, int bits, int setting = 505) {
    auto importer = ROOT::Experimental::RNTupleImporter::Create(in, "Events", out);
    ROOT::RNTupleWriteOptions options;
    options.SetCompression(setting);
    importer->SetWriteOptions(options);
    importer->SetIsQuiet(true);
    importer->SetFieldModifier([bits](ROOT::RFieldBase& field) { evtc_truncate(field, bits); });
    importer->Import();
}
