"""Records mapped onto a released cut (`dpkit generalize`): the one function both engines run.

The numpy engine applies :class:`Generalizer` to its whole encoded table; the Spark engine
applies the same object to every Arrow batch on the executors (dpkit/engine/spark/write.py),
so a record's output row is the same on either engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.data.schema import Schema
from dpkit.release.cut import MISSING_LABEL, CategoricalCut, Cut


@dataclass
class Generalizer:
    """Encoded columns → a DataFrame of labels: a predictor's released cut node or interval,
    the class column's leaf name (kept as it is). Every row comes out, in input order.

    A missing value (encoded against :meth:`~dpkit.data.schema.Schema.keeping_missing`: the
    ``(missing)`` leaf's code, NaN for a number) is labelled with the cut's node or bucket
    holding it when the released schema keeps missing values, else ``(missing)``: a release
    made under ``missing_policy: drop`` never saw such a record, and its row is not dropped
    here either (issue 36 item 3)."""

    columns: list[str]
    labels: dict[str, np.ndarray]  # column → label of each code (cut index or leaf code), then "(missing)"
    cut: Cut

    @classmethod
    def of(cls, cut: Cut, schema: Schema, columns: Sequence[str]) -> Generalizer:
        labels = {}
        for name in columns:
            if name in cut.attributes:
                names = cut.attributes[name].labels()
            else:
                names = list(schema.columns[name].leaves)  # type: ignore[union-attr]
            labels[name] = np.asarray([*names, MISSING_LABEL], dtype=object)  # code -1: (missing)
        return cls(list(columns), labels, cut)

    def codes(self, name: str, values: np.ndarray) -> np.ndarray:
        """The label index of each encoded value of ``name`` (-1: ``(missing)``)."""
        a = self.cut.attributes.get(name)
        if a is None:
            return np.asarray(values, dtype=np.int64)
        codes = np.asarray(a.codes(values), dtype=np.int64)
        if isinstance(a, CategoricalCut):
            codes[np.asarray(values) >= len(a.column.leaves)] = -1  # the (missing) leaf the cut does not hold
        elif a.missing_index() < 0:
            codes[np.isnan(np.asarray(values, dtype=float))] = -1
        return codes

    def __call__(self, encoded: Mapping[str, np.ndarray], index: Any = None) -> Any:
        import pandas as pd

        out = {name: self.labels[name][self.codes(name, encoded[name])] for name in self.columns}
        return pd.DataFrame(out, columns=self.columns, index=index)
