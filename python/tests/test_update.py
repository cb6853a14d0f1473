"""Files that grow: evtc.update (extend, add_columns, new trees), convert(append=True),
evtc.add_columns, friend trees; the file never half-written, a second writer refused."""

from __future__ import annotations

import subprocess
import sys

import awkward as ak
import numpy as np
import pytest

import evtc
from evtc.errors import FileBusyError, OptionsError, SchemaError


def _batch(first: int, n: int) -> dict:
    rng = np.random.default_rng(first)
    counts = rng.integers(0, 4, n)
    return {
        "run": np.full(n, 7, np.uint32),
        "event": np.arange(first, first + n, dtype=np.uint64),
        "Muon": ak.zip({"pt": ak.unflatten(rng.normal(size=int(counts.sum())).astype(np.float32), counts)}),
        "text": ak.Array([f"e{first + i}" * (i % 3) for i in range(n)]),
        "p": np.arange(3 * n, dtype=np.float64).reshape(n, 3) + first,
    }


def _write(path, n=1000, **options):
    with evtc.recreate(path, cluster_size=250, **options) as f:
        f["Events"] = _batch(0, n)


@pytest.mark.parametrize("codec,rac", [("zstd:5", False), ("lz4", True), ("lzma:6", True)])
def test_extend_appends_entries_in_place(tmp_path, codec, rac):
    path = tmp_path / "f.evtc"
    _write(path, codec=codec, rac=rac)
    before = path.read_bytes()
    with evtc.update(path) as f:
        tree = f["Events"]
        assert tree.num_entries == 1000
        tree.extend(_batch(1000, 300))
        tree.extend(_batch(1300, 200))
        assert tree.num_entries == 1500
    assert path.read_bytes().startswith(before)
    events = evtc.open(path)["Events"]
    assert events.num_entries == 1500
    got = events.arrays()
    want = ak.concatenate([evtc.open(tmp_path / "f.evtc")["Events"].arrays(entry_stop=1000)] + [
        ak.Array({k: v for k, v in _flat(_batch(a, n)).items()}) for a, n in [(1000, 300), (1300, 200)]
    ])
    for name in ["run", "event", "Muon_pt", "nMuon", "text", "p"]:
        assert ak.to_list(got[name][1000:]) == ak.to_list(want[name][1000:]), name
    assert ak.to_list(events.arrays("event")["event"]) == list(range(1500))


def _flat(batch: dict) -> dict:
    out = dict(batch)
    muon = out.pop("Muon")
    out["nMuon"] = ak.num(muon.pt).to_numpy().astype(np.int32)
    out["Muon_pt"] = muon.pt
    return out


def test_add_columns_numpy_and_awkward(tmp_path):
    path = tmp_path / "f.evtc"
    _write(path)
    before = path.read_bytes()
    scores = np.linspace(0, 1, 1000, dtype=np.float32)
    jets = ak.unflatten(np.arange(2000, dtype=np.float64), np.tile([1, 3], 500))
    with evtc.update(path, rac=True) as f:
        f["Events"].add_columns({"score": scores, "Jet": ak.zip({"pt": jets}), "tags": ak.Array([[1, 2]] * 1000)})
        assert "score" in f["Events"].keys
    assert path.read_bytes().startswith(before)
    events = evtc.open(path)["Events"]
    assert events.keys() == ["run", "event", "nMuon", "Muon_pt", "text", "p", "score", "nJet", "Jet_pt", "tags"]
    got = events.arrays(["score", "Jet_pt", "nJet", "tags", "event"])
    np.testing.assert_array_equal(got["score"].to_numpy(), scores)
    assert ak.to_list(got["Jet_pt"]) == ak.to_list(jets)
    assert ak.to_list(got["tags"][:2]) == [[1, 2], [1, 2]]
    # Random entries of an added (RAC) branch and an old one together.
    picked = events.arrays(["score", "event"], entries=np.array([999, 3, 3]))
    assert ak.to_list(picked["event"]) == [999, 3, 3]
    np.testing.assert_array_equal(picked["score"].to_numpy(), scores[[999, 3, 3]])
    # Clashes and lengths are refused before anything is written.
    with evtc.update(path) as f:
        with pytest.raises(ValueError, match=r"has branches \['score'\] already"):
            f["Events"].add_columns({"score": scores})
        with pytest.raises(ValueError, match="has 1000 entries; the columns have 999"):
            f["Events"].add_columns({"other": scores[:-1]})


def test_extend_checks_the_branches_and_types(tmp_path):
    path = tmp_path / "f.evtc"
    _write(path, n=10)
    before = path.read_bytes()
    batch = _batch(10, 5)
    with pytest.raises(ValueError, match=r"missing \['text'\]"):
        with evtc.update(path) as f:
            f["Events"].extend({k: v for k, v in batch.items() if k != "text"})
    batch["run"] = batch["run"].astype(np.int64)
    with pytest.raises(TypeError, match="branch 'run' is scalar uint32, the data is scalar int64"):
        with evtc.update(path) as f:
            f["Events"].extend(batch)
    # A failed update leaves the file as it was.
    assert path.read_bytes() == before
    with evtc.update(path) as f:
        with pytest.raises(KeyError):
            f["Nope"]
        with pytest.raises(ValueError, match="the file has a tree 'Events'"):
            f["Events"] = _batch(0, 3)
        f["Runs"] = {"run": np.array([7], np.uint32)}
    assert evtc.open(path).keys() == ["Events", "Runs"]


