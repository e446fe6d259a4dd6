"""Joint partition selection with discrete Gaussian noise (issue 22, "Many columns"): the exact
sampler, the zCDP → (ε, δ) conversion, the tail bound behind the threshold, the plan's
accounting, and the mechanism's failure probability."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, exact, make_rng
from dpkit.privacy.concentrated import MARGIN, cdp_delta, cdp_rho
from dpkit.privacy.mechanisms.partition import (
    GAUSSIAN_DELTA_SHARE,
    choose_partition,
    gaussian_plan,
    gaussian_tail,
    gaussian_threshold,
    joint_partition_selection,
    prefer_gaussian,
    threshold,
)


def dg_pmf(sigma2: float, lo: int, hi: int) -> dict[int, float]:
    """N_Z(0, σ²)'s pmf on [lo, hi], normalised over a range wide enough that the rest is < 1e-30."""
    w = int(40 * math.sqrt(sigma2)) + 40
    z = math.fsum(math.exp(-y * y / (2 * sigma2)) for y in range(-w, w + 1))
    return {y: math.exp(-y * y / (2 * sigma2)) / z for y in range(lo, hi + 1)}


def dg_tail(k: int, sigma2: float) -> float:
    """P(Z ≥ k), summed directly (an independent check of the bound)."""
    w = int(40 * math.sqrt(sigma2)) + 40
    z = math.fsum(math.exp(-y * y / (2 * sigma2)) for y in range(-w, w + 1))
    return math.fsum(math.exp(-y * y / (2 * sigma2)) for y in range(k, k + w)) / z


def gaussian_delta(mu: float, eps: float) -> float:
    """The continuous Gaussian's exact δ(ε) at μ = Δ/σ (Balle & Wang 2018, Thm. 8)."""
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


# --------------------------------------------------------------------------- the sampler


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(3, 2), Fraction(40)])
def test_discrete_gaussian_matches_its_pmf(sigma2: Fraction) -> None:
    """Chi-square against the exact pmf (60k draws; cells with expectation ≥ 5, the tails pooled);
    the 99.99 % quantile of χ² at its degrees of freedom, via Wilson–Hilferty."""
    n = 60_000
    x = exact.discrete_gaussian(make_rng(7), sigma2, n)
    assert x.dtype == np.int64 and x.size == n
    s = math.sqrt(sigma2)
    lim = int(4 * s) + 1
    pmf = dg_pmf(float(sigma2), -lim, lim)
    cells = [y for y in range(-lim, lim + 1) if n * pmf[y] >= 5]
    lo, hi = min(cells), max(cells)
    obs = [int((x <= lo).sum())] + [int((x == y).sum()) for y in range(lo + 1, hi)] + [int((x >= hi).sum())]
    p_lo = 1 - math.fsum(pmf[y] for y in range(lo + 1, lim + 1)) - (1 - math.fsum(pmf.values())) / 2
    p_hi = p_lo  # symmetric
    exp_ = [n * p_lo] + [n * pmf[y] for y in range(lo + 1, hi)] + [n * p_hi]
    chi2 = sum((o - e) ** 2 / e for o, e in zip(obs, exp_, strict=True))
    df = len(obs) - 1
    z = 3.72  # one-sided 99.99 %
    crit = df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3
    assert chi2 < crit, (chi2, crit)


def test_discrete_gaussian_is_exact_in_its_far_tail() -> None:
    """No float cut-off: at σ² = 1/4 a draw of 4 has probability ~10⁻¹⁴; the sampler's coin for
    it is exact and positive (bernoulli_exp_probability's bracket), not rounded to 0."""
    s2 = Fraction(1, 4)
    t = 1 << math.isqrt(math.floor(s2)).bit_length()
    lo, _ = exact.bernoulli_exp_probability((4 - s2 / t) ** 2 / (2 * s2))
    assert lo > 0


def test_discrete_gaussian_refuses_a_bad_sigma() -> None:
    with pytest.raises(DpkitUsageError, match="sigma2 > 0"):
        exact.discrete_gaussian(make_rng(1), Fraction(0), 3)
    assert exact.discrete_gaussian(make_rng(1), Fraction(2), 0).size == 0


def test_discrete_gaussian_is_reproducible_under_one_key() -> None:
    a = exact.discrete_gaussian(make_rng(11), Fraction(1000), 500)
    b = exact.discrete_gaussian(make_rng(11), Fraction(1000), 500)
    assert np.array_equal(a, b) and not np.array_equal(a, exact.discrete_gaussian(make_rng(12), Fraction(1000), 500))


# --------------------------------------------------------------------------- zCDP → (ε, δ)


