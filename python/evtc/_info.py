"""What a file says about one branch: shared by the readers and the builders of arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BranchInfo:
    """What the footer (or the ROOT TTree record) says about one branch."""

    name: str
    # scalar, fixed, jagged, bytes, string, and those of nested lists with their depth: jagged2
    # (lists of lists), jagged3, ..., bytes2, string2 (lists of strings), string3 (lists of lists
    # of strings), ...
    kind: str
    dtype: np.dtype
    length: int
    counter: str | None
    typename: str
    codec: str
    rac: bool
    raw_bytes: int
    stored_bytes: int
    shape: tuple[int, ...] = ()  # fixed arrays: (n,), or the dimensions of ROOT's x[2][3]
