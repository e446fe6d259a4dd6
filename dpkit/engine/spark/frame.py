"""The Spark frame: the frame protocol (:mod:`dpkit.engine.frame`) as Spark aggregations.

Each primitive evaluates its keys with :func:`dpkit.engine.keys.evaluate` inside
``mapInArrow`` over the cached packed batches (:mod:`.packed`), adds the counts of a batch
up, and lets Spark add the partial counts by key (``groupBy().sum()``); the driver receives
aggregates only. Integer counts and exact sums do not depend on how the rows are split into
partitions, so both engines return the same numbers.

Row positions (for :class:`~dpkit.engine.keys.RowHash`): the encoded rows keep their
partition id and index inside the partition; one small job counts the rows of every
partition, and the offsets make a 0-based global position in Spark's read order (for one
file: its line order, the numpy engine's order).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dpkit.engine.keys import Key, columns_of, evaluate, shape_check
from dpkit.engine.spark.encode import _clip_warnings
from dpkit.engine.spark.packed import (
    _BLOBS,
    _CLIPS,
    _DATA,
    _DROP,
    _IDX,
    _NP,
    _PID,
    _ROWS,
    _START,
    _blob_row,
    _blobs,
    _pack,
    _packed,
    _unpack,
)
from dpkit.engine.spark.session import _collect
from dpkit.errors import DataError, DpkitWarning, warn
from dpkit.schema.parse import CategoricalColumn, Schema


class SparkFrame:
    """A frame over the encoded table, cached in Spark as packed batches (:data:`~dpkit.engine.spark.packed._BLOBS`);
    every primitive is one job over them."""

    engine = "spark"

    def __init__(self, spark: Any, schema: Schema, source: str, blobs: Any, fields: dict[str, str],
                 offsets: np.ndarray | None = None, n_rows: int = 0, parent: SparkFrame | None = None,
                 types: dict[str, str] | None = None) -> None:
        self.spark = spark
        self.schema = schema
        self.source = source
        self.blobs = blobs  # the persisted DataFrame of packed batches
        self.fields = fields  # column name → field of the packed batches
        self.types = dict(types or {})  # field → Spark type (for :attr:`df`)
        self.offsets = offsets
        self.n_rows = n_rows
        self._parent = parent

    @property
    def df(self) -> Any:
        """The encoded rows as a DataFrame (one column per field, plus ``__pid``, ``__idx``),
        unpacked from the cached batches on demand (not cached itself)."""
        import pyarrow as pa

        fields = list(self.fields.values())
        types = {f: self.types.get(f, "long") for f in fields}

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for batch in batches:
                pids = batch.column(0).to_pylist()
                starts = batch.column(1).to_pylist()
                for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
                    cols, n = _unpack(batch.column(2)[i].as_py(), fields)
                    arrays = [pa.array(np.asarray(cols[f], dtype=_NP[types[f]])) for f in fields]
                    arrays += [pa.array(np.full(n, pid, dtype=np.int32)), pa.array(np.arange(start, start + n))]
                    yield pa.RecordBatch.from_arrays(arrays, names=[*fields, _PID, _IDX])

        ddl = ", ".join([f"{f} {types[f]}" for f in fields] + [f"{_PID} int", f"{_IDX} long"])
        return self._scan().mapInArrow(run, ddl)

    def _scan(self) -> Any:
        return self.blobs.select(_PID, _START, _DATA)

    def _prepare(self, wanted: list[str]) -> None:
        """One job: rows kept per partition (→ positions), rows dropped, values clipped."""
        from pyspark.sql import functions as F

        rows = _collect(kind="read+encode", df=self.blobs.groupBy(_PID).agg(
            F.sum(_ROWS).alias("kept"), F.sum(_DROP).alias("dropped"),
            F.concat_ws("\n", F.collect_list(_CLIPS)).alias("clips")))
        kept = np.zeros(max((r[_PID] for r in rows), default=-1) + 1, dtype=np.int64)
        dropped = 0
        clips: list[str] = []
        for r in rows:
            kept[r[_PID]] = int(r["kept"] or 0)
            dropped += int(r["dropped"] or 0)
            if r["clips"]:
                clips.append(r["clips"])
        self.offsets = np.concatenate([[0], np.cumsum(kept)[:-1]]).astype(np.int64)
        self.n_rows = int(kept.sum())
        from dpkit.console import owner_watching

        if owner_watching():
            if dropped:
                from dpkit.data.encoded import dropped_message

                warn(dropped_message(self.source, dropped, self.schema, list(self.fields),
                                     total=self.n_rows + dropped), DpkitWarning)
            for text in _clip_warnings(clips, self.source):  # one, naming every clipped column
                warn(text, DpkitWarning)
        else:  # the short form, whatever the data holds (dpkit.data.encoded.load_warnings)
            from dpkit.data.encoded import load_warnings

            for w in load_warnings(self.source, self.schema, list(self.fields), 0, [], self.schema.path):
                warn(w)
        if self.n_rows == 0:
            raise DataError(f"{self.source}: has a header but no data rows")

    # ------------------------------------------------------------------ protocol

    def unpersist(self) -> None:
        """Drop this frame's cached batches (a frame no longer used, e.g. before ``where``)."""
        self.blobs.unpersist()

    def count(self) -> int:
        return self.n_rows

    def column_names(self) -> list[str]:
        return list(self.fields)

    def _batches(self, keys: Sequence[Key], extra: Sequence[str] = ()) -> tuple[list[str], Any]:
        """The columns a job reads and a function giving, per packed batch, the keys' codes."""
        names = sorted(set().union(*(columns_of(k) for k in keys), set(extra)))
        for n in names:
            if n not in self.fields:
                raise KeyError(f"the frame has no column {n!r}")
        read = [self.fields[n] for n in names]
        offsets = self.offsets

        def codes(batches: Iterator[Any]) -> Iterator[tuple[dict[str, np.ndarray], list[np.ndarray], int]]:
            """(columns by name, the keys' codes, rows) of each packed batch."""
            for packed, start, n in _blobs(batches, read, offsets):
                cols = {c: packed[f] for c, f in zip(names, read, strict=True)}
                yield cols, [evaluate(k, cols, start, n) for k in keys], n

        return read, codes

    def _cell_job(self, keys: Sequence[Key], value: str | None = None,
                  shape: Sequence[int] | None = None) -> np.ndarray:
        """Rows (value?, k0..k(d−1), count) of the non-empty cells, summed over partitions."""
        return self._cell_jobs([(list(keys), value)], [shape])[0]

    def _cell_jobs(self, requests: Sequence[tuple[list[Key], str | None]],
                   shapes: Sequence[Sequence[int] | None] | None = None) -> list[np.ndarray]:
        """:meth:`_cell_job` for several requests in ONE Spark job (one scan, one shuffle):
        each batch emits rows (request, value, k0..k(D−1), count), D the most keys of any.
        ``shapes`` (the tables' shapes, when known) let a batch count its cells by one flat
        index (:func:`_batch_cells`) instead of sorting rows of codes."""
        import pyarrow as pa
        from pyspark.sql import functions as F

        shapes = list(shapes) if shapes is not None else [None] * len(requests)
        flat = [k for keys, _ in requests for k in keys]
        values = sorted({v for _, v in requests if v is not None})
        _, codes = self._batches(flat, values)
        width = max((len(keys) for keys, _ in requests), default=0)
        kcols = [f"k{j}" for j in range(width)]
        spans = []
        at = 0
        for keys, _ in requests:
            spans.append((at, at + len(keys)))
            at += len(keys)
        plan = [(a, b, v, shp) for (a, b), (_, v), shp in zip(spans, requests, shapes, strict=True)]

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for cols, cs, n in codes(batches):
                for r, (a, b, value, shp) in enumerate(plan):
                    d = b - a
                    got = _batch_cells(cs[a:b], cols[value] if value is not None else None, shp, n)
                    if got is None:
                        continue
                    uniq, cnt = got
                    out = {"r": pa.array(np.full(len(uniq), r, dtype=np.int64)),
                           "v": pa.array(uniq[:, 0].view(np.float64))}
                    for j, k in enumerate(kcols):
                        out[k] = pa.array(uniq[:, 1 + j] if j < d else np.zeros(len(uniq), dtype=np.int64))
                    out["n"] = pa.array(cnt.astype(np.int64))
                    yield pa.RecordBatch.from_pydict(out)

        ddl = ", ".join(["r long", "v double"] + [f"{k} long" for k in kcols] + ["n long"])
        group = ["r", "v", *kcols]
        agg = self._scan().mapInArrow(run, ddl).groupBy(*group).agg(F.sum("n").alias("n"))
        rows = self._run(agg)
        table = np.array([tuple(row) for row in rows], dtype=object).reshape(-1, len(group) + 1)
        out = []
        for r, (a, b, value, _) in enumerate(plan):
            mine = table[table[:, 0] == r] if len(table) else table
            d = b - a
            if value is not None:
                got = np.concatenate([mine[:, 1:2], mine[:, 2:2 + d], mine[:, -1:]], axis=1)
                out.append(got if len(got) else np.zeros((0, d + 2)))
            else:
                got = np.concatenate([mine[:, 2:2 + d], mine[:, -1:]], axis=1).astype(np.int64)
                out.append(got.reshape(-1, d + 1))
        return out

    def many(self, requests: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Several ``counts`` / ``value_counts`` requests answered by one Spark job."""
        jobs = []
        for req in requests:
            if req[0] == "counts":
                _, keys, shape = req
                shape_check(keys, shape)
                jobs.append((list(keys), None))
            elif req[0] == "value_counts":
                _, column, keys, shape = req
                shape_check(keys, shape)
                jobs.append((list(keys), column))
            else:
                raise ValueError(f"unknown request {req[0]!r}")
        rows = self._cell_jobs(jobs, [req[-1] for req in requests])
        return [self._dense(req[-1], got) if req[0] == "counts" else self._by_value(req[-1], got)
                for req, got in zip(requests, rows, strict=True)]

    @staticmethod
    def _dense(shape: Sequence[int], rows: np.ndarray) -> np.ndarray:
        shp = tuple(int(s) for s in shape)
        out = np.zeros(shp, dtype=np.int64)
        if len(rows):
            out[tuple(rows[:, j] for j in range(len(shp)))] = rows[:, -1]
        return out

    @staticmethod
    def _by_value(shape: Sequence[int], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        shp = tuple(int(s) for s in shape)
        if not len(rows):
            return np.zeros(0), np.zeros((0, *shp), dtype=np.int64)
        values = rows[:, 0].astype(float)
        uniq, inverse = np.unique(values, return_inverse=True)
        out = np.zeros((uniq.size, *shp), dtype=np.int64)
        idx = (inverse.reshape(-1), *(rows[:, 1 + j].astype(np.int64) for j in range(len(shp))))
        np.add.at(out, idx, rows[:, -1].astype(np.int64))
        return uniq, out

    def _run(self, df: Any) -> list[Any]:
        rows = _collect(df)
        if self._parent is not None:  # this frame is materialized: its parent's cache can go
            self._parent.blobs.unpersist()
            self._parent = None
        return rows

    def counts(self, keys: Sequence[Key], shape: Sequence[int]) -> np.ndarray:
        shape_check(keys, shape)
        return self._dense(shape, self._cell_job(keys, shape=shape))

    def cells(self, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        rows = self._cell_job(keys, shape=shape)
        d = len(keys)
        if not len(rows):
            return np.zeros((0, d), dtype=np.int64), np.zeros(0, dtype=np.int64)
        order = np.lexsort(rows[:, :d].T[::-1])
        rows = rows[order]
        return np.ascontiguousarray(rows[:, :d]), np.ascontiguousarray(rows[:, d])

    def value_counts(self, column: str, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        return self._by_value(shape, self._cell_job(keys, value=column, shape=shape))

    def sums(self, columns: Sequence[str], keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        import pyarrow as pa
        from pyspark.sql import functions as F

        from dpkit.data.counting import sum_parts, sums_from_parts

        shape_check(keys, shape)
        shp = tuple(int(s) for s in shape)
        size = int(np.prod(shp, dtype=np.int64))
        _, codes = self._batches(keys, list(columns))
        names = list(columns)

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for cols, cs, n in codes(batches):
                ok = np.ones(n, dtype=bool)
                for c in cs:
                    ok &= c >= 0
                flat = np.zeros(int(ok.sum()), dtype=np.int64)
                for c, s in zip(cs, shp, strict=True):
                    flat = flat * s + c[ok]
                g, cnt = np.unique(flat, return_counts=True)
                parts = sum_parts(flat, [np.asarray(cols[n], dtype=float)[ok] for n in names])
                # kind 0: sizes (count in hi); kind 1: exact-sum parts (group, column, exp, hi, lo)
                rows = np.concatenate([
                    np.column_stack([np.zeros(len(g), np.int64), g, np.zeros((len(g), 2), np.int64), cnt,
                                     np.zeros(len(g), np.int64)]),
                    np.column_stack([np.ones(len(parts), np.int64), parts]),
                ])
                yield pa.RecordBatch.from_pydict({k: pa.array(rows[:, j]) for j, k in
                                                  enumerate(["kind", "g", "j", "e", "hi", "lo"])})

        ddl = "kind long, g long, j long, e long, hi long, lo long"
        agg = (self._scan().mapInArrow(run, ddl).groupBy("kind", "g", "j", "e")
               .agg(F.sum("hi").alias("hi"), F.sum("lo").alias("lo")))
        rows = np.array([tuple(r) for r in self._run(agg)], dtype=object).reshape(-1, 6)
        sizes = np.zeros(size, dtype=np.int64)
        first = rows[rows[:, 0] == 0] if len(rows) else rows
        if len(first):
            sizes[first[:, 1].astype(np.int64)] = first[:, 4].astype(np.int64)
        parts = rows[rows[:, 0] == 1][:, 1:] if len(rows) else np.zeros((0, 5))
        sums = sums_from_parts(np.array(parts.tolist(), dtype=np.int64).reshape(-1, 5), size, len(names))
        return sizes.reshape(shp), sums.reshape((*shp, len(names)))

    def with_column(self, name: str, key: Key) -> SparkFrame:
        names = sorted(columns_of(key))
        for n in names:
            if n not in self.fields:
                raise KeyError(f"the frame has no column {n!r}")
        by_name = {n: self.fields[n] for n in names}
        field = f"d{len(self.fields)}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
        replaced = self.fields.get(name)
        offsets = self.offsets

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for pid, start, cols, n in _packed(batches):
                code = evaluate(key, {c: cols[f] for c, f in by_name.items()}, int(offsets[pid]) + start, n)
                cols.pop(replaced, None)
                cols[field] = np.asarray(code)
                yield _blob_row(pid, start, n, 0, None, _pack(cols))

        blobs = self._scan().mapInArrow(run, _BLOBS).persist()
        fields = {n: f for n, f in self.fields.items() if n != name}
        fields[name] = field
        types = {f: t for f, t in self.types.items() if f != replaced}
        types[field] = "long"
        parent = self if self._parent is not None or self._is_derived() else None
        return SparkFrame(self.spark, self.schema, self.source, blobs, fields, self.offsets, self.n_rows, parent,
                          types=types)

    def clipped(self, schema: Schema) -> SparkFrame:
        """This frame under ``schema`` with its numeric columns clipped to that schema's bounds:
        new cached batches made from the cached ones, the input not read again (cluster's
        learned box; as ``np.clip`` of the numpy engine's points, silently). This frame's own
        cached batches are dropped once the new ones exist."""
        from pyspark.sql import functions as F

        box = {f: (float(schema.columns[c].lo), float(schema.columns[c].hi)) for c, f in self.fields.items()
               if c in schema.columns and not isinstance(schema.columns[c], CategoricalColumn)}

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for pid, start, cols, n in _packed(batches):
                for f, (lo, hi) in box.items():
                    cols[f] = np.clip(np.asarray(cols[f], dtype=np.float64), lo, hi)
                yield _blob_row(pid, start, n, 0, None, _pack(cols))

        blobs = self._scan().mapInArrow(run, _BLOBS).persist()
        frame = SparkFrame(self.spark, schema, self.source, blobs, dict(self.fields), self.offsets, self.n_rows,
                           parent=self, types=self.types)
        frame._run(blobs.agg(F.count(F.lit(1))))  # cached now; _run then drops this frame's batches
        return frame

    def _is_derived(self) -> bool:
        return any(f.startswith("d") and "_" in f for f in self.fields.values())


#: a batch counts its cells with ``np.bincount`` when the table has at most this many cells
_DENSE_CELLS = 1 << 20


def _batch_cells(codes: Sequence[np.ndarray], values: np.ndarray | None,
                 shape: Sequence[int] | None, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The non-empty cells of one batch: rows (value bits, k0..k(d−1)) and their counts.

    Rows with a negative code are not counted. A value is kept as the int64 bits of its
    double (so -0.0 and 0.0 stay apart here, as the driver's merge expects). With the shape
    known, each row's cell is one flat index (values numbered by ``np.unique``) counted by
    ``np.bincount`` or a 1-D ``np.unique`` — a sort of 64k rows of codes costs ~100× more.
    None: no row counted.
    """
    ok = np.ones(n, dtype=bool)
    for c in codes:
        ok &= c >= 0
    bits = (np.asarray(values, dtype=float).view(np.int64) if values is not None else None)
    shp = [int(s) for s in shape] if shape is not None else None
    if shp is not None and (np.prod(shp, dtype=float) * n >= 2.0 ** 62
                            or any(len(c) and int(c.max(initial=0)) >= s for c, s in zip(codes, shp, strict=True))):
        shp = None  # an index could overflow (or a code is out of its shape): sort the rows
    if shp is None:
        stacked = np.stack([np.asarray(c, dtype=np.int64) for c in codes], axis=1) if len(codes) else np.zeros((n, 0), np.int64)
        v = bits[ok] if bits is not None else np.zeros(int(ok.sum()), dtype=np.int64)
        stacked = np.column_stack([v, stacked[ok]])
        if not len(stacked):
            return None
        return np.unique(stacked, axis=0, return_counts=True)
    if not ok.all():
        codes = [c[ok] for c in codes]
        bits = bits[ok] if bits is not None else None
    m = int(ok.sum())
    if m == 0:
        return None
    flat = np.zeros(m, dtype=np.int64)
    for c, s in zip(codes, shp, strict=True):
        flat *= s
        flat += c
    size = int(np.prod(shp, dtype=np.int64)) if shp else 1
    if bits is not None:
        ubits, inv = np.unique(bits, return_inverse=True)
        flat += inv.reshape(-1).astype(np.int64) * size
        total = size * len(ubits)
    else:
        ubits = np.zeros(1, dtype=np.int64)
        total = size
    if total <= max(_DENSE_CELLS, 4 * m):
        cnt = np.bincount(flat, minlength=total)
        cells = np.flatnonzero(cnt)
        cnt = cnt[cells]
    else:
        cells, cnt = np.unique(flat, return_counts=True)
    vi, rest = np.divmod(cells, size)
    out = np.empty((len(cells), 1 + len(shp)), dtype=np.int64)
    out[:, 0] = ubits[vi]
    for j in range(len(shp) - 1, -1, -1):
        rest, out[:, 1 + j] = np.divmod(rest, shp[j])
    return out, cnt.astype(np.int64)


def _uses_rowhash(key: Key) -> bool:
    return key.uses_position()
