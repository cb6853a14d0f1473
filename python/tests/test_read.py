"""Reading: values equal to uproot's reading of the original ROOT file, in every library."""

from __future__ import annotations

import io
import json
import re
import sys

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest
import uproot

import evtc

from conftest import FIXTURES, NANO_ROOT


@pytest.fixture(scope="module")
def uproot_nano():
    with uproot.open(NANO_ROOT) as f:
        yield f["Events"].arrays(library="ak")


@pytest.fixture(params=["root", "rac", "rac_mapped", "lz4_offsets"])
def nano(request, nano_evtc, nano_lz4_offsets):
    if request.param == "rac_mapped":
        return evtc.open(nano_evtc, threads=2, mmap=True)["Events"]
    path = {"root": NANO_ROOT, "rac": nano_evtc, "lz4_offsets": nano_lz4_offsets}[request.param]
    return evtc.open(path, threads=2)["Events"]


def test_keys_and_entries(nano, uproot_nano):
    assert nano.num_entries == len(uproot_nano) == 20_000
    assert nano.keys() == uproot_nano.fields and len(nano) == len(uproot_nano.fields)
    assert nano.keys(filter_name="Muon_*") == [f for f in uproot_nano.fields if f.startswith("Muon_")]
    counters = [f for f in uproot_nano.fields if re.match("^n[A-Z]", f)]
    assert len(counters) >= 2 and nano.keys(filter_name="/^n[A-Z]/") == counters
    assert nano.keys(filter_name=lambda n: n == "nMuon") == ["nMuon"]


def test_every_branch_equals_uproot(nano, uproot_nano):
    arrays = nano.arrays(library="ak")
    assert arrays.fields == uproot_nano.fields
    for name in uproot_nano.fields:
        mine, theirs = arrays[name], uproot_nano[name]
        assert str(mine.type.content) == str(theirs.type.content), name
        assert ak.array_equal(mine, theirs, equal_nan=True), name


def test_counter_bounded_lists_have_the_counter_lengths(nano):
    a = nano.arrays(filter_name=["nMuon", "Muon_*", "nJet", "Jet_*"])
    for counter, prefix in (("nMuon", "Muon_"), ("nJet", "Jet_")):
        for field in a.fields:
            if field.startswith(prefix):
                assert np.array_equal(ak.to_numpy(ak.num(a[field])), ak.to_numpy(a[counter])), field


@pytest.mark.parametrize("start,stop", [(0, 1), (12_345, 12_400), (19_990, None), (-5, None), (7, 7)])
def test_entry_ranges(nano, uproot_nano, start, stop):
    got = nano.arrays(["nMuon", "Muon_pt", "event"], entry_start=start, entry_stop=stop)
    want = uproot_nano[["nMuon", "Muon_pt", "event"]][slice(start, stop)]
    assert len(got) == len(want)
    assert ak.array_equal(got, want)


def test_out_of_range_entries_are_clipped_like_uproot(nano):
    assert len(nano.arrays("nMuon", entry_start=19_999, entry_stop=10**9)) == 1
    assert len(nano.arrays("nMuon", entry_start=5, entry_stop=2)) == 0


def test_iterate_concatenates_to_the_whole(nano, uproot_nano):
    steps = list(nano.iterate(["Muon_pt", "run"], step_size=3_000, report=True))
    assert [r for _, r in steps][:2] == [(0, 3_000), (3_000, 6_000)]
    assert sum(len(a) for a, _ in steps) == 20_000
    whole = ak.concatenate([a for a, _ in steps])
    assert ak.array_equal(whole, uproot_nano[["Muon_pt", "run"]])


def test_iterate_by_memory_size(nano):
    raw = sum(nano[n].info.raw_bytes for n in ["Muon_pt", "Muon_eta"])
    steps = list(nano.iterate(["Muon_pt", "Muon_eta"], step_size=f"{raw // 4 / 1e6} MB"))
    assert 4 <= len(steps) <= 5
    assert sum(len(s) for s in steps) == 20_000


def test_single_entries_equal_uproot(nano, uproot_nano):
    rng = np.random.default_rng(7)
    for i in rng.integers(0, 20_000, size=50):
        assert np.array_equal(nano["Muon_pt"][int(i)], uproot_nano["Muon_pt"][i].to_numpy())
        assert nano["event"][int(i)] == uproot_nano["event"][i]
    assert np.array_equal(nano["Jet_pt"][-1], uproot_nano["Jet_pt"][-1].to_numpy())


