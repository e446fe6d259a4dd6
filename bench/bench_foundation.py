"""Foundation benchmarks: CLI start-up time and CSV load + encode throughput.

* ``dpkit --help`` wall time (a fresh process each run; median of 10): the cost a user pays
  on every command before any work, kept low by importing pandas & co. lazily.
* :func:`dpkit.io.table.load_table` (read CSV + encode against the schema) on Adult
  (32,561 rows) and on a synthetic 1,000,000-row table with Adult's schema
  (:func:`bench.synth.synthetic_adult`), in rows per second, in-process (imports excluded).
"""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from bench.synth import ADULT, SCHEMA, synthetic_adult

TARGETS = {"help": 0.5, "adult": 0.3, "million": 5.0}


def _dpkit_exe() -> list[str]:
    exe = Path(sys.executable).parent / "dpkit"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dpkit"]


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def process_times(cmd: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + sys) seconds of ``runs`` fresh processes running ``cmd``.

    CPU time is reported beside wall time because the machine is shared: wall time
    includes waiting for a core, CPU time does not.
    """
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    wall, cpu = [], []
    for _ in range(runs):
        c = _child_cpu()
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        wall.append(time.perf_counter() - t)
        cpu.append(_child_cpu() - c)
    return wall, cpu


def load_times(path: Path, runs: int) -> dict[str, list[float]]:
    """Seconds (wall, CPU) of ``load_table`` and of ``read_csv`` + ``encode`` over ``runs``."""
    from dpkit.data.encode import encode
    from dpkit.io.table import load_table, read_csv
    from dpkit.schema.parse import load_schema

    schema = load_schema(SCHEMA)
    out: dict[str, list[float]] = {"wall": [], "cpu": [], "read": [], "encode": [], "s_cpu": []}
    for _ in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the '?' rows dropped by the schema's policy
            c0, t0 = time.process_time(), time.perf_counter()
            load_table(path, schema)
            out["wall"].append(time.perf_counter() - t0)
            out["cpu"].append(time.process_time() - c0)
            c0, t0 = time.process_time(), time.perf_counter()
            df = read_csv(path)
            t1 = time.perf_counter()
            encode(df, schema, source=str(path))
            out["read"].append(t1 - t0)
            out["encode"].append(time.perf_counter() - t1)
            out["s_cpu"].append(time.process_time() - c0)
    out["rows"] = [float(len(df))]
    return out


def _rows(label: str, r: dict[str, list[float]], target: str) -> list[str]:
    med = statistics.median
    n = int(r["rows"][0])
    wall, strings = med(r["wall"]), med(r["read"]) + med(r["encode"])
    return [
        f"| `load_table`, {label} | {n:,} | {wall:.3f} s | {med(r['cpu']):.3f} s | {n / wall:,.0f} | {target} |",
        f"| `read_csv` + `encode` (strings path), {label} | {n:,} | {strings:.3f} s (read {med(r['read']):.3f} "
        f"+ encode {med(r['encode']):.3f}) | {med(r['s_cpu']):.3f} s | {n / strings:,.0f} | — |",
    ]


def main(quick: bool = False) -> str:
    runs_help = 5 if quick else 10
    runs_load = 3 if quick else 5
    big_rows = 100_000 if quick else 1_000_000
    med = statistics.median
    help_wall, help_cpu = process_times([*_dpkit_exe(), "--help"], runs_help)
    base_wall, base_cpu = process_times([sys.executable, "-c", "pass"], runs_help)
    rows = []
    rows.append(
        f"| `dpkit --help` start-up | — | {med(help_wall):.3f} s (min {min(help_wall):.3f}) | "
        f"{med(help_cpu):.3f} s | — | < {TARGETS['help']} s |"
    )
    rows.append(
        f"| (`python -c pass`, for scale) | — | {med(base_wall):.3f} s | {med(base_cpu):.3f} s | — | — |"
    )
    import pandas  # noqa: F401  (import cost is not part of the load benchmark)

    rows += _rows("Adult train.csv", load_times(ADULT, runs_load), f"< {TARGETS['adult']} s")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "synthetic-adult.csv"
        synthetic_adult(big_rows, seed=0, path=big)
        size_mb = big.stat().st_size / 1e6
        target = f"< {TARGETS['million']} s" if big_rows == 1_000_000 else "—"
        rows += _rows(f"synthetic Adult ({size_mb:.0f} MB)", load_times(big, max(2, runs_load - 2)), target)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    load1, load5, _ = os.getloadavg()
    cpus = os.cpu_count()
    lines = [
        "## Foundation: start-up and CSV load throughput",
        "",
        f"Command: `python -m bench.run foundation{' --quick' if quick else ''}`; ε: none (no privacy "
        f"mechanism runs). Start-up: median of {runs_help} fresh `dpkit --help` processes. Load: "
        f"`dpkit.io.table.load_table` (what the commands call: typed fast path) and, for "
        f"comparison, `read_csv` + `encode` (DataFrame of strings, then codes) against "
        f"`taxonomies/adult.yaml`, in-process (imports excluded), median of {runs_load} runs on Adult and {max(2, runs_load - 2)} on the synthetic "
        f"table (`bench.synth.synthetic_adult({big_rows:,}, seed=0)`: Adult's columns resampled "
        f"independently). Machine: {cpus} cores shared with other jobs (load average {load1:.1f} / "
        f"{load5:.1f} at the end: wall times are inflated by contention; CPU time is not), Python {platform.python_version()}, pandas {sys.modules['pandas'].__version__}; "
        f"peak RSS of the benchmark process {peak_mb:.0f} MB.",
        "",
        "| what | rows | wall time (median) | CPU time | rows/s (wall) | target (wall) |",
        "|---|---:|---|---:|---:|---|",
        *rows,
        "",
    ]
    section = "\n".join(lines)
    out = Path(__file__).resolve().parents[1] / "docs" / "results" / "bench-foundation.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(section, encoding="utf-8")
    return section


if __name__ == "__main__":
    print(main(quick="--quick" in sys.argv))
