"""``evtc.dask``: a lazy ``dask_awkward.Array`` over evtc (or ROOT) files, with column projection.

Each partition is a group of whole clusters of one file, found from the file's footer without
decoding a basket. The partition reader implements dask-awkward's column-projection protocol
(``ColumnProjectionMixin``): when the graph is optimised, dask-awkward traces which fields the
computation touches and asks for a reader of only those branches, so workers read nothing else.
Everything in the graph pickles; workers open the files themselves.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from typing import Any

from . import _lib
from ._columns import _ak_array, _empty_column
from ._info import BranchInfo
from ._source import is_url
from ._args import _entries_per_step
from .reading import open


def _partitions(cluster_ends: list[int], step: int) -> list[tuple[int, int]]:
    """Whole clusters grouped into ranges of at least ``step`` entries (the last may be smaller)."""
    out = []
    start = 0
    for end in cluster_ends:
        if end - start >= step:
            out.append((start, end))
            start = end
    if cluster_ends and start < cluster_ends[-1]:
        out.append((start, cluster_ends[-1]))
    return out


def _make_reader_class() -> type:
    """The partition reader class, made on first use so that ``import evtc`` does not import
    dask-awkward; ``evtc._dask._ReadPartition`` resolves to it (module ``__getattr__``), which is
    how pickle finds it on the workers."""
    from dask_awkward.lib.io.columnar import ColumnProjectionMixin

    class _ReadPartition(ColumnProjectionMixin):
        """Reads ``(path, start, stop)`` partitions of one tree; projected to the branches needed.

        Of an RNTuple, ``fields`` holds the top-level fields offered (nested, as
        :meth:`evtc.Tree.arrays` reads them) and ``infos`` their columns; a projection keeps the
        columns the computation uses (their dotted paths, ``hit.x``, are dask-awkward's names of
        them) and the fields above those."""

        def __init__(
            self,
            tree: str,
            infos: list[BranchInfo],
            storage_options: dict[str, Any] | None,
            threads: int,
            fields: tuple[str, ...] = (),
            first: str | None = None,
        ) -> None:
            self.tree = tree
            self.infos = infos
            self.storage_options = storage_options
            self.threads = threads
            self.fields = fields
            self.first = first
            self.use_optimization = True

        def _open(self, path: str) -> Any:
            return open(path, threads=self.threads, storage_options=self.storage_options)[self.tree]

        def _read_fields(self, path: str, start: int, stop: int) -> Any:
            """The RNTuple fields of entries ``start..stop`` of ``path``, with only the kept
            columns below them."""
            from ._fields import record

            tree = self._open(path)
            names = tree._info._names
            keep = {i.name for i in self.infos}
            wanted = {c for c, name in enumerate(names) if name in keep}
            fields = [tree._fields[n].prune(wanted) for n in self.fields]
            fields = [f for f in fields if f is not None]
            columns = sorted({c for f in fields for c in f.columns()})
            data = dict(zip(columns, tree._read([names[c] for c in columns], start, stop)))
            kinds = {c: tree._info[names[c]].kind for c in columns}
            return record(fields, data, kinds, stop - start)

        @property
        def form(self) -> Any:
            if self.fields:
                return self._read_fields(self.first, 0, 0).layout.form
            empty = [_empty_column(info) for info in self.infos]
            return _ak_array(self.infos, empty, 0).layout.form

        @property
        def behavior(self) -> dict | None:
            return None

        @property
        def attrs(self) -> dict | None:
            return None

        @property
        def columns(self) -> list[str]:
            return [i.name for i in self.infos]

        def project_columns(self, columns: frozenset[str]) -> Any:
            keep = [i for i in self.infos if i.name in columns]
            fields = tuple(
                f for f in self.fields if any(i.name == f or i.name.startswith(f + ".") for i in keep)
            )
            return _ReadPartition(self.tree, keep, self.storage_options, self.threads, fields, self.first)

        def __call__(self, part: tuple[str, int, int]) -> Any:
            path, start, stop = part
            if self.fields:
                return self._read_fields(path, start, stop)
            tree = self._open(path)
            return _ak_array(self.infos, tree._read(self.columns, start, stop), stop - start)

    _ReadPartition.__module__ = __name__
    _ReadPartition.__qualname__ = "_ReadPartition"
    return _ReadPartition


@functools.lru_cache(maxsize=None)
def _reader_class() -> type:
    return _make_reader_class()


def __getattr__(name: str) -> Any:
    if name == "_ReadPartition":
        return _reader_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dask(
    files: str | os.PathLike[str] | list[str | os.PathLike[str]],
    tree: str = "Events",
    *,
    expressions: Any = None,
    filter_name: Any = None,
    step_size: int | str = "100 MB",
    threads: int = 1,
    storage_options: dict[str, Any] | None = None,
) -> Any:
    """A lazy ``dask_awkward.Array`` of tree ``tree`` over ``files``.

    Args:
        files: a path or URL, or a list of them; every file must have the selected branches.
        tree: the tree's name.
        expressions, filter_name: the branches to offer (as :meth:`evtc.Tree.arrays`); the
            computation then reads only the ones it uses.
        step_size: entries per partition, or uncompressed bytes of the selected branches
            (``"100 MB"``); partitions are whole clusters, so they can be larger.
        threads: decoding threads inside each task (1: Dask parallelises over partitions).
        storage_options: passed to fsspec on the workers.

    Returns:
        A ``dask_awkward.Array`` with one partition per group of clusters and known divisions.
    """
    import dask_awkward as dak

    from .chain import expand

    if isinstance(files, (list, tuple)) and not files:
        raise ValueError("evtc.dask needs at least one file")
    paths = [os.fspath(f) for f in expand(files)]  # a glob's matches, sorted
    first = open(paths[0], threads=1, storage_options=storage_options)
    t = first[tree]
    names = t._select(expressions, filter_name)
    fields: tuple[str, ...] = ()
    if t._fields:
        # An RNTuple: its top-level fields nested (a column named alone brings its field),
        # their columns what a projection keeps.
        top = [n if n in t._fields else n.split(".", 1)[0] for n in names]
        fields = tuple(dict.fromkeys(n for n in top if n in t._fields))
        names = [t._info._names[c] for n in fields for c in t._fields[n].columns()]
    infos: list[BranchInfo] = [t._info[n] for n in names]
    selected = [i.name for i in infos]

    def planned(path: str, t: Any) -> list[tuple[str, int, int]]:
        """The partitions of a file read the slow way: its tree's branches checked one by one."""
        for info in infos:
            mine = t._info.get(info.name)
            if mine is None or (mine.kind, mine.dtype, mine.length) != (info.kind, info.dtype, info.length):
                from .errors import SchemaError

                raise SchemaError(
                    f"{path}: branch {info.name!r} is missing or has another type than in {paths[0]}"
                )
        step = t._step_entries(selected, step_size)
        return [(path, a, b) for a, b in _partitions(t.cluster_ends, step)]

    # The other files whose branches (names and types) are the first file's are planned
    # natively, many at once: local evtc files in one call on every core, URLs opened side by
    # side. The rest (ROOT files, other schemas, errors) the slow way.
    plan = first._reader.plan(tree, [])
    schema = plan[0] if plan is not None else None
    rest = paths[1:]
    known: list[Any] = [None] * len(rest)
    if schema is not None:
        local = [k for k, p in enumerate(rest) if not is_url(p)]
        found = _lib.plan_files([rest[k] for k in local], tree, selected, schema, os.cpu_count() or 1)
        for k, got in zip(local, found):
            known[k] = got
        remote = [k for k, p in enumerate(rest) if is_url(p)]
        for k, f in zip(remote, _open_files([rest[k] for k in remote], storage_options)):
            got = f._reader.plan(tree, selected)
            if got is not None and got[0] == schema:
                known[k] = got[1:]
    parts = planned(paths[0], t)
    for path, got in zip(rest, known):
        if got is None:
            parts.extend(planned(path, open(path, threads=1, storage_options=storage_options)[tree]))
            continue
        entries, cluster_ends, raw = got
        step = _entries_per_step(step_size, raw, entries)
        parts.extend((path, a, b) for a, b in _partitions(cluster_ends, step))
    if not parts:
        raise ValueError("the files have no entries")
    divisions = [0]
    for _, a, b in parts:
        divisions.append(divisions[-1] + (b - a))
    reader = _reader_class()(tree, infos, storage_options, threads, fields, paths[0])
    return dak.from_map(reader, parts, label="evtc", divisions=tuple(divisions))