@pytest.mark.parametrize("rho", [1e-4, 5e-4, 0.01, 0.5])
@pytest.mark.parametrize("eps", [0.05, 0.2, 1.0, 3.0])
def test_cdp_delta_is_between_the_exact_gaussian_and_the_classic_bound(rho: float, eps: float) -> None:
    """A valid conversion can never undercut a ρ-zCDP mechanism's true δ — the continuous
    Gaussian with μ² = 2ρ is one — and CKS Cor. 13 is never looser than Bun–Steinke's."""
    d = cdp_delta(rho, eps)
    classic = math.exp(-((eps - rho) ** 2) / (4 * rho)) if eps >= rho else 1.0
    assert gaussian_delta(math.sqrt(2 * rho), eps) <= d * (1 + 1e-9)
    assert d <= min(classic, 1.0) * (1 + 1e-9)


def test_cdp_delta_is_the_infimum_over_alpha() -> None:
    """CKS Cor. 13 written out at a few α by hand: the search returns no more than any of them
    and no less than the best of a fine grid (so it is the bound, not a looser one); at ρ =
    0.025, ε = 1 it is 50× below the classic exp(−(ε − ρ)²/(4ρ)) ≈ 7.4e-5."""
    rho, eps = 0.025, 1.0

    def at(a: float) -> float:
        return math.exp((a - 1) * (a * rho - eps)) / (a - 1) * (1 - 1 / a) ** a

    d = cdp_delta(rho, eps)
    assert all(d <= at(a) * (1 + 1e-9) for a in (2.0, 10.0, 20.0, 21.0, 40.0))
    assert d >= min(at(1 + i / 100) for i in range(1, 10_000)) * (1 - 1e-6)
    assert d < math.exp(-((eps - rho) ** 2) / (4 * rho)) / 50


@given(st.floats(1e-3, 5.0), st.floats(1e-12, 1e-3))
@settings(max_examples=60, deadline=None)
def test_cdp_rho_is_the_largest_rho_within_delta(eps: float, delta: float) -> None:
    rho = cdp_rho(eps, delta)
    assert rho > 0 and cdp_delta(rho, eps) <= delta * (1 - MARGIN)
    assert cdp_delta(rho * (1 + 1e-6), eps) > delta * (1 - MARGIN) * (1 - 1e-3)


@pytest.mark.parametrize(("rho", "eps"), [(-1.0, 1.0), (1.0, -0.1), (math.nan, 1.0)])
def test_cdp_delta_refuses_bad_arguments(rho: float, eps: float) -> None:
    with pytest.raises(ValueError):
        cdp_delta(rho, eps)


# --------------------------------------------------------------------------- the tail and the threshold


@pytest.mark.parametrize("sigma2", [Fraction(1), Fraction(9, 2), Fraction(100), Fraction(12000)])
def test_gaussian_tail_bounds_the_exact_tail_tightly(sigma2: Fraction) -> None:
    s = math.sqrt(sigma2)
    for k in sorted({1, 2, int(s), int(3 * s), int(5 * s), int(6 * s)}):
        exact_tail = dg_tail(k, float(sigma2))
        bound = gaussian_tail(k, sigma2)
        assert exact_tail <= bound
        if s >= 10:  # the bound's two slack terms are O(1/σ) relative
            assert bound <= exact_tail * (1 + 3 / s + k / (s * s))


@given(st.integers(2, 10**7), st.floats(1e-10, 1e-2))
@settings(max_examples=80, deadline=None)
def test_gaussian_threshold_bounds_singletons_and_is_minimal(s2: int, delta: float) -> None:
    sigma2 = Fraction(s2, 4)
    tau = gaussian_threshold(sigma2, delta)
    assert tau >= 2 and gaussian_tail(tau - 1, sigma2) <= delta
    if tau > 2:
        assert gaussian_tail(tau - 2, sigma2) > delta


def test_gaussian_tail_refuses_what_it_cannot_bound() -> None:
    with pytest.raises(ValueError):
        gaussian_tail(0, Fraction(4))
    with pytest.raises(ValueError):
        gaussian_tail(3, Fraction(1, 5))


# --------------------------------------------------------------------------- the plan


@given(st.lists(st.sampled_from([1.0, 4.0, 16.0, 2.25]), min_size=1, max_size=30),
       st.floats(1e-3, 4.0), st.floats(1e-10, 1e-3))
