"""The encoded table: what every loader produces and every engine counts over.

Categorical columns hold leaf codes (the smallest of int8/int16/int32 that holds them, in
the leaf order of the schema's taxonomy), numeric columns the values clipped to the public
bounds (whole numbers in the smallest integer type that holds the bounds, else float64).
Its own module so that both readers — the columnar one (:mod:`dpkit.data.columnar`) and
the exact one (:mod:`dpkit.data.table`) — build it without importing each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpkit.data.schema import Schema


@dataclass
class EncodedTable:
    """Columns as numpy arrays, aligned row by row. ``n_rows`` is private: never report it."""

    schema: Schema
    columns: dict[str, np.ndarray]
    n_rows: int
    source: str = "<data>"

    def __len__(self) -> int:
        return self.n_rows


def is_number(value: str) -> float | None:
    """The finite float a value reads as on load (:func:`dpkit.data.table.encode` and the columnar reader), else None."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
