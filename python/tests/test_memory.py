"""Memory that stays put: opening, reading and closing a file many times does not grow the
process (a leak of a file's buffers, or of its handle, would)."""

from __future__ import annotations

import gc
import sys

import pytest

import evtc

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/statm")


def _resident() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_open_read_close_cycles_do_not_grow_the_process(nano_evtc):
    def cycle():
        with evtc.open(nano_evtc) as f:
            f["Events"].arrays(["nMuon", "Muon_pt", "Jet_pt", "MET_pt"])

    for _ in range(50):  # the allocator's and the reader pool's working set
        cycle()
    gc.collect()
    before = _resident()
    for _ in range(300):
        cycle()
    gc.collect()
    grown = _resident() - before
    # A cycle reads about 2 MB of arrays: keeping a fraction of each would show as tens of MB.
    assert grown < 16 << 20, f"300 cycles grew the resident set by {grown / 1e6:.1f} MB"