def _open_files(paths: list[str], storage_options: Any) -> Iterator[Any]:
    """Each file, in order, opened side by side (16 at a time; the native open releases the
    GIL), so that planning many files is not one open after another."""
    from concurrent.futures import ThreadPoolExecutor

    from .chain import OPEN_AT_ONCE

    def one(path: str) -> Any:
        return open(path, threads=1, storage_options=storage_options)

    if len(paths) == 1:
        yield one(paths[0])
        return
    with ThreadPoolExecutor(min(OPEN_AT_ONCE, len(paths))) as pool:
        # In windows, so that the open files of a long list are not all held at once.
        for at in range(0, len(paths), 4 * OPEN_AT_ONCE):
            yield from pool.map(one, paths[at : at + 4 * OPEN_AT_ONCE])


def dask_write(
    array: Any,
    destination: str | os.PathLike[str],
    *,
    tree: str = "Events",
    prefix: str = "part",
    compute: bool = True,
    to: str | None = None,
    **settings: Any,
) -> Any:
    """Writes a ``dask_awkward.Array`` as one file per partition, in parallel on the workers,
    as ``dask_awkward.to_parquet`` does: ``destination/part0.evtc``, ``part1.evtc``, ... or,
    with ``to="rntuple"`` or ``to="ttree"``, ROOT files ``part0.root``, ... that ROOT and
    uproot read (each partition's fields are branches, records of lists ``nX`` and ``X_field``
    as :func:`evtc.recreate` writes them).

    Args:
        array: the array; its partitions are written as they are computed.
        destination: a local directory (made if missing) that every worker writes into.
        tree: the tree's name in every file.
        prefix: the files' names before the partition number.
        compute: write now and return the paths; ``False`` returns the ``dask.delayed`` object
            that writes them when computed.
        to, **settings: what :func:`evtc.recreate` takes (``codec``, ``branch_codec``, ...);
            each file is replaced if it exists.

    Returns:
        The paths written, in partition order (or the delayed object that returns them).
    """
    import dask

    from .writing import recreate

    directory = os.fspath(destination)
    os.makedirs(directory, exist_ok=True)
    suffix = "root" if isinstance(to, str) and to.lower() in ("rntuple", "ttree") else "evtc"
    # Settings are checked here, once, not on every worker.
    probe = os.path.join(directory, f".{prefix}-settings-check.{suffix}")
    recreate(probe, to=to, **settings).abort()

    def write(part: Any, path: str) -> str:
        with recreate(path, to=to, **settings) as f:
            f[tree] = {name: part[name] for name in part.fields}
        return path

    tasks = [
        dask.delayed(write)(part, os.path.join(directory, f"{prefix}{i}.{suffix}"))
        for i, part in enumerate(array.to_delayed())
    ]
    paths = dask.delayed(list)(tasks)
    return paths.compute() if compute else paths


__all__ = ["dask", "dask_write"]
