"""The equivalence-class counting functions against a pandas groupby."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpkit.data import counting
from dpkit.data.counting import distinct_per_group, equivalence_classes, refine_groups


def _groupby_sizes(cols: list[np.ndarray]) -> list[int]:
    df = pd.DataFrame({f"c{i}": c for i, c in enumerate(cols)})
    return sorted(df.groupby(list(df.columns)).size().tolist())


def test_equivalence_classes_match_groupby() -> None:
    rng = np.random.default_rng(1)
    cols = [rng.integers(0, m, 500) for m in (3, 7, 2)]
    groups, sizes = equivalence_classes(cols, [3, 7, 2], 500)
    assert sorted(sizes.tolist()) == _groupby_sizes(cols)
    # every record's class has the size reported for it
    assert np.array_equal(np.bincount(groups), sizes)


def test_sparse_path_matches_dense(monkeypatch) -> None:
    rng = np.random.default_rng(2)
    cols = [rng.integers(0, 50, 300) for _ in range(3)]
    _, dense = equivalence_classes(cols, [50] * 3, 300)
    monkeypatch.setattr(counting, "_DENSE_LIMIT", 1)  # force np.unique
    _, sparse = equivalence_classes(cols, [50] * 3, 300)
    assert sorted(dense.tolist()) == sorted(sparse.tolist()) == _groupby_sizes(cols)


def test_no_columns_is_one_class() -> None:
    groups, sizes = equivalence_classes([], [], 4)
    assert sizes.tolist() == [4] and groups.tolist() == [0, 0, 0, 0]


def test_refine_and_distinct_per_group() -> None:
    groups = np.array([0, 0, 0, 1, 1, 2])
    values = np.array([0, 1, 1, 2, 2, 0])
    new, sizes = refine_groups(groups, 3, values, 3)
    assert sizes.tolist() == [1, 2, 2, 1]
    assert new.tolist() == [0, 1, 1, 2, 2, 3]
    assert distinct_per_group(groups, 3, values, 3).tolist() == [2, 1, 1]


def test_refine_groups_in_chunks_matches_one_pass(monkeypatch) -> None:
    """Few cells and many records: the cell ids are built a chunk at a time, same result."""
    rng = np.random.default_rng(4)
    groups = rng.integers(0, 6, 1000).astype(np.int32)
    codes = rng.integers(0, 5, 1000).astype(np.int8)
    whole, whole_sizes = refine_groups(groups, 6, codes, 5)
    monkeypatch.setattr(counting, "_CHUNK", 64)
    chunked, sizes = refine_groups(groups, 6, codes, 5)
    assert chunked.dtype == whole.dtype == np.int32
    assert np.array_equal(chunked, whole) and np.array_equal(sizes, whole_sizes)
    assert sizes.dtype == np.int64 and sizes.sum() == 1000


def test_refine_groups_in_chunks_with_many_cells(monkeypatch) -> None:
    """Many records and many cells: a bitmap of the cells (at most 2n of them) or a sorted
    running set (more), a chunk at a time; the same numbering and sizes as the one pass."""
    rng = np.random.default_rng(7)
    n = 2000
    for n_groups, n_codes in ((300, 7), (900, 300)):  # 2,100 cells (<= 2n) and 270,000 (> 2n)
        groups = rng.integers(0, n_groups, n).astype(np.int32)
        codes = rng.integers(0, n_codes, n).astype(np.int16)
        whole, whole_sizes = refine_groups(groups, n_groups, codes, n_codes)
        monkeypatch.setattr(counting, "_CHUNK", 128)
        monkeypatch.setattr(counting, "_LARGE", 1000)
        chunked, sizes = refine_groups(groups, n_groups, codes, n_codes)
        monkeypatch.undo()
        assert chunked.dtype == whole.dtype and np.array_equal(chunked, whole)
        assert sizes.dtype == np.int64 and np.array_equal(sizes, whole_sizes)
