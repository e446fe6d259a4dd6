"""Property tests of every DP command's core over random schemas and tables (hypothesis).

For publish (MAXGDDP, DiffGen), forest (DiffPRFs) and cluster (DPQT, DPk-means, EUG):
the accountant never spends more than the budget and its entries sum to what it reports;
every released value lies inside the schema's public domain; the published table parses
back with the same schema (and `generalize`-style labels). A core that is not built yet is
skipped.
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
import warnings

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpkit.data.encode import encode
from dpkit.io.table import read_csv
from dpkit.privacy import Accountant, make_rng
from dpkit.schema.parse import CategoricalColumn, NumericColumn, parse_schema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_fuzz_loaders import schemas  # noqa: E402  (a sibling module: same strategies)

#: DPKIT_FUZZ_EXAMPLES=N for a long random session; by default quick and derandomized
LONG = int(os.environ.get("DPKIT_FUZZ_EXAMPLES", "0"))
CORES = settings(max_examples=LONG or 30, deadline=None, derandomize=not LONG, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _check_accounting(acc: Accountant, epsilon: float) -> None:
    assert acc.spent <= epsilon * (1 + 1e-9), (acc.spent, epsilon)
    assert math.isclose(math.fsum(s.epsilon for s in acc.spends), acc.spent, rel_tol=1e-12, abs_tol=1e-15)
    assert all(s.epsilon > 0 and math.isfinite(s.epsilon) for s in acc.spends)


@st.composite
def classification_case(draw):  # noqa: ANN201
    """A random schema with a 2-3 class target, and a random table drawn from its domain."""
    import pandas as pd

    spec = draw(schemas())
    classes = draw(st.sampled_from([["c0", "c1"], ["c0", "c1", "c2"]]))
    spec["columns"]["_y"] = {"type": "categorical", "values": classes}
    spec["target"] = "_y"
    schema = parse_schema(yaml.safe_dump(spec, sort_keys=False), "s.yaml")
    n = draw(st.integers(1, 30))
    data: dict[str, list[str]] = {}
    for name, col in schema.columns.items():
        if isinstance(col, CategoricalColumn):
            data[name] = [draw(st.sampled_from(col.leaves)) for _ in range(n)]
        elif isinstance(col, NumericColumn):
            vals = draw(st.lists(st.floats(col.lo, col.hi), min_size=n, max_size=n))
            data[name] = [str(int(v)) if col.integer else repr(v) for v in vals]
        else:
            data[name] = ["-"] * n
    table = encode(pd.DataFrame(data), schema)
    eps = draw(st.sampled_from([0.05, 0.5, 1.0, 4.0]))
    return schema, table, eps, draw(st.integers(0, 2**31))


_INTERVAL = re.compile(r"^\[(-?[0-9.e+-]+),(-?[0-9.e+-]+)([\])])$")


def _check_value_in_domain(col, value: str) -> None:  # noqa: ANN001
    if isinstance(col, CategoricalColumn):
        assert value in col.nodes, f"{value!r} is not a node of {col.name}'s taxonomy"
        return
    m = _INTERVAL.match(value)
    assert m, f"{value!r} is not an interval label"
    lo, hi = float(m.group(1)), float(m.group(2))
    # an integer column's closed top may be one value, [hi,hi] (NumericCut.integer_top)
    top = col.integer and lo == hi == col.hi and m.group(3) == "]"
    assert col.lo - 1e-9 <= lo and (lo < hi or top) and hi <= col.hi + 1e-9, f"{value!r} outside [{col.lo}, {col.hi}]"


@pytest.mark.parametrize("algorithm", ["maxgddp", "diffgen"])
@CORES
@given(case=classification_case(), levels=st.integers(1, 4))
def test_publish_core(algorithm: str, case, levels: int) -> None:  # noqa: ANN001
    schema, table, eps, seed = case
    if algorithm == "maxgddp":
        mod = pytest.importorskip("dpkit.algorithms.publish.maxgddp")
        model = mod.MaxGDDP(epsilon=eps, levels=levels)
    else:
        mod = pytest.importorskip("dpkit.algorithms.publish.diffgen")
        cls = next((getattr(mod, n) for n in ("DiffGen", "Diffgen") if hasattr(mod, n)), None)
        if cls is None:
            pytest.skip("no DiffGen class")
        model = cls(epsilon=eps, levels=levels)
    from dpkit.algorithms.publish.sparse import write_release

    acc = Accountant(eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(table, "_y", accountant=acc, rng=make_rng(seed))
    _check_accounting(acc, eps)
    order = [c for c in schema.used_columns()]
    fd, path = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    try:
        write_release(model.release_, path, columns=order)
        back = read_csv(path, require_rows=False)
    finally:
        os.unlink(path)
    assert list(back.columns) == order  # parses back with the schema's columns
    assert len(back) == model.release_.n_records
    for name in order:
        col = schema.columns[name]
        for v in back[name].unique():
            _check_value_in_domain(col, v)


@CORES
@given(case=classification_case(), trees=st.integers(1, 3), depth=st.integers(0, 3))
def test_forest_core(case, trees: int, depth: int) -> None:  # noqa: ANN001
    schema, table, eps, seed = case
    dprf = pytest.importorskip("dpkit.algorithms.forest.dprf")
    if not schema.predictors("_y"):
        return
    acc = Accountant(eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = dprf.DiffPRFs(eps, n_trees=trees, max_depth=depth).fit(
            table, "_y", accountant=acc, rng=make_rng(seed))
    _check_accounting(acc, eps)
    proba = model.predict_proba(table)
    assert proba.shape == (table.n_rows, len(schema.columns["_y"].leaves))
    assert np.all(proba >= 0) and np.allclose(proba.sum(axis=1), 1.0)


@st.composite
def points_case(draw):  # noqa: ANN201
    d = draw(st.integers(1, 3))
    lows = np.array([draw(st.integers(-100, 100)) for _ in range(d)], dtype=float)
    highs = lows + np.array([draw(st.integers(1, 1000)) for _ in range(d)], dtype=float)
    n = draw(st.integers(3, 60))
    unit = np.array(draw(st.lists(st.floats(0, 1), min_size=n * d, max_size=n * d))).reshape(n, d)
    pts = lows + unit * (highs - lows)
    k = draw(st.integers(1, 3))
    eps = draw(st.sampled_from([0.1, 1.0, 5.0]))
    return pts, lows, highs, k, eps, draw(st.integers(0, 2**31))


@pytest.mark.parametrize("algorithm", ["dpqt", "dpkmeans", "eug"])
@settings(max_examples=LONG or 15, deadline=None, derandomize=not LONG, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=points_case())
def test_cluster_core(algorithm: str, case) -> None:  # noqa: ANN001
    pts, lows, highs, k, eps, seed = case
    if algorithm == "dpqt":
        m = pytest.importorskip("dpkit.algorithms.cluster.dpqt")
        model = m.DPQTKMeans(k, epsilon=eps, bounds=(lows, highs), n_init=1)
    elif algorithm == "dpkmeans":
        m = pytest.importorskip("dpkit.algorithms.cluster.dplloyd")
        model = m.DPKMeans(k, epsilon=eps, bounds=(lows, highs), iterations=3)
    else:
        m = pytest.importorskip("dpkit.algorithms.cluster.eug")
        model = m.EUGKMeans(k, epsilon=eps, bounds=(lows, highs), n_init=1)
    acc = Accountant(eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(pts, accountant=acc, rng=make_rng(seed))
    _check_accounting(acc, eps)
    c = np.asarray(model.cluster_centers_)
    assert c.shape == (k, len(lows))
    assert np.all(np.isfinite(c))
    # centroids are released inside the public box (the only domain a reader may assume)
    assert np.all(c >= lows - 1e-9) and np.all(c <= highs + 1e-9), (c, lows, highs)
