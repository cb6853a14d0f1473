"""``evtc.skim`` and ``tree.skim``: chosen entries (numbers, a mask, a selection) and branches
into a new file; errors."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import evtc


@pytest.fixture(scope="module")
def nano(tmp_path_factory):
    from conftest import NANO_ROOT

    out = tmp_path_factory.mktemp("skim") / "nano.evtc"
    evtc.convert(NANO_ROOT, out)
    return out


def test_mask_entries_and_selection_agree(nano, tmp_path):
    tree = evtc.open(nano)["Events"]
    a = tree.arrays(["nMuon", "MET_pt", "Muon_pt"])
    mask = np.asarray((a.nMuon >= 2) & (a.MET_pt > 50))
    by_mask = tmp_path / "mask.evtc"
    report = tree.skim(by_mask, mask)
    assert report["entries"] == int(mask.sum()) and report["of"] == tree.num_entries
    by_where = tmp_path / "where.evtc"
    evtc.skim(nano, by_where, where="nMuon >= 2 && MET_pt > 50")
    by_entries = tmp_path / "entries.evtc"
    # Any order, repeats: written in the file's order, each once.
    chosen = np.flatnonzero(mask)
    evtc.skim(nano, by_entries, entries=np.concatenate([chosen[::-1], chosen[:3]]))
    want = tree.arrays()[mask]
    for path in (by_mask, by_where, by_entries):
        got = evtc.open(path)["Events"].arrays()
        assert got.fields == want.fields
        for field in want.fields:
            assert ak.array_equal(got[field], want[field]), (path, field)


def test_jagged_selection_and_branches(nano, tmp_path):
    out = tmp_path / "muons.evtc"
    report = evtc.skim(
        nano, out, where="any(Muon_pt > 20 && abs(Muon_eta) < 2.4)", branches=["Muon_pt"]
    )
    skimmed = evtc.open(out)["Events"]
    assert skimmed.keys() == ["nMuon", "Muon_pt"]
    pt = evtc.open(nano)["Events"].arrays(["Muon_pt", "Muon_eta"])
    keep = ak.any((pt.Muon_pt > 20) & (abs(pt.Muon_eta) < 2.4), axis=1)
    assert report["entries"] == int(ak.sum(keep))
    assert ak.array_equal(skimmed["Muon_pt"].array(), pt.Muon_pt[keep])


def test_errors(nano, tmp_path):
    out = tmp_path / "out.evtc"
    with pytest.raises(ValueError, match="at most one"):
        evtc.skim(nano, out, entries=[1], where="nMuon > 1")
    with pytest.raises(ValueError, match="at the end"):
        evtc.skim(nano, out, where="nMuon >")
    with pytest.raises(evtc.errors.Error, match="any\\(\\), all\\(\\) or count\\(\\)"):
        evtc.skim(nano, out, where="Muon_pt > 20")
    with pytest.raises(evtc.errors.Error, match="past its"):
        evtc.skim(nano, out, entries=[10**9])
    with pytest.raises(evtc.errors.Error, match="mask has 3 flags"):
        evtc.skim(nano, out, mask=[True, False, True])
    with pytest.raises(evtc.errors.Error, match="matches no branch"):
        evtc.skim(nano, out, branches=["Nope*"])
    assert not out.exists()
