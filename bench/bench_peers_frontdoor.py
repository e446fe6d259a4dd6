"""`make bench-peers-frontdoor`: the no-schema front door against dpmm's AIM and MST with no
schema either, on bench_frontdoor's tables -> docs/results/peers-frontdoor.md (issue 36).

bench_peers.py gives the peers dpkit's public schema; here neither side has one, as a user
with a CSV and a target would run them:

* **dpkit, no schema** — bench_frontdoor's no-schema run, seed for seed: the schema learned
  under DP with 0.2 of ε (``--ignore``/``--date`` declared as a user would), publish with the
  rest; scored by the sweep protocol (``dpkit.sweep.tasks.publish.run_experiment``).
* **AIM, MST** (dpmm 0.1.9's pipelines, McKenna et al. 2022 and 2021) as its README runs them:
  ``MSTPipeline(epsilon, delta, proc_epsilon)`` then ``fit(df)`` with no domain — its own DP
  preprocessing of numeric columns (PrivTree bins, bounds from a DP approximate-bounds
  histogram), categories and column kinds read from the data (bench/peers_worker.py's
  ``frontdoor``). ``proc_epsilon`` is dpmm's default 0.1 and the generator gets ε − 0.1, so the
  whole run spends ε (dpmm's pipeline would otherwise spend ε + 0.1); on a table where that
  default crashes, the run is retried with ``--fallback-proc-epsilon`` (0.2, dpkit's domain
  share) and the table says so. The same columns are dropped (``--ignore``) and the same date
  columns parsed as dates as in dpkit's run; the target is read as labels. They sample as many
  records as the training split holds.

One evaluator (bench_peers.score, the sweep's): an entropy tree (``min_samples_leaf`` 10) on
one-hot features of the release — dpkit's released cells, the peers' synthetic records in dpmm's
discretized domain — scored on the test split mapped into that same domain (dpkit: generalized
onto the released cut; the peers: their bins and categories); ROC AUC of the test split's rarer
class. Wall time: dpkit's learn + release; the peers' fit + sample (their preprocessing
included), at ``nice -n 19`` on a shared machine.

Caveat stated in the report: dpmm reads categories, column kinds and static columns from the
exact data (it logs ``PrivacyLeakage`` for each categorical column), so its run is NOT
(ε, δ)-DP as a whole; dpkit's no-schema run learns all of them under DP.

Run: ``python -m bench.bench_peers_frontdoor [--runs 1] [--dpkit-runs 5] [--tables a,b]
[--models mst,aim] [--aim-tables zero-heavy] [--reuse [--no-run]]`` (``--reuse`` scores the peers' outputs an earlier run left in
bench/out/peers-frontdoor/; with ``--no-run`` a run not left there is reported as not run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from bench.bench_affordable import TABLES as AFFORDABLE
from bench.bench_frontdoor import SHARE, TABLES, Table
from bench.bench_peers import DELTA, PEERS_PYTHON, ROOT, score

OUT = ROOT / "bench" / "out" / "peers-frontdoor"
DOC = ROOT / "docs" / "results" / "peers-frontdoor.md"
#: dpmm's MMPipeline default
PROC_EPSILON = 0.1
#: the order of a partial run: the zero-heavy tables first (issue 36's comparison), Adult last (32k rows)
ORDER = ["zero-heavy", "zero-heavy-wide", "codes-id", "question-marks", "iso-dates", "mixed", "adult-float", "adult"]


def _build(name: str) -> Table:
    """bench_frontdoor's table ``name``, or bench_affordable's (issue 46's traits)."""
    from bench import bench_affordable

    return TABLES[name].build() if name in TABLES else bench_affordable.build(name)


def _tuned(name: str) -> bool:
    return TABLES[name].tuned if name in TABLES else AFFORDABLE[name][4]


def _worker(spec: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Run the peers' worker at the lowest priority; (its JSON line, or None; stderr's tail)."""
    path = Path(spec["out"] + ".spec.json")
    path.write_text(json.dumps(spec))
    cmd = ["nice", "-n", "19", str(PEERS_PYTHON), str(ROOT / "bench" / "peers_worker.py"), "frontdoor", str(path)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        lines = [x for x in done.stderr.strip().splitlines() if x.strip()]
        return None, (lines[-1] if lines else f"exit {done.returncode}")[:200]
    # CPU seconds of the whole worker (reading, writing and its child processes included): on a
    # machine shared with other jobs the wall time says more about the load than about dpmm
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "cpu": cpu}, ""


def peer_point(name: str, t: Table, model: str, eps: float, seed: int, proc: tuple[float, float],
               reuse: bool) -> dict[str, Any]:
    """One fit + sample of ``model`` on table ``name`` with no schema, scored; a crash at dpmm's
    default ``proc_epsilon`` is retried once at the fallback (both recorded)."""
    OUT.mkdir(parents=True, exist_ok=True)
    stem = str(OUT / f"{name}.{model}.eps{eps:g}.{seed}")
    meta_path = Path(stem + ".meta.json")
    if not (reuse and meta_path.exists()):
        if not PEERS_PYTHON.exists():
            raise SystemExit(f"{PEERS_PYTHON} is missing: run `make .venv-peers/bin/python`")
        meta: dict[str, Any] = {"errors": []}
        for p in dict.fromkeys(proc):
            spec = {"model": model, "train": t.train, "test": t.test, "target": t.target, "epsilon": eps,
                    "delta": DELTA, "proc_epsilon": p, "seed": seed, "out": stem, "ignore": list(t.ignore),
                    "date": [c for k, v in t.declare if k == "date" for c in v]}
            got, err = _worker(spec)
            if got is not None:
                meta.update(got, proc_epsilon=p)
                break
            meta["errors"].append(f"proc_epsilon {p:g}: {err}")
        meta_path.write_text(json.dumps(meta))
    meta = json.loads(meta_path.read_text())
    if "seconds" not in meta:
        return {"auc": math.nan, "acc": math.nan, "bal": math.nan, "seconds": math.nan, **meta}
    synth = pd.read_csv(stem + ".synth.csv").astype("int64")
    test = pd.read_csv(stem + ".test.csv").astype("int64")
    domain = json.loads(Path(stem + ".domain.json").read_text())
    return {**score(synth, test, domain, t.target, seed), **meta}


def dpkit_point(name: str, t: Table, seed: int) -> dict[str, float]:
    """bench_frontdoor's no-schema run for ``seed`` (same schema seed, same release seed), timed."""
    from bench.bench_domain import _learned
    from dpkit.sweep.tasks.publish import run_experiment

    decl = {k: list(v) for k, v in t.declare}
    t0 = time.perf_counter()
    sch = _learned(t.train, t.target, SHARE, seed, f"{name}-learned", ignore=list(t.ignore), **decl)
    learn = time.perf_counter() - t0
    if sch is None:
        return {"auc": math.nan, "acc": math.nan, "seconds": learn}
    timing: dict[str, float] = {}
    # wall seconds of the release alone (run_experiment's timing), not of its scoring; the table
    # is read once per table (bench_domain caches the strings) and not counted
    r = run_experiment({"data": t.train, "schema": sch, "epsilon": 1 - SHARE, "test": t.test}, seed, timing)
    return {"auc": r["roc_auc"], "acc": r["accuracy"], "seconds": learn + timing["seconds"]}


def raw_auc(name: str, t: Table) -> float:
    """bench_frontdoor's raw figure: the same tree on the raw training split, encoded by the
    reviewed draft (not private; a reference only)."""
    from bench.bench_domain import _draft, _publish

    draft = _draft(t.train, t.target, f"{name}-draft", t.ignore)
    return float(_publish(draft, 0, 1.0, t.train, t.test, metric=None)["baseline_roc_auc"])


def _mean(xs: list[float]) -> str:
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return "—"
    se = statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else None
    return f"{statistics.fmean(xs):.3f}" + (f" ± {se:.3f}" if se is not None else "")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="seeds of each peer [default: 1]")
    ap.add_argument("--dpkit-runs", type=int, default=5, help="seeds of dpkit's no-schema run [default: 5]")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--tables", default=",".join(ORDER))
    ap.add_argument("--models", default="mst")
    ap.add_argument("--aim-tables", default="zero-heavy",
                    help="the tables AIM runs on (~30 min a run here) [default: zero-heavy]")
    ap.add_argument("--fallback-proc-epsilon", type=float, default=SHARE)
    ap.add_argument("--peers-only", action="store_true", help="run the peers and write no report")
    ap.add_argument("--reuse", action="store_true", help="reuse the peers' outputs of an earlier run")
    ap.add_argument("--no-run", action="store_true",
                    help="with --reuse: run no peer, report only the runs an earlier run left")
    ap.add_argument("--out", default=str(DOC))
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    names = [n for n in a.tables.split(",") if n]
    unknown = [n for n in names if n not in TABLES and n not in AFFORDABLE]
    if unknown:
        ap.error(f"unknown table(s) {', '.join(unknown)}; known: {', '.join([*TABLES, *AFFORDABLE])}")
    models = [m for m in a.models.split(",") if m]
    proc = (PROC_EPSILON, a.fallback_proc_epsilon)
    start, load = time.time(), os.getloadavg()
    rows = []
    for name in names:
        t = _build(name)
        res: dict[str, list[dict[str, Any]]] = {m: [] for m in models}
        for seed in range(a.runs):
            for m in models:
                if m == "aim" and name not in a.aim_tables.split(","):
                    continue
                if a.no_run and not Path(f"{OUT / name}.{m}.eps{a.epsilon:g}.{seed}.meta.json").exists():
                    continue
                res[m].append(peer_point(name, t, m, a.epsilon, seed, proc, a.reuse))
                print(name, m, seed, {k: v for k, v in res[m][-1].items() if k != "bins"}, flush=True)
        if a.peers_only:
            continue
        from bench.bench_domain import OUT as DOMAIN_OUT

        DOMAIN_OUT.mkdir(parents=True, exist_ok=True)
        mine = [dpkit_point(name, t, s) for s in range(a.dpkit_runs)]
        print(name, "dpkit", mine, flush=True)
        rows.append((name, raw_auc(name, t), mine, res))
    if a.peers_only:
        return
    _write(a, rows, models, (time.time() - start) / 60, load)


