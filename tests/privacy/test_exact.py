"""The exact integer samplers (issue 14, item 1): no float cut-off, the right distribution."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpkit.errors import DpkitUsageError
from dpkit.privacy import exact, make_rng
from dpkit.privacy.mechanisms import sample_discrete_laplace, sample_geometric


def old_cutoff(eps: float) -> int:
    """The largest value the old 53-bit float inversion could return."""
    return math.floor(53 * math.log(2) / eps)


class RiggedRng:
    """Uniform draws chosen to walk the far tail: every Bernoulli(1/K) at K = 2 succeeds for
    the first ``successes`` calls (so V = ``successes``), everything else misses."""

    def __init__(self, successes: int) -> None:
        self.left = successes

    def integers(self, low, high, size, dtype=np.int64):  # noqa: ANN001, ANN201
        high = np.broadcast_to(np.asarray(high, dtype=np.int64), (size,))
        if np.all(high == 2) and self.left > 0:
            self.left -= 1
            return np.zeros(size, dtype=dtype)
        return (high - 1).astype(dtype)


@pytest.mark.parametrize(("eps", "v"), [(40.0, 100), (1.0, 60), (0.1, 400)])
def test_tail_past_the_old_cutoff_is_reachable(eps: float, v: int) -> None:
    """ε = 40: the old sampler always drew 0; with V = 100 the exact one draws ⌊100/40⌋ = 2.
    ε = 1: old cut-off 36, here 60; ε = 0.1: old cut-off 367, here 4009."""
    s, t = exact.noise_fraction(eps)
    g = int(exact.geometric(RiggedRng(v), s, t, 1)[0])
    assert g > old_cutoff(eps)
    assert g == (t - 1 + v * t) // s  # U = t − 1 (kept), V = v: X = U + t·V, G = ⌊X/s⌋


def test_sample_geometric_goes_through_the_exact_sampler() -> None:
    g = sample_geometric(RiggedRng(100), math.exp(-40.0), 1)
    assert int(g[0]) == 2  # U = 0 (γ = 0 kept), V = 100: X = 100, ⌊100/40⌋


def test_noise_fraction_is_exact_for_floats_and_never_rounds_up() -> None:
    assert exact.noise_fraction(0.1) == Fraction(0.1).as_integer_ratio()
    assert exact.noise_fraction(3.0) == (3, 1)
    for eps in (Fraction(1, 3), Fraction(2, 7), 1e-12, 1e-17, Fraction(1, 10) / Fraction(3)):
        s, t = exact.noise_fraction(eps)
        assert Fraction(s, t) <= Fraction(eps) and t & (t - 1) == 0 and t <= 2**62
        assert Fraction(s, t) > Fraction(eps) * (1 - Fraction(1, 30))
    assert exact.noise_fraction(1e9) == (2**16, 1)  # rounded down (more noise), never up
    with pytest.raises(DpkitUsageError, match="too small"):
        exact.noise_fraction(1e-19)
    with pytest.raises(DpkitUsageError):
        exact.noise_fraction(0.0)


@pytest.mark.parametrize(("num", "den"), [(1, 2), (3, 3), (0, 5), (7, 10)])
def test_bernoulli_exp_rate(num: int, den: int) -> None:
    n = 200_000
    b = exact.bernoulli_exp(make_rng(7), np.full(n, num), den)
    p = math.exp(-num / den)
    assert abs(b.mean() - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_discrete_laplace_of_an_exact_fraction_matches_pmf() -> None:
    """ε/Δ = 1/3 (not a float): P(X = k) = (1-q)/(1+q) q^|k|, q = e^{-1/3}, 5-sigma per bin."""
    n = 200_000
    x = sample_discrete_laplace(make_rng(8), Fraction(1, 3), n)
    q = math.exp(-1 / 3)
    for k in range(-6, 7):
        p = (1 - q) / (1 + q) * q ** abs(k)
        assert abs(np.mean(x == k) - p) < 5 * math.sqrt(p * (1 - p) / n), k


def test_skips_slow_path_agrees_with_fast_path() -> None:
    """The exact (decimal) decision returns what the float bracket certified, and decides
    the cases the bracket cannot (w = 2^64 − 1: U may be arbitrarily small)."""
    rng = make_rng(9)
    s, t = exact.noise_fraction(0.7)
    c = math.log1p(math.exp(-0.7))
    for w in [0, 1, 2**62, 2**63 - 1, 2**63, 2**63 + 12345, 2**64 - 2] + list(rng.integers(0, 2**62, 20)):
        w = int(w)
        u_mid = 1 - (w + 0.5) / 2**64
        expect = math.floor(-math.log(u_mid) / c) if u_mid > 0 else None
        got = exact._decide_skip_exactly(rng, w, s, t, 10**12)
        if expect is not None and w < 2**64 - 2:
            assert got == expect, w
    got = exact._decide_skip_exactly(rng, 2**64 - 1, s, t, 10**12)
    assert got >= math.floor(64 * math.log(2) / c)  # U < 2^-64: at least this many failures


def test_skips_have_the_geometric_distribution() -> None:
    """P(S ≥ g) = (1 + q)^-g, q = e^-ε (gaps between released empty cells)."""
    n, eps = 200_000, 1.5
    s, t = exact.noise_fraction(eps)
    skips = exact.bernoulli_skips(make_rng(10), s, t, n, 10**9)
    q = math.exp(-eps)
    for g in (1, 2, 5, 10, 20):
        p = (1 + q) ** -g
        assert abs(np.mean(skips >= g) - p) < 5 * math.sqrt(p * (1 - p) / n), g


def test_skips_at_huge_epsilon_leave_the_table() -> None:
    s, t = exact.noise_fraction(5000.0)
    assert np.all(exact.bernoulli_skips(make_rng(11), s, t, 1000, 10**15) == 10**15)


def test_randomness_is_the_runs_generator() -> None:
    """Same seed, same draws; the default (ChaCha20) generator works too."""
    a = sample_discrete_laplace(make_rng(5), 0.3, 100)
    b = sample_discrete_laplace(make_rng(5), 0.3, 100)
    assert np.array_equal(a, b)
    assert sample_discrete_laplace(make_rng(), 0.3, 100).shape == (100,)
