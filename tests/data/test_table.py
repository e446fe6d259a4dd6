"""CSV reading, encoding against a schema, coverage checks and atomic writing."""

from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpkit.data.coverage import check_coverage
from dpkit.data.encode import encode
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning
from dpkit.io.output import atomic_output, write_csv
from dpkit.io.table import load_table, read_csv
from dpkit.schema.parse import load_schema, parse_schema


@pytest.fixture(autouse=True, scope="module")
def _owner_view():
    """These tests read the data owner's messages (exact counts, values, lines): as on a terminal."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("dpkit.console.owner_watching", lambda: True)
        yield

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "sample_data/adult/train.csv"

SCHEMA = parse_schema(
    """\
target: y
missing: "?"
missing_policy: drop
columns:
  a: {type: categorical, hierarchy: {Any: {X: [x1, x2], Y: null}}}
  n: {type: numeric, bounds: [0, 10]}
  id: {type: ignore}
  y: {type: categorical, values: ["no", "yes"]}
""",
    "S.yaml",
)


def write(tmp_path: Path, text: str, name: str = "d.csv", encoding: str = "utf-8") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


# ------------------------------------------------------------------ reading


def test_read_strings_nothing_guessed(tmp_path):
    p = write(tmp_path, "a,n,id,y\nx1,01,7,no\nY,2.50,8,yes\n")
    df = read_csv(p)
    assert list(df.columns) == ["a", "n", "id", "y"]
    assert df["n"].tolist() == ["01", "2.50"]  # kept as written
    assert df["a"].tolist() == ["x1", "Y"]


def test_surrounding_spaces_are_stripped(tmp_path):
    p = write(tmp_path, "a , n\n x1 ,  3 \nY,4\n")
    df = read_csv(p)
    assert list(df.columns) == ["a", "n"]
    assert df["a"].tolist() == ["x1", "Y"] and df["n"].tolist() == ["3", "4"]


@pytest.mark.parametrize("ws", [" ", "\t", "\x0c", "\x1f"])
def test_strip_detection_catches_every_whitespace(tmp_path, ws):
    p = write(tmp_path, f"a,n\nx1,3\nY{ws},4\n")
    assert read_csv(p)["a"].tolist() == ["x1", "Y"]


def test_quoted_fields_and_crlf(tmp_path):
    p = write(tmp_path, 'a,n\r\n"x1, quoted",3\r\n" Y ",4\r\n')
    df = read_csv(p)
    assert df["a"].tolist() == ["x1, quoted", "Y"]
    assert df["n"].tolist() == ["3", "4"]


def test_bom_and_latin1(tmp_path):
    p = write(tmp_path, "\ufeffa,n\nx1,3\n", name="bom.csv")
    assert list(read_csv(p).columns) == ["a", "n"]
    p = write(tmp_path, "a,n\ncaf\xe9,3\n", name="latin.csv", encoding="latin-1")
    with pytest.raises(DataError, match=r"latin\.csv:2: byte 0xe9 is not valid utf-8-sig; pass encoding="):
        read_csv(p)
    assert read_csv(p, encoding="latin-1")["a"].tolist() == ["caf\xe9"]
    with pytest.raises(DpkitUsageError, match="encoding 'klingon' is unknown"):
        read_csv(p, encoding="klingon")


def test_delimiter(tmp_path):
    p = write(tmp_path, "a;n\nx1;3\n")
    assert read_csv(p, delimiter=";")["n"].tolist() == ["3"]
    with pytest.raises(DpkitUsageError, match="one character"):
        read_csv(p, delimiter=";;")
    # the wrong delimiter: the header is one column, and encode says so
    with pytest.raises(DataError, match="wrong --delimiter"):
        encode(read_csv(p), SCHEMA, ["a"], source="d.csv")


@pytest.mark.parametrize(
    "text, line, got",
    [
        ("a,n\nx1,3\nY\nx2,4\n", 3, 1),  # short row (pandas would pad it with "")
        ("a,n\nx1,3,9\nY,4\n", 2, 3),  # long first row (pandas would take it as an index)
        ("a,n\nx1,3\n\nY,4,5\n", None, None),  # long later row: pandas' own error, with the line
    ],
)
def test_ragged_rows(tmp_path, text, line, got):
    p = write(tmp_path, text)
    with pytest.raises(DataError, match="ragged row") as exc:
        read_csv(p)
    if line is not None:
        assert str(exc.value).startswith(f"{p}:{line}: ")
        assert f"saw {got}" in str(exc.value)


def test_ragged_quoted_row(tmp_path):
    p = write(tmp_path, 'a,n\n"x1",3\n"Y"\n')
    with pytest.raises(DataError, match=r"ragged row \(expected 2 fields, saw 1\)"):
        read_csv(p)


def test_blank_lines_are_not_ragged(tmp_path):
    p = write(tmp_path, "a,n\nx1,3\n\nY,4\n\n")
    assert read_csv(p)["a"].tolist() == ["x1", "Y"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "the file is empty"),
        ("a,n\n", "has a header but no data rows"),
        ("a,a\n1,2\n", "duplicate column name 'a'"),
        ("a,,n\n1,2,3\n", "empty column name"),
    ],
)
def test_unusable_files(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        read_csv(write(tmp_path, text))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_csv(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="is a directory"):
        read_csv(tmp_path)


def test_stdin(monkeypatch):
    fake = io.TextIOWrapper(io.BytesIO(b"a,n\nx1,3\n"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", fake)
    df = read_csv("-")
    assert df["a"].tolist() == ["x1"]


# ------------------------------------------------------------------ encoding


def test_encode_codes_and_clipping(tmp_path):
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\nY,12,2,yes\nx2,-1,3,no\n")
    with pytest.warns(DpkitWarning, match=r"clipped 2 value\(s\) of 'n' to the public bounds \[0, 10\]"):
        t = load_table(p, SCHEMA)
    assert t.columns["a"].dtype == np.int8 and t.columns["a"].tolist() == [0, 2, 1]
    assert t.columns["y"].tolist() == [0, 1, 0]
    # whole numbers are kept as int8 (the same numbers)
    assert t.columns["n"].dtype == np.int8 and t.columns["n"].tolist() == [3.0, 10.0, 0.0]
    assert "id" not in t.columns and t.n_rows == 3


def test_missing_policy_drop_and_error(tmp_path):
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\n?,4,2,yes\nx2,?,3,no\nY,5,?,yes\n")
    with pytest.warns(DpkitWarning, match=r"dropped 2 row\(s\) with a missing value"):
        t = load_table(p, SCHEMA)
    # the ignored column's '?' does not drop its row
    assert t.n_rows == 2 and t.columns["a"].tolist() == [0, 2]
    strict = parse_schema(SCHEMA_TEXT_ERROR, "E.yaml")
    with pytest.raises(DataError, match=r":3: column 'a' is missing \('\?'\); set missing_policy: drop"):
        load_table(p, strict)


SCHEMA_TEXT_ERROR = """\
missing: "?"
columns:
  a: {type: categorical, values: [x1, x2, Y]}
  n: {type: numeric, bounds: [0, 10]}
