#!/usr/bin/env python3
"""Measures evtc's ROOT import on a corpus of ROOT files against uproot's reading of them.

    .venv/bin/python scripts/root-corpus.py DIR_OR_FILE... [--json OUT.json] [--timeout 120]
        [--root-python .venv-root/bin/python]

For every TTree in every file (subdirectories included, the highest cycle of each name), every
branch without sub-branches that uproot reads is a branch to convert. The file is converted by
`evtc.convert(..., skip_unsupported=True)` and each branch evtc wrote is read back and compared
with uproot's values, element by element (NaN equals NaN; a float column compares exactly, as
bits of the same width). Each branch ends in one class:

- `equal`: converted, every value equal to uproot's;
- `equal-ROOT`: converted, some value differs from uproot's but every value equals ROOT's own
  reading (`TLeaf::GetValue` entry by entry, or for an object's member column a `TTreeFormula`
  of the member as `TTree::Scan` takes it, with `--root-python`, a Python that imports ROOT;
  uproot 5.7 computes some `Double32_t`/`Float16_t` with a range in another order than ROOT);
- `WRONG`: converted, some value differs (a silently wrong value: must never happen);
- `skipped`: refused by evtc with a reason (counted by reason);
- `missing`: uproot reads it, evtc neither wrote nor refused it;
- `file-refused`: the whole file or tree failed in evtc (counted by message).

Branches uproot itself cannot read are counted apart (`uproot-fails`) and are not in the
denominator. A file runs in a child process with a time limit, so a hang or crash in either
library is a result (`crash`), not the end of the run. Needs uproot, awkward and evtc (the
test environment, `.venv`, has them).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CLASSES = ("equal", "equal-ROOT", "WRONG", "skipped", "missing", "file-refused")


def tree_paths(f: Any) -> list[str]:
    """The file's TTrees, each name once (its highest cycle), subdirectories included."""
    best: dict[str, int] = {}
    for key, cls in f.classnames(recursive=True).items():
        if cls not in ("TTree", "TNtuple", "TNtupleD"):
            continue
        name, _, cycle = key.rpartition(";")
        best[name] = max(best.get(name, 0), int(cycle or 0))
    return sorted(best)


def leaves(tree: Any) -> list[str]:
    return [k for k in tree.keys(recursive=True, full_paths=True) if not tree[k].branches]


def same(a: Any, b: Any) -> bool:
    """Element-by-element equality of two values read as Python lists (NaN equals NaN)."""
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bytes):
        a = a.decode("utf-8", "surrogateescape")
    if isinstance(b, bytes):
        b = b.decode("utf-8", "surrogateescape")
    return a == b


def first_difference(a: list[Any], b: list[Any]) -> str:
    if len(a) != len(b):
        return f"{len(a)} entries, uproot {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if not same(x, y):
            return f"entry {i}: {str(x)[:80]} != uproot {str(y)[:80]}"
    return "equal"


def as_list(array: Any) -> list[Any]:
    import awkward as ak

    return ak.to_list(array)


def flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in flat(item)]
    if isinstance(x, dict):
        return [v for item in x.values() for v in flat(item)]
    return [x]


def root_values(path: str, tree: str, branch: str) -> list[list[float]]:
    """ROOT's own reading of one branch: each entry's values through TLeaf::GetValue."""
    import ROOT

    f = ROOT.TFile.Open(path)
    t = f.Get(tree)
    parts = branch.split("/")
    b = t.GetBranch(parts[-1]) or t.GetBranch(".".join(parts)) or t.FindBranch(parts[-1])
    if not b:
        raise KeyError(f"ROOT finds no branch {branch!r}")
    leaf = b.GetListOfLeaves().At(0)
    out = []
    for i in range(t.GetEntries()):
        b.GetEntry(i)
        out.append([leaf.GetValue(j) for j in range(leaf.GetLen())])
    return out


