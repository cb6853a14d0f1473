"""coffea's NanoEvents over a tree of an evtc file (or any file ``evtc.open`` reads).

``events(path)`` gives the NanoEvents array of coffea's ``NanoEventsFactory.from_preloaded``
(eager mode) with the NanoAOD schema by default, so that a NanoAOD analysis runs unchanged::

    from evtc.coffea import events
    ev = events("nano.evtc")
    muons = ev.Muon[ev.Muon.pt > 20]

Each branch is read when the analysis first touches it (coffea asks the source for the columns
its records use); the schema's forms come from zero-entry reads, which read no basket.
"""

from __future__ import annotations

import os
import uuid as _uuid
from collections.abc import Iterator, Mapping
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
    path: str | os.PathLike[str],
    *,
    tree: str = "Events",
    schemaclass: Any = None,
    entry_start: int | None = None,
    entry_stop: int | None = None,
    metadata: dict[str, Any] | None = None,
    **open_options: Any,
) -> Any:
    """coffea's NanoEvents of tree ``tree`` of ``path`` (``NanoAODSchema`` unless another schema
    class is given), eager: the branches an analysis uses are read when it first uses them.
    ``open_options`` go to :func:`evtc.open` (``threads``, ``storage_options``, ...).

    Raises:
        ImportError: coffea is not installed.
    """
    try:
        from coffea.nanoevents import NanoAODSchema, NanoEventsFactory
    except ImportError as e:
        raise ImportError("evtc.coffea needs coffea: pip install coffea") from e
    source = _ColumnSource(open_file(path, **open_options)[tree], os.fspath(path))
    factory = NanoEventsFactory.from_preloaded(
        source,
        entry_start=entry_start,
        entry_stop=entry_stop,
        schemaclass=schemaclass or NanoAODSchema,
        metadata=metadata,
    )
    return factory.events()
