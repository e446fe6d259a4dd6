"""Dates and timestamps: the one parse function, the format, the calendar grids, the schema
type and both readers (dpkit/schema/dates.py; issue 36 item 4)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.algorithms.publish.cut import Cut
from dpkit.errors import DataError, SchemaError
from dpkit.io.source import ReadOptions
from dpkit.io.table import load, read_table
from dpkit.schema import dates
from dpkit.schema.parse import NumericColumn, load_schema, parse_schema, schema_to_dict


def test_parse_iso_dates_and_timestamps():
    assert dates.parse("1970-01-01", "date") == 0
    assert dates.parse("2021-03-04", "date") == dt.date(2021, 3, 4).toordinal() - dt.date(1970, 1, 1).toordinal()
    assert dates.parse(" 2021-03-04 ", "date") == dates.parse("2021-03-04", "date")
    # pandas writes a datetime column as '2021-03-04 00:00:00': a date column reads its day
    assert dates.parse("2021-03-04 10:30:00", "date") == dates.parse("2021-03-04", "date")
    assert dates.parse("1970-01-02T01:02:03", "timestamp") == 86400 + 3723
    assert dates.parse("1970-01-02 01:02", "timestamp") == 86400 + 3720
    assert dates.parse("1970-01-02", "timestamp") == 86400
    assert dates.parse("1969-12-31", "date") == -1


@pytest.mark.parametrize("text", ["2021-02-30", "2021-3-4", "04/03/2021", "20210304", "2021-W01-1", "2021-03",
                                  "", "?", "2021-03-04T25:00:00", "2021-03-04T10:00:00Z",
                                  "2021-03-04T10:00:00.5", "2021-03-04x"])
def test_parse_refuses_what_is_not_an_iso_date(text):
    assert dates.parse(text, "date") is None
    assert dates.parse(text, "timestamp") is None


@given(st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)))
def test_date_round_trips(d):
    x = dates.parse(d.isoformat(), "date")
    assert dates.format_time(x, "date") == d.isoformat()


@given(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59)))
def test_timestamp_round_trips(t):
    t = t.replace(microsecond=0)
    x = dates.parse(t.isoformat(), "timestamp")
    assert dates.format_time(x, "timestamp") == t.isoformat()
    assert dates.parse_array([t.isoformat(), "nope"], "timestamp")[0] == x


def test_parse_array_marks_non_dates_nan_and_reads_date_objects():
    got = dates.parse_array(["2021-01-01", "x", dt.date(2021, 1, 2), None, "2021-01-01"], "date")
    base = dates.parse("2021-01-01", "date")
    assert got[0] == base and got[2] == base + 1 and got[4] == base
    assert np.isnan(got[1]) and np.isnan(got[3])


def _fmt(points: np.ndarray, kind: str = "date") -> list[str]:
    return [dates.format_time(p, kind) for p in points]


def day(text: str) -> float:
    return float(dates.parse(text, "date"))


def test_calendar_points_take_the_finest_step_that_fits():
    # six years: 72 months > 32, quarters 23 ≤ 32
    pts = dates.calendar_points(day("2019-01-01"), day("2025-01-01"), 32, "date")
    assert _fmt(pts)[:3] == ["2019-04-01", "2019-07-01", "2019-10-01"] and len(pts) == 23
    # a year: 11 month starts
    assert _fmt(dates.calendar_points(day("2021-01-01"), day("2022-01-01"), 32, "date")) == [
        f"2021-{m:02d}-01" for m in range(2, 13)]
    # a month: every day
    assert len(dates.calendar_points(day("2021-02-01"), day("2021-03-01"), 32, "date")) == 27
    # sixty years: 2-year starts (29 points), not years (59); a century: 5-year starts
    assert _fmt(dates.calendar_points(day("1960-01-01"), day("2020-01-01"), 32, "date"))[:2] == [
        "1962-01-01", "1964-01-01"]
    assert _fmt(dates.calendar_points(day("1920-01-01"), day("2020-01-01"), 32, "date"))[:2] == [
        "1925-01-01", "1930-01-01"]
    # one day: nothing strictly inside
    assert dates.calendar_points(day("2021-01-01"), day("2021-01-02"), 32, "date").size == 0
    # a day of timestamps: hours
    t0 = float(dates.parse("2021-03-04T00:00:00", "timestamp"))
    assert _fmt(dates.calendar_points(t0, t0 + 86400, 32, "timestamp"), "timestamp")[:2] == [
        "2021-03-04T01:00:00", "2021-03-04T02:00:00"]


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
       st.integers(min_value=1, max_value=20000), st.integers(min_value=1, max_value=64))
def test_calendar_points_lie_inside_in_order_and_on_the_calendar(start, length, max_points):
    lo = float(dates.parse(start.isoformat(), "date"))
    pts = dates.calendar_points(lo, lo + length, max_points, "date")
    assert pts.size <= max_points
    assert np.all((pts > lo) & (pts < lo + length)) and np.all(np.diff(pts) > 0)
    assert np.all(pts == np.floor(pts))
    if length - 1 > max_points:  # too many days: month starts (or coarser)
        assert all(s.endswith("-01") for s in _fmt(pts))


def test_bounds_grid_is_the_year_starts():
    g = dates.bounds_grid("date")
    assert _fmt(g[:2]) == ["1800-01-01", "1801-01-01"] and _fmt(g[-1:]) == ["2200-01-01"] and g.size == 401
    assert dates.format_time(dates.bounds_grid("timestamp")[170], "timestamp") == "1970-01-01T00:00:00"


SCHEMA = """\
target: y
columns:
  d: {type: date, bounds: [2019-01-01, 2025-01-01]}
  t: {type: timestamp, bounds: ['2021-01-01T00:00:00', 2022-01-01]}
  y: {type: categorical, values: ["no", "yes"]}
