// evtc_rdf_lib.hxx: the declarations of libevtc_rdf, the RDataFrame data source of evtc_rdf.hxx
// compiled ahead of time (crates/capi/rdf/build), so that a process does not wait for ROOT's
// interpreter to compile it. One call loads it, with its dictionary:
//
//   gSystem->Load("target/release/libevtc_rdf.so");
//   auto df = evtc::MakeDataFrame("nano.evtc", "Events");
//
// A process uses this library or the header-only evtc_rdf.hxx, not both. Documentation:
// docs/c-cpp.md.

#ifndef EVTC_RDF_LIB_HXX
#define EVTC_RDF_LIB_HXX

#include <ROOT/RDataFrame.hxx>

#include <string>
#include <vector>

namespace evtc {

/// An RDataFrame over tree `tree` of the evtc file `path`.
ROOT::RDataFrame MakeDataFrame(const std::string& path, const std::string& tree);

/// An RDataFrame over tree `tree` of the evtc files `paths` read as one (a TChain's).
ROOT::RDataFrame MakeDataFrame(const std::vector<std::string>& paths, const std::string& tree);

}  // namespace evtc

#endif  // EVTC_RDF_LIB_HXX
