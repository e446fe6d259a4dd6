"""The counting module's core statistics against brute-force loops (hypothesis)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.data.counting import cell_counts, class_counts, group_of


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.data())
def test_class_counts_brute_force(n_groups, n_classes, data):
    n = data.draw(st.integers(0, 60))
    groups = np.array(data.draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n)), dtype=np.int32)
    y = np.array(data.draw(st.lists(st.integers(0, n_classes - 1), min_size=n, max_size=n)), dtype=np.int32)
    got = class_counts(groups, y, n_groups, n_classes)
    want = np.zeros((n_groups, n_classes), dtype=np.int64)
    for g, c in zip(groups, y, strict=True):
        want[g, c] += 1
    assert got.shape == (n_groups, n_classes)
    assert np.array_equal(got, want)
    assert got.sum() == n


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=8, unique=True).map(sorted),
    st.lists(st.integers(0, 40), max_size=50),
)
def test_group_of_brute_force(starts, values):
    starts_a = np.array(starts)
    got = group_of(np.array(values, dtype=np.int64), starts_a)
    for v, g in zip(values, got, strict=True):
        # the last start <= v (values below the first start fall in group 0)
        want = max([i for i, s in enumerate(starts) if s <= v], default=0)
        assert g == want


def test_group_of_taxonomy_cut():
    # leaves 0..6; a cut whose nodes start at leaves 0, 3, 4
    assert group_of(np.arange(7), np.array([0, 3, 4])).tolist() == [0, 0, 0, 1, 2, 2, 2]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data())
def test_cell_counts_brute_force(shape, data):
    n = data.draw(st.integers(0, 40))
    codes = [
        np.array(data.draw(st.lists(st.integers(0, s - 1), min_size=n, max_size=n)), dtype=np.int64)
        for s in shape
    ]
    cells, counts = cell_counts(codes, shape)
    want = Counter(zip(*[c.tolist() for c in codes], strict=True))
    got = {tuple(c): int(k) for c, k in zip(cells.tolist(), counts.tolist(), strict=True)}
    assert got == dict(want)
    assert (counts > 0).all()
    assert [tuple(c) for c in cells.tolist()] == sorted(got)  # lexicographic order


def test_cell_counts_huge_domain_uses_sparse_path():
    shape = [2**40, 2**40]  # 2^80 cells: cannot be raveled into int64
    codes = [np.array([5, 5, 2**39], dtype=np.int64), np.array([1, 1, 7], dtype=np.int64)]
    cells, counts = cell_counts(codes, shape)
    assert cells.tolist() == [[5, 1], [2**39, 7]] and counts.tolist() == [2, 1]


def test_cell_counts_empty_and_no_dims():
    cells, counts = cell_counts([np.array([], dtype=np.int64)], [3])
    assert cells.shape == (0, 1) and counts.shape == (0,)
    with pytest.raises(ValueError):
        cell_counts([], [])


@given(st.data())
def test_value_counts_dense_path_equals_the_sort(data):
    """Whole numbers in a small range are counted by bincount; the result equals np.unique's."""
    from dpkit.data.counting import value_key_counts

    n = data.draw(st.integers(1, 60))
    whole = data.draw(st.booleans())
    lo = data.draw(st.integers(-50, 50))
    vals = [float(lo + data.draw(st.integers(0, 30))) + (0.0 if whole else data.draw(st.sampled_from([0.0, 0.5])))
            for _ in range(n)]
    v = np.array(vals)
    y = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=np.int8)
    uniq, counts = value_key_counts(v, [y], [3])
    ref_u, inv = np.unique(v, return_inverse=True)
    assert np.array_equal(uniq, ref_u) and uniq.dtype == ref_u.dtype
    assert np.array_equal(counts, class_counts(inv.reshape(-1), y, ref_u.size, 3))


@given(st.data())
def test_distinct_index_of_small_ints_equals_the_float_answer(data):
    """int8/int16 numbers (the reader's compact columns) give np.unique's float64 answer,
    with no wrap-around when the range exceeds the type (int8 minus its minimum)."""
    from dpkit.data.counting import cell_counts_blocks, distinct_index

    dtype = data.draw(st.sampled_from([np.int8, np.int16, np.int32]))
    info = np.iinfo(dtype)
    lo = data.draw(st.integers(int(info.min), int(info.max)))
    hi = data.draw(st.integers(lo, min(int(info.max), lo + 300)))
    n = data.draw(st.integers(0, 40))
    v = np.array(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)) + [int(info.min), int(info.max)],
                 dtype=dtype)
    uniq, inverse = distinct_index(v)
    ref_u, ref_i = np.unique(v.astype(np.float64), return_inverse=True)
    assert uniq.dtype == np.float64 and np.array_equal(uniq, ref_u) and np.array_equal(inverse, ref_i.reshape(-1))
    # and cells counted in blocks merge to the one-block answer
    codes = [(v.astype(np.int64) - int(info.min)) % 7, (v.astype(np.int64) - int(info.min)) % 3]
    whole = cell_counts(codes, [7, 3])
    cut = data.draw(st.integers(0, len(v)))
    parts = cell_counts_blocks([[c[:cut] for c in codes], [c[cut:] for c in codes]], [7, 3])
    assert np.array_equal(whole[0], parts[0]) and np.array_equal(whole[1], parts[1])