"""


def test_schema_reads_iso_bounds_and_writes_them_back():
    s = parse_schema(SCHEMA, "s.yaml")
    d, t = s.columns["d"], s.columns["t"]
    assert isinstance(d, NumericColumn) and d.time == "date" and d.integer and d.kind == "numeric"
    assert (d.lo, d.hi) == (day("2019-01-01"), day("2025-01-01"))
    assert t.time == "timestamp" and t.hi - t.lo == 365 * 86400
    out = schema_to_dict(s)["columns"]
    assert out["d"] == {"type": "date", "bounds": ["2019-01-01", "2025-01-01"]}
    assert out["t"] == {"type": "timestamp", "bounds": ["2021-01-01T00:00:00", "2022-01-01T00:00:00"]}


@pytest.mark.parametrize(("spec", "message"), [
    ("{type: date, bounds: [2019-01-01, 2019-02-30]}", "s.yaml:3:40: upper bound of 'd' must be an ISO date"),
    ("{type: date, bounds: [2020-01-01, 2019-01-01]}", "bounds need lo < hi"),
    ("{type: date}", "needs public bounds"),
    ("{type: date, bounds: [2019-01-01, 2020-01-01], integer: true}", "unknown key 'integer'"),
    ("{type: date, bounds: [2019-01-01, 2020-01-01], unparsable: skip}", "unparsable must be error or missing"),
])
def test_schema_refuses_bad_date_columns(spec, message):
    with pytest.raises(SchemaError, match=message):
        parse_schema(f"target: y\ncolumns:\n  d: {spec}\n  y: {{type: categorical, values: [a, b]}}\n", "s.yaml")


def test_a_number_column_keeps_its_repr():
    # a keyed run's identity holds the schema's repr: schemas without dates keep their bytes
    @dataclasses.dataclass(frozen=True)
    class NumericColumn:  # the class as it was before dates
        name: str
        lo: float
        hi: float
        integer: bool = False
        hierarchy: object = None
        kind: str = dataclasses.field(default="numeric", init=False)

    from dpkit.schema.parse import IntervalNode
    from dpkit.schema.parse import NumericColumn as Now

    tree = IntervalNode(0.0, 9.0, (IntervalNode(0.0, 4.0), IntervalNode(4.0, 9.0)))
    for args in (("age", 15.0, 95.0, True), ("x", -1.5, 2.0, False, tree)):
        old = repr(NumericColumn(*args))
        assert repr(Now(*args)) == "NumericColumn(" + old.split("NumericColumn(", 1)[1]
    assert "time='date'" in repr(Now("d", 0.0, 9.0, True, time="date"))


ROWS = ["d,t,y", "2019-03-04,2021-05-06T07:08:09,yes", "2018-12-31,2021-05-06 07:08,no",
        "2024-06-30,2021-01-01,yes"]


@pytest.mark.parametrize("fmt", ["csv", "parquet-strings", "parquet-typed"])
def test_both_readers_encode_days_and_seconds_and_clip(tmp_path: Path, fmt):
    schema = parse_schema(SCHEMA, "s.yaml")
    path = tmp_path / "d.csv"
    path.write_text("\n".join(ROWS) + "\n")
    if fmt != "csv":
        import pandas as pd

        df = pd.read_csv(path, dtype=str)
        if fmt == "parquet-typed":
            df["d"] = pd.to_datetime(df["d"]).dt.date
            df["t"] = pd.to_datetime(df["t"], format="mixed")
        path = tmp_path / "d.parquet"
        df.to_parquet(path)
    with pytest.warns(Warning, match="clipped"):  # 2018-12-31 lies below the bounds
        fast = load(ReadOptions(str(path)), schema)
    assert fast.columns["d"].tolist() == [day("2019-03-04"), day("2019-01-01"), day("2024-06-30")]
    t = dates.parse("2021-05-06T07:08:09", "timestamp")
    assert fast.columns["t"].tolist() == [t, t - 9, dates.parse("2021-01-01", "timestamp")]
    if fmt == "csv":  # the exact path gives the same numbers
        from dpkit.data.encode import encode

        with pytest.warns(Warning, match="clipped"):
            exact = encode(read_table(ReadOptions(str(path))), schema)
        for c in ("d", "t"):
            assert exact.columns[c].tolist() == fast.columns[c].tolist()


def test_a_bad_date_names_file_line_and_column(tmp_path: Path, monkeypatch):
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)
    path = tmp_path / "d.csv"
    path.write_text("\n".join([*ROWS, "2021-02-30,2021-01-01,no"]) + "\n")
    with pytest.raises(DataError, match=r"d\.csv:5: date column 'd' has '2021-02-30', not an ISO date"):
        load(ReadOptions(str(path)), parse_schema(SCHEMA, "s.yaml"))


def test_unparsable_missing_drops_the_row_instead(tmp_path: Path):
    path = tmp_path / "d.csv"
    path.write_text("\n".join([*ROWS, "soon,2021-01-01,no"]) + "\n")
    text = SCHEMA.replace("[2019-01-01, 2025-01-01]}", "[2019-01-01, 2025-01-01], unparsable: missing}")
    schema = parse_schema(text.replace("target: y\n", "target: y\nmissing_policy: drop\n"), "s.yaml")
    with pytest.warns(Warning):
        got = load(ReadOptions(str(path)), schema)
    assert got.n_rows == 3 and got.columns["d"].tolist()[0] == day("2019-03-04")


def test_cut_of_a_date_column_reads_as_iso_and_back():
    schema = parse_schema(SCHEMA, "s.yaml")
    cut = Cut.initial(schema, "y")
    a = cut.attributes["d"]
    a.split(0, [day("2021-01-01"), day("2021-07-01")])
    assert a.labels() == ["[2019-01-01,2021-01-01)", "[2021-01-01,2021-07-01)", "[2021-07-01,2025-01-01]"]
    data = cut.to_json()
    assert data["d"][1] == ["2021-01-01", "2021-07-01"]
    again = Cut.from_json(schema, "y", data)
    assert again.attributes["d"].edges == a.edges
    with pytest.raises(DataError, match=r"tile its bounds \[2019-01-01, 2025-01-01\]"):
        Cut.from_json(schema, "y", {"d": [["2019-01-01", "2024-01-01"]]})


def test_load_schema_file(tmp_path: Path):
    (tmp_path / "s.yaml").write_text(SCHEMA)
    assert load_schema(tmp_path / "s.yaml").columns["d"].time == "date"


def test_the_draft_types_iso_dates_with_year_bounds():
    import pandas as pd

    from dpkit.schema.draft import draft_from_data

    df = pd.DataFrame({"d": ["2019-03-04", "2024-12-31", "2020-01-01"], "t": ["2021-01-01T10:00:00"] * 3,
                       "y": ["a", "b", "a"]}, dtype=object)
    with pytest.warns(Warning):
        cols = draft_from_data(df, target="y")["columns"]
    assert cols["d"]["type"] == "date" and cols["d"]["bounds"] == ["2019-01-01", "2025-01-01"]
    assert cols["t"]["type"] == "timestamp" and cols["t"]["bounds"] == ["2021-01-01T00:00:00", "2022-01-01T00:00:00"]


@pytest.mark.parametrize("fmt", ["csv", "parquet-strings"])
def test_the_clipping_warning_writes_a_date_columns_bounds_as_dates(tmp_path: Path, fmt):
    """A user reads [2019-01-01, 2025-01-01], as the schema has it, not the day numbers inside."""
    schema = parse_schema(SCHEMA, "s.yaml")
    from dpkit.data.encoded import bounds_text

    assert bounds_text(schema.columns["d"]) == "[2019-01-01, 2025-01-01]"
    assert bounds_text(schema.columns["t"]) == "[2021-01-01T00:00:00, 2022-01-01T00:00:00]"
    path = tmp_path / "d.csv"
    path.write_text("\n".join(ROWS) + "\n")
    if fmt != "csv":
        import pandas as pd

        pd.read_csv(tmp_path / "d.csv", dtype=str).to_parquet(path := tmp_path / "d.parquet")
    with pytest.warns(Warning) as got:
        load(ReadOptions(str(path)), schema)
    text = " ".join(str(w.message) for w in got if "clipped" in str(w.message))
    assert "[2019-01-01, 2025-01-01]" in text and "17897" not in text, text
