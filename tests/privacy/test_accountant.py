"""Unit and property tests of the privacy accountant (dpkit.privacy.accountant)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.errors import DpkitError, DpkitUsageError
from dpkit.privacy.accountant import (
    TOLERANCE,
    Accountant,
    Budget,
    BudgetExceededError,
    Spend,
    validate_epsilon,
)


def assert_report_invariants(acc: Accountant) -> None:
    """docs/algorithms.md §0 rule 2: the report's spent ε is the sum of its entries, within budget."""
    report = acc.to_report()
    spends = report["spends"]
    assert isinstance(spends, list)
    assert report["epsilon_budget"] == acc.budget.epsilon
    assert report["epsilon_spent"] == math.fsum(s["epsilon"] for s in spends)
    assert report["epsilon_spent"] == acc.spent
    assert report["epsilon_spent"] <= report["epsilon_budget"] * (1 + TOLERANCE)
    assert report["epsilon_unspent"] == pytest.approx(
        max(report["epsilon_budget"] - report["epsilon_spent"], 0.0), abs=1e-15
    )
    assert report["epsilon_unspent"] >= 0
    for s in spends:
        assert set(s) == {"step", "mechanism", "epsilon", "sensitivity", "scope"}
        assert s["scope"] in ("sequential", "parallel")


# --------------------------------------------------------------------------- validate_epsilon


@pytest.mark.parametrize("value", [1e-12, 0.1, 1, 2.5, 1e6, "0.5"])
def test_validate_epsilon_accepts_finite_positive_numbers(value: object) -> None:
    assert validate_epsilon(value) == float(value)  # type: ignore[arg-type]
    assert isinstance(validate_epsilon(value), float)


@pytest.mark.parametrize(
    "value",
    [0, 0.0, -0.0, -1, -1e-12, math.nan, math.inf, -math.inf, "abc", "", "nan", "inf", "-1",
     "0", None, [1.0], True, False, object()],
)
def test_validate_epsilon_rejects(value: object) -> None:
    with pytest.raises(DpkitUsageError, match="eps"):
        validate_epsilon(value)


def test_validate_epsilon_names_the_parameter() -> None:
    with pytest.raises(DpkitUsageError, match="budget_for_tree"):
        validate_epsilon(-1, name="budget_for_tree")


def test_usage_errors_are_dpkit_errors_with_exit_code_2() -> None:
    with pytest.raises(DpkitError) as info:
        validate_epsilon("abc")
    assert info.value.exit_code == 2


# --------------------------------------------------------------------------- Budget


def test_budget_arithmetic() -> None:
    assert (Budget(1.0) - Budget(0.25)).epsilon == 0.75
    assert (Budget(0.5) + Budget(0.25)).epsilon == 0.75
    assert (Budget(0.5) * 3).epsilon == 1.5
    assert (Budget(1.0) - Budget(1.0)).epsilon == 0.0
    with pytest.raises(BudgetExceededError):
        Budget(0.3) - Budget(1.0)


@pytest.mark.parametrize("value", [-1.0, math.nan, math.inf])
def test_budget_rejects_bad_epsilon(value: float) -> None:
    with pytest.raises(DpkitUsageError):
        Budget(value)


def test_budget_is_immutable() -> None:
    b = Budget(1.0)
    with pytest.raises(AttributeError):
        b.epsilon = 2.0  # type: ignore[misc]


def test_budget_fits_with_relative_tolerance() -> None:
    b = Budget(1.0)
    assert b.fits(1.0)
    assert b.fits(1.0 + 0.5e-9)
    assert not b.fits(1.0 + 1e-8)


# --------------------------------------------------------------------------- Accountant basics


@pytest.mark.parametrize("budget", [0, -1, math.nan, math.inf, "abc"])
def test_accountant_rejects_bad_budget(budget: object) -> None:
    with pytest.raises(DpkitUsageError):
        Accountant(budget)  # type: ignore[arg-type]


def test_accountant_accepts_budget_object() -> None:
    acc = Accountant(Budget(2.0))
    assert acc.budget == Budget(2.0)
    assert acc.remaining == 2.0


def test_fresh_accountant() -> None:
    acc = Accountant(1.0)
    assert acc.spent == 0.0
    assert acc.remaining == 1.0
    assert acc.spends == ()
    assert_report_invariants(acc)


