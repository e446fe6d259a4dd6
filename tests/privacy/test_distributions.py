"""Distribution tests of the mechanisms: goodness of fit against exact distributions and
empirical privacy-loss ratios on neighbouring inputs.

Every test is marked ``statistical`` (run apart with ``pytest -m statistical``), uses a fixed
seed, and states its tolerance. Goodness-of-fit tests accept at p > 1e-3. Privacy-ratio tests
use Clopper-Pearson bounds with a Bonferroni-corrected family-wise error of 1e-4, so a correct
mechanism fails with probability < 1e-4 whatever the seed, and each test also shows that the
same mechanism run at 2ε (noise half as large) is caught.

Note: report-noisy-max with *exponential* noise is distributed as permute-and-flip (Ding,
Kifer et al. 2021, "The permute-and-flip mechanism is identical to report-noisy-max with
exponential noise"), not as the exponential mechanism (that is report-noisy-max with Gumbel
noise); ``test_rnm_exponential_is_not_the_exponential_mechanism`` shows the difference.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy import integrate, stats

from dpkit.privacy.accountant import Accountant
from dpkit.privacy.mechanisms import (
    _utilities,
    discrete_laplace,
    discrete_laplace_pmf,
    exponential,
    exponential_interval,
    grid_laplace,
    permute_and_flip,
    report_noisy_max,
    sample_discrete_laplace,
)
from dpkit.privacy.rng import make_rng

pytestmark = pytest.mark.statistical

#: goodness-of-fit tests pass when p > GOF_P
GOF_P = 1e-3
#: family-wise error of one privacy-ratio check (Bonferroni over its events and bounds)
RATIO_ALPHA = 1e-4
#: draws per neighbouring input for the (one call per draw) selection mechanisms
N_SELECT = 5_000

# =========================================================================== helpers


def clopper_pearson(k: np.ndarray, n: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds: P(p < lower) <= a and P(p > upper) <= a."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, stats.beta.ppf(a, k, n - k + 1), 0.0)
        upper = np.where(k < n, stats.beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lower, upper


def privacy_loss_lower_bound(
    sample_a: Sequence | np.ndarray,
    sample_b: Sequence | np.ndarray,
    *,
    alpha: float = RATIO_ALPHA,
    ordered: bool = False,
) -> float:
    """A lower confidence bound (level 1 - alpha) on max_S max(P_a(S)/P_b(S), P_b(S)/P_a(S)).

    The events S are the single outputs seen in either sample and, if ``ordered``, the tails
    {X <= v} and {X >= v}. For each event, the lower bound of one probability over the upper
    bound of the other; all 4·(number of events) one-sided bounds hold together with
    probability >= 1 - alpha (Bonferroni).
    """
    a, b = np.asarray(sample_a).ravel(), np.asarray(sample_b).ravel()
    values = np.union1d(a, b)
    ka = np.searchsorted(np.sort(a), values, side="right")  # cumulative counts: #{X <= v}
    kb = np.searchsorted(np.sort(b), values, side="right")
    pa = np.diff(ka, prepend=0)
    pb = np.diff(kb, prepend=0)
    events_a, events_b = [pa], [pb]
    if ordered:
        events_a += [ka, a.size - np.concatenate([[0], ka[:-1]])]  # {X <= v}, {X >= v}
        events_b += [kb, b.size - np.concatenate([[0], kb[:-1]])]
    ea, eb = np.concatenate(events_a), np.concatenate(events_b)
    one_sided = alpha / (4 * ea.size)
    lo_a, hi_a = clopper_pearson(ea, a.size, one_sided)
    lo_b, hi_b = clopper_pearson(eb, b.size, one_sided)
    return float(max(np.max(lo_a / hi_b), np.max(lo_b / hi_a)))


def ratio_check(
    sample_a: Sequence | np.ndarray,
    sample_b: Sequence | np.ndarray,
    epsilon: float,
    *,
    alpha: float = RATIO_ALPHA,
    ordered: bool = False,
) -> bool:
    """False if the samples show, at confidence 1 - alpha, an event whose probability ratio
    on the two neighbouring inputs exceeds e^epsilon (i.e. the mechanism is not ε-DP)."""
    bound = privacy_loss_lower_bound(sample_a, sample_b, alpha=alpha, ordered=ordered)
    return bound <= math.exp(epsilon)


def chisquare_p(observed: np.ndarray, probs: np.ndarray) -> float:
    """p-value of Pearson's chi-square of ``observed`` counts against ``probs``."""
    observed = np.asarray(observed, dtype=float)
    probs = np.asarray(probs, dtype=float)
    assert probs.min() * observed.sum() >= 5, "merge bins: an expected count is below 5"
    expected = probs / probs.sum() * observed.sum()
    return float(stats.chisquare(observed, expected).pvalue)


