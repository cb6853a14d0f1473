"""Byte sources for files that are not local paths: ``root://`` URLs, other fsspec URLs and
file-like objects.

The native reader asks a source for ``size`` and ``read_at(offset, length) -> bytes``, and of a
source that has it ``read_ranges(starts, stops) -> [bytes]`` (several ranges in one round trip:
XRootD's vector reads, fsspec's concurrent ``cat_ranges``). Such a source gets the file's first
64 KiB and last 256 KiB when it is opened, in one round trip; a bulk read first fetches every byte
range it will need that it does not hold, coalesced where they are closer than the source's
``coalesce_gap`` (256 KiB without one), in pieces of 4 MiB fetched side by side (``requests``
counts the requests).
"""

from __future__ import annotations

import collections
import os
import threading
from typing import Any


def url_source(url: str, storage_options: dict[str, Any] | None) -> Any:
    """The source of a URL: ``root://`` and ``roots://`` through the XRootD client
    (:class:`XRootDSource`) when its Python bindings are installed and no ``storage_options``
    are given; every other URL through fsspec."""
    if url.startswith(("root://", "roots://")) and not storage_options:
        try:
            from XRootD import client  # noqa: F401
        except ImportError:
            pass
        else:
            return XRootDSource(url)
    return FsspecSource(url, storage_options)


class XRootDSource:
    """A ``root://`` URL read with the XRootD client (XrdCl's Python bindings, which fsspec-xrootd
    also uses): one open per URL per process, kept for later opens of the URL (the last
    :attr:`KEPT` URLs), its size from the open's answer; several ranges in vector reads of up to
    the protocol's 1,024 chunks of 2,097,136 bytes each, sent side by side."""

    #: The most chunks a vector read holds (``readv_iov_max``, XRootD's protocol limit).
    MAX_CHUNKS = 1024
    #: The most bytes a chunk of a vector read holds (``readv_ior_max``, the protocol's limit).
    MAX_CHUNK_BYTES = 2_097_136
    #: The most bytes one vector read asks for: a larger read is several, sent at once.
    MAX_VECTOR_BYTES = 16 << 20
    #: Open files kept for later opens of the same URL in this process.
    KEPT = 64
    #: Ranges are fetched as they are asked for: a vector read costs no round trip per range.
    coalesce_gap = 4096

    _lock = threading.Lock()
    _kept: collections.OrderedDict[str, tuple[Any, int]] = collections.OrderedDict()
    _pid = os.getpid()


    def __init__(self, url: str) -> None:
        self.url = url
        self.requests = 0
        # Ranges fetched with the open, (start, bytes), served once from here.
        self._early: list[tuple[int, bytes]] = []
        self.file, self.size, kept = self._open(url)
        if kept:
            self._refresh()

    def _refresh(self) -> None:
        """Of a kept file, its size now (the file may have grown: an evtc update appends) and,
        in the same round trip, the bytes the reader reads at open, kept if the size holds."""
        from . import _lib

        head, tail = _lib.OPEN_BYTES  # what the reader reads first of a file it opens
        ranges = [(0, min(head, self.size)), (max(self.size - tail, 0), min(tail, self.size))]
        (stat_status, info), (read_status, read) = self._together(
            [
                ("a stat", lambda callback: self.file.stat(force=True, callback=callback)),
                ("a vector read", lambda callback: self.file.vector_read(ranges, callback=callback)),
            ]
        )
        self._check(stat_status, "stat")
        self.requests += 1
        size = int(info.size)
        if size != self.size:
            self.size = size
            with self._lock:
                self._kept[self.url] = (self.file, size)
        elif read_status.ok and [len(c.buffer) for c in read.chunks] == [n for _, n in ranges]:
            self._early = [(c.offset, bytes(c.buffer)) for c in read.chunks]

    def _served_early(self, starts: list[int], stops: list[int]) -> list[bytes] | None:
        """The ranges from those fetched with the open, when they hold them all."""
        out = []
        for start, stop in zip(starts, stops):
            for at, data in self._early:
                if at <= start and stop <= at + len(data):
                    out.append(data[start - at : stop - at])
                    break
            else:
                return None
        self._early = []
        return out

    @classmethod
    def _open(cls, url: str) -> tuple[Any, int, bool]:
        from XRootD import client
        from XRootD.client.flags import OpenFlags

        from .errors import FileError

        with cls._lock:
            if cls._pid != os.getpid():  # a forked process opens its own
                cls._kept.clear()
                cls._pid = os.getpid()
            if url in cls._kept:
                cls._kept.move_to_end(url)
                return (*cls._kept[url], True)
        # Opened outside the lock: files opened side by side (a chain's) open at once.
        file = client.File()
        status, _ = file.open(url, OpenFlags.READ)
        if not status.ok:
            raise FileError(f"{url}: {status.message.strip()}")
        status, info = file.stat()  # answered by the open, no round trip
        if not status.ok:
            raise FileError(f"{url}: {status.message.strip()}")
        with cls._lock:
            # Another thread may have opened it meanwhile: either open serves.
            cls._kept[url] = (file, int(info.size))
            # A file dropped here stays open while a source reads it, and closes with it.
            while len(cls._kept) > cls.KEPT:
                cls._kept.popitem(last=False)
        return file, int(info.size), False

    def _together(self, calls: list[tuple[str, Any]]) -> list[tuple[Any, Any]]:
        """Sends every call (``(what, send)``, ``send(callback)`` starting an asynchronous
        request) at once and waits for all: their (status, response) in order."""
        answers: list[Any] = [None] * len(calls)
        done = threading.Semaphore(0)

        def answer(i: int) -> Any:
            def callback(status: Any, response: Any, hosts: Any) -> None:
                answers[i] = (status, response)
                done.release()

            return callback

        sent = 0
        try:
            for i, (what, send) in enumerate(calls):
                self._check(send(answer(i)), f"sending {what}")
                sent += 1
        finally:
            for _ in range(sent):  # every request sent is answered before its buffers go
                done.acquire()
        return answers

    def _check(self, status: Any, what: str) -> None:
        if not status.ok:
            raise OSError(f"{self.url}: {what}: {status.message.strip()}")

    def read_at(self, offset: int, length: int) -> bytes:
        self.requests += 1
        status, data = self.file.read(offset, length)
        self._check(status, f"reading {length} bytes at {offset}")
        return bytes(data)

    def read_ranges(self, starts: list[int], stops: list[int]) -> list[bytes]:
        """The byte ranges ``starts[i]..stops[i]``, in vector reads sent side by side."""
        early = self._served_early(starts, stops) if self._early else None
        if early is not None:
            return early
        chunks: list[tuple[int, int]] = []
        owner: list[int] = []  # the range each chunk belongs to
        for i, (start, stop) in enumerate(zip(starts, stops)):
            at = start
            while at < stop:
                n = min(stop - at, self.MAX_CHUNK_BYTES)
                chunks.append((at, n))
                owner.append(i)
                at += n
        vectors: list[list[tuple[int, int]]] = []
        held = self.MAX_VECTOR_BYTES
        for chunk in chunks:
            if not vectors or len(vectors[-1]) == self.MAX_CHUNKS or held + chunk[1] > self.MAX_VECTOR_BYTES:
                vectors.append([])
                held = 0
            vectors[-1].append(chunk)
            held += chunk[1]
        self.requests += len(vectors)
        answers = self._together(
            [
                ("a vector read", lambda callback, v=vector: self.file.vector_read(v, callback=callback))
                for vector in vectors
            ]
        )
        parts: list[list[bytes]] = [[] for _ in starts]
        at = 0
        for (status, response), vector in zip(answers, vectors):
            self._check(status, f"a vector read of {len(vector)} ranges")
            got = response.chunks
            if len(got) != len(vector):
                raise OSError(f"{self.url}: a vector read of {len(vector)} ranges gave {len(got)}")
            for (offset, length), chunk in zip(vector, got):
                data = bytes(chunk.buffer)
                if len(data) != length:
                    raise OSError(
                        f"{self.url}: {len(data)} bytes at offset {offset}, {length} asked for"
                    )
                parts[owner[at]].append(data)
                at += 1
        return [b"".join(p) if len(p) != 1 else p[0] for p in parts]


