"""What the input is: its format (CSV or Parquet), its delimiter, its header.

Every reader asks here first — the columnar one (:mod:`dpkit.data.columnar`), the exact one
(:mod:`dpkit.data.exact_csv`), Parquet's (:mod:`dpkit.data.parquet`) and the Spark engine's:
:func:`is_parquet` (``fmt``, else the extension, else the magic bytes), :func:`resolve` (the
delimiter sniffed once, with its warning naming it, when it was not given) and
:func:`_quick_header` (the checked column names from the first bytes, when they tell).
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dpkit.data.source import read_raw
from dpkit.errors import DataError, DpkitWarning, warn

if TYPE_CHECKING:
    from dpkit.data.source import ReadOptions


PARQUET_EXTENSIONS = (".parquet", ".pq")
PARQUET_MAGIC = b"PAR1"
SNIFFED = (",", ";", "\t", "|")
SAMPLE_BYTES = 1 << 16
_NAMES = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}


def is_parquet(options: ReadOptions) -> bool:
    """``fmt`` if given, else the extension (``.parquet``/``.pq``), else the magic bytes."""
    if options.fmt:
        return options.fmt == "parquet"
    if options.path == "-":
        try:
            return read_raw("-")[:4] == PARQUET_MAGIC  # read once, served again to the reader
        except Exception:  # noqa: BLE001 — the CSV path reports a closed stdin
            return False
    if options.path.lower().endswith(PARQUET_EXTENSIONS):
        return True
    try:
        with open(options.path, "rb") as fh:
            return fh.read(4) == PARQUET_MAGIC
    except OSError:
        return False  # the CSV path reports the problem


def sample(options: ReadOptions, raw: bytes | None = None) -> bytes:
    """The first bytes of the input (all of ``raw`` when given)."""
    if raw is not None:
        return raw[:SAMPLE_BYTES]
    try:
        with open(options.path, "rb") as fh:
            return fh.read(SAMPLE_BYTES)
    except OSError:
        return b""  # the reader reports it


def sniff_delimiter(text: str) -> str:
    """The delimiter among ``,`` ``;`` tab ``|`` that splits the sample into equal widths.

    Each candidate is scored on the first lines of ``text`` (quotes respected): it must
    split the header into more than one field and give every sampled row the header's
    width; among those, the widest wins, and ``,`` wins ties. None fits: ``,``.
    """
    lines = text.split("\n")
    if len(lines) > 1 and len(text) >= SAMPLE_BYTES - 4:
        lines = lines[:-1]  # the last line of a cut sample is partial
    lines = [ln for ln in lines[:50] if ln.strip("\r")]
    if not lines:
        return ","
    best, best_width = ",", 1
    for d in SNIFFED:
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=d))
        except csv.Error:
            continue
        rows = [r for r in rows if r]
        if not rows:
            continue
        width = len(rows[0])
        if width > best_width and all(len(r) == width for r in rows):
            best, best_width = d, width
    return best


def resolve_delimiter(options: ReadOptions, raw: bytes | None = None) -> str:
    """``options.delimiter``, or the sniffed one (with a warning naming it when it is not ``,``)."""
    if options.delimiter is not None:
        return options.delimiter
    head = sample(options, raw)
    try:
        text = head.decode(options.encoding, errors="replace")
    except LookupError:
        return ","  # the reader reports the unknown encoding
    d = sniff_delimiter(text.lstrip("\ufeff"))
    if d != ",":
        warn(
            DpkitWarning(f"{options.name}: fields are separated by {_NAMES[d]} (sniffed; pass delimiter= "
                         "to choose)", param="delimiter"),
        )
    return d


def delimiter_name(d: str) -> str:
    return _NAMES.get(d, repr(d))


def resolve(options: ReadOptions) -> ReadOptions:
    """``options`` with the delimiter sniffed (once, with its warning) when it was None."""
    if options.delimiter is not None or is_parquet(options):
        return options
    if "://" in options.path or Path(options.path).is_dir():
        return options  # a URI or a directory: only the Spark engine reads it, and sniffs there
    raw = read_raw("-") if options.path == "-" else None
    return replace(options, delimiter=resolve_delimiter(options, raw))


def first_line(options: ReadOptions) -> int:
    """The line number of the first data row (2 after a header row, else 1)."""
    return 2 if options.header else 1


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


def _quick_header(options: ReadOptions, raw: bytes | None) -> list[str] | None:
    """The column names from the first bytes, or None when only the full read can tell."""
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
