"""coffea's NanoEvents over a tree of an evtc file (or any file ``evtc.open`` reads).

``events(path)`` gives the NanoEvents array of coffea's ``NanoEventsFactory.from_preloaded``
(eager mode) with the NanoAOD schema by default, so that a NanoAOD analysis runs unchanged::

    from evtc.coffea import events
    ev = events("nano.evtc")
    muons = ev.Muon[ev.Muon.pt > 20]

Each branch is read when the analysis first touches it (coffea asks the source for the columns
its records use); the schema's forms come from zero-entry reads, which read no basket.

``events(path, mode="virtual")`` gives them as coffea's virtual mode does
(``NanoEventsFactory.from_root(..., mode="virtual")``): every buffer an Awkward virtual array,
read when an operation first needs it, so that an analysis that touches a few columns of a
collection reads only those.

``events(paths, mode="dask")`` gives them as a ``dask_awkward.Array`` over one or many files, as
``NanoEventsFactory.from_root(..., mode="dask")`` does over ROOT files: one partition per group
of whole clusters, the schema applied by coffea's own form mapping, and only the branches the
computation uses read on the workers (dask-awkward's projection).
"""

from __future__ import annotations

import os
import uuid as _uuid
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

from .reading import Tree
from .reading import open as open_file


class _ColumnSource(Mapping):
    """The mapping of branch names to Awkward arrays that ``from_preloaded`` takes, each branch
    read on first access; ``items()`` gives zero-entry arrays, which carry the forms coffea
    builds its schema from."""

    def __init__(self, tree: Tree, path: str) -> None:
        self._tree = tree
        self._names = [n for n in tree.keys() if "," not in n and "!" not in n]
        self._arrays: dict[str, Any] = {}
        self.metadata = {
            "uuid": str(_uuid.uuid5(_uuid.NAMESPACE_URL, f"{os.path.abspath(path)}:{tree.name}")),
            "num_rows": tree.num_entries,
            "object_path": tree.name,
        }

    def __getitem__(self, name: str) -> Any:
        if name not in self._arrays:
            if name not in self._names:
                raise KeyError(name)
            self._arrays[name] = self._tree[name].array()
        return self._arrays[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def items(self) -> Any:  # type: ignore[override]
        empty = self._tree.arrays(self._names, entry_stop=0)
        return [(name, empty[name]) for name in self._names]


def events(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    tree: str = "Events",
    schemaclass: Any = None,
    mode: str = "eager",
    entry_start: int | None = None,
    entry_stop: int | None = None,
    metadata: dict[str, Any] | None = None,
    step_size: int | str = "100 MB",
    **open_options: Any,
) -> Any:
    """coffea's NanoEvents of tree ``tree`` of ``path`` (``NanoAODSchema`` unless another schema
    class is given). ``open_options`` go to :func:`evtc.open` (``threads``,
    ``storage_options``, ...).

    Args:
        mode: ``"eager"`` (one file, or its entries ``entry_start:entry_stop``: the branches an
            analysis uses are read when it first uses them), ``"virtual"`` (the same, each
            buffer an Awkward virtual array read when first needed, as coffea's virtual mode)
            or ``"dask"`` (``path`` may be a
            list of files: a ``dask_awkward.Array`` of partitions of about ``step_size``
            entries or uncompressed bytes, whole clusters each, reading only the branches the
            computation uses).

    Raises:
        ImportError: coffea (or for ``"dask"``, dask-awkward) is not installed.
        ValueError: another mode, or an entry range with ``"dask"``.
    """
    try:
        from coffea.nanoevents import NanoAODSchema, NanoEventsFactory
    except ImportError as e:
        raise ImportError("evtc.coffea needs coffea: pip install coffea") from e
    if mode == "dask":
        if entry_start is not None or entry_stop is not None:
            raise ValueError("mode='dask' reads whole files: give no entry_start or entry_stop")
        return _dask_events(
            path, tree, schemaclass or NanoAODSchema, metadata, step_size, open_options
        )
    if mode not in ("eager", "virtual"):
        raise ValueError(f"mode must be 'eager', 'virtual' or 'dask', not {mode!r}")
    if isinstance(path, list):
        raise ValueError(f"mode={mode!r} reads one file: give one path, or use mode='dask'")
    source = _ColumnSource(open_file(path, **open_options)[tree], os.fspath(path))
    if mode == "virtual":
        return _virtual_events(source, entry_start, entry_stop, schemaclass or NanoAODSchema, metadata)
    factory = NanoEventsFactory.from_preloaded(
        source,
        entry_start=entry_start,
        entry_stop=entry_stop,
        schemaclass=schemaclass or NanoAODSchema,
        metadata=metadata,
    )
    return factory.events()


def _virtual_events(
    source: _ColumnSource,
    entry_start: int | None,
    entry_stop: int | None,
    schemaclass: Any,
    metadata: dict[str, Any] | None,
) -> Any:
    """coffea's virtual mode over ``source``: ``from_preloaded``'s steps with a mapping that
    hands out buffers as virtual arrays (coffea 2026 offers virtual mode for ROOT files only,
    so this uses its mapping classes and ``_from_mapping``, as ``from_preloaded`` does)."""
    from coffea.nanoevents import NanoEventsFactory
    from coffea.nanoevents.mapping.base import BaseSourceMapping
    from coffea.nanoevents.mapping.preloaded import PreloadedOpener, PreloadedSourceMapping

    class VirtualMapping(PreloadedSourceMapping):
        def __init__(self, opener: Any, start: int, stop: int) -> None:
            BaseSourceMapping.__init__(self, opener, start, stop, virtual=True)

    rows = source.metadata["num_rows"]
    start = 0 if entry_start is None or entry_start < 0 else entry_start
    stop = rows if entry_stop is None or entry_stop > rows else entry_stop
    uuid, where = source.metadata["uuid"], source.metadata["object_path"]
    key = (str(uuid), where, f"{start}-{stop}")
    mapping = VirtualMapping(PreloadedOpener({uuid: source}), start, stop)
    mapping.preload_column_source(key[0], key[1], source)
    form = mapping._extract_base_form(source)
    return NanoEventsFactory._from_mapping(
        mapping, key, form, schemaclass, metadata, mode="virtual"
    ).events()


class _CoffeaTree:
    """The part of an uproot TTree that coffea's form mapping reads in each partition
    (``load_buffers``): ``arrays(keys, ..., how=dict)``, ``in``, and the file's identity."""

    def __init__(self, tree: Tree, path: str) -> None:
        self._tree = tree
        self.object_path = tree.name
        uuid = str(_uuid.uuid5(_uuid.NAMESPACE_URL, f"{path}:{tree.name}"))
        self.file = SimpleNamespace(uuid=uuid, file_path=path)

    def __contains__(self, name: str) -> bool:
        return name in self._tree.keys()

    def arrays(self, keys: list[str], *, entry_start: int, entry_stop: int, how: Any = dict, **_: Any) -> Any:
        arrays = self._tree.arrays(list(keys), entry_start=entry_start, entry_stop=entry_stop)
        return {k: arrays[k] for k in keys}


def _base_form(tree: Tree, names: list[str]) -> Any:
    """The record form coffea's form mapping starts from, as ``uproot.dask`` makes it: a field
    per branch, each with its ``__doc__`` and ``typename`` parameters."""
    import awkward as ak

    empty = tree.arrays(names, entry_stop=0)
    contents = []
    for name in names:
        form = empty[name].layout.form.to_dict()
        form.setdefault("parameters", {})
        form["parameters"] = {**form["parameters"], "__doc__": name, "typename": tree[name].typename}
        contents.append(form)
    return ak.forms.from_dict(
        {
            "class": "RecordArray",
            "fields": names,
            "contents": contents,
            "parameters": {"__doc__": tree.name},
        }
    )


class _NanoPartitions:
    """Reads ``(path, start, stop)`` partitions as NanoEvents: dask-awkward's projection protocol
    (``prepare_for_projection``, ``project``) over the form coffea's mapping makes; a projected
    reader reads only ``keys``, the other buffers placeholders, as ``uproot.dask`` does."""

    def __init__(
        self, tree: str, form: Any, info: Any, keys: frozenset[str], open_options: dict[str, Any]
    ) -> None:
        self.tree = tree
        self.form = form
        self.info = info
        self.keys = keys
        self.open_options = open_options

    def __call__(self, part: tuple[str, int, int]) -> Any:
        import awkward as ak
        from awkward._nplikes.numpy import Numpy

        path, start, stop = part
        source = _CoffeaTree(open_file(path, **self.open_options)[self.tree], path)
        mapping = self.info.load_buffers(
            source, sorted(self.keys), start, stop, None, None, {"ak_add_doc": False}
        )
        container = {}
        expected = self.form.expected_from_buffers(buffer_key=self.info.buffer_key)
        for key, dtype in expected.items():
            if all(k in self.keys for k in self.info.keys_for_buffer_keys(frozenset({key}))):
                container[key] = mapping[key]
            else:
                container[key] = ak.typetracer.PlaceholderArray(
                    nplike=Numpy.instance(), shape=(ak.typetracer.unknown_length,), dtype=dtype
                )
        return ak.from_buffers(
            self.form, stop - start, container, behavior=self.info.behavior, buffer_key=self.info.buffer_key
        )

    def mock(self) -> Any:
        import awkward as ak

        return ak.typetracer.typetracer_from_form(self.form, highlevel=True, behavior=self.info.behavior)

    def mock_empty(self, backend: str = "cpu") -> Any:
        import awkward as ak

        empty = self.form.length_zero_array(highlevel=False)
        return ak.to_backend(empty, backend=backend, highlevel=True, behavior=self.info.behavior)

    def prepare_for_projection(self) -> Any:
        import awkward as ak
        from dask_awkward.lib.utils import trace_form_structure

        meta, report = ak.typetracer.typetracer_with_report(
            self.form, highlevel=True, behavior=self.info.behavior, buffer_key=self.info.buffer_key
        )
        return meta, report, trace_form_structure(self.form, buffer_key=self.info.buffer_key)

    def necessary_columns(self, report: Any, state: Any) -> frozenset[str]:
        """The branches whose buffers the traced computation touched (and those needed for the
        shapes of what it touched)."""
        from dask_awkward.lib.utils import buffer_keys_required_to_compute_shapes

        touched = {
            *report.data_touched,
            *buffer_keys_required_to_compute_shapes(
                self.info.parse_buffer_key,
                report.shape_touched,
                state["form_key_to_parent_form_key"],
                state["form_key_to_buffer_keys"],
            ),
        }
        return frozenset(self.info.keys_for_buffer_keys(touched)) & self.keys

    def project(self, report: Any, state: Any) -> _NanoPartitions:
        return self.project_manually(self.necessary_columns(report, state))

    def project_manually(self, columns: frozenset[str]) -> _NanoPartitions:
        keys = frozenset(columns) & self.keys
        return _NanoPartitions(self.tree, self.form, self.info, keys, self.open_options)


def _dask_events(
    paths: Any,
    tree: str,
    schemaclass: Any,
    metadata: dict[str, Any] | None,
    step_size: int | str,
    open_options: dict[str, Any],
) -> Any:
    """NanoEvents as a ``dask_awkward.Array`` over ``paths`` (see :func:`events`)."""
    import dask_awkward as dak
    from coffea.nanoevents import NanoEventsFactory
    from coffea.nanoevents.factory import _map_schema_uproot

    from ._dask import _partitions
    from .errors import SchemaError

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("mode='dask' needs at least one file")
    first = open_file(paths[0], **open_options)[tree]
    names = [n for n in first.keys() if "," not in n and "!" not in n]
    parts: list[tuple[str, int, int]] = []
    for path in paths:
        t = first if path == paths[0] else open_file(path, **open_options)[tree]
        has = set(t.keys())
        missing = [n for n in names if n not in has]
        if missing:
            raise SchemaError(f"{path}: tree {tree!r} lacks branches of {paths[0]}: {missing[:5]}")
        step = t._step_entries(names, step_size)
        parts.extend((path, a, b) for a, b in _partitions(t.cluster_ends, step))
    if not parts:
        raise ValueError("the files have no entries")
    mapping = _map_schema_uproot(
        schemaclass=schemaclass,
        behavior=dict(schemaclass.behavior()),
        metadata=metadata,
        version="latest",
    )
    divisions = [0]
    for _, a, b in parts:
        divisions.append(divisions[-1] + (b - a))

    def opener(form_mapping: Any) -> Any:
        form, info = form_mapping(_base_form(first, names))
        reader = _NanoPartitions(tree, form, info, frozenset(names), open_options)
        return dak.from_map(reader, parts, label="evtc-nanoevents", divisions=tuple(divisions))

    # coffea's factory calls the opener with its mapping and marks the result as the events
    # that cross-references (Muon.matched_jet, ...) start from.
    return NanoEventsFactory(mapping, opener, None, mode="dask").events()