def select_many(mechanism: Callable[..., int], utilities: Sequence[float], n: int, seed: int,
                **kwargs) -> np.ndarray:
    """n independent calls of a selection mechanism (each with its own accountant)."""
    rng = make_rng(seed)
    eps = kwargs["epsilon"]
    return np.array([
        mechanism(utilities, rng=rng, accountant=Accountant(eps), step="t", **kwargs)
        for _ in range(n)
    ])


# --------------------------------------------------------------------------- exact pmfs


def softmax_probs(utilities: Sequence[float], factor: float,
                  log_measure: Sequence[float] | None = None) -> np.ndarray:
    logw = factor * np.asarray(utilities, dtype=float)
    if log_measure is not None:
        logw = logw + np.asarray(log_measure, dtype=float)
    w = np.exp(logw - logw.max())
    return w / w.sum()


def permute_and_flip_probs(utilities: Sequence[float], factor: float) -> np.ndarray:
    """Exact pmf of permute-and-flip by enumerating the n! visiting orders (n <= 7)."""
    u = np.asarray(utilities, dtype=float)
    accept = np.exp(factor * (u - u.max()))
    probs = np.zeros(u.size)
    orders = list(itertools.permutations(range(u.size)))
    for order in orders:
        survive = 1.0
        for j in order:
            probs[j] += survive * accept[j]
            survive *= 1 - accept[j]
    return probs / len(orders)


def report_noisy_max_laplace_probs(utilities: Sequence[float], scale: float) -> np.ndarray:
    """P(argmax(u + Lap(scale)) = i) = ∫ f(x - u_i) Π_{j≠i} F(x - u_j) dx, by quadrature."""
    u = np.asarray(utilities, dtype=float)

    def pdf(z: float) -> float:
        return math.exp(-abs(z) / scale) / (2 * scale)

    def cdf(z: float) -> float:
        return 0.5 * math.exp(z / scale) if z < 0 else 1 - 0.5 * math.exp(-z / scale)

    lo, hi = u.min() - 50 * scale, u.max() + 50 * scale
    probs = []
    for i in range(u.size):
        others = np.delete(u, i).tolist()

        def density(x: float, i: int = i, others: list[float] = others) -> float:
            return pdf(x - u[i]) * math.prod(cdf(x - o) for o in others)

        probs.append(integrate.quad(density, lo, hi, points=sorted(set(u)), limit=200,
                                    epsabs=1e-12)[0])
    probs_arr = np.array(probs)
    assert abs(probs_arr.sum() - 1) < 1e-7
    return probs_arr


def test_exact_pmf_helpers_agree_with_known_cases() -> None:
    # sanity of the references themselves: PF with 2 candidates and factor f: P(worse) =
    # e^{-f·gap}/2; softmax and the Laplace RNM of equal utilities are uniform
    np.testing.assert_allclose(permute_and_flip_probs([1.0, 0.0], 1.0),
                               [1 - math.exp(-1) / 2, math.exp(-1) / 2])
    np.testing.assert_allclose(softmax_probs([2.0, 2.0, 2.0], 5.0), [1 / 3] * 3)
    np.testing.assert_allclose(report_noisy_max_laplace_probs([0.0, 0.0, 0.0], 1.0), [1 / 3] * 3,
                               atol=1e-8)
    # Lap(b) RNM of two candidates: P(L1 - L0 > t) = e^{-t/b}(2 + t/b)/4
    t, b = 1.0, 2.0
    np.testing.assert_allclose(report_noisy_max_laplace_probs([t, 0.0], b)[1],
                               math.exp(-t / b) * (2 + t / b) / 4, atol=1e-8)


