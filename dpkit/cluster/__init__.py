"""Differentially private k-means: DPQTk-means and the DPk-means and EUGk-means baselines."""

from dpkit.cluster.dplloyd import DPKMeans
from dpkit.cluster.dpqt import DPQTKMeans
from dpkit.cluster.eug import EUGKMeans

ALGORITHMS = {"dpqt": DPQTKMeans, "dpkmeans": DPKMeans, "eug": EUGKMeans}

__all__ = ["ALGORITHMS", "DPKMeans", "DPQTKMeans", "EUGKMeans"]
