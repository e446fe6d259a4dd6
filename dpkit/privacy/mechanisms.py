"""The noise mechanisms; the only place in dpkit that turns private values into noisy ones.

Every public function here takes keyword-only ``epsilon``, ``rng`` (from
:func:`dpkit.privacy.rng.make_rng`), ``accountant`` and ``step``; it validates its arguments,
checks the budget *before* drawing, and records the spend in the accountant at the point
of noise (as diffprivlib's models do: a failed call spends nothing). Samplers prefixed
``sample_`` draw raw noise with no accounting and are only for use inside this package and
its tests.

Selection mechanisms take a utility vector and return the chosen index. ``monotone=True``
states that adding a record can only raise every utility (e.g. counts and MAXGDDP's Max
score); report-noisy-max and the exponential mechanism may then use half the noise
(McSherry & Talwar 2007, Thm 6; Dwork & Roth Claim 3.9).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact
from dpkit.privacy.accountant import Accountant, validate_epsilon

ArrayLike = Sequence[float] | np.ndarray


def _check(epsilon: float, sensitivity: float) -> tuple[float, float]:
    eps = validate_epsilon(epsilon)
    sens = float(sensitivity)
    if not math.isfinite(sens) or sens <= 0:
        raise DpkitUsageError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")
    return eps, sens


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


#: grid steps of a real-valued domain in exponential_interval (public resolution)
_INTERVAL_GRID = 2**32

#: the smallest ε/Δ of integer noise (below it the noise could overflow int64)
_MIN_NOISE_EPSILON = exact.MIN_EPSILON


def _noise_epsilon(epsilon: float | Fraction) -> float | Fraction:
    """Check the parameter of DLap noise (ε/Δ) before anything is spent or drawn."""
    exact.noise_fraction(epsilon)  # raises a usage error for ε <= 0, non-finite or too small
    return epsilon


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


def joint_discrete_gaussian(
    counts: Sequence[np.ndarray],
    *,
    sigma2: Fraction,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    mechanism: str,
) -> list[np.ndarray]:
    """Exact discrete Gaussian noise N_ℤ(0, σ²) on m count vectors released as one step.

    A record adds one to one cell of each vector, so the L2 sensitivity is √m and the release
    is ρ-zCDP with ρ = m/(2σ²) (Canonne, Kamath & Steinke 2020, Thm. 4); ``epsilon`` and
    ``delta`` are the caller's conversion of that ρ (:mod:`dpkit.privacy.concentrated`),
    recorded as they are under ``mechanism``. Spends once, before drawing; the vectors are
    noised in their order (:func:`dpkit.privacy.exact.discrete_gaussian`)."""
    accountant.spend(step, mechanism, epsilon, math.sqrt(len(counts)), delta=delta)
    return [c + exact.discrete_gaussian(rng, sigma2, int(c.size)) for c in counts]


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
    draws = sample_discrete_laplace(rng, noise_eps, len(scores)).tolist()
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
