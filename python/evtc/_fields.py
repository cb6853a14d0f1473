"""The fields of an RNTuple, read as uproot reads them: records, lists, optional values, fixed-size
arrays and variants nested as the file declares them, built over the columns evtc reads (one per
leaf field) with Awkward's layout classes (no per-entry Python work).

The native reader describes each top-level field as ``(name, type, kind, column, size,
children)`` (``Tree::fields`` in evtc-root); a column's data is ``(values, levels)``, its list
levels outermost first, one per list-like field above it (collections, optional values, variant
alternatives, and fixed-size arrays unless every level above the column is one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np


@dataclass(frozen=True)
class Field:
    """One field: its name, C++ type, kind (``column``, ``record``, ``list``, ``option``,
    ``array``, ``variant``), the column it reads (``column`` kind), an array's size, and the
    fields below it."""

    name: str
    type: str
    kind: str
    column: int
    size: int
    children: tuple[Field, ...]

    @staticmethod
    def of(t: tuple[Any, ...]) -> Field:
        name, type_, kind, column, size, children = t
        return Field(name, type_, kind, int(column), int(size), tuple(Field.of(c) for c in children))

    def columns(self) -> list[int]:
        """The columns below this field, in tree order."""
        if self.kind == "column":
            return [self.column]
        return [c for child in self.children for c in child.columns()]

    def prune(self, keep: set[int]) -> Field | None:
        """This field with only the columns in ``keep`` below it (``None`` if none is)."""
        if self.kind == "column":
            return self if self.column in keep else None
        if self.kind == "variant":
            # A variant is read whole (its tag decides which alternative an item holds).
            return self if any(c in keep for c in self.columns()) else None
        children = tuple(c for c in (child.prune(keep) for child in self.children) if c is not None)
        if not children:
            return None
        return Field(self.name, self.type, self.kind, self.column, self.size, children)


def record(
    fields: Iterable[Field],
    data: dict[int, tuple[np.ndarray, list[np.ndarray]]],
    kinds: dict[int, str],
    length: int,
) -> Any:
    """An Awkward array of one record per entry, a member per field in ``fields``; ``data``
    holds each column's ``(values, levels)``, ``kinds`` each column's branch kind (``fixed`` for
    a fixed-size array, with no list levels; ``string...`` for strings)."""
    import awkward as ak

    fields = list(fields)
    ctx = _Columns(data, kinds)
    contents = [_content(f, ctx, 0, length) for f in fields]
    layout = ak.contents.RecordArray(contents, [f.name for f in fields], length=length)
    return ak.Array(layout)


@dataclass
class _Columns:
    data: dict[int, tuple[np.ndarray, list[np.ndarray]]]
    kinds: dict[int, str]

    def levels_column(self, field: Field) -> int | None:
        """A column below ``field`` that has list levels (not a fixed-size array)."""
        return next((c for c in field.columns() if self.kinds[c] != "fixed"), None)


def _content(field: Field, ctx: _Columns, depth: int, length: int) -> Any:
    """The layout of ``field``'s ``length`` items, ``depth`` list levels below the entries."""
    import awkward as ak

    if field.kind == "column":
        values, levels = ctx.data[field.column]
        if ctx.kinds[field.column].startswith(("string", "bytes")):
            chars = ak.contents.NumpyArray(values, parameters={"__array__": "char"})
            offsets = ak.index.Index64(levels[depth].view(np.int64))
            return ak.contents.ListOffsetArray(offsets, chars, parameters={"__array__": "string"})
        return ak.contents.NumpyArray(values)
    if field.kind == "record":
        contents = [_content(c, ctx, depth, length) for c in field.children]
        names = [c.name for c in field.children]
        tuple_ = names == [str(i) for i in range(len(names))]
        return ak.contents.RecordArray(contents, None if tuple_ else names, length=length)
    if field.kind == "array":
        item = field.children[0]
        below = ctx.levels_column(field)
        inner_depth = depth if below is None else depth + 1
        content = _content(item, ctx, inner_depth, length * field.size)
        return ak.contents.RegularArray(content, field.size, zeros_length=length)
    if field.kind in ("list", "option"):
        column = ctx.levels_column(field)
        if column is None:
            offsets = np.zeros(length + 1, dtype=np.int64)
        else:
            offsets = ctx.data[column][1][depth].view(np.int64)
        content = _content(field.children[0], ctx, depth + 1, int(offsets[-1]))
        if field.kind == "option" and field.type.startswith("std::optional"):
            # Zero or one item: the item's position, or -1 for none.
            present = np.diff(offsets) > 0
            index = np.where(present, offsets[:-1], -1)
            return ak.contents.IndexedOptionArray(ak.index.Index64(index), content)
        return ak.contents.ListOffsetArray(ak.index.Index64(offsets), content)
    if field.kind == "variant":
        return _variant(field, ctx, depth, length)
    raise ValueError(f"field {field.name!r} of unknown kind {field.kind!r}")


def _variant(field: Field, ctx: _Columns, depth: int, length: int) -> Any:
    """A variant: a union of its alternatives over the items that hold one, none elsewhere."""
    import awkward as ak

    tags = ctx.data[field.children[0].column][0].astype(np.int8)
    valid = tags >= 0
    alternatives = field.children[1:]
    contents = []
    index = np.zeros(length, dtype=np.int64)
    for k, alternative in enumerate(alternatives):
        held = tags == k
        index[held] = np.arange(int(held.sum()))
        contents.append(_content(alternative.children[0], ctx, depth + 1, int(held.sum())))
    if len(contents) == 1:
        union = ak.contents.IndexedArray(ak.index.Index64(index[valid]), contents[0])
    else:
        # Not `simplified`: it would merge an int and a float alternative into one type.
        union = ak.contents.UnionArray(
            ak.index.Index8(tags[valid]), ak.index.Index64(index[valid]), contents
        )
    if valid.all():
        return union
    position = np.where(valid, np.cumsum(valid) - 1, -1)
    return ak.contents.IndexedOptionArray.simplified(ak.index.Index64(position), union)
