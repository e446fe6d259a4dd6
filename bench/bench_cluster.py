"""Clustering benchmarks: DPQTk-means speed and memory, and diffprivlib's KMeans as a peer.

* Speed: :class:`dpkit.algorithms.cluster.DPQTKMeans` at ε = 1 on 100,000 and 10,000,000 synthetic
  points drawn from S1's cluster structure (each S1 cluster's mean and covariance, its
  share of the points), bounds [0, 1e6]^2, k = 15. Fit time in-process (data generation
  excluded) and peak resident memory of the process doing it (a fresh subprocess per size);
  also the wall time of the whole ``dpkit cluster`` command on a 100,000-row CSV.
* Utility at ε = 1 against diffprivlib 0.6.6's ``KMeans`` (same public bounds, 10 runs)
  on S1 (k = 15) and unbalance (k = 8): NICV as a ratio to non-private k-means
  (scikit-learn, n_init = 10) and F-measure against the labels.

diffprivlib 0.6.6 does not import with the installed scikit-learn (``sklearn.tree._tree``
lost ``DOUBLE``/``DTYPE``, used only by its forest module); :func:`_diffprivlib_kmeans`
adds those two names before importing, which does not touch the k-means code.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
S1 = ROOT / "sample_data" / "clustering" / "s1.csv"
UNBALANCE = ROOT / "sample_data" / "clustering" / "unbalance.csv"
BOX = ([0.0, 0.0], [1e6, 1e6])
TARGETS = {"100k": 3.0, "10m": 60.0, "10m_gb": 3.0}


def s1_like(n: int, seed: int = 0) -> np.ndarray:
    """``n`` points from Gaussians with S1's per-cluster means, covariances and shares."""
    import pandas as pd

    d = pd.read_csv(S1)
    rng = np.random.default_rng(seed)
    labels = sorted(d["label"].unique())
    shares = np.array([(d["label"] == c).mean() for c in labels])
    sizes = rng.multinomial(n, shares)
    out = np.empty((n, 2))
    at = 0
    for c, m in zip(labels, sizes, strict=True):
        pts = d.loc[d["label"] == c, ["x", "y"]].to_numpy(float)
        out[at : at + m] = rng.multivariate_normal(pts.mean(0), np.cov(pts.T), m)
        at += m
    return np.clip(out, 0, 1e6)


def _child(n: int) -> None:
    """Run in a subprocess: generate n points, fit DPQT, print JSON (seconds, peak GB)."""
    from dpkit.algorithms.cluster import DPQTKMeans
    from dpkit.privacy import Accountant, make_rng

    x = s1_like(n)
    DPQTKMeans(15, epsilon=1.0, bounds=BOX).fit(x[:1000], accountant=Accountant(1.0), rng=make_rng(0))  # warm imports
    t = time.perf_counter()
    c0 = time.process_time()
    m = DPQTKMeans(15, epsilon=1.0, bounds=BOX).fit(x, accountant=Accountant(1.0), rng=make_rng(1))
    wall = time.perf_counter() - t
    cpu = time.process_time() - c0
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(json.dumps({"seconds": wall, "cpu": cpu, "peak_gb": peak_gb, "height": m.height_,
                      "buckets": int(len(m.buckets_.counts))}))


def fit_in_subprocess(n: int) -> dict:
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from bench.bench_cluster import _child; _child({n})"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def cli_wall(n: int) -> tuple[float, float]:
    """Wall and CPU seconds of ``dpkit cluster`` (a fresh process) on an n-row CSV."""
    import pandas as pd

    exe = Path(sys.executable).parent / "dpkit"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "pts.csv"
        pd.DataFrame(np.round(s1_like(n, seed=3)).astype(int), columns=["x", "y"]).to_csv(data, index=False)
        cmd = [str(exe), "cluster", str(data), "--columns", "x,y", "-k", "15", "--epsilon", "1",
               "--bounds", "0:1e6,0:1e6", "-o", str(Path(tmp) / "c.csv"), "-q"]
        subprocess.run(cmd, check=True, capture_output=True)  # warm the file cache
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def _diffprivlib_kmeans():  # noqa: ANN202
    import sklearn.tree._tree as tree

    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    from diffprivlib.models import KMeans

    return KMeans


