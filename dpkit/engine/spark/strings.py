"""The Spark engine's string frame (:mod:`dpkit.engine.string_frame`): codes of values as written.

Spark reads the input; every loaded column's distinct strings come to the driver with the
position of their first row (one aggregation), which numbers them as the numpy engine does
(order of first appearance over every row); the executors then encode each batch to those
codes and pack it as :class:`~dpkit.engine.spark.frame.SparkFrame`'s cached batches, so every
primitive of the frame protocol is SparkFrame's own. The rows themselves never reach the
driver, except those :meth:`SparkStringFrame.take` asks for (a ranker's training sample).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dpkit.engine.keys import Key, evaluate
from dpkit.engine.spark.frame import SparkFrame
from dpkit.engine.spark.packed import _BLOBS, _DATA, _PID, _START, _blob_row, _blobs, _pack, _unpack
from dpkit.engine.spark.session import _collect, session
from dpkit.errors import DataError, DpkitUsageError
from dpkit.schema.parse import Schema

_SEEN, _POS = "__seen", "__pos"


class SparkStringFrame(SparkFrame):
    """A string frame on Spark: :class:`SparkFrame`'s cached batches of codes, the distinct
    strings of each column on the driver, and each row's input position in the batches."""

    def __init__(self, spark: Any, source: str, blobs: Any, fields: dict[str, str], offsets: np.ndarray,
                 n_rows: int, values: dict[str, np.ndarray], header: list[str], parent: Any = None,
                 types: dict[str, str] | None = None) -> None:
        super().__init__(spark, Schema(columns={}, path=source), source, blobs, fields, offsets, n_rows, parent,
                         types=types)
        self._values = values
        self.header = list(header)

    def values(self, column: str) -> np.ndarray:
        return self._values[column]

    def n_values(self, column: str) -> int:
        return len(self._values[column])

    def _rows_job(self, read: list[str], fn: Any, ddl: str) -> Any:
        """``fn(fields, positions of the batch's rows, input positions)`` over every cached batch."""
        offsets = self.offsets
        orig = self.fields[_POS]

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for cols, first, n in _blobs(batches, [*read, orig], offsets):
                yield from fn(cols, np.arange(first, first + n, dtype=np.int64), cols[orig])

        return self._scan().mapInArrow(run, ddl)

    def take(self, columns: Sequence[str], positions: np.ndarray | None) -> dict[str, np.ndarray]:
        import pyarrow as pa

        read = [self.fields[c] for c in columns]
        chosen = None if positions is None else np.asarray(positions, dtype=np.int64)

        def fn(cols: dict, pos: np.ndarray, _orig: np.ndarray) -> Iterator[Any]:
            if chosen is None:
                hit = np.ones(len(pos), dtype=bool)
            else:
                at = np.minimum(np.searchsorted(chosen, pos), max(len(chosen) - 1, 0))
                hit = (chosen[at] == pos) if len(chosen) else np.zeros(len(pos), dtype=bool)
            if hit.any():
                out = {"p": pa.array(pos[hit])}
                out.update({f"c{j}": pa.array(np.asarray(cols[f])[hit].astype(np.int64)) for j, f in enumerate(read)})
                yield pa.RecordBatch.from_pydict(out)

        ddl = ", ".join(["p long"] + [f"c{j} long" for j in range(len(read))])
        rows = _collect(self._rows_job(read, fn, ddl), kind="take")
        table = np.array([tuple(r) for r in rows], dtype=np.int64).reshape(-1, len(read) + 1)
        table = table[np.argsort(table[:, 0], kind="stable")]
        return {c: table[:, 1 + j] for j, c in enumerate(columns)}

    def first_row(self, key: Key) -> int | None:
        import pyarrow as pa
        from pyspark.sql import functions as F

        names = sorted(key.reads())
        read = [self.fields[c] for c in names]

        def fn(cols: dict, pos: np.ndarray, orig: np.ndarray) -> Iterator[Any]:
            got = evaluate(key, {c: cols[f] for c, f in zip(names, read, strict=True)}, int(pos[0]), len(pos))
            hit = np.flatnonzero(got >= 0)
            if hit.size:
                yield pa.RecordBatch.from_pydict({"o": pa.array([int(np.asarray(orig)[hit].min())])})

        rows = _collect(self._rows_job(read, fn, "o long").agg(F.min("o").alias("o")), kind="first")
        return None if not rows or rows[0]["o"] is None else int(rows[0]["o"])

    def where(self, key: Key) -> SparkStringFrame:
        """The rows where ``key`` is ≥ 0, renumbered from 0 (two jobs: the rows kept per batch,
        then the batches filtered and their starts moved)."""
        names = sorted(key.reads())
        read = [self.fields[c] for c in names]
        offsets = self.offsets

        def keep_of(datas: Any, i: int, pid: int, start: int) -> tuple[dict, np.ndarray, int]:
            cols, n = _unpack(datas[i].as_py())
            got = evaluate(key, {c: cols[f] for c, f in zip(names, read, strict=True)}, int(offsets[pid]) + start, n)
            return cols, got >= 0, n

        def count(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa

            for batch in batches:
                pids, starts, datas = batch.column(0).to_pylist(), batch.column(1).to_pylist(), batch.column(2)
                for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
                    _, keep, _ = keep_of(datas, i, pid, start)
                    yield pa.RecordBatch.from_pydict({"pid": pa.array([pid], pa.int32()),
                                                      "start": pa.array([start], pa.int64()),
                                                      "kept": pa.array([int(keep.sum())], pa.int64())})

        rows = _collect(self._scan().mapInArrow(count, "pid int, start long, kept long"), kind="where")
        by_part: dict[int, list[tuple[int, int]]] = {}
        for r in rows:
            by_part.setdefault(int(r["pid"]), []).append((int(r["start"]), int(r["kept"])))
        new_start: dict[tuple[int, int], int] = {}
        parts = max(by_part, default=-1) + 1
        kept = np.zeros(max(parts, len(offsets)), dtype=np.int64)
        for pid, items in by_part.items():
            at = 0
            for start, k in sorted(items):
                new_start[(pid, start)] = at
                at += k
            kept[pid] = at
        new_offsets = np.concatenate([[0], np.cumsum(kept)[:-1]]).astype(np.int64)

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for batch in batches:
                pids, starts, datas = batch.column(0).to_pylist(), batch.column(1).to_pylist(), batch.column(2)
                for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
                    cols, keep, n = keep_of(datas, i, pid, start)
                    m = int(keep.sum())
                    if m:
                        yield _blob_row(pid, new_start[(pid, start)], m, 0, None,
                                        _pack({f: np.asarray(v)[keep] for f, v in cols.items()}))

        blobs = self._scan().mapInArrow(run, _BLOBS).persist()
        return SparkStringFrame(self.spark, self.source, blobs, dict(self.fields), new_offsets, int(kept.sum()),
                                self._values, self.header, types=self.types)

    def with_column(self, name: str, key: Key) -> SparkStringFrame:
        derived = super().with_column(name, key)
        return SparkStringFrame(self.spark, self.source, derived.blobs, derived.fields, self.offsets, self.n_rows,
                                self._values, self.header, parent=derived._parent, types=derived.types)

    def encode(self, schema: Schema, columns: Sequence[str], *, first_line: int = 2) -> SparkFrame:
        """``columns`` encoded against ``schema`` from the cached codes, without reading the
        input again: what :func:`~dpkit.engine.spark.read.load_spark` gives for it.

        Each cached batch's codes become its strings again on the executors and go through
        load_spark's own encoder (:func:`~dpkit.engine.spark.encode.encoding`), so messages,
        dropped rows and clipping are a load's. The strings are the numpy reader's (stripped,
        an empty field ''), and every row's input position is known here, so an error's line
        is exact (``first_line``: the line of the first data row, 1 without a header). A run
        without a schema learns its schema from this frame and encodes it so (docs/domain.md)."""
        from itertools import groupby

        import pyarrow as pa

        from dpkit.engine.spark.encode import encoding

        wanted = list(columns)
        absent = [c for c in wanted if c not in self.fields]
        if absent:
            raise DpkitUsageError(f"{self.source}: no column(s) {', '.join(map(repr, absent))} in the string frame")
        fields, types, encode_stream = encoding(schema, wanted, self.source)
        read = [self.fields[c] for c in wanted]
        values = [self._values[c] for c in wanted]
        offsets, shift = self.offsets, first_line - 2  # encode numbers a batch's rows from line 2

        def strings(batches: Iterator[Any]) -> Iterator[tuple[int, Any]]:
            for batch in batches:
                pids, datas = batch.column(0).to_pylist(), batch.column(2)
                for i, pid in enumerate(pids):
                    cols, n = _unpack(datas[i].as_py(), read)
                    if n:
                        yield int(pid), pa.RecordBatch.from_arrays(
                            [pa.array(v[cols[f]], pa.string()) for f, v in zip(read, values, strict=True)],
                            names=wanted)

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            # a cached partition holds one input partition's batches, in order
            for pid, group in groupby(strings(batches), key=lambda t: t[0]):
                yield from encode_stream((b for _, b in group), pid, lambda pid=pid: int(offsets[pid]) + shift)

        encoded = self._scan().mapInArrow(run, _BLOBS).persist()
        frame = SparkFrame(self.spark, schema, self.source, encoded, dict(zip(wanted, fields, strict=True)),
                           types=types)
        try:
            frame._prepare(wanted)
        except Exception:
            encoded.unpersist()
            raise
        return frame

    def write_rows(self, columns: Sequence[str], output: str, *, delimiter: str = ",", mode: int = 0o644) -> None:
        """Written by Spark (:func:`dpkit.engine.spark.write.write_rows`): each batch's codes
        decoded to its strings on the executors; a local file is the part files' ordered
        concatenation, written atomically."""
        import pandas as pd

        from dpkit.engine.spark.write import write_rows as spark_write_rows

        fields = [self.fields[c] for c in columns]
        values = [self._values[c] for c in columns]
        ordered = self.df.select(*fields)  # the rows in read order: partition by partition

        def render(batch: Any) -> Any:
            return pd.DataFrame({c: v[batch.column(i).to_numpy(zero_copy_only=False)]
                                 for i, (c, v) in enumerate(zip(columns, values, strict=True))}, columns=list(columns))

        spark_write_rows(self.spark, ordered, render, list(columns), output, delimiter=delimiter, mode=mode)


def load_spark_strings(options: Any, columns: Sequence[str] | None, *, master: str | None = None,
                       spark: Any = None) -> SparkStringFrame:
    """Read ``columns`` (None: every column) of ``options`` on Spark as a string frame."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from dpkit.engine.spark.read import numbered, raw_input
    from dpkit.engine.spark.write import raw_strings

    if not hasattr(options, "path"):
        raise DpkitUsageError("the Spark engine reads files or URIs, not a pandas DataFrame", param="engine")
    if options.path == "-":
        raise DpkitUsageError("the Spark engine reads files or URIs, not stdin ('-')", param="engine")
    from dpkit.io.source import resolve

    options = resolve(options)
    spark = spark or session(master)
    raw, names, parquet = raw_input(spark, options)
    source = options.name
    wanted = [c for c in (names if columns is None else columns) if c in names]
    fields = {c: f"s{i}" for i, c in enumerate(wanted)}
    raw = raw.select(*[F.col(f"`{raw.columns[names.index(c)]}`") for c in wanted])

    # one pass: every row's strings (as the numpy reader gives them), its partition and index
    def annotate(batches: Iterator[Any]) -> Iterator[Any]:
        for pid, seen, batch in numbered(batches):
            n = batch.num_rows
            df = raw_strings(batch, wanted, parquet)
            arrays = [pa.array(df[c].to_numpy(dtype=object), pa.string()) for c in wanted]
            arrays += [pa.array(np.full(n, pid, dtype=np.int32)), pa.array(np.arange(seen, seen + n, dtype=np.int64))]
            yield pa.RecordBatch.from_arrays(arrays, names=[*fields.values(), _PID, _SEEN])

    ddl = ", ".join([f"{f} string" for f in fields.values()] + [f"{_PID} int", f"{_SEEN} long"])
    annotated = raw.mapInArrow(annotate, ddl).persist()
    try:
        counts = _collect(annotated.groupBy(_PID).count(), kind="read")
        parts = max((int(r[_PID]) for r in counts), default=-1) + 1
        per = np.zeros(parts, dtype=np.int64)
        for r in counts:
            per[int(r[_PID])] = int(r["count"])
        offsets = np.concatenate([[0], np.cumsum(per)[:-1]]).astype(np.int64)
        n_rows = int(per.sum())
        # the distinct strings of every column with the input position of their first row:
        # numbered in that order, as pandas.factorize numbers them on the numpy engine
        pos = F.element_at(F.array(*[F.lit(int(o)) for o in offsets]), F.col(_PID) + 1) + F.col(_SEEN) \
            if parts else F.lit(0)
        pairs = F.explode(F.array(*[F.struct(F.lit(j).alias("j"), F.col(f).alias("v"))
                                    for j, f in enumerate(fields.values())])) if fields else None
        values: dict[str, np.ndarray] = {c: np.zeros(0, dtype=object) for c in wanted}
        if pairs is not None and n_rows:
            firsts = (annotated.select(pairs.alias("t"), pos.alias("p")).select("t.j", "t.v", "p")
                      .groupBy("j", "v").agg(F.min("p").alias("p")))
            got = sorted((int(r["j"]), int(r["p"]), r["v"]) for r in _collect(firsts, kind="dictionary"))
            by_col: dict[int, list[str]] = {}
            for j, _p, v in got:
                by_col.setdefault(j, []).append(v)
            values = {c: np.asarray(by_col.get(j, []), dtype=object) for j, c in enumerate(wanted)}
    except Exception:
        annotated.unpersist()
        raise
    lookup = {fields[c]: values[c] for c in wanted}
    field_list = list(fields.values())

    def encode(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd

        indexes = {f: pd.Index(v) for f, v in lookup.items()}
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            pid = int(batch.column(len(field_list)).to_numpy(zero_copy_only=False)[0])
            seen = batch.column(len(field_list) + 1).to_numpy(zero_copy_only=False)
            cols = {}
            for j, f in enumerate(field_list):
                s = batch.column(j).to_numpy(zero_copy_only=False)
                codes = indexes[f].get_indexer(s)
                cols[f] = codes.astype(np.int32 if len(lookup[f]) >= 2**15 else np.int16)
            cols[_POS] = int(offsets[pid]) + seen
            yield _blob_row(pid, int(seen[0]), n, 0, None, _pack(cols))

    blobs = annotated.mapInArrow(encode, _BLOBS).persist()
    frame = SparkStringFrame(spark, source, blobs, {**fields, _POS: _POS}, offsets, n_rows, values, names,
                             types={**{f: "int" for f in field_list}, _POS: "long"})
    frame._run(blobs.agg(F.count(F.lit(1))))
    annotated.unpersist()
    if n_rows == 0:
        raise DataError(f"{source}: has a header but no data rows")
    return frame


__all__ = ["SparkStringFrame", "load_spark_strings"]

_ = (_DATA, _START)  # the cached batches' layout (SparkFrame's), named here for readers