# =========================================================================== goodness of fit


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(0.1, 1.0), (1.0, 1.0), (3.0, 1.0), (2.0, 4.0)])
def test_discrete_laplace_matches_exact_pmf(epsilon: float, sensitivity: float) -> None:
    """Chi-square of 200 000 DLap(ε/Δ) draws against the exact pmf, tails merged so every
    bin expects >= 5; accept at p > 1e-3."""
    n = 200_000
    eps = epsilon / sensitivity
    noisy = discrete_laplace(np.full(n, 10), epsilon=epsilon, sensitivity=sensitivity,
                             rng=make_rng(101), accountant=Accountant(epsilon), step="t")
    noise = noisy - 10
    q = math.exp(-eps)
    tail = lambda k: q**k / (1 + q)  # noqa: E731  P(X >= k) = P(X <= -k) for k >= 1
    # single bins for |k| <= k_max, each expecting >= 5 draws; the rest in two tail bins
    k_max = max(k for k in range(0, 10_000) if n * discrete_laplace_pmf(k, eps) >= 5)
    while n * tail(k_max + 1) < 5:
        k_max -= 1
    ks = np.arange(-k_max, k_max + 1)
    probs = np.concatenate([[tail(k_max + 1)], discrete_laplace_pmf(ks, eps), [tail(k_max + 1)]])
    assert abs(probs.sum() - 1) < 1e-12
    observed = np.concatenate([
        [np.sum(noise < -k_max)],
        np.bincount(np.clip(noise, -k_max - 1, k_max + 1) + k_max + 1, minlength=ks.size + 2)[1:-1],
        [np.sum(noise > k_max)],
    ])
    assert observed.sum() == n
    p = chisquare_p(observed, probs)
    assert p > GOF_P, f"DLap({eps}) draws do not fit the exact pmf: p = {p:.2e}"
    # and the first two moments, to 5 standard errors: mean 0, variance 2q/(1-q)^2
    var = 2 * q / (1 - q) ** 2
    assert abs(noise.mean()) < 5 * math.sqrt(var / n)
    assert noise.var() == pytest.approx(var, rel=0.05)


def test_raw_sampler_matches_exact_pmf_for_a_tiny_epsilon() -> None:
    """For ε = 1e-9 the noise is huge; compare P(|X| < t) to the exact cdf for a few t
    (binomial 5-sigma tolerance)."""
    eps, n = 1e-9, 100_000
    noise = sample_discrete_laplace(make_rng(102), eps, n)
    q = math.exp(-eps)
    for t in (1e8, 1e9, 3e9):
        k = math.floor(t)
        expected = 1 - 2 * q ** (k + 1) / (1 + q)  # P(|X| <= k)
        freq = np.mean(np.abs(noise) <= k)
        assert abs(freq - expected) < 5 * math.sqrt(expected * (1 - expected) / n)


EM_CASES = [
    pytest.param([0.0, 1.0, 2.0, 3.5, -1.0], False, None, id="general"),
    pytest.param([0.0, 1.0, 2.0, 3.5, -1.0], True, None, id="monotone"),
    pytest.param([3.0, 3.0, 1.0, 0.0], False, [0.0, math.log(3), math.log(10), -math.inf],
                 id="base-measure"),
]


@pytest.mark.parametrize(("utilities", "monotone", "log_measure"), EM_CASES)
def test_exponential_mechanism_matches_softmax(utilities, monotone, log_measure) -> None:
    """Chi-square of 20 000 draws against exp(ε·u/2Δ)·μ normalised (ε·u/Δ if monotone);
    p > 1e-3. A zero-measure candidate must never be drawn."""
    eps, sens, n = 1.0, 2.0, 20_000
    picks = select_many(exponential, utilities, n, 103, epsilon=eps, sensitivity=sens,
                        monotone=monotone, log_base_measure=log_measure)
    probs = softmax_probs(utilities, eps / (sens if monotone else 2 * sens), log_measure)
    counts = np.bincount(picks, minlength=len(utilities))
    support = probs > 0
    assert counts[~support].sum() == 0
    p = chisquare_p(counts[support], probs[support])
    assert p > GOF_P, f"exponential mechanism: counts {counts}, expected {probs * n}, p = {p:.2e}"


