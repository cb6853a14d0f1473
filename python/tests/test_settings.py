"""One vocabulary: every function that writes evtc files takes its job's settings under the
library's names (``evtc.settings()``), parses them with the library's parser, and takes the
old names with a FutureWarning."""

from __future__ import annotations

import inspect
import pathlib
import warnings

import numpy as np
import pytest

import evtc

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"

# Each job's functions. recreate replaces by its name and update edits in place: neither takes
# `overwrite`; update edits an evtc file: it takes no `to`.
FUNCTIONS = {
    "convert": [evtc.convert],
    "merge": [evtc.merge],
    "skim": [evtc.skim],
    "add_columns": [evtc.add_columns],
    "writer": [evtc.recreate, evtc.update],
}
NOT_TAKEN = {(evtc.recreate, "overwrite"), (evtc.update, "overwrite"), (evtc.update, "to")}


def test_every_function_takes_its_jobs_settings_by_their_names():
    table = evtc.settings()
    assert {s["name"] for s in table} >= {"codec", "cluster_size", "overwrite", "tree"}
    for job, functions in FUNCTIONS.items():
        for function in functions:
            parameters = inspect.signature(function).parameters
            for s in table:
                takes = job in s["jobs"] and (function, s["name"]) not in NOT_TAKEN
                assert (s["name"] in parameters) == takes, f"{function.__name__}: {s['name']}"
                if takes:
                    assert parameters[s["name"]].default is None, s["name"]
                    assert parameters[s["name"]].kind is inspect.Parameter.KEYWORD_ONLY
                for old in s["aliases"]:
                    assert old not in parameters, f"{function.__name__} spells {old}"


def test_the_python_docs_name_every_setting():
    docs = DOCS.read_text()
    for s in evtc.settings():
        assert f"`{s['name']}`" in docs, s["name"]


@pytest.fixture(scope="module")
def small(tmp_path_factory, nano_root):
    out = tmp_path_factory.mktemp("settings") / "small.evtc"
    evtc.convert(
        nano_root, out, branches=["run", "event", "nMuon", "Muon_*", "nJet", "Jet_*"]
    )
    return out


def _value(s):
    """The setting's example as a Python user writes it."""
    example = s["example"]
    if s["shape"] == "switch":
        return example == "true"
    if s["shape"] == "rule":
        glob, value = example.split("=", 1)
        if s["name"] == "float_quantize":
            low, high, bits = value.split(":")
            return {glob: (float(low), float(high), int(bits))}
        return {glob: int(value) if value.isdigit() else value}
    if s["name"] == "index":
        return tuple(example.split(","))
    return int(example) if example.isdigit() else example


def test_every_conversion_setting_takes_its_example(tmp_path, small):
    for s in evtc.settings():
        if "convert" not in s["jobs"] or s["name"] in ("append", "overwrite"):
            continue
        out = tmp_path / f"{s['name']}.evtc"
        evtc.convert(small, out, **{s["name"]: _value(s)})
        assert evtc.open(out).keys() == ["Events"], s["name"]


def test_writer_settings_apply_per_branch(tmp_path):
    path = tmp_path / "w.evtc"
    with evtc.recreate(
        path, codec="lz4", branch_codec={"Muon_*": "zstd:9"}, branch_rac={"Muon_*": True},
        cluster_size=100,
    ) as f:
        f["T"] = {"Muon_pt": np.arange(300, dtype=np.float32), "x": np.arange(300)}
    tree = evtc.open(path)["T"]
    assert tree.cluster_ends == [100, 200, 300]
    assert tree["Muon_pt"].info.codec == "zstd:9" and tree["Muon_pt"].info.rac
    assert tree["x"].info.codec == "lz4" and not tree["x"].info.rac


def test_old_names_warn_and_still_work(tmp_path, small):
    out = tmp_path / "old.evtc"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evtc.convert(small, out, autoflush=1000, branch_codecs={"Muon_*": "lz4"})
    assert sorted(str(w.message) for w in caught if w.category is FutureWarning) == [
        "convert(): autoflush is now called cluster_size",
        "convert(): branch_codecs is now called branch_codec",
    ]
    assert evtc.open(out)["Events"].cluster_ends[0] == 1000
    assert evtc.open(out)["Events"]["Muon_pt"].info.codec == "lz4"
    with pytest.warns(FutureWarning, match="cluster_entries is now called cluster_size"):
        with evtc.recreate(tmp_path / "w.evtc", cluster_entries=10) as f:
            f["T"] = {"x": np.arange(20)}
    with pytest.raises(TypeError, match="both 'autoflush' and its new name"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            evtc.convert(small, tmp_path / "x.evtc", autoflush=10, cluster_size=10)
    with pytest.raises(TypeError, match="unexpected keyword argument 'clusters'"):
        evtc.convert(small, tmp_path / "x.evtc", clusters=10)


def test_bad_values_name_the_setting(tmp_path, small):
    out = tmp_path / "bad.evtc"
    for kwargs, message in [
        ({"codec": "zstd:99"}, 'codec "zstd:99"'),
        ({"cluster_size": "lots"}, 'cluster_size "lots"'),
        ({"threads": 0}, 'threads "0": at least 1'),
        ({"rac": "sometimes"}, 'rac "sometimes"'),
        ({"branch_rac": {"Muon_*": "maybe"}}, "branch_rac"),
    ]:
        with pytest.raises(ValueError, match=message):
            evtc.convert(small, out, **kwargs)
    with pytest.raises(TypeError, match="sync must be True or False"):
        evtc.convert(small, out, sync="no")
    with pytest.raises(TypeError, match="branch_codec must be a dict"):
        evtc.convert(small, out, branch_codec="lz4")
    assert not out.exists()
