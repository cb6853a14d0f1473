"""root:// files on a real XRootD server (the distribution's xrootd on a loopback port): read
through the XRootD client, equal to local reads, in the round trips the design promises."""

from __future__ import annotations

import shutil
import awkward as ak
import numpy as np
import pytest

import evtc

from conftest import NANO_ROOT
from servers import xrootd_missing, xrootd_server

if (why := xrootd_missing()) is not None:
    pytest.skip(why, allow_module_level=True)
pytest.importorskip("XRootD")

NAMES = ["nMuon", "Muon_pt", "MET_pt", "Jet_eta"]


@pytest.fixture(scope="module")
def server(nano_evtc, tmp_path_factory):
    grown = tmp_path_factory.mktemp("xrootd") / "grown.evtc"
    shutil.copyfile(nano_evtc, grown)
    with xrootd_server([nano_evtc, NANO_ROOT, grown]) as served:
        yield served


def test_root_urls_read_equal_local_reads_in_two_round_trips(server, nano_evtc):
    local = evtc.open(nano_evtc)["Events"]
    f = evtc.open(f"{server.url}{nano_evtc.name}")
    assert type(f.source).__name__ == "XRootDSource"
    # The open: the file's first and last bytes in one vector read (the open itself answered
    # its size).
    assert f.source.requests == 1
    tree = f["Events"]
    before = f.source.requests
    remote = tree.arrays()
    assert f.source.requests - before == 1, "the baskets of every branch in one vector read"
    assert ak.array_equal(remote, local.arrays(), equal_nan=True)
    assert ak.array_equal(
        tree.arrays(NAMES, entry_start=5_000, entry_stop=5_100),
        local.arrays(NAMES, entry_start=5_000, entry_stop=5_100),
    )
    for i in (0, 777, 19_999):
        assert list(tree["Jet_pt"][i]) == list(local["Jet_pt"][i])


def test_a_second_open_reuses_the_file_and_sees_it_grow(server, nano_evtc):
    url = f"{server.url}grown.evtc"
    first = evtc.open(url)
    n = first["Events"].num_entries
    again = evtc.open(url)
    assert again.source.file is first.source.file, "one open per URL per process"
    assert again.source.requests == 1, "the size checked with the first bytes, one round trip"
    with evtc.update(server.data / "grown.evtc") as f:
        head = evtc.open(nano_evtc)["Events"].arrays(entry_stop=10)
        f["Events"].extend({name: head[name] for name in head.fields})
    grown = evtc.open(url)
    assert grown["Events"].num_entries == n + 10
    assert ak.array_equal(
        grown["Events"].arrays(["nMuon"], entry_start=n),
        evtc.open(nano_evtc)["Events"].arrays(["nMuon"], entry_stop=10),
    )


def test_iterate_over_root_fetches_each_step_once(server, nano_evtc):
    local = evtc.open(nano_evtc)["Events"]
    f = evtc.open(f"{server.url}{nano_evtc.name}")
    steps = list(f["Events"].iterate(NAMES, step_size=3_000, report=True))
    assert len(steps) == 7
    for arrays, (a, b) in steps:
        assert ak.array_equal(arrays, local.arrays(NAMES, entry_start=a, entry_stop=b))
    # One fetch a step (its indexes came with the open), none twice: a basket that straddles
    # two steps is kept for the second.
    assert f.source.requests <= 1 + 7, f.source.requests


def test_root_files_and_dask_over_root(server, nano_evtc):
    remote = evtc.open(f"{server.url}{NANO_ROOT.name}")
    assert remote.format == "root"
    assert ak.array_equal(
        remote["Events"].arrays(["nJet", "Jet_pt"], entry_stop=3_000),
        evtc.open(NANO_ROOT)["Events"].arrays(["nJet", "Jet_pt"], entry_stop=3_000),
    )
    d = evtc.dask([f"{server.url}{nano_evtc.name}"], step_size=5_000)
    total = ak.sum(ak.values_astype(d.Muon_pt, np.float64)).compute(scheduler="threads")
    eager = ak.values_astype(evtc.open(nano_evtc)["Events"]["Muon_pt"].array(), np.float64)
    assert total == pytest.approx(float(ak.sum(eager)), rel=1e-12)


def test_fsspec_xrootd_is_used_with_storage_options(server, nano_evtc):
    f = evtc.open(f"{server.url}{nano_evtc.name}", storage_options={"timeout": 30})
    assert type(f.source).__name__ == "FsspecSource"
    assert ak.array_equal(
        f["Events"].arrays(NAMES), evtc.open(nano_evtc)["Events"].arrays(NAMES)
    )


def test_a_missing_root_file_is_a_file_error(server):
    with pytest.raises(evtc.FileError, match="missing.evtc"):
        evtc.open(f"{server.url}missing.evtc")


def test_a_chain_of_root_urls(server, nano_evtc):
    urls = [f"{server.url}{nano_evtc.name}", f"{server.url}grown.evtc"]
    chain = evtc.open(urls)["Events"]
    first = evtc.open(nano_evtc)["Events"]
    assert chain.offsets[1] == first.num_entries
    assert ak.array_equal(
        chain.arrays(NAMES, entry_stop=first.num_entries), first.arrays(NAMES)
    )
    assert chain["Muon_pt"][first.num_entries + 3].tolist() == first["Muon_pt"][3].tolist()