PF_CASES = [
    pytest.param([0.0, 1.0, 2.0, 3.5, -1.0], False, id="general"),
    pytest.param([0.0, 1.0, 2.0, 3.5, -1.0], True, id="monotone"),
    pytest.param([4.0, 4.0, 3.0, 0.5], False, id="ties"),
]


@pytest.mark.parametrize(("utilities", "monotone"), PF_CASES)
def test_permute_and_flip_matches_exact_pmf(utilities, monotone) -> None:
    """Chi-square of 20 000 draws against the pmf enumerated over all visiting orders."""
    eps, sens, n = 1.0, 1.0, 20_000
    picks = select_many(permute_and_flip, utilities, n, 104, epsilon=eps, sensitivity=sens,
                        monotone=monotone)
    probs = permute_and_flip_probs(utilities, eps / (sens if monotone else 2 * sens))
    counts = np.bincount(picks, minlength=len(utilities))
    p = chisquare_p(counts, probs)
    assert p > GOF_P, f"permute-and-flip: counts {counts}, expected {probs * n}, p = {p:.2e}"


@pytest.mark.parametrize(("utilities", "monotone"), PF_CASES)
def test_rnm_exponential_noise_matches_permute_and_flip(utilities, monotone) -> None:
    """Report-noisy-max with Exp(2Δ/ε) noise (Δ/ε monotone) has exactly the distribution of
    permute-and-flip (Ding et al. 2021); chi-square of 20 000 draws, p > 1e-3."""
    eps, sens, n = 1.0, 1.0, 20_000
    picks = select_many(report_noisy_max, utilities, n, 105, epsilon=eps, sensitivity=sens,
                        monotone=monotone, noise="exponential")
    probs = permute_and_flip_probs(utilities, eps / (sens if monotone else 2 * sens))
    counts = np.bincount(picks, minlength=len(utilities))
    p = chisquare_p(counts, probs)
    assert p > GOF_P, f"RNM (exponential): counts {counts}, expected {probs * n}, p = {p:.2e}"


def test_rnm_exponential_is_not_the_exponential_mechanism() -> None:
    """Documents that RNM with exponential noise is *not* softmax-distributed: against the
    exponential mechanism's probabilities the same kind of sample is rejected (p < 1e-6)."""
    utilities, eps, n = [0.0, 1.0, 2.0, 3.5, -1.0], 1.0, 20_000
    picks = select_many(report_noisy_max, utilities, n, 106, epsilon=eps, noise="exponential")
    counts = np.bincount(picks, minlength=len(utilities))
    assert chisquare_p(counts, softmax_probs(utilities, eps / 2)) < 1e-6
    assert chisquare_p(counts, permute_and_flip_probs(utilities, eps / 2)) > GOF_P


@pytest.mark.parametrize("monotone", [False, True])
def test_rnm_laplace_matches_quadrature(monotone: bool) -> None:
    """Report-noisy-max with Lap(2Δ/ε) (Δ/ε monotone) against probabilities computed by
    numerical integration; chi-square of 20 000 draws, p > 1e-3."""
    utilities, eps, sens, n = [0.0, 1.0, 2.0, 3.5, -1.0], 1.0, 1.0, 20_000
    picks = select_many(report_noisy_max, utilities, n, 107, epsilon=eps, sensitivity=sens,
                        monotone=monotone)
    probs = report_noisy_max_laplace_probs(utilities, (sens if monotone else 2 * sens) / eps)
    counts = np.bincount(picks, minlength=len(utilities))
    p = chisquare_p(counts, probs)
    assert p > GOF_P, f"RNM (laplace): counts {counts}, expected {probs * n}, p = {p:.2e}"


