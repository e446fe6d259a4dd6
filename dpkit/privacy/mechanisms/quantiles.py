"""DP quantiles over a public, very wide grid: bounds and split points of a numeric column.

Everything here is the exponential mechanism (McSherry & Talwar 2007) on a *public* finite
grid, with integer utilities built from exact rank counts, sampled **exactly**
(:func:`sample_pieces`). The grid is wide — every "nice" number ±m·10^e from 1 (integer
columns: the integers from 1; real ones: also 10⁻⁴, 10⁻³, 0.01, 0.1 below) to ~10¹⁶ — because nothing about the column's range is known in advance; the
mechanisms below are built so that the width costs (almost) nothing:

1. :func:`bounds_on_grid` — both bounds at once: a pair lo < hi of the nice grid, utility
   −#{x < lo} − #{x > hi} (sensitivity 1: a record cannot lie below lo and above hi; monotone:
   adding a record can only lower every utility, so exp(ε·u) suffices — McSherry & Talwar
   Thm 6; Dwork & Roth §3.4), with a public prior e^{−γ·(j − i)} on the pair's width in grid
   steps. All pairs that clip nothing tie; without the prior the wide grid would make
   [−10¹⁶, 10¹⁶] as likely as [15, 100]; with it their total mass is ≤ 1/(1 − e^{−γ})² times the
   tightest pair's, so the bounds are the round numbers around the data or a step or two looser,
   and a sparse tail is clipped only where fewer than ~γ/ε records lie per grid step. Pairs far
   from the data clip all n records: mass ~|G|²·e^{−εn}, negligible once εn ≫ 2 ln|G| ≈ 12.
   The prior is folded into the integer scores as g = ⌈γ/(s/t)⌉ per step (γ' = g·s/t ≥ γ).
   Two more public terms on lo alone (:data:`ZERO_BONUS`, :data:`NEGATIVE_LOWER`) favour 0 as
   the lower bound of a count or an amount and charge a negative one; with the grid's powers
   of ten below 1 they let a zero-heavy column's bounds cover its non-zero values.
2. :func:`split_tree` — split points by recursive medians inside [lo, hi] on a fine public
   grid (the integers, or lo + j·step with a "nice" step, ≤ 2²⁰ points): the root's median,
   then the median of each half, …, to ``levels`` levels (Kaplan, Schnapp & Stemmer,
   "Differentially private approximate quantiles", ICML 2022). The nodes of a level hold
   disjoint records, so one level costs its ε once (parallel composition, McSherry 2009);
   each search is confined to its node's public interval, so only step 1 ever pays for the
   wide grid. Utility −|L − R| inside the node (sensitivity 1), exp(ε·u/2).

Why not JointExp (Gillenwater, Joseph & Kulesza, ICML 2021)? It samples all m quantiles at
once from one exponential mechanism (sensitivity 2) and is the best choice for many quantiles
of one data set on a *given* range; here (i) the range itself must be found first, on a grid
whose width JointExp would pay for once per quantile (log-measure of the m-simplex), (ii) the
tree publish uses is a binary hierarchy whose nodes *are* recursive medians, and (iii) the
recursive scheme needs one O(K) pass per node, where JointExp's sampler is an O(mK) dynamic
programme with ordering corrections that is much harder to sample exactly. Kaplan et al.
measure the recursive scheme equal to or better than JointExp for m ≥ ~8 quantiles.

**Error bound** (tested in tests/privacy/test_quantiles.py): the exponential mechanism over a
finite grid G returns, with probability ≥ 1 − e^{−t}, a point whose utility is within
(2Δ/ε)·(ln|G| + t) of the best (Dwork & Roth Thm 3.11; Δ/ε for a monotone utility), i.e. a
rank error |L − R| ≤ OPT + (2/ε)(ln|G| + t) for the medians, and a clipped count (plus the
prior's γ'·width) within (1/ε)(ln(|G|²/2) + t) of the best for the bounds.

**Exact sampling.** P(i) ∝ ℓ_i·e^{(s/t)·(score_i − max)} with integer lengths ℓ_i (grid points
in piece i) and integer scores; s/t ≤ ε/(2Δ) is :func:`~dpkit.privacy.exact.noise_fraction`'s
fraction (rounded down: only ever more noise). The piece is found by inverting a lazily refined
uniform U, as :mod:`dpkit.privacy.exact` does for the geometric: floats decide when U·S lies
farther than a proven error margin from every cumulative boundary, otherwise more random bits
and correctly rounded ``decimal`` arithmetic at rising precision decide. The point inside the
piece is a uniform integer (``Generator.integers``: rejection sampling, exact). No Gumbel or
float-uniform draw is involved, so no output is impossible for one data set and possible for
its neighbour.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact
from dpkit.privacy.accountant import Accountant, validate_epsilon

#: the fine grid of split points has at most this many steps
FINE_STEPS = 2**20
#: γ of the bounds' prior (nats per grid step): one step looser is worth ~γ/ε clipped records
#: (chosen among 0.125, 0.25 and 0.5 on Adult and breast-cancer, docs/domain.md)
BOUND_PRIOR = 0.25
#: the prior's weight, in nats, on 0 as the lower bound: 0 is the bound a person writes for a
#: count or an amount. Without it a zero-heavy column's lower bound follows the geometric law
#: below 0 onto −10⁻⁴, −10⁻³, … (P(lo = 0) = 1 − e^{−γ} ≈ 22 %); with 3 nats P(lo = 0) ≈ 85 %
#: there, while a column whose values start at 15 takes lo = 0 with probability ≈ 20 % (13
#: integer steps below its data cost 3.25 nats). Not the upper bound: a column whose few
#: positive values are clipped (too few for their range, e.g. a capital gain in an 8k-row
#: table) keeps them apart from its zeros at hi = 1 or 2, and merges them at hi = 0
ZERO_BONUS = 3.0
#: the prior's extra cost, in nats, of a lower bound below 0. Most columns of a table are never
#: negative (counts, amounts, ages, durations), and a negative lower bound claims the column has
#: negative values: without it a count's lower bound wanders onto −2, −7 (P(lo < 0) ≈ 15 % with
#: the bonus above), an age's onto −25. A column that has negative values pays it once, beside
#: clipping them all (the codes −2..8 of a 12k-row table: ≈ 30 nats)
NEGATIVE_LOWER = 3.0


# --------------------------------------------------------------------------- the exact sampler


_TWO_M64 = 2.0**-64


def sample_pieces(rng: np.random.Generator, lengths: np.ndarray, scores: np.ndarray, s: int, t: int) -> int:
    """Index i drawn exactly with P(i) ∝ lengths[i]·exp((s/t)·(scores[i] − max score)).

    ``lengths``: integers ≥ 0 (< 2^62; a piece of length 0 is never drawn), ``scores``:
    integers (|score| < 2^53). Raw-sampler: no accounting (module docstring).
    """
    ln = np.asarray(lengths, dtype=np.int64)
    sc = np.asarray(scores, dtype=np.int64)
    pos = ln > 0
    if ln.ndim != 1 or ln.shape != sc.shape or not pos.any():
        raise DpkitUsageError("sample_pieces needs matching 1-D lengths and scores, some length > 0")
    top = int(sc[pos].max())
    gap = (top - sc).astype(np.float64)  # ≥ 0 on the pieces that count; exact below 2^53
    c = s / t
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        logw = np.where(pos, np.log(np.where(pos, ln, 1).astype(np.float64)) - c * gap, -np.inf)
        p = np.exp(logw - float(logw.max()))
    cum = np.cumsum(p)
    k = int(ln.size)
    # float error of every boundary, relative to the total (≥ 1: the largest term is e^0):
    # exponents ≤ ~250 in magnitude where a term is not negligible (2^-60 S), each carried with
    # relative error < 10⁻¹³; negligible terms are off by < 2^-59 each; the cumulative sum
    # adds ≤ k·2^-53 — all inside 1e-11 + k·2^-50, doubled: the total is a boundary too
    margin = float(cum[-1]) * (2e-11 + k * 2.0**-49)
    lengths_, gaps = [int(x) for x in ln], [top - int(x) for x in sc]

    def exact_cum(ctx_a: decimal.Decimal) -> list[decimal.Decimal]:
        cache: dict[int, decimal.Decimal] = {}
        out, acc = [], decimal.Decimal(0)
        for length, g in zip(lengths_, gaps, strict=True):
            if length > 0:
                e = cache.get(g)
                if e is None:
                    e = cache[g] = (-(ctx_a * g)).exp()
                acc = acc + length * e
            out.append(acc)
        return out

    return _invert(rng, cum, margin, pos, exact_cum, s, t)


def sample_pairs(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, s: int, t: int) -> tuple[int, int]:
    """(i, j), i < j, drawn exactly with P ∝ exp((s/t)·(a[i] + b[j])) (integer a, b; len ≥ 2).

    The weight is separable, so i is drawn from its marginal e^{c·a_i}·Σ_{j>i} e^{c·b_j} (one
    pass: suffix sums, in log space) and then j > i from e^{c·b_j}: O(len) where the |G|²/2
    pairs would each need a term. Both draws are exact (the inversion of :func:`_invert`).
    """
    av = np.asarray(a, dtype=np.int64)
    bv = np.asarray(b, dtype=np.int64)
    n = int(av.size)
    if av.ndim != 1 or av.shape != bv.shape or n < 2:
        raise DpkitUsageError("sample_pairs needs two matching 1-D score vectors of length >= 2")
    c = s / t
    amax, bmax = int(av.max()), int(bv.max())
    with np.errstate(under="ignore"):
        la = -c * (amax - av).astype(np.float64)
        lb = -c * (bmax - bv).astype(np.float64)
        # log Σ_{j>i} e^{lb_j}: the reversed running log-sum-exp (relative error ≤ n·2^-52)
        suffix = np.full(n, -np.inf)
        suffix[:-1] = np.logaddexp.accumulate(lb[::-1])[::-1][1:]
        logw = la + suffix
        p = np.exp(logw - float(logw[:-1].max()))
    cum = np.cumsum(p)
    # each marginal weight: ≤ 3 exponentials' error (< 10⁻¹³ each where not negligible) and
    # the log-sum-exp's n·2^-52; the cumulative sum n·2^-53
    margin = float(cum[-1]) * (2e-11 + 4 * n * 2.0**-49)
    pos = np.ones(n, dtype=bool)
    pos[-1] = False  # the last index has no j > i
    ga = [amax - int(x) for x in av]
    gb = [bmax - int(x) for x in bv]

    def exact_cum(ctx_a: decimal.Decimal) -> list[decimal.Decimal]:
        ea = [(-(ctx_a * g)).exp() for g in ga]
        eb = [(-(ctx_a * g)).exp() for g in gb]
        suf, acc = [decimal.Decimal(0)] * n, decimal.Decimal(0)
        for j in range(n - 1, 0, -1):
            acc = acc + eb[j]
            suf[j - 1] = acc
        out, tot = [], decimal.Decimal(0)
        for i in range(n):
            tot = tot + ea[i] * suf[i]
            out.append(tot)
        return out

    i = _invert(rng, cum, margin, pos, exact_cum, s, t, terms=3 * n)
    j = i + 1 + sample_pieces(rng, np.ones(n - i - 1, dtype=np.int64), bv[i + 1:], s, t)
    return i, j


def _invert(rng: np.random.Generator, cum: np.ndarray, margin: float, positive: np.ndarray,
            exact_cum: object, s: int, t: int, terms: int | None = None) -> int:
    """The index i with C_{i−1} ≤ U·C_last < C_i for an exactly uniform U, C the cumulative weights.

    ``cum``: float cumulative weights, each within ``margin`` of the truth (up to a common
    factor); ``exact_cum(a)``: the same in ``decimal`` at the context's precision (a = s/t),
    each operation correctly rounded; ``positive``: which indices have weight > 0. Floats decide
    when U's 64 bits put U·C_last farther than the margin from every boundary; otherwise U is
    refined 64 bits at a time and the decimals' precision raised until one index is certain.
    """
    k = int(cum.size)
    total = float(cum[-1])
    w = int(rng.bit_generator.random_raw())
    t_lo = w * _TWO_M64 * total * (1 - 2.0**-50)
    t_hi = (w + 1) * _TWO_M64 * total * (1 + 2.0**-50)
    j = int(np.searchsorted(cum, t_lo, side="right"))
    if j < k:
        left = float(cum[j - 1]) + margin if j > 0 else 0.0
        if t_lo >= left and t_hi <= float(cum[j]) - margin and positive[j]:
            return j
    nbits, prec = 64, 80
    n_terms = terms if terms is not None else k
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = prec
            ctx.Emin = decimal.MIN_EMIN
            ctx.Emax = decimal.MAX_EMAX
            d = decimal.Decimal
            exact = exact_cum(d(s) / d(t))  # type: ignore[operator]
            tot = exact[-1]
            # each operation errs by a relative 10^{1−prec}; a term e^{−x} whose argument is
            # large errs by x·e^{−x}·ℓ·10^{1−prec} absolutely, negligible against the largest
            # term: (terms + 4)·10^{22−prec}·total covers lengths·x up to 10^20
            tol = tot * (n_terms + 4) * d(10) ** (22 - prec)
            scale = d(2) ** nbits
            # U·S lies in [lo + tol, hi − tol]; every true boundary within tol of exact[i]
            lo = d(w) / scale * tot - 2 * tol
            hi = d(w + 1) / scale * tot + 2 * tol
            i = _bisect(exact, lo)
            if i == _bisect(exact, hi) and i < k and positive[i]:
                return i
        w = (w << 64) | int(rng.bit_generator.random_raw())
        nbits += 64
        prec += 25


def _decide_pieces(rng: np.random.Generator, w: int, ln: np.ndarray, sc: np.ndarray, top: int, s: int, t: int) -> int:
    """:func:`sample_pieces` forced onto its exact path with the 64 bits ``w`` already drawn
    (for tests of the decimal path's distribution)."""

    class _First:
        def __init__(self) -> None:
            self.bit_generator = self
            self.first = True

        def random_raw(self) -> int:
            if self.first:
                self.first = False
                return w
            return int(rng.bit_generator.random_raw())

    pos = np.asarray(ln) > 0
    # a float path that never decides (an infinite margin) leaves only the exact one
    gaps = [top - int(x) for x in sc]
    lengths_ = [int(x) for x in ln]

    def exact_cum(ctx_a: decimal.Decimal) -> list[decimal.Decimal]:
        out, acc = [], decimal.Decimal(0)
        for length, g in zip(lengths_, gaps, strict=True):
            if length > 0:
                acc = acc + length * (-(ctx_a * g)).exp()
            out.append(acc)
        return out

    return _invert(_First(), np.cumsum(pos.astype(float)), float("inf"), pos, exact_cum, s, t)  # type: ignore[arg-type]


def _bisect(cum: list, x: object) -> int:
    """The first index with cum[i] > x (len(cum) if none)."""
    lo, hi = 0, len(cum)
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] > x:  # type: ignore[operator]
            hi = mid
        else:
            lo = mid + 1
    return lo


