"""Exceptions of the evtc package.

Every error evtc raises about a file is an :class:`Error`, carrying the located message of the Rust
library (which tree, branch, basket, byte offset). Some also derive from the built-in exception a
Python user would catch: :class:`KeyInFileError` is a :class:`KeyError`, :class:`FileError` an
:class:`OSError`, :class:`EntryRangeError` an :class:`IndexError`, :class:`SchemaError` and
:class:`OptionsError` are :class:`ValueError` s. Bad arguments (a wrong type, an unknown library
name) raise plain :class:`TypeError` or :class:`ValueError`.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every evtc error."""


class FileError(Error, OSError):
    """A file could not be opened, read or written (the operating system's error in the message)."""


class FileBusyError(FileError):
    """Another writer is updating the file (:func:`evtc.update`, ``evtc convert --append``): it
    holds the file's lock until it is done."""


class OutputExistsError(FileError, FileExistsError):
    """The output of :func:`evtc.convert`, :func:`evtc.merge` or :func:`evtc.skim` exists, and
    ``overwrite=True`` was not given; the file there is untouched."""


class CorruptFileError(Error):
    """The file is damaged or not an evtc/ROOT file: a structure, checksum or basket is wrong."""


class UnsupportedError(Error):
    """The file needs something this version does not support (a newer format, a ROOT class)."""


class KeyInFileError(Error, KeyError):
    """No tree or branch of that name (as ``uproot.KeyInFileError``)."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable.
        return str(self.args[0]) if self.args else ""


class EntryRangeError(Error, IndexError):
    """An entry or entry range outside the tree."""


class SchemaError(Error, ValueError):
    """Data or a branch definition that does not fit the tree (type, counter, lengths)."""


class DuplicateEventError(Error, ValueError):
    """An event looked up by its key (:meth:`evtc.Tree.entry_of`) is held by several entries
    (they are named in the message; :meth:`evtc.Tree.entries_of` gives them all)."""


class OptionsError(Error, ValueError):
    """Conversion options that ask for something impossible (a pattern matching nothing, ...)."""


__all__ = [
    "CorruptFileError",
    "DuplicateEventError",
    "EntryRangeError",
    "Error",
    "FileBusyError",
    "FileError",
    "KeyInFileError",
    "OptionsError",
    "OutputExistsError",
    "SchemaError",
    "UnsupportedError",
]
