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

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dpkit.data.schema import CategoricalColumn, Schema
from dpkit.engine.keys import Key, columns_of, evaluate, shape_check
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn

DEFAULT_MASTER = "local[*]"
#: JVM options for a session dpkit starts on a local master (local[N], local-cluster[...])
_LOCAL_JVM = "-XX:TieredStopAtLevel=1"
#: rows per Arrow batch handed to the numpy code on the executors
BATCH_ROWS = 1 << 16
# a data error crosses from an executor to the driver inside Spark's exception text, which
# also quotes the raising source line: the marker is built so that line does not match
_MARK = ("DPKIT-DATA-ERROR<<", ">>")
_ERR = re.compile(re.escape(_MARK[0]) + "(.*?)" + re.escape(_MARK[1]), re.S)
_PID, _IDX, _START, _ROWS, _DROP, _CLIPS, _DATA = (
    "__pid", "__idx", "__start", "__rows", "__dropped", "__clip", "__data")
#: the cached encoded table: one row per encoded batch — its partition, its first row's
#: index in the partition, its rows, the rows it dropped, its clipping warnings, and the
#: batch itself (Arrow IPC, LZ4): Spark stores and ships opaque bytes, never a row
_NP = {"tinyint": np.int8, "smallint": np.int16, "int": np.int32, "bigint": np.int64, "long": np.int64,
       "double": np.float64}
_BLOBS = (f"{_PID} int, {_START} long, {_ROWS} long, {_DROP} long, {_CLIPS} string, {_DATA} binary")


def _blob_row(pid: int, start: int, rows: int, dropped: int, clip: str | None, data: bytes) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [pa.array([pid], pa.int32()), pa.array([start], pa.int64()), pa.array([rows], pa.int64()),
         pa.array([dropped], pa.int64()), pa.array([clip], pa.string()), pa.array([data], pa.binary())],
        names=[_PID, _START, _ROWS, _DROP, _CLIPS, _DATA])


