"""A categorical column's ``other:`` (catch-all leaf) and ``unlisted: missing`` (issue 22): parsing,
writing, and every loader (the columnar fast path, the exact path, coverage, forest predict)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpkit.data.coverage import check_coverage
from dpkit.data.encode import encode
from dpkit.errors import DataError, DpkitWarning, SchemaError
from dpkit.io.source import ReadOptions
from dpkit.io.table import load
from dpkit.schema.parse import parse_schema, schema_to_dict

SCHEMA = """
target: y
missing: '?'
missing_policy: drop
columns:
  a: {type: categorical, values: [x, y, (other)], other: (other)}
  y: {type: categorical, values: ['0', '1'], unlisted: missing}
  n: {type: numeric, bounds: [0, 10]}
"""

ROWS = "a,y,n\nx,0,1\nz,1,2\n?,1,3\nw,2,4\ny,1,5\n"


def test_parse_and_round_trip() -> None:
    s = parse_schema(SCHEMA)
    a, y = s.columns["a"], s.columns["y"]
    assert (a.unlisted, a.other, a.other_code) == ("other", "(other)", 2)
    assert (y.unlisted, y.other, y.other_code) == ("missing", None, -1)
    d = schema_to_dict(s)
    assert d["columns"]["a"]["other"] == "(other)" and d["columns"]["y"]["unlisted"] == "missing"
    assert "other" not in schema_to_dict(parse_schema("columns: {b: {type: categorical, values: [p]}}"))["columns"]["b"]


@pytest.mark.parametrize(("spec", "match"), [
    ("{type: categorical, values: [x], other: z}", "must be one of the column's leaves"),
    ("{type: categorical, values: [x], other: x, unlisted: missing}", "give one of"),
    ("{type: categorical, values: [x], unlisted: other}", "unlisted must be error or missing"),
    ("{type: numeric, bounds: [0, 1], other: x}", "unknown key 'other'"),
])
def test_bad_specs_are_refused_with_their_line(spec: str, match: str) -> None:
    with pytest.raises(SchemaError, match=match):
        parse_schema(f"columns:\n  c: {spec}\n", "s.yaml")


@pytest.mark.parametrize("fast", [True, False])
def test_loading_maps_unlisted_values(tmp_path, fast: bool) -> None:  # noqa: ANN001
    """'z' and 'w' are read as (other); y = '2' is missing (row dropped) like the '?' row."""
    schema = parse_schema(SCHEMA)
    p = tmp_path / "d.csv"
    p.write_text(ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fast:
            t = load(ReadOptions(str(p)), schema)
        else:
            df = pd.read_csv(p, dtype=str, keep_default_na=False)
            t = encode(df, schema)
    assert t.n_rows == 3
    assert t.columns["a"].tolist() == [0, 2, 1]
    assert t.columns["y"].tolist() == [0, 1, 1]
    assert np.asarray(t.columns["n"]).tolist() == [1, 2, 5]


def test_without_other_an_unlisted_value_is_still_an_error() -> None:
    schema = parse_schema("columns:\n  a: {type: categorical, values: [x]}\n")
    with pytest.raises(DataError, match="not in the taxonomy"):
        encode(pd.DataFrame({"a": ["x", "q"]}), schema)


def test_coverage_counts_unlisted_values_as_covered() -> None:
    schema = parse_schema(SCHEMA)
    df = pd.read_csv(pd.io.common.StringIO(ROWS), dtype=str, keep_default_na=False)
    assert check_coverage(df, schema).uncovered == {}


def test_forest_predict_reads_unlisted_values_as_the_catch_all() -> None:
    from dpkit.algorithms.forest.model import Feature, ForestModel, _Reader, features_from_schema

    schema = parse_schema(SCHEMA)
    feats = features_from_schema(schema, ["a", "n"])
    assert feats[0].other == "(other)" and feats[0].to_dict()["other"] == "(other)"
    model = ForestModel(target="y", classes=("0", "1"), features=feats, trees=[], missing="?")
    x = model.encode_frame(pd.DataFrame({"a": ["x", "zz"], "n": ["1", "2"]}))
    assert x[:, 0].tolist() == [0, 2]
    plain = ForestModel(target="y", classes=("0", "1"), features=[Feature("a", "categorical", categories=("x",))],
                        trees=[])
    # without a catch-all an unknown category is a missing value, never a refusal (issue 43)
    with pytest.warns(DpkitWarning, match="values not in the schema were read as missing in 'a'"):
        assert np.isnan(plain.encode_frame(pd.DataFrame({"a": ["zz"]}))[0, 0])
    assert _Reader("m.json").feature(0, feats[0].to_dict()) == feats[0]  # the model file keeps it
    with pytest.raises(DataError, match="other must be one of its values"):
        _Reader("m.json").feature(0, {**feats[0].to_dict(), "other": "nope"})


def test_kanon_select_reads_unlisted_values_as_the_catch_all(tmp_path) -> None:  # noqa: ANN001
    import dpkit

    schema = tmp_path / "s.yaml"
    schema.write_text("target: y\ncolumns:\n  a: {type: categorical, values: [x, (other)], other: (other)}\n"
                      "  b: {type: categorical, values: [p, q]}\n  y: {type: categorical, values: ['0', '1']}\n")
    data = tmp_path / "d.csv"
    g = np.random.default_rng(0)
    rows = ["a,b,y"] + [f"{'x' if i % 3 else 'rare' + str(i)},{'pq'[i % 2]},{g.integers(0, 2)}" for i in range(300)]
    data.write_text("\n".join(rows) + "\n")
    result = dpkit.kanon_select(str(data), k=5, schema=str(schema), target="y")
    assert len(result.table) == 300  # the rare values were read as (other), not refused