def utility(runs: int) -> list[dict]:
    import pandas as pd

    from dpkit.algorithms.cluster import DPQTKMeans
    from dpkit.evaluate.clustering import assign, f_measure, nicv, nonprivate_nicv
    from dpkit.privacy import Accountant, make_rng

    DPKM = _diffprivlib_kmeans()
    rows = []
    for name, path, k in (("S1", S1, 15), ("unbalance", UNBALANCE, 8)):
        d = pd.read_csv(path)
        x, y = d[["x", "y"]].to_numpy(float), d["label"].to_numpy()
        ref = nonprivate_nicv(x, k)
        for tool in ("dpkit dpqt", "diffprivlib KMeans"):
            ratios, fs, secs = [], [], []
            for seed in range(runs):
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if tool == "dpkit dpqt":
                        c = DPQTKMeans(k, epsilon=1.0, bounds=BOX).fit(
                            x, accountant=Accountant(1.0), rng=make_rng(seed)).cluster_centers_
                    else:
                        c = DPKM(n_clusters=k, epsilon=1.0, bounds=BOX, random_state=seed).fit(x).cluster_centers_
                secs.append(time.perf_counter() - t)
                ratios.append(nicv(x, c) / ref)
                fs.append(f_measure(y, assign(x, c)))
            rows.append({"data": name, "k": k, "tool": tool, "ratio": np.mean(ratios), "ratio_sd": np.std(ratios),
                         "f": np.mean(fs), "f_sd": np.std(fs), "seconds": np.mean(secs)})
    return rows


def main(quick: bool = False) -> str:
    big = 1_000_000 if quick else 10_000_000
    runs = 2 if quick else 10
    r100k = fit_in_subprocess(100_000)
    rbig = fit_in_subprocess(big)
    cli, cli_cpu = cli_wall(100_000)
    util = utility(runs)
    cpus = os.cpu_count()
    lines = [
        "## Clustering: DPQTk-means speed, memory and a peer",
        "",
        f"DPQTk-means (`dpkit.algorithms.cluster.DPQTKMeans`), ε = 1, k = 15, bounds [0, 1e6]², points drawn from "
        f"S1's cluster structure; fit time in-process (data generation and imports excluded), peak RSS of "
        f"the fitting process. Machine: {cpus} cores shared with other jobs ({platform.machine()}, "
        f"Python {platform.python_version()}) — wall times include waiting for a core.",
        "",
        "| points | fit wall (s) | fit CPU (s) | peak memory (GB) | tree height | buckets | target |",
        "|---:|---:|---:|---:|---:|---:|---|",
        f"| 100,000 | {r100k['seconds']:.2f} | {r100k['cpu']:.2f} | {r100k['peak_gb']:.2f} | {r100k['height']} | "
        f"{r100k['buckets']} | < {TARGETS['100k']:g} s |",
        f"| {big:,} | {rbig['seconds']:.2f} | {rbig['cpu']:.2f} | {rbig['peak_gb']:.2f} | {rbig['height']} | "
        f"{rbig['buckets']} | < {TARGETS['10m']:g} s, < {TARGETS['10m_gb']:g} GB |",
        "",
        f"Whole command `dpkit cluster pts.csv --columns x,y -k 15 --epsilon 1 --bounds 0:1e6,0:1e6` on a "
        f"100,000-row CSV (fresh process: start-up, imports — scikit-learn's alone is most of it — CSV "
        f"parsing, writing): {cli:.2f} s wall, {cli_cpu:.2f} s CPU.",
        "",
        f"### Utility at ε = 1 against diffprivlib's KMeans (mean ± sd of {runs} runs, bounds [0, 1e6]²)",
        "",
        "NICV ratio = NICV / NICV of non-private k-means (scikit-learn, n_init = 10); F = F-measure vs the labels.",
        "",
        "| data | k | tool | NICV ratio | F-measure | seconds per fit |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for r in util:
        lines.append(f"| {r['data']} | {r['k']} | {r['tool']} | {r['ratio']:.2f} ± {r['ratio_sd']:.2f} | "
                     f"{r['f']:.3f} ± {r['f_sd']:.3f} | {r['seconds']:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(main(quick="--quick" in sys.argv))
