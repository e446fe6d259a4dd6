"""DPk-means: Lloyd's algorithm with noisy cluster sizes and sums (Blum et al., SuLQ 2005).

The baseline of the DPQTk-means paper (docs/algorithms.md §3). Initial centres are drawn
uniformly in the public box (data-independent randomness). Each iteration assigns every
point to its nearest centre and releases, per cluster, a noisy size (discrete Laplace,
Δ = 1) and noisy coordinate sums (discrete Laplace on a fine grid, Δ = Σ_j (hi_j − lo_j)/2
after centring the box at 0); the new centre is sum/size, clipped to the box. Iteration t
spends ε/2^t (the paper's halving schedule), half on sizes and half on sums; the last
iteration also takes the tail ε/2^T so the whole budget is used. The clusters of one
iteration are disjoint, so each release is one parallel spend.
"""

from __future__ import annotations

import numpy as np

from dpkit.algorithms.cluster.common import check_bounds, check_k, points_frame
from dpkit.engine.keys import Nearest
from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, discrete_laplace, grid_laplace


def halving_budgets(epsilon: float, iterations: int) -> np.ndarray:
    """ε/2, ε/4, …, ε/2^(T−1), ε/2^(T−1): halving, with the tail given to the last one."""
    if iterations < 1:
        raise DpkitUsageError(f"iterations must be >= 1, got {iterations!r}")
    b = epsilon / 2.0 ** np.arange(1, iterations + 1)
    b[-1] += epsilon - b.sum()
    return b


class DPKMeans:
    """SuLQ DP k-means; after ``fit``: ``cluster_centers_`` (k, d), ``iteration_epsilons_``."""

    def __init__(
        self, n_clusters: int, *, epsilon: float, bounds: tuple[object, object], iterations: int = 5
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.iterations = iterations

    def fit(self, points: object, *, accountant: Accountant, rng: np.random.Generator,
            columns: object = None) -> DPKMeans:
        """``points``: an ``(n, d)`` array, or a frame (:mod:`dpkit.engine`) and its ``columns``."""
        k = check_k(self.n_clusters)
        lows, highs = check_bounds(*self.bounds)
        if not hasattr(points, "column_names"):
            # clip here too, not only at load: the sums' sensitivity assumes every point is in the box
            points = np.clip(np.asarray(points, dtype=float), lows, highs)
        frame, names = points_frame(points, lows, highs, columns)
        eps = float(self.epsilon)
        accountant.check(eps, "dpkmeans")
        budgets = halving_budgets(eps, int(self.iterations))
        mid = (lows + highs) / 2.0
        half = (highs - lows) / 2.0
        sens = float(half.sum())  # L1 norm of one centred point
        granularity = sens / (1000.0 * k * lows.size)  # rounding adds 0.1 % to Δ
        # data-independent initial centres: uniform in the public box
        centres = lows + rng.random((k, lows.size)) * (highs - lows)
        for t, e in enumerate(budgets, start=1):
            # per nearest centre: the size and the exact sums (the same bits on any engine),
            # centred at the middle of the box
            sizes, raw = frame.sums(names, [Nearest(tuple(names), centres - mid, mid)], (k,))
            sums = raw - sizes[:, None] * mid
            noisy_n = discrete_laplace(
                sizes, epsilon=e / 2, rng=rng, accountant=accountant,
                step=f"iteration {t} cluster sizes", scope="parallel",
            )
            noisy_s = grid_laplace(
                sums.ravel(), epsilon=e / 2, sensitivity=sens, granularity=granularity, rng=rng,
                accountant=accountant, step=f"iteration {t} cluster sums", scope="parallel",
            ).reshape(k, -1)
            ok = noisy_n >= 1
            new = noisy_s[ok] / noisy_n[ok, None] + mid
            centres[ok] = np.clip(new, lows, highs)  # an empty noisy cluster keeps its centre
        self.cluster_centers_ = centres
        self.iteration_epsilons_ = budgets
        self.note_ = None
        return self
