"""`make bench-peers`: publish against dpmm's AIM and MST on the imbalanced tables -> docs/results/peers.md.

Issue 25 asks whether publish's release ranks as well as a synthetic-data peer's. The tables
are bench_imbalanced's (``adult-5pct`` the tuning table; ``adult-2pct``, ``bcw-8pct``,
``sklearn-bc-8pct`` held out), and every method is scored by one evaluator: the sweep protocol
of dpkit.sweep.tasks.publish (an entropy tree, ``min_samples_leaf`` 10, on one-hot features of
the released or synthetic table; accuracy, balanced accuracy and ROC AUC of the rarer class on
the test split mapped into the same domain).

* publish: ``run_experiment`` with default flags (pure ε-DP), as in bench_imbalanced.
* AIM and MST (dpmm 0.1.9, defaults but ``delta``; McKenna et al. 2022 and 2021) at the same ε
  with δ = 1e-6 — (ε, δ)-DP, a weaker guarantee than publish's, which favours the peers. Their
  domain is dpkit's public schema: categorical leaves as they are, each numeric column cut into
  32 equal-width bins of its public bounds (the preprocessing of the AIM paper). They sample as
  many records as the training split holds.

dpmm pins numpy 1.26 / pandas 2.1 / scikit-learn 1.5, so it runs in its own environment
(``.venv-peers``, made by ``make bench-peers``) through bench/peers_worker.py; this file encodes
the tables and scores the outputs in dpkit's environment.

The front-door mode — no schema on either side, dpmm's own DP preprocessing, bench_frontdoor's
tables — is bench/bench_peers_frontdoor.py (``make bench-peers-frontdoor``).

Run: ``python -m bench.bench_peers [--runs 3] [--publish-runs 5] [--tables adult-5pct] [--models aim,mst]
[--reuse]`` (``--reuse`` scores the synthetic tables an earlier run left in bench/out/peers/).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.bench_imbalanced import TUNING, build_tables, publish_point

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "peers"
#: docs/results/peers.md, or peers-<model>.md for a run of one peer (AIM and MST are run apart:
#: AIM takes ~30 min a run here, MST ~5)
DOC = ROOT / "docs" / "results" / "peers.md"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
BINS = 32
DELTA = 1e-6


def encode(t: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int], str]:
    """(train codes, test codes, domain sizes, target): dpkit's encoding, numbers binned."""
    import dpkit
    from dpkit.io.table import load_table
    from dpkit.schema.parse import CategoricalColumn

    schema = dpkit.load_schema(t["schema"])
    target = t["target"]
    names = [*schema.predictors(target), target]
    out, domain = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows with a missing value are dropped, as publish does
        tables = [load_table(t[split], schema) for split in ("train", "test")]
    for tab in tables:
        cols = {}
        for name in names:
            col = schema.columns[name]
            x = tab.columns[name]
            if isinstance(col, CategoricalColumn):
                cols[name], domain[name] = x.astype(np.int64), len(col.leaves)
            else:
                lo, hi = col.lo, col.hi
                b = np.floor((np.asarray(x, dtype=float) - lo) / (hi - lo) * BINS).astype(np.int64)
                cols[name], domain[name] = np.clip(b, 0, BINS - 1), BINS
        out.append(pd.DataFrame(cols))
    return out[0], out[1], domain, target


def score(train: pd.DataFrame, test: pd.DataFrame, domain: dict[str, int], target: str, seed: int) -> dict[str, float]:
    """The sweep's evaluator on code tables (train: synthetic; test: the real test split)."""
    from dpkit.sweep.tasks.publish import _one_hot, _ranking, _scores, _tree

    preds = [c for c in train.columns if c != target]
    sizes = [domain[c] for c in preds]
    x_tr = _one_hot([train[c].to_numpy() for c in preds], sizes)
    x_te = _one_hot([test[c].to_numpy() for c in preds], sizes)
    yt = test[target].to_numpy()
    clf = _tree(seed, 10).fit(x_tr, train[target].to_numpy())
    pred = clf.predict(x_te)
    bal, auc = _ranking(yt, pred, _scores(clf, x_te, domain[target]), domain[target])
    return {"auc": auc, "bal": bal, "acc": float(np.mean(pred == yt))}


