"""Reading evtc and ROOT files in uproot's shape: ``evtc.open(path)["Events"].arrays(...)``."""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import operator
import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

import numpy as np

from . import _lib
from ._columns import _ak_array, _build, _nested_levels, _np_column, _np_field
from ._info import BranchInfo
from ._fields import Field
from ._fields import record as _fields_record
from ._args import (
    _checked_entries,
    _entries_per_step,
    _entry_range,
    _library,
    _memory_size,
    _one_way,
)
from ._source import FileLikeSource, is_url, url_source
from .errors import KeyInFileError, SchemaError, UnsupportedError

if TYPE_CHECKING:
    from .chain import Chain

def open(  # noqa: A001 - uproot's name
    path: str | os.PathLike[str] | Any,
    *,
    threads: int | None = None,
    storage_options: dict[str, Any] | None = None,
    mmap: bool = False,
    basket_cache: int | str = "128 MiB",
    friends: list[Any] | None = None,
) -> File | Chain:
    """Opens an evtc file, or a ROOT file through evtc's own ROOT reader; or several files as one
    dataset (ROOT's ``TChain``).

    Args:
        path: a local path, a URL (``root://...``, ``https://...``, ``s3://...``), or a binary
            file-like object with ``seek`` and ``read``. A list of them, or a glob
            (``"data/*.evtc"``, its matches sorted), opens every file as one dataset: a
            :class:`evtc.chain.Chain`, whose trees number their entries across the files.
        threads: threads that decode branches at once (default: every core; 1 reads on the
            calling thread). The GIL is released while decoding.
        storage_options: passed to fsspec for URLs.
        mmap: memory-map a local file instead of reading it with positional reads: single-entry
            reads of random-access (RAC) branches then skip a system call each, and whole reads
            decode each basket where the map holds it instead of copying it first. Only for files
            that nothing truncates or rewrites while they are open: a file truncated under the
            map ends the Python process (``SIGBUS``). Local paths only.
        basket_cache: the most bytes (an int, or a memory size such as ``"64 MB"``; 0 keeps
            none) of decoded baskets that reads of entry ranges keep for each other: a step of
            :meth:`Tree.iterate` that ends inside a basket leaves it decoded for the next step,
            which then does not decode it again. Evtc files only.
        friends: files whose trees are read as parts of this file's (ROOT's friend trees):
            paths (or URLs), or ``(path, tree)`` pairs. ``file["Events"]`` then also has the
            branches of each friend's tree of that name (or its given tree, or its only tree),
            entry by entry; a friend's tree of another length is an error
            (:class:`evtc.errors.SchemaError`), and a name both have is this file's branch.
            Reads (``arrays``, ``iterate``, ``arrays(entries=...)``, Arrow) see them as the
            tree's own; :meth:`Tree.skim` and ``evtc.dask`` read this file's branches only.

    Returns:
        A :class:`File`; ``file["Events"]`` is a :class:`Tree`. For several files a
        :class:`evtc.chain.Chain`; ``chain["Events"]`` is a :class:`evtc.chain.ChainTree`.

    Raises:
        evtc.errors.FileError: the file cannot be opened.
        evtc.errors.CorruptFileError: it is neither an evtc nor a ROOT file, or it is damaged.
    """
    threads = _threads(threads)
    if _names_files(path):
        if friends is not None:
            raise ValueError("friends are given to the files of a chain one by one, not to the chain")
        from .chain import Chain, expand

        def one(p: Any) -> File:
            return open(
                p, threads=threads, storage_options=storage_options, mmap=mmap,
                basket_cache=basket_cache,
            )  # fmt: skip

        return Chain.open(expand(path), one)
    if friends is not None:
        if isinstance(friends, (str, os.PathLike)) or not isinstance(friends, Iterable):
            raise TypeError("friends must be a list of paths or (path, tree) pairs")
        main = open(
            path, threads=threads, storage_options=storage_options, mmap=mmap,
            basket_cache=basket_cache,
        )  # fmt: skip
        for friend in friends:
            where, tree = friend if isinstance(friend, tuple) else (friend, None)
            if tree is not None and not isinstance(tree, str):
                raise TypeError("a friend is a path or a (path, tree name) pair")
            opened = open(
                where, threads=threads, storage_options=storage_options, mmap=mmap,
                basket_cache=basket_cache,
            )  # fmt: skip
            main._friends.append((opened, tree))
        return main
    cache = _basket_cache(basket_cache)
    if not isinstance(mmap, bool):
        raise TypeError(f"mmap must be a bool, not {type(mmap).__name__}")
    not_local = ValueError("mmap=True needs a local path, not a URL or a file-like object")
    if isinstance(path, (str, os.PathLike)):
        name = os.fspath(path)
        if not isinstance(name, str):
            raise TypeError("path must be a str or os.PathLike[str]")
        if is_url(name):
            if mmap:
                raise not_local
            source: Any = url_source(name, storage_options)
            return File(_lib.Reader(source=source, threads=threads, basket_cache=cache), name, source)
        if name.startswith("file://"):
            name = name[len("file://") :]
        return File(
            _lib.Reader(path=name, threads=threads, mmap=mmap, basket_cache=cache), name, None
        )
    if hasattr(path, "read") and hasattr(path, "seek"):
        if mmap:
            raise not_local
        source = FileLikeSource(path)
        return File(
            _lib.Reader(source=source, threads=threads, basket_cache=cache), repr(path), source
        )
    raise TypeError(
        f"path must be a path, a URL or a binary file-like object, not {type(path).__name__}"
    )


