"""The sparse release must have the distribution of noising every cell (docs/algorithms.md §1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpkit.errors import DpkitUsageError
from dpkit.privacy import Accountant, make_rng
from dpkit.privacy.mechanisms import (
    positive_noise_probability,
    sample_discrete_laplace,
    sample_sparse_positive_dlap,
    sparse_discrete_laplace,
)

SHAPE = (3, 4)
CELLS = np.array([[0, 0], [1, 2], [2, 3]])
COUNTS = np.array([5, 1, 2])


def dense_release(rng, eps):
    table = np.zeros(SHAPE, dtype=np.int64)
    table[tuple(CELLS.T)] = COUNTS
    noisy = table + sample_discrete_laplace(rng, eps, SHAPE)
    return np.maximum(noisy, 0)


def sparse_release(rng, eps):
    cells, counts = sparse_discrete_laplace(CELLS, COUNTS, SHAPE, epsilon=eps, rng=rng,
                                            accountant=Accountant(eps), step="t")
    out = np.zeros(SHAPE, dtype=np.int64)
    out[tuple(cells.T)] = counts
    return out


@pytest.mark.statistical
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_sparse_matches_dense_noising(eps):
    """Per-cell P(released) and mean released count agree with noising all 12 cells."""
    n = 2500
    rng = np.random.default_rng(11)
    dense = np.stack([dense_release(rng, eps) for _ in range(n)])
    sparse = np.stack([sparse_release(rng, eps) for _ in range(n)])
    for stat in (lambda a: (a > 0), lambda a: a.astype(float)):
        d, s = stat(dense), stat(sparse)
        # difference of two means: 4.5 standard errors (24 comparisons; false alarm < 1e-4)
        se = np.sqrt(d.var(axis=0) / n + s.var(axis=0) / n) + 1e-9
        assert np.all(np.abs(d.mean(axis=0) - s.mean(axis=0)) < 4.5 * se + 1e-3), (d.mean(0), s.mean(0))
    # the empty cells' positive values follow 1 + Geometric(e^-eps)
    empty = np.ones(SHAPE, bool)
    empty[tuple(CELLS.T)] = False
    # pooled over the 9 empty cells (more power): how many are released, and their total mass
    for stat in (lambda a: (a[:, empty] > 0).sum(axis=1), lambda a: a[:, empty].sum(axis=1)):
        d, s = stat(dense).astype(float), stat(sparse).astype(float)
        se = math.sqrt(d.var() / n + s.var() / n)
        assert abs(d.mean() - s.mean()) < 4 * se, (d.mean(), s.mean())
    vals = sparse[:, empty]
    vals = vals[vals > 0]
    assert abs(vals.mean() - 1 / (1 - math.exp(-eps))) < 0.1 * vals.mean()


@pytest.mark.statistical
def test_rejection_path_picks_empty_cells_uniformly():
    """A large sparse table (rejection sampling): each empty cell released with P = 1/(1+e^ε)."""
    shape, eps, n = (40, 50), 1.0, 400
    occupied = np.arange(0, 2000, 97, dtype=np.int64)
    rng = np.random.default_rng(3)
    hits = np.zeros(2000)
    for _ in range(n):
        flat, vals = sample_sparse_positive_dlap(rng, eps, shape, occupied)
        assert np.all(vals >= 1) and np.all(np.diff(flat) > 0)  # distinct, sorted
        assert not np.isin(flat, occupied).any()
        hits[flat] += 1
    p = positive_noise_probability(eps)
    empty = np.setdiff1d(np.arange(2000), occupied)
    assert abs(hits[empty].mean() / n - p) < 0.01
    # uniform over the empty cells: a chi-square on 10 groups of cells
    groups = np.array_split(hits[empty], 10)
    obs = np.array([g.sum() for g in groups])
    exp = np.array([len(g) for g in groups]) * n * p
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    assert chi2 < 27.9  # 99.9th percentile of chi-square with 9 degrees of freedom


def test_dense_path_when_table_mostly_occupied():
    rng = make_rng(0)
    occupied = np.arange(0, 10, dtype=np.int64)
    flat, vals = sample_sparse_positive_dlap(rng, 0.01, (3, 4), occupied)
    assert set(flat.tolist()) <= {10, 11}


def test_release_is_one_spend_and_sorted():
    acc = Accountant(1.0)
    cells, counts = sparse_discrete_laplace(CELLS, COUNTS, (30, 40), epsilon=0.3, rng=make_rng(1),
                                            accountant=acc, step="noisy counts")
    assert len(acc.spends) == 1 and acc.spends[0].epsilon == 0.3 and acc.spends[0].sensitivity == 1.0
    flat = np.ravel_multi_index(tuple(cells.T), (30, 40))
    assert np.all(np.diff(flat) > 0) and np.all(counts > 0)


def test_huge_table_is_refused_before_spending():
    acc = Accountant(1.0)
    with pytest.raises(DpkitUsageError, match="noise cells"):
        sparse_discrete_laplace(CELLS, COUNTS, (10**6, 10**6), epsilon=0.5, rng=make_rng(1),
                                accountant=acc, step="t")
    assert acc.spends == ()


def test_write_release_matches_the_frame(schema, table, tmp_path):
    import pandas as pd

    from dpkit.algorithms.publish.maxgddp import MaxGDDP
    from dpkit.algorithms.publish.sparse import write_release

    m = MaxGDDP(epsilon=1.0, levels=4, grid=4).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(8))
    cols = ["age", "size", "band", "color", "label"]
    for counts in (False, True):
        path = tmp_path / f"r{counts}.csv"
        write_release(m.release_, str(path), counts=counts, columns=cols)
        got = pd.read_csv(path, dtype=str, keep_default_na=False)
        want = m.release_.to_frame(counts=counts, columns=cols).astype(str)
        assert got.equals(want)
        assert len(got) == (len(m.release_.counts) if counts else m.release_.n_records)


def test_write_release_in_small_pieces_is_the_same_file(schema, table, tmp_path, monkeypatch):
    """A cell's lines are written in bounded pieces, Parquet in row groups made one at a
    time: with tiny pieces the CSV is the same file, the Parquet the same rows."""
    import pandas as pd

    import dpkit.algorithms.publish.sparse as sparse
    from dpkit.algorithms.publish.maxgddp import MaxGDDP

    m = MaxGDDP(epsilon=1.0, levels=4, grid=4).fit(table, "label", accountant=Accountant(1.0), rng=make_rng(8))
    sparse.write_release(m.release_, str(tmp_path / "a.csv"))
    monkeypatch.setattr(sparse, "_WRITE_BYTES", 16)
    monkeypatch.setattr(sparse, "_WRITE_PIECES", 2)
    monkeypatch.setattr(sparse, "_ROW_GROUP", 3)
    sparse.write_release(m.release_, str(tmp_path / "b.csv"))
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    # a short writev (the kernel took part of the pieces): the rest is written after it
    import os

    writev = os.writev
    monkeypatch.setattr(os, "writev", lambda fd, parts: writev(fd, parts[:1]) if len(parts) > 1 else writev(fd, parts))
    sparse.write_release(m.release_, str(tmp_path / "c.csv"))
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "c.csv").read_bytes()
    for counts in (False, True):
        path = tmp_path / f"r{counts}.parquet"
        sparse.write_release(m.release_, str(path), counts=counts)
        got = pd.read_parquet(path).astype(str)
        want = m.release_.to_frame(counts=counts).astype(str)
        assert got.reset_index(drop=True).equals(want)