def peer_point(name: str, model: str, codes: tuple, eps: float, seed: int, reuse: bool = False) -> dict[str, float]:
    """One fit + sample of ``model`` (in the peers' environment), scored; ``reuse``: take the
    synthetic table a previous run left for the same table, model, ε and seed (AIM takes ~30 min)."""
    train, test, domain, target = codes
    OUT.mkdir(parents=True, exist_ok=True)
    src, dom = OUT / f"{name}.codes.csv", OUT / f"{name}.domain.json"
    dst = OUT / f"{name}.{model}.eps{eps:g}.{seed}.csv"
    meta = dst.with_suffix(".json")
    if not (reuse and dst.exists() and meta.exists()):
        if not PEERS_PYTHON.exists():
            raise SystemExit(f"{PEERS_PYTHON} is missing: run `make bench-peers` (it makes the peers' environment)")
        train.to_csv(src, index=False)
        dom.write_text(json.dumps(domain))
        done = subprocess.run([str(PEERS_PYTHON), str(ROOT / "bench" / "peers_worker.py"), model, str(src), str(dom),
                               str(eps), str(DELTA), str(seed), str(dst)], capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{model} failed on {name}:\n{done.stderr[-2000:]}")
        meta.write_text(done.stdout.strip().splitlines()[-1])
    seconds = json.loads(meta.read_text())["seconds"]
    synth = pd.read_csv(dst).astype("int64")
    return {**score(synth, test, domain, target, seed), "seconds": seconds}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--tables", default=None, help="comma list (default: all of bench_imbalanced's)")
    ap.add_argument("--models", default="aim,mst")
    ap.add_argument("--publish-runs", type=int, default=5, help="seeds of publish (cheap) [default: 5]")
    ap.add_argument("--reuse", action="store_true", help="reuse the peers' synthetic tables of an earlier run")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    tables = build_tables()
    names = a.tables.split(",") if a.tables else list(tables)
    models = [m for m in a.models.split(",") if m]
    start = time.time()
    rows = []
    for name in names:
        codes = encode(tables[name])
        res: dict[str, list[dict[str, float]]] = {"publish": [], **{m: [] for m in models}}
        for seed in range(a.publish_runs):
            p = publish_point(tables[name], a.epsilon, seed)
            res["publish"].append({"auc": p["publish_auc"], "bal": p["publish_bal"], "acc": p["publish_acc"],
                                   "seconds": p["publish_seconds"]})
        for seed in range(a.runs):
            for m in models:
                res[m].append(peer_point(name, m, codes, a.epsilon, seed, a.reuse))
            print(name, seed, {k: {x: round(v, 3) for x, v in r[-1].items()} for k, r in res.items()}, flush=True)
        rows.append((name, p["raw_tree_auc"], res))
    lines = ["# publish against AIM and MST (`make bench-peers`)", "",
             f"Generated by `python -m bench.bench_peers --runs {a.runs} --publish-runs {a.publish_runs} --epsilon {a.epsilon:g}"
             f"{' --tables ' + a.tables if a.tables else ''}{' --models ' + a.models if a.models != 'aim,mst' else ''}"
             f"{' --reuse' if a.reuse else ''}` ({time.time() - start:.0f} s on this machine"
             f"{'; the peers synthetic tables reused from an earlier run, their seconds that run' + chr(39) + 's wall time on a machine shared with other jobs' if a.reuse else ''}). "
             f"Means over {a.publish_runs} seeds for publish and {a.runs} for each peer (± population s.d.) of the "
             f"sweep's tree on each release; ε = {a.epsilon:g} "
             f"(publish: pure ε-DP; AIM, MST: (ε, δ = {DELTA:g})-DP). Tuning table: {', '.join(TUNING)}; the "
             "others are held out. Protocol: the module docstring of bench/bench_peers.py.", "",
             "| table | raw-tree AUC | method | AUC | balanced acc | accuracy | seconds |", "|---|---|---|---|---|---|---|"]

    def cell(vals: list[float]) -> str:
        vals = [v for v in vals if not math.isnan(v)]
        return f"{statistics.fmean(vals):.3f} ± {statistics.pstdev(vals):.3f}" if vals else "-"

    for name, raw_auc, res in rows:
        for method, points in res.items():
            label = f"{name}{' (tuning)' if name in TUNING else ''}"
            lines.append(f"| {label} | {raw_auc:.3f} | {method} | {cell([q['auc'] for q in points])} | "
                         f"{cell([q['bal'] for q in points])} | {cell([q['acc'] for q in points])} | "
                         f"{statistics.median(q['seconds'] for q in points):.3g} |")
    doc = DOC if len(models) != 1 else DOC.with_name(f"peers-{models[0]}.md")
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text("\n".join(lines) + "\n")
    print(f"wrote {doc}")


if __name__ == "__main__":
    main()