def _names_files(path: Any) -> bool:
    """Whether ``path`` names several files (a list or a glob), not one."""
    from .chain import is_glob

    if isinstance(path, (list, tuple)):
        return True
    if isinstance(path, (str, os.PathLike)):
        name = os.fspath(path)
        return isinstance(name, str) and "://" not in name and is_glob(name)
    return False


def _paths(files: Any) -> list[Any]:
    from .chain import expand

    if hasattr(files, "read"):
        return [files]
    if isinstance(files, (str, os.PathLike)) or isinstance(files, Iterable):
        return expand(files)
    raise TypeError(f"files must be a path, a URL or a list of them, not {type(files).__name__}")


def iterate(
    files: Any,
    expressions: Any = None,
    filter_name: Any = None,
    *,
    tree: str = "Events",
    step_size: int | str = "100 MB",
    library: str = "ak",
    report: bool = False,
    threads: int | None = None,
) -> Iterator[Any]:
    """Reads tree ``tree`` of several files in steps, one file after another, as
    ``uproot.iterate`` (see :meth:`Tree.iterate`; with ``report=True`` each step is
    ``(arrays, (file, entry_start, entry_stop))``)."""
    for path in _paths(files):
        t = open(path, threads=threads)[tree]
        for arrays, (start, stop) in t.iterate(
            expressions, filter_name, step_size=step_size, library=library, report=True
        ):
            yield (arrays, (path, start, stop)) if report else arrays


def concatenate(
    files: Any,
    expressions: Any = None,
    filter_name: Any = None,
    *,
    tree: str = "Events",
    library: str = "ak",
    threads: int | None = None,
) -> Any:
    """Reads tree ``tree`` of several files into one array (``uproot.concatenate``)."""
    lib = _library(library)
    parts = [
        open(path, threads=threads)[tree].arrays(expressions, filter_name, library=lib)
        for path in _paths(files)
    ]
    if lib == "ak":
        import awkward as ak

        return ak.concatenate(parts)
    if lib == "pd":
        import pandas as pd

        return pd.concat(parts, ignore_index=True)
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]} if parts else {}


