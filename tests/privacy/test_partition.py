"""Partition selection (dpkit.privacy.mechanisms.partition, issue 22): the discrete-Laplace threshold and its
failure probability, the mechanism's accounting, and (ε, δ) in the accountant and the report."""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, BudgetExceededError, exact, make_rng
from dpkit.privacy.mechanisms.partition import (
    dlap_tail,
    optimal_threshold_gap,
    partition_selection,
    singleton_release_probability,
    threshold,
)


def exact_tail(k: int, eps: float) -> Fraction | float:
    """P(Z ≥ k) for DLap(ε), from the pmf summed in floats (an independent check)."""
    q = math.exp(-eps)
    return q**k / (1 + q)


# --------------------------------------------------------------------------- the threshold


@pytest.mark.parametrize(("eps", "delta", "tau"), [
    (1.0, 1e-6, 15),  # q^14/(1+q) = 6.1e-7 ≤ 1e-6 < q^13/(1+q) = 1.66e-6
    (0.1, 1e-6, 133),
    (0.005, 1e-6, 2626),
    (10.0, 0.5, 2),  # never below 2: τ = 1 would release a singleton with probability > 1/2
])
def test_threshold_known_values(eps: float, delta: float, tau: int) -> None:
    assert threshold(eps, delta) == tau


def test_threshold_is_the_discrete_one_not_the_continuous_one() -> None:
    """The continuous-Laplace rule τ = ⌈1 + ln(1/(2δ))/ε⌉ is wrong for DLap noise: at ε = 3.3,
    δ = 1e-3 it gives 3, where the discrete tail P(Z ≥ 2) = q²/(1+q) = 1.3e-3 > δ; dpkit's is 4."""
    eps, delta = 3.3, 1e-3
    continuous = math.ceil(1 + math.log(1 / (2 * delta)) / eps)
    assert continuous == 3 and exact_tail(continuous - 1, eps) > delta
    assert threshold(eps, delta) == 4 and exact_tail(3, eps) <= delta
    for eps, delta in [(0.5, 1e-6), (0.05, 1e-9), (2.0, 1e-4)]:
        tau = threshold(eps, delta)
        assert exact_tail(tau - 1, eps) <= delta * (1 + 1e-9)
        assert exact_tail(tau - 2, eps) > delta or tau == 2


@given(eps=st.floats(min_value=1e-3, max_value=20.0), delta=st.floats(min_value=1e-12, max_value=0.5))
def test_threshold_bounds_singletons_and_is_minimal(eps: float, delta: float) -> None:
    """For the exact noise parameter a = s/t used: P(1 + Z ≥ τ) ≤ δ, and τ − 1 would not do
    (unless τ is the floor of 2)."""
    tau = threshold(eps, delta)
    s, t = exact.noise_fraction(eps)
    assert tau >= 2
    d = decimal.Decimal(delta)
    assert singleton_release_probability(tau, s, t) <= d
    if tau > 2:
        # minimal up to the 1e-40 guard band of the derivation
        assert singleton_release_probability(tau - 1, s, t) > d * (1 - decimal.Decimal(10) ** -39)


@given(eps=st.floats(min_value=1e-3, max_value=20.0),
       d1=st.floats(min_value=1e-12, max_value=0.4), d2=st.floats(min_value=1e-12, max_value=0.4))
def test_threshold_is_monotone_in_delta(eps: float, d1: float, d2: float) -> None:
    lo, hi = sorted((d1, d2))
    assert threshold(eps, lo) >= threshold(eps, hi)


def test_dlap_tail_is_the_distribution_of_the_sampler() -> None:
    s, t = exact.noise_fraction(0.7)
    total = sum(dlap_tail(k, s, t) - dlap_tail(k + 1, s, t) for k in range(-200, 200))
    assert abs(total - 1) < decimal.Decimal("1e-40")
    from dpkit.privacy.mechanisms import discrete_laplace_pmf

    for k in (-3, 0, 2):  # P(Z = k) = tail(k) − tail(k+1) equals the sampler's pmf
        assert float(dlap_tail(k, s, t) - dlap_tail(k + 1, s, t)) == pytest.approx(float(discrete_laplace_pmf(k, 0.7)))


@pytest.mark.parametrize("delta", [0, -1e-6, 1.0, float("nan"), "x", True])
def test_threshold_refuses_bad_delta(delta: object) -> None:
    with pytest.raises(DpkitUsageError, match="delta"):
        threshold(1.0, delta)  # type: ignore[arg-type]


def test_optimal_mechanism_gap_is_reported() -> None:
    tau, optimal = optimal_threshold_gap(0.1, 1e-6)
    assert tau == 133 and optimal < tau


# --------------------------------------------------------------------------- the failure probability


