"""Differentially private k-means: DPQTk-means and the DPk-means and EUGk-means baselines."""

from typing import Any

from dpkit.algorithms.cluster.dplloyd import DPKMeans
from dpkit.algorithms.cluster.dpqt import DPQTKMeans
from dpkit.algorithms.cluster.eug import EUGKMeans

ALGORITHMS = {"dpqt": DPQTKMeans, "dpkmeans": DPKMeans, "eug": EUGKMeans}

#: the options each estimator takes besides k, epsilon and bounds
OPTIONS = {
    "dpqt": ("gamma", "max_height", "threshold", "threshold_sd", "height_sd", "allocation",
             "n_estimate", "split", "noise_floor"),
    "dpkmeans": ("iterations",),
    "eug": ("n_estimate",),
}


def make_model(
    algorithm: str, k: int, epsilon: float, bounds: tuple[Any, Any], params: dict[str, Any]
) -> DPQTKMeans | DPKMeans | EUGKMeans:
    """The estimator for ``algorithm``, taking its options from ``params`` (None = default).

    One place for the CLI and the sweep runner, so both build the same model.
    """
    from dpkit.errors import DpkitUsageError

    if algorithm not in ALGORITHMS:
        raise DpkitUsageError(f"algorithm must be dpqt, dpkmeans or eug, got {algorithm!r}")
    options = {n: params[n] for n in OPTIONS[algorithm] if params.get(n) is not None}
    return ALGORITHMS[algorithm](k, epsilon=epsilon, bounds=bounds, **options)


__all__ = ["ALGORITHMS", "DPKMeans", "DPQTKMeans", "EUGKMeans", "make_model"]
