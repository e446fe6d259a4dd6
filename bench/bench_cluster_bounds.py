"""cluster with no bounds (issue 22): bounds learned under DP against public bounds.

For each data set and ε: ``dpkit.cluster`` (DPQTk-means) with the public bounds, and with none
(10 % of ε learns them) at each bounds prior γ; the released centroids' SSE over non-private
k-means' (scikit-learn, n_init = 10), median and mean over keyed runs. s1 tuned the default
γ (dpkit.api.cluster.BOUND_PRIOR); unbalance and Gowalla are held out.

    python -m bench.bench_cluster_bounds --runs 10 > docs/results/cluster-bounds.md
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = [  # (name, path, k, columns, public bounds, role)
    ("s1", ROOT / "sample_data/clustering/s1.csv", 15, ["x", "y"], "0:1e6,0:1e6", "tuned on"),
    ("unbalance", ROOT / "sample_data/clustering/unbalance.csv", 8, ["x", "y"], "0:1e6,0:1e6", "held out"),
    ("gowalla", ROOT / "sample_data/gowalla/checkins.csv", 10, ["latitude", "longitude"], "-90:90,-180:180",
     "held out"),
]
GAMMAS = (0.25, 1.0)


def _sse(points: np.ndarray, centres: np.ndarray) -> float:
    d = ((points[:, None, :] - centres[None]) ** 2).sum(-1)
    return float(d.min(1).sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--epsilons", default="0.1,1")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    from sklearn.cluster import KMeans

    import dpkit
    import dpkit.api.cluster as api

    default = api.BOUND_PRIOR
    print("| data (k) | ε | public bounds | " + " | ".join(
        f"learned, γ {g:g}" + (" (default)" if g == default else "") for g in GAMMAS) + " |")
    print("|---|---|---|" + "---|" * len(GAMMAS))
    for name, path, k, cols, bounds, role in DATA:
        x = pd.read_csv(path)[cols].to_numpy(float)
        base = _sse(x, KMeans(k, n_init=10, random_state=0).fit(x).cluster_centers_)
        for eps in map(float, args.epsilons.split(",")):
            cells = []
            for gamma in (None, *GAMMAS):
                ratios = []
                for run in range(args.runs):
                    key = f"0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c{run + 16:02x}"
                    kw = {"bounds": bounds} if gamma is None else {}
                    api.BOUND_PRIOR = default if gamma is None else gamma
                    res = dpkit.cluster(str(path), n_clusters=k, epsilon=eps, columns=cols, random_state=key, **kw)
                    ratios.append(_sse(x, res.centroids[res.columns].to_numpy()) / base)
                cells.append(f"{np.median(ratios):.3g} (mean {np.mean(ratios):.3g})")
            api.BOUND_PRIOR = default
            print(f"| {name} ({k}), {role} | {eps:g} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nSSE of the released centroids / non-private k-means' SSE; median (mean) over {args.runs} "
          "keyed runs; DPQTk-means defaults; 10 % of ε learns the bounds when none are given.")


if __name__ == "__main__":
    main()
