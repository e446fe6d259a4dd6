"""The selection family: report-noisy-max, the exponential mechanism (on a finite set and on the
intervals of a grid) and permute-and-flip, each sampled exactly on integer scores (McSherry &
Talwar 2007; Dwork & Roth §3.3-3.4; McKenna & Sheldon 2020)."""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.mechanisms import (
    laplace,  # its samplers, looked up at call time (an audit patches them there)
)
from dpkit.privacy.mechanisms.base import (
    _INTERVAL_GRID,
    _MIN_NOISE_EPSILON,
    ArrayLike,
    _check,
    _gaps,
    _scaled_scores,
    _utilities,
)


def report_noisy_max(
    utilities: ArrayLike,
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    sensitivity: float = 1.0,
    monotone: bool = False,
    noise: str = "laplace",
    integer: bool = False,
) -> int:
    """Index of the largest ``utility + noise`` (report-noisy-max, Dwork & Roth §3.3).

    Guarantee: ε-DP with δ = 0 for neighbouring data sets whose utility vectors differ by at
    most ``sensitivity`` Δ in every coordinate (with ``monotone=True``: and move the same way
    — adding a record never lowers a utility), provided, when ``integer=True``, that the
    utilities are integers on every data set. Nothing else is assumed: the scale of the
    scores is fixed by Δ and ``integer`` alone (:func:`_scaled_scores`), never by the data.

    Exact: the scores are integers s (declared-integer utilities as they are,
    real ones rounded to the fixed grid 1/G, G = 2^(10 − ⌊log₂ Δ⌋), at sensitivity
    Δ' = ⌈ΔG⌉ + 1), the noise is exact discrete Laplace DLap(ε/(kΔ')) (k = 1 for monotone
    utilities, MAXGDDP Thm 1; 2 in general) and ties are broken uniformly at random. That is
    report-noisy-max with the continuous noise Z + V, Z ~ DLap, V ~ U[0, 1) (ties of Z are
    decided by the V's, i.e. uniformly), whose density ∝ e^{-ε|⌊z⌋|/(kΔ')} changes by at most
    e^{ε/k} under an integer shift of Δ' — all the Dwork & Roth Claim 3.9 proof uses. The
    rounding costs noise (Δ'/(ΔG) ≤ 1 + 2^-10), not ε. ``noise="exponential"`` (one-sided
    Exp noise) is equivalent in distribution to :func:`permute_and_flip` (Ding et al. 2021)
    and is sampled as that mechanism, exactly on the utilities' rationals — as is Laplace
    noise too wide for 64-bit integers (ε/(kΔ') < 1e-17, a choice all but uniform; same ε; a
    test of Δ' and ε only, so the path taken does not depend on the data either).
    """
    eps, sens = _check(epsilon, sensitivity)
    u = _utilities(utilities)
    if noise not in ("laplace", "exponential"):
        raise DpkitUsageError(f"noise must be 'laplace' or 'exponential', got {noise!r}")
    scores, sens_int = _scaled_scores(u, sens, integer)
    noise_eps = Fraction(eps) / (sens_int * (1 if monotone else 2))
    if noise == "exponential" or noise_eps < Fraction(_MIN_NOISE_EPSILON):
        # one-sided Exp noise is permute-and-flip; so is a Laplace scale beyond 64-bit integer
        # noise (ε/Δ < 1e-17: the choice is all but uniform) — the same ε, exactly, any ε
        factor = Fraction(eps) / (Fraction(sens) * (1 if monotone else 2))
        accountant.spend(step, f"report-noisy-max ({noise})", eps, sens)
        return _permute_and_flip_exact(rng, _gaps(u, factor))
    # spend (which checks the budget) before drawing: a refused call draws nothing
    accountant.spend(step, f"report-noisy-max ({noise})", eps, sens)
    draws = laplace.sample_discrete_laplace(rng, noise_eps, len(scores)).tolist()
    noisy = [s + z for s, z in zip(scores, draws, strict=True)]
    top = max(noisy)
    ties = [i for i, v in enumerate(noisy) if v == top]
    return ties[exact.uniform_below(rng, len(ties))] if len(ties) > 1 else ties[0]