def root_formula(path: str, tree: str, column: str) -> list[list[float]]:
    """ROOT's own reading of one member column of an object (`b/x.fP.fX`): each entry's values
    through a TTreeFormula of the member's path (`b.x.fP.fX`, as `TTree::Scan` takes it)."""
    import ROOT

    f = ROOT.TFile.Open(path)
    t = f.Get(tree)
    parts = column.split("/")
    # The dotted path from the top branch, or from the last split level down.
    for expr in dict.fromkeys([".".join(parts), parts[-1], ".".join(parts[-2:])]):
        formula = ROOT.TTreeFormula("evtc", expr, t)
        if formula.GetNdim() > 0:
            break
    else:
        raise KeyError(f"ROOT finds no member {column!r}")
    formula.SetQuickLoad(True)
    out = []
    for i in range(t.GetEntries()):
        t.LoadTree(i)
        n = formula.GetNdata()
        out.append([formula.EvalInstance(j) for j in range(n)])
    return out


def root_agrees(
    root_python: str, path: str, tree: str, branch: str, mine: list[Any], member: bool = False
) -> bool:
    done = subprocess.run(
        [root_python, __file__, "--root-formula" if member else "--root-values", path, tree, branch],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return False
    theirs = json.loads(done.stdout)
    return len(theirs) == len(mine) and all(same(flat(m), t) for m, t in zip(mine, theirs))


def measure_file(path: str, root_python: str | None = None) -> dict[str, Any]:
    """One file's results: {tree/branch: [class, detail]} plus the uproot failures."""
    import uproot

    import evtc

    out: dict[str, Any] = {"branches": {}, "uproot_fails": {}, "error": None}
    try:
        f = uproot.open(path)
        trees = tree_paths(f)
    except Exception as e:  # noqa: BLE001 - any failure of uproot's is a result
        out["error"] = f"uproot cannot open the file: {type(e).__name__}: {e}"[:300]
        return out
    if not trees:
        return out
    wanted: dict[tuple[str, str], Any] = {}
    for name in trees:
        try:
            tree = f[name]
            names = leaves(tree)
        except Exception as e:  # noqa: BLE001
            out["uproot_fails"][name] = f"{type(e).__name__}: {e}"[:200]
            continue
        for b in names:
            try:
                values = as_list(tree[b].array(library="ak"))
                # uproot reads a fixed array of objects that is a member of a split object
                # (`TLorentzVector pg[6]`, typename `TLorentzVector[][6]`) as a list of such
                # arrays per entry, which always holds one: the entry is that one array.
                if re.search(r"\[\]\[\d+\]$", tree[b].typename) and all(
                    isinstance(v, list) and len(v) == 1 for v in values
                ):
                    values = [v[0] for v in values]
                wanted[(name, b)] = values
            except Exception as e:  # noqa: BLE001
                out["uproot_fails"][f"{name}:{b}"] = f"{type(e).__name__}: {e}"[:200]
    if not wanted:
        return out
    results = out["branches"]
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "out.evtc")
        try:
            summary = evtc.convert(path, dst, skip_unsupported=True, threads=1)
        except Exception as e:  # noqa: BLE001
            message = f"{type(e).__name__}: {e}"[:300]
            for tree, b in wanted:
                results[f"{tree}:{b}"] = ["file-refused", message]
            return out
        for tree, branch, cpp, reason in summary["skipped"]:
            # A refused branch refuses the branches under it (uproot's leaves); a refused member
            # column (`b.fX`) refuses the object branch it belongs to.
            for t, b in wanted:
                if t == tree and (
                    b == branch or b.startswith(branch + "/") or branch.startswith(b + ".")
                ):
                    results[f"{t}:{b}"] = ["skipped", f"{cpp}: {reason}"]
        with evtc.open(dst) as e:
            for tree in e.keys():
                t = e[tree]
                for b in t.keys():
                    key = (tree, b)
                    if key not in wanted:
                        continue
                    try:
                        mine = as_list(t[b].array(library="ak"))
                    except Exception as err:  # noqa: BLE001
                        results[f"{tree}:{b}"] = ["WRONG", f"evtc cannot read it back: {err}"]
                        continue
                    diff = first_difference(mine, wanted[key])
                    if diff == "equal":
                        results[f"{tree}:{b}"] = ["equal", ""]
                    elif root_python and root_agrees(root_python, path, tree, b, mine):
                        results[f"{tree}:{b}"] = ["equal-ROOT", f"uproot: {diff}"]
                    else:
                        results[f"{tree}:{b}"] = ["WRONG", diff]
        # A branch uproot reads as a record (a leaf-list, an unsplit object) is one column per
        # field in evtc (`b/x` for leaf-list leaves, `b.fX`, `b.fP.fX` for object members).
        with evtc.open(dst) as e:
            for (tree, b), values in wanted.items():
                key = f"{tree}:{b}"
                if key in results or tree not in e.keys():
                    continue
                t = e[tree]
                # (A list of lists' `/sizes` branch is read with its values' branch.)
                parts = [
                    n
                    for n in t.keys()
                    if n.startswith((b + "/", b + ".")) and not n.endswith("/sizes")
                ]
                # (A list of lists' `/sizes` branch is read with its values' branch.)
                halves = [
                    n
                    for n in t.keys()
                    if n.startswith((f"{b}.first", f"{b}.second")) and "/sizes" not in n
                ]
                if any(n.startswith(f"{b}.first") for n in halves) and any(
                    n.startswith(f"{b}.second") for n in halves
                ):
                    results[key] = compare_map(t, b, halves, values)
                # (A tree of no entries has no records to look at: its columns are enough.)
                elif parts and all(records(v) for v in values):
                    results[key] = compare_record(t, b, parts, values)
                    # A member whose values differ from uproot's: ROOT (TTree::Scan's
                    # formula of the member) decides.
                    if results[key][0] == "WRONG" and root_python:
                        differing = [
                            n
                            for n in parts
                            if compare_record(t, b, [n], values)[0] == "WRONG"
                        ]
                        if all(
                            root_agrees(
                                root_python,
                                path,
                                tree,
                                n,
                                as_list(t[n].array(library="ak")),
                                member=True,
                            )
                            for n in differing
                        ):
                            results[key] = ["equal-ROOT", f"uproot: {results[key][1]}"]
    for tree, b in wanted:
        results.setdefault(f"{tree}:{b}", ["missing", ""])
    return out


