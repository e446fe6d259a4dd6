"""Training and scoring classifiers on tables of strings (released, counts, raw)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.errors import DataError, DpkitUsageError, DpkitWarning
from dpkit.evaluate.classify import (
    column_kinds,
    fit_predict,
    is_interval_label,
    load_dataset,
    majority_floor,
    read_predictions,
    score_tables,
)
from dpkit.schema.parse import parse_schema

SCHEMA = parse_schema(
    """
target: y
missing: "?"
missing_policy: drop
columns:
  age: {type: numeric, bounds: [0, 100]}
  color: {type: categorical, values: [red, green, blue]}
  id: {type: ignore}
  y: {type: categorical, values: ["no", "yes"]}
"""
)


def _table(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(0, 100, n)
    color = rng.choice(["red", "green", "blue"], n)
    y = np.where((age > 50) | (color == "red"), "yes", "no")
    return pd.DataFrame({"age": age.astype(str), "color": color, "id": np.arange(n).astype(str), "y": y})


def test_interval_labels():
    assert is_interval_label("[15,37)")
    assert is_interval_label("[37,95]")
    assert not is_interval_label("37")
    assert not is_interval_label("Private")


def test_column_kinds_without_schema():
    df = pd.DataFrame({"a": ["1", "2.5", "-3"], "b": ["x", "1", "2"], "c": ["[1,2)", "[2,3)", "[1,2)"]})
    assert column_kinds([df], ["a", "b", "c"]) == {"a": "numeric", "b": "categorical", "c": "categorical"}
    # a value that does not parse in the test table makes the column categorical for both
    other = pd.DataFrame({"a": ["1", "?", "2"]})
    assert column_kinds([df, other], ["a"]) == {"a": "categorical"}


def test_column_kinds_with_schema_interval_labels_are_categorical():
    released = pd.DataFrame({"age": ["[0,50)", "[50,100]"], "color": ["red", "Any"], "y": ["no", "yes"]})
    raw = pd.DataFrame({"age": ["3", "70"], "color": ["1", "2"], "y": ["no", "yes"]})
    assert column_kinds([released], ["age", "color"], SCHEMA) == {"age": "categorical", "color": "categorical"}
    # declared categorical stays categorical even if its values look like numbers
    assert column_kinds([raw], ["age", "color"], SCHEMA) == {"age": "numeric", "color": "categorical"}


def test_load_dataset_drops_ignored_and_missing(owner_verbose):
    df = _table(10)
    df.loc[3, "color"] = "?"
    with pytest.warns(DpkitWarning, match="dropped 1 row"):
        ds = load_dataset(df, "y", schema=SCHEMA)
    assert list(ds.X.columns) == ["age", "color"]
    assert len(ds.y) == 9
    assert ds.weight is None


def test_load_dataset_count_column_is_weight():
    df = pd.DataFrame({"a": ["x", "y", "z"], "count": ["2", "0", "5"], "y": ["n", "y", "n"]})
    ds = load_dataset(df, "y")
    assert ds.weight.tolist() == [2.0, 5.0]  # the empty cell is dropped
    assert list(ds.X.columns) == ["a"]
    # a target named count is not a weight
    ds2 = load_dataset(df.rename(columns={"count": "n"}), "y", weight_column="n")
    assert ds2.weight.tolist() == [2.0, 5.0]
    with pytest.raises(DataError, match="weights must be"):
        load_dataset(df.assign(count=["1", "-1", "2"]), "y")
    with pytest.raises(DpkitUsageError, match="not a column"):
        load_dataset(df, "y", weight_column="w")
    with pytest.raises(DpkitUsageError, match="target 'q' is not a column"):  # a usage error, as publish's
        load_dataset(df, "q")


def test_counts_table_equals_expanded_rows():
    """A --counts table and its one-row-per-record expansion give the same tree."""
    df = _table(400, seed=1)
    counts = df.groupby(["age", "color", "y"]).size().reset_index(name="count")
    counts["count"] = counts["count"].astype(str)
    expanded = df.drop(columns="id")
    test = _table(300, seed=2).drop(columns="id")
    ds_counts = load_dataset(counts, "y")
    ds_rows = load_dataset(expanded, "y")
    ds_test = load_dataset(test, "y", auto_weight=False)
    a = fit_predict(ds_counts, ds_test, model="tree")
    b = fit_predict(ds_rows, ds_test, model="tree")
    assert (a == b).all()


@pytest.mark.parametrize("model", ["tree", "svm", "forest"])
def test_models_learn(model):
    train, test = _table(400, 3), _table(300, 4)
    out = score_tables(train, test, "y", model=model, schema=SCHEMA)
    assert out["model"] == model
    assert out["accuracy"] > out["floor_accuracy"] + 0.05
    assert out["average"] == "binary"
    assert sum(map(sum, out["confusion_matrix"])) == 300


def test_baseline_and_floor():
    train, test = _table(300, 5), _table(200, 6)
    # a "release" that lost the age column's detail: every age generalized to one interval
    released = train.assign(age="[0,100]")
    test_gen = test.assign(age="[0,100]")
    out = score_tables(released, test_gen, "y", schema=SCHEMA, baseline_train=train, baseline_test=test)
    assert out["baseline_accuracy"] > out["accuracy"]  # detail helps
    floor = float(np.mean(test["y"] == train["y"].value_counts().idxmax()))
    assert out["floor_accuracy"] == pytest.approx(floor)


def test_predictions_and_positive(owner_verbose):
    test = _table(50, 7)
    pred = pd.DataFrame({"prediction": ["yes"] * 50})
    labels = read_predictions(pred, "y", 50, "p.csv")
    out = score_tables(None, test, "y", predictions=labels, positive="yes")
    assert out["recall"] == 1.0
    assert out["precision"] == pytest.approx(float(np.mean(test["y"] == "yes")))
    with pytest.raises(DataError, match="must align"):
        read_predictions(pred, "y", 49, "p.csv")
    with pytest.raises(DpkitUsageError, match="positive 'maybe'"):
        score_tables(None, test, "y", predictions=labels, positive="maybe")


def test_single_class_training_table_predicts_it():
    train = _table(30).assign(y="no")
    test = _table(20, 1)
    with pytest.warns(DpkitWarning, match="single class"):
        out = score_tables(train, test, "y", model="svm")
    assert out["accuracy"] == pytest.approx(float(np.mean(test["y"] == "no")))


def test_ungeneralized_test_file_is_warned():
    train = _table(100).assign(age=lambda d: np.where(d["age"].astype(int) < 50, "[0,50)", "[50,100]"))
    test = _table(100, 1)
    tr = load_dataset(train, "y", schema=SCHEMA)
    te = load_dataset(test, "y", schema=SCHEMA, auto_weight=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_predict(tr, te, schema=SCHEMA)
    assert any("generalized" in str(w.message) for w in caught)
    assert majority_floor(tr, te) > 0


_CELLS = st.one_of(
    st.sampled_from(["", " ", "1", "1.0", " 2 ", "1e3", "-0", "nan", "inf", "-inf", "0x10", "1_000", "?", "a", "[1,2)"]),
    st.text(alphabet="0123456789.-+eE ", max_size=6),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CELLS, max_size=30), st.booleans())
def test_numbers_parses_each_distinct_value_as_to_numeric_parses_every_cell(cells, categorical) -> None:
    """classify.numbers (one parse a distinct value) gives, cell for cell, the floats
    pd.to_numeric(errors="coerce") gives parsing every cell: the model sees the same numbers."""
    from dpkit.evaluate.classify import numbers

    series = pd.Series(cells, dtype=object)
    if categorical:  # as read_table(categorical=True) or a user's category column gives it
        series = series.map(lambda v: v if v is None else str(v)).astype("category")
    try:
        want = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    except (TypeError, ValueError, OverflowError):
        return  # pandas refuses the mix outright: nothing to match
    # to the last bit, but for an integer beyond 2**53, which pandas 2.2 rounds to float by another
    # path than a string's parse (one unit in the last place)
    np.testing.assert_allclose(numbers(series), want, rtol=2**-52, atol=0)
