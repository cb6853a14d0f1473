// evtc_rdf.hxx: an RDataFrame data source over an evtc tree (ROOT 6.30 or later), header only,
// over evtc.hpp. Load the library first, then include it:
//
//   gSystem->Load("libevtc_c.so");
//   gInterpreter->AddIncludePath("target/release/include");
//   #include "evtc_rdf.hxx"
//   auto df = evtc::MakeDataFrame("nano.evtc", "Events");
//   auto h = df.Filter("nMuon == 2").Histo1D("MET_pt");
//
// Scalar branches are columns of their type, fixed-size and variable-length ones of
// ROOT::RVec<T>, strings of std::string. Only the columns the graph uses are read, a cluster
// at a time per processing slot; with ROOT::EnableImplicitMT the tree's clusters are the
// ranges ROOT hands to its slots. Documentation: docs/c-cpp.md.

#ifndef EVTC_RDF_HXX
#define EVTC_RDF_HXX

#ifdef __CLING__
// The interpreter compiles what it is given without optimization unless asked; the event
// loop's per-entry code here is worth it (docs/benchmarks.md: RDataFrame over evtc).
#pragma cling optimize(2)
#endif

#include <ROOT/RDataFrame.hxx>
#include <ROOT/RDataSource.hxx>
#include <ROOT/RVec.hxx>

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "evtc.hpp"

namespace evtc {
namespace rdf_detail {

/// The C++ type name and typeid of a value type, as columns name them.
inline std::string scalar_name(EvtcScalar s) {
  switch (s) {
    case EVTC_SCALAR_BOOL: return "bool";
    case EVTC_SCALAR_I8: return "std::int8_t";
    case EVTC_SCALAR_U8: return "std::uint8_t";
    case EVTC_SCALAR_I16: return "std::int16_t";
    case EVTC_SCALAR_U16: return "std::uint16_t";
    case EVTC_SCALAR_I32: return "std::int32_t";
    case EVTC_SCALAR_U32: return "std::uint32_t";
    case EVTC_SCALAR_I64: return "std::int64_t";
    case EVTC_SCALAR_U64: return "std::uint64_t";
    case EVTC_SCALAR_F32: return "float";
    case EVTC_SCALAR_F64: return "double";
  }
  return "void";
}

struct Clusters;

/// Where a column's values are: the file, the tree and branch numbers, the tree's clusters.
struct Place {
  const EvtcFile* file;
  std::size_t tree, branch;
  const Clusters* clusters;
};

/// Reads entries [start, stop) of a branch: values, and entry offsets for arrays.
template <typename T>
struct Cluster {
  std::unique_ptr<T[]> values;  // not std::vector: std::vector<bool> has no data()
  std::size_t capacity = 0;
  std::vector<std::uint64_t> offsets;
  ULong64_t start = 1, stop = 0;  // empty

  bool holds(ULong64_t entry) const { return entry >= start && entry < stop; }

  /// The position of `entry` in the cluster, after reading the cluster of `place` that holds
  /// it when this one does not.
  std::size_t at(const Place& place, bool variable, ULong64_t entry);

  void read(const EvtcFile* file, std::size_t tree, std::size_t branch, bool variable,
            ULong64_t first, ULong64_t last) {
    std::uint64_t n = 0;
    detail::check(evtc_read_size(file, tree, branch, first, last, &n), file);
    if (n > capacity) {
      values.reset(new T[n]);
      capacity = n;
    }
    offsets.resize(variable ? last - first + 1 : 0);
    std::uint64_t written = 0;
    detail::check(evtc_read(file, tree, branch, detail::scalar_of<T>(), first, last, values.get(),
                            capacity, variable ? offsets.data() : nullptr, &written),
                  file);
    start = first;
    stop = last;
  }
};

/// The clusters of a tree, to find the one holding an entry.
struct Clusters {
  std::vector<std::uint64_t> ends;
  std::pair<ULong64_t, ULong64_t> of(ULong64_t entry) const {
    auto it = std::upper_bound(ends.begin(), ends.end(), entry);
    if (it == ends.end()) throw std::out_of_range("entry " + std::to_string(entry) + " past the tree");
    ULong64_t begin = it == ends.begin() ? 0 : *(it - 1);
    return {begin, *it};
  }

