// evtc.hpp: a header-only C++17 wrapper over the C API (evtc.h): RAII handles, exceptions,
// typed reads into std::vector. Link with -levtc_c. Documentation: docs/c-cpp.md.
//
//   evtc::File file("nano.evtc");
//   evtc::Tree events = file.tree("Events");
//   std::vector<float> met = events.read<float>("MET_pt");
//   evtc::Jagged<float> pt = events.read_jagged<float>("Muon_pt", 0, 1000);
//   for (std::size_t e = 0; e < pt.size(); ++e)
//     for (float v : pt.entry(e)) ...
//
// Thread safety: as the C API's: a File may be read from several threads at once; a Writer
// is used by one thread at a time.

#ifndef EVTC_HPP
#define EVTC_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "evtc.h"

namespace evtc {

/// An error of the library: its status and message.
class Error : public std::runtime_error {
 public:
  Error(EvtcStatus status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  /// The C API's status (EVTC_STATUS_ERROR_...).
  EvtcStatus status() const noexcept { return status_; }

 private:
  EvtcStatus status_;
};

namespace detail {

// The message is fetched after the call that failed (arguments are evaluated in no set order,
// so it cannot be an argument next to the call).
inline void check(EvtcStatus status, const EvtcFile* file) {
  if (status != EVTC_STATUS_OK) throw Error(status, evtc_file_error(file));
}
inline void check(EvtcStatus status, const EvtcWriter* writer) {
  if (status != EVTC_STATUS_OK) throw Error(status, evtc_writer_error(writer));
}
inline void check(EvtcStatus status) {
  if (status != EVTC_STATUS_OK) throw Error(status, evtc_last_error());
}

/// The EvtcScalar of a C++ value type.
template <typename T>
constexpr EvtcScalar scalar_of() {
  if constexpr (std::is_same_v<T, bool>) return EVTC_SCALAR_BOOL;
  else if constexpr (std::is_same_v<T, std::int8_t>) return EVTC_SCALAR_I8;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return EVTC_SCALAR_U8;
  else if constexpr (std::is_same_v<T, std::int16_t>) return EVTC_SCALAR_I16;
  else if constexpr (std::is_same_v<T, std::uint16_t>) return EVTC_SCALAR_U16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return EVTC_SCALAR_I32;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return EVTC_SCALAR_U32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return EVTC_SCALAR_I64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return EVTC_SCALAR_U64;
  else if constexpr (std::is_same_v<T, float>) return EVTC_SCALAR_F32;
  else if constexpr (std::is_same_v<T, double>) return EVTC_SCALAR_F64;
  else static_assert(sizeof(T) == 0, "evtc reads bool, (u)int8-64_t, float and double");
}

struct FileDeleter {
  void operator()(EvtcFile* f) const noexcept { evtc_close(f); }
};

}  // namespace detail

/// The values of a variable-length branch over some entries: entry e holds
/// values[offsets[e] .. offsets[e + 1]].
template <typename T>
struct Jagged {
  std::vector<T> values;
  std::vector<std::uint64_t> offsets;  // size() + 1 of them, the first 0

  std::size_t size() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }

  /// Entry e's values as a pointer and a count.
  std::pair<const T*, std::size_t> entry_span(std::size_t e) const {
    return {values.data() + offsets.at(e), static_cast<std::size_t>(offsets.at(e + 1) - offsets.at(e))};
  }

  /// Entry e's values, copied.
  std::vector<T> entry(std::size_t e) const {
    auto [p, n] = entry_span(e);
    return std::vector<T>(p, p + n);
  }
};

/// What a branch is (the C API's EvtcBranchInfo with owned strings).
struct BranchInfo {
  std::string name;
  EvtcKind kind;
  EvtcScalar scalar;
  std::uint32_t fixed_len;
  std::string counter;  // empty: none
  bool rac;
  std::uint64_t raw_bytes;
  std::uint64_t stored_bytes;
};

class File;

/// A tree of an open File (valid while the File lives).
class Tree {
 public:
  const std::string& name() const noexcept { return name_; }
  std::uint64_t entries() const noexcept { return evtc_tree_entries(file_, index_); }
  std::size_t branch_count() const noexcept { return evtc_branch_count(file_, index_); }

