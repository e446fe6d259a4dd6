"""DPk-means (SuLQ) and EUGk-means baselines (dpkit.algorithms.cluster.dplloyd, dpkit.algorithms.cluster.eug)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.algorithms.cluster.dplloyd import DPKMeans, halving_budgets
from dpkit.algorithms.cluster.eug import EUGKMeans, grid_size
from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, BudgetExceededError, make_rng

BOX = ([0.0, 0.0], [1e6, 1e6])


def blobs(n_per: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.array([[2e5, 2e5], [8e5, 2e5], [5e5, 8e5]])
    return np.concatenate([c + rng.normal(0, 2e4, (n_per, 2)) for c in centres])


@pytest.mark.parametrize("iterations", [1, 2, 5, 10])
def test_halving_schedule_sums_to_epsilon(iterations: int) -> None:
    b = halving_budgets(0.7, iterations)
    assert len(b) == iterations and math.fsum(b) == pytest.approx(0.7)
    if iterations > 2:
        assert b[0] == pytest.approx(0.35) and b[1] == pytest.approx(0.175)
    with pytest.raises(DpkitUsageError):
        halving_budgets(1.0, 0)


def test_dpkmeans_spends_exactly_epsilon_and_stays_in_bounds() -> None:
    acc = Accountant(1.0)
    m = DPKMeans(3, epsilon=1.0, bounds=BOX, iterations=4).fit(blobs(), accountant=acc, rng=make_rng(0))
    assert acc.spent == pytest.approx(1.0)
    assert len(acc.spends) == 8  # sizes and sums per iteration
    assert all(s.scope == "parallel" for s in acc.spends)
    assert np.all((m.cluster_centers_ >= 0) & (m.cluster_centers_ <= 1e6))


def test_dpkmeans_with_little_noise_finds_the_blobs() -> None:
    x = blobs()
    found = 0
    for seed in range(3):  # random initial centres can merge two blobs; one success suffices
        m = DPKMeans(3, epsilon=1e4, bounds=BOX, iterations=10).fit(x, accountant=Accountant(1e4), rng=make_rng(seed))
        c = m.cluster_centers_[np.lexsort(m.cluster_centers_.T[::-1])]
        found += np.allclose(c, [[2e5, 2e5], [5e5, 8e5], [8e5, 2e5]], atol=2e4)
    assert found >= 1


def test_dpkmeans_refuses_over_budget_without_drawing() -> None:
    acc = Accountant(0.1)
    with pytest.raises(BudgetExceededError):
        DPKMeans(3, epsilon=1.0, bounds=BOX).fit(blobs(10), accountant=acc, rng=make_rng(0))
    assert acc.spends == ()


def test_eug_grid_rule() -> None:
    # Su et al.: m = (N·ε/10)^(2/(2+d))
    assert grid_size(5000, 1.0, 2, 1 << 22) == round(500**0.5)
    assert grid_size(5000, 0.01, 2, 1 << 22) == round(5**0.5)
    assert grid_size(10, 0.01, 2, 1 << 22) == 1
    assert grid_size(1e12, 1.0, 2, 10_000) == 100  # the cell cap binds


def test_eug_spends_epsilon_and_finds_the_blobs() -> None:
    acc = Accountant(2.0)
    m = EUGKMeans(3, epsilon=2.0, bounds=BOX).fit(blobs(), accountant=acc, rng=make_rng(1))
    assert acc.spent == pytest.approx(2.0)
    assert [s.step for s in acc.spends] == ["noisy N", "grid cell counts"]
    assert m.buckets_.counts.size == m.grid_**2
    c = m.cluster_centers_[np.lexsort(m.cluster_centers_.T[::-1])]
    assert np.allclose(c, [[2e5, 2e5], [5e5, 8e5], [8e5, 2e5]], atol=5e4)
