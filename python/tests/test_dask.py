"""evtc.dask: partitions of whole clusters, column projection (counted), equal to eager results
on the threaded scheduler and on a LocalCluster of worker processes."""

from __future__ import annotations

import awkward as ak
import dask
import dask_awkward as dak
import numpy as np
import pytest

import evtc
from evtc import _testing


@pytest.fixture(scope="module")
def files(tmp_path_factory, nano_root):
    """Three evtc files of the sample with 4,000-entry clusters (five clusters each)."""
    out = []
    base = evtc.open(nano_root)["Events"]
    arrays = base.arrays()
    for i in range(3):
        path = tmp_path_factory.mktemp("dask") / f"nano_{i}.evtc"
        with evtc.recreate(path, cluster_size=4_000) as f:
            f["Events"] = {name: arrays[name] for name in arrays.fields}
        out.append(str(path))
    return out


def _eager(files):
    total = 0.0
    count = 0
    for path in files:
        a = evtc.open(path)["Events"].arrays(["nMuon", "Muon_pt"])
        selected = ak.values_astype(a.Muon_pt[a.nMuon >= 2], np.float64)
        total += float(ak.sum(selected))
        count += int(ak.count(selected))
    return total, count


def test_partitions_are_whole_clusters(files):
    d = evtc.dask(files, tree="Events", step_size=6_000)
    # 5 clusters of 4,000 per file; groups of at least 6,000 entries: 8000, 8000, 4000.
    assert d.npartitions == 9
    assert d.divisions == (0, 8_000, 16_000, 20_000, 28_000, 36_000, 40_000, 48_000, 56_000, 60_000)
    assert d.fields == evtc.open(files[0])["Events"].keys()


def test_column_projection_reads_only_the_used_branches(files):
    d = evtc.dask(files, step_size=10_000)
    result = ak.sum(ak.values_astype(d.Muon_pt[d.nMuon >= 2], np.float64))
    assert set(dak.report_necessary_columns(result).popitem()[1]) == {"Muon_pt", "nMuon"}
    _testing.reset_branch_reads()
    with dask.config.set(scheduler="threads"):
        total = result.compute()
    reads = _testing.branch_reads()
    assert set(reads) == {"Muon_pt", "nMuon"}
    assert reads["Muon_pt"] == d.npartitions and reads["nMuon"] == d.npartitions
    want_total, _ = _eager(files)
    assert total == pytest.approx(want_total, rel=1e-12)


def test_threaded_equals_eager(files):
    d = evtc.dask(files, step_size="1 MB")
    selected = ak.values_astype(d.Muon_pt[d.nMuon >= 2], np.float64)
    total, count = dask.compute(ak.sum(selected), ak.count(selected), scheduler="threads")
    want = _eager(files)
    assert count == want[1]
    assert total == pytest.approx(want[0], rel=1e-12)
    # A whole column also comes back equal, in order.
    pt = d.Muon_pt.compute(scheduler="threads")
    eager = ak.concatenate([evtc.open(p)["Events"]["Muon_pt"].array() for p in files])
    assert ak.array_equal(pt, eager)


def test_local_cluster_with_worker_processes(files):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        client.run(_testing.reset_branch_reads)
        d = evtc.dask(files, step_size=10_000)
        selected = ak.values_astype(d.Muon_pt[d.nMuon >= 2], np.float64)
        total, count = dask.compute(ak.sum(selected), ak.count(selected))
        reads = client.run(_testing.branch_reads)
    want = _eager(files)
    assert count == want[1]
    assert total == pytest.approx(want[0], rel=1e-12)
    assert len(reads) == 2  # two worker processes, each opened the files itself
    merged: dict[str, int] = {}
    for worker in reads.values():
        for name, n in worker.items():
            merged[name] = merged.get(name, 0) + n
    assert merged == {"Muon_pt": d.npartitions, "nMuon": d.npartitions}

