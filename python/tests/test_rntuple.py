"""RNTuples read through evtc's own reader: ``evtc.open(f)[name].arrays()`` equals uproot's
reading of the same file (``X.root.json``, written by make_rntuple_fixtures.py), field names,
nesting and values, or ROOT's own where uproot 5.7.7 misreads (``X.root.root.json``); and the
same through ``iterate``, ``concatenate``, single entries, NumPy, conversion and Dask.
"""

from __future__ import annotations

import json
import math

import awkward as ak
import numpy as np
import pytest

import evtc
from evtc.reading import _ak_array

from conftest import FIXTURES

# Where uproot's reading is a representation, not a misreading, evtc gives uproot's:
# `std::unique_ptr` as a list of zero or one item (ROOT: null or the value).
UPROOT_SHAPE = {"up", "uphit"}
RNTUPLES = sorted(
    p.relative_to(FIXTURES).as_posix()
    for p in [*FIXTURES.glob("rntuple_*.root"), *FIXTURES.glob("skhep/*.root")]
)


def _references(name: str) -> dict:
    """Tree -> field -> entries: uproot's values, ROOT's where uproot misreads."""
    # The five compression settings of rntuple_kinds share their references.
    stem = "rntuple_kinds" if name.startswith("rntuple_kinds_") else name
    uproot = json.loads((FIXTURES / f"{stem}.json").read_text())
    root_path = FIXTURES / (f"{stem}.root.json" if stem == "rntuple_kinds" else f"{name}.root.json")
    root = json.loads(root_path.read_text()) if root_path.exists() else {}
    out = {}
    for tree, content in uproot.items():
        if "branches" not in content:
            continue
        fields = dict(content["branches"])
        for field, values in root.get(tree, {}).get("branches", {}).items():
            if field not in UPROOT_SHAPE:
                fields[field] = values
        out[tree] = fields
    return out


def _plain(x):
    if isinstance(x, bytes):  # converted strings are byte strings (docs/python.md)
        return x.decode("utf-8", "surrogateescape")
    if isinstance(x, tuple):
        x = list(x)
    if isinstance(x, list):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a == b or abs(a - b) <= 1e-12 * abs(b)
    return a == b


@pytest.mark.parametrize("name", RNTUPLES)
def test_arrays_equal_uproots_nested_fields(name):
    f = evtc.open(FIXTURES / name)
    checked = 0
    for tree_name, fields in _references(name).items():
        tree = f[tree_name]
        arrays = tree.arrays()
        assert len(arrays) == tree.num_entries
        for field, want in fields.items():
            if not isinstance(want, list):
                continue  # a summary of a large field
            if field in tree.unsupported:
                continue
            got = _plain(ak.to_list(arrays[field]))
            assert _same(got, _plain(want)), f"{name} {tree_name}/{field}"
            checked += 1
    summarised = all(not isinstance(v, list) for t in _references(name).values() for v in t.values())
    assert checked > 0 or summarised, name


def test_fields_nest_as_uproots():
    tree = evtc.open(FIXTURES / "rntuple_fields.root")["ntpl"]
    arrays = tree.arrays(["hit", "vhit", "pr", "opt", "map", "bs"])
    assert arrays.fields == ["hit", "vhit", "pr", "opt", "map", "bs"]
    assert str(ak.type(arrays["hit"]).content) == "{x: float32, y: float32, id: int32}"
    assert str(ak.type(arrays["vhit"]).content) == "var * {x: float32, y: float32, id: int32}"
    assert str(ak.type(arrays["pr"]).content) == "(int32, string)"
    assert str(ak.type(arrays["opt"]).content) == "?float64"
    assert str(ak.type(arrays["map"]).content) == "var * (int32, float32)"
    assert str(ak.type(arrays["bs"]).content) == "10 * bool"
    # A column alone (a leaf of a record) reads as a branch does.
    x = tree.arrays(["vhit.x"])["vhit.x"]
    assert ak.to_list(x) == ak.to_list(arrays["vhit"].x)
    # Keys are the top-level fields; one field as a branch.
    assert "hit" in tree.keys() and "hit.x" not in tree.keys() and "hit.x" in tree
    assert ak.to_list(tree["vhit"].array()) == ak.to_list(arrays["vhit"])
    assert ak.to_list(tree["vhit"][3]) == ak.to_list(arrays["vhit"][3])


