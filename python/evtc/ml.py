"""Batches of a tree for machine learning: fixed-shape NumPy arrays per batch, shuffled with a
seed, split between data-loader workers, and a PyTorch ``IterableDataset`` over them.

``numpy_batches`` needs NumPy only; ``TorchDataset`` needs PyTorch (imported when it is made)::

    from evtc.ml import TorchDataset
    data = TorchDataset("nano.evtc", ["MET_pt", "nJet", "PV_npvs"], batch_size=1024, seed=1)
    loader = torch.utils.data.DataLoader(data, batch_size=None, num_workers=2)
    for batch in loader:  # a dict of tensors, 1,024 rows each
        ...
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import numpy as np

from .reading import Tree, _Permutation, open as open_file


def numpy_batches(
    tree: Tree,
    branches: list[str],
    batch_size: int,
    *,
    shuffle: bool = True,
    seed: int | None = None,
    drop_last: bool = False,
    worker: tuple[int, int] = (0, 1),
) -> Iterator[dict[str, np.ndarray]]:
    """Batches of ``batch_size`` entries of ``branches`` (scalar and fixed-size branches: a
    batch is a dict of arrays of ``batch_size`` rows), every entry once per pass, in a seeded
    random order with ``shuffle``. ``worker = (k, n)`` keeps batches ``k, k + n, k + 2n, ...``
    of that order, so that ``n`` data-loader workers share a pass without overlap.

    Raises:
        TypeError: a branch is variable-length (pad it first: a batch must be rectangular).
    """
    k, n = worker
    if not 0 <= k < n:
        raise ValueError(f"worker must be (k, n) with 0 <= k < n, not {worker!r}")
    for name in branches:
        info = tree._branch_info(name)
        if info.kind != "fixed" and info.kind != "scalar":
            raise TypeError(
                f"branch {name!r} is {info.kind}: batches for machine learning take scalar and "
                "fixed-size branches (pad variable-length ones first)"
            )
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive number of entries, not {batch_size!r}")
    total = tree.num_entries
    order = _Permutation(total, seed) if shuffle else None
    for number, start in enumerate(range(0, total, int(batch_size))):
        stop = min(start + int(batch_size), total)
        if number % n != k or (drop_last and stop - start < batch_size):
            continue
        positions = np.arange(start, stop, dtype=np.uint64)
        chosen = order(positions) if order is not None else positions
        yield tree.arrays(branches, entries=chosen, library="np")


def TorchDataset(  # noqa: N802 - a class to its users
    path: str | os.PathLike[str],
    branches: list[str],
    batch_size: int,
    *,
    tree: str = "Events",
    shuffle: bool = True,
    seed: int | None = None,
    drop_last: bool = False,
) -> Any:
    """A ``torch.utils.data.IterableDataset`` of batches (dicts of tensors) of ``branches`` of
    tree ``tree`` of the evtc file at ``path``, as :func:`numpy_batches` makes them. Give it to
    a ``DataLoader`` with ``batch_size=None``; with ``num_workers`` each worker opens the file
    and reads its share of the batches. Each pass (epoch) uses ``seed`` plus the pass number.
    """
    import torch
    from torch.utils.data import IterableDataset, get_worker_info

    class _Dataset(IterableDataset):  # type: ignore[misc]
        def __init__(self) -> None:
            self.epoch = 0

        def __iter__(self) -> Iterator[dict[str, Any]]:
            info = get_worker_info()
            worker = (0, 1) if info is None else (info.id, info.num_workers)
            pass_seed = None if seed is None else seed + self.epoch
            self.epoch += 1
            events = open_file(path)[tree]
            for batch in numpy_batches(
                events,
                branches,
                batch_size,
                shuffle=shuffle,
                seed=pass_seed,
                drop_last=drop_last,
                worker=worker,
            ):
                yield {name: torch.from_numpy(np.ascontiguousarray(a)) for name, a in batch.items()}

    return _Dataset()