def _fraction(epsilon: float, divisor: int) -> tuple[int, int]:
    """s/t ≤ ε/divisor, exactly (never rounded up)."""
    return exact.noise_fraction(Fraction(epsilon) / divisor if divisor != 1 else epsilon)


def exponential_pieces(
    lengths: np.ndarray,
    scores: np.ndarray,
    *,
    epsilon: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    sensitivity: int = 1,
    monotone: bool = False,
    mechanism: str = "exponential (exact)",
) -> tuple[int, int]:
    """The exponential mechanism over pieces of a public grid, sampled exactly.

    Piece i holds ``lengths[i]`` grid points, all with the integer utility ``scores[i]``
    (sensitivity ``sensitivity``, an integer). P(point) ∝ exp(ε·u/(2Δ)), or exp(ε·u/Δ) when
    ``monotone``. Returns (piece, offset of the point inside it). Spends ``epsilon``.
    """
    eps = validate_epsilon(epsilon)
    if int(sensitivity) != sensitivity or sensitivity < 1:
        raise DpkitUsageError(f"sensitivity must be a positive integer, got {sensitivity!r}")
    s, t = _fraction(eps, int(sensitivity) * (1 if monotone else 2))
    accountant.spend(step, mechanism, eps, float(sensitivity))
    i = sample_pieces(rng, lengths, scores, s, t)
    length = int(np.asarray(lengths)[i])
    return i, int(rng.integers(0, length)) if length > 1 else 0


