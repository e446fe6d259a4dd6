"""The sufficient statistics the algorithms need — the one place that scans encoded data.

Algorithms never loop over records: they ask this module for counts (per group and class,
per cell of a contingency table, per candidate split), computed with numpy ``bincount`` /
``ravel_multi_index`` in O(n) vectorized passes. Keeping every scan here means a faster or
distributed counting engine can later replace this module alone.

Everything returned here is *exact* and therefore private: it must only flow into a
``dpkit.privacy`` mechanism, never into a report or an output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def class_counts(groups: np.ndarray, y: np.ndarray, n_groups: int, n_classes: int) -> np.ndarray:
    """Counts of (group, class) pairs as an ``(n_groups, n_classes)`` int64 array.

    ``groups`` and ``y`` are non-negative integer codes aligned by record.
    """
    flat = groups.astype(np.int64) * n_classes + y.astype(np.int64)
    return np.bincount(flat, minlength=n_groups * n_classes).reshape(n_groups, n_classes)


def group_of(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Index of the group each value falls in, for groups ``[starts[i], starts[i+1])``.

    Serves both generalization by a taxonomy cut (leaf codes against the sorted first
    leaf of every cut node) and numeric binning (values against interval lower edges).
    """
    idx = np.searchsorted(starts, values, side="right") - 1
    return np.clip(idx, 0, len(starts) - 1)


def cell_counts(codes: Sequence[np.ndarray], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Sparse counts of a contingency table: ``(cells, counts)`` for the non-empty cells only.

    ``codes[j]`` are the per-record indices along dimension j (size ``shape[j]``). ``cells``
    is an ``(m, d)`` int64 array of the non-empty cells' coordinates (lexicographic order)
    and ``counts`` their record counts. Works for tables far too large to materialize.
    """
    if not codes:
        raise ValueError("cell_counts needs at least one dimension")
    n = len(codes[0])
    dims = np.asarray(shape, dtype=np.int64)
    if n == 0:
        return np.zeros((0, len(codes)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    total = 1.0
    for s in shape:
        total *= float(s)
    if total < 2**62:
        flat = np.ravel_multi_index([c.astype(np.int64) for c in codes], dims)
        ids, counts = np.unique(flat, return_counts=True)
        cells = np.stack(np.unravel_index(ids, dims), axis=1).astype(np.int64)
        return cells, counts.astype(np.int64)
    stacked = np.stack([c.astype(np.int64) for c in codes], axis=1)
    cells, counts = np.unique(stacked, axis=0, return_counts=True)
    return cells, counts.astype(np.int64)


def histogram(points: np.ndarray, lows: np.ndarray, highs: np.ndarray, bins: Sequence[int]) -> np.ndarray:
    """Counts of d-dimensional ``points`` on a regular grid of ``bins[j]`` cells per dimension.

    ``lows``/``highs`` are the public bounds; points on the upper edge go to the last cell.
    Returns an int64 array of shape ``bins``.
    """
    pts = np.asarray(points, dtype=float)
    nb = np.asarray(bins, dtype=np.int64)
    width = (np.asarray(highs, dtype=float) - np.asarray(lows, dtype=float)) / nb
    idx = np.floor((pts - lows) / width).astype(np.int64)
    idx = np.clip(idx, 0, nb - 1)
    flat = np.ravel_multi_index(tuple(idx.T), tuple(nb))
    return np.bincount(flat, minlength=int(np.prod(nb))).reshape(tuple(nb)).astype(np.int64)
