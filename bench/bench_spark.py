"""numpy engine vs Spark ``local[2]`` vs ``local-cluster[2,1,1024]`` (``make bench-spark``).

The input is the Adult training set repeated to N rows (100k and 1M; also 10M with
``--large``). Each
configuration runs ``dpkit publish`` (13 levels) and ``dpkit cluster`` (DPQT on two numeric
columns) as a subprocess with ``--seed 1``; the outputs of the three engines must be the same
bytes. Measured: wall time, and the driver's peak memory — the Python process plus, on
Spark, the driver JVM it starts (the executor JVMs of ``local-cluster`` are not the driver and
are reported apart), sampled every 0.2 s with psutil. ``$DPKIT_SPARK_STATS`` makes dpkit print
its Spark jobs and their wall times, which give the cost model.

Options: ``--large`` (adds 10M rows), ``--sizes=N,N``, ``--append`` (keep the saved figures of
other sizes: run sizes at different times), ``--report-only``; ``$BENCH_SPARK_DATA=N=PATH,...``
uses pre-made (read-only) files instead of repeating Adult, e.g. bench/synth.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "spark"
ADULT = ROOT / "sample_data" / "adult" / "train.csv"
SCHEMA = ROOT / "taxonomies" / "adult.yaml"
DPKIT = str(Path(sys.executable).with_name("dpkit"))
CONFIGS = [("numpy", "numpy", None), ("spark local[2]", "spark", "local[2]"),
           ("spark local-cluster[2,1,1024]", "spark", "local-cluster[2,1,1024]")]


def given_data() -> dict[int, Path]:
    """Pre-made inputs: ``$BENCH_SPARK_DATA`` = ``N=PATH[,N=PATH...]`` (read-only; e.g. the
    synthetic 10M-row file of bench/bench_scale.py), used instead of repeating Adult."""
    out = {}
    for item in filter(None, os.environ.get("BENCH_SPARK_DATA", "").split(",")):
        n, _, path = item.partition("=")
        out[int(n)] = Path(path)
    return out


def make_data(n: int) -> Path:
    given = given_data().get(n)
    if given is not None:
        return given
    path = OUT / f"adult_{n}.csv"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    lines = ADULT.read_text(encoding="utf-8-sig").splitlines()
    header, rows = lines[0], lines[1:]
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(header + "\n")
        left = n
        while left > 0:
            chunk = rows[:left]
            fh.write("\n".join(chunk) + "\n")
            left -= len(chunk)
    tmp.replace(path)
    return path


def _sample(pid: int, peaks: dict[str, int], stop: threading.Event) -> None:
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not stop.is_set():
        try:
            procs = [root, *root.children(recursive=True)]
            driver = executors = 0
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    cmd = " ".join(p.cmdline())
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                if "CoarseGrainedExecutorBackend" in cmd:
                    executors += rss
                elif p.pid == pid or "java" in p.name() or "SparkSubmit" in cmd:
                    driver += rss
            peaks["driver"] = max(peaks.get("driver", 0), driver)
            peaks["executors"] = max(peaks.get("executors", 0), executors)
        except psutil.NoSuchProcess:
            break
        stop.wait(0.2)


def save(rows: list, costs: list) -> None:
    """The raw figures, so the report can be rebuilt without rerunning (``--report-only``)."""
    (OUT / "results.json").write_text(json.dumps({"rows": rows, "costs": costs}), encoding="utf-8")


def run(args: list[str]) -> dict:
    env = {**os.environ, "DPKIT_SPARK_STATS": "1", "PYSPARK_PYTHON": sys.executable}
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen([DPKIT, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    peaks: dict[str, int] = {}
    stop = threading.Event()
    t = threading.Thread(target=_sample, args=(proc.pid, peaks, stop), daemon=True)
    t.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    stop.set()
    t.join()
    if proc.returncode != 0:
        raise RuntimeError(f"dpkit {' '.join(args)} failed:\n{err[-2000:]}")
    stats = {}
    for line in err.splitlines():
        if line.startswith("dpkit-spark-stats "):
            stats = json.loads(line.split(" ", 1)[1])
    return {"wall": wall, "load": os.getloadavg()[0], "load_before": load_before, "driver_mb": peaks.get("driver", 0) / 2**20,
            "executors_mb": peaks.get("executors", 0) / 2**20, "stats": stats}


OUTPUTS = {"publish": "released.csv", "publish --counts": "counts.csv", "cluster": "centroids.csv"}


def commands(data: Path, out: Path) -> dict[str, list[str]]:
    return {
        "publish": ["publish", str(data), "--schema", str(SCHEMA), "--target", "income", "--epsilon", "1",
                    "--levels", "13", "--seed", "1", "-o", str(out / "released.csv"), "-q"],
        # the same run writing one line per released cell: the driver's memory without the
        # N released records it writes (dpkit/algorithms/publish/sparse.py write_release)
        "publish --counts": ["publish", str(data), "--schema", str(SCHEMA), "--target", "income", "--epsilon", "1",
                             "--levels", "13", "--seed", "1", "-o", str(out / "counts.csv"), "--counts", "-q"],
        "cluster": ["cluster", str(data), "--schema", str(SCHEMA), "--columns", "age,hours-per-week", "-k", "5",
                    "--epsilon", "1", "--seed", "1", "-o", str(out / "centroids.csv"), "-q"],
    }


def main(quick: bool = False, sizes: tuple[int, ...] = (100_000, 1_000_000), append: bool = False) -> str:
    if quick:
        sizes = (20_000, 100_000)
    rows = []
    costs = []
    if append and (OUT / "results.json").exists():  # add these sizes to an earlier run's figures
        saved = json.loads((OUT / "results.json").read_text(encoding="utf-8"))
        rows = [tuple(r) for r in saved["rows"] if r[0] not in sizes]
        costs = [tuple(c) for c in saved["costs"] if c[0] not in sizes]
    for n in sizes:
        data = make_data(n)
        outputs: dict[str, dict[str, bytes]] = {}
        for label, engine, master in CONFIGS:
            out = OUT / f"{n}-{engine}-{(master or 'np').replace('[', '_').replace(']', '').replace(',', '_')}"
            out.mkdir(parents=True, exist_ok=True)
            for name, args in commands(data, out).items():
                if name == "publish --counts" and master == "local[2]":
                    continue  # for the driver's memory: local[2]'s driver JVM holds the executors too
                extra = ["--engine", engine] + (["--spark-master", master] if master else [])
                r = run([*args, *extra])
                rows.append((n, name, label, r))
                outputs.setdefault(name, {})[label] = (out / OUTPUTS[name]).read_bytes()
                if r["stats"]:
                    costs.append((n, name, label, r["stats"]))
        for name, by in outputs.items():
            same = len(set(by.values())) == 1
            rows.append((n, name, "outputs identical on all engines", same))
    save(rows, costs)
    return report(rows, costs)


def _spark_parts(r: dict) -> tuple[float, float, int, float, float]:
    """(session start, read+encode job, aggregation jobs, their seconds, the rest of the wall)."""
    st = r.get("stats") or {}
    s0 = sum(st.get("session", [0.0]))
    enc = sum(st.get("read+encode", [0.0]))
    agg = st.get("aggregate", [])
    return s0, enc, len(agg), float(sum(agg)), r["wall"] - s0 - enc - float(sum(agg))


def report(rows: list, costs: list) -> str:
    rows = sorted(rows, key=lambda r: r[0])  # by N (stable: the engines' order within a size)
    loads = [x for *_, r in rows if isinstance(r, dict) for x in (r.get("load_before", r["load"]), r["load"])]
    loads = loads or [os.getloadavg()[0]]
    given = given_data()
    data = ("Inputs: " + ", ".join(f"N={n:,}: `{p}`" for n, p in sorted(given.items())) +
            " (synthetic Adult-schema rows: bench/bench_scale.py `write_synthetic`, columns resampled from the Adult training set)" if given else
            "Input: the Adult training set repeated to N rows (CSV)")
    lines = [
        "# Spark engine: numpy vs Spark local[2] vs local-cluster (make bench-spark)",
        "",
        f"Machine: {os.cpu_count()} cores, **shared with other jobs**: 1-minute load average "
        f"{min(loads):.1f}–{max(loads):.1f} over the runs (before and after each run in the last column;",
        "timings are noisy — compare the engines within one run, memory figures are robust). One run per cell.",
        f"{data}. `publish --levels 13 --epsilon 1 --seed 1` (and the same with `--counts`);",
        "`cluster --columns age,hours-per-week -k 5 --epsilon 1 --seed 1` (DPQT). Wall: the whole process.",
        "Driver memory: peak RSS of the dpkit process plus the driver JVM (Spark), sampled every",
        "0.2 s; the executor JVMs of local-cluster apart (with local[2] they live in the driver JVM).",
        "",
        "| N | command | engine | wall (s) | ×numpy | driver peak (MB) | executors peak (MB) | load before→after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    base = {}
    for n, name, label, r in rows:
        if isinstance(r, dict) and label == "numpy":
            base[(n, name)] = r["wall"]
    checks = []
    for n, name, label, r in rows:
        if not isinstance(r, dict):
            checks.append(f"- N={n:,} {name}: outputs byte-identical on all three engines: **{r}**")
            continue
        ratio = r["wall"] / base[(n, name)] if base.get((n, name)) else float("nan")
        lines.append(f"| {n:,} | {name} | {label} | {r['wall']:.1f} | {ratio:.1f} | {r['driver_mb']:.0f} | "
                     f"{r['executors_mb']:.0f} | {r.get('load_before', r['load']):.1f}→{r['load']:.1f} |")
    lines += ["", *checks, "", "## Where the time goes (Spark jobs, from `$DPKIT_SPARK_STATS`)", "",
              "Session start: `SparkSession.getOrCreate` (JVM start; local-cluster also starts the executor",
              "JVMs). Read+encode: the job that reads the input, encodes it on the executors and caches it",
              "(it also pays the first job's warm-up: JIT, Python workers). Aggregations: the jobs over the",
              "cached table. Rest: Python start-up and imports, the driver's own work (noise, selection,",
              "writing the outputs) and stopping Spark.",
              "",
              "| N | command | engine | session start (s) | read+encode job (s) | aggregation jobs | "
              "aggregations (s) | rest (s) |", "|---|---|---|---|---|---|---|---|"]
    for n, name, label, r in rows:
        if isinstance(r, dict) and r.get("stats"):
            s0, enc, j, agg, rest = _spark_parts(r)
            lines.append(f"| {n:,} | {name} | {label} | {s0:.1f} | {enc:.1f} | {j} | {agg:.1f} | {rest:.1f} |")
    # driver memory against N, per engine and command
    sizes = sorted({n for n, *_ in rows})
    if len(sizes) > 1:
        lines += ["", f"## Driver memory against N ({sizes[0]:,} → {sizes[-1]:,} rows)", "",
                  "| command | engine | " + " | ".join(f"driver MB at {n:,}" for n in sizes) + " | growth |",
                  "|---|---|" + "---|" * len(sizes) + "---|"]
        keys = []
        for _, name, label, r in rows:
            if isinstance(r, dict) and (name, label) not in keys:
                keys.append((name, label))
        for name, label in keys:
            got = {n: r["driver_mb"] for n, nm, lb, r in rows if isinstance(r, dict) and nm == name and lb == label}
            if len(got) < 2:
                continue
            first, last = got[min(got)], got[max(got)]
            lines.append(f"| {name} | {label} | " + " | ".join(f"{got.get(n, float('nan')):.0f}" for n in sizes)
                         + f" | {last - first:+.0f} MB ({last / first:.2f}×) |")
    lines += _cost_model(rows)
    return "\n".join(lines) + "\n"


def _cost_model(rows: list) -> list[str]:
    """Fixed and per-row costs from the local-cluster runs, extrapolated to 1B rows."""
    cluster = [(n, name, r) for n, name, label, r in rows if isinstance(r, dict) and "local-cluster" in label
               and r.get("stats")]
    sizes = sorted({n for n, *_ in cluster})
    if not sizes:
        return []
    top = sizes[-1]
    out = ["", "## Cost model, extrapolated to 1B rows (on paper)", ""]
    if len(sizes) > 1:
        low = sizes[-2]
        out += [f"From the local-cluster runs at N = {low:,} and {top:,}: the per-row cost of a job is the slope",
                "between the two sizes, its fixed cost the rest (e: read+encode, a: one aggregation over the cached",
                "table; J: aggregation jobs — publish: two, every attribute's marginal in one scan then the released",
                "cells; forest: two per tree level; DPQT: one). With noise this large a slope can come out wrong;",
                "the upper bound (every second per-row) is given too. T(1B, c cores) ≈ S + fixed + (e + J·a)·10⁹ / (c/2),",
                "S the session start, c/2 the speed-up over these 2 cores (assumed linear).", ""]
    else:
        low = None
        out += [f"From the local-cluster runs at N = {top:,}, counting every second of the read+encode job and",
                "of each aggregation as per-row work (an upper bound).", ""]
    out += ["| command | e (µs/row, 2 cores) | a (µs/row) | J | fixed (s) | 1B rows, these 2 cores | "
            "1B rows, 200 cores | upper bound, 200 cores |", "|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(nm for _, nm, _ in cluster):
        by = {n: r for n, nm, r in cluster if nm == name}
        if top not in by:
            continue
        s0, enc, j, agg, _ = _spark_parts(by[top])
        a_top = agg / j if j else 0.0
        upper = s0 + (enc + j * a_top) / top * 1e9 / 100
        if low is not None and low in by:
            _, enc0, j0, agg0, _ = _spark_parts(by[low])
            a_low = agg0 / j0 if j0 else 0.0
            e = max((enc - enc0) / (top - low), 0.0)
            a = max((a_top - a_low) / (top - low), 0.0)
            fixed = (enc - e * top) + j * (a_top - a * top)
        else:
            e, a, fixed = enc / top, a_top / top, 0.0
        t2 = s0 + fixed + (e + j * a) * 1e9
        t200 = s0 + fixed + (e + j * a) * 1e9 / 100
        out.append(f"| {name} | {e * 1e6:.2f} | {a * 1e6:.2f} | {j} | {fixed:.1f} | {t2 / 3600:.1f} h | "
                   f"{t200 / 60:.1f} min | {upper / 60:.1f} min |")
    out += ["", "A real cluster adds network and storage IO (dpkit's shuffles carry aggregates only). What the",
            "driver holds does not grow with N (docs/spark.md), except what it writes: `publish` writes about",
            "N released records (`--counts`: one line per released cell)."]
    return out


if __name__ == "__main__":
    large = "--large" in sys.argv
    sizes = (100_000, 1_000_000, 10_000_000) if large else (100_000, 1_000_000)
    for arg in sys.argv[1:]:
        if arg.startswith("--sizes="):  # e.g. --sizes=1000000,10000000
            sizes = tuple(int(x) for x in arg.split("=", 1)[1].split(","))
    if "--report-only" in sys.argv:
        saved = json.loads((OUT / "results.json").read_text(encoding="utf-8"))
        text = report([tuple(r) for r in saved["rows"]], [tuple(c) for c in saved["costs"]])
    else:
        text = main(quick="--quick" in sys.argv, sizes=sizes, append="--append" in sys.argv)
    out = ROOT / "docs" / "results" / "bench-spark.md"
    out.write_text(text, encoding="utf-8")
    print(text)