def test_library_np(nano, uproot_nano):
    a = nano.arrays(["nMuon", "Muon_pt", "event"], entry_stop=100, library="np")
    assert a["nMuon"].dtype == np.int32 and a["event"].dtype == uproot_nano["event"].to_numpy().dtype
    assert a["Muon_pt"].dtype == object and len(a["Muon_pt"]) == 100
    for i in range(100):
        assert np.array_equal(a["Muon_pt"][i], uproot_nano["Muon_pt"][i].to_numpy())
    # The scalar column is the decoded buffer itself, not a copy owned by NumPy; each entry of a
    # jagged one a view of its values.
    assert _owner(a["nMuon"]) == "PySliceContainer"
    assert _owner(a["Muon_pt"][3]) == "PySliceContainer"
    assert a["Muon_pt"][3].dtype == np.float32 and a["Muon_pt"][3].flags.c_contiguous


def test_split_views_and_strings_check_their_offsets():
    from evtc import _lib

    values = np.arange(6, dtype=np.int16)
    views = _lib.split_views(values, np.array([0, 2, 2, 6], dtype=np.uint64))
    assert [v.tolist() for v in views] == [[0, 1], [], [2, 3, 4, 5]]
    views[2][0] = 40  # a view: its values array sees it
    assert values[2] == 40
    for bad in ([0, 3, 2], [0, 7]):
        with pytest.raises(ValueError, match="non-decreasing and end within the 6 values"):
            _lib.split_views(values, np.array(bad, dtype=np.uint64))
    with pytest.raises(ValueError, match="one-dimensional contiguous"):
        _lib.split_views(np.zeros((2, 2)), np.array([0, 1], dtype=np.uint64))
    text = np.frombuffer(b"abc\xffde", dtype=np.uint8)
    assert _lib.split_strings(text, np.array([0, 3, 6], dtype=np.uint64), True).tolist() == ["abc", "\ufffdde"]
    assert _lib.split_strings(text, np.array([0, 0, 6], dtype=np.uint64), False).tolist() == [b"", b"abc\xffde"]


def _owner(array: np.ndarray) -> str:
    """The type of the object that owns an array's memory (rust-numpy's PySliceContainer holds a
    Rust Vec handed to NumPy without a copy)."""
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return type(array).__name__


def test_awkward_arrays_are_views_of_the_decoded_buffers(nano):
    a = nano.arrays(["nMuon", "Muon_pt"])
    assert _owner(ak.to_layout(a["nMuon"]).data) == "PySliceContainer"
    pt = ak.to_layout(a["Muon_pt"])
    assert _owner(pt.content.data) == "PySliceContainer"
    # evtc's offsets are shared with the reader (the jagged branches of one counter use one
    # buffer), so NumPy gets a read-only view of them that cannot be made writeable again.
    offsets = pt.offsets.data
    assert _owner(offsets) == ("PySliceContainer" if nano.file.format == "root" else "SharedOffsets")
    if _owner(offsets) == "SharedOffsets":
        assert not offsets.flags.writeable
        with pytest.raises(ValueError):
            offsets.flags.writeable = True
        with pytest.raises(ValueError):
            offsets[0] = 1


def test_jagged_branches_of_one_counter_have_the_same_offsets(nano):
    a = nano.arrays(["Muon_pt", "Muon_eta"])
    pt, eta = (ak.to_layout(a[name]).offsets.data for name in ("Muon_pt", "Muon_eta"))
    assert np.array_equal(pt, eta) and pt[0] == 0 and len(pt) == 20_001
    # A range of entries: offsets from 0 for each branch.
    a = nano.arrays(["Muon_pt", "Muon_eta"], entry_start=5, entry_stop=500)
    pt, eta = (ak.to_layout(a[name]).offsets.data for name in ("Muon_pt", "Muon_eta"))
    assert np.array_equal(pt, eta) and pt[0] == 0 and len(pt) == 496


def test_library_pd(nano, uproot_nano):
    df = nano.arrays(["nMuon", "Muon_pt", "event"], entry_start=10, entry_stop=60, library="pd")
    assert list(df.columns) == ["nMuon", "Muon_pt", "event"] and len(df) == 50
    assert np.array_equal(df["nMuon"].to_numpy(), uproot_nano["nMuon"][10:60].to_numpy())
    assert np.array_equal(df["Muon_pt"].iloc[3], uproot_nano["Muon_pt"][13].to_numpy())


def test_branch_array(nano, uproot_nano):
    assert ak.array_equal(nano["Jet_eta"].array(entry_start=100, entry_stop=200), uproot_nano["Jet_eta"][100:200])
    assert np.array_equal(nano["run"].array(library="np"), uproot_nano["run"].to_numpy())


