"""The library's settings as Python keywords.

Every function that writes evtc files takes the settings of its job (the library's table,
``evtc.settings()``) as keyword arguments of the same names, ``None`` meaning the library's
default; their values are spelled as text for the library's one parser. Old names still work,
with a :class:`FutureWarning` naming the new one.
"""

from __future__ import annotations

import functools
import numbers
import warnings
from typing import Any

from . import _lib


@functools.cache
def table() -> dict[str, dict[str, Any]]:
    """Every setting by name: ``aliases``, ``shape`` (``switch``, ``value``, ``list``,
    ``rule``), ``placeholder``, ``example``, ``help``, ``jobs``, ``default`` and ``flag``."""
    return {s["name"]: s for s in _lib.settings_table()}


@functools.cache
def _old_names() -> dict[str, str]:
    return {old: s["name"] for s in table().values() for old in s["aliases"]}


def pairs(job: str, args: dict[str, Any], function: str) -> list[tuple[str, str]]:
    """The ``(name, text)`` pairs of the settings among ``args`` (a function's ``locals()``:
    its setting keywords, and its ``renamed`` dict of old names) that ``job`` takes; ``None``
    values are left to the library."""
    values = {
        name: value
        for name, value in args.items()
        if name in table() and job in table()[name]["jobs"] and value is not None
    }
    for old, value in (args.get("renamed") or {}).items():
        new = _old_names().get(old)
        if new is None or job not in table()[new]["jobs"]:
            raise TypeError(f"{function}() got an unexpected keyword argument {old!r}")
        warnings.warn(f"{function}(): {old} is now called {new}", FutureWarning, stacklevel=3)
        if new in values:
            raise TypeError(f"{function}() got both {old!r} and its new name {new!r}")
        if value is not None:
            values[new] = value
    return [(name, text) for name, value in values.items() for text in _spell(table()[name], value)]


def _spell(setting: dict[str, Any], value: Any) -> list[str]:
    """``value`` of ``setting`` as the library's texts (one per list item or rule)."""
    name, shape = setting["name"], setting["shape"]
    if shape == "switch":
        if not isinstance(value, bool) and type(value).__name__ != "bool_":
            raise TypeError(f"{name} must be True or False, not {value!r}")
        return ["true" if value else "false"]
    if shape == "value":
        return [_text(setting, value)]
    if shape == "list":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
            raise TypeError(f"{name} must be a str or a list of str, not {value!r}")
        return list(items)
    if not isinstance(value, dict) or not all(isinstance(g, str) for g in value):
        raise TypeError(
            f"{name} must be a dict of branch-name glob -> value ({setting['placeholder']}), "
            f"not {value!r}"
        )
    return [f"{glob}={_text(setting, v)}" for glob, v in value.items()]


def _text(setting: dict[str, Any], value: Any) -> str:
    """One value as text: a str as it is, a number or bool spelled, a tuple joined as the
    setting's placeholder joins its parts (``MAJOR,MINOR``, ``MIN:MAX:BITS``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, (str, numbers.Real)) for v in value):
        return ("," if "," in setting["placeholder"] else ":").join(str(v) for v in value)
    raise TypeError(f"{setting['name']}: {value!r} is not a value of {setting['placeholder']}")