@settings(max_examples=60, deadline=None)
def test_plan_spends_no_more_than_its_epsilon_and_delta(weights: list[float], eps: float, delta: float) -> None:
    """Invariant: the plan's σ² cost ρ = Σ 1/(2σ_j²) converts within (ε, δ_G), and the union of
    the columns' singleton release bounds times e^ε stays within δ − δ_G."""
    plan = gaussian_plan(weights, eps, delta)
    rho = sum((1 / (2 * s) for s in plan.sigma2), Fraction(0))
    assert abs(float(rho) - plan.rho) <= 1e-12 * plan.rho
    assert cdp_delta(plan.rho, eps) <= delta * GAUSSIAN_DELTA_SHARE
    new = math.fsum(gaussian_tail(t - 1, s) for t, s in zip(plan.thresholds, plan.sigma2, strict=True))
    assert math.exp(eps) * new <= delta * (1 - GAUSSIAN_DELTA_SHARE) * (1 + 1e-12)
    assert all(s.denominator & (s.denominator - 1) == 0 for s in plan.sigma2)  # dyadic, for the sampler


def test_plan_weights_are_shares_of_rho() -> None:
    """Weight 16 for the target (4², i.e. a quarter of a predictor's noise s.d., as Laplace's
    weight 4 gives): its σ² is a sixteenth, to the dyadic rounding."""
    plan = gaussian_plan([1.0] * 8 + [16.0], 0.14, 1e-6)
    assert plan.sigma2[0] == plan.sigma2[7]
    assert abs(float(plan.sigma2[0] / plan.sigma2[8]) - 16) < 1e-3


def test_many_columns_get_lower_thresholds_than_per_column_laplace() -> None:
    """Adult's nine categorical columns at the default domain share of ε = 1 (0.2 over 14 used
    columns, the target weighing 4): every threshold is lower than per-column Laplace's
    (docs/domain-reference.md, "Many columns"); with one column Laplace is better."""
    eps_cat, delta = 0.2 * 12 / 17, 1e-6
    plan = gaussian_plan([1.0] * 8 + [16.0], eps_cat, delta)
    lap_pred = threshold(eps_cat / 12, delta / 9)
    lap_target = threshold(eps_cat * 4 / 12, delta / 9)
    assert (lap_pred, lap_target) == (1304, 328) and plan.thresholds == (776,) * 8 + (196,)  # docs/domain-reference.md
    assert gaussian_plan([1.0], 0.2, delta).thresholds[0] > threshold(0.2, delta)


def _shares(predictors: int, numeric: int, eps: float = 0.2, delta: float = 1e-6) -> tuple:
    """A no-schema run's categorical budgets: ``predictors`` categorical predictors, ``numeric``
    numeric columns and a target of weight 4 sharing ``eps`` (dpkit.domain.discover.column_budgets)."""
    total = predictors + numeric + 4
    budgets = [(eps / total, delta / (predictors + 1))] * predictors + [(eps * 4 / total, delta / (predictors + 1))]
    return budgets, [1.0] * predictors + [16.0], eps * (predictors + 4) / total, delta


@pytest.mark.parametrize(("predictors", "numeric", "expected"), [
    (0, 4, "laplace"),    # the target alone (Iris): √m gains nothing, Gaussian tails cost more
    (1, 3, "laplace"),
    (5, 2, "laplace"),    # bench missing-heavy's shape: 1,027 -> 696 for a predictor, not halved
    (8, 5, "laplace"),    # Adult: 1,641 -> 895, where publish loses with the longer lists
    (12, 2, "gaussian"),  # from about 12 predictors the Gaussian halves every threshold
    (22, 0, "gaussian"),  # mushroom-wide: 2,661 -> 871
])
def test_auto_partition_picks_each_mechanism_where_expected(predictors: int, numeric: int, expected: str) -> None:
    """The auto choice: the Gaussian exactly when it lowers every column's threshold and at least
    halves the largest (checked against the two mechanisms' own thresholds), else the Laplace."""
    budgets, weights, eps, delta = _shares(predictors, numeric)
    assert choose_partition(budgets, weights, eps, delta) == expected
    lap = [threshold(e, d) for e, d in budgets]
    gauss = gaussian_plan(weights, eps, delta).thresholds
    lower = all(g < x for x, g in zip(lap, gauss, strict=True))
    assert (expected == "gaussian") == (lower and 2 * max(gauss) < max(lap))
    assert lower == (predictors >= 4)  # lower from four predictors, the largest halved from about 12