def test_a_second_writer_is_refused_and_readers_see_the_old_version(tmp_path):
    path = tmp_path / "f.evtc"
    _write(path, n=100)
    f = evtc.update(path)
    f["Events"].extend(_batch(100, 50))
    with pytest.raises(FileBusyError, match="another writer is updating this file"):
        evtc.update(path)
    assert evtc.open(path)["Events"].num_entries == 100
    f.close()
    assert evtc.open(path)["Events"].num_entries == 150
    # A writer abandoned (or its process killed) leaves the last version.
    f = evtc.update(path)
    f["Events"].extend(_batch(150, 50))
    f.abort()
    assert evtc.open(path)["Events"].num_entries == 150
    code = (
        "import evtc, os, sys; sys.path.insert(0, %r); from test_update import _batch;"
        "f = evtc.update(%r); f['Events'].extend(_batch(150, 5000)); os._exit(0)"
    ) % (str(__import__("pathlib").Path(__file__).parent), str(path))
    subprocess.run([sys.executable, "-c", code], check=True)
    assert evtc.open(path)["Events"].num_entries == 150
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.evtc"]
    with evtc.update(path) as f:
        f["Events"].extend(_batch(150, 10))
    assert evtc.open(path)["Events"].num_entries == 160


def test_convert_append_and_add_columns_functions(tmp_path):
    a, b = tmp_path / "a.evtc", tmp_path / "b.evtc"
    _write(a, n=300)
    _write(b, n=200)
    summary = evtc.convert(b, a, append=True)
    assert summary["trees"][0]["entries"] == 200
    assert evtc.open(a)["Events"].num_entries == 500
    with evtc.recreate(tmp_path / "s.evtc") as f:
        f["Events"] = {"score": np.arange(500, dtype=np.float64)}
    report = evtc.add_columns(a, tmp_path / "s.evtc", codec="lz4")
    assert report["added"] == ["score"] and report["entries"] == 500
    np.testing.assert_array_equal(evtc.open(a)["Events"]["score"].array(library="np"), np.arange(500.0))
    with pytest.raises(OptionsError, match="has 200 entries in .*b.evtc and 500 in .*s.evtc"):
        evtc.add_columns(tmp_path / "b.evtc", tmp_path / "s.evtc")
    with pytest.raises(OptionsError, match="the input lacks"):
        with evtc.recreate(tmp_path / "c.evtc") as f:
            f["Events"] = {"x": np.arange(3)}
        evtc.convert(tmp_path / "c.evtc", a, append=True)


def test_friends_read_as_the_trees_own(tmp_path):
    path, scores = tmp_path / "f.evtc", tmp_path / "scores.evtc"
    _write(path, n=1000)
    with evtc.recreate(scores, rac=True) as f:
        f["Scores"] = {"score": np.arange(1000, dtype=np.float32), "Jet": ak.zip({"pt": ak.Array([[1.0]] * 1000)}), "run": np.zeros(1000, np.int8)}
    events = evtc.open(path, friends=[scores])["Events"]
    assert events.keys() == ["run", "event", "nMuon", "Muon_pt", "text", "p", "score", "nJet", "Jet_pt"]
    got = events.arrays(["event", "score", "Jet_pt", "run"])
    np.testing.assert_array_equal(got["score"].to_numpy(), np.arange(1000, dtype=np.float32))
    assert ak.all(got["run"] == 7)  # the tree's own branch of that name
    picked = events.arrays(["score", "event"], entries=np.array([5, 2]))
    assert ak.to_list(picked) == [{"score": 5.0, "event": 5}, {"score": 2.0, "event": 2}]
    steps = list(events.iterate(["score", "event"], step_size=300))
    assert [len(s) for s in steps] == [300, 300, 300, 100]
    assert ak.to_list(steps[1]["score"][:2]) == [300.0, 301.0]
    np.testing.assert_array_equal(events.arrays("score", library="np")["score"], np.arange(1000, dtype=np.float32))
    with evtc.recreate(tmp_path / "short.evtc") as f:
        f["Events"] = {"x": np.arange(3)}
    with pytest.raises(SchemaError, match="has 3 entries, tree 'Events' of .* has 1000"):
        evtc.open(path, friends=[tmp_path / "short.evtc"])["Events"]
    with pytest.raises(TypeError, match="friends must be a list"):
        evtc.open(path, friends=str(scores))


def test_added_columns_are_ordinary_branches_for_dask_and_arrow(tmp_path):
    pytest.importorskip("dask_awkward")
    import pyarrow as pa

    path = tmp_path / "f.evtc"
    _write(path, n=1000)
    with evtc.update(path, rac=True) as f:
        f["Events"].add_columns({"score": np.arange(1000, dtype=np.float64)})
    d = evtc.dask([str(path)], step_size=300)
    np.testing.assert_array_equal(d["score"].compute().to_numpy(), np.arange(1000.0))
    table = pa.table(evtc.open(path)["Events"].arrow(["event", "score"]))
    assert table.column("score").to_pylist()[-1] == 999.0
