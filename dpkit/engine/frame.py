"""The frame protocol: what an engine offers the algorithms (docs/architecture.md, Engines).

A *frame* is an encoded table that an algorithm cannot read row by row: it can only ask for
exact aggregates over public keys (:mod:`dpkit.engine.keys`), returned as numpy arrays on
the driver. Everything returned is exact and therefore private: it must flow only into a
``dpkit.privacy`` mechanism. Every privacy decision stays in the algorithm, in this process.

Two engines implement it: :class:`~dpkit.engine.numpy_frame.NumpyFrame` (in process, over
the arrays of an :class:`~dpkit.io.table.EncodedTable`, scanning through
:mod:`dpkit.data.counting`) and the Spark frame (``dpkit.engine.spark``, one Spark
aggregation per call, nothing row-level collected).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from dpkit.engine.keys import Key
from dpkit.schema.parse import Schema


@runtime_checkable
class Frame(Protocol):
    """Aggregates over an encoded table. ``count()`` is private like every other answer."""

    schema: Schema
    source: str
    engine: str

    def count(self) -> int:
        """Number of records (exact, private)."""
        ...

    def counts(self, keys: Sequence[Key], shape: Sequence[int]) -> np.ndarray:
        """Dense int64 counts of records per combination of ``keys``, an array of ``shape``.

        Records whose key is −1 on any dimension (a Route's leaf) are not counted.
        """
        ...

    def cells(self, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Sparse counts: ``(cells (m, d) int64, counts (m,) int64)`` of the non-empty cells
        in lexicographic order; for tables too large to materialize."""
        ...

    def value_counts(self, column: str, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """A numeric column's sorted distinct values ``(m,)`` and the counts ``(m, *shape)`` of
        records per (value, key combination): every split score is then a prefix sum."""
        ...

    def sums(self, columns: Sequence[str], keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Counts ``shape`` and per-column sums ``(*shape, len(columns))`` of numeric columns.

        Each sum is exact and rounded once (``counting.exact_key_sums``): the same bits
        whatever the order or partitioning of the records."""
        ...

    def many(self, requests: Sequence[tuple]) -> list:
        """Answers to several ``("counts", keys, shape)`` and ``("value_counts", column, keys,
        shape)`` requests, in order — one scan of the data on an engine that can (Spark: one
        job instead of one per request)."""
        ...

    def with_column(self, name: str, key: Key) -> Frame:
        """A frame that also carries ``key`` evaluated as column ``name`` (a node id per
        record for the next level), so later keys can refer to it with ``Col(name)``."""
        ...

    def column_names(self) -> list[str]:
        """The encoded columns (and derived keys) of the frame."""
        ...


@runtime_checkable
class StringFrame(Frame, Protocol):
    """A frame whose columns are codes of the values *as written* (k-anonymity's classes are on
    the released strings), numbered in order of first appearance, plus what a selection over
    rows needs (:mod:`dpkit.engine.string_frame`; ``load_strings`` makes one on either engine).
    Its answers are exact and row-level (k-anonymity releases rows): never a DP input."""

    header: list[str]

    def values(self, column: str) -> np.ndarray:
        """The distinct strings of ``column``, in code order."""
        ...

    def n_values(self, column: str) -> int:
        ...

    def take(self, columns: Sequence[str], positions: np.ndarray | None) -> dict[str, np.ndarray]:
        """The codes of ``columns`` at the sorted row ``positions`` (None: every row)."""
        ...

    def first_row(self, key: Key) -> int | None:
        """The input position of the first row where ``key`` is ≥ 0."""
        ...

    def where(self, key: Key) -> StringFrame:
        """The rows where ``key`` is ≥ 0, numbered from 0 again."""
        ...

    def write_rows(self, columns: Sequence[str], output: str, *, delimiter: str = ",", mode: int = 0o644) -> None:
        """Write the rows' ``columns`` as read (CSV, or Parquet by extension), atomically."""
        ...


def as_frame(table: object) -> Frame:
    """``table`` as a frame: an :class:`EncodedTable` is wrapped in the numpy engine."""
    if isinstance(table, Frame):
        return table
    from dpkit.engine.numpy_frame import NumpyFrame
    from dpkit.io.table import EncodedTable

    if isinstance(table, EncodedTable):
        return NumpyFrame(table)
    raise TypeError(f"expected an EncodedTable or a Frame, got {type(table).__name__}")