def test_check_does_not_record() -> None:
    acc = Accountant(1.0)
    acc.check(0.6, "a")
    acc.check(1.0, "a")
    assert acc.spends == ()
    assert acc.spent == 0.0


def test_check_raises_before_anything_is_spent() -> None:
    acc = Accountant(1.0)
    acc.spend("first", "m", 0.7)
    with pytest.raises(BudgetExceededError):
        acc.check(0.31, "second")
    acc.check(0.3, "second")
    assert len(acc.spends) == 1


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf])
def test_check_rejects_bad_epsilon(bad: float) -> None:
    acc = Accountant(1.0)
    with pytest.raises(DpkitUsageError):
        acc.check(bad, "s")
    with pytest.raises(DpkitUsageError):
        acc.spend("s", "m", bad)
    assert acc.spends == ()


def test_spend_records_entry() -> None:
    acc = Accountant(2.0)
    acc.spend("root split", "exponential (gumbel-max)", 0.5, 2.0)
    acc.spend("counts", "discrete laplace", 0.25)
    assert acc.spends == (
        Spend("root split", "exponential (gumbel-max)", 0.5, 2.0, "sequential"),
        Spend("counts", "discrete laplace", 0.25, 1.0, "sequential"),
    )
    assert acc.spent == 0.75
    assert acc.remaining == 1.25
    assert_report_invariants(acc)


def test_spends_is_a_read_only_copy() -> None:
    acc = Accountant(1.0)
    acc.spend("a", "m", 0.1)
    spends = acc.spends
    assert isinstance(spends, tuple)
    acc.spend("b", "m", 0.1)
    assert len(spends) == 1


def test_spend_zero_is_allowed() -> None:
    acc = Accountant(1.0)
    acc.spend("a", "m", 1.0)
    acc.spend("b", "m", 0.0)  # e.g. a public post-processing step
    assert acc.spent == 1.0


def test_overspend_raises_states_requested_and_remaining_and_records_nothing() -> None:
    acc = Accountant(1.0)
    acc.spend("first", "discrete laplace", 0.75)
    before = acc.spends
    with pytest.raises(BudgetExceededError) as info:
        acc.spend("second step", "exponential", 0.5)
    err = info.value
    msg = str(err)
    assert "requested epsilon=0.5" in msg
    assert "remaining epsilon=0.25" in msg
    assert "'second step'" in msg
    assert err.requested == 0.5
    assert err.remaining == pytest.approx(0.25)
    assert isinstance(err, DpkitError) and err.exit_code == 1
    assert acc.spends == before
    assert acc.spent == 0.75
    assert_report_invariants(acc)


def test_overspend_on_exhausted_budget_reports_zero_remaining() -> None:
    acc = Accountant(1.0)
    acc.spend("all", "m", 1.0)
    with pytest.raises(BudgetExceededError, match=r"remaining epsilon=0$"):
        acc.spend("more", "m", 0.01)
    assert acc.remaining == 0.0


def test_tolerance_ten_tenths_fit_in_one() -> None:
    acc = Accountant(1.0)
    for i in range(10):
        acc.spend(f"step {i}", "m", 0.1)
    assert len(acc.spends) == 10
    assert acc.spent == pytest.approx(1.0, rel=1e-12)
    assert acc.remaining == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExceededError):
        acc.spend("one more", "m", 1e-6)
    assert_report_invariants(acc)


@pytest.mark.parametrize("n", [3, 7, 10, 49, 100])
def test_tolerance_equal_thirds_etc(n: int) -> None:
    budget = 0.7
    acc = Accountant(budget)
    for i in range(n):
        acc.spend(f"s{i}", "m", budget / n)
    assert len(acc.spends) == n
    assert_report_invariants(acc)


def test_tolerance_is_relative() -> None:
    # 1e-9 relative of a budget of 1000 is 1e-6: a spend that much over still fits, more does not
    acc = Accountant(1000.0)
    acc.spend("a", "m", 1000.0 * (1 + 0.5e-9))
    acc2 = Accountant(1000.0)
    with pytest.raises(BudgetExceededError):
        acc2.spend("a", "m", 1000.0 * (1 + 1e-8))
    # for a small budget the slack is relative too, not an absolute 1e-9
    acc3 = Accountant(1e-3)
    with pytest.raises(BudgetExceededError):
        acc3.spend("a", "m", 1e-3 + 1e-10)


