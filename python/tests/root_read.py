"""Reads a tree of a ROOT file with ROOT itself and prints its values as JSON, for the tests
of evtc's ROOT output (python/tests/test_root_output.py), which run it with a Python that has
PyROOT (ROOT 6.34 or later):

    python root_read.py FILE TREE [FILE TREE ...]

The JSON is a list, one item per tree, each mapping a way of reading to
{branch: [value of each entry]}: an RNTuple is read with
RNTupleReader (a view per field) and RDataFrame, a TTree with TTree::GetEntry and RDataFrame.
Lists are lists, strings str, NaN the string "nan".
"""

from __future__ import annotations

import json
import math
import re
import sys

import ROOT  # noqa: N811 - ROOT's name

ROOT.gErrorIgnoreLevel = ROOT.kError


def plain(value, chars: bool = False):
    """A value read by ROOT as JSON: numbers, str, lists of them; with ``chars`` (a column of
    8-bit integers, which PyROOT gives as one-character str), characters as their numbers."""
    if isinstance(value, (bool, int)):
        return int(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else value
    if isinstance(value, str):
        if chars and len(value) == 1:
            return ord(value) - (256 if chars == "signed" and ord(value) > 127 else 0)
        return value
    if isinstance(value, bytes):
        return value.decode()
    name = type(value).__name__
    if name in ("string", "TString") or name.startswith("basic_string"):
        return str(value)
    if hasattr(value, "__len__") and hasattr(value, "__getitem__"):
        return [plain(value[i], chars) for i in range(len(value))]
    if hasattr(value, "item"):  # a NumPy scalar
        return plain(value.item(), chars)
    return plain(float(value)) if "float" in name or "double" in name else int(value)


def char_kind(type_name: str):
    """Whether a C++ type holds 8-bit integers (PyROOT gives them as characters): "signed",
    True (unsigned) or False."""
    t = type_name.replace("std::", "").lower()
    if "string" in t:
        return False
    if "uchar" in t or "unsigned char" in t or "uint8" in t:
        return True
    return "signed" if "char" in t or "int8" in t else False


def nest(items: list, dims: list[int]) -> list:
    """Flat ``items`` as lists of lists of ``dims`` (innermost last)."""
    for d in reversed(dims):
        items = [items[k : k + d] for k in range(0, len(items), d)]
    return items


def rdataframe(path: str, tree: str, columns: list[str], shapes: dict[str, list[int]]) -> dict:
    """The columns through RDataFrame, whose arrays are flat (``x[2][3]`` as 6 values): nested
    again by ``shapes``."""
    df = ROOT.RDataFrame(tree, path)
    types = {c: str(df.GetColumnType(c)) for c in columns}
    # Every column booked first: one event loop reads them all.
    taken = {c: df.Take[types[c]](c) for c in columns}
    out = {}
    for c in columns:
        values = taken[c].GetValue()
        out[c] = [plain(values[i], char_kind(types[c])) for i in range(values.size())]
        if shapes.get(c):
            out[c] = [nest(v, shapes[c]) for v in out[c]]
    return out


def ntuple(path: str, tree: str) -> dict:
    reader = ROOT.RNTupleReader.Open(tree, path)
    descriptor = reader.GetDescriptor()
    out = {}
    for field in descriptor.GetTopLevelFields():
        name = str(field.GetFieldName())
        t = str(field.GetTypeName())
        view = reader.GetView[t](name)
        out[name] = [plain(view(i), char_kind(t)) for i in range(reader.GetNEntries())]
        del view  # before the reader, which owns its pages
    del descriptor, reader
    return out


def ttree(path: str, tree: str, shapes: dict[str, list[int]]) -> dict:
    """The branches through TTree::GetEntry; the inner dimensions of arrays go to ``shapes``."""
    f = ROOT.TFile.Open(path)
    t = f.Get(tree)
    branches = [b for b in t.GetListOfBranches()]
    out = {b.GetName(): [] for b in branches}
    for i in range(t.GetEntries()):
        t.GetEntry(i)
        for b in branches:
            leaf = b.GetLeaf(b.GetName())
            name = b.GetName()
            chars = char_kind(str(leaf.GetTypeName()))
            try:
                value = getattr(t, name)
            except AttributeError:
                # PyROOT has no attribute for some leaves (Char_t): the leaf's own values.
                value = [leaf.GetValue(k) for k in range(leaf.GetLen())]
                value = value if leaf.GetLeafCount() or leaf.GetLenStatic() > 1 else value[0]
                out[name].append(plain(value))
                continue
            if b.ClassName() == "TBranchElement" or leaf.ClassName() == "TLeafC":
                out[name].append(plain(value, chars))
            elif leaf.GetLeafCount() or leaf.GetLenStatic() > 1:
                dims = [int(d) for d in re.findall(r"\[(\d+)\]", str(leaf.GetTitle()))]
                if not leaf.GetLeafCount() and len(dims) > 1:  # x[2][3]: a 2-d view
                    value = [v for row in value for v in row]
                # Nested as evtc reads them: x[2][3] as 2 lists of 3, x[n][2] as n lists of 2.
                shapes[name] = dims if leaf.GetLeafCount() else dims[1:]
                items = [plain(value[k], chars) for k in range(leaf.GetLen())]
                out[name].append(nest(items, shapes[name]))
            else:
                out[name].append(plain(value, chars))
    return out


def read(path: str, tree: str) -> dict:
    f = ROOT.TFile.Open(path)
    is_ntuple = f.GetKey(tree).GetClassName() == "ROOT::RNTuple"
    shapes: dict[str, list[int]] = {}
    if is_ntuple:
        result = {"rntuplereader": ntuple(path, tree)}
    else:
        result = {"getentry": ttree(path, tree, shapes)}
    f.Close()
    columns = list(next(iter(result.values())))
    result["rdataframe"] = rdataframe(path, tree, columns, shapes)
    return result


def main() -> None:
    pairs = sys.argv[1:]
    print(json.dumps([read(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]))


if __name__ == "__main__":
    main()
