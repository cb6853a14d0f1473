"""evtc: read and write evtc event-data files from Python, in uproot's shape.

>>> import evtc
>>> events = evtc.open("nano.evtc")["Events"]          # doctest: +SKIP
>>> muons = events.arrays(filter_name="Muon_*")        # an Awkward array   # doctest: +SKIP

- :func:`open` reads evtc files, and ROOT files through evtc's own ROOT reader, from local paths,
  fsspec URLs or file-like objects: ``tree.arrays``/``iterate``/``branch.array`` into Awkward,
  NumPy or pandas, ``branch[i]`` for single entries, ``tree.arrow(...)`` for Arrow consumers.
- :func:`open` of a list of files or a glob (``"data/*.evtc"``) opens them as one dataset, as
  ROOT's ``TChain``: a :class:`Chain` whose trees number their entries across the files.
- :func:`iterate` and :func:`concatenate` read a tree of several files, as uproot's.
- :func:`recreate` writes files (``file["Events"] = {...}``, ``file["Events"].extend({...})``),
  evtc's or, with ``to="rntuple"`` or ``to="ttree"``, ROOT's;
  :func:`update` appends entries and adds columns to an existing file, in place.
- :func:`convert` converts ROOT or evtc files into evtc files, as ``evtc convert`` does;
  :func:`merge` merges files into one, as ``evtc merge`` (and ROOT's ``hadd``) does;
  :func:`skim` (and ``tree.skim``) keeps chosen entries and branches, as ``evtc skim`` does.
- :func:`settings` lists the settings these take, under the names every door (the ``evtc``
  command, Python, C) gives them.
- :func:`advise` benches a file's branches and recommends settings, as ``evtc advise`` does.
- :func:`dask` builds a lazy ``dask_awkward.Array`` over many files with column projection;
  :func:`dask_write` writes one as a file per partition (evtc, or ROOT's RNTuple or TTree).

Errors are :class:`evtc.Error` subclasses carrying the Rust library's located message.
"""

from __future__ import annotations

import os as _os

# The native module allocates with mimalloc, which reads these when it is loaded: pages freed
# for a second (its arenas' for 100 s) go back to the system with MADV_FREE (the kernel takes
# them only under memory pressure) instead of being decommitted after 10 ms, so that the next
# read reuses them instead of page-faulting (and the kernel zeroing) its output in again
# (docs/benchmarks.md). Values already set in the environment win.
_os.environ.setdefault("MIMALLOC_PURGE_DECOMMITS", "0")
_os.environ.setdefault("MIMALLOC_PURGE_DELAY", "1000")
_os.environ.setdefault("MIMALLOC_ARENA_PURGE_MULT", "100")

from . import _lib  # noqa: E402
from ._dask import dask, dask_write
from .advising import advise
from .chain import Chain, ChainBranch, ChainTree
from .converting import add_columns, convert, index, merge, settings, skim
from .errors import (
    CorruptFileError,
    DuplicateEventError,
    EntryRangeError,
    Error,
    FileBusyError,
    FileError,
    KeyInFileError,
    OptionsError,
    OutputExistsError,
    SchemaError,
    UnsupportedError,
)
from .reading import Branch, File, Tree, concatenate, iterate, open
from .writing import UpdatableFile, UpdatableTree, WritableFile, WritableTree, recreate, update



__version__ = _lib.__version__

__all__ = [
    "Branch",
    "Chain",
    "ChainBranch",
    "ChainTree",
    "CorruptFileError",
    "DuplicateEventError",
    "EntryRangeError",
    "Error",
    "File",
    "FileBusyError",
    "FileError",
    "KeyInFileError",
    "OptionsError",
    "OutputExistsError",
    "SchemaError",
    "Tree",
    "UnsupportedError",
    "WritableFile",
    "WritableTree",
    "add_columns",
    "advise",
    "concatenate",
    "convert",
    "index",
    "merge",
    "skim",
    "dask",
    "dask_write",
    "iterate",
    "open",
    "recreate",
    "settings",
    "update",
    "UpdatableFile",
    "UpdatableTree",
]