def test_importer_layout_reads_under_ttree_names():
    tree = evtc.open(FIXTURES / "rntuple_nano.root")["Events"]
    keys = tree.keys()
    assert "nMuon" in keys and "Muon_pt" in keys
    assert not any(k.startswith("_collection") for k in keys)
    muons = tree.arrays(["nMuon", "Muon_pt"])
    assert ak.all(ak.num(muons.Muon_pt) == muons.nMuon)


def test_iterate_concatenate_and_numpy_equal_whole_reads():
    path = FIXTURES / "rntuple_clusters.root"
    tree = evtc.open(path)["ntpl"]
    whole = tree.arrays()
    steps = list(tree.iterate(step_size=97))
    assert ak.to_list(ak.concatenate(steps)) == ak.to_list(whole)
    both = evtc.concatenate([path, path], tree="ntpl")
    assert len(both) == 2 * tree.num_entries
    numpy = tree.arrays(library="np")
    for name in tree.keys():
        assert len(numpy[name]) == tree.num_entries, name


def test_convert_writes_every_column_of_an_rntuple(tmp_path):
    source = FIXTURES / "rntuple_fields.root"
    out = tmp_path / "fields.evtc"
    summary = evtc.convert(source, out)
    assert summary["skipped"] == []
    root_tree = evtc.open(source)["ntpl"]
    converted = evtc.open(out)["ntpl"]
    # Every column of the RNTuple (converted nested lists read back whole through their
    # `name/sizes` branches).
    n = root_tree.num_entries
    for column in root_tree._info._names:
        # The column alone (a top-level `std::optional` field and its column share a name).
        info = root_tree._info[column]
        want = _ak_array([info], root_tree._read([column], 0, n), n)[column]
        got = converted.arrays([column])[column]
        assert _same(_plain(ak.to_list(got)), _plain(ak.to_list(want))), column


def test_dask_reads_only_the_fields_it_uses():
    dak = pytest.importorskip("dask_awkward")
    path = str(FIXTURES / "rntuple_nano.root")
    lazy = evtc.dask([path, path], tree="Events", step_size=40)
    total = ak.sum(lazy.nMuon)
    assert set(dak.report_necessary_columns(total).popitem()[1]) == {"nMuon"}
    eager = evtc.open(path)["Events"].arrays(["nMuon"]).nMuon
    assert total.compute() == 2 * int(np.sum(eager))


def test_dask_projects_nested_fields_to_their_columns():
    dak = pytest.importorskip("dask_awkward")
    path = str(FIXTURES / "rntuple_fields.root")
    lazy = evtc.dask(path, tree="ntpl", step_size=20)
    total = ak.sum(lazy.vhit.x)
    assert set(dak.report_necessary_columns(total).popitem()[1]) == {"vhit.x"}
    eager = evtc.open(path)["ntpl"].arrays(["vhit"]).vhit.x
    assert total.compute() == pytest.approx(float(ak.sum(eager)))
    whole = lazy.compute()
    assert ak.to_list(whole.hit) == ak.to_list(evtc.open(path)["ntpl"].arrays(["hit"]).hit)


def test_arrow_gets_an_rntuples_columns():
    pa = pytest.importorskip("pyarrow")
    tree = evtc.open(FIXTURES / "rntuple_kinds_505.root")["ntpl"]
    table = pa.table(tree.arrow())
    columns = tree._info._names
    assert table.column_names == columns
    assert table.num_rows == tree.num_entries
