"""Row-level outputs written by Spark (``generalize``, ``cluster --assign``; docs/spark.md).

The rows of such an output are computed on the executors, a Spark partition at a time, by
the *same* Python function the numpy engine applies to its whole table (a ``render``
function: one Arrow batch in, a pandas DataFrame of output rows out). Every batch is turned
into CSV text with the numpy engine's own ``DataFrame.to_csv`` settings, so a row's bytes do
not depend on the engine, and Spark writes the text as part files (``DataFrameWriter.text``,
one part file per partition). Nothing row-level reaches the driver's memory:

* a local ``-o out.csv`` (or stdout): Spark writes the part files into a private (0700)
  hidden directory next to the output; the driver writes the header and then copies the part
  files' bytes in partition order into the output's temporary file, a MiB buffer at a time,
  and renames it into place (:func:`dpkit.io.output.atomic_output`) — one file, byte for
  byte the numpy engine's;
* ``-o DIR/`` or a URI that is not ``file:`` (``hdfs://``, ``s3a://``): Spark's directory of
  part files, each with the header row, written under a hidden sibling name and renamed
  into place when the job has succeeded;
* ``-o out.parquet``: a directory of Parquet part files (string columns), the same way.

Row order: the rows reach the writer through narrow transformations only (read →
``mapInArrow`` → filter → ``mapInArrow``: no shuffle), so output partition *i* is input
split *i*, and Spark numbers each part file by its partition. Part files in partition order
are the input in Spark's read order — for one file its line order, the order in which
:class:`~dpkit.engine.keys.RowHash` numbers rows too. No sort (a shuffle of every row) is
needed. A failed job leaves no output: the temporary directory is removed.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from dpkit.errors import DataError, DpkitUsageError

#: how a part file is named by Spark: part-<partition>-<job uuid>-c<file counter>.<ext>
_PART = re.compile(r"^part-(\d+)(?:-.*?-c(\d+))?")
_COPY_BUFFER = 1 << 20


def csv_text(df: Any, delimiter: str = ",", header: bool = False) -> str:
    """``df`` as CSV text with the settings of :func:`dpkit.io.output.write_csv`."""
    buf = io.StringIO()
    df.to_csv(buf, index=False, lineterminator="\n", sep=delimiter, header=header)
    return buf.getvalue()


def header_text(columns: Sequence[str], delimiter: str = ",") -> str:
    import pandas as pd

    return csv_text(pd.DataFrame(columns=list(columns)), delimiter, header=True)


def raw_strings(batch: Any, names: Sequence[str], parquet: bool) -> Any:
    """An Arrow batch of the raw input as the numpy engine reads it: a DataFrame of strings.

    CSV (:func:`dpkit.io.table.read_table`): every field stripped, an empty field ''.
    Parquet (:func:`dpkit.io.parquet.read_parquet_strings`): floats written as a CSV
    writer of integers would (39.0 → '39'), other types cast to string, nulls ''.
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {}
    for i, name in enumerate(names):
        col = batch.column(i)
        if parquet and pa.types.is_floating(col.type):
            values = col.to_numpy(zero_copy_only=False)
            out[name] = np.array([("" if np.isnan(v) else (str(int(v)) if float(v).is_integer() else repr(float(v))))
                                  for v in values], dtype=object)
            continue
        s = pc.fill_null(pc.cast(col, pa.string()), "")
        values = np.asarray(s.to_pylist(), dtype=object)
        if not parquet:
            values = np.asarray([v.strip() for v in values], dtype=object)
        out[name] = values
    return pd.DataFrame(out, columns=list(names))


# --------------------------------------------------------------------------- where it goes


def _is_uri(path: str) -> bool:
    return "://" in path


def _is_local_master(spark: Any) -> bool:
    """Do the executors share this machine's file system (local, local[n], local-cluster)?"""
    return str(spark.sparkContext.master).startswith("local")


def output_kind(output: str) -> str:
    """'file' (one CSV file or stdout), 'dir' (a directory of CSV part files) or 'parquet'."""
    from dpkit.io.output import is_parquet_path

    if is_parquet_path(output.rstrip("/")):
        return "parquet"
    if output.endswith("/") or (_is_uri(output) and not output.startswith("file:")):
        return "dir"
    if not _is_uri(output) and os.path.isdir(output):
        return "dir"
    return "file"


