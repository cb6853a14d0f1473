"""Errors: evtc.Error subclasses with the Rust library's message; bad arguments; no crashes."""

from __future__ import annotations

import numpy as np
import pytest

import evtc


def test_missing_file(tmp_path):
    with pytest.raises(evtc.FileError) as info:
        evtc.open(tmp_path / "nope.evtc")
    assert isinstance(info.value, OSError) and "nope.evtc" in str(info.value)


def test_not_an_evtc_file(tmp_path):
    path = tmp_path / "junk.evtc"
    path.write_bytes(b"x" * 1000)
    with pytest.raises(evtc.CorruptFileError, match="not an evtc file"):
        evtc.open(path)


def test_corrupt_basket_is_located(tmp_path):
    path = tmp_path / "c.evtc"
    with evtc.recreate(path, codec="zstd:5") as f:
        f["T"] = {"x": np.arange(100_000, dtype=np.int64)}
    data = bytearray(path.read_bytes())
    data[200] ^= 0xFF  # inside the first basket
    path.write_bytes(bytes(data))
    tree = evtc.open(path)["T"]
    with pytest.raises(evtc.Error) as info:
        tree["x"].array()
    assert '"x"' in str(info.value) or "basket" in str(info.value)


def test_missing_tree_and_branch_are_key_errors(nano_evtc):
    f = evtc.open(nano_evtc)
    with pytest.raises(KeyError, match="Nope"):
        f["Nope"]
    with pytest.raises(evtc.KeyInFileError):
        f["Events"]["Muon_nope"]
    with pytest.raises(KeyError, match="Muon_nope"):
        f["Events"].arrays(["nMuon", "Muon_nope"])


def test_bad_arguments(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    with pytest.raises(ValueError, match="library"):
        tree.arrays("nMuon", library="tf")
    with pytest.raises(TypeError):
        tree.arrays("nMuon", entry_start="3")
    with pytest.raises(TypeError):
        tree.arrays("nMuon", entry_stop=2.5)
    with pytest.raises(TypeError):
        tree.arrays([1, 2])
    with pytest.raises(TypeError):
        tree.keys(filter_name=3)
    with pytest.raises(ValueError):
        next(tree.iterate("nMuon", step_size="lots"))
    with pytest.raises(ValueError):
        next(tree.iterate("nMuon", step_size=0))
    with pytest.raises(TypeError):
        evtc.open(42)
    with pytest.raises(ValueError):
        evtc.open(nano_evtc, threads=0)
    with pytest.raises(evtc.EntryRangeError):
        tree["nMuon"][tree.num_entries]
    with pytest.raises(IndexError):
        tree["Muon_pt"][10**12]


def test_convert_errors(tmp_path, nano_root):
    with pytest.raises(ValueError, match="codec"):
        evtc.convert(nano_root, tmp_path / "o.evtc", codec="brotli")
    with pytest.raises(evtc.OptionsError):
        evtc.convert(nano_root, tmp_path / "o.evtc", branches=["NoSuch*"])
    with pytest.raises(evtc.FileError):
        evtc.convert(tmp_path / "missing.root", tmp_path / "o.evtc")
    assert not (tmp_path / "o.evtc").exists()


def test_damaged_files_raise_evtc_errors_never_crash(tmp_path):
    """Bytes flipped anywhere in a file give evtc.Error (or, where a flip hits nothing checked,
    values), never another exception or a crash of the interpreter."""
    import awkward as ak

    path = tmp_path / "small.evtc"
    with evtc.recreate(path, rac=True, cluster_size=50) as f:
        f["T"] = {
            "n": np.arange(200, dtype=np.int32) % 4,
            "x": ak.unflatten(np.arange(300, dtype=np.float32), np.arange(200) % 4),
            "s": ak.Array([f"s{i}" for i in range(200)]),
        }
    good = path.read_bytes()
    rng = np.random.default_rng(5)
    errors = 0
    for position in rng.choice(len(good), size=150, replace=False):
        data = bytearray(good)
        data[position] ^= 0x5A
        path.write_bytes(bytes(data))
        try:
            tree = evtc.open(path)["T"]
            tree.arrays()
            tree["x"][123]
        except evtc.Error:
            errors += 1
    assert errors > 100  # checksums catch nearly every flip