# --------------------------------------------------------------------------- split


def test_split_by_weights() -> None:
    acc = Accountant(1.0)
    parts = acc.split([1, 2, 1])
    assert parts == pytest.approx([0.25, 0.5, 0.25])
    assert math.fsum(parts) == pytest.approx(1.0)
    assert acc.spends == ()  # splitting spends nothing


def test_split_defaults_to_remaining() -> None:
    acc = Accountant(2.0)
    acc.spend("a", "m", 0.5)
    parts = acc.split([1, 1, 1])
    assert parts == pytest.approx([0.5, 0.5, 0.5])
    for i, p in enumerate(parts):
        acc.spend(f"part {i}", "m", p)
    assert acc.remaining == pytest.approx(0.0, abs=1e-12)
    assert_report_invariants(acc)


def test_split_explicit_epsilon_and_zero_weight() -> None:
    acc = Accountant(10.0)
    assert acc.split([0, 3, 1], epsilon=2.0) == pytest.approx([0.0, 1.5, 0.5])


def test_split_parts_always_fit() -> None:
    acc = Accountant(1.0)
    weights = [0.1, 0.2, 0.3, 0.15, 0.25, 1 / 3, 1 / 7]
    for i, p in enumerate(acc.split(weights)):
        acc.spend(f"p{i}", "m", p)
    assert len(acc.spends) == len(weights)


@pytest.mark.parametrize("weights", [[], [0, 0], [-1, 2], [1, -0.5], [math.nan, 1], [math.inf, 1]])
def test_split_rejects_bad_weights(weights: list[float]) -> None:
    with pytest.raises(DpkitUsageError):
        Accountant(1.0).split(weights)


# --------------------------------------------------------------------------- parallel


def test_parallel_records_one_entry_with_max_epsilon() -> None:
    acc = Accountant(1.0)
    acc.spend("root", "exponential (gumbel-max)", 0.2)
    with acc.parallel("level 1", 0.5) as scope:
        left = scope.part()
        left.spend("left counts", "discrete laplace", 0.3, 1.0)
        right = scope.part()
        right.spend("right split", "exponential (gumbel-max)", 0.25, 2.0)
        right.spend("right counts", "discrete laplace", 0.25, 1.0)
        scope.part()  # a part that spends nothing
    assert len(acc.spends) == 2
    entry = acc.spends[-1]
    assert entry.step == "level 1"
    assert entry.scope == "parallel"
    assert entry.epsilon == pytest.approx(0.5)  # max over parts: right spent 0.5, left 0.3
    assert entry.sensitivity == 2.0  # the largest sensitivity of any part
    assert entry.mechanism == "discrete laplace + exponential (gumbel-max)"
    assert acc.spent == pytest.approx(0.7)
    assert_report_invariants(acc)


def test_parallel_records_the_used_amount_not_the_allowed() -> None:
    acc = Accountant(1.0)
    with acc.parallel("level", 0.8) as scope:
        scope.part().spend("a", "m", 0.1)
        scope.part().spend("b", "m", 0.3)
    assert acc.spends[0].epsilon == pytest.approx(0.3)


def test_parallel_with_nothing_spent_records_nothing() -> None:
    acc = Accountant(1.0)
    with acc.parallel("empty level", 0.5) as scope:
        scope.part()
    assert acc.spends == ()


def test_parallel_part_over_its_epsilon_raises_and_keeps_what_was_drawn() -> None:
    acc = Accountant(1.0)
    with pytest.raises(BudgetExceededError), acc.parallel("level", 0.4) as scope:
        part = scope.part()
        part.spend("a", "m", 0.3)
        part.spend("b", "m", 0.2)  # 0.5 > 0.4 within one part: refused, records nothing
    # the 0.3 already drawn stays on the record (privacy review F3)
    assert acc.spent == pytest.approx(0.3)
    assert [s.scope for s in acc.spends] == ["parallel"]


def test_parallel_each_part_has_the_full_level_epsilon() -> None:
    acc = Accountant(1.0)
    with acc.parallel("level", 0.4) as scope:
        for _ in range(20):  # 20 × 0.4 = 8 sequentially, but disjoint parts: 0.4 in all
            scope.part().spend("node", "m", 0.4)
    assert acc.spent == pytest.approx(0.4)
    assert len(acc.spends) == 1


