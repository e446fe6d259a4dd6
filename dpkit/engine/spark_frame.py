"""The Spark engine: the frame protocol as Spark aggregations (docs/spark.md).

Spark reads the input itself (CSV with the dialect of :class:`~dpkit.data.source.ReadOptions`,
or Parquet; any path or URI Spark reads). Each batch of rows is encoded on the executors by
the *same* function as the numpy engine (:func:`dpkit.data.table.encode`: leaf codes from the
schema's public taxonomy, numbers clipped to the public bounds), and each primitive evaluates
its keys with the same :func:`dpkit.engine.keys.evaluate` inside ``mapInArrow``, adds the
counts of a batch up, and lets Spark add the partial counts by key (``groupBy().sum()``).
The driver receives aggregates only — counts per cell, per (value, key), exact sums — never
a row. Integer counts and exact sums do not depend on how the rows are split into
partitions, so both engines return the same numbers and dpkit's outputs are byte-identical.

Row positions (for :class:`~dpkit.engine.keys.RowHash`): the encoded rows keep their
partition id and index inside the partition; one small job counts the rows of every
partition, and the offsets make a 0-based global position in Spark's read order (for one
file: its line order, the numpy engine's order).
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dpkit.data.schema import CategoricalColumn, Schema
from dpkit.engine.keys import Key, RowHash, columns_of, evaluate, shape_check
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning

DEFAULT_MASTER = "local[*]"
#: rows per Arrow batch handed to the numpy code on the executors
BATCH_ROWS = 1 << 16
# a data error crosses from an executor to the driver inside Spark's exception text, which
# also quotes the raising source line: the marker is built so that line does not match
_MARK = ("DPKIT-DATA-ERROR<<", ">>")
_ERR = re.compile(re.escape(_MARK[0]) + "(.*?)" + re.escape(_MARK[1]), re.S)
_PID, _IDX, _KEEP, _DROP = "__pid", "__idx", "__keep", "__dropped"


def session(master: str | None = None) -> Any:
    """The active SparkSession (``spark-submit``) or a new one on ``master`` (``local[*]``)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DpkitUsageError("--engine spark needs pyspark: pip install 'dpkit[spark]'") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # executors start Python workers: use this interpreter (it has numpy, pyarrow and dpkit)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master or DEFAULT_MASTER).appName("dpkit")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={_quiet_log4j()}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))
        .config("spark.sql.shuffle.partitions", "8")
    )
    import time

    start = time.perf_counter()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    STATS["session"] = [time.perf_counter() - start]
    if os.environ.get("DPKIT_SPARK_STATS"):
        import atexit

        atexit.register(_print_stats)
    return spark


_LOG4J = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
"""


def _quiet_log4j() -> str:
    """A log4j2 configuration that keeps Spark's JVM quiet on stderr: dpkit's stderr is one
    line per warning or error (docs/errors.md); Spark's failures reach dpkit as exceptions."""
    import atexit
    import tempfile

    fd, path = tempfile.mkstemp(prefix="dpkit-log4j2-", suffix=".properties")  # private (0600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J)
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return path


def _data_error(exc: BaseException) -> DataError | None:
    """The dpkit message a failed Spark job carries, if the failure was one."""
    m = _ERR.search(str(exc))
    return DataError(m.group(1)) if m else None


#: jobs run and their wall seconds, by kind (``$DPKIT_SPARK_STATS=1`` prints them at exit:
#: the benchmark's cost model, bench/bench_spark.py)
STATS: dict[str, list[float]] = {}


def _collect(df: Any, kind: str = "aggregate") -> list[Any]:
    """``df.collect()`` with dpkit's data errors raised as themselves (no Java traceback)."""
    import time

    start = time.perf_counter()
    try:
        rows = df.collect()
    except Exception as exc:  # py4j / pyspark wrap the executor's exception
        err = _data_error(exc)
        if err is not None:
            raise err from None
        raise
    STATS.setdefault(kind, []).append(time.perf_counter() - start)
    return rows


def _print_stats() -> None:
    import json

    print("dpkit-spark-stats " + json.dumps(STATS), file=sys.stderr)


