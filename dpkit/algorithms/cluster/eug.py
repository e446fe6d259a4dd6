"""EUGk-means: weighted k-means on a uniform grid of noisy counts (Su et al. 2016).

The paper's second baseline (docs/algorithms.md §3). A noisy N̂ (``n_share`` of ε) fixes the
grid: m = (N̂·ε/10)^(2/(2+d)) cells per dimension (Su et al.'s rule, θ = 10), at least 1,
and at most ``max_cells`` cells in all (memory). Every cell's count gets DLap(ε_rest) (one
histogram release) and weighted k-means runs on the cell centres (post-processing).
"""

from __future__ import annotations

import math

import numpy as np

from dpkit.algorithms.cluster.common import (
    check_bounds,
    check_k,
    check_k_supported,
    noisy_size,
    points_frame,
)
from dpkit.algorithms.cluster.dpqt import Buckets
from dpkit.algorithms.cluster.kmeans import weighted_kmeans
from dpkit.engine.keys import Uniform
from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, derive_seed, discrete_laplace


def grid_size(n_hat: float, epsilon: float, d: int, max_cells: int) -> int:
    """Su et al.'s m = (N·ε/10)^(2/(2+d)) per dimension, in [1, max_cells^(1/d)]."""
    m = (max(n_hat, 1.0) * epsilon / 10.0) ** (2.0 / (2.0 + d))
    cap = max(int(math.floor(max_cells ** (1.0 / d))), 1)
    return int(min(max(round(m), 1), cap))


class EUGKMeans:
    """EUGk-means; after ``fit``: ``cluster_centers_``, ``grid_`` (m), ``n_estimate_``, ``buckets_`` (the noisy cells)."""

    def __init__(
        self,
        n_clusters: int,
        *,
        epsilon: float,
        bounds: tuple[object, object],
        n_estimate: int | None = None,
        n_share: float = 0.05,
        max_cells: int = 1 << 22,
        n_init: int = 10,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.n_estimate = n_estimate
        self.n_share = n_share
        self.max_cells = max_cells
        self.n_init = n_init

    def fit(self, points: object, *, accountant: Accountant, rng: np.random.Generator,
            columns: object = None) -> EUGKMeans:
        """``points``: an ``(n, d)`` array, or a frame (:mod:`dpkit.engine`) and its ``columns``."""
        k = check_k(self.n_clusters)
        lows, highs = check_bounds(*self.bounds)
        frame, names = points_frame(points, lows, highs, columns)
        if not 0 < float(self.n_share) < 1:
            raise DpkitUsageError(f"n_share must be in (0, 1), got {self.n_share!r}")
        if k > int(self.max_cells):
            raise DpkitUsageError(f"k={k} is larger than the {self.max_cells} cells the grid may have")
        eps = float(self.epsilon)
        accountant.check(eps, "eug")
        d = lows.size
        if self.n_estimate is None:
            eps_n = float(self.n_share) * eps
            n_hat = noisy_size(frame.count(), epsilon=eps_n, accountant=accountant, rng=rng)
        else:
            eps_n, n_hat = 0.0, int(self.n_estimate)
        check_k_supported(k, n_hat, eps_n or None)
        eps_c = eps - eps_n
        m = grid_size(n_hat, eps_c, d, int(self.max_cells))
        cells = [Uniform(c, float(lo), float(hi), m) for c, lo, hi in zip(names, lows, highs, strict=True)]
        exact = frame.counts(cells, [m] * d).ravel()
        noisy = discrete_laplace(
            exact, epsilon=eps_c, rng=rng, accountant=accountant, step="grid cell counts", scope="parallel"
        )
        idx = np.stack(np.unravel_index(np.arange(m**d), (m,) * d), axis=1)
        size = (highs - lows) / m
        b_lows = lows + idx * size
        b_highs = b_lows + size
        self.cluster_centers_, self.note_ = weighted_kmeans(
            b_lows, b_highs, noisy, k, random_state=derive_seed(rng), n_init=self.n_init
        )
        self.grid_ = m
        self.n_estimate_ = n_hat
        self.buckets_ = Buckets(b_lows, b_highs, noisy, np.full(len(noisy), m))
        return self
