"""Spark jobs of the commands that look at rows without releasing them (docs/spark.md):
``cluster --assign`` (a row per input row), ``cluster --allow-data-bounds`` (min and max)
and ``taxonomy validate`` (the values the schema does not cover).

Each job runs the numpy engine's own function on the executors, an Arrow batch at a time,
and lets Spark add the partial results up; the driver collects aggregates only (a min and
max per column; per column the first uncovered values and counts; a row count per
partition) — or, for ``--assign``, nothing: Spark writes the rows (:mod:`.write`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dpkit.engine.spark.read import numbered, raw_input
from dpkit.errors import DataError

# --------------------------------------------------------------------------- cluster


def extremes(frame: Any, columns: Sequence[str]) -> np.ndarray:
    """(2, d): the min and max of each column of a Spark frame — one aggregation.

    For ``--allow-data-bounds`` only, which is NOT private (the numpy engine takes the same
    min and max of its points: :func:`dpkit.algorithms.cluster.common.data_bounds`)."""
    from pyspark.sql import functions as F

    from dpkit.engine.spark.session import _collect

    fields = [frame.fields[c] for c in columns]
    aggs = [F.min(f) for f in fields] + [F.max(f) for f in fields]
    (row,) = _collect(frame.df.agg(*aggs), kind="extremes")
    d = len(fields)
    return np.array([[float(row[j]) for j in range(d)], [float(row[d + j]) for j in range(d)]])


def label_rows(frame: Any, options: Any, labeller: Any, column: str, output: str, *,
               delimiter: str = ",", mode: int = 0o600) -> None:
    """Every raw input row with a label column, computed on the executors and written by Spark
    (``cluster --assign``): the executors re-read the input (all columns, as strings: the numpy
    engine's raw table) and apply ``labeller`` — a picklable callable from a DataFrame of raw
    rows to the same rows with ``column`` added, the one function the numpy engine applies to
    its whole table — to every batch."""
    from dpkit.engine.spark.write import raw_strings, write_rows

    spark = frame.spark
    raw, names, parquet = raw_input(spark, options)
    header = [*names, column] if column not in names else list(names)

    def render(batch: Any) -> Any:
        return labeller(raw_strings(batch, names, parquet))

    write_rows(spark, raw, render, header, output, delimiter=delimiter, mode=mode)


# --------------------------------------------------------------------------- taxonomy validate


def coverage(spark: Any, options: Any, schema: Any, *, first_line: int = 2, max_listed: int = 5) -> tuple[Any, list[str]]:
    """``taxonomy validate``'s scan on Spark: (a :class:`~dpkit.data.coverage.Coverage` equal to
    the numpy engine's, the column names). One job: every batch lists its uncovered values
    (first row, count), values out of bounds and rows with a missing token; Spark groups
    them by (column, value) and keeps, per column, the first ``max_listed`` values by first
    occurrence and the number of distinct ones. Rows are numbered in Spark's read order
    (partition, row in it) — for one file its line order."""
    import pyarrow as pa
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from dpkit.data.coverage import Coverage, batch_coverage
    from dpkit.engine.spark.session import _collect
    from dpkit.engine.spark.write import raw_strings

    raw, names, parquet = raw_input(spark, options)
    wanted = schema.used_columns()
    missing_columns = [c for c in wanted if c not in names]
    present = [c for c in wanted if c in names]
    tokens = list(schema.missing_tokens)
    positions = [names.index(c) for c in present]

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for pid, seen, batch in numbered(batches):
            n = batch.num_rows
            sub = pa.RecordBatch.from_arrays([batch.column(p) for p in positions], names=present)
            found = batch_coverage(raw_strings(sub, present, parquet), schema, present, tokens)
            rows = [("rows", "", "", seen, n)]
            rows += [("bad", c, v, seen + f, k) for c, v, f, k in found["bad"]]
            rows += [("below", c, "", 0, b) for c, b, _ in found["bounds"] if b]
            rows += [("above", c, "", 0, a) for c, _, a in found["bounds"] if a]
            if found["missing"] is not None:
                r, c = found["missing"]
                rows.append(("missing", c, "", seen + r, found["missing_rows"]))
            cols = list(zip(*rows, strict=True))
            yield pa.RecordBatch.from_pydict({
                "kind": pa.array(cols[0], pa.string()), "col": pa.array(cols[1], pa.string()),
                "value": pa.array(cols[2], pa.string()), "pid": pa.array([pid] * len(rows), pa.int64()),
                "idx": pa.array(cols[3], pa.int64()), "n": pa.array(cols[4], pa.int64())})

    ddl = "kind string, col string, value string, pid long, idx long, n long"
    parts = raw.mapInArrow(run, ddl)
    # a partition's row count is keyed by the partition (value); other kinds by (column, value)
    parts = parts.withColumn("value", F.when(F.col("kind") == "rows", F.col("pid").cast("string"))
                             .otherwise(F.col("value")))
    grouped = parts.groupBy("kind", "col", "value").agg(
        F.min(F.struct("pid", "idx")).alias("first"), F.sum("n").alias("n"))
    per_col = Window.partitionBy("kind", "col")
    ranked = (grouped.withColumn("rank", F.row_number().over(per_col.orderBy("first")))
              .withColumn("distinct", F.count(F.lit(1)).over(per_col))
              .filter((F.col("kind") != "bad") | (F.col("rank") <= max_listed)))
    rows = _collect(ranked.select("kind", "col", "value", "first.pid", "first.idx", "n", "rank", "distinct"),
                    kind="coverage")
    sizes = {int(r["value"]): int(r["n"]) for r in rows if r["kind"] == "rows"}
    counts = np.zeros(max(sizes, default=-1) + 1, dtype=np.int64)
    for pid, size in sizes.items():
        counts[pid] = size
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    if int(counts.sum()) == 0:
        raise DataError(f"{options.name}: has a header but no data rows")

    def line(r: Any) -> int:
        return int(offsets[int(r["pid"])] + int(r["idx"])) + first_line

    uncovered: dict[str, list[tuple[str, int]]] = {}
    distinct: dict[str, int] = {}
    bounds: dict[str, tuple[int, int]] = {}
    missing_rows = 0
    missing_first: tuple[int, str] | None = None
    for c in present:
        bad = sorted((r for r in rows if r["kind"] == "bad" and r["col"] == c), key=lambda r: r["rank"])
        if bad:
            uncovered[c] = [(r["value"], line(r)) for r in bad]
            distinct[c] = int(bad[0]["distinct"])
        below = sum(int(r["n"]) for r in rows if r["kind"] == "below" and r["col"] == c)
        above = sum(int(r["n"]) for r in rows if r["kind"] == "above" and r["col"] == c)
        if below or above:
            bounds[c] = (below, above)
    missing = [r for r in rows if r["kind"] == "missing"]
    if missing:
        missing_rows = sum(int(r["n"]) for r in missing)
        first = min(missing, key=lambda r: (int(r["pid"]), int(r["idx"])))
        missing_first = (line(first), first["col"])
    cov = Coverage(source=options.name, missing_columns=missing_columns, uncovered=uncovered,
                   uncovered_distinct=distinct, out_of_bounds=bounds, missing_rows=missing_rows,
                   missing_first=missing_first)
    return cov, names


__all__ = ["coverage", "extremes", "label_rows"]
