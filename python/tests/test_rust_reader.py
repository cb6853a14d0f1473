"""Values equal to the Rust library's other read path: the `evtc dump` command (row reads through
`TreeReader::rows`), on the same files the package reads in bulk."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import evtc

from conftest import REPO


def _cli() -> pathlib.Path | None:
    named = os.environ.get("EVTC_CLI")
    if named:  # scripts/test-all names the binary cargo test built: it must be there
        if not pathlib.Path(named).is_file():
            raise FileNotFoundError(f"EVTC_CLI={named} does not exist")
        return pathlib.Path(named)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for candidate in (target / "debug" / "evtc", target / "release" / "evtc"):
        if candidate.is_file():
            return candidate
    return None


CLI = _cli()
pytestmark = pytest.mark.skipif(CLI is None, reason="the evtc binary is not built (cargo build -p evtc-cli)")


@pytest.mark.parametrize("fixture", ["nano_evtc", "nano_lz4_offsets"])
@pytest.mark.parametrize("start,stop", [(0, 300), (9_950, 10_050), (19_900, 20_000)])
def test_bulk_reads_equal_the_cli_row_reads(request, fixture, start, stop):
    path = request.getfixturevalue(fixture)
    tree = evtc.open(path)["Events"]
    names = tree.keys()
    out = subprocess.run(
        [str(CLI), "dump", str(path), "--format", "json", "--entries", f"{start}..{stop}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    rows = json.loads(out)
    assert len(rows) == stop - start
    arrays = tree.arrays(entry_start=start, entry_stop=stop, library="np")
    for name in names:
        mine = arrays[name]
        for i, row in enumerate(rows):
            want = row[name]
            got = mine[i]
            if isinstance(want, list):
                assert np.array_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float), equal_nan=True), (name, start + i)
            elif isinstance(want, float) or isinstance(got, np.floating):
                assert float(got) == pytest.approx(want, rel=1e-7, nan_ok=True), (name, start + i)
            else:
                assert got == want, (name, start + i)
