/* The C API from C: writes a file, reads it back, reads the file the Rust test wrote, and
 * checks that bad input gives errors. Usage: roundtrip DIR (DIR holds rust.evtc and
 * corrupt.evtc; c.evtc is written there). Prints "ok" and exits 0, or names what failed. */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evtc.h"

static int failures = 0;

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                       \
      fprintf(stderr, " (last error: %s)\n", evtc_last_error()); \
      failures++;                                         \
    }                                                     \
  } while (0)

#define N 5000

static void path_in(char* out, size_t cap, const char* dir, const char* name) {
  snprintf(out, cap, "%s/%s", dir, name);
}

/* Writes a file of one tree "T" of `n` (at most 3) entries of an int32 branch "x". */
static EvtcStatus write_entries(const char* path, const char* const* settings, uint64_t n) {
  EvtcWriter* w = NULL;
  EvtcStatus status = evtc_writer_create(path, settings, &w);
  if (status != EVTC_STATUS_OK) {
    CHECK(w == NULL, "no writer on failure");
    return status;
  }
  EvtcBranchSpec x_spec[] = {{"x", EVTC_KIND_SCALAR, EVTC_SCALAR_I32, 0, NULL}};
  int32_t x[3] = {1, 2, 3};
  CHECK(evtc_writer_tree(w, "T", x_spec, 1) == EVTC_STATUS_OK, "tree");
  CHECK(evtc_writer_fill(w, 0, EVTC_SCALAR_I32, x, n, NULL, n) == EVTC_STATUS_OK, "fill");
  CHECK(evtc_writer_commit(w, NULL) == EVTC_STATUS_OK, "commit");
  return evtc_writer_close(w);
}

/* The entries of the first tree of the file at `path` (0 if it does not open). */
static uint64_t entries_of(const char* path) {
  EvtcFile* f = NULL;
  if (evtc_open(path, 1, &f) != EVTC_STATUS_OK) return 0;
  uint64_t n = evtc_tree_count(f) > 0 ? evtc_tree_entries(f, 0) : 0;
  evtc_close(f);
  return n;
}

/* Writes c.evtc: run (u32), nMuon (u32), Muon_pt (f32, counted by nMuon), p (f64[3]), tag
 * (bytes), flag (bool), in two batches. */
static void write_file(const char* path) {
  const char* settings[] = {"codec=lz4", "rac=on", "cluster_size=1000",
                            "branch_codec=Muon_*=zstd:3", NULL};
  EvtcWriter* w = NULL;
  CHECK(evtc_writer_create(path, settings, &w) == EVTC_STATUS_OK, "create");
  EvtcBranchSpec specs[] = {
      {"run", EVTC_KIND_SCALAR, EVTC_SCALAR_U32, 0, NULL},
      {"nMuon", EVTC_KIND_SCALAR, EVTC_SCALAR_U32, 0, NULL},
      {"Muon_pt", EVTC_KIND_JAGGED, EVTC_SCALAR_F32, 0, "nMuon"},
      {"p", EVTC_KIND_FIXED, EVTC_SCALAR_F64, 3, NULL},
      {"tag", EVTC_KIND_BYTES, EVTC_SCALAR_U8, 0, NULL},
      {"flag", EVTC_KIND_SCALAR, EVTC_SCALAR_BOOL, 0, NULL},
  };
  CHECK(evtc_writer_tree(w, "Events", specs, 6) == EVTC_STATUS_OK, "tree");
  for (int half = 0; half < 2; half++) {
    uint32_t run[N / 2], n[N / 2], tag_counts[N / 2];
    double p[3 * (N / 2)];
    uint8_t flag[N / 2];
    static float pt[4 * N];
    static uint8_t tags[3 * N];
    size_t n_pt = 0, n_tags = 0;
    for (int i = 0; i < N / 2; i++) {
      int e = half * (N / 2) + i;
      run[i] = (uint32_t)(e / 1000);
      n[i] = (uint32_t)(e % 4);
      for (int k = 0; k < e % 4; k++) pt[n_pt++] = (float)e * 0.5f + (float)k;
      for (int k = 0; k < 3; k++) p[3 * i + k] = k == 0 ? e : k == 1 ? -e : 0.25;
      tag_counts[i] = (uint32_t)(e % 3);
      for (int k = 0; k < e % 3; k++) tags[n_tags++] = (uint8_t)('a' + e % 26);
      flag[i] = (uint8_t)(e % 5 == 0 ? 7 : 0); /* any non-zero byte is true */
    }
    CHECK(evtc_writer_fill(w, 0, EVTC_SCALAR_U32, run, N / 2, NULL, 0) == EVTC_STATUS_OK, "fill run");
    CHECK(evtc_writer_fill(w, 1, EVTC_SCALAR_U32, n, N / 2, NULL, 0) == EVTC_STATUS_OK, "fill n");
    CHECK(evtc_writer_fill(w, 2, EVTC_SCALAR_F32, pt, n_pt, n, N / 2) == EVTC_STATUS_OK, "fill pt");
    CHECK(evtc_writer_fill(w, 3, EVTC_SCALAR_F64, p, 3 * (N / 2), NULL, 0) == EVTC_STATUS_OK, "fill p");
    CHECK(evtc_writer_fill(w, 4, EVTC_SCALAR_U8, tags, n_tags, tag_counts, N / 2) == EVTC_STATUS_OK, "fill tag");
    CHECK(evtc_writer_fill(w, 5, EVTC_SCALAR_BOOL, flag, N / 2, NULL, 0) == EVTC_STATUS_OK, "fill flag");
    /* Bad fills are refused without harming the writer. */
    CHECK(evtc_writer_fill(w, 0, EVTC_SCALAR_F64, p, 1, NULL, 0) == EVTC_STATUS_ERROR_TYPE, "wrong type");
    CHECK(evtc_writer_fill(w, 9, EVTC_SCALAR_U32, run, 1, NULL, 0) == EVTC_STATUS_ERROR_ARGUMENT, "no branch 9");
    CHECK(evtc_writer_fill(w, 0, 42, run, 1, NULL, 0) == EVTC_STATUS_ERROR_ARGUMENT, "scalar 42");
    CHECK(evtc_writer_fill(w, 0, EVTC_SCALAR_U32, NULL, 3, NULL, 0) == EVTC_STATUS_ERROR_ARGUMENT, "null values");
    CHECK(strstr(evtc_writer_error(w), "values is a null pointer") != NULL, "message: %s", evtc_writer_error(w));
    CHECK(evtc_writer_fill(w, 0, EVTC_SCALAR_U32, (const char*)run + 1, 2, NULL, 0) == EVTC_STATUS_ERROR_ARGUMENT, "misaligned");
    uint64_t committed = 0;
    CHECK(evtc_writer_commit(w, &committed) == EVTC_STATUS_OK && committed == N / 2, "commit");
  }
  CHECK(evtc_writer_close(w) == EVTC_STATUS_OK, "close");
}

