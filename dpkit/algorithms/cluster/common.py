"""What the three clustering algorithms share: public bounds, noisy N, the noise scale.

Bounds are public (docs/algorithms.md §0 rule 1): they come from ``--bounds`` or the schema and
never from the data, unless the user asks for ``--allow-data-bounds``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, discrete_laplace


def check_bounds(lows: object, highs: object) -> tuple[np.ndarray, np.ndarray]:
    """``(lows, highs)`` as float arrays after checking they are finite with lo < hi."""
    lo = np.atleast_1d(np.asarray(lows, dtype=float))
    hi = np.atleast_1d(np.asarray(highs, dtype=float))
    if lo.shape != hi.shape or lo.ndim != 1 or lo.size == 0:
        raise DpkitUsageError("bounds need one lo:hi pair per column")
    for j, (a, b) in enumerate(zip(lo, hi, strict=True)):
        if not (math.isfinite(a) and math.isfinite(b)):
            raise DpkitUsageError(f"bounds of dimension {j + 1} must be finite, got {a:g}:{b:g}")
        if not a < b:
            raise DpkitUsageError(f"bounds of dimension {j + 1} need lo < hi, got {a:g}:{b:g}")
    return lo, hi


def check_k(k: object, name: str = "k") -> int:
    """``k`` as an int >= 1 (:func:`dpkit.validate.k`); ``name``: the parameter's, for the message."""
    from dpkit import validate

    return validate.k(k, name)


def check_points(points: object, lows: np.ndarray) -> np.ndarray:
    """Points as an ``(n, d)`` float array matching the bounds' d, finite."""
    x = np.asarray(points, dtype=float)
    if x.ndim != 2 or x.shape[1] != lows.size:
        raise DpkitUsageError(f"points must be an (n, {lows.size}) array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise DpkitUsageError("points must be finite numbers")
    return x


def points_frame(points: object, lows: np.ndarray, highs: np.ndarray, columns: object = None) -> tuple[Any, list[str]]:
    """The points as a frame (:mod:`dpkit.engine`) and the names of their columns.

    A frame is used as it is (its numeric columns were clipped to the bounds on load);
    an ``(n, d)`` array is checked (finite, d matching the bounds) and wrapped in the
    numpy engine, columns ``x1..xd``.
    """
    from dpkit.engine.frame import Frame

    if isinstance(points, Frame):
        names = list(columns) if columns is not None else points.column_names()  # type: ignore[call-overload]
        if len(names) != lows.size:
            raise DpkitUsageError(f"{len(names)} column(s) to cluster on but {lows.size} pair(s) of bounds")
        return points, names
    from dpkit.engine.numpy_frame import NumpyFrame
    from dpkit.io.table import EncodedTable
    from dpkit.schema.parse import NumericColumn, Schema

    x = check_points(points, lows)
    names = [f"x{j + 1}" for j in range(lows.size)]
    schema = Schema(columns={c: NumericColumn(c, float(lo), float(hi))
                             for c, lo, hi in zip(names, lows, highs, strict=True)}, path="<points>")
    table = EncodedTable(schema=schema, columns={c: x[:, j] for j, c in enumerate(names)}, n_rows=len(x),
                         source="<points>")
    return NumpyFrame(table), names


def laplace_sd(epsilon: float) -> float:
    """Standard deviation of DLap(ε): sqrt(2q)/(1 - q), q = e^-ε (≈ √2/ε for small ε)."""
    q = math.exp(-epsilon)
    return math.sqrt(2.0 * q) / (-math.expm1(-epsilon))


def noisy_size(
    n: int, *, epsilon: float, accountant: Accountant, rng: np.random.Generator, step: str = "noisy N"
) -> int:
    """N + DLap(ε), at least 1: the data size for the papers' size-based defaults."""
    return max(int(discrete_laplace(int(n), epsilon=epsilon, rng=rng, accountant=accountant, step=step)), 1)


def check_k_supported(k: int, n_hat: int, epsilon_n: float | None) -> None:
    """Refuse more clusters than the data can hold rows, right after N̂ is drawn.

    k-means with more centres than points has nothing to find, and ran for minutes
    (``-k 100000`` on 5,000 rows). Only public quantities decide: N̂ (ε_n-DP; a refusal
    needs k above N̂ + 3 sd of its noise, so that a small data set with a low draw is not
    refused wrongly) or the public ``--n-estimate`` (``epsilon_n`` None, checked before
    any noise). The message quotes N̂, never the exact size.
    """
    from dpkit.errors import DataError

    slack = 0 if epsilon_n is None else math.ceil(3 * laplace_sd(epsilon_n))
    if k <= n_hat + slack:
        return
    if epsilon_n is None:
        raise DataError(f"k={k} is more clusters than the n_estimate {n_hat} rows; use a smaller k")
    raise DataError(f"k={k} is more clusters than the data has rows (noisy size {n_hat} ± {slack}); "
                    "use a smaller k (the noisy size spent its share of ε)")


def data_bounds(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Min and max of every column — NOT private; only for ``--allow-data-bounds``.

    A constant column gets a width of 1 around its value so that lo < hi.
    """
    x = np.asarray(points, dtype=float)
    lo, hi = x.min(axis=0), x.max(axis=0)
    same = ~(lo < hi)
    lo = np.where(same, lo - 0.5, lo)
    hi = np.where(same, hi + 0.5, hi)
    return lo, hi


def parse_bounds(spec: object) -> tuple[list[float], list[float]]:
    """Bounds from "lo:hi,lo:hi" or [[lo, hi], ...] → (lows, highs)."""
    pairs: list[tuple[float, float]] = []
    if isinstance(spec, str):
        for part in spec.split(","):
            bits = part.split(":")
            if len(bits) != 2:
                raise DpkitUsageError(f"bounds must look like lo:hi,lo:hi — got {part!r}", param="bounds")
            try:
                pairs.append((float(bits[0]), float(bits[1])))
            except ValueError:
                raise DpkitUsageError(f"bounds must be numbers, got {part!r}", param="bounds") from None
    else:
        try:
            pairs = [(float(a), float(b)) for a, b in spec]  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise DpkitUsageError(f"bounds must be a list of [lo, hi] pairs, got {spec!r}", param="bounds") from None
    return [p[0] for p in pairs], [p[1] for p in pairs]
