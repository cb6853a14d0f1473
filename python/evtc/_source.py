"""Byte sources for files that are not local paths: fsspec URLs and file-like objects.

The native reader asks a source for ``size`` and ``read_at(offset, length) -> bytes``, and of a
source that has it ``read_ranges(starts, stops) -> [bytes]`` (fsspec's ``cat_ranges``: concurrent
requests). Such a source gets the file's first 64 KiB and last MiB when it is opened, in one round
trip; a bulk read first fetches every byte range it will need that it does not hold, coalesced,
in pieces of 4 MiB fetched side by side (``requests`` counts the requests).
"""

from __future__ import annotations

import os
import threading
from typing import Any


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
