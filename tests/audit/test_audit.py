"""publish's selection audit (issue 8) and the harness's own check.

The selection audit catches a selection spending 3ε while reporting ε; a 2× selection is
caught at the mechanism level (report-noisy-max, test_pipeline_audits.py), not through a
whole publish run: with a two-candidate selection the event has P ≈ 0.1 and a ratio below
e^{2ε}, which needs ~30,000 fits a side — minutes of publish runs (issue 14).

Each audit runs a release many times on two neighbouring tiny data sets (one record apart)
and checks that the probability of an output event differs by at most e^ε, with
Clopper-Pearson bounds (tests/audit/dp_audit.py). Events are chosen where the mechanism is
tight (the probability ratio is exactly e^ε), so the same run count that passes the honest
code proves the broken one wrong.
"""

from __future__ import annotations

import os
import sys

import pytest

from dpkit.privacy import Accountant

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_audit import audit, clopper_pearson  # noqa: E402  (the harness, a sibling module)

pytestmark = pytest.mark.statistical

EPS = 0.5
N_RUNS = 2000


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


# The mechanism and pipeline audits with searched events and 2× variants are in
# test_pipeline_audits.py; this file keeps the harness check and publish's selection audit.


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

    pytest.importorskip("dpkit.algorithms.publish.maxgddp")
    from dpkit.data.encode import encode
    from dpkit.schema.parse import parse_schema

    s = parse_schema(SELECT_SCHEMA, "audit.yaml")
    rows = [("u", "s", "p"), ("v", "t", "q")]
    cols = ["a", "b", "label"]
    return (encode(pd.DataFrame(rows, columns=cols), s),
            encode(pd.DataFrame([*rows, ("u", "t", "p")], columns=cols), s))


def _publish_selection(table, rng):  # noqa: ANN001, ANN202
    """publish's first (and only) selection, with 90 % of ε: True if it specialized b."""
    from dpkit.algorithms.publish.maxgddp import MaxGDDP

    acc = Accountant(EPS)
    model = MaxGDDP(epsilon=EPS, levels=1, selection_share=0.9).fit(table, "label", accountant=acc, rng=rng)
    assert acc.spent <= EPS * (1 + 1e-9)
    return len(model.cut_.labels()["b"]) > 1


def test_publish_selection_passes_audit(selection_tables):
    d, d_prime = selection_tables
    r = audit(_publish_selection, d, d_prime, bool, epsilon=EPS, n=N_RUNS)
    print(r)
    assert not r.violation, str(r)


def test_publish_selection_audit_catches_3x(selection_tables, monkeypatch):
    # report-noisy-max draws exact discrete Laplace (issue 24): break it at 3ε there
    import dpkit.privacy.mechanisms as mech

    real = mech.sample_discrete_laplace
    monkeypatch.setattr(mech.laplace, "sample_discrete_laplace", lambda rng, eps, size: real(rng, eps * 3, size))
    d, d_prime = selection_tables
    r = audit(lambda t, rng: _publish_selection(t, rng), d, d_prime, bool, epsilon=EPS, n=N_RUNS)
    print(r)
    assert r.violation, str(r)
