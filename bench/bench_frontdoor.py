"""`make bench-frontdoor`: the no-schema front door (issue 36) on tables as they come ->
docs/results/frontdoor.md.

For each table of :data:`TABLES` (builders only: synthetic tables generated with a fixed seed,
or derived from sample_data/adult; files go to bench/out/frontdoor/) and each run s:

* **no schema** — what ``dpkit publish DATA --target T --epsilon 1 --delta 1e-6`` does: the
  schema learned under DP with 0.2 of ε (bench/bench_domain.py's ``_learned``: the run's
  defaults, a predictor with no surviving value left out; declared ``--ignore`` columns as a
  user would declare them), then the release with the other 0.8;
* **reviewed draft** — ``taxonomy infer`` without ``--epsilon`` (data-derived, NOT private)
  with its draft line deleted (``_draft``), publish at ε = 1: the issue's baseline;
* **raw** — the same entropy tree trained on the raw training split (the sweep protocol's
  ``baseline_`` figures of the draft runs; not private).

Each release is scored by the sweep protocol (bench/bench_domain.py's ``_publish``:
``dpkit.sweep.tasks.publish.run_experiment`` — `evaluate classify`'s default entropy tree on
the release, scored on the test split mapped onto the released cut): accuracy and ROC AUC of
the rarer class. Mean ± standard error over the runs. A table is **tuned on** when a default
was chosen looking at it, **held out** when no choice was made from it (their figures were
printed beside the tuned ones after each change, and nothing was changed for them). A run whose
schema was refused, or whose release failed, is counted and not scored (the message kept).

Run: ``python -m bench.bench_frontdoor [--runs 5] [--tables a,b]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "frontdoor"
DOC = ROOT / "docs" / "results" / "frontdoor.md"
ADULT = ROOT / "sample_data/adult/train.csv"
ADULT_TEST = ROOT / "sample_data/adult/test.csv"
#: the domain's share of ε in a run without a schema (the publish default)
SHARE = 0.2


@dataclass(frozen=True)
class Table:
    """A built table: its training and test files and what a user would declare."""

    train: str
    test: str
    target: str
    ignore: tuple[str, ...] = ()
    note: str = ""
    #: other public declarations a user would give (learn_schema keywords, e.g. date=[...])
    declare: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Entry:
    """A registry entry: a builder and whether the defaults were tuned on it."""

    build: Callable[[], Table]
    tuned: bool
    what: str


def _write(name: str, df: pd.DataFrame, target: str, ignore: tuple[str, ...] = (), note: str = "",
           seed: int = 0) -> Table:
    """Stratified 2/3 : 1/3 split (seed ``seed``) written as CSV."""
    rng = np.random.default_rng(seed)
    tr, te = [], []
    for _, rows in df.groupby(target).groups.items():
        rows = rng.permutation(np.asarray(rows))
        k = int(round(len(rows) * 2 / 3))
        tr.append(rows[:k])
        te.append(rows[k:])
    OUT.mkdir(parents=True, exist_ok=True)
    paths = []
    for part, idx in (("train", tr), ("test", te)):
        p = OUT / f"{name}.{part}.csv"
        df.loc[np.sort(np.concatenate(idx))].to_csv(p, index=False)
        paths.append(str(p))
    return Table(paths[0], paths[1], target, ignore, note)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _zero_heavy(seed: int, mu: float, sigma: float, n: int = 12_000) -> pd.DataFrame:
    """The issue's reproduction: a float column, 80 % zeros, the rest lognormal(mu, sigma), the
    strongest predictor of a binary target; with an integer code column -2..8, a small count
    column and ordinary columns (14 predictors: a column's ε is ≈ 0.2/18 ≈ 0.011 at ε = 1)."""
    rng = np.random.default_rng(seed)
    nz = rng.random(n) < 0.2
    amount = np.where(nz, np.round(rng.lognormal(mu, sigma, n), 2), 0.0)
    second = np.where(rng.random(n) < 0.15, np.round(rng.lognormal(mu - 1, sigma, n), 2), 0.0)
    status = rng.choice(np.arange(-2, 9), size=n, p=[.15, .2, .45, .08, .06, .02, .01, .01, .01, .005, .005])
    count = rng.poisson(1.5, n)
    age = np.clip(np.round(rng.normal(40, 12, n)), 18, 90).astype(int)
    z = (-2.2 + 2.2 * nz + 0.5 * np.where(nz, (np.log(np.maximum(amount, 1e-9)) - mu) / sigma, 0)
         + 0.6 * (second > 0) + 0.7 * (status >= 1) + 0.4 * (status >= 2) + 0.25 * (count - 1.5)
         + 0.02 * (age - 40))
    y = np.where(rng.random(n) < _sigmoid(z), "yes", "no")
    df = pd.DataFrame({"age": age, "amount": amount, "second_amount": second, "status": status, "items": count})
    for j in range(5):
        df[f"x{j}"] = np.round(rng.normal(50, 10, n), 1)
    for j in range(4):
        df[f"c{j}"] = rng.choice(list("ABCD"), size=n, p=[.4, .3, .2, .1])
    df["target"] = y
    return df


def zero_heavy() -> Table:
    return _write("zero-heavy", _zero_heavy(0, 3.0, 1.0), "target")


def zero_heavy_wide() -> Table:
    return _write("zero-heavy-wide", _zero_heavy(101, 5.0, 2.0), "target", seed=1)


def codes_id() -> Table:
    """Integer-coded categoricals (a repayment status -2..8, an education code 1..6) and an ID
    column, declared ignored as a user would; 12k rows."""
    rng = np.random.default_rng(7)
    n = 12_000
    pay = rng.choice(np.arange(-2, 9), size=n, p=[.12, .18, .5, .1, .05, .02, .01, .01, .005, .0025, .0025])
    edu = rng.choice(np.arange(1, 7), size=n, p=[.35, .45, .15, .02, .02, .01])
    limit = np.round(rng.lognormal(11, 0.8, n), -3)
    z = -1.6 + 1.4 * (pay >= 1) + 0.8 * (pay >= 2) - 0.4 * (pay == -2) + 0.3 * (edu == 3) - 0.3 * (np.log(limit) - 11)
    y = np.where(rng.random(n) < _sigmoid(z), "1", "0")
    df = pd.DataFrame({"ID": np.arange(1, n + 1), "limit": limit.astype(int), "pay_0": pay, "education": edu,
                       "age": np.clip(np.round(rng.normal(35, 9, n)), 21, 79).astype(int), "default": y})
    return _write("codes-id", df, "default", ignore=("ID",))


def question_marks() -> Table:
    """Adult with '?' in the occupation column of ~30 % of the rows (drawn at random)."""
    rng = np.random.default_rng(3)
    df = pd.read_csv(ADULT, dtype=str, keep_default_na=False, skipinitialspace=True)
    df = df.sample(n=12_000, random_state=3).reset_index(drop=True)
    df.loc[rng.random(len(df)) < 0.3, "occupation"] = "?"
    return _write("question-marks", df, "income", ignore=("fnlwgt",), note="30 % '?' in occupation")


def iso_dates() -> Table:
    """A signup_date column (ISO dates 2019-2023) whose recency predicts the target."""
    rng = np.random.default_rng(11)
    n = 12_000
    day = rng.integers(0, 5 * 365, n)
    dates = (np.datetime64("2019-01-01") + day.astype("timedelta64[D]")).astype(str)
    visits = rng.poisson(3, n)
    plan = rng.choice(["basic", "plus", "pro"], size=n, p=[.6, .3, .1])
    z = -1.0 + 1.5 * (day > 4 * 365) - 0.8 * (day < 365) + 0.2 * (visits - 3) + 0.5 * (plan == "pro")
    y = np.where(rng.random(n) < _sigmoid(z), "churn", "stay")
    t = _write("iso-dates", pd.DataFrame({"signup_date": dates, "visits": visits, "plan": plan, "churn": y}),
               "churn")
    return Table(t.train, t.test, t.target, declare=(("date", ("signup_date",)),),
                 note="signup_date declared a date (--date signup_date)")


def adult_float() -> Table:
    """Adult with capital-gain and capital-loss as floats in thousands (zero-heavy: ~92 % and
    ~95 % zeros; 2174 -> 2.174)."""
    parts = []
    for src in (ADULT, ADULT_TEST):
        df = pd.read_csv(src, dtype=str, keep_default_na=False, skipinitialspace=True)
        df["income"] = df["income"].str.rstrip(".")
        for c in ("capital-gain", "capital-loss"):
            df[c] = (df[c].astype(float) / 1000).map(lambda v: f"{v:g}")
        parts.append(df)
    OUT.mkdir(parents=True, exist_ok=True)
    paths = [OUT / "adult-float.train.csv", OUT / "adult-float.test.csv"]
    for p, df in zip(paths, parts, strict=True):
        df.to_csv(p, index=False)
    return Table(str(paths[0]), str(paths[1]), "income", ("fnlwgt",), "capital-gain/loss in thousands (floats)")


def adult() -> Table:
    """Adult as shipped (the issue's "don't lose Adult": no-schema accuracy ≥ 0.811)."""
    return Table(str(ADULT), str(ADULT_TEST), "income", ("fnlwgt",))


def mixed() -> Table:
    """A mixed table: a signed, zero-heavy balance (70 % zeros, the rest ±lognormal(4, 1.5)),
    a fraction column in [0, 1], an integer code column 0..12 and two categorical columns; 9k rows."""
    rng = np.random.default_rng(2024)
    n = 9_000
    nz = rng.random(n) < 0.3
    sign = np.where(rng.random(n) < 0.35, -1.0, 1.0)
    bal = np.where(nz, np.round(sign * rng.lognormal(4, 1.5, n), 2), 0.0)
    frac = np.round(rng.beta(2, 5, n), 3)
    code = rng.choice(np.arange(0, 13), size=n)
    region = rng.choice(["north", "south", "east", "west"], size=n)
    kind = rng.choice(["a", "b"], size=n, p=[.7, .3])
    z = -1.2 + 1.2 * (bal < 0) + 0.8 * (bal > 200) + 1.5 * (frac - 0.28) + 0.6 * (code >= 10) + 0.4 * (kind == "b")
    y = np.where(rng.random(n) < _sigmoid(z), "bad", "good")
    df = pd.DataFrame({"balance": bal, "fraction": frac, "code": code, "region": region, "kind": kind, "label": y})
    return _write("mixed", df, "label", seed=5)


def bank_ids() -> Table:
    """A churn table as it comes (issue 46): RowNumber and CustomerId (integer ids), a Surname
    that rarely repeats, a credit score ~N(650, 100) clipped to [350, 850], a tenure in months
    0-72, a balance with 36 % zeros, 0/1 flags and a count 1-4, Geography and Gender; 10k rows,
    ~20 % churn. Nothing declared: the ids are left out by their names (or not)."""
    rng = np.random.default_rng(46)
    n = 10_000
    score = np.clip(np.round(rng.normal(650, 100, n)), 350, 850).astype(int)
    tenure = rng.integers(0, 73, n)
    zero = rng.random(n) < 0.36
    balance = np.where(zero, 0.0, np.round(rng.normal(120_000, 30_000, n), 2))
    products = rng.choice([1, 2, 3, 4], size=n, p=[.5, .45, .04, .01])
    card = (rng.random(n) < 0.7).astype(int)
    active = (rng.random(n) < 0.5).astype(int)
    age = np.clip(np.round(rng.normal(39, 10, n)), 18, 92).astype(int)
    salary = np.round(rng.uniform(10, 200_000, n), 2)
    geo = rng.choice(["France", "Germany", "Spain"], size=n, p=[.5, .25, .25])
    gender = rng.choice(["Male", "Female"], size=n, p=[.55, .45])
    z = (-1.8 + 0.12 * (age - 39) - 1.2 * active + 1.0 * (geo == "Germany") + 0.4 * (gender == "Female")
         + 2.5 * (products >= 3) - 0.8 * (products == 2) + 0.6 * ~zero - 0.006 * (score - 650)
         - 0.025 * (tenure - 36))
    y = (rng.random(n) < _sigmoid(z)).astype(int)
    syll = np.array(["ha", "mi", "ro", "ta", "ke", "lin", "son", "ber", "do", "vi", "an", "el"])
    surname = ["".join(rng.choice(syll, size=3)).capitalize() for _ in range(n)]
    df = pd.DataFrame({"RowNumber": np.arange(1, n + 1), "CustomerId": rng.permutation(n) + 15_600_000,
                       "Surname": surname, "CreditScore": score, "Geography": geo, "Gender": gender, "Age": age,
                       "TenureMonths": tenure, "Balance": balance, "NumOfProducts": products, "HasCrCard": card,
                       "IsActiveMember": active, "EstimatedSalary": salary, "Exited": y})
    return _write("bank-ids", df, "Exited", seed=46)


def cardio_outliers() -> Table:
    """A health table with an id and outliers (issue 46's 70k table, 15k rows here): blood
    pressures ~N(128, 17) and ~N(82, 10) with a few entry errors from -150 to 16,020, age in
    days, height, weight, 1-3 codes and 0/1 flags; target cardio 0/1 (~50 %)."""
    rng = np.random.default_rng(70)
    n = 15_000
    age = rng.integers(30 * 365, 65 * 365, n)
    hi = np.round(rng.normal(128, 17, n)).astype(int)
    lo = np.round(rng.normal(82, 10, n)).astype(int)
    bad = rng.random(n) < 0.004
    hi = np.where(bad, rng.choice([-150, -120, 1, 7, 1400, 11500, 14020, 16020], size=n), hi)
    bad2 = rng.random(n) < 0.012
    lo = np.where(bad2, rng.choice([-70, 0, 1000, 1100, 8044, 10000], size=n), lo)
    height = np.clip(np.round(rng.normal(165, 8, n)), 55, 250).astype(int)
    weight = np.round(np.clip(rng.normal(74, 14, n), 10, 200), 1)
    chol = rng.choice([1, 2, 3], size=n, p=[.75, .14, .11])
    gluc = rng.choice([1, 2, 3], size=n, p=[.85, .07, .08])
    smoke = (rng.random(n) < 0.09).astype(int)
    alco = (rng.random(n) < 0.05).astype(int)
    active = (rng.random(n) < 0.8).astype(int)
    true_hi = np.where(bad, 128, hi)
    z = (-0.3 + 0.0003 * (age - 47.5 * 365) + 0.09 * (true_hi - 128) + 0.8 * (chol - 1) + 0.3 * (gluc - 1)
         + 0.02 * (weight - 74) - 0.4 * active)
    y = (rng.random(n) < _sigmoid(z)).astype(int)
    df = pd.DataFrame({"id": rng.permutation(n * 5)[:n], "age": age, "gender": rng.choice([1, 2], size=n),
                       "height": height, "weight": weight, "ap_hi": hi, "ap_lo": lo, "cholesterol": chol,
                       "gluc": gluc, "smoke": smoke, "alco": alco, "active": active, "cardio": y})
    return _write("cardio-outliers", df, "cardio", seed=70)


def rare_nulls() -> Table:
    """5k rows: a rare 0/1 target (~5 % positives; its classes declared public, as a user
    would), 0/1 flags, counts mostly 0, a numeric column 94 % NULL (values ~1e13), 'N/A' in a
    categorical column, an id; the integer flags and the too-few-values rule meet here."""
    rng = np.random.default_rng(5)
    n = 5_000
    visits = rng.poisson(0.3, n)
    calls = rng.poisson(0.05, n)
    promo = (rng.random(n) < 0.06).astype(int)
    member = (rng.random(n) < 0.4).astype(int)
    spend = np.round(rng.lognormal(4, 1, n), 2)
    months = rng.integers(0, 61, n)
    sparse = np.where(rng.random(n) < 0.94, "NULL", np.round(rng.lognormal(30, 0.5, n), -6).astype("int64").astype(str))
    channel = rng.choice(["web", "store", "phone", "N/A"], size=n, p=[.45, .3, .15, .1])
    z = -3.4 + 1.2 * visits + 1.5 * calls + 1.8 * promo + 0.8 * member + 0.6 * (np.log(spend) - 4) - 0.02 * months
    y = (rng.random(n) < _sigmoid(z)).astype(int)
    df = pd.DataFrame({"customer_id": np.arange(100_000, 100_000 + n), "visits": visits, "calls": calls,
                       "promo": promo, "member": member, "spend": spend, "months": months, "ref_number": sparse,
                       "channel": channel, "bought": y})
    t = _write("rare-nulls", df, "bought", seed=5)
    return Table(t.train, t.test, t.target, declare=(("values", (("bought", ("0", "1")),)),),
                 note="the target's classes declared public (--values bought=0,1)")


#: name -> builder; tuned on or held out (never looked at while tuning)
TABLES: dict[str, Entry] = {
    "adult": Entry(adult, True, "sample_data/adult as shipped, fnlwgt declared ignored"),
    "zero-heavy": Entry(zero_heavy, True, "12k rows; float 80 % zeros + lognormal(3, 1) (strongest predictor), "
                        "a second zero-heavy float, codes -2..8, a count, 14 predictors"),
    "codes-id": Entry(codes_id, True, "12k rows; integer codes -2..8 and 1..6, an ID column (declared ignored)"),
    "question-marks": Entry(question_marks, True, "Adult, 12k rows, '?' in 30 % of occupation (its capital-gain "
                            "[-8, 0] chose the zero bonus's side: tuned on since)"),
    "iso-dates": Entry(iso_dates, False, "12k rows; an ISO date column (declared a date in the no-schema run)"),
    "zero-heavy-wide": Entry(zero_heavy_wide, False, "as zero-heavy, lognormal(5, 2), other seeds"),
    "adult-float": Entry(adult_float, False, "Adult; capital-gain/loss as floats in thousands"),
    "mixed": Entry(mixed, False, "9k rows; signed zero-heavy balance, a fraction, codes 0..12"),
    "bank-ids": Entry(bank_ids, True, "10k rows; RowNumber, CustomerId, Surname; score ~N(650, 100) in [350, 850], "
                      "tenure 0-72 months, balance 36 % zeros, 0/1 flags (issue 46; tuned on)"),
    "cardio-outliers": Entry(cardio_outliers, False, "15k rows; an id, blood pressures with entry errors -150 ... "
                             "16,020, 0/1 flags and 1-3 codes (issue 46)"),
    "rare-nulls": Entry(rare_nulls, False, "5k rows; 5 % positive 0/1 target (classes declared), counts mostly 0, "
                        "a 94 %-NULL numeric column, 'N/A', an id (issue 46)"),
}


def _schema_bounds(path: str | None) -> dict[str, tuple[float, float, str | None]]:
    """The numeric bounds of a schema file (for the report)."""
    from dpkit.schema.parse import NumericColumn, load_schema

    if path is None:
        return {}
    s = load_schema(path)
    return {n: (c.lo, c.hi, getattr(c, "time", None)) for n, c in s.columns.items() if isinstance(c, NumericColumn)}


def _show(x: float, time: str | None) -> str:
    """A bound as written: ISO for a date (days since 1970) or timestamp (seconds)."""
    if time == "date":
        return str(np.datetime64("1970-01-01") + np.timedelta64(int(x), "D"))
    if time == "timestamp":
        return str(np.datetime64("1970-01-01T00:00:00") + np.timedelta64(int(x), "s"))
    return f"{x:g}"


def _one(fn: Callable[[], Any], errors: list[str]) -> Any:
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - a bench records what failed and goes on
        errors.append(f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
        if os.environ.get("BENCH_DEBUG"):
            traceback.print_exc()
        return None


#: DomainOptions overrides for the no-schema runs (``--options``: to measure a switch)
OPTIONS: dict[str, Any] = {}


def run_table(name: str, runs: int) -> dict[str, Any]:
    from bench.bench_domain import _draft, _learned, _publish

    t = TABLES[name].build()
    errors: list[str] = []
    res: dict[str, list[Any]] = {"none": [], "draft": [], "raw": []}
    bounds: list[dict[str, tuple[float, float, str | None]]] = []
    draft = _one(lambda: _draft(t.train, t.target, f"{name}-draft", t.ignore), errors)
    decl = {k: (dict(v) if k == "values" else list(v)) for k, v in t.declare}
    for s in range(runs):
        sch = _one(lambda s=s: _learned(t.train, t.target, SHARE, s, f"{name}-learned", ignore=list(t.ignore), **decl,
                                        **({"options": dict(OPTIONS)} if OPTIONS else {})), errors)
        if sch is not None:
            bounds.append(_schema_bounds(sch))
        r = _one(lambda s=s, sch=sch: _publish(sch, s, 1 - SHARE, t.train, t.test, metric=None), errors)
        res["none"].append(r)
        d = _one(lambda s=s: _publish(draft, s, 1.0, t.train, t.test, metric=None), errors) if draft else None
        res["draft"].append(d)
        res["raw"].append(None if d is None else {"accuracy": d["baseline_accuracy"], "roc_auc": d["baseline_roc_auc"]})
    exact = _exact(t.train, bounds)
    rows = int(pd.read_csv(t.train, dtype=str, sep=None, engine="python", usecols=[t.target]).shape[0])
    return {"results": res, "bounds": bounds, "errors": errors, "draft_bounds": _schema_bounds(draft),
            "spread": {c: (p1, p99) for c, (p1, p99, _) in exact.items()}, "exact": exact, "rows": rows}


def _spread(train: str, bounds: list[dict[str, tuple[float, float, str | None]]]) -> dict[str, tuple[float, float]]:
    """Each learned column's exact 1st-99th percentile range (NOT private: for the report only)."""
    return {c: (p1, p99) for c, (p1, p99, _) in _exact(train, bounds).items()}


def _exact(train: str, bounds: list[dict[str, tuple[float, float, str | None]]]) -> dict[str, tuple[float, float, int]]:
    """Each learned column's exact 1st and 99th percentiles and its number of negative values
    (NOT private: for the report only)."""
    from dpkit.schema.dates import parse_array

    df = pd.read_csv(train, dtype=str, keep_default_na=False, skipinitialspace=True, sep=None, engine="python")
    out: dict[str, tuple[float, float, int]] = {}
    for c, kind in {c: k for b in bounds for c, (_, _, k) in b.items()}.items():
        if c not in df:
            continue
        v = (parse_array(df[c], kind) if kind else pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float))
        v = v[np.isfinite(v)]
        if v.size:
            out[c] = (float(np.percentile(v, 1)), float(np.percentile(v, 99)), int(np.count_nonzero(v < 0)))
    return out


def clipped_signs(d: dict[str, Any]) -> list[str]:
    """Per column holding at least 1 % negative values (exact, for the report only): in how many
    runs its learned lower bound was >= 0, every negative value clipped onto the other sign."""
    out = []
    for c, (_, _, neg) in d["exact"].items():
        los = [b[c][0] for b in d["bounds"] if c in b and b[c][2] is None]
        if los and neg >= 0.01 * d["rows"]:
            out.append(f"{c} ({neg} negative values) in {sum(lo >= 0 for lo in los)} of {len(los)} runs")
    return out


def looseness(d: dict[str, Any]) -> tuple[float, float] | None:
    """Median over a table's learned columns and runs of (hi - lo) / (p99 - p1): how loose the
    learned bounds are against the bulk of the data (1 = the 1st-99th percentile range)."""
    ratios = [(hi - lo) / (d["spread"][c][1] - d["spread"][c][0]) for b in d["bounds"] for c, (lo, hi, _) in b.items()
              if c in d["spread"] and d["spread"][c][1] > d["spread"][c][0]]
    return (statistics.median(ratios), float(np.percentile(ratios, 90))) if ratios else None


def _stat(rs: list[Any], key: str) -> str:
    got = [r[key] for r in rs if r is not None and r.get(key) is not None and not np.isnan(r[key])]
    if not got:
        return "—"
    se = statistics.stdev(got) / len(got) ** 0.5 if len(got) > 1 else 0.0
    missing = len(rs) - len(got)
    return f"{statistics.mean(got):.3f} ± {se:.3f}" + (f" ({missing} failed)" if missing else "")


def _loose(d: dict[str, Any]) -> str:
    x = looseness(d)
    return "—" if x is None else f"{x[0]:.2f} ({x[1]:.1f})"


def _fmt_bounds(bs: list[dict[str, tuple[float, float, str | None]]]) -> str:
    cols: dict[str, list[str]] = {}
    for b in bs:
        for c, (lo, hi, kind) in b.items():
            cols.setdefault(c, []).append(f"[{_show(lo, kind)}, {_show(hi, kind)}]")
    return "; ".join(f"{c} {', '.join(v)}" for c, v in cols.items())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--out", default=str(DOC))
    ap.add_argument("--options", default="{}", help="DomainOptions overrides as JSON, e.g. '{\"bounds_reward\": false}'")
    args = ap.parse_args(argv)
    import json

    OPTIONS.update(json.loads(args.options))
    sys.path.insert(0, str(ROOT))
    from bench.bench_domain import OUT as DOMAIN_OUT

    DOMAIN_OUT.mkdir(parents=True, exist_ok=True)  # where bench_domain's helpers write the schemas
    warnings.simplefilter("ignore")
    names = [n for n in args.tables.split(",") if n]
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        ap.error(f"unknown table(s) {', '.join(unknown)}; known: {', '.join(TABLES)}")
    t0 = time.time()
    load = os.getloadavg()
    done = {n: run_table(n, args.runs) for n in names}
    minutes = (time.time() - t0) / 60
    lines = [
        "# The no-schema front door on tables as they come (issue 36)",
        "",
        f"Written by `python -m bench.bench_frontdoor --runs {args.runs}` ({minutes:.0f} min; load average "
        f"{load[0]:.1f} at the start, on the shared 2-core machine). Protocol: bench/bench_frontdoor.py — "
        f"ε = 1 in total, δ = 1e-6; no schema = {SHARE:g}·ε for the domain (learned under DP) and the rest for "
        "publish; reviewed draft = `taxonomy infer` without --epsilon (NOT private), publish at ε = 1; raw = the "
        "same tree on the raw training split. `evaluate classify`'s default entropy tree on the release, scored "
        "on the generalized test split; ROC AUC of the rarer class. Mean ± standard error over the runs.",
        "",
        "| table | set | no schema AUC | reviewed draft AUC | raw AUC | no schema acc. | draft acc. | raw acc. | "
        "looseness¹ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, d in done.items():
        r = d["results"]
        lines.append(f"| {n} | {'tuned on' if TABLES[n].tuned else 'held out'} | {_stat(r['none'], 'roc_auc')} | "
                     f"{_stat(r['draft'], 'roc_auc')} | {_stat(r['raw'], 'roc_auc')} | {_stat(r['none'], 'accuracy')} | "
                     f"{_stat(r['draft'], 'accuracy')} | {_stat(r['raw'], 'accuracy')} | "
                     f"{_loose(d)} |")
    lines += ["", "¹ Median over the table's learned numeric and date columns and the runs of the learned range "
              "(hi − lo) over the exact 1st–99th percentile range of the training split, and its 90th percentile in "
              "brackets (1: the bulk exactly; "
              "the bulk is read from the exact data for this report only).", "", "## Tables", ""]
    lines += [f"- **{n}** ({'tuned on' if TABLES[n].tuned else 'held out'}): {TABLES[n].what}" for n in names]
    tiny = sum(1 for d in done.values() for b in d["bounds"] for lo, hi, kind in b.values() if kind is None
               for x in (lo, hi) if 0 < abs(x) < 1e-6)
    total = sum(2 for d in done.values() for b in d["bounds"] for *_, kind in b.values() if kind is None)
    signs = [f"{n}: {x}" for n, d in done.items() for x in clipped_signs(d)]
    lines += ["", f"Learned numeric bounds of magnitude below 1e-6 other than 0: {tiny} of {total} (issue 36's target: none).",
              "", "Columns with negative values (≥ 1 % of the rows; exact, for this report only) whose learned lower "
              "bound was ≥ 0 — their negative values clipped onto 0 or above: " + ("; ".join(signs) or "none") + ".",
              "", "## Learned numeric bounds (no schema, one per run) and the draft's", ""]
    for n, d in done.items():
        lines.append(f"- **{n}**: {_fmt_bounds(d['bounds']) or '—'}")
        lines.append(f"  - draft: {_fmt_bounds([d['draft_bounds']]) or '—'}")
    errs = [(n, e) for n, d in done.items() for e in dict.fromkeys(d["errors"])]
    if errs:
        lines += ["", "## Failures (counted above, not scored)", ""]
        lines += [f"- {n}: {e}" for n, e in errs]
    lines.append("")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
