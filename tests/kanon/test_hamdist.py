"""Greedy-Hamdist's score from value-by-class counts, against a brute-force pair count."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpkit.algorithms.kanon.hamdist import hamming_scores, pair_difference


def _brute(x: np.ndarray, y: np.ndarray, a: int, b: int) -> float:
    pairs = [(i, j) for i, j in itertools.product(range(len(x)), repeat=2) if y[i] == a and y[j] == b]
    return sum(x[i] != x[j] for i, j in pairs) / len(pairs)


def test_binary_score_is_fraction_of_differing_cross_pairs() -> None:
    x = np.array([0, 0, 1, 2, 1, 0, 2, 2])
    y = np.array([0, 1, 1, 0, 0, 1, 1, 0])
    got = hamming_scores({"x": (x, 3)}, y, 2)["x"]
    assert got == pytest.approx(_brute(x, y, 0, 1))


def test_multiclass_is_mean_over_class_pairs() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, 40)
    y = rng.integers(0, 3, 40)
    want = np.mean([_brute(x, y, a, b) for a, b in [(0, 1), (0, 2), (1, 2)]])
    assert hamming_scores({"x": (x, 4)}, y, 3)["x"] == pytest.approx(want)


def test_perfect_and_useless_features() -> None:
    y = np.array([0, 0, 1, 1])
    assert pair_difference(np.array([[2, 0], [0, 2]])) == 1.0  # separates the classes
    scores = hamming_scores({"same": (np.zeros(4, dtype=int), 1), "y": (y, 2)}, y, 2)
    assert scores["same"] == 0.0 and scores["y"] == 1.0
