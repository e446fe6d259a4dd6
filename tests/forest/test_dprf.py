"""DiffPRFs tree logic, utilities and their sensitivities, on tiny data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.algorithms.forest import dprf
from dpkit.algorithms.forest.dprf import (
    DiffPRFs,
    choose_features,
    class_weights,
    resolve_features_per_node,
    split_utility,
    utility_sensitivity,
)
from dpkit.algorithms.forest.model import predict
from dpkit.data.encode import encode
from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, make_rng

from .conftest import make_frame

# ----------------------------------------------------------------------------- counting


def test_split_utilities_by_hand() -> None:
    m = np.array([[[8, 2], [1, 9]]])  # two children
    assert split_utility(m, "max")[0] == 17
    gini = -((10 - (64 + 4) / 10) + (10 - (1 + 81) / 10))
    assert split_utility(m, "gini")[0] == pytest.approx(gini)
    ent = -(8 * math.log2(10 / 8) + 2 * math.log2(10 / 2) + 1 * math.log2(10) + 9 * math.log2(10 / 9))
    assert split_utility(m, "info-gain")[0] == pytest.approx(ent)
    # a pure split is the best possible information gain (0 conditional entropy)
    assert split_utility(np.array([[[10, 0], [0, 10]]]), "info-gain")[0] == 0.0
    # the cap bounds each record's term
    assert split_utility(m, "info-gain", cap=1.0)[0] == pytest.approx(-(8 * math.log2(10 / 8) + 2 + 1 + 9 * math.log2(10 / 9)))
    # balanced: class 0 weighs 1/4 → max(2, 2) + max(0.25, 9)
    assert split_utility(m, "balanced", weights=np.array([0.25, 1.0]))[0] == pytest.approx(11.0)


def test_class_weights_are_inverse_noisy_shares() -> None:
    grid = 2.0**-20
    assert class_weights([900, 100]).tolist() == pytest.approx([100 / 900, 1.0], abs=grid)
    assert class_weights([-3, 50]).tolist() == pytest.approx([1.0, 1 / 50], abs=grid)  # a count <= 0 reads as 1
    # floored at the noise's standard deviation: a rare count drawn near 0 cannot make weights extreme
    assert class_weights([2, 300], floor=30.0).tolist() == pytest.approx([1.0, 30 / 300], abs=grid)
    assert class_weights([900, 100], floor=30.0).tolist() == pytest.approx([100 / 900, 1.0], abs=grid)
    # multiples of 2^-20, rounded down (never above the exact ratio, never 0)
    w = class_weights([3, 7, 10**9])
    assert all((x / grid).is_integer() for x in w) and w[0] == 1.0 and w[1] <= 3 / 7 and w[2] == grid


def test_weighted_counts_are_exact_in_floats() -> None:
    """With dyadic weights, w·(n+1) − w·n is exactly w (≤ 1) even for large n: the bound Δ = 1
    holds for the utility as computed."""
    w = class_weights([3, 7])
    for n in (0, 1, 12345, 2**31 - 1, 2**32):
        m = np.array([[[n, n], [0, 0]]])
        up = m.copy()
        up[0, 0, 1] += 1
        assert split_utility(up, "balanced", weights=w)[0] - split_utility(m, "balanced", weights=w)[0] in (0.0, w[1])
    with pytest.raises(DpkitUsageError, match="class weights"):
        split_utility(np.ones((1, 2, 2)), "balanced")


def test_balanced_utility_sees_a_split_that_max_cannot() -> None:
    """90 vs 10 records: a split sending 8 of the 10 rare records to one side (with 30 common
    ones) does not change any child's majority, so ``max`` scores it as no split at all;
    ``balanced`` prefers it."""
    none_ = np.array([[[90, 10], [0, 0]]])
    split = np.array([[[60, 2], [30, 8]]])
    assert split_utility(split, "max")[0] == split_utility(none_, "max")[0]
    w = class_weights([90, 10])
    assert split_utility(split, "balanced", weights=w)[0] > split_utility(none_, "balanced", weights=w)[0]


def test_empty_children_score_zero() -> None:
    m = np.zeros((1, 3, 2))
    for u in ("max", "gini", "info-gain", "balanced"):
        assert split_utility(m, u, weights=np.array([0.5, 1.0]))[0] == 0.0


@pytest.mark.parametrize("utility", ["max", "gini", "info-gain", "balanced"])
def test_sensitivity_bounds_hold_for_every_neighbour(utility: str) -> None:
    """Adding one record to any cell moves the utility by at most Δ (and up only if monotone)."""
    rng = np.random.default_rng(7)
    weights = None
    cap = math.log2(20 + 1)  # deliberately smaller than many nodes below: the bound must still hold
    sens, monotone = utility_sensitivity(utility, cap)
    worst = 0.0
    for _ in range(400):
        j, c = rng.integers(1, 4), rng.integers(2, 4)
        m = rng.integers(0, rng.choice([3, 30, 300]), size=(j, c))
        if utility == "balanced":
            weights = class_weights(rng.integers(1, 1000, size=c))
        base = split_utility(m[None], utility, cap, weights)[0]
        for a in range(j):
            for b in range(c):
                m2 = m.copy()
                m2[a, b] += 1
                diff = split_utility(m2[None], utility, cap, weights)[0] - base
                worst = max(worst, abs(diff))
                assert abs(diff) <= sens + 1e-9, (m, a, b, diff)
                if monotone:
                    assert diff >= 0
    assert worst > 0.5 * sens  # the test data reach near the bound (so it can fail)


def test_features_per_node() -> None:
    assert resolve_features_per_node("sqrt", 13) == 3
    assert resolve_features_per_node("all", 13) == 13
    assert resolve_features_per_node(20, 13) == 13
    assert resolve_features_per_node("2", 13) == 2
    for bad in (0, "x", -1, 1.5):
        with pytest.raises(DpkitUsageError):
            resolve_features_per_node(bad, 13)
    picked = choose_features(np.random.default_rng(0), [4, 7, 9, 11], 2)
    assert len(picked) == 2 and set(picked) <= {4, 7, 9, 11}


# ----------------------------------------------------------------------------- trees


def _fit(table, **kw) -> DiffPRFs:
    eps = kw.pop("epsilon", 1.0)
    seed = kw.pop("seed", 1)
    return DiffPRFs(epsilon=eps, **kw).fit(table, "label", accountant=Accountant(eps), rng=make_rng(seed))


def test_large_epsilon_learns_a_numeric_threshold(table, schema) -> None:
    f = _fit(table, epsilon=2000.0, n_trees=1, max_depth=1, features_per_node="all", utility="info-gain")
    (tree,) = f.model_.trees
    root = tree[0]
    assert f.features_[root.feature].name == "x"
    assert 50 <= root.threshold < 51  # integer thresholds: x <= 50 goes left
    left, right = (tree[c] for c in root.children)
    assert left.counts[1] <= 2 and right.counts[0] <= 2  # nearly pure leaves
    test = encode(make_frame(500, seed=9), schema)
    truth = np.array(["no", "yes"], dtype=object)[test.columns["label"]]
    assert (predict(f.model_, test) == truth).mean() > 0.97


def test_large_epsilon_splits_categorical_into_every_value(schema) -> None:
    table = encode(make_frame(3000, rule="color"), schema)
    f = _fit(table, epsilon=2000.0, n_trees=1, max_depth=1, features_per_node="all", utility="gini")
    root = f.model_.trees[0][0]
    assert f.features_[root.feature].name == "color"
    assert len(root.children) == 3  # red, green, blue: one child per public value


def test_tiny_epsilon_gives_single_leaves(table) -> None:
    """With ε so small the noisy root size is below the leaf threshold, trees stay leaves."""
    f = _fit(table, epsilon=0.001, n_trees=3, max_depth=4)
    assert all(len(t) == 1 and t[0].is_leaf for t in f.model_.trees)


def test_depth_is_respected_and_leaves_nonnegative(table) -> None:
    for depth in (0, 1, 3):
        f = _fit(table, epsilon=50.0, n_trees=2, max_depth=depth)
        for tree in f.model_.trees:
            def walk(i: int, d: int, tree=tree) -> int:
                node = tree[i]
                if node.is_leaf:
                    assert np.all(node.counts >= 0)
                    return d
                return max(walk(c, d + 1) for c in node.children)
            assert walk(0, 0) <= depth


def test_categorical_attribute_not_split_twice_on_a_path(schema) -> None:
    table = encode(make_frame(3000, rule="color"), schema)
    f = _fit(table, epsilon=500.0, n_trees=3, max_depth=3, features_per_node="all")
    color = [i for i, ft in enumerate(f.features_) if ft.name == "color"][0]
    for tree in f.model_.trees:
        def walk(i: int, seen: bool, tree=tree) -> None:
            node = tree[i]
            if node.is_leaf:
                return
            assert not (seen and node.feature == color)
            for c in node.children:
                walk(c, seen or node.feature == color)
        walk(0, False)


@pytest.mark.parametrize("sampling", ["disjoint", "none"])
@pytest.mark.parametrize("utility", ["max", "balanced"])
def test_budget_is_spent_exactly(table, sampling: str, utility: str) -> None:
    """An explicit shape spends nothing on it; the balanced utility's class weights then cost
    SHAPE_SHARE of ε (one noisy class-count histogram), the trees the rest."""
    acc = Accountant(1.0)
    f = DiffPRFs(epsilon=1.0, n_trees=4, max_depth=3, sampling=sampling, utility=utility).fit(
        table, "label", accountant=acc, rng=make_rng(3))
    assert acc.spent == pytest.approx(1.0) and acc.spent <= 1.0 + 1e-9
    assert len(f.spends_by_tree_) == 4
    trees = 1.0 if utility == "max" else 1.0 - dprf.SHAPE_SHARE
    per_tree = trees if sampling == "disjoint" else trees / 4
    for entry in f.spends_by_tree_:
        assert sum(s["epsilon"] for s in entry["spends"]) == pytest.approx(per_tree)
        assert entry["levels"][0]["level"] == 0
    counts = [s for s in acc.spends if s.step == "noisy class counts"]
    if utility == "max":
        assert not counts and f.class_weights_ is None
    else:
        assert [s.epsilon for s in counts] == [pytest.approx(dprf.SHAPE_SHARE)]
        assert f.shape_["resolved"] == [4, 3]  # the given shape is kept
        assert max(f.class_weights_) == 1.0 and f.shape_["class_weights"] == pytest.approx(list(f.class_weights_))
    if sampling == "disjoint":
        assert len(acc.spends) == 1 + len(counts) and acc.spends[-1].scope == "parallel"


def test_same_seed_same_forest(table) -> None:
    a = _fit(table, epsilon=1.0, n_trees=3, seed=5).model_.to_dict()
    b = _fit(table, epsilon=1.0, n_trees=3, seed=5).model_.to_dict()
    assert a["trees"] == b["trees"]


@pytest.mark.parametrize("kw", [{"n_trees": 0}, {"max_depth": -1}, {"utility": "entropy"},
                                {"sampling": "bootstrap"}, {"size_share": 1.0}, {"leaf_factor": -1},
                                {"size_share": "half"}, {"epsilon": 0}])
def test_bad_parameters(table, kw) -> None:
    acc = Accountant(1.0)
    with pytest.raises(DpkitUsageError):
        DiffPRFs(**{"epsilon": 1.0, **kw}).fit(table, "label", accountant=acc, rng=make_rng(0))
    assert acc.spent == 0  # a refused fit spends nothing


def test_columns_missing_from_the_table(schema, table) -> None:
    small = encode(make_frame(50), schema, ["x", "label"])
    with pytest.raises(DpkitUsageError, match="'w'"):
        DiffPRFs(epsilon=1.0).fit(small, "label", accountant=Accountant(1.0), rng=make_rng(0))
    f = DiffPRFs(epsilon=1.0, n_trees=2).fit(small, "label", accountant=Accountant(1.0), rng=make_rng(0),
                                              features=["x"])
    assert [ft.name for ft in f.features_] == ["x"]


def test_numeric_target_refused(table) -> None:
    with pytest.raises(DpkitUsageError, match="categorical"):
        DiffPRFs(epsilon=1.0).fit(table, "x", accountant=Accountant(1.0), rng=make_rng(0))