"""


def test_uncovered_and_bad_numbers(tmp_path):
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\nZ,4,2,yes\nW,4,2,yes\n")
    with pytest.raises(DataError, match=r":3: column 'a' has 2 value\(s\) not in the taxonomy of S.yaml \('Z', 'W'\)"):
        load_table(p, SCHEMA)
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\nY,three,2,yes\n")
    with pytest.raises(DataError, match=r":3: numeric column 'n' has 'three', not a finite number"):
        load_table(p, SCHEMA)
    p = write(tmp_path, "a,n,id,y\nx1,,1,no\n")
    with pytest.raises(DataError, match="is empty"):
        load_table(p, SCHEMA)
    p = write(tmp_path, "a,n,id,y\nx1,inf,1,no\n")
    with pytest.raises(DataError, match="not a finite number"):
        load_table(p, SCHEMA)


def test_missing_columns_named(tmp_path):
    p = write(tmp_path, "a,id\nx1,1\n")
    with pytest.raises(DataError, match=r"column\(s\) 'n', 'y' from schema S.yaml not found"):
        load_table(p, SCHEMA)
    with pytest.raises(DpkitUsageError, match="declared 'ignore'"):
        encode(read_csv(p), SCHEMA, ["id"])


def test_adult_loads(recwarn):
    schema = load_schema(ROOT / "taxonomies/adult.yaml")
    t = load_table(ADULT, schema)
    assert set(t.columns) == set(schema.used_columns())
    lens = {len(v) for v in t.columns.values()}
    assert lens == {t.n_rows}
    assert all((v >= 0).all() for k, v in t.columns.items() if schema.columns[k].kind == "categorical")


def test_fast_path_agrees_with_csv_module(tmp_path):
    """The fast reader (no strip, delimiter count) gives what the csv module gives."""
    import csv

    text = ADULT.read_text()[:200_000].rsplit("\n", 1)[0] + "\n"
    p = write(tmp_path, text)
    df = read_csv(p)
    rows = list(csv.reader(io.StringIO(text)))
    assert df.columns.tolist() == rows[0]
    assert df.to_numpy().tolist() == rows[1:]


# ------------------------------------------------------------------ coverage


def test_check_coverage_lists_first_values_per_column(tmp_path):
    lines = ["a,n,id,y"] + [f"V{i},{i},1,no" for i in range(8)] + ["x1,99,1,maybe", "?,?,1,no"]
    df = read_csv(write(tmp_path, "\n".join(lines) + "\n"))
    cov = check_coverage(df, SCHEMA, source="d.csv")
    assert not cov.ok
    assert cov.uncovered["a"] == [(f"V{i}", i + 2) for i in range(5)]
    assert cov.uncovered_distinct["a"] == 8
    assert cov.uncovered["y"] == [("maybe", 10)]
    assert cov.out_of_bounds == {"n": (0, 1)}
    assert cov.missing_rows == 1 and cov.missing_first == (11, "a")
    assert cov.missing_columns == []


def test_check_coverage_ok_on_adult():
    schema = load_schema(ROOT / "taxonomies/adult.yaml")
    cov = check_coverage(read_csv(ADULT), schema)
    assert cov.ok and cov.missing_rows > 0 and not cov.out_of_bounds


# ------------------------------------------------------------------ writing


def test_atomic_output_leaves_nothing_on_exception(tmp_path):
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError):
        with atomic_output(target) as fh:
            fh.write("partial")
            raise RuntimeError("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_output_keeps_old_file_on_exception(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(target) as fh:
            fh.write("new")
            raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_atomic_output_writes_and_refuses_bad_places(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_output(target) as fh:
        fh.write("done")
    assert target.read_text() == "done"
    with pytest.raises(DataError, match="does not exist"):
        with atomic_output(tmp_path / "no" / "x.csv"):
            pass
    with pytest.raises(DataError, match="is a directory"):
        with atomic_output(tmp_path):
            pass


def test_write_csv_file_and_stdout(tmp_path, capsys):
    import pandas as pd

    df = pd.DataFrame({"a": ["x, y", "z"], "n": [1, 2]})
    write_csv(df, tmp_path / "o.csv")
    assert (tmp_path / "o.csv").read_text() == 'a,n\n"x, y",1\nz,2\n'
    write_csv(df, "-")
    assert capsys.readouterr().out == 'a,n\n"x, y",1\nz,2\n'


def test_no_warnings_on_clean_data(tmp_path):
    p = write(tmp_path, "a,n,id,y\nx1,3,1,no\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_table(p, SCHEMA)


# ------------------------------------------------------------------ fast path == slow path

FAST_CASES = [
    "a,n,id,y\nx1,3,1,no\nY,12,2,yes\nx2,-1,3,no\n",  # clipping
    "a,n,id,y\nx1,3,1,no\n?,4,2,yes\nY,5,?,yes\n",  # missing token dropped (categorical)
    "a,n,id,y\nx1,3,1,no\nx2,?,2,yes\n",  # missing token in a numeric column
    "a , n,id,y\n x1 ,  3 ,1, no\nY,4,2,yes\n",  # whitespace
    'a,n,id,y\n"x1",3,"1, 2",no\n',  # quotes
    "id,y,n,a,extra\n1,no,3,x1,e\n",  # other column order, extra column
    "a,n,id,y\nx1,nan,1,no\n",  # a 'nan' that is not a number
    "a,n,id,y\nx1,,1,no\n",  # empty numeric
    "a,n,id,y\nZ,3,1,no\n",  # not a leaf
    "a,n,id,y\nx1,3,1\n",  # ragged
    "a,n,id,y\nx1,3,1,no,9\nY,4,2,yes\n",  # long first row
]


@pytest.mark.parametrize("text", FAST_CASES)
def test_load_table_fast_path_matches_read_and_encode(tmp_path, text):
    p = write(tmp_path, text)

    def outcome(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                t = fn()
            except DataError as exc:
                return ("error", str(exc)), []
        return ("ok", t.n_rows, {k: v.tolist() for k, v in t.columns.items()},
                {k: str(v.dtype) for k, v in t.columns.items()}), [str(w.message) for w in caught]

    fast = outcome(lambda: load_table(p, SCHEMA))
    slow = outcome(lambda: encode(read_csv(p), SCHEMA, source=str(p)))
    assert fast == slow


def test_load_table_fast_path_matches_on_adult():
    schema = load_schema(ROOT / "taxonomies/adult.yaml")
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        fast = load_table(ADULT, schema)
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        slow = encode(read_csv(ADULT), schema, source=str(ADULT))
    assert fast.n_rows == slow.n_rows
    assert [str(w.message) for w in w1] == [str(w.message) for w in w2]
    for c in slow.columns:
        assert fast.columns[c].dtype == slow.columns[c].dtype
        assert np.array_equal(fast.columns[c], slow.columns[c])


def test_tab_delimited_with_empty_fields(tmp_path):
    p = write(tmp_path, "a\tn\tc\nx1\t3\t\n Y \t4\tz\n")
    df = read_csv(p, delimiter="\t")
    assert df.to_numpy().tolist() == [["x1", "3", ""], ["Y", "4", "z"]]