/* Reads `name` (written as write_file writes, by C or by Rust) and checks every value. */
static void read_file(const char* path) {
  EvtcFile* f = NULL;
  CHECK(evtc_open(path, 2, &f) == EVTC_STATUS_OK, "open %s", path);
  if (!f) return;
  CHECK(evtc_tree_count(f) == 1 && strcmp(evtc_tree_name(f, 0), "Events") == 0, "trees");
  size_t t = 99;
  CHECK(evtc_tree_find(f, "Events", &t) == EVTC_STATUS_OK && t == 0, "find tree");
  CHECK(evtc_tree_entries(f, t) == N, "entries");
  size_t nclusters = 0;
  const uint64_t* ends = evtc_cluster_ends(f, t, &nclusters);
  CHECK(nclusters >= 1 && ends[nclusters - 1] == N, "cluster ends");
  size_t b_run, b_pt, b_p, b_tag, b_flag;
  CHECK(evtc_branch_find(f, t, "run", &b_run) == EVTC_STATUS_OK, "run");
  CHECK(evtc_branch_find(f, t, "Muon_pt", &b_pt) == EVTC_STATUS_OK, "Muon_pt");
  CHECK(evtc_branch_find(f, t, "p", &b_p) == EVTC_STATUS_OK, "p");
  CHECK(evtc_branch_find(f, t, "tag", &b_tag) == EVTC_STATUS_OK, "tag");
  CHECK(evtc_branch_find(f, t, "flag", &b_flag) == EVTC_STATUS_OK, "flag");
  EvtcBranchInfo info;
  CHECK(evtc_branch_info(f, t, b_pt, &info) == EVTC_STATUS_OK && info.kind == EVTC_KIND_JAGGED &&
            info.scalar == EVTC_SCALAR_F32 && info.counter && strcmp(info.counter, "nMuon") == 0,
        "Muon_pt info");
  CHECK(evtc_branch_info(f, t, b_p, &info) == EVTC_STATUS_OK && info.kind == EVTC_KIND_FIXED && info.fixed_len == 3, "p info");

  static uint32_t run[N];
  uint64_t written = 0;
  CHECK(evtc_read(f, t, b_run, EVTC_SCALAR_U32, 0, N, run, N, NULL, &written) == EVTC_STATUS_OK && written == N, "read run");
  for (int e = 0; e < N; e++) CHECK(run[e] == (uint32_t)(e / 1000), "run %d", e);

  /* Entries 1234..4321 of Muon_pt: size query, then the read. */
  uint64_t size = 0;
  CHECK(evtc_read_size(f, t, b_pt, 1234, 4321, &size) == EVTC_STATUS_OK, "size");
  float* pt = malloc(sizeof(float) * (size_t)size);
  static uint64_t offsets[N + 1];
  CHECK(evtc_read(f, t, b_pt, EVTC_SCALAR_F32, 1234, 4321, pt, size, offsets, &written) == EVTC_STATUS_OK && written == size, "read pt");
  for (int e = 1234; e < 4321; e++) {
    uint64_t a = offsets[e - 1234], z = offsets[e - 1234 + 1];
    CHECK(z - a == (uint64_t)(e % 4), "pt count %d", e);
    for (uint64_t k = 0; k < z - a && k < 4; k++) CHECK(pt[a + k] == (float)e * 0.5f + (float)k, "pt %d", e);
  }
  /* Too small a buffer: the size needed, nothing else. */
  CHECK(evtc_read(f, t, b_pt, EVTC_SCALAR_F32, 1234, 4321, pt, size - 1, offsets, &written) == EVTC_STATUS_ERROR_BUFFER_TOO_SMALL && written == size, "small buffer");
  free(pt);

  double p[3];
  CHECK(evtc_read_entry(f, t, b_p, EVTC_SCALAR_F64, 4999, p, 3, &written) == EVTC_STATUS_OK && written == 3, "entry p");
  CHECK(p[0] == 4999.0 && p[1] == -4999.0 && p[2] == 0.25, "p values");
  float one[4];
  CHECK(evtc_read_entry(f, t, b_pt, EVTC_SCALAR_F32, 4003, one, 4, &written) == EVTC_STATUS_OK && written == 3 && one[2] == 4003 * 0.5f + 2, "entry pt");
  char tag[4];
  CHECK(evtc_read_entry(f, t, b_tag, EVTC_SCALAR_U8, 4001, tag, 4, &written) == EVTC_STATUS_OK && written == 2 && tag[0] == 'a' + 4001 % 26, "entry tag");
  uint8_t flags[10];
  CHECK(evtc_read(f, t, b_flag, EVTC_SCALAR_BOOL, 0, 10, flags, 10, NULL, &written) == EVTC_STATUS_OK && flags[0] == 1 && flags[5] == 1 && flags[1] == 0, "flags");

  /* Wrong type, bad range, bad indexes, null pointers. */
  CHECK(evtc_read(f, t, b_run, EVTC_SCALAR_F64, 0, 1, p, 3, NULL, &written) == EVTC_STATUS_ERROR_TYPE, "type");
  CHECK(strstr(evtc_file_error(f), "holds u32, not f64") != NULL, "type message: %s", evtc_file_error(f));
  CHECK(evtc_read(f, t, b_run, EVTC_SCALAR_U32, 10, N + 1, run, N, NULL, &written) == EVTC_STATUS_ERROR_RANGE, "range");
  CHECK(evtc_read(f, t, b_run, EVTC_SCALAR_U32, 10, 5, run, N, NULL, &written) == EVTC_STATUS_ERROR_RANGE, "reversed range");
  CHECK(evtc_read(f, 7, b_run, EVTC_SCALAR_U32, 0, 1, run, N, NULL, &written) == EVTC_STATUS_ERROR_ARGUMENT, "tree 7");
  CHECK(evtc_read(f, t, 99, EVTC_SCALAR_U32, 0, 1, run, N, NULL, &written) == EVTC_STATUS_ERROR_ARGUMENT, "branch 99");
  CHECK(evtc_read(f, t, b_pt, EVTC_SCALAR_F32, 0, 1, one, 4, NULL, &written) == EVTC_STATUS_ERROR_ARGUMENT, "null offsets");
  CHECK(evtc_read(NULL, t, b_run, EVTC_SCALAR_U32, 0, 1, run, N, NULL, &written) == EVTC_STATUS_ERROR_ARGUMENT, "null file");
  CHECK(evtc_branch_find(f, t, "nope", &b_run) == EVTC_STATUS_ERROR_NOT_FOUND, "no branch");
  CHECK(evtc_tree_find(f, NULL, &t) == EVTC_STATUS_ERROR_ARGUMENT, "null name");
  CHECK(evtc_tree_name(f, 5) == NULL && evtc_tree_entries(f, 5) == 0, "tree 5");
  evtc_close(f);
}

