"""Weighted k-means on noisy buckets — post-processing of a DP histogram (no budget).

The buckets (quadtree leaves, grid cells) come with noisy counts; k-means++ seeding and
Lloyd's iterations run on their centres weighted by the counts clamped at 0 (scikit-learn's
``KMeans`` with ``sample_weight``; ``random_state`` from :func:`dpkit.privacy.derive_seed`).
The paper seeds k-means from the raw data, which leaks; seeding on the noisy buckets is free
(docs/algorithms.md §3). Degenerate histograms are handled here, never by a crash:

- fewer positive buckets than k: each positive bucket is represented by a grid of
  sub-cell centres sharing its weight (the "uniform inside a bucket" model), so k distinct
  centroids still exist;
- every noisy count is 0: the release carries no information; the centroids are those of
  the uniform distribution over the public box, and a warning says so.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from dpkit.errors import DpkitWarning, warn

#: above this many buckets k-means uses at most 3 restarts (k-means++ seeding each time):
#: with 10^4+ buckets a restart costs more than building the tree
MANY_BUCKETS = 5_000


def subcell_points(
    box_lows: np.ndarray, box_highs: np.ndarray, weights: np.ndarray, per_dim: int
) -> tuple[np.ndarray, np.ndarray]:
    """``per_dim``^d sub-cell centres of each box, each with an equal share of its weight."""
    m, d = box_lows.shape
    offsets = (np.arange(per_dim) + 0.5) / per_dim
    grid = np.stack(np.meshgrid(*([offsets] * d), indexing="ij"), axis=-1).reshape(-1, d)
    span = box_highs - box_lows
    pts = box_lows[:, None, :] + grid[None, :, :] * span[:, None, :]
    w = np.repeat(weights / grid.shape[0], grid.shape[0])
    return pts.reshape(-1, d), w


def weighted_kmeans(
    box_lows: np.ndarray,
    box_highs: np.ndarray,
    weights: np.ndarray,
    k: int,
    *,
    random_state: int,
    n_init: int = 10,
) -> tuple[np.ndarray, str | None]:
    """k centroids of the weighted bucket centres; returns ``(centroids, note)``.

    ``note`` is None for an ordinary run, else a sentence describing the degenerate case
    that was handled (also issued as a :class:`DpkitWarning`).
    """
    from sklearn.cluster import KMeans

    lows = np.asarray(box_lows, dtype=float)
    highs = np.asarray(box_highs, dtype=float)
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    note = None
    if not np.any(w > 0):
        note = (
            "every noisy bucket count is 0: the centroids carry no information about the data "
            "(they are k-means centroids of the uniform distribution over the bounds)"
        )
        w = np.prod(highs - lows, axis=1)  # uniform density over the public box
    keep = w > 0
    lows, highs, w = lows[keep], highs[keep], w[keep]
    per_dim = 1
    if len(w) < k:
        per_dim = math.ceil((k / len(w)) ** (1.0 / lows.shape[1]))
        per_dim = max(per_dim, 2)
        note = note or (
            f"only {len(w)} bucket(s) have a positive noisy count, fewer than k={k}: each was "
            "split into sub-cells (uniform inside a bucket) to place k centroids"
        )
    if per_dim > 1:
        pts, pw = subcell_points(lows, highs, w, per_dim)
    else:
        pts, pw = (lows + highs) / 2.0, w
    if note:
        warn(note, DpkitWarning)
    if k == 1:
        return (np.average(pts, axis=0, weights=pw))[None, :], note
    if len(pts) > MANY_BUCKETS:
        n_init = min(n_init, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn's ConvergenceWarning on duplicate points
        km = KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit(pts, sample_weight=pw)
    return km.cluster_centers_, note