def test_auto_partition_reads_public_numbers_only() -> None:
    """choose_partition takes no counts at all; and in a discovery, two data sets of the same
    columns (their counts far apart) get the same choice, which the report names."""
    import inspect

    assert list(inspect.signature(choose_partition).parameters) == ["budgets", "weights", "epsilon", "delta"]
    from dpkit.domain.discover import DomainOptions, discover
    from dpkit.domain.metadata import ColumnMeta
    from dpkit.domain.profile import Categories

    names = [f"c{i}" for i in range(14)] + ["y"]  # 14 predictors: the Gaussian halves the largest threshold
    metas = [ColumnMeta(c, "categorical") for c in names]
    picked = set()
    for scale in (100, 10_000):
        cats = {c: Categories(("u", "v"), np.array([3 * scale, 5 * scale], dtype=np.int64), np.zeros(2, bool))
                for c in names}
        acc = Accountant(0.2, delta=1e-6)
        disc = discover(metas, cats, {}, target="y", tokens=(), epsilon=0.2, delta=1e-6, rng=make_rng(scale),
                        accountant=acc, options=DomainOptions(empty="ignore", partition="auto"))
        picked.add(disc.partition)
        assert ("discrete gaussian" in acc.spends[0].mechanism) == (disc.partition == "gaussian")
    assert picked == {"gaussian"}


def test_prefer_gaussian_is_pareto() -> None:
    """Every threshold strictly lower and every spread no larger; nothing to compare: Laplace."""
    assert prefer_gaussian([(10, 9), (5, 4)]) and not prefer_gaussian([(10, 9), (5, 5)])
    assert prefer_gaussian([(10, 4)], gain=2) and not prefer_gaussian([(10, 5)], gain=2)
    assert prefer_gaussian([(10, 9)], [(2.0, 2.0)]) and not prefer_gaussian([(10, 9)], [(2.0, 2.1)])
    assert not prefer_gaussian([])
    with pytest.raises(DpkitUsageError, match="one weight"):
        choose_partition([(0.1, 1e-6)], [1.0, 1.0], 0.1, 1e-6)


def test_plan_refuses_bad_weights() -> None:
    with pytest.raises(DpkitUsageError, match="weight"):
        gaussian_plan([], 1.0, 1e-6)
    with pytest.raises(DpkitUsageError, match="weight"):
        gaussian_plan([1.0, 0.0], 1.0, 1e-6)


# --------------------------------------------------------------------------- the mechanism


def test_joint_selection_spends_once_and_keeps_public_cells() -> None:
    acc = Accountant(1.0, delta=1e-5)
    counts = [np.array([0, 5000, 3], dtype=np.int64), np.array([4000, 1], dtype=np.int64)]
    public = [np.array([True, False, False]), np.array([False, False])]
    sels = joint_partition_selection(counts, [1.0, 1.0], epsilon=0.5, delta=1e-5, rng=make_rng(3),
                                     accountant=acc, step="domain: categories of a, b", public=public)
    (spend,) = acc.spends
    assert spend.epsilon == 0.5 and spend.delta == 1e-5 and spend.sensitivity == math.sqrt(2)
    assert "discrete gaussian, 2 columns" in spend.mechanism
    assert list(sels[0].selected) == [0, 1] and list(sels[1].selected) == [0]  # the 3 and the 1: far below τ
    assert sels[0].threshold == sels[1].threshold > 3


def test_joint_selection_refuses_mismatched_inputs() -> None:
    acc = Accountant(1.0, delta=1e-5)
    with pytest.raises(DpkitUsageError, match="one weight"):
        joint_partition_selection([np.array([1])], [1.0, 1.0], epsilon=0.5, delta=1e-6, rng=make_rng(1),
                                  accountant=acc, step="s", public=[np.array([False])])
    with pytest.raises(DpkitUsageError, match="counts >= 0"):
        joint_partition_selection([np.array([-1])], [1.0], epsilon=0.5, delta=1e-6, rng=make_rng(1),
                                  accountant=acc, step="s", public=[np.array([False])])
    assert acc.spends == ()


@pytest.mark.statistical
def test_joint_singleton_release_rate_is_within_its_share_of_delta() -> None:
    """A record's new values: 3 columns of 40k singletons each at a large δ (so the event is
    seen): per column the release rate is at most δ_new/3 = (δ/2)/(3e^ε), 4.5σ binomial band."""
    n, eps, delta = 40_000, 0.5, 0.06
    acc = Accountant(eps, delta=delta)
    ones = [np.ones(n, dtype=np.int64)] * 3
    sels = joint_partition_selection(ones, [1.0, 1.0, 1.0], epsilon=eps, delta=delta, rng=make_rng(2026),
                                     accountant=acc, step="singletons", public=[np.zeros(n, bool)] * 3)
    bound = delta * (1 - GAUSSIAN_DELTA_SHARE) / math.exp(eps) / 3
    for sel in sels:
        rate = sel.selected.size / n
        assert rate <= bound + 4.5 * math.sqrt(bound * (1 - bound) / n), (rate, bound)
        assert rate > 0  # the event is reachable: the test could fail
