"""One cell of a clustering sweep (``configs/experiments/dpqt.yaml``), run in-process.

``run_experiment(params, seed)`` runs one algorithm on one data set with the real library
code and returns {nicv, nicv_ratio, f_measure (when labels are given), rcp_vs_eug is not
computed here (compare the sweep's rows), epsilon_spent, seconds}. The non-private k-means
NICV (scikit-learn, n_init = 10) is cached per data set, columns and k.

params: ``algorithm`` (dpqt|dpkmeans|eug), ``epsilon``, ``data`` (CSV path, relative to
the working directory or the repository), ``columns`` (list or "x,y"), ``k``, ``bounds``
(list of [lo, hi] or "lo:hi,lo:hi"), optional ``labels`` (column), and algorithm options
(``gamma``, ``max_height``, ``threshold``, ``allocation``, ``iterations``, ``n_estimate``).
"""

from __future__ import annotations

import time
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.algorithms.cluster.common import parse_bounds

REPO = Path(__file__).resolve().parents[2]


def _path(p: str) -> Path:
    q = Path(p)
    return q if q.exists() or q.is_absolute() else REPO / q


@lru_cache(maxsize=16)
def load_points(data: str, columns: tuple[str, ...], labels: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The columns of a CSV as an (n, d) float array, and the label column if named."""
    import pandas as pd

    df = pd.read_csv(_path(data), usecols=list(columns) + ([labels] if labels else []))
    x = df[list(columns)].to_numpy(dtype=float)
    y = df[labels].to_numpy() if labels else None
    return x, y


@lru_cache(maxsize=64)
def reference_nicv(data: str, columns: tuple[str, ...], k: int) -> float:
    """Non-private k-means NICV (scikit-learn, n_init = 10), cached per data set and k."""
    from dpkit.evaluate.clustering import nonprivate_nicv

    x, _ = load_points(data, columns, None)
    return nonprivate_nicv(x, k)


def run_experiment(params: dict[str, Any], seed: int) -> dict[str, float]:
    """Run one clustering with :func:`dpkit.cluster` (``params`` and ``seed``); return its metrics.

    The run books on ``$DPKIT_LEDGER`` when it is set, as every library call does.
    """
    from dpkit.algorithms.cluster import OPTIONS
    from dpkit.api.cluster import cluster
    from dpkit.evaluate.clustering import assign, f_measure, nicv

    cols = params["columns"]
    columns = tuple(c.strip() for c in cols.split(",")) if isinstance(cols, str) else tuple(cols)
    labels = params.get("labels")
    k = int(params["k"])
    algorithm = str(params.get("algorithm", "dpqt"))
    lows, highs = parse_bounds(params["bounds"])
    x, y = load_points(str(params["data"]), columns, labels)
    x = np.clip(x, lows, highs)  # public bounds: the run clips the same way
    options = {n: params[n] for n in OPTIONS.get(algorithm, ()) if params.get(n) is not None}
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = cluster(str(_path(str(params["data"]))), n_clusters=k, epsilon=float(params["epsilon"]),
                         columns=list(columns), bounds=params["bounds"], algorithm=algorithm, random_state=seed, **options)
    seconds = time.perf_counter() - start
    centers = result.centroids[result.columns].to_numpy(dtype=float)
    value = nicv(x, centers)
    out = {
        "nicv": value,
        "nicv_ratio": value / reference_nicv(str(params["data"]), columns, k),
        "epsilon_spent": float(result.report["privacy"]["epsilon_spent"]),
        "seconds": seconds,
    }
    if y is not None:
        out["f_measure"] = f_measure(y, assign(x, centers))
    return out
