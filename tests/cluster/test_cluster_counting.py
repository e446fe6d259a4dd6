"""The clustering counts appended to dpkit.data.counting, against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.data.counting import child_counts, cluster_sums, grid_cells, nearest_centre


def brute_cell(p: np.ndarray, depths: list[int]) -> tuple[int, ...]:
    """Cell of a point of [-5, 5]^d at the given depths, by plain arithmetic."""
    return tuple(min(int((v + 5) / 10 * 2**h), 2**h - 1) for v, h in zip(p, depths, strict=True))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.integers(1, 6), min_size=1, max_size=4), st.data())
def test_level_counts_match_brute_force(seed: int, depths: list[int], data: st.DataObject) -> None:
    rng = np.random.default_rng(seed)
    d = len(depths)
    x = rng.uniform(-5, 5, (80, d))
    x[0] = 5.0  # the upper edge belongs to the last cell
    x[1] = 7.0  # outside: clipped into the last cell
    final = np.array(depths) + 2
    cells = grid_cells(x, np.full(d, -5.0), np.full(d, 5.0), final)
    assert [tuple(c) for c in cells.T] == [brute_cell(p, list(final)) for p in np.clip(x, -5, 5)]
    # children at `depths` of the parents at depths - split, for a random split mask
    split = np.array(data.draw(st.lists(st.booleans(), min_size=d, max_size=d)))
    if not split.any():
        split[0] = True
    parent_depths = np.array(depths) - split
    parents = sorted({brute_cell(p, list(parent_depths)) for p in x[: len(x) // 2]})
    parent_of = np.array([parents.index(c) if c in parents else -1
                          for c in (brute_cell(p, list(parent_depths)) for p in x)])
    child, counts = child_counts(cells, final, parent_of, len(parents), np.array(depths), split)
    s = int(split.sum())
    assert len(counts) == len(parents) << s
    for i, p in enumerate(x):
        if parent_of[i] < 0:
            assert child[i] == -1
            continue
        c = brute_cell(p, depths)
        bits = [c[j] & 1 for j in range(d) if split[j]]
        assert child[i] == (parent_of[i] << s) + int("".join(map(str, bits)), 2)
    assert counts.sum() == int((parent_of >= 0).sum())
    assert np.array_equal(counts, np.bincount(child[child >= 0], minlength=len(counts)))


def test_cluster_sums_and_nearest_centre() -> None:
    x = np.array([[0.0, 0.0], [1.0, 1.0], [10.0, 10.0], [11.0, 9.0]])
    lab = nearest_centre(x, np.array([[0.0, 0.0], [10.0, 10.0], [100.0, 100.0]]))
    assert lab.tolist() == [0, 0, 1, 1]
    sizes, sums = cluster_sums(x, lab, 3)
    assert sizes.tolist() == [2, 2, 0]
    assert sums.tolist() == [[1.0, 1.0], [21.0, 19.0], [0.0, 0.0]]
    big = np.random.default_rng(0).random((70_000, 2))  # more than one chunk
    c = np.array([[0.2, 0.2], [0.8, 0.8]])
    brute = np.argmin(((big[:, None, :] - c) ** 2).sum(-1), axis=1)
    assert np.array_equal(nearest_centre(big, c, chunk=1000), brute)
