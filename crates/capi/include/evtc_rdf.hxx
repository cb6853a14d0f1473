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

/// One branch's values for the processing slots: each slot holds the cluster it is in.
class Column {
 public:
  virtual ~Column() = default;
  /// The address of the slot's pointer to the current value (what RDataFrame reads through).
  virtual void* address(unsigned slot) = 0;
  /// Points the slot's value at `entry`, reading its cluster first when the slot lacks it.
  virtual void set(unsigned slot, ULong64_t entry) = 0;
};

/// Reads entries [start, stop) of a branch: values, and entry offsets for arrays.
template <typename T>
struct Cluster {
  std::unique_ptr<T[]> values;  // not std::vector: std::vector<bool> has no data()
  std::size_t capacity = 0;
  std::vector<std::uint64_t> offsets;
  ULong64_t start = 1, stop = 0;  // empty

  bool holds(ULong64_t entry) const { return entry >= start && entry < stop; }

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
};

/// A scalar branch: a column of T.
template <typename T>
class ScalarColumn final : public Column {
 public:
  ScalarColumn(const EvtcFile* file, std::size_t tree, std::size_t branch, const Clusters& clusters,
               unsigned slots)
      : file_(file), tree_(tree), branch_(branch), clusters_(clusters), slots_(slots) {}
  void* address(unsigned slot) override { return &slots_.at(slot).current; }
  void set(unsigned slot, ULong64_t entry) override {
    Slot& s = slots_[slot];
    if (!s.cluster.holds(entry)) {
      auto [first, last] = clusters_.of(entry);
      s.cluster.read(file_, tree_, branch_, false, first, last);
    }
    s.current = s.cluster.values.get() + (entry - s.cluster.start);
  }

 private:
  struct alignas(64) Slot {  // one cache line or more each: slots run on different threads
    Cluster<T> cluster;
    T* current = nullptr;
  };
  const EvtcFile* file_;
  std::size_t tree_, branch_;
  const Clusters& clusters_;
  std::vector<Slot> slots_;
};

/// A fixed-size or variable-length branch: a column of ROOT::RVec<T> viewing the slot's
/// cluster (no copy).
template <typename T>
class ArrayColumn final : public Column {
 public:
  ArrayColumn(const EvtcFile* file, std::size_t tree, std::size_t branch, const Clusters& clusters,
              unsigned slots, std::uint32_t fixed_len)
      : file_(file), tree_(tree), branch_(branch), clusters_(clusters), fixed_len_(fixed_len),
        slots_(slots) {
    for (Slot& s : slots_) s.current = &s.view;
  }
  void* address(unsigned slot) override { return &slots_.at(slot).current; }
  void set(unsigned slot, ULong64_t entry) override {
    Slot& s = slots_[slot];
    if (!s.cluster.holds(entry)) {
      auto [first, last] = clusters_.of(entry);
      s.cluster.read(file_, tree_, branch_, fixed_len_ == 0, first, last);
    }
    std::size_t i = static_cast<std::size_t>(entry - s.cluster.start);
    std::size_t a = fixed_len_ ? i * fixed_len_ : static_cast<std::size_t>(s.cluster.offsets[i]);
    std::size_t z = fixed_len_ ? a + fixed_len_ : static_cast<std::size_t>(s.cluster.offsets[i + 1]);
    // A view of the values (RVec's adopting constructor), made in place of the last one.
    s.view.~RVec();
    new (&s.view) ROOT::RVec<T>(s.cluster.values.get() + a, z - a);
  }

 private:
  struct alignas(64) Slot {  // one cache line or more each: slots run on different threads
    Cluster<T> cluster;
    ROOT::RVec<T> view;
    ROOT::RVec<T>* current = nullptr;
  };
  const EvtcFile* file_;
  std::size_t tree_, branch_;
  const Clusters& clusters_;
  std::uint32_t fixed_len_;
  std::vector<Slot> slots_;
};

/// A UTF-8 string branch: a column of std::string.
class StringColumn final : public Column {
 public:
  StringColumn(const EvtcFile* file, std::size_t tree, std::size_t branch, const Clusters& clusters,
               unsigned slots)
      : file_(file), tree_(tree), branch_(branch), clusters_(clusters), slots_(slots) {
    for (Slot& s : slots_) s.current = &s.text;
  }
  void* address(unsigned slot) override { return &slots_.at(slot).current; }
  void set(unsigned slot, ULong64_t entry) override {
    Slot& s = slots_[slot];
    if (!s.cluster.holds(entry)) {
      auto [first, last] = clusters_.of(entry);
      s.cluster.read(file_, tree_, branch_, true, first, last);
    }
    std::size_t i = static_cast<std::size_t>(entry - s.cluster.start);
    const char* p = reinterpret_cast<const char*>(s.cluster.values.get());
    s.text.assign(p + s.cluster.offsets[i], p + s.cluster.offsets[i + 1]);
  }

 private:
  struct alignas(64) Slot {  // one cache line or more each: slots run on different threads
    Cluster<std::uint8_t> cluster;
    std::string text;
    std::string* current = nullptr;
  };
  const EvtcFile* file_;
  std::size_t tree_, branch_;
  const Clusters& clusters_;
  std::vector<Slot> slots_;
};

}  // namespace rdf_detail

