"""The exact CSV reader: pandas' C parser, every problem one message naming file and line.

Reading follows csvkit's conventions: ``-`` is stdin, ``utf-8-sig`` by default (a BOM is
harmless), every problem is one :class:`DataError` naming the file, line and column and
saying what to do. It reads every input the columnar reader (:mod:`dpkit.io.columnar`)
hands over — stdin, other encodings, ragged rows, quoted newlines — as a DataFrame of strings
(:func:`dpkit.io.table.read_table`, :func:`dpkit.io.table.load`).
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from dpkit.console import private
from dpkit.errors import DataError, DpkitUsageError
from dpkit.io.source import _header, read_raw, resolve_delimiter

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.io.source import ReadOptions


def _read_text(options: ReadOptions, raw: bytes | None = None) -> tuple[bytes, str, list[str], str]:
    """Bytes, decoded text, the (stripped, checked) column names and the delimiter of a CSV file.

    ``raw``: the bytes, when already read (stdin can be read only once).
    """
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
    # R's write.table (row.names = TRUE) names one column fewer than its rows hold: the first
    # field of each row is its row name. pandas reads such a file with the row names as its
    # index; so do we, and leave them out (a row's name is no value of the table), saying so.
    if (has_header and len(df) and not isinstance(df.index, pd.RangeIndex)
            and _row_names(raw, text, encoding, delimiter, len(header), len(df))):
        from dpkit.errors import DpkitWarning, warn

        warn(DpkitWarning(f"{name}: the header names {len(header)} columns and every row holds {len(header) + 1} "
                          "fields: the first field of each row is read as its row name (as R's write.table "
                          "writes them) and left out"))
        df = df.reset_index(drop=True)
    # The C parser pads short rows with "" silently, and takes a long first row as an index:
    # find such rows so that they are not read as values.
    elif len(df) and len(header) > 1:
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
    terminal or -v (:func:`dpkit.console.private`) — a line number points at a record."""
    todo = "check delimiter= and quoting"
    return private(f"{exact}; {todo}", f"{name}: a ragged row (every row needs {width} fields); {todo}")


def _parser_error_line(msg: str) -> int | None:
    import re

    m = re.search(r"line (\d+)", msg)
    return int(m.group(1)) if m else None


def _row_names(raw: bytes, text: str, encoding: str, delimiter: str, width: int, n_rows: int) -> bool:
    """Does every data row hold ``width + 1`` fields under a header of ``width`` names (R's
    write.table with row names)? One ``bytes.count`` without quotes, else a csv scan."""
    if '"' not in text and delimiter.isascii():
        data = _bytes_of(raw, text, encoding)
        if data.count(delimiter.encode()) != (width - 1) + n_rows * width:
            return False
        lines = [ln for ln in text.split("\n") if ln.strip("\r")]
        return len(lines) == n_rows + 1 and all(ln.count(delimiter) == width for ln in lines[1:])
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r]
    return len(rows) > 1 and len(rows[0]) == width and all(len(r) == width + 1 for r in rows[1:])


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
