"""Weighted k-means on noisy buckets (dpkit.algorithms.cluster.kmeans) and the shared helpers."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.algorithms.cluster.common import check_bounds, data_bounds, laplace_sd, parse_bounds
from dpkit.algorithms.cluster.kmeans import subcell_points, weighted_kmeans
from dpkit.errors import DpkitUsageError, DpkitWarning
from dpkit.privacy.mechanisms import sample_discrete_laplace


def test_weights_pull_the_centroid() -> None:
    lows = np.array([[0.0, 0.0], [10.0, 0.0]])
    highs = lows + 2.0
    c, note = weighted_kmeans(lows, highs, np.array([3, 1]), 1, random_state=0)
    assert note is None
    assert np.allclose(c, [[(1 * 3 + 11 * 1) / 4, 1.0]])


def test_negative_weights_are_clamped() -> None:
    lows = np.array([[0.0], [10.0], [20.0]])
    c, _ = weighted_kmeans(lows, lows + 1, np.array([5, -7, 5]), 2, random_state=0)
    assert sorted(c[:, 0]) == [0.5, 20.5]


def test_subcells_share_the_weight() -> None:
    pts, w = subcell_points(np.array([[0.0, 0.0]]), np.array([[4.0, 4.0]]), np.array([8.0]), 2)
    assert sorted(map(tuple, pts)) == [(1, 1), (1, 3), (3, 1), (3, 3)]
    assert np.allclose(w, 2.0)


def test_fewer_positive_buckets_than_k() -> None:
    lows = np.array([[0.0, 0.0], [5.0, 5.0], [8.0, 0.0]])
    with pytest.warns(DpkitWarning, match="fewer than k=5"):
        c, note = weighted_kmeans(lows, lows + 1, np.array([4, 0, 9]), 5, random_state=0)
    assert c.shape == (5, 2) and len(np.unique(c, axis=0)) == 5
    # all centroids lie in the two positive buckets
    in_a = np.all((c >= [0, 0]) & (c <= [1, 1]), axis=1)
    in_c = np.all((c >= [8, 0]) & (c <= [9, 1]), axis=1)
    assert np.all(in_a | in_c) and "sub-cells" in note


def test_common_helpers() -> None:
    assert parse_bounds("0:1e6,-90:90") == ([0.0, -90.0], [1e6, 90.0])
    assert parse_bounds([[0, 1], [2, 3]]) == ([0.0, 2.0], [1.0, 3.0])
    for bad in ("0-1", "a:b", "1:2:3"):
        with pytest.raises(DpkitUsageError):
            parse_bounds(bad)
    with pytest.raises(DpkitUsageError, match="lo < hi"):
        check_bounds([0, 3], [1, 3])
    with pytest.raises(DpkitUsageError, match="finite"):
        check_bounds([0], [float("inf")])
    lo, hi = data_bounds(np.array([[1.0, 5.0], [3.0, 5.0]]))
    assert lo.tolist() == [1.0, 4.5] and hi.tolist() == [3.0, 5.5]


@pytest.mark.statistical
def test_laplace_sd_matches_the_sampler() -> None:
    rng = np.random.default_rng(0)
    for eps in (0.05, 0.5, 2.0):
        draws = sample_discrete_laplace(rng, eps, 200_000)
        assert draws.std() == pytest.approx(laplace_sd(eps), rel=0.02)