def compare_map(t: Any, b: str, halves: list[str], values: list[Any]) -> list[str]:
    """Compares evtc's columns of a map read whole (`b.first`, `b.second`: each entry's keys
    and values; `b.second.x` for the members of object values), or of a list of `std::pair`s,
    with uproot's lists of (key, value) pairs."""

    def part(pair: Any, k: int, path: list[str]) -> Any:
        # A map's pairs are tuples ("0", "1"); a std::pair's records have "first" and "second".
        if isinstance(pair, dict):
            item = pair[("first", "second")[k]] if "first" in pair else pair[str(k)]
        else:
            item = pair[k]
        for name in path:
            item = item[name]
        return item

    for name in halves:
        k = 0 if name.startswith(f"{b}.first") else 1
        path = [p for p in name[len(f"{b}.first" if k == 0 else f"{b}.second") :].split(".") if p]
        try:
            theirs = [[part(pair, k, path) for pair in entry] for entry in values]
        except (KeyError, TypeError, IndexError):
            return ["missing", f"uproot's {b} has no {name} in its pairs"]
        diff = first_difference(as_list(t[name].array(library="ak")), theirs)
        if diff != "equal":
            return ["WRONG", f"{name}: {diff}"]
    return ["equal", "map"]


def records(v: Any) -> bool:
    """Whether `v` is a record or (nested) lists of records."""
    return isinstance(v, dict) or (isinstance(v, list) and all(records(x) for x in v))