# --------------------------------------------------------------------------- reading


def _sniff(spark: Any, path: str) -> str:
    """The delimiter of the header line among , ; tab | (the numpy reader's candidates)."""
    first = spark.read.text(path).limit(1).collect()
    line = first[0][0] if first else ""
    return max([",", ";", "\t", "|"], key=line.count)


def _spark_encoding(encoding: str) -> str:
    e = encoding.lower().replace("_", "-")
    return "UTF-8" if e in ("utf-8-sig", "utf8", "utf-8") else encoding


def _read(spark: Any, options: Any) -> tuple[Any, list[str]]:
    """The raw table (every column a string for CSV) and its column names."""
    fmt = options.fmt or ("parquet" if str(options.path).rstrip("/").lower().endswith((".parquet", ".pq"))
                          or _is_dir(options.path) else "csv")
    if fmt == "parquet":
        df = spark.read.parquet(options.path)
        return df, list(df.columns)
    delimiter = options.delimiter or _sniff(spark, options.path)
    reader = (
        spark.read.option("header", bool(options.header)).option("sep", delimiter)
        .option("encoding", _spark_encoding(options.encoding)).option("quote", '"').option("escape", '"')
        .option("mode", "FAILFAST").option("inferSchema", False)
        .option("ignoreLeadingWhiteSpace", False).option("ignoreTrailingWhiteSpace", False)
    )
    df = reader.csv(options.path)
    names = [str(c) for c in df.columns]
    if names:
        names[0] = names[0].lstrip("\ufeff")  # utf-8-sig: the BOM is not part of the name
    if not options.header:
        names = list(options.column_names) if options.column_names else [f"c{i + 1}" for i in range(len(names))]
    return df, names


def _is_dir(path: str) -> bool:
    return "://" not in str(path) and os.path.isdir(str(path))


def load_spark(options: Any, schema: Schema, columns: Sequence[str] | None = None, *,
               master: str | None = None, spark: Any = None) -> SparkFrame:
    """Read and encode ``columns`` on Spark; returns a :class:`SparkFrame`.

    Problems in the data stop the job with the numpy engine's one-line message; its line
    number is exact for the first partition of a single file and is otherwise the row's
    position inside its Spark partition (said in the message).
    """
    import pandas as pd

    from dpkit.data.table import encode

    if options.path == "-":
        raise DpkitUsageError("--engine spark reads files or URIs, not stdin ('-')")
    spark = spark or session(master)
    wanted = list(columns) if columns is not None else schema.used_columns()
    source = options.name
    try:
        raw, names = _read(spark, options)
    except Exception as exc:
        if isinstance(exc, DpkitUsageError):
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{source}: cannot read with Spark: {msg}") from None
    # header problems (a schema column not in the file, an 'ignore' column) on the driver,
    # with encode's own messages: it checks the header before any row
    encode(pd.DataFrame({c: pd.Series([], dtype=object) for c in names}), schema, wanted, source=source)
    positions = [names.index(c) for c in wanted]
    raw = raw.select(*[raw.columns[p] for p in positions])
    fields = [f"f{i}" for i in range(len(wanted))]
    cat = [isinstance(schema.columns[c], CategoricalColumn) for c in wanted]
    out_schema = ", ".join(
        [f"{f} {'int' if is_cat else 'double'}" for f, is_cat in zip(fields, cat, strict=True)]
        + [f"{_PID} int", f"{_IDX} long", f"{_KEEP} int", f"{_DROP} long", "__clip string"]
    )
    encode_batches = _encoder(schema, wanted, fields, cat, source)
    encoded = raw.mapInArrow(encode_batches, out_schema).persist()
    frame = SparkFrame(spark, schema, source, encoded, dict(zip(wanted, fields, strict=True)))
    frame._prepare(wanted)
    return frame


