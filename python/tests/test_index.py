"""Event indexes from Python: ``evtc.index``, ``convert(index=...)``, a ROOT TTreeIndex kept,
``tree.entry_of``, ``tree.entries_of`` and ``tree.arrays(events=...)``, and their errors."""

from __future__ import annotations

import json

import awkward as ak
import numpy as np
import pytest

import evtc


@pytest.fixture(scope="module")
def nano(tmp_path_factory):
    from conftest import NANO_ROOT

    out = tmp_path_factory.mktemp("index") / "nano.evtc"
    evtc.convert(NANO_ROOT, out, rac=True)
    return out


def test_index_then_look_events_up(nano, tmp_path):
    path = tmp_path / "indexed.evtc"
    path.write_bytes(nano.read_bytes())
    assert evtc.open(path)["Events"].event_index is None
    with pytest.raises(evtc.SchemaError, match="has no event index"):
        evtc.open(path)["Events"].entry_of(1, 1)
    summary = evtc.index(path, ("run", "event"))
    assert summary["rows"] == 20000 and summary["tree"] == "Events"
    tree = evtc.open(path)["Events"]
    assert tree.event_index == ("run", "event")
    keys = tree.arrays(["run", "event"], library="np")
    for e in (0, 1, 9999, 19999):
        run, event = int(keys["run"][e]), int(keys["event"][e])
        assert tree.entry_of(run, event) == e
        assert tree.entries_of(run, event).tolist() == [e]
    assert tree.entries_of(12345, 1).tolist() == []
    with pytest.raises(evtc.KeyInFileError, match=r"no entry with \(run, event\) = \(12345, 1\)"):
        tree.entry_of(12345, 1)
    # A key out of the branch's type (a negative run of an unsigned branch) is absent too.
    assert tree.entries_of(-1, 0).size == 0
    picked = [(int(keys["run"][e]), int(keys["event"][e])) for e in (7, 3, 19000)]
    got = tree.arrays(["event", "Muon_pt"], events=picked)
    want = tree.arrays(["event", "Muon_pt"])[[7, 3, 19000]]
    assert ak.array_equal(got, want)
    np_got = tree.arrays(["event", "Muon_pt"], events=picked, library="np")
    assert np_got["event"].tolist() == [p[1] for p in picked]
    assert len(tree.arrays(["event"], events=[])) == 0
    with pytest.raises(evtc.KeyInFileError):
        tree.arrays(["event"], events=[picked[0], (12345, 1)])
    with pytest.raises(TypeError, match="pair of integers"):
        tree.entry_of("1", 2)
    with pytest.raises(ValueError, match="one of an entry range, entries and events"):
        tree.arrays(["event"], events=picked, entry_start=0)


def test_duplicates_are_named(tmp_path):
    path = tmp_path / "dups.evtc"
    with evtc.recreate(path) as f:
        f["Events"] = {"run": np.array([1, 1, 1, 2], np.int32), "event": np.array([5, 6, 5, 5], np.uint64)}
    evtc.index(path, ("run", "event"))
    tree = evtc.open(path)["Events"]
    assert tree.entries_of(1, 5).tolist() == [0, 2]
    with pytest.raises(evtc.DuplicateEventError, match=r"\(run, event\) = \(1, 5\) is held by 2 entries.*0, 2"):
        tree.entry_of(1, 5)
    assert tree.entry_of(2, 5) == 3


def test_convert_keeps_a_root_tree_index_and_makes_one_asked_for(tmp_path):
    from conftest import FIXTURES, NANO_ROOT

    out = tmp_path / "ti.evtc"
    summary = evtc.convert(FIXTURES / "ttree_index.root", out)
    assert [t["event_index"] for t in summary["trees"]] == [["run", "event"], None, None]
    assert "is not kept" in summary["trees"][1]["index_dropped"]
    root_tree = evtc.open(FIXTURES / "ttree_index.root")["Expr"]
    assert root_tree.event_index == ("run*10", "event%7")
    with pytest.raises(evtc.UnsupportedError, match="convert the ROOT file"):
        root_tree.entry_of(10, 0)
    by_root = json.loads((FIXTURES / "ttree_index.root.root.json").read_text())["Events"]["index"]
    tree = evtc.open(out)["Events"]
    for major, minor, entry in by_root["rows"]:
        assert entry in tree.entries_of(major, minor).tolist()
    asked = tmp_path / "asked.evtc"
    summary = evtc.convert(NANO_ROOT, asked, index=("luminosityBlock", "event"))
    assert summary["trees"][0]["event_index"] == ["luminosityBlock", "event"]
    assert evtc.open(asked)["Events"].event_index == ("luminosityBlock", "event")
    with pytest.raises(evtc.SchemaError, match="not an integer scalar"):
        evtc.convert(NANO_ROOT, tmp_path / "bad.evtc", index=("run", "MET_pt"))
    # The command line's spelling is taken too; one key is not an index.
    spelled = tmp_path / "spelled.evtc"
    evtc.convert(NANO_ROOT, spelled, index="luminosityBlock,event")
    assert evtc.open(spelled)["Events"].event_index == ("luminosityBlock", "event")
    with pytest.raises(ValueError, match="two branch names"):
        evtc.convert(NANO_ROOT, tmp_path / "bad.evtc", index="run")
