"""CSV in and out, and encoding a table against its schema.

Reading follows csvkit's conventions: ``-`` is stdin, ``utf-8-sig`` by default (a BOM is
harmless), every problem is one :class:`DataError` naming the file, line and column and
saying what to do. Writing is atomic (temp file in the same directory + rename), so an
output file is either complete or absent; ``-`` is stdout.

Encoded columns are numpy arrays: categorical values become leaf codes (the smallest of
int8/int16/int32 that holds them, in the leaf order of the schema's taxonomy), numeric values
clipped to the public bounds: whole numbers in the smallest integer type that holds the
bounds (``columnar.number_dtype``: age in one byte a row), else float64 — on both paths, and
every consumer gives the same result for either type. :func:`load` reads through the columnar, streaming
reader of :mod:`dpkit.data.columnar` and falls back to the exact pandas path here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpkit.console import private
from dpkit.data.encoded import EncodedTable
from dpkit.data.schema import CategoricalColumn, NumericColumn, Schema
from dpkit.data.source import read_raw
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn

__all__ = ["EncodedTable", "read_raw"]  # defined in dpkit.data.encoded / .source, used from here too

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.data import columnar
    from dpkit.data.source import ReadOptions

DEFAULT_ENCODING = "utf-8-sig"
MAX_LISTED = 5


def read_csv(
    path: str | Path,
    *,
    encoding: str = DEFAULT_ENCODING,
    delimiter: str | None = ",",
    require_rows: bool = True,
    header: bool = True,
    column_names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Read a CSV with a header row into a DataFrame of strings (nothing is guessed).

    Raises :class:`DataError` for an empty file, a header with no rows (unless
    ``require_rows`` is False), ragged rows, undecodable bytes and duplicate column names.
    ``delimiter=None`` sniffs it; ``header=False`` names the columns ``column_names`` or
    c1…cn. A Parquet file (by extension or magic bytes) is read too, as strings.
    """
    from dpkit.data.source import ReadOptions

    return read_table(ReadOptions(str(path), encoding=encoding, delimiter=delimiter, header=header,
                                  column_names=tuple(column_names) if column_names else None),
                      require_rows=require_rows)


