"""Fingerprints of an input: what identifies a data set without keeping it.

A sha256 of a file's bytes, of a directory's listing (for a directory of Parquet files, whose
bytes would cost a full read before every run), or of a DataFrame's values, column names and
types. They are private — a hash of the private input is a membership oracle for anyone
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
    """sha256 of a file's bytes, read in chunks; of a directory's listing for a directory."""
    if os.path.isdir(path):
        return directory_digest(path)
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a CSV file") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return h.hexdigest()


def directory_digest(path: str | Path) -> str:
    """sha256 of a directory's listing: every data file's relative path, size and mtime (ns).

    Files Spark skips (names starting with ``_`` or ``.``, e.g. ``_SUCCESS``, ``.crc``) are
    left out. Any rewrite, even of the same bytes, makes a new fingerprint.
    """
    root = Path(path)
    h = hashlib.sha256(b"dpkit directory listing v1\n")
    try:
        entries = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
            for name in filenames:
                if name.startswith(("_", ".")):
                    continue
                full = Path(dirpath) / name
                st = full.stat()
                entries.append((full.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    except OSError as exc:
        raise DataError(f"{path}: cannot list: {exc.strerror or exc}") from None
    if not entries:
        raise DataError(f"{path}: is a directory with no data files")
    for rel, size, mtime in sorted(entries):
        h.update(f"{rel}\t{size}\t{mtime}\n".encode())
    return h.hexdigest()


def frame_digest(df: Any) -> str:
    """sha256 of a DataFrame's column names and types and of its values row by row (pandas'
    ``hash_pandas_object``, the index left out): two frames with the same columns, types and
    rows in the same order are the same data set."""
    import pandas as pd

    h = hashlib.sha256(repr([(str(c), str(t)) for c, t in df.dtypes.items()]).encode())
    h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()


def input_digest(data: Any) -> str:
    """The fingerprint of any input a library call takes: a DataFrame, stdin (``-``, its bytes
    as read), a file or a directory (a path or a ReadOptions). A URI is refused: its bytes are
    not here to hash."""
    import sys

    from dpkit.data.source import ReadOptions, read_raw
    from dpkit.errors import DpkitUsageError

    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(data, pd.DataFrame):
        return frame_digest(data)
    path = data.path if isinstance(data, ReadOptions) else os.fspath(data)
    if path == "-":
        return hashlib.sha256(read_raw("-")).hexdigest()
    if "://" in path:
        raise DpkitUsageError(f"{path}: a URI cannot be fingerprinted here (its bytes are elsewhere)", param="data")
    return file_digest(path)
