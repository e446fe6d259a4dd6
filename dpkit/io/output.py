"""Writing outputs so that they appear complete or not at all (CSV or Parquet by extension).

Every file dpkit writes goes through :func:`atomic_output`: a temporary file in the target
directory, renamed over the target when the block finishes without an exception.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from dpkit.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


@contextlib.contextmanager
def atomic_output(path: str | Path, *, binary: bool = False, mode: int = 0o644) -> Iterator[IO]:
    """Open ``path`` for writing so that it appears only complete, or not at all.

    Writes to a temporary file in the same directory and renames it over ``path`` when
    the block finishes without an exception; ``-`` writes to stdout. The file gets
    ``mode`` less the umask (outputs holding private rows pass a narrower mode:
    :func:`dpkit.run.private_rows_mode`).
    """
    if str(path) == "-":
        from dpkit.io.stdout import FullWriter

        stream = FullWriter(binary)  # a pipe closed mid-write raises, never drops the tail
        yield stream  # type: ignore[misc]
        stream.flush()
        return
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise DataError(f"{path}: directory {directory} does not exist; create it first")
    if target.is_dir():
        raise DataError(f"{path}: is a directory; give a file name")
    # The temp name is chosen before the file exists and created inside the same ``try`` as
    # the cleanup, so a Ctrl-C at any instant (even just after the file is created, before
    # the name would have come back from mkstemp) cannot leave a stray temp file.
    tmp = directory / f".{target.name}.{secrets.token_hex(8)}.tmp"
    opened = False
    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except PermissionError:
            raise DataError(f"{path}: cannot write in {directory} (permission denied)") from None
        except OSError as exc:
            raise DataError(f"{path}: cannot write: {exc.strerror}") from None
        opened = True
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8", newline=None if binary else "") as fh:
            yield fh
        os.chmod(tmp, mode & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        # a DataError from os.open created nothing (O_EXCL): never remove someone else's file
        if opened or not isinstance(exc, DataError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def is_parquet_path(path: str | Path) -> bool:
    """Does an output path ask for Parquet (``.parquet`` / ``.pq``)?"""
    from dpkit.io.source import PARQUET_EXTENSIONS

    return str(path).lower().endswith(PARQUET_EXTENSIONS)


def write_csv(df: pd.DataFrame, path: str | Path, *, delimiter: str = ",", mode: int = 0o644) -> None:
    """Write ``df`` (with header, no index) atomically to ``path`` or stdout (``mode``: as
    :func:`atomic_output`).

    A ``.parquet``/``.pq`` path is written as Parquet (strings stay strings).
    """
    if is_parquet_path(path):
        from dpkit.io.parquet import write_parquet

        with atomic_output(path, binary=True, mode=mode) as fh:
            write_parquet(df, fh)
        return
    with atomic_output(path, mode=mode) as fh:
        df.to_csv(fh, index=False, lineterminator="\n", sep=delimiter)
