"""evtc.advise: the codec advisor from Python, as ``evtc advise``."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import evtc


def _sample(tmp_path):
    rng = np.random.default_rng(7)
    n = 20_000
    counts = rng.integers(0, 4, n)
    data = {
        "sorted": np.arange(n, dtype=np.uint32) * 40,
        "runs": np.repeat(np.arange(n // 500, dtype=np.float32), 500),
        "Muon_pt": ak.unflatten((10 + rng.exponential(20, int(counts.sum()))).astype(np.float32), counts),
    }
    path = tmp_path / "sample.evtc"
    with evtc.recreate(path) as f:
        f["Events"] = data
    return path, data


def test_advice_and_applied_file(tmp_path):
    path, data = _sample(tmp_path)
    out = tmp_path / "size.evtc"
    advice = evtc.advise(
        path, goal="size", codecs=["none", "lz4", "zstd:5"], threads=2, apply=out
    )
    branches = {b["name"]: b for b in advice["trees"][0]["branches"]}
    assert set(branches) >= {"sorted", "runs", "Muon_pt"}
    assert [g["goal"] for g in advice["goals"]] == ["size", "read", "balanced", "random"]
    for b in branches.values():
        assert b["outcomes"] and b["current"] is not None
        assert all(o["mantissa_bits"] is None for o in b["outcomes"])
    size = next(g for g in advice["goals"] if g["goal"] == "size")
    assert size["predicted"]["stored_bytes"] <= advice["current"]["stored_bytes"] * 1.005
    assert advice["applied_bytes"] == out.stat().st_size
    with evtc.open(out) as f:
        t = f["Events"]
        assert np.array_equal(t["sorted"].array(library="np"), data["sorted"])
        assert np.array_equal(t["runs"].array(library="np"), data["runs"])
        assert ak.array_equal(t["Muon_pt"].array(), data["Muon_pt"])


def test_tolerance_and_refusals(tmp_path):
    path, _ = _sample(tmp_path)
    advice = evtc.advise(
        path, codecs=["zstd:5"], rac=False, float_tolerance={"Muon_*": 1e-3}, threads=1
    )
    pt = next(b for b in advice["trees"][0]["branches"] if b["name"] == "Muon_pt")
    assert {o["mantissa_bits"] for o in pt["outcomes"]} == {None, 9}
    assert pt["lossy_max_error"] <= 1e-3
    with pytest.raises(ValueError, match="goal"):
        evtc.advise(path, goal="fast")
    with pytest.raises(ValueError, match="codec"):
        evtc.advise(path, codecs=["zstd:99"])
    with pytest.raises(evtc.OptionsError, match="Electron"):
        evtc.advise(path, branches=["Electron_*"])
    with pytest.raises(evtc.OptionsError, match="tolerance"):
        evtc.advise(path, float_tolerance={"Muon_*": 2.0})
    with pytest.raises(evtc.FileError):
        evtc.advise(tmp_path / "missing.evtc")
