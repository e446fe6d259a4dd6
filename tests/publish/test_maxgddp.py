from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.algorithms.publish.diffgen import DiffGen
from dpkit.algorithms.publish.maxgddp import (
    GEOMETRIC_RATIO,
    MaxGDDP,
    geometric_budgets,
    level_budget,
)
from dpkit.errors import DpkitUsageError
from dpkit.io.table import EncodedTable
from dpkit.privacy import Accountant, make_rng
from dpkit.schema.parse import parse_schema


def test_geometric_budgets_follow_theorem_2():
    b = geometric_budgets(0.5, 13)
    assert math.isclose(math.fsum(b), 0.5)
    r = GEOMETRIC_RATIO
    assert math.isclose(b[0], 0.5 * (1 - r) / (1 - r**13))
    assert all(math.isclose(b[i + 1] / b[i], 3 ** (1 / 3)) for i in range(12))


@pytest.mark.parametrize("allocation", ["geometric", "uniform", "adaptive"])
def test_level_budgets_sum_to_the_selection_budget(allocation):
    remaining, spent, fan = 0.5, [], 4.0
    for level in range(1, 8):
        e = level_budget(allocation, remaining, 8 - level, fan * 2**level, fan, level)
        assert 0 < e <= remaining + 1e-15
        spent.append(e)
        remaining -= e
    assert math.isclose(math.fsum(spent), 0.5)
    if allocation == "uniform":
        assert np.allclose(spent, 0.5 / 7)
    if allocation == "geometric":
        assert np.allclose(spent, geometric_budgets(0.5, 7))


@pytest.mark.parametrize("selector", ["report-noisy-max", "exponential", "permute-and-flip"])
@pytest.mark.parametrize("allocation", ["geometric", "uniform", "adaptive"])
def test_fit_spends_exactly_epsilon(table, selector, allocation):
    acc = Accountant(1.0)
    m = MaxGDDP(epsilon=1.0, levels=4, selector=selector, allocation=allocation, grid=4)
    m.fit(table, "label", accountant=acc, rng=make_rng(3))
    assert math.isclose(acc.spent, 1.0) and acc.spent <= 1.0 + 1e-9
    steps = [s.step for s in acc.spends]
    assert steps == ["select level 1", "select level 2", "select level 3", "select level 4", "noisy counts"]
    assert len(m.selections_) == 4
    assert m.cut_.n_cells() > 1
    assert m.release_.cells.shape[1] == 5 and np.all(m.release_.counts > 0)


def test_leftover_selection_budget_moves_to_counts():
    schema = parse_schema("target: y\ncolumns:\n  c: {type: categorical, values: [p, q]}\n  y: {type: categorical, values: [a, b]}\n")
    t = EncodedTable(schema, {"c": np.array([0, 1, 1], np.int32), "y": np.array([0, 1, 1], np.int32)}, 3)
    acc = Accountant(1.0)
    m = MaxGDDP(epsilon=1.0, levels=5, allocation="uniform").fit(t, "y", accountant=acc, rng=make_rng(0))
    assert len(m.selections_) == 1  # after Any -> {p, q} nothing is left to specialize
    assert math.isclose(m.epsilon_counts_, 1.0 - 0.5 / 5)
    assert math.isclose(acc.spent, 1.0)


def test_bad_parameters_are_usage_errors(table):
    for kw in ({"levels": 0}, {"selection_share": 1.0}, {"grid": 0}, {"allocation": "x"}, {"selector": "x"},
               {"score": "entropy"}):
        with pytest.raises(DpkitUsageError):
            MaxGDDP(epsilon=1.0, **kw).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(0))


def test_seeded_fit_is_reproducible(table):
    a = MaxGDDP(epsilon=1.0, levels=3).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(5))
    b = MaxGDDP(epsilon=1.0, levels=3).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(5))
    assert a.cut_.to_json() == b.cut_.to_json()
    assert np.array_equal(a.release_.counts, b.release_.counts)


def test_high_epsilon_picks_the_best_candidate(table):
    """With a huge selection budget the noisy max is the exact max: age splits first."""
    m = MaxGDDP(epsilon=1e6, levels=1, grid=32).fit(table, "label", accountant=Accountant(1e6), rng=make_rng(1))
    assert m.selections_[0].choice.startswith("age:") or m.selections_[0].choice.startswith("color:")


def test_diffgen_budget_and_invariants(table):
    acc = Accountant(1.0)
    d = DiffGen(epsilon=1.0, levels=4).fit(table, "label", accountant=acc, rng=make_rng(2))
    eps_p = 1.0 / (2 * (2 + 2 * 4))  # two grid-split numeric attributes (band has a hierarchy)
    sel = [s for s in acc.spends if s.step.startswith("select")]
    assert len(sel) == 4 and all(math.isclose(s.epsilon, eps_p) for s in sel)
    assert [s.step for s in acc.spends[:2]] == ["split point age", "split point size"]
    assert acc.spends[-1].step == "noisy counts" and acc.spends[-1].epsilon >= 0.5 - 1e-12
    assert math.isclose(acc.spent, 1.0)
    assert len(d.selections_) == 4 and d.epsilon_counts_ >= 0.5 - 1e-12
    par = [s for s in acc.spends if s.scope == "parallel"]
    assert all(math.isclose(s.epsilon, eps_p) for s in par)


@pytest.mark.parametrize("score, monotone", [("max", True), ("gini", False)])
def test_the_gini_score_is_selected_as_not_monotone(table, monkeypatch, score, monotone):
    """Gini's sensitivity is 1 either way (not monotone): its report-noisy-max must use the
    general 2Δ/ε noise (dpkit.algorithms.publish.scoring); Max keeps the paper's Δ/ε. Only Max is an
    integer on every data set: Gini's scores go to the fixed rounding grid (issue 38)."""
    import dpkit.algorithms.publish.maxgddp as mod

    seen = []
    real = mod.report_noisy_max

    def spy(scores, **kw):
        seen.append((kw["sensitivity"], kw["monotone"], kw["integer"]))
        return real(scores, **kw)

    monkeypatch.setattr(mod, "report_noisy_max", spy)
    m = MaxGDDP(epsilon=1.0, levels=3, grid=4, score=score).fit(table, "label", accountant=Accountant(1.0),
                                                                 rng=make_rng(1))
    assert m.score_ == score and seen and set(seen) == {(1.0, monotone, monotone)}


def test_auto_score_resolves_from_the_noisy_count(table):
    # a fixed h draws no Ñ: the paper's Max; auto on this small table: Ñ·ε < 5000, Max too
    assert MaxGDDP(epsilon=1.0, levels=3).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(0)).score_ == "max"
    big = MaxGDDP(epsilon=1e4).fit(table, "label", accountant=Accountant(1e4), rng=make_rng(0))
    assert big.depth_.n_hat * 1e4 >= 5000 and big.score_ == "gini"
