"""Random batches: ``tree.arrays(entries=...)`` in any order with repeats, ``tree.batches``
(a seeded permutation, batch by batch), ``evtc.ml.numpy_batches`` and the PyTorch adapter."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import evtc
from evtc.ml import numpy_batches
from evtc.reading import _Permutation


def test_entries_in_any_order_with_repeats(nano_evtc, nano_lz4_offsets, nano_root):
    for path in (nano_evtc, nano_lz4_offsets, nano_root):
        tree = evtc.open(path)["Events"]
        names = ["run", "nMuon", "Muon_pt", "Jet_pt", "HLT_IsoMu24"]
        every = tree.arrays(names)
        picks = np.array([19_999, 5, 5, 12_000, 0, 7, 19_999, 3])
        got = tree.arrays(names, entries=picks)
        assert got.fields == every.fields
        for name in names:
            assert ak.array_equal(got[name], every[name][picks]), (path, name)
        np_got = tree.arrays(["nMuon", "Muon_pt"], entries=picks, library="np")
        np_all = tree.arrays(["nMuon", "Muon_pt"], library="np")
        assert np_got["nMuon"].tolist() == np_all["nMuon"][picks].tolist()
        for k, e in enumerate(picks):
            assert np_got["Muon_pt"][k].tolist() == np_all["Muon_pt"][e].tolist()
        assert len(tree.arrays(["nMuon"], entries=np.array([], dtype=np.int64))) == 0
        assert len(tree.arrays(["nMuon"], entries=[])) == 0


def test_entries_are_checked(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    with pytest.raises(evtc.EntryRangeError, match="entry 20000 is outside 0..20000"):
        tree.arrays(["nMuon"], entries=[3, 20_000])
    with pytest.raises(evtc.EntryRangeError, match="entry -1"):
        tree.arrays(["nMuon"], entries=[-1])
    with pytest.raises(TypeError, match="integer array"):
        tree.arrays(["nMuon"], entries=[0.5])
    with pytest.raises(TypeError, match="integer array"):
        tree.arrays(["nMuon"], entries=np.zeros((2, 2), dtype=int))
    with pytest.raises(ValueError, match="one of an entry range, entries and events"):
        tree.arrays(["nMuon"], entries=[1], entry_stop=5)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 1000, 20_000, 65_537])
def test_the_permutation_visits_every_entry_once(n):
    order = _Permutation(n, seed=11)(np.arange(n, dtype=np.uint64))
    assert sorted(order.tolist()) == list(range(n))
    if n >= 1000:
        assert order.tolist() != list(range(n))
        again = _Permutation(n, seed=11)(np.arange(n, dtype=np.uint64))
        assert order.tolist() == again.tolist()
        other = _Permutation(n, seed=12)(np.arange(n, dtype=np.uint64))
        assert order.tolist() != other.tolist()


def test_batches_cover_the_tree_once_per_pass(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    every = tree.arrays(["event", "Muon_pt"])
    seen = []
    for batch in tree.batches(3000, ["event", "Muon_pt"], seed=5):
        assert len(batch) <= 3000
        seen.extend(batch.event.tolist())
        # The batch's rows are the entries of those events, whole.
        at = np.searchsorted(every.event.to_numpy(), batch.event.to_numpy())
        assert ak.array_equal(batch.Muon_pt, every.Muon_pt[at])
    assert sorted(seen) == sorted(every.event.tolist())
    assert seen != every.event.tolist()
    sizes = [len(b) for b in tree.batches(3000, ["event"], shuffle=False, drop_last=True)]
    assert sizes == [3000] * 6
    first = next(iter(tree.batches(4, ["event"], shuffle=False)))
    assert first.event.tolist() == every.event[:4].tolist()


def test_numpy_batches_split_between_workers(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    parts = [
        list(numpy_batches(tree, ["event", "MET_pt"], 1000, seed=3, worker=(k, 3)))
        for k in range(3)
    ]
    events = np.concatenate([b["event"] for part in parts for b in part])
    assert sorted(events.tolist()) == sorted(tree.arrays(["event"], library="np")["event"].tolist())
    assert all(b["MET_pt"].dtype == np.float32 and b["MET_pt"].shape == (1000,) for part in parts for b in part)
    with pytest.raises(TypeError, match="pad variable-length ones first"):
        next(numpy_batches(tree, ["Muon_pt"], 10))
    with pytest.raises(ValueError, match="worker must be"):
        next(numpy_batches(tree, ["MET_pt"], 10, worker=(3, 3)))


def test_torch_dataset(nano_evtc):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the adapter is not tested here")
    from evtc.ml import TorchDataset

    data = TorchDataset(nano_evtc, ["event", "MET_pt"], 4096, seed=1)
    loader = torch.utils.data.DataLoader(data, batch_size=None, num_workers=2)
    events = torch.cat([b["event"] for b in loader])
    assert sorted(events.tolist()) == sorted(evtc.open(nano_evtc)["Events"].arrays(["event"], library="np")["event"].tolist())
