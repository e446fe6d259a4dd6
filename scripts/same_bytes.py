"""Run every command with fixed seeds and keep the outputs, to check that a change keeps the bytes.

    python scripts/same_bytes.py run DIR [--spark]     # outputs of this checkout into DIR
    python scripts/same_bytes.py compare OLD NEW       # byte-compare two such directories

Every command runs with the current directory a scratch folder holding links to the repository's
``sample_data/`` and ``taxonomies/``, so the paths written into reports are the same strings
whichever checkout ran them. ``--spark`` adds the Spark engine (local[2]) for each command that has
it. Exit status of ``compare``: 0 when every file is identical (a kanon-select report may differ
in its wall-clock ``release.seconds`` only), 1 otherwise (the differing files are listed).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEY = "0x28aa79597b38bd41138f8e7bc7b35aaf"  # a 128-bit key (a seeded run that keeps ε-DP)
ADULT = ["sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml", "--target", "income"]


def commands(spark: bool) -> list[tuple[str, list[str]]]:
    """(name, argv after ``dpkit``) of every run; each writes into ``out/<name>...``."""
    runs: list[tuple[str, list[str]]] = []
    for seed_name, seed in (("int", "7"), ("key", KEY)):
        s = ["--seed", seed]
        runs += [
            (f"publish-{seed_name}", ["publish", *ADULT, "--epsilon", "1", *s, "-o", f"out/publish-{seed_name}.csv"]),
            (f"publish13-{seed_name}", ["publish", *ADULT, "--epsilon", "1", "--levels", "13", *s,
                                        "-o", f"out/publish13-{seed_name}.csv"]),
            (f"publish-counts-{seed_name}", ["publish", *ADULT, "--epsilon", "0.5", "--counts", *s,
                                             "-o", f"out/publish-counts-{seed_name}.csv"]),
            (f"publish-parquet-{seed_name}", ["publish", *ADULT, "--epsilon", "1", *s,
                                              "-o", f"out/publish-parquet-{seed_name}.parquet"]),
            (f"diffgen-{seed_name}", ["publish", *ADULT, "--epsilon", "1", "--algorithm", "diffgen", "--levels", "6",
                                      *s, "-o", f"out/diffgen-{seed_name}.csv"]),
            (f"forest-{seed_name}", ["forest", "train", *ADULT, "--epsilon", "1", "--trees", "5", "--depth", "3", *s,
                                     "-o", f"out/forest-{seed_name}.json"]),
            (f"cluster-{seed_name}", ["cluster", "sample_data/clustering/s1.csv", "--columns", "x,y", "-k", "15",
                                      "--epsilon", "1", "--bounds", "0:1e6,0:1e6", *s,
                                      "--histogram", f"out/cluster-hist-{seed_name}.csv",
                                      "-o", f"out/cluster-{seed_name}.csv"]),
            (f"dpkmeans-{seed_name}", ["cluster", "sample_data/clustering/s1.csv", "--columns", "x,y", "-k", "15",
                                       "--epsilon", "1", "--bounds", "0:1e6,0:1e6", "--algorithm", "dpkmeans", *s,
                                       "-o", f"out/dpkmeans-{seed_name}.csv"]),
            (f"eug-{seed_name}", ["cluster", "sample_data/clustering/s1.csv", "--columns", "x,y", "-k", "15",
                                  "--epsilon", "1", "--bounds", "0:1e6,0:1e6", "--algorithm", "eug", *s,
                                  "--assign", f"out/eug-assign-{seed_name}.csv", "-o", f"out/eug-{seed_name}.csv"]),
        ]
    runs += [
        ("generalize", ["generalize", "sample_data/adult/test.csv", "--cut", "out/publish-int.report.json",
                        "-o", "out/generalize.csv"]),
        ("generalize-parquet", ["generalize", "sample_data/adult/test.csv", "--cut", "out/publish-key.report.json",
                                "-o", "out/generalize.parquet"]),
        ("predict", ["forest", "predict", "out/forest-int.json", "sample_data/adult/test.csv", "--proba",
                     "-o", "out/predict.csv"]),
        ("kanon", ["kanon-select", "sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml",
                   "--target", "income", "-k", "10", "--seed", "3", "-o", "out/kanon.csv"]),
        ("kanon-hamming", ["kanon-select", "sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml",
                           "--target", "income", "-k", "25", "--ranker", "hamming", "-o", "out/kanon-hamming.csv"]),
        ("kanon-gen", ["kanon-select", "sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml",
                       "--target", "income", "-k", "10", "--generalize", "--seed", "3", "-o", "out/kanon-gen.csv"]),
        ("generalize-kanon", ["generalize", "sample_data/adult/test.csv", "--cut", "out/kanon-gen.report.json",
                              "-o", "out/generalize-kanon.csv"]),
        ("infer", ["taxonomy", "infer", "sample_data/iris/iris.csv", "--target", "species", "-o", "out/infer.yaml"]),
        # without a schema: the domain learned under DP inside the run, its schema written beside the output
        ("publish-noschema", ["publish", "sample_data/adult/train.csv", "--target", "income", "--epsilon", "1",
                              "--delta", "1e-6", "--seed", KEY, "-o", "out/publish-noschema.csv"]),
        ("forest-noschema", ["forest", "train", "sample_data/adult/train.csv", "--target", "income", "--epsilon", "1",
                             "--delta", "1e-6", "--trees", "5", "--depth", "3", "--seed", KEY,
                             "-o", "out/forest-noschema.json"]),
        ("infer-private", ["taxonomy", "infer", "sample_data/adult/train.csv", "--target", "income", "--epsilon", "1",
                           "--delta", "1e-6", "--seed", KEY, "-o", "out/infer-private.yaml"]),
        # no bounds and no schema: a share of ε learns the box (the run's budget plan), k-means the rest
        ("cluster-learned", ["cluster", "sample_data/clustering/s1.csv", "--columns", "x,y", "-k", "15",
                             "--epsilon", "1", "--seed", KEY, "-o", "out/cluster-learned.csv"]),
    ]
    if spark:
        spark_runs = []
        for name, argv in runs:
            if argv[0] in ("publish", "generalize", "cluster", "kanon-select") or argv[:2] == ["forest", "train"]:
                if "--generalize" in argv or name == "generalize-kanon":
                    continue  # numpy only
                spark_argv = [a.replace("out/", "out/spark-") if a.startswith("out/") and "report.json" not in a
                              else a for a in argv]
                spark_runs.append((f"spark-{name}", [*spark_argv, "--engine", "spark", "--spark-master", "local[2]"]))
        runs += spark_runs
    return runs


def run(directory: Path, spark: bool) -> int:
    directory = directory.resolve()
    out = directory / "out"
    shutil.rmtree(directory, ignore_errors=True)
    out.mkdir(parents=True)
    scratch = Path(tempfile.mkdtemp(prefix="dpkit-same-bytes."))
    try:
        for name in ("sample_data", "taxonomies"):
            (scratch / name).symlink_to(REPO / name)
        (scratch / "out").symlink_to(out)
        env = dict(os.environ, PYTHONPATH=str(REPO), DPKIT_LEDGER="", DPKIT_ENGINE="")
        failed = 0
        for name, argv in commands(spark):
            proc = subprocess.run([sys.executable, "-m", "dpkit", "-q", *argv], cwd=scratch, env=env,
                                  capture_output=True, text=True)
            (out / f"{name}.exit").write_text(f"{proc.returncode}\n")
            if proc.returncode:
                failed += 1
                print(f"{name}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _same_but_timing_and_version(a: Path, b: Path) -> bool:
    """Equal but for what may change between two runs of the same release: the dpkit version
    that reports, model files and learned schemas name (a release's version changes; its outputs'
    bytes must not), and the wall-clock seconds of kanon-select's reports (release.seconds)."""
    import json
    import re

    version = re.compile(rb'("dpkit_version": "|dpkit )\d+\.\d+\.\d+')
    da, db = (version.sub(rb"\1X", p.read_bytes()) for p in (a, b))
    if da == db or not a.name.endswith(".report.json"):
        return da == db
    ja, jb = json.loads(da), json.loads(db)
    for d in (ja, jb):
        d.get("release", {}).pop("seconds", None)
    return ja == jb


def compare(old: Path, new: Path) -> int:
    a, b = old / "out", new / "out"
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    bad = []
    for name in names:
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            bad.append(f"{name}: only in {'new' if not pa.exists() else 'old'}")
        elif pa.is_dir() or pb.is_dir():
            continue
        elif not filecmp.cmp(pa, pb, shallow=False) and not _same_but_timing_and_version(pa, pb):
            bad.append(f"{name}: differs")
    print(f"{len(names) - len(bad)} of {len(names)} files identical")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run")
    r.add_argument("directory", type=Path)
    r.add_argument("--spark", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("old", type=Path)
    c.add_argument("new", type=Path)
    args = ap.parse_args()
    if args.verb == "run":
        return run(args.directory, args.spark)
    return compare(args.old, args.new)


if __name__ == "__main__":
    sys.exit(main())
