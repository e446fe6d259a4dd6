"""String frames: a table's columns as codes of their values *as written*, for k-anonymity.

k-anonymity's equivalence classes are on the released values — the strings of the file, so
"40" and "40.0" are two values — not on a schema's encoding. A string frame holds every loaded
column as integer codes of its distinct strings, numbered in order of first appearance (the
numbering of ``pandas.factorize``), with the distinct strings themselves (:meth:`values`). It
answers the frame protocol (:mod:`dpkit.engine.frame`) like any frame, plus what a
selection over rows needs:

- :meth:`where` — the rows where a key is ≥ 0 (rows dropped for a missing value), numbered
  0..m−1 again;
- :meth:`first_row` — the first row (position in the input) where a key is ≥ 0, for messages;
- :meth:`take` — the codes of given rows (a ranker's training sample);
- :meth:`write_rows` — the rows' columns written as read (CSV, or Parquet by extension).

Nothing here is private-data-safe in the DP sense: a string frame serves k-anonymity, whose
output is the rows themselves. The numpy engine's is :class:`NumpyStringFrame`; the Spark
engine's is ``dpkit.engine.spark.strings.SparkStringFrame``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpkit.data.encoded import EncodedTable
from dpkit.engine.keys import Key, evaluate
from dpkit.engine.numpy_frame import NumpyFrame
from dpkit.schema.parse import Schema


def column_codes(series: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, distinct values)`` of a column, numbered in first-seen order.

    The numbering of ``pandas.factorize`` (so every result is the same whichever way the
    table was read); a ``category`` column is renumbered from its codes alone — one pass
    over small integers, no Python object per cell.
    """
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        raw = series.array.codes  # the Categorical's own codes (no copy; pandas 3's .cat.codes copies)
        if (raw < 0).any():  # a missing cell (NaN): the exact path numbers it too
            codes, uniques = pd.factorize(series.to_numpy(), use_na_sentinel=False)
            return codes, np.asarray(uniques, dtype=object)
        seen = pd.unique(raw)  # the codes present, in first-seen order
        if len(seen) == len(series.cat.categories) and (seen == np.arange(len(seen))).all():
            # already first-seen order (the columnar reader's): the column's own codes, no copy
            return raw, np.asarray(series.cat.categories, dtype=object)
        lut = np.zeros(len(series.cat.categories), dtype=raw.dtype)
        lut[seen] = np.arange(len(seen))
        return lut[raw], np.asarray(series.cat.categories, dtype=object)[seen]
    codes, uniques = pd.factorize(series.to_numpy(), use_na_sentinel=False)
    return codes, np.asarray(uniques, dtype=object)