/// An RDataFrame data source reading tree `tree` of the evtc file `path`.
class RDataSource final : public ROOT::RDF::RDataSource {
 public:
  RDataSource(const std::string& path, const std::string& tree)
      : file_(path, 1), tree_(file_.tree(tree)) {
    clusters_.ends = tree_.cluster_ends();
    for (std::size_t b = 0; b < tree_.branch_count(); ++b) {
      BranchInfo info = tree_.branch(b);
      names_.push_back(info.name);
      infos_.push_back(info);
    }
  }

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

  void SetNSlots(unsigned int slots) final {
    ROOT::RDF::RDataSource::SetNSlots(slots);
    slots_ = slots;
  }

  void Initialize() final { ranges_given_ = false; }

  /// The tree's clusters, all at once (then none: the event loop is done).
  std::vector<std::pair<ULong64_t, ULong64_t>> GetEntryRanges() final {
    std::vector<std::pair<ULong64_t, ULong64_t>> ranges;
    if (ranges_given_) return ranges;
    ranges_given_ = true;
    ULong64_t start = 0;
    for (std::uint64_t end : clusters_.ends) {
      ranges.emplace_back(start, end);
      start = end;
    }
    return ranges;
  }

  bool SetEntry(unsigned int slot, ULong64_t entry) final {
    rdf_detail::Column* const* columns = active_.data();
    for (std::size_t i = 0, n = active_.size(); i < n; ++i) columns[i]->set(slot, entry);
    return true;
  }

  std::string GetLabel() final { return "evtc"; }

 protected:
  std::string AsString() final { return "evtc data source"; }

 private:
  Record_t GetColumnReadersImpl(std::string_view name, const std::type_info& type) final {
    std::size_t b = index(name);
    const BranchInfo& info = infos_[b];
    if (columns_.size() < infos_.size()) columns_.resize(infos_.size());
    if (!columns_[b]) {
      columns_[b] = make(b, info, type);
      active_.push_back(columns_[b].get());
    }
    Record_t addresses;
    for (unsigned s = 0; s < slots_; ++s) addresses.push_back(columns_[b]->address(s));
    return addresses;
  }

  std::size_t index(std::string_view name) const {
    auto it = std::find(names_.begin(), names_.end(), name);
    if (it == names_.end()) throw std::runtime_error("evtc: the tree has no branch " + std::string(name));
    return static_cast<std::size_t>(it - names_.begin());
  }

  template <typename T>
  std::unique_ptr<rdf_detail::Column> typed(std::size_t b, const BranchInfo& info,
                                            const std::type_info& type) {
    const EvtcFile* f = file_.get();
    std::size_t t = tree_index();
    auto wrong = [&](const char* expected) {
      return std::runtime_error("evtc: column " + info.name + " is " + expected + ", read as " +
                                type.name());
    };
    if (info.kind == EVTC_KIND_SCALAR) {
      if (type != typeid(T)) throw wrong(rdf_detail::scalar_name(info.scalar).c_str());
      return std::make_unique<rdf_detail::ScalarColumn<T>>(f, t, b, clusters_, slots_);
    }
    if (info.kind == EVTC_KIND_UTF8) {
      if (type != typeid(std::string)) throw wrong("std::string");
      return std::make_unique<rdf_detail::StringColumn>(f, t, b, clusters_, slots_);
    }
    if (type != typeid(ROOT::RVec<T>)) throw wrong(GetTypeName(info.name).c_str());
    std::uint32_t len = info.kind == EVTC_KIND_FIXED ? info.fixed_len : 0;
    return std::make_unique<rdf_detail::ArrayColumn<T>>(f, t, b, clusters_, slots_, len);
  }

  std::unique_ptr<rdf_detail::Column> make(std::size_t b, const BranchInfo& info,
                                           const std::type_info& type) {
    switch (info.scalar) {
      case EVTC_SCALAR_BOOL: return typed<bool>(b, info, type);
      case EVTC_SCALAR_I8: return typed<std::int8_t>(b, info, type);
      case EVTC_SCALAR_U8: return typed<std::uint8_t>(b, info, type);
      case EVTC_SCALAR_I16: return typed<std::int16_t>(b, info, type);
      case EVTC_SCALAR_U16: return typed<std::uint16_t>(b, info, type);
      case EVTC_SCALAR_I32: return typed<std::int32_t>(b, info, type);
      case EVTC_SCALAR_U32: return typed<std::uint32_t>(b, info, type);
      case EVTC_SCALAR_I64: return typed<std::int64_t>(b, info, type);
      case EVTC_SCALAR_U64: return typed<std::uint64_t>(b, info, type);
      case EVTC_SCALAR_F32: return typed<float>(b, info, type);
      case EVTC_SCALAR_F64: return typed<double>(b, info, type);
    }
    throw std::runtime_error("evtc: column " + info.name + " has an unknown type");
  }

  std::size_t tree_index() const {
    std::size_t t = 0;
    detail::check(evtc_tree_find(file_.get(), tree_.name().c_str(), &t), file_.get());
    return t;
  }

  File file_;
  Tree tree_;
  rdf_detail::Clusters clusters_;
  std::vector<std::string> names_;
  std::vector<BranchInfo> infos_;
  std::vector<std::unique_ptr<rdf_detail::Column>> columns_;
  std::vector<rdf_detail::Column*> active_;  // the columns the graph reads
  unsigned slots_ = 1;
  bool ranges_given_ = false;
};

/// An RDataFrame over tree `tree` of the evtc file `path`.
inline ROOT::RDataFrame MakeDataFrame(const std::string& path, const std::string& tree) {
  return ROOT::RDataFrame(std::make_unique<RDataSource>(path, tree));
}

}  // namespace evtc

#endif  // EVTC_RDF_HXX
