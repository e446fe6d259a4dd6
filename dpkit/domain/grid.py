"""The public grids of domain discovery: where learned bounds and split points may fall.

Functions of public numbers only — no data, no noise: the nice grid the bounds are chosen on
(:func:`nice_grid`, handed to :func:`dpkit.privacy.mechanisms.quantiles.bounds_on_grid`), the
candidate split points that learned bounds imply (:func:`zero_edge`, :func:`decade_points`:
post-processing of released bounds), and the window of the upper bound's reward
(:func:`reward_window`, of a noisy count). The mechanisms that spend and draw on these grids
are in :mod:`dpkit.privacy.mechanisms.quantiles`; docs/domain-reference.md describes both.
"""

from __future__ import annotations

import math

import numpy as np

#: mantissas of the nice grid (a Renard-like series: steps of 20–33 %)
MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)


#: decades of the nice grid: reals 10^-4 … 8·10^15, integers 1 … 8·10^15 (exact in a float)
REAL_DECADES = range(-4, 16)
INTEGER_DECADES = range(0, 16)


#: below 1 the reals' grid holds the powers of ten only (10^-4, …, 0.1): the bounds' prior
#: charges per grid step, so a range from 0 to x pays for every step between them; ten steps a
#: decade down to 10^-9 made [0, 400] cost ≈ 120 steps (e^-30), more than clipping every
#: non-zero record of a zero-heavy column (docs/domain-reference.md, "Zero-heavy and skewed columns"). It
#: stops at 10^-4 so that publish's grid inside the smallest bounds, [0, 10^-4], has steps ≥ 10^-6
FRACTION_MANTISSAS = (1.0,)


#: the smallest magnitude of a split point beside 0 (:func:`zero_edge`)
FLOOR = 1e-6


def nice_grid(integer: bool) -> np.ndarray:
    """The public grid of the bounds: 0 and ±m·10^e (m in :data:`MANTISSAS` for e ≥ 0, and
    in :data:`FRACTION_MANTISSAS` below: 10^-4 … 0.1; integer columns: the integers 1–9, then
    m·10^e for e ≥ 1), ascending. From 0 to x ≥ 1 it has 5 + ~10·log10(x) steps."""
    pos: set[float] = set()
    for e in INTEGER_DECADES if integer else REAL_DECADES:
        for m in MANTISSAS if e >= 0 else FRACTION_MANTISSAS:
            v = float(f"{m}e{e}")
            if integer and not v.is_integer():
                continue
            pos.add(v)
    if integer:
        pos.update(float(i) for i in range(1, 10))
    p = np.array(sorted(pos))
    return np.concatenate([-p[::-1], [0.0], p])


#: a split point beside a bound at 0 sits this many decades below the other bound's decade
ZERO_EDGE_DECADES = 3


def zero_edge(lo: float, hi: float, integer: bool) -> float | None:
    """The split point that separates 0 from the rest of [lo, hi] when a bound is 0, else None.

    A function of the public bounds only: 10^(⌊log10 |b|⌋ − 3) on the side of the other bound
    b (at least 1 for integer columns, :data:`FLOOR` for real ones), so [0, 600] gets 0.1 and [0, 100000] gets 100; None when
    it would not lie strictly inside (lo, hi). x < p goes left: [0, 0.1) holds the zeros and
    the non-zero values below 0.1. Offered to publish as a candidate (``points``), never forced.
    """
    if lo == 0.0 and hi > 0:
        sign, b = 1.0, hi
    elif hi == 0.0 and lo < 0:
        sign, b = -1.0, -lo
    else:
        return None
    e = math.floor(math.log10(b)) - ZERO_EDGE_DECADES
    p = float(f"1e{e}")
    p = max(1.0 if integer else FLOOR, p)  # never an edge a person would not write
    p *= sign
    return p if lo < p < hi else None


#: the mantissas of the log-spaced split points (:func:`decade_points`): the 1-2-5 series
DECADE_MANTISSAS = (1, 2, 5)


#: bounds whose magnitudes differ by this factor or more get :func:`decade_points`
DECADES_RATIO = float("inf")