class NumpyStringFrame(NumpyFrame):
    """A string frame in this process: the codes of the loaded columns of a DataFrame."""

    def __init__(self, codes: dict[str, np.ndarray], values: dict[str, np.ndarray], n_rows: int, source: str,
                 header: list[str], rows: np.ndarray | None = None) -> None:
        super().__init__(EncodedTable(schema=Schema(columns={}, path=source), columns=codes, n_rows=n_rows,
                                      source=source))
        self._values = values
        self.header = list(header)
        #: the input position of every row (None: row i is input row i)
        self.rows = rows

    @classmethod
    def of(cls, df: Any, columns: Sequence[str], source: str) -> NumpyStringFrame:
        """The ``columns`` of ``df`` (strings or ``category`` columns, as read)."""
        codes, values = {}, {}
        for c in columns:
            codes[c], values[c] = column_codes(df[c])
        return cls(codes, values, len(df), source, [str(c) for c in df.columns])

    def values(self, column: str) -> np.ndarray:
        """The distinct strings of ``column``, in code order."""
        return self._values[column]

    def n_values(self, column: str) -> int:
        return len(self._values[column])

    def take(self, columns: Sequence[str], positions: np.ndarray | None) -> dict[str, np.ndarray]:
        """The codes of ``columns`` at the sorted row ``positions`` (None: every row)."""
        cols = self.table.columns
        return {c: (cols[c] if positions is None else cols[c][positions]) for c in columns}

    def first_row(self, key: Key) -> int | None:
        """The input position of the first row where ``key`` is ≥ 0 (None: no such row)."""
        best = None
        for s, n, cols in self._blocks():
            hit = np.flatnonzero(evaluate(key, cols, s, n) >= 0)
            if hit.size:
                best = s + int(hit[0])
                break
        if best is None:
            return None
        return best if self.rows is None else int(self.rows[best])

    def where(self, key: Key) -> NumpyStringFrame:
        """The rows where ``key`` is ≥ 0 (a copy of their codes), renumbered from 0."""
        keep = np.concatenate([evaluate(key, cols, s, n) >= 0 for s, n, cols in self._blocks()]) \
            if self.table.n_rows else np.zeros(0, dtype=bool)
        if keep.all():
            return self
        idx = np.flatnonzero(keep)
        codes = {c: v[idx] for c, v in self.table.columns.items()}
        rows = idx if self.rows is None else self.rows[idx]
        return NumpyStringFrame(codes, self._values, len(idx), self.source, self.header, rows)

    def with_column(self, name: str, key: Key) -> NumpyStringFrame:
        derived = super().with_column(name, key)
        return NumpyStringFrame(derived.table.columns, self._values, self.table.n_rows, self.source, self.header,
                                self.rows)

    def encode(self, schema: Schema, columns: Sequence[str], *, first_line: int = 2) -> NumpyFrame:
        """``columns`` encoded against ``schema`` from the codes, without reading the input
        again: what a load gives for it (:func:`dpkit.io.table.encode_codes`; the Spark
        engine's counterpart is ``SparkStringFrame.encode``). ``first_line``: the line of the
        first row in messages. A run without a schema learns its schema from this frame and
        encodes it so."""
        from dpkit.io.table import encode_codes

        if self.rows is not None:
            raise ValueError("encode needs the frame of every input row (not a selection)")
        return NumpyFrame(encode_codes(self.table.columns, self._values, self.table.n_rows, schema, columns,
                                       source=self.source, first_line=first_line))

    def categories(self, columns: Sequence[str]) -> Any:
        """The rows' ``columns`` as a DataFrame of ``category`` columns (the strings as read)."""
        import pandas as pd

        return pd.DataFrame({c: pd.Categorical.from_codes(self.table.columns[c], categories=self._values[c])
                             for c in columns}, columns=list(columns))

    def unpersist(self) -> None:
        """Nothing is cached (the Spark frame's counterpart drops its cache)."""

    def write_rows(self, columns: Sequence[str], output: str, *, delimiter: str = ",", mode: int = 0o644) -> None:
        """Write the rows' ``columns`` as read (CSV, or Parquet by extension), atomically."""
        from dpkit.io.category_csv import write_categories

        write_categories(self.categories(columns), output, delimiter=delimiter, mode=mode)


def load_strings(data: Any, columns: Sequence[str] | None, *, engine: str | None = None,
                 master: str | None = None) -> Any:
    """A string frame of ``columns`` (None: every column) of ``data`` — a
    :class:`~dpkit.io.source.ReadOptions` or a DataFrame of strings — on ``engine``."""
    from dpkit.engine import engine_name

    if engine_name(engine) == "spark":
        from dpkit.engine.spark.strings import load_spark_strings

        return load_spark_strings(data, columns, master=master)
    from dpkit.io.source import ReadOptions

    if not isinstance(data, ReadOptions):  # a DataFrame of strings
        df, source = data, "<DataFrame>"
    else:
        from dpkit.io.table import read_codes, read_table

        got = read_codes(data, columns)
        if got is not None:  # the columnar reader's codes, as they are (no pandas)
            _release_reader_memory()
            wanted = [c for c in (got.columns if columns is None else columns) if c in got.columns]
            return NumpyStringFrame({c: got.codes[c] for c in wanted},
                                    {c: np.asarray(got.values[c], dtype=object) for c in wanted}, got.n_rows,
                                    data.name, got.columns)
        df, source = read_table(data, categorical=True, columns=columns), data.name
        _release_reader_memory()
    names = [str(c) for c in df.columns]
    wanted = [c for c in (names if columns is None else columns) if c in names]
    return NumpyStringFrame.of(df, wanted, source)


def _release_reader_memory() -> None:
    """Hand Arrow's freed read buffers back to the system before the selection allocates.

    The columnar reader's pool keeps the blocks it freed; numpy allocates elsewhere, so
    without this the selection's arrays stack on top of the read's peak.
    """
    import sys

    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
