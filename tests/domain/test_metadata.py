"""Metadata under the guarantee (issue 36 item 1): dpkit.domain.metadata — the shape cells, the
decisions on noisy counts, the declarations, and a learned schema reading what does not fit its
type as missing instead of refusing it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.api.domain import infer_schema, learn_schema, read_strings
from dpkit.data.encode import encode
from dpkit.domain.metadata import (
    MISSING_CANDIDATES,
    SHAPES,
    Declarations,
    decide,
    declared_tokens,
    is_date,
    learn_metadata,
    shape_counts,
)
from dpkit.domain.profile import Summary
from dpkit.privacy import Accountant, make_rng
from dpkit.schema.parse import parse_schema

KEY = "0x5e1f942a52fbe775abf9c37c75d4e92d"


def _summary(values: dict[str, int]) -> Summary:
    return Summary(tuple(values), np.array(list(values.values()), dtype=np.int64))


def test_zero_is_a_cell_of_its_own() -> None:
    """A float column that is mostly zeros is not integer: zero is no evidence of whole numbers."""
    counts = shape_counts(_summary({"0": 8000, "0.0": 100, "23.47": 1600, "7": 5}), ())
    assert dict(zip(SHAPES, counts.tolist(), strict=True)) == {
        "whole number": 5, "fraction": 1600, "date": 0, "text": 0, "zero": 8100}
    assert not decide(counts, (), tau=9000).integer and decide(counts, (), tau=9000).kind == "numeric"


def test_each_value_is_in_one_shape_cell_tokens_first() -> None:
    s = _summary({"": 1, "nan": 2, "?": 3, "12": 4, "1e3": 5, "-0.5": 6, "inf": 7, "2021-03-04": 8,
                  "2021-03-04T10:20:30Z": 9, "2021-02-30": 10, "abc": 11, "NA": 12})
    counts = shape_counts(s, MISSING_CANDIDATES)
    k = len(MISSING_CANDIDATES)
    cell = dict(zip([*MISSING_CANDIDATES, *SHAPES], counts.tolist(), strict=True))
    assert (cell[""], cell["nan"], cell["?"], cell["NA"]) == (1, 2, 3, 12)  # 'nan' is a token, not a number
    assert cell["whole number"] == 4 + 5 and cell["fraction"] == 6
    assert cell["date"] == 8  # 2021-02-30 is no date, nor a time zone (dpkit.schema.dates.parse)
    assert cell["text"] == 7 + 9 + 10 + 11  # inf is not a finite number: text
    assert cell["zero"] == 0 and counts.sum() == sum(range(1, 13)) and counts.size == k + 5


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.integers(1, 1000), max_size=30))
def test_shape_counts_keep_every_record(values: dict[str, int]) -> None:
    """Each record adds one to exactly one cell: the histogram's L1 sensitivity is 1 per column."""
    counts = shape_counts(_summary(values), MISSING_CANDIDATES)
    assert counts.sum() == sum(values.values()) and (counts >= 0).all()


@pytest.mark.parametrize(("text", "ok"), [("2021-01-31", True), ("2021-13-01", False), ("2021-1-1", False),
                                          ("2021-01-31 23:59", True), ("2021-01-31T23:59:59", True),
                                          ("2021-01-31T23:59:59.5+02:00", False),
                                          ("20210131", False), ("31/01/2021", False)])
def test_iso_dates(text: str, ok: bool) -> None:
    assert is_date(text) is ok


def _noisy(tokens: dict[str, int] | None = None, whole: int = 0, frac: int = 0, date: int = 0, text: int = 0,
           zero: int = 0):  # noqa: ANN202
    tok = [(tokens or {}).get(t, 0) for t in MISSING_CANDIDATES]
    return np.array([*tok, whole, frac, date, text, zero])


@pytest.mark.parametrize(("noisy", "kind", "integer", "tokens"), [
    (_noisy(whole=20000, frac=2, text=3, tokens={"?": 4}), "numeric", True, ()),  # stray values: below τ
    (_noisy(whole=20000, frac=60), "numeric", False, ()),  # fractions established: not integer
    (_noisy(whole=20000, text=700), "numeric", True, ()),  # text established but outnumbered: read as missing
    (_noisy(whole=300, text=5000, tokens={"?": 80, "": 51}), "categorical", False, ("", "?")),
    (_noisy(date=9000, text=30), "date", False, ()),
    (_noisy(whole=40, frac=45, text=10), "numeric", False, ()),  # nothing established: the larger count
    (_noisy(whole=10, text=30), "categorical", False, ()),
    # a date column must be established; below τ its dates count as text: categorical, never
    # numeric (which would read every date as missing and drop every row)
    (_noisy(whole=10, date=30), "categorical", False, ()),
    (_noisy(whole=3, frac=2, zero=4, text=1, date=45), "categorical", False, ()),
    (_noisy(zero=9600, frac=2400, whole=20), "numeric", False, ()),  # zero-heavy floats: zeros say nothing
    (_noisy(zero=9600, whole=2400), "numeric", True, ()),  # zero-heavy counts stay integer
])
def test_decisions(noisy, kind: str, integer: bool, tokens: tuple[str, ...]) -> None:  # noqa: ANN001
    d = decide(noisy, MISSING_CANDIDATES, 50)
    assert (d.kind, d.kind == "numeric" and d.integer, d.tokens) == (kind, integer, tokens)


