"""Records mapped onto a released cut (`dpkit generalize`): the one function both engines run.

The numpy engine applies :class:`Generalizer` to its whole encoded table; the Spark engine
applies the same object to every Arrow batch on the executors (dpkit/engine/spark_write.py),
so a record's output row is the same on either engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.data.schema import Schema
from dpkit.release.cut import Cut


@dataclass
class Generalizer:
    """Encoded columns → a DataFrame of labels: a predictor's released cut node or interval,
    the class column's leaf name (kept as it is)."""

    columns: list[str]
    labels: dict[str, np.ndarray]  # column → label of each code (cut index or leaf code)
    cut: Cut

    @classmethod
    def of(cls, cut: Cut, schema: Schema, columns: Sequence[str]) -> Generalizer:
        labels = {}
        for name in columns:
            if name in cut.attributes:
                labels[name] = np.asarray(cut.attributes[name].labels(), dtype=object)
            else:
                labels[name] = np.asarray(schema.columns[name].leaves, dtype=object)  # type: ignore[union-attr]
        return cls(list(columns), labels, cut)

    def __call__(self, encoded: Mapping[str, np.ndarray]) -> Any:
        import pandas as pd

        out: dict[str, Any] = {}
        for name in self.columns:
            if name in self.cut.attributes:
                out[name] = self.labels[name][self.cut.attributes[name].codes(encoded[name])]
            else:
                out[name] = self.labels[name][np.asarray(encoded[name], dtype=np.int64)]
        return pd.DataFrame(out, columns=self.columns)
