"""Remote files through fsspec: a local HTTP server with range requests on the loopback address."""

from __future__ import annotations

import http.server
import re
import threading

import awkward as ak
import numpy as np
import pytest

import evtc

from conftest import NANO_ROOT

pytest.importorskip("aiohttp")
pytest.importorskip("fsspec")


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    requests: list[str] = []

    def log_message(self, *args):  # keep pytest's output clean
        pass

    def _body(self):
        data = self.files.get(self.path)
        if data is None:
            self.send_error(404)
        return data

    def do_HEAD(self):
        data = self._body()
        if data is not None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()

    def do_GET(self):
        data = self._body()
        if data is None:
            return
        header = self.headers.get("Range")
        self.requests.append(header or "all")
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", header or "")
        if m is None:
            self.send_response(200)
            part = data
        else:
            start = int(m.group(1))
            end = int(m.group(2)) + 1 if m.group(2) else len(data)
            part = data[start:end]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{start + len(part) - 1}/{len(data)}")
        self.send_header("Content-Length", str(len(part)))
        self.end_headers()
        self.wfile.write(part)


@pytest.fixture(scope="module")
def server(nano_evtc):
    _RangeHandler.files = {
        "/nano.evtc": nano_evtc.read_bytes(),
        "/nano.root": NANO_ROOT.read_bytes(),
    }
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RangeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_https_reads_equal_local_reads_in_few_requests(server, nano_evtc):
    local = evtc.open(nano_evtc)["Events"].arrays()
    f = evtc.open(f"{server}/nano.evtc")
    tree = f["Events"]
    _RangeHandler.requests.clear()
    before = f.source.requests
    remote = tree.arrays()
    made = f.source.requests - before
    assert ak.array_equal(remote, local, equal_nan=True)
    # Every index, dictionary and basket of 114 branches, coalesced: the basket indexes (at the
    # end of the file) came with the file's last MiB when it was opened; one request for the
    # dictionaries and baskets (fewer than 4 MiB: one piece).
    assert made == 1, made
    assert len(_RangeHandler.requests) == made


def test_remote_entry_ranges_and_single_entries(server, nano_evtc):
    local = evtc.open(nano_evtc)["Events"]
    remote = evtc.open(f"{server}/nano.evtc")["Events"]
    assert ak.array_equal(
        remote.arrays(["Muon_pt", "nJet"], entry_start=5_000, entry_stop=5_100),
        local.arrays(["Muon_pt", "nJet"], entry_start=5_000, entry_stop=5_100),
    )
    for i in (0, 777, 19_999):
        assert list(remote["Jet_pt"][i]) == list(local["Jet_pt"][i])


def test_remote_dask(server, nano_evtc):
    d = evtc.dask([f"{server}/nano.evtc"], step_size=5_000)
    total = ak.sum(ak.values_astype(d.Muon_pt, np.float64)).compute(scheduler="threads")
    eager = ak.values_astype(evtc.open(nano_evtc)["Events"]["Muon_pt"].array(), np.float64)
    assert total == pytest.approx(float(ak.sum(eager)), rel=1e-12)


def test_missing_remote_file_is_a_file_error(server):
    with pytest.raises(evtc.FileError, match="missing.evtc"):
        evtc.open(f"{server}/missing.evtc")


def test_remote_root_file(server):
    """ROOT files are read over HTTP through the same source (evtc's ROOT reader)."""
    remote = evtc.open(f"{server}/nano.root")
    assert remote.format == "root"
    local = evtc.open(NANO_ROOT)["Events"]
    assert ak.array_equal(
        remote["Events"].arrays(["nJet", "Jet_pt"], entry_stop=3_000),
        local.arrays(["nJet", "Jet_pt"], entry_stop=3_000),
    )


def test_remote_iterate_fetches_each_step_ahead(server, nano_evtc):
    local = evtc.open(nano_evtc)["Events"]
    f = evtc.open(f"{server}/nano.evtc")
    remote = f["Events"]
    names = ["nMuon", "Muon_pt", "MET_pt"]
    steps = list(remote.iterate(names, step_size=3_000, report=True))
    assert [s[1] for s in steps] == [(a, min(a + 3_000, 20_000)) for a in range(0, 20_000, 3_000)]
    for arrays, (a, b) in steps:
        assert ak.array_equal(arrays, local.arrays(names, entry_start=a, entry_stop=b))
    # A loop left early (its step fetched ahead dropped): the next read still works.
    for arrays in remote.iterate(names, step_size=3_000):
        break
    assert ak.array_equal(remote.arrays(["nMuon"]), local.arrays(["nMuon"]))
    # Other files iterate as before (no reading ahead).
    assert len(list(local.iterate(names, step_size=7_000))) == 3
