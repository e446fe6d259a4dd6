"""The forest keeps rows with missing values (issue 36 item 3) measured: ``dpkit.forest`` without a
schema on tables with many missing values, before (rows with a missing number dropped) and
after (a numeric split's missing child) -> docs/results/missing.md, section "Forest".

Tables (built here, train and test alike, seed 0; written to bench/out/forest_missing/):

* ``hr``: synthetic HR attrition, 15,000 / 5,000 rows: satisfaction, evaluation, hours, tenure,
  salary (numeric; 10–30 % empty), department (``?`` in 20 %), promoted; ~70 % of the rows hold
  some missing value. Leaving depends on satisfaction, hours, tenure and salary, and an empty
  evaluation (no review on file) makes leaving likelier.
* ``adult-missing``: Adult (32,561 / 16,281) with age 30 %, hours-per-week 20 %, education-num
  10 % and capital-gain 15 % empty at random, ``?`` in occupation as Adult has it (~60 % of the
  rows hold a missing value): real signal, HR-like holes.
* ``missing-heavy``: the issue's missing-heavy case, a mushroom-like table of 8,124 rows split
  5,416 / 2,708: ``?`` in a third of the rows (of a categorical ``root`` and a numeric ``stem``
  column, the same rows), a strong categorical predictor (``odor``: 9 values, all but one pure)
  so that a tree on the raw data reaches ≥ 0.95. Seven of its nine odors hold fewer records
  than a no-schema run's partition-selection threshold (1,027 here), so they are learned as
  ``(other)``: ``--values`` declares them (:data:`ODORS`), to tell that loss from the missing
  values'.
* ``missing-heavy-wide``: as wide as the mushroom data (22 categorical predictors, 8,124 rows
  split 5,416 / 2,708): twelve latent species decide the class, each predictor shows its
  species' typical value 80 % of the time, odor as above, ``root`` ``?`` in a third of the rows
  (:func:`_wide`). With 23 categorical columns a per-column Laplace threshold is ~2,660
  records: most predictors keep one value or none; the joint Gaussian's is ~870 (the
  automatic choice takes it: docs/domain-reference.md, "Many columns"). Tuned on.
* ``survey-wide``: held out (:func:`_survey`, 8,000 / 4,000 rows): 16 five-point questions in
  words with 5–25 % ``?``, region, age band; written before it was first measured.

Each run (seed s, a plain integer: reproducible, not private): ``dpkit.forest`` without a schema,
ε = 1, δ = 1e-6 (``--missing '?,'`` declares the tokens: every column then keeps its missing
values), predictions on every test row (``Forest.predict_proba``), accuracy and ROC AUC over all
of them, and the noisy record count the forest drew (its noisy class counts: the rows it was
grown on). ``--publish``: also ``dpkit.publish`` (no schema), ``generalize`` and an entropy tree
on the release (:func:`dpkit.evaluate_classifier`), as bench_missing does. ``--code DIR`` runs
another checkout (the base commit, which drops the rows) on the same tables. The raw row: an
entropy tree (scikit-learn, min_samples_leaf 10) on the raw one-hot table, a missing number as
its own value below every other.

``--partition laplace|gaussian|auto`` fixes the categories' selection (docs/domain-reference.md, "Many
columns"; the default is the library's, auto).

``fd:NAME`` runs the forest on a table of bench/bench_frontdoor.py (``fd:adult``, ``fd:mixed``,
...: tables without missing numbers, to measure what a missing child costs where nothing is
missing), with that table's declarations.

Run: ``python -m bench.bench_forest_missing [--runs 5] [--tables hr,...] [--code DIR] [--publish]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "forest_missing"
ADULT = {"train": ROOT / "sample_data/adult/train.csv", "test": ROOT / "sample_data/adult/test.csv"}
TARGETS = {"hr": "left", "adult-missing": "income", "missing-heavy": "edible", "missing-heavy-wide": "edible",
           "survey-wide": "renewed"}
#: the class ROC AUC scores (another target: its last class in sorted order)
POSITIVE = {"left": "yes", "income": ">50K", "edible": "p", "renewed": "yes"}
IGNORE = {"adult-missing": ["fnlwgt"]}


def _hr(n: int, seed: int) -> Any:
    import numpy as np
    import pandas as pd

    g = np.random.default_rng(seed)
    sat = g.beta(2.2, 1.6, n)
    evaluation = g.uniform(0.35, 1.0, n)
    hours = g.normal(200, 45, n).clip(90, 320)
    tenure = g.geometric(0.25, n).clip(1, 20)
    salary = g.choice(["low", "medium", "high"], n, p=[0.5, 0.4, 0.1])
    pay = np.round(np.where(salary == "low", 30000, np.where(salary == "medium", 52000, 90000))
                   * g.lognormal(0, 0.15, n), -2)
    dept = g.choice(["sales", "technical", "support", "IT", "hr", "management"], n, p=[.3, .2, .18, .14, .1, .08])
    promoted = g.random(n) < 0.05
    no_review = g.random(n) < 0.15  # evaluation empty: no review on file
    z = (-2.4 + 4.5 * (sat < 0.35) + 2.5 * ((hours > 250) & (evaluation > 0.8)) + 1.5 * ((tenure >= 3) & (tenure <= 5))
         - 1.0 * (pay > 60000) - 2.0 * promoted + 1.5 * no_review + 0.3 * (dept == "sales"))
    left = np.where(g.random(n) < 1 / (1 + np.exp(-z)), "yes", "no")
    df = pd.DataFrame({"satisfaction": [f"{v:.2f}" for v in sat], "evaluation": [f"{v:.2f}" for v in evaluation],
                       "hours": hours.round().astype(int).astype(str), "tenure": tenure.astype(str),
                       "salary": pay.astype(int).astype(str), "department": dept,
                       "promoted": np.where(promoted, "1", "0"), "left": left})
    df.loc[no_review, "evaluation"] = ""
    for col, share in (("satisfaction", 0.10), ("hours", 0.20), ("tenure", 0.12), ("salary", 0.30)):
        df.loc[g.random(n) < share, col] = ""
    df.loc[g.random(n) < 0.20, "department"] = "?"
    return df


ODORS = ["none", "foul", "almond", "anise", "fishy", "spicy", "pungent", "creosote", "musty"]


def _heavy(n: int, seed: int) -> Any:
    """Mushroom-like: odor decides the class but for 'none' (43 %, 96 % edible); root and stem are
    '?' in a third of the rows (more often for poisonous ones, as stalk-root in the mushroom data)."""
    import numpy as np
    import pandas as pd

    g = np.random.default_rng(seed)
    odor = g.choice(ODORS, n, p=[.43, .27, .05, .05, .07, .07, .03, .02, .01])
    p_edible = np.select([odor == "none", np.isin(odor, ["almond", "anise"])], [0.96, 1.0], 0.0)
    edible = g.random(n) < p_edible
    cap = g.choice(["brown", "gray", "red", "yellow", "white", "buff", "pink", "cinnamon", "green", "purple"], n)
    gill = np.where(g.random(n) < np.where(edible, 0.85, 0.45), "broad", "narrow")
    bruises = np.where(g.random(n) < np.where(edible, 0.65, 0.2), "t", "f")
    diameter = np.round(g.lognormal(np.where(edible, 1.9, 1.75), 0.35, n), 1)
    stem = np.round(g.normal(np.where(edible, 6.5, 5.8), 1.6, n).clip(1, 15), 1)
    root = g.choice(["bulbous", "club", "equal", "rooted"], n)
    unknown = g.random(n) < np.where(edible, 0.17, 0.50)  # ~1/3 of the rows
    df = pd.DataFrame({"odor": odor, "cap-color": cap, "gill-size": gill, "bruises": bruises,
                       "cap-diameter": diameter.astype(str), "stem-height": stem.astype(str), "root": root,
                       "edible": np.where(edible, "e", "p")})
    df.loc[unknown, ["root", "stem-height"]] = "?"
    return df


def _wide(n: int, seed: int) -> Any:
    """Mushroom-like and as wide as the mushroom data (22 categorical predictors): twelve latent
    species (2–25 % of the rows, each edible or not), each predictor a value list of 2–10 in
    which a species shows its own typical value 80 % of the time (else any value); odor as in
    :func:`_heavy`, tied to the species; ``root`` '?' in a third of the rows (more often for the
    poisonous species). Its many predictors are what a wide table costs partition selection."""
    import numpy as np
    import pandas as pd

    g = np.random.default_rng(seed)
    freq = np.array([25, 16, 12, 9, 8, 7, 6, 5, 4, 3, 3, 2], dtype=float)
    species = g.choice(len(freq), n, p=freq / freq.sum())
    poison = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1], dtype=bool)
    odor_of = ["none", "foul", "almond", "fishy", "spicy", "anise", "pungent", "none", "creosote", "foul",
               "none", "musty"]
    cols: dict[str, Any] = {"odor": np.where(g.random(n) < 0.9, np.array(odor_of, dtype=object)[species],
                                             g.choice(ODORS, n))}
    for j in range(20):
        k = int(g.integers(2, 11))
        values = np.array([f"v{i}" for i in range(k)], dtype=object)
        typical = g.integers(0, k, len(freq))
        cols[f"c{j + 1:02d}"] = np.where(g.random(n) < 0.8, values[typical[species]], g.choice(values, n))
    df = pd.DataFrame(cols)
    df["root"] = g.choice(["bulbous", "club", "equal", "rooted"], n)
    edible = ~poison[species]
    df.loc[g.random(n) < np.where(edible, 0.17, 0.50), "root"] = "?"
    df["edible"] = np.where(edible, "e", "p")
    return df


def _survey(n: int, seed: int) -> Any:
    """A wide survey (held out: written before it was first measured, and nothing chosen on it):
    16 five-point questions answered in words (skewed answers, 5–25 % ``?`` non-response), region (8) and age band
    (6); whether a member renewed depends on four of the questions and on non-response."""
    import numpy as np
    import pandas as pd

    g = np.random.default_rng(seed)
    latent = g.normal(0, 1, n)  # overall satisfaction, which the answers reflect
    cols: dict[str, Any] = {}
    answers = {}
    for j in range(16):
        load = g.uniform(0.2, 1.2)
        raw = load * latent + g.normal(0, 1, n) + g.uniform(-0.5, 1.0)
        a = np.digitize(raw, [-1.5, -0.5, 0.5, 1.5]) + 1  # 1..5, skewed by the offset
        answers[j] = a
        col = np.array(["strongly disagree", "disagree", "neutral", "agree", "strongly agree"], dtype=object)[a - 1]
        col[g.random(n) < g.uniform(0.05, 0.25)] = "?"
        cols[f"q{j + 1:02d}"] = col
    cols["region"] = g.choice([f"r{i}" for i in range(8)], n, p=[.3, .2, .15, .1, .1, .07, .05, .03])
    cols["age_band"] = g.choice(["18-24", "25-34", "35-44", "45-54", "55-64", "65+"], n)
    z = (-0.4 + 0.9 * (answers[0] >= 4) - 1.1 * (answers[3] <= 2) + 0.6 * (answers[7] == 5)
         - 0.8 * (cols["q12"] == "?") + 0.5 * (answers[11] >= 3) + 0.3 * (cols["region"] == "r0"))
    df = pd.DataFrame(cols)
    df["renewed"] = np.where(g.random(n) < 1 / (1 + np.exp(-z)), "yes", "no")
    return df


def _frontdoor(name: str) -> dict[str, str]:
    """A bench_frontdoor table (``fd:NAME``): its files, target and declarations registered here."""
    from bench.bench_frontdoor import TABLES as FD

    t = FD[name[3:]].build()
    TARGETS[name] = t.target
    IGNORE[name] = list(t.ignore)
    DECLARE[name] = {k: list(v) for k, v in t.declare}
    return {"train": t.train, "test": t.test}


#: a table's public declarations (learn_schema keywords; bench_frontdoor's ``fd:`` tables)
DECLARE: dict[str, dict[str, Any]] = {}


def build(name: str) -> dict[str, str]:
    """The table's train and test files (built once, seed 0)."""
    import numpy as np
    import pandas as pd

    if name.startswith("fd:"):
        return _frontdoor(name)

    OUT.mkdir(parents=True, exist_ok=True)
    files = {split: str(OUT / f"{name}-{split}.csv") for split in ("train", "test")}
    if all(Path(f).exists() for f in files.values()):
        return files
    if name == "hr":
        parts = {"train": _hr(15000, 0), "test": _hr(5000, 1)}
    elif name == "survey-wide":
        df = _survey(12000, 5)
        parts = {"train": df.iloc[:8000], "test": df.iloc[8000:]}
    elif name in ("missing-heavy", "missing-heavy-wide"):
        df = (_heavy if name == "missing-heavy" else _wide)(8124, 0)
        parts = {"train": df.iloc[:5416], "test": df.iloc[5416:]}
    else:
        rng = np.random.default_rng(0)
        parts = {}
        for split, path in ADULT.items():
            df = pd.read_csv(path, dtype=str, keep_default_na=False)
            for col, share in (("age", 0.3), ("hours-per-week", 0.2), ("education-num", 0.1), ("capital-gain", 0.15)):
                df.loc[rng.random(len(df)) < share, col] = ""
            parts[split] = df
    for split, df in parts.items():
        df.to_csv(files[split], index=False)
    return files


