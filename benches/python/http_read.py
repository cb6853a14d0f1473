#!/usr/bin/env python3
"""Reading over HTTP with 20 ms per request: evtc against uproot on the same data, served by a
local server that answers (multi-)range requests after a fixed delay, as a distant server does.

Usage (from the repository root, the package installed as for bench.py, its files made):

    .venv/bin/python benches/python/http_read.py [--delay-ms 20] [--events 200000]

Reads every branch, and 10 branches, of the NanoAOD-like file: evtc on the zstd:5 evtc file
(`evtc.open("http://...")`, fsspec's HTTP filesystem), uproot on the ROOT 505 file
(`uproot.open("http://...")`, its own HTTP source); prints the wall time and the requests the
server answered. Files come from target/evtc-bench/python/ (bench.py makes them).
"""

from __future__ import annotations

import argparse
import http.server
import os
import pathlib
import re
import statistics
import threading
import time

import uproot

import evtc

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "evtc-bench" / "python"
BRANCHES = ["event", "MET_pt", "MET_phi", "PV_npvs", "nJet", "Jet_pt", "Jet_eta", "nMuon", "Muon_pt", "Muon_eta"]


class Handler(http.server.BaseHTTPRequestHandler):
    """GET with `Range: bytes=a-b[,c-d...]` (multipart for several), HEAD; each after the delay."""

    delay = 0.02
    requests = 0
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _file(self) -> pathlib.Path | None:
        path = DATA / self.path.lstrip("/").split("?")[0]
        return path if path.is_file() else None

    def _count(self) -> None:
        with Handler.lock:
            Handler.requests += 1
        time.sleep(Handler.delay)

    def do_HEAD(self) -> None:
        self._count()
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(path.stat().st_size))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self) -> None:
        self._count()
        path = self._file()
        if path is None:
            self.send_error(404)
            return
        size = path.stat().st_size
        header = self.headers.get("Range")
        with path.open("rb") as f:
            if not header:
                body = f.read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            ranges = []
            for a, b in re.findall(r"(\d*)-(\d*)", header.split("=", 1)[1]):
                if a == "":
                    start, end = size - int(b), size - 1
                else:
                    start, end = int(a), min(int(b) if b else size - 1, size - 1)
                ranges.append((start, end))
            parts = []
            for start, end in ranges:
                f.seek(start)
                parts.append((start, end, f.read(end - start + 1)))
        if len(parts) == 1:
            start, end, body = parts[0]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        boundary = "evtcbenchboundary"
        chunks = []
        for start, end, body in parts:
            chunks.append(
                f"--{boundary}\r\nContent-Type: application/octet-stream\r\n"
                f"Content-Range: bytes {start}-{end}/{size}\r\n\r\n".encode() + body + b"\r\n"
            )
        chunks.append(f"--{boundary}--\r\n".encode())
        body = b"".join(chunks)
        self.send_response(206)
        self.send_header("Content-Type", f"multipart/byteranges; boundary={boundary}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def timed(fn, repeat: int) -> tuple[float, int]:
    """Median seconds and the requests of one run."""
    times, requests = [], 0
    for _ in range(repeat):
        before = Handler.requests
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        requests = Handler.requests - before
        del result
    return statistics.median(times), requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    Handler.delay = args.delay_ms / 1e3
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    evtc_url = f"{base}/nano_{args.events}_zstd5.evtc"
    root_url = f"{base}/nano_{args.events}_505.root"

    def evtc_read(names=None):
        return evtc.open(evtc_url, threads=1)["Events"].arrays(names)

    def uproot_read(names=None):
        with uproot.open(root_url, array_cache=None, object_cache=None) as f:
            return f["Events"].arrays(names)

    lines = [
        f"## Reading over HTTP, {args.delay_ms:.0f} ms per request ({args.events:,} events)",
        "",
        "A local server answering (multi-)range requests after the delay; evtc "
        "(`evtc.open(url, threads=1)`, fsspec's HTTP filesystem) on the zstd:5 evtc file, uproot "
        "(`uproot.open(url)`, its HTTP source) on the ROOT 505 file; fresh opens, median of "
        f"{args.repeat}; requests of one read.",
        "",
        "| read | evtc s | evtc requests | uproot s | uproot requests | uproot / evtc |",
        "|---|---|---|---|---|---|",
    ]
    def evtc_iterate():
        return [len(a) for a in evtc.open(evtc_url, threads=1)["Events"].iterate(step_size=50_000)]

    def uproot_iterate():
        with uproot.open(root_url, array_cache=None, object_cache=None) as f:
            return [len(a) for a in f["Events"].iterate(step_size=50_000)]

    for label, e_fn, u_fn in (
        ("every branch", evtc_read, uproot_read),
        ("10 branches", lambda: evtc_read(BRANCHES), lambda: uproot_read(BRANCHES)),
        ("every branch in 50,000-entry steps (`iterate`)", evtc_iterate, uproot_iterate),
    ):
        t_e, r_e = timed(e_fn, args.repeat)
        t_u, r_u = timed(u_fn, args.repeat)
        lines.append(f"| {label} | {t_e:.2f} | {r_e} | {t_u:.2f} | {r_u} | **{t_u / t_e:.1f}x** |")
    server.shutdown()
    print("\n".join(lines + [""]))


if __name__ == "__main__":
    main()
