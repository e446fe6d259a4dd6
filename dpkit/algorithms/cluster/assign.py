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


def kept_rows(df: Any, columns: list[str], schema: Any) -> np.ndarray:
    """The rows of ``df`` that :func:`dpkit.data.encode.encode` keeps for ``schema`` (after it
    accepted them): a value of a clustered column that is no number (or date) — a missing token,
    or any text under ``unparsable: missing`` — drops its row, unless the column keeps missing
    values (its missing bucket)."""
    from dpkit.data.encode import _numbers

    kept = np.ones(len(df), dtype=bool)
    for c in columns:
        col = schema.columns[c]
        if not col.missing:
            kept &= np.isfinite(_numbers(df[c].to_numpy(), col))
    return kept


class Assigner:
    """Raw rows (strings, as read) → the same rows with their nearest centre's index in
    ``label``: the clustered columns encoded with the points' ``schema`` (clipped to its
    bounds, missing tokens dropped as encoding drops them), then :func:`assigned_rows`.

    One picklable object both engines apply — the numpy engine to the whole table, the Spark
    row writer to every batch on the executors — so a row's label does not depend on the
    engine. Encoding warnings were given once when the points were read: ``quiet`` hides them.
    """

    def __init__(self, schema: Any, columns: list[str], centres: np.ndarray, label: str, source: str,
                 first_line: int | None = 2, *, quiet: bool = True) -> None:
        self.schema = schema
        self.columns = list(columns)
        self.centres = np.asarray(centres, dtype=float)
        self.label = label
        self.source = source
        self.first_line = 2 if first_line is None else first_line
        self.quiet = quiet

    def __call__(self, df: Any) -> Any:
        import warnings

        from dpkit.data.encode import encode

        with warnings.catch_warnings():
            if self.quiet:
                warnings.simplefilter("ignore")
            table = encode(df, self.schema, self.columns, source=self.source, first_line=self.first_line)
        points = np.stack([np.asarray(table.columns[c], dtype=float) for c in self.columns], axis=1)
        return assigned_rows(df, points, kept_rows(df, self.columns, self.schema), self.centres, self.label)
