"""Writing evtc files, and ROOT files of RNTuples or TTrees, in uproot's shape:
``evtc.recreate(path)["Events"] = {...}``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _lib, _settings
from .converting import Rules

_DTYPES = {
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float32", "float64",
}  # fmt: skip


def recreate(
    path: str | os.PathLike[str],
    *,
    to: str | None = None,
    codec: str | None = None,
    branch_codec: Rules | None = None,
    precondition: str | None = None,
    branch_precondition: Rules | None = None,
    rac: bool | str | None = None,
    branch_rac: Rules | None = None,
    rac_unit: int | str | None = None,
    rac_dictionary: bool | None = None,
    boundaries: str | None = None,
    float_precision: Rules | None = None,
    float_quantize: Rules | None = None,
    cluster_size: int | str | None = None,
    basket_size: int | str | None = None,
    flush_at_cluster: bool | None = None,
    sync: bool | None = None,
    threads: int | None = None,
    **renamed: Any,
) -> WritableFile:
    """Starts a new evtc file at ``path``, or with ``to="rntuple"`` or ``to="ttree"`` a ROOT
    file of RNTuples or TTrees (replacing any file there once it is closed, as the name, and
    uproot's, says)::

        with evtc.recreate("skim.root", to="rntuple") as f:
            f["Events"] = {"nMuon": n, "Muon_pt": pts}   # Awkward or NumPy arrays
            f["Events"].extend(more)

    The file is written to a temporary name and appears under ``path`` only when :meth:`close`
    succeeds (or the ``with`` block ends without an exception). Trees are written one after
    another: ``file["Events"] = {...}`` starts one, ``file["Events"].extend({...})`` adds entries.
    A path named ``*.root`` needs ``to`` (:class:`evtc.errors.OptionsError` without it).

    The settings are those of :func:`evtc.convert` that apply to writing (``codec``,
    ``branch_codec={"Muon_*": "lz4"}``, ``rac``, ``branch_rac``, ``cluster_size``, ...), each
    ``None`` by default: the library's default. A ROOT file takes ``codec``, ``branch_codec``,
    ``float_precision``, ``float_quantize``, ``cluster_size``, ``basket_size`` (TTree baskets),
    ``sync`` and ``threads``; the settings of evtc's own storage (``rac``, ``precondition``,
    ``boundaries``, ...) are refused there.
    """
    args = {**locals(), "overwrite": True}
    settings = _settings.pairs("writer", args, "recreate")
    root = isinstance(to, str) and to.lower() in ("rntuple", "ttree")
    native = _lib.RootWriter if root else _lib.Writer
    return WritableFile(native(os.fspath(path), settings), os.fspath(path))


def update(
    path: str | os.PathLike[str],
    *,
    codec: str | None = None,
    branch_codec: Rules | None = None,
    precondition: str | None = None,
    branch_precondition: Rules | None = None,
    rac: bool | str | None = None,
    branch_rac: Rules | None = None,
    rac_unit: int | str | None = None,
    rac_dictionary: bool | None = None,
    boundaries: str | None = None,
    float_precision: Rules | None = None,
    float_quantize: Rules | None = None,
    cluster_size: int | str | None = None,
    basket_size: int | str | None = None,
    flush_at_cluster: bool | None = None,
    sync: bool | None = None,
    threads: int | None = None,
    **renamed: Any,
) -> UpdatableFile:
    """Opens the evtc file at ``path`` for update, in place::

        with evtc.update("events.evtc") as f:
            f["Events"].extend({"run": runs, "Muon_pt": pts, ...})  # entries after its entries
            f["Events"].add_columns({"score": scores})                # a branch per entry
            f["Other"] = {...}                                       # a new tree

    Nothing in the file is rewritten: new baskets and a new footer go after its end. The file
    changes when :meth:`close` succeeds (or the ``with`` block ends without an exception); until
    then, and if the process dies, readers read it as it was. A second writer is refused while
    this one is open (:class:`evtc.errors.FileBusyError`). Entries appended to a tree are
    written as its branches are; the settings set how added columns and new trees are written
    (as for :func:`recreate`).
    """
    settings = _settings.pairs("writer", locals(), "update")
    writer = _lib.Writer(os.fspath(path), settings, update=True)
    return UpdatableFile(writer, os.fspath(path))


@dataclass
class _Column:
    """One branch's part of a batch."""

    name: str
    kind: str  # scalar, fixed, jagged, string, bytes
    dtype: str
    length: int
    values: np.ndarray
    counts: np.ndarray | None  # uint32, for variable-length branches
    counter: str | None = None

    @property
    def entries(self) -> int:
        if self.counts is not None:
            return len(self.counts)
        return len(self.values) // max(self.length, 1)