def test_show_lists_every_branch(nano):
    out = io.StringIO()
    nano.show(stream=out)
    for name in nano.keys():
        assert name in out.getvalue()


KINDS = sorted(FIXTURES.glob("kinds_*.root"))


@pytest.mark.parametrize("path", KINDS, ids=[p.name for p in KINDS])
def test_root_fixtures_every_branch_kind(path, tmp_path):
    """Every branch kind of the ROOT fixtures (written by ROOT at several compression settings),
    read directly and after conversion, equals the expected values and uproot."""
    expected = json.loads((FIXTURES / "kinds.json").read_text())["Events"]
    converted = tmp_path / "kinds.evtc"
    summary = evtc.convert(path, converted)
    assert summary["skipped"] == []
    # The unsplit TLorentzVector, member by member.
    assert "lv.fE" in evtc.open(path)["Events"].keys()
    up = uproot.open(path)["Events"]
    for source in (path, converted):
        tree = evtc.open(source)["Events"]
        assert tree.num_entries == expected["entries"]
        arrays = tree.arrays()
        for name, values in expected["branches"].items():
            got = arrays[name].to_list()
            if isinstance(values, dict):  # summaries of big branches
                continue
            theirs = up[name].array(library="ak").to_list() if name in up.keys() else values
            if name in ("str", "cstr"):
                # Strings stay text through the conversion.
                assert all(isinstance(v, str) for v in got), (source.name, name)
            assert _close(got, values), (source.name, name)
            assert _close(got, theirs), (source.name, name)
            for i in (0, 1, 7, len(values) - 1):  # single entries of every kind
                one = tree[name][i]
                one = [list(x) for x in one] if name == "vvf" else one
                one = one.tolist() if isinstance(one, (np.ndarray, np.generic)) else one
                assert _close(one, values[i]), (source.name, name, i)


def test_root_strings_and_lists_of_strings(tmp_path):
    """STL and TString members of split objects, std::vector<std::string> and a collection's
    TStrings read directly and after conversion (characters plus a "name/sizes" branch) as lists
    of strings in every library and entry by entry."""
    path = FIXTURES / "stlmembers.root"
    expected = json.loads((FIXTURES / "stlmembers.root.json").read_text())["Events"]["branches"]
    by_root = json.loads((FIXTURES / "stlmembers.root.root.json").read_text())["Events"]["branches"]
    expected["tags/tags.name"] = by_root["tags/tags.name"]  # uproot 5.7 misreads it
    converted = tmp_path / "stl.evtc"
    assert evtc.convert(path, converted)["skipped"] == []
    assert "vs/sizes" in evtc.open(converted)["Events"].keys()

    def text(x):  # lists as lists; a string must be a str, as uproot gives it
        return [text(i) for i in x] if isinstance(x, list) else x

    for source in (path, converted):
        tree = evtc.open(source)["Events"]
        arrays = tree.arrays(["vs", "obj/names", "tags/tags.name", "obj/label", "obj/tag"])
        as_np = tree.arrays(["vs", "tags/tags.name"], library="np")
        table = pa.table(tree.arrow(["vs", "tags/tags.name"]))
        for name in ("vs", "obj/names", "tags/tags.name", "obj/label", "obj/tag"):
            assert text(arrays[name].to_list()) == expected[name], (source.name, name)
            for i in (0, 2, 3, 29):
                assert text(tree[name][i]) == expected[name][i], (source.name, name, i)
        for name in ("vs", "tags/tags.name"):
            assert [text(list(x)) for x in as_np[name]] == expected[name], (source.name, name)
            assert text(table[name].to_pylist()) == expected[name], (source.name, name)


def _text(x):
    """Bytes as str, through nested lists."""
    return [_text(i) for i in x] if isinstance(x, list) else x.decode() if isinstance(x, bytes) else x


