"""A date column in private schema discovery (issue 36 item 4): the ColumnMeta of kind "date"
learns its bounds on the year grid, spends at a numeric column's weight, no δ, and reads what is
not a date as missing."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from dpkit.api.domain import learn_schema
from dpkit.domain.discover import DomainOptions, column_budgets, discover
from dpkit.domain.metadata import ColumnMeta, Declarations, learn_metadata, resolve_declarations
from dpkit.domain.profile import Summary, times
from dpkit.privacy import Accountant, make_rng
from dpkit.privacy.mechanisms.quantiles import Profile
from dpkit.schema import dates

SECRET = "2021-13-45-SECRET"


def day(text: str) -> float:
    return float(dates.parse(text, "date"))


def table(n: int = 4000) -> pd.DataFrame:
    g = np.random.default_rng(1)
    first = dt.date(2019, 1, 1).toordinal()
    d = [dt.date.fromordinal(first + int(x)).isoformat() for x in g.integers(0, 6 * 365, n)]
    d[0] = SECRET  # not a date: missing, never an error that names it
    d[1] = "?"
    y = np.where(g.random(n) < 0.5, "a", "b")
    return pd.DataFrame({"d": d, "y": y}, dtype=object)


def test_profile_leaves_out_tokens_and_what_is_not_a_date():
    s = Summary(("2021-01-01", "?", "nope", "2021-01-02"), np.array([3, 2, 1, 4]))
    p = times(s, ["?"], "date")
    assert p.values.tolist() == [day("2021-01-01"), day("2021-01-02")] and p.counts.tolist() == [3, 4]


def test_date_metadata_is_declared_and_weighs_as_a_number():
    summaries = {"d": Summary(("2021-01-01", "junk"), np.array([5, 1])), "y": Summary(("a", "b"), np.array([3, 3]))}
    acc = Accountant(1.0, delta=1e-6)
    metas = learn_metadata(summaries, target="y", declared=Declarations(date=["d"], missing=()), epsilon=0.1,
                           delta=1e-6, rng=make_rng(0), accountant=acc).metas
    assert metas[0] == ColumnMeta("d", "date", integer=True, given=True, declared=("type", "missing tokens"))
    assert not acc.spends  # declared: nothing learned
    budgets = column_budgets(metas, 1.0, 1e-6, DomainOptions(), target="y")
    assert budgets["d"] == (pytest.approx(1 / 5), 0.0)  # numeric weight 1 against the target's 4; no δ
    assert budgets["y"][1] == 1e-6


def test_learned_date_column_on_the_year_grid():
    acc = Accountant(1.0, delta=1e-6)
    learned = learn_schema(table(), target="y", epsilon=1.0, delta=1e-6, rng=make_rng(3), accountant=acc,
                           date=["d"], missing=["?"])
    col = learned.schema.columns["d"]
    assert col.time == "date" and col.unparsable == "missing" and col.integer
    lo, hi = dates.format_time(col.lo, "date"), dates.format_time(col.hi, "date")
    assert lo.endswith("-01-01") and hi.endswith("-01-01")
    assert "2016" <= lo <= "2019-01-01" and "2025-01-01" <= hi <= "2028"
    assert learned.schema.missing_policy == "keep" and col.missing  # a missing date is the bucket (issue 36.3)
    steps = [s.step for s in acc.spends]
    assert "domain: d bounds" in steps
    text = learned.yaml(source="t", epsilon=1.0, delta=1e-6)
    assert "type: date" in text and "unparsable: missing" in text and SECRET not in text
    assert "the date bounds: the same mechanism on the public grid of year starts" in text


def test_dates_concentrated_in_months_get_month_bounds():
    """8 months of dates across a new year: the year grid alone gave [2023, 2025) or wider in 40
    of 40 runs; refined on month starts, most runs span about a year or less, none clips."""
    first, last = day("2023-09-01"), day("2024-04-30")
    v = np.random.default_rng(0).integers(first, last + 1, 20000).astype(float)
    prof = Profile.of(v)
    spans, clipped = [], []
    for seed in range(20):
        acc = Accountant(1.0)
        disc = discover([ColumnMeta("d", "date", integer=True, given=True)], {}, {"d": prof}, target=None, tokens=(),
                        epsilon=0.05, delta=0.0, rng=make_rng(seed), accountant=acc)
        col = disc.schema.columns["d"]
        assert dates.format_time(col.lo, "date").endswith("-01") and dates.format_time(col.hi, "date").endswith("-01")
        spans.append((col.hi - col.lo) / 30.44)
        clipped.append(float(((v < col.lo) | (v > col.hi)).mean()))
        assert sum(s.epsilon for s in acc.spends) <= 0.05 + 1e-12
    assert sum(s <= 13 for s in spans) >= 10, spans
    assert max(clipped) < 0.01, clipped


def test_public_date_bounds_spend_nothing():
    meta = ColumnMeta("d", "date", integer=True, given=True, bounds=(day("2019-01-01"), day("2025-01-01")))
    y = ColumnMeta("y", "categorical", given=True, values=("a", "b"))
    acc = Accountant(1.0, delta=1e-6)
    disc = discover([meta, y], {}, {}, target="y", tokens=(), epsilon=1.0, delta=1e-6, rng=make_rng(0),
                    accountant=acc)
    assert disc.schema.columns["d"].time == "date" and disc.schema.columns["d"].lo == day("2019-01-01")
    assert not acc.spends


def test_public_date_bounds_are_iso_dates():
    declared = Declarations(date=["d"], missing=(), bounds={"d": ("2019-01-01", "2025-01-01")})
    _, _, _, bounds = resolve_declarations(["d", "y"], "y", declared)
    assert bounds["d"] == (day("2019-01-01"), day("2025-01-01"))
    from dpkit.errors import DpkitUsageError

    with pytest.raises(DpkitUsageError, match="needs two ISO dates"):
        resolve_declarations(["d", "y"], "y", Declarations(date=["d"], bounds={"d": ("2019", "2025-01-01")}))
    learned = learn_schema(table(), target="y", epsilon=1.0, delta=1e-6, rng=make_rng(3),
                           accountant=Accountant(1.0, delta=1e-6), date=["d"], missing=["?"],
                           bounds={"d": ("2019-01-01", "2025-01-01")})
    assert learned.schema.columns["d"].lo == day("2019-01-01") and learned.schema.columns["d"].time == "date"
