"""Encoding a table held as codes (dpkit.io.table.encode_codes, issue 36): what ``encode``
gives for the same strings — codes, dtypes, dropped rows, clipping, warnings and errors — with
no string per row on the way (the columnar encoder), so a run without a schema can learn its
domain from codes and encode the same codes against it."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.data.encode import encode
from dpkit.errors import DataError
from dpkit.io.table import encode_codes
from dpkit.schema.parse import parse_schema

SCHEMA_TEXT = """\
target: y
missing: ['?', '']
missing_policy: {policy}
columns:
  a: {{type: categorical, values: [x1, x2, '?', (other)], other: (other)}}
  b: {{type: categorical, values: [u, v], unlisted: missing}}
  c: {{type: categorical, values: [p, q]}}
  n: {{type: numeric, bounds: [0, 10]}}
  m: {{type: numeric, bounds: [0, 100], unparsable: missing}}
  d: {{type: date, bounds: [2020-01-01, 2022-01-01], unparsable: {dates}}}
  y: {{type: categorical, values: ["no", "yes"]}}
"""
COLUMNS = ["a", "b", "c", "n", "m", "d", "y"]
CELLS = {"a": ["x1", "x2", "?", "zz", ""], "b": ["u", "v", "w", "?"], "c": ["p", "q", "?"],
         "n": ["3", "12", "-1", "2.5", "7", "?", "1e1"], "m": ["5", "250", "n/a", "?", "0.5", "inf"],
         "d": ["2021-03-04", "2019-12-31", "2023-05-01", "?", "soon", "2021-03-04 10:00:00"],
         "y": ["no", "yes", "?"]}


def _codes(df: pd.DataFrame) -> tuple[dict, dict]:
    codes, values = {}, {}
    for c in df.columns:
        codes[c], uniques = pd.factorize(df[c].to_numpy(), use_na_sentinel=False)
        values[c] = np.asarray(uniques, dtype=object)
    return codes, values


def _outcome(fn, *args, **kw) -> tuple:  # noqa: ANN001
    """(columns as (dtype, values), n_rows, warnings) or ('error', message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            t = fn(*args, **kw)
        except DataError as exc:
            return ("error", str(exc))
    cols = {c: (str(v.dtype), [None if x != x else x for x in v.tolist()])  # NaN: a missing bucket
            for c, v in t.columns.items()}
    return cols, t.n_rows, [str(w.message) for w in caught]


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries({c: st.sampled_from(v) for c, v in CELLS.items()}), min_size=1,
                     max_size=40),
       policy=st.sampled_from(["drop", "error", "keep"]), dates=st.sampled_from(["error", "missing"]))
def test_codes_encode_as_the_strings_do(rows: list[dict], policy: str, dates: str) -> None:
    schema = parse_schema(SCHEMA_TEXT.format(policy=policy, dates=dates), "S.yaml")
    df = pd.DataFrame(rows, columns=COLUMNS, dtype=object)
    codes, values = _codes(df)
    got = _outcome(encode_codes, codes, values, len(df), schema, COLUMNS, source="d.csv", first_line=2)
    assert got == _outcome(encode, df, schema, COLUMNS, source="d.csv", first_line=2)


def test_ordinary_codes_never_build_the_rows_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)  # the owner's form: what happened
    schema = parse_schema(SCHEMA_TEXT.format(policy="drop", dates="missing"), "S.yaml")
    df = pd.DataFrame({"a": ["x1", "zz", "?"] * 4, "b": ["u", "w", "v"] * 4, "c": ["p", "q", "q"] * 4,
                       "n": ["3", "12", "?"] * 4, "m": ["5", "250", "n/a"] * 4,
                       "d": ["2021-03-04", "2019-12-31", "soon"] * 4, "y": ["no", "yes", "no"] * 4},
                      dtype=object)
    expected = _outcome(encode, df, schema, COLUMNS, source="d.csv")
    codes, values = _codes(df)

    def exact(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the exact encoder (a string per row) was used")

    monkeypatch.setattr("dpkit.io.table.encode", exact)
    assert _outcome(encode_codes, codes, values, len(df), schema, COLUMNS, source="d.csv") == expected
    # '?' in n (and 'n/a' in m, 'soon' in d: unparsable: missing) drops a row in 3; 'w' (b,
    # unlisted: missing) another, with its '250' and '2019-12-31': one warning, no clipping
    assert expected[1] == 4 and len(expected[2]) == 1 and "dropped" in expected[2][0]


def test_an_error_names_the_line_of_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)  # the owner's form: line and value
    schema = parse_schema(SCHEMA_TEXT.format(policy="drop", dates="error"), "S.yaml")
    df = pd.DataFrame({"a": ["x1"] * 3, "b": ["u"] * 3, "c": ["p", "p", "r"], "n": ["1", "2", "3"],
                       "m": ["1"] * 3, "d": ["2021-01-01"] * 3, "y": ["no"] * 3}, dtype=object)
    codes, values = _codes(df)
    with pytest.raises(DataError, match=r"^d\.csv:4: column 'c' has 1 value\(s\) not in the taxonomy of S.yaml \('r'\)"):
        encode_codes(codes, values, len(df), schema, COLUMNS, source="d.csv", first_line=2)


def test_a_run_without_a_schema_reads_a_csv_through_the_columnar_reader(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The domain step's read is the columnar one (codes and distinct strings), never the exact
    reader's DataFrame of a string per cell; the release is the one the exact reader gives."""
    import dpkit

    rng = np.random.default_rng(3)
    n = 4000
    df = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], n), "size": rng.integers(0, 50, n).astype(str),
                       "y": rng.choice(["a", "b"], n)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    key = "0x28aa79597b38bd41138f8e7bc7b35aaf"
    with monkeypatch.context() as mp:
        mp.setattr("dpkit.io.codes.read_codes", lambda *_a, **_k: None)  # the exact reader
        exact_read = dpkit.publish(str(path), target="y", epsilon=1, delta=1e-6, random_state=key)

    def exact(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the exact reader (a string per cell) was used")

    monkeypatch.setattr("dpkit.io.table._parse_strings", exact)
    monkeypatch.setattr("dpkit.io.table.encode", exact)
    from_path = dpkit.publish(str(path), target="y", epsilon=1, delta=1e-6, random_state=key)
    assert from_path.table.equals(exact_read.table) and from_path.report == exact_read.report
