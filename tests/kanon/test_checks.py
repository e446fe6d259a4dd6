"""check_table: k, records below k, distinct ℓ, histogram and discernibility on a hand table."""

from __future__ import annotations

import pandas as pd

from dpkit.algorithms.kanon.checks import check_table, size_histogram


def _table() -> pd.DataFrame:
    # classes on (a, b): (x,1)×3, (x,2)×1, (y,1)×2
    return pd.DataFrame({
        "a": ["x", "x", "x", "x", "y", "y"],
        "b": ["1", "1", "1", "2", "1", "1"],
        "s": ["p", "q", "p", "p", "r", "r"],
    })


def test_check_table_counts() -> None:
    c = check_table(_table(), ["a", "b"], k=2, sensitive="s", l=2)
    assert (c.k, c.classes, c.records, c.largest_class) == (1, 3, 6, 3)
    assert (c.classes_below_k, c.records_below_k) == (1, 1)
    assert c.discernibility == 9 + 1 + 4
    assert c.l == 1 and c.classes_below_l == 2 and c.records_below_l == 3
    assert not c.satisfied
    d = c.to_dict()
    assert d["k_anonymous"] is False and d["l_diverse"] is False
    assert "epsilon" not in str(d)


def test_check_satisfied_and_no_quasi_identifiers() -> None:
    c = check_table(_table(), ["a"], k=2)
    assert c.k == 2 and c.satisfied and c.average_class_ratio == 6 / 2 / 2
    whole = check_table(_table(), [], k=6)
    assert whole.k == 6 and whole.classes == 1


def test_histogram_buckets() -> None:
    import numpy as np

    h = size_histogram(np.array([1, 1, 4, 7, 30]), k=4)
    assert h == [
        {"min": 1, "max": 1, "classes": 2, "records": 2},
        {"min": 4, "max": 4, "classes": 1, "records": 4},
        {"min": 5, "max": 9, "classes": 1, "records": 7},
        {"min": 25, "max": 49, "classes": 1, "records": 30},
    ]