def _pack(cols: dict[str, np.ndarray]) -> bytes:
    """An encoded batch as Arrow IPC bytes (LZ4). A float column of whole numbers travels as
    the smallest int type (exact; listed in the metadata, made float64 again on unpacking)."""
    import pyarrow as pa

    arrays, floats = [], []
    for f, v in cols.items():
        if v.dtype == np.float64:
            small = _whole(v)
            if small is not None:
                v = small
                floats.append(f)
        arrays.append(pa.array(v))
    batch = pa.RecordBatch.from_arrays(arrays, names=list(cols))
    batch = batch.replace_schema_metadata({"dpkit_float": ",".join(floats)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def _whole(v: np.ndarray) -> np.ndarray | None:
    """``v`` as int8/16/32 when every value is a whole number in range (and none is -0.0)."""
    if not len(v):
        return None
    lo, hi = float(v.min()), float(v.max())
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo < -(2.0 ** 31) or hi >= 2.0 ** 31:
        return None
    if not np.array_equal(v, np.trunc(v)) or (np.signbit(v) & (v == 0)).any():
        return None
    for dt in (np.int8, np.int16, np.int32):
        info = np.iinfo(dt)
        if info.min <= lo and hi <= info.max:
            return v.astype(dt)
    return None


def _unpack(data: bytes, names: Sequence[str] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """(field → values, rows) of a packed batch; only ``names`` when given."""
    import pyarrow as pa

    batch = pa.ipc.open_stream(data).read_next_batch()
    meta = batch.schema.metadata or {}
    floats = set(meta.get(b"dpkit_float", b"").decode().split(","))
    want = batch.schema.names if names is None else names
    out = {}
    for f in want:
        v = batch.column(batch.schema.get_field_index(f)).to_numpy(zero_copy_only=False)
        out[f] = v.astype(np.float64) if f in floats else v
    return out, batch.num_rows


def _blobs(batches: Iterator[Any], names: Sequence[str] | None, offsets: np.ndarray | None
           ) -> Iterator[tuple[dict[str, np.ndarray], int, int]]:
    """(fields, first row's 0-based position, rows) of each non-empty packed batch of a job
    over ``select(_PID, _START, _DATA)`` of the cached table."""
    for batch in batches:
        pids = batch.column(0).to_pylist()
        starts = batch.column(1).to_pylist()
        datas = batch.column(2)
        for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
            cols, n = _unpack(datas[i].as_py(), names)
            if n:
                yield cols, (int(offsets[pid]) + int(start)) if offsets is not None else int(start), n


def session(master: str | None = None) -> Any:
    """The active SparkSession (``spark-submit``) or a new one on ``master`` (``local[*]``)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DpkitUsageError("engine spark needs pyspark: pip install 'dpkit[spark]'", param="engine") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # executors start Python workers: use this interpreter (it has numpy, pyarrow and dpkit)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = master or DEFAULT_MASTER
    java = f"-Dlog4j.configurationFile={_quiet_log4j()}"
    if master.startswith("local"):
        # a JVM that lives for one dpkit run on this machine: the C1 compiler only. Its JIT
        # threads no longer compete with the job for the cores, and the JVM does little per
        # row here (the executors' Python encodes; the cache holds packed batches): session
        # start and first jobs ~40% faster (docs/results/bench-spark.md)
        java += " " + _LOCAL_JVM
    builder = (
        SparkSession.builder.master(master).appName("dpkit")
        .config("spark.driver.extraJavaOptions", java)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(BATCH_ROWS))
        .config("spark.sql.shuffle.partitions", "8")
    )
    if master.startswith("local"):
        builder = builder.config("spark.executor.extraJavaOptions", _LOCAL_JVM)  # local-cluster's executors
    import time

    start = time.perf_counter()
    with _jvm_stderr_quiet():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    STATS["session"] = [time.perf_counter() - start]
    if os.environ.get("DPKIT_SPARK_STATS"):
        import atexit

        atexit.register(_print_stats)
    return spark


@contextlib.contextmanager
def _jvm_stderr_quiet() -> Iterator[None]:
    """Start the JVM with its stderr on /dev/null unless -v was given (issue 23): its start-up
    lines ("Using incubator modules", "Setting default log level") are printed before any
    log4j configuration applies, and dpkit's stderr is one line per warning or error. The
    JVM inherits the descriptor for its life; its failures reach dpkit as exceptions. PySpark's
    "does not yet fully support pandas >= 3.0.0" warning is dropped too (the engines' outputs
    are tested byte-identical on the pandas installed)."""
    from dpkit.console import verbose

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    if verbose():
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


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
    STATS.setdefault(kind + " rows", []).append(float(len(rows)))
    return rows


def _print_stats() -> None:
    """The job timings; the rows per job (e.g. publish's occupied cells: a count of the private
    data) only under the private-detail rule (dpkit.console; issue 24 item 6)."""
    import json

    from dpkit.console import owner_watching

    shown = STATS if owner_watching() else {k: v for k, v in STATS.items() if not k.endswith(" rows")}
    print("dpkit-spark-stats " + json.dumps(shown), file=sys.stderr)


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

    A local CSV file is read by the executors themselves, in byte ranges, with Arrow's CSV
    reader (:func:`_split_reader`; what the numpy engine's fast reader does); anything else
    (a URI, a directory, Parquet, quotes or bytes that are not UTF-8 in the file) by Spark's
    own reader. Problems in the data stop the job with the numpy engine's one-line message;
    its line number is exact for a local file and for the first partition of another single
    file, and is otherwise the row's position inside its Spark partition (said in the message).
    """
    from dpkit.data.table import resolve

    if options.path == "-":
        raise DpkitUsageError("engine spark reads files or URIs, not stdin ('-')", param="engine")
    options = resolve(options)  # a local file's delimiter sniffed as the numpy engine does
    spark = spark or session(master)
    wanted = list(columns) if columns is not None else schema.used_columns()
    source = options.name
    fields, types, encode_stream = encoding(schema, wanted, source)
    out_schema = _BLOBS
    local = _local_csv(options)
    if local is not None:
        names, data_start, size = local
        _check_header(names, schema, wanted, source)
        splits = _splits(data_start, size, spark.sparkContext.defaultParallelism)
        reader = _split_reader(os.path.abspath(options.path), splits, names, [names.index(c) for c in wanted],
                               options.delimiter or ",", encode_stream)
        encoded = spark.range(0, len(splits), 1, len(splits)).mapInArrow(reader, out_schema).persist()
        frame = SparkFrame(spark, schema, source, encoded, dict(zip(wanted, fields, strict=True)), types=types)
        try:
            frame._prepare(wanted)
            return frame
        except Exception as exc:
            if _FALLBACK not in str(exc):
                raise
            encoded.unpersist()  # something Arrow's reader does not take: Spark's CSV reader below
    try:
        raw, names = _read(spark, options)
    except Exception as exc:
        if isinstance(exc, DpkitUsageError):
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{source}: cannot read with Spark: {msg}") from None
    _check_header(names, schema, wanted, source)
    positions = [names.index(c) for c in wanted]
    raw = raw.select(*[raw.columns[p] for p in positions])
    encoded = raw.mapInArrow(_spark_reader(encode_stream), out_schema).persist()
    frame = SparkFrame(spark, schema, source, encoded, dict(zip(wanted, fields, strict=True)), types=types)
    frame._prepare(wanted)
    return frame


def _check_header(names: list[str], schema: Schema, wanted: list[str], source: str) -> None:
    """Header problems (a schema column not in the file, an 'ignore' column) on the driver,
    with encode's own messages: it checks the header before any row."""
    import pandas as pd

    from dpkit.data.table import encode

    encode(pd.DataFrame({c: pd.Series([], dtype=object) for c in names}), schema, wanted, source=source)


# --------------------------------------------------------------------------- local CSV files

#: bytes of a local CSV file per Spark task (at least two tasks per core)
SPLIT_BYTES = 64 << 20
#: bytes per Arrow block inside a task (a batch of ~70k Adult rows)
BLOCK_BYTES = 8 << 20
# a task met something only Spark's CSV reader takes (quotes, a ragged row, bad UTF-8)
_FALLBACK = "DPKIT-ARROW-FALLBACK"
_UTF8 = ("utf-8", "utf8", "utf-8-sig", "utf8-sig", "ascii", "us-ascii")


def _local_csv(options: Any) -> tuple[list[str], int, int] | None:
    """(header, first data byte, file size) of a local CSV file that Arrow may read in byte
    ranges on the executors; None: Spark's CSV reader reads it (a URI, a directory, Parquet,
    an encoding other than UTF-8/ASCII, a header with quotes or none found in the first bytes).

    The header is the numpy engine's (``dpkit.data.table._quick_header``: stripped, checked).
    """
    from dpkit.data.columnar import SAMPLE_BYTES, is_parquet
    from dpkit.data.table import _quick_header

    path = str(options.path)
    if "://" in path or not os.path.isfile(path) or is_parquet(options):
        return None
    if options.encoding.lower().replace("_", "-") not in _UTF8 or (options.delimiter or ",") == '"':
        return None
    with open(path, "rb") as fh:
        head = fh.read(SAMPLE_BYTES)
        size = os.fstat(fh.fileno()).st_size
    if b"\n" not in head or b'"' in head[: head.index(b"\n")]:
        return None
    header = _quick_header(options, None)
    if header is None:
        return None
    bom = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    if bom and not options.header:
        return None
    return header, (head.index(b"\n") + 1 if options.header else 0), size


def _splits(start: int, size: int, cores: int) -> list[tuple[int, int]]:
    """Byte ranges ``[a, b)`` of the data: a task reads the lines that *start* in its range."""
    n = max(2 * max(cores, 1), -(-(size - start) // SPLIT_BYTES), 1)
    edges = [start + (size - start) * i // n for i in range(n + 1)]
    return [(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)]


_BLANK = (re.compile(rb"(?<=\n)\n"), re.compile(rb"(?<=\n\r)\n"))


def _rows_before(path: str, start: int, end: int) -> int:
    """Data rows in bytes ``[start, end)`` of a file (its non-blank lines, as the readers count
    them): the line numbers of a later byte range's data errors. Read on an error only."""
    rows = 0
    prev = b"\n"
    with open(path, "rb") as fh:
        fh.seek(start)
        left = end - start
        while left > 0:
            block = fh.read(min(left, 1 << 24))
            if not block:
                break
            left -= len(block)
            text = prev + block
            # a line ending counts unless its line is blank ("\n" or "\r" right after an ending)
            blank = sum(1 for pat in _BLANK for m in pat.finditer(text) if m.start() >= len(prev))
            rows += block.count(b"\n") - blank
            prev = text[-2:]
    return rows


def _split_reader(path: str, splits: list[tuple[int, int]], names: list[str], positions: list[int],
                  delimiter: str, encode_stream: Any):  # noqa: ANN202
    """``mapInArrow`` over ``spark.range(len(splits))``: task i reads the lines starting in
    byte range i with Arrow's CSV reader (the numpy engine's fast reader) and encodes them.

    Quotes, a ragged row or bytes that are not UTF-8 in a range stop the job with
    :data:`_FALLBACK`, and Spark's CSV reader reads the file instead (its messages).
    """

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        from pyspark import TaskContext

        for _ in batches:  # the one row of the range: the work is the task's byte range
            pass
        pid = TaskContext.get().partitionId()
        start, end = splits[pid]
        with open(path, "rb") as fh:
            if pid == 0:
                fh.seek(start)  # the first data line
            else:
                fh.seek(start - 1)
                fh.readline()  # the line that starts before this range is the previous task's
            pos = fh.tell()
            chunk = fh.read(end - pos) if pos < end else b""
            if chunk and not chunk.endswith(b"\n"):
                chunk += fh.readline()  # the last line that starts in this range, to its end
        if not chunk:
            return
        if b'"' in chunk:
            raise RuntimeError(_FALLBACK + ": quotes")
        if not chunk.isascii():
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                raise RuntimeError(_FALLBACK + ": not UTF-8") from None
        cols = [f"c{i}" for i in range(len(names))]
        try:
            reader = pacsv.open_csv(
                pa.BufferReader(chunk),
                read_options=pacsv.ReadOptions(column_names=cols, block_size=BLOCK_BYTES, use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, escape_char=False,
                                                  newlines_in_values=False, ignore_empty_lines=True),
                convert_options=pacsv.ConvertOptions(
                    include_columns=[cols[p] for p in positions],
                    column_types={cols[p]: pa.string() for p in positions},
                    strings_can_be_null=False, quoted_strings_can_be_null=False, check_utf8=False),
            )

            def raw() -> Iterator[Any]:
                for batch in reader:
                    yield batch.select([cols[p] for p in positions])

            yield from encode_stream(raw(), pid, lambda: _rows_before(path, splits[0][0], pos))
        except pa.ArrowInvalid as exc:
            raise RuntimeError(f"{_FALLBACK}: {str(exc).splitlines()[0]}") from None

    return run


def encoding(schema: Schema, wanted: list[str], source: str) -> tuple[list[str], dict[str, str], Any]:
    """The packed fields of ``wanted``, their Spark types and the executors' encoding function
    (:func:`_encoder`): what :func:`load_spark` and a string frame's ``encode`` share."""
    fields = [f"f{i}" for i in range(len(wanted))]
    cat = [isinstance(schema.columns[c], CategoricalColumn) for c in wanted]
    types = {f: (_code_type(len(schema.columns[c].leaves)) if is_cat else "double")
             for f, c, is_cat in zip(fields, wanted, cat, strict=True)}
    return fields, types, _encoder(schema, wanted, fields, cat, source)


def _code_type(n_leaves: int) -> str:
    """The Spark type of leaf codes: the numpy engine's code dtype (int8 for most columns)."""
    from dpkit.data.columnar import code_dtype

    return {1: "tinyint", 2: "smallint", 4: "int"}.get(code_dtype(n_leaves).itemsize, "bigint")


def _encoder(schema: Schema, wanted: list[str], fields: list[str], cat: list[bool], source: str):  # noqa: ANN202
    """The per-partition encoding function shipped to the executors.

    Each Arrow batch takes the columnar path first (:func:`_fast_batch`: the numpy engine's
    Arrow reader's dictionary → leaf-code table, numbers by Arrow's cast); a batch with
    anything unusual in it is encoded again by the exact :func:`dpkit.data.table.encode`
    (:func:`_exact_batch`), so errors and warnings are the numpy engine's own.
    """
    from dpkit.console import owner_watching
    from dpkit.data.columnar import code_dtype, leaf_index

    # executors are not the user's terminal: their error messages take the driver's form
    watching = owner_watching()
    cols = [schema.columns[c] for c in wanted]
    tokens = list(schema.missing_tokens)
    indexes = {c: leaf_index(col) for c, col in zip(wanted, cols, strict=True) if isinstance(col, CategoricalColumn)}
    dtypes = [code_dtype(len(col.leaves)) if is_cat else np.dtype(np.float64)
              for col, is_cat in zip(cols, cat, strict=True)]

    def encode_stream(batches: Iterator[Any], pid: int, rows_before: Any = None) -> Iterator[Any]:
        """Partition ``pid``'s batches of raw columns (``wanted``'s order) → encoded batches."""
        from dpkit.console import set_verbose
        from dpkit.data.columnar import clip_message

        seen = 0  # rows of this partition read so far (kept or not)
        kept = 0
        for batch in batches:
            n = batch.num_rows
            if n == 0:
                continue
            fast = _fast_batch(batch, schema, cols, tokens, indexes)
            if fast is not None:
                data, dropped, clipped = fast
                set_verbose(True)  # exact counts travel to the driver, which decides what stderr shows
                clips = [clip_message(source, col, k, schema.path) for col, k in zip(cols, clipped, strict=True) if k]
            else:
                data, dropped, clips = _exact_batch(batch, schema, wanted, source, watching, pid, seen,
                                                    rows_before)
            m = n - dropped
            blob = _pack({f: np.asarray(v, dtype=dt) for f, v, dt in zip(fields, data, dtypes, strict=True)})
            seen += n
            yield _blob_row(pid, kept, m, dropped, "\n".join(clips) or None, blob)
            kept += m

    return encode_stream


def _spark_reader(encode_stream: Any):  # noqa: ANN202
    """``mapInArrow`` function: encode the batches Spark's own reader gives a partition."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        yield from encode_stream(batches, TaskContext.get().partitionId())

    return run


def _fast_batch(batch: Any, schema: Schema, cols: list[Any], tokens: list[str],
                indexes: dict[str, dict[str, int]]) -> tuple[list[np.ndarray], int, list[int]] | None:
    """One Arrow batch encoded column by column in C, or None when it needs the exact path.

    Categorical strings: Arrow dictionary-encodes the batch, and the few distinct values go
    through :func:`dpkit.data.columnar.leaf_lut` (the numpy engine's Arrow reader's table).
    Numbers: Arrow's string → float64 cast, which accepts a subset of what Python's
    ``float`` does and gives the same double. A value outside the taxonomy, one that does not
    cast, a non-finite number, a missing token under ``missing_policy: error``, whitespace
    other than ASCII around a number, a null in a non-string column, a categorical column
    that is not strings: None. Returns (columns, rows dropped, values clipped per column).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from dpkit.data.columnar import leaf_lut

    n = batch.num_rows
    missing = np.zeros(n, dtype=bool)
    out: list[np.ndarray] = []
    for i, col in enumerate(cols):
        arr = batch.column(i)
        if getattr(col, "time", None) is not None:
            return None  # a date column: the exact path parses it (dpkit.data.dates, one parse function)
        is_str = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
        if isinstance(col, CategoricalColumn):
            if not is_str:
                return None
            if arr.null_count:  # Spark's CSV reader gives null for an empty field: the exact path's ''
                arr = pc.fill_null(arr, "")
            enc = arr.dictionary_encode()
            lut = leaf_lut(col, enc.dictionary.to_pylist(), tokens, indexes[col.name])
            codes = lut[enc.indices.to_numpy(zero_copy_only=False)]
            if lut.min(initial=0) < 0:
                if (codes == -1).any():
                    return None
                missing |= codes == -2
            out.append(codes)
            continue
        kept = np.zeros(n, dtype=bool)
        if is_str:
            if arr.null_count:
                arr = pc.fill_null(arr, "")
            arr = pc.ascii_trim_whitespace(arr)
            # a token is missing only where it is not a number (the exact path converts first)
            toks = [t for t in tokens if not _finite(t)]
            tok = (pc.is_in(arr, value_set=pa.array(toks, pa.string())).to_numpy(zero_copy_only=False)
                   if toks else np.zeros(n, dtype=bool))
            if tok.any():
                arr = pc.if_else(pa.array(tok), pa.scalar(None, arr.type), arr)
                if col.missing:  # the missing bucket (missing_policy: keep): NaN, the row kept
                    kept = tok
                else:
                    missing |= tok
        elif arr.null_count or not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)):
            return None
        try:
            nums = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowException, ValueError):
            return None
        bad = ~(np.isfinite(nums) | kept)
        if bad.any():
            if not (~bad | missing).all() or schema.missing_policy == "error":
                return None
            nums = np.where(bad, col.lo, nums)
        out.append(nums)
    dropped = 0
    if missing.any():
        if schema.missing_policy == "error":
            return None
        keep = ~missing
        out = [o[keep] for o in out]
        dropped = int(np.count_nonzero(missing))
    clipped = []
    for j, col in enumerate(cols):
        k = 0
        if not isinstance(col, CategoricalColumn):
            e = out[j]
            out_of = (e < col.lo) | (e > col.hi)
            k = int(np.count_nonzero(out_of))
            if k:  # counted after dropping, as the exact path does
                out[j] = np.clip(e, col.lo, col.hi)
        clipped.append(k)
    return out, dropped, clipped


def _finite(text: str) -> bool:
    try:
        return bool(np.isfinite(float(text)))
    except ValueError:
        return False


def _exact_batch(batch: Any, schema: Schema, wanted: list[str], source: str, watching: bool, pid: int,
                 seen: int, rows_before: Any = None) -> tuple[list[np.ndarray], int, list[str]]:
    """One Arrow batch through the numpy engine's exact :func:`dpkit.data.table.encode`:
    its error (line numbered in the partition) or (columns, rows dropped, clip warnings)."""
    import pandas as pd
    import pyarrow as pa

    from dpkit.console import set_verbose
    from dpkit.data.table import encode

    data = {}
    for i, c in enumerate(wanted):
        col = batch.column(i)
        values = col.to_pandas()
        if (isinstance(schema.columns[c], CategoricalColumn) or pa.types.is_string(col.type)
                or pa.types.is_large_string(col.type)):
            values = values.astype(object).where(values.notna(), "")
            values = values.map(lambda v: v if isinstance(v, str) else str(v)).str.strip()
        data[c] = values.to_numpy(dtype=object)
    df = pd.DataFrame(data, columns=wanted)
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
                     lambda m: _line(source, pid, seen, int(m.group(1)), rows_before), str(exc), count=1)
        raise RuntimeError(_MARK[0] + msg + _MARK[1]) from None
    # one line per clipped column (a warning naming several carries them in .details), added up
    # over the partitions by the driver (_clip_warnings)
    clips = [line for w in caught for line in getattr(w.message, "details", [str(w.message)]) if "clipped" in line]
    return [table.columns[c] for c in wanted], batch.num_rows - table.n_rows, clips


def _line(source: str, pid: int, seen: int, line: int, rows_before: Any = None) -> str:
    if rows_before is not None:  # a byte range of a local file: the rows before it are countable
        return f"{source}:{rows_before() + seen + line}:"
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

    if len(total) <= 1:
        return [private(f"{source}: clipped {n} value(s) of {col} to the public bounds {rest}",
                        f"{source}: clipped values of {col} to the public bounds {rest}")
                for (col, rest), n in total.items()]
    # several columns: one line naming them all, as dpkit.data.columnar.clips_warning writes it
    cols = ", ".join(col for col, _ in total)
    bounds = ", ".join(rest.rsplit(" of ", 1)[0] for _, rest in total)
    where = next(iter(total))[1].rsplit(" of ", 1)[-1]
    counts = ", ".join(str(n) for n in total.values())
    return [private(f"{source}: clipped {counts} value(s) of columns {cols} to their public bounds {bounds} of {where}",
                    f"{source}: clipped values of columns {cols} to their public bounds {bounds} of {where}")]


# --------------------------------------------------------------------------- the frame


class SparkFrame:
    """A frame over the encoded table, cached in Spark as packed batches (:data:`_BLOBS`);
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
        if dropped:
            from dpkit.data.columnar import dropped_message

            warn(dropped_message(self.source, dropped, self.schema, list(self.fields)), DpkitWarning)
        for text in _clip_warnings(clips, self.source):  # one, naming every clipped column
            warn(text, DpkitWarning)
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
            for batch in batches:
                pids = batch.column(0).to_pylist()
                starts = batch.column(1).to_pylist()
                datas = batch.column(2)
                for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
                    cols, n = _unpack(datas[i].as_py())
                    if not n:
                        continue
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
            for batch in batches:
                pids, starts, datas = batch.column(0).to_pylist(), batch.column(1).to_pylist(), batch.column(2)
                for i, (pid, start) in enumerate(zip(pids, starts, strict=True)):
                    cols, n = _unpack(datas[i].as_py())
                    if n:
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


__all__ = ["DEFAULT_MASTER", "SparkFrame", "load_spark", "session"]
