"""Audit of the metadata a run without a schema learns (issue 36 item 1): :func:`dpkit.domain.metadata.learn_metadata`
on neighbouring tables one record apart, the honest step passing and a deliberate break caught.

D: one column of 20,000 whole numbers. D' adds ONE record holding a fraction (``37.5``), a
non-number that is a public missing token (``n/a``), a non-number that is not (``unknown``) or
``?``. Before issue 36 each flipped the released metadata with probability 1 (non-integer,
categorical, ``missing: '?'``). Now:

* the record's own decision flips with probability ≤ δ: ε = 2 and δ = q²/(1+q) (q = e^{−2})
  make the stability threshold τ = 3, so a cell the exact data leaves at 0 crosses it because
  of one record with probability P(Z ≥ 2) = δ exactly — measured, and its lower confidence
  bound must not exceed δ;
* any change of the released metadata obeys P_D'(E) ≤ e^ε·P_D(E) + δ (E: the metadata is not
  D's noiseless outcome, numeric/integer/no token).

The break: the metadata decided on exact counts, as before issue 36 (no noise, any
fraction → not integer, any non-number → categorical, any token present → missing), the ε
still booked. Both checks catch it (the record flips the metadata every time, never without it).

With many columns the counts take the joint discrete Gaussian (:func:`dpkit.domain.metadata.noise_plan`):
a record holding ``?`` in each of m = 8 columns makes ``?`` a missing token with probability ≤ δ
(δ/m per column: the union bound over the columns it touches). Caught: that union bound dropped
(each column's threshold set for δ), and the exact counts.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import dpkit.domain.metadata as metadata
from dpkit.domain.metadata import GAUSSIAN_DELTA_SHARE, Declarations, learn_metadata
from dpkit.domain.profile import Summary
from dpkit.privacy import Accountant, exact, make_rng
from dpkit.privacy.mechanisms.partition import singleton_release_probability, threshold

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_audit import clopper_pearson  # noqa: E402
from test_domain_audit import approx_violation, delta_violation  # noqa: E402

pytestmark = pytest.mark.statistical

EPS = 2.0
Q = math.exp(-EPS)
DELTA = Q**2 / (1 + Q) * (1 + 1e-12)
BASE = {str(v): 400 for v in range(50)}  # 20,000 whole numbers

#: the record added in D', and its own event: the decision it would flip
RECORDS = {
    "37.5": lambda meta: not meta.metas[0].integer,
    "n/a": lambda meta: "n/a" in meta.tokens,
    "unknown": lambda meta: meta.metas[0].kind != "numeric",
    "?": lambda meta: "?" in meta.tokens,
}


def _learn(extra: str | None, rng: np.random.Generator):  # noqa: ANN202
    values = dict(BASE)
    if extra is not None:
        values[extra] = 1
    summary = Summary(tuple(values), np.array(list(values.values()), dtype=np.int64))
    acc = Accountant(EPS, delta=DELTA)
    meta = learn_metadata({"x": summary}, target=None, declared=Declarations(), epsilon=EPS, delta=DELTA,
                          rng=rng, accountant=acc)
    assert acc.spent == pytest.approx(EPS) and acc.delta_spent == 0  # pure ε: public cells
    return meta


def _changed(meta) -> bool:  # noqa: ANN001
    m = meta.metas[0]
    return (m.kind, m.integer, meta.tokens) != ("numeric", True, ())


@pytest.fixture
def exact_counts(monkeypatch):  # noqa: ANN001, ANN201
    """The break: decisions on the exact shape counts (the ε still booked, the noise dropped)."""
    import dpkit.privacy.mechanisms as mechanisms

    real = mechanisms.discrete_laplace

    def no_noise(values, **kw):  # noqa: ANN001, ANN003, ANN202
        return real(values, **kw) * 0 + np.asarray(values, dtype=np.int64)

    def draft_rule(noisy, tokens, tau):  # noqa: ANN001, ANN202
        k = len(tokens)
        whole, frac, date, text = (int(noisy[k + i]) for i in range(4))
        kind = "numeric" if text == 0 and date == 0 else "categorical"
        return metadata.Decision(kind, frac == 0, tuple(t for t, n in zip(tokens, noisy[:k], strict=True) if n > 0),
                                 tuple(int(x) for x in noisy))

    monkeypatch.setattr(mechanisms, "discrete_laplace", no_noise)
    monkeypatch.setattr(exact, "discrete_gaussian", lambda rng, s2, n: np.zeros(n, dtype=np.int64))
    monkeypatch.setattr(metadata, "decide", draft_rule)


def test_the_stability_threshold_is_three() -> None:
    assert threshold(EPS, DELTA) == 3


@pytest.mark.parametrize("broken", [False, True])
@pytest.mark.parametrize("record", list(RECORDS))
def test_one_record_changes_the_released_metadata_with_probability_at_most_delta(request, record: str,
                                                                                 broken: bool) -> None:  # noqa: ANN001
    if broken:
        request.getfixturevalue("exact_counts")
    n = 6000
    own = RECORDS[record]
    runs_d = [_learn(None, make_rng(10_000 + i)) for i in range(n)]
    runs_d1 = [_learn(record, make_rng(90_000 + i)) for i in range(n)]
    own_hits = sum(own(m) for m in runs_d1)
    own_violation, lo = delta_violation(own_hits, n, EPS, DELTA)
    changed = (sum(_changed(m) for m in runs_d), sum(_changed(m) for m in runs_d1))
    print(f"{record!r}: own decision flipped {own_hits}/{n} (lower bound {lo:.4f} vs delta {DELTA:.4f}); "
          f"metadata changed {changed[0]}/{n} on D, {changed[1]}/{n} on D'")
    if broken:
        assert own_violation, f"the audit missed exact-count metadata: {own_hits}/{n}"
        assert approx_violation(changed, n, EPS, DELTA)
        return
    assert not own_violation and not approx_violation(changed, n, EPS, DELTA)
    if record != "unknown":  # the record's cell against τ: flips with probability exactly P(Z ≥ 2) = δ
        s, t = exact.noise_fraction(EPS)
        p = float(singleton_release_probability(3, s, t))
        assert abs(own_hits / n - p) < 4.5 * math.sqrt(p * (1 - p) / n)  # the audit has power
    else:  # a non-number must also outnumber the numbers: never
        _, hi = clopper_pearson(own_hits, n, 1e-3)
        assert own_hits == 0 and hi < DELTA


# --------------------------------------------------------------------------- many columns: the joint Gaussian

#: m columns at a small ε: the Gaussian's threshold is the lower, so noise_plan takes it. Measured:
#: honest P = 0.03 (1,000 runs), the union bound dropped 0.22 (4.4δ)
GAUSS_EPS, GAUSS_DELTA, GAUSS_COLUMNS, GAUSS_RUNS = 1.0, 0.05, 8, 1_000


def _learn_many(extra: str | None, rng: np.random.Generator):  # noqa: ANN202
    values = {"1": 400, "2": 400}
    if extra is not None:
        values[extra] = 1
    summary = Summary(tuple(values), np.array(list(values.values()), dtype=np.int64))
    acc = Accountant(GAUSS_EPS, delta=GAUSS_DELTA)
    meta = learn_metadata({f"c{j}": summary for j in range(GAUSS_COLUMNS)}, target=None, declared=Declarations(),
                          epsilon=GAUSS_EPS, delta=GAUSS_DELTA, rng=rng, accountant=acc)
    assert meta.plan is not None and meta.plan.mechanism == "gaussian" and len(acc.spends) == 1
    assert acc.spent == pytest.approx(GAUSS_EPS) and acc.delta_spent == pytest.approx(GAUSS_DELTA * GAUSSIAN_DELTA_SHARE)
    return meta


@pytest.fixture
def dropped_union_bound(monkeypatch):  # noqa: ANN001, ANN201
    """Each column's stability threshold for δ instead of δ/m (the union bound over the m columns
    one record touches dropped)."""
    import dpkit.privacy.mechanisms.partition as partition

    real = partition.gaussian_threshold
    monkeypatch.setattr(partition, "gaussian_threshold", lambda s2, d: real(s2, d * GAUSS_COLUMNS))


@pytest.mark.parametrize("broken", [None, "dropped_union_bound", "exact_counts"])
def test_with_many_columns_one_record_adds_a_missing_token_with_probability_at_most_delta(
        request, broken: str | None) -> None:  # noqa: ANN001
    if broken:
        request.getfixturevalue(broken)
    n = GAUSS_RUNS
    hits = sum("?" in _learn_many("?", make_rng(30_000 + i)).tokens for i in range(n))
    violation, lo = delta_violation(hits, n, GAUSS_EPS, GAUSS_DELTA)
    print(f"'?' learned {hits}/{n} with the record (lower bound {lo:.4f} vs delta {GAUSS_DELTA})")
    assert violation == bool(broken), f"{broken}: {hits}/{n}"
    if not broken:
        assert hits > 0  # reachable: the audit has power
