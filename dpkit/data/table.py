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
import secrets
import sys
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
    name = _name(path)
    raw, text, header = _read_text(path, encoding=encoding, delimiter=delimiter)
    return _parse_strings(name, raw, text, header, encoding, delimiter, require_rows)


def _read_text(path: str | Path, *, encoding: str, delimiter: str) -> tuple[bytes, str, list[str]]:
    """Bytes, decoded text and the (stripped, checked) header of a CSV file."""
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
    if not text or text.isspace():  # (text.strip() would copy the whole file)
        raise DataError(f"{name}: the file is empty; expected a header row and data rows")
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise DataError(f"{name}:1: cannot parse the header: {exc}") from None
    if not header:
        # a blank first line: pandas would skip it and take the next line as the header
        raise DataError(f"{name}:1: the first line is blank; the header row must come first")
    header = [h.strip() for h in header]
    seen: set[str] = set()
    for h in header:
        if h == "":
            raise DataError(f"{name}:1: the header has an empty column name; name every column")
        if h in seen:
            raise DataError(f"{name}:1: duplicate column name {h!r}; column names must be unique")
        seen.add(h)
    return raw, text, header


def _parse_strings(
    name: str, raw: bytes, text: str, header: list[str], encoding: str, delimiter: str, require_rows: bool
) -> pd.DataFrame:
    import pandas as pd

    # utf-8 input goes to the C parser as bytes (no copy through a str buffer), and as
    # plain object columns of str: both measurably faster than StringIO + dtype=str
    utf8 = encoding.lower().replace("_", "-") in _UTF8
    source = io.BytesIO(_bytes_of(raw, text, encoding)) if utf8 else io.StringIO(text)
    try:
        df = pd.read_csv(
            source,
            encoding="utf-8" if utf8 else None,
            sep=delimiter,
            dtype=object,
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
    if len(df.columns) != len(header):
        # the C parser and the csv module disagree on the header (e.g. NUL bytes)
        raise DataError(
            f"{name}:1: cannot parse the header (read {len(header)} column names, the parser "
            f"saw {len(df.columns)}); check --delimiter, --encoding and quoting"
        )
    if require_rows and len(df) == 0:
        raise DataError(f"{name}: has a header but no data rows")
    # The C parser pads short rows with "" silently, and takes a long first row as an index:
    # find such rows so that they are not read as values.
    if len(df) and len(header) > 1:
        bad = _ragged_row(raw, text, encoding, delimiter, len(header), len(df))
        if bad is not None:
            line, got = bad
            where = f"{name}:{line}" if line > 0 else f"{name}: a record"
            raise DataError(
                f"{where}: ragged row (expected {len(header)} fields, saw {got}); "
                f"check --delimiter and quoting"
            )
    df.columns = header
    # Stripping is a Python call per value: only pay for it when some field has
    # surrounding whitespace (the byte check is a few memchr scans).
    if _may_need_strip(raw, text, encoding, delimiter):
        for col in df.columns:
            df[col] = df[col].str.strip()
    return df


_UTF8 = ("utf-8", "utf8", "utf-8-sig", "utf_8", "utf_8_sig", "ascii", "us-ascii")
# str.strip() removes these ASCII characters (besides \n, \r, which end lines)
_ASCII_SPACE = (b" ", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def _bytes_of(raw: bytes, text: str, encoding: str) -> bytes:
    """The text as bytes in which the delimiter and newline are single ASCII bytes."""
    if encoding.lower().replace("_", "-") in _UTF8:
        return raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    return text.encode("utf-8")


def _may_need_strip(raw: bytes, text: str, encoding: str, delimiter: str) -> bool:
    """Could some field start or end with whitespace? (False only when surely not.)"""
    if '"' in text or not text.isascii() or not delimiter.isascii():
        return True
    data = _bytes_of(raw, text, encoding)
    d = delimiter.encode()
    spaces = [ws for ws in _ASCII_SPACE if ws != d]  # a tab delimiter is not a field's space
    if data[:1] in spaces or data.rstrip(b"\r\n")[-1:] in spaces:
        return True
    for ws in spaces:
        if ws not in data:
            continue
        for sep in (d, b"\n", b"\r"):
            if ws + sep in data or sep + ws in data:
                return True
    return False


def _parser_error_line(msg: str) -> int | None:
    import re

    m = re.search(r"line (\d+)", msg)
    return int(m.group(1)) if m else None


def _ragged_row(
    raw: bytes, text: str, encoding: str, delimiter: str, width: int, n_rows: int
) -> tuple[int, int] | None:
    """``(line, fields)`` of the first row whose width differs from the header's, else None.

    Fast path (no quotes, ASCII delimiter): pandas already refuses rows that are too long
    (except the first, which it would take as an index), so the file is rectangular exactly
    when it holds ``(n_rows + 1) * (width - 1)`` delimiters — one ``bytes.count``. Only when
    that fails are lines scanned one by one to name the culprit.
    """
    if '"' not in text and delimiter.isascii():
        data = _bytes_of(raw, text, encoding)
        if data.count(delimiter.encode()) == (n_rows + 1) * (width - 1):
            return None
        # split on "\n" only: splitlines() also breaks at \x1c, \x85, ... and miscounts
        for i, line in enumerate(text.split("\n"), start=1):
            if line.strip("\r"):
                got = line.count(delimiter) + 1
                if got != width:
                    return i, got
        return None
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        if row and len(row) != width:
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
    warning that counts them (docs/algorithms.md §0 rule 1).
    """

    wanted = list(columns) if columns is not None else schema.used_columns()
    missing_cols = [c for c in wanted if c not in df.columns]
    if missing_cols:
        hint = ""
        if len(df.columns) == 1 and any(d in str(df.columns[0]) for d in ";\t|"):
            hint = " — the header is one column: wrong --delimiter?"
        elif 2 * len(missing_cols) >= len(wanted):  # most of the schema is absent
            hint = " — is the schema for a different data set?"
        raise DataError(
            f"{source}: column(s) {', '.join(map(repr, missing_cols))} from schema "
            f"{schema.path} not found in the header ({', '.join(df.columns[:8])}"
            f"{', ...' if len(df.columns) > 8 else ''}){hint}"
        )
    for c in wanted:
        if schema.column(c).kind == "ignore":
            raise DpkitUsageError(f"column {c!r} is declared 'ignore' in {schema.path}")
    # Convert every column first (codes / floats; one C-level pass each), then find the
    # missing tokens among the few values that failed to convert, instead of comparing
    # every cell with the token.
    n = len(df)
    token = schema.missing
    raw: dict[str, np.ndarray] = {}  # the strings, for messages
    converted: dict[str, np.ndarray] = {}
    failed: dict[str, np.ndarray] = {}  # row indices whose value did not convert
    rows = np.zeros(n, dtype=bool)
    first_missing: dict[str, int] = {}
    for c in wanted:
        col = schema.columns[c]
        values = df[c].to_numpy()
        raw[c] = values
        if isinstance(col, CategoricalColumn):
            conv = _leaf_codes(values, col)
            bad = np.flatnonzero(conv < 0)
        else:
            conv = _to_float(values)
            bad = np.flatnonzero(~np.isfinite(conv))
        converted[c] = conv
        if token is not None and bad.size:
            is_tok = values[bad] == token
            if is_tok.any():
                rows[bad[is_tok]] = True
                first_missing[c] = int(bad[is_tok][0])
                bad = bad[~is_tok]
        failed[c] = bad
    if first_missing:
        if schema.missing_policy == "error":
            r = min(first_missing.values())
            # the first column missing on that row (its first missing row is r, as r is the least)
            c = next(c for c in wanted if first_missing.get(c) == r)
            raise DataError(
                f"{source}:{r + 2}: column {c!r} is missing ({token!r}); "
                f"set missing_policy: drop in {schema.path} to drop such rows"
            )
        warnings.warn(
            f"{source}: dropped {int(rows.sum())} row(s) with a missing value "
            f"({token!r}) in the used columns",
            DpkitWarning,
            stacklevel=2,
        )
    keep_all = not rows.any()
    idx = np.flatnonzero(~rows) if not keep_all else None
    out: dict[str, np.ndarray] = {}
    for c in wanted:
        col = schema.columns[c]
        bad = failed[c]
        if bad.size and not keep_all:
            bad = bad[~rows[bad]]  # problems in dropped rows do not matter
        values = raw[c]
        if isinstance(col, CategoricalColumn):
            if bad.size:
                bad_values = values[bad]
                uniq = list(dict.fromkeys(bad_values))[:MAX_LISTED]
                shown = ", ".join(repr(v) for v in uniq)
                empty = "" in uniq
                raise DataError(
                    f"{source}:{int(bad[0]) + 2}: column {c!r} has {int(bad.size)} value(s) "
                    f"not in the taxonomy of {schema.path} ({shown}"
                    f"{', ...' if len(set(bad_values)) > MAX_LISTED else ''}); "
                    + (
                        "declare a missing token (missing: ...) for empty values"
                        if empty
                        else "add them to the schema or fix the data"
                    )
                )
            codes = converted[c]
            out[c] = codes if keep_all else codes[idx]
        elif isinstance(col, NumericColumn):
            if bad.size:
                i = int(bad[0])
                v = values[i]
                what = (
                    "is empty (declare a missing token in the schema)"
                    if v == ""
                    else f"has {v!r}, not a finite number"
                )
                raise DataError(f"{source}:{i + 2}: numeric column {col.name!r} {what}")
            nums = converted[c] if keep_all else converted[c][idx]
            out[c] = _clip(nums, col, source, schema.path)
    return EncodedTable(schema=schema, columns=out, n_rows=n if keep_all else int(idx.size), source=source)


def _leaf_codes(values: np.ndarray, col: CategoricalColumn) -> np.ndarray:
    """Leaf code of each value (int32), -1 for a value that is not a leaf (one hash lookup)."""
    import pandas as pd

    return pd.Index(col.leaves, dtype=object).get_indexer(values).astype(np.int32)


def _to_float(values: np.ndarray) -> np.ndarray:
    """float64 of each value; NaN where a value is not a number."""
    import pandas as pd

    try:
        # numpy's str -> float64 cast runs in C; only a bad value sends us to pandas
        return np.asarray(values, dtype=object).astype(np.float64)
    except (ValueError, TypeError):
        return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)


def _clip(nums: np.ndarray, col: NumericColumn, source: str, schema_path: str) -> np.ndarray:
    """Clip to the public bounds, warning with the count (docs/algorithms.md §0 rule 1)."""
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
    """Read ``path`` and encode it against ``schema`` (:func:`read_csv` + :func:`encode`).

    Fast path: the wanted columns are parsed straight into pandas categories and floats
    (no Python string per cell, unused columns skipped). Anything unusual — a value that
    is not a leaf or not a number, a missing token under ``missing_policy: error`` — falls
    back to :func:`read_csv` + :func:`encode`, so errors and warnings are exactly theirs.
    """
    name = _name(path)
    raw, text, header = _read_text(path, encoding=encoding, delimiter=delimiter)
    table = _fast_load(name, raw, text, header, schema, columns, encoding, delimiter)
    if table is not None:
        return table
    df = _parse_strings(name, raw, text, header, encoding, delimiter, True)
    return encode(df, schema, columns, source=name)


def _fast_load(
    name: str, raw: bytes, text: str, header: list[str], schema: Schema,
    columns: Sequence[str] | None, encoding: str, delimiter: str,
) -> EncodedTable | None:
    """:func:`load_table` without per-cell Python objects, or None to take the slow path."""
    import pandas as pd

    wanted = list(columns) if columns is not None else schema.used_columns()
    if not wanted or any(c not in header or c not in schema.columns for c in wanted):
        return None
    cols = [schema.columns[c] for c in wanted]
    if any(not isinstance(c, CategoricalColumn | NumericColumn) for c in cols):
        return None
    token = schema.missing
    positions = [header.index(c) for c in wanted]
    dtypes = {
        p: ("category" if isinstance(col, CategoricalColumn) else np.float64)
        for p, col in zip(positions, cols, strict=True)
    }
    utf8 = encoding.lower().replace("_", "-") in _UTF8
    source = io.BytesIO(_bytes_of(raw, text, encoding)) if utf8 else io.StringIO(text)
    try:
        df = pd.read_csv(
            source,
            encoding="utf-8" if utf8 else None,
            sep=delimiter,
            header=0,
            names=list(range(len(header))),
            usecols=positions,
            dtype=dtypes,
            keep_default_na=False,
            na_filter=False,  # a missing token in a numeric column fails to parse: slow path
            engine="c",
            on_bad_lines="error",
        )
    except Exception:  # noqa: BLE001 — any parse problem: the slow path names it properly
        return None
    n = len(df)
    if n == 0 or (len(header) > 1 and _ragged_row(raw, text, encoding, delimiter, len(header), n)):
        return None
    rows = np.zeros(n, dtype=bool)  # rows holding the missing token in a used column
    converted: dict[str, np.ndarray] = {}
    for p, c, col in zip(positions, wanted, cols, strict=True):
        series = df[p]
        if isinstance(col, CategoricalColumn):
            cats = [str(v).strip() for v in series.cat.categories]
            lut = pd.Index(col.leaves, dtype=object).get_indexer(cats).astype(np.int32)
            if token is not None and token in cats:
                lut_missing = np.array([v == token for v in cats])
            else:
                lut_missing = np.zeros(len(cats), dtype=bool)
            if ((lut < 0) & ~lut_missing).any():
                return None  # a value outside the taxonomy: the slow path lists it
            codes = series.cat.codes.to_numpy()
            if (codes < 0).any():
                return None
            if lut_missing.any():
                rows |= lut_missing[codes]
            converted[c] = lut[codes]
        else:
            nums = series.to_numpy(dtype=np.float64)
            if not np.isfinite(nums).all():  # 'nan', 'inf' written in the data
                return None
            converted[c] = nums
    if rows.any():
        if schema.missing_policy == "error":
            return None  # the slow path raises the error naming line and column
        warnings.warn(
            f"{name}: dropped {int(rows.sum())} row(s) with a missing value "
            f"({token!r}) in the used columns",
            DpkitWarning,
            stacklevel=3,
        )
        keep = np.flatnonzero(~rows)
        converted = {c: v[keep] for c, v in converted.items()}
    out = {}
    for c, col in zip(wanted, cols, strict=True):
        out[c] = converted[c] if isinstance(col, CategoricalColumn) else _clip(converted[c], col, name, schema.path)
    return EncodedTable(schema=schema, columns=out, n_rows=n - int(rows.sum()), source=name)


# --------------------------------------------------------------------------- coverage


@dataclass
class Coverage:
    """What :func:`check_coverage` found: which values of a table the schema does not cover.

    Exact counts here are for the data owner's eyes (``dpkit taxonomy validate``), never
    for a report.
    """

    source: str
    missing_columns: list[str]
    # column -> first uncovered values (up to MAX_LISTED) with the line each first occurs on
    uncovered: dict[str, list[tuple[str, int]]]
    uncovered_distinct: dict[str, int]
    # numeric column -> (values below lo, values above hi): clipped on load
    out_of_bounds: dict[str, tuple[int, int]]
    missing_rows: int
    missing_first: tuple[int, str] | None  # (line, column) of the first missing token

    @property
    def ok(self) -> bool:
        return not self.missing_columns and not self.uncovered


def check_coverage(df: pd.DataFrame, schema: Schema, *, source: str = "<data>") -> Coverage:
    """Check every value of ``df`` against ``schema`` without stopping at the first problem.

    Categorical values must be leaves of the taxonomy, numeric values finite numbers
    (values outside the bounds are counted: loading clips them), and the missing token is
    counted per the schema's policy. Line numbers assume no field holds a newline.
    """
    import pandas as pd

    wanted = schema.used_columns()
    missing_columns = [c for c in wanted if c not in df.columns]
    present = [c for c in wanted if c in df.columns]
    is_missing = np.zeros(len(df), dtype=bool)
    first_missing: tuple[int, str] | None = None
    if schema.missing is not None and present:
        per_col = np.stack([df[c].to_numpy() == schema.missing for c in present], axis=1)
        is_missing = per_col.any(axis=1)
        if is_missing.any():
            r = int(np.flatnonzero(is_missing)[0])
            first_missing = (r + 2, present[int(np.flatnonzero(per_col[r])[0])])
    uncovered: dict[str, list[tuple[str, int]]] = {}
    distinct: dict[str, int] = {}
    bounds: dict[str, tuple[int, int]] = {}
    for c in present:
        col = schema.columns[c]
        values = df[c].to_numpy()
        # a missing token is judged by the policy, not as an uncovered value
        considered = values != schema.missing if schema.missing is not None else np.ones(len(df), dtype=bool)
        if isinstance(col, CategoricalColumn):
            codes = _leaf_codes(values, col)
            bad = (codes < 0) & considered
        else:
            assert isinstance(col, NumericColumn)
            try:
                nums = np.asarray(values, dtype=object).astype(np.float64)
            except (ValueError, TypeError):
                nums = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(nums) & considered
            ok = ~bad & considered
            below = int(np.count_nonzero(nums[ok] < col.lo))
            above = int(np.count_nonzero(nums[ok] > col.hi))
            if below or above:
                bounds[c] = (below, above)
        if bad.any():
            rows = np.flatnonzero(bad)
            firsts: dict[str, int] = {}
            for r in rows:
                v = values[r]
                if v not in firsts:
                    firsts[v] = int(r) + 2
                    if len(firsts) == MAX_LISTED:
                        break
            uncovered[c] = list(firsts.items())
            distinct[c] = len(set(values[rows].tolist()))
    return Coverage(
        source=source,
        missing_columns=missing_columns,
        uncovered=uncovered,
        uncovered_distinct=distinct,
        out_of_bounds=bounds,
        missing_rows=int(np.count_nonzero(is_missing)),
        missing_first=first_missing,
    )


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
        os.chmod(tmp, 0o644 & ~_umask())
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


def write_csv(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` (with header, no index) atomically to ``path`` or stdout."""
    with atomic_output(path) as fh:
        df.to_csv(fh, index=False, lineterminator="\n")