def _encoder(schema: Schema, wanted: list[str], fields: list[str], cat: list[bool], source: str):  # noqa: ANN202
    """The per-partition encoding function shipped to the executors."""
    from dpkit.console import owner_watching

    # executors are not the user's terminal: their error messages take the driver's form
    watching = owner_watching()

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd
        import pyarrow as pa
        from pyspark import TaskContext

        from dpkit.data.table import encode

        pid = TaskContext.get().partitionId()
        seen = 0  # rows of this partition read so far (kept or not)
        kept = 0
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            data = {}
            for i, c in enumerate(wanted):
                col = batch.column(i)
                values = col.to_pandas()
                if cat[i] or pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                    values = values.astype(object).where(values.notna(), "")
                    values = values.map(lambda v: v if isinstance(v, str) else str(v)).str.strip()
                data[c] = values.to_numpy(dtype=object)
            df = pd.DataFrame(data, columns=wanted)
            from dpkit.console import set_verbose

            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    # exact counts travel to the driver, which alone decides what stderr shows
                    set_verbose(True)
                    try:
                        table = encode(df, schema, wanted, source=source)
                    except DataError:
                        set_verbose(watching)  # the error message in the form the driver shows
                        table = encode(df, schema, wanted, source=source)
            except DataError as exc:
                # encode numbers lines from the batch's first row: make them the partition's
                msg = re.sub(re.escape(source) + r":(\d+):",
                             lambda m, seen=seen: _line(source, pid, seen, int(m.group(1))), str(exc), count=1)
                raise RuntimeError(_MARK[0] + msg + _MARK[1]) from None
            clips = [str(w.message) for w in caught if "clipped" in str(w.message)]
            dropped = n - table.n_rows
            cols = {f: (np.asarray(table.columns[c], dtype=np.int32) if cat[i]
                        else np.asarray(table.columns[c], dtype=float))
                    for i, (c, f) in enumerate(zip(wanted, fields, strict=True))}
            m = table.n_rows
            cols[_PID] = np.full(m, pid, dtype=np.int32)
            cols[_IDX] = np.arange(kept, kept + m, dtype=np.int64)
            cols[_KEEP] = np.ones(m, dtype=np.int32)
            cols[_DROP] = np.zeros(m, dtype=np.int64)
            seen += n
            kept += m
            arrays = {k: pa.array(v) for k, v in cols.items()}
            arrays["__clip"] = pa.nulls(m, pa.string())
            yield pa.RecordBatch.from_pydict(arrays)
            if dropped or clips:
                # one bookkeeping row (not data): rows dropped for a missing value, clipping
                stat: dict[str, Any] = {f: pa.array([0], pa.int32() if cat[i] else pa.float64())
                                        for i, f in enumerate(fields)}
                stat.update({_PID: pa.array([pid], pa.int32()), _IDX: pa.array([-1], pa.int64()),
                             _KEEP: pa.array([0], pa.int32()), _DROP: pa.array([dropped], pa.int64()),
                             "__clip": pa.array(["\n".join(clips) or None], pa.string())})
                yield pa.RecordBatch.from_pydict(stat)

    return run


def _line(source: str, pid: int, seen: int, line: int) -> str:
    if pid == 0:
        return f"{source}:{seen + line}:"
    return f"{source} (Spark partition {pid}, record {seen + line - 1} of it):"


_CLIP = re.compile(r"clipped (\d+) value\(s\) of ('.*?') to the public bounds (.*)$")


def _clip_warnings(messages: list[str], source: str) -> list[str]:
    """The numpy engine's clipping warnings, with the counts added up over the batches."""
    total: dict[tuple[str, str], int] = {}
    for text in messages:
        for line in text.splitlines():
            m = _CLIP.search(line)
            if m:
                key = (m.group(2), m.group(3))
                total[key] = total.get(key, 0) + int(m.group(1))
    from dpkit.console import private

    return [private(f"{source}: clipped {n} value(s) of {col} to the public bounds {rest}",
                    f"{source}: clipped values of {col} to the public bounds {rest}")
            for (col, rest), n in total.items()]


# --------------------------------------------------------------------------- the frame


