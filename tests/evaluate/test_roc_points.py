"""The ROC curve's points the release card draws (metrics.roc_points)."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import auc, roc_curve

from dpkit.evaluate.metrics import roc_points


def test_points_are_scikit_learns_and_thinned() -> None:
    rng = np.random.default_rng(0)
    y = np.where(rng.random(2000) < 0.3, "yes", "no").astype(object)
    s = rng.random((2000, 2))
    s[:, 1] += (y == "yes") * 0.3
    got = roc_points(y, s, ["no", "yes"], "yes", max_points=50)
    fpr, tpr, _ = roc_curve(y == "yes", s[:, 1])
    assert got["positive"] == "yes" and len(got["fpr"]) <= 50 < len(fpr)
    assert got["fpr"][0] == 0 and got["fpr"][-1] == 1 and got["tpr"][-1] == 1
    assert np.all(np.diff(got["fpr"]) >= 0) and np.all(np.diff(got["tpr"]) >= 0)
    assert abs(auc(got["fpr"], got["tpr"]) - auc(fpr, tpr)) < 0.01
    small = roc_points(y[:20], s[:20], ["no", "yes"], "yes")
    full = roc_curve(y[:20] == "yes", s[:20, 1])
    assert small["fpr"] == [round(float(x), 5) for x in full[0]]


def test_undefined_curves_are_none() -> None:
    y = np.array(["a", "a", "a"], dtype=object)
    s = np.ones((3, 2))
    assert roc_points(y, s, ["a", "b"], "a") is None  # one class present
    assert roc_points(np.array(["a", "b"], dtype=object), np.ones((2, 2)), ["a", "b"], "c") is None
