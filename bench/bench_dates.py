"""Date columns (issue 36 item 4) measured: publish's ROC AUC on a table whose strongest
predictor is a date -> docs/results/dates.md.

Table: bench/tables_dates.py's ``signup`` (20,000 training rows, 5,000 test rows; churn rises
with the signup year). Protocol: the sweep's publish task (:func:`dpkit.sweep.tasks.publish.
run_experiment`: release the training split, map the test split onto the released cut, entropy
tree on the release, ROC AUC on the mapped test split), ε = 1 in total, release seed s. Variants:

* hand-written schema, ``signup_date: {type: date, bounds: [2019-01-01, 2025-01-01]}``;
* the same schema with the date declared ``ignore`` (what a release without dates keeps);
* no schema, ``date=["signup_date"]`` declared: 0.2 of ε learns the domain (schema seed
  1000 + s, δ = 1e-6, as a run without a schema does) and the release spends the other 0.8;
* no schema, the date not declared (the column is read as a category: no date clears the
  threshold and it is left out — the behaviour before dates);
* raw: the same tree on the raw training data (not private; ``baseline_roc_auc``).

Mean ± standard error over the runs. Run: ``python -m bench.bench_dates [--runs 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

from bench.tables_dates import OUT, build

ROOT = Path(__file__).resolve().parents[1]
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
    path = OUT / f"{tag}-{seed}.yaml"
    path.write_text(learned.yaml(source=src, epsilon=SHARE, delta=DELTA))
    return str(path)


def _publish(t: dict[str, Any], schema: str | None, seed: int, eps: float) -> dict[str, float] | None:
    from dpkit.sweep.tasks.publish import run_experiment

    if schema is None:
        return None
    return run_experiment({"data": t["train"], "test": t["test"], "schema": schema, "epsilon": eps}, seed)


def _without_date(t: dict[str, Any]) -> str:
    path = OUT / "signup-no-date.yaml"
    path.write_text(Path(t["schema"]).read_text().replace(
        "signup_date: {type: date, bounds: [2019-01-01, 2025-01-01]}", "signup_date: {type: ignore}"))
    return str(path)


def _summary(xs: list[float]) -> str:
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{xs[0]:.3f}"
    return f"{statistics.fmean(xs):.3f} ± {statistics.stdev(xs) / len(xs) ** 0.5:.3f}"


def main(argv: list[str] | None = None) -> None:
    """Print the markdown table (copied, with its reading, into docs/results/dates.md)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rows", type=int, default=20000)
    args = ap.parse_args(argv)
    t = build(args.rows)
    variants: dict[str, list[dict[str, float]]] = {k: [] for k in ("schema", "no-date", "learned", "learned-plain")}
    bounds: list[str] = []
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(args.runs):
            variants["schema"].append(_publish(t, t["schema"], s, 1.0))
            variants["no-date"].append(_publish(t, _without_date(t), s, 1.0))
            learned = _learned(t, s, "learned", date=t["date"])
            if learned:
                line = next(ln for ln in Path(learned).read_text().splitlines() if ln.strip().startswith("signup_date"))
                bounds.append(line.split("bounds: ")[1].split("]")[0] + "]")
            variants["learned"].append(_publish(t, learned, s, 1.0 - SHARE))
            variants["learned-plain"].append(_publish(t, _learned(t, s, "plain"), s, 1.0 - SHARE))
    secs = time.perf_counter() - t0
    names = {"schema": "hand-written schema with `type: date`, ε = 1",
             "no-date": "hand-written schema, the date declared `ignore`, ε = 1",
             "learned": "no schema, `date=[\"signup_date\"]` (0.2 of ε learns the domain)",
             "learned-plain": "no schema, the date not declared (learned as a date by the metadata step)"}
    lines = [
        "# Date columns: publish on a table whose strongest predictor is a date",
        "",
        f"`python -m bench.bench_dates --runs {args.runs}` (bench/bench_dates.py; {secs:.0f} s). Table: "
        f"bench/tables_dates.py's `signup` ({args.rows:,} training rows, 5,000 test rows, churn rising with the",
        "signup year, 2019–2024). Protocol: the sweep's publish task (release, generalize the test split onto the",
        "released cut, entropy tree on the release); ε = 1 in total, δ = 1e-6 for the learned schemas; mean ± standard",
        f"error over {args.runs} runs (release seed s, schema seed 1000 + s).",
        "",
        "| variant | ROC AUC | accuracy |",
        "|---|---|---|",
    ]
    for key, label in names.items():
        got = [r for r in variants[key] if r is not None]
        refused = len(variants[key]) - len(got)
        lines.append(f"| {label}{f' ({refused} refused)' if refused else ''} | "
                     f"{_summary([r['roc_auc'] for r in got])} | {_summary([r['accuracy'] for r in got])} |")
    base = [r for r in variants["schema"] if r is not None]
    lines.append(f"| raw training data (not private) | {_summary([r['baseline_roc_auc'] for r in base][:1])} | "
                 f"{_summary([r['baseline_accuracy'] for r in base][:1])} |")
    lines += ["", "Learned bounds of `signup_date` (the data spans 2019-01-01 … 2024-12-31): "
              + ", ".join(f"`{b}`" for b in bounds) + "."]
    print("\n".join(lines))


if __name__ == "__main__":  # pragma: no cover
    main()