def _threads(threads: int | None) -> int:
    if threads is None:
        return os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise TypeError(f"threads must be an int or None, not {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return threads


class File:
    """An open evtc or ROOT file: a mapping from tree names to :class:`Tree` s."""

    def __init__(self, reader: Any, file_path: str, source: Any) -> None:
        self._reader = reader
        self.file_path = file_path
        self.source = source
        self._trees: dict[str, Tree] = {}
        # Friend files and the tree of each to read (None: the tree of the same name).
        self._friends: list[tuple[File, str | None]] = []

    @property
    def format(self) -> str:
        """``"evtc"`` or ``"root"``."""
        return self._reader.format

    def keys(self) -> list[str]:
        """The trees' names (for ROOT files, ``dir/name`` paths of the newest cycles)."""
        return list(self._reader.trees())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.keys()

    def __getitem__(self, name: str) -> Tree:
        if not isinstance(name, str):
            raise TypeError(f"tree names are str, not {type(name).__name__}")
        if name not in self._trees:
            self._trees[name] = Tree(self, name)
        return self._trees[name]

    def close(self) -> None:
        """Forgets the file (the native reader is freed when nothing refers to it)."""
        self._trees.clear()

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<evtc.File {self.file_path!r} ({self.format})>"


class _BranchTable(Mapping):
    """Branch name -> :class:`BranchInfo`, asked of the reader on first use (opening a tree of
    many thousand branches makes nothing per branch but its name)."""

    def __init__(self, reader: Any, tree: str, names: list[str]) -> None:
        self._reader = reader
        self._tree = tree
        self._names = names
        self._made: dict[str, BranchInfo] = {}
        # The tables of friend trees, whose branches follow this tree's.
        self.friends: list[_BranchTable] = []

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self._names)}

    def __getitem__(self, name: str) -> BranchInfo:
        info = self._made.get(name)
        if info is None and name not in self._index:
            for friend in self.friends:
                if name in friend:
                    return friend[name]
            raise KeyError(name)
        if info is None:
            b = self._reader.branch_info(self._tree, self._index[name])
            kind, length, typename = b["kind"], int(b["length"]), b["typename"]
            info = BranchInfo(
                name=name,
                kind=kind,
                dtype=np.dtype(b["dtype"]),
                length=length,
                counter=b["counter"],
                typename=typename,
                codec=b["codec"],
                rac=bool(b["rac"]),
                raw_bytes=int(b["raw_bytes"]),
                stored_bytes=int(b["stored_bytes"]),
                shape=(tuple(b["shape"]) or (length,)) if kind == "fixed" else (),
            )
            self._made[name] = info
        return info

    def replace(self, info: BranchInfo) -> None:
        self._made[info.name] = info

    def __iter__(self) -> Iterator[str]:
        yield from self._names
        seen = set(self._index)
        for friend in self.friends:
            for name in friend:
                if name not in seen:
                    seen.add(name)
                    yield name

    def __len__(self) -> int:
        return len(self._names) if not self.friends else sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        return name in self._index or any(name in f for f in self.friends)