class WritableFile:
    """A file being written (see :func:`recreate`)."""

    def __init__(self, writer: Any, path: str) -> None:
        self._writer = writer
        self.file_path = path
        self._tree: WritableTree | None = None
        self._finished: list[str] = []
        self.notes: list[str] = []

    def __setitem__(self, name: str, data: dict[str, Any]) -> None:
        """Starts tree ``name`` with the branches and first entries of ``data``: a dict of branch
        name -> NumPy array (1-d: scalars; 2-d: fixed-size arrays; string dtype: strings) or
        Awkward array (``var * number`` lists, strings, records of lists, which become
        ``name_field`` branches with an ``nname`` counter, as uproot writes them)."""
        if not isinstance(name, str):
            raise TypeError(f"tree names are str, not {type(name).__name__}")
        if name in self._finished or (self._tree is not None and self._tree.name == name):
            raise ValueError(f"tree {name!r} was already written to this file")
        columns = _columns(data)
        _link_counters(columns)
        _same_entries(columns)
        specs = self._specs(columns)
        if self._tree is not None:
            self._finished.append(self._tree.name)
        self._writer.tree(name, specs)
        self._tree = WritableTree(self, name, [(c.name, c.kind, c.dtype, c.length) for c in columns])
        self._tree._fill(columns)

    @staticmethod
    def _specs(columns: list[_Column]) -> list[tuple[Any, ...]]:
        """The native writer's branch specs of ``columns`` (it applies the per-branch rules)."""
        return [(c.name, c.kind, c.dtype, c.length, c.counter) for c in columns]

    def __getitem__(self, name: str) -> WritableTree:
        if self._tree is not None and self._tree.name == name:
            return self._tree
        if name in self._finished:
            raise ValueError(f"tree {name!r} is finished: trees are written one after another")
        raise KeyError(name)

    def close(self) -> None:
        """Finishes the file; it appears under its name now. For a ROOT file, :attr:`notes`
        then says what could not be kept as asked."""
        self.notes = list(self._writer.close() or [])

    @property
    def closed(self) -> bool:
        return not self._writer.is_open

    def abort(self) -> None:
        """Abandons the file: nothing appears under its name."""
        self._writer.abort()

    def __enter__(self) -> WritableFile:
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self) -> None:
        # A file never closed is abandoned, never half-written.
        writer = getattr(self, "_writer", None)
        if writer is not None and writer.is_open:
            writer.abort()

    def __repr__(self) -> str:
        return f"<evtc.WritableFile {self.file_path!r}>"


class WritableTree:
    """The tree being written: :meth:`extend` appends entries."""

    def __init__(self, file: WritableFile, name: str, schema: list[tuple[str, str, str, int]]):
        self.file = file
        self.name = name
        self._schema = schema
        self.num_entries = 0

    def extend(self, data: dict[str, Any]) -> None:
        """Appends entries: ``data`` has the same branches as the first batch (counters made from
        records are filled again from the records)."""
        if self.file._tree is not self:
            raise ValueError(f"tree {self.name!r} is finished: trees are written one after another")
        self._fill(_in_order(self.name, self._schema, data))

    def _fill(self, columns: list[_Column]) -> None:
        _same_entries(columns)
        self.num_entries += self.file._writer.fill([(c.values, c.counts) for c in columns])

    def __repr__(self) -> str:
        return f"<evtc.WritableTree {self.name!r} ({self.num_entries} entries)>"


class UpdatableFile(WritableFile):
    """A file opened for update (see :func:`update`): ``file[name]`` is one of its trees
    (:class:`UpdatableTree`), ``file[name] = {...}`` adds a tree."""

    def __init__(self, writer: Any, path: str) -> None:
        super().__init__(writer, path)
        self._trees: dict[str, UpdatableTree] = {}
        # What the native writer has open: ("new", name), ("extend", name) or ("add", name).
        self._open: tuple[str, str] | None = None

    def keys(self) -> list[str]:
        """The file's trees (with those added)."""
        return [name for name, _, _ in self._writer.trees()]

    def __contains__(self, name: object) -> bool:
        return name in self.keys()

    def _branches(self, name: str) -> tuple[int, list[str]] | None:
        for tree, entries, branches in self._writer.trees():
            if tree == name:
                return entries, branches
        return None

    def __setitem__(self, name: str, data: dict[str, Any]) -> None:
        if isinstance(name, str) and self._branches(name) is not None:
            raise ValueError(
                f"the file has a tree {name!r}: add entries with file[{name!r}].extend(...) "
                f"and branches with file[{name!r}].add_columns(...)"
            )
        super().__setitem__(name, data)
        self._open = ("new", name)

    def __getitem__(self, name: str) -> Any:
        if self._open == ("new", name):
            return super().__getitem__(name)
        if name not in self._trees:
            if self._branches(name) is None:
                raise KeyError(name)
            self._trees[name] = UpdatableTree(self, name)
        return self._trees[name]

    def _start(self, mode: str, name: str) -> None:
        """Takes note that the native writer finished what it had open and opened ``name``."""
        if self._open is not None and self._open[0] == "new" and self._tree is not None:
            self._finished.append(self._tree.name)
            self._tree = None
        self._open = (mode, name)

    def __repr__(self) -> str:
        return f"<evtc.UpdatableFile {self.file_path!r}>"