def _scores(y: Any, proba: Any, labels: list[str], positive: str) -> tuple[float, float]:
    import numpy as np
    from sklearn.metrics import roc_auc_score

    pred = np.asarray(labels, dtype=object)[np.argmax(proba, axis=1)]
    return float(np.mean(pred == y)), float(roc_auc_score(y == positive, proba[:, labels.index(positive)]))


def one_run(name: str, files: dict[str, str], seed: int, missing: str | None, publish: bool,
            values: str | None = None) -> dict[str, Any]:
    """forest (no schema) -> predictions on every test row; with ``publish`` the release too."""
    import pandas as pd

    import dpkit

    target = TARGETS[name]
    test = pd.read_csv(files["test"], dtype=str, keep_default_na=False)
    n_train = sum(1 for _ in open(files["train"])) - 1
    extra: dict[str, Any] = {"ignore": IGNORE[name]} if IGNORE.get(name) else {}
    extra.update(DECLARE.get(name, {}))
    if missing is not None:
        extra["missing"] = [t for t in missing.split(",")] if "," in missing else missing
    if values is not None:  # declared (public) values of some columns, e.g. missing-heavy's odor
        extra["values"] = json.loads(values)
    out: dict[str, Any] = {"test_rows": len(test), "train_rows": n_train}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        f = dpkit.forest(files["train"], target=target, epsilon=1.0, delta=1e-6, seed=seed, **extra)
        proba = f.predict_proba(test.drop(columns=[target]))
        out["cpu_s"] = round(time.process_time() - t0, 1)
    labels = [str(c)[2:] if str(c).startswith("p_") else str(c) for c in proba.columns]
    positive = POSITIVE.get(target) or sorted(set(test[target]))[-1]
    out["scored"] = int(proba.notna().all(axis=1).sum())
    out["accuracy"], out["roc_auc"] = _scores(test[target].to_numpy(), proba.to_numpy(), labels, positive)
    shape = f.report["release"].get("shape", {})
    out["noisy_records"] = sum(shape.get("noisy_class_counts", []))
    out["missing_values"] = f.report["release"].get("missing_values", {}).get("features")
    if publish:
        from dpkit.api.evaluate import evaluate_classifier

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rel_path = OUT / f"{name}-release-{seed}.csv"
            rel = dpkit.publish(files["train"], target=target, epsilon=1.0, delta=1e-6, seed=seed,
                                output=str(rel_path), **extra)
            gen = dpkit.generalize(files["test"], rel)
            sc = evaluate_classifier(gen, target=target, train=str(rel_path))
        out["publish"] = {"scored": int(sum(map(sum, sc["confusion_matrix"]))), "accuracy": sc["accuracy"],
                          "roc_auc": sc.get("roc_auc")}
    return out


