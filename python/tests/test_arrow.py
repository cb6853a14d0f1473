"""Arrow export (the PyCapsule stream interface) read by pyarrow and Polars equals the arrays."""

from __future__ import annotations

import awkward as ak
import numpy as np
import polars as pl
import pyarrow as pa
import pytest

import evtc


def test_pyarrow_reads_the_stream(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    names = ["run", "nMuon", "Muon_pt", "Muon_tightId", "Jet_eta"]
    table = pa.table(tree.arrow(names, entry_start=100, entry_stop=7_100, step_size=2_000))
    assert table.column_names == names and table.num_rows == 7_000
    assert table.column("Muon_pt").num_chunks == 4
    arrays = tree.arrays(names, entry_start=100, entry_stop=7_100)
    for name in names:
        assert ak.array_equal(ak.from_arrow(table.column(name).combine_chunks()), arrays[name]), name


def test_whole_tree_and_polars(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    table = pa.table(tree)  # the tree itself implements __arrow_c_stream__
    assert table.num_rows == tree.num_entries and table.column_names == tree.keys()
    df = pl.DataFrame(tree.arrow(["nMuon", "Muon_pt"]))
    assert df.shape == (tree.num_entries, 2)
    pt = tree["Muon_pt"].array()
    assert np.array_equal(df["Muon_pt"].list.len().to_numpy(), ak.to_numpy(ak.num(pt)))
    assert np.array_equal(df["Muon_pt"].explode().drop_nulls().to_numpy(), ak.to_numpy(ak.flatten(pt)))


def test_strings_fixed_arrays_and_lists_of_lists(tmp_path):
    path = tmp_path / "a.evtc"
    with evtc.recreate(path) as f:
        f["T"] = {
            "s": ak.Array(["a", "", "ccc"]),
            "f": np.arange(6, dtype=np.int16).reshape(3, 2),
        }
    table = pa.table(evtc.open(path)["T"])
    assert table.column("s").to_pylist() == ["a", "", "ccc"]
    assert table.column("f").to_pylist() == [[0, 1], [2, 3], [4, 5]]


def test_every_branch_kind_of_the_root_fixtures(tmp_path):
    """Scalars of every type, fixed arrays (also 2-d), jagged, lists of lists, strings: read
    directly from ROOT and after conversion, the Arrow stream equals the Awkward arrays."""
    from conftest import FIXTURES

    root = FIXTURES / "kinds_505.root"
    converted = tmp_path / "kinds.evtc"
    evtc.convert(root, converted, skip_unsupported=True)
    for path in (root, converted):
        tree = evtc.open(path)["Events"]
        table = pa.table(tree.arrow(step_size=700))
        arrays = tree.arrays()
        assert table.num_rows == tree.num_entries
        for name in tree.keys():
            assert table.column(name).to_pylist() == arrays[name].to_list(), (path.name, name)


def test_polars_reads_the_stream_natively(nano_evtc):
    tree = evtc.open(nano_evtc)["Events"]
    df = pl.DataFrame(tree.arrow(["nMuon", "Muon_tightId", "MET_pt"], entry_stop=1_000))
    assert df.schema["Muon_tightId"] == pl.List(pl.Boolean)
    assert df["MET_pt"].to_list() == tree["MET_pt"].array(entry_stop=1_000).to_list()


def test_a_damaged_basket_is_an_error_in_the_consumer_not_a_crash(tmp_path):
    path = tmp_path / "bad.evtc"
    with evtc.recreate(path, codec="zstd:5", basket_size=64 * 1024) as f:
        f["T"] = {"x": np.arange(200_000, dtype=np.int64)}
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside a basket in the middle of the file
    path.write_bytes(bytes(data))
    stream = evtc.open(path)["T"].arrow(step_size=10_000)
    with pytest.raises(pa.ArrowInvalid, match=r"checksum mismatch .* branch \"x\", basket"):
        pa.table(stream)
