"""Differentially private partition selection: which values of a column may be named at all.

Korolova, Kenthapadi, Mishra & Ntoulas (WWW 2009) and, for the tight analysis and the optimal
mechanism, Desfontaines, Voss, Gipson & Mandayam, "Differentially private partition
selection", PoPETs 2022(1) (DVGM below). A value (a *partition*) is released when its noisy
count clears a threshold τ chosen so that a value held by a single record is released with
probability at most δ. Values nobody holds are never considered (their count is not even
noised): that is what makes the release of a value set possible at all, and why the
guarantee is (ε, δ) and not pure ε.

**The mechanism.** Each record contributes to at most one cell (one value of one column), so
the column's histogram has L1 sensitivity 1 under add/remove-one. Every present value v gets
c_v + Z_v, Z_v ~ DLap(a) i.i.d. — P(Z = k) = (1 − q)/(1 + q)·q^|k|, q = e^{−a}, drawn exactly
(:mod:`dpkit.privacy.exact`; a = s/t ≤ ε, the exact fraction of
:func:`~dpkit.privacy.exact.noise_fraction`). v is released iff c_v + Z_v ≥ τ. Cells whose
existence is public (a declared missing token) are noised too but never thresholded.

**The threshold for the discrete Laplace** (not the continuous one). For k ≥ 1,
P(Z ≥ k) = Σ_{j≥k} (1 − q)/(1 + q)·q^j = q^k/(1 + q). A value held by one record is released
with probability P(1 + Z ≥ τ) = P(Z ≥ τ − 1) = q^{τ−1}/(1 + q), so the smallest safe τ is

    τ(a, δ) = 1 + max(1, ⌈ ln(1 / (δ·(1 + q))) / a ⌉)          (DLap threshold)

(at least 2: τ = 1 would release a singleton with probability 1/(1 + q) > 1/2). It is
computed in exact decimal arithmetic against the a actually used, and checked: q^{τ−1}/(1+q)
≤ δ always, and q^{τ−2}/(1+q) > δ when τ > 2 (minimality; tests/privacy/test_partition.py).

**Proof sketch** ((ε, δ)-DP for one column, DVGM Thm 1 for Δ₀ = 1). Let D' = D plus one record
r with value v. (i) If v is present in D, the two runs noise the same set of cells and differ
in one count by one: the noisy histogram is ε-DP (Laplace/geometric mechanism, Ghosh,
Roughgarden & Sundararajan 2009) and thresholding is post-processing, so pure ε-DP holds.
(ii) If v is absent from D (c_v = 1 in D'), every other cell has the same distribution in
both runs and v's fate is independent of theirs; let p = P(v released | D') = q^{τ−1}/(1 + q)
≤ δ. Then M(D) is distributed as M(D') given "v not released", so for any set S of outputs
P[M(D') ∈ S] ≤ (1 − p)·P[M(D) ∈ S] + p ≤ P[M(D) ∈ S] + δ, and
P[M(D') ∈ S] ≥ (1 − p)·P[M(D) ∈ S] gives P[M(D) ∈ S] ≤ P[M(D') ∈ S] + δ. So (ε, 0) in case
(i), (0, δ) in case (ii): (ε, δ)-DP. Releasing the noisy counts of the selected values is
covered by the same argument.

**Many columns.** A record holds one value in *each* of m columns: removing it changes one
cell per column, so the union of the m histograms has L1 sensitivity m and the record can be
the only holder of up to m released values. dpkit runs one selection per column with
(ε_j, δ_j) and Σ ε_j = ε, Σ δ_j = δ (basic composition, Dwork & Roth Thm 3.16) — equal
shares by default (:mod:`dpkit.domain`). This is the same as DLap(ε/m) noise on the joint
histogram plus a union bound m·δ/m over the record's m possibly-unique values.
:func:`joint_partition_selection` (below) is the alternative for many columns: discrete
Gaussian noise on all of them at once, which pays the L2 sensitivity √m instead.

**The optimum, for reference.** DVGM show the best possible per-partition release
probabilities are π(1) = δ, π(k) = min(e^ε π(k−1) + δ, 1 − e^{−ε}(1 − π(k−1) − δ), 1); DLap
thresholding uses δ only at k = 1, which costs a few records of threshold at small ε
(:func:`optimal_threshold_gap` measures it) and keeps every draw an exact integer.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact
from dpkit.privacy.accountant import Accountant, validate_delta, validate_epsilon
from dpkit.privacy.concentrated import MARGIN, cdp_delta, cdp_rho

#: decimal digits for the threshold's exact check
_DIGITS = 60


def dlap_tail(k: int, s: int, t: int) -> decimal.Decimal:
    """P(Z ≥ k) for Z ~ DLap(s/t), in 60-digit decimals: q^k/(1 + q) for k ≥ 1, else
    1 − q^{1−k}/(1 + q) (q = e^{−s/t}; the distribution is symmetric)."""
    with decimal.localcontext() as ctx:
        ctx.prec = _DIGITS
        ctx.Emin = -(10**9)
        a = decimal.Decimal(s) / decimal.Decimal(t)
        q = (-a).exp()
        if k >= 1:
            return (-(a * k)).exp() / (1 + q)
        return 1 - (-(a * (1 - k))).exp() / (1 + q)


def singleton_release_probability(tau: int, s: int, t: int) -> decimal.Decimal:
    """P(1 + Z ≥ τ) = P(Z ≥ τ − 1): how often a value held by one record is released."""
    return dlap_tail(tau - 1, s, t)


def threshold(epsilon: float | Fraction, delta: float) -> int:
    """The smallest τ ≥ 2 with P(Z ≥ τ − 1) ≤ ``delta`` for Z ~ DLap(a), a = the exact fraction
    s/t ≤ ``epsilon`` that :func:`sample_discrete_laplace` uses (module docstring).

    Derived in decimals and verified against ``delta`` exactly (a float δ is a dyadic rational,
    so ``Decimal(delta)`` is exact); one more is added if the check lands within 10⁻⁴⁰ of δ.
    """
    d = validate_delta(delta, allow_zero=False)
    s, t = exact.noise_fraction(epsilon)
    with decimal.localcontext() as ctx:
        ctx.prec = _DIGITS
        ctx.Emin = -(10**9)
        a = decimal.Decimal(s) / decimal.Decimal(t)
        q = (-a).exp()
        k = ((1 / (decimal.Decimal(d) * (1 + q))).ln() / a).to_integral_value(rounding=decimal.ROUND_CEILING)
        k = max(int(k), 1)
    tau = 1 + k
    dd = decimal.Decimal(d)
    # guard the rounding of the ln/division above: go up until the bound certainly holds
    while singleton_release_probability(tau, s, t) > dd * (1 - decimal.Decimal(10) ** -40):
        tau += 1
    return tau


def optimal_threshold_gap(epsilon: float, delta: float, horizon: int = 10**6) -> tuple[int, int]:
    """(τ of DLap thresholding, the count at which DVGM's optimal mechanism first releases with
    probability ≥ 1/2) — how much the exact integer mechanism gives away (docs/domain.md)."""
    tau = threshold(epsilon, delta)
    e = math.exp(epsilon)
    pi, k = 0.0, 0
    while pi < 0.5 and k < horizon:
        k += 1
        pi = min(e * pi + delta, 1 - (1 - pi - delta) / e, 1.0)
    return tau, k


def _counts(counts: np.ndarray | list[int], who: str) -> np.ndarray:
    """``counts`` as an array, refused unless a 1-D vector of integers >= 0."""
    c = np.asarray(counts)
    if c.ndim != 1 or (c.size and not np.issubdtype(c.dtype, np.integer)) or (c.size and c.min() < 0):
        raise DpkitUsageError(f"{who} needs a 1-D vector of counts >= 0")
    return c


@dataclass(frozen=True)
class Selection:
    """What partition selection releases: which input cells survived and their noisy counts.

    ``selected`` indexes the caller's cells (their names stay with the caller, which must
    never show an unselected one); ``noisy`` holds the noisy counts of ``selected`` (public
    cells included when they were asked for), ``threshold`` the public τ.
    """

    selected: np.ndarray
    noisy: np.ndarray
    threshold: int


def partition_selection(
    counts: np.ndarray | list[int],
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    public: np.ndarray | None = None,
) -> Selection:
    """Release the cells whose noisy count clears the DLap threshold: (ε, δ)-DP (module docstring).

    ``counts``: exact counts (≥ 1 for data cells) of the values one column holds, each record
    in at most one cell; ``public``: a boolean mask of cells whose existence is public (e.g.
    the declared missing token): noised, released whatever their count. Spends ``epsilon`` and
    ``delta`` in ``accountant`` before drawing.
    """
    return first_round(counts, epsilon=epsilon, delta=delta, rng=rng, accountant=accountant, step=step,
                       public=public)[0]


# --------------------------------------------------------------------------- many columns at once
#
# A record holds one value in each of m columns, so the m histograms together change in m
# cells by one each: L1 sensitivity m (what per-column Laplace pays) but L2 sensitivity √m.
# Gaussian noise pays the L2 one (Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo & Gipson,
# PoPETs 2020, §3; DVGM §5): at Adult's nine categorical columns and the default domain
# share of ε = 1, a predictor's threshold falls from 1,304 records to 776 (docs/domain-reference.md,
# "Many columns").

#: the share of a joint selection's δ for the Gaussian vector (the rest: new values' release)
GAUSSIAN_DELTA_SHARE = 0.5
#: σ² is rounded up to a multiple of this (an exact dyadic rational for the sampler)
_SIGMA2_STEP = Fraction(1, 2**10)


def gaussian_tail(k: int, sigma2: Fraction) -> float:
    """An upper bound on P(Z ≥ k), Z ~ N_Z(0, σ²), k ≥ 1, σ ≥ 1/2.

    With f(y) = e^{-y²/(2σ²)} and S = σ√(2π) = ∫f: f decreases on [k, ∞), so
    Σ_{y≥k} f(y) ≤ f(k) + ∫_k^∞ f = f(k) + S·Q(k/σ); and Σ_{y≥1} f(y) ≥ ∫_1^∞ f, so
    Σ_y f(y) ≥ 1 + 2∫_1^∞ f ≥ S − 1. Hence P(Z ≥ k) ≤ (f(k) + S·Q(k/σ)) / (S − 1). Floats
    (erfc to ~10⁻¹⁵ relative): the result is raised by 10⁻⁹ relative.
    """
    if k < 1:
        raise ValueError("gaussian_tail needs k >= 1")
    s = math.sqrt(sigma2)
    if s < 0.5:
        raise ValueError("gaussian_tail needs sigma >= 1/2")
    big = s * math.sqrt(2 * math.pi)
    head = math.exp(-(k * k) / (2 * float(sigma2)))
    return (head + big * 0.5 * math.erfc(k / (s * math.sqrt(2)))) / (big - 1) * (1 + 1e-9)


def gaussian_threshold(sigma2: Fraction, delta: float) -> int:
    """The smallest τ ≥ 2 with :func:`gaussian_tail` (τ − 1, σ²) ≤ ``delta``: a value held by one
    record is released with probability at most δ."""
    d = validate_delta(delta, allow_zero=False)
    lo, hi = 2, 2
    while gaussian_tail(hi - 1, sigma2) > d:
        lo, hi = hi + 1, 2 * hi
    while lo < hi:  # the tail decreases in k: the first τ in [lo, hi] that passes
        mid = (lo + hi) // 2
        if gaussian_tail(mid - 1, sigma2) <= d:
            hi = mid
        else:
            lo = mid + 1
    return lo


@dataclass(frozen=True)
class GaussianPlan:
    """A joint selection's public parameters: each column's σ² and threshold, and the ρ they
    cost (Σ_j 1/(2σ_j²) ≤ the ρ that (ε, δ_G) allows)."""

    sigma2: tuple[Fraction, ...]
    thresholds: tuple[int, ...]
    rho: float


def gaussian_plan(weights: Sequence[float], epsilon: float, delta: float) -> GaussianPlan:
    """σ_j² and τ_j for m columns sharing (ε, δ): :func:`_plan`, checked and cached (the search
    for ρ is not free; a caller may plan the same columns many times)."""
    w = tuple(float(x) for x in weights)
    if not w or not all(math.isfinite(x) and x > 0 for x in w):
        raise DpkitUsageError("gaussian_plan needs one weight > 0 per column")
    return _plan(w, validate_epsilon(epsilon), validate_delta(delta, allow_zero=False))


@functools.lru_cache(maxsize=64)
def _plan(w: tuple[float, ...], eps: float, d: float) -> GaussianPlan:
    """σ_j² and τ_j for m columns sharing (ε, δ) (module comment above; docs/domain.md).

    δ = δ_G + e^ε·δ_new with δ_G = ``GAUSSIAN_DELTA_SHARE``·δ: the counts of values already
    present are a discrete-Gaussian vector, ρ-zCDP with ρ from (ε, δ_G) (CKS Cor. 13); a
    record's values new to the data are released with probability ≤ Σ_j δ_j = δ_new, δ_j equal.
    Column j gets ρ_j = ρ·w_j/Σw, i.e. σ_j² = 1/(2ρ_j), rounded up to a dyadic rational.
    """
    d_gauss = d * GAUSSIAN_DELTA_SHARE
    d_new = (d - d_gauss) / math.exp(eps)
    rho = cdp_rho(eps, d_gauss)
    total = math.fsum(w)
    sigma2 = tuple(max(Fraction(1), _ceil_step(total / (2 * rho * x))) for x in w)
    spent = float(sum((1 / (2 * s) for s in sigma2), Fraction(0)))
    if not cdp_delta(spent, eps) <= d_gauss * (1 - MARGIN):  # pragma: no cover - rounding only adds noise
        raise AssertionError("gaussian plan exceeds its delta")
    taus = tuple(gaussian_threshold(s, d_new / len(w)) for s in sigma2)
    return GaussianPlan(sigma2, taus, spent)


#: how much lower the largest threshold (a predictor's) must be for a run's automatic choice to
#: take the joint Gaussian (:func:`choose_partition`): at least halved — below that, publish
#: loses with it; from there on the forest gains (docs/domain-reference.md, "Many columns";
#: docs/decisions/0004-gaussian-partition-on-wide-tables.md).
PARTITION_GAIN = 2.0


def prefer_gaussian(thresholds: Sequence[tuple[float, float]], spreads: Sequence[tuple[float, float]] = (),
                    gain: float = 1.0) -> bool:
    """The rule by which a run picks the discrete Gaussian over the discrete Laplace from their
    public parameters alone: each pair is (Laplace's, Gaussian's) for one decision. The
    Gaussian only when no decision gets worse — every threshold lower by more than the factor
    ``gain`` (1: strictly lower) and every noise spread (a standard deviation) no larger; else
    the Laplace (pure ε on the present values, and the simpler proof). Used for the metadata's
    shape counts (:func:`dpkit.domain.metadata.noise_plan`) and the category lists
    (:func:`choose_partition`)."""
    return bool(thresholds) and all(g * gain < lap for lap, g in thresholds) and all(g <= lap for lap, g in spreads)


def choose_partition(budgets: Sequence[tuple[float, float]], weights: Sequence[float], epsilon: float,
                     delta: float) -> str:
    """``"gaussian"`` or ``"laplace"`` for m categorical columns: per-column Laplace at
    ``budgets`` (ε_j, δ_j) against the joint Gaussian at (``epsilon``, ``delta``) with ρ shares
    ``weights`` (:func:`gaussian_plan`), by :func:`prefer_gaussian`: the Gaussian when every
    column's threshold is lower AND the largest (a predictor's: the one that decides which
    values a table keeps) at least :data:`PARTITION_GAIN` times lower.

    Public: a function of m, the weights, ε and δ only — never of the data (the column kinds
    it is called with are themselves declared or DP outcomes). At a run's default shares the
    ratio of the largest thresholds falls with m: Adult's 8 categorical predictors 1,641 → 895
    records (Laplace kept), 12 predictors 1,581 → 719 and 22 predictors 2,661 → 871 (the
    Gaussian); docs/domain-reference.md, "Many columns".
    """
    if not budgets or len(budgets) != len(weights):
        raise DpkitUsageError("choose_partition needs one weight per column, and a column")
    plan = gaussian_plan(weights, epsilon, delta)
    laplace = [threshold(e, d) for e, d in budgets]
    pairs = list(zip(laplace, plan.thresholds, strict=True))
    largest = [(max(laplace), max(plan.thresholds))]
    return "gaussian" if prefer_gaussian(pairs) and prefer_gaussian(largest, gain=PARTITION_GAIN) else "laplace"


def _ceil_step(x: float) -> Fraction:
    """x rounded up to a multiple of ``_SIGMA2_STEP`` (and past any float error of x)."""
    f = Fraction(x) * (1 + Fraction(1, 10**12))
    return math.ceil(f / _SIGMA2_STEP) * _SIGMA2_STEP


def joint_partition_selection(
    counts: Sequence[np.ndarray],
    weights: Sequence[float],
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    public: Sequence[np.ndarray],
) -> list[Selection]:
    """Partition selection on m columns at once with discrete Gaussian noise: (ε, δ)-DP
    together, where each record holds one value per column (docs/domain-reference.md, "Many columns").

    Proof sketch. D' = D plus a record r. (i) On the cells present in D (and the public ones),
    the noisy counts differ in at most one cell per column, by one: Rényi divergence ≤
    α·Σ_j 1/(2σ_j²) = αρ, so (ε, δ_G)-DP (CKS Thm. 4, Prop. 5, Cor. 13); thresholding is
    post-processing. (ii) r's values absent from D are released, independently of (i), with
    probability p ≤ Σ_j P(Z_j ≥ τ_j − 1) ≤ δ_new. As in the one-column proof (module
    docstring), P[M(D') ∈ S] ≤ e^ε P[M(D) ∈ S] + δ_G + p and P[M(D) ∈ S] ≤
    e^ε (P[M(D') ∈ S] + p) + δ_G: (ε, δ_G + e^ε·δ_new) = (ε, δ). Spends once, before drawing.
    """
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, allow_zero=False)
    cs = [_counts(c, "joint_partition_selection") for c in counts]
    if len(cs) != len(weights) or len(cs) != len(public):
        raise DpkitUsageError("joint_partition_selection needs one weight and one public mask per column")
    plan = gaussian_plan(weights, eps, d)
    taus = f"{min(plan.thresholds)}" + (f"-{max(plan.thresholds)}" if len(set(plan.thresholds)) > 1 else "")
    accountant.spend(step, f"partition selection (discrete gaussian, {len(cs)} columns, rho {plan.rho:.6g}, "
                     f"threshold {taus})", eps, math.sqrt(len(cs)), delta=d)
    out = []
    for c, pub, s2, tau in zip(cs, public, plan.sigma2, plan.thresholds, strict=True):
        noisy = c.astype(np.int64) + exact.discrete_gaussian(rng, s2, int(c.size))
        keep = np.asarray(pub, dtype=bool) | (noisy >= tau)
        sel = np.flatnonzero(keep)
        out.append(Selection(selected=sel, noisy=noisy[sel], threshold=tau))
    return out


# --------------------------------------------------------------------------- a second round
#
# A run can select a column's categories in two rounds (dpkit.domain.discover._two_rounds): the
# first at (ε₁, δ₁), the second — for the columns the first left open, chosen from its output —
# at (ε₂, δ₂), deciding on the SUM of both rounds' noisy counts, so that a column that takes
# both rounds loses nothing against one round at ε₁ + ε₂ (the sum of two discrete Laplace
# counts is about as sharp as one at the summed rate).


def first_round(
    counts: np.ndarray | list[int],
    *,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    public: np.ndarray | None = None,
) -> tuple[Selection, np.ndarray]:
    """:func:`partition_selection` (its mechanism and proof), returning also every cell's noisy
    count — PRIVATE beyond the selected cells: only :func:`second_round` may read it, to decide on
    the sum of both rounds."""
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, allow_zero=False)
    c = _counts(counts, "partition_selection")
    pub = np.zeros(c.size, dtype=bool) if public is None else np.asarray(public, dtype=bool)
    if pub.shape != c.shape:
        raise DpkitUsageError("public must have the shape of counts")
    tau = threshold(eps, d)
    s, t = exact.noise_fraction(eps)
    accountant.spend(step, f"partition selection (discrete laplace, threshold {tau})", eps, 1.0, delta=d)
    noisy = c.astype(np.int64) + (exact.discrete_laplace(rng, s, t, int(c.size)) if c.size else np.zeros(0, np.int64))
    sel = np.flatnonzero(pub | (noisy >= tau))
    return Selection(selected=sel, noisy=noisy[sel], threshold=tau), noisy


@functools.lru_cache(maxsize=256)
def noise_sum_threshold(mechanism: str, eps_j: float, sigma2: Fraction | None, k: int, bound: float) -> int:
    """The smallest x with P(S ≥ x) ≤ ``bound`` for S the sum of ``k`` cells' noise — discrete
    Gaussian of variance ``sigma2`` or discrete Laplace at ``eps_j`` (``mechanism``), a Chernoff
    bound (:meth:`dpkit.domain.metadata.NoisePlan.sum_threshold` states it); cached: a pure
    function of public numbers."""
    log_bound = math.log(bound)
    if mechanism == "gaussian":
        x = math.sqrt(2 * k * float(sigma2) * -log_bound)  # type: ignore[arg-type]
        return 1 + math.ceil(x * (1 + 1e-9))
    s, t = exact.noise_fraction(eps_j)
    a = s / t  # the rate the sampler uses (≤ ε_j: its noise is no smaller)
    q = math.exp(-a)
    lams = [a * i / 400 for i in range(1, 400)]

    def log_tail(x: float) -> float:
        return min(-lam * x + k * (2 * math.log1p(-q) - math.log1p(-q * math.exp(lam)) - math.log1p(-q * math.exp(-lam)))
                   for lam in lams)

    lo, hi = 1, 2
    while log_tail(hi) > log_bound:
        lo, hi = hi, 2 * hi
    while lo < hi:  # the bound decreases in x: the first x in [lo, hi] that passes
        mid = (lo + hi) // 2
        if log_tail(mid) <= log_bound:
            hi = mid
        else:
            lo = mid + 1
    return 1 + lo + 1  # a float margin of one count


def sum_tail(k: int, a1: float, a2: float) -> float:
    """An upper bound on P(Z₁ + Z₂ ≥ k), k ≥ 1, Z_i ~ DLap(a_i) independent (q_i = e^{−a_i},
    c₁ = (1 − q₁)/(1 + q₁) the mass at 0 of Z₁). Condition on Z₁ = z: for z ≤ k − 1,
    P(Z₂ ≥ k − z) = q₂^{k−z}/(1 + q₂), and the sum over z of c₁q₁^{|z|}·q₂^{k−z} is geometric —
    c₁q₂^k·(q₁q₂/(1 − q₁q₂) + Σ_{z=0}^{k−1} (q₁/q₂)^z); for z ≥ k, P(Z₂ ≥ k − z) ≤ 1 and
    P(Z₁ ≥ k) = q₁^k/(1 + q₁). Floats: raised by 10⁻⁹ relative."""
    q1, q2 = math.exp(-a1), math.exp(-a2)
    c1 = (1 - q1) / (1 + q1)
    neg = q1 * q2 / (1 - q1 * q2) * q2**k  # z <= -1
    if abs(a1 - a2) < 1e-15:
        pos = k * q2**k  # z = 0 .. k-1, (q1/q2)^z = 1
    else:  # Σ_{z=0}^{k-1} q1^z q2^{k-z} = (q2^k − q1^k)·q2/(q2 − q1)
        pos = (q2**k - q1**k) * q2 / (q2 - q1)
    return (c1 * (neg + pos) / (1 + q2) + q1**k / (1 + q1)) * (1 + 1e-9)


@functools.lru_cache(maxsize=256)
def sum_threshold(epsilon1: float, epsilon2: float, delta: float) -> int:
    """The smallest τ with P(Z₁ + Z₂ ≥ τ − 2) ≤ ``delta`` (by :func:`sum_tail`) for independent
    Z_i ~ DLap(a_i), a_i the exact rates of ``epsilon1``, ``epsilon2``: a value held by one record
    (a count of 1 in each round, 2 in the sum) passes the sum's threshold with probability ≤ δ."""
    d = validate_delta(delta, allow_zero=False)
    a1 = float(Fraction(*exact.noise_fraction(epsilon1)))
    a2 = float(Fraction(*exact.noise_fraction(epsilon2)))
    lo, hi = 1, 2
    while sum_tail(hi, a1, a2) > d:
        lo, hi = hi, 2 * hi
    while lo < hi:  # the tail decreases in k
        mid = (lo + hi) // 2
        if sum_tail(mid, a1, a2) <= d:
            hi = mid
        else:
            lo = mid + 1
    return 2 + lo


def second_round(
    counts: np.ndarray | list[int],
    first: np.ndarray,
    *,
    epsilon: float,
    first_epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    public: np.ndarray | None = None,
) -> Selection:
    """A column's second round: fresh DLap(ε₂) noise on every cell; a cell is listed when this
    round's noisy count reaches :func:`threshold` (ε₂, δ₂/2) — the rule that wins when ε₂ is the
    larger — or when it plus the first round's (``first``, from :func:`first_round` at
    ``first_epsilon``) reaches :func:`sum_threshold` (ε₁, ε₂, δ₂/2) — the rule that wins when the
    two are alike. Returns the cells so listed (and the public ones) with THIS round's noisy
    counts, and the first rule's threshold. Spends (ε₂, δ₂) before drawing.

    Proof sketch (with the first round: (ε₁ + ε₂, δ₁ + δ₂)-DP for the column). D' = D plus a
    record with value v. (i) v present in D: the two noisy vectors over D's cells are (ε₁ + ε₂)-DP
    (two geometric mechanisms, basic composition); listing and the choice of the open columns are
    post-processing. (ii) v absent from D: every other cell has the same distribution in both runs,
    independent of v's; v is listed in round 1 with probability ≤ δ₁ (:func:`threshold`) and here
    with probability ≤ δ₂/2 + δ₂/2 (the two rules' thresholds); which columns are open is a function of the *listed*
    cells, so when v is listed in neither round the output is distributed as M(D)'s, and as in
    :func:`partition_selection` P[M(D') ∈ S] ≤ P[M(D) ∈ S] + δ₁ + δ₂ and conversely."""
    eps = validate_epsilon(epsilon)
    d = validate_delta(delta, allow_zero=False)
    c = _counts(counts, "second_round")
    pub = np.zeros(c.size, dtype=bool) if public is None else np.asarray(public, dtype=bool)
    if pub.shape != c.shape or np.shape(first) != c.shape:
        raise DpkitUsageError("public and first must have the shape of counts")
    tau, tau_sum = threshold(eps, d / 2), sum_threshold(first_epsilon, eps, d / 2)
    s, t = exact.noise_fraction(eps)
    accountant.spend(step, f"partition selection, second round (discrete laplace, threshold {tau}; "
                     f"the sum of both rounds' noisy counts against {tau_sum})", eps, 1.0, delta=d)
    noisy = c.astype(np.int64) + (exact.discrete_laplace(rng, s, t, int(c.size)) if c.size else np.zeros(0, np.int64))
    sel = np.flatnonzero(pub | (noisy >= tau) | (np.asarray(first, dtype=np.int64) + noisy >= tau_sum))
    return Selection(selected=sel, noisy=noisy[sel], threshold=tau)
