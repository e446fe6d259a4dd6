"""DP quantiles over a public, very wide grid: bounds and split points of a numeric column.

Everything here is the exponential mechanism (McSherry & Talwar 2007) on a *public* finite
grid, with integer utilities built from exact rank counts, sampled **exactly**
(:func:`sample_pieces`). The grid is wide — every "nice" number ±m·10^e from 10⁻⁹ (integer
columns: 1) to ~10¹⁶ — because nothing about the column's range is known in advance; the
mechanisms below are built so that the width costs (almost) nothing:

1. :func:`median_on_grid` — a rough median m̂ on the nice grid: utility −|L(b) − R(b)|,
   L(b) = #{x < b}, R(b) = #{x ≥ b} (sensitivity 1: adding a record moves L − R by one),
   uniform base measure. Candidates outside the data have utility −n, so for εn/2 ≫ ln|G|
   (|G| ≈ 500: ln ≈ 6) the output lies inside the data.
2. :func:`lower_bound` / :func:`upper_bound` — the grid point below (above) which few records
   lie: utility −#{x < b} (−#{x > b}), sensitivity 1 and *monotone* (adding a record can only
   lower every utility), so the mechanism may use exp(ε·u) (McSherry & Talwar Thm 6; Dwork &
   Roth §3.4), over the candidates between m̂ and the grid's end, with a public geometric
   prior e^{γ·j} that favours the candidate nearest m̂. All candidates below the data tie
   (utility 0); without the prior the wide grid would make the output a uniform pick among
   ~150 of them (−10¹⁶ as likely as 15); with it their total mass is a geometric series,
   ≤ 1/(1 − e^{−γ}) times the mass of the tightest, so the bound is the nice number below the
   data or one or two steps looser, and it only clips values where fewer than ~γ/ε records
   lie per grid step. γ = g·(ε) with g = ⌈γ/ε⌉ an integer: the prior stays an integer score.
3. :func:`split_tree` — split points by recursive medians inside [lo, hi] on a fine public
   grid (the integers, or lo + j·step with a "nice" step, ≤ 2²⁰ points): the root's median,
   then the median of each half, …, to ``levels`` levels (Kaplan, Schnapp & Stemmer,
   "Differentially private approximate quantiles", ICML 2022). The nodes of a level hold
   disjoint records, so one level costs its ε once (parallel composition, McSherry 2009);
   each search is confined to its node's public interval, so only steps 1–2 ever pay for the
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
rank error |L − R| ≤ OPT + (2/ε)(ln|G| + t) for the medians.

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

#: mantissas of the nice grid (a Renard-like series: steps of 20–33 %)
MANTISSAS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)
#: decades of the nice grid: reals 10^-9 … 8·10^15, integers 1 … 8·10^15 (exact in a float)
REAL_DECADES = range(-9, 16)
INTEGER_DECADES = range(0, 16)
#: the fine grid of split points has at most this many steps
FINE_STEPS = 2**20
#: γ of the bounds' prior (nats per grid step): one step looser is worth ~γ/ε clipped records
BOUND_PRIOR = 0.5


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
        m = float(logw.max())
        p = np.exp(logw - m)
    cum = np.cumsum(p)
    total = float(cum[-1])
    k = int(ln.size)
    # float error of every boundary, relative to the total (≥ 1: the largest term is e^0):
    # exponents ≤ ~250 in magnitude where a term is not negligible (2^-60 S), each carried with
    # relative error < 10⁻¹³; negligible terms are off by < 2^-59 each; the cumulative sum
    # adds ≤ k·2^-53 — all inside 1e-11 + k·2^-50, doubled: the total is a boundary too
    margin = total * (2e-11 + k * 2.0**-49)
    w = int(rng.bit_generator.random_raw())
    t_lo = w * _TWO_M64 * total * (1 - 2.0**-50)
    t_hi = (w + 1) * _TWO_M64 * total * (1 + 2.0**-50)
    j = int(np.searchsorted(cum, t_lo, side="right"))
    if j < k:
        left = float(cum[j - 1]) + margin if j > 0 else 0.0
        if t_lo >= left and t_hi <= float(cum[j]) - margin and pos[j]:
            return j
    return _decide_pieces(rng, w, ln, sc, top, s, t)


def _decide_pieces(rng: np.random.Generator, w: int, ln: np.ndarray, sc: np.ndarray, top: int, s: int, t: int) -> int:
    """The exact path of :func:`sample_pieces`: U ∈ [w/2^n, (w+1)/2^n), refined by 64 bits at
    a time, against weights computed in ``decimal`` to a relative 10^{1−prec} each."""
    nbits = 64
    prec = 80
    lengths = [int(x) for x in ln]
    gaps = [top - int(x) for x in sc]
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = prec
            ctx.Emin = decimal.MIN_EMIN
            ctx.Emax = decimal.MAX_EMAX
            d = decimal.Decimal
            a = d(s) / d(t)
            cache: dict[int, decimal.Decimal] = {}
            cum: list[decimal.Decimal] = []
            acc = d(0)
            for length, g in zip(lengths, gaps, strict=True):
                if length > 0:
                    e = cache.get(g)
                    if e is None:
                        e = cache[g] = (-(a * g)).exp()
                    acc = acc + length * e
                cum.append(acc)
            total = acc
            k = len(cum)
            # each operation errs by a relative 10^{1−prec}; a term e^{−x} whose argument is
            # large errs by x·e^{−x}·ℓ·10^{1−prec} absolutely, negligible against the total
            # (≥ 1): a bound of (k + 4)·10^{22−prec}·total covers lengths·x up to 10^20
            tol = total * (k + 4) * d(10) ** (22 - prec)
            scale = d(2) ** nbits
            # U·S lies in [t_lo + tol, t_hi − tol]; every true boundary within tol of cum[i]
            t_lo = d(w) / scale * total - 2 * tol
            t_hi = d(w + 1) / scale * total + 2 * tol
            lo_i = _bisect(cum, t_lo)
            if lo_i == _bisect(cum, t_hi) and lo_i < k and lengths[lo_i] > 0:
                return lo_i
        w = (w << 64) | int(rng.bit_generator.random_raw())
        nbits += 64
        prec += 25


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


def nice_grid(integer: bool) -> np.ndarray:
    """The public grid of bounds and rough medians: 0 and ±m·10^e (m in :data:`MANTISSAS`;
    integer columns: the integers 1–9, then m·10^e for e ≥ 1), ascending."""
    pos: set[float] = set()
    for e in INTEGER_DECADES if integer else REAL_DECADES:
        for m in MANTISSAS:
            v = float(f"{m}e{e}")
            if integer and not v.is_integer():
                continue
            pos.add(v)
    if integer:
        pos.update(float(i) for i in range(1, 10))
    p = np.array(sorted(pos))
    return np.concatenate([-p[::-1], [0.0], p])


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


def median_on_grid(
    profile: Profile, grid: np.ndarray, *, epsilon: float, rng: np.random.Generator,
    accountant: Accountant, step: str,
) -> float:
    """A rough median on the public ``grid``: utility −|L(b) − R(b)|, sensitivity 1, uniform
    base measure (module docstring, 1)."""
    g = np.asarray(grid, dtype=np.float64)
    left = profile.below(g)
    score = -np.abs(2 * left - profile.n)
    i, _ = exponential_pieces(np.ones(g.size, dtype=np.int64), score, epsilon=epsilon, rng=rng,
                              accountant=accountant, step=step, mechanism="exponential (exact), median on the nice grid")
    return float(g[i])


def _prior_steps(epsilon: float, gamma: float) -> int:
    """g with g·s/t ≥ γ, s/t the exact fraction the monotone mechanism uses for ``epsilon``."""
    s, t = exact.noise_fraction(epsilon)
    return max(1, math.ceil(Fraction(gamma) * t / s))


def lower_bound(
    profile: Profile, grid: np.ndarray, median: float, *, epsilon: float, rng: np.random.Generator,
    accountant: Accountant, step: str, gamma: float = BOUND_PRIOR,
) -> float:
    """A lower bound on the public ``grid`` at or below ``median`` (a public point): utility
    −#{x < b} (monotone, sensitivity 1) plus the public prior γ per step towards ``median``."""
    g = np.asarray(grid, dtype=np.float64)
    cand = g[g <= median]
    if cand.size == 0:
        cand = g[:1]
    k = _prior_steps(epsilon, gamma)
    score = -profile.below(cand) + k * np.arange(cand.size, dtype=np.int64)
    i, _ = exponential_pieces(np.ones(cand.size, dtype=np.int64), score, epsilon=epsilon, rng=rng,
                              accountant=accountant, step=step, monotone=True,
                              mechanism="exponential (exact, monotone), lower bound on the nice grid")
    return float(cand[i])


def upper_bound(
    profile: Profile, grid: np.ndarray, median: float, *, epsilon: float, rng: np.random.Generator,
    accountant: Accountant, step: str, gamma: float = BOUND_PRIOR,
) -> float:
    """The mirror of :func:`lower_bound`: utility −#{x > b} over the grid at or above ``median``."""
    g = np.asarray(grid, dtype=np.float64)
    cand = g[g >= median]
    if cand.size == 0:
        cand = g[-1:]
    k = _prior_steps(epsilon, gamma)
    above = profile.n - profile.at_most(cand)
    score = -above - k * np.arange(cand.size, dtype=np.int64)
    i, _ = exponential_pieces(np.ones(cand.size, dtype=np.int64), score, epsilon=epsilon, rng=rng,
                              accountant=accountant, step=step, monotone=True,
                              mechanism="exponential (exact, monotone), upper bound on the nice grid")
    return float(cand[i])


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