class SparkFrame:
    """A frame over an encoded Spark DataFrame (persisted); every primitive is one job."""

    engine = "spark"

    def __init__(self, spark: Any, schema: Schema, source: str, df: Any, fields: dict[str, str],
                 offsets: np.ndarray | None = None, n_rows: int = 0, parent: SparkFrame | None = None) -> None:
        self.spark = spark
        self.schema = schema
        self.source = source
        self.df = df
        self.fields = fields  # column name → field of df
        self.offsets = offsets
        self.n_rows = n_rows
        self._parent = parent

    def _prepare(self, wanted: list[str]) -> None:
        """One job: rows kept per partition (→ positions), rows dropped, values clipped."""
        from pyspark.sql import functions as F

        rows = _collect(kind="read+encode", df=self.df.groupBy(_PID).agg(
            F.sum(_KEEP).alias("kept"), F.sum(_DROP).alias("dropped"),
            F.concat_ws("\n", F.collect_list("__clip")).alias("clips")))
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
        self.df = self.df.filter(f"{_KEEP} = 1")
        if dropped:
            from dpkit.data.table import dropped_message

            warnings.warn(dropped_message(self.source, dropped, self.schema), DpkitWarning, stacklevel=3)
        for text in _clip_warnings(clips, self.source):
            warnings.warn(text, DpkitWarning, stacklevel=3)
        if self.n_rows == 0:
            raise DataError(f"{self.source}: has a header but no data rows")

    # ------------------------------------------------------------------ protocol

    def count(self) -> int:
        return self.n_rows

    def column_names(self) -> list[str]:
        return list(self.fields)

    def _batches(self, keys: Sequence[Key], extra: Sequence[str] = ()) -> tuple[list[str], Any]:
        """The fields a job reads and a function giving, per Arrow batch, the keys' codes."""
        names = sorted(set().union(*(columns_of(k) for k in keys), set(extra)))
        for n in names:
            if n not in self.fields:
                raise KeyError(f"the frame has no column {n!r}")
        needs_pos = any(_uses_rowhash(k) for k in keys)
        read = [self.fields[n] for n in names] + [_PID, _IDX]
        offsets = self.offsets

        def codes(batch: Any) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
            cols = {n: batch.column(i).to_numpy(zero_copy_only=False) for i, n in enumerate(names)}
            start = 0
            if needs_pos:
                pid = batch.column(len(names)).to_numpy(zero_copy_only=False)
                idx = batch.column(len(names) + 1).to_numpy(zero_copy_only=False)
                pos = offsets[pid] + idx
                if len(pos) and not np.array_equal(pos, np.arange(pos[0], pos[0] + len(pos))):
                    raise RuntimeError("rows of a batch are not consecutive")
                start = int(pos[0]) if len(pos) else 0
            return cols, [evaluate(k, cols, start, batch.num_rows) for k in keys]

        return read, codes

    def _cell_job(self, keys: Sequence[Key], value: str | None = None) -> np.ndarray:
        """Rows (value?, k0..k(d−1), count) of the non-empty cells, summed over partitions."""
        return self._cell_jobs([(list(keys), value)])[0]

    def _cell_jobs(self, requests: Sequence[tuple[list[Key], str | None]]) -> list[np.ndarray]:
        """:meth:`_cell_job` for several requests in ONE Spark job (one scan, one shuffle):
        each batch emits rows (request, value, k0..k(D−1), count), D the most keys of any."""
        import pyarrow as pa
        from pyspark.sql import functions as F

        flat = [k for keys, _ in requests for k in keys]
        values = sorted({v for _, v in requests if v is not None})
        read, codes = self._batches(flat, values)
        width = max((len(keys) for keys, _ in requests), default=0)
        kcols = [f"k{j}" for j in range(width)]
        spans = []
        at = 0
        for keys, _ in requests:
            spans.append((at, at + len(keys)))
            at += len(keys)
        plan = [(a, b, v) for (a, b), (_, v) in zip(spans, requests, strict=True)]

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                cols, cs = codes(batch)
                for r, (a, b, value) in enumerate(plan):
                    d = b - a
                    stacked = np.stack(cs[a:b], axis=1) if d else np.zeros((batch.num_rows, 0), dtype=np.int64)
                    ok = (stacked >= 0).all(axis=1)
                    v = (np.asarray(cols[value], dtype=float)[ok] if value is not None
                         else np.zeros(int(ok.sum())))
                    stacked = np.column_stack([v.view(np.int64), stacked[ok]])
                    if not len(stacked):
                        continue
                    uniq, cnt = np.unique(stacked, axis=0, return_counts=True)
                    out = {"r": pa.array(np.full(len(uniq), r, dtype=np.int64)),
                           "v": pa.array(uniq[:, 0].view(np.float64))}
                    for j, k in enumerate(kcols):
                        out[k] = pa.array(uniq[:, 1 + j] if j < d else np.zeros(len(uniq), dtype=np.int64))
                    out["n"] = pa.array(cnt.astype(np.int64))
                    yield pa.RecordBatch.from_pydict(out)

        ddl = ", ".join(["r long", "v double"] + [f"{k} long" for k in kcols] + ["n long"])
        group = ["r", "v", *kcols]
        agg = self.df.select(*read).mapInArrow(run, ddl).groupBy(*group).agg(F.sum("n").alias("n"))
        rows = self._run(agg)
        table = np.array([tuple(row) for row in rows], dtype=object).reshape(-1, len(group) + 1)
        out = []
        for r, (a, b, value) in enumerate(plan):
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
        rows = self._cell_jobs(jobs)
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
            self._parent.df.unpersist()
            self._parent = None
        return rows

    def counts(self, keys: Sequence[Key], shape: Sequence[int]) -> np.ndarray:
        shape_check(keys, shape)
        return self._dense(shape, self._cell_job(keys))

    def cells(self, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        rows = self._cell_job(keys)
        d = len(keys)
        if not len(rows):
            return np.zeros((0, d), dtype=np.int64), np.zeros(0, dtype=np.int64)
        order = np.lexsort(rows[:, :d].T[::-1])
        rows = rows[order]
        return np.ascontiguousarray(rows[:, :d]), np.ascontiguousarray(rows[:, d])

    def value_counts(self, column: str, keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        shape_check(keys, shape)
        return self._by_value(shape, self._cell_job(keys, value=column))

    def sums(self, columns: Sequence[str], keys: Sequence[Key], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        import pyarrow as pa
        from pyspark.sql import functions as F

        from dpkit.data.counting import sum_parts, sums_from_parts

        shape_check(keys, shape)
        shp = tuple(int(s) for s in shape)
        size = int(np.prod(shp, dtype=np.int64))
        read, codes = self._batches(keys, list(columns))
        names = list(columns)

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                cols, cs = codes(batch)
                ok = np.ones(batch.num_rows, dtype=bool)
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
        agg = (self.df.select(*read).mapInArrow(run, ddl).groupBy("kind", "g", "j", "e")
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
        import pyarrow as pa

        read, codes = self._batches([key])
        field = f"d{len(self.fields)}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
        keep = [f for f in self.df.columns if f != self.fields.get(name)]

        def run(batches: Iterator[Any]) -> Iterator[Any]:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                sub = pa.RecordBatch.from_arrays([batch.column(batch.schema.get_field_index(f)) for f in read],
                                                 names=read)
                _, (code,) = codes(sub)
                arrays = [batch.column(batch.schema.get_field_index(f)) for f in keep] + [pa.array(code)]
                yield pa.RecordBatch.from_arrays(arrays, names=[*keep, field])

        types = {f.name: f.dataType.simpleString() for f in self.df.schema.fields}
        ddl = ", ".join([f"{f} {types[f]}" for f in keep] + [f"{field} long"])
        df = self.df.mapInArrow(run, ddl).persist()
        fields = {n: f for n, f in self.fields.items() if n != name}
        fields[name] = field
        parent = self if self._parent is not None or self._is_derived() else None
        return SparkFrame(self.spark, self.schema, self.source, df, fields, self.offsets, self.n_rows, parent)

    def _is_derived(self) -> bool:
        return any(f.startswith("d") and "_" in f for f in self.fields.values())


def _uses_rowhash(key: Key) -> bool:
    from dpkit.engine.keys import Route

    if isinstance(key, RowHash):
        return True
    if isinstance(key, Route):
        return _uses_rowhash(key.node)
    return False


__all__ = ["DEFAULT_MASTER", "SparkFrame", "load_spark", "session"]
