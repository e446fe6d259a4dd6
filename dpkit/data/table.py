"""CSV in and out, and encoding a table against its schema.

Reading follows csvkit's conventions: ``-`` is stdin, ``utf-8-sig`` by default (a BOM is
harmless), every problem is one :class:`DataError` naming the file, line and column and
saying what to do. Writing is atomic (temp file in the same directory + rename), so an
output file is either complete or absent; ``-`` is stdout.

Encoded columns are numpy arrays: categorical values become leaf codes (int32, the leaf
order of the schema's taxonomy), numeric values float64 clipped to the public bounds.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from dpkit.data.schema import CategoricalColumn, NumericColumn, Schema
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_ENCODING = "utf-8-sig"
MAX_LISTED = 5


def _name(path: str | Path) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def read_raw(path: str | Path, *, encoding: str = DEFAULT_ENCODING, delimiter: str = ",") -> bytes:
    """The bytes of ``path`` (or stdin for ``-``), with friendly errors."""
    if len(delimiter) != 1:
        raise DpkitUsageError(f"--delimiter must be one character, got {delimiter!r}")
    try:
        if str(path) == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise DataError("<stdin>: standard input is closed; give a file path instead of '-'")
            return sys.stdin.buffer.read()
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a CSV file") from None
    except PermissionError:
        raise DataError(f"{path}: permission denied") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{_name(path)}: cannot read: {exc}") from None


def read_csv(
    path: str | Path,
    *,
    encoding: str = DEFAULT_ENCODING,
    delimiter: str = ",",
    require_rows: bool = True,
) -> pd.DataFrame:
    """Read a CSV with a header row into a DataFrame of strings (nothing is guessed).

    Raises :class:`DataError` for an empty file, a header with no rows (unless
    ``require_rows`` is False), ragged rows, undecodable bytes and duplicate column names.
    """
    import pandas as pd

    name = _name(path)
    raw = read_raw(path, encoding=encoding, delimiter=delimiter)
    try:
        text = raw.decode(encoding)
    except LookupError:
        raise DpkitUsageError(f"unknown --encoding {encoding!r}") from None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{name}:{line}: byte 0x{raw[exc.start]:02x} is not valid {encoding}; "
            f"pass --encoding (e.g. --encoding latin-1)"
        ) from None
    if not text.strip():
        raise DataError(f"{name}: the file is empty; expected a header row and data rows")
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise DataError(f"{name}:1: cannot parse the header: {exc}") from None
    header = [h.strip() for h in header]
    seen: set[str] = set()
    for h in header:
        if h == "":
            raise DataError(f"{name}:1: the header has an empty column name; name every column")
        if h in seen:
            raise DataError(f"{name}:1: duplicate column name {h!r}; column names must be unique")
        seen.add(h)
    try:
        df = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skipinitialspace=False,
            engine="c",
            on_bad_lines="error",
        )
    except pd.errors.ParserError as exc:
        msg = str(exc).strip()
        line = _parser_error_line(msg)
        where = f"{name}:{line}" if line else name
        raise DataError(
            f"{where}: ragged row ({msg.split(': ')[-1]}); every row needs "
            f"{len(header)} fields — check --delimiter and quoting"
        ) from None
    except (pd.errors.EmptyDataError, csv.Error) as exc:
        raise DataError(f"{name}: cannot parse CSV: {exc}") from None
    df.columns = header
    if require_rows and len(df) == 0:
        raise DataError(f"{name}: has a header but no data rows")
    # the C parser pads short rows with "" silently: find them so they are not taken as values
    if len(df) and len(header) > 1:
        widths = _short_rows(text, delimiter, len(header))
        if widths is not None:
            line, got = widths
            raise DataError(
                f"{name}:{line}: ragged row (expected {len(header)} fields, saw {got}); "
                f"check --delimiter and quoting"
            )
    for col in df.columns:
        df[col] = df[col].str.strip()
    return df


def _parser_error_line(msg: str) -> int | None:
    import re

    m = re.search(r"line (\d+)", msg)
    return int(m.group(1)) if m else None


def _short_rows(text: str, delimiter: str, width: int) -> tuple[int, int] | None:
    """First physical line with fewer fields than the header (fast path: no quotes)."""
    if '"' not in text:
        for i, line in enumerate(text.splitlines(), start=1):
            if line and line.count(delimiter) + 1 < width:
                return i, line.count(delimiter) + 1
        return None
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        if row and len(row) < width:
            # quoted newlines make physical lines unreliable; report the record instead
            return -1, len(row)
    return None


# --------------------------------------------------------------------------- encoding


@dataclass
class EncodedTable:
    """Columns as numpy arrays, aligned row by row. ``n_rows`` is private: never report it."""

    schema: Schema
    columns: dict[str, np.ndarray]
    n_rows: int
    source: str = "<data>"

    def __len__(self) -> int:
        return self.n_rows


def _lines(mask: np.ndarray) -> list[int]:
    # data row i (0-based) is physical line i + 2 when no field holds a newline
    return [int(i) + 2 for i in np.flatnonzero(mask)[:MAX_LISTED]]


def encode(
    df: pd.DataFrame,
    schema: Schema,
    columns: Sequence[str] | None = None,
    *,
    source: str = "<data>",
) -> EncodedTable:
    """Encode ``columns`` (default: every non-ignored schema column) of ``df``.

    Missing tokens follow the schema's policy (``drop`` rows with a warning, or an error);
    categorical values outside the taxonomy are an error naming line, column and value;
    numeric values must parse and be finite, and are clipped to the public bounds with a
    warning that counts them (ALGORITHMS.md §0 rule 1).
    """
    import pandas as pd

    wanted = list(columns) if columns is not None else schema.used_columns()
    missing_cols = [c for c in wanted if c not in df.columns]
    if missing_cols:
        hint = ""
        if len(df.columns) == 1 and any(d in str(df.columns[0]) for d in ";\t|"):
            hint = " — the header is one column: wrong --delimiter?"
        elif len(missing_cols) == len(wanted):
            hint = " — is the schema for a different data set?"
        raise DataError(
            f"{source}: column(s) {', '.join(map(repr, missing_cols))} from schema "
            f"{schema.path} not found in the header ({', '.join(df.columns[:8])}"
            f"{', ...' if len(df.columns) > 8 else ''}){hint}"
        )
    for c in wanted:
        if schema.column(c).kind == "ignore":
            raise DpkitUsageError(f"column {c!r} is declared 'ignore' in {schema.path}")
    frame = df[wanted]
    keep = np.ones(len(frame), dtype=bool)
    if schema.missing is not None:
        is_missing = (frame == schema.missing).to_numpy()
        rows = is_missing.any(axis=1)
        if rows.any():
            if schema.missing_policy == "error":
                r = int(np.flatnonzero(rows)[0])
                c = wanted[int(np.flatnonzero(is_missing[r])[0])]
                raise DataError(
                    f"{source}:{r + 2}: column {c!r} is missing ({schema.missing!r}); "
                    f"set missing_policy: drop in {schema.path} to drop such rows"
                )
            keep = ~rows
            warnings.warn(
                f"{source}: dropped {int(rows.sum())} row(s) with a missing value "
                f"({schema.missing!r}) in the used columns",
                DpkitWarning,
                stacklevel=2,
            )
    out: dict[str, np.ndarray] = {}
    idx = np.flatnonzero(keep)
    for c in wanted:
        col = schema.columns[c]
        values = frame[c].to_numpy()[idx] if not keep.all() else frame[c].to_numpy()
        if isinstance(col, CategoricalColumn):
            codes = pd.Categorical(values, categories=list(col.leaves)).codes.astype(np.int32)
            bad = codes < 0
            if bad.any():
                rows_bad = idx[bad]
                uniq = list(dict.fromkeys(values[bad]))[:MAX_LISTED]
                shown = ", ".join(repr(v) for v in uniq)
                empty = "" in uniq
                raise DataError(
                    f"{source}:{int(rows_bad[0]) + 2}: column {c!r} has {int(bad.sum())} value(s) "
                    f"not in the taxonomy of {schema.path} ({shown}"
                    f"{', ...' if len(set(values[bad])) > MAX_LISTED else ''}); "
                    + (
                        "declare a missing token (missing: ...) for empty values"
                        if empty
                        else "add them to the schema or fix the data"
                    )
                )
            out[c] = codes
        elif isinstance(col, NumericColumn):
            out[c] = _numeric(values, idx, col, source, schema.path)
    return EncodedTable(schema=schema, columns=out, n_rows=int(idx.size), source=source)


def _numeric(values: np.ndarray, idx: np.ndarray, col: NumericColumn, source: str, schema_path: str) -> np.ndarray:
    import pandas as pd

    nums = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(nums)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        v = values[i]
        what = "is empty (declare a missing token in the schema)" if v == "" else f"has {v!r}, not a finite number"
        raise DataError(f"{source}:{int(idx[i]) + 2}: numeric column {col.name!r} {what}")
    out_of = (nums < col.lo) | (nums > col.hi)
    if out_of.any():
        warnings.warn(
            f"{source}: clipped {int(out_of.sum())} value(s) of {col.name!r} to the public "
            f"bounds [{col.lo:g}, {col.hi:g}] of {schema_path}",
            DpkitWarning,
            stacklevel=3,
        )
        nums = np.clip(nums, col.lo, col.hi)
    return nums


def load_table(
    path: str | Path,
    schema: Schema,
    columns: Sequence[str] | None = None,
    *,
    encoding: str = DEFAULT_ENCODING,
    delimiter: str = ",",
) -> EncodedTable:
    """Read ``path`` and encode it against ``schema`` (:func:`read_csv` + :func:`encode`)."""
    df = read_csv(path, encoding=encoding, delimiter=delimiter)
    return encode(df, schema, columns, source=_name(path))


# --------------------------------------------------------------------------- writing


@contextlib.contextmanager
def atomic_output(path: str | Path, *, binary: bool = False) -> Iterator[IO]:
    """Open ``path`` for writing so that it appears only complete, or not at all.

    Writes to a temporary file in the same directory and renames it over ``path`` when
    the block finishes without an exception; ``-`` writes to stdout.
    """
    if str(path) == "-":
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise DataError(f"{path}: directory {directory} does not exist; create it first")
    if target.is_dir():
        raise DataError(f"{path}: is a directory; give a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except PermissionError:
        raise DataError(f"{path}: cannot write in {directory} (permission denied)") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8", newline=None if binary else "") as fh:
            yield fh
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` (with header, no index) atomically to ``path`` or stdout."""
    with atomic_output(path) as fh:
        df.to_csv(fh, index=False, lineterminator="\n")