def _local(path: str) -> str:
    """A local path from a path or ``file:`` URI."""
    if path.startswith("file:"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(path).path)
    return path


def check_output(spark: Any, output: str) -> None:
    """Refuse, before any job, an output the executors could not write (one-line message)."""
    kind = output_kind(output)
    if output == "-" or (kind == "file" and not output.startswith("file:")) or (
            kind != "file" and not _is_uri(output)):
        if not _is_local_master(spark):
            raise DpkitUsageError(
                f"{output}: with the Spark master {spark.sparkContext.master} the executors cannot write "
                "to this machine's disk; give a URI they share (hdfs://.../out/, s3a://...) for a "
                "directory of part files, or file:///PATH on a file system every executor mounts")
    if kind == "file" and output != "-":
        target = Path(_local(output))
        if not target.parent.is_dir():
            raise DataError(f"{output}: directory {target.parent} does not exist; create it first")
    if kind != "file" and not _is_uri(output):
        target = Path(output.rstrip("/"))
        if target.exists():
            raise DataError(f"{output}: already exists; Spark writes a new directory of part files — "
                            "remove it or give another name")
        if not target.parent.is_dir():
            raise DataError(f"{output}: directory {target.parent} does not exist; create it first")


# --------------------------------------------------------------------------- writing


def write_rows(spark: Any, df: Any, render: Callable[[Any], Any], columns: Sequence[str], output: str, *,
               delimiter: str = ",", mode: int = 0o644) -> None:
    """Write the rows ``render`` makes of every Arrow batch of ``df`` (executors) to ``output``.

    ``columns``: the output's header (what ``render``'s DataFrames hold). ``mode``: the file
    mode of the output (less the umask), as :func:`dpkit.io.output.atomic_output`.
    """
    check_output(spark, output)
    kind = output_kind(output)
    if kind == "parquet":
        _write_dir(spark, df, render, columns, output, "parquet", delimiter, mode)
    elif kind == "dir":
        _write_dir(spark, df, render, columns, output, "csv", delimiter, mode)
    else:
        _write_file(spark, df, render, columns, output, delimiter, mode)


def _rendered(batches: Iterator[Any], render: Callable[[Any], Any]) -> Iterator[Any]:
    """``render(batch)`` of each non-empty Arrow batch, where it holds rows: what the CSV and the
    Parquet jobs write (one rule, so both outputs hold the same rows)."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        out = render(batch)
        if len(out) == 0:
            continue
        yield out


def _text_job(df: Any, render: Callable[[Any], Any], columns: Sequence[str], delimiter: str,
              header_per_part: bool) -> Any:
    """A DataFrame of one string column: a CSV chunk (no final newline) per Arrow batch."""
    import pyarrow as pa

    header = header_text(columns, delimiter) if header_per_part else ""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        first = True
        for out in _rendered(batches, render):
            text = (header if first else "") + csv_text(out, delimiter)
            first = False
            # the text writer ends every value with "\n": the chunk's own last "\n"
            yield pa.RecordBatch.from_pydict({"value": pa.array([text[:-1]], pa.string())})

    return df.mapInArrow(run, "value string")


def _parquet_job(df: Any, render: Callable[[Any], Any], columns: Sequence[str]) -> Any:
    import pyarrow as pa

    names = list(columns)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for out in _rendered(batches, render):
            yield pa.RecordBatch.from_pydict({c: pa.array(out[c].to_numpy(dtype=object), pa.string())
                                              for c in names})

    ddl = ", ".join(f"`{c.replace('`', '``')}` string" for c in names)
    return df.mapInArrow(run, ddl)


def _run_write(spark: Any, writer: Callable[[], None]) -> None:
    """Run a Spark write; dpkit's data errors from the executors come back as themselves.
    Interrupted (Ctrl-C): Spark's jobs are cancelled, so that no task writes on."""
    import time

    from dpkit.engine.spark.session import STATS, _data_error

    start = time.perf_counter()
    try:
        writer()
        STATS.setdefault("write", []).append(time.perf_counter() - start)
    except Exception as exc:
        err = _data_error(exc)
        if err is not None:
            raise err from None
        raise
    except BaseException:
        with contextlib.suppress(Exception):
            spark.sparkContext.cancelAllJobs()
        raise