def _write(a: argparse.Namespace, rows: list, models: list[str], minutes: float, load: tuple) -> None:
    head = (f"| table | set | raw AUC | dpkit no schema AUC ({a.dpkit_runs} runs) | dpkit seed 0 | dpkit s |"
            + "".join(f" {m.upper()} AUC | {m.upper()} s (CPU s) |" for m in models))
    lines = ["# dpkit's no-schema front door against dpmm's AIM and MST with no schema", "",
             f"Written by `python -m bench.bench_peers_frontdoor --runs {a.runs} --dpkit-runs {a.dpkit_runs} "
             f"--models {a.models}{' --aim-tables ' + a.aim_tables if 'aim' in models else ''} --tables {a.tables}"
             f"{' --reuse' if a.reuse else ''}{' --no-run' if a.no_run else ''}` ({minutes:.0f} min; load average {load[0]:.1f} at the start). "
             f"ε = {a.epsilon:g}, δ = {DELTA:g} for every method. ROC AUC of the test split's rarer class (mean ± "
             "standard error where more than one run, the peers' count of runs given then); seconds: median wall time of a run (dpkit: learn + release, "
             "the CSV read once per table not counted; the peers: preprocessing + fit + sample, and in brackets the "
             "worker's CPU seconds, the fairer figure on a shared machine). Protocol: the module docstring of "
             "bench/bench_peers_frontdoor.py.", "", head, "|---|---|---|---|---|---|" + "---|---|" * len(models)]

    def secs(pts: list[dict[str, Any]]) -> str:
        pts = [p for p in pts if not math.isnan(p.get("seconds", math.nan))]
        if not pts:
            return "—"
        cpu = [p["cpu"] for p in pts if "cpu" in p]
        return f"{statistics.median(p['seconds'] for p in pts):.3g}" + (
            f" ({statistics.median(cpu):.3g})" if cpu else "")

    for name, raw, mine, res in rows:
        cells = [name, "tuned on" if _tuned(name) else "held out", f"{raw:.3f}",
                 _mean([r["auc"] for r in mine]), f"{mine[0]['auc']:.3f}",
                 f"{statistics.median(r['seconds'] for r in mine):.2g}"]
        for m in models:
            pts = res[m]
            note = " (proc_epsilon " + ", ".join(f"{p['proc_epsilon']:g}" for p in pts if "proc_epsilon" in p) + ")" \
                if any(p.get("proc_epsilon", PROC_EPSILON) != PROC_EPSILON for p in pts) else ""
            runs = f" ({len(pts)} runs)" if len(pts) > 1 else ""
            cells += [_mean([p["auc"] for p in pts]) + runs + note, secs(pts)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## The peers' runs", ""]
    for name, _, _, res in rows:
        for m in models:
            for s, p in enumerate(res[m]):
                lines.append(f"- {name} {m.upper()} seed {s}: " + (
                    f"AUC {p['auc']:.3f}, accuracy {p['acc']:.3f}, {p['seconds']:.0f} s, proc_epsilon "
                    f"{p['proc_epsilon']:g}, bins {p['bins']}, static columns {p['static'] or 'none'}, "
                    f"{p['leak_warnings']} PrivacyLeakage warnings" if "seconds" in p and not math.isnan(p["seconds"])
                    else "failed") + ("; " + "; ".join(p["errors"]) if p.get("errors") else ""))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # the hand-written discussion below the generated part is kept
    keep = ""
    if out.exists() and "\n## Reading\n" in out.read_text():
        keep = "\n## Reading\n" + out.read_text().split("\n## Reading\n", 1)[1]
    out.write_text("\n".join(lines) + "\n" + keep)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
