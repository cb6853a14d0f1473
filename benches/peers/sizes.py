#!/usr/bin/env python3
"""File sizes of evtc against ROOT 6.40's TTree and RNTuple, and Parquet, on the same data (issue 15).

What it does. For every data set below it writes the values as a ROOT TTree in each of ROOT's
compression settings 101 (zlib:1), 207 (lzma:7), 404 (lz4hc:4) and 505 (zstd:5) and, from each of
those TTree files, with the same setting:

- an RNTuple through RDataFrame's Snapshot (what `cargo bench --bench peers` writes) and one
  through RNTupleImporter (`root_side.py rntuple SETTING`, `root_side.py rntuple-import`);
- an evtc file, `evtc convert TTREE OUT --codec SETTING` with default options (automatic
  preconditioners, 256 KiB baskets, no RAC); from the 404 TTree also `--codec lz4` (evtc's plain,
  level-less LZ4, next to ROOT's lz4hc:4);
- Parquet files written by pyarrow from the same values, where Parquet has the codec: gzip level 1
  for 101, LZ4_RAW level 4 for 404 (Arrow's LZ4_RAW codec compresses with LZ4 HC from level 3),
  zstd level 5 for 505, and plain LZ4_RAW (default level, the fast compressor) next to evtc's lz4;
  Parquet has no LZMA, so none for 207. Each three times: pyarrow's defaults, "encoded":
  `use_dictionary=False` with DELTA_BINARY_PACKED for every integer column and BYTE_STREAM_SPLIT
  for every float column (list items included; RLE for the booleans was tried and made the
  NanoAOD-like file larger, so they stay PLAIN); and "best": for each column whichever of the two
  stored it in fewer bytes (dictionary or that encoding; column chunks compress independently).

It then prints a markdown report: whole-file sizes in MB (10^6 bytes) per system, setting and data
set (plus evtc's sum of branch stored bytes), and, for the sorted integers, the `position` and
`count` columns alone (evtc: `inspect --json` stored_bytes; TTree: `TBranch::GetZipBytes`;
RNTuple: RNTupleInspector's compressed bytes of the field; Parquet: the column chunks'
total_compressed_size summed over row groups).

The data sets, all deterministic:

1. nano: the NanoAOD-like tree, 200,000 events, 114 branches, written by ROOT itself with
   `crates/root/tests/fixtures/make_fixtures.py --nano 200000 --setting S` (as benches/peers.rs
   does). Parquet reads the values back from the 505 TTree with uproot (awkward -> arrow).
2. tfloat, tsmall: the RAC study's trees TFloat (6 equal floats per event) and TSmall (1,000 floats
   in runs of 6), about 40 MB of floats each as in benches/peers.rs (1,666,666 and 10,000 events,
   seed 1), written by ROOT from the evtc generator's values (`root_side.py fromraw`: one branch
   `x[N]/F`). This script cannot call the generator's Rust functions, so it takes the values from
   `evtc generate --kind rac --events 10000` (seed 1): the TSmall tree, dumped as CSV by `evtc dump`
   (shortest round-trip decimals, parsed back exactly), is TSmall itself. TFloat draws one value per
   event from the same random stream as TSmall, which draws 167 per event (166 runs of 6 and one of
   4), so TFloat's 1,666,666 values are the first 1,666,666 run heads of TSmall, each repeated 6
   times (checked: the TTree's first 10,000 events equal the generated TFloat tree of 10,000
   events).
3. ints: sorted integers, `evtc generate --kind ints --events 10000000`: `position` (i32, sorted,
   heavy-tailed gaps) and `count` (u32, Poisson mean 3). Dumped with `evtc dump --format csv`
   (10M rows in about 3 s, the fastest exact way without the Rust library) into raw little-endian
   files that `root_side.py fromints` writes as a TTree with branches `position/I` and `count/i`.

For the RAC and integer data sets the script checks the values ROOT wrote: it converts the 505
TTree to evtc and compares `evtc dump --format csv` of it with that of the generated evtc file
(every entry; TFloat: the first 10,000), once (the result is kept in WORKDIR/DATASET/verified.json).
Parquet for these is written from the same raw values (TFloat and TSmall as fixed-size lists).

Run, from anywhere (the ROOT environment of make_fixtures.py: ROOT 6.40, uproot and awkward from
PyPI, plus pyarrow; an evtc binary built with `cargo build --release -p evtc-cli`):

    .venv-root/bin/pip install pyarrow
    .venv-root/bin/python benches/peers/sizes.py WORKDIR [--evtc target/release/evtc]
        [--datasets nano,tfloat,tsmall,ints] [--threads N] [--report OUT.md]

Everything goes under WORKDIR (a few GB: raw values, CSV dumps are not kept); files that exist are
not written again (each is written under a temporary name and renamed when complete), so a second
run only measures. Delete WORKDIR (or a file in it) to rebuild. `--threads` is passed to `evtc
convert` (the output does not depend on it). The ACLiC build of root_loops.C goes to
WORKDIR/aclic. The report goes to stdout (and to `--report` if given); progress to stderr.
ROOT's Python is run as `EVTC_PYTHON` (default: this interpreter).
"""

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ROOT_SIDE = os.path.join(HERE, "root_side.py")
MAKE_FIXTURES = os.path.join(REPO, "crates", "root", "tests", "fixtures", "make_fixtures.py")

