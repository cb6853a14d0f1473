"""The way back to ROOT: files written with ``to="rntuple"`` or ``to="ttree"`` (by
``evtc.convert``, ``evtc.recreate`` and ``evtc.dask_write``) read by uproot and, where a
Python with PyROOT is found (``EVTC_ROOT_PYTHON``, or the repository's ``.venv-root``), by ROOT
itself: RNTupleReader, TTree::GetEntry and RDataFrame, every value equal to what evtc read
from the input."""

from __future__ import annotations

import functools
import json
import math
import os
import pathlib
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
import uproot

import evtc

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "crates" / "root" / "tests" / "fixtures"
FORMATS = ["rntuple", "ttree"]
# ROOT files of the kinds written as they were read: TTree leaves, fixed arrays, vectors at
# any depth, strings, an event index; RNTuple fields of those kinds; and the NanoAOD-like
# sample. (Records, pairs, optional values, maps and variants are written as their columns:
# crates/tools/tests/export.rs checks those column by column.)
INPUTS = [
    "kinds_505.root",
    "deep.root",
    "ttree_lists.root",
    "ttree_index.root",
    "rntuple_nano.root",
    "rvec.root",
]
# And the sample (not read through ROOT's Python, entry by entry: too slow for a test).
NANO = str(REPO / "data" / "nano_sample.root")


def _root_name(name: str, to: str) -> str:
    refused = " /[]" if to == "ttree" else ". /\\"
    return "".join("_" if c in refused else c for c in name)


