"""Date columns (issue 36 item 4) measured: publish's ROC AUC on tables whose strongest
predictor is a date -> docs/results/dates.md.

Tables: bench/tables_dates.py's ``signup`` (churn rising with the signup year, 2019–2024) and
``events`` (held out: conversion changing by month inside 2023); 20,000 training rows, 5,000
test rows. Protocol: the sweep's publish task (:func:`dpkit.sweep.tasks.publish.run_experiment`:
release the training split, map the test split onto the released cut, entropy tree on the
release, ROC AUC on the mapped test split), ε = 1 in total, release seed s. Variants:

* hand-written schema, the date ``{type: date, bounds: [...]}`` (the table's public range);
* the same schema with the date declared ``ignore`` (what a release without dates keeps);
* no schema, ``date=[...]`` declared: 0.2 of ε learns the domain (schema seed 1000 + s,
  δ = 1e-6, as a run without a schema does) and the release spends the other 0.8;
* no schema, the date not declared: the private metadata step (docs/domain-reference.md, "Types and
  missing tokens") establishes the column's type;
* no schema, the date declared categorical (``categorical=[...]``): what every run without a
  schema did before dates — every day a value, none clears the threshold, the column left out;
* raw: the same tree on the raw training data (not private; ``baseline_roc_auc``).

Mean ± standard error over the runs. Run: ``python -m bench.bench_dates [--runs 5]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

from bench.tables_dates import OUT, TABLES

DELTA = 1e-6
SHARE = 0.2


def _learned(t: dict[str, Any], seed: int, tag: str, **kw: Any) -> str | None:
    """A schema learned as a run without a schema learns it (share·ε, empty="ignore")."""
    from dpkit.api.domain import learn_schema, read_strings
    from dpkit.domain.discover import DomainOptions
    from dpkit.errors import DataError
    from dpkit.privacy import Accountant, make_rng

    df, src = read_strings(t["train"])
    try:
        learned = learn_schema(df, target=t["target"], epsilon=SHARE, delta=DELTA, rng=make_rng(1000 + seed),
                               accountant=Accountant(SHARE, delta=DELTA), options=DomainOptions(empty="ignore"),
                               source=src, **kw)
    except DataError:
        return None
    path = OUT / f"{t['name']}-{tag}-{seed}.yaml"
    path.write_text(learned.yaml(source=src, epsilon=SHARE, delta=DELTA))
    return str(path)


def _publish(t: dict[str, Any], schema: str | None, seed: int, eps: float) -> dict[str, float] | None:
    from dpkit.sweep.tasks.publish import run_experiment

    if schema is None:
        return None
    return run_experiment({"data": t["train"], "test": t["test"], "schema": schema, "epsilon": eps}, seed)


def _without_date(t: dict[str, Any]) -> str:
    path = OUT / f"{t['name']}-no-date.yaml"
    text = Path(t["schema"]).read_text()
    path.write_text(re.sub(r"\{type: date, bounds: \[[^]]*\]\}", "{type: ignore}", text))
    return str(path)


def _summary(xs: list[float]) -> str:
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{xs[0]:.3f}"
    return f"{statistics.fmean(xs):.3f} ± {statistics.stdev(xs) / len(xs) ** 0.5:.3f}"


def measure(t: dict[str, Any], runs: int) -> list[str]:
    """The markdown rows of one table."""
    variants: dict[str, list[dict[str, float] | None]] = {k: [] for k in ("schema", "no-date", "learned",
                                                                          "detected", "before")}
    bounds: list[str] = []
    date = t["date"][0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(runs):
            variants["schema"].append(_publish(t, t["schema"], s, 1.0))
            variants["no-date"].append(_publish(t, _without_date(t), s, 1.0))
            learned = _learned(t, s, "learned", date=t["date"])
            if learned:
                line = next(ln for ln in Path(learned).read_text().splitlines() if ln.strip().startswith(date + ":"))
                bounds.append(line.split("bounds: ")[1].split("]")[0].replace("'", "") + "]")
            variants["learned"].append(_publish(t, learned, s, 1.0 - SHARE))
            variants["detected"].append(_publish(t, _learned(t, s, "detected"), s, 1.0 - SHARE))
            variants["before"].append(_publish(t, _learned(t, s, "before", categorical=t["date"]), s, 1.0 - SHARE))
    names = {"schema": f"hand-written schema, `{date}: {{type: date, bounds: {t['bounds']}}}`",
             "no-date": f"hand-written schema, `{date}` declared `ignore`",
             "learned": f"no schema, `date=[\"{date}\"]`",
             "detected": "no schema, not declared (the private metadata step decides the type)",
             "before": "no schema, declared categorical (every day a value, left out: before dates)"}
    rows = []
    for key, label in names.items():
        got = [r for r in variants[key] if r is not None]
        refused = len(variants[key]) - len(got)
        rows.append(f"| {t['name']} | {label}{f' ({refused} refused)' if refused else ''} | "
                    f"{_summary([r['roc_auc'] for r in got])} | {_summary([r['accuracy'] for r in got])} |")
    base = [r for r in variants["schema"] if r is not None][:1]
    rows.append(f"| {t['name']} | raw training data (not private) | {_summary([r['baseline_roc_auc'] for r in base])} | "
                f"{_summary([r['baseline_accuracy'] for r in base])} |")
    rows.append(f"| {t['name']} | learned bounds of `{date}` | {', '.join(bounds)} | |")
    return rows


def main(argv: list[str] | None = None) -> None:
    """Print the markdown table (copied, with its reading, into docs/results/dates.md)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--tables", default=",".join(TABLES))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    lines = ["| table | variant | ROC AUC | accuracy |", "|---|---|---|---|"]
    for name in args.tables.split(","):
        lines += measure(TABLES[name](args.rows), args.runs)
    print(f"`python -m bench.bench_dates --runs {args.runs} --rows {args.rows}` "
          f"({time.perf_counter() - t0:.0f} s; ε = 1, δ = 1e-6 for the learned schemas)\n")
    print("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    main()
