"""Checks and conversions of the arguments every read takes, shared by a tree's reads
(reading.py), a chain's (chain.py) and Dask's planning (_dask.py): the library name, entry
ranges, entry lists, step sizes and memory sizes."""

from __future__ import annotations

import operator
import re
from typing import Any

import numpy as np

_LIBRARIES = {"ak": "ak", "awkward": "ak", "np": "np", "numpy": "np", "pd": "pd", "pandas": "pd"}


def _library(library: str) -> str:
    if not isinstance(library, str):
        raise TypeError(f"library must be a str, not {type(library).__name__}")
    try:
        return _LIBRARIES[library.lower()]
    except KeyError:
        raise ValueError(f'library must be "ak", "np" or "pd", not {library!r}') from None


def _entry_range(num_entries: int, entry_start: Any, entry_stop: Any) -> tuple[int, int]:
    def index(value: Any, default: int, what: str) -> int:
        if value is None:
            return default
        if isinstance(value, bool):
            raise TypeError(f"{what} must be an int or None, not bool")
        try:
            i = operator.index(value)
        except TypeError:
            raise TypeError(f"{what} must be an int or None, not {type(value).__name__}") from None
        if i < 0:
            i += num_entries
        return min(max(i, 0), num_entries)

    start = index(entry_start, 0, "entry_start")
    stop = index(entry_stop, num_entries, "entry_stop")
    return start, max(start, stop)


_UNITS = {
    "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}  # fmt: skip


def _one_way(entry_start: Any, entry_stop: Any, entries: Any, events: Any) -> None:
    """Refuses a read asked for by more than one of an entry range, entries and events."""
    chosen = [entries is not None, events is not None, entry_start is not None or entry_stop is not None]
    if sum(chosen) > 1:
        raise ValueError("give one of an entry range, entries and events")


def _checked_entries(entries: Any, num_entries: int, what: str) -> np.ndarray:
    """``entries`` as a contiguous uint64 array, checked to be entries ``0..num_entries`` of
    ``what`` (a tree, a chain)."""
    from . import errors

    chosen = np.asarray(entries)
    if chosen.dtype.kind not in "iu" or chosen.ndim != 1:
        if chosen.size == 0 and chosen.ndim == 1:
            return np.zeros(0, dtype=np.uint64)
        raise TypeError(f"entries must be a one-dimensional integer array, not {chosen.dtype} of {chosen.ndim} dimensions")
    if chosen.size and (chosen.min() < 0 or chosen.max() >= num_entries):
        bad = chosen[(chosen < 0) | (chosen >= num_entries)][0]
        raise errors.EntryRangeError(f"{what}: entry {bad} is outside 0..{num_entries}")
    return np.ascontiguousarray(chosen, dtype=np.uint64)


def _entries_per_step(step_size: Any, raw_bytes: int, entries: int) -> int:
    """Entries per step: ``step_size`` entries, or as many as hold ``step_size`` (a memory size
    such as ``"100 MB"``) of ``raw_bytes`` uncompressed bytes spread over ``entries``."""
    if isinstance(step_size, bool):
        raise TypeError("step_size must be an int or a memory size such as '100 MB'")
    if isinstance(step_size, (int, np.integer)):
        if step_size < 1:
            raise ValueError(f"step_size must be at least 1 entry, not {step_size}")
        return int(step_size)
    if not isinstance(step_size, str):
        raise TypeError("step_size must be an int or a memory size such as '100 MB'")
    limit = _memory_size(step_size)
    per_entry = raw_bytes / entries if entries else 0
    return max(1, int(limit / per_entry)) if per_entry > 0 else max(1, entries)


def _memory_size(text: str, what: str = "step_size") -> int:
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([kKmMgGtT]i?[bB]|[bB])\s*", text)
    if m is None:
        raise ValueError(f"{what} {text!r} is not a memory size such as '100 MB' or '1 GiB'")
    size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size < 1:
        raise ValueError(f"{what} {text!r} is less than one byte")
    return size