def spans_decades(lo: float, hi: float) -> bool:
    """Do the bounds span :data:`DECADES_RATIO` or more in magnitude (always, when they hold 0)?
    A function of the public bounds: publish's linear grid then leaves the lower decades in
    its first cell."""
    if lo <= 0 <= hi:
        return True
    a, b = sorted((abs(lo), abs(hi)))
    return b >= DECADES_RATIO * a


#: publish's grid inside an interval holds every integer when there are at most this many
#: (:func:`dpkit.algorithms.publish.cut.grid_points` at publish's default ``grid``)
ALL_INTEGERS = 32


#: a side of the bounds gets its :func:`decade_points` only when it has at least this many
#: (a whole decade: 1, 2, 5, 10)
MIN_DECADE_POINTS = 4


def decade_points(lo: float, hi: float, integer: bool) -> tuple[float, ...]:
    """Log-spaced candidate split points inside learned bounds that hold 0 (lo ≤ 0 ≤ hi):
    ±m·10^k, m in :data:`DECADE_MANTISSAS`, from the :func:`zero_edge` point's decade (three
    below the bound's own) up to each side's bound, strictly inside (lo, hi), ascending; ()
    for bounds that do not hold 0, and for an integer column whose every integer is already a
    candidate (at most :data:`ALL_INTEGERS` of them).

    Only the points below publish's first linear step, (hi − lo)/32, are given, and only on a
    side that has a whole decade of them (:data:`MIN_DECADE_POINTS`): publish's grid
    inside an interval is linear (32 evenly spaced points, recomputed per interval), so on the bounds of a zero-heavy or skewed column — [0, 600] for an amount whose
    non-zero values are lognormal(3, 1), [0, 100000] for Adult's capital-gain — the first cells
    beside 0 hold most of the non-zero values, and a loose bound (only the prior places it
    past the data) makes them wider. These points let a split land in each decade between 0
    and the bound; publish's selection scores them beside its grid, nothing is forced. A
    function of the released bounds only (post-processing: nothing spent, the DP claim
    unchanged); ≥ 1 for integer columns and ≥ :data:`FLOOR` in magnitude (never an edge a
    person would not write). Measured (docs/domain-reference.md, "Zero-heavy and skewed columns"): on
    bounds not holding 0 (codes-id's [800, 8·10⁶] for a lognormal limit) they did not help.
    """
    if not lo <= 0 <= hi or (integer and math.ceil(hi) - math.floor(lo) - 1 <= ALL_INTEGERS):
        return ()
    out: set[float] = set()
    for sign, b in ((1.0, hi), (-1.0, -lo)):
        if b <= 0:
            continue
        top = math.floor(math.log10(b))
        for k in range(top - ZERO_EDGE_DECADES, top + 1):
            for m in DECADE_MANTISSAS:
                p = float(f"{m}e{k}")
                if p < (1.0 if integer else FLOOR) or p >= b:
                    continue
                out.add(sign * p)
    # only below publish's linear step: the grid holds the rest, and every extra candidate a
    # selection scores alike draws splits to its column (under report noisy max an age's
    # [0, 150] with 1, 2, 5, 10, 20, 50, 100 takes splits from the strongest column); and only a
    # side with a whole decade of them (1, 2, 5, 10): a code's [-2, 40] would gain ±1, ±2, which
    # cost utility (docs/decisions/0011-decade-points-below-step.md), where a zero-heavy
    # amount's [0, 600] needs 0.1…10
    step = (hi - lo) / ALL_INTEGERS
    keep: list[float] = []
    for sign in (-1.0, 1.0):
        side = [p for p in out if lo < p < hi and abs(p) < step and p * sign > 0]
        if len(side) >= MIN_DECADE_POINTS:
            keep += side
    return tuple(sorted(keep))


#: the upper bound's reward (:func:`~dpkit.privacy.mechanisms.quantiles.bounds_on_grid`'s ``reward``): it starts when the upper half-range
#: (hi/2, hi] holds this share of the column's noisy count ...
REWARD_START = 0.10


#: ... and is full when it holds this share: a column whose bulk reaches hi gets the whole reward
REWARD_FULL = 0.35


def reward_window(n_hat: int) -> tuple[int, int]:
    """(start, full) of the upper bound's reward for a column of ñ values (public: ñ is a noisy count)."""
    n = max(int(n_hat), 0)
    return int(math.floor(REWARD_START * n)), int(math.floor(REWARD_FULL * n))
