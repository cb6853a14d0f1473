// libevtc_rdf: evtc_rdf.hxx's data source compiled with optimization, its MakeDataFrame the
// library's entry points (declared in evtc_rdf_lib.hxx). Built by crates/capi/rdf/build.

#define EVTC_RDF_LIBRARY 1
#include "evtc_rdf.hxx"
#include "evtc_rdf_lib.hxx"

namespace evtc {

ROOT::RDataFrame MakeDataFrame(const std::string& path, const std::string& tree) {
  return ROOT::RDataFrame(std::make_unique<RDataSource>(path, tree));
}

ROOT::RDataFrame MakeDataFrame(const std::vector<std::string>& paths, const std::string& tree) {
  return ROOT::RDataFrame(std::make_unique<RDataSource>(paths, tree));
}

}  // namespace evtc
