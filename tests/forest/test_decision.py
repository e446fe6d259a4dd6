"""Decision rules of the forest (issue 25): free in ε, from the released model only."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.algorithms.forest.model import ForestModel, Node
from dpkit.errors import DpkitUsageError


def _model(counts: list[list[float]]) -> ForestModel:
    leaves = [Node(size=int(sum(c)), counts=np.array(c, dtype=float)) for c in counts]
    return ForestModel(target="y", classes=("no", "yes"), features=[], trees=[[leaf] for leaf in leaves])


def test_priors_from_noisy_leaf_counts() -> None:
    m = _model([[90, 5], [85, 12], [5, -3]])  # a negative noisy count counts as 0
    assert m.class_priors() == pytest.approx([180 / 197, 17 / 197])
    assert _model([[0, 0]]).class_priors() == pytest.approx([0.5, 0.5])


def test_rules() -> None:
    m = _model([[90, 10]])  # prior of yes: 0.1
    probs = np.array([[0.8, 0.2], [0.95, 0.05], [0.4, 0.6]])
    assert m.decide(probs).tolist() == ["no", "no", "yes"]
    # balanced: 0.2 / 0.1 = 2 > 0.8 / 0.9
    assert m.decide(probs, "balanced").tolist() == ["yes", "no", "yes"]
    assert m.decide(probs, "threshold:0.15").tolist() == ["yes", "no", "yes"]
    assert m.decide(probs, "threshold:0.7").tolist() == ["no", "no", "no"]


@pytest.mark.parametrize("bad", ["threshold:1.5", "threshold:x", "threshold:", "median"])
def test_bad_rules_are_usage_errors(bad: str) -> None:
    with pytest.raises(DpkitUsageError) as info:
        _model([[1, 1]]).decide(np.zeros((1, 2)), bad)
    assert info.value.param == "decision"


def test_threshold_needs_two_classes() -> None:
    m = ForestModel(target="y", classes=("a", "b", "c"), features=[],
                    trees=[[Node(size=3, counts=np.array([1.0, 1.0, 1.0]))]])
    with pytest.raises(DpkitUsageError, match="needs two classes"):
        m.decide(np.zeros((1, 3)), "threshold:0.5")
