"""Arrow export (the PyCapsule stream interface) read by pyarrow and Polars equals the arrays."""

from __future__ import annotations

import awkward as ak
import numpy as np
import polars as pl
import pyarrow as pa

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
