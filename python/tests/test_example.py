"""examples/dimuon.py: eager, Dask threads and LocalCluster histograms are identical."""

from __future__ import annotations

import importlib.util
import os

import numpy as np

from conftest import REPO


def test_dimuon_example(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("dimuon", REPO / "examples" / "dimuon.py")
    dimuon = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dimuon)
    cwd = os.getcwd()
    os.chdir(REPO)  # the example finds data/nano_sample.root from the repository root
    try:
        files = dimuon.sample_files(str(tmp_path))
    finally:
        os.chdir(cwd)
    eager = dimuon.eager(files)
    assert eager.sum() > 1000
    assert np.array_equal(dimuon.lazy(files).compute(scheduler="threads"), eager)
    dimuon.main(files)  # exits non-zero if the LocalCluster's histogram differs
    out = capsys.readouterr().out
    assert "LocalCluster: identical" in out and "DIFFERENT" not in out
