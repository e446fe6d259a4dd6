"""Declared 0/1 flags in publish (issue 46): a schema a person writes, ``bounds: [0, 1], integer:
true``, released before as one cell and now split at the upper bound -> docs/results/bounds-ids.md.

Tables (seeded; files in bench/out/flags/ and bench/out/affordable/):

* ``flags``: 30,000 rows (20,000 train), a 0/1 flag that moves the class by 35 points, a 0–3 count
  and an age; the schema declares every bound (``[0, 1]``, ``[0, 3]``, ``[0, 100]``);
* ``stroke`` and ``bank`` of bench_affordable: their reviewed draft (``taxonomy infer``, the
  ``draft: true`` line removed) with the 0/1 columns' bounds written ``[0, 1]``.

Each run: ``dpkit.publish`` with the schema at ε = 1 (one secret key per run), ``generalize`` of
the test split, :func:`dpkit.evaluate_classifier` (entropy tree): ROC AUC. The "before" figures
come from the same script run on the previous commit (``PYTHONPATH=<checkout>``).

Run: ``python -m bench.bench_flags [--runs 10] [--tables flags,stroke,bank]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "flags"
#: table -> (target, the 0/1 columns whose bounds a person writes [0, 1])
DRAFTED = {"stroke": ("stroke", ["hypertension", "heart_disease"]), "bank": ("Exited", ["HasCrCard", "IsActiveMember"])}


def _flags_table() -> tuple[str, str, str, str]:
    import numpy as np
    import pandas as pd

    OUT.mkdir(parents=True, exist_ok=True)
    g = np.random.default_rng(1)
    n = 30000
    flag, cnt, age = g.integers(0, 2, n), g.integers(0, 4, n), g.integers(18, 90, n)
    y = np.where(g.random(n) < 0.1 + 0.35 * flag + 0.1 * (cnt == 3) + 0.2 * (age > 60), "yes", "no")
    df = pd.DataFrame({"flag": flag, "cnt": cnt, "age": age, "y": y})
    train, test, schema = OUT / "flags.train.csv", OUT / "flags.test.csv", OUT / "flags.yaml"
    df.iloc[:20000].to_csv(train, index=False)
    df.iloc[20000:].to_csv(test, index=False)
    schema.write_text("target: y\ncolumns:\n  flag: {type: numeric, bounds: [0, 1], integer: true}\n"
                      "  cnt: {type: numeric, bounds: [0, 3], integer: true}\n"
                      "  age: {type: numeric, bounds: [0, 100], integer: true}\n"
                      "  y: {type: categorical, values: ['no', 'yes']}\n", encoding="utf-8")
    return str(train), str(test), str(schema), "y"


def _drafted(name: str) -> tuple[str, str, str, str]:
    from bench.bench_affordable import build

    target, flags = DRAFTED[name]
    t = build(name)
    OUT.mkdir(parents=True, exist_ok=True)
    draft = OUT / f"{name}.draft.yaml"
    subprocess.run([sys.executable, "-m", "dpkit", "-q", "taxonomy", "infer", t.train, "--target", target,
                    "-o", str(draft)], check=True)
    text = re.sub(r"(?m)^draft: true.*\n", "", draft.read_text(encoding="utf-8"))
    for c in flags:
        text = re.sub(rf"(?m)^(\s*{c}:\s*\{{type: numeric, bounds: )\[[^\]]*\]", r"\g<1>[0, 1]", text)
    schema = OUT / f"{name}.reviewed.yaml"
    schema.write_text(text, encoding="utf-8")
    return t.train, t.test, str(schema), target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--tables", default="flags,stroke,bank")
    args = ap.parse_args()
    import dpkit

    print(f"dpkit from {Path(dpkit.__file__).parent}")
    for name in args.tables.split(","):
        train, test, schema, target = _flags_table() if name == "flags" else _drafted(name)
        auc = []
        for run in range(args.runs):
            key = f"0x{run:02x}7a2f6d8e0315c7a9b4d2e6f80139c1e4"  # one secret key per run, fixed for the rerun
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                release = dpkit.publish(train, schema=schema, epsilon=1.0, random_state=key)
                scores = dpkit.evaluate_classifier(release.generalize(test), target=target,
                                                   train=release.table.astype(str), schema=schema)
            auc.append(scores["roc_auc"])
        print(f"{name}: ROC AUC {statistics.mean(auc):.3f} ± {statistics.stdev(auc):.3f} "
              f"[{min(auc):.3f}–{max(auc):.3f}], {args.runs} runs, ε = 1", flush=True)


if __name__ == "__main__":
    main()
