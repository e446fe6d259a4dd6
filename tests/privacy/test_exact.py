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
    """A generator whose raw 64-bit words are chosen: U = 1 − (w + R)/2^64 is then as small
    as we like, which walks the far tail (then ordinary random words)."""

    def __init__(self, *words: int) -> None:
        self.words = list(words)
        self._real = make_rng(1).bit_generator
        self.bit_generator = self

    def random_raw(self, size=None):  # noqa: ANN001, ANN201
        n = 1 if size is None else int(size)
        take, self.words = self.words[:n], self.words[n:]
        out = np.array(take + list(self._real.random_raw(n - len(take))), dtype=np.uint64)
        return out if size is not None else int(out[0])


@pytest.mark.parametrize(("eps", "words", "at_least"), [
    (1.0, [2**64 - 2**10], 37),  # U ≤ 2^-54: G = ⌊54 ln 2⌋ = 37 > old cut-off 36
    (40.0, [2**64 - 1, 0], 1),  # U ≈ 2^-64: G = ⌊64 ln 2 / 40⌋ = 1; the old sampler: always 0
    (0.1, [2**64 - 1, 2**64 - 1, 5], 886),  # U < 2^-128: G ≥ ⌊128 ln 2 / 0.1⌋ > old cut-off 367
])
def test_tail_past_the_old_cutoff_is_reachable(eps: float, words: list[int], at_least: int) -> None:
    s, t = exact.noise_fraction(eps)
    g = int(exact.geometric(RiggedRng(*words), s, t, 1)[0])
    assert g >= at_least > old_cutoff(eps)


def test_tail_value_is_the_exact_floor() -> None:
    """w = 2^64 − 2^10: U ∈ (2^-54 − 2^-64, 2^-54], so G = ⌊-ln U⌋ = 37 exactly at ε = 1."""
    assert int(exact.geometric(RiggedRng(2**64 - 2**10), 1, 1, 1)[0]) == 37


def test_sample_geometric_goes_through_the_exact_sampler() -> None:
    g = sample_geometric(RiggedRng(2**64 - 1, 0), math.exp(-40.0), 1)
    assert int(g[0]) == 1


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
        got = exact._decide_exactly(rng, w, s, t, 10**12, True)
        if expect is not None and w < 2**64 - 2:
            assert got == expect, w
    got = exact._decide_exactly(rng, 2**64 - 1, s, t, 10**12, True)
    assert got >= math.floor(64 * math.log(2) / c)  # U < 2^-64: at least this many failures


def test_geometric_slow_path_agrees_with_fast_path() -> None:
    rng = make_rng(12)
    for w in list(make_rng(13).integers(0, 2**63, 30)) + [2**63 + 7, 2**64 - 2**20]:
        w = int(w)
        expect = math.floor(-math.log(1 - (w + 0.5) / 2**64) / 0.3)
        assert exact._decide_exactly(rng, w, *Fraction(0.3).as_integer_ratio(), 2**62, False) == expect


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


def test_small_draws_have_the_geometric_distribution() -> None:
    """Draws of fewer than 32 take the scalar path (forest nodes): same law, P(G ≥ g) = q^g."""
    rng, eps = make_rng(14), 0.7
    s, t = exact.noise_fraction(eps)
    g = np.concatenate([exact.geometric(rng, s, t, 5) for _ in range(30_000)])
    n, q = g.size, math.exp(-eps)
    for k in (1, 2, 4, 8, 12):
        p = q**k
        assert abs(np.mean(g >= k) - p) < 5 * math.sqrt(p * (1 - p) / n), k


def test_small_and_vector_paths_agree_on_the_same_words() -> None:
    """Both paths decide the same G from the same raw words."""
    s, t = exact.noise_fraction(0.3)
    words = [int(w) for w in make_rng(15).integers(0, 2**63, 40)] + [2**64 - 2**12, 2**63 + 99]
    small = np.concatenate([exact.geometric(RiggedRng(w), s, t, 1) for w in words])
    vector = exact.geometric(RiggedRng(*words), s, t, len(words))
    assert np.array_equal(small, vector)


def test_private_rows_mode() -> None:
    from dpkit.run import private_rows_mode

    assert private_rows_mode("-") == 0o600 and private_rows_mode(None) == 0o600
    assert private_rows_mode("/nonexistent/x.csv") == 0o600