def compare_record(t: Any, b: str, parts: list[str], values: list[Any]) -> list[str]:
    """Compares evtc's field columns of a record branch (records, or lists of records: a vector
    of objects) with uproot's, field by field; every leaf field of uproot's records must be one
    of the columns. Of members that share a name, uproot keeps the last: only it is compared."""

    def leaves(record: Any, prefix: str = "") -> list[str]:
        if not isinstance(record, dict):
            return [prefix]
        return [p for k, v in record.items() for p in leaves(v, f"{prefix}.{k}" if prefix else k)]

    def get(record: Any, path: list[str]) -> Any:
        if isinstance(record, list):
            return [get(r, path) for r in record]
        for k in path:
            record = record[k]
        return record

    def first_record(v: Any) -> Any:
        if isinstance(v, list):
            return next((r for r in map(first_record, v) if r is not None), None)
        return v

    # A class with two members of one name (evtc's `x` and `x#2`): uproot's record keeps the
    # last one's values under `x`, so the last is compared and the others have no reference.
    last = {}
    for name in parts:
        last[re.sub(r"#\d+$", "", name)] = name
    parts = [n for n in parts if last[re.sub(r"#\d+$", "", n)] == n]
    covered = set()
    for name in parts:
        path = re.sub(r"#\d+$", "", name[len(b) + 1 :]).replace("/", ".").split(".")
        try:
            theirs = [get(v, path) for v in values]
        except (KeyError, TypeError):
            return ["missing", f"column {name} has no field in uproot's records"]
        diff = first_difference(as_list(t[name].array(library="ak")), theirs)
        if diff != "equal":
            return ["WRONG", f"{name}: {diff}"]
        covered.add(".".join(path))
    # TObject bookkeeping (fUniqueID, fBits) is not data: evtc leaves it out.
    first = first_record(values) or {}
    left = [
        f
        for f in leaves(first)
        if f not in covered and f.split(".")[-1] not in ("fUniqueID", "fBits")
    ]
    if left:
        return ["missing", f"fields {left[:5]} of the record are in no column"]
    return ["equal", "record"]


def run_child(path: Path, timeout: float, root_python: str | None) -> dict[str, Any]:
    extra = ["--root-python", root_python] if root_python else []
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(path), *extra],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"branches": {}, "uproot_fails": {}, "error": f"crash: over {timeout:.0f} s"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"branches": {}, "uproot_fails": {}, "error": f"crash: exit {done.returncode}: {tail}"}
    return json.loads(done.stdout)


def reason_group(detail: str) -> str:
    """A skip reason without its numbers and names, to count causes."""
    import re

    return re.sub(r"\d+", "N", re.sub(r'"[^"]*"|`[^`]*`', "…", detail))[:140]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write every file's results here")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--root-python", help="a Python that imports ROOT, the arbiter of disputes")
    ap.add_argument("--root-values", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--root-formula", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.root_values:
        print(json.dumps(root_values(*args.root_values)))
        return 0
    if args.root_formula:
        print(json.dumps(root_formula(*args.root_formula)))
        return 0
    if args.one:
        print(json.dumps(measure_file(args.one, args.root_python)))
        return 0
    files: list[Path] = []
    for p in map(Path, args.paths):
        files.extend(sorted(p.rglob("*.root")) if p.is_dir() else [p])
    per_file: dict[str, Any] = {}
    totals: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    uproot_fails = 0
    for path in files:
        r = run_child(path, args.timeout, args.root_python)
        per_file[str(path)] = r
        uproot_fails += len(r["uproot_fails"])
        counts = collections.Counter(c for c, _ in r["branches"].values())
        totals.update(counts)
        for c, detail in r["branches"].values():
            if c in ("skipped", "file-refused"):
                reasons[f"{c}: {reason_group(detail)}"] += 1
        status = r["error"] or " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
        print(f"{path.name}: {status or 'no trees'}", flush=True)
        for key, (c, detail) in r["branches"].items():
            if c in ("WRONG", "missing", "equal-ROOT"):
                print(f"    {c} {key}: {detail}", flush=True)
    readable = sum(totals[c] for c in CLASSES)
    print()
    print(f"{len(files)} files; {readable} branches uproot reads ({uproot_fails} it cannot)")
    for c in CLASSES:
        share = 100 * totals[c] / readable if readable else 0
        print(f"  {c:<13} {totals[c]:6d}  {share:5.1f}%")
    crashes = [p for p, r in per_file.items() if (r["error"] or "").startswith("crash")]
    print(f"  files that crashed or hung: {len(crashes)}")
    print("\nskips and refusals by cause:")
    for reason, n in reasons.most_common():
        print(f"  {n:5d}  {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps(per_file, indent=1))
    return 1 if totals["WRONG"] or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
