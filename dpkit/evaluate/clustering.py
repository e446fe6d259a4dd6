"""Clustering quality metrics: NICV, F-measure, RCP (docs/algorithms.md §3).

- NICV (normalized intra-cluster variance) = (1/N)·Σ_x min_c ‖x − c‖²: the k-means
  objective per point; lower is better. Compared with non-private k-means on the same data.
- F-measure against ground-truth labels (Larsen & Aone 1999, as in the DPQTk-means paper):
  F = Σ_i (n_i/N)·max_j F(i, j), F(i, j) = 2·P·R/(P + R), P = n_ij/n_j, R = n_ij/n_i,
  i a true class, j a cluster (points assigned to their nearest centroid).
- RCP (relative clustering performance) = (NICV_other − NICV_ours)/NICV_other: > 0 when
  ours is better.

These read the raw data and are for evaluation by the data owner only.
"""

from __future__ import annotations

import numpy as np

from dpkit.data.counting import nearest_centre
from dpkit.errors import DataError


def nicv(points: np.ndarray, centroids: np.ndarray) -> float:
    """(1/N)·Σ_x min_c ‖x − c‖² (squared Euclidean)."""
    x = np.asarray(points, dtype=float)
    c = np.asarray(centroids, dtype=float)
    if x.ndim != 2 or c.ndim != 2 or x.shape[1] != c.shape[1] or len(c) == 0 or len(x) == 0:
        raise DataError(f"points {x.shape} and centroids {c.shape} must be non-empty (n, d) and (k, d)")
    idx = nearest_centre(x, c)
    diff = x - c[idx]
    return float(np.einsum("ij,ij->", diff, diff) / len(x))


def f_measure(labels_true: np.ndarray, labels_pred: np.ndarray) -> float:
    """Clustering F-measure Σ_i (n_i/N)·max_j F(i, j) of predicted clusters vs true classes."""
    t = np.asarray(labels_true)
    p = np.asarray(labels_pred)
    if t.shape != p.shape or t.ndim != 1 or t.size == 0:
        raise DataError("labels must be two non-empty 1-D arrays of the same length")
    _, ti = np.unique(t, return_inverse=True)
    _, pj = np.unique(p, return_inverse=True)
    table = np.zeros((ti.max() + 1, pj.max() + 1))
    np.add.at(table, (ti, pj), 1)
    n_i = table.sum(axis=1, keepdims=True)
    n_j = table.sum(axis=0, keepdims=True)
    prec = table / n_j
    rec = table / n_i
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(table > 0, 2 * prec * rec / (prec + rec), 0.0)
    return float(np.sum(n_i[:, 0] / t.size * f.max(axis=1)))


def assign(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of each point's nearest centroid."""
    return nearest_centre(np.asarray(points, dtype=float), np.asarray(centroids, dtype=float))


def rcp(nicv_other: float, nicv_ours: float) -> float:
    """(NICV_other − NICV_ours)/NICV_other; positive when ours is better."""
    if not nicv_other > 0:
        raise DataError(f"RCP needs NICV_other > 0, got {nicv_other!r}")
    return float((nicv_other - nicv_ours) / nicv_other)


def nonprivate_nicv(points: np.ndarray, k: int, *, random_state: int = 0, n_init: int = 10) -> float:
    """NICV of scikit-learn's (non-private) k-means with ``n_init`` restarts: the reference."""
    from sklearn.cluster import KMeans

    x = np.asarray(points, dtype=float)
    km = KMeans(n_clusters=min(k, len(np.unique(x, axis=0))), n_init=n_init, random_state=random_state).fit(x)
    return float(km.inertia_ / len(x))


def evaluate_centroids(
    points: np.ndarray,
    centroids: np.ndarray,
    *,
    labels: np.ndarray | None = None,
    other: np.ndarray | None = None,
    reference: bool = True,
) -> dict[str, float | int]:
    """The metrics ``dpkit evaluate cluster`` prints, as an ordered dict.

    ``k``, ``nicv``; with ``reference`` the non-private k-means NICV (same k) and the
    ratio; with ``labels`` the F-measure; with ``other`` (centroids) its NICV and the RCP
    of ``centroids`` against it.
    """
    x = np.asarray(points, dtype=float)
    c = np.asarray(centroids, dtype=float)
    out: dict[str, float | int] = {"k": int(len(c)), "n_points": int(len(x)), "nicv": nicv(x, c)}
    if reference:
        ref = nonprivate_nicv(x, len(c))
        out["nonprivate_nicv"] = ref
        out["nicv_ratio"] = out["nicv"] / ref if ref > 0 else float("inf")
    if labels is not None:
        out["f_measure"] = f_measure(labels, assign(x, c))
    if other is not None:
        o = np.asarray(other, dtype=float)
        out["nicv_other"] = nicv(x, o)
        out["rcp"] = rcp(out["nicv_other"], out["nicv"]) if out["nicv_other"] > 0 else 0.0
    return out
