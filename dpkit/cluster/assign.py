"""`cluster --assign`: every input row with its nearest released centroid (post-processing).

One function for both engines: the numpy engine applies :func:`assigned_rows` to the whole
table, the Spark engine to every Arrow batch on the executors (docs/spark.md), so a row's
label — and its output bytes — do not depend on the engine. The distance is
:func:`dpkit.data.counting.nearest_centre`'s, row by row.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def assigned_rows(df: Any, points: np.ndarray, kept: np.ndarray, centres: np.ndarray, column: str) -> Any:
    """``df`` (the raw rows) with ``column`` = the index of each kept row's nearest centre;
    rows dropped for a missing value get an empty label."""
    from dpkit.data.counting import nearest_centre

    assigned = df.copy()
    labels = np.full(len(df), "", dtype=object)
    labels[kept] = nearest_centre(points, centres).astype(str)
    assigned[column] = labels
    return assigned


def kept_rows(df: Any, columns: list[str], missing_tokens: tuple[str, ...] | list[str]) -> np.ndarray:
    """The rows of ``df`` that encoding keeps: no missing token in the clustered columns."""
    kept = np.ones(len(df), dtype=bool)
    for c in columns:
        kept &= ~np.isin(df[c].to_numpy(), list(missing_tokens))
    return kept
