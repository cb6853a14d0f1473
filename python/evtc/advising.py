"""``evtc.advise``: which codec settings fit a file, as the ``evtc advise`` command."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

from . import _lib

_GOALS = ("size", "read", "balanced", "random")


def advise(
    path: str | os.PathLike[str],
    *,
    goal: str = "balanced",
    sample_bytes: int = 16 << 20,
    codecs: list[str] | None = None,
    rac: bool = True,
    external: bool = False,
    float_tolerance: dict[str, float] | None = None,
    tree: str | list[str] | None = None,
    branches: str | list[str] | None = None,
    threads: int | None = None,
    apply: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    **renamed: Any,
) -> dict[str, Any]:
    """Benches a ROOT or evtc file's own branches under candidate settings and recommends
    per-branch settings for each goal (``size``, ``read``, ``balanced``, ``random``).

    Args:
        path: a local evtc or ROOT file.
        goal: the goal whose map ``apply`` writes.
        sample_bytes: uncompressed bytes sampled over the whole file (the same share of every
            branch, in windows spread over each tree).
        codecs: codecs to try (default: none, lz4, lz4hc:9, zlib:1/6, zstd:1/5/9/19, lzma:1/9).
        rac: also try random-access compression.
        external: also measure the sampled bytes cut blindly into 4 KiB - 1 MiB blocks.
        float_tolerance: relative tolerances by branch glob (``{"Muon_*": 1e-4}``): reduced
            precision is tried, and may be recommended, only for these.
        tree, branches: trees and branch globs to bench (default: all), as for
            :func:`evtc.convert`.
        threads: threads for the trials (default: every core).
        apply: if given, convert the file with ``goal``'s recommended settings into this path.
        overwrite: let ``apply`` replace a file at its path (default: an existing one raises
            :class:`evtc.errors.OutputExistsError` before anything is measured).

    Returns:
        The advice, as ``evtc advise --json`` prints it: ``trees`` (per branch, every setting tried
        with its predicted ``stored_bytes``, ``ratio``, ``compress_mb_per_s``,
        ``decompress_mb_per_s`` and, with RAC, ``entry_read_us``), ``uniform`` (each codec on every
        branch), ``current``, ``external``, and ``goals`` (per goal the chosen setting of each
        branch and the predicted file); with ``apply``, also ``applied_bytes``.

    Raises:
        ValueError for a bad goal, codec or glob; evtc.errors.OptionsError, FileError, ...
    """
    for old, value in renamed.items():
        if old != "trees":
            raise TypeError(f"advise() got an unexpected keyword argument {old!r}")
        warnings.warn("advise(): trees is now called tree", FutureWarning, stacklevel=2)
        tree = value if tree is None else tree
    trees = [tree] if isinstance(tree, str) else tree
    branches = [branches] if isinstance(branches, str) else branches
    if goal not in _GOALS:
        raise ValueError(f"goal must be one of {', '.join(_GOALS)}, not {goal!r}")
    tolerance = dict(float_tolerance or {})
    for k, v in tolerance.items():
        if not isinstance(k, str) or not isinstance(v, (int, float)):
            raise TypeError("float_tolerance maps str globs to relative tolerances (floats)")
    for name, value in (("codecs", codecs), ("trees", trees), ("branches", branches)):
        if value is not None and (
            isinstance(value, str) or not all(isinstance(v, str) for v in value)
        ):
            raise TypeError(f"{name} must be a list of str")
    text, applied = _lib.advise(
        os.fspath(path),
        goal=goal,
        sample_bytes=int(sample_bytes),
        codecs=list(codecs or []),
        rac=bool(rac),
        external=bool(external),
        float_tolerance=[(k, float(v)) for k, v in tolerance.items()],
        trees=list(trees or []),
        branches=list(branches or []),
        threads=threads if threads is not None else (os.cpu_count() or 1),
        apply=None if apply is None else os.fspath(apply),
        overwrite=bool(overwrite),
    )
    advice: dict[str, Any] = json.loads(text)
    if applied is not None:
        advice["applied_bytes"] = applied
    return advice
