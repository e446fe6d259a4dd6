"""End-to-end privacy audit (issue 8): the releases are ε-DP as far as many runs can tell,
and the auditor catches an implementation that spends 3ε while reporting ε.

Each audit runs a release many times on two neighbouring tiny data sets (one record apart)
and checks that the probability of an output event differs by at most e^ε, with
Clopper-Pearson bounds (tests/audit/dp_audit.py). Events are chosen where the mechanism is
tight (the probability ratio is exactly e^ε), so the same run count that passes the honest
code proves the broken one wrong.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import dpkit.privacy.mechanisms as mech
from dpkit.privacy import Accountant, discrete_laplace, report_noisy_max

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_audit import audit, clopper_pearson  # noqa: E402  (the harness, a sibling module)

pytestmark = pytest.mark.statistical

EPS = 0.5
N_RUNS = 2000
N_CLUSTER_RUNS = 1000  # a DPQT fit is ~2 ms even without k-means


@pytest.fixture
def broken_noise(monkeypatch):
    """The deliberately broken variant: the noise is drawn for 3ε, the accountant says ε."""
    real = mech.sample_discrete_laplace

    def three_times(rng, epsilon, size):  # noqa: ANN001, ANN202
        return real(rng, 3 * epsilon, size)

    monkeypatch.setattr(mech, "sample_discrete_laplace", three_times)


class _ThirdLaplace:
    """An rng whose Laplace noise is 3× too small (report-noisy-max spending 3ε)."""

    def __init__(self, rng):  # noqa: ANN001
        self._rng = rng

    def laplace(self, loc, scale, size):  # noqa: ANN001, ANN201
        return self._rng.laplace(loc, scale / 3, size)

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        return getattr(self._rng, name)


def test_clopper_pearson_is_exact_binomial_bound():
    lo, hi = clopper_pearson(50, 100, 0.025)
    assert 0.39 < lo < 0.41 and 0.59 < hi < 0.61
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0 and clopper_pearson(10, 10, 0.05)[1] == 1.0


# ------------------------------------------------------------------ mechanisms


def _count_release(count, rng):  # noqa: ANN001, ANN202
    acc = Accountant(EPS)
    out = discrete_laplace(np.array([count]), epsilon=EPS, rng=rng, accountant=acc, step="count")
    assert acc.spent == pytest.approx(EPS)
    return int(out[0])


def test_discrete_laplace_passes_audit():
    # D has 5 records in the cell, D' one more; the event {noisy ≤ 5} has ratio exactly e^ε
    r = audit(_count_release, 5, 6, lambda y: y <= 5, epsilon=EPS, n=N_RUNS)
    print(r)
    assert not r.violation, str(r)
    assert r.epsilon_lower_bound > 0.2, f"the audit has no power: {r}"


def test_discrete_laplace_audit_catches_3x(broken_noise):
    r = audit(_count_release, 5, 6, lambda y: y <= 5, epsilon=EPS, n=N_RUNS)
    print(r)
    assert r.violation, str(r)


def _rnm_release(utilities, rng):  # noqa: ANN001, ANN202
    return report_noisy_max(utilities, epsilon=EPS, rng=rng, accountant=Accountant(EPS),
                            step="select", monotone=True)


def test_report_noisy_max_passes_audit():
    r = audit(_rnm_release, [3, 3], [4, 3], lambda i: i == 1, epsilon=EPS, n=N_RUNS)
    print(r)
    assert not r.violation, str(r)


def test_report_noisy_max_audit_catches_3x():
    r = audit(lambda u, rng: _rnm_release(u, _ThirdLaplace(rng)), [3, 3], [4, 3],
              lambda i: i == 1, epsilon=EPS, n=N_RUNS)
    print(r)
    assert r.violation, str(r)


# ------------------------------------------------------------------ cluster (DPQTk-means)


@pytest.fixture
def fast_kmeans(monkeypatch):
    """Centroids are post-processing of the noisy buckets; the audit looks at the buckets
    (the DP release the centroids are computed from), so k-means is skipped for speed."""
    dpqt = pytest.importorskip("dpkit.cluster.dpqt")

    def centre(lows, highs, w, k, random_state=None, n_init=1):  # noqa: ANN001, ANN202
        return np.zeros((k, lows.shape[1])), None

    monkeypatch.setattr(dpqt, "weighted_kmeans", centre)
    return dpqt


def _cluster_release(dpqt, points, rng):  # noqa: ANN001, ANN202
    acc = Accountant(EPS)
    model = dpqt.DPQTKMeans(1, epsilon=EPS, bounds=([0, 0], [1, 1]), n_estimate=3,
                            max_height=1, n_init=1).fit(np.asarray(points), accountant=acc, rng=rng)
    assert acc.spent <= EPS * (1 + 1e-9)
    b = model.buckets_
    # the noisy count of the bucket [0, .5) x [0, .5), where the neighbours differ
    (i,) = np.flatnonzero((b.lows[:, 0] == 0) & (b.lows[:, 1] == 0))
    return int(b.counts[i])


D_POINTS = [[0.2, 0.2], [0.3, 0.3], [0.7, 0.7]]
D_PRIME_POINTS = [*D_POINTS, [0.1, 0.4]]  # one more record, in the bottom-left bucket


def test_cluster_passes_audit(fast_kmeans):
    r = audit(lambda p, rng: _cluster_release(fast_kmeans, p, rng), D_POINTS, D_PRIME_POINTS,
              lambda c: c <= 2, epsilon=EPS, n=N_CLUSTER_RUNS)
    print(r)
    assert not r.violation, str(r)
    assert r.epsilon_lower_bound > 0.2, f"the audit has no power: {r}"


def test_cluster_audit_catches_3x(fast_kmeans, broken_noise):
    r = audit(lambda p, rng: _cluster_release(fast_kmeans, p, rng), D_POINTS, D_PRIME_POINTS,
              lambda c: c <= 2, epsilon=EPS, n=N_CLUSTER_RUNS)
    print(r)
    assert r.violation, str(r)


# ------------------------------------------------------------------ publish (MAXGDDP)

PUBLISH_SCHEMA = """\
target: label
columns:
  a: {type: categorical, values: [u, v]}
  label: {type: categorical, values: [p, q]}