def _exponential_exact(rng: np.random.Generator, gaps: list[Fraction], measure: list[int]) -> int:
    """Index i with probability ∝ measure_i · e^{-gaps_i}, exactly.

    Rejection sampling: propose i with probability measure_i / Σ measure (an exact uniform
    integer), accept with an exact Bernoulli(e^{-gap_i}) coin (CKS 2020 Alg. 1). The accepted
    index has exactly the target law — every candidate of positive measure keeps a positive
    probability, however far it trails. The expected number of proposals is
    Σ μ / Σ μ·e^{-gap} ≤ Σ μ / μ(best), which depends on the data: a timing channel, outside
    the output-only model of docs/ledger.md.
    """
    cum: list[int] = []
    total = 0
    for m in measure:
        total += m
        cum.append(total)
    while True:
        r = exact.uniform_below(rng, total)
        i = bisect.bisect_right(cum, r)
        if exact.bernoulli_exp(rng, gaps[i]):
            return i


def exponential(
    utilities: ArrayLike,
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    sensitivity: float = 1.0,
    monotone: bool = False,
    log_base_measure: ArrayLike | None = None,
) -> int:
    """The exponential mechanism, P(i) ∝ μ_i · exp(ε·u_i / (2Δ)) (McSherry & Talwar 2007).

    Sampled exactly: rejection from μ with exact Bernoulli(e^{-ε(u*−u_i)/2Δ}) coins
    (Canonne, Kamath & Steinke 2020, Alg. 1) on the exact rationals of the float utilities —
    no float exp() underflow, so pure ε with no δ. ``monotone`` uses exp(ε·u/Δ).
    ``log_base_measure`` is log μ (−inf for measure 0); μ = exp(log μ) is taken as the exact
    rational of that float (for lengths, :func:`exponential_interval` passes integers).
    """
    eps, sens = _check(epsilon, sensitivity)
    u = _utilities(utilities)
    measure = [1] * u.size
    if log_base_measure is not None:
        mu = np.asarray(log_base_measure, dtype=float)
        if mu.shape != u.shape:
            raise DpkitUsageError("log_base_measure must have the shape of utilities")
        if np.any(np.isnan(mu)) or np.any(mu == np.inf):
            raise DpkitUsageError("log_base_measure must be finite or -inf (measure 0)")
        with np.errstate(over="ignore"):
            w = np.exp(mu)
        if not np.all(np.isfinite(w)):
            raise DpkitUsageError("log_base_measure is too large")
        fr = [Fraction(float(v)) for v in w]
        d = 1
        for f in fr:
            d = math.lcm(d, f.denominator)
        measure = [int(f * d) for f in fr]
    return _exponential_measure(u, measure, eps, sens, monotone, rng, accountant, step)


def _exponential_measure(u: np.ndarray, measure: list[int], eps: float, sens: float, monotone: bool,
                         rng: np.random.Generator, accountant: Accountant, step: str) -> int:
    """:func:`exponential` with integer base measures (checked, then spent, then drawn)."""
    positive = np.array([m > 0 for m in measure])
    if not positive.any():
        raise DpkitUsageError("the exponential mechanism needs at least one candidate of positive measure")
    factor = Fraction(eps) / (Fraction(sens) * (1 if monotone else 2))
    gaps = _gaps(u, factor, positive)
    accountant.spend(step, "exponential (exact)", eps, sens)
    return _exponential_exact(rng, gaps, measure)


