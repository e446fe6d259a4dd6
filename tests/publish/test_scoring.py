"""Max scores (MAXGDDP eq. 5) against a brute-force count over the records."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.publish.cut import Cut
from dpkit.algorithms.publish.scoring import (
    GINI_FROM,
    Marginals,
    categorical_candidates,
    numeric_candidates,
    piece_scores,
    resolve_score,
    split_utilities,
)
from dpkit.engine import as_frame


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
    # the closed top [6, 10] also splits at 10 (an integer column's upper bound, issue 46)
    assert [c.points[0] for c in cands] == [1, 2, 3, 4, 5, 7, 8, 9, 10]
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


# --------------------------------------------------------------------------- the Gini score


def brute_gini(mask_children, y, n_classes=3):
    out = 0.0
    for m in mask_children:
        n = int(np.sum(m))
        if n:
            out += sum(int(np.sum(m & (y == c))) ** 2 for c in range(n_classes)) / n
    return out


def test_gini_scores_match_brute_force(schema, table):
    cut = Cut.initial(schema, "label")
    cut.attributes["color"].specialize(schema.columns["color"].root)
    y = table.columns["label"]
    marg = Marginals(as_frame(table), "label", 3, cut)
    cands, scores = categorical_candidates("color", cut.attributes["color"], marg, "gini")
    codes = table.columns["color"]
    expect = [brute_gini([codes == 0, codes == 1], y), brute_gini([codes == 2, codes == 3, codes == 4], y)]
    assert np.allclose(scores, expect)
    _, numeric = numeric_candidates("age", cut.attributes["age"], marg, 4, "gini")
    _, numeric_max = numeric_candidates("age", cut.attributes["age"], marg, 4)
    assert numeric.size == numeric_max.size and not np.allclose(numeric, numeric_max)


_pieces = st.integers(1, 6).flatmap(lambda k: st.integers(2, 4).flatmap(lambda c: st.tuples(
    st.lists(st.lists(st.integers(0, 60), min_size=c, max_size=c), min_size=k, max_size=k),
    st.lists(st.integers(0, 2), min_size=k, max_size=k),
    st.integers(0, k - 1), st.integers(0, c - 1))))


@settings(max_examples=400, deadline=None)
@given(_pieces)
def test_one_record_moves_every_score_by_at_most_one(case):
    """The sensitivity the selection is charged for (dpkit.algorithms.publish.scoring): adding one record
    (to piece p, class j) moves every candidate's Gini score by at most 1 (either way) and its
    Max score by 0 or 1 (monotone)."""
    counts, owner, p, j = case
    rows = np.asarray(counts, dtype=np.int64)
    owner_arr = np.asarray(owner, dtype=np.int64)
    n_cands = int(owner_arr.max()) + 1
    # pieces as consecutive rows of a cumulative marginal
    cum = np.vstack([np.zeros((1, rows.shape[1]), np.int64), np.cumsum(rows, axis=0)])
    starts, ends = np.arange(len(rows)), np.arange(1, len(rows) + 1)
    plus = rows.copy()
    plus[p, j] += 1
    cum_plus = np.vstack([np.zeros((1, rows.shape[1]), np.int64), np.cumsum(plus, axis=0)])
    for score, lo in (("gini", -1.0), ("max", 0.0)):
        before = piece_scores(cum, starts, ends, owner_arr, n_cands, score)
        after = piece_scores(cum_plus, starts, ends, owner_arr, n_cands, score)
        delta = after - before
        assert np.all(delta <= 1.0 + 1e-12) and np.all(delta >= lo - 1e-12), (score, delta)


def test_auto_score_follows_noisy_records_times_epsilon():
    assert resolve_score("auto", int(GINI_FROM), 1.0) == "gini"
    assert resolve_score("auto", int(GINI_FROM) - 1, 1.0) == "max"
    assert resolve_score("auto", 30_000, 0.1) == "max"
    assert resolve_score("auto", None, 100.0) == "max"  # a fixed h draws no Ñ: the paper's Max
    assert resolve_score("gini", None, 0.1) == "gini" and resolve_score("max", 10**9, 10.0) == "max"


def test_a_columns_own_points_join_the_grid_and_nothing_else_changes(schema, table):
    """``points:`` (issue 36: a learned schema's split beside a bound at 0) are offered besides
    the grid's where strictly inside an interval; a column without them gets the grid alone."""
    cut = Cut.initial(schema, "label")
    marg = Marginals(as_frame(table), "label", 3, cut)
    plain, plain_scores = numeric_candidates("size", cut.attributes["size"], marg, grid=8)
    col = replace(schema.columns["size"], points=(0.001, 0.5))
    with_pts = replace(schema, columns={**schema.columns, "size": col})
    cut2 = Cut.initial(with_pts, "label")
    marg2 = Marginals(as_frame(replace(table, schema=with_pts)), "label", 3, cut2)
    cands, scores = numeric_candidates("size", cut2.attributes["size"], marg2, grid=8)
    got = [c.points[0] for c in cands]
    assert got == sorted({*(c.points[0] for c in plain), 0.001, 0.5})
    x, y = table.columns["size"], table.columns["label"]
    first = got.index(0.001)
    assert scores[first] == brute_max([x < 0.001, x >= 0.001], y)
    # the grid's own points score as before
    for c, s in zip(plain, plain_scores, strict=True):
        assert scores[got.index(c.points[0])] == s
    cut2.attributes["size"].split(0, [0.001])
    again = numeric_candidates("size", cut2.attributes["size"], marg2, grid=8)[0]
    assert 0.001 not in [c.points[0] for c in again]  # an edge now: strictly inside no interval
