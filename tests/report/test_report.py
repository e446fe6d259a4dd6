"""Report invariants (docs/formats.md): Σ spends = epsilon_spent ≤ budget, public content only."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.errors import DataError
from dpkit.privacy import Accountant
from dpkit.privacy.accountant import BudgetExceededError
from dpkit.privacy.mechanisms import discrete_laplace, report_noisy_max
from dpkit.privacy.rng import make_rng
from dpkit.report import build_kanon_report, build_report, dumps, read_report, write_report

TOP_KEYS = {"dpkit_version", "report_version", "command", "algorithm", "privacy", "spends", "parameters", "release"}
PRIVACY_KEYS = {"model", "neighbours", "epsilon_budget", "epsilon_spent", "epsilon_unspent", "delta", "seeded", "guarantee"}
SPEND_KEYS = {"step", "mechanism", "epsilon", "sensitivity", "scope"}


def check_invariants(report: dict) -> None:
    assert set(report) == TOP_KEYS
    p = report["privacy"]
    assert set(p) == PRIVACY_KEYS
    expected = "none" if p["guarantee"].startswith("none") else "epsilon-dp"
    assert p["model"] == expected and p["delta"] == 0
    total = math.fsum(s["epsilon"] for s in report["spends"])
    assert total == pytest.approx(p["epsilon_spent"], rel=1e-12, abs=1e-12)
    assert p["epsilon_spent"] <= p["epsilon_budget"] * (1 + 1e-9)
    assert p["epsilon_unspent"] == pytest.approx(max(p["epsilon_budget"] - p["epsilon_spent"], 0.0), abs=1e-12)
    for s in report["spends"]:
        assert set(s) == SPEND_KEYS
        assert s["epsilon"] >= 0 and s["scope"] in ("sequential", "parallel")
    # JSON round trip: the report is plain, finite JSON
    data = json.loads(dumps(report))
    assert dumps(data) == dumps(report)
    assert data["privacy"]["epsilon_spent"] == p["epsilon_spent"]


@st.composite
def plans(draw):
    """A random run: sequential spends, splits and parallel levels within a budget."""
    budget = draw(st.floats(0.01, 10))
    steps = draw(st.lists(st.tuples(st.sampled_from(["seq", "par"]), st.floats(0.0, 1.0), st.integers(1, 4)),
                          min_size=0, max_size=12))
    return budget, steps


@settings(max_examples=60, deadline=None)
@given(plans(), st.booleans())
def test_invariants_hold_for_any_run(plan, seeded):
    budget, steps = plan
    acc = Accountant(budget)
    for i, (kind, share, parts) in enumerate(steps):
        eps = share * acc.remaining
        try:
            if kind == "seq":
                acc.spend(f"step {i}", "discrete-laplace", eps, 1.0)
            else:
                with acc.parallel(f"level {i}", eps) as lvl:
                    for _ in range(parts):
                        part = lvl.part()
                        part.spend("node", "report-noisy-max", eps * share, 1.0)
        except BudgetExceededError:
            pass  # refused spends leave the accountant unchanged; invariants still hold
    report = build_report(
        command="publish", algorithm="maxgddp", accountant=acc, seeded=seeded,
        parameters={"levels": 3}, release={"cut": {"a": ["x"]}},
    )
    check_invariants(report)
    assert report["privacy"]["seeded"] is seeded
    assert ("seed" in report["privacy"]["guarantee"]) is seeded


def test_overspend_is_refused_and_not_recorded():
    acc = Accountant(1.0)
    acc.spend("a", "m", 0.6)
    with pytest.raises(BudgetExceededError, match=r"requested epsilon=0\.5, remaining epsilon=0\.4"):
        acc.spend("b", "m", 0.5)
    report = build_report(command="c", algorithm="a", accountant=acc, seeded=False, parameters={})
    check_invariants(report)
    assert [s["step"] for s in report["spends"]] == ["a"]
    # exactly the budget, in many float pieces, fits (1e-9 tolerance)
    acc = Accountant(1.0)
    for _ in range(10):
        acc.spend("p", "m", 0.1)
    check_invariants(build_report(command="c", algorithm="a", accountant=acc, seeded=False, parameters={}))


def test_report_after_real_mechanisms_holds_no_exact_counts():
    """Only the accountant, the parameters and the release reach the report."""
    counts = np.array([1234567, 7654321, 3141592])  # distinctive exact values
    acc = Accountant(1.0)
    rng = make_rng(7)
    noisy = discrete_laplace(counts, epsilon=0.5, rng=rng, accountant=acc, step="counts")
    best = report_noisy_max(counts.astype(float), epsilon=0.5, monotone=True, rng=rng, accountant=acc, step="pick")
    report = build_report(
        command="publish", algorithm="test", accountant=acc, seeded=True,
        parameters={"epsilon": 1.0}, release={"noisy": noisy, "best": best},
    )
    check_invariants(report)
    text = dumps(report)
    for c in counts:
        assert str(int(c)) not in text
    assert report["privacy"]["epsilon_spent"] == pytest.approx(1.0)
    assert [s["step"] for s in report["spends"]] == ["counts", "pick"]


def test_guarantee_override_and_unspent():
    acc = Accountant(2.0)
    acc.spend("a", "m", 0.5)
    r = build_report(command="c", algorithm="a", accountant=acc, seeded=False, parameters={},
                     guarantee="none: domain read from data")
    check_invariants(r)
    assert r["privacy"]["guarantee"] == "none: domain read from data"
    assert r["privacy"]["model"] == "none"  # not "epsilon-dp" beside a "none" guarantee
    assert r["privacy"]["epsilon_unspent"] == pytest.approx(1.5)


def test_kanon_report_states_k_not_epsilon():
    r = build_kanon_report(command="kanon-select", algorithm="xgb-ka", k=5, parameters={"k": 5},
                           release={"class_sizes": {"5": 3}})
    assert r["privacy"] == {"model": "k-anonymity", "k": 5}
    assert "epsilon" not in dumps(r) and "spends" not in r


def test_json_safety():
    acc = Accountant(1.0)
    r = build_report(command="c", algorithm="a", accountant=acc, seeded=False,
                     parameters={"x": np.int64(3), "y": np.float32(0.5), "z": (1, 2)},
                     release={"arr": np.arange(3)})
    data = json.loads(dumps(r))
    assert data["parameters"] == {"x": 3, "y": 0.5, "z": [1, 2]} and data["release"] == {"arr": [0, 1, 2]}
    bad = build_report(command="c", algorithm="a", accountant=acc, seeded=False, parameters={"x": float("nan")})
    with pytest.raises(ValueError, match="not finite"):
        dumps(bad)


def test_write_read_roundtrip_and_errors(tmp_path):
    acc = Accountant(1.0)
    acc.spend("a", "m", 0.25)
    r = build_report(command="c", algorithm="a", accountant=acc, seeded=False, parameters={"k": "v"})
    p = tmp_path / "r.json"
    write_report(r, p)
    assert read_report(p) == json.loads(dumps(r))
    # a report that cannot be serialized leaves no file behind
    with pytest.raises(ValueError):
        write_report({**r, "parameters": {"x": float("inf")}}, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()
    with pytest.raises(DataError, match="report file not found"):
        read_report(tmp_path / "nope.json")
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(DataError, match="invalid JSON"):
        read_report(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"a": 1}')
    with pytest.raises(DataError, match="no dpkit_version"):
        read_report(tmp_path / "y.json")
