"""Drafting a schema from data: types, rounded bounds, identifiers, and the privacy warning."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dpkit.errors import DataError, DpkitUsageError, PrivacyLeakWarning
from dpkit.io.table import load_table, read_csv
from dpkit.schema.draft import DRAFT_HEADER, detect_missing, draft_from_data, round_outward
from dpkit.schema.importers import dump_schema
from dpkit.schema.parse import parse_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "lo, hi, want",
    [
        (17, 90, (10, 90)),
        (0, 99999, (0, 100000)),
        (12285, 1484705, (0, 2000000)),
        (1, 16, (0, 20)),
        (4.3, 7.9, (4, 8)),
        (0.1, 2.5, (0, 3)),
        (-3.2, 4.1, (-4, 5)),
        (5, 5, (5, 6)),
        (0.25, 0.25, (0, 1)),
    ],
)
def test_round_outward(lo, hi, want):
    got = round_outward(lo, hi)
    assert got == pytest.approx(want)
    assert got[0] <= lo and got[1] >= hi and got[0] < got[1]


def frame(**cols):
    return pd.DataFrame({k: [str(v) for v in vs] for k, vs in cols.items()}, dtype=str)


def test_types_bounds_and_identifiers():
    n = 60
    df = frame(
        id=range(n),
        name=[f"person{i}" for i in range(n)],
        age=[20 + i % 50 for i in range(n)],
        score=[i / 7 for i in range(n)],
        colour=["red", "green", "?"] * (n // 3),
        label=[1, 2] * (n // 2),
        zip=[f"z{i % 55}" for i in range(n)],
    )
    with pytest.warns(PrivacyLeakWarning, match="NOT PRIVATE"):
        d = draft_from_data(df, target="label", max_categories=50)
    cols = d["columns"]
    assert cols["id"]["type"] == "ignore"  # integer, all distinct, named like an identifier
    assert cols["name"]["type"] == "ignore"  # text, all distinct
    assert cols["age"] == {**cols["age"], "type": "numeric", "bounds": [20, 70], "integer": True}
    assert cols["score"]["type"] == "numeric" and cols["score"]["integer"] is False
    assert cols["colour"]["values"] == ["green", "red"]  # the missing token is not a category
    assert cols["label"]["type"] == "categorical" and cols["label"]["values"] == ["1", "2"]
    assert cols["zip"]["type"] == "ignore" and "more than 50" in cols["zip"]["_comment"]
    assert d["target"] == "label" and d["missing"] == "?" and d["missing_policy"] == "keep"
    text = dump_schema(d, DRAFT_HEADER)
    assert text.startswith("# DRAFT schema") and "NOT PRIVATE" in text.splitlines()[0]
    s = parse_schema(text, "draft.yaml")
    assert s.target == "label"


def test_value_named_any_gets_another_root():
    df = frame(c=["Any", "x", "y", "x"], n=[1, 2, 3, 4])
    with pytest.warns(PrivacyLeakWarning):
        d = draft_from_data(df)
    s = parse_schema(dump_schema(d), "d.yaml")
    assert s.columns["c"].root.name == "All" and "Any" in s.columns["c"].leaves


def test_errors():
    df = frame(t=[f"v{i}" for i in range(10)] * 2)
    with pytest.raises(DataError, match="target 't' has more than 5 distinct values"):
        draft_from_data(df, target="t", max_categories=5)
    with pytest.raises(DpkitUsageError, match="target 'x' is not a column"):
        draft_from_data(df, target="x")
    with pytest.raises(DpkitUsageError, match="at least 2"):
        draft_from_data(df, max_categories=1)


def test_detect_missing():
    assert detect_missing(frame(a=["x", "?", "?"], b=["", "y", "z"])) == "?"
    assert detect_missing(frame(a=["x", "NA"], b=["1", "2"])) == "NA"
    assert detect_missing(frame(a=["x", "y"])) is None


@pytest.mark.parametrize("name, target", [("adult/train.csv", "income"), ("iris/iris.csv", "species")])
def test_draft_of_sample_data_loads_the_data(name, target, tmp_path):
    path = ROOT / "sample_data" / name
    with pytest.warns(PrivacyLeakWarning):
        d = draft_from_data(read_csv(path), target=target)
    p = tmp_path / "draft.yaml"
    p.write_text(dump_schema(d))
    schema = parse_schema(p.read_text(), str(p))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows with '?' are dropped
        table = load_table(path, schema)
    assert set(table.columns) == set(schema.used_columns())


@pytest.mark.parametrize("missing", [",N/A", ["", "N/A"]])
def test_several_missing_tokens_comma_separated(missing):
    # the help says "token(s), comma-separated": ',N/A' used to be ONE token, so a column with
    # empty cells and 'N/A' (15 % and 3 %) was drafted as 60 categories and ignored
    n = 60
    df = frame(amount=[str(i * 10) if i % 7 else ("" if i % 2 else "N/A") for i in range(n)],
               label=["a", "b"] * (n // 2))
    with pytest.warns(PrivacyLeakWarning):
        d = draft_from_data(df, target="label", missing=missing)
    assert d["missing"] == ["", "N/A"]
    assert d["columns"]["amount"]["type"] == "numeric"
    text = dump_schema(d, DRAFT_HEADER)
    assert parse_schema(text, "draft.yaml").missing_tokens == ("", "N/A")
