"""Greedy-Hamdist's feature ranking: how well a feature separates the classes in Hamming distance.

Baseline of XGB-KA (Wang & Wan), after Zhang, Mohammed, Dave & Al Hasan, "Feature selection
for classification under anonymity constraint", Trans. Data Privacy 2017 (arXiv:1512.07158),
in the reading of docs/algorithms.md §4: a feature's score is the fraction of (positive,
negative) record pairs that differ on it,

    score(f) = 1 − Σ_v n₊(v) · n₋(v) / (N₊ · N₋),

computed from the value-by-class counts n_c(v) (no loop over record pairs). The ranked
features then go through the same greedy forward selection as XGB-KA
(:mod:`dpkit.algorithms.kanon.greedy`).

Departure (docs/algorithms.md §4 leaves it open): for a target with more than two classes the
score is the unweighted mean of the pairwise score over all unordered pairs of classes, so
that it needs no "positive" class and reduces to the formula above for two classes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dpkit.data.counting import class_counts


def pair_difference(counts: np.ndarray) -> float:
    """Mean over class pairs of the fraction of cross-class record pairs differing on a feature.

    ``counts`` is the ``(n_values, n_classes)`` value-by-class count table of one feature.
    Classes without records are left out (they form no pairs).
    """
    totals = counts.sum(axis=0).astype(float)
    present = np.flatnonzero(totals > 0)
    if len(present) < 2:
        return 0.0
    c = counts[:, present].astype(float)
    t = totals[present]
    # same[a, b] = Σ_v n_a(v) n_b(v): pairs from classes a and b that agree on the feature
    same = c.T @ c
    a, b = np.triu_indices(len(present), k=1)
    return float(np.mean(1.0 - same[a, b] / (t[a] * t[b])))


def hamming_scores(
    codes: Mapping[str, tuple[np.ndarray, int]], y: np.ndarray, n_classes: int
) -> dict[str, float]:
    """Greedy-Hamdist score of every feature (higher separates the classes better).

    ``codes[name] = (value codes in [0, n_values), n_values)``; ``y`` the class codes in
    ``[0, n_classes)``. Values are compared as they are (a numeric column's distinct values
    are its categories), as the Hamming distance does.
    """
    return {
        name: pair_difference(class_counts(c, y, n_values, n_classes))
        for name, (c, n_values) in codes.items()
    }
