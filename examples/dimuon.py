#!/usr/bin/env python3
"""Dimuon invariant-mass histogram over several evtc files: eagerly, with Dask's threaded
scheduler, and on a dask.distributed LocalCluster of worker processes, with identical results.

    .venv/bin/python examples/dimuon.py [FILE.evtc ...]

Without arguments it converts the repository's sample (data/nano_sample.root) into three evtc
files with 5,000-entry clusters in a temporary directory and uses those.
"""

from __future__ import annotations

import sys
import tempfile

import awkward as ak
import numpy as np

import evtc

EDGES = np.linspace(0.0, 120.0, 61)  # GeV


def dimuon_mass(events: ak.Array) -> ak.Array:
    """Invariant mass of the two muons of events with exactly two muons of opposite charge
    (muon mass neglected)."""
    mu = events[(events.nMuon == 2)]
    mu = mu[ak.sum(mu.Muon_charge, axis=1) == 0]
    pt, eta, phi = mu.Muon_pt, mu.Muon_eta, mu.Muon_phi
    return np.sqrt(
        2 * pt[:, 0] * pt[:, 1] * (np.cosh(eta[:, 0] - eta[:, 1]) - np.cos(phi[:, 0] - phi[:, 1]))
    )


def histogram(mass: ak.Array) -> np.ndarray:
    return np.histogram(ak.to_numpy(mass), bins=EDGES)[0]


BRANCHES = ["nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "Muon_charge"]


def eager(files: list[str]) -> np.ndarray:
    counts = np.zeros(len(EDGES) - 1, dtype=np.int64)
    for path in files:
        for events in evtc.open(path)["Events"].iterate(BRANCHES, step_size="50 MB"):
            counts += histogram(dimuon_mass(events))
    return counts


def lazy(files: list[str]):
    """The same histogram as a Dask computation: one histogram per partition, summed."""
    import dask

    events = evtc.dask(files, tree="Events", step_size=5_000)
    mass = dimuon_mass(events)  # only nMuon and the four muon branches it uses are read
    # One histogram per partition (the optimised graph, with column projection), then their sum.
    per_partition = [dask.delayed(histogram)(part) for part in mass.to_delayed(optimize_graph=True)]
    return dask.delayed(lambda hs: np.sum(hs, axis=0))(per_partition)


def sample_files(folder: str) -> list[str]:
    arrays = evtc.open("data/nano_sample.root")["Events"].arrays()
    files = []
    for i in range(3):
        path = f"{folder}/nano_{i}.evtc"
        part = arrays[i * len(arrays) // 3 : (i + 1) * len(arrays) // 3]
        with evtc.recreate(path, cluster_size=5_000) as f:
            f["Events"] = {name: part[name] for name in part.fields}
        files.append(path)
    return files


def main(files: list[str]) -> None:
    import distributed

    import dask_awkward as dak

    want = eager(files)
    mass = dimuon_mass(evtc.dask(files, tree="Events", step_size=5_000))
    print(f"Dask reads these branches: {sorted(dak.report_necessary_columns(mass).popitem()[1])}")
    threaded = lazy(files).compute(scheduler="threads")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        clustered = client.compute(lazy(files)).result()
    print(f"{want.sum()} dimuon candidates in {len(files)} files; mass histogram, {EDGES[1] - EDGES[0]:.0f} GeV bins:")
    peak = EDGES[np.argmax(want)]
    print(f"  fullest bin {peak:.0f}-{peak + EDGES[1] - EDGES[0]:.0f} GeV with {want.max()} entries")
    for name, got in (("Dask threads", threaded), ("Dask LocalCluster", clustered)):
        same = np.array_equal(got, want)
        print(f"  {name}: {'identical' if same else 'DIFFERENT'} to the eager histogram")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1:])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(sample_files(tmp))