class UpdatableTree:
    """A tree of a file opened for update: :meth:`extend` appends entries, :meth:`add_columns`
    adds branches."""

    def __init__(self, file: UpdatableFile, name: str) -> None:
        self.file = file
        self.name = name
        self._schema: list[tuple[str, str, str, int]] = []
        self._appended = 0
        # Branches added by this writer (the file lists them once the tree is finished).
        self._added: list[str] = []

    @property
    def num_entries(self) -> int:
        """The tree's entries, with those appended."""
        known = self.file._branches(self.name)
        entries = known[0] if known else 0
        if self.file._open == ("extend", self.name):
            entries += self._appended
        return entries

    @property
    def keys(self) -> list[str]:
        """The tree's branches (with those added)."""
        known = self.file._branches(self.name)
        names = known[1] if known else []
        return names + [n for n in self._added if n not in names]

    def extend(self, data: dict[str, Any]) -> None:
        """Appends entries after the tree's: ``data`` holds every branch of the tree, of its
        types (counters made from records are filled again from the records)."""
        f = self.file
        if f._open != ("extend", self.name):
            self._schema = [tuple(s) for s in f._writer.extend_tree(self.name)]  # type: ignore[misc]
            f._start("extend", self.name)
            self._appended = 0
        columns = _in_order(self.name, self._schema, data)
        _same_entries(columns)
        self._appended += f._writer.fill([(c.values, c.counts) for c in columns])

    def add_columns(self, data: dict[str, Any]) -> None:
        """Adds branches: ``data`` maps new branch names to arrays of one entry per entry of
        the tree (NumPy; Awkward, jagged and records too, as :func:`recreate` takes them). A
        record's counter (``nJet`` for ``{"Jet": ak.zip(...)}``) that the tree has already is
        not added again: the record's branches then store their own counts."""
        f = self.file
        existing = set(self.keys)
        columns = _columns(data)
        _link_counters(columns)
        shared = {c.name for c in columns if c.name in existing}
        counters = {c.counter for c in columns if c.counter}
        clashes = sorted(shared - counters)
        if clashes:
            raise ValueError(f"tree {self.name!r} has branches {clashes} already")
        columns = [c for c in columns if c.name not in shared]
        for c in columns:
            if c.counter in shared:
                c.counter = None
        _same_entries(columns)
        entries = self.num_entries
        if columns and columns[0].entries != entries:
            raise ValueError(
                f"tree {self.name!r} has {entries} entries; the columns have {columns[0].entries}"
            )
        f._writer.tree(self.name, f._specs(columns), add=True)
        f._start("add", self.name)
        f._writer.fill([(c.values, c.counts) for c in columns])
        self._added.extend(c.name for c in columns)

    def __repr__(self) -> str:
        return f"<evtc.UpdatableTree {self.name!r} ({self.num_entries} entries)>"


# --- turning user data into columns -----------------------------------------------------------


def _in_order(tree: str, schema: list[tuple[str, str, str, int]], data: Any) -> list[_Column]:
    """The columns of ``data`` in the order of the tree's branches ``schema``, which they must
    match: names, kinds and types."""
    columns = _columns(data)
    _link_counters(columns)
    by_name = {c.name: c for c in columns}
    expected = [s[0] for s in schema]
    if set(by_name) != set(expected):
        missing = sorted(set(expected) - set(by_name))
        extra = sorted(set(by_name) - set(expected))
        raise ValueError(
            f"tree {tree!r}: extend needs the tree's branches; missing {missing}, unknown {extra}"
        )
    ordered = []
    for name, kind, dtype, length in schema:
        c = by_name[name]
        if (c.kind, c.length) != (kind, length) or c.dtype != dtype:
            raise TypeError(
                f"branch {name!r} is {kind} {dtype}"
                + (f"[{length}]" if kind == "fixed" else "")
                + f", the data is {c.kind} {c.dtype}"
            )
        ordered.append(c)
    return ordered



def _same_entries(columns: list[_Column]) -> None:
    if len({c.entries for c in columns}) > 1:
        sizes = {c.name: c.entries for c in columns}
        raise ValueError(f"branches have different numbers of entries: {sizes}")