def raw_tree(name: str, files: dict[str, str]) -> tuple[float, float]:
    """An entropy tree on the raw table: one-hot categories ('?' one of them), a missing number
    as a value below every other."""
    import pandas as pd
    from sklearn.tree import DecisionTreeClassifier

    target = TARGETS[name]
    tr = pd.read_csv(files["train"], dtype=str, keep_default_na=False)
    te = pd.read_csv(files["test"], dtype=str, keep_default_na=False)
    both = pd.concat([tr, te]).drop(columns=[target, *IGNORE.get(name, [])])
    cols = []
    for c in both.columns:
        num = pd.to_numeric(both[c], errors="coerce")
        if num.notna().mean() > 0.5:
            cols.append(num.fillna(num.min() - 1e6).rename(c).to_frame())
        else:
            cols.append(pd.get_dummies(both[c], prefix=c, dtype=float))
    X = pd.concat(cols, axis=1).to_numpy()
    clf = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=10, random_state=0)
    clf.fit(X[:len(tr)], tr[target].to_numpy())
    positive = {"left": "yes", "income": ">50K", "edible": "p", "renewed": "yes"}[target]
    proba = clf.predict_proba(X[len(tr):])
    return _scores(te[target].to_numpy(), proba, [str(c) for c in clf.classes_], positive)


