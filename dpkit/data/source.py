"""How to read one input table: the options every engine's reader takes.

One value object for the path and the CSV dialect (csvkit's flags: ``-e``, ``-d``/``-t``,
``-H``), so the numpy reader, the Spark reader and every command agree on what a flag means.
``delimiter=None`` asks the reader to sniff (`,` `;` tab `|`) and to say which it chose.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from dpkit.errors import DataError, DpkitUsageError

DEFAULT_ENCODING = "utf-8-sig"
#: the delimiters a CSV's is sniffed among (docs/formats.md)
DELIMITERS = (",", ";", "\t", "|")
#: how many column names a message lists before "…"
LISTED_COLUMNS = 12


def have_columns(columns: object) -> str:
    """What a message about an absent column says the data has: ``(have: a, b, …)``, at most
    :data:`LISTED_COLUMNS` names and then how many in all; and, when a column name holds a
    delimiter (the header was split on the wrong one), that the delimiter is likely wrong."""
    names = [str(c) for c in columns]  # type: ignore[attr-defined]
    shown = ", ".join(names[:LISTED_COLUMNS]) + (f", … ({len(names)} in all)" if len(names) > LISTED_COLUMNS else "")
    text = f"(have: {shown})"
    held = next(((n, d) for n in names for d in DELIMITERS if d in n), None)
    if held:
        name, d = held
        text += (f"; column name {name[:40]!r} holds {d!r}: the delimiter is likely wrong "
                 f"(give delimiter={d!r})")
    return text


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
        from dpkit.data.table import resolve

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
