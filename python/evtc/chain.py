"""Many files read as one dataset, as ROOT's ``TChain``: ``evtc.open(["a.evtc", "b.evtc"])`` or
``evtc.open("data/*.evtc")`` gives a :class:`Chain`, whose trees number their entries across the
files (entry ``e`` of the second file is ``len(first) + e``).
"""

from __future__ import annotations

import glob
import operator
import os
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ._args import _checked_entries, _entry_range, _library, _one_way
from .errors import DuplicateEventError, KeyInFileError, SchemaError

#: The most files opened at once (their footers read side by side, which matters for URLs).
OPEN_AT_ONCE = 16


def is_glob(path: str) -> bool:
    """Whether a local path is a pattern (``*``, ``?`` or ``[``) rather than a file's name."""
    return any(c in path for c in "*?[") and not os.path.exists(path)


def expand(files: Any) -> list[Any]:
    """The files a list, a glob or one path names, in order (a glob's matches sorted).

    Raises:
        FileNotFoundError: a glob that matches nothing.
        TypeError: something that names no files.
    """
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    if not isinstance(files, Iterable):
        raise TypeError(f"files must be a path, a glob or a list of them, not {type(files).__name__}")
    out: list[Any] = []
    for f in files:
        name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
        if name is not None and "://" not in name and is_glob(name):
            matched = sorted(glob.glob(name))
            if not matched:
                raise FileNotFoundError(f"{name}: the pattern matches no file")
            out.extend(matched)
        else:
            out.append(f)
    if not out:
        raise ValueError("a chain needs at least one file")
    return out


class Chain:
    """Files read as one: ``chain["Events"]`` is a :class:`ChainTree` over every file's tree of
    that name. ``files`` are the open files, in order."""

    def __init__(self, files: list[Any]) -> None:
        self.files = files
        self._trees: dict[str, ChainTree] = {}

    @classmethod
    def open(cls, paths: list[Any], opener: Any) -> Chain:
        """Opens ``paths`` with ``opener(path)``, several at once."""
        if len(paths) == 1:
            return cls([opener(paths[0])])
        with ThreadPoolExecutor(min(OPEN_AT_ONCE, len(paths))) as pool:
            return cls(list(pool.map(opener, paths)))

    format = "chain"

    @property
    def file_path(self) -> list[str]:
        return [f.file_path for f in self.files]

    def keys(self) -> list[str]:
        """The trees every file has, in the first file's order."""
        return [k for k in self.files[0].keys() if all(k in f for f in self.files[1:])]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.keys()

    def __getitem__(self, name: str) -> ChainTree:
        if name not in self._trees:
            missing = [f.file_path for f in self.files if name not in f]
            if missing:
                raise KeyInFileError(f"tree {name!r} is not in {missing[0]}" + (
                    f" (nor in {len(missing) - 1} other files of the chain)" if len(missing) > 1 else ""
                ))  # fmt: skip
            self._trees[name] = ChainTree(self, name)
        return self._trees[name]

    def close(self) -> None:
        for f in self.files:
            f.close()

    def __enter__(self) -> Chain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evtc.Chain of {len(self.files)} files>"