  /// The entries at which clusters end (the ranges to read in parallel).
  std::vector<std::uint64_t> cluster_ends() const {
    std::size_t n = 0;
    const std::uint64_t* ends = evtc_cluster_ends(file_, index_, &n);
    return std::vector<std::uint64_t>(ends, ends + n);
  }

  /// The position of branch `name`.
  std::size_t branch_index(const std::string& name) const {
    std::size_t b = 0;
    detail::check(evtc_branch_find(file_, index_, name.c_str(), &b), file_);
    return b;
  }

  BranchInfo branch(std::size_t b) const {
    EvtcBranchInfo i{};
    detail::check(evtc_branch_info(file_, index_, b, &i), file_);
    return BranchInfo{i.name, i.kind, i.scalar, i.fixed_len, i.counter ? i.counter : "", i.rac,
                      i.raw_bytes, i.stored_bytes};
  }
  BranchInfo branch(const std::string& name) const { return branch(branch_index(name)); }

  /// The values of a scalar or fixed-size branch over entries [start, stop) (all by default).
  template <typename T>
  std::vector<T> read(const std::string& branch, std::uint64_t start = 0,
                      std::uint64_t stop = UINT64_MAX) const {
    std::size_t b = branch_index(branch);
    stop = stop == UINT64_MAX ? entries() : stop;
    std::uint64_t n = 0;
    detail::check(evtc_read_size(file_, index_, b, start, stop, &n), file_);
    std::vector<T> out(static_cast<std::size_t>(n));
    std::uint64_t written = 0;
    detail::check(evtc_read(file_, index_, b, detail::scalar_of<T>(), start, stop, out.data(), n,
                            nullptr, &written),
                  file_);
    return out;
  }

  /// The values and offsets of a variable-length branch over entries [start, stop).
  template <typename T>
  Jagged<T> read_jagged(const std::string& branch, std::uint64_t start = 0,
                        std::uint64_t stop = UINT64_MAX) const {
    std::size_t b = branch_index(branch);
    stop = stop == UINT64_MAX ? entries() : stop;
    std::uint64_t n = 0;
    detail::check(evtc_read_size(file_, index_, b, start, stop, &n), file_);
    Jagged<T> out;
    out.values.resize(static_cast<std::size_t>(n));
    out.offsets.resize(static_cast<std::size_t>(stop - start + 1));
    std::uint64_t written = 0;
    detail::check(evtc_read(file_, index_, b, detail::scalar_of<T>(), start, stop,
                            out.values.data(), n, out.offsets.data(), &written),
                  file_);
    return out;
  }

  /// One entry's values (with random-access baskets: one unit decoded).
  template <typename T>
  std::vector<T> entry(const std::string& branch, std::uint64_t entry) const {
    std::size_t b = branch_index(branch);
    std::vector<T> out(16);
    for (;;) {
      std::uint64_t written = 0;
      EvtcStatus s = evtc_read_entry(file_, index_, b, detail::scalar_of<T>(), entry, out.data(),
                                     out.size(), &written);
      if (s == EVTC_STATUS_ERROR_BUFFER_TOO_SMALL) {
        out.resize(static_cast<std::size_t>(written));
        continue;
      }
      detail::check(s, file_);
      out.resize(static_cast<std::size_t>(written));
      return out;
    }
  }

 private:
  friend class File;
  Tree(const EvtcFile* file, std::size_t index, std::string name)
      : file_(file), index_(index), name_(std::move(name)) {}
  const EvtcFile* file_;
  std::size_t index_;
  std::string name_;
};

/// An open evtc file.
class File {
 public:
  /// Opens `path`; `threads` decode a branch's baskets at once.
  explicit File(const std::string& path, std::uint32_t threads = 1) {
    EvtcFile* f = nullptr;
    detail::check(evtc_open(path.c_str(), threads, &f));
    file_.reset(f);
  }

  /// Opens `paths` as one, as ROOT's TChain (evtc_open_chain): entries numbered across them.
  explicit File(const std::vector<std::string>& paths, std::uint32_t threads = 1) {
    std::vector<const char*> cs;
    for (const auto& p : paths) cs.push_back(p.c_str());
    EvtcFile* f = nullptr;
    detail::check(evtc_open_chain(cs.data(), cs.size(), threads, &f));
    file_.reset(f);
  }

