"""The numpy engine: the frame protocol over in-memory encoded columns.

Keys are evaluated with :func:`dpkit.engine.keys.evaluate` and counted with
:mod:`dpkit.data.counting` (bincount, ravel_multi_index): the counting module stays the only
place in this process that scans records.

Keys are evaluated and counted a block of :data:`BLOCK_ROWS` rows at a time and the block
results added up (counts and exact sums add; distinct values and cells merge), so a scan
needs memory for one block's keys, not for n rows' (at 100M rows an int64 key is 800 MB).
A table of at most one block is counted in one piece, exactly as before.

Blocks are counted on every core (:func:`_map_blocks`: a thread per core; numpy's sorting,
bincount and arithmetic release the GIL), and their results added up in block order, so
the result is the same as one thread's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from dpkit.data import counting
from dpkit.engine.keys import Key, evaluate, shape_check
from dpkit.io.table import EncodedTable

#: rows per block: int64 keys of a block take 8 MB; small enough that the blocks of a
#: table of a few million rows keep every core busy
BLOCK_ROWS = 1 << 20
#: most threads counting blocks at once
MAX_THREADS = 8

T = TypeVar("T")


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

    def _blocks(self) -> Iterator[tuple[int, int, Mapping[str, np.ndarray]]]:
        """``(start, rows, columns)`` of each block (views, no copies)."""
        n = self.table.n_rows
        if n <= BLOCK_ROWS:
            yield 0, n, self.table.columns
            return
        for s in range(0, n, BLOCK_ROWS):
            e = min(s + BLOCK_ROWS, n)
            yield s, e - s, _Slice(self.table.columns, s, e)

    def _map(self, keys: Sequence[Key], fn: Callable[[Mapping[str, np.ndarray], list[np.ndarray]], T]) -> list[T]:
        """``fn(columns, key codes)`` of each block, in block order."""
        return _map_blocks(self._blocks(), lambda s, n, cols: fn(cols, [evaluate(k, cols, s, n) for k in keys]))

    def counts(self, keys: Sequence[Key], shape: Sequence[int]) -> np.ndarray:
        shape_check(keys, shape)
        parts = self._map(keys, lambda _cols, codes: counting.dense_counts(codes, shape))
        total = parts[0]
        for got in parts[1:]:
            total = total + got
        return total

    def cells(self, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        parts = self._map(keys, lambda _cols, codes: counting.cell_keys(codes, shape))
        return counting.merge_cell_keys(parts, shape)

    def value_counts(self, column: str, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        parts = self._map(keys, lambda cols, codes: counting.value_key_counts(cols[column], codes, shape))
        return counting.merge_value_counts(parts, shape)

    def sums(self, columns: Sequence[str], keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        got = self._map(keys, lambda cols, codes: counting.key_sum_parts([cols[c] for c in columns], codes, shape))
        sizes = got[0][0]
        for more, _ in got[1:]:
            sizes = sizes + more
        return counting.key_sums(sizes, [part for _, part in got], shape, len(columns))

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
        n = self.table.n_rows
        if n <= BLOCK_ROWS:
            cols[name] = evaluate(key, self.table.columns, 0, n)
        else:  # block by block into one array (a key's type does not depend on the rows)
            out = None
            for s, m, block in self._blocks():
                got = evaluate(key, block, s, m)
                if out is None:
                    out = np.empty(n, dtype=got.dtype)
                elif got.dtype != out.dtype:
                    out = out.astype(np.result_type(out, got))
                out[s : s + m] = got
            cols[name] = out
        t = EncodedTable(schema=self.schema, columns=cols, n_rows=n, source=self.source)
        return NumpyFrame(t)


_POOL: Any = None


def _forget_pool() -> None:
    """In a forked child (``evaluate`` sweeps with ``--jobs``) the parent's pool has no threads:
    the child starts its own."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _map_blocks(blocks: Iterator[tuple[int, int, Mapping[str, np.ndarray]]],
                fn: Callable[[int, int, Mapping[str, np.ndarray]], T]) -> list[T]:
    """``fn(start, rows, columns)`` of each block, in block order, a thread per core (one block:
    this thread). At most one block per thread is being counted at a time: memory is a few
    blocks' keys."""
    global _POOL
    todo = list(blocks)
    if len(todo) == 1:
        return [fn(*todo[0])]
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max(1, min(len(os.sched_getaffinity(0)), MAX_THREADS)),
                                   thread_name_prefix="dpkit-count")
    return list(_POOL.map(lambda block: fn(*block), todo))


class _Slice(Mapping):
    """Rows ``[start, end)`` of every column, sliced when asked for (views)."""

    def __init__(self, columns: Mapping[str, np.ndarray], start: int, end: int) -> None:
        self._columns, self._start, self._end = columns, start, end

    def __getitem__(self, name: str) -> np.ndarray:
        return self._columns[name][self._start : self._end]

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)