def _plain(x):
    """NumPy arrays as lists, through nested lists."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    return [_plain(i) for i in x] if isinstance(x, list) else x


def _check_every_library(tree, expected: dict, entries: tuple, where: str) -> None:
    """Each branch of `expected` (name -> entries) read into Awkward, NumPy and Arrow, and the
    `entries` one by one, equals its expected values."""
    names = list(expected)
    arrays = tree.arrays(names)
    as_np = tree.arrays(names, library="np")
    table = pa.table(tree.arrow(names))
    for name, want in expected.items():
        assert _text(arrays[name].to_list()) == want, (where, name)
        assert [_text(_plain(list(x))) for x in as_np[name]] == want, (where, name)
        assert _text(table[name].to_pylist()) == want, (where, name)
        for i in entries:
            assert _text(_plain(tree[name][i])) == want[i], (where, name, i)


def test_root_maps_sets_and_lists_of_lists_of_strings(tmp_path):
    """Maps (their keys and values, `name.first` and `name.second`), sets and
    std::vector<std::vector<std::string>> read directly and after conversion (characters plus
    "name/sizes" and "name/sizes/sizes") in every library and entry by entry, as ROOT reads them."""
    path = FIXTURES / "maps.root"
    by_root = json.loads((FIXTURES / "maps.root.root.json").read_text())["Events"]["branches"]
    expected = {
        "vvs": by_root["vvs"],
        "obju.vvs": by_root["obju.vvs"],
        "si0": by_root["si0"],
        "ss": by_root["ss"],
        "msvf0.first": [[k for k, _ in entry] for entry in by_root["msvf0"]],
        "msvf0.second": [[v for _, v in entry] for entry in by_root["msvf0"]],
        "obj1/mis.second": [[v for _, v in entry] for entry in by_root["obj1/mis"]],
    }
    names = list(expected)
    converted = tmp_path / "maps.evtc"
    assert evtc.convert(path, converted)["skipped"] == []
    keys = evtc.open(converted)["Events"].keys()
    assert "vvs/sizes" in keys and "vvs/sizes/sizes" in keys

    for source in (path, converted):
        tree = evtc.open(source)["Events"]
        # Strings stay strings through the conversion.
        assert tree["vvs"].info.kind == "string3"
        _check_every_library(tree, expected, (0, 2, 3, 15, 29), source.name)


def test_root_values_more_than_two_lists_deep(tmp_path):
    """Vectors three and four lists deep (of numbers and of strings), a vector of vectors in a
    vector of objects and a fixed array of objects, read directly and after conversion (values
    plus a chain of "name/sizes" branches) in every library and entry by entry, as ROOT reads
    them."""
    path = FIXTURES / "deep.root"
    by_root = json.loads((FIXTURES / "deep.root.root.json").read_text())["Events"]["branches"]
    names = ["v3i", "v3s", "v4f", "objs.vv", "objs_s/objs_s.tags", "ev.pg.fE"]
    depth = {"v3i": 3, "v3s": 3, "v4f": 4, "objs.vv": 3, "objs_s/objs_s.tags": 2, "ev.pg.fE": 1}
    converted = tmp_path / "deep.evtc"
    assert evtc.convert(path, converted)["skipped"] == []
    keys = evtc.open(converted)["Events"].keys()
    assert "v4f/sizes/sizes/sizes" in keys and "v4f/sizes/sizes/sizes/sizes" not in keys

    for source in (path, converted):
        tree = evtc.open(source)["Events"]
        for name in names:
            base = "string" if name in ("v3s", "objs_s/objs_s.tags") else "jagged"
            # A string is a list of characters: its kind counts one list more.
            n = depth[name] + (base != "jagged")
            assert tree[name].info.kind == (base if n == 1 else f"{base}{n}"), (source.name, name)
        _check_every_library(tree, {name: by_root[name] for name in names}, (0, 4, 5, 23), source.name)


def test_unsupported_root_branches(tmp_path):
    """A branch the ROOT reader refuses is an UnsupportedError with the reason, when read or
    converted; convert(skip_unsupported=True) converts the rest."""
    path = FIXTURES / "partial.root"
    tree = evtc.open(path)["Events"]
    assert "late" in tree.unsupported and "late" not in tree.keys()
    with pytest.raises(evtc.UnsupportedError, match="holds 4 entries, its tree 14"):
        tree["late"]
    with pytest.raises(evtc.UnsupportedError, match="late"):
        tree.arrays(["late"])
    out = tmp_path / "partial.evtc"
    with pytest.raises(evtc.UnsupportedError):
        evtc.convert(path, out)
    assert not out.exists()
    summary = evtc.convert(path, out, skip_unsupported=True)
    assert sorted(s["branch"] for s in summary["skipped"]) == sorted(tree.unsupported)
    assert evtc.open(out)["Events"].keys() == tree.keys()


def _close(a, b) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == b or (np.isnan(a) and np.isnan(b)) or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return a == b


def test_root_layouts_subdirectories_and_cycles():
    expected = json.loads((FIXTURES / "layout.root.json").read_text())
    f = evtc.open(FIXTURES / "layout.root")
    assert "Top" in f.keys() and "sub/Events" in f.keys()
    for key, tree in expected.items():
        t = f[key]
        for name, values in tree["branches"].items():
            assert _close(t[name].array().to_list(), values), (key, name)


def test_mmap_is_for_local_paths(nano_evtc):
    data = nano_evtc.read_bytes()
    with pytest.raises(ValueError, match="mmap=True needs a local path"):
        evtc.open(io.BytesIO(data), mmap=True)
    with pytest.raises(ValueError, match="mmap=True needs a local path"):
        evtc.open("https://example.org/nano.evtc", mmap=True)
    with pytest.raises(TypeError, match="mmap must be a bool"):
        evtc.open(nano_evtc, mmap="yes")
    # A mapped ROOT file reads as the unmapped one does.
    mapped = evtc.open(NANO_ROOT, mmap=True)["Events"]["Muon_pt"].array()
    assert ak.array_equal(mapped, evtc.open(NANO_ROOT)["Events"]["Muon_pt"].array())


def test_file_like_and_bytes(nano_evtc):
    data = nano_evtc.read_bytes()
    tree = evtc.open(io.BytesIO(data))["Events"]
    assert ak.array_equal(tree["Muon_pt"].array(), evtc.open(nano_evtc)["Events"]["Muon_pt"].array())


def test_single_entries_from_many_threads_and_branches(nano_evtc):
    """Entry reads keep cursors between calls; threads reading at once and more branches than
    the cursors kept must still give the bulk read's values."""
    from concurrent.futures import ThreadPoolExecutor

    tree = evtc.open(nano_evtc)["Events"]
    names = tree.keys()
    bulk = {n: tree[n].array(library="np") for n in names}
    rng = np.random.default_rng(3)
    jobs = [(names[int(k)], int(i)) for k, i in zip(rng.integers(0, len(names), 400), rng.integers(0, 20_000, 400))]

    def check(job):
        name, i = job
        got, want = tree[name][i], bulk[name][i]
        return bool(np.array_equal(got, want))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(check, jobs))