class FsspecSource:
    """An fsspec URL (``https://``, ``s3://``, ``root://`` with fsspec-xrootd, ...)."""

    def __init__(self, url: str, storage_options: dict[str, Any] | None = None) -> None:
        try:
            import fsspec
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("reading URLs needs fsspec: pip install fsspec") from e
        from .errors import FileError

        self.url = url
        try:
            self.fs, self.path = fsspec.core.url_to_fs(url, **(storage_options or {}))
            self.size = int(self.fs.size(self.path))
        except (OSError, ValueError) as e:
            raise FileError(f"{url}: {e}") from e
        self.requests = 0

    def read_at(self, offset: int, length: int) -> bytes:
        self.requests += 1
        data = self.fs.cat_file(self.path, start=offset, end=offset + length)
        return bytes(data)

    def read_ranges(self, starts: list[int], stops: list[int]) -> list[bytes]:
        """The byte ranges ``starts[i]..stops[i]``, fetched at once (fsspec's ``cat_ranges``:
        concurrent requests where the file system is asynchronous, as HTTP and S3 are)."""
        self.requests += len(starts)
        datas = self.fs.cat_ranges([self.path] * len(starts), starts, stops)
        for data in datas:
            if isinstance(data, Exception):
                raise data
        return [bytes(d) for d in datas]


class FileLikeSource:
    """A binary file-like object with ``seek`` and ``read`` (reads are serialised by a lock)."""

    def __init__(self, file: Any) -> None:
        self.file = file
        self.lock = threading.Lock()
        with self.lock:
            self.size = int(file.seek(0, os.SEEK_END))
        self.requests = 0

    def read_at(self, offset: int, length: int) -> bytes:
        with self.lock:
            self.requests += 1
            self.file.seek(offset)
            chunks = []
            remaining = length
            while remaining > 0:
                chunk = self.file.read(remaining)
                if not chunk:
                    break
                chunks.append(bytes(chunk))
                remaining -= len(chunk)
            return b"".join(chunks)


def is_url(path: str) -> bool:
    """Whether ``path`` names a remote (non-``file://``) fsspec location."""
    return "://" in path and not path.startswith("file://")
