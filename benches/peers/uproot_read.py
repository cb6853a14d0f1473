#!/usr/bin/env python3
"""Times uproot's `tree.arrays()` (every branch, awkward arrays) on ROOT files; prints JSON.

Usage: uproot_read.py [--repeat N] FILE... ; for each file, the median wall time of N reads of the
tree "Events" and the bytes of values read (the flattened contents of every array, the same count
benches/root_read.rs uses). Single thread, files hot in the page cache after a first read.
"""

import argparse
import json
import statistics
import time

import awkward as ak
import numpy as np
import uproot


def value_bytes(arrays):
    total = 0
    for field in arrays.fields:
        flat = ak.flatten(arrays[field], axis=None)
        total += np.asarray(flat).nbytes
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    out = {}
    for path in args.files:
        # No array or object cache: every call decompresses and interprets every basket.
        with uproot.open(path, array_cache=None, object_cache=None) as f:
            tree = f["Events"]
            arrays = tree.arrays(array_cache=None)  # warm-up: page cache and imports
            nbytes = value_bytes(arrays)
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                tree.arrays(array_cache=None)
                times.append(time.perf_counter() - start)
        out[path] = {"median_s": statistics.median(times), "value_bytes": nbytes}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
