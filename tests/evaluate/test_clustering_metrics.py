"""NICV, F-measure and RCP (dpkit.evaluate.clustering) against hand-computed values and sklearn."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.evaluate.clustering import (
    assign,
    evaluate_centroids,
    f_measure,
    nicv,
    nonprivate_nicv,
    rcp,
)


def test_nicv_by_hand() -> None:
    x = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [10.0, 3.0]])
    c = np.array([[1.0, 0.0], [10.0, 1.0]])
    # squared distances: 1, 1, 1, 4 → mean 7/4
    assert nicv(x, c) == pytest.approx(7 / 4)
    assert assign(x, c).tolist() == [0, 0, 1, 1]


def test_nicv_matches_sklearn_inertia() -> None:
    from sklearn.cluster import KMeans

    x = np.random.default_rng(0).normal(size=(300, 3))
    km = KMeans(4, n_init=3, random_state=0).fit(x)
    assert nicv(x, km.cluster_centers_) == pytest.approx(km.inertia_ / len(x), rel=1e-6)


def test_f_measure_by_hand() -> None:
    true = np.array([0, 0, 0, 0, 1, 1])
    pred = np.array([5, 5, 5, 7, 7, 7])
    # class 0 (n=4): cluster 5 has P=3/3, R=3/4 → F=6/7; cluster 7: P=1/3, R=1/4 → 2/7
    # class 1 (n=2): cluster 7: P=2/3, R=1 → F=0.8
    expected = 4 / 6 * (6 / 7) + 2 / 6 * 0.8
    assert f_measure(true, pred) == pytest.approx(expected)


def test_f_measure_extremes() -> None:
    y = np.array(["a", "a", "b", "b", "c"])
    assert f_measure(y, np.array([2, 2, 0, 0, 1])) == 1.0  # a relabelling is perfect
    one = f_measure(y, np.zeros(5, dtype=int))
    # one cluster: F(i) = 2·(n_i/N)/(n_i/N + 1)
    assert one == pytest.approx(sum(n / 5 * 2 * (n / 5) / (n / 5 + 1) for n in (2, 2, 1)))
    with pytest.raises(ValueError):
        f_measure(y, np.zeros(4))


def test_rcp() -> None:
    assert rcp(10.0, 7.5) == pytest.approx(0.25)
    assert rcp(10.0, 12.0) == pytest.approx(-0.2)
    with pytest.raises(ValueError):
        rcp(0.0, 1.0)


def test_nonprivate_reference_and_evaluate() -> None:
    x = np.array([[0.0, 0.0], [0.0, 2.0], [10.0, 0.0], [10.0, 2.0]])
    assert nonprivate_nicv(x, 2) == pytest.approx(1.0)
    out = evaluate_centroids(x, np.array([[0.0, 1.0], [10.0, 0.0]]), labels=np.array([0, 0, 1, 1]),
                             other=np.array([[5.0, 1.0]]))
    assert out["k"] == 2 and out["nicv"] == pytest.approx((1 + 1 + 0 + 4) / 4)
    assert out["nicv_ratio"] == pytest.approx(1.5)
    assert out["f_measure"] == 1.0
    assert out["nicv_other"] == pytest.approx(26.0)
    assert out["rcp"] == pytest.approx((26 - 1.5) / 26)
