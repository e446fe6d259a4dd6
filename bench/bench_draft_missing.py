"""A reviewed draft on a missing-heavy table (issue 43's case) -> docs/results/missing.md.

The table is bench_forest_missing's ``missing-heavy`` (mushroom-like, 8,124 rows, ``?`` in a
third of ``root`` and ``stem-height``; train 5,416 / test 2,708; our stand-in for the issue's
held-out table). ``dpkit taxonomy infer`` drafts a schema from the training file; the review is
the least a person does (the ``draft: true`` line removed, every value kept); then each run:
``dpkit.publish`` with that schema at ε = 1 (a secret key per run), ``generalize`` of the test
file, :func:`dpkit.evaluate_classifier` (entropy tree) on every test row.

Run: ``python -m bench.bench_draft_missing [--runs 10]``.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from bench.bench_forest_missing import build


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()

    import dpkit

    files = build("missing-heavy")
    with tempfile.TemporaryDirectory() as tmp:
        draft, reviewed = Path(tmp) / "draft.yaml", Path(tmp) / "reviewed.yaml"
        subprocess.run([sys.executable, "-m", "dpkit", "-q", "taxonomy", "infer", files["train"], "--target",
                        "edible", "-o", str(draft)], check=True)
        reviewed.write_text(re.sub(r"(?m)^draft: true.*\n", "", draft.read_text(encoding="utf-8")), encoding="utf-8")
        accuracy, scored = [], []
        for run in range(args.runs):
            key = f"0x{run:02x}9c1e4b7a2f6d8e0315c7a9b4d2e6f8"  # one secret key per run, fixed for the rerun
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                release = dpkit.publish(files["train"], schema=reviewed, epsilon=1.0, random_state=key)
                test = release.generalize(files["test"])
                scores = dpkit.evaluate_classifier(test, target="edible", train=release.table.astype(str),
                                                   schema=reviewed)
            accuracy.append(scores["accuracy"])
            scored.append(len(test))
            print(f"run {run}: {len(test)} test rows scored, accuracy {scores['accuracy']:.4f}", flush=True)
    print(f"reviewed draft, missing-heavy, ε = 1, {args.runs} runs: accuracy {statistics.mean(accuracy):.3f} ± "
          f"{statistics.stdev(accuracy):.3f} (min {min(accuracy):.3f}, max {max(accuracy):.3f}); "
          f"test rows scored {min(scored)}–{max(scored)} of 2,708")


if __name__ == "__main__":
    main()
