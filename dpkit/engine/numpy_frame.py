"""The numpy engine: the frame protocol over in-memory encoded columns.

Keys are evaluated with :func:`dpkit.engine.keys.evaluate` and counted with
:mod:`dpkit.data.counting` (bincount, ravel_multi_index): the counting module stays the only
place in this process that scans records.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpkit.data import counting
from dpkit.data.table import EncodedTable
from dpkit.engine.keys import Key, evaluate, shape_check


class NumpyFrame:
    """A frame over an :class:`EncodedTable` (which it does not copy)."""

    engine = "numpy"

    def __init__(self, table: EncodedTable) -> None:
        self.table = table
        self.schema = table.schema
        self.source = table.source

    def count(self) -> int:
        return self.table.n_rows

    def column_names(self) -> list[str]:
        return list(self.table.columns)

    def _codes(self, keys: Sequence[Key]) -> list[np.ndarray]:
        return [evaluate(k, self.table.columns, 0, self.table.n_rows) for k in keys]

    def counts(self, keys: Sequence[Key], shape: Sequence[int]) -> np.ndarray:
        shape_check(keys, shape)
        return counting.dense_counts(self._codes(keys), shape)

    def cells(self, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        return counting.cell_counts(self._codes(keys), shape)

    def value_counts(self, column: str, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        return counting.value_key_counts(self.table.columns[column], self._codes(keys), shape)

    def sums(self, columns: Sequence[str], keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        values = [np.asarray(self.table.columns[c], dtype=float) for c in columns]
        return counting.exact_key_sums(values, self._codes(keys), shape)

    def many(self, requests: Sequence[tuple]) -> list:
        """Several ``("counts", keys, shape)`` / ``("value_counts", column, keys, shape)``."""
        out: list = []
        for req in requests:
            if req[0] == "counts":
                out.append(self.counts(req[1], req[2]))
            elif req[0] == "value_counts":
                out.append(self.value_counts(req[1], req[2], req[3]))
            else:
                raise ValueError(f"unknown request {req[0]!r}")
        return out

    def with_column(self, name: str, key: Key) -> NumpyFrame:
        cols = dict(self.table.columns)
        cols[name] = evaluate(key, self.table.columns, 0, self.table.n_rows)
        t = EncodedTable(schema=self.schema, columns=cols, n_rows=self.table.n_rows, source=self.source)
        return NumpyFrame(t)
