"""``evtc.convert``, ``evtc.merge``, ``evtc.skim`` and ``evtc.add_columns``: ROOT or evtc files
into evtc files, as the ``evtc convert``, ``evtc merge``, ``evtc skim`` and ``evtc add-columns``
commands.

Their settings are the library's (:func:`evtc.settings` lists them), under the same names as the
commands' options (``cluster_size`` is ``--cluster-size``; ``overwrite`` is ``--force``), each
``None`` by default: the library's default. Per-branch rules are dicts of branch-name glob ->
value (``branch_codec={"Muon_*": "lz4"}``; for each branch the last match wins), lists take a
str or a list of str, switches ``True`` or ``False``, sizes bytes or text (``"30MB"``). Old names
(``autoflush``, ``branch_codecs``, ``rac_unit_bytes``, ``trees``, ...) still work with a
:class:`FutureWarning`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import _lib, _settings

Rules = dict[str, Any]
"""Per-branch rules: branch-name glob -> value."""


def settings() -> list[dict[str, Any]]:
    """The settings of the jobs that write evtc files, as the library defines them: each a dict
    of ``name`` (its keyword here, ``--name-with-dashes`` in the ``evtc`` command, ``name=value``
    in the C API), ``aliases`` (old names, still taken with a warning), ``shape`` (``switch``,
    ``value``, ``list`` or ``rule``), ``placeholder``, ``example``, ``help``, ``jobs`` (of
    ``convert``, ``merge``, ``skim``, ``add_columns``, ``writer``: :func:`recreate` and
    :func:`update`), ``default`` (as text, or ``None``) and ``flag`` (the command's option)."""
    return [dict(s) for s in _settings.table().values()]


def convert(
    input: str | os.PathLike[str],  # noqa: A002 - the CLI's name
    output: str | os.PathLike[str],
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
    overwrite: bool | None = None,
    max_basket_size: int | str | None = None,
    tree: str | list[str] | None = None,
    branches: str | list[str] | None = None,
    skip_unsupported: bool | None = None,
    index: tuple[str, str] | None = None,
    to: str | None = None,
    append: bool | None = None,
    **renamed: Any,
) -> dict[str, Any]:
    """Converts a ROOT file (TTree import) or an evtc file (re-compression) into a new evtc file
    (or, with ``append``, into an existing one), or, with ``to``, any of them into a ROOT file of
    RNTuples or TTrees, as ``evtc convert`` does.

    Args:
        input, output: paths; ``output`` appears only if the conversion succeeds.
        codec: ``"zstd:5"`` (the default), ``"lz4"``, ``"lz4hc:9"``, ``"zlib:6"``, ``"lzma:9"``,
            ``"none"`` or a ROOT setting such as ``"505"``.
        branch_codec: codecs by branch-name glob (``{"Muon_*": "lz4"}``).
        precondition, branch_precondition: the preconditioner (``"auto"``, the default,
            ``"none"``, ``"shuffle"``, ``"bitshuffle"``, ``"delta"``, ...), for every branch and
            by glob.
        rac, branch_rac: random-access compression: ``True``/``"on"``, ``False``/``"off"`` (the
            default) or ``"auto"``, for every branch and by glob.
        rac_unit: the least uncompressed bytes of a RAC unit (default 2 KiB, 8 KiB under lzma).
        rac_dictionary: let RAC branches train a dictionary where it pays (default ``True``).
        boundaries: entry boundaries of jagged branches: ``"auto"`` (default), ``"offsets"``,
            ``"counts"``, ``"none"``.
        float_precision: lossy: float branches by glob keep this many mantissa bits
            (``{"Muon_*": 10}``; each value moves by at most 2^-(bits+1) of itself).
        float_quantize: lossy: float branches by glob are quantized into ``(min, max, bits)``
            (each value moves by at most half a step; a value outside the range fails).
        cluster_size: as ROOT's AutoFlush: entries (``1000``) or uncompressed bytes
            (``"30MB"``; default 32 MiB).
        basket_size: target uncompressed bytes of a basket (default 256 KiB, 1 MiB under lzma).
        flush_at_cluster: write one basket per branch per cluster.
        sync: wait for the output to reach the disk before it gets its name (default ``True``).
        threads: threads for decoding and compressing (default: every core).
        overwrite: replace ``output`` if it exists (default: an existing ``output`` raises
            :class:`evtc.errors.OutputExistsError` and stays as it is).
        max_basket_size: the input readers' limit on a basket's uncompressed bytes (default
            256 MiB); raise it for trusted files.
        tree, branches: the trees and branch globs to keep (default: all).
        skip_unsupported: leave out ROOT branches the reader does not support instead of failing.
        index: ``(major, minor)``: give every tree an event index on these two integer branches
            (default: the input tree's index, a ROOT ``TTreeIndex`` on two branches or an evtc
            index, if it has one; see :func:`index`).
        to: what to write: ``"evtc"`` (the default), ``"rntuple"`` (ROOT's RNTuple, read by
            ROOT 6.34 and later and uproot) or ``"ttree"`` (a TTree); an ``output`` named
            ``*.root`` needs it. Each tree becomes one of the same name; the summary's
            ``notes`` say what ROOT has no place for (random-access compression, evtc's
            preconditioners, names ROOT does not allow).
        append: append to ``output``, an existing evtc file, in place: entries of a tree it has
            go after the tree's (same branches and types, in the same order; written as its
            branches are), other trees are added. Nothing in it is rewritten, and a failure
            leaves it as it was (see :func:`evtc.update`).

    Returns:
        The summary, as ``evtc convert --json`` prints it: ``input_format``, ``input_bytes``,
        ``output_bytes``, ``value_bytes``, ``seconds``, ``trees`` (each a dict of ``name``,
        ``entries``, ``branches``, ``event_index`` (the index's ``[major, minor]`` or ``None``)
        and ``index_dropped`` (why the input's index was not kept, or ``None``)) and
        ``skipped``: the ROOT branches left out by ``skip_unsupported``, each a dict of ``tree``,
        ``branch``, ``class`` (the C++ type) and ``reason``.

    Raises:
        evtc.errors.UnsupportedError, evtc.errors.OptionsError, evtc.errors.FileError,
        evtc.errors.OutputExistsError, ...; ValueError for a value a setting does not take.
    """
    settings = _settings.pairs("convert", locals(), "convert")
    text = _lib.convert(os.fspath(input), os.fspath(output), settings)
    summary: dict[str, Any] = json.loads(text)
    return summary


def add_columns(
    file: str | os.PathLike[str],
    source: str | os.PathLike[str],
    *,
    tree: str | None = None,
    branches: str | list[str] | None = None,
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
    basket_size: int | str | None = None,
    sync: bool | None = None,
    threads: int | None = None,
    max_basket_size: int | str | None = None,
    **renamed: Any,
) -> dict[str, Any]:
    """Adds the branches of ``source``'s tree to the tree of the same name (and length) in the
    evtc file ``file``, in place, without rewriting its branches (``evtc add-columns``).

    Args:
        tree: the tree (default: ``source``'s only tree).
        branches: ``source``'s branches to add, by glob (default: all); their counters come along
            unless the tree has branches of those names (the branches they count then store
            their own counts).
        codec, ..., max_basket_size: how the added branches are written, as for :func:`convert`
            (the added branches follow the tree's clusters: no ``cluster_size``).

    Returns:
        The report, as ``evtc add-columns --json`` prints it: ``tree``, ``entries``, ``added``,
        ``shared``, ``bytes_before``, ``bytes_after``, ``seconds``.
    """
    settings = _settings.pairs("add_columns", locals(), "add_columns")
    text = _lib.add_columns(os.fspath(file), os.fspath(source), settings)
    report: dict[str, Any] = json.loads(text)
    return report


def _index_keys(by: Any) -> tuple[str, str] | None:
    """``(major, minor)`` branch names, or ``None``."""
    if by is None:
        return None
    if isinstance(by, str) or len(by) != 2 or not all(isinstance(n, str) and n for n in by):
        raise TypeError(f"an event index is keyed by two branch names (major, minor), not {by!r}")
    return (by[0], by[1])


def index(
    path: str | os.PathLike[str],
    by: tuple[str, str],
    *,
    tree: str | None = None,
) -> dict[str, Any]:
    """Gives a tree of an evtc file an event index, as ``evtc index FILE --by MAJOR,MINOR``
    does: its entries sorted by two integer branches (a run and an event number), stored in the
    file, so that :meth:`evtc.Tree.entry_of` finds an event without reading the branches
    (ROOT's ``TTreeIndex``). The index is written after the file's end, in place, as
    :func:`evtc.update` writes (a process stopped meanwhile leaves the file as it was); an index
    it had is replaced.

    Args:
        path: the evtc file.
        by: the key branches, ``(major, minor)``: ``("run", "event")``.
        tree: the tree (default: the file's first tree).

    Returns:
        The summary, as ``evtc index --json`` prints it: ``tree``, ``major``, ``minor``,
        ``rows``, ``duplicate_keys`` (keys held by more than one entry) and ``bytes``.

    Raises:
        evtc.errors.KeyInFileError: no such tree or branch.
        evtc.errors.SchemaError: a key branch is not an integer scalar.
    """
    major, minor = _index_keys(by) or ("", "")
    summary: dict[str, Any] = json.loads(_lib.index(os.fspath(path), tree, major, minor))
    return summary


def merge(
    output: str | os.PathLike[str],
    inputs: list[str | os.PathLike[str]],
    *,
    union: bool = False,
    intersect: bool = False,
    recompress: bool = False,
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
    overwrite: bool | None = None,
    max_basket_size: int | str | None = None,
    skip_unsupported: bool | None = None,
    **renamed: Any,
) -> dict[str, Any]:
    """Concatenates the trees of evtc (and ROOT) files into one new evtc file, as ROOT's ``hadd``
    and the ``evtc merge`` command do: baskets are copied as they are stored where an input's
    branch is laid out as the output's (that of the first input that has it), written again
    otherwise; clusters are kept.

    Args:
        output: the new file; it appears only if the merge succeeds.
        inputs: evtc or ROOT files (converted on the way), in order; ``"@list.txt"`` names a text
            file of paths, one per line.
        union: keep every branch of any input; where an input lacks one, it holds its type's
            default there (the file records where, in the tree extension ``merge-defaults``).
        intersect: keep only the branches every input has. Without either, inputs whose
            branches differ are refused, naming the input and the branch.
        recompress: write every branch again with the settings instead of copying.
        codec, ..., skip_unsupported: as for :func:`convert`; the codecs and layout apply to
            ROOT inputs and, with ``recompress``, to every branch.
        overwrite: replace ``output`` if it exists (default: an existing ``output`` raises
            :class:`evtc.errors.OutputExistsError` and stays as it is).

    Returns:
        The report, as ``evtc merge --json`` prints it: ``inputs``, ``converted`` (ROOT inputs),
        ``input_bytes``, ``output_bytes``, ``seconds`` and ``trees``, each a dict of ``name``,
        ``entries``, ``inputs``, ``branches``, ``copied_baskets``, ``rewritten`` and
        ``defaulted`` ((branch, input) pairs), ``dropped`` (branch names) and ``event_index``
        (``[major, minor]`` when every input had an event index on those keys, else ``None``).

    Raises:
        evtc.errors.SchemaError: the inputs' branches differ (without ``union`` or
            ``intersect``), or a branch's type differs between inputs.
        evtc.errors.OptionsError, evtc.errors.FileError, evtc.errors.CorruptFileError, ...
    """
    if union and intersect:
        raise ValueError("union and intersect do not go together")
    if isinstance(inputs, (str, os.PathLike)):
        raise TypeError("inputs must be a list of paths")
    settings = _settings.pairs("merge", locals(), "merge")
    text = _lib.merge(
        os.fspath(output),
        [os.fspath(p) for p in inputs],
        settings,
        schemas="union" if union else "intersect" if intersect else "same",
        recompress=bool(recompress),
    )
    report: dict[str, Any] = json.loads(text)
    return report


def skim(
    input: str | os.PathLike[str],  # noqa: A002 - the CLI's name
    output: str | os.PathLike[str],
    *,
    tree: str | None = None,
    entries: Any = None,
    mask: Any = None,
    where: str | None = None,
    branches: str | list[str] | None = None,
    recompress: bool = False,
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
    overwrite: bool | None = None,
    max_basket_size: int | str | None = None,
    **renamed: Any,
) -> dict[str, Any]:
    """Writes chosen entries and branches of an evtc file's tree into a new evtc file, as the
    ``evtc skim`` command (and ROOT's ``CopyTree`` with a selection) does: baskets whose entries
    are all kept are copied as they are stored, the kept entries of the others written again in
    the input's layout.

    Args:
        input, output: paths; ``output`` appears only if the skim succeeds.
        tree: the tree (default: the file's only tree).
        entries: the entry numbers to keep (any integer array or list; written in the file's
            order, each once).
        mask: one boolean per entry of the tree; the entries whose flag is set are kept.
        where: a selection over the tree's branches, as ``evtc skim --where`` takes it:
            ``"nMuon >= 2 && MET_pt > 50"``, ``"any(Muon_pt > 20 && abs(Muon_eta) < 2.4)"``.
            At most one of ``entries``, ``mask`` and ``where``; none keeps every entry.
        branches: branch-name globs to keep (default: all); counters of kept branches are kept.
        recompress: write every kept branch again with the settings instead of copying.
        codec, ..., max_basket_size: as for :func:`convert`; the codecs and layout apply with
            ``recompress``.
        overwrite: replace ``output`` if it exists (default: an existing ``output`` raises
            :class:`evtc.errors.OutputExistsError` and stays as it is).

    Returns:
        The report, as ``evtc skim --json`` prints it: ``tree``, ``entries`` (kept), ``of``,
        ``branches``, ``copied_baskets``, ``rewritten_baskets``, ``copied_units`` (RAC units
        copied from baskets kept in part), ``event_index``, ``selection_seconds``,
        ``input_bytes``, ``output_bytes``, ``seconds``.
    """
    import numpy as np

    chosen = [x is not None for x in (entries, mask, where)]
    if sum(chosen) > 1:
        raise ValueError("give at most one of entries, mask and where")
    if entries is not None:
        entries = np.asarray(entries)
        if entries.dtype.kind not in "iu":
            raise TypeError(f"entries must be integers, not {entries.dtype}")
        if entries.size and entries.min() < 0:
            raise ValueError("entries must not be negative")
        entries = np.ascontiguousarray(entries, dtype=np.uint64).ravel()
    if mask is not None:
        mask = np.ascontiguousarray(np.asarray(mask), dtype=bool).ravel()
    settings = _settings.pairs("skim", locals(), "skim")
    text = _lib.skim(
        os.fspath(input),
        os.fspath(output),
        settings,
        entries=entries,
        mask=mask,
        selection=where,
        recompress=bool(recompress),
    )
    report: dict[str, Any] = json.loads(text)
    return report