class ChainTree:
    """One tree over every file of a chain, its entries numbered across them (``offsets[k]`` is
    the first entry of file ``k``). Reads take the arguments of :class:`evtc.reading.Tree`'s;
    a branch the first file has and another file lacks is an error naming that file."""

    def __init__(self, chain: Chain, name: str) -> None:
        self.chain = chain
        self.name = name
        self.trees = [f[name] for f in chain.files]
        counts = [t.num_entries for t in self.trees]
        #: The first entry of each file, then the number of entries.
        self.offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
        self.num_entries = int(self.offsets[-1])

    # --- names -------------------------------------------------------------------------------

    def keys(self, filter_name: Any = None) -> list[str]:
        """The first file's branch names (see :meth:`evtc.reading.Tree.keys`)."""
        return self.trees[0].keys(filter_name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.trees[0])

    def __contains__(self, name: object) -> bool:
        return name in self.trees[0]

    def typenames(self, filter_name: Any = None) -> dict[str, str]:
        return self.trees[0].typenames(filter_name)

    def show(self, filter_name: Any = None, stream: Any = None) -> None:
        """The first file's branches (see :meth:`evtc.reading.Tree.show`)."""
        stream = sys.stdout if stream is None else stream
        print(f"{len(self.trees)} files, {self.num_entries} entries; the first file's branches:", file=stream)
        self.trees[0].show(filter_name, stream)

    def __getitem__(self, name: str) -> ChainBranch:
        if not isinstance(name, str):
            raise TypeError(f"branch names are str, not {type(name).__name__}")
        self.trees[0]._branch_info(name)  # KeyInFileError / UnsupportedError
        return ChainBranch(self, name)

    def __repr__(self) -> str:
        return f"<evtc.ChainTree {self.name!r} ({self.num_entries} entries in {len(self.trees)} files)>"

    def _select(self, expressions: Any, filter_name: Any) -> list[str]:
        names = self.trees[0]._select(expressions, filter_name)
        for tree in self.trees[1:]:
            for n in names:
                if n not in tree:
                    raise KeyInFileError(
                        f"tree {self.name!r} of {tree.file.file_path} has no branch {n!r} "
                        f"(the chain's first file has it)"
                    )
        return names

    def _pieces(self, start: int, stop: int) -> list[tuple[int, int, int]]:
        """The files' parts of entries ``start..stop``: (file, local start, local stop)."""
        out = []
        for k, tree in enumerate(self.trees):
            lo, hi = int(self.offsets[k]), int(self.offsets[k + 1])
            a, b = max(start, lo), min(stop, hi)
            if a < b:
                out.append((k, a - lo, b - lo))
        return out

    # --- reading -----------------------------------------------------------------------------

    def arrays(
        self,
        expressions: Any = None,
        filter_name: Any = None,
        *,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library: str = "ak",
        entries: Any = None,
        events: Any = None,
    ) -> Any:
        """Reads branches of the chain's entries (see :meth:`evtc.reading.Tree.arrays`):
        ``entry_start``/``entry_stop`` and ``entries`` are numbered across the files;
        ``events`` are found in each file's event index."""
        lib = _library(library)
        names = self._select(expressions, filter_name)
        _one_way(entry_start, entry_stop, entries, events)
        if events is not None:
            entries = [self.entry_of(a, b) for a, b in self.trees[0]._keys(events)]
        if entries is not None:
            return self._take(lib, names, self._entries(entries))
        start, stop = _entry_range(self.num_entries, entry_start, entry_stop)
        pieces = self._pieces(start, stop) or [(0, 0, 0)]
        return _join(
            lib, [self.trees[k].arrays(names, entry_start=a, entry_stop=b, library=lib) for k, a, b in pieces]
        )

    def _entries(self, entries: Any) -> np.ndarray:
        return _checked_entries(entries, self.num_entries, f'chain "{self.name}"').astype(np.int64)

    def _take(self, lib: str, names: list[str], entries: np.ndarray) -> Any:
        """Entries ``entries`` (numbered across the files), in that order."""
        file_of = np.searchsorted(self.offsets, entries, side="right") - 1
        parts, order = [], []
        for k in np.unique(file_of):
            at = np.nonzero(file_of == k)[0]
            local = entries[at] - self.offsets[k]
            parts.append(self.trees[int(k)].arrays(names, entries=local, library=lib))
            order.append(at)
        if not parts:
            return self.trees[0].arrays(names, entries=np.zeros(0, dtype=np.int64), library=lib)
        joined = _join(lib, parts)
        # Row i of `joined` is entry order[i]: put each where it was asked for.
        where = np.empty(len(entries), dtype=np.int64)
        where[np.concatenate(order)] = np.arange(len(entries))
        return _rows(lib, joined, where)

    def iterate(
        self,
        expressions: Any = None,
        filter_name: Any = None,
        *,
        step_size: int | str = "100 MB",
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library: str = "ak",
        report: bool = False,
    ) -> Iterator[Any]:
        """Steps over the chain's entries, file after file (a step does not cross files, as in
        ``uproot.iterate``); with ``report=True`` each step is ``(arrays, (entry_start,
        entry_stop))`` numbered across the files."""
        names = self._select(expressions, filter_name)
        start, stop = _entry_range(self.num_entries, entry_start, entry_stop)
        for k, a, b in self._pieces(start, stop):
            first = int(self.offsets[k])
            for arrays, (lo, hi) in self.trees[k].iterate(
                names, step_size=step_size, entry_start=a, entry_stop=b, library=library, report=True
            ):
                yield (arrays, (first + lo, first + hi)) if report else arrays

    # --- the event index ---------------------------------------------------------------------

    @property
    def event_index(self) -> tuple[str, str] | None:
        """The first file's event-index keys (see :attr:`evtc.reading.Tree.event_index`)."""
        return self.trees[0].event_index

    def entries_of(self, major: int, minor: int) -> np.ndarray:
        """The entries (numbered across the files) whose keys are ``(major, minor)``, found in
        each file's event index.

        Raises:
            evtc.errors.SchemaError: a file's tree has no event index (the file is named).
        """
        found = []
        for k, tree in enumerate(self.trees):
            if tree.event_index is None:
                raise SchemaError(
                    f"tree {self.name!r} of {tree.file.file_path} has no event index "
                    f"(evtc index FILE --by run,event builds one)"
                )
            found.append(tree.entries_of(major, minor).astype(np.int64) + self.offsets[k])
        return np.concatenate(found).astype(np.uint64)

    def entry_of(self, major: int, minor: int) -> int:
        """The one entry (numbered across the files) whose keys are ``(major, minor)``.

        Raises:
            evtc.errors.KeyInFileError: no file has it.
            evtc.errors.DuplicateEventError: several entries have it (all named).
            evtc.errors.SchemaError: a file's tree has no event index.
        """
        found = self.entries_of(major, minor)
        if len(found) == 0:
            raise KeyInFileError(f"no entry of chain {self.name!r} has event ({major}, {minor})")
        if len(found) > 1:
            raise DuplicateEventError(
                f"event ({major}, {minor}) is held by entries {', '.join(map(str, found.tolist()))} "
                f"of chain {self.name!r}"
            )
        return int(found[0])


