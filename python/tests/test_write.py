"""Writing: round trips from NumPy and Awkward for every type, refusals, atomic files."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import evtc

NUMBER_TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"]


def _values(dtype: str, n: int, rng) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.startswith("float"):
        v = rng.normal(size=n).astype(dtype)
        v[::7] = np.nan
        return v
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("codec", ["zstd:5", "lz4"])
@pytest.mark.parametrize("rac", [False, True])
def test_round_trip_every_type(tmp_path, codec, rac):
    rng = np.random.default_rng(1)
    n = 3_000
    data = {}
    for t in NUMBER_TYPES:
        data[f"s_{t}"] = _values(t, n, rng)
        data[f"f_{t}"] = _values(t, n * 3, rng).reshape(n, 3)
        counts = rng.integers(0, 5, n)
        counts[:10] = 0  # empty lists, including at the start
        data[f"j_{t}"] = ak.unflatten(_values(t, int(counts.sum()), rng), counts)
    data["text"] = ak.Array([f"event {i} é" * (i % 3) for i in range(n)])
    data["raw"] = ak.Array([bytes([i % 256]) * (i % 4) for i in range(n)])
    path = tmp_path / "types.evtc"
    with evtc.recreate(path, codec=codec, rac=rac, cluster_size=1_000) as f:
        first = {k: v[: n // 2] for k, v in data.items()}
        rest = {k: v[n // 2 :] for k, v in data.items()}
        f["T"] = first
        f["T"].extend(rest)
        assert f["T"].num_entries == n
    tree = evtc.open(path)["T"]
    assert tree.num_entries == n and tree.cluster_ends == [1_000, 2_000, 3_000]
    got = tree.arrays()
    for name, want in data.items():
        if isinstance(want, np.ndarray):
            assert got[name].to_numpy().dtype == want.dtype, name
            assert np.array_equal(got[name].to_numpy(), want, equal_nan=want.dtype.kind == "f"), name
        else:
            assert ak.array_equal(got[name], want, equal_nan=True), name
    # Entry reads (through cursors, RAC units when on) agree with the bulk read.
    for i in (0, 11, 1_499, 1_500, n - 1):
        assert np.array_equal(tree["j_float32"][i], want_j := data["j_float32"][i].to_numpy(), equal_nan=True), want_j
        assert tree["text"][i] == data["text"][i]
        assert tree["raw"][i] == data["raw"][i]


def test_records_become_prefixed_branches_with_a_counter(tmp_path):
    muons = ak.zip({"pt": ak.Array([[30.5, 20.0], [], [7.25]]), "charge": ak.Array([[1, -1], [], [1]])})
    path = tmp_path / "rec.evtc"
    with evtc.recreate(path) as f:
        f["Events"] = {"Muon": muons, "run": np.array([1, 1, 2], dtype=np.uint32)}
    tree = evtc.open(path)["Events"]
    assert tree.keys() == ["nMuon", "Muon_pt", "Muon_charge", "run"]
    assert tree["Muon_pt"].counter == "nMuon"
    assert tree["nMuon"].array().to_list() == [2, 0, 1]
    assert tree["Muon_pt"].array().to_list() == [[30.5, 20.0], [], [7.25]]


def test_explicit_counter_must_match(tmp_path):
    with evtc.recreate(tmp_path / "c.evtc") as f:
        with pytest.raises(evtc.SchemaError, match="nJet"):
            f["Events"] = {"nJet": np.array([1, 2], dtype=np.int32), "Jet_pt": ak.Array([[1.0], [2.0]])}


def test_per_branch_codecs(tmp_path):
    path = tmp_path / "codecs.evtc"
    x = np.arange(10_000, dtype=np.float32)
    with evtc.recreate(path, codec="zstd:5", branch_codec={"Muon_*": "lz4", "Muon_eta": "lzma:3"}) as f:
        f["T"] = {"Muon_pt": x, "Muon_eta": x, "Jet_pt": x}
    tree = evtc.open(path)["T"]
    assert [tree[n].info.codec for n in ("Muon_pt", "Muon_eta", "Jet_pt")] == ["lz4", "lzma:3", "zstd:5"]


def test_per_branch_rac(tmp_path):
    path = tmp_path / "rac.evtc"
    x = ak.unflatten(np.arange(30_000, dtype=np.float32), np.full(10_000, 3))
    with evtc.recreate(path, branch_rac={"Jet_*": True, "Jet_eta": False}) as f:
        f["T"] = {"Jet_pt": x, "Jet_eta": x, "Muon_pt": x}
    tree = evtc.open(path)["T"]
    assert [tree[n].info.rac for n in ("Jet_pt", "Jet_eta", "Muon_pt")] == [True, False, False]
    assert list(tree["Jet_pt"][4_321]) == [12_963.0, 12_964.0, 12_965.0]


def test_file_appears_only_when_closed(tmp_path):
    path = tmp_path / "late.evtc"
    f = evtc.recreate(path)
    f["T"] = {"x": np.arange(5, dtype=np.int64)}
    assert not path.exists()
    f.close()
    assert evtc.open(path)["T"]["x"].array().to_list() == [0, 1, 2, 3, 4]


def test_exception_in_with_block_leaves_no_file(tmp_path):
    path = tmp_path / "never.evtc"
    with pytest.raises(RuntimeError):
        with evtc.recreate(path) as f:
            f["T"] = {"x": np.arange(5, dtype=np.int64)}
            raise RuntimeError("analysis failed")
    assert list(tmp_path.iterdir()) == []


def test_several_trees_one_after_another(tmp_path):
    path = tmp_path / "two.evtc"
    with evtc.recreate(path) as f:
        f["Events"] = {"x": np.arange(3, dtype=np.int32)}
        f["Runs"] = {"run": np.array([7], dtype=np.int64)}
        with pytest.raises(ValueError, match="finished"):
            f["Events"].extend({"x": np.arange(3, dtype=np.int32)})
    r = evtc.open(path)
    assert r.keys() == ["Events", "Runs"]
    assert r["Events"]["x"].array().to_list() == [0, 1, 2]
    assert r["Runs"]["run"].array().to_list() == [7]


@pytest.mark.parametrize(
    "value, error",
    [
        (np.array([1 + 2j]), TypeError),
        (np.array([1.0], dtype=np.float16), TypeError),
        (np.array([[1], [2]], dtype=object), TypeError),
        (np.zeros((2, 2, 2)), TypeError),
        ([1, 2, 3], TypeError),
        (ak.Array([[[1.0]], [[2.0]]]), TypeError),
        (ak.Array([1.0, None]), TypeError),
    ],
)
def test_unsupported_inputs_are_refused(tmp_path, value, error):
    path = tmp_path / "bad.evtc"
    with evtc.recreate(path) as f:
        with pytest.raises(error):
            f["T"] = {"x": value}
    assert not path.exists() or evtc.open(path).keys() == []


def test_bad_batches(tmp_path):
    with evtc.recreate(tmp_path / "b.evtc") as f:
        with pytest.raises(ValueError, match="different numbers of entries"):
            f["T"] = {"a": np.arange(3), "b": np.arange(4)}
        f["U"] = {"a": np.arange(3)}
        assert "T" not in f._finished  # refused before the tree was started
        with pytest.raises(ValueError, match="missing"):
            f["U"].extend({"b": np.arange(3)})
        with pytest.raises(TypeError, match="int64"):
            f["U"].extend({"a": np.arange(3, dtype=np.float32)})
        with pytest.raises(TypeError):
            f["V"] = [1, 2]
    with pytest.raises(ValueError):
        evtc.recreate(tmp_path / "x.evtc", codec="zstd:99")
    with pytest.raises(ValueError):
        evtc.recreate(tmp_path / "x.evtc", rac="sometimes")


def test_a_file_never_closed_leaves_nothing(tmp_path):
    import gc

    f = evtc.recreate(tmp_path / "forgotten.evtc")
    f["T"] = {"x": np.arange(10, dtype=np.int64)}
    del f
    gc.collect()
    assert list(tmp_path.iterdir()) == []


def test_convert_per_branch_settings_and_lossy_precision(tmp_path):
    rng = np.random.default_rng(3)
    n = 5_000
    counts = rng.integers(0, 4, n)
    pt = (10 + rng.exponential(20, int(counts.sum()))).astype(np.float32)
    eta = rng.uniform(-2.4, 2.4, n).astype(np.float32)
    src = tmp_path / "src.evtc"
    with evtc.recreate(src) as f:
        f["Events"] = {"Muon": ak.zip({"pt": ak.unflatten(pt, counts)}), "eta": eta,
                       "n": np.arange(n, dtype=np.uint32)}
    out = tmp_path / "out.evtc"
    evtc.convert(src, out, branch_codec={"n": "lz4"}, branch_precondition={"n": "delta"},
                 branch_rac={"eta": True}, float_precision={"Muon_*": 10},
                 float_quantize={"eta": (-2.5, 2.5, 12)}, threads=1)
    with evtc.open(out) as f:
        t = f["Events"]
        got_pt = ak.flatten(t["Muon_pt"].array()).to_numpy()
        assert np.all(np.abs(got_pt - pt) <= np.abs(pt) * 2.0**-11)
        assert not np.array_equal(got_pt, pt)
        got_eta = t["eta"].array(library="np")
        assert np.all(np.abs(got_eta.astype(np.float64) - eta) <= 5.0 / 4095 / 2 + 1e-6)
        assert np.array_equal(t["n"].array(library="np"), np.arange(n, dtype=np.uint32))
    with pytest.raises(evtc.SchemaError, match="outside the quantization range"):
        evtc.convert(src, tmp_path / "bad.evtc", float_quantize={"eta": (-1, 1, 12)})
    with pytest.raises(ValueError, match="quantize"):
        evtc.convert(src, tmp_path / "bad.evtc", float_quantize={"eta": (1, -1, 12)})
    with pytest.raises(ValueError, match="float_precision"):
        evtc.convert(src, tmp_path / "bad.evtc", float_precision={"eta": "ten"})
    with pytest.raises(TypeError, match="float_precision"):
        evtc.convert(src, tmp_path / "bad.evtc", float_precision={"eta": object()})


def test_convert_with_bitplanes_reads_back(tmp_path):
    # NanoAOD-like jets: mantissas rounded to 10 bits, so their low bit-planes are zeros.
    rng = np.random.default_rng(5)
    n = 20_000
    counts = rng.integers(0, 6, n)
    pt = (10 + rng.exponential(20, int(counts.sum()))).astype(np.float32)
    pt = (pt.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    src = tmp_path / "src.evtc"
    with evtc.recreate(src) as f:
        f["Events"] = {"Jet": ak.zip({"pt": ak.unflatten(pt, counts)})}
    jets = ak.unflatten(pt, counts)
    for rac in (False, True):
        out = tmp_path / f"bitplanes-{rac}.evtc"
        evtc.convert(src, out, precondition="bitplanes", rac=rac, threads=1)
        with evtc.open(out) as f:
            branch = f["Events"]["Jet_pt"]
            assert np.array_equal(ak.flatten(branch.array()).to_numpy(), pt)
            for entry in (0, 12_345, n - 1):
                got = branch.array(entry_start=entry, entry_stop=entry + 1)
                assert got.to_list() == jets[entry:entry + 1].to_list()
    with pytest.raises(ValueError, match="bitplanes"):
        evtc.convert(src, tmp_path / "bad.evtc", precondition="bitplane")
