"""Arrow export through the Arrow PyCapsule interface (``__arrow_c_stream__``).

The native module builds the record batches with arrow-rs over the decoded buffers (values and
offsets are handed over, not copied; booleans are bit-packed, as Arrow requires) and exports them
as an Arrow C stream, which ``pyarrow.table``, ``polars.DataFrame`` and DuckDB read without going
through Python objects and without pyarrow being needed by evtc. Each batch is read from the file
when the consumer asks for it.
"""

from __future__ import annotations

from typing import Any, Iterator

from . import _lib


class ArrowStream:
    """A projection and entry range of a tree, read in steps as Arrow record batches."""

    def __init__(self, tree: Any, names: list[str], start: int, stop: int, step: int) -> None:
        self.tree = tree
        self.names = names
        self.start = start
        self.stop = stop
        self.step = step

    def _columns(self) -> list[tuple[str, str, str, list[int], list[str]]]:
        out = []
        for name in self.names:
            info = self.tree._info[name]
            out.append(
                (name, info.kind, info.dtype.name, list(info.shape), self.tree._sizes.get(name, []))
            )
        return out

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow C stream capsule (``requested_schema`` is not used: the stream has the
        branches' own types)."""
        return _lib.arrow_stream(
            self.tree.file._reader, self.tree.name, self._columns(), self.start, self.stop, self.step
        )

    def reader(self) -> Any:
        """A ``pyarrow.RecordBatchReader`` over the stream (needs pyarrow)."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(self)

    def batches(self) -> Iterator[Any]:
        """The record batches as pyarrow objects (needs pyarrow)."""
        yield from self.reader()
