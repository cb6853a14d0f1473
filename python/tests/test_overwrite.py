"""No output replaced by accident: convert, merge, skim and advise(apply=...) refuse an output
that exists unless ``overwrite=True``; ``recreate`` replaces, as its name says."""

from __future__ import annotations

import numpy as np
import pytest

import evtc
from evtc.errors import FileError, OutputExistsError

PRECIOUS = b"precious: not to be replaced\n"


@pytest.fixture(scope="module")
def small(tmp_path_factory, nano_root):
    out = tmp_path_factory.mktemp("overwrite") / "small.evtc"
    evtc.convert(nano_root, out, branches=["nMuon", "MET_*"])
    return out


def _refuses_then_replaces(path, write):
    """``write(overwrite)`` over an existing ``path``: refused without overwrite (the file and
    its directory as they were), then replaced by an evtc file."""
    path.write_bytes(PRECIOUS)
    before = sorted(p.name for p in path.parent.iterdir())
    with pytest.raises(OutputExistsError) as refused:
        write(False)
    assert str(path) in str(refused.value)
    assert isinstance(refused.value, FileExistsError)
    assert isinstance(refused.value, FileError)
    assert path.read_bytes() == PRECIOUS
    assert sorted(p.name for p in path.parent.iterdir()) == before
    write(True)
    assert evtc.open(path).keys()


def test_convert_merge_skim_and_apply_need_overwrite(tmp_path, small, nano_root):
    out = tmp_path / "out.evtc"
    _refuses_then_replaces(
        out, lambda o: evtc.convert(nano_root, out, branches=["MET_pt"], overwrite=o)
    )
    _refuses_then_replaces(out, lambda o: evtc.convert(small, out, overwrite=o))
    _refuses_then_replaces(out, lambda o: evtc.merge(out, [small, small], overwrite=o))
    _refuses_then_replaces(out, lambda o: evtc.skim(small, out, where="nMuon >= 2", overwrite=o))
    _refuses_then_replaces(
        out,
        lambda o: evtc.advise(
            small, sample_bytes=64 << 10, codecs=["lz4"], apply=out, overwrite=o
        ),
    )


def test_a_merge_with_its_arguments_swapped_keeps_the_input(tmp_path, small):
    a = tmp_path / "a.evtc"
    a.write_bytes(small.read_bytes())
    with pytest.raises(OutputExistsError):
        evtc.merge(a, [small])
    assert a.read_bytes() == small.read_bytes()


def test_recreate_replaces(tmp_path):
    path = tmp_path / "w.evtc"
    path.write_bytes(PRECIOUS)
    with evtc.recreate(path) as f:
        f["T"] = {"x": np.arange(3, dtype=np.int32)}
    assert evtc.open(path)["T"].num_entries == 3
