"""(ε, δ) reports (issue 22): the privacy block when a run has a δ, and the pure-ε block unchanged."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.privacy import Accountant
from dpkit.report import build_report, dumps

#: the exact text of a pure-ε privacy block and spend before issue 22 (key order included)
PURE = """{
  "dpkit_version": "X",
  "report_version": 1,
  "command": "publish",
  "algorithm": "maxgddp",
  "privacy": {
    "model": "epsilon-dp",
    "neighbours": "add/remove one record within the schema's domain",
    "epsilon_budget": 1.0,
    "epsilon_spent": 0.5,
    "epsilon_unspent": 0.5,
    "delta": 0,
    "seeded": false,
    "guarantee": "epsilon-DP with epsilon=0.5"
  },
  "spends": [
    {
      "step": "noisy counts",
      "mechanism": "discrete laplace",
      "epsilon": 0.5,
      "sensitivity": 1.0,
      "scope": "sequential"
    }
  ],
  "parameters": {},
  "release": {}
}
"""


def report(acc: Accountant, **kw) -> dict:  # noqa: ANN003
    rep = build_report(command="publish", algorithm="maxgddp", accountant=acc, seeded=False, parameters={}, **kw)
    rep["dpkit_version"] = "X"
    return rep


def test_pure_epsilon_report_is_byte_for_byte_unchanged() -> None:
    acc = Accountant(1.0)
    acc.spend("noisy counts", "discrete laplace", 0.5)
    assert dumps(report(acc)) == PURE
    acc0 = Accountant(1.0, delta=0.0)  # an explicit δ of 0 is still pure ε
    acc0.spend("noisy counts", "discrete laplace", 0.5)
    assert dumps(report(acc0)) == PURE


def test_epsilon_delta_report() -> None:
    acc = Accountant(1.0, delta=1e-6)
    acc.spend("domain: categories of a", "partition selection", 0.1, delta=1e-6)
    acc.spend("noisy counts", "discrete laplace", 0.5)
    p = report(acc)["privacy"]
    assert list(p) == ["model", "neighbours", "epsilon_budget", "epsilon_spent", "epsilon_unspent", "delta",
                       "delta_budget", "delta_spent", "seeded", "guarantee"]
    assert p["model"] == "(epsilon, delta)-dp" and p["delta"] == 1e-6 == p["delta_spent"] == p["delta_budget"]
    assert p["guarantee"] == "(epsilon, delta)-DP with epsilon=0.6, delta=1e-06"
    spends = report(acc)["spends"]
    assert spends[0]["delta"] == 1e-6 and "delta" not in spends[1]


def test_a_delta_budget_alone_makes_the_run_approximate() -> None:
    """A run that asked for δ but spent none (a table with no categorical column) still states it."""
    acc = Accountant(1.0, delta=1e-6)
    acc.spend("bounds", "exponential", 0.5)
    p = report(acc)["privacy"]
    assert p["model"] == "(epsilon, delta)-dp" and p["delta"] == 0 and p["delta_budget"] == 1e-6


def test_seeded_and_none_guarantees_keep_their_model() -> None:
    acc = Accountant(1.0, delta=1e-6)
    acc.spend("s", "m", 0.5, delta=1e-7)
    assert report(acc, guarantee="none: domain read from data")["privacy"]["model"] == "none"
    rep = build_report(command="c", algorithm="a", accountant=acc, seeded=True, seed_is_key=True, parameters={})
    assert rep["privacy"]["guarantee"].endswith("while the seed (a 128+ bit key) stays secret")
    assert rep["privacy"]["model"] == "(epsilon, delta)-dp"


@given(st.lists(st.tuples(st.floats(0, 0.1), st.floats(0, 1e-7)), max_size=10))
def test_delta_sums_like_epsilon(steps: list[tuple[float, float]]) -> None:
    acc = Accountant(1.0, delta=1e-6)
    for eps, d in steps:
        acc.spend("s", "m", eps, delta=d)
    p = report(acc)["privacy"]
    assert p["delta_spent"] == math.fsum(d for _, d in steps) <= 1e-6 * (1 + 1e-9)
    assert p["epsilon_spent"] == pytest.approx(math.fsum(e for e, _ in steps))


def test_private_run_passes_delta_to_the_accountant_and_report(tmp_path) -> None:  # noqa: ANN001
    from dpkit.run import PrivateRun

    run = PrivateRun("taxonomy infer", "domain discovery", 1.0, None, inputs=[], outputs=[], delta=1e-6)
    with run:
        run.accountant.spend("s", "m", 0.5, delta=1e-6)
    assert run.report({})["privacy"]["model"] == "(epsilon, delta)-dp"
    plain = PrivateRun("publish", "maxgddp", 1.0, None, inputs=[], outputs=[])
    assert plain.accountant.delta_budget == 0 and "delta_budget" not in plain.report({})["privacy"]
