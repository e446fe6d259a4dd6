"""Forest benchmark: dpkit's DiffPRFs vs diffprivlib's RandomForestClassifier vs scikit-learn.

Adult, original split (train.csv / test.csv, rows with '?' dropped by the schema: 30,162 /
15,060 records), 25 trees of depth 5, ε = 1 and 0.25, ≥ 5 runs with different seeds:
test accuracy mean ± sd and fit time (wall and CPU: the machine is shared, so wall time is
inflated by the other jobs; CPU time is closer to what an idle machine shows). Also the
time of ``dpkit forest predict``'s work on the 15,060 test rows (read as strings, encoded
against the model, predicted) and of a whole ``dpkit forest train`` process.

Every tool gets the same public information: numeric bounds from the schema
(taxonomies/adult.yaml), categorical domains as one-hot columns with bounds [0, 1] for
diffprivlib and scikit-learn (dpkit splits categories natively).

diffprivlib 0.6.6 does not import with the installed scikit-learn (``sklearn.tree._tree``
lost ``DOUBLE``/``DTYPE``); :func:`_diffprivlib_forest` restores the two aliases first.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "sample_data" / "adult" / "train.csv"
TEST = ROOT / "sample_data" / "adult" / "test.csv"
SCHEMA = ROOT / "taxonomies" / "adult.yaml"
RESULTS = ROOT / "docs" / "results"
TREES, DEPTH = 25, 5


def _diffprivlib_forest():  # noqa: ANN202
    import sklearn.tree._tree as tree

    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    from diffprivlib.models import RandomForestClassifier

    return RandomForestClassifier


def _load():  # noqa: ANN202
    from dpkit.errors import DpkitWarning
    from dpkit.io.table import load_table, read_csv
    from dpkit.schema.parse import load_schema

    schema = load_schema(SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DpkitWarning)
        train = load_table(TRAIN, schema)
        test = load_table(TEST, schema)
    test_df = read_csv(TEST)
    test_df = test_df[~(test_df == "?").any(axis=1)].reset_index(drop=True)  # the same 15,060 rows
    return schema, train, test, test_df


def _one_hot(schema, table):  # noqa: ANN001, ANN202
    """Numeric columns as they are, categorical as one-hot; with the public bounds."""
    cols, lo, hi = [], [], []
    for name in schema.predictors("income"):
        col = schema.columns[name]
        v = table.columns[name]
        if col.kind == "numeric":
            cols.append(v.astype(float)[:, None])
            lo.append(col.lo)
            hi.append(col.hi)
        else:
            k = len(col.leaves)
            cols.append(np.eye(k)[v])
            lo += [0.0] * k
            hi += [1.0] * k
    return np.hstack(cols), (np.array(lo), np.array(hi))


def _timed(fn):  # noqa: ANN001, ANN202
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _row(tool: str, eps: str, accs: list[float], walls: list[float], cpus: list[float]) -> dict:
    return {"tool": tool, "eps": eps, "acc": statistics.mean(accs),
            "sd": statistics.stdev(accs) if len(accs) > 1 else 0.0,
            "wall": statistics.mean(walls), "cpu": statistics.mean(cpus), "runs": len(accs)}


def main(quick: bool = False) -> str:
    from sklearn.ensemble import RandomForestClassifier as SkForest

    from dpkit.algorithms.forest import DiffPRFs
    from dpkit.algorithms.forest.model import predict_proba
    from dpkit.privacy import Accountant, make_rng

    runs = 2 if quick else 5
    epsilons = [1.0] if quick else [1.0, 0.25]
    schema, train, test, test_df = _load()
    y, yt = train.columns["income"], test.columns["income"]
    Xo, bounds = _one_hot(schema, train)
    Xto, _ = _one_hot(schema, test)
    DPForest = _diffprivlib_forest()
    rows = []
    predict_walls, predict_cpus = [], []
    for eps in epsilons:
        accs, walls, cpus = [], [], []
        for seed in range(runs):
            forest, w, c = _timed(lambda eps=eps, seed=seed: DiffPRFs(eps, TREES, DEPTH, utility="max").fit(
                train, "income", accountant=Accountant(eps), rng=make_rng(1000 + seed)))
            proba, pw, pc = _timed(lambda forest=forest: predict_proba(forest.model_, test_df))
            predict_walls.append(pw)
            predict_cpus.append(pc)
            accs.append(float(np.mean(proba.argmax(axis=1) == yt)))
            walls.append(w)
            cpus.append(c)
        rows.append(_row("dpkit forest (DiffPRFs, max utility, disjoint)", f"{eps:g}", accs, walls, cpus))
        accs, walls, cpus = [], [], []
        for seed in range(runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model, w, c = _timed(lambda eps=eps, seed=seed: DPForest(
                    n_estimators=TREES, epsilon=eps, bounds=bounds, classes=[0, 1], max_depth=DEPTH,
                    random_state=seed).fit(Xo, y))
                accs.append(float(np.mean(model.predict(Xto) == yt)))
            walls.append(w)
            cpus.append(c)
        rows.append(_row("diffprivlib 0.6.6 RandomForestClassifier", f"{eps:g}", accs, walls, cpus))
    accs, walls, cpus = [], [], []
    for seed in range(runs):
        model, w, c = _timed(lambda seed=seed: SkForest(n_estimators=TREES, max_depth=DEPTH, random_state=seed).fit(Xo, y))
        accs.append(float(np.mean(model.predict(Xto) == yt)))
        walls.append(w)
        cpus.append(c)
    rows.append(_row("scikit-learn RandomForestClassifier (not private)", "∞", accs, walls, cpus))
    floor = float(np.bincount(yt).max() / len(yt))

    cli_walls = []
    out = Path("/tmp") / f"dpkit-bench-forest-{time.time_ns()}.json"
    for seed in range(1 if quick else 3):
        cmd = [sys.executable, "-m", "dpkit", "-q", "forest", "train", str(TRAIN), "--schema", str(SCHEMA),
               "--epsilon", "1", "--seed", str(seed), "-o", str(out)]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        cli_walls.append(time.perf_counter() - t)
    for p in (out, out.with_name(out.stem + ".report.json")):
        p.unlink(missing_ok=True)

    lines = [
        f"### Forest: Adult, {TREES} trees of depth {DEPTH} (mean ± sd of {runs} runs)",
        "",
        "| tool | ε | test accuracy | fit wall s | fit CPU s |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['tool']} | {r['eps']} | {r['acc']:.4f} ± {r['sd']:.4f} | {r['wall']:.2f} | {r['cpu']:.2f} |")
    lines += [
        "",
        f"Majority class (the floor): {floor:.4f}. Prediction of the {len(test_df):,} test rows "
        f"(strings → encoded → 25 trees): {statistics.mean(predict_walls):.3f} s wall, "
        f"{statistics.mean(predict_cpus):.3f} s CPU (mean of {len(predict_walls)}). A whole "
        f"`dpkit forest train` process on Adult (ε = 1, start-up and CSV reading included): "
        f"{statistics.median(cli_walls):.2f} s wall (median of {len(cli_walls)}).",
        "",
        f"Command: `python -m bench.run forest{' --quick' if quick else ''}`. Data: sample_data/adult "
        "(original split, rows with '?' dropped: 30,162 train / 15,060 test). dpkit: defaults of "
        "configs/forest.yaml. diffprivlib and scikit-learn: numeric columns with the schema's bounds, "
        "categorical columns one-hot. Machine: 2 cores shared with other jobs — wall times are "
        "inflated by the contention, CPU times less so.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(main(quick="--quick" in sys.argv))