def use_partition(mode: str) -> None:
    """Make every learned domain of this process select its categories with ``mode`` ("auto",
    "laplace", "gaussian"): ``DomainOptions.partition``, a library option of ``learn_schema`` that
    ``publish`` and ``forest`` leave at its default (auto), set here around the discovery."""
    import dataclasses
    import importlib

    mod = importlib.import_module("dpkit.domain.discover")
    inner = mod.discover

    def discover(*args: Any, options: Any = None, **kw: Any) -> Any:
        return inner(*args, options=dataclasses.replace(options or mod.DomainOptions(), partition=mode), **kw)

    mod.discover = discover


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--first", type=int, default=0, help="the first seed")
    ap.add_argument("--tables", default=",".join(TARGETS))
    ap.add_argument("--missing", help="declare the missing tokens (comma list; '?,' is '?' and the empty field)")
    ap.add_argument("--publish", action="store_true", help="also publish + generalize + entropy tree")
    ap.add_argument("--values", help='declared values, JSON: \'{"odor": ["none", "foul", ...]}\'')
    ap.add_argument("--raw", action="store_true", help="only the raw-data tree")
    ap.add_argument("--ignore", help="more columns to leave out (comma list), e.g. half of missing-heavy-wide's")
    ap.add_argument("--partition", choices=["auto", "laplace", "gaussian"],
                    help="the categories' selection in the learned domain (default: the library's, auto)")
    ap.add_argument("--code", help="run another checkout's dpkit (its path) on the same tables")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ignore:
        for name in args.tables.split(","):
            IGNORE[name] = [*IGNORE.get(name, []), *args.ignore.split(",")]
    if args.partition:
        use_partition(args.partition)
    if args.worker:  # one run in this process (for --code: PYTHONPATH points at the other checkout)
        import dpkit

        name, seed = args.worker.split(":")
        print("dpkit from", dpkit.__file__, file=sys.stderr)
        print(json.dumps(one_run(name, build(name), int(seed), args.missing, args.publish, args.values)))
        return
    for name in args.tables.split(","):
        files = build(name)
        if args.raw:
            acc, auc = raw_tree(name, files)
            print(f"| {name} | raw entropy tree | {acc:.3f} | {auc:.3f} |", flush=True)
            continue
        rs = []
        for seed in range(args.first, args.first + args.runs):
            if args.code:
                # run as a script from OUT: nothing of this checkout comes before the other one's dpkit
                env = {**os.environ, "PYTHONPATH": args.code}
                argv = [sys.executable, str(Path(__file__).resolve()), "--worker", f"{name}:{seed}"]
                argv += ["--missing", args.missing] if args.missing is not None else []
                argv += ["--publish"] if args.publish else []
                argv += ["--values", args.values] if args.values is not None else []
                argv += ["--partition", args.partition] if args.partition else []
                argv += ["--ignore", args.ignore] if args.ignore else []
                got = subprocess.run(argv, cwd=OUT, env=env, capture_output=True, text=True, check=True)
                r = json.loads(got.stdout.strip().splitlines()[-1])
            else:
                r = one_run(name, files, seed, args.missing, args.publish, args.values)
            rs.append(r)
            print(name, seed, json.dumps(r), flush=True)
        acc = [r["accuracy"] for r in rs]
        auc = [r["roc_auc"] for r in rs]
        sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
        print(f"| {name} | forest | {rs[0]['scored']:,} / {rs[0]['test_rows']:,} | {statistics.mean(acc):.3f} ± {sd:.3f} "
              f"| {min(acc):.3f}–{max(acc):.3f} | {statistics.mean(auc):.3f} | "
              f"{statistics.mean(r['noisy_records'] for r in rs):,.0f} / {rs[0]['train_rows']:,} |")
        if args.publish:
            pa = [r["publish"]["accuracy"] for r in rs]
            pu = [r["publish"]["roc_auc"] for r in rs if r["publish"]["roc_auc"] is not None]
            psd = statistics.stdev(pa) if len(pa) > 1 else 0.0
            print(f"| {name} | publish + tree | {rs[0]['publish']['scored']:,} / {rs[0]['test_rows']:,} | "
                  f"{statistics.mean(pa):.3f} ± {psd:.3f} | {min(pa):.3f}–{max(pa):.3f} | "
                  f"{statistics.mean(pu) if pu else float('nan'):.3f} |")


if __name__ == "__main__":
    main()