"""


@pytest.fixture
def publish_tables():
    """D: 3 × (u, p) and 2 × (v, q); D' adds one (u, p) record."""
    import pandas as pd

    pytest.importorskip("dpkit.release.maxgddp")
    from dpkit.data.schema import parse_schema
    from dpkit.data.table import encode

    s = parse_schema(PUBLISH_SCHEMA, "audit.yaml")
    rows = [("u", "p")] * 3 + [("v", "q")] * 2
    d = encode(pd.DataFrame(rows, columns=["a", "label"]), s)
    d_prime = encode(pd.DataFrame([*rows, ("u", "p")], columns=["a", "label"]), s)
    return d, d_prime


def _publish_release(table, rng):  # noqa: ANN001, ANN202
    """The whole publish core, as the CLI runs it: one selection level, then the noisy table.
    Returns the released count of the cell (a=u, label=p) — 0 if the cell is not released."""
    from dpkit.release.maxgddp import MaxGDDP

    acc = Accountant(EPS)
    model = MaxGDDP(epsilon=EPS, levels=1, selection_share=0.1).fit(table, "label", accountant=acc, rng=rng)
    assert acc.spent <= EPS * (1 + 1e-9)
    rel = model.release_
    labels = model.cut_.labels()["a"]
    for cell, count in zip(rel.cells, rel.counts, strict=True):
        if labels[cell[0]] == "u" and rel.class_labels[cell[1]] == "p":
            return int(count)
    return 0


def test_publish_passes_audit(publish_tables):
    d, d_prime = publish_tables
    r = audit(_publish_release, d, d_prime, lambda c: c <= 3, epsilon=EPS, n=N_RUNS)
    print(r)
    assert not r.violation, str(r)
    assert r.epsilon_lower_bound > 0.15, f"the audit has no power: {r}"


def test_publish_audit_catches_3x(publish_tables, broken_noise):
    d, d_prime = publish_tables
    r = audit(_publish_release, d, d_prime, lambda c: c <= 3, epsilon=EPS, n=N_RUNS)
    print(r)
    assert r.violation, str(r)


SELECT_SCHEMA = """\
target: label
columns:
  a: {type: categorical, values: [u, v]}
  b: {type: categorical, values: [s, t]}
  label: {type: categorical, values: [p, q]}
"""


@pytest.fixture
def selection_tables():
    """Max(a) = Max(b) = 2 on D; D' adds (u, t, p), raising Max(a) to 3 and leaving Max(b)."""
    import pandas as pd

    pytest.importorskip("dpkit.release.maxgddp")
    from dpkit.data.schema import parse_schema
    from dpkit.data.table import encode

    s = parse_schema(SELECT_SCHEMA, "audit.yaml")
    rows = [("u", "s", "p"), ("v", "t", "q")]
    cols = ["a", "b", "label"]
    return (encode(pd.DataFrame(rows, columns=cols), s),
            encode(pd.DataFrame([*rows, ("u", "t", "p")], columns=cols), s))


def _publish_selection(table, rng):  # noqa: ANN001, ANN202
    """publish's first (and only) selection, with 90 % of ε: True if it specialized b."""
    from dpkit.release.maxgddp import MaxGDDP

    acc = Accountant(EPS)
    model = MaxGDDP(epsilon=EPS, levels=1, selection_share=0.9).fit(table, "label", accountant=acc, rng=rng)
    assert acc.spent <= EPS * (1 + 1e-9)
    return len(model.cut_.labels()["b"]) > 1


def test_publish_selection_passes_audit(selection_tables):
    d, d_prime = selection_tables
    r = audit(_publish_selection, d, d_prime, bool, epsilon=EPS, n=N_RUNS)
    print(r)
    assert not r.violation, str(r)


def test_publish_selection_audit_catches_3x(selection_tables):
    d, d_prime = selection_tables
    r = audit(lambda t, rng: _publish_selection(t, _ThirdLaplace(rng)), d, d_prime, bool,
              epsilon=EPS, n=N_RUNS)
    print(r)
    assert r.violation, str(r)