def read_table(options: ReadOptions, *, require_rows: bool = True, categorical: bool = False,
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The table ``options`` describes (CSV or Parquet) as a DataFrame of strings.

    ``categorical=True``: pandas ``category`` columns of the same strings, read by Arrow
    (one small integer per cell instead of a Python string: ~10x less memory); anything
    unusual takes the exact path (and gives ``object`` columns). ``columns``: with
    ``categorical``, the columns the caller uses; when the header has them all, only those
    are read (in header order); otherwise (and on the exact path) every column is.
    """
    from dpkit.data import columnar

    if columnar.is_parquet(options):
        return columnar.read_parquet_strings(options)
    if categorical:
        got = read_codes(options, columns)
        if got is not None:
            return columnar.categorical_frame(got)
    raw, text, header, delimiter = _read_text(options)
    return _parse_strings(options.name, raw, text, header, options.encoding, delimiter, require_rows,
                          has_header=options.header)


def read_codes(options: ReadOptions, columns: Sequence[str] | None = None) -> columnar.Codes | None:
    """The table as codes of each column's distinct (stripped) strings, read by Arrow
    (:func:`dpkit.data.columnar.read_codes`: no Python string per cell), or None when only
    the exact path reads it (Parquet, stdin, whitespace to strip, a ragged row, …).
    ``columns``: as :func:`read_table`'s with ``categorical``."""
    from dpkit.data import columnar

    if options.path == "-" or columnar.is_parquet(options):
        return None
    fixed = resolve(options)
    header = _quick_header(fixed, None)
    if header is None:
        return None
    usable = columns is not None and all(c in header for c in columns)
    return columnar.read_codes(fixed, header, columns if usable else None)


def resolve(options: ReadOptions) -> ReadOptions:
    """``options`` with the delimiter sniffed (once, with its warning) when it was None."""
    from dpkit.data import columnar

    if options.delimiter is not None or columnar.is_parquet(options):
        return options
    if "://" in options.path or Path(options.path).is_dir():
        return options  # a URI or a directory: only the Spark engine reads it, and sniffs there
    raw = read_raw("-") if options.path == "-" else None
    return replace(options, delimiter=columnar.resolve_delimiter(options, raw))


def column_names(options: ReadOptions) -> list[str]:
    """The column names of the table (its header row, or -H's names), reading as little as possible."""
    from dpkit.data import columnar

    if columnar.is_parquet(options):
        return columnar.parquet_columns(options)
    options = resolve(options)
    raw = read_raw("-") if options.path == "-" else None
    header = _quick_header(options, raw)
    if header is None:
        header = _read_text(options, raw)[2]
    return header


def first_line(options: ReadOptions) -> int:
    """The line number of the first data row (2 after a header row, else 1)."""
    return 2 if options.header else 1


def _read_text(options: ReadOptions, raw: bytes | None = None) -> tuple[bytes, str, list[str], str]:
    """Bytes, decoded text, the (stripped, checked) column names and the delimiter of a CSV file.

    ``raw``: the bytes, when already read (stdin can be read only once).
    """
    from dpkit.data.columnar import resolve_delimiter

    name = options.name
    path, encoding = options.path, options.encoding
    if options.delimiter is not None and len(options.delimiter) != 1:
        raise DpkitUsageError(f"delimiter must be one character, got {options.delimiter!r}", param="delimiter")
    if raw is None:
        raw = read_raw(path, encoding=encoding)
    try:
        text = raw.decode(encoding)
    except LookupError:
        raise DpkitUsageError(f"encoding {encoding!r} is unknown", param="encoding") from None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        # the line and the byte point at a record: for the data owner only (dpkit.console)
        raise DataError(private(
            f"{name}:{line}: byte 0x{raw[exc.start]:02x} is not valid {encoding}; pass encoding= (e.g. latin-1)",
            f"{name}: a byte is not valid {encoding}; pass encoding= (e.g. latin-1)",
        ), param="encoding") from None
    if not text or text.isspace():  # (text.strip() would copy the whole file)
        raise DataError(f"{name}: the file is empty; expected a header row and data rows")
    delimiter = resolve_delimiter(options, raw)
    header = _header(name, text, delimiter, options)
    return raw, text, header, delimiter


def _header(name: str, text: str, delimiter: str, options: ReadOptions) -> list[str]:
    """The checked column names: the first row's, or ``options.column_names`` / c1…cn."""
    reader = csv.reader(io.StringIO(text[: 1 << 20]), delimiter=delimiter)
    try:
        first = next(reader)
    except csv.Error as exc:
        raise DataError(f"{name}:1: cannot parse the header: {exc}") from None
    except StopIteration:
        first = []
    if not first:
        # a blank first line: pandas would skip it and take the next line as the header
        what = "the header row" if options.header else "the first row"
        raise DataError(f"{name}:1: the first line is blank; {what} must come first")
    if not options.header:
        if options.column_names is None:
            return [f"c{i}" for i in range(1, len(first) + 1)]
        names = [c.strip() for c in options.column_names]
        if len(names) != len(first):
            raise DataError(
                f"{name}:1: column_names= gives {len(names)} name(s), the first row has "
                f"{len(first)} field(s); give one name per column", param="column_names"
            )
        header, where = names, "the column names given"
    else:
        header, where = [h.strip() for h in first], f"{name}:1: the header"
    seen: set[str] = set()
    for h in header:
        if h == "":
            raise DataError(f"{where} has an empty column name; name every column")
        if h in seen:
            raise DataError(
                f"{name}:1: duplicate column name {h!r}; column names must be unique"
                if options.header else f"the column names given repeat {h!r}; names must be unique",
                param=None if options.header else "column_names",
            )
        seen.add(h)
    return header


def _parse_strings(
    name: str, raw: bytes, text: str, header: list[str], encoding: str, delimiter: str, require_rows: bool,
    *, has_header: bool = True,
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
            header=0 if has_header else None,
            dtype=object,
            keep_default_na=False,
            na_filter=False,
            skipinitialspace=False,
            engine="c",
            on_bad_lines="error",
        )
    except pd.errors.ParserError as exc:
        msg = str(exc).strip()
        # name the row from our own scan, so that the numbers agree with the header's width
        bad = _ragged_row(raw, text, encoding, delimiter, len(header), -1, has_header)
        if bad is not None and bad[0] > 0:
            raise DataError(_ragged(name, f"{name}:{bad[0]}: ragged row (expected {len(header)} fields, "
                                          f"saw {bad[1]})", len(header)), param="delimiter") from None
        line = _parser_error_line(msg)
        where = f"{name}:{line}" if line else name
        raise DataError(_ragged(name, f"{where}: ragged row ({msg.split(': ')[-1]}); every row needs "
                                      f"{len(header)} fields", len(header)), param="delimiter") from None
    except (pd.errors.EmptyDataError, csv.Error) as exc:
        raise DataError(f"{name}: cannot parse CSV: {exc}") from None
    if len(df.columns) != len(header):
        # the C parser and the csv module disagree on the header (e.g. NUL bytes)
        raise DataError(
            f"{name}:1: cannot parse the header (read {len(header)} column names, the parser "
            f"saw {len(df.columns)}); check delimiter=, encoding and quoting", param="delimiter"
        )
    if require_rows and len(df) == 0:
        raise DataError(f"{name}: has a header but no data rows")
    # The C parser pads short rows with "" silently, and takes a long first row as an index:
    # find such rows so that they are not read as values.
    if len(df) and len(header) > 1:
        bad = _ragged_row(raw, text, encoding, delimiter, len(header), len(df), has_header)
        if bad is not None:
            line, got = bad
            where = f"{name}:{line}" if line > 0 else f"{name}: a record"
            raise DataError(_ragged(name, f"{where}: ragged row (expected {len(header)} fields, saw {got})",
                                    len(header)), param="delimiter")
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


def _ragged(name: str, exact: str, width: int) -> str:
    """A ragged row's message: ``exact`` (its line, its field count) only for the data owner's
    terminal or -v (:func:`dpkit.console.private`) — a line number points at a record (issue 38)."""
    todo = "check delimiter= and quoting"
    return private(f"{exact}; {todo}", f"{name}: a ragged row (every row needs {width} fields); {todo}")


def _parser_error_line(msg: str) -> int | None:
    import re

    m = re.search(r"line (\d+)", msg)
    return int(m.group(1)) if m else None


def _ragged_row(
    raw: bytes, text: str, encoding: str, delimiter: str, width: int, n_rows: int, has_header: bool = True
) -> tuple[int, int] | None:
    """``(line, fields)`` of the first row whose width differs from the header's, else None.

    Fast path (no quotes, ASCII delimiter): pandas already refuses rows that are too long
    (except the first, which it would take as an index), so the file is rectangular exactly
    when it holds ``(n_rows + 1) * (width - 1)`` delimiters — one ``bytes.count``. Only when
    that fails are lines scanned one by one to name the culprit.
    """
    if '"' not in text and delimiter.isascii():
        data = _bytes_of(raw, text, encoding)
        if n_rows >= 0 and data.count(delimiter.encode()) == (n_rows + int(has_header)) * (width - 1):
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


def encode(
    df: pd.DataFrame,
    schema: Schema,
    columns: Sequence[str] | None = None,
    *,
    source: str = "<data>",
    first_line: int = 2,
) -> EncodedTable:
    """Encode ``columns`` (default: every non-ignored schema column) of ``df``.

    ``first_line`` is the line number of ``df``'s first row in messages (1 without a header).

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
    tokens = list(schema.missing_tokens)
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
        elif col.time is not None:
            from dpkit.data.dates import parse_array

            conv = parse_array(values, col.time)
            bad = np.flatnonzero(~np.isfinite(conv))
        else:
            conv = _to_float(values)
            bad = np.flatnonzero(~np.isfinite(conv))
        converted[c] = conv
        if tokens and bad.size:
            is_tok = np.isin(values[bad], tokens)
            if is_tok.any():
                if not _keeps_missing(col, conv, bad[is_tok]):
                    rows[bad[is_tok]] = True
                    first_missing[c] = int(bad[is_tok][0])
                bad = bad[~is_tok]
        if bad.size and isinstance(col, CategoricalColumn) and col.unlisted != "error":
            # values outside the taxonomy are the catch-all leaf, or missing (docs/formats.md)
            if col.unlisted == "other":
                conv[bad] = col.other_code
            elif not _keeps_missing(col, conv, bad):
                rows[bad] = True
                first_missing[c] = min(first_missing.get(c, n), int(bad[0]))
            bad = bad[:0]
        if bad.size and isinstance(col, NumericColumn) and col.unparsable == "missing":
            # a learned type: what is not a date (a number) is missing, never an error (a refusal
            # one record can cause would reveal it; dpkit.domain.metadata) — under keep, its bucket
            if not _keeps_missing(col, conv, bad):
                rows[bad] = True
                first_missing[c] = min(first_missing.get(c, n), int(bad[0]))
            bad = bad[:0]
        failed[c] = bad
    if first_missing:
        if schema.missing_policy == "error":
            r = min(first_missing.values())
            # the first column missing on that row (its first missing row is r, as r is the least)
            c = next(c for c in wanted if first_missing.get(c) == r)
            raise DataError(private(
                f"{source}:{r + first_line}: column {c!r} is missing ({raw[c][r]!r}); "
                f"set missing_policy: drop in {schema.path} to drop such rows",
                f"{source}: column {c!r} has a missing value; "
                f"set missing_policy: drop in {schema.path} to drop such rows",
            ))
        from dpkit.data.columnar import dropped_message

        warn(dropped_message(source, int(rows.sum()), schema, wanted), DpkitWarning)
    keep_all = not rows.any()
    idx = np.flatnonzero(~rows) if not keep_all else None
    out: dict[str, np.ndarray] = {}
    clips: list[tuple[NumericColumn, int]] = []  # (column, values clipped): one warning for the call
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
                todo = ("declare a missing token (missing: ...) for empty values" if empty
                        else "add them to the schema or fix the data")
                raise DataError(private(
                    f"{source}:{int(bad[0]) + first_line}: column {c!r} has {int(bad.size)} value(s) "
                    f"not in the taxonomy of {schema.path} ({shown}"
                    f"{', ...' if len(set(bad_values)) > MAX_LISTED else ''}); " + todo,
                    f"{source}: column {c!r} has values not in the taxonomy of {schema.path}; " + todo,
                ))
            codes = converted[c]
            out[c] = codes if keep_all else codes[idx]
        elif isinstance(col, NumericColumn):
            if bad.size:
                i = int(bad[0])
                v = values[i]
                from dpkit.data.dates import expected as shape

                kind = col.time or "numeric"
                expected = shape(col.time) if col.time is not None else "a finite number"
                what = (
                    "is empty (declare a missing token in the schema)"
                    if v == ""
                    else f"has {v!r}, not {expected}"
                )
                raise DataError(private(
                    f"{source}:{i + first_line}: {kind} column {col.name!r} {what}",
                    f"{source}: {kind} column {col.name!r} "
                    + ("has an empty value (declare a missing token in the schema)" if v == ""
                       else f"has a value that is not {expected}"),
                ))
            nums = converted[c] if keep_all else converted[c][idx]
            out[c] = compact_numbers(_clip(nums, col, clips), col)
    if clips:  # one warning naming every clipped column
        from dpkit.data.columnar import clips_warning

        warn(clips_warning(source, clips, schema.path))
    return EncodedTable(schema=schema, columns=out, n_rows=n if keep_all else int(idx.size), source=source)


def _keeps_missing(col: CategoricalColumn | NumericColumn, conv: np.ndarray, rows: np.ndarray) -> bool:
    """Read the missing values at ``rows`` as a value of ``col`` when its domain holds them
    (``missing_policy: keep``): the ``(missing)`` leaf's code, or NaN for a numeric column's
    missing bucket (``conv`` holds NaN there already). False: the rows are missing."""
    if isinstance(col, CategoricalColumn):
        if col.missing_code < 0:  # neither the (missing) leaf nor, for a column without it, (other)
            return False
        conv[rows] = col.missing_code
        return True
    if col.missing:
        conv[rows] = np.nan
        return True
    return False


def encode_codes(
    codes: Mapping[str, np.ndarray],
    values: Mapping[str, np.ndarray],
    n_rows: int,
    schema: Schema,
    columns: Sequence[str],
    *,
    source: str = "<data>",
    first_line: int = 2,
) -> EncodedTable:
    """Encode ``columns`` of a table held as codes: what :func:`encode` gives for its strings.

    ``codes[c]``: each row's index into ``values[c]``, the column's distinct strings as the
    reader gives them (a string frame's, :mod:`dpkit.engine.string_frame`). Each distinct
    value is converted once (:func:`_numbers`, the exact path's parse) and the rows are
    encoded from their codes by the columnar encoder (:func:`dpkit.data.columnar.encode_dictionary`),
    so memory grows with the distinct values, not the rows. Anything unusual (a value that is
    not a leaf or not a number, a missing token under ``missing_policy: error``) builds the
    rows' strings and takes :func:`encode`, whose messages name the line (``first_line``: the
    line of row 0).
    """
    from dpkit.data.columnar import encode_dictionary

    wanted = list(columns)
    numbers = {c: _numbers(np.asarray(values[c], dtype=object), schema.columns[c]) for c in wanted
               if c in values and isinstance(schema.columns.get(c), NumericColumn)}
    table = encode_dictionary(codes, values, numbers, n_rows, schema, wanted, source)
    if table is not None:
        return table
    import pandas as pd

    df = pd.DataFrame({c: np.asarray(values[c], dtype=object)[codes[c]] for c in codes}, columns=list(codes))
    return encode(df, schema, wanted, source=source, first_line=first_line)


def _numbers(values: np.ndarray, col: NumericColumn) -> np.ndarray:
    """A numeric column's values as :func:`encode` parses them: dates and timestamps by
    :func:`dpkit.data.dates.parse_array`, numbers by :func:`_to_float` (NaN: neither)."""
    if col.time is not None:
        from dpkit.data.dates import parse_array

        return parse_array(values, col.time)
    return _to_float(values)


def compact_numbers(values: np.ndarray, col: NumericColumn) -> np.ndarray:
    """Clipped numbers in the column's small integer type (``columnar.number_dtype``) when
    they are all whole numbers, as the columnar reader stores them; else unchanged."""
    from dpkit.data.columnar import number_dtype

    dtype = number_dtype(col.lo, col.hi)
    if dtype is None or not np.array_equal(np.trunc(values), values):
        return values
    return values.astype(dtype)


def _leaf_codes(values: np.ndarray, col: CategoricalColumn) -> np.ndarray:
    """Leaf code of each value (the smallest int type), -1 for a value that is not a leaf."""
    import pandas as pd

    from dpkit.data.columnar import code_dtype

    return pd.Index(col.leaves, dtype=object).get_indexer(values).astype(code_dtype(len(col.leaves)))


def _to_float(values: np.ndarray) -> np.ndarray:
    """float64 of each value; NaN where a value is not a number."""
    try:
        # numpy's str -> float64 cast runs in C; only a bad value sends us to pandas
        return np.asarray(values, dtype=object).astype(np.float64)
    except (ValueError, TypeError):
        import pandas as pd

        return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)


def _clip(nums: np.ndarray, col: NumericColumn, clips: list[tuple[NumericColumn, int]]) -> np.ndarray:
    """Clip to the public bounds (docs/algorithms.md §0 rule 1), adding (column, count) to
    ``clips`` for the call's one warning."""
    out_of = (nums < col.lo) | (nums > col.hi)
    if out_of.any():
        clips.append((col, int(out_of.sum())))
        nums = np.clip(nums, col.lo, col.hi)
    return nums


def load_table(
    path: str | Path,
    schema: Schema,
    columns: Sequence[str] | None = None,
    *,
    encoding: str = DEFAULT_ENCODING,
    delimiter: str | None = ",",
) -> EncodedTable:
    """Read ``path`` and encode it against ``schema`` (see :func:`load`)."""
    from dpkit.data.source import ReadOptions

    return load(ReadOptions(str(path), encoding=encoding, delimiter=delimiter), schema, columns)


def load(options: ReadOptions, schema: Schema, columns: Sequence[str] | None = None) -> EncodedTable:
    """Read the table ``options`` describes (CSV or Parquet) and encode it against ``schema``.

    Fast path (:mod:`dpkit.data.columnar`): Arrow streams the file and only the codes of
    the wanted columns are kept. Anything unusual — a value that is not a leaf or not a
    number, a missing token under ``missing_policy: error``, a ragged row — falls back to
    :func:`read_table` + :func:`encode`, so errors and warnings are exactly theirs.
    """
    from dpkit.data import columnar

    wanted = list(columns) if columns is not None else schema.used_columns()
    if columnar.is_parquet(options):
        return columnar.load_parquet(options, schema, wanted)
    name = options.name
    if options.delimiter is not None and len(options.delimiter) != 1:
        raise DpkitUsageError(f"delimiter must be one character, got {options.delimiter!r}", param="delimiter")
    stdin = read_raw("-") if options.path == "-" else None
    fixed = resolve(options)
    delimiter = fixed.delimiter or ","
    header = _quick_header(fixed, stdin)
    if header is not None:
        table = columnar.load_csv_fast(fixed, delimiter, header, schema, wanted, stdin)
        if table is not None:
            return table
    raw, text, header, _ = _read_text(fixed, stdin)
    df = _parse_strings(name, raw, text, header, options.encoding, delimiter, True, has_header=options.header)
    return encode(df, schema, wanted, source=name, first_line=first_line(options))


def _quick_header(options: ReadOptions, raw: bytes | None) -> list[str] | None:
    """The column names from the first bytes, or None when only the full read can tell."""
    from dpkit.data.columnar import sample

    head = sample(options, raw)
    if b"\n" not in head:
        return None  # a one-line file or a huge header: the exact path
    line = head[: head.index(b"\n")]
    if b'"' in line:
        return None
    try:
        text = line.decode(options.encoding).lstrip("\ufeff").rstrip("\r")
        return _header(options.name, text + "\n", options.delimiter or ",", options)
    except (UnicodeDecodeError, LookupError, DataError):
        return None
