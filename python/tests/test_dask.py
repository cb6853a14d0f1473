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



def test_many_files_are_planned_as_the_slow_way_plans_them(files, tmp_path, nano_root):
    """Files with the first file's schema are planned natively, many at once; a file of another
    schema or a ROOT file the slow way; the partitions are the same either way."""
    names = ["nMuon", "Muon_pt"]
    links = []
    for i in range(300):
        link = tmp_path / f"link_{i:03}.evtc"
        link.symlink_to(files[i % 3])
        links.append(str(link))
    d = evtc.dask(links, filter_name=names, step_size=6_000)
    assert d.npartitions == 300 * 3
    assert d.divisions[:4] == (0, 8_000, 16_000, 20_000) and d.divisions[-1] == 300 * 20_000
    # Another schema (only the two branches, other clusters) and a ROOT file, in between.
    other = tmp_path / "other.evtc"
    arrays = evtc.open(files[0])["Events"].arrays(names)
    with evtc.recreate(other, cluster_size=10_000) as f:
        f["Events"] = {n: arrays[n] for n in names}
    mixed = [links[0], str(other), str(nano_root), links[1]]
    d = evtc.dask(mixed, filter_name=names, step_size=6_000)
    # 8,000 + 8,000 + 4,000 of the first; two clusters of 10,000 of the other; the ROOT file's
    # clusters; 8,000 + 8,000 + 4,000 of the last.
    assert d.divisions[:6] == (0, 8_000, 16_000, 20_000, 30_000, 40_000)
    assert d.divisions[-4:] == (60_000, 68_000, 76_000, 80_000)
    total = ak.sum(ak.values_astype(d.Muon_pt, np.float64)).compute(scheduler="threads")
    eager = sum(
        float(ak.sum(ak.values_astype(evtc.open(p)["Events"]["Muon_pt"].array(), np.float64)))
        for p in mixed
    )
    assert total == pytest.approx(eager, rel=1e-12)
    # A file that lacks a branch the first has: the slow way's error, naming it.
    with pytest.raises(evtc.SchemaError, match="other.evtc: branch 'MET_pt'"):
        evtc.dask([links[0], str(other)], filter_name=["nMuon", "MET_pt"])


def _kill_first_worker(part, marker):
    """Ends the worker process the first time any worker runs it (the marker file says so);
    dask-awkward's run on a type tracer, which builds the graph in this process, passes."""
    import os

    if ak.backend(part) == "typetracer":
        return part
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return part
    os._exit(1)


def test_a_worker_killed_mid_task_is_retried_with_the_same_result(files, tmp_path):
    distributed = pytest.importorskip("distributed")
    marker = str(tmp_path / "killed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster):
        d = evtc.dask(files, step_size=10_000)
        pt = d.Muon_pt.map_partitions(_kill_first_worker, marker)
        total = ak.sum(ak.values_astype(pt, np.float64)).compute()
    import os

    assert os.path.exists(marker), "a worker was killed"
    eager = sum(
        float(ak.sum(ak.values_astype(evtc.open(p)["Events"]["Muon_pt"].array(), np.float64)))
        for p in files
    )
    assert total == pytest.approx(eager, rel=1e-12)