  /// Every cluster as an entry range, in order: what GetEntryRanges hands to the slots.
  std::vector<std::pair<ULong64_t, ULong64_t>> ranges() const {
    std::vector<std::pair<ULong64_t, ULong64_t>> out;
    ULong64_t start = 0;
    for (std::uint64_t end : ends) {
      out.emplace_back(start, end);
      start = end;
    }
    return out;
  }
};

template <typename T>
std::size_t Cluster<T>::at(const Place& place, bool variable, ULong64_t entry) {
  if (!holds(entry)) {
    auto [first, last] = place.clusters->of(entry);
    read(place.file, place.tree, place.branch, variable, first, last);
  }
  return static_cast<std::size_t>(entry - start);
}

/// One processing slot's reader of one branch, made for each slot by GetColumnReaders: it
/// reads the cluster holding the entry RDataFrame asks for, when the slot lacks it, and only
/// when a value is asked for (a filter that fails leaves the columns after it unread). Each is
/// an allocation of its own, a cache line or more: slots run on different threads. The
/// interpreter's null-pointer checks are off, as in ROOT's own readers.
template <typename T>
class alignas(64) R__CLING_PTRCHECK(off) ScalarReader final
    : public ROOT::Detail::RDF::RColumnReaderBase {
 public:
  explicit ScalarReader(Place place) : place_(place) {}

 private:
  void* GetImpl(Long64_t entry) final {
    std::size_t i = cluster_.at(place_, false, static_cast<ULong64_t>(entry));  // may read
    return cluster_.values.get() + i;
  }

  Place place_;
  Cluster<T> cluster_;
};

/// A fixed-size or variable-length branch: a ROOT::RVec<T> viewing the slot's cluster (no copy).
template <typename T>
class alignas(64) R__CLING_PTRCHECK(off) ArrayReader final
    : public ROOT::Detail::RDF::RColumnReaderBase {
 public:
  ArrayReader(Place place, std::uint32_t fixed_len) : place_(place), fixed_len_(fixed_len) {}

 private:
  void* GetImpl(Long64_t entry) final {
    std::size_t i = cluster_.at(place_, fixed_len_ == 0, static_cast<ULong64_t>(entry));
    std::size_t a = fixed_len_ ? i * fixed_len_ : static_cast<std::size_t>(cluster_.offsets[i]);
    std::size_t z = fixed_len_ ? a + fixed_len_ : static_cast<std::size_t>(cluster_.offsets[i + 1]);
    // A view of the values (RVec's adopting constructor), made in place of the last one.
    view_.~RVec();
    new (&view_) ROOT::RVec<T>(cluster_.values.get() + a, z - a);
    return &view_;
  }

  Place place_;
  std::uint32_t fixed_len_;
  Cluster<T> cluster_;
  ROOT::RVec<T> view_;
};

/// A UTF-8 string branch: a std::string.
class alignas(64) R__CLING_PTRCHECK(off) StringReader final
    : public ROOT::Detail::RDF::RColumnReaderBase {
 public:
  explicit StringReader(Place place) : place_(place) {}

 private:
  void* GetImpl(Long64_t entry) final {
    std::size_t i = cluster_.at(place_, true, static_cast<ULong64_t>(entry));
    const char* p = reinterpret_cast<const char*>(cluster_.values.get());
    text_.assign(p + cluster_.offsets[i], p + cluster_.offsets[i + 1]);
    return &text_;
  }

  Place place_;
  Cluster<std::uint8_t> cluster_;
  std::string text_;
};

}  // namespace rdf_detail

/// An RDataFrame data source reading tree `tree` of the evtc file `path`.
class RDataSource final : public ROOT::RDF::RDataSource {
 public:
  RDataSource(const std::string& path, const std::string& tree) : RDataSource(File(path, 1), tree) {}

  /// A data source over tree `tree` of the files `paths` read as one (a TChain's).
  RDataSource(const std::vector<std::string>& paths, const std::string& tree)
      : RDataSource(File(paths, 1), tree) {}

  const std::vector<std::string>& GetColumnNames() const final { return names_; }

  bool HasColumn(std::string_view name) const final {
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }

  std::string GetTypeName(std::string_view name) const final {
    const BranchInfo& info = infos_.at(index(name));
    std::string t = rdf_detail::scalar_name(info.scalar);
    switch (info.kind) {
      case EVTC_KIND_SCALAR: return t;
      case EVTC_KIND_UTF8: return "std::string";
      default: return "ROOT::RVec<" + t + ">";
    }
  }

  void Initialize() final { ranges_given_ = false; }

  /// The tree's clusters, all at once (then none: the event loop is done).
  std::vector<std::pair<ULong64_t, ULong64_t>> GetEntryRanges() final {
    if (ranges_given_) return {};
    ranges_given_ = true;
    return clusters_.ranges();
  }

  /// Nothing to do: each column's reader finds its entry when RDataFrame asks it for a value.
  bool SetEntry(unsigned int, ULong64_t) final { return true; }

  /// A reader of column `name` for processing slot `slot`, reading values as `type`.
  std::unique_ptr<ROOT::Detail::RDF::RColumnReaderBase> GetColumnReaders(
      unsigned int, std::string_view name, const std::type_info& type) final {
    std::size_t b = index(name);
    return make(b, infos_[b], type);
  }

  std::string GetLabel() final { return "evtc"; }

 protected:
  std::string AsString() final { return "evtc data source"; }

 private:
  /// Empty: RDataFrame then asks GetColumnReaders for a reader per slot.
  Record_t GetColumnReadersImpl(std::string_view, const std::type_info&) final { return {}; }

  std::size_t index(std::string_view name) const {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) throw std::runtime_error("evtc: the tree has no branch " + std::string(name));
    return static_cast<std::size_t>(it - names_.begin());
  }

