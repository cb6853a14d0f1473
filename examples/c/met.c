/* A complete C program over evtc's C API: the mean MET and the number of muons above 20 GeV in
 * an evtc file, reading two branches a cluster at a time. Build and run (docs/c-cpp.md):
 *
 *   cargo build --release -p evtc-capi
 *   cc -std=c11 examples/c/met.c -Itarget/release/include -Ltarget/release -levtc_c \
 *      -Wl,-rpath,$PWD/target/release -o met
 *   ./met nano_sample.evtc
 */

#include <stdio.h>
#include <stdlib.h>

#include "evtc.h"

static int fail(const char* what) {
  fprintf(stderr, "met: %s: %s\n", what, evtc_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.evtc\n", argv[0]);
    return 2;
  }
  EvtcFile* file = NULL;
  if (evtc_open(argv[1], 1, &file) != EVTC_STATUS_OK) return fail("open");
  size_t tree, met, pt;
  if (evtc_tree_find(file, "Events", &tree) != EVTC_STATUS_OK ||
      evtc_branch_find(file, tree, "MET_pt", &met) != EVTC_STATUS_OK ||
      evtc_branch_find(file, tree, "Muon_pt", &pt) != EVTC_STATUS_OK) {
    fprintf(stderr, "met: %s\n", evtc_file_error(file));
    evtc_close(file);
    return 1;
  }
  size_t clusters = 0;
  const uint64_t* ends = evtc_cluster_ends(file, tree, &clusters);
  double met_sum = 0;
  uint64_t muons = 0, start = 0;
  for (size_t c = 0; c < clusters; start = ends[c++]) {
    uint64_t n = ends[c] - start, n_pt = 0, written = 0;
    float* met_values = malloc(n * sizeof(float));
    uint64_t* offsets = malloc((n + 1) * sizeof(uint64_t));
    EvtcStatus s = evtc_read(file, tree, met, EVTC_SCALAR_F32, start, ends[c], met_values, n,
                             NULL, &written);
    if (s == EVTC_STATUS_OK) s = evtc_read_size(file, tree, pt, start, ends[c], &n_pt);
    float* pt_values = malloc((n_pt ? n_pt : 1) * sizeof(float));
    if (s == EVTC_STATUS_OK)
      s = evtc_read(file, tree, pt, EVTC_SCALAR_F32, start, ends[c], pt_values, n_pt, offsets,
                    &written);
    if (s != EVTC_STATUS_OK) {
      fprintf(stderr, "met: %s\n", evtc_file_error(file));
      return 1;
    }
    for (uint64_t e = 0; e < n; e++) {
      met_sum += met_values[e];
      for (uint64_t k = offsets[e]; k < offsets[e + 1]; k++) muons += pt_values[k] > 20.0f;
    }
    free(met_values);
    free(offsets);
    free(pt_values);
  }
  uint64_t entries = evtc_tree_entries(file, tree);
  printf("%llu events, mean MET %.3f GeV, %llu muons above 20 GeV\n",
         (unsigned long long)entries, entries ? met_sum / (double)entries : 0.0,
         (unsigned long long)muons);
  evtc_close(file);
  return 0;
}