SETTINGS = (101, 207, 404, 505)
SETTING_NAMES = {101: "zlib:1", 207: "lzma:7", 404: "lz4hc:4", 505: "zstd:5"}
# Rows of the report: ROOT's settings, and evtc's plain LZ4 after 404.
ROWS = (101, 207, 404, "lz4", 505)
# Parquet codec (pyarrow name, level) per row; Parquet has no LZMA.
PARQUET = {101: ("gzip", 1), 207: None, 404: ("lz4", 4), "lz4": ("lz4", None), 505: ("zstd", 5)}
PARQUET_NAMES = {101: "gzip:1", 404: "LZ4_RAW:4 (HC)", "lz4": "LZ4_RAW (fast)", 505: "zstd:5"}
VARIANTS = ("default", "encoded", "best")

NANO_EVENTS = 200_000
RAC_SEED = 1
TFLOAT_LEN, TSMALL_LEN = 6, 1_000
# benches/peers.rs: about 40 MB of floats per tree.
TFLOAT_EVENTS = 40 * 1_000_000 // (4 * TFLOAT_LEN)
TSMALL_EVENTS = 40 * 1_000_000 // (4 * TSMALL_LEN)
RUNS_PER_TSMALL = -(-TSMALL_LEN // 6)  # 167 random draws per TSmall event
INTS_EVENTS = 10_000_000

DATASETS = {
    "nano": f"NanoAOD-like, {NANO_EVENTS:,} events, 114 branches",
    "tfloat": f"RAC study TFloat, {TFLOAT_EVENTS:,} events of 6 floats",
    "tsmall": f"RAC study TSmall, {TSMALL_EVENTS:,} events of 1,000 floats",
    "ints": f"sorted integers, {INTS_EVENTS:,} entries of position (i32) and count (u32)",
}


def log(*args):
    print(*args, file=sys.stderr, flush=True)


class Runner:
    def __init__(self, work, evtc, threads):
        self.work = os.path.abspath(work)
        self.evtc = os.path.abspath(evtc)
        self.threads = threads
        self.python = os.environ.get("EVTC_PYTHON") or sys.executable
        self.env = dict(os.environ, EVTC_ACLIC_DIR=os.path.join(self.work, "aclic"))
        os.makedirs(self.work, exist_ok=True)

    def path(self, *parts):
        p = os.path.join(self.work, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def run(self, args, capture=False):
        """Runs a command from the repository root; its stdout when `capture`."""
        start = time.time()
        result = subprocess.run(
            args, cwd=REPO, env=self.env, check=False,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        if result.returncode != 0:
            sys.exit(f"failed ({result.returncode}): {' '.join(args)}\n{result.stderr.decode(errors='replace')}")
        log(f"  {time.time() - start:6.1f} s  {' '.join(os.path.basename(a) if os.sep in a else a for a in args[:6])}")
        return result.stdout if capture else None

    def root_side(self, *args, capture=False):
        return self.run([self.python, ROOT_SIDE, *map(str, args)], capture=capture)

    def ensure(self, path, make):
        """Calls make(tmp) unless `path` exists, then renames tmp to `path`."""
        if os.path.exists(path):
            return path
        # The temporary name keeps the extension and the word "rntuple" where the path has it.
        base, ext = os.path.splitext(path)
        tmp = f"{base}.part{ext}"
        if os.path.exists(tmp):
            os.remove(tmp)
        make(tmp)
        if not os.path.exists(tmp):
            sys.exit(f"{path} was not written")
        os.replace(tmp, path)
        return path

    def evtc_dump(self, file, *args):
        """`evtc dump --format csv` of `file`, without its header line."""
        out = self.run([self.evtc, "dump", file, "--format", "csv", *args], capture=True)
        return out[out.index(b"\n") + 1:]

    def evtc_tools(self, src, out, codec):
        args = [self.evtc, "convert", src, out, "--codec", str(codec), "--quiet", "--force"]
        if self.threads:
            args += ["--threads", str(self.threads)]
        self.run(args)

    def inspect(self, file):
        return json.loads(self.run([self.evtc, "inspect", "--json", file], capture=True))


# ---------------------------------------------------------------------------------------------
# Values


def parse_csv_numbers(body, dtype, per_row):
    """The numbers of `evtc dump --format csv` lines (`entry,a,b` or `entry,"[x, y, ...]"`) as a
    (rows, per_row) array without the entry column; exact for the dump's shortest round-trip
    decimals (parsed as float64, then rounded to float32 once)."""
    text = body.replace(b'"[', b"").replace(b']"', b"").replace(b"\n", b",").rstrip(b",")
    values = np.fromstring(text.decode("ascii"), dtype=dtype, sep=",")
    values = values.reshape(-1, per_row + 1)
    return values[:, 1:]


def rac_sources(r):
    """Raw little-endian float32 files of TSmall and TFloat (see the module's docstring)."""
    tsmall_raw = r.path("src", "tsmall.f32")
    tfloat_raw = r.path("src", "tfloat.f32")
    if os.path.exists(tsmall_raw) and os.path.exists(tfloat_raw):
        return tfloat_raw, tsmall_raw
    gen = r.ensure(r.path("src", f"rac_{TSMALL_EVENTS}.evtc"), lambda tmp: r.run(
        [r.evtc, "generate", "--kind", "rac", "--events", str(TSMALL_EVENTS), "--seed", str(RAC_SEED), tmp]))
    tsmall = parse_csv_numbers(r.evtc_dump(gen, "--tree", "TSmall"), np.float64, TSMALL_LEN)
    tsmall = tsmall.astype(np.float32)
    assert tsmall.shape == (TSMALL_EVENTS, TSMALL_LEN)
    # Runs of six equal values restarting at each event: 166 full runs and one of 4.
    full = tsmall[:, : 6 * (TSMALL_LEN // 6)].reshape(TSMALL_EVENTS, -1, 6)
    assert (full == full[:, :, :1]).all(), "TSmall is not made of runs of six"
    assert (tsmall[:, 6 * (TSMALL_LEN // 6):] == tsmall[:, -1:]).all()
    heads = tsmall[:, ::6].reshape(-1)
    assert heads.size == TSMALL_EVENTS * RUNS_PER_TSMALL >= TFLOAT_EVENTS
    tfloat = np.repeat(heads[:TFLOAT_EVENTS], TFLOAT_LEN)
    r.ensure(tsmall_raw, lambda tmp: tsmall.astype("<f4").tofile(tmp))
    r.ensure(tfloat_raw, lambda tmp: tfloat.astype("<f4").tofile(tmp))
    return tfloat_raw, tsmall_raw


def ints_sources(r):
    """Raw little-endian int32 positions and uint32 counts of `evtc generate --kind ints`."""
    pos_raw, cnt_raw = r.path("src", "positions.i32"), r.path("src", "counts.u32")
    if os.path.exists(pos_raw) and os.path.exists(cnt_raw):
        return pos_raw, cnt_raw
    gen = r.ensure(r.path("src", f"ints_{INTS_EVENTS}.evtc"), lambda tmp: r.run(
        [r.evtc, "generate", "--kind", "ints", "--events", str(INTS_EVENTS), tmp]))
    values = parse_csv_numbers(r.evtc_dump(gen, "--branches", "position,count"), np.int64, 2)
    assert values.shape == (INTS_EVENTS, 2)
    pos, cnt = values[:, 0], values[:, 1]
    assert pos.min() >= 0 and pos.max() < 2**31 and cnt.min() >= 0 and cnt.max() < 2**32
    r.ensure(pos_raw, lambda tmp: pos.astype("<i4").tofile(tmp))
    r.ensure(cnt_raw, lambda tmp: cnt.astype("<u4").tofile(tmp))
    return pos_raw, cnt_raw


def write_ttree(r, ds, setting, out):
    if ds == "nano":
        r.run([r.python, MAKE_FIXTURES, "--nano", str(NANO_EVENTS), "--setting", str(setting), out])
    elif ds in ("tfloat", "tsmall"):
        tfloat_raw, tsmall_raw = rac_sources(r)
        raw, n = (tfloat_raw, TFLOAT_LEN) if ds == "tfloat" else (tsmall_raw, TSMALL_LEN)
        r.root_side("fromraw", raw, out, setting, n)
    else:
        r.root_side("fromints", *ints_sources(r), out, setting)


def verify(r, ds, files):
    """Checks that the 505 TTree holds the generator's values (see the module's docstring)."""
    marker = r.path(ds, "verified.json")
    if ds == "nano" or os.path.exists(marker):
        return
    converted = files["evtc"][505]
    if ds == "ints":
        gen = r.path("src", f"ints_{INTS_EVENTS}.evtc")
        want = r.evtc_dump(gen, "--branches", "position,count")
        got = r.evtc_dump(converted, "--branches", "position,count")
    else:
        gen = r.path("src", f"rac_{TSMALL_EVENTS}.evtc")
        if ds == "tsmall":
            want, got = r.evtc_dump(gen, "--tree", "TSmall"), r.evtc_dump(converted)
        else:
            want = r.evtc_dump(gen, "--tree", "TFloat")
            got = r.evtc_dump(converted, "--entries", f"..{TSMALL_EVENTS}")
    if want != got:
        sys.exit(f"{ds}: the values of {converted} differ from {gen}")
    entries = r.inspect(converted)["trees"][0]["entries"]
    expected = {"ints": INTS_EVENTS, "tsmall": TSMALL_EVENTS, "tfloat": TFLOAT_EVENTS}[ds]
    if entries != expected:
        sys.exit(f"{ds}: {entries} entries, expected {expected}")
    with open(marker, "w") as f:
        json.dump({"compared_with": gen, "csv_sha256": hashlib.sha256(want).hexdigest(),
                   "entries": entries}, f, indent=1)


# ---------------------------------------------------------------------------------------------
# Parquet


def arrow_table(r, ds, ttree_505):
    import pyarrow as pa

    if ds == "nano":
        import awkward as ak
        import uproot

        with uproot.open(ttree_505) as f:
            arrays = f["Events"].arrays(library="ak")
        return ak.to_arrow_table(arrays, list_to32=True, extensionarray=False)
    if ds in ("tfloat", "tsmall"):
        tfloat_raw, tsmall_raw = rac_sources(r)
        raw, n = (tfloat_raw, TFLOAT_LEN) if ds == "tfloat" else (tsmall_raw, TSMALL_LEN)
        values = pa.array(np.fromfile(raw, dtype="<f4"))
        return pa.table({"x": pa.FixedSizeListArray.from_arrays(values, n)})
    pos_raw, cnt_raw = ints_sources(r)
    return pa.table({
        "position": pa.array(np.fromfile(pos_raw, dtype="<i4")),
        "count": pa.array(np.fromfile(cnt_raw, dtype="<u4")),
    })


def column_encodings(schema):
    """DELTA_BINARY_PACKED for integer columns, BYTE_STREAM_SPLIT for float columns, keyed by
    Parquet column path (list items: `name.list.element`)."""
    import pyarrow as pa

    out = {}
    for field in schema:
        path, kind = field.name, field.type
        while pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
            path, kind = path + ".list.element", kind.value_type
        if pa.types.is_floating(kind):
            out[path] = "BYTE_STREAM_SPLIT"
        elif pa.types.is_integer(kind):
            out[path] = "DELTA_BINARY_PACKED"
    return out


def write_parquet(table, out, row, variant, written=None):
    """`variant` "best" takes, column by column, whichever of the "default" and "encoded" files in
    `written` stored the column in fewer bytes (column chunks are compressed independently)."""
    import pyarrow.parquet as pq

    codec, level = PARQUET[row]
    options = dict(compression=codec, compression_level=level)
    encodings = column_encodings(table.schema)
    if variant == "encoded":
        options.update(use_dictionary=False, column_encoding=encodings)
    elif variant == "best":
        default = parquet_sizes(written["default"])["chunks"]
        encoded = parquet_sizes(written["encoded"])["chunks"]
        dictionary = [c for c in default if default[c] < encoded[c]]
        options.update(
            use_dictionary=dictionary,
            column_encoding={c: e for c, e in encodings.items() if c not in dictionary},
        )
    pq.write_table(table, out, **options)


def parquet_sizes(path):
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    columns, chunks, encodings = {}, {}, {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            path_in_schema = chunk.path_in_schema
            top = path_in_schema.split(".")[0]
            columns[top] = columns.get(top, 0) + chunk.total_compressed_size
            chunks[path_in_schema] = chunks.get(path_in_schema, 0) + chunk.total_compressed_size
            encodings.setdefault(path_in_schema, set()).update(chunk.encodings)
    return {
        "file_bytes": os.path.getsize(path),
        "stored_bytes": sum(columns.values()),
        "columns": columns,
        "chunks": chunks,
        "encodings": {k: sorted(v) for k, v in encodings.items()},
        "row_groups": meta.num_row_groups,
    }


# ---------------------------------------------------------------------------------------------
# Building and measuring


def build(r, ds):
    """Writes every file of data set `ds`; returns their paths by system and row."""
    log(f"{ds}: {DATASETS[ds]}")
    files = {"ttree": {}, "rntuple_snapshot": {}, "rntuple_import": {}, "evtc": {}, "parquet": {}}
    for s in SETTINGS:
        ttree = r.ensure(r.path(ds, f"ttree_{s}.root"), lambda tmp: write_ttree(r, ds, s, tmp))
        files["ttree"][s] = ttree
        files["rntuple_snapshot"][s] = r.ensure(
            r.path(ds, f"rntuple_snapshot_{s}.root"), lambda tmp: r.root_side("rntuple", ttree, tmp, s))
        files["rntuple_import"][s] = r.ensure(
            r.path(ds, f"rntuple_import_{s}.root"), lambda tmp: r.root_side("rntuple-import", ttree, tmp, s))
        files["evtc"][s] = r.ensure(r.path(ds, f"evtc_{s}.evtc"), lambda tmp: r.evtc_tools(ttree, tmp, s))
    files["evtc"]["lz4"] = r.ensure(
        r.path(ds, "evtc_lz4.evtc"), lambda tmp: r.evtc_tools(files["ttree"][404], tmp, "lz4"))
    verify(r, ds, files)
    table = None
    for row in ROWS:
        if PARQUET[row] is None:
            continue
        written = {}
        for variant in VARIANTS:
            out = r.path(ds, f"parquet_{row}_{variant}.parquet")
            if not os.path.exists(out) and table is None:
                start = time.time()
                table = arrow_table(r, ds, files["ttree"][505])
                log(f"  {time.time() - start:6.1f} s  arrow table of {ds} ({table.nbytes / 1e6:.1f} MB)")

            def make(tmp, row=row, variant=variant):
                start = time.time()
                write_parquet(table, tmp, row, variant, written)
                log(f"  {time.time() - start:6.1f} s  parquet {row} {variant}")

            written[variant] = files["parquet"][(row, variant)] = r.ensure(out, make)
    return files


def measure(r, all_files):
    """Sizes of every file: {path: {...}} (ROOT files through one `root_side.py sizes` call)."""
    root_files = [p for files in all_files.values() for kind in ("ttree", "rntuple_snapshot", "rntuple_import")
                  for p in files[kind].values()]
    out = json.loads(r.root_side("sizes", *root_files, capture=True))
    for files in all_files.values():
        for p in files["evtc"].values():
            report = r.inspect(p)
            tree = report["trees"][0]
            out[p] = {
                "file_bytes": report["size"],
                "stored_bytes": tree["stored_bytes"],
                "raw_bytes": tree["raw_bytes"],
                "columns": {b["name"]: b["stored_bytes"] for b in tree["branches"]},
                "preconditioners": {b["name"]: b["precondition"] for b in tree["branches"]},
                "codecs": sorted({b["codec"] for b in tree["branches"]}),
            }
        for p in files["parquet"].values():
            out[p] = parquet_sizes(p)
    return out


# ---------------------------------------------------------------------------------------------
# Report


def mb(n, digits=2):
    return "-" if n is None else f"{n / 1e6:.{digits}f}"


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}"


def row_label(row):
    return f"{row} ({SETTING_NAMES[row]})" if row in SETTING_NAMES else "lz4 (evtc and Parquet only)"


def versions():
    out = {}
    for name in ("pyarrow", "uproot", "awkward", "numpy"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            out[name] = "missing"
    return out


def report(r, all_files, sizes):
    lines = []
    w = lines.append
    root_version = next((s["root_version"] for s in sizes.values() if "root_version" in s), "?")
    v = versions()
    evtc_version = subprocess.run([r.evtc, "--version"], capture_output=True, text=True).stdout.strip()
    w("# File sizes: evtc against ROOT 6.40 TTree and RNTuple, and Parquet (issue 15)\n")
    w(f"Command: `.venv-root/bin/python benches/peers/sizes.py WORKDIR --evtc {r.evtc}`. "
      f"Machine: {platform.machine()}, {os.cpu_count()} cores. {evtc_version}; ROOT "
      f"{root_version}; pyarrow {v['pyarrow']}, uproot {v['uproot']}, awkward {v['awkward']}.\n")
    w("Sizes are whole files in MB (10^6 bytes). For each data set, ROOT writes the TTree in each "
      "setting (default basket size and auto-flush); the RNTuples (RDataFrame Snapshot, and "
      "RNTupleImporter) and the evtc file (`evtc convert TTREE OUT --codec SETTING`, default "
      "options: automatic preconditioners, 256 KiB baskets, no RAC) are written from that TTree "
      "with the same setting; `evtc branches` is evtc's sum of branch stored bytes (without "
      "schema, indices and footer). The lz4 row: evtc's plain LZ4 (`--codec lz4`, from the 404 "
      "TTree) and Parquet's LZ4_RAW at its default (fast) level; Parquet's 404 column is LZ4_RAW "
      "at level 4, which Arrow compresses with LZ4 HC. Parquet (pyarrow, from the same values): "
      "`default` is pyarrow's defaults (dictionary encoding, 1Mi-row row groups); `encoded` is "
      "`use_dictionary=False` with DELTA_BINARY_PACKED for integer and BYTE_STREAM_SPLIT for float "
      "columns (list items included); `best` takes for each column whichever of the two stored it "
      "in fewer bytes (dictionary or the encoding above). Parquet has no LZMA. Ratios: evtc "
      "divided by the TTree, by the smaller RNTuple and by the smallest Parquet file of the row.\n")
    for ds, files in all_files.items():
        evtc505 = sizes[files["evtc"][505]]
        w(f"## {DATASETS[ds]}\n")
        w(f"{evtc505['raw_bytes'] / 1e6:.1f} MB of values (evtc's raw bytes).\n")
        w("| setting | TTree | RNTuple (Snapshot) | RNTuple (Importer) | evtc | evtc branches | "
          "Parquet codec | Parquet default | Parquet encoded | Parquet best | evtc / TTree | evtc / RNTuple | evtc / Parquet |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for row in ROWS:
            def size(kind, key=row):
                p = files[kind].get(key)
                return sizes[p]["file_bytes"] if p else None
            ev = size("evtc")
            evb = sizes[files["evtc"][row]]["stored_bytes"]
            rn = [x for x in (size("rntuple_snapshot"), size("rntuple_import")) if x is not None]
            pq_ = [sizes[files["parquet"][(row, v)]]["file_bytes"] for v in VARIANTS if (row, v) in files["parquet"]]
            w(f"| {row_label(row)} | {mb(size('ttree'))} | {mb(size('rntuple_snapshot'))} | "
              f"{mb(size('rntuple_import'))} | {mb(ev)} | {mb(evb)} | {PARQUET_NAMES.get(row, '-')} | "
              f"{' | '.join(mb(x) for x in pq_) if pq_ else '- | - | -'} | {ratio(ev, size('ttree'))} | "
              f"{ratio(ev, min(rn)) if rn else '-'} | {ratio(ev, min(pq_)) if pq_ else '-'} |")
        w("")
        pre = evtc505["preconditioners"]
        if len(pre) <= 4:
            w("evtc's automatic preconditioners at 505: " + ", ".join(f"`{k}` {v}" for k, v in pre.items()) + ".\n")
        else:
            counts = {}
            for v in pre.values():
                counts[v] = counts.get(v, 0) + 1
            w("evtc's automatic preconditioners at 505 (branches): "
              + ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: -kv[1])) + ".\n")
    if "ints" in all_files:
        files = all_files["ints"]
        for column in ("position", "count"):
            w(f"## Sorted integers: the `{column}` column alone\n")
            w("Stored bytes of the column in MB: TTree `TBranch::GetZipBytes` (basket keys "
              "included), RNTuple the field's compressed bytes (RNTupleInspector), evtc "
              "`inspect --json` stored_bytes, Parquet the column chunks' total_compressed_size "
              "summed over row groups (the best-of file stores each column as the smaller of these "
              "two).\n")
            w("| setting | TTree | RNTuple (Snapshot) | RNTuple (Importer) | evtc | evtc preconditioner | "
              "Parquet default | Parquet encoded | evtc / TTree | evtc / RNTuple | evtc / Parquet |")
            w("|---|---|---|---|---|---|---|---|---|---|---|")
            for row in ROWS:
                def col(kind, key=row):
                    p = files[kind].get(key)
                    if not p:
                        return None
                    c = sizes[p]["columns"][column]
                    return c["stored_bytes"] if isinstance(c, dict) else c
                ev = col("evtc")
                rn = [x for x in (col("rntuple_snapshot"), col("rntuple_import")) if x is not None]
                pq_ = [sizes[files["parquet"][(row, v)]]["columns"][column] for v in VARIANTS[:2]
                       if (row, v) in files["parquet"]]
                w(f"| {row_label(row)} | {mb(col('ttree'), 3)} | {mb(col('rntuple_snapshot'), 3)} | "
                  f"{mb(col('rntuple_import'), 3)} | {mb(ev, 3)} | "
                  f"{sizes[files['evtc'][row]]['preconditioners'][column]} | "
                  f"{mb(pq_[0], 3) if pq_ else '-'} | {mb(pq_[1], 3) if pq_ else '-'} | "
                  f"{ratio(ev, col('ttree'))} | {ratio(ev, min(rn)) if rn else '-'} | "
                  f"{ratio(ev, min(pq_)) if pq_ else '-'} |")
            w("")
    # Checks: every file has the compression it was asked for.
    problems = []
    for ds, files in all_files.items():
        for kind in ("ttree", "rntuple_snapshot", "rntuple_import"):
            for s, p in files[kind].items():
                if sizes[p].get("compression") != s:
                    problems.append(f"{p}: compression {sizes[p].get('compression')}, expected {s}")
        for (row, variant), p in files["parquet"].items():
            if variant == "encoded":
                import pyarrow.parquet as pq

                wanted = column_encodings(pq.read_schema(p))
                for col, enc in sizes[p]["encodings"].items():
                    if col in wanted and wanted[col] not in enc or "RLE_DICTIONARY" in enc:
                        problems.append(f"{p}: column {col} encodings {enc}")
    if problems:
        w("## Problems\n")
        lines.extend(f"- {p}" for p in problems)
        w("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", help="work directory for every file written")
    parser.add_argument("--evtc", default=os.path.join(REPO, "target", "release", "evtc"))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--threads", type=int, help="threads of `evtc convert` (default: all cores)")
    parser.add_argument("--report", help="also write the report to this file")
    args = parser.parse_args()
    datasets = args.datasets.split(",")
    unknown = set(datasets) - set(DATASETS)
    if unknown:
        sys.exit(f"unknown data sets {sorted(unknown)}; known: {', '.join(DATASETS)}")
    r = Runner(args.work, args.evtc, args.threads)
    all_files = {ds: build(r, ds) for ds in datasets}
    sizes = measure(r, all_files)
    text = report(r, all_files, sizes)
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
