"""The (discrete) Laplace family: counts and histograms under an L1 sensitivity (Dwork & Roth
§3.3; the discrete Laplace of Canonne, Kamath & Steinke 2020, sampled exactly), on a grid, and sparse
(only the cells that come out positive are drawn)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.mechanisms.base import (
    _MAX_FLAT_CELLS,
    ArrayLike,
    _check,
    _n_cells,
    _noise_epsilon,
)

# --------------------------------------------------------------------------- raw samplers


def sample_geometric(rng: np.random.Generator, q: float, size: int | tuple[int, ...]) -> np.ndarray:
    """Exact draws of G >= 0 with P(G = k) = (1 - q) q^k, for q = e^-ε with ε = -ln q.

    ε is taken as the fraction s/t ≤ -ln q of :func:`dpkit.privacy.exact.noise_fraction`
    (exact for most floats); the draw itself is exact (:mod:`dpkit.privacy.exact`).
    """
    return _geometric(rng, -math.log(q), size)


def _geometric(
    rng: np.random.Generator, epsilon: float | Fraction, size: int | tuple[int, ...]
) -> np.ndarray:
    """Exact Geometric(e^-ε) draws of ``size`` (ε a float or an exact Fraction)."""
    s, t = exact.noise_fraction(epsilon)
    shape = (size,) if isinstance(size, int | np.integer) else tuple(size)
    return exact.geometric(rng, s, t, int(np.prod(shape, dtype=np.int64))).reshape(shape)


def sample_discrete_laplace(
    rng: np.random.Generator, epsilon: float | Fraction, size: int | tuple[int, ...]
) -> np.ndarray:
    """Exact integer noise with P(k) ∝ exp(-epsilon·|k|) (the two-sided geometric distribution).

    Sampled exactly (:mod:`dpkit.privacy.exact`: inversion of a lazily refined uniform,
    decided in floats only where that is provably right), so there is no float cut-off: the old inversion of a 53-bit
    uniform never exceeded ⌊53·ln 2/ε⌋, an event of infinite privacy loss. ``epsilon`` may
    be an exact :class:`~fractions.Fraction` (the mechanisms pass ε/Δ exactly); it is used as
    the fraction s/t ≤ ε of :func:`~dpkit.privacy.exact.noise_fraction` — rounding down only
    adds noise. Integers leave no floating-point trace (Mironov 2012).
    """
    s, t = exact.noise_fraction(_noise_epsilon(epsilon))
    shape = (size,) if isinstance(size, int | np.integer) else tuple(size)
    n = int(np.prod(shape, dtype=np.int64))
    return exact.discrete_laplace(rng, s, t, n).reshape(shape)


def discrete_laplace_pmf(k: np.ndarray | int, epsilon: float) -> np.ndarray:
    """The exact pmf of :func:`sample_discrete_laplace`: (1-q)/(1+q) · q^|k|, q = e^-ε."""
    q = math.exp(-epsilon)
    return (1 - q) / (1 + q) * np.power(q, np.abs(np.asarray(k, dtype=float)))


# --------------------------------------------------------------------------- counts


def discrete_laplace(
    values: ArrayLike | int,
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    sensitivity: float = 1.0,
    scope: str = "sequential",
) -> np.ndarray:
    """Add DLap(ε/Δ) to integer ``values`` (one count or a vector of disjoint counts).

    A vector is one release of a histogram: with L1 sensitivity Δ over the whole vector
    (Δ = 1 for disjoint cells under add/remove-one), one spend of ε covers all cells.
    Returns int64 noisy counts (possibly negative; clamping is the caller's post-processing).
    """
    eps, sens = _check(epsilon, sensitivity)
    arr = np.asarray(values)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise DpkitUsageError("discrete_laplace needs integer values")
        arr = arr.astype(np.int64)
    noise_eps = eps if sens == 1 else Fraction(eps) / Fraction(sens)  # exact: ε/Δ never rounded up
    _noise_epsilon(noise_eps)
    accountant.spend(step, "discrete laplace", eps, sens, scope)
    noise = sample_discrete_laplace(rng, noise_eps, arr.shape)
    return arr.astype(np.int64) + noise


def grid_laplace(
    values: ArrayLike | float,
    *,
    epsilon: float,
    sensitivity: float,
    granularity: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    scope: str = "sequential",
) -> np.ndarray:
    """Noise a real vector on the grid ``granularity``·ℤ with discrete Laplace noise.

    Values are first rounded to the grid (post-processing of the input, sensitivity grows by
    at most one grid step per coordinate, which we add), then ``granularity``·DLap(ε·g/Δ')
    is added, so the output is a multiple of the grid and free of Mironov's attack
    (docs/algorithms.md §0 rule 3). ``sensitivity`` is the L1 sensitivity of the whole vector.
    """
    eps, sens = _check(epsilon, sensitivity)
    g = float(granularity)
    if not math.isfinite(g) or g <= 0:
        raise DpkitUsageError(f"granularity must be > 0, got {granularity!r}")
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise DpkitUsageError("grid_laplace needs finite values")
    ticks = np.round(arr / g).astype(np.int64)
    # rounding can move each coordinate by g/2 in either neighbour: Δ' = Δ + g·dim bound
    eff_sens = sens + g * max(arr.size, 1)
    noise_eps = Fraction(eps) * Fraction(g) / (Fraction(sens) + Fraction(g) * max(arr.size, 1))
    _noise_epsilon(noise_eps)
    accountant.spend(step, "discrete laplace on a grid", eps, eff_sens, scope)
    noise = sample_discrete_laplace(rng, noise_eps, arr.shape)
    return (ticks + noise) * g


def positive_noise_probability(epsilon: float) -> float:
    """P(DLap(ε) >= 1) = q / (1 + q), q = e^-ε: the chance an empty cell is released."""
    q = math.exp(-epsilon)  # never overflows; underflows to 0 for huge ε, as it should
    return q / (1.0 + q)


def sample_sparse_positive_dlap(
    rng: np.random.Generator,
    epsilon: float | Fraction,
    shape: Sequence[int],
    occupied: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The cells outside ``occupied`` whose DLap(ε) noise is positive, without visiting them all.

    A table of ``shape`` holds E = Π shape − m empty cells (``occupied`` lists the m others as
    flat int64 indices). Noising every empty cell and keeping the positive ones is, cell by
    cell in flat order, an i.i.d. Bernoulli(p) sequence, p = P(DLap(ε) ≥ 1) = q/(1+q),
    q = e^-ε, each success carrying 1 + Geometric(q) by memorylessness (Cormode, Procopiuc,
    Srivastava, Tran, ICDT 2012, §4). So walk the empty cells by exact geometric skips
    (:func:`dpkit.privacy.exact.bernoulli_skips`) and give each success an exact 1 + G
    (:func:`dpkit.privacy.exact.geometric`): the number released is exactly Binomial(E, p),
    their positions a uniform subset, at cost O(m log m + released cells). ε is the same
    fraction s/t ≤ ε as the occupied cells' noise. Returns (flat indices sorted ascending,
    noisy values >= 1). No accounting: internal.
    """
    total = _n_cells(shape)
    if total >= _MAX_FLAT_CELLS:
        raise DpkitUsageError(f"a table of {total:.3g} cells is too large to index; use a coarser cut")
    s, t = exact.noise_fraction(_noise_epsilon(epsilon))
    occ = np.unique(np.asarray(occupied, dtype=np.int64))
    n_empty = total - int(occ.size)
    if n_empty <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    p = positive_noise_probability(s / t)
    ranks: list[np.ndarray] = []
    pos = 0  # rank (among the empty cells) of the next cell to visit
    while pos < n_empty:
        batch = int(min((n_empty - pos) * p * 1.05 + 4 * math.sqrt((n_empty - pos) * p) + 16, 2**24))
        skips = exact.bernoulli_skips(rng, s, t, batch, n_empty - pos)
        # positions pos + skip_1, then + 1 + skip_2, ...: cut at the first that leaves the
        # table (found on a float running sum, then summed exactly over that prefix only)
        steps = skips + 1
        rough = np.cumsum(steps.astype(np.float64))
        cut = int(np.searchsorted(rough, (n_empty - pos) * (1 + 1e-6) + 1, side="right")) + 1
        at = pos + np.cumsum(steps[:cut]) - 1
        inside = at < n_empty
        ranks.append(at[inside])
        if not inside.all():
            break
        pos = int(at[-1]) + 1
    rank = np.concatenate(ranks) if ranks else np.zeros(0, dtype=np.int64)
    # rank r of an empty cell → its flat index: r + the number of occupied cells before it
    before = occ - np.arange(occ.size, dtype=np.int64)  # empty cells preceding each occupied one
    chosen = rank + np.searchsorted(before, rank, side="right")
    values = exact.geometric(rng, s, t, chosen.size) + 1
    return chosen, values


def sparse_discrete_laplace(
    cells: np.ndarray,
    counts: np.ndarray,
    shape: Sequence[int],
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    max_released_cells: float = 5e7,
) -> tuple[np.ndarray, np.ndarray]:
    """Release a contingency table: DLap(ε) on every cell, empty or not; keep positive cells.

    ``cells`` (m × d coordinates, distinct) and ``counts`` list the non-empty cells of a
    table of ``shape``; the other cells count 0. The output has the distribution of noising
    all Π shape cells and dropping those ≤ 0 (negative → 0 is post-processing), but costs
    O(m + released cells) (:func:`sample_sparse_positive_dlap`). Sensitivity 1 (add/remove one
    record changes one cell by one), one spend for the whole table. The output is sorted by
    cell, so its order does not reveal which cells were occupied.

    Refused before spending when the expected number of released empty cells,
    Π shape · P(noise >= 1) — public — exceeds ``max_released_cells``.
    Returns (cells k × d int64, counts k int64 > 0).
    """
    eps, _ = _check(epsilon, 1.0)
    _noise_epsilon(eps)
    dims = [int(s) for s in shape]
    total = _n_cells(dims)
    expected = total * positive_noise_probability(eps)
    if expected > max_released_cells:
        raise DpkitUsageError(
            f"the released table would hold about {expected:.3g} noise cells "
            f"({total:.3g} cells at epsilon={eps:.3g}); use fewer levels or a larger epsilon"
        )
    if total >= _MAX_FLAT_CELLS:
        raise DpkitUsageError(f"a table of {total:.3g} cells is too large to index; use a coarser cut")
    c = np.asarray(cells, dtype=np.int64).reshape(-1, len(dims))
    n = np.asarray(counts, dtype=np.int64).reshape(-1)
    if c.shape[0] != n.shape[0]:
        raise DpkitUsageError("cells and counts must have the same length")
    if c.size and (np.any(c < 0) or np.any(c >= np.asarray(dims))):
        raise DpkitUsageError("a cell lies outside the table's shape")
    accountant.spend(step, "discrete laplace (sparse table)", eps, 1.0, "sequential")
    flat = np.ravel_multi_index(tuple(c.T), dims) if c.size else np.zeros(0, dtype=np.int64)
    noisy = n + sample_discrete_laplace(rng, eps, n.shape)
    empty_flat, empty_vals = sample_sparse_positive_dlap(rng, eps, dims, flat)
    all_flat = np.concatenate([flat[noisy > 0], empty_flat])
    all_vals = np.concatenate([noisy[noisy > 0], empty_vals])
    order = np.argsort(all_flat, kind="stable")
    # (d, k) coordinates, one contiguous row per dimension, returned as its (k, d) transpose:
    # stacking millions of cells row by row would copy them with a stride of d
    coords = np.asarray(np.unravel_index(all_flat[order], dims), dtype=np.int64).reshape(len(dims), -1)
    return coords.T, all_vals[order].astype(np.int64)
