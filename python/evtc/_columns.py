"""Building Awkward, NumPy and pandas columns from the native reader's values and offsets."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lib
from ._info import BranchInfo


def _np_field(array: Any) -> np.ndarray:
    """An RNTuple field as NumPy: a plain array where it is one (numbers, fixed-size arrays of
    them), else an object array of one Awkward value per entry, as uproot's ``library="np"``."""
    import awkward as ak

    try:
        return ak.to_numpy(array, allow_missing=False)
    except (ValueError, TypeError):
        out = np.empty(len(array), dtype=object)
        for i, item in enumerate(array):
            out[i] = item
        return out


def _build(lib: str, infos: list[BranchInfo], columns: list[Any], length: int) -> Any:
    if lib == "ak":
        return _ak_array(infos, columns, length)
    if lib == "pd":
        frame = _pd_awkward(infos, columns, length)
        if frame is not None:
            return frame
    arrays = {info.name: _np_column(info, column) for info, column in zip(infos, columns)}
    if lib == "np":
        return arrays
    import pandas as pd

    return pd.DataFrame(arrays, index=pd.RangeIndex(length) if not arrays else None)


def _pd_awkward(infos: list[BranchInfo], columns: list[Any], length: int) -> Any:
    """A DataFrame whose variable-length and fixed-size columns have awkward-pandas' ``awkward``
    dtype, as uproot's ``library="pd"`` gives them; ``None`` when every column is a scalar or
    awkward-pandas is not installed (then such columns hold objects, where uproot refuses)."""
    if all(_kind(info)[0] == "scalar" for info in infos):
        return None
    try:
        import awkward_pandas
    except ImportError:
        return None
    import pandas as pd

    arrays = _ak_array(infos, columns, length)
    data = {}
    for info, column in zip(infos, columns):
        if _kind(info)[0] == "scalar":
            data[info.name] = column[0]
        else:
            data[info.name] = pd.Series(awkward_pandas.AwkwardExtensionArray(arrays[info.name]))
    return pd.DataFrame(data, index=pd.RangeIndex(length))


def _offsets(offsets: np.ndarray) -> np.ndarray:
    # The reader's offsets are u64 starting at 0 and below 2^63: the same bytes as int64.
    return offsets.view(np.int64)


def _nested_levels(chain: list[tuple[Any, list[Any]]]) -> list[np.ndarray]:
    """The list levels (outermost first) of a converted nested list from its sizes branches'
    columns, innermost first: the outermost one's entry offsets, then each branch's sizes as
    offsets, from the outermost in."""
    levels = [chain[-1][1][0]]
    for sizes, _ in reversed(chain):
        offsets = np.zeros(len(sizes) + 1, dtype=np.uint64)
        np.cumsum(sizes, out=offsets[1:])
        levels.append(offsets)
    return levels


def _kind(info: BranchInfo) -> tuple[str, int]:
    """A branch kind's base (``jagged``, ``string``, ``bytes``, ...) and list depth."""
    base = info.kind.rstrip("0123456789")
    depth = int(info.kind[len(base) :] or 1)
    return base, (0 if base in ("scalar", "fixed") else depth)


def _empty_column(info: BranchInfo) -> tuple[np.ndarray, list[np.ndarray]]:
    """The ``(values, levels)`` of zero entries of a branch: what the Awkward form of its reads
    is taken from, without reading."""
    _, depth = _kind(info)
    return np.empty(0, dtype=info.dtype), [np.zeros(1, dtype=np.uint64) for _ in range(depth)]


def _ak_array(infos: list[BranchInfo], columns: list[Any], length: int) -> Any:
    """An Awkward record array over the decoded buffers: Awkward's layout classes built
    directly (no per-entry work, no copy of the values; several times quicker than
    ``ak.from_buffers``, which parses a form first)."""
    import awkward as ak

    contents = [_layout(info, values, levels, length) for info, (values, levels) in zip(infos, columns)]
    return ak.Array(ak.contents.RecordArray(contents, [i.name for i in infos], length=length))


def _layout(info: BranchInfo, values: np.ndarray, levels: list[np.ndarray], length: int) -> Any:
    """One branch's layout: its values, under a list per level (outermost first in ``levels``)."""
    import awkward as ak

    base, _ = _kind(info)
    if base == "scalar":
        return ak.contents.NumpyArray(values)
    if base == "fixed":
        out = ak.contents.NumpyArray(values)
        for size in reversed(info.shape):
            out = ak.contents.RegularArray(out, size, zeros_length=length)
        return out
    # The innermost level holds the values (a string's characters); each level above, a list.
    inner = ak.index.Index64(_offsets(levels[-1]))
    if base in ("string", "bytes"):
        char, text = ("char", "string") if base == "string" else ("byte", "bytestring")
        chars = ak.contents.NumpyArray(values.view(np.uint8), parameters={"__array__": char})
        out = ak.contents.ListOffsetArray(inner, chars, parameters={"__array__": text})
    else:
        out = ak.contents.ListOffsetArray(inner, ak.contents.NumpyArray(values))
    for offsets in reversed(levels[:-1]):
        out = ak.contents.ListOffsetArray(ak.index.Index64(_offsets(offsets)), out)
    return out


def _np_column(info: BranchInfo, column: Any) -> np.ndarray:
    """A NumPy column: the values of scalars, an n-dimensional array of fixed arrays, else an
    object array of one item per entry (an array, a str or bytes, or lists of those)."""
    values, levels = column
    base, depth = _kind(info)
    if base == "scalar":
        return values
    if base == "fixed":
        return values.reshape(-1, *info.shape)
    # The innermost items (views of the values, or the strings), made in Rust: one object per
    # entry, without a Python loop.
    bounds = np.ascontiguousarray(levels[-1], dtype=np.uint64)
    if base in ("string", "bytes"):
        data = np.ascontiguousarray(values).view(np.uint8)
        items = _lib.split_strings(data, bounds, base == "string")
    else:
        items = _lib.split_views(np.ascontiguousarray(values), bounds)
    if len(levels) == 1:
        return items
    # Each level above groups the items of the one below into lists.
    lists: Any = items
    for offsets in reversed(levels[:-1]):
        lists = [list(lists[offsets[k] : offsets[k + 1]]) for k in range(len(offsets) - 1)]
    out = np.empty(len(lists), dtype=object)
    for j, item in enumerate(lists):
        out[j] = item
    return out
