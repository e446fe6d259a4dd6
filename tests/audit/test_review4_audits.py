"""Audits of the fourth privacy review (issue 43): three breaks that passed every audit before,
each now caught — run honest (must pass) and broken (must be caught).

* **The metadata's Gaussian σ sized for L2 sensitivity 1 instead of √m.** One record touches one
  shape cell in each of the m profiled columns, so the m histograms together move by √m in L2;
  :func:`dpkit.domain.metadata.noise_plan` sizes σ² = m/(2ρ). Sized for 1 (σ² = 1/(2ρ)) the step
  spends ≈ √m times the booked ε — on Adult ≈ 0.125 against 0.031 — yet the δ audit of
  ``test_metadata_audit.py`` passes it: the stability threshold is recomputed from the smaller σ,
  so a record's own token still appears with probability ≤ δ/m. What sees it is the privacy loss
  of the noisy counts themselves: the record adds one ``?`` in each of the m columns, and the sum
  of the m noisy ``?`` cells moves by m against noise of standard deviation √m·σ.
* **The date refinement decided on the exact span and count.** Whether a date column's bounds are
  refined on month starts is decided on the year-grid bounds and a noisy count (both DP
  outputs); decided on the exact count, one record below the count's threshold flips it with
  probability 1 (visible: month-start bounds, a "bounds refined" step in the report), and on the
  exact span one far-away record does.
* **Released tokens chosen by exact presence.** A public missing token is the column's missing
  value when partition selection *released* it (:func:`dpkit.domain.discover.released_tokens`:
  post-processing); chosen by presence in the data, one record holding ``?`` makes ``?`` a
  token with probability 1 instead of ≤ δ.

Each break is written as a fixture: the module's own function with the one decision changed
(source rewritten by ``dp_audit.rewritten``, so the audited code is the shipped code everywhere
else). Seeds are fixed; the tolerance is the Clopper–Pearson bound at α = 10⁻³ of
``dp_audit`` (a violation is claimed falsely with probability ≤ α); each honest run also shows
the event is reachable (the audit has power). About a minute for the ten runs.
"""

from __future__ import annotations

import importlib
import math
import os
import sys

import numpy as np
import pytest

import dpkit.domain.metadata as metadata
from dpkit.domain.metadata import MISSING_CANDIDATES, ColumnMeta, Declarations, learn_metadata
from dpkit.domain.profile import Categories, Summary
from dpkit.privacy import Accountant, exact, make_rng
from dpkit.privacy.mechanisms.partition import singleton_release_probability, threshold
from dpkit.privacy.mechanisms.quantiles import Profile
from dpkit.schema import dates

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_audit import audit, rewritten  # noqa: E402
from test_domain_audit import approx_violation, delta_violation  # noqa: E402

pytestmark = pytest.mark.statistical

discover_module = importlib.import_module("dpkit.domain.discover")  # the package re-exports the function


# --------------------------------------------------------------------------- (a) the metadata's Gaussian σ

#: m columns at ε = 2: the Gaussian plan (σ² 15.3, τ 12). The sum of the m noisy '?' cells exceeds
#: its exact value by ≥ SUM_EVENT with P ≈ 0.24 (D) and 0.51 (D'): e^ε·0.24 + δ_G ≫ 0.51. With σ
#: for sensitivity 1 (σ² 1.9): P ≈ 0.024 and 0.53, beyond e^ε·P_D + δ_G (the gap ≈ 0.35)
SIGMA_EPS, SIGMA_DELTA, SIGMA_COLUMNS, SIGMA_RUNS, SUM_EVENT = 2.0, 0.05, 8, 1_000, 8


@pytest.fixture
def sigma_for_sensitivity_one(monkeypatch):  # noqa: ANN001, ANN201
    """The break: σ² = 1/(2ρ) — the L2 sensitivity of one column — for the m columns' joint step,
    booked as before (ε, √m, δ_G). (tests/domain/test_metadata_noise.py checks the same break
    without statistics: the σ² of every Gaussian plan against the (ε, δ_G) it books.)"""
    monkeypatch.setattr(metadata, "noise_plan", rewritten(metadata, "noise_plan", [
        ("_ceil_step(columns / (2 * rho))", "_ceil_step(1 / (2 * rho))"),
        ("cdp_delta(columns / (2 * float(sigma2)), epsilon)", "cdp_delta(1 / (2 * float(sigma2)), epsilon)"),
    ]))


