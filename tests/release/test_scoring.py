"""Max scores (MAXGDDP eq. 5) against a brute-force count over the records."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dpkit.engine import as_frame
from dpkit.release.cut import Cut
from dpkit.release.scoring import (
    Marginals,
    categorical_candidates,
    numeric_candidates,
    split_utilities,
)


def brute_max(mask_children, y, n_classes=3):
    return sum(max(int(np.sum(m & (y == c))) for c in range(n_classes)) for m in mask_children)


def test_categorical_scores_match_brute_force(schema, table):
    cut = Cut.initial(schema, "label")
    cut.attributes["color"].specialize(schema.columns["color"].root)
    y = table.columns["label"]
    marg = Marginals(as_frame(table), "label", 3, cut)
    cands, scores = categorical_candidates("color", cut.attributes["color"], marg)
    codes = table.columns["color"]
    names = [c.node.name for c in cands]
    assert names == ["Warm", "Cool"]
    expect_warm = brute_max([codes == 0, codes == 1], y)
    expect_cool = brute_max([codes == 2, codes == 3, codes == 4], y)
    assert scores.tolist() == [expect_warm, expect_cool]


def test_numeric_grid_scores_match_brute_force(schema, table):
    cut = Cut.initial(schema, "label")
    cut.attributes["age"].split(0, [6])
    y = table.columns["label"]
    marg = Marginals(as_frame(table), "label", 3, cut)
    cands, scores = numeric_candidates("age", cut.attributes["age"], marg, grid=32)
    x = table.columns["age"]
    assert [c.points[0] for c in cands] == [1, 2, 3, 4, 5, 7, 8, 9]
    for c, s in zip(cands, scores, strict=True):
        p = c.points[0]
        lo, hi = (0, 6) if c.interval == 0 else (6, 11)  # last interval closed: includes 10
        inside = (x >= lo) & (x < hi)
        assert s == brute_max([inside & (x < p), inside & (x >= p)], y)


def test_hierarchy_scores_match_brute_force(schema, table):
    cut = Cut.initial(schema, "label")
    y = table.columns["label"]
    marg = Marginals(as_frame(table), "label", 3, cut)
    cands, scores = numeric_candidates("band", cut.attributes["band"], marg, grid=32)
    assert len(cands) == 1 and cands[0].points == (50.0,)
    x = table.columns["band"]
    assert scores[0] == brute_max([x < 50, x >= 50], y)


def test_scores_are_monotone_in_the_data(schema, table):
    """Adding a record never lowers a score and raises none by more than 1 (Δ = 1)."""
    cut = Cut.initial(schema, "label")
    base = np.concatenate([numeric_candidates("size", cut.attributes["size"], Marginals(as_frame(table), "label", 3, cut), 8)[1]])
    rng = np.random.default_rng(0)
    for _ in range(20):
        extra = {k: np.append(v, v[rng.integers(v.size)]) for k, v in table.columns.items()}
        extra["label"][-1] = rng.integers(3)
        s = numeric_candidates("size", cut.attributes["size"], Marginals(as_frame(replace(table, columns=extra, n_rows=table.n_rows + 1)), "label", 3, cut), 8)[1]
        d = s - base
        assert np.all((d >= 0) & (d <= 1))


def test_split_utilities_piecewise_constant(schema, table):
    cut = Cut.initial(schema, "label")
    y = table.columns["label"]
    marg = Marginals(as_frame(table), "label", 3, cut)
    edges, util = split_utilities(marg, "age", 0, 10, True, True)
    x = table.columns["age"]
    assert edges[0] == 1 and edges[-1] == 10 and np.all(np.diff(edges) >= 0)
    for p in range(1, 10):
        i = int(np.searchsorted(edges, p, side="right") - 1)
        assert util[i] == brute_max([x < p, x >= p], y)
