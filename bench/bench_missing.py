"""Missing values kept (issue 36 item 3) measured: a no-schema ``publish`` of tables with many
missing values, the test split generalized, an entropy tree trained on the release and scored
on every test row -> docs/results/missing.md.

Tables (built here from sample_data/adult, train and test split alike, seed 0; our own
stand-ins for the issue's held-out missing-heavy table, which we do not have):

* ``occupation-30``: ``?`` in ``occupation`` for 30 % of the rows, at random;
* ``age-30``: ``?`` in ``age`` (numeric) for 30 % of the rows, at random;
* ``hours-10``: an empty value in ``hours-per-week`` (numeric) for 10 % of the rows (and Adult's
  own ``?`` written empty, so that the empty field is the missing token a no-schema run detects);
* ``adult``: Adult as it is (``?`` in workclass, occupation and native-country: 7 % of the rows).

Each run: ``dpkit.publish`` without a schema at ε = 1, δ = 1e-6 (seed s), ``generalize`` of the
test split with the release, :func:`dpkit.evaluate_classifier` (entropy tree). Reported: the
test rows generalized and scored (of all), accuracy over the rows scored, ROC AUC, and the
training rows the release counts (its noisy total Ñ against the file's rows). ``--code`` runs
another checkout (e.g. 0.4's, which drops such rows) on the same tables.

Run: ``python -m bench.bench_missing [--runs 5] [--code /path/to/checkout]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "missing"
ADULT = {"train": ROOT / "sample_data/adult/train.csv", "test": ROOT / "sample_data/adult/test.csv"}
#: table name -> (column, token, share of rows)
TABLES = {"occupation-30": ("occupation", "?", 0.3), "age-30": ("age", "?", 0.3),
          "hours-10": ("hours-per-week", "", 0.1), "adult": ("age", "?", 0.0)}


def build(name: str) -> dict[str, str]:
    """The table's train and test files (built once, seed 0)."""
    import numpy as np
    import pandas as pd

    column, token, share = TABLES[name]
    rng = np.random.default_rng(0)
    out = {}
    for split, path in ADULT.items():
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        if token == "":  # Adult's own '?' written empty too, so that '' is the one missing token
            df = df.replace("?", "")
        df.loc[rng.random(len(df)) < share, column] = token
        target = OUT / f"{name}-{split}.csv"
        OUT.mkdir(parents=True, exist_ok=True)
        df.to_csv(target, index=False)
        out[split] = str(target)
    return out


def one_run(files: dict[str, str], seed: int, tag: str) -> dict[str, Any]:
    """publish (no schema) -> generalize -> evaluate, in this process's dpkit."""
    import dpkit
    from dpkit.api.evaluate import evaluate_classifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel_path = OUT / f"{tag}-{seed}.csv"
        rel = dpkit.publish(files["train"], target="income", epsilon=1.0, delta=1e-6, random_state=seed,
                            ignore=["fnlwgt"], output=str(rel_path))
        gen = dpkit.generalize(files["test"], rel)
        scores = evaluate_classifier(gen, target="income", train=str(rel_path))
    n_test = sum(1 for _ in open(files["test"])) - 1
    n_train = sum(1 for _ in open(files["train"])) - 1
    return {"scored": int(sum(map(sum, scores["confusion_matrix"]))), "generalized": len(gen), "test_rows": n_test,
            "accuracy": scores["accuracy"], "roc_auc": scores.get("roc_auc"),
            "noisy_records": rel.report["release"].get("depth", {}).get("noisy_records"), "train_rows": n_train}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--first", type=int, default=0, help="the first seed")
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--code", help="run another checkout's dpkit (its path) on the same tables")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:  # one run in this process (for --code: PYTHONPATH points at the other checkout)
        import dpkit

        name, seed = args.worker.split(":")
        print("dpkit from", dpkit.__file__, file=sys.stderr)
        print(json.dumps(one_run(build(name), int(seed), f"{name}-other")))
        return
    results: dict[str, list[dict[str, Any]]] = {}
    for name in args.tables.split(","):
        files = build(name)
        for seed in range(args.first, args.first + args.runs):
            if args.code:
                # run as a script from OUT: nothing of this checkout comes before the other one's dpkit
                env = {**os.environ, "PYTHONPATH": args.code}
                got = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", f"{name}:{seed}"],
                                     cwd=OUT, env=env, capture_output=True, text=True, check=True)
                r = json.loads(got.stdout.strip().splitlines()[-1])
            else:
                r = one_run(files, seed, name)
            results.setdefault(name, []).append(r)
            print(name, seed, r, flush=True)
    for name, rs in results.items():
        acc = [r["accuracy"] for r in rs]
        auc = [r["roc_auc"] for r in rs if r["roc_auc"] is not None]
        sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
        print(f"| {name} | {rs[0]['scored']} / {rs[0]['test_rows']} | {statistics.mean(acc):.3f} ± {sd:.3f} "
              f"| {min(acc):.3f}–{max(acc):.3f} | {statistics.mean(auc):.3f} | "
              f"{statistics.mean(r['noisy_records'] or 0 for r in rs):.0f} / {rs[0]['train_rows']} |")


if __name__ == "__main__":
    main()