def test_declared_tokens() -> None:
    assert declared_tokens("auto") is None and declared_tokens(None) == () and declared_tokens("None") == ()
    assert declared_tokens("?") == ("?",) and declared_tokens("?,") == ("?", "") and declared_tokens(["", "?"]) == ("", "?")


def _table(n: int = 20000) -> dict[str, Summary]:
    return {"age": _summary({str(v): n // 50 for v in range(50)}),
            "city": _summary({"a": n // 2, "b": n // 2}),
            "user_id": _summary({str(i): 1 for i in range(50)}),
            "y": _summary({"p": n // 2, "q": n // 2})}


def test_learned_metadata_spends_pure_epsilon_per_profiled_column() -> None:
    acc = Accountant(1.0, delta=1e-6)
    meta = learn_metadata(_table(), target="y", declared=Declarations(), epsilon=0.2, delta=1e-6, rng=make_rng(3),
                          accountant=acc)
    by = {m.name: m for m in meta.metas}
    assert (by["age"].kind, by["age"].integer, by["city"].kind) == ("numeric", True, "categorical")
    assert by["user_id"].kind == "ignore" and by["user_id"].why == "named like an identifier"  # a public name rule
    assert by["y"].declared == ("type",) and not by["y"].learned
    assert by["age"].learned == ("type", "integer", "missing tokens") and by["city"].learned == ("type", "missing tokens")
    steps = [s.step for s in acc.spends]
    assert steps == ["domain: type and missing tokens of age", "domain: type and missing tokens of city"]
    assert acc.spent == pytest.approx(0.2) and acc.delta_spent == 0 and meta.epsilon == pytest.approx(0.2)
    assert by["age"].epsilon == pytest.approx(0.1) and by["age"].threshold is not None


def test_everything_declared_spends_nothing() -> None:
    acc = Accountant(1.0, delta=1e-6)
    meta = learn_metadata(_table(), target="y", declared=Declarations(integer="age", categorical=["city"], missing=("?",)),
                          epsilon=0.2, delta=1e-6, rng=make_rng(3), accountant=acc)
    by = {m.name: m for m in meta.metas}
    assert acc.spends == () and meta.epsilon == 0 and meta.tokens == ("?",) and meta.tokens_declared
    assert (by["age"].kind, by["age"].integer) == ("numeric", True)  # integer= declares numeric too
    assert by["age"].declared == ("type", "integer", "missing tokens") and not by["age"].learned


def test_a_declared_numeric_column_learns_its_whole_number_flag() -> None:
    acc = Accountant(1.0, delta=1e-6)
    meta = learn_metadata(_table(), target="y", declared=Declarations(numeric="age", categorical="city", missing=()),
                          epsilon=0.2, delta=1e-6, rng=make_rng(3), accountant=acc)
    assert [s.step for s in acc.spends] == ["domain: type and missing tokens of age"]
    age = meta.metas[0]
    assert age.learned == ("integer",) and age.integer and age.epsilon == pytest.approx(0.2)


def _stray_table(n: int = 20000) -> pd.DataFrame:
    g = np.random.default_rng(1)
    amount = g.integers(0, 500, n).astype(str).astype(object)
    amount[3], amount[4], amount[5] = "37.5", "n/a", "?"  # one record each: the three leaks
    return pd.DataFrame({"amount": amount, "c": np.where(g.random(n) < 0.5, "u", "v"),
                         "y": np.where(g.random(n) < 0.5, "p", "q")})


def test_stray_values_neither_flip_the_metadata_nor_refuse_the_load(owner_verbose) -> None:
    df = _stray_table()
    s = infer_schema(df, target="y", epsilon=1.0, delta=1e-6, random_state=KEY)
    amount = s.columns["amount"]
    assert (amount.kind, amount.integer, amount.unparsable, s.missing_tokens) == ("numeric", True, "missing", ())
    meta = s.report["parameters"]["metadata"]
    assert meta["columns"]["amount"]["learned"] == ["type", "integer", "missing tokens"]
    assert meta["columns"]["amount"]["type"] == "numeric integer" and meta["missing_tokens"] == []
    strings, _ = read_strings(df)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = encode(strings, parse_schema(s.yaml, "s.yaml"), ["amount", "c", "y"])
    # 'n/a' and '?' are not numbers: missing — under the learned keep policy (issue 36 item 3) the
    # column's missing bucket (NaN), the row kept; 37.5 is read as a number
    assert table.n_rows == len(df) and 37.5 in table.columns["amount"]
    assert np.flatnonzero(np.isnan(table.columns["amount"])).tolist() == [4, 5]
    assert not any("dropped" in str(w.message) for w in caught)


def test_a_learned_numeric_column_reads_non_numbers_as_missing_in_parquet(tmp_path) -> None:  # noqa: ANN001
    from dpkit.io.source import ReadOptions
    from dpkit.io.table import load

    df = pd.DataFrame({"x": ["1", "2.5", "oops", None, "4"], "y": ["a", "b", "a", "b", "a"]})
    df.to_parquet(tmp_path / "t.parquet")
    schema = parse_schema("missing_policy: drop\ncolumns:\n  x: {type: numeric, bounds: [0, 10], unparsable: missing}\n"
                          "  y: {type: categorical, values: [a, b]}\n", "s.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = load(ReadOptions(str(tmp_path / "t.parquet")), schema)
    assert t.n_rows == 3 and t.columns["x"].tolist() == [1.0, 2.5, 4.0]


def test_a_date_column_is_learned_as_a_date() -> None:
    g = np.random.default_rng(2)
    n = 6000
    df = pd.DataFrame({"signup": [f"2021-{m:02d}-{d:02d}" for m, d in zip(g.integers(1, 13, n), g.integers(1, 29, n),
                                                                          strict=True)],
                       "c": np.where(g.random(n) < 0.5, "u", "v"), "y": np.where(g.random(n) < 0.5, "p", "q")})
    s = infer_schema(df, target="y", epsilon=2.0, delta=1e-6, random_state=KEY)
    signup = s.columns["signup"]
    assert (signup.kind, signup.time, signup.unparsable) == ("numeric", "date", "missing")
    assert s.report["parameters"]["metadata"]["columns"]["signup"]["type"] == "date"
    assert s.report["parameters"]["metadata"]["columns"]["signup"]["learned"] == ["type", "missing tokens"]
    acc = Accountant(1.0, delta=1e-6)
    strings, _ = read_strings(df)
    learned = learn_schema(strings, target="y", epsilon=1.0, delta=1e-6, rng=make_rng(1), accountant=acc,
                           date=["signup"], categorical=["c"], missing="none")
    assert [m.kind for m in learned.metas] == ["date", "categorical", "categorical"]
    assert not [s for s in acc.spends if "type" in s.step]  # everything declared: nothing spent on metadata


def test_the_metadata_is_paid_by_the_predictors_and_the_target_keeps_its_share() -> None:
    """A small table's rarest class must clear its threshold as when every type is declared."""
    g = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame({"a": g.integers(0, 9, n).astype(str), "b": np.where(g.random(n) < 0.5, "u", "v"),
                       "y": np.where(g.random(n) < 0.5, "p", "q")})
    strings, _ = read_strings(df)

    def spends(**kw):  # noqa: ANN003, ANN202
        acc = Accountant(1.0, delta=1e-6)
        learn_schema(strings, target="y", epsilon=1.0, delta=1e-6, rng=make_rng(2), accountant=acc, **kw)
        return {s.step: s.epsilon for s in acc.spends}

    learned = spends()
    declared = spends(integer=["a"], categorical=["b"], missing="none")
    assert learned["domain: categories of y"] == pytest.approx(declared["domain: categories of y"]) == pytest.approx(4 / 6)
    meta = learned["domain: type and missing tokens of a"] + learned["domain: type and missing tokens of b"]
    assert meta == pytest.approx(0.2 * 2 / 6)  # meta_share of the predictors' part
    assert sum(learned.values()) == pytest.approx(1.0) and sum(declared.values()) == pytest.approx(1.0)


def test_a_forest_s_columns_make_declarations_of_other_columns_moot() -> None:
    df = pd.DataFrame({"a": ["1", "2"] * 1500, "b": ["u", "v"] * 1500, "y": ["p", "q"] * 1500})
    strings, _ = read_strings(df)
    acc = Accountant(1.0, delta=1e-6)
    learned = learn_schema(strings, target="y", epsilon=1.0, delta=1e-6, rng=make_rng(1), accountant=acc,
                           keep=["b"], numeric=["a"], categorical=["b"], missing="none")
    assert [m.kind for m in learned.metas] == ["ignore", "categorical", "categorical"]
    assert not [s for s in acc.spends if "type" in s.step or " a" in s.step]