def _question_sum(extra: bool, rng: np.random.Generator) -> float:
    """The sum over the m columns of the noisy count of the '?' cell, minus its exact value (0 on
    D, m on D'): the output of the step the metadata books (its decisions are post-processing)."""
    values = {"1": 400, "2": 400, **({"?": 1} if extra else {})}
    summary = Summary(tuple(values), np.array(list(values.values()), dtype=np.int64))
    seen: list[int] = []
    real = metadata.decide

    def spy(noisy, tokens, tau):  # noqa: ANN001, ANN202
        seen.append(int(noisy[list(tokens).index("?")]))
        return real(noisy, tokens, tau)

    metadata.decide = spy
    try:
        acc = Accountant(SIGMA_EPS, delta=SIGMA_DELTA)
        meta = learn_metadata({f"c{j}": summary for j in range(SIGMA_COLUMNS)}, target=None, declared=Declarations(),
                              epsilon=SIGMA_EPS, delta=SIGMA_DELTA, rng=rng, accountant=acc)
    finally:
        metadata.decide = real
    assert meta.plan is not None and meta.plan.mechanism == "gaussian" and len(seen) == SIGMA_COLUMNS
    assert acc.spent == pytest.approx(SIGMA_EPS)  # booked the same either way
    return float(sum(seen))


@pytest.mark.parametrize("broken", [False, True])
def test_metadata_gaussian_counts_are_epsilon_delta_dp(request, broken: bool) -> None:  # noqa: ANN001
    if broken:
        request.getfixturevalue("sigma_for_sensitivity_one")
    n = SIGMA_RUNS
    d = [_question_sum(False, make_rng(110_000 + i)) for i in range(n)]
    d1 = [_question_sum(True, make_rng(150_000 + i)) - SIGMA_COLUMNS for i in range(n)]
    # the event on the noise above the exact sum: {noisy sum − exact sum of D ≥ SUM_EVENT}
    hits = (sum(x >= SUM_EVENT for x in d), sum(x + SIGMA_COLUMNS >= SUM_EVENT for x in d1))
    delta_g = SIGMA_DELTA * metadata.GAUSSIAN_DELTA_SHARE
    print(f"sum of the '?' cells >= {SUM_EVENT}: {hits[0]}/{n} on D, {hits[1]}/{n} on D' (delta_G {delta_g})")
    assert approx_violation(hits, n, SIGMA_EPS, delta_g) == broken, hits
    assert hits[1] > hits[0] > 0


# --------------------------------------------------------------------------- (b) the date refinement

DATE_EPS = 1.0


@pytest.fixture
def exact_refinement(monkeypatch):  # noqa: ANN001, ANN201
    """The break: the month refinement decided on the exact span of the dates and their exact
    count (the count's noise still drawn and booked, its value unused)."""
    monkeypatch.setattr(discover_module, "_time", rewritten(discover_module, "_time", [
        ("span = (hi - lo) / (1 if m.kind == \"date\" else 86400)",
         "span = (prof.values.max() - prof.values.min()) / (1 if m.kind == \"date\" else 86400)"),
        ("eps_refine * n_hat >= REFINE_MIN", "eps_refine * prof.n >= REFINE_MIN"),
    ]))


def _refined(days: dict[float, int]):  # noqa: ANN202
    """release(extra, rng) -> 1.0 when the date column's bounds were refined on month starts
    (the report's step list says so); ``extra``: one more record's day, or None."""
    meta = ColumnMeta("d", "date", integer=True, given=True)

    def release(extra: float | None, rng: np.random.Generator) -> float:
        counts = dict(days)
        if extra is not None:
            counts[extra] = counts.get(extra, 0) + 1
        prof = Profile.of(np.array(list(counts), dtype=float), np.array(list(counts.values())))
        acc = Accountant(DATE_EPS)
        discover_module.discover([meta], {}, {"d": prof}, target=None, tokens=(), epsilon=DATE_EPS, delta=0.0,
                                 rng=rng, accountant=acc)
        return float(any("bounds refined" in s.step for s in acc.spends))

    return release


def _spring(n: int) -> dict[float, int]:
    """``n`` records over the days of March–May 2023, as evenly as they go."""
    first, last = dates.parse("2023-03-01", "date"), dates.parse("2023-05-31", "date")
    days = np.linspace(first, last, n).round()
    out: dict[float, int] = {}
    for d in days:
        out[float(d)] = out.get(float(d), 0) + 1
    return out


