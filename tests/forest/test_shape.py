"""The forest's automatic shape (issue 25): sized on the rarest class's noisy count."""

from __future__ import annotations

import math

import pytest

from dpkit.algorithms.forest.dprf import (
    SHAPE_MAX_DEPTH,
    SHAPE_MAX_TREES,
    SHAPE_RATIO,
    SHAPE_TREES,
    plan_shape,
)


def _fits(m: float, eps: float, t: int, d: int) -> bool:
    return m / (t * 2**d) >= SHAPE_RATIO * math.sqrt(2) * (d + 1) / eps


@pytest.mark.parametrize("rarest", [1, 30, 300, 1100, 7000, 50_000, 2_000_000])
@pytest.mark.parametrize("eps", [0.1, 0.95, 5.0])
def test_plan_is_the_deepest_fit_then_the_most_trees(rarest: float, eps: float) -> None:
    t, d = plan_shape(rarest, eps)
    assert 1 <= t <= SHAPE_MAX_TREES and 1 <= d <= SHAPE_MAX_DEPTH
    if _fits(rarest, eps, SHAPE_TREES, 1):
        assert t >= SHAPE_TREES and _fits(rarest, eps, t, d)
        assert d == SHAPE_MAX_DEPTH or not _fits(rarest, eps, SHAPE_TREES, d + 1)
        assert t == SHAPE_TREES or d == SHAPE_MAX_DEPTH
    else:
        assert d == 1 and t < SHAPE_TREES


def test_rarer_class_means_shallower_trees() -> None:
    # Adult's positives (~7,000) against Adult at 5 % positives (~1,100), ε = 0.95
    assert plan_shape(7000, 0.95) == (5, 4)
    assert plan_shape(1100, 0.95) == (5, 2)
    assert plan_shape(2_000_000, 0.95)[0] > SHAPE_TREES  # depth capped: more trees instead


def test_given_values_are_kept() -> None:
    assert plan_shape(1100, 0.95, trees=25) [0] == 25
    assert plan_shape(1100, 0.95, depth=5)[1] == 5
    assert plan_shape(1100, 0.95, trees=3, depth=2) == (3, 2)
