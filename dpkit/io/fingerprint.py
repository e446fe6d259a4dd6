"""Fingerprints of an input: what identifies a data set without keeping it.

A sha256 of a file's bytes, of a directory's content (every data file's relative name and
bytes), or of a DataFrame's values, column names and types. They are private — a hash of the private input is a membership oracle for anyone
holding a candidate file — and live only in the ledger and in a run's key derivation, never in
a report (docs/algorithms.md §0 rule 5).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from dpkit.errors import DataError


def file_digest(path: str | Path) -> str:
    """sha256 of a file's bytes, read in chunks; of a directory's content for a directory."""
    if os.path.isdir(path):
        return directory_digest(path)
    try:
        return _stream_digest(path)
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a CSV file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _stream_digest(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def directory_digest(path: str | Path) -> str:
    """sha256 of a directory's content: every data file's relative path and the sha256 of its
    bytes, in sorted order (a file is streamed, never held whole).

    The bytes count, not the listing: two directories that differ in one record have different
    digests even when every size and mtime is the same (a same-length value swap with the
    mtime copied). The digest is what a keyed run derives its noise from, so a listing would
    give neighbouring inputs the same noise. Consequences: rewriting a file
    with the same bytes, or copying the directory elsewhere, keeps the digest; the whole
    directory is read once before a run that needs its fingerprint. Files Spark skips (names
    starting with ``_`` or ``.``, e.g. ``_SUCCESS``, ``.crc``) are left out, as Spark leaves
    them out of the data.
    """
    root = Path(path)
    h = hashlib.sha256(b"dpkit directory content v2\n")
    try:
        entries = []
        # onerror: an unreadable subdirectory is an error, never silently left out of the digest
        for dirpath, dirnames, filenames in os.walk(root, onerror=_raise):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
            for name in filenames:
                if not name.startswith(("_", ".")):
                    entries.append((Path(dirpath) / name).relative_to(root).as_posix())
        if not entries:
            raise DataError(f"{path}: is a directory with no data files")
        for rel in sorted(entries):
            # the name and a digest per file: unambiguous framing, whatever the files hold
            h.update(f"{rel}\t{_stream_digest(root / rel)}\n".encode())
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return h.hexdigest()


def _raise(exc: OSError) -> None:
    raise exc


def frame_digest(df: Any) -> str:
    """sha256 of a DataFrame's column names and types and of its values row by row (pandas'
    ``hash_pandas_object``, the index left out): two frames with the same columns, types and
    rows in the same order are the same data set."""
    import pandas as pd

    from dpkit.io.pandas_compat import text_as_object

    df = text_as_object(df)  # one data set whichever pandas read it
    h = hashlib.sha256(repr([(str(c), str(t)) for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()


def input_digest(data: Any) -> str:
    """The fingerprint of any input a library call takes: a DataFrame or an array (its values,
    :func:`frame_digest`), a Spark DataFrame (:func:`spark_digest`), stdin (``-``, its bytes as
    read), a file or a directory (a path or a ReadOptions). A URI is refused: its bytes are not
    here to hash."""
    from dpkit.errors import DpkitUsageError
    from dpkit.io.source import ReadOptions, read_raw

    if in_memory(data):
        return frame_digest(as_frame(data))
    if is_spark(data):
        return spark_digest(data)
    path = data.path if isinstance(data, ReadOptions) else os.fspath(data)
    if path == "-":
        return hashlib.sha256(read_raw("-")).hexdigest()
    if "://" in path:
        raise DpkitUsageError(f"{path}: a URI cannot be fingerprinted here (its bytes are elsewhere)", param="data")
    return file_digest(path)


def in_memory(data: Any) -> bool:
    """A pandas DataFrame or a numpy array (without importing either when it is not loaded)."""
    import sys

    pd, np = sys.modules.get("pandas"), sys.modules.get("numpy")
    return (pd is not None and isinstance(data, pd.DataFrame)) or (np is not None and isinstance(data, np.ndarray))


def is_spark(data: Any) -> bool:
    return type(data).__module__.startswith("pyspark.sql") and type(data).__name__ == "DataFrame"


def as_frame(data: Any) -> Any:
    """A DataFrame as it is; an array as the DataFrame of its columns (0, 1, …; a 1-D array is
    one column), so that an array and its rows hash alike wherever they are met."""
    import numpy as np
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    arr = np.asarray(data)
    return pd.DataFrame(arr.reshape(len(arr), -1) if arr.ndim != 2 else arr)


def row_hashes(data: Any) -> tuple[str, Any] | None:
    """(signature, row hashes) of in-memory data, None for data named by a path.

    The signature is the column names and types; the hashes are the sorted distinct 64-bit
    hashes of the rows (pandas' ``hash_pandas_object``, index left out). They let the ledger
    and the estimators recognise a subset of rows — a fold of a cross-validation — as rows of a
    registered data set, and tell fits that overlap. Like any fingerprint they are private: a
    row's hash tests whether a candidate record is in the data (they live in the ledger, mode
    0600, and in this process).
    """
    if not in_memory(data):
        return None
    import numpy as np
    import pandas as pd

    from dpkit.io.pandas_compat import text_as_object

    df = text_as_object(as_frame(data))
    signature = repr([(str(c), str(t)) for c, t in df.dtypes.items()])
    rows = pd.util.hash_pandas_object(df, index=False).to_numpy(dtype=np.uint64)
    return signature, np.unique(rows)


def spark_digest(df: Any) -> str:
    """sha256 of a Spark DataFrame's schema and content: the number of rows and two
    order-free 64-bit sums of per-row hashes (Spark's ``xxhash64`` and ``hash``, computed where
    the data is), since a Spark DataFrame's row order is not part of its data.

    Two neighbouring DataFrames (one record added or removed) always differ in the count; two
    of the same size differ unless the per-row hashes collide in both sums. Not a
    cryptographic digest — it identifies a data set and separates neighbours, as the ledger
    and a keyed run need — and it costs one pass over the data.
    """
    from pyspark.sql import functions as F  # noqa: N812

    cols = [F.col(f"`{c}`") for c in df.columns]
    row = df.select(F.xxhash64(*cols).alias("a"), F.hash(*cols).cast("long").alias("b")).agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(F.col("a").cast("decimal(38,0)")).alias("sa"),
        F.sum(F.col("b").cast("decimal(38,0)")).alias("sb")).collect()[0]
    h = hashlib.sha256(b"dpkit spark frame v1\n")
    h.update(df.schema.json().encode())
    h.update(f"\n{row['n']}\t{row['sa'] or 0}\t{row['sb'] or 0}\n".encode())
    return h.hexdigest()
