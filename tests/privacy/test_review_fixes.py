"""Regression tests for the privacy review's findings (F1, F3)."""

import numpy as np
import pytest

from dpkit.privacy import Accountant, exponential_interval, make_rng
from dpkit.privacy.mechanisms import _INTERVAL_GRID


def test_interval_points_lie_on_the_public_grid_whatever_the_data_edges():
    # F1: a point drawn as e_i + U·(e_i+1 − e_i) can only take doubles that depend on the
    # data edges; on the public grid every output is lo + j·r with integer j
    lo, hi = 0.0, 1.0
    r = (hi - lo) / _INTERVAL_GRID
    rng = make_rng(3)
    for inner in ([0.1], [0.3], [0.1, 0.30000000000000004, 0.7]):
        edges = [lo, *inner, hi]
        for _ in range(200):
            acc = Accountant(1.0)
            p = exponential_interval(edges, np.zeros(len(edges) - 1), epsilon=1.0, rng=rng,
                                     accountant=acc, step="t")
            j = (p - lo) / r
            assert j == int(j), p
            assert lo <= p < hi


def test_interval_grid_point_falls_in_the_chosen_interval():
    rng = make_rng(5)
    edges = [0.0, 0.25, 0.5, 1.0]
    # interval 1 has overwhelming utility
    for _ in range(100):
        p = exponential_interval(edges, [0.0, 1e4, 0.0], epsilon=1.0, rng=rng,
                                 accountant=Accountant(1.0), step="t")
        assert 0.25 <= p < 0.5


def test_parallel_scope_records_its_spend_when_the_body_raises():
    # F3: a failure after noise was drawn must leave the spend on the record
    acc = Accountant(1.0)
    with pytest.raises(RuntimeError):
        with acc.parallel("level 1", 0.5) as level:
            level.part().spend("node", "discrete laplace", 0.5)
            raise RuntimeError("boom")
    assert acc.spent == pytest.approx(0.5)
    assert acc.spends[0].scope == "parallel"