@pytest.mark.statistical
@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.01), (0.3, 0.002)])
def test_singleton_release_rate_is_at_most_delta(eps: float, delta: float) -> None:
    """A value held by one record: released in ≤ δ of runs (400k runs, 4.5σ binomial band),
    and at the rate the derivation predicts."""
    n = 400_000
    rng = make_rng(2024)
    acc = Accountant(n * eps, delta=0.9)  # the accountant only records; one batched draw below
    sel = partition_selection(np.ones(n, dtype=np.int64), epsilon=eps, delta=delta, rng=rng,
                              accountant=acc, step="singletons")
    rate = sel.selected.size / n
    tau = threshold(eps, delta)
    s, t = exact.noise_fraction(eps)
    p = float(singleton_release_probability(tau, s, t))
    sigma = math.sqrt(p * (1 - p) / n)
    assert p <= delta
    assert abs(rate - p) <= 4.5 * sigma, (rate, p)
    assert rate <= delta + 4.5 * sigma


@pytest.mark.statistical
def test_frequent_value_is_released_and_noisy_count_unbiased() -> None:
    n = 20_000
    rng = make_rng(7)
    acc = Accountant(1.0, delta=1e-6)
    counts = np.full(n, 100, dtype=np.int64)  # well above τ = 15
    sel = partition_selection(counts, epsilon=1.0, delta=1e-6, rng=rng, accountant=acc, step="s")
    assert sel.selected.size == n
    assert abs(sel.noisy.mean() - 100) < 0.05


# --------------------------------------------------------------------------- the mechanism


def test_partition_selection_spends_epsilon_and_delta_once() -> None:
    acc = Accountant(1.0, delta=1e-5)
    sel = partition_selection([5000, 3, 0, 7000], epsilon=0.5, delta=4e-6, rng=make_rng(1), accountant=acc,
                              step="categories of a")
    assert [s.delta for s in acc.spends] == [4e-6] and acc.spent == 0.5
    assert set(sel.selected.tolist()) == {0, 3}
    assert sel.threshold == threshold(0.5, 4e-6)
    assert "threshold" in acc.spends[0].mechanism


def test_public_cells_are_released_whatever_their_count() -> None:
    acc = Accountant(1.0, delta=1e-5)
    sel = partition_selection([0, 1, 2], epsilon=1.0, delta=1e-6, rng=make_rng(3), accountant=acc, step="s",
                              public=[True, False, False])
    assert sel.selected.tolist() == [0]


def test_refused_spend_draws_and_records_nothing() -> None:
    acc = Accountant(1.0, delta=1e-6)
    with pytest.raises(BudgetExceededError, match="delta"):
        partition_selection([100], epsilon=0.5, delta=2e-6, rng=make_rng(1), accountant=acc, step="s")
    assert acc.spends == ()
    with pytest.raises(DpkitUsageError):
        partition_selection([1.5], epsilon=0.5, delta=1e-7, rng=make_rng(1), accountant=acc, step="s")
    with pytest.raises(DpkitUsageError):
        partition_selection([-1], epsilon=0.5, delta=1e-7, rng=make_rng(1), accountant=acc, step="s")
    assert acc.spends == ()


# --------------------------------------------------------------------------- (ε, δ) accounting


def test_pure_epsilon_report_has_no_delta_keys() -> None:
    acc = Accountant(1.0)
    acc.spend("a", "m", 0.5)
    rep = acc.to_report()
    assert "delta_budget" not in rep and "delta_spent" not in rep
    assert set(rep["spends"][0]) == {"step", "mechanism", "epsilon", "sensitivity", "scope"}


def test_delta_budget_and_spends_compose() -> None:
    acc = Accountant(1.0, delta=1e-6)
    acc.spend("a", "m", 0.25, delta=4e-7)
    acc.spend("b", "m", 0.25, delta=6e-7)
    acc.spend("c", "m", 0.25)
    assert acc.delta_spent == pytest.approx(1e-6) and acc.delta_remaining == pytest.approx(0, abs=1e-18)
    rep = acc.to_report()
    assert rep["delta_budget"] == 1e-6 and rep["delta_spent"] == acc.delta_spent
    assert [("delta" in s) for s in rep["spends"]] == [True, True, False]
    with pytest.raises(BudgetExceededError, match="requested delta"):
        acc.spend("d", "m", 0.1, delta=1e-9)
    assert len(acc.spends) == 3


def test_delta_without_a_budget_is_refused() -> None:
    acc = Accountant(1.0)
    with pytest.raises(BudgetExceededError, match="delta"):
        acc.spend("a", "m", 0.1, delta=1e-9)


@pytest.mark.parametrize("delta", [-1e-9, 1.0, 2.0, float("inf"), "nan", True])
def test_accountant_refuses_a_bad_delta_budget(delta: object) -> None:
    with pytest.raises(DpkitUsageError, match="delta"):
        Accountant(1.0, delta=delta)  # type: ignore[arg-type]
