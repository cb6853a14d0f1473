"""``evtc.convert``, ``evtc.merge`` and ``evtc.skim``: ROOT or evtc files into evtc files, as the
``evtc convert``, ``evtc merge`` and ``evtc skim`` commands."""

from __future__ import annotations

import json
import os
from typing import Any

from . import _lib


def _rac(rac: Any) -> str:
    if rac is True:
        return "on"
    if rac is False or rac is None:
        return "off"
    if rac in ("on", "off", "auto"):
        return rac
    raise ValueError(f'rac must be True, False, "on", "off" or "auto", not {rac!r}')


def _branch_codecs(branch_codecs: Any) -> list[tuple[str, str]]:
    if branch_codecs is None:
        return []
    if not isinstance(branch_codecs, dict):
        raise TypeError("branch_codecs must be a dict of branch-name glob -> codec")
    for k, v in branch_codecs.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("branch_codecs maps str globs to str codecs such as 'lz4'")
    return list(branch_codecs.items())


def _settings(args: dict[str, Any]) -> dict[str, Any]:
    """The writing options of :func:`convert`, :func:`merge`, :func:`skim` or :func:`add_columns`
    as the native module takes them, from the caller's arguments (its ``locals()``: each takes
    the keywords it documents under these names; one it does not take has its default). The
    thread count defaults to every core; the cluster size is spelled as the command line spells
    it."""
    get = args.get
    autoflush = get("autoflush")
    if autoflush is not None and (isinstance(autoflush, bool) or not isinstance(autoflush, (int, str))):
        raise TypeError("autoflush is a number of entries (int) or a size such as '30MB'")
    threads = get("threads")
    return {
        "codec": args["codec"],
        "rac": _rac(args["rac"]),
        "branch_settings": _branch_settings(
            codec=dict(_branch_codecs(get("branch_codecs"))),
            precondition=get("branch_preconditions"),
            rac=get("branch_rac"),
            mantissa_bits=get("float_precision"),
            quantize=get("float_quantize"),
        ),
        "precondition": get("precondition", "auto"),
        "boundaries": get("boundaries", "auto"),
        "basket_size": get("basket_size"),
        "rac_unit_bytes": get("rac_unit_bytes"),
        "rac_dictionary": bool(get("rac_dictionary", True)),
        "autoflush": None if autoflush is None else str(autoflush),
        "flush_at_cluster": bool(get("flush_at_cluster", False)),
        "max_basket_bytes": get("max_basket_size"),
        "threads": (os.cpu_count() or 1) if threads is None else threads,
        "overwrite": bool(get("overwrite", False)),
    }


def _branch_settings(**rules: Any) -> list[tuple[str, str, str]]:
    """The per-branch rules as (glob, kind, value) triples in `evtc convert`'s spellings."""
    out = []
    for kind, rule in rules.items():
        if rule is None:
            continue
        if not isinstance(rule, dict):
            raise TypeError(f"{kind} must be a dict of branch-name glob -> value")
        for glob, value in rule.items():
            if not isinstance(glob, str):
                raise TypeError(f"{kind} maps str globs to values")
            if kind == "quantize":
                if not (isinstance(value, (tuple, list)) and len(value) == 3):
                    raise TypeError("float_quantize maps globs to (min, max, bits)")
                value = ":".join(str(v) for v in value)
            elif kind == "rac" and isinstance(value, bool):
                value = "on" if value else "off"
            elif kind == "mantissa_bits":
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError("float_precision maps globs to mantissa bits (int)")
                value = str(value)
            elif not isinstance(value, str):
                raise TypeError(f"{kind} maps str globs to str values such as 'lz4'")
            out.append((glob, kind, value))
    return out