#: ε = 1: the refinement's ε 0.25, the count's 0.05; refined when 0.25·ñ ≥ 30, ñ ≥ 120
COUNT_EDGE = math.ceil(dates.REFINE_MIN / (DATE_EPS * dates.REFINE_SHARE)) - 1


@pytest.mark.parametrize("broken", [False, True])
@pytest.mark.parametrize("pair", ["count", "span"])
def test_the_date_refinement_is_epsilon_dp(request, pair: str, broken: bool) -> None:  # noqa: ANN001
    """count: 119 dates against 120 (the exact count decides: never against always); span: 5,000
    dates of one spring against the same plus one in 1950 (the exact span decides: always
    against never). Honest, the decision is post-processing of DP outputs and moves little."""
    if broken:
        request.getfixturevalue("exact_refinement")
    if pair == "count":
        release, d, d1 = _refined(_spring(COUNT_EDGE)), None, float(dates.parse("2023-04-15", "date"))
    else:
        release, d, d1 = _refined(_spring(5000)), None, float(dates.parse("1950-06-15", "date"))
    result = audit(release, d, d1, lambda y: y == 1.0, epsilon=DATE_EPS, n=400, seed0=4_000)
    print(pair, result)
    assert result.violation == broken, str(result)
    if not broken:
        assert sum(result.hits) > 0  # the refinement is reachable on these inputs: the audit has power


# --------------------------------------------------------------------------- (c) released tokens

TOKEN_EPS = 1.0
TOKEN_DELTA = math.exp(-TOKEN_EPS) ** 2 / (1 + math.exp(-TOKEN_EPS)) * (1 + 1e-12)  # τ = 3: P(listed) = δ exactly


@pytest.fixture
def tokens_by_presence(monkeypatch):  # noqa: ANN001, ANN201
    """The break: a public missing token is the column's when the data holds it at all, released
    by partition selection or not."""
    # after the column's listing (post-processing of its selection), its missing tokens replaced
    # by the candidates its exact categories hold
    monkeypatch.setattr(discover_module, "discover", rewritten(discover_module, "discover", [
        ("col, note, failure = _categorical(m, pick, cats.epsilon_delta(m.name, pick), candidates, target, opts)",
         "col, note, failure = _categorical(m, pick, cats.epsilon_delta(m.name, pick), candidates, target, opts)\n"
         "            cat = categories[m.name]\n"
         "            note.missing_tokens = tuple(t for t in candidates\n"
         "                if t in [v for v, c in zip(cat.values, cat.counts, strict=True) if c > 0])"),
    ]))


def _token_released(extra: bool, rng: np.random.Generator) -> bool:
    values, counts = ("a", "b"), [5000, 5000]
    if extra:
        values, counts = (*values, "?"), [*counts, 1]
    cats = {"c": Categories(values, np.array(counts), np.zeros(len(values), bool))}
    acc = Accountant(TOKEN_EPS, delta=TOKEN_DELTA)
    disc = discover_module.discover([ColumnMeta("c", "categorical")], cats, {}, target=None, tokens=(),
                                    epsilon=TOKEN_EPS, delta=TOKEN_DELTA, rng=rng, accountant=acc,
                                    candidates=MISSING_CANDIDATES)
    return "?" in disc.released_tokens.get("c", ()) or "?" in disc.schema.missing_tokens


@pytest.mark.parametrize("broken", [False, True])
def test_a_token_one_record_holds_is_released_with_probability_at_most_delta(request, broken: bool) -> None:  # noqa: ANN001
    if broken:
        request.getfixturevalue("tokens_by_presence")
    assert threshold(TOKEN_EPS, TOKEN_DELTA) == 3
    n = 3_000
    hits = sum(_token_released(True, make_rng(60_000 + i)) for i in range(n))
    assert not any(_token_released(False, make_rng(960_000 + i)) for i in range(200))  # absent: never a token
    violation, lo = delta_violation(hits, n, TOKEN_EPS, TOKEN_DELTA)
    print(f"'?' released as a token {hits}/{n}; lower bound {lo:.4f} vs delta {TOKEN_DELTA:.4f}")
    assert violation == broken, hits
    if not broken:  # the audit has power: the token's cell against τ = 3 is listed with probability δ
        s, t = exact.noise_fraction(TOKEN_EPS)
        p = float(singleton_release_probability(3, s, t))
        assert abs(hits / n - p) < 4.5 * math.sqrt(p * (1 - p) / n)

