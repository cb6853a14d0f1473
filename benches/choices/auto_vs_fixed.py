#!/usr/bin/env python3
"""The writer's automatic preconditioner against every fixed one, branch by branch.

  python3 benches/choices/auto_vs_fixed.py DATASETS CODECS

DATASETS and CODECS are comma-separated (evtc or ROOT files; codecs as `evtc convert --codec`).
Each dataset is converted with `--precondition auto` and with each fixed choice (none, shuffle,
bitshuffle, bitplanes, delta, delta-shuffle, zigzag-shuffle, for, delta-for, delta-varint, sparse,
runs) by target/release/evtc (build it first: `cargo build --release -p evtc-cli`); the script
prints the total stored MB per choice and every branch where auto is more than 2% larger than the
best fixed choice, then the five worst ratios. The files go to /tmp.
"""
import json
import os
import subprocess
import sys

evtc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "evtc")
datasets = sys.argv[1].split(",")
codecs = sys.argv[2].split(",")
CHOICES = ["auto", "none", "shuffle", "bitshuffle", "bitplanes", "delta", "delta-shuffle", "zigzag-shuffle", "for", "delta-for", "delta-varint", "sparse", "runs"]
worst = []
for ds in datasets:
    for codec in codecs:
        sizes = {}
        for p in CHOICES:
            out = f"/tmp/avf_{os.path.basename(ds)}_{codec}_{p}.evtc"
            r = subprocess.run([evtc, "convert", "--quiet", "--force", "--codec", codec, "--precondition", p, ds, out], capture_output=True, text=True)
            if r.returncode != 0:
                print("  fail", ds, codec, p, r.stderr.strip()[:200]); continue
            d = json.loads(subprocess.run([evtc, "inspect", "--json", out], capture_output=True, text=True).stdout)
            for t in d["trees"]:
                for b in t["branches"]:
                    sizes.setdefault((t["name"], b["name"]), {})[p] = (b["stored_bytes"], b["precondition"])
        tot = {p: sum(v[p][0] for v in sizes.values() if p in v) for p in CHOICES}
        print(f"{os.path.basename(ds)} {codec}: totals", {k: round(v/1e6,3) for k,v in tot.items()})
        for key, v in sizes.items():
            fixed = {p: s for p, (s, _) in v.items() if p != "auto"}
            bp = min(fixed, key=fixed.get)
            ratio = v["auto"][0] / fixed[bp]
            worst.append((ratio, os.path.basename(ds), codec, key, v["auto"][1], bp))
            if ratio > 1.02:
                print(f"   {key}: auto {v['auto'][0]} ({v['auto'][1]}) vs best {bp} {fixed[bp]}: {ratio:.3f}")
worst.sort(reverse=True)
print("worst 5:", worst[:5])