def convert(
    input: str | os.PathLike[str],  # noqa: A002 - the CLI's name
    output: str | os.PathLike[str],
    *,
    codec: str = "zstd:5",
    rac: bool | str = False,
    branch_codecs: dict[str, str] | None = None,
    branch_preconditions: dict[str, str] | None = None,
    branch_rac: dict[str, bool | str] | None = None,
    float_precision: dict[str, int] | None = None,
    float_quantize: dict[str, tuple[float, float, int]] | None = None,
    precondition: str = "auto",
    boundaries: str = "auto",
    trees: list[str] | None = None,
    branches: list[str] | None = None,
    skip_unsupported: bool = False,
    basket_size: int | None = None,
    rac_unit_bytes: int | None = None,
    rac_dictionary: bool = True,
    autoflush: int | str | None = None,
    flush_at_cluster: bool = False,
    max_basket_size: int | None = None,
    threads: int | None = None,
    index: tuple[str, str] | None = None,
    append: bool = False,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Converts a ROOT file (TTree import) or an evtc file (re-compression) into a new evtc file
    (or, with ``append``, into an existing one).

    Args:
        input, output: paths; ``output`` appears only if the conversion succeeds.
        codec: ``"zstd:5"`` (default), ``"lz4"``, ``"lz4hc:9"``, ``"zlib:6"``, ``"lzma:9"``,
            ``"none"`` or a ROOT setting such as ``"505"``.
        rac: random-access compression: ``True``/``"on"``, ``False``/``"off"``, ``"auto"``.
        branch_codecs: codec overrides by branch-name glob (``{"Muon_*": "lz4"}``; last match wins).
        branch_preconditions, branch_rac: the same for the preconditioner (``"delta"``) and RAC
            (``True``, ``False`` or ``"auto"``).
        float_precision: lossy: float branches by glob keep this many mantissa bits
            (``{"Muon_*": 10}``; each value moves by at most 2^-(bits+1) of itself).
        float_quantize: lossy: float branches by glob are quantized into ``(min, max, bits)``
            (each value moves by at most half a step; a value outside the range fails).
        precondition: ``auto``, ``none``, ``shuffle``, ``bitshuffle``, ``delta``, ``delta-shuffle``,
            ``for``, ``delta-for``, ``delta-varint``, ``zigzag-shuffle``, ``sparse``, ``runs`` or
            ``bitplanes``.
        boundaries: entry boundaries of jagged branches: ``auto``, ``offsets``, ``counts``, ``none``.
        trees, branches: trees and branch globs to keep (default: all).
        skip_unsupported: leave out ROOT branches the reader does not support instead of failing.
        basket_size, rac_unit_bytes: sizes in bytes (defaults: the library's).
        rac_dictionary: let RAC branches train a dictionary where it pays (default).
        autoflush: cluster size, as ROOT's AutoFlush: entries (``1000``) or uncompressed bytes
            (``"30MB"``).
        flush_at_cluster: write one basket per branch per cluster.
        max_basket_size: the input readers' limit on a basket's uncompressed bytes (default
            256 MiB); raise it for trusted files.
        threads: threads for decoding and compressing (default: every core).
        index: ``(major, minor)``: give every tree an event index on these two integer branches
            (default: the input tree's index, a ROOT ``TTreeIndex`` on two branches or an evtc
            index, if it has one; see :func:`index`).
        append: append to ``output``, an existing evtc file, in place: entries of a tree it has
            go after the tree's (same branches and types, in the same order; written as its
            branches are), other trees are added. Nothing in it is rewritten, and a failure
            leaves it as it was (see :func:`evtc.update`).
        overwrite: replace ``output`` if it exists (default: an existing ``output`` raises
            :class:`evtc.errors.OutputExistsError` and stays as it is).

    Returns:
        The summary, as ``evtc convert --json`` prints it: ``input_format``, ``input_bytes``,
        ``output_bytes``, ``value_bytes``, ``seconds``, ``trees`` (each a dict of ``name``,
        ``entries``, ``branches``, ``event_index`` (the index's ``[major, minor]`` or ``None``)
        and ``index_dropped`` (why the input's index was not kept, or ``None``)) and
        ``skipped``: the ROOT branches left out by ``skip_unsupported``, each a dict of ``tree``,
        ``branch``, ``class`` (the C++ type) and ``reason``.

    Raises:
        evtc.errors.UnsupportedError, evtc.errors.OptionsError, evtc.errors.FileError,
        evtc.errors.OutputExistsError, ...
    """
    for name, value in (("trees", trees), ("branches", branches)):
        if value is not None and (
            isinstance(value, str) or not all(isinstance(v, str) for v in value)
        ):
            raise TypeError(f"{name} must be a list of str")
    settings = _settings(locals())
    text = _lib.convert(
        os.fspath(input),
        os.fspath(output),
        settings,
        trees=list(trees or []),
        branches=list(branches or []),
        skip_unsupported=bool(skip_unsupported),
        index=_index_keys(index),
        append=bool(append),
    )
    summary: dict[str, Any] = json.loads(text)
    return summary


def add_columns(
    file: str | os.PathLike[str],
    source: str | os.PathLike[str],
    *,
    tree: str | None = None,
    branches: list[str] | None = None,
    codec: str = "zstd:5",
    rac: bool | str = False,
    branch_codecs: dict[str, str] | None = None,
    branch_rac: dict[str, bool | str] | None = None,
    basket_size: int | None = None,
    rac_unit_bytes: int | None = None,
    max_basket_size: int | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """Adds the branches of ``source``'s tree to the tree of the same name (and length) in the
    evtc file ``file``, in place, without rewriting its branches (``evtc add-columns``).

    Args:
        tree: the tree (default: ``source``'s only tree).
        branches: ``source``'s branches to add, by glob (default: all); their counters come along
            unless the tree has branches of those names (the branches they count then store
            their own counts).
        codec, rac, branch_codecs, branch_rac, basket_size, rac_unit_bytes, threads: how the
            added branches are written, as for :func:`convert`.

    Returns:
        The report, as ``evtc add-columns --json`` prints it: ``tree``, ``entries``, ``added``,
        ``shared``, ``bytes_before``, ``bytes_after``, ``seconds``.
    """
    if branches is not None and (isinstance(branches, str) or not all(isinstance(b, str) for b in branches)):
        raise TypeError("branches must be a list of str")
    settings = _settings(locals())
    text = _lib.add_columns(
        os.fspath(file), os.fspath(source), settings, tree=tree, branches=list(branches or [])
    )
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
    codec: str = "zstd:5",
    rac: bool | str = False,
    branch_codecs: dict[str, str] | None = None,
    branch_preconditions: dict[str, str] | None = None,
    branch_rac: dict[str, bool | str] | None = None,
    float_precision: dict[str, int] | None = None,
    float_quantize: dict[str, tuple[float, float, int]] | None = None,
    precondition: str = "auto",
    boundaries: str = "auto",
    skip_unsupported: bool = False,
    basket_size: int | None = None,
    rac_unit_bytes: int | None = None,
    rac_dictionary: bool = True,
    autoflush: int | str | None = None,
    flush_at_cluster: bool = False,
    max_basket_size: int | None = None,
    threads: int | None = None,
    overwrite: bool = False,
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
        recompress: write every branch again with the codec options below instead of copying.
        codec, rac, branch_codecs, ..., threads: as for :func:`convert`; they apply to ROOT
            inputs and, with ``recompress``, to every branch.
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
    settings = _settings(locals())
    text = _lib.merge(
        os.fspath(output),
        [os.fspath(p) for p in inputs],
        settings,
        schemas="union" if union else "intersect" if intersect else "same",
        recompress=bool(recompress),
        skip_unsupported=bool(skip_unsupported),
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
    branches: list[str] | None = None,
    recompress: bool = False,
    codec: str = "zstd:5",
    rac: bool | str = False,
    branch_codecs: dict[str, str] | None = None,
    precondition: str = "auto",
    boundaries: str = "auto",
    basket_size: int | None = None,
    rac_unit_bytes: int | None = None,
    autoflush: int | str | None = None,
    max_basket_size: int | None = None,
    threads: int | None = None,
    overwrite: bool = False,
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
        recompress: write every kept branch again with the codec options instead of copying.
        codec, rac, branch_codecs, precondition, boundaries, basket_size, rac_unit_bytes,
            autoflush: as for :func:`convert`, with ``recompress``.
        max_basket_size, threads: as for :func:`convert`.
        overwrite: replace ``output`` if it exists (default: an existing ``output`` raises
            :class:`evtc.errors.OutputExistsError` and stays as it is).

    Returns:
        The report, as ``evtc skim --json`` prints it: ``tree``, ``entries`` (kept), ``of``,
        ``branches``, ``copied_baskets``, ``rewritten_baskets``, ``copied_units`` (RAC units
        copied from baskets kept in part), ``event_index``,
        ``selection_seconds``,
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
    if branches is not None and (
        isinstance(branches, str) or not all(isinstance(b, str) for b in branches)
    ):
        raise TypeError("branches must be a list of str")
    settings = _settings(locals())
    text = _lib.skim(
        os.fspath(input),
        os.fspath(output),
        settings,
        tree=tree,
        entries=entries,
        mask=mask,
        selection=where,
        branches=list(branches or []),
        recompress=bool(recompress),
    )
    report: dict[str, Any] = json.loads(text)
    return report
