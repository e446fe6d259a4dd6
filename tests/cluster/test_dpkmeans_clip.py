"""F2 of the privacy review: DPKMeans must clip points to the public box itself."""

import numpy as np

from dpkit.algorithms.cluster.dplloyd import DPKMeans
from dpkit.privacy import Accountant, make_rng


def _fit(points):
    model = DPKMeans(n_clusters=1, epsilon=100.0, bounds=([0.0, 0.0], [1.0, 1.0]))
    return model.fit(np.asarray(points, dtype=float), accountant=Accountant(100.0), rng=make_rng(1))


def test_an_outlier_far_outside_the_box_counts_as_a_point_on_its_edge():
    base = np.random.default_rng(0).uniform(0.0, 0.2, size=(400, 2))
    with_outlier = np.vstack([base, [[1e9, 1e9]]])
    c = _fit(with_outlier).cluster_centers_
    # unclipped, one point at 1e9 drags the centre to the corner (1, 1)
    assert np.all(c < 0.5), c
