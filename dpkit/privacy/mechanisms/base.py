"""The shared base of the mechanisms: argument checks, the floor on a noise ε, utilities scaled
to the exact integer grid the selection mechanisms sample on. No draw and no spend here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact
from dpkit.privacy.accountant import validate_epsilon

ArrayLike = Sequence[float] | np.ndarray


def _check(epsilon: float, sensitivity: float) -> tuple[float, float]:
    eps = validate_epsilon(epsilon)
    sens = float(sensitivity)
    if not math.isfinite(sens) or sens <= 0:
        raise DpkitUsageError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")
    return eps, sens


#: grid steps of a real-valued domain in exponential_interval (public resolution)
_INTERVAL_GRID = 2**32


#: the smallest ε/Δ of integer noise (below it the noise could overflow int64)
_MIN_NOISE_EPSILON = exact.MIN_EPSILON


def _noise_epsilon(epsilon: float | Fraction) -> float | Fraction:
    """Check the parameter of DLap noise (ε/Δ) before anything is spent or drawn."""
    exact.noise_fraction(epsilon)  # raises a usage error for ε <= 0, non-finite or too small
    return epsilon


# --------------------------------------------------------------------------- selection


def _utilities(utilities: ArrayLike) -> np.ndarray:
    u = np.asarray(utilities, dtype=float)
    if u.ndim != 1 or u.size == 0:
        raise DpkitUsageError("a selection needs a non-empty 1-D vector of utilities")
    if not np.all(np.isfinite(u)):
        raise DpkitUsageError("utilities must be finite")
    return u


#: the largest integer sensitivity Δ·D of declared-integer utilities used as they are; beyond it
#: they are rounded like real utilities
_MAX_SCALED_SENSITIVITY = 2**20


def _rounding_grid(sens: float) -> Fraction:
    """G = 2^(10 − ⌊log₂ Δ⌋): the grid 1/G on which real utilities are rounded, Δ·G ∈ [2^10, 2^11).

    A function of the declared sensitivity alone — never of the utilities."""
    return Fraction(2) ** (10 - math.floor(math.log2(sens)))


def _scaled_scores(u: np.ndarray, sens: float, integer: bool) -> tuple[list[int], int]:
    """Utilities on an integer grid and their integer sensitivity there: (scores, Δ').

    The scale is fixed by public quantities only — Δ and the caller's declaration
    ``integer`` — never by the utilities' values: a scale taken from the utilities (their
    common dyadic denominator) would give a data set whose scores happen to be integers one
    mechanism and its neighbour with a fractional score another, whose output laws are not
    within e^ε of each other (docs/decisions/0013-fixed-score-grid.md).

    - ``integer`` (the utilities are integers on *every* data set, a property of the score
      function, e.g. counts or MAXGDDP's Max score): with D the denominator of Δ, u·D and Δ·D
      are exact integers; used as they are when Δ·D ≤ 2^20 (Δ = 1: D = 1, scores unchanged).
    - otherwise (or Δ·D > 2^20): round(u·G) on the fixed grid of :func:`_rounding_grid`.
      Rounding is monotone and |round(a) − round(b)| ≤ |a − b| + 1, so the rounded scores of
      neighbours differ by an integer ≤ ⌊Δ·G⌋ + 1 ≤ ⌈Δ·G⌉ + 1 = Δ' (a float error of 1e-12 in
      the utilities is absorbed too, as it cannot reach the next integer): about 0.1 % more
      noise, still exact and pure.
    """
    fs = Fraction(sens)
    if integer:
        if not all(float(v).is_integer() for v in u):
            raise DpkitUsageError("utilities declared integer must be whole numbers")
        d = fs.denominator
        if fs * d <= _MAX_SCALED_SENSITIVITY:
            return [int(v) * d for v in u], int(fs * d)
    g = _rounding_grid(sens)
    return [round(Fraction(float(v)) * g) for v in u], math.ceil(fs * g) + 1


def _gaps(u: np.ndarray, factor: Fraction, mask: np.ndarray | None = None) -> list[Fraction]:
    """x_i = factor · (u* − u_i) ≥ 0 as exact fractions (u* the best candidate in ``mask``)."""
    fr = [Fraction(float(v)) for v in u]
    best = max(f for f, ok in zip(fr, mask if mask is not None else [True] * len(fr), strict=True) if ok)
    return [factor * (best - f) for f in fr]


# --------------------------------------------------------------------------- sparse tables
# (the noisy contingency table of `dpkit publish`)

#: a table whose cells cannot be indexed by int64 is refused rather than sampled.
_MAX_FLAT_CELLS = 2**61  # the skip walk sums two table lengths in int64


def _n_cells(shape: Sequence[int]) -> int:
    total = 1
    for s in shape:
        if int(s) <= 0:
            raise DpkitUsageError(f"every dimension of a table needs at least one cell, got {list(shape)}")
        total *= int(s)
    return total