def _plain(value):
    """A value as JSON holds it: NaN as "nan", bools as ints, bytes as str."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, bytes):
        return value.decode()
    return value


def _evtc_values(path, tree: str, to: str) -> dict[str, list]:
    """Every branch of ``tree`` as evtc reads it, by its name in a ``to`` output (an evtc
    file's nested lists are one branch, their ``X/sizes`` part of it)."""
    arrays = evtc.open(path)[tree].arrays()
    return {
        _root_name(f, to): _plain(arrays[f].to_list())
        for f in arrays.fields
        if not f.endswith("/sizes")
    }


@functools.cache
def _root_python() -> str | None:
    """A Python with PyROOT, or None."""
    candidates = [os.environ.get("EVTC_ROOT_PYTHON"), str(REPO / ".venv-root" / "bin" / "python")]
    for python in filter(None, candidates):
        try:
            done = subprocess.run(
                [python, "-c", "import ROOT; ROOT.RNTupleReader"],
                capture_output=True,
                timeout=300,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return python
    return None


def _root_read(trees: list[tuple[pathlib.Path, str]]) -> list[dict[str, dict[str, list]]]:
    """Each ``(path, tree)`` as ROOT reads it (``root_read.py``, in one process)."""
    python = _root_python()
    if python is None:
        pytest.skip("ROOT is not installed: set EVTC_ROOT_PYTHON to a Python with PyROOT")
    args = [str(a) for pair in trees for a in pair]
    done = subprocess.run(
        [python, str(pathlib.Path(__file__).with_name("root_read.py")), *args],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _same(got: dict[str, list], want: dict[str, list], what: str) -> None:
    assert set(got) == set(want), f"{what}: branches {sorted(got)} != {sorted(want)}"
    for name in want:
        assert got[name] == want[name], f"{what}: {name} differs"


@pytest.fixture(scope="module", params=FORMATS)
def to(request):
    return request.param


@pytest.mark.parametrize("name", [*INPUTS, NANO])
def test_root_inputs_convert_and_uproot_reads_them(tmp_path, name, to):
    source = FIXTURES / name
    out = tmp_path / f"{to}.root"
    summary = evtc.convert(source, out, to=to, skip_unsupported=True)
    assert summary["output_format"] == to
    with uproot.open(out) as f:
        for tree in summary["trees"]:
            t = tree["name"]
            want = _evtc_values(source, t, to)
            got = {k: _plain(f[t][k].array(library="ak").to_list()) for k in f[t].keys(recursive=False)}
            _same(got, want, f"{name} -> {to}: uproot")


@pytest.fixture(scope="module")
def through_evtc(tmp_path_factory):
    """Every input converted to evtc (with RAC) and from there to each ROOT format:
    ``{(input, to): (evtc file, ROOT file, tree names)}``."""
    out = {}
    for name in INPUTS:
        directory = tmp_path_factory.mktemp("through_evtc")
        evtc_file = directory / "x.evtc"
        evtc.convert(FIXTURES / name, evtc_file, skip_unsupported=True, rac=True)
        for to in FORMATS:
            root_file = directory / f"{to}.root"
            summary = evtc.convert(evtc_file, root_file, to=to)
            out[name, to] = (evtc_file, root_file, [t["name"] for t in summary["trees"]])
    return out


@pytest.fixture(scope="module")
def read_by_root(through_evtc):
    """What ROOT reads in each of ``through_evtc``'s files, by (input, to, tree)."""
    keys = [(name, to, t) for (name, to), (_, _, trees) in through_evtc.items() for t in trees]
    read = _root_read([(through_evtc[name, to][1], t) for name, to, t in keys])
    return dict(zip(keys, read))


@pytest.mark.parametrize("name", INPUTS)
def test_root_reads_what_evtc_writes(through_evtc, read_by_root, name, to):
    evtc_file, _, trees = through_evtc[name, to]
    for tree in trees:
        want = _evtc_values(evtc_file, tree, to)
        for how, got in read_by_root[name, to, tree].items():
            _same(got, want, f"{name} -> evtc -> {to}: ROOT's {how}")


def _muons(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, n)
    pt = ak.unflatten(rng.exponential(20, counts.sum()).astype(np.float32), counts)
    return {
        "event": np.arange(n, dtype=np.uint64) + seed * 1000,
        "Muon": ak.zip({"pt": pt, "charge": ak.values_astype(pt > 10, np.int8)}),
        "tag": np.array([f"e{i}" for i in range(n)], dtype=str),
        "weights": rng.normal(size=(n, 3)),
    }


def test_recreate_writes_root_files_in_batches(tmp_path, to):
    path = tmp_path / "muons.root"
    batches = [_muons(n, seed) for seed, n in enumerate([5, 0, 1200, 33])]
    with evtc.recreate(path, to=to, cluster_size=500, branch_codec={"Muon_*": "lz4"}) as f:
        f["Events"] = batches[0]
        for b in batches[1:]:
            f["Events"].extend(b)
        assert f["Events"].num_entries == 1238
    with uproot.open(path) as f:
        t = f["Events"]
        assert t.num_entries == 1238
        assert t.keys() == ["event", "nMuon", "Muon_pt", "Muon_charge", "tag", "weights"]
        pt = t["Muon_pt"].array()
        want = ak.concatenate([b["Muon"].pt for b in batches])
        assert ak.all(ak.flatten(pt) == ak.flatten(want))
        assert t["tag"].array().to_list()[-1] == "e32"
        np.testing.assert_array_equal(
            t["weights"].array(library="np"), np.concatenate([b["weights"] for b in batches])
        )
    # evtc reads it back too, and so does ROOT.
    assert evtc.open(path)["Events"].num_entries == 1238
    if _root_python() is not None:
        (read,) = _root_read([(path, "Events")])
        for how, got in read.items():
            assert got["nMuon"] == ak.num(want).to_list(), how
            assert got["Muon_pt"] == pt.to_list(), how


def test_root_outputs_refuse_what_they_cannot_hold(tmp_path):
    target = tmp_path / "out.root"
    with pytest.raises(evtc.OptionsError, match="to=rntuple"):
        evtc.recreate(target)
    with pytest.raises(evtc.OptionsError, match="rac"):
        evtc.recreate(target, to="rntuple", rac=True)
    with pytest.raises(ValueError, match="unknown output format"):
        evtc.recreate(target, to="parquet")
    # A name ROOT refuses names the branch; nothing is left.
    f = evtc.recreate(target, to="ttree")
    with pytest.raises(evtc.SchemaError, match="a/b"):
        f["Events"] = {"a/b": np.arange(3)}
    f.abort()
    # A failed write leaves nothing; an existing file stays until the new one is closed.
    target.write_bytes(b"precious")
    with pytest.raises(RuntimeError):
        with evtc.recreate(target, to="rntuple") as f:
            f["Events"] = {"x": np.arange(3)}
            raise RuntimeError("the analysis failed")
    assert target.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.root"]
    with pytest.raises(evtc.OutputExistsError):
        evtc.convert(FIXTURES / "kinds_505.root", target, to="rntuple")


def test_dask_writes_one_root_file_per_partition(tmp_path, nano_evtc, to):
    pytest.importorskip("dask_awkward")
    events = evtc.dask(nano_evtc, filter_name=["run", "event", "nMuon", "Muon_pt"], step_size=5000)
    skim = events[events.nMuon > 0]
    paths = evtc.dask_write(skim, tmp_path / "skim", to=to, codec="lz4")
    assert len(paths) == events.npartitions
    assert [pathlib.Path(p).name for p in paths] == [f"part{i}.root" for i in range(len(paths))]
    got = uproot.concatenate([f"{p}:Events" for p in paths], ["event", "Muon_pt"])
    want = skim.compute()
    assert got["event"].to_list() == want["event"].to_list()
    assert ak.all(ak.flatten(got["Muon_pt"]) == ak.flatten(want["Muon_pt"]))
    # Lazily: nothing is written until computed.
    lazy = evtc.dask_write(skim, tmp_path / "lazy", to=to, compute=False)
    assert os.listdir(tmp_path / "lazy") == []
    assert len(lazy.compute()) == len(paths)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