  /// The file's trees' names.
  std::vector<std::string> tree_names() const {
    std::vector<std::string> out;
    for (std::size_t t = 0; t < evtc_tree_count(file_.get()); ++t)
      out.emplace_back(evtc_tree_name(file_.get(), t));
    return out;
  }

  Tree tree(const std::string& name) const {
    std::size_t t = 0;
    detail::check(evtc_tree_find(file_.get(), name.c_str(), &t), file_.get());
    return Tree(file_.get(), t, name);
  }

  /// The C handle, for the C API's functions.
  const EvtcFile* get() const noexcept { return file_.get(); }

 private:
  std::unique_ptr<EvtcFile, detail::FileDeleter> file_;
};

/// A branch to write: Writer::tree's specs.
struct BranchSpec {
  std::string name;
  EvtcKind kind;
  EvtcScalar scalar;
  std::uint32_t fixed_len = 0;
  std::string counter = {};  // empty: none

  template <typename T>
  static BranchSpec scalar_of(std::string name) {
    return {std::move(name), EVTC_KIND_SCALAR, detail::scalar_of<T>()};
  }
  template <typename T>
  static BranchSpec jagged_of(std::string name, std::string counter = {}) {
    return {std::move(name), EVTC_KIND_JAGGED, detail::scalar_of<T>(), 0, std::move(counter)};
  }
};

/// A file being written; it appears under its name when close() succeeds (the destructor of
/// a writer not closed abandons it: nothing appears).
class Writer {
 public:
  /// Starts `path` with `settings`, `name=value` strings as evtc_writer_create takes them
  /// (`{"codec=zstd:3", "threads=2", "branch_codec=Muon_*=lz4"}`; none: the defaults).
  explicit Writer(const std::string& path, const std::vector<std::string>& settings = {}) {
    std::vector<const char*> pairs;
    for (const auto& s : settings) pairs.push_back(s.c_str());
    pairs.push_back(nullptr);
    detail::check(evtc_writer_create(path.c_str(), pairs.data(), &writer_));
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { evtc_writer_abort(writer_); }

  /// Finishes the tree being written, if any, and starts `name`.
  void tree(const std::string& name, const std::vector<BranchSpec>& branches) {
    std::vector<EvtcBranchSpec> specs;
    for (const auto& b : branches)
      specs.push_back(EvtcBranchSpec{b.name.c_str(), static_cast<int32_t>(b.kind),
                                     static_cast<int32_t>(b.scalar), b.fixed_len,
                                     b.counter.empty() ? nullptr : b.counter.c_str()});
    detail::check(evtc_writer_tree(live(), name.c_str(), specs.data(), specs.size()),
                  writer_);
  }

  /// A batch of a scalar or fixed-size branch's values (the branch's position in the specs).
  template <typename T>
  void fill(std::size_t branch, const std::vector<T>& values) {
    static_assert(!std::is_same_v<T, bool>, "fill bool branches with std::vector<std::uint8_t>");
    fill_raw(branch, detail::scalar_of<T>(), values.data(), values.size(), nullptr, 0);
  }

  /// A batch of a variable-length branch: each entry's count, and the values back to back.
  template <typename T>
  void fill(std::size_t branch, const std::vector<std::uint32_t>& counts,
            const std::vector<T>& values) {
    fill_raw(branch, detail::scalar_of<T>(), values.data(), values.size(), counts.data(),
             counts.size());
  }

  /// As fill, with an EvtcScalar and pointers (bool values as bytes).
  void fill_raw(std::size_t branch, EvtcScalar scalar, const void* values, std::size_t n_values,
                const std::uint32_t* counts, std::size_t n_entries) {
    detail::check(evtc_writer_fill(live(), branch, scalar, values, n_values, counts, n_entries),
                  writer_);
  }

  /// Commits the entries filled since the last commit; returns their number.
  std::uint64_t commit() {
    std::uint64_t n = 0;
    detail::check(evtc_writer_commit(live(), &n), writer_);
    return n;
  }

  /// Finishes the file, which appears under its name.
  void close() {
    EvtcWriter* w = live();
    writer_ = nullptr;
    detail::check(evtc_writer_close(w));
  }

 private:
  EvtcWriter* live() const {
    if (!writer_) throw Error(EVTC_STATUS_ERROR_ARGUMENT, "the writer is closed");
    return writer_;
  }
  EvtcWriter* writer_ = nullptr;
};

}  // namespace evtc

#endif  // EVTC_HPP
