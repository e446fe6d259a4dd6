"""The budget plan (dpkit.privacy.plan): named shares of ε whose sum is checked up front."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpkit
from dpkit.errors import DpkitUsageError
from dpkit.privacy.plan import BudgetPlan


def test_a_part_is_its_share_of_the_total_and_the_rest_what_was_not_spent() -> None:
    plan = BudgetPlan(2.0, {"domain": 0.2}, rest="algorithm")
    assert plan["domain"] == pytest.approx(0.4)
    assert plan.left(0.3) == pytest.approx(1.7)  # the domain spent less than its share: the rest gets it
    assert plan.parts() == {"domain": pytest.approx(0.4)}


def test_shares_over_the_whole_budget_are_refused_before_anything_is_spent() -> None:
    with pytest.raises(DpkitUsageError, match=r"add up to 1\.1.*domain 0\.6, splits 0\.5"):
        BudgetPlan(1.0, {"domain": 0.6, "splits": 0.5})


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5, math.nan, math.inf])
def test_a_share_outside_0_1_is_refused_naming_it(share: float) -> None:
    with pytest.raises(DpkitUsageError, match="share 'domain' must be between 0 and 1"):
        BudgetPlan(1.0, {"domain": share})


def test_the_rest_is_not_also_a_share_and_an_unknown_part_is_named() -> None:
    with pytest.raises(DpkitUsageError, match="both as a share and as the rest"):
        BudgetPlan(1.0, {"algorithm": 0.5}, rest="algorithm")
    with pytest.raises(KeyError, match="no part 'bounds'.*domain"):
        BudgetPlan(1.0, {"domain": 0.5})["bounds"]
    with pytest.raises(KeyError, match="no rest"):
        BudgetPlan(1.0, {"domain": 0.5}).left(0.5)


@given(st.floats(0.01, 100), st.lists(st.floats(1e-6, 1 - 1e-6), min_size=1, max_size=6), st.floats(0, 1))
def test_the_parts_and_the_rest_never_exceed_the_budget(epsilon: float, raw: list[float], used: float) -> None:
    """Invariant: Σ parts ≤ ε (relative tolerance 1e-9), and the parts' spends plus the rest ≤ ε."""
    total = math.fsum(raw)
    shares = {f"p{i}": s / total * 0.999 if total >= 1 else s for i, s in enumerate(raw)}
    plan = BudgetPlan(epsilon, shares, rest="rest")
    parts = plan.parts()
    assert math.fsum(parts.values()) <= epsilon * (1 + 1e-9)
    spent = math.fsum(parts.values()) * used  # the parts spent some of what they were given
    assert spent + plan.left(spent) <= epsilon * (1 + 1e-9)


def test_a_run_without_a_schema_books_its_domain_part_then_the_rest() -> None:
    """publish without a schema: the domain asks for at most share·ε, the algorithm the rest."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 3000),
                       "size": rng.integers(0, 50, 3000), "y": rng.choice(["a", "b"], 3000)})
    rel = dpkit.publish(df, target="y", epsilon=1.0, delta=1e-6, domain_share=0.25, random_state=1)
    domain = math.fsum(s["epsilon"] for s in rel.report["spends"] if s["step"].startswith("domain:"))
    assert 0 < domain <= 0.25 * (1 + 1e-9)
    assert rel.report["privacy"]["epsilon_spent"] <= 1.0 * (1 + 1e-9)