def exponential_interval(
    edges: ArrayLike,
    utilities: ArrayLike,
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    sensitivity: float = 1.0,
    monotone: bool = False,
    integer: bool = False,
) -> float:
    """A point of a numeric domain by the continuous exponential mechanism.

    ``edges`` (sorted, length m+1) cut the public domain into m intervals on which the
    utility of a split point is constant (``utilities``, length m) — e.g. between
    consecutive distinct data values. Interval i is chosen with probability
    ∝ length_i · exp(ε·u_i / 2Δ), then a point uniformly inside it (DiffGen; DiffPRFs §3).
    Empty intervals have measure 0 and are never chosen. With ``integer=True`` the measure
    of an interval is the number of integers in [lo, hi) and an integer point is returned.

    The first and last edges must be public (the domain's bounds); inner edges may be data
    values. Real-valued points are drawn on the public grid lo + j·(hi − lo)/2³² rather than
    as ``e_i + U·(e_i+1 − e_i)``: which doubles that formula can produce depends on the data
    edges themselves, so a released float would reveal them (the same class of
    leak as Mironov 2012). On the grid, the measure of an interval is its number of
    grid points and the output ``lo + j·r`` is a function of j alone; grid point j belongs
    to the interval whose utility is that of the partition {v : (v − lo)/r ≤ j}, a fixed
    predicate per point, so the sensitivity of the utilities is unchanged.
    """
    e = np.asarray(edges, dtype=float)
    u = _utilities(utilities)
    if e.ndim != 1 or e.size != u.size + 1 or np.any(np.diff(e) < 0) or not np.all(np.isfinite(e)):
        raise DpkitUsageError("edges must be sorted, finite, and one longer than utilities")
    lo_pub, resolution = 0.0, 1.0
    if not integer:
        lo_pub, hi_pub = float(e[0]), float(e[-1])
        if not hi_pub > lo_pub:
            raise DpkitUsageError("the public domain of exponential_interval needs lo < hi")
        resolution = (hi_pub - lo_pub) / _INTERVAL_GRID
        e = (e - lo_pub) / resolution  # monotone in e: the order of the edges is kept
        e[0], e[-1] = 0.0, float(_INTERVAL_GRID)
    lengths = np.ceil(e[1:]) - np.ceil(e[:-1])
    eps, sens = _check(epsilon, sensitivity)
    # integer measures (numbers of grid points) go to the exact sampler as they are
    i = _exponential_measure(u, [int(x) for x in lengths], eps, sens, monotone, rng, accountant, step)
    j = int(rng.integers(int(math.ceil(e[i])), int(math.ceil(e[i + 1]))))
    if integer:
        return float(j)
    return lo_pub + j * resolution


def permute_and_flip(
    utilities: ArrayLike,
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    sensitivity: float = 1.0,
    monotone: bool = False,
) -> int:
    """Permute-and-flip (McKenna & Sheldon 2020): never worse than the exponential mechanism.

    Visit candidates in random order; accept r with probability exp(ε(u_r − u*)/(2Δ))
    (ε/Δ when monotone), u* the maximum utility. The best candidate is accepted surely, so
    the loop ends within one pass. The coins are exact Bernoulli(e^{-x}) draws on the exact
    rationals x (Canonne, Kamath & Steinke 2020, Alg. 1): a float exp() would underflow to 0
    for a candidate trailing by more than ~745·2Δ/ε and a 53-bit coin could never accept
    below 2⁻⁵³ — here every candidate keeps its exact probability: pure ε, no δ.
    """
    eps, sens = _check(epsilon, sensitivity)
    u = _utilities(utilities)
    factor = Fraction(eps) / (Fraction(sens) * (1 if monotone else 2))
    gaps = _gaps(u, factor)
    accountant.spend(step, "permute-and-flip", eps, sens)
    return _permute_and_flip_exact(rng, gaps)


def _permute_and_flip_exact(rng: np.random.Generator, gaps: list[Fraction]) -> int:
    """Visit a uniform permutation (exact: numpy's bounded integers are rejection-sampled) and
    accept candidate r with an exact Bernoulli(e^{-gaps_r}) coin; gap 0 (the best) always is."""
    for r in rng.permutation(len(gaps)).tolist():
        if exact.bernoulli_exp(rng, gaps[r]):
            return int(r)
    raise AssertionError("unreachable: the best candidate has gap 0")  # pragma: no cover
