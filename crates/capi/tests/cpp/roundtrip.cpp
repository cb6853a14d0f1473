// evtc.hpp from C++17: writes a file, reads it back and the Rust test's file, and checks that
// errors are exceptions. Usage: roundtrip DIR. Prints "ok" and exits 0, or names what failed.

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "evtc.hpp"

static int failures = 0;

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::cerr << __FILE__ << ":" << __LINE__ << ": " << #cond << std::endl;   \
      failures++;                                                               \
    }                                                                           \
  } while (0)

constexpr std::uint64_t N = 5000;

static void check_file(const std::string& path) {
  evtc::File file(path, 2);
  CHECK(file.tree_names() == std::vector<std::string>{"Events"});
  evtc::Tree events = file.tree("Events");
  CHECK(events.entries() == N);
  CHECK(events.cluster_ends().back() == N);
  auto run = events.read<std::uint32_t>("run");
  CHECK(run.size() == N && run[4321] == 4);
  auto pt = events.read_jagged<float>("Muon_pt", 100, 200);
  CHECK(pt.size() == 100);
  CHECK(pt.entry(3) == (std::vector<float>{103 * 0.5f, 103 * 0.5f + 1, 103 * 0.5f + 2}));
  auto p = events.entry<double>("p", 17);
  CHECK(p == (std::vector<double>{17.0, -17.0, 0.25}));
  CHECK(events.branch("Muon_pt").counter == "nMuon");
  CHECK(events.branch("p").fixed_len == 3);
  try {
    events.read<double>("run");
    CHECK(false);
  } catch (const evtc::Error& e) {
    CHECK(e.status() == EVTC_STATUS_ERROR_TYPE);
    CHECK(std::string(e.what()).find("holds u32, not f64") != std::string::npos);
  }
  try {
    events.read<float>("nope");
    CHECK(false);
  } catch (const evtc::Error& e) {
    CHECK(e.status() == EVTC_STATUS_ERROR_NOT_FOUND);
  }
}

/// The files written by C++ and by Rust read as one: entries numbered across both.
static void check_chain(const std::string& dir) {
  evtc::File chain(std::vector<std::string>{dir + "/cpp.evtc", dir + "/rust.evtc"}, 2);
  evtc::Tree events = chain.tree("Events");
  CHECK(events.entries() == 2 * N);
  CHECK(events.cluster_ends().back() == 2 * N);
  auto run = events.read<std::uint32_t>("run");
  CHECK(run.size() == 2 * N && run[N + 4321] == 4 && run[4321] == 4);
  auto pt = events.read_jagged<float>("Muon_pt", N - 2, N + 2);
  CHECK(pt.size() == 4);
  CHECK(pt.entry(3) == (std::vector<float>{1 * 0.5f}));
  CHECK(events.entry<double>("p", N + 17) == (std::vector<double>{17.0, -17.0, 0.25}));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  {
    evtc::Writer w(dir + "/cpp.evtc", {"codec=zstd:3", "threads=2"});
    w.tree("Events", {evtc::BranchSpec::scalar_of<std::uint32_t>("run"),
                      evtc::BranchSpec::scalar_of<std::uint32_t>("nMuon"),
                      evtc::BranchSpec::jagged_of<float>("Muon_pt", "nMuon"),
                      {"p", EVTC_KIND_FIXED, EVTC_SCALAR_F64, 3},
                      {"tag", EVTC_KIND_BYTES, EVTC_SCALAR_U8},
                      {"flag", EVTC_KIND_SCALAR, EVTC_SCALAR_BOOL}});
    std::vector<std::uint32_t> run, n, tag_counts;
    std::vector<float> pt;
    std::vector<double> p;
    std::vector<std::uint8_t> tags, flag;
    for (std::uint64_t e = 0; e < N; ++e) {
      run.push_back(static_cast<std::uint32_t>(e / 1000));
      n.push_back(static_cast<std::uint32_t>(e % 4));
      for (std::uint64_t k = 0; k < e % 4; ++k) pt.push_back(e * 0.5f + k);
      p.insert(p.end(), {double(e), -double(e), 0.25});
      tag_counts.push_back(static_cast<std::uint32_t>(e % 3));
      for (std::uint64_t k = 0; k < e % 3; ++k) tags.push_back('a' + e % 26);
      flag.push_back(e % 5 == 0);
    }
    w.fill(0, run);
    w.fill(1, n);
    w.fill(2, n, pt);
    w.fill(3, p);
    w.fill(4, tag_counts, tags);
    w.fill_raw(5, EVTC_SCALAR_BOOL, flag.data(), flag.size(), nullptr, 0);
    CHECK(w.commit() == N);
    w.close();
  }
  check_file(dir + "/cpp.evtc");
  check_file(dir + "/rust.evtc");
  check_chain(dir);
  try {
    evtc::File missing(dir + "/missing.evtc");
    CHECK(false);
  } catch (const evtc::Error& e) {
    CHECK(e.status() == EVTC_STATUS_ERROR_IO);
  }
  {
    // A writer never closed leaves nothing.
    evtc::Writer w(dir + "/abandoned.evtc");
    w.tree("T", {evtc::BranchSpec::scalar_of<float>("x")});
  }
  if (failures) {
    std::cerr << failures << " checks failed\n";
    return 1;
  }
  std::cout << "ok\n";
  return 0;
}
