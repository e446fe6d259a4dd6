"""Dates and timestamps as numbers: the one parse function, the format, the calendar grids.

A date column (schema ``type: date``) is read as the number of days since 1970-01-01, a
timestamp column (``type: timestamp``) as seconds since 1970-01-01T00:00:00 (naive: no time
zone is read or assumed). Every reader — the columnar Arrow path, the exact pandas path, the
Spark executors (which hand date columns to the exact path) and the domain discovery — goes
through :func:`parse_array`, so what is a date is decided in one place:

* a date is ``YYYY-MM-DD`` (ISO 8601 calendar date, four-digit year ≥ 1);
* a timestamp is ``YYYY-MM-DDTHH:MM:SS`` (or ``HH:MM``; a space may replace the ``T``, as
  pandas writes datetimes), or a date alone (midnight). No fraction, no time zone;
* in a date column a timestamp counts as its day (pandas writes a date column of datetimes as
  ``2021-03-04 00:00:00``).

Anything else — ``2021-3-4``, ``04/03/2021``, ``2021-02-30`` — is not a date (NaN).

Bounds and split points lie on a **calendar grid** so that released intervals read
``[2021-01-01,2021-07-01)``: :func:`calendar_points` gives publish's candidate split points
(the finest of days, months, quarters, half-years, years, 2/5/10/… years — or, for timestamps,
seconds to hours — with at most ``max_points`` points in the interval, as the numeric grid of
:func:`dpkit.algorithms.publish.cut.grid_points` takes the finest "nice" step), :func:`bounds_grid` the
public candidates of learned bounds (every year start 1800–2200; publish's calendar splits then
resolve months and days inside them). All are functions of public values only.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Iterable, Sequence

import numpy as np

#: the time kinds of a numeric column (schema ``type:``)
TIME_KINDS = ("date", "timestamp")
_EPOCH = _dt.date(1970, 1, 1).toordinal()
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?")
#: the years of the learned bounds' grid (year starts)
GRID_YEARS = (1800, 2200)


def _check(kind: str) -> None:
    if kind not in TIME_KINDS:
        raise ValueError(f"time kind must be one of {TIME_KINDS}, got {kind!r}")


def parse(text: str, kind: str) -> int | None:
    """``text`` (stripped) as days (``date``) or seconds (``timestamp``) since 1970-01-01;
    None when it is not an ISO date/timestamp (module docstring)."""
    _check(kind)
    m = _ISO.fullmatch(text.strip())
    if m is None:
        return None
    y, mo, d, hh, mm, ss = m.groups()
    try:
        day = _dt.date(int(y), int(mo), int(d)).toordinal() - _EPOCH
        t = _dt.time(int(hh), int(mm), int(ss or 0)) if hh is not None else _dt.time(0)
    except ValueError:
        return None
    if kind == "date":
        return day
    return day * 86400 + t.hour * 3600 + t.minute * 60 + t.second


def parse_array(values: Iterable[object], kind: str) -> np.ndarray:
    """float64 of each value (:func:`parse`), NaN where it is not a date/timestamp.

    Each distinct value is parsed once (a column of dates holds few distinct values). A
    ``datetime.date``/``datetime`` object (a Parquet or DataFrame date) is read as its ISO text.
    """
    _check(kind)
    vals = list(values)
    cache: dict[object, float] = {}
    out = np.empty(len(vals), dtype=np.float64)
    for i, v in enumerate(vals):
        got = cache.get(v)
        if got is None:
            text = v.isoformat() if isinstance(v, _dt.date) else v if isinstance(v, str) else None
            p = parse(text, kind) if text is not None else None
            got = cache[v] = float(p) if p is not None else math.nan
        out[i] = got
    return out


def format_time(x: float, kind: str) -> str:
    """Days/seconds since 1970-01-01 as ISO text: ``2021-03-04`` or ``2021-03-04T10:00:00``
    (a non-whole number of days is its day: split points of a date column are whole)."""
    _check(kind)
    if kind == "date":
        return _dt.date.fromordinal(int(math.floor(x)) + _EPOCH).isoformat()
    s = int(math.floor(x))
    day, rest = divmod(s, 86400)
    d = _dt.date.fromordinal(day + _EPOCH)
    return f"{d.isoformat()}T{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def expected(kind: str) -> str:
    """What a value of the kind must look like, as error messages say it."""
    return {"date": "an ISO date (YYYY-MM-DD)", "timestamp": "an ISO timestamp (YYYY-MM-DDTHH:MM:SS)"}[kind]


def parse_bound(text: str, kind: str) -> float | None:
    """A bound written in a schema (an ISO date or timestamp) as its number, or None."""
    got = parse(text, kind)
    return float(got) if got is not None else None


# --------------------------------------------------------------------------- calendar grids


def _month_start(m: int, kind: str) -> float:
    """The first instant of month index ``m`` in the kind's unit."""
    day = _dt.date(m // 12, m % 12 + 1, 1).toordinal() - _EPOCH
    return float(day if kind == "date" else day * 86400)


#: fixed steps in the kind's unit, finest first: a day; for timestamps 1/5/15/30 seconds,
#: 1/5/15/30 minutes, 1/3/6/12 hours, a day
_FIXED = {
    "date": (1,),
    "timestamp": (1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400),
}
#: calendar steps in months, finest first (months, quarters, half-years, years, …)
_MONTHLY = (1, 3, 6, 12, 24, 60, 120, 240, 600, 1200)


def _day(x: float, kind: str) -> int:
    return int(math.floor(x if kind == "date" else x / 86400))


def calendar_points(lo: float, hi: float, max_points: int, kind: str) -> np.ndarray:
    """Publish's candidate split points strictly inside ``(lo, hi)`` on the calendar grid.

    The finest calendar step with at most ``max_points`` points inside: days (timestamps:
    seconds, minutes, hours, days), then month starts, quarter starts (Jan/Apr/Jul/Oct),
    half-years, year starts, and starts of 2, 5, 10, 20, 50, 100 years. Empty when no step fits
    (an interval of one day) or none is coarse enough (> 100·max_points years). A function of
    the public interval only.
    """
    _check(kind)
    if not hi > lo or max_points < 1:
        return np.zeros(0)
    for step in _FIXED[kind]:
        first, last = math.floor(lo / step) + 1, math.ceil(hi / step) - 1
        if last < first:
            continue
        if last - first + 1 <= max_points:
            return np.arange(first, last + 1, dtype=float) * step
        # too many: try a coarser step
    m_lo = _month_of(lo, kind)
    m_hi = _month_of(hi, kind)
    for months in _MONTHLY:
        starts = (_month_start(m, kind) for m in range(m_lo - m_lo % months, m_hi + 1, months) if m >= 12)
        pts = [p for p in starts if lo < p < hi]  # month 0..11 would be year 0: not a date
        if len(pts) <= max_points:
            return np.asarray(pts, dtype=float)
    return np.zeros(0)


def _month_of(x: float, kind: str) -> int:
    d = _dt.date.fromordinal(max(1, _day(x, kind) + _EPOCH))
    return d.year * 12 + d.month - 1


def bounds_grid(kind: str) -> np.ndarray:
    """The public candidates of a learned date/timestamp column's bounds: every year start from
    :data:`GRID_YEARS` [0] to [1] (401 points), ascending, in the kind's unit."""
    _check(kind)
    a, b = GRID_YEARS
    return np.asarray([_month_start(12 * y, kind) for y in range(a, b + 1)], dtype=float)


#: γ of the learned bounds' width prior, nats per year of the grid: firmer than the numeric
#: grid's per-step prior (a step there is 20–33 % of the value; a year is a fixed width, and
#: the numeric grid's γ left the bounds years loose on each side). A month grid with a
#: quarter/year bonus fails where n·ε is small, as a range of years costs 12 steps a year
#: (docs/decisions/0009-date-bounds-prior.md)
YEAR_PRIOR = 1.0
#: the share of a learned date column's bounds ε spent refining them on month starts
#: (:func:`refine_grid`) inside the year-start bounds: a column whose dates span 8 months across
#: a new year got two years from the year grid alone
REFINE_SHARE = 0.25
#: the share spent on a noisy count of the column's dates, and the ε·ñ the month draw needs
#: (ε its share): below it the year-start bounds are kept and the month draw's share is not spent
COUNT_SHARE = 0.05
REFINE_MIN = 30.0
#: only year-start bounds at most this many years apart are refined (the data are concentrated:
#: a firm prior per month over a longer window clips the months of a small table — 2,000 rows
#: over 6 years collapsed onto a few months); a wider range keeps its year starts and leaves the
#: refinement's share unspent
REFINE_YEARS = 3
#: γ of the refinement's width prior, nats per month (3 a year: firmer than the year grid's 1,
#: its window being the year-start bounds already drawn), and the bonuses of a quarter start and
#: (on top) a year start as a bound: the tie past the data goes to the round date
MONTH_PRIOR = 0.75
QUARTER_BONUS = 0.5
YEAR_BONUS = 0.5


def refine_grid(lo: float, hi: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The month starts from ``lo`` to ``hi`` (both included; year-start bounds of
    :func:`bounds_grid`) and each one's prior bonus in nats: :data:`QUARTER_BONUS` for a quarter
    start, plus :data:`YEAR_BONUS` for a year start. A function of the public bounds only."""
    _check(kind)
    m_lo, m_hi = _month_of(lo, kind), _month_of(hi, kind)
    months = np.arange(m_lo, m_hi + 1)
    pts = np.asarray([_month_start(int(m), kind) for m in months], dtype=float)
    bonus = np.where(months % 3 == 0, QUARTER_BONUS, 0.0) + np.where(months % 12 == 0, YEAR_BONUS, 0.0)
    return pts, bonus


def to_number(text: str, kind: str) -> float:
    """:func:`parse_bound` or a ValueError naming the text (for cut JSON read back)."""
    got = parse_bound(text, kind)
    if got is None:
        raise ValueError(f"{text!r} is not an ISO {kind}")
    return got


def arrow_times(arr: object, kind: str, tokens: Sequence[str] | set[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An Arrow array of a date/timestamp column as (numbers, missing, not a date).

    Strings (plain or dictionary-encoded: each distinct one is parsed once by
    :func:`parse_array`); a Parquet ``date32``/``timestamp`` column is read as its days or
    seconds (a timestamp in a date column as its day). A null or a missing token (stripped) is
    missing; numbers are 0 where missing or not a date.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(arr)  # type: ignore[arg-type]
    nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else np.zeros(n, dtype=bool)  # type: ignore[attr-defined]
    typ = arr.type  # type: ignore[attr-defined]
    if pa.types.is_date(typ) or pa.types.is_timestamp(typ):
        secs = pc.fill_null(arr.cast(pa.timestamp("s")).cast(pa.int64()), 0).to_numpy(zero_copy_only=False)  # type: ignore[attr-defined]
        nums = np.floor_divide(secs, 86400) if kind == "date" else secs
        return nums.astype(np.float64), nulls, np.zeros(n, dtype=bool)
    if not pa.types.is_dictionary(typ):
        arr = pc.fill_null(arr.cast(pa.string()), "").dictionary_encode()  # type: ignore[attr-defined]
    entries = arr.dictionary.to_pylist()  # type: ignore[attr-defined]
    lut = parse_array(entries, kind)
    tok = np.array([isinstance(v, str) and v.strip() in tokens for v in entries], dtype=bool)
    idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False)  # type: ignore[attr-defined]
    nums = lut[idx] if len(entries) else np.zeros(n)
    missing = nulls | (tok[idx] if len(entries) else np.zeros(n, dtype=bool))
    bad = ~np.isfinite(nums) & ~missing
    return np.where(np.isfinite(nums), nums, 0.0), missing, bad
