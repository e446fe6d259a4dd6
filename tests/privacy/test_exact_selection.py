"""Exact selection (issue 24 item 4): the Bernoulli(e^{-x}) coin of Canonne, Kamath & Steinke
(2020, Alg. 1) and the selection mechanisms built on it keep every candidate's exact, positive
probability — no float exp() underflow, no 53-bit coin, so no δ."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpkit.privacy import exact
from dpkit.privacy import mechanisms as mech
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.rng import make_rng

SEED = 20240524


def _log(f: Fraction) -> float:
    """ln of a positive fraction too small for a float (e^-800 underflows)."""
    return math.log(f.numerator) - math.log(f.denominator)


@pytest.mark.statistical
@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(37, 10)])
def test_bernoulli_exp_frequency_matches_exp_minus_x(x: Fraction) -> None:
    # 5,000 coins per x; chi-square (1 dof) at p > 1e-4: a seeded run, false alarm < 1e-4
    rng = make_rng(SEED)
    n = 5_000
    ones = sum(exact.bernoulli_exp(rng, x) for _ in range(n))
    p = math.exp(-float(x))
    if p == 1.0:
        assert ones == n
        return
    pval = stats.chisquare([ones, n - ones], [n * p, n * (1 - p)]).pvalue
    assert pval > 1e-4, (x, ones, n * p)


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 7), Fraction(1), Fraction(73, 2), Fraction(800)])
def test_bernoulli_exp_law_is_exactly_exp_minus_x(x: Fraction) -> None:
    # the sampler's law written symbolically (alternating series): brackets e^{-x} to 1e-12
    # relative, and is positive even where a float exp() gives 0 (x = 800)
    lo, hi = exact.bernoulli_exp_probability(x)
    assert 0 < lo <= hi
    assert abs(_log(lo) + float(x)) < 1e-9 * max(1.0, float(x))
    assert abs(_log(hi) + float(x)) < 1e-9 * max(1.0, float(x))


def test_a_candidate_trailing_by_more_than_72_8_delta_over_epsilon_can_win(monkeypatch: pytest.MonkeyPatch) -> None:
    # Before issue 24 permute-and-flip compared a 53-bit float coin with exp(-x): at a lead of
    # 80Δ/ε (x = 40 < 72.8·ln2·...; here x = 40 with ε=1 not monotone) p = e^-40 ≈ 4e-18 < 2^-53
    # could never be accepted, at a lead of 1500Δ/ε exp() is exactly 0. Now the coin for the
    # trailer is Bernoulli(e^{-x}) on the exact rational x, whose law is positive:
    utilities = [0.0, -1500.0]
    gaps = mech.base._gaps(np.array(utilities), Fraction(1, 2))
    assert gaps == [Fraction(0), Fraction(750)]
    lo, hi = exact.bernoulli_exp_probability(gaps[1])
    assert lo > 0 and abs(_log(lo) + 750) < 1e-9 * 750
    # and the mechanism does return the trailer when its coin comes up 1 (forced here)
    monkeypatch.setattr(exact, "bernoulli_exp", lambda rng, x: True)
    rng = make_rng(SEED)
    won = {mech.permute_and_flip(utilities, epsilon=1.0, rng=rng, accountant=Accountant(100), step="s")
           for _ in range(50)}
    assert won == {0, 1}


def test_exponential_mechanism_law_is_exact_for_a_far_trailer() -> None:
    # EM = rejection from the base measure with exact coins: P(i) ∝ μ_i · P(coin_i = 1), and
    # P(coin_i = 1) is exactly e^{-gap_i}: a trailer at gap 1000 has P ≈ e^{-1000} > 0
    gaps = mech.base._gaps(np.array([3000.0, 1000.0]), Fraction(1, 2))
    lo, _ = exact.bernoulli_exp_probability(gaps[1])
    assert gaps == [Fraction(0), Fraction(1000)] and lo > 0 and abs(_log(lo) + 1000) < 1e-6


@pytest.mark.statistical
def test_exponential_mechanism_selection_probabilities_on_a_small_vector() -> None:
    # P(i) ∝ exp(ε u_i / 2Δ) at ε = 1, Δ = 1; 5,000 draws, chi-square p > 1e-4
    u = np.array([0.0, 1.0, 2.5, 4.0])
    rng = make_rng(SEED)
    n = 5_000
    picks = np.bincount([mech.exponential(u, epsilon=1.0, rng=rng, accountant=Accountant(1e9), step="s")
                         for _ in range(n)], minlength=u.size)
    w = np.exp(u / 2)
    assert stats.chisquare(picks, n * w / w.sum()).pvalue > 1e-4


@pytest.mark.statistical
def test_report_noisy_max_integer_scores_has_the_law_of_dlap_plus_uniform_ties() -> None:
    # integer scores (declared: integer=True), monotone, ε = 1: the exact law, by summing over
    # the DLap noise of the other candidate (two candidates, ties split evenly); 5,000 draws,
    # chi-square p > 1e-4
    u = [0, 2]
    rng = make_rng(SEED)
    n = 5_000
    picks = np.bincount([mech.report_noisy_max(u, epsilon=1.0, rng=rng, accountant=Accountant(1e9), step="s",
                                               monotone=True, integer=True) for _ in range(n)], minlength=2)
    q = math.exp(-1.0)
    ks = np.arange(-40, 41)
    pmf = (1 - q) / (1 + q) * q ** np.abs(ks)
    # P(0 wins) = P(Z0 > Z1 + 2) + ½ P(Z0 = Z1 + 2), Z0, Z1 i.i.d. DLap(1)
    p0 = sum(pmf[i] * pmf[j] * (1.0 if ks[i] > ks[j] + 2 else 0.5 if ks[i] == ks[j] + 2 else 0.0)
             for i in range(ks.size) for j in range(ks.size))
    assert stats.chisquare(picks, [n * p0, n * (1 - p0)]).pvalue > 1e-4


def test_uniform_below_covers_big_ranges_exactly() -> None:
    rng = make_rng(SEED)
    n = 3 * 2**70 + 1
    draws = [exact.uniform_below(rng, n) for _ in range(200)]
    assert all(0 <= d < n for d in draws) and max(draws) > 2**70
    assert {exact.uniform_below(rng, 3) for _ in range(100)} == {0, 1, 2}