def _columns(data: Any) -> list[_Column]:
    if not isinstance(data, dict):
        raise TypeError(f"tree data must be a dict of branch name -> array, not {type(data).__name__}")
    if not data:
        raise ValueError("a tree needs at least one branch")
    columns: list[_Column] = []
    for name, value in data.items():
        if not isinstance(name, str) or not name:
            raise TypeError("branch names must be non-empty str")
        columns.extend(_column(name, value))
    names = [c.name for c in columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate branch names: {duplicates}")
    return columns


def _dtype_name(dtype: np.dtype, name: str) -> str:
    if dtype.name not in _DTYPES:
        raise TypeError(
            f"branch {name!r}: dtype {dtype} is not supported "
            f"(bool, int8-64, uint8-64, float32, float64)"
        )
    return dtype.name


def _column(name: str, value: Any) -> list[_Column]:
    if isinstance(value, np.ndarray):
        return [_numpy_column(name, value)]
    try:
        import awkward as ak
    except ImportError:  # pragma: no cover - depends on the environment
        ak = None
    if ak is not None and isinstance(value, (ak.Array, ak.highlevel.Array)):
        return _awkward_columns(name, value)
    raise TypeError(
        f"branch {name!r}: expected a NumPy or Awkward array, not {type(value).__name__}"
    )


def _numpy_column(name: str, array: np.ndarray) -> _Column:
    if array.dtype.kind in "US":
        kind = "string" if array.dtype.kind == "U" else "bytes"
        items = [s.encode("utf-8") if kind == "string" else bytes(s) for s in array.reshape(-1)]
        counts = np.fromiter((len(b) for b in items), dtype=np.uint32, count=len(items))
        values = np.frombuffer(b"".join(items), dtype=np.uint8)
        return _Column(name, kind, "uint8", 0, values, counts)
    if array.dtype.kind == "O":
        raise TypeError(
            f"branch {name!r}: object arrays are not supported; give jagged data as an Awkward array"
        )
    dtype = _dtype_name(array.dtype, name)
    if array.ndim == 1:
        return _Column(name, "scalar", dtype, 1, np.ascontiguousarray(array), None)
    if array.ndim == 2 and array.shape[1] > 0:
        flat = np.ascontiguousarray(array).reshape(-1)
        return _Column(name, "fixed", dtype, array.shape[1], flat, None)
    raise TypeError(f"branch {name!r}: arrays of {array.ndim} dimensions are not supported")


def _awkward_columns(name: str, array: Any) -> list[_Column]:
    import awkward as ak

    layout = ak.to_layout(ak.to_packed(array))
    # Records (ak.zip of muon fields): one branch per field, as uproot writes them.
    if layout.is_record:
        return [
            c
            for field in layout.fields
            for c in _awkward_columns(f"{name}_{field}", ak.Array(layout[field]))
        ]
    if layout.is_list and layout.content.is_record:
        counts = ak.num(array, axis=1)
        fields = []
        for field in layout.content.fields:
            fields.extend(_awkward_columns(f"{name}_{field}", array[field]))
        counter = _Column(
            f"n{name}", "scalar", "int32", 1, ak.to_numpy(counts).astype(np.int32), None
        )
        for c in fields:
            c.counter = counter.name
        return [counter, *fields]
    if layout.is_numpy:
        return [_numpy_column(name, np.asarray(layout.data))]
    if layout.is_regular and layout.content.is_numpy and layout.content.purelist_depth == 1:
        values = np.asarray(layout.content.data)
        dtype = _dtype_name(values.dtype, name)
        return [_Column(name, "fixed", dtype, layout.size, np.ascontiguousarray(values), None)]
    if layout.is_list and layout.content.is_numpy and layout.content.purelist_depth == 1:
        layout = layout.to_ListOffsetArray64(True)
        offsets = np.asarray(layout.offsets)
        values = np.asarray(layout.content.data)[offsets[0] : offsets[-1]]
        counts = np.diff(offsets).astype(np.uint32)
        parameter = layout.parameter("__array__")
        if parameter in ("string", "bytestring"):
            kind = "string" if parameter == "string" else "bytes"
            return [_Column(name, kind, "uint8", 0, np.ascontiguousarray(values), counts)]
        dtype = _dtype_name(values.dtype, name)
        return [_Column(name, "jagged", dtype, 0, np.ascontiguousarray(values), counts)]
    raise TypeError(
        f"branch {name!r}: Awkward type {array.type} is not supported "
        "(numbers, fixed-size or variable-length lists of numbers, strings, records of those)"
    )


def _link_counters(columns: list[_Column]) -> None:
    """Gives jagged branch ``X_y`` the counter ``nX`` when the data has that integer branch."""
    scalars = {c.name for c in columns if c.kind == "scalar" and np.dtype(c.dtype).kind in "iu"}
    for c in columns:
        if c.kind == "jagged" and c.counter is None and "_" in c.name:
            candidate = "n" + c.name.split("_", 1)[0]
            if candidate in scalars:
                c.counter = candidate

