"""DPQTk-means: k-means on the buckets of a differentially private quadtree.

Zhang & Cheng (DPQTk-means; the paper is cited in docs/algorithms.md), as corrected in
docs/algorithms.md §3. The public bounding box is split recursively; a node's count is noised
with discrete Laplace, one vectorized call per level (the nodes of a level are disjoint, so
the level's ε is spent once, scope ``parallel``), and a node is split while its noisy count
exceeds a threshold. The leaves are the buckets; their counts are noised again with
ε2 = (1 − γ)ε (one histogram release), and weighted k-means on the bucket centres gives the
centroids (post-processing).

Departures from the paper (docs/algorithms.md §3):

- **Height and threshold follow the noise, not N alone.** The paper's maxH = ln(N)/d and
  T = N/1000 stop far too early when the public box is much wider than the data (a bucket
  of a 10^6-wide box at depth ln(5000)/2 ≈ 4 is 62,500 wide — wider than S1's clusters).
  dpkit splits a node while its noisy count exceeds one standard deviation σ of the
  level's noise (``threshold_sd``; an empty node is split with probability ≈ 12 %, but
  its empty children stop at once), and caps the height where a node can no longer be
  told from noise: the depth at which N̂ points spread over the occupied cells fall
  below 2σ (``height_sd``, :func:`auto_height`; docs/decisions/0001-dpqt-threshold-and-height.md).
  ``max_height`` / ``threshold`` override both.
- The root is always split (it is the public box: no data is needed to decide), and the
  last level is never split, so only levels 1..H−1 draw noisy counts. If every node stops
  before H, the unused level budgets go to the bucket counts.
- N is private: a noisy N̂ (``n_share`` of ε, reported) or a public ``n_estimate``.
- Initial centres come from k-means++ on the noisy buckets, not from k-means on the data.
- Bucket counts at or below 2σ of their noise are set to 0 before k-means when at least
  2k buckets remain (post-processing, :func:`noise_floor`).
- **Beyond 2-D** (the paper is 2-D only): for d <= 4 a node splits into 2^d equal children;
  for d > 4 a kd-style split halves one dimension per level, cycling through them (2
  children), so the node count per level does not explode. ``split`` chooses explicitly.
  docs/algorithms.md suggests 2^d children up to d = 3; 2^d children up to d = 4
  (docs/decisions/0002-dpqt-split-beyond-2d.md), as the kd split needs d times as many levels for the same resolution, so
  each level's count is d times noisier, while the extra children of a 2^d split cost no
  budget (parallel composition) and empty ones rarely pass the threshold.
- ``allocation="geometric"`` gives level h a share ∝ 2^(h/3) of ε1 (Cormode et al.,
  ICDE 2012), more budget where counts are small; ``uniform`` (the paper) gives ε1/(H−1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpkit.algorithms.cluster.common import (
    check_bounds,
    check_k,
    check_k_supported,
    laplace_sd,
    noisy_size,
    points_frame,
)
from dpkit.algorithms.cluster.kmeans import weighted_kmeans
from dpkit.data.counting import child_counts
from dpkit.engine.keys import Grid
from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, derive_seed, discrete_laplace

#: the cap on Σ depths so that a cell key fits in an int64
MAX_TOTAL_DEPTH = 60
#: up to this many dimensions a node splits into 2^d children (``split="auto"``)
MAX_ALL_SPLIT_DIM = 4


@dataclass
class Buckets:
    """The released buckets: boxes (in data units), noisy counts, and their depth."""

    lows: np.ndarray
    highs: np.ndarray
    counts: np.ndarray
    depth: np.ndarray


def split_dims(level: int, d: int, split: str) -> np.ndarray:
    """Boolean mask of the dimensions halved when going from ``level`` to ``level + 1``."""
    if split == "all":
        return np.ones(d, dtype=bool)
    mask = np.zeros(d, dtype=bool)
    mask[level % d] = True
    return mask


def resolve_split(split: str, d: int) -> str:
    """``auto`` → ``all`` (2^d children) for d <= 4, ``cycle`` (kd-style) beyond."""
    if split not in ("auto", "all", "cycle"):
        raise DpkitUsageError(f"split must be auto, all or cycle, got {split!r}")
    if split == "auto":
        return "all" if d <= MAX_ALL_SPLIT_DIM else "cycle"
    return split


def level_budgets(eps1: float, height: int, allocation: str) -> np.ndarray:
    """ε of each decision level 1..H−1 (sums to ε1; empty when H <= 1)."""
    n = max(height - 1, 0)
    if n == 0:
        return np.zeros(0)
    if allocation == "uniform":
        w = np.ones(n)
    elif allocation == "geometric":
        w = 2.0 ** (np.arange(1, n + 1) / 3.0)
    else:
        raise DpkitUsageError(f"allocation must be uniform or geometric, got {allocation!r}")
    return eps1 * w / w.sum()


def auto_height(n_hat: float, eps1: float, d: int, split: str, c: float, cap: int) -> int:
    """The height rule (docs/algorithms.md §3, dpkit's correction of ln(N)/d).

    A node is worth splitting only if its count exceeds c·σ, σ the level noise. Fix the
    height H so that N̂ points, if they filled cells at depth H−1 with the density of a
    uniform sample over √(number of cells) of them (data occupy a small part of a wide
    box), would still give c·σ_H per cell, σ_H = sd of DLap(ε1/(H−1)). Solved by trying
    H = 1, 2, … up to ``cap`` and keeping the largest that passes; never below 2.
    """
    best = 2
    per_level = d if split == "all" else 1
    for h in range(2, cap + 1):
        cells = 2.0 ** (per_level * (h - 1))
        occupied = math.sqrt(cells)
        sigma = laplace_sd(eps1 / (h - 1))
        if n_hat / occupied >= c * sigma:
            best = h
    return best


class DPQTKMeans:
    """DPQTk-means (Zhang & Cheng), ε-DP k-means via a private quadtree.

    Parameters are stored as given; :meth:`fit` validates them. After ``fit``:
    ``cluster_centers_`` (k, d), ``buckets_`` (:class:`Buckets`), ``height_``,
    ``threshold_`` (per decision level), ``n_estimate_`` (the noisy or given N),
    ``split_`` (``all``|``cycle``), ``note_`` (a degenerate case handled, or None).
    """

    def __init__(
        self,
        n_clusters: int,
        *,
        epsilon: float,
        bounds: tuple[object, object],
        gamma: float = 0.3,
        max_height: int | None = None,
        threshold: float | None = None,
        threshold_sd: float = 1.0,
        height_sd: float = 2.0,
        allocation: str = "uniform",
        n_estimate: int | None = None,
        n_share: float = 0.05,
        split: str = "auto",
        height_cap: int = 16,
        n_init: int = 10,
        noise_floor: float = 2.0,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.gamma = gamma
        self.max_height = max_height
        self.threshold = threshold
        self.threshold_sd = threshold_sd
        self.height_sd = height_sd
        self.allocation = allocation
        self.n_estimate = n_estimate
        self.n_share = n_share
        self.split = split
        self.height_cap = height_cap
        self.n_init = n_init
        self.noise_floor = noise_floor

    def _validate(self) -> tuple[int, np.ndarray, np.ndarray]:
        k = check_k(self.n_clusters)
        lows, highs = check_bounds(*self.bounds)
        if not 0 < float(self.gamma) < 1:
            raise DpkitUsageError(f"gamma must be in (0, 1), got {self.gamma!r}")
        if not 0 < float(self.n_share) < 1:
            raise DpkitUsageError(f"n_share must be in (0, 1), got {self.n_share!r}")
        if self.max_height is not None and not 1 <= int(self.max_height) <= MAX_TOTAL_DEPTH:
            raise DpkitUsageError(f"max height must be between 1 and {MAX_TOTAL_DEPTH}, got {self.max_height!r}")
        if self.threshold is not None and not (math.isfinite(self.threshold) and self.threshold >= 0):
            raise DpkitUsageError(f"threshold must be a number >= 0, got {self.threshold!r}")
        if self.n_estimate is not None and int(self.n_estimate) < 1:
            raise DpkitUsageError(f"n_estimate must be >= 1, got {self.n_estimate!r}")
        if self.n_estimate is not None and k > int(self.n_estimate):
            raise DpkitUsageError(f"k={k} is larger than the public data size estimate {self.n_estimate}")
        if self.allocation not in ("uniform", "geometric"):
            raise DpkitUsageError(f"allocation must be uniform or geometric, got {self.allocation!r}")
        d = lows.size
        split = resolve_split(self.split, d)
        per_level = d if split == "all" else 1
        cap = int(self.max_height) if self.max_height is not None else int(self.height_cap)
        cap = min(cap, MAX_TOTAL_DEPTH // per_level)
        if per_level * cap < math.log2(k):
            raise DpkitUsageError(
                f"k={k} is larger than the {2 ** (per_level * cap)} buckets a tree of height {cap} "
                f"can have in {d} dimension(s); use a smaller k or a larger max_height", param="max_height"
            )
        return k, lows, highs

    def _plan(self, n_hat: int, eps1: float, d: int, split: str, per_level: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The tree's height, each level's ε and each level's split threshold (public: set from
        the parameters and the noisy size ñ)."""
        cap = min(int(self.height_cap), MAX_TOTAL_DEPTH // per_level)
        if self.max_height is not None:
            height = min(int(self.max_height), MAX_TOTAL_DEPTH // per_level)
        else:
            height = auto_height(n_hat, eps1, d, split, float(self.height_sd), cap)
        budgets = level_budgets(eps1, height, self.allocation)
        if self.threshold is not None:
            thresholds = np.full(len(budgets), float(self.threshold))
        else:
            thresholds = np.array([float(self.threshold_sd) * laplace_sd(e) for e in budgets])
        return height, budgets, thresholds

    def fit(self, points: object, *, accountant: Accountant, rng: np.random.Generator,
            columns: object = None) -> DPQTKMeans:
        """Build the private quadtree over ``points`` and cluster its buckets.

        ``points``: an ``(n, d)`` array, or a frame (:mod:`dpkit.engine`) and its
        ``columns``. Spends at most ``epsilon`` from ``accountant`` (checked before any
        noise is drawn). The data are read once: the counts of the non-empty cells of the
        deepest level's grid; every level's node counts are sums of those.
        """
        k, lows, highs = self._validate()
        frame, names = points_frame(points, lows, highs, columns)
        eps = float(self.epsilon)
        accountant.check(eps, "dpqt")
        d = lows.size
        split = resolve_split(self.split, d)
        per_level = d if split == "all" else 1

        if self.n_estimate is None:
            eps_n = float(self.n_share) * eps
            n_hat = noisy_size(frame.count(), epsilon=eps_n, accountant=accountant, rng=rng)
        else:
            eps_n = 0.0
            n_hat = int(self.n_estimate)
        check_k_supported(k, n_hat, eps_n or None)  # before the tree: k > N̂ is refused at once
        eps_rest = eps - eps_n
        eps1 = float(self.gamma) * eps_rest

        height, budgets, thresholds = self._plan(n_hat, eps1, d, split, per_level)
        # the non-empty cells of the deepest level and their exact counts, once; shallower
        # nodes are bit shifts of a cell (the cells stand in for their points, weighted)
        final_depths = sum((split_dims(h, d, split) for h in range(height)), np.zeros(d, dtype=np.int64))
        grid = [Grid(c, float(lo), float(hi), int(b)) for c, lo, hi, b in zip(names, lows, highs, final_depths,
                                                                               strict=True)]
        found, weight = frame.cells(grid, [1 << int(b) for b in final_depths])
        leaf_coords, leaf_depths, leaf_exact, tree_spent = _grow(
            np.ascontiguousarray(found.T), weight, final_depths, height, d, split, budgets, thresholds, rng, accountant)
        lc = np.concatenate(leaf_coords)
        ld = np.concatenate(leaf_depths)
        exact_leaves = np.concatenate(leaf_exact)
        # levels never reached (every node stopped early) spent nothing: their share is
        # added to the bucket counts (the decision rests on noisy counts only)
        eps2 = eps_rest - tree_spent
        counts = discrete_laplace(
            exact_leaves, epsilon=eps2, rng=rng, accountant=accountant,
            step="bucket counts", scope="parallel",
        )
        size = (highs - lows) / np.left_shift(np.int64(1), ld)
        b_lows = lows + lc * size
        b_highs = np.minimum(b_lows + size, highs)
        self.buckets_ = Buckets(b_lows, b_highs, counts, ld.sum(axis=1))
        w = noise_floor(counts, float(self.noise_floor) * laplace_sd(eps2), k)
        self.cluster_centers_, self.note_ = weighted_kmeans(
            b_lows, b_highs, w, k, random_state=derive_seed(rng), n_init=self.n_init
        )
        self.height_ = height
        self.threshold_ = thresholds
        self.level_epsilons_ = budgets
        self.n_estimate_ = n_hat
        self.split_ = split
        self.epsilons_ = {"n": eps_n, "tree": tree_spent, "buckets": eps2}
        return self


def _grow(cells: np.ndarray, weight: np.ndarray, final_depths: np.ndarray, height: int, d: int, split: str,
          budgets: np.ndarray, thresholds: np.ndarray, rng: np.random.Generator,
          accountant: Accountant) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], float]:
    """Grow the quadtree top-down from the deepest level's ``cells`` (their exact ``weight``):
    a node splits when its noisy count passes its level's threshold (DPQT, Algorithm 1). Returns
    the leaves' coordinates, depths and exact counts, level by level, and the ε the levels spent."""
    # current level: node coordinates (m, d) at per-dim depths; the root is split for free
    depths = np.zeros(d, dtype=np.int64)
    coords = np.zeros((1, d), dtype=np.int64)
    leaf_coords: list[np.ndarray] = []
    leaf_depths: list[np.ndarray] = []
    leaf_exact: list[np.ndarray] = []
    active = cells  # cells inside nodes that are split at this level
    parent = np.zeros(cells.shape[1], dtype=np.int64)  # their node's index in `coords`
    tree_spent = 0.0
    for level in range(height):
        # children of every node in `coords`, in the order of counting.child_counts
        mask = split_dims(level, d, split)
        bits = np.stack(np.meshgrid(*[[0, 1] if m else [0] for m in mask], indexing="ij"), -1)
        bits = bits.reshape(-1, d)
        n_parents = len(coords)
        coords = (coords[:, None, :] * np.where(mask, 2, 1) + bits[None, :, :]).reshape(-1, d)
        depths = depths + mask
        child, exact = child_counts(active, final_depths, parent, n_parents, depths, mask, weight)
        if level + 1 >= height:  # the last level is never split: all its nodes are leaves
            leaf_coords.append(coords)
            leaf_depths.append(np.repeat(depths[None, :], len(coords), 0))
            leaf_exact.append(exact)
            break
        noisy = discrete_laplace(
            exact, epsilon=float(budgets[level]), rng=rng, accountant=accountant,
            step=f"quadtree level {level + 1} counts", scope="parallel",
        )
        tree_spent += float(budgets[level])
        go = noisy > thresholds[level]
        leaf_coords.append(coords[~go])
        leaf_depths.append(np.repeat(depths[None, :], int((~go).sum()), 0))
        leaf_exact.append(exact[~go])
        if not go.any():
            break
        coords = coords[go]
        rank = np.cumsum(go) - 1  # a split child's index among the next level's parents
        keep = (child >= 0) & go[child]
        if keep.mean() < 0.75:  # drop the cells of leaves once that saves enough work
            active = active[:, keep]
            weight = weight[keep]
            parent = rank[child[keep]]
        else:
            parent = np.where(keep, rank[child], -1)
    return leaf_coords, leaf_depths, leaf_exact, tree_spent


def noise_floor(counts: np.ndarray, floor: float, k: int) -> np.ndarray:
    """Noisy counts with those <= ``floor`` set to 0, if at least 2k buckets stay positive.

    Post-processing. Many leaves are empty siblings of dense nodes; their noise, clamped
    at 0, would put spurious mass away from the data and pull centroids off: a floor of
    2σ removes them (docs/decisions/0003-dpqt-noise-floor.md). When buckets
    are few (small ε) every bucket matters, so nothing is removed.
    """
    c = np.clip(np.asarray(counts, dtype=float), 0.0, None)
    kept = c > floor
    if int(kept.sum()) >= 2 * k:
        return np.where(kept, c, 0.0)
    return c
