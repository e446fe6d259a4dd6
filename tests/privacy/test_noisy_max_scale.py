"""Report-noisy-max's scale does not depend on the data (issue 38, finding 3).

Up to 0.4 the utilities were scaled by their common dyadic denominator: a data set whose Gini
scores were integers took scale 1 (noise DLap(ε/2)), its neighbour with one fractional score
scale 1024 (noise DLap(ε/2050)) — two mechanisms, and on "the trailing candidate is chosen"
the privacy loss was 2.77 at ε = 1 (16.75 at N = 65,536). These tests read the mechanism's
integer gap and noise parameter through its noise sampler and compute the exact law of the
choice between two candidates in closed form, so they check the guarantee itself, not a
sample of it (the events have probability about e^-2000).
"""

import math

import numpy as np
import pytest

import dpkit.privacy.mechanisms as mech
from dpkit.algorithms.publish.scoring import piece_term
from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, make_rng


def _gap_and_noise(u, monkeypatch, **kw):  # noqa: ANN001, ANN202
    """(g, p): the integer gap s0 − s1 of the scaled scores and the DLap parameter p of the noise.

    The noise sampler is replaced by one that returns [0, t + ½] (no ties): candidate 1 wins
    iff t ≥ g, and the smallest such t is found by bisection."""
    seen = []
    t_box = [0]

    def fake(rng, eps, size):  # noqa: ANN001, ANN202
        seen.append(eps)
        return np.array([0.0, t_box[0] + 0.5])

    monkeypatch.setattr(mech.laplace, "sample_discrete_laplace", fake)

    def wins(t: int) -> bool:
        t_box[0] = t
        return mech.report_noisy_max(u, epsilon=1.0, rng=make_rng(0), accountant=Accountant(1e9), step="s",
                                     **kw) == 1

    lo, hi = -1, 1
    while not wins(hi):
        hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if wins(mid) else (mid, hi)
    assert len(set(seen)) == 1
    return hi, float(seen[0])


def _log_p_second(g: int, p: float) -> float:
    """log P(candidate 1 is chosen): scores s0 = s1 + g, i.i.d. DLap(p) noise, ties split evenly.

    W = Z1 − Z0 has P(W = d) = c² q^d (d + C) for d ≥ 0 (q = e^-p, c = (1−q)/(1+q),
    C = (1+q²)/(1−q²)), so P(W > g) = c² q^{g+1} ((g+1+C)/(1−q) + q/(1−q)²)."""
    q = math.exp(-p)
    c2 = 2 * math.log((1 - q) / (1 + q))
    big_c = (1 + q * q) / (1 - q * q)
    tail = c2 - (g + 1) * p + math.log((g + 1 + big_c) / (1 - q) + q / (1 - q) ** 2)
    tie = c2 - g * p + math.log(g + big_c) - math.log(2)
    return float(np.logaddexp(tail, tie))


def _gini(counts) -> list[float]:  # noqa: ANN001
    return [float(piece_term(np.asarray(c, dtype=np.int64), "gini").sum()) for c in counts]


def _neighbours(n: int):  # noqa: ANN202
    """The worked case: X1 equal to the class, X2 independent, n records; and every data set
    one record away (added: any x1, x2, class; removed: any record of the table)."""
    h, k = n // 2, n // 4
    base = np.array([[[h, 0], [0, h]], [[k, k], [k, k]]])  # candidate × child × class
    for sign in (1, -1):
        for x1 in (0, 1):
            for x2 in (0, 1):
                for c in (0, 1):
                    if sign < 0 and x1 != c:
                        continue
                    d = base.copy()
                    d[0, x1, c] += sign
                    d[1, x2, c] += sign
                    yield _gini(base), _gini(d)


@pytest.mark.parametrize("n", [8192, 65536])
def test_privacy_loss_of_a_gini_selection_is_at_most_epsilon(monkeypatch, n):  # noqa: ANN001
    # ε = 1, general (not monotone) report-noisy-max: the exact loss on "X2 chosen" was
    # 2.77 (n = 8,192) and 16.75 (n = 65,536); with the fixed grid it is 0.75 for both
    worst = 0.0
    for u, v in _neighbours(n):
        lp = [_log_p_second(*_gap_and_noise(x, monkeypatch)) for x in (u, v)]
        worst = max(worst, abs(lp[0] - lp[1]))
    assert worst <= 1.0 + 1e-9, worst


def test_the_noise_scale_is_the_same_for_any_utilities(monkeypatch):  # noqa: ANN001
    # integer, dyadic and arbitrary real utilities: one noise parameter (Δ = 1, G = 1024,
    # Δ' = 1025, general: ε/2050); before, 1/2 for integers and 1/4 for halves
    ps = {_gap_and_noise(u, monkeypatch)[1] for u in ([3.0, 0.0], [3.5, 0.0], [3.1, 0.2], [8193.0, 4096.49])}
    assert ps == {1 / 2050}


def test_declared_integer_utilities_keep_the_exact_scale(monkeypatch):  # noqa: ANN001
    # counts and MAXGDDP's Max are integers on every data set (integer=True): scale 1, Δ' = Δ
    assert _gap_and_noise([5.0, 2.0], monkeypatch, integer=True, monotone=True) == (3, 1.0)
    assert _gap_and_noise([5.0, 2.0], monkeypatch, integer=True) == (3, 0.5)
    # a dyadic Δ is public: its denominator scales the scores (Δ = ½: D = 2, Δ' = 1)
    assert _gap_and_noise([5.0, 2.0], monkeypatch, integer=True, sensitivity=0.5) == (6, 0.5)
    # real utilities are rounded on the grid 1/1024 at Δ' = 1025
    assert _gap_and_noise([5.0, 2.0], monkeypatch) == (3 * 1024, 1 / 2050)


def test_utilities_declared_integer_must_be_whole_numbers():
    acc = Accountant(1.0)
    with pytest.raises(DpkitUsageError, match="integer"):
        mech.report_noisy_max([1.0, 2.5], epsilon=1.0, rng=make_rng(0), accountant=acc, step="s", integer=True)
    assert acc.spent == 0
