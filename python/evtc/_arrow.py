"""Arrow export through the Arrow PyCapsule interface (``__arrow_c_stream__``).

Record batches are assembled by pyarrow over the decoded NumPy buffers (offsets and values are
handed over without a copy; booleans are bit-packed, as Arrow requires), and exported as an Arrow C
stream, which ``pyarrow.table``, ``polars.DataFrame`` and DuckDB read without going through
Python objects.
"""

from __future__ import annotations

from typing import Any, Iterator


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("Arrow export needs pyarrow: pip install pyarrow") from e
    return pyarrow


def _type(pa: Any, info: Any) -> Any:
    """The Arrow type of a branch: lists hold non-null items, as evtc's lists do."""

    def item(t: Any) -> Any:
        return pa.field("item", t, nullable=False)

    leaf = pa.from_numpy_dtype(info.dtype)
    if info.kind == "scalar":
        return leaf
    if info.kind == "fixed":
        for size in reversed(info.shape):
            leaf = pa.list_(item(leaf), size)
        return leaf
    if info.kind == "jagged":
        return pa.large_list(item(leaf))
    if info.kind == "string":
        return pa.large_string()
    if info.kind == "bytes":
        return pa.large_binary()
    return pa.large_list(item(pa.large_list(item(leaf))))


def _array(pa: Any, info: Any, column: Any) -> Any:
    values, offsets, inner = column
    leaf = pa.array(values)
    t = _type(pa, info)
    if info.kind == "scalar":
        return leaf
    if info.kind == "fixed":
        types = [t]
        while len(types) < len(info.shape):
            types.append(types[-1].value_type)
        for typ in reversed(types):
            leaf = pa.FixedSizeListArray.from_arrays(leaf, type=typ)
        return leaf
    n = len(offsets) - 1
    outer = pa.array(offsets.view("int64"))
    if info.kind == "jagged":
        return pa.LargeListArray.from_arrays(outer, leaf, type=t)
    if info.kind in ("string", "bytes"):
        cls = pa.LargeStringArray if info.kind == "string" else pa.LargeBinaryArray
        return cls.from_buffers(n, pa.py_buffer(offsets.view("int64")), pa.py_buffer(values))
    lists = pa.LargeListArray.from_arrays(pa.array(inner.view("int64")), leaf, type=t.value_type)
    return pa.LargeListArray.from_arrays(outer, lists, type=t)


class ArrowStream:
    """A projection and entry range of a tree, read in steps as Arrow record batches."""

    def __init__(self, tree: Any, names: list[str], start: int, stop: int, step: int) -> None:
        self.tree = tree
        self.names = names
        self.start = start
        self.stop = stop
        self.step = step

    @property
    def schema(self) -> Any:
        pa = _pyarrow()
        infos = [self.tree._info[n] for n in self.names]
        return pa.schema([pa.field(i.name, _type(pa, i), nullable=False) for i in infos])

    def batches(self) -> Iterator[Any]:
        """The record batches, one per step."""
        pa = _pyarrow()
        schema = self.schema
        infos = [self.tree._info[n] for n in self.names]
        for at in range(self.start, self.stop, self.step):
            end = min(at + self.step, self.stop)
            columns = self.tree._read(self.names, at, end)
            arrays = [_array(pa, i, c) for i, c in zip(infos, columns)]
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    def reader(self) -> Any:
        """A ``pyarrow.RecordBatchReader`` over the batches."""
        return _pyarrow().RecordBatchReader.from_batches(self.schema, self.batches())

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.reader().__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self) -> Any:
        return self.schema.__arrow_c_schema__()
