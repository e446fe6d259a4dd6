"""How to read one input table: the options every engine's reader takes.

One value object for the path and the CSV dialect (csvkit's flags: ``-e``, ``-d``/``-t``,
``-H``), so the numpy reader, the Spark reader and every command agree on what a flag means.
``delimiter=None`` asks the reader to sniff (`,` `;` tab `|`) and to say which it chose.

What the input is, which every reader asks here first — the columnar one
(:mod:`dpkit.io.columnar`), the exact one (:mod:`dpkit.io.exact_csv`), Parquet's
(:mod:`dpkit.io.parquet`) and the Spark engine's: its bytes (:func:`read_raw`, stdin read
once), its format (:func:`is_parquet`: ``fmt``, else the extension, else the magic bytes), its
delimiter (:func:`resolve`: sniffed once, with a warning naming it, when it was not given)
and its header (:func:`_quick_header`: the checked column names from the first bytes, when
they tell).
"""

from __future__ import annotations

import csv
import io
import sys
from dataclasses import dataclass, replace
from pathlib import Path

# the message helper and the constants it shares, also importable from here as before
from dpkit.console import have_columns as have_columns
from dpkit.defaults import DEFAULT_ENCODING, DELIMITERS
from dpkit.defaults import LISTED_COLUMNS as LISTED_COLUMNS
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn


@dataclass(frozen=True)
class ReadOptions:
    """The input table and its dialect.

    ``fmt`` is ``csv``, ``parquet`` or None (by the file's extension or magic bytes);
    ``header=False`` reads a headerless file, naming columns ``column_names`` or c1…cn.
    """

    path: str
    encoding: str = DEFAULT_ENCODING
    delimiter: str | None = ","
    header: bool = True
    column_names: tuple[str, ...] | None = None
    fmt: str | None = None

    @property
    def name(self) -> str:
        """The input's name in messages."""
        return "<stdin>" if self.path == "-" else self.path

    def sniffed(self) -> ReadOptions:
        """These options with the delimiter sniffed from the data when it is None (among ``,``
        ``;`` tab ``|``; a warning names one that is not ``,``), so that several reads of one
        input agree and warn once; a Parquet file, a directory or a URI is returned as it is.
        Every dpkit function sniffs an input it is given this way."""
        return resolve(self)


def _name(path: str | Path) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


_STDIN: list = []  # [the stdin stream, its bytes]: stdin is read once, then served from here


def read_raw(path: str | Path, *, encoding: str = DEFAULT_ENCODING, delimiter: str = ",") -> bytes:
    """The bytes of ``path`` (or stdin for ``-``), with friendly errors."""
    if delimiter is not None and len(delimiter) != 1:
        raise DpkitUsageError(f"delimiter must be one character, got {delimiter!r}", param="delimiter")
    try:
        if str(path) == "-":
            if _STDIN and _STDIN[0] is sys.stdin:
                return _STDIN[1]  # read once per process, so a header peek does not consume it
            if sys.stdin is None or sys.stdin.closed:
                raise DataError("<stdin>: standard input is closed; give a file path instead of '-'")
            data = sys.stdin.buffer.read()
            _STDIN[:] = [sys.stdin, data]
            return data
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a CSV file") from None
    except PermissionError:
        raise DataError(f"{path}: permission denied") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{_name(path)}: cannot read: {exc}") from None


# --------------------------------------------------------------------------- format, delimiter, header

PARQUET_EXTENSIONS = (".parquet", ".pq")
PARQUET_MAGIC = b"PAR1"
SNIFFED = DELIMITERS
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
    fits = sniff_candidates(text)
    return fits[0] if fits else ","


def sniff_candidates(text: str) -> list[str]:
    """Every delimiter of :data:`SNIFFED` that splits the sample's header into more than one field
    and every sampled row into the header's width, the best first (the widest; ``,`` wins ties)."""
    lines = text.split("\n")
    if len(lines) > 1 and len(text) >= SAMPLE_BYTES - 4:
        lines = lines[:-1]  # the last line of a cut sample is partial
    lines = [ln for ln in lines[:50] if ln.strip("\r")]
    if not lines:
        return []
    fits: list[tuple[int, int, str]] = []
    for i, d in enumerate(SNIFFED):
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=d))
        except csv.Error:
            continue
        rows = [r for r in rows if r]
        if not rows:
            continue
        width = len(rows[0])
        if width > 1 and all(len(r) == width for r in rows):
            fits.append((-width, i, d))
    return [d for _, _, d in sorted(fits)]


def resolve_delimiter(options: ReadOptions, raw: bytes | None = None) -> str:
    """``options.delimiter``, or the sniffed one. A warning names it when it is not ``,`` and the
    sniff was a choice — another delimiter also splits the sample into equal widths — or the
    user asked for detail (``-v``, :func:`dpkit.set_verbosity`): a file that only one delimiter
    fits is read as a Unix user expects, silently (pandas' ``sep=None`` says nothing either),
    rather than with the same notice in every command of a pipeline."""
    from dpkit.console import verbose

    if options.delimiter is not None:
        return options.delimiter
    head = sample(options, raw)
    try:
        text = head.decode(options.encoding, errors="replace")
    except LookupError:
        return ","  # the reader reports the unknown encoding
    fits = sniff_candidates(text.lstrip("\ufeff"))
    d = fits[0] if fits else ","
    if d != "," and (len(fits) > 1 or verbose()):
        others = " or ".join(_NAMES[o] for o in fits[1:])
        choice = f"; {others} would also fit: pass delimiter= to choose" if others else "; pass delimiter= to choose"
        warn(DpkitWarning(f"{options.name}: fields are separated by {_NAMES[d]} (sniffed{choice})", param="delimiter"))
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