# --------------------------------------------------------------------------- grids


def nice_step(span: float, steps: int, integer: bool) -> float:
    """The smallest 1, 2 or 5 × 10^k (≥ 1 for integer columns) with span/step ≤ ``steps``."""
    if integer and span <= steps:
        return 1.0
    raw = span / steps
    k = math.floor(math.log10(raw))
    for exp_ in (k, k + 1):
        for mult in (1, 2, 5):
            st = float(f"{mult}e{exp_}")
            if st >= raw and (not integer or st.is_integer()):
                return st
    return float(f"1e{k + 2}")  # pragma: no cover - the loop always finds one


def grid_value(lo: float, step: float, j: int) -> float:
    """lo + j·step as the shortest decimal (a function of the public j only)."""
    return float(decimal.Decimal(repr(lo)) + j * decimal.Decimal(repr(step)))


# --------------------------------------------------------------------------- profiles


@dataclass(frozen=True)
class Profile:
    """A numeric column as its sorted distinct values and their counts (exact, private)."""

    values: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, counts: np.ndarray | None = None) -> Profile:
        v = np.asarray(values, dtype=np.float64)
        if counts is None:
            v, c = np.unique(v, return_counts=True)
        else:
            c = np.asarray(counts, dtype=np.int64)
            order = np.argsort(v, kind="stable")
            v, c = v[order], c[order]
        if v.size and not np.all(np.isfinite(v)):
            raise DpkitUsageError("a numeric profile needs finite values")
        return cls(v, c.astype(np.int64))

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    def below(self, points: np.ndarray) -> np.ndarray:
        """#{x < p} for each point."""
        cum = np.concatenate([[0], np.cumsum(self.counts)])
        return cum[np.searchsorted(self.values, points, side="left")]

    def at_most(self, points: np.ndarray) -> np.ndarray:
        """#{x ≤ p} for each point."""
        cum = np.concatenate([[0], np.cumsum(self.counts)])
        return cum[np.searchsorted(self.values, points, side="right")]


