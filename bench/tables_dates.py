"""Synthetic tables with a date column that carries signal (issue 36 item 4), for benchmarks.

``signup`` — a subscription table: ``signup_date`` (ISO dates over 2019-01-01 … 2024-12-31,
uniform), ``plan`` (basic / pro / team), ``age`` (integer 18–79), ``churn`` (no / yes). The
churn rate rises with the signup year (a log-odds step of 0.6 a year: ~12 % of 2019's
customers churn, ~75 % of 2024's), a little with the plan and not at all with age, so the date
is the strongest predictor and a release that drops it (what a run without a schema did before
dates: the column read as a category, no date above the threshold) loses most of the signal.
A tenth of a percent of the dates are written ``n/a`` (a missing token) so the missing path is
exercised too.

``events`` — a held-out shape (nothing was chosen on it): ``event_date`` over eight months of
one year (2023-03-01 … 2023-10-31), ``channel`` (web / app / store), ``converted`` (no / yes)
whose rate changes by month (log-odds −1.5 in March rising by 0.35 a month), so the release has
to resolve months inside a year, not years.

Each table is written once per (n, seed) as train/test CSVs plus a hand-written schema whose
bounds are the public range of the product's life (2019–2025) — what its owner knows without
looking at the data. Use :func:`build` (a dict like bench_imbalanced's tables: ``train``,
``test``, ``schema``, ``target``, ``positive``, ``date``) from other benches.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "dates"

SCHEMA = """\
# signup: hand-written (public) schema: the product launched in 2019; dates are ISO
target: churn
missing: n/a
missing_policy: drop
columns:
  signup_date: {type: date, bounds: [2019-01-01, 2025-01-01]}
  plan: {type: categorical, values: [basic, pro, team]}
  age: {type: numeric, bounds: [18, 80], integer: true}
  churn: {type: categorical, values: ["no", "yes"]}
"""


def rows(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` CSV lines of the signup table (no header)."""
    first = dt.date(2019, 1, 1).toordinal()
    span = dt.date(2025, 1, 1).toordinal() - first
    days = rng.integers(0, span, n)
    plans = rng.choice(["basic", "pro", "team"], n, p=[0.6, 0.3, 0.1])
    ages = rng.integers(18, 80, n)
    out = []
    for d, plan, age in zip(days, plans, ages, strict=True):
        date = dt.date.fromordinal(first + int(d))
        logit = -2.0 + 0.6 * (date.year - 2019) + {"basic": 0.3, "pro": 0.0, "team": -0.5}[str(plan)]
        churn = "yes" if rng.random() < 1 / (1 + math.exp(-logit)) else "no"
        text = "n/a" if rng.random() < 0.001 else date.isoformat()
        out.append(f"{text},{plan},{age},{churn}")
    return out


def build(n: int = 20000, seed: int = 0, n_test: int = 5000) -> dict[str, Any]:
    """The signup table's train/test CSVs and schema under bench/out/dates (written once)."""
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"signup-{n}-{seed}"
    train, test, schema = (OUT / f"{tag}-train.csv", OUT / f"{tag}-test.csv", OUT / "signup.yaml")
    if not train.exists() or not test.exists():
        rng = np.random.default_rng(seed)
        header = "signup_date,plan,age,churn"
        train.write_text("\n".join([header, *rows(n, rng)]) + "\n")
        test.write_text("\n".join([header, *rows(n_test, rng)]) + "\n")
    schema.write_text(SCHEMA)
    return {"name": "signup", "train": str(train), "test": str(test), "schema": str(schema), "target": "churn",
            "positive": "yes", "date": ["signup_date"], "bounds": "[2019-01-01, 2025-01-01]"}


EVENTS_SCHEMA = """\
# events: hand-written (public) schema: the campaign ran in 2023
target: converted
columns:
  event_date: {type: date, bounds: [2023-01-01, 2024-01-01]}
  channel: {type: categorical, values: [app, store, web]}
  converted: {type: categorical, values: ["no", "yes"]}
"""


def event_rows(n: int, rng: np.random.Generator) -> list[str]:
    """``n`` CSV lines of the events table (no header)."""
    first = dt.date(2023, 3, 1).toordinal()
    span = dt.date(2023, 11, 1).toordinal() - first
    out = []
    for d, ch in zip(rng.integers(0, span, n), rng.choice(["web", "app", "store"], n, p=[0.5, 0.3, 0.2]),
                     strict=True):
        date = dt.date.fromordinal(first + int(d))
        logit = -1.5 + 0.35 * (date.month - 3) + {"web": 0.0, "app": 0.3, "store": -0.3}[str(ch)]
        conv = "yes" if rng.random() < 1 / (1 + math.exp(-logit)) else "no"
        out.append(f"{date.isoformat()},{ch},{conv}")
    return out


def build_events(n: int = 20000, seed: int = 0, n_test: int = 5000) -> dict[str, Any]:
    """The events table's train/test CSVs and schema under bench/out/dates (written once)."""
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"events-{n}-{seed}"
    train, test, schema = (OUT / f"{tag}-train.csv", OUT / f"{tag}-test.csv", OUT / "events.yaml")
    if not train.exists() or not test.exists():
        rng = np.random.default_rng(seed)
        header = "event_date,channel,converted"
        train.write_text("\n".join([header, *event_rows(n, rng)]) + "\n")
        test.write_text("\n".join([header, *event_rows(n_test, rng)]) + "\n")
    schema.write_text(EVENTS_SCHEMA)
    return {"name": "events", "train": str(train), "test": str(test), "schema": str(schema),
            "target": "converted", "positive": "yes", "date": ["event_date"], "bounds": "[2023-01-01, 2024-01-01]"}


#: every table of this module by name (bench/bench_dates.py measures them all)
TABLES = {"signup": build, "events": build_events}


if __name__ == "__main__":  # pragma: no cover
    print({name: make() for name, make in TABLES.items()})