/* The read-at callback of evtc_open_reader: the bytes of a file held in memory. */
struct Memory {
  unsigned char* bytes;
  size_t len;
};

static int32_t read_memory(void* user, uint64_t offset, uint8_t* buffer, size_t len) {
  const struct Memory* m = user;
  if (offset > m->len || len > m->len - offset) return -1;
  memcpy(buffer, m->bytes + offset, len);
  return 0;
}

/* Opens `path` through a callback over its bytes in memory and reads a branch. */
static void read_through_callback(const char* path) {
  FILE* fp = fopen(path, "rb");
  CHECK(fp != NULL, "fopen %s", path);
  if (!fp) return;
  fseek(fp, 0, SEEK_END);
  struct Memory m = {NULL, (size_t)ftell(fp)};
  fseek(fp, 0, SEEK_SET);
  m.bytes = malloc(m.len);
  CHECK(fread(m.bytes, 1, m.len, fp) == m.len, "fread");
  fclose(fp);
  EvtcFile* f = NULL;
  CHECK(evtc_open_reader(read_memory, &m, m.len, 2, &f) == EVTC_STATUS_OK, "open_reader");
  size_t b = 0;
  static uint32_t run[N];
  uint64_t written = 0;
  CHECK(evtc_branch_find(f, 0, "run", &b) == EVTC_STATUS_OK, "run");
  CHECK(evtc_read(f, 0, b, EVTC_SCALAR_U32, 0, N, run, N, NULL, &written) == EVTC_STATUS_OK &&
            written == N && run[N - 1] == (N - 1) / 1000,
        "read through the callback");
  evtc_close(f);
  /* A callback that fails: an I/O error, not a crash. */
  struct Memory short_one = {m.bytes, m.len};
  CHECK(evtc_open_reader(read_memory, &short_one, m.len + 100, 1, &f) != EVTC_STATUS_OK, "lying length");
  CHECK(evtc_open_reader(NULL, &m, m.len, 1, &f) == EVTC_STATUS_ERROR_ARGUMENT, "null callback");
  free(m.bytes);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  char path[4096];
  path_in(path, sizeof path, argv[1], "c.evtc");
  write_file(path);
  read_file(path);
  path_in(path, sizeof path, argv[1], "rust.evtc");
  read_file(path);
  read_through_callback(path);
  /* Damaged and missing files. */
  EvtcFile* f = NULL;
  path_in(path, sizeof path, argv[1], "corrupt.evtc");
  CHECK(evtc_open(path, 1, &f) == EVTC_STATUS_ERROR_CORRUPT && f == NULL, "corrupt");
  CHECK(strstr(evtc_last_error(), "corrupt.evtc") != NULL, "names the file: %s", evtc_last_error());
  path_in(path, sizeof path, argv[1], "missing.evtc");
  CHECK(evtc_open(path, 1, &f) == EVTC_STATUS_ERROR_IO, "missing");
  CHECK(evtc_open(NULL, 1, &f) == EVTC_STATUS_ERROR_ARGUMENT, "null path");
  CHECK(evtc_writer_create("/nonexistent-dir/x.evtc", NULL, NULL) == EVTC_STATUS_ERROR_ARGUMENT, "null out");
  EvtcWriter* w = NULL;
  CHECK(evtc_writer_create("/nonexistent-dir/x.evtc", NULL, &w) == EVTC_STATUS_ERROR_IO, "bad dir");
  /* Bad settings name what is wrong, and nothing is written. */
  path_in(path, sizeof path, argv[1], "never.evtc");
  const char* bad_codec[] = {"codec=zstd:99", NULL};
  CHECK(evtc_writer_create(path, bad_codec, &w) == EVTC_STATUS_ERROR_ARGUMENT && w == NULL,
        "bad codec");
  CHECK(strstr(evtc_last_error(), "codec") != NULL, "names it: %s", evtc_last_error());
  const char* unknown[] = {"cluster_sise=10", NULL};
  CHECK(evtc_writer_create(path, unknown, &w) == EVTC_STATUS_ERROR_ARGUMENT, "unknown");
  CHECK(strstr(evtc_last_error(), "did you mean cluster_size") != NULL, "near: %s",
        evtc_last_error());
  const char* not_writer[] = {"tree=Events", NULL};
  CHECK(evtc_writer_create(path, not_writer, &w) == EVTC_STATUS_ERROR_ARGUMENT, "not writer's");
  const char* no_pair[] = {"codec", NULL};
  CHECK(evtc_writer_create(path, no_pair, &w) == EVTC_STATUS_ERROR_ARGUMENT, "no =");
  /* An existing file is replaced only when asked to. */
  path_in(path, sizeof path, argv[1], "twice.evtc");
  CHECK(write_entries(path, NULL, 3) == EVTC_STATUS_OK, "first");
  CHECK(write_entries(path, NULL, 2) == EVTC_STATUS_ERROR_EXISTS, "exists");
  CHECK(strstr(evtc_last_error(), "twice.evtc") != NULL, "names the file: %s", evtc_last_error());
  CHECK(entries_of(path) == 3, "kept");
  const char* overwrite[] = {"overwrite=true", NULL};
  CHECK(write_entries(path, overwrite, 2) == EVTC_STATUS_OK, "overwrite");
  CHECK(entries_of(path) == 2, "replaced");
  evtc_close(NULL);
  evtc_writer_abort(NULL);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
