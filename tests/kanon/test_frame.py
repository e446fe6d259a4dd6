"""Column roles, schema typing and missing values before selection (dpkit.algorithms.kanon.frame)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from dpkit.algorithms.kanon.frame import prepare
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning
from dpkit.schema.parse import load_schema

SCHEMA = """
target: y
missing: "?"
missing_policy: drop
columns:
  id:   {type: ignore}
  age:  {type: numeric, bounds: [0, 50], integer: true}
  col:  {type: categorical, hierarchy: {Any: [red, green, blue]}}
  y:    {type: categorical, values: ["0", "1"]}
"""


@pytest.fixture()
def schema(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(SCHEMA, encoding="utf-8")
    return load_schema(p)


def _df(**cols) -> pd.DataFrame:
    base = {"id": ["1", "2", "3", "4", "5", "6"], "age": ["10", "20", "?", "60", "10", "20"],
            "col": ["red", "blue", "red", "green", "red", "blue"], "y": ["0", "1", "0", "1", "0", "1"]}
    base.update(cols)
    return pd.DataFrame(base)


def test_schema_types_missing_and_clipping(schema, owner_verbose) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = prepare(_df(), target="y", quasi_identifiers=None, keep=[], sensitive=None, schema=schema, source="d.csv")
    messages = [str(w.message) for w in caught if issubclass(w.category, DpkitWarning)]
    assert any("dropped 1 row" in m for m in messages)
    assert any("clipped 1 value" in m for m in messages)
    assert p.candidates == ["age", "col"]  # id is 'ignore'
    assert p.table()["age"].tolist() == ["10", "20", "60", "10", "20"]  # values as written
    assert p.features["age"].tolist() == [10.0, 20.0, 50.0, 10.0, 20.0]  # the ranker sees clipped numbers
    assert isinstance(p.features["col"].dtype, pd.CategoricalDtype)
    assert list(p.features["col"].cat.categories) == ["red", "green", "blue"]  # from the taxonomy
    codes, n = p.codes["col"]
    assert n >= 3 and len(set(codes.tolist())) == 3


def test_schema_value_errors_name_the_line(schema, owner_verbose) -> None:
    with pytest.raises(DataError, match=r"d.csv:4: column 'col' has value\(s\) not in the taxonomy"):
        prepare(_df(col=["red", "blue", "pink", "green", "red", "red"], age=["1", "2", "3", "1", "2", "3"]), target="y",
                quasi_identifiers=None, keep=[], sensitive=None, schema=schema, source="d.csv")
    with pytest.raises(DataError, match=r"d.csv:3: numeric column 'age' has 'x'"):
        prepare(_df(age=["1", "x", "3", "1", "x", "3"]), target="y", quasi_identifiers=None, keep=[],
                sensitive=None, schema=schema, source="d.csv")
    with pytest.raises(DpkitUsageError, match="ignore"):
        prepare(_df(), target="y", quasi_identifiers=["id"], keep=[], sensitive=None, schema=schema, source="d.csv")


def test_without_schema_numbers_are_numeric() -> None:
    df = pd.DataFrame({"n": ["1", "2.5", "1", "3"], "c": ["a", "1", "a", "b"], "y": ["p", "q", "p", "q"]})
    p = prepare(df, target="y", quasi_identifiers=None, keep=[], sensitive=None, schema=None, source="d")
    assert p.features["n"].dtype == float and p.features["n"].tolist() == [1.0, 2.5, 1.0, 3.0]
    assert isinstance(p.features["c"].dtype, pd.CategoricalDtype)


def test_roles_conflict() -> None:
    df = pd.DataFrame({"a": ["1", "1"], "b": ["x", "y"], "y": ["p", "q"]})
    with pytest.raises(DpkitUsageError, match="both a quasi-identifier and kept"):
        prepare(df, target="y", quasi_identifiers=["a"], keep=["a"], sensitive=None, schema=None, source="d")
    p = prepare(df, target="y", quasi_identifiers=None, keep=["b"], sensitive=None, schema=None, source="d")
    assert p.candidates == ["a"]


def test_schema_mismatch_empty_cells_and_delimiter_hint(schema, owner_verbose) -> None:
    other = pd.DataFrame({"sepal": ["1", "2"], "petal": ["1", "2"], "y": ["0", "1"]})
    with pytest.raises(DataError, match="not found in the header .*different data set"):
        prepare(other, target="y", quasi_identifiers=None, keep=[], sensitive=None, schema=schema, source="d")
    with pytest.raises(DataError, match=r"d:4: numeric column 'age' is empty \(declare a missing token"):
        prepare(_df(age=["1", "2", "", "1", "2", "3"]), target="y", quasi_identifiers=None, keep=[],
                sensitive=None, schema=schema, source="d")
    with pytest.raises(DataError, match=r"d:3: column 'col' .*declare a missing token"):
        prepare(_df(col=["red", "", "red", "green", "red", "blue"]), target="y", quasi_identifiers=None,
                keep=[], sensitive=None, schema=schema, source="d")
    semi = pd.DataFrame({"a;b;y": ["1;2;0", "1;2;1"]})
    with pytest.raises(DataError, match="wrong delimiter") as info:
        prepare(semi, target="y", quasi_identifiers=None, keep=[], sensitive=None, schema=None, source="d")
    assert info.value.param == "delimiter"  # the CLI names --delimiter


def test_category_columns_give_the_codes_of_string_columns(schema) -> None:
    """A table read as ``category`` (any category order, unused categories) is prepared exactly
    as the same table of strings: same codes (first-seen order), labels and typed features."""
    import numpy as np

    from dpkit.engine.string_frame import column_codes

    strings = _df()
    cats = strings.copy()
    for c in cats.columns:  # reversed categories plus an unused one: the numbering must not follow them
        values = sorted(set(cats[c]), reverse=True) + ["unused"]
        cats[c] = pd.Categorical(cats[c], categories=values)
    for c in strings.columns:
        a, ua = column_codes(strings[c])
        b, ub = column_codes(cats[c])
        assert a.tolist() == b.tolist() and list(ua) == list(ub)
        assert b.dtype == np.int8  # the category codes' own small dtype, not one object per cell
    kw = dict(target="y", quasi_identifiers=None, keep=[], sensitive=None, schema=schema, source="d")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, q = prepare(strings, **kw), prepare(cats, **kw)
    assert p.candidates == q.candidates
    assert {c: (v[0].tolist(), v[1]) for c, v in p.codes.items()} == {c: (v[0].tolist(), v[1]) for c, v in q.codes.items()}
    pd.testing.assert_frame_equal(p.features, q.features)
    assert p.labels("y")[1] == q.labels("y")[1] == ["0", "1"]
    rows = np.array([0, 2])
    sample = q.features_of(rows)
    assert list(sample.index) == [0, 2]
    pd.testing.assert_frame_equal(sample, q.features.iloc[rows])


def test_labels_are_numbered_by_sorted_class() -> None:
    p = prepare(pd.DataFrame({"a": ["x", "y", "x"], "t": pd.Categorical(["b", "a", "c"], categories=["c", "b", "a"])}),
                target="t", quasi_identifiers=None, keep=[], sensitive=None, schema=None, source="d")
    codes, classes = p.labels("t")
    assert classes == ["a", "b", "c"] and codes.tolist() == [1, 0, 2]


def test_dropped_rows_leave_the_rows_used(schema) -> None:
    """Rows dropped for a missing value leave a string frame of the rows used: their codes
    (shared with the category columns as read while no row is dropped), strings and labels."""
    import numpy as np

    cats = pd.DataFrame({c: pd.Categorical(v, categories=pd.unique(v)) for c, v in _df().items()})  # as read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = prepare(cats, target="y", quasi_identifiers=None, keep=["id"], sensitive=None, schema=schema,
                    source="d")
        clean = pd.DataFrame({c: pd.Categorical(v, categories=pd.unique(v))
                              for c, v in _df(age=["10", "20", "30", "40", "10", "20"]).items()})
        whole = prepare(clean, target="y", quasi_identifiers=None, keep=["id"], sensitive=None, schema=schema,
                        source="d")
    assert p.n_rows == 5 and p.frame.rows.tolist() == [0, 1, 3, 4, 5]  # input positions of the rows used
    expected = cats.loc[[0, 1, 3, 4, 5]].reset_index(drop=True).astype(str)
    pd.testing.assert_frame_equal(p.table(), expected, check_dtype=False)
    assert list(p.column("col")) == ["red", "blue", "green", "red", "blue"]
    codes, m = p.codes["col"]
    assert codes.tolist() == [0, 1, 2, 0, 1] and m == 3
    # the category codes of a table read in first-seen order are used as they are (shared)
    assert whole.frame.rows is None
    assert np.shares_memory(whole.codes["col"][0], clean["col"].array.codes)
    assert list(p.codes) == ["age", "col", "y"]
    assert list(p.features_of(np.array([1, 4])).index) == [1, 4]
    labels, classes = p.labels("y")
    assert labels.dtype == np.int8 and labels.tolist() == [0, 1, 1, 0, 1] and classes == ["0", "1"]
