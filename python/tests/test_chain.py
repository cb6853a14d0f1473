"""Many files as one dataset (ROOT's TChain): evtc.open of a list or a glob."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pandas as pd
import pytest

import evtc

NAMES = ["run", "event", "nMuon", "Muon_pt", "MET_pt"]


@pytest.fixture(scope="module")
def parts(nano_evtc, tmp_path_factory):
    """The sample cut into three files of unequal length (7,000, 1, 12,999 entries)."""
    d = tmp_path_factory.mktemp("chain")
    cuts = [(0, 7_000), (7_000, 7_001), (7_001, 20_000)]
    paths = []
    for k, (a, b) in enumerate(cuts):
        path = d / f"part{k}.evtc"
        evtc.open(nano_evtc)["Events"].skim(path, np.arange(a, b))
        paths.append(path)
    return paths


def test_a_list_or_a_glob_reads_as_the_whole_file(parts, nano_evtc):
    whole = evtc.open(nano_evtc)["Events"]
    for chain in (evtc.open(parts), evtc.open(str(parts[0].parent / "part*.evtc"))):
        assert isinstance(chain, evtc.Chain)
        tree = chain["Events"]
        assert tree.num_entries == 20_000 and list(tree.offsets) == [0, 7_000, 7_001, 20_000]
        assert ak.array_equal(tree.arrays(NAMES), whole.arrays(NAMES), equal_nan=True)
        # Ranges across the files' edges, negative ends as uproot counts them.
        for a, b in ((6_990, 7_010), (7_000, 7_001), (-20, None), (0, 0)):
            assert ak.array_equal(
                tree.arrays(NAMES, entry_start=a, entry_stop=b),
                whole.arrays(NAMES, entry_start=a, entry_stop=b),
            ), (a, b)
    tree = evtc.open(parts)["Events"]
    np_got, np_want = tree.arrays(NAMES, library="np"), whole.arrays(NAMES, library="np")
    assert np.array_equal(np_got["MET_pt"], np_want["MET_pt"])
    assert all(np.array_equal(x, y) for x, y in zip(np_got["Muon_pt"], np_want["Muon_pt"]))
    pd.testing.assert_frame_equal(
        tree.arrays(["run", "MET_pt"], library="pd"), whole.arrays(["run", "MET_pt"], library="pd")
    )


def test_entries_and_single_entries_are_numbered_across_files(parts, nano_evtc):
    whole = evtc.open(nano_evtc)["Events"]
    tree = evtc.open(parts)["Events"]
    chosen = np.array([19_999, 7_000, 3, 7_000, 12_345, 6_999, 0])
    assert ak.array_equal(tree.arrays(NAMES, entries=chosen), whole.arrays(NAMES, entries=chosen))
    for i in (0, 6_999, 7_000, 7_001, 19_999, -1):
        assert tree["Muon_pt"][i].tolist() == whole["Muon_pt"][i].tolist(), i
    assert ak.array_equal(tree["nMuon"].array(entry_start=6_000, entry_stop=8_000),
                          whole["nMuon"].array(entry_start=6_000, entry_stop=8_000))  # fmt: skip
    with pytest.raises(IndexError):
        tree["nMuon"][20_000]
    with pytest.raises(evtc.EntryRangeError, match="20000"):
        tree.arrays(["nMuon"], entries=[20_000])


def test_iterate_reports_entries_across_files(parts, nano_evtc):
    tree = evtc.open(parts)["Events"]
    steps = list(tree.iterate(["nMuon"], step_size=5_000, report=True))
    assert [r for _, r in steps] == [(0, 5_000), (5_000, 7_000), (7_000, 7_001), (7_001, 12_001),
                                     (12_001, 17_001), (17_001, 20_000)]  # fmt: skip
    assert ak.array_equal(
        ak.concatenate([a for a, _ in steps]), evtc.open(nano_evtc)["Events"].arrays(["nMuon"])
    )
    # The module's iterate and concatenate take a glob too.
    pattern = str(parts[0].parent / "part*.evtc")
    assert len(evtc.concatenate(pattern, ["nMuon"])) == 20_000
    assert sum(len(a) for a in evtc.iterate(pattern, ["nMuon"], step_size=10_000)) == 20_000
    lazy = evtc.dask(pattern, step_size=5_000)
    assert int(ak.sum(lazy.nMuon).compute(scheduler="sync")) == int(
        ak.sum(evtc.open(nano_evtc)["Events"]["nMuon"].array())
    )


def test_entry_of_looks_in_every_files_event_index(parts, nano_evtc, tmp_path):
    whole = evtc.open(nano_evtc)["Events"]
    run, event = whole.arrays(["run", "event"], library="np").values()
    with pytest.raises(evtc.SchemaError, match="part0.evtc.*no event index"):
        evtc.open(parts)["Events"].entry_of(int(run[0]), int(event[0]))
    indexed = []
    for p in parts:
        copy = tmp_path / p.name
        copy.write_bytes(p.read_bytes())
        evtc.index(copy, ("run", "event"))
        indexed.append(copy)
    tree = evtc.open(indexed)["Events"]
    assert tree.event_index == ("run", "event")
    for i in (0, 6_999, 7_000, 7_001, 15_000):
        assert tree.entry_of(int(run[i]), int(event[i])) == i
    got = tree.arrays(["event"], events=[(int(run[15_000]), int(event[15_000])), (int(run[2]), int(event[2]))])
    assert got["event"].tolist() == [int(event[15_000]), int(event[2])]
    with pytest.raises(evtc.KeyInFileError, match="no entry"):
        tree.entry_of(0, 0)
    # The same file twice: every event twice, named by both entries.
    twice = evtc.open([indexed[0], indexed[0]])["Events"]
    with pytest.raises(evtc.DuplicateEventError, match="entries 5, 7005"):
        twice.entry_of(int(run[5]), int(event[5]))
    assert twice.entries_of(int(run[5]), int(event[5])).tolist() == [5, 7_005]


def test_bad_chains_are_clear_errors(parts, tmp_path):
    with pytest.raises(FileNotFoundError, match="matches no file"):
        evtc.open(str(tmp_path / "nothing*.evtc"))
    with pytest.raises(ValueError, match="at least one file"):
        evtc.open([])
    with pytest.raises(ValueError, match="friends"):
        evtc.open(parts, friends=[parts[0]])
    other = tmp_path / "other.evtc"
    with evtc.recreate(other) as f:
        f["Events"] = {"nMuon": np.zeros(3, dtype=np.uint32)}
    tree = evtc.open([parts[0], other])["Events"]
    assert tree.num_entries == 7_003
    with pytest.raises(evtc.KeyInFileError, match="other.evtc has no branch 'MET_pt'"):
        tree.arrays(["MET_pt"])
    assert len(tree.arrays(["nMuon"])) == 7_003
    with pytest.raises(evtc.KeyInFileError, match="tree 'Missing' is not in"):
        evtc.open(parts)["Missing"]