def _private_dir(parent: Path, name: str) -> Path:
    """A new hidden directory (0700) in ``parent``: part files of private rows stay private."""
    if not parent.is_dir():
        raise DataError(f"{parent}: directory does not exist; create it first")
    path = parent / f".{name}.{secrets.token_hex(8)}.spark"
    try:
        path.mkdir(mode=0o700)
    except PermissionError:
        raise DataError(f"{parent / name}: cannot write in {parent} (permission denied)") from None
    return path


def part_files(directory: Path) -> list[Path]:
    """The part files Spark wrote, in partition order (then file counter)."""
    found = []
    for p in directory.iterdir():
        m = _PART.match(p.name)
        if m and p.is_file():
            found.append(((int(m.group(1)), int(m.group(2) or 0)), p))
    return [p for _, p in sorted(found)]


def _write_file(spark: Any, df: Any, render: Callable[[Any], Any], columns: Sequence[str], output: str,
                delimiter: str, mode: int) -> None:
    """One CSV file (or stdout): Spark writes the parts, the driver concatenates their bytes."""
    import tempfile

    from dpkit.io.output import atomic_output

    local = _local(output)
    if output == "-":
        tmp = Path(tempfile.mkdtemp(prefix="dpkit-spark-"))  # 0700
    else:
        target = Path(local)
        tmp = _private_dir(target.parent if str(target.parent) else Path("."), target.name)
    try:
        parts = tmp / "parts"
        job = _text_job(df, render, columns, delimiter, header_per_part=False)
        _run_write(spark, lambda: job.write.option("lineSep", "\n").text(parts.resolve().as_uri()))
        import time

        from dpkit.engine.spark.session import STATS

        start = time.perf_counter()
        with atomic_output(local if output != "-" else "-", binary=True, mode=mode) as fh:
            fh.write(header_text(columns, delimiter).encode("utf-8"))
            for part in part_files(parts):
                with part.open("rb") as src:
                    shutil.copyfileobj(src, fh, _COPY_BUFFER)
        STATS.setdefault("concatenate", []).append(time.perf_counter() - start)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_dir(spark: Any, df: Any, render: Callable[[Any], Any], columns: Sequence[str], output: str,
               fmt: str, delimiter: str, mode: int) -> None:
    """A directory of part files, written under a hidden sibling name, renamed when complete."""
    final = output.rstrip("/")
    if fmt == "parquet":
        job = _parquet_job(df, render, columns)

        def write(uri: str) -> None:
            job.write.parquet(uri)
    else:
        job = _text_job(df, render, columns, delimiter, header_per_part=True)

        def write(uri: str) -> None:
            job.write.option("lineSep", "\n").text(uri)

    if _is_uri(final) and not final.startswith("file:"):
        _write_remote(spark, final, write)
        return
    target = Path(_local(final))
    tmp = _private_dir(target.parent if str(target.parent) else Path("."), target.name)
    try:
        parts = tmp / "parts"
        _run_write(spark, lambda: write(parts.resolve().as_uri()))
        if fmt == "csv":  # Spark names text parts .txt
            for p in part_files(parts):
                p.rename(p.with_name(p.name.removesuffix(".txt") + ".csv"))
        for p in parts.iterdir():
            if p.name.startswith((".", "_")) and p.name != "_SUCCESS":
                p.unlink()  # Spark's .crc checksums
            else:
                os.chmod(p, mode & ~_umask())
        os.chmod(parts, (mode | (mode & 0o444) >> 2) & ~_umask())  # a directory: r → rx
        if target.exists():
            raise DataError(f"{output}: already exists; remove it or give another name")
        os.rename(parts, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_remote(spark: Any, final: str, write: Callable[[str], None]) -> None:
    """A URI: Spark writes next to it under a hidden name; Hadoop's FileSystem renames it."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    target = jvm.org.apache.hadoop.fs.Path(final)
    fs = target.getFileSystem(conf)
    if fs.exists(target):
        raise DataError(f"{final}: already exists; remove it or give another name")
    tmp = jvm.org.apache.hadoop.fs.Path(target.getParent(), f".{target.getName()}.{secrets.token_hex(8)}.spark")
    try:
        _run_write(spark, lambda: write(tmp.toString()))
        if not fs.rename(tmp, target):
            raise DataError(f"{final}: cannot rename the written part files into place")
    finally:
        with contextlib.suppress(Exception):
            if fs.exists(tmp):
                fs.delete(tmp, True)


__all__ = ["check_output", "csv_text", "header_text", "output_kind", "part_files", "raw_strings", "write_rows"]