# --------------------------------------------------------------------------- mechanisms


def _prior_steps(epsilon: float, gamma: float) -> int:
    """g with g·s/t ≥ γ, s/t the exact fraction the monotone mechanism uses for ``epsilon``."""
    s, t = exact.noise_fraction(epsilon)
    return max(1, math.ceil(Fraction(gamma) * t / s))


def _units(nats: float, s: int, t: int) -> int:
    """⌊nats/(s/t)⌋: a prior weight of ``nats`` as integer score units of exp((s/t)·score)."""
    return int(math.floor(Fraction(nats) * t / s))


def bounds_on_grid(
    profile: Profile, grid: np.ndarray, *, epsilon: float, rng: np.random.Generator,
    accountant: Accountant, step: str, gamma: float = BOUND_PRIOR, zero_bonus: float = 0.0,
    negative_lower: float = 0.0, point_bonus: np.ndarray | None = None,
    reward: tuple[int, int] | None = None, below_top: bool = False, gamma_upper: float | None = None,
) -> tuple[float, float]:
    """Both bounds at once: a pair lo < hi of the public ``grid`` by one exponential mechanism.

    Utility −#{x < lo} − #{x > hi}: adding a record changes at most one term by one (it cannot
    lie below lo and above hi), so the sensitivity is 1, and the utility is monotone, so
    exp(ε·u) suffices (McSherry & Talwar Thm 6). A public prior e^{−γ·(j − i)} on the pair's
    width in grid steps breaks the ties between the pairs that clip nothing: their total mass
    is ≤ 1/(1 − e^{−γ})² times the tightest one's, so the bounds are the round numbers around
    the data or a step or two looser, and a tail is clipped only where fewer than ~γ/ε records
    lie per grid step. Pairs far from the data clip all n records: their mass is ~|G|·e^{−εn},
    so the pair lands around the data once εn ≫ ln|G| — a sixth of the ε·n the median-then-
    bounds scheme needed (one mechanism instead of three, and monotone).

    ``zero_bonus`` (nats, ≥ 0): the prior's extra weight e^{bonus} on lo = 0
    (:data:`ZERO_BONUS`); ``negative_lower`` (nats, ≥ 0): its extra cost e^{−cost} on every
    lo < 0 (:data:`NEGATIVE_LOWER`). Both are public and the same for every data set: a prior,
    so the mechanism's privacy is unchanged (the weight is still separable, and exact: folded
    into the integer scores as ⌊nats/(s/t)⌋ score units). ``point_bonus`` (nats ≥ 0, one per
    grid point, public): the prior's extra weight on a point as either bound (a calendar grid's
    quarter and year starts, :func:`dpkit.schema.dates.refine_grid`).

    ``reward`` = (r₀, r₁), public (:func:`reward_window` of a noisy count): the utility gains
    clamp(#{hi/2 < x ≤ hi} − r₀, 0, r₁ − r₀). Past the data every pair clips nothing and only
    the prior places hi — a few steps loose in most runs, a decade now and then (a credit
    score's [400, 5000]); with the reward an hi whose upper half-range holds the bulk's top
    outweighs one past it (factor 2 or more above the data: nothing in (hi/2, hi]), so hi lands
    within a factor 2 of the data's top when that half-range holds more than r₀ records. The
    start r₀ keeps it from pulling hi into the bulk of a skewed column (the non-zero values of a
    zero-heavy amount: no octave holds a tenth of the column). Adding a record changes one of
    #{x < lo}, #{x > hi}, #{hi/2 < x ≤ hi} by one (a record above hi is not in the half-range),
    so the sensitivity stays 1, but the utility is no longer monotone: exp(ε·u/2)
    (McSherry & Talwar 2007, Thm 6 needs monotonicity for the factor 1). The weight is still
    separable (the reward is a term of hi alone) and exact.

    ``below_top`` (an integer column): a value equal to hi counts as clipped (and the reward's
    half-range is [hi/2, hi)), so hi lands past the largest value: publish splits an integer
    column at whole numbers strictly inside its bounds (x < p | x ≥ p), and with hi at the largest
    value that value could not be told from the one below it ([0, 1] cannot separate a flag's 0
    from its 1). The utility stays monotone with sensitivity 1 (a record cannot lie below lo and
    at or above hi; nor at or above hi and in [hi/2, hi)).
    """
    g = np.asarray(grid, dtype=np.float64)
    below = profile.below(g)
    above = profile.n - (profile.below(g) if below_top else profile.at_most(g))
    idx = np.arange(g.size, dtype=np.int64)
    eps = validate_epsilon(epsilon)
    s, t = _fraction(eps, 1 if reward is None else 2)  # monotone: exp(ε·u); with the reward exp(ε·u/2)
    k = max(1, math.ceil(Fraction(gamma) * t / s))
    k_hi = k if gamma_upper is None else max(1, math.ceil(Fraction(gamma_upper) * t / s))
    for name, v in (("zero_bonus", zero_bonus), ("negative_lower", negative_lower)):
        if not (math.isfinite(v) and v >= 0):
            raise DpkitUsageError(f"{name} must be a finite number >= 0, got {v!r}")
    accountant.spend(step, "exponential (exact, monotone), bounds on the nice grid" if reward is None else
                     "exponential (exact), bounds on the nice grid with a reward for the bulk below the upper bound",
                     eps, 1.0)
    # score(i, j) = −below_i − above_j − k·(j − i) = (−below_i + k·i) + (−above_j − k·j)
    a, b = -below + k * idx, -above - k_hi * idx
    if reward is not None:
        r0, r1 = (int(x) for x in reward)
        if not 0 <= r0 <= r1:
            raise DpkitUsageError(f"reward must be 0 <= start <= full, got {reward!r}")
        half = np.where(g > 0, profile.below(g) - profile.below(g / 2) if below_top else
                        profile.at_most(g) - profile.at_most(g / 2), 0)
        b = b + np.clip(half - r0, 0, r1 - r0)
    a = a + _units(zero_bonus, s, t) * (g == 0.0) - _units(negative_lower, s, t) * (g < 0.0)
    if point_bonus is not None:
        pb = np.asarray(point_bonus, dtype=np.float64)
        if pb.shape != g.shape or not (np.all(np.isfinite(pb)) and np.all(pb >= 0)):
            raise DpkitUsageError("point_bonus must be one finite number >= 0 per grid point")
        units = np.array([_units(float(x), s, t) for x in pb], dtype=np.int64)
        a, b = a + units, b + units
    i, j = sample_pairs(rng, a, b, s, t)
    return float(g[i]), float(g[j])


