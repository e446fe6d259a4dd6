"""Scale on one machine: each command's whole-process wall time and peak RSS on 1M and 10M
Adult-schema rows, beside DuckDB's ``read_csv`` + ``GROUP BY`` of the same file (issue 12).

``make bench-scale`` (``python -m bench.run scale``) writes ``docs/results/bench-scale.md``.
Sizes: ``BENCH_SCALE_ROWS`` (comma-separated, default ``1000000,10000000``; ``--quick``:
100000); ``BENCH_SCALE_ROWS=100000000`` is the opt-in 100M run (~11 GB, generated in
chunks and deleted afterwards). Every process is measured by ``/usr/bin/time`` (its wall
clock and peak RSS), the peer in the same run, on the same file, so the ratio holds even
on a loaded machine; the load average is printed beside the table.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "taxonomies" / "adult.yaml"
CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
               "native-country", "income"]
TIMEOUT = float(os.environ.get("BENCH_SCALE_TIMEOUT", "1800"))
CHUNK = 1_000_000


def write_synthetic(n_rows: int, path: Path) -> None:
    """Adult-like rows (bench/synth.py's marginals), written a million rows at a time."""
    from bench.synth import synthetic_adult

    with open(path, "w", encoding="utf-8", newline="") as fh:
        done, i = 0, 0
        while done < n_rows:
            k = min(CHUNK, n_rows - done)
            df = synthetic_adult(k, seed=i)
            df.to_csv(fh, index=False, header=(i == 0), lineterminator="\n")
            done, i = done + k, i + 1


TIME = "/usr/bin/time"


def measure(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit status) of one process.

    Run under ``/usr/bin/time`` (a small process) when it exists: a child forked straight
    from this benchmark would inherit its resident set (the generated data) in ``ru_maxrss``.
    """
    if os.path.exists(TIME):
        with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
            start = time.perf_counter()
            proc = subprocess.run([TIME, "-f", "%e %M", "-o", out.name, *argv], cwd=cwd,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=TIMEOUT)
            wall = time.perf_counter() - start
            fields = out.read().split()
        code = proc.returncode
        if code != 0:
            print(f"bench-scale: {' '.join(argv[:4])} exited {code}: {proc.stderr.decode(errors='replace')[-400:]}",
                  file=sys.stderr)
        return wall, (float(fields[-1]) / 1024 if fields else float("nan")), code
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + TIMEOUT
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return float("inf"), usage.ru_maxrss / 1024, -9
        time.sleep(0.05)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        print(f"bench-scale: {' '.join(argv[:3])} exited {code}: {err.strip()[-400:]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, code


def duckdb_argv(path: Path) -> list[str]:
    cols = ", ".join(f'"{c}"' for c in CATEGORICAL)
    query = f"SELECT {cols}, count(*) FROM read_csv({str(path)!r}) GROUP BY ALL"
    return [sys.executable, "-c", f"import duckdb; duckdb.connect().execute({query!r}).fetchall()"]


def commands(path: Path, out: Path) -> dict[str, list[str]]:
    dpkit = [sys.executable, "-m", "dpkit"]
    s = str(SCHEMA)
    load_only = (
        "import warnings; warnings.simplefilter('ignore'); "
        "from dpkit.schema.parse import load_schema; from dpkit.io.source import ReadOptions; "
        f"from dpkit.io.table import load; load(ReadOptions({str(path)!r}), load_schema({s!r}))"
    )
    return {
        "load only (every used column, dpkit.io.table.load)": [sys.executable, "-c", load_only],
        "publish (default flags: --levels auto)": [*dpkit, "publish", str(path), "--schema", s, "--target",
                                                   "income", "--epsilon", "1", "-q", "-o", str(out / "rel.csv")],
        "publish (--levels 13)": [*dpkit, "publish", str(path), "--schema", s, "--target", "income",
                                  "--epsilon", "1", "--levels", "13", "-q", "-o", str(out / "rel.csv")],
        "publish without a schema (--target income --ignore fnlwgt --delta 1e-6)": [
            *dpkit, "publish", str(path), "--target", "income", "--ignore", "fnlwgt", "--epsilon", "1", "--delta",
            "1e-6", "-q", "-o", str(out / "rel-learned.csv")],
        "cluster (age, hours-per-week; k=5)": [*dpkit, "cluster", str(path), "--columns", "age,hours-per-week",
                                               "-k", "5", "--schema", s, "--epsilon", "1", "-q",
                                               "-o", str(out / "centroids.csv")],
        "kanon-select (k=10)": [*dpkit, "kanon-select", str(path), "--schema", s, "--target", "income",
                                "-k", "10", "-q", "-o", str(out / "kanon.csv")],
        "forest train (25 trees, depth 5)": [*dpkit, "forest", "train", str(path), "--schema", s,
                                             "--target", "income", "--trees", "25", "--depth", "5",
                                             "--epsilon", "1", "-q", "-o", str(out / "model.json")],
    }


def main(quick: bool = False) -> str:
    sizes = [int(x) for x in os.environ.get("BENCH_SCALE_ROWS", "1000000,10000000").split(",") if x.strip()]
    if quick:
        sizes = [100_000]
    only = [x.strip() for x in os.environ.get("BENCH_SCALE_COMMANDS", "").split(",") if x.strip()]
    load_before = os.getloadavg()
    lines = [
        "# Scale: wall time and peak RSS against DuckDB (issue 12)",
        "",
        "Generated by `make bench-scale` (`bench/bench_scale.py`). Data: synthetic Adult-schema CSV "
        "(`bench/synth.py`: every column resampled from `sample_data/adult/train.csv`, with its `?` "
        "missing tokens; ~108 bytes a row). Each figure is one whole process (`python -m dpkit ...`, "
        "wall clock, and peak RSS from `/usr/bin/time`), one run each. The peer, measured in the same "
        "run on the same file: DuckDB `read_csv` + `GROUP BY` the 9 categorical columns, `count(*)`. "
        "Ratios are dpkit / DuckDB. Targets (issue 12): publish 10M ≤ 1.5× DuckDB wall and ≤ 1.5 GB; "
        "cluster 10M ≤ 1.5× DuckDB; forest train 10M ≤ 60 s. Issue 36: publish without a schema 10M "
        "≤ 1.5× the same run with a schema and ≤ 1.5 GB.",
        "",
        "| rows | command | wall (s) | peak RSS (MB) | wall / DuckDB | RSS / DuckDB |",
        "|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="dpkit-scale-") as tmp:
        tmpdir = Path(tmp)
        for n in sizes:
            data = tmpdir / f"adult-{n}.csv"
            write_synthetic(n, data)
            size_mb = data.stat().st_size / 1e6
            duck = measure(duckdb_argv(data), ROOT)
            lines.append(f"| {n:,} | DuckDB read_csv + GROUP BY ({size_mb:,.0f} MB file) | {duck[0]:.1f} | "
                         f"{duck[1]:,.0f} | 1 | 1 |")
            for name, argv in commands(data, tmpdir).items():
                if only and not any(o in name for o in only):
                    continue
                wall, rss, code = measure(argv, ROOT)
                if code == -9:
                    lines.append(f"| {n:,} | {name} | > {TIMEOUT:.0f} (stopped) | {rss:,.0f} | | |")
                    continue
                note = "" if code == 0 else f" (exit {code})"
                lines.append(f"| {n:,} | {name}{note} | {wall:.1f} | {rss:,.0f} | {wall / duck[0]:.2f} | "
                             f"{rss / duck[1]:.2f} |")
                print(lines[-1], file=sys.stderr, flush=True)
            data.unlink()  # the 100M file is ~11 GB: never left behind
    load_after = os.getloadavg()
    lines += [
        "",
        f"Machine: {os.cpu_count()} cores; load average (1 min) {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after (a shared machine: other jobs ran meanwhile, so read the ratios, "
        "not the absolute times).",
        "",
        "Earlier measurements, paired runs against DuckDB and the 100M rows, with what changed between "
        "them: [scale-history.md](scale-history.md) (written by hand; this page is regenerated).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(main(quick="--quick" in sys.argv))