def test_iterate_and_concatenate_over_files(nano_evtc, nano_lz4_offsets):
    files = [nano_evtc, nano_lz4_offsets]
    steps = list(evtc.iterate(files, ["nMuon", "Muon_pt"], step_size=7_000, report=True))
    assert [(p, a, b) for _, (p, a, b) in steps][:4] == [
        (nano_evtc, 0, 7_000), (nano_evtc, 7_000, 14_000), (nano_evtc, 14_000, 20_000), (nano_lz4_offsets, 0, 7_000)
    ]
    whole = evtc.concatenate(files, ["nMuon", "Muon_pt"])
    assert len(whole) == 40_000
    assert ak.array_equal(ak.concatenate([s for s, _ in steps]), whole)
    one = evtc.open(nano_evtc)["Events"].arrays(["nMuon", "Muon_pt"])
    assert ak.array_equal(whole[20_000:], one)
    np_whole = evtc.concatenate(files, "nMuon", library="np")
    assert np.array_equal(np_whole["nMuon"], ak.to_numpy(whole.nMuon))
    assert len(evtc.concatenate(files, "nMuon", library="pd")) == 40_000



def test_basket_cache_keeps_steps_equal_and_refuses_bad_sizes(nano_lz4_offsets):
    names = ["nMuon", "Muon_pt", "Jet_eta", "event"]
    plain = evtc.open(nano_lz4_offsets, threads=1, basket_cache=0)["Events"]
    cached = evtc.open(nano_lz4_offsets, threads=1, basket_cache="16 MiB")["Events"]
    steps = [list(t.iterate(names, step_size=777)) for t in (plain, cached)]
    assert len(steps[0]) == len(steps[1]) == 26
    assert all(ak.array_equal(x, y) for x, y in zip(*steps))
    assert ak.array_equal(ak.concatenate(steps[1]), cached.arrays(names))
    for bad, error in ((-1, ValueError), ("lots", ValueError), (True, TypeError), (1.5, TypeError)):
        with pytest.raises(error, match="basket_cache"):
            evtc.open(nano_lz4_offsets, basket_cache=bad)


def test_library_pd_gives_jagged_branches_as_uproot_does(nano, uproot_nano, monkeypatch):
    frame = nano.arrays(["nMuon", "Muon_pt"], entry_stop=50, library="pd")
    assert [str(t) for t in frame.dtypes] == ["int32", "awkward"]
    assert frame["Muon_pt"].ak.array.tolist() == uproot_nano["Muon_pt"][:50].tolist()
    # Without awkward-pandas (which uproot then asks for), object columns of NumPy arrays.
    monkeypatch.setitem(sys.modules, "awkward_pandas", None)
    frame = nano.arrays(["nMuon", "Muon_pt"], entry_stop=50, library="pd")
    assert [str(t) for t in frame.dtypes] == ["int32", "object"]
    assert np.array_equal(frame["Muon_pt"][3], uproot_nano["Muon_pt"][3].to_numpy())