def test_parallel_checks_budget_before_entering() -> None:
    acc = Accountant(1.0)
    acc.spend("a", "m", 0.8)
    entered = False
    with pytest.raises(BudgetExceededError), acc.parallel("level", 0.5):
        entered = True
    assert not entered
    assert len(acc.spends) == 1


def test_parallel_body_error_keeps_the_spend() -> None:
    acc = Accountant(1.0)
    with pytest.raises(RuntimeError), acc.parallel("level", 0.5) as scope:
        scope.part().spend("a", "m", 0.5)
        raise RuntimeError("boom")
    assert acc.spent == pytest.approx(0.5)  # noise was drawn: the failure does not undo it


def test_parallel_error_before_any_draw_records_nothing() -> None:
    acc = Accountant(1.0)
    with pytest.raises(RuntimeError), acc.parallel("level", 0.5) as scope:
        scope.part()
        raise RuntimeError("boom")
    assert acc.spends == ()


def test_parallel_then_sequential_respects_budget() -> None:
    acc = Accountant(1.0)
    with acc.parallel("level", 0.6) as scope:
        scope.part().spend("a", "m", 0.6)
    with pytest.raises(BudgetExceededError):
        acc.spend("b", "m", 0.5)
    acc.spend("b", "m", 0.4)
    assert_report_invariants(acc)


# --------------------------------------------------------------------------- report


def test_to_report_invariants_and_round_trip() -> None:
    acc = Accountant(3.0)
    acc.spend("a", "discrete laplace", 1.0, 1.0)
    with acc.parallel("b", 1.0) as scope:
        scope.part().spend("b1", "permute-and-flip", 1.0, 3.0)
    report = acc.to_report()
    assert report["epsilon_budget"] == 3.0
    assert report["epsilon_spent"] == 2.0
    assert report["epsilon_unspent"] == 1.0
    assert report["spends"] == [
        {"step": "a", "mechanism": "discrete laplace", "epsilon": 1.0, "sensitivity": 1.0,
         "scope": "sequential"},
        {"step": "b", "mechanism": "permute-and-flip", "epsilon": 1.0, "sensitivity": 3.0,
         "scope": "parallel"},
    ]
    assert_report_invariants(acc)


# --------------------------------------------------------------------------- property


_action = st.one_of(
    # a spend of some fraction of the budget (often too much)
    st.tuples(st.just("spend"), st.floats(0.0, 1.3)),
    # a spend of (nearly) exactly what remains: exercises the tolerance boundary
    st.tuples(st.just("rest"), st.floats(-1e-8, 1e-8)),
    # a parallel step in which one part may overrun
    st.tuples(st.just("parallel"), st.floats(0.0, 1.3), st.lists(st.floats(0.0, 1.5), max_size=4)),
)


@settings(max_examples=300, deadline=None)
@given(
    budget=st.floats(min_value=1e-12, max_value=1e6, allow_nan=False, allow_infinity=False),
    actions=st.lists(_action, max_size=40),
)
def test_property_spent_never_exceeds_budget(budget: float, actions: list[tuple]) -> None:
    acc = Accountant(budget)
    for action in actions:
        before = acc.spends
        try:
            if action[0] == "spend":
                acc.spend("s", "m", action[1] * budget)
            elif action[0] == "rest":
                acc.spend("s", "m", max(acc.remaining * (1 + action[1]), 0.0))
            else:
                eps = action[1] * budget
                with acc.parallel("p", eps) as scope:
                    for frac in action[2]:
                        scope.part().spend("part", "m", frac * eps)
        except BudgetExceededError:
            if action[0] == "parallel":
                # parts that drew before the refused one stay recorded, as one entry
                assert len(acc.spends) - len(before) in (0, 1)
            else:
                assert acc.spends == before  # a refused spend records nothing
        else:
            assert len(acc.spends) - len(before) in (0, 1)
        assert acc.spent <= budget * (1 + TOLERANCE)
        assert math.fsum(s.epsilon for s in acc.spends) == acc.spent
        assert acc.spent == acc.to_report()["epsilon_spent"]
        assert all(s.epsilon >= 0 for s in acc.spends)
    assert_report_invariants(acc)