class Tree:
    """A tree: its branches, ``num_entries``, and reads into Awkward, NumPy or pandas."""

    def __init__(self, file: File, name: str) -> None:
        self.file = file
        self.name = name
        entries, clusters, names, unsupported, nested, fields = file._reader.tree_info(name)
        self.num_entries: int = int(entries)
        # An RNTuple's top-level fields, read nested as uproot reads them (records, lists,
        # optional values, arrays, variants); its columns (`hit.x`) are readable alone too.
        self._fields: dict[str, Field] = {f.name: f for f in map(Field.of, fields)}
        self.cluster_ends: list[int] = list(clusters)
        self._info = _BranchTable(file._reader, name, names)
        self.unsupported: dict[str, tuple[str, str]] = {n: (c, r) for n, c, r in unsupported}
        # evtc-tools writes nested lists (std::vector<std::vector<T>>, std::vector<std::string>,
        # std::vector<std::vector<std::string>>) as the flattened values (characters) per entry
        # plus a "name/sizes" branch of inner sizes, and "name/sizes/sizes" for a level more
        # (docs/format.md 4.3): read them back as one.
        self._sizes: dict[str, list[str]] = {base: list(chain) for base, chain in nested}
        for base, chain in self._sizes.items():
            info = self._info[base]
            self._info.replace(dataclasses.replace(info, kind=f"{info.kind}{len(chain) + 1}"))
        # Friend trees: branch name -> the friend tree that holds it (not this one).
        self._owners: dict[str, Tree] = {}
        for friend_file, tree in file._friends:
            self._befriend(friend_file, tree)

    def _befriend(self, friend_file: File, tree: str | None) -> None:
        """Reads the branches of ``friend_file``'s tree ``tree`` (default: of this tree's name,
        or its only tree) as this tree's, entry by entry."""
        if tree is None:
            keys = friend_file.keys()
            tree = self.name if self.name in keys or len(keys) != 1 else keys[0]
        friend = friend_file[tree]
        if friend.num_entries != self.num_entries:
            raise SchemaError(
                f"friend {friend_file.file_path}: its tree {tree!r} has {friend.num_entries} "
                f"entries, tree {self.name!r} of {self.file.file_path} has {self.num_entries}; "
                "a friend's entries are read as this tree's, one for one"
            )
        for name in friend._info:
            if name not in self._info and name not in self._owners:
                self._owners[name] = friend
        self._info.friends.append(friend._info)

    def skim(
        self,
        output: str | os.PathLike[str],
        entries: Any = None,
        *,
        where: str | None = None,
        branches: list[str] | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Writes this tree's chosen entries and branches into a new evtc file (see
        :func:`evtc.skim`): ``entries`` is a boolean mask (one flag per entry) or entry numbers;
        ``where`` a selection expression instead. The tree must be of a local evtc file."""
        from .converting import skim

        if self.file.source is not None or self.file.format != "evtc":
            raise ValueError("tree.skim needs a tree of a local evtc file")
        if entries is not None:
            import numpy as np

            chosen = np.asarray(entries)
            key = "mask" if chosen.dtype == bool else "entries"
            options[key] = chosen
        return skim(
            self.file.file_path,
            output,
            tree=self.name,
            where=where,
            branches=branches,
            **options,
        )

    # --- the mapping of branches -------------------------------------------------------------

    def keys(self, filter_name: Any = None) -> list[str]:
        """Branch names, in file order, optionally filtered (see :meth:`arrays`); an RNTuple's
        top-level field names."""
        names = list(self._fields) if self._fields else list(self._info)
        if filter_name is None:
            return names
        keep = _name_filter(filter_name)
        return [n for n in names if keep(n)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        """The number of branches (as for ``keys()``; entries are ``num_entries``)."""
        return len(self._fields) if self._fields else len(self._info)

    def __contains__(self, name: object) -> bool:
        return name in self._fields or name in self._info

    def __getitem__(self, name: str) -> Branch:
        if not isinstance(name, str):
            raise TypeError(f"branch names are str, not {type(name).__name__}")
        return Branch(self, self._branch_info(name))

    def _branch_info(self, name: str) -> BranchInfo:
        field = self._fields.get(name)
        if field is not None:
            return self._field_info(field)
        try:
            return self._info[name]
        except KeyError:
            if name in self.unsupported:
                cls, reason = self.unsupported[name]
                raise UnsupportedError(f"branch {name!r} ({cls}): {reason}") from None
            raise KeyInFileError(f"tree {self.name!r} has no branch {name!r}") from None

    def _field_info(self, field: Field) -> BranchInfo:
        """A top-level RNTuple field as a branch: its columns' sizes summed."""
        infos = [self._info[self._info._names[c]] for c in field.columns()]
        return BranchInfo(
            name=field.name,
            kind="field",
            dtype=np.dtype(object),
            length=0,
            counter=None,
            typename=field.type,
            codec=infos[0].codec if infos else "",
            rac=False,
            raw_bytes=sum(i.raw_bytes for i in infos),
            stored_bytes=sum(i.stored_bytes for i in infos),
        )

    @property
    def branches(self) -> list[Branch]:
        """Every branch, in file order (an RNTuple's top-level fields)."""
        return [Branch(self, self._branch_info(n)) for n in self.keys()]

    def typenames(self, filter_name: Any = None) -> dict[str, str]:
        """Branch name -> type name (``float32[]``, ``Float_t`` for ROOT files, ...)."""
        return {n: self._info[n].typename for n in self.keys(filter_name)}

    def show(self, filter_name: Any = None, stream: Any = None) -> None:
        """Prints one line per branch: name, type, codec, RAC, on-disk and raw bytes."""
        stream = sys.stdout if stream is None else stream
        infos = [self._branch_info(n) for n in self.keys(filter_name)]
        width = max([len(i.name) for i in infos] + [4])
        types = max([len(i.typename) for i in infos] + [8])
        codecs = max([len(i.codec) for i in infos] + [5])
        header = f"{'name':<{width}} | {'typename':<{types}} | {'codec':<{codecs}} | rac | {'stored':>10} | {'raw':>10}"
        print(header, file=stream)
        print("-" * len(header), file=stream)
        for i in infos:
            print(
                f"{i.name:<{width}} | {i.typename:<{types}} | {i.codec:<{codecs}} | "
                f"{'yes' if i.rac else 'no ':<3} | {i.stored_bytes:>10} | {i.raw_bytes:>10}",
                file=stream,
            )

    def __repr__(self) -> str:
        return f"<evtc.Tree {self.name!r} ({self.num_entries} entries, {len(self._info)} branches)>"

    # --- reading -----------------------------------------------------------------------------

    def _select(self, expressions: Any, filter_name: Any) -> list[str]:
        if expressions is None:
            names = self.keys()
        else:
            if isinstance(expressions, str):
                expressions = [expressions]
            if not isinstance(expressions, Iterable):
                raise TypeError("expressions must be a branch name or a list of branch names")
            names = []
            for e in expressions:
                if not isinstance(e, str):
                    raise TypeError(f"expressions must be str, not {type(e).__name__}")
                self._branch_info(e)  # KeyInFileError / UnsupportedError
                names.append(e)
        keep = _name_filter(filter_name)
        return [n for n in names if keep(n)]

    def _range(self, entry_start: Any, entry_stop: Any) -> tuple[int, int]:
        return _entry_range(self.num_entries, entry_start, entry_stop)

    def _read(
        self, names: list[str], start: int, stop: int, entries: np.ndarray | None = None
    ) -> list[tuple[Any, list[Any]]]:
        """Each branch's ``(values, levels)`` of entries ``start..stop`` (or of ``entries``, in
        their order, from an evtc file): its values and the offsets of each list level,
        outermost first (none for scalars and fixed arrays). Each tree, this one and its
        friends, reads its own branches."""
        if not any(n in self._owners for n in names):
            return self._read_local(names, start, stop, entries)
        groups: dict[int, tuple[Tree, list[str]]] = {}
        for n in names:
            owner = self._owners.get(n, self)
            groups.setdefault(id(owner), (owner, []))[1].append(n)
        read: dict[str, tuple[Any, list[Any]]] = {}
        for owner, own in groups.values():
            read.update(zip(own, owner._read_local(own, start, stop, entries)))
        return [read[n] for n in names]

    def _read_local(
        self, names: list[str], start: int, stop: int, entries: np.ndarray | None = None
    ) -> list[tuple[Any, list[Any]]]:
        """:meth:`_read` of this tree's own branches."""
        extra = [s for n in names for s in self._sizes.get(n, [])]
        if entries is None:
            columns = self.file._reader.read(self.name, names + extra, start, stop)
        else:
            columns = self.file._reader.read_entries(self.name, names + extra, entries)
        if not extra:
            return columns
        out = columns[: len(names)]
        sizes = iter(columns[len(names) :])
        for i, name in enumerate(names):
            if name in self._sizes:
                chain = [next(sizes) for _ in self._sizes[name]]
                out[i] = (out[i][0], _nested_levels(chain))
        return out

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
        """Reads branches into arrays, as ``uproot.TTree.arrays``.

        Args:
            expressions: a branch name or list of names (default: every branch). Only names are
                supported, no formulas.
            filter_name: a glob (``"Muon_*"``), a ``"/regex/"``, a list of those, or a callable
                taking the name; keeps the branches it matches.
            entry_start, entry_stop: the entry range (negative counts from the end; clipped to
                the tree, as uproot does).
            library: ``"ak"`` (an Awkward record array; jagged branches are lists whose lengths
                equal their counter), ``"np"`` (a dict of NumPy arrays; jagged branches are object
                arrays of NumPy arrays) or ``"pd"`` (a pandas DataFrame; jagged branches in
                object columns).
            entries: instead of an entry range, the entries to read: any integer array (any
                order, repeats allowed), read in that order, decoding only the baskets (with RAC,
                the units) that hold them: random batches for machine learning.
            events: instead of an entry range, events by their keys in the tree's event index,
                ``[(run, event), ...]``: one entry each, in the order given (see
                :meth:`entry_of`).

        Raises:
            evtc.errors.KeyInFileError: an expression names no branch, or an event no entry.
            evtc.errors.DuplicateEventError: an event is held by several entries.
            evtc.errors.SchemaError: ``events`` for a tree without an event index.
            TypeError, ValueError: bad arguments.
        """
        lib = _library(library)
        names = self._select(expressions, filter_name)
        _one_way(entry_start, entry_stop, entries, events)
        if events is not None:
            entries = self.file._reader.entry_of(self.name, self._keys(events))
        if entries is not None:
            return self._take(lib, names, self._entries(entries))
        start, stop = self._range(entry_start, entry_stop)
        return self._arrays(lib, names, start, stop)

    def _entries(self, entries: Any) -> np.ndarray:
        """``entries`` as a contiguous uint64 array, checked to be entries of the tree."""
        return _checked_entries(entries, self.num_entries, f'tree "{self.name}"')

    def batches(
        self,
        size: int,
        expressions: Any = None,
        filter_name: Any = None,
        *,
        shuffle: bool = True,
        seed: int | None = None,
        library: str = "ak",
        drop_last: bool = False,
    ) -> Iterator[Any]:
        """Batches of ``size`` entries for machine learning: every entry once per pass, in a
        random order with ``shuffle`` (reproducible with ``seed``), each batch read as
        ``arrays(entries=...)`` reads it (only the baskets or RAC units holding it decoded).

        The order is a seeded pseudo-random permutation of the entries computed batch by batch
        (a Feistel network with cycle walking), not an array of every entry: memory stays that
        of one batch whatever the tree's size. The last batch is shorter unless ``drop_last``.
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ValueError(f"size must be a positive number of entries, not {size!r}")
        lib = _library(library)
        names = self._select(expressions, filter_name)
        n = self.num_entries
        order = _Permutation(n, seed) if shuffle else None
        for start in range(0, n, int(size)):
            stop = min(start + int(size), n)
            if drop_last and stop - start < size:
                return
            positions = np.arange(start, stop, dtype=np.uint64)
            chosen = order(positions) if order is not None else positions
            yield self._take(lib, names, chosen)

    # --- the event index ---------------------------------------------------------------------

    @property
    def event_index(self) -> tuple[str, str] | None:
        """The key branches of the tree's event index, ``(major, minor)`` (``("run",
        "event")``), or ``None`` without one (``evtc.index`` or ``evtc index`` builds it). Of a
        ROOT tree: its ``TTreeIndex``'s major and minor expressions."""
        keys = self.file._reader.event_index(self.name)
        return None if keys is None else (keys[0], keys[1])

    def entries_of(self, major: int, minor: int) -> np.ndarray:
        """The entries whose keys in the tree's event index are ``(major, minor)``, in entry
        order, as a ``uint64`` array: empty when no entry has them. Found in O(log n) in the
        index without reading the branches.

        Raises:
            evtc.errors.SchemaError: the tree has no event index.
        """
        (entries,) = self.file._reader.entries_of(self.name, self._keys([(major, minor)]))
        return np.asarray(entries, dtype=np.uint64)

    def entry_of(self, major: int, minor: int) -> int:
        """The entry whose keys in the tree's event index are ``(major, minor)``: ROOT's
        ``GetEntryNumberWithIndex``.

        Raises:
            evtc.errors.KeyInFileError: no entry has them.
            evtc.errors.DuplicateEventError: several entries have them (all are named).
            evtc.errors.SchemaError: the tree has no event index.
        """
        (entry,) = self.file._reader.entry_of(self.name, self._keys([(major, minor)]))
        return int(entry)

    @staticmethod
    def _keys(keys: Any) -> list[tuple[int, int]]:
        """``keys`` as (major, minor) pairs of Python integers."""
        pairs = []
        for key in keys:
            if isinstance(key, (str, bytes)) or len(key) != 2:
                raise TypeError(f"an event is a (major, minor) pair of integers, not {key!r}")
            a, b = key
            if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (a, b)):
                raise TypeError(f"an event is a (major, minor) pair of integers, not {key!r}")
            pairs.append((int(a), int(b)))
        return pairs

    def _take(self, lib: str, names: list[str], entries: np.ndarray) -> Any:
        """Entries ``entries`` (a uint64 array, in that order) of ``names``."""
        if self.file.format == "evtc" and not any(n in self._fields for n in names):
            infos = [self._info[n] for n in names]
            return _build(lib, infos, self._read(names, 0, 0, entries), len(entries))
        # A ROOT file: the range that covers them, then the entries taken from it.
        if len(entries) == 0:
            return self._arrays(lib, names, 0, 0)
        low, high = int(entries.min()), int(entries.max()) + 1
        whole = self._arrays(lib, names, low, high)
        at = (entries - low).astype(np.int64)
        if lib == "ak":
            return whole[at]
        if lib == "np":
            return {n: v[at] for n, v in whole.items()}
        return whole.iloc[at].reset_index(drop=True)

    def _arrays(self, lib: str, names: list[str], start: int, stop: int) -> Any:
        """Branches (or an RNTuple's fields) ``names`` of entries ``start..stop``."""
        if not any(n in self._fields for n in names):
            return _build(lib, [self._info[n] for n in names], self._read(names, start, stop), stop - start)
        return self._field_arrays(lib, names, start, stop)

    def _field_arrays(self, lib: str, names: list[str], start: int, stop: int) -> Any:
        """An RNTuple's fields (and columns) ``names``, nested as uproot reads them."""
        import awkward as ak

        index = self._info._index
        wanted = []
        for n in names:
            for c in self._fields[n].columns() if n in self._fields else [index[n]]:
                if c not in wanted:
                    wanted.append(c)
        column_names = [self._info._names[c] for c in wanted]
        data = dict(zip(wanted, self._read(column_names, start, stop)))
        kinds = {c: self._info[self._info._names[c]].kind for c in wanted}
        length = stop - start
        contents = {}
        for n in names:
            field = self._fields.get(n)
            if field is not None:
                contents[n] = _fields_record([field], data, kinds, length)[n]
            else:
                # One column alone, read as a branch of a TTree is.
                contents[n] = _ak_array([self._info[n]], [data[index[n]]], length)[n]
        arrays = ak.zip(contents, depth_limit=1)
        if lib == "ak":
            return arrays
        out = {n: _np_field(arrays[n]) for n in names}
        if lib == "np":
            return out
        import pandas as pd

        return pd.DataFrame(out, index=pd.RangeIndex(length) if not out else None)

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
        """Reads the selected branches in steps, as ``uproot.TTree.iterate``.

        ``step_size`` is a number of entries or a memory size (``"100 MB"``, ``"1 GiB"``) of
        uncompressed data of the selected branches per step. With ``report=True`` each step is
        ``(arrays, (entry_start, entry_stop))``.
        """
        lib = _library(library)
        names = self._select(expressions, filter_name)
        start, stop = self._range(entry_start, entry_stop)
        step = self._step_entries(names, step_size)
        steps = [(at, min(at + step, stop)) for at in range(start, stop, step)]
        if self.file.source is None or self.file.format != "evtc" or len(steps) < 2:
            for at, end in steps:
                arrays = self._arrays(lib, names, at, end)
                yield (arrays, (at, end)) if report else arrays
            return
        yield from self._iterate_ahead(lib, names, steps, report)

    def _iterate_ahead(
        self, lib: str, names: list[str], steps: list[tuple[int, int]], report: bool
    ) -> Iterator[Any]:
        """The steps of a remote evtc file, each step's bytes fetched on a thread of its own
        while the step before is decoded."""
        from concurrent.futures import ThreadPoolExecutor

        reader = self.file._reader
        own = [n for n in names if n not in self._owners]
        fetch_names = own + [s for n in own for s in self._sizes.get(n, [])]
        with ThreadPoolExecutor(1) as pool:
            ahead: Any = pool.submit(reader.prefetch, self.name, fetch_names, *steps[0])
            try:
                for k, (at, end) in enumerate(steps):
                    ids, ahead = ahead.result(), None
                    if k + 1 < len(steps):
                        ahead = pool.submit(reader.prefetch, self.name, fetch_names, *steps[k + 1])
                    try:
                        arrays = self._arrays(lib, names, at, end)
                    finally:
                        reader.forget(ids)
                    yield (arrays, (at, end)) if report else arrays
            finally:
                # A loop left early: the step fetched ahead is not read.
                if ahead is not None:
                    try:
                        reader.forget(ahead.result())
                    except Exception:  # noqa: BLE001 - its error is not this loop's
                        pass

    def _step_entries(self, names: list[str], step_size: int | str) -> int:
        raw = (
            sum(self._branch_info(n).raw_bytes for n in names) if isinstance(step_size, str) else 0
        )
        return _entries_per_step(step_size, raw, self.num_entries)

    # --- Arrow --------------------------------------------------------------------------------

    def arrow(
        self,
        expressions: Any = None,
        filter_name: Any = None,
        *,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        step_size: int | str = "100 MB",
    ) -> Any:
        """A projection and entry range of the tree as an Arrow stream source: an object with
        ``__arrow_c_stream__`` (for ``pyarrow.table``, ``polars.DataFrame``, DuckDB), read in
        batches of ``step_size`` (entries or a memory size) when the consumer pulls them."""
        from ._arrow import ArrowStream

        names = self._select(expressions, filter_name)
        # An RNTuple's fields as their columns (`hit.x`): Arrow gets flat columns.
        names = [
            self._info._names[c] if n in self._fields else n
            for n in names
            for c in (self._fields[n].columns() if n in self._fields else [0])
        ]
        start, stop = self._range(entry_start, entry_stop)
        return ArrowStream(self, names, start, stop, self._step_entries(names, step_size))

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The whole tree as an Arrow C stream (the Arrow PyCapsule interface)."""
        return self.arrow().__arrow_c_stream__(requested_schema)


class Branch:
    """One branch: ``array(...)`` reads it; ``branch[i]`` reads one entry."""

    def __init__(self, tree: Tree, info: BranchInfo) -> None:
        self.tree = tree
        self.info = info

    name = property(lambda self: self.info.name)
    typename = property(lambda self: self.info.typename)
    counter = property(lambda self: self.info.counter)

    @property
    def num_entries(self) -> int:
        return self.tree.num_entries

    def array(
        self,
        *,
        entry_start: int | None = None,
        entry_stop: int | None = None,
        library: str = "ak",
    ) -> Any:
        """Reads the branch (see :meth:`Tree.arrays` for the arguments and the types)."""
        lib = _library(library)
        start, stop = self.tree._range(entry_start, entry_stop)
        if self.info.kind == "field":
            arrays = self.tree._arrays(lib, [self.name], start, stop)
            return arrays[self.name]
        (column,) = self.tree._read([self.name], start, stop)
        if lib == "ak":
            return _ak_array([self.info], [column], stop - start)[self.name]
        return _np_column(self.info, column)

    def entry(self, entry: int) -> Any:
        """Entry ``entry``: a NumPy scalar, a NumPy array (arrays), a str or bytes (strings), or a
        list of arrays (lists of lists). In evtc files this goes through a cursor: with
        random-access compression only the unit holding the entry is decompressed."""
        i = operator.index(entry)
        if i < 0:
            i += self.num_entries
        if self.info.kind == "field":
            if not 0 <= i < self.num_entries:
                raise IndexError(f"entry {entry} of a tree of {self.num_entries} entries")
            return self.tree._arrays("ak", [self.name], i, i + 1)[self.name][0]
        tree, reader = self.tree, self.tree.file._reader
        values, levels = reader.entry(tree.name, self.name, i)
        if not levels and self.info.kind not in ("scalar", "fixed"):
            # An evtc entry read through a cursor: its values alone, and those of its sizes
            # branches for a nested list.
            chain = [reader.entry(tree.name, s, i)[0] for s in tree._sizes.get(self.name, [])]
            if chain:
                levels = _nested_levels([(v, [np.array([0, len(v)], dtype=np.uint64)]) for v in chain])
            else:
                levels = [np.array([0, len(values)], dtype=np.uint64)]
        return _np_column(self.info, (values, levels))[0]

    def __getitem__(self, entry: int) -> Any:
        return self.entry(entry)

    def __repr__(self) -> str:
        return f"<evtc.Branch {self.name!r} ({self.typename})>"


# --- helpers ----------------------------------------------------------------------------------


def _name_filter(filter_name: Any) -> Callable[[str], bool]:
    if filter_name is None:
        return lambda name: True
    if callable(filter_name):
        return lambda name: bool(filter_name(name))
    if isinstance(filter_name, str):
        filter_name = [filter_name]
    if not isinstance(filter_name, Iterable):
        raise TypeError("filter_name must be a str, a list of str or a callable")
    tests = []
    for pattern in filter_name:
        if not isinstance(pattern, str):
            raise TypeError(f"filter_name patterns must be str, not {type(pattern).__name__}")
        if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
            tests.append(re.compile(pattern[1:-1]).search)
        else:
            tests.append(re.compile(fnmatch.translate(pattern)).match)
    return lambda name: any(t(name) for t in tests)


def _basket_cache(value: Any) -> int:
    if isinstance(value, str):
        return _memory_size(value, "basket_cache")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"basket_cache must be a number of bytes or a memory size such as '64 MB', not {type(value).__name__}"
        )
    if value < 0:
        raise ValueError(f"basket_cache must be at least 0 bytes, not {value}")
    return int(value)


class _Permutation:
    """A seeded pseudo-random permutation of ``0..n``, evaluated for any positions without
    holding the whole order: a four-round Feistel network over the smallest even number of bits
    that covers ``n``, walking the cycle until the value falls below ``n`` (each step stays in
    the permutation of the larger power of two, so the result is a permutation of ``0..n``)."""

    def __init__(self, n: int, seed: int | None) -> None:
        self.n = n
        bits = max(2, (max(n - 1, 1)).bit_length())
        self.half = (bits + 1) // 2
        self.mask = (1 << self.half) - 1
        rng = np.random.default_rng(seed)
        self.keys = rng.integers(0, 1 << 32, size=4, dtype=np.uint64)

    def _round(self, x: np.ndarray, key: np.uint64) -> np.ndarray:
        with np.errstate(over="ignore"):
            h = (x * np.uint64(0x9E3779B97F4A7C15)) ^ key
            h ^= h >> np.uint64(29)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(32)
        return h & np.uint64(self.mask)

    def _once(self, x: np.ndarray) -> np.ndarray:
        half = np.uint64(self.half)
        left, right = x >> half, x & np.uint64(self.mask)
        for key in self.keys:
            left, right = right, left ^ self._round(right, key)
        return (left << half) | right

    def __call__(self, positions: np.ndarray) -> np.ndarray:
        out = self._once(positions.astype(np.uint64))
        outside = out >= np.uint64(self.n)
        while outside.any():
            out[outside] = self._once(out[outside])
            outside = out >= np.uint64(self.n)
        return out
