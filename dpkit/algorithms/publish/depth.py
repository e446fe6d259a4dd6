"""How deep to specialize, and how much of the release is noise — from public quantities only.

``--levels auto`` (docs/publish.md, "Automatic depth"). Every quantity here is a function of
ε, the public cut, the number of classes and a noisy record count Ñ = N + DLap(ε_N) (its own
accounted spend), so the depth and the post-processing are DP post-processing.

The count noise DLap(ε₂) has standard deviation σ(ε₂) = √(2q)/(1−q), q = e^(−ε₂). A cell whose
expected count λ is below σ cannot be told from an empty cell by its noisy count: the noise
is as large as the signal (the same 1σ rule as DPQT's split threshold, ``dpkit.algorithms.cluster.dpqt``).
A (cut × class) table of M cells holding Ñ records has Ñ/M records per cell on average, so it
is resolved while Ñ/M ≥ κ·σ(ε₂), i.e. M ≤ M_max = Ñ / (κ·σ(ε₂)) (κ = ``resolution``, 1 by
default). The cut stops growing before it would pass M_max; the depth h that schedules the
selection budget is the number of levels a cut that doubles at every level takes to reach it:
h = ⌈log₂(M_max / |C|)⌉ (|C| classes: the root cut already has |C| cells).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: share of ε spent on the noisy record count Ñ under ``--levels auto``
N_SHARE = 0.05
#: κ: a cell is resolved when its expected count is at least κ standard deviations of the noise
RESOLUTION = 1.0
#: a cap on the automatic depth (a cut that doubles 64 times has 2^64 cells: never resolvable)
MAX_AUTO_LEVELS = 64
#: the suppression threshold keeps the expected noise records from empty cells below this share of Ñ
NOISE_SHARE_KEPT = 0.05
#: a class whose estimated records the threshold would cut below this share keeps all its cells
CLASS_SHARE_KEPT = 0.5


def noise_sd(epsilon: float) -> float:
    """Standard deviation of DLap(ε): √(2q)/(1−q), q = e^(−ε) (≈ √2/ε for small ε)."""
    q = math.exp(-epsilon)
    # floored: e^(−ε) underflows to 0 for ε ≳ 745, and the cap divides by this
    return max(math.sqrt(2.0 * q) / (-math.expm1(-epsilon)), 1e-300)


def max_cells(n_hat: float, eps_counts: float, resolution: float = RESOLUTION) -> float:
    """M_max = Ñ / (κ·σ(ε₂)): the most (cut × class) cells whose mean count the noise resolves."""
    return max(float(n_hat), 1.0) / (resolution * noise_sd(eps_counts))


def auto_levels(capacity: float, n_classes: int) -> int:
    """h = ⌈log₂(M_max / |C|)⌉ (0 when even the root cut is not resolved), at most 64."""
    ratio = capacity / max(n_classes, 1)
    if ratio <= 1.0:
        return 0
    return min(MAX_AUTO_LEVELS, math.ceil(math.log2(ratio)))


def log_cells(shape: list[int]) -> float:
    """ln Π shape, without forming a product that could overflow a float."""
    return math.fsum(math.log(s) for s in shape)


def tail_noise(epsilon: float, threshold: int) -> float:
    """E[Z·1{Z ≥ T}] for Z ~ DLap(ε), T ≥ 1: the noise records one empty cell contributes when
    cells below T are suppressed: q^T/(1+q) · (T + q/(1−q))."""
    q = math.exp(-epsilon)
    t = max(int(threshold), 1)
    return math.exp(-epsilon * t) / (1.0 + q) * (t + q / (-math.expm1(-epsilon)))


def expected_noise_share(log_n_cells: float, epsilon: float, n_hat: float, threshold: int = 1) -> float:
    """Expected share of noise records in the release, from public quantities: every cell is
    counted as empty (an upper bound on the noise mass), noise = M·E[Z·1{Z ≥ T}], signal Ñ."""
    log_noise = log_cells_safe(log_n_cells) + math.log(max(tail_noise(epsilon, threshold), 1e-300))
    n = max(float(n_hat), 1.0)
    if log_noise - math.log(n) > 700:
        return 1.0
    noise = math.exp(log_noise)
    return noise / (noise + n)


def log_cells_safe(x: float) -> float:
    return min(x, 1e6)


def suppression_threshold(log_n_cells: float, epsilon: float, n_hat: float,
                          share: float = NOISE_SHARE_KEPT) -> int:
    """The smallest T ≥ 1 with M·E[Z·1{Z ≥ T}] ≤ share·Ñ: below T a noisy count is dropped.

    The expected noise that survives falls like q^T, so T grows with ln(M/Ñ)/ε₂; it is capped
    at T where the noise's own tail is negligible against one record.
    """
    n = max(float(n_hat), 1.0)
    for t in range(1, 1_000_000):
        noise = math.exp(min(log_n_cells + math.log(max(tail_noise(epsilon, t), 1e-300)), 700.0))
        if noise <= share * n:
            return t
    return 1_000_000


def class_thresholds(class_counts: list[np.ndarray], log_cells_per_class: float, epsilon: float,
                     threshold: int, share: float = CLASS_SHARE_KEPT, resolution: float = RESOLUTION) -> list[int]:
    """The suppression threshold of each class: ``threshold``, or 1 for a class it would erase.

    The threshold bounds the noise records of the *whole* table; on an imbalanced target the
    rare class's true cells can all sit below it, and suppression then keeps the class only in
    noise cells — the release ranks the classes the wrong way round (bcw at 8 % positives: a
    class of 27 records spread over 48 cells, T = 8). From the noisy positive counts of class k
    (post-processing, free in ε) and public quantities, with m the cells per class and σ the
    noise's standard deviation: its records Ŝ_k = Σ c − m·E[Z·1{Z ≥ 1}] (every cell counted as
    empty: a lower bound), and those kept at T, Σ_{c ≥ T} c − m·E[Z·1{Z ≥ T}]. A class keeps
    every positive cell (threshold 1) when the kept share is below ``share`` and Ŝ_k is resolved
    — at least ``resolution`` standard deviations of its own noise, σ·√(m/2) (the κ of the
    automatic depth): a class the noise does not resolve is left to the threshold.
    """
    m = math.exp(min(log_cells_per_class, 700.0))
    noise_all, noise_kept = m * tail_noise(epsilon, 1), m * tail_noise(epsilon, threshold)
    resolved = resolution * noise_sd(epsilon) * math.sqrt(m / 2.0)
    out = []
    for counts in class_counts:
        signal = float(counts.sum()) - noise_all
        kept = float(counts[counts >= threshold].sum()) - noise_kept
        erased = threshold > 1 and signal >= resolved and kept < share * signal
        out.append(1 if erased else int(threshold))
    return out