def test_exponential_interval_frequencies_and_uniformity() -> None:
    """Interval i is chosen with probability ∝ length_i · exp(ε·u_i/2Δ) (chi-square over the
    intervals of positive length, p > 1e-3), and within an interval the point is uniform
    (Kolmogorov-Smirnov of (x - lo)/(hi - lo) against U(0, 1), p > 1e-3 per interval)."""
    edges = np.array([0.0, 0.5, 2.0, 2.0, 5.0, 5.25, 9.0])
    utilities = np.array([1.0, 0.0, 9.0, 2.0, -1.0, 0.5])  # [2, 2) is empty but best
    eps, sens, n = 1.0, 1.0, 12_000
    rng = make_rng(108)
    points = np.array([
        exponential_interval(edges, utilities, epsilon=eps, sensitivity=sens, rng=rng,
                             accountant=Accountant(eps), step="t")
        for _ in range(n)
    ])
    lengths = np.diff(edges)
    with np.errstate(divide="ignore"):
        probs = softmax_probs(utilities, eps / (2 * sens), np.log(lengths))
    # a point equal to an inner edge belongs to the interval starting there (half-open)
    idx = np.searchsorted(edges, points, side="right") - 1
    assert idx.min() >= 0 and idx.max() < utilities.size
    counts = np.bincount(idx, minlength=utilities.size)
    assert counts[lengths == 0].sum() == 0
    p = chisquare_p(counts[lengths > 0], probs[lengths > 0])
    assert p > GOF_P, f"interval counts {counts}, expected {probs * n}, p = {p:.2e}"
    for i in np.flatnonzero(lengths > 0):
        inside = (points[idx == i] - edges[i]) / lengths[i]
        assert inside.size > 80
        ks = stats.kstest(inside, "uniform")
        assert ks.pvalue > GOF_P, f"interval {i}: point not uniform, KS p = {ks.pvalue:.2e}"


def test_exponential_interval_integer_mode_is_uniform_over_integers() -> None:
    """Integer mode: P(point = k) ∝ exp(ε·u_i/2Δ) for each integer k in interval i, i.e. the
    interval measure is its number of integers and the point is uniform on them
    (chi-square over all integers, p > 1e-3)."""
    edges = np.array([0.5, 3.2, 3.7, 10.0, 12.0])  # {1,2,3}, {}, {4..9}, {10,11}
    utilities = np.array([2.0, 50.0, 0.0, 1.0])
    eps, n = 1.0, 10_000
    rng = make_rng(109)
    points = np.array([
        exponential_interval(edges, utilities, epsilon=eps, rng=rng, accountant=Accountant(eps),
                             step="t", integer=True)
        for _ in range(n)
    ])
    assert np.all(points == np.round(points))
    values = np.arange(1, 12)
    interval_of = np.searchsorted(edges, values, side="right") - 1
    probs = softmax_probs(utilities[interval_of], eps / 2)
    counts = np.array([np.sum(points == v) for v in values])
    assert counts.sum() == n
    p = chisquare_p(counts, probs)
    assert p > GOF_P, f"integer points {counts}, expected {probs * n}, p = {p:.2e}"


# =========================================================================== privacy ratios
#
# Each test draws from a mechanism on two neighbouring inputs and asserts ratio_check passes
# at the claimed ε, then draws from the same mechanism run at 2ε (half the noise) and asserts
# the check fails: the sample sizes are large enough to catch a factor-2 privacy bug.

# neighbouring utility vectors (Δ = 1): general (any coordinate may move by ±Δ) and monotone
# (a record raises some counts by at most 1). The last candidate's probability ratio is the
# extreme one: e^ε exactly for permute-and-flip and RNM-exponential.
GENERAL_PAIR = ([0.0, 0.0, 0.0], [1.0, 1.0, -1.0])
MONOTONE_PAIR = ([5.0, 5.0, 5.0], [6.0, 6.0, 5.0])

SELECTIONS = {
    "report_noisy_max_laplace": (report_noisy_max, {"noise": "laplace"}),
    "report_noisy_max_exponential": (report_noisy_max, {"noise": "exponential"}),
    "exponential": (exponential, {}),
    "permute_and_flip": (permute_and_flip, {}),
}


def _count_samples(epsilon: float, counts: tuple[int, int], n: int, seed: int):
    rng = make_rng(seed)
    return [
        discrete_laplace(np.full(n, c), epsilon=epsilon, rng=rng, accountant=Accountant(epsilon),
                         step="t")
        for c in counts
    ]