  template <typename T>
  std::unique_ptr<ROOT::Detail::RDF::RColumnReaderBase> typed(const rdf_detail::Place& place,
                                                              const BranchInfo& info,
                                                              const std::type_info& type) {
    auto wrong = [&](const char* expected) {
      return std::runtime_error("evtc: column " + info.name + " is " + expected + ", read as " +
                                type.name());
    };
    if (info.kind == EVTC_KIND_SCALAR) {
      if (type != typeid(T)) throw wrong(rdf_detail::scalar_name(info.scalar).c_str());
      return std::make_unique<rdf_detail::ScalarReader<T>>(place);
    }
    if (info.kind == EVTC_KIND_UTF8) {
      if (type != typeid(std::string)) throw wrong("std::string");
      return std::make_unique<rdf_detail::StringReader>(place);
    }
    if (type != typeid(ROOT::RVec<T>)) throw wrong(GetTypeName(info.name).c_str());
    std::uint32_t len = info.kind == EVTC_KIND_FIXED ? info.fixed_len : 0;
    return std::make_unique<rdf_detail::ArrayReader<T>>(place, len);
  }

  std::unique_ptr<ROOT::Detail::RDF::RColumnReaderBase> make(std::size_t b, const BranchInfo& info,
                                                             const std::type_info& type) {
    const rdf_detail::Place place{file_.get(), tree_number_, b, &clusters_};
    switch (info.scalar) {
      case EVTC_SCALAR_BOOL: return typed<bool>(place, info, type);
      case EVTC_SCALAR_I8: return typed<std::int8_t>(place, info, type);
      case EVTC_SCALAR_U8: return typed<std::uint8_t>(place, info, type);
      case EVTC_SCALAR_I16: return typed<std::int16_t>(place, info, type);
      case EVTC_SCALAR_U16: return typed<std::uint16_t>(place, info, type);
      case EVTC_SCALAR_I32: return typed<std::int32_t>(place, info, type);
      case EVTC_SCALAR_U32: return typed<std::uint32_t>(place, info, type);
      case EVTC_SCALAR_I64: return typed<std::int64_t>(place, info, type);
      case EVTC_SCALAR_U64: return typed<std::uint64_t>(place, info, type);
      case EVTC_SCALAR_F32: return typed<float>(place, info, type);
      case EVTC_SCALAR_F64: return typed<double>(place, info, type);
    }
    throw std::runtime_error("evtc: column " + info.name + " has an unknown type");
  }

  RDataSource(File file, const std::string& tree) : file_(std::move(file)), tree_(file_.tree(tree)) {
    detail::check(evtc_tree_find(file_.get(), tree_.name().c_str(), &tree_number_), file_.get());
    clusters_.ends = tree_.cluster_ends();
    for (std::size_t b = 0; b < tree_.branch_count(); ++b) {
      BranchInfo info = tree_.branch(b);
      names_.push_back(info.name);
      infos_.push_back(info);
    }
  }

  File file_;
  Tree tree_;
  std::size_t tree_number_ = 0;
  rdf_detail::Clusters clusters_;
  std::vector<std::string> names_;
  std::vector<BranchInfo> infos_;
  bool ranges_given_ = false;
};

#ifdef EVTC_RDF_LIBRARY
// Compiled into libevtc_rdf (rdf/evtc_rdf.cxx): declared here, defined there.

/// An RDataFrame over tree `tree` of the evtc file `path`.
ROOT::RDataFrame MakeDataFrame(const std::string& path, const std::string& tree);

/// An RDataFrame over tree `tree` of the evtc files `paths` read as one (a TChain's).
ROOT::RDataFrame MakeDataFrame(const std::vector<std::string>& paths, const std::string& tree);
#else
/// An RDataFrame over tree `tree` of the evtc file `path`.
inline ROOT::RDataFrame MakeDataFrame(const std::string& path, const std::string& tree) {
  return ROOT::RDataFrame(std::make_unique<RDataSource>(path, tree));
}

/// An RDataFrame over tree `tree` of the evtc files `paths` read as one (a TChain's).
inline ROOT::RDataFrame MakeDataFrame(const std::vector<std::string>& paths,
                                      const std::string& tree) {
  return ROOT::RDataFrame(std::make_unique<RDataSource>(paths, tree));
}

#ifdef __CLING__
namespace rdf_detail {
/// Never called: it makes the interpreter compile the data source and every reader type here,
/// under the optimize pragma above. An inline function is compiled where it is first used, and
/// a first use from a call of its own (from Python, or ROOT's prompt) is compiled without the
/// pragma: the MET histogram of docs/benchmarks.md then took 1.2x as long.
ROOT::RDataFrame compile_with_header(const std::string& path, const std::string& tree) {
  return MakeDataFrame(path, tree);
}
}  // namespace rdf_detail
#endif
#endif  // EVTC_RDF_LIBRARY

}  // namespace evtc

#endif  // EVTC_RDF_HXX