@dataclass(frozen=True)
class SplitNode:
    """An interval [lo, hi) of the split tree (the last of a level closed) and its children."""

    lo: float
    hi: float
    children: tuple[SplitNode, ...] = ()

    def points(self) -> list[float]:
        """Every split point of the subtree, ascending."""
        if not self.children:
            return []
        a, b = self.children
        return [*a.points(), a.hi, *b.points()]


def split_tree(
    profile: Profile, lo: float, hi: float, levels: int, *, epsilon: float, integer: bool,
    rng: np.random.Generator, accountant: Accountant, step: str,
) -> SplitNode:
    """A binary tree of DP medians inside the public [lo, hi] (module docstring, 3).

    Values are clipped to [lo, hi] (as loading against the schema will). Each level spends
    ``epsilon / levels`` once for all its nodes (disjoint records: parallel composition).
    """
    eps = validate_epsilon(epsilon)
    if not hi > lo:
        raise DpkitUsageError(f"split_tree needs lo < hi, got [{lo}, {hi}]")
    if levels <= 0:
        return SplitNode(lo, hi)
    stp = nice_step(hi - lo, FINE_STEPS, integer)
    big_j = int(round((hi - lo) / stp))  # hi is lo + J·step (lo, hi on the nice grid) or just past it
    # k(v) = how many fine grid points are ≤ v: a fixed monotone function of v, so "x is left
    # of grid point j" (k(x) ≤ j) is a fixed predicate per point
    v = np.clip(profile.values, lo, hi)
    kv = np.clip(np.floor((v - lo) / stp).astype(np.int64) + 1, 1, big_j + 1)
    kv[v >= hi] = big_j + 1
    keys, inv = np.unique(kv, return_inverse=True)
    cnt = np.bincount(inv, weights=profile.counts).astype(np.int64)
    eps_level = eps / levels
    nodes: list[tuple[int, int]] = [(0, big_j)]  # grid index intervals [ja, jb)
    tree: dict[tuple[int, int], tuple[tuple[int, int], tuple[int, int]]] = {}
    for level in range(levels):
        nxt: list[tuple[int, int]] = []
        with accountant.parallel(f"{step}: split level {level + 1}", eps_level) as scope:
            for ja, jb in nodes:
                if jb - ja < 2:
                    continue  # no grid point strictly inside
                last = jb == big_j
                sel = (keys > ja) & ((keys <= jb) if not last else (keys <= big_j + 1))
                k_in, c_in = keys[sel], cnt[sel]
                j = _median_index(k_in, c_in, ja, jb, eps_level, rng, scope.part(), step)
                tree[(ja, jb)] = ((ja, j), (j, jb))
                nxt += [(ja, j), (j, jb)]
        nodes = nxt

    def build(ja: int, jb: int) -> SplitNode:
        a = lo if ja == 0 else grid_value(lo, stp, ja)
        b = hi if jb == big_j else grid_value(lo, stp, jb)
        kids = tree.get((ja, jb))
        if kids is None:
            return SplitNode(a, b)
        return SplitNode(a, b, (build(*kids[0]), build(*kids[1])))

    return build(0, big_j)


def _median_index(keys: np.ndarray, counts: np.ndarray, ja: int, jb: int, epsilon: float,
                  rng: np.random.Generator, accountant: Accountant, step: str) -> int:
    """A grid index in (ja, jb) by the exponential mechanism with utility −|L − R| in the node;
    ``keys`` (ascending) are the node's records' k(v), ``counts`` their multiplicities."""
    n = int(counts.sum())
    # pieces of constant L: [ja+1, k_1), [k_1, k_2), …, [k_m, jb) ∩ (ja, jb)
    inner = keys[(keys > ja + 1) & (keys < jb)]
    starts = np.concatenate([[ja + 1], inner])
    ends = np.concatenate([inner, [jb]])
    left = np.searchsorted(keys, starts, side="right")  # records with k ≤ start (left of it)
    cum = np.concatenate([[0], np.cumsum(counts)])
    big_l = cum[left]
    score = -np.abs(2 * big_l - n)
    i, off = exponential_pieces(ends - starts, score, epsilon=epsilon, rng=rng, accountant=accountant,
                                step=step, mechanism="exponential (exact), median split")
    return int(starts[i] + off)