@pytest.mark.parametrize(("epsilon", "n"), [(0.1, 2_000_000), (1.0, 300_000), (3.0, 300_000)])
def test_privacy_ratio_discrete_laplace(epsilon: float, n: int) -> None:
    """Counts 10 and 11 (neighbours): every output and tail event within e^ε."""
    a, b = _count_samples(epsilon, (10, 11), n, 201)
    assert ratio_check(a, b, epsilon, ordered=True), privacy_loss_lower_bound(a, b, ordered=True)
    a2, b2 = _count_samples(2 * epsilon, (10, 11), n, 202)
    assert not ratio_check(a2, b2, epsilon, ordered=True), "a 2ε count would not be caught"


def test_privacy_ratio_discrete_laplace_vector_sensitivity() -> None:
    """A histogram with L1 sensitivity 2 (a record moves between two cells): one spend of ε
    covers the vector, so each cell's noise is DLap(ε/2); the joint output of the two cells
    that change stays within e^ε."""
    eps, n = 1.0, 300_000

    def joint(values: list[int], e: float, seed: int) -> np.ndarray:
        rng = make_rng(seed)
        out = discrete_laplace(np.tile(values, (n, 1)), epsilon=e, sensitivity=2.0, rng=rng,
                               accountant=Accountant(e), step="t")
        return out[:, 0] * 1000 + out[:, 1]  # encode the pair as one discrete outcome

    a, b = joint([10, 4], eps, 203), joint([9, 5], eps, 204)
    assert ratio_check(a, b, eps), privacy_loss_lower_bound(a, b)
    a2, b2 = joint([10, 4], 2 * eps, 205), joint([9, 5], 2 * eps, 206)
    assert not ratio_check(a2, b2, eps)


def test_privacy_ratio_grid_laplace() -> None:
    """Values 0 and 1 (Δ = 1) on a grid of 0.5: within e^ε (the recorded Δ' = 1.5 makes the
    true ratio e^{2ε/3}); at 2ε the ratio e^{4ε/3} is caught."""
    eps, n = 1.0, 10_000

    def draws(value: float, e: float, seed: int) -> np.ndarray:
        rng = make_rng(seed)
        return np.array([
            grid_laplace(value, epsilon=e, sensitivity=1.0, granularity=0.5, rng=rng,
                         accountant=Accountant(e), step="t")
            for _ in range(n)
        ])

    a, b = draws(0.0, eps, 207), draws(1.0, eps, 208)
    assert ratio_check(a, b, eps, ordered=True), privacy_loss_lower_bound(a, b, ordered=True)
    a2, b2 = draws(0.0, 2 * eps, 209), draws(1.0, 2 * eps, 210)
    assert not ratio_check(a2, b2, eps, ordered=True)


@pytest.mark.parametrize("name", SELECTIONS)
@pytest.mark.parametrize(("pair", "monotone"), [(GENERAL_PAIR, False), (MONOTONE_PAIR, True)],
                         ids=["general", "monotone"])
def test_privacy_ratio_selection(name: str, pair, monotone: bool) -> None:
    mechanism, kwargs = SELECTIONS[name]
    eps = 1.0
    u_a, u_b = pair
    a = select_many(mechanism, u_a, N_SELECT, 211, epsilon=eps, monotone=monotone, **kwargs)
    b = select_many(mechanism, u_b, N_SELECT, 212, epsilon=eps, monotone=monotone, **kwargs)
    assert ratio_check(a, b, eps), privacy_loss_lower_bound(a, b)
    a2 = select_many(mechanism, u_a, N_SELECT, 213, epsilon=2 * eps, monotone=monotone, **kwargs)
    b2 = select_many(mechanism, u_b, N_SELECT, 214, epsilon=2 * eps, monotone=monotone, **kwargs)
    assert not ratio_check(a2, b2, eps), "a 2ε selection would not be caught"


@pytest.mark.parametrize(("pair", "monotone"), [(GENERAL_PAIR, False), (MONOTONE_PAIR, True)],
                         ids=["general", "monotone"])
