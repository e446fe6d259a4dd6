"""kanon-select --generalize: ladders, the Flash search against brute force, outputs by pycanon."""

from __future__ import annotations

import itertools
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.kanon.generalization import kanon_generalize
from dpkit.algorithms.kanon.hierarchy import categorical_ladder, numeric_ladder
from dpkit.algorithms.kanon.lattice import Problem, flash
from dpkit.schema.parse import load_schema

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
ADULT_SCHEMA = ROOT / "taxonomies" / "adult.yaml"
BCW = ROOT / "sample_data" / "breast-cancer-wisconsin" / "breast-cancer-wisconsin.csv"
BCW_SCHEMA = ROOT / "taxonomies" / "breast-cancer-wisconsin.yaml"


def _coarsens(fine: np.ndarray, coarse: np.ndarray) -> bool:
    """Every group of ``fine`` lies inside one group of ``coarse``."""
    pairs = set(zip(fine.tolist(), coarse.tolist(), strict=True))
    return len({f for f, _ in pairs}) == len(pairs)


def test_categorical_ladder_by_depth() -> None:
    col = load_schema(ADULT_SCHEMA).columns["education"]
    lad = categorical_ladder(col)
    assert lad.levels[0].labels == list(col.leaves)
    assert lad.levels[-1].labels == ["Any"]
    for a, b in itertools.pairwise(lad.levels):
        assert _coarsens(a.maps, b.maps)
        assert len(set(b.maps.tolist())) < len(set(a.maps.tolist()))
    assert "Secondary" in lad.levels[2].labels  # depth 2 of the Fung et al. tree


def test_numeric_ladder_halves_the_bounds() -> None:
    col = load_schema(ADULT_SCHEMA).columns["age"]
    values = np.arange(15, 96, dtype=float)
    lad = numeric_ladder(col, values, [str(int(v)) for v in values])
    assert lad.levels[0].labels[:2] == ["15", "16"] and lad.levels[0].cut is None
    assert lad.levels[-1].labels == ["[15,95]"]
    assert lad.levels[-2].labels == ["[15,55)", "[55,95]"]
    for a, b in itertools.pairwise(lad.levels):
        assert _coarsens(a.maps, b.maps)
    # the labels match the groups: each value falls inside its interval
    for lv in lad.levels[1:]:
        for v, g in zip(values, lv.maps, strict=True):
            lo, hi = lv.cut[g]
            assert lo <= v <= hi


def _brute(prob: Problem) -> np.ndarray:
    shape = tuple(h + 1 for h in prob.heights)
    return np.array([prob.evaluate(v).anonymous for v in itertools.product(*map(range, shape))])


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.integers(1, 6), st.floats(0, 0.2))
def test_flash_tags_every_node_as_brute_force(seed: int, k: int, frac: float) -> None:
    rng = np.random.default_rng(seed)
    n, m = 60, 3
    level_codes, level_loss = [], []
    for _ in range(m):
        base = rng.integers(0, 8, n)
        chain = [base, base // 2, base // 4, np.zeros(n, dtype=np.int64)]
        level_codes.append(chain)
        level_loss.append([np.full(n, i / 3) for i in range(4)])
    y = rng.integers(0, 2, n)
    prob = Problem(level_codes, level_loss, np.ones(n, dtype=np.int64), y, 2, k,
                   int(math.floor(frac * n)), loss_weight=0.1)
    res = flash(prob, [3.0, 2.0, 1.0])
    truth = _brute(prob)
    assert (res.anonymous == truth).all()
    # the best is anonymous and no checked-or-minimal anonymous node scores better
    assert res.best.anonymous
    shape = tuple(h + 1 for h in prob.heights)
    nodes = list(itertools.product(*map(range, shape)))
    minimal = [v for i, v in enumerate(nodes) if truth[i] and all(
        not truth[nodes.index(v[:j] + (v[j] - 1,) + v[j + 1:])] for j in range(m) if v[j] > 0)]
    assert res.minimal == len(minimal)
    assert res.best.key <= min(prob.evaluate(v).key for v in minimal)
    assert res.checked < len(nodes) or len(nodes) <= 8


def _adult(n: int | None = None) -> pd.DataFrame:
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    return df.iloc[:n] if n else df


def _run(df, schema_path, k, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kanon_generalize(df, target=load_schema(schema_path).target, k=k,
                                schema=load_schema(schema_path), **kw)


@pytest.mark.parametrize("k", [2, 10, 50])
def test_outputs_are_k_anonymous_by_pycanon(k: int, pycanon) -> None:
    df = _adult(4000)
    gen = _run(df, ADULT_SCHEMA, k)
    rel = gen.release
    qis = rel["selected"]
    assert qis, "Adult keeps some quasi-identifier"
    assert pycanon.k_anonymity(gen.output, qis) >= k
    n_used = rel["records"]["input"]
    assert len(gen.output) + rel["suppression"]["records"] == n_used
    assert rel["suppression"]["records"] <= math.floor(0.02 * n_used)
    assert rel["equivalence_classes"]["smallest"] >= k


def test_l_diverse_by_pycanon(pycanon) -> None:
    gen = _run(_adult(4000), ADULT_SCHEMA, 5, sensitive="occupation", l=3)
    qis = gen.release["selected"]
    assert "occupation" not in qis and "occupation" in gen.output.columns
    assert pycanon.k_anonymity(gen.output, qis) >= 5
    assert pycanon.l_diversity(gen.output, qis, ["occupation"]) >= 3


@pytest.mark.parametrize("k", [5, 25])
def test_breast_cancer_by_pycanon(k: int, pycanon) -> None:
    df = pd.read_csv(BCW, dtype=str, keep_default_na=False)
    gen = _run(df, BCW_SCHEMA, k, max_suppression=0.05)
    qis = gen.release["selected"]
    assert len(qis) >= 2
    assert pycanon.k_anonymity(gen.output, qis) >= k
    assert "id" not in gen.output.columns


def test_no_suppression_allowed() -> None:
    gen = _run(_adult(3000), ADULT_SCHEMA, 10, max_suppression=0.0)
    assert gen.suppressed == 0
    assert gen.output.groupby(gen.release["selected"], observed=True).size().min() >= 10


def test_labels_are_hierarchy_labels() -> None:
    schema = load_schema(ADULT_SCHEMA)
    gen = _run(_adult(3000), ADULT_SCHEMA, 10)
    for c in gen.release["selected"]:
        col = schema.columns[c]
        values = set(gen.output[c])
        if col.kind == "categorical":
            assert values <= set(col.nodes)
        elif c in gen.release["cut"]:
            assert all(v.startswith("[") and v[-1] in ")]" for v in values)


def test_numeric_schema_hierarchy_is_used() -> None:
    from dpkit.schema.parse import parse_schema

    schema = parse_schema(
        'columns:\n  x: {type: numeric, bounds: [1, 10], integer: true, hierarchy: '
        '{"1..10": {"1..2": null, "2..10": {"2..6": null, "6..10": null}}}}\n'
    )
    values = np.arange(1, 11, dtype=float)
    lad = numeric_ladder(schema.columns["x"], values, [str(int(v)) for v in values])
    assert [lv.labels for lv in lad.levels[1:]] == [["[1,2)", "[2,6)", "[6,10]"], ["[1,2)", "[2,10]"], ["[1,10]"]]
    for a, b in itertools.pairwise(lad.levels):
        assert _coarsens(a.maps, b.maps)
