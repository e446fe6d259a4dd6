"""Whole numbers stored as small integers, and block-wise counting, change no output.

The loader keeps age (bounds [15, 95]) as int8; a column with a fraction stays float64 (and
tables built in code may hold float64 for anything). Every consumer must give the same answers
for both, and the numpy frame must give the same answers whether it counts a table in one
block or in many.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpkit.engine.numpy_frame as numpy_frame
from dpkit.algorithms.cluster import make_model
from dpkit.algorithms.forest.dprf import DiffPRFs
from dpkit.algorithms.publish.maxgddp import MaxGDDP
from dpkit.engine.keys import Bins, Col, Grid, Lookup, Nearest, Route, RowHash, Uniform
from dpkit.engine.numpy_frame import NumpyFrame
from dpkit.io.source import ReadOptions
from dpkit.io.table import EncodedTable, load
from dpkit.privacy.accountant import Accountant
from dpkit.privacy.rng import make_rng
from dpkit.schema.parse import load_schema

ADULT = "sample_data/adult/train.csv"
NUMERIC = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


@pytest.fixture(scope="module")
def tables() -> tuple[EncodedTable, EncodedTable]:
    """Adult as the reader stores it, and the same table with float64 numbers."""
    schema = load_schema("taxonomies/adult.yaml")
    with pytest.warns(Warning):
        t = load(ReadOptions(ADULT), schema, schema.used_columns())
    wide = {c: (v.astype(np.float64) if c in NUMERIC else v) for c, v in t.columns.items()}
    return t, EncodedTable(t.schema, wide, t.n_rows, t.source)


def test_whole_numbers_are_stored_small(tables) -> None:
    t, wide = tables
    assert t.columns["age"].dtype == np.int8 and t.columns["hours-per-week"].dtype == np.int8
    assert t.columns["capital-loss"].dtype == np.int16 and t.columns["capital-gain"].dtype == np.int32
    for c in NUMERIC:
        assert np.array_equal(t.columns[c], wide.columns[c])


def _publish(table: EncodedTable) -> tuple:
    m = MaxGDDP(epsilon=1.0, levels=13).fit(table, "income", accountant=Accountant(1.0), rng=make_rng(5))
    return m.release_.cells.tolist(), m.release_.counts.tolist(), m.cut_.labels() if hasattr(m, "cut_") else None


def _forest(table: EncodedTable) -> str:
    f = DiffPRFs(epsilon=1.0, n_trees=4, max_depth=4).fit(table, "income", accountant=Accountant(1.0),
                                                          rng=make_rng(5))
    return json.dumps(f.model_.to_dict(), sort_keys=True, default=str)


def _cluster(table: EncodedTable, algorithm: str) -> list:
    schema = table.schema
    bounds = ([schema.columns["age"].lo, schema.columns["hours-per-week"].lo],
              [schema.columns["age"].hi, schema.columns["hours-per-week"].hi])
    model = make_model(algorithm, 4, 1.0, bounds, {"max_height": 4})  # a small tree: fast
    model.fit(NumpyFrame(table), accountant=Accountant(1.0), rng=make_rng(5), columns=["age", "hours-per-week"])
    return np.asarray(model.cluster_centers_).tolist()


def _keys(table: EncodedTable) -> list:
    f = NumpyFrame(table)
    starts = np.array([15.0, 30.0, 47.5, 60.0])
    return [
        f.counts([Bins("age", starts), Col("income")], [4, 2]).tolist(),
        [a.tolist() for a in f.cells([Grid("age", 15, 95, 3), Uniform("hours-per-week", 1, 100, 5),
                                      Lookup("workclass", np.arange(8) % 3)], [8, 5, 3])],
        [a.tolist() for a in f.value_counts("capital-gain", [Col("income")], [2])],
        [a.tolist() for a in f.sums(["age", "hours-per-week"],
                                    [Nearest(("age", "hours-per-week"), np.array([[0.0, 0.0], [20.0, 5.0]]),
                                             np.array([40.0, 40.0]))], [2])],
        f.counts([RowHash(99, 3)], [3]).tolist(),
    ]


def test_every_consumer_gives_the_same_answer_for_int_and_float_columns(tables) -> None:
    t, wide = tables
    assert _keys(t) == _keys(wide)
    assert _publish(t) == _publish(wide)
    assert _forest(t) == _forest(wide)
    for algorithm in ("dpqt", "dpkmeans", "eug"):
        assert _cluster(t, algorithm) == _cluster(wide, algorithm)


def test_value_counts_of_ints_are_float64_values(tables) -> None:
    t, wide = tables
    a = NumpyFrame(t).value_counts("age", [Col("income")], [2])
    b = NumpyFrame(wide).value_counts("age", [Col("income")], [2])
    assert a[0].dtype == np.float64 and np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_many_blocks_give_the_one_block_answers(tables, monkeypatch) -> None:
    """Counts add, cells and distinct values merge, exact sums add: the same results."""
    t, wide = tables
    one = (_keys(t), _keys(wide), _publish(t), _forest(t), _cluster(t, "dpqt"), _cluster(t, "dpkmeans"))
    monkeypatch.setattr(numpy_frame, "BLOCK_ROWS", 4099)
    assert t.n_rows > 4 * numpy_frame.BLOCK_ROWS
    many = (_keys(t), _keys(wide), _publish(t), _forest(t), _cluster(t, "dpqt"), _cluster(t, "dpkmeans"))
    assert many == one


def test_with_column_in_blocks(tables, monkeypatch) -> None:
    t, _ = tables
    key = Route(Col("income"), ("age", "sex"), np.array([40.0, 0.0]), np.array([0, 2]), np.array([True, False]))
    whole = NumpyFrame(t).with_column("node", key).table.columns["node"]
    monkeypatch.setattr(numpy_frame, "BLOCK_ROWS", 1000)
    blocks = NumpyFrame(t).with_column("node", key).table.columns["node"]
    assert blocks.dtype == whole.dtype and np.array_equal(blocks, whole)