def test_privacy_ratio_exponential_interval(pair, monotone: bool) -> None:
    """Split-point selection on edges [0, 1, 3, 4]: the events are the intervals the point
    falls in (finer events have the same ratios within an interval)."""
    edges, eps = [0.0, 1.0, 3.0, 4.0], 1.0

    def intervals(utilities, e: float, seed: int) -> np.ndarray:
        rng = make_rng(seed)
        pts = np.array([
            exponential_interval(edges, utilities, epsilon=e, rng=rng, accountant=Accountant(e),
                                 step="t", monotone=monotone)
            for _ in range(N_SELECT)
        ])
        return np.searchsorted(edges, pts, side="right") - 1

    u_a, u_b = pair
    a, b = intervals(u_a, eps, 215), intervals(u_b, eps, 216)
    assert ratio_check(a, b, eps), privacy_loss_lower_bound(a, b)
    a2, b2 = intervals(u_a, 2 * eps, 217), intervals(u_b, 2 * eps, 218)
    assert not ratio_check(a2, b2, eps)


# =========================================================================== the check has power


def discrete_laplace_broken(values, *, epsilon, rng, accountant, step, sensitivity=1.0):
    """A deliberately wrong mechanism: records ε but draws DLap(2ε/Δ) (half the noise)."""
    accountant.spend(step, "discrete laplace (broken)", epsilon, sensitivity)
    arr = np.asarray(values, dtype=np.int64)
    return arr + sample_discrete_laplace(rng, 2 * epsilon / sensitivity, arr.shape)


def report_noisy_max_broken(utilities, *, epsilon, rng, accountant, step, sensitivity=1.0,
                            monotone=False):
    """A deliberately wrong mechanism: uses the monotone scale Δ/ε for general utilities
    (half the noise they need, 2Δ/ε)."""
    u = _utilities(utilities)
    accountant.spend(step, "report-noisy-max (broken)", epsilon, sensitivity)
    return int(np.argmax(u + rng.laplace(0.0, sensitivity / epsilon, u.size)))


def test_ratio_check_catches_a_broken_discrete_laplace() -> None:
    eps, n = 1.0, 300_000

    def draws(mechanism, count: int, seed: int) -> np.ndarray:
        return mechanism(np.full(n, count), epsilon=eps, rng=make_rng(seed),
                         accountant=Accountant(eps), step="t")

    real_a, real_b = draws(discrete_laplace, 10, 301), draws(discrete_laplace, 11, 302)
    bad_a, bad_b = draws(discrete_laplace_broken, 10, 301), draws(discrete_laplace_broken, 11, 302)
    assert ratio_check(real_a, real_b, eps, ordered=True)
    assert not ratio_check(bad_a, bad_b, eps, ordered=True)
    # the broken one is also caught without the tail events
    assert not ratio_check(bad_a, bad_b, eps)


def test_ratio_check_catches_a_broken_report_noisy_max() -> None:
    eps = 1.0
    u_a, u_b = GENERAL_PAIR
    real_a = select_many(report_noisy_max, u_a, N_SELECT, 303, epsilon=eps)
    real_b = select_many(report_noisy_max, u_b, N_SELECT, 304, epsilon=eps)
    bad_a = select_many(report_noisy_max_broken, u_a, N_SELECT, 303, epsilon=eps)
    bad_b = select_many(report_noisy_max_broken, u_b, N_SELECT, 304, epsilon=eps)
    assert ratio_check(real_a, real_b, eps)
    assert not ratio_check(bad_a, bad_b, eps)
    # the broken RNM is only wrong for general utilities: on a monotone pair it is correct
    m_a = select_many(report_noisy_max_broken, MONOTONE_PAIR[0], N_SELECT, 305, epsilon=eps)
    m_b = select_many(report_noisy_max_broken, MONOTONE_PAIR[1], N_SELECT, 306, epsilon=eps)
    assert ratio_check(m_a, m_b, eps)


def test_ratio_check_basic_behaviour() -> None:
    """The check itself: identical samples pass at any ε; disjoint supports fail at any ε;
    and it needs enough data to fail (a handful of draws proves nothing)."""
    x = np.repeat([0, 1, 2], 1000)
    assert ratio_check(x, x, 1e-6)
    assert not ratio_check(np.zeros(1000), np.ones(1000), 2.0)
    assert ratio_check(np.zeros(3), np.ones(3), 2.0)
