"""``evtc.merge``: files concatenated tree by tree, baskets copied where their layout allows;
schemas that differ; ROOT inputs; errors."""

from __future__ import annotations

import awkward as ak
import numpy as np
import pytest

import evtc


def _part(path, first: int, n: int, extra: bool = False) -> None:
    e = np.arange(first, first + n)
    data = {
        "run": (e // 100).astype(np.uint32),
        "x": e.astype(np.float64) * 0.5,
        "hits": ak.Array([[float(i)] * (i % 3) for i in e]),
    }
    if extra:
        data["extra"] = e.astype(np.int16)
    with evtc.recreate(path) as f:
        f["Events"] = data


def test_merge_concatenates_and_copies(tmp_path):
    parts = [tmp_path / f"p{i}.evtc" for i in range(3)]
    for i, p in enumerate(parts):
        _part(p, 1000 * i, 1000)
    out = tmp_path / "all.evtc"
    report = evtc.merge(out, parts)
    tree = report["trees"][0]
    assert tree["entries"] == 3000 and tree["inputs"] == 3
    assert tree["copied_baskets"] > 0 and tree["rewritten"] == []
    merged = evtc.open(out)["Events"].arrays()
    whole = ak.concatenate([evtc.open(p)["Events"].arrays() for p in parts])
    for field in whole.fields:
        assert ak.array_equal(merged[field], whole[field]), field


def test_lists_of_inputs(tmp_path):
    parts = [tmp_path / f"p{i}.evtc" for i in range(2)]
    for i, p in enumerate(parts):
        _part(p, 500 * i, 500)
    listing = tmp_path / "inputs.txt"
    listing.write_text("\n".join(str(p) for p in parts) + "\n")
    out = tmp_path / "all.evtc"
    evtc.merge(out, [f"@{listing}"])
    assert evtc.open(out)["Events"].num_entries == 1000


def test_schemas_that_differ(tmp_path):
    a, b = tmp_path / "a.evtc", tmp_path / "b.evtc"
    _part(a, 0, 300)
    _part(b, 300, 200, extra=True)
    out = tmp_path / "out.evtc"
    with pytest.raises(evtc.errors.SchemaError, match="extra"):
        evtc.merge(out, [a, b])
    assert not out.exists()
    report = evtc.merge(out, [a, b], union=True)
    assert report["trees"][0]["defaulted"] == [["extra", str(a)]]
    extra = evtc.open(out)["Events"]["extra"].array(library="np")
    assert (extra[:300] == 0).all() and (extra[300:] == np.arange(300, 500)).all()
    out.unlink()
    report = evtc.merge(out, [a, b], intersect=True)
    assert report["trees"][0]["dropped"] == ["extra"]
    with pytest.raises(ValueError):
        evtc.merge(tmp_path / "x.evtc", [a, b], union=True, intersect=True)


def test_root_inputs_and_recompression(tmp_path, nano_root):
    part = tmp_path / "nano.evtc"
    evtc.convert(nano_root, part)
    out = tmp_path / "mixed.evtc"
    report = evtc.merge(out, [part, nano_root])
    assert report["converted"] == 1
    n = evtc.open(part)["Events"].num_entries
    merged = evtc.open(out)["Events"]
    assert merged.num_entries == 2 * n
    assert ak.array_equal(
        merged["Muon_pt"].array()[n:], evtc.open(part)["Events"]["Muon_pt"].array()
    )
    again = tmp_path / "lz4.evtc"
    report = evtc.merge(again, [part, part], recompress=True, codec="lz4")
    assert report["trees"][0]["copied_baskets"] == 0


def test_bad_inputs(tmp_path):
    a = tmp_path / "a.evtc"
    _part(a, 0, 10)
    with pytest.raises(evtc.errors.OptionsError, match="one of the inputs"):
        evtc.merge(a, [a])
    junk = tmp_path / "junk.evtc"
    junk.write_bytes(b"not an evtc file at all")
    with pytest.raises(evtc.errors.Error, match="junk.evtc"):
        evtc.merge(tmp_path / "out.evtc", [a, junk])
    with pytest.raises(TypeError):
        evtc.merge(tmp_path / "out.evtc", str(a))