class ChainBranch:
    """One branch of a chain: ``array(...)``, and ``branch[i]`` for entry ``i`` across files."""

    def __init__(self, tree: ChainTree, name: str) -> None:
        self.tree = tree
        self.name = name

    @property
    def typename(self) -> str:
        return self.tree.trees[0][self.name].typename

    @property
    def num_entries(self) -> int:
        return self.tree.num_entries

    def array(self, *, entry_start: int | None = None, entry_stop: int | None = None, library: str = "ak") -> Any:
        arrays = self.tree.arrays([self.name], entry_start=entry_start, entry_stop=entry_stop, library=library)
        return arrays[self.name]

    def entry(self, entry: int) -> Any:
        i = operator.index(entry)
        if i < 0:
            i += self.num_entries
        if not 0 <= i < self.num_entries:
            raise IndexError(f"entry {entry} of a chain of {self.num_entries} entries")
        k = int(np.searchsorted(self.tree.offsets, i, side="right") - 1)
        tree = self.tree.trees[k]
        if self.name not in tree:
            raise KeyInFileError(f"tree {self.tree.name!r} of {tree.file.file_path} has no branch {self.name!r}")
        return tree[self.name].entry(i - int(self.tree.offsets[k]))

    def __getitem__(self, entry: int) -> Any:
        return self.entry(entry)

    def __repr__(self) -> str:
        return f"<evtc.ChainBranch {self.name!r} ({self.typename})>"


def _join(lib: str, parts: list[Any]) -> Any:
    if len(parts) == 1:
        return parts[0]
    if lib == "ak":
        import awkward as ak

        return ak.concatenate(parts)
    if lib == "pd":
        import pandas as pd

        return pd.concat(parts, ignore_index=True)
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _rows(lib: str, arrays: Any, at: np.ndarray) -> Any:
    if lib == "ak":
        return arrays[at]
    if lib == "pd":
        return arrays.iloc[at].reset_index(drop=True)
    return {name: values[at] for name, values in arrays.items()}
