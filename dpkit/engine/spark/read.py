"""Reading the input on Spark into a :class:`~dpkit.engine.spark.frame.SparkFrame`.

:func:`load_spark` reads and encodes the wanted columns: a local CSV file is read by the
executors themselves, in byte ranges, with Arrow's CSV reader (:func:`_split_reader`; what the
numpy engine's fast reader does); anything else (a URI, a directory, Parquet, quotes or bytes
that are not UTF-8) by Spark's own reader (:func:`_read`). Either way each batch is encoded
by :mod:`.encode`. :func:`raw_input` is the input as Spark reads it, every column, for the
jobs on rows (:mod:`.rows`, :mod:`.strings`, ``generalize``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

from dpkit.engine.spark.encode import encoding
from dpkit.engine.spark.frame import SparkFrame
from dpkit.engine.spark.packed import _BLOBS
from dpkit.engine.spark.session import session
from dpkit.errors import DataError, DpkitUsageError
from dpkit.schema.parse import Schema


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


def raw_input(spark: Any, options: Any) -> tuple[Any, list[str], bool]:
    """The raw input on Spark (all columns), its column names, and whether it is Parquet."""
    path = str(options.path).rstrip("/").lower()
    parquet = (options.fmt or ("parquet" if path.endswith((".parquet", ".pq")) or _is_dir(options.path)
                               else "csv")) == "parquet"
    try:
        df, names = _read(spark, options)
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"{options.name}: cannot read with Spark: {msg}") from None
    return df, [str(n).strip() for n in names], parquet  # the numpy reader strips names too


def numbered(batches: Iterator[Any]) -> Iterator[tuple[int, int, Any]]:
    """(partition, index of its first row in the partition, batch) of each non-empty Arrow batch
    of a ``mapInArrow`` job over :func:`raw_input` (on the executors): the one numbering of the
    raw rows, by which coverage names a value's first row and the string frame orders its rows."""
    from pyspark import TaskContext

    pid = TaskContext.get().partitionId()
    seen = 0
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        yield pid, seen, batch
        seen += n


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
    from dpkit.io.source import resolve

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

    from dpkit.data.encode import encode

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

    The header is the numpy engine's (``dpkit.io.source._quick_header``: stripped, checked).
    """
    from dpkit.io.source import SAMPLE_BYTES, _quick_header, is_parquet

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


def _spark_reader(encode_stream: Any):  # noqa: ANN202
    """``mapInArrow`` function: encode the batches Spark's own reader gives a partition."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        yield from encode_stream(batches, TaskContext.get().partitionId())

    return run
