"""Reading a table: the load path's entry points, the fast readers first, the exact one after.

:func:`load` reads through the columnar, streaming reader of :mod:`dpkit.io.columnar`
(Parquet: :mod:`dpkit.io.parquet`) and falls back to the exact reader
(:mod:`dpkit.io.exact_csv`) and encoder (:mod:`dpkit.data.encode`) for anything unusual,
so errors and warnings are exactly theirs; :func:`read_table` and :func:`read_csv` give a
DataFrame of strings, :func:`read_codes` and :func:`encode_codes` the same for a table held as
codes. The load path runs one way: this module, then the readers and the encoder, then
:mod:`dpkit.io.source` and :mod:`dpkit.data.encoded`, which import none of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpkit.data.encode import _numbers, encode
from dpkit.data.encoded import EncodedTable
from dpkit.defaults import DEFAULT_ENCODING
from dpkit.errors import DpkitUsageError
from dpkit.io.exact_csv import _parse_strings, _read_text
from dpkit.io.source import _quick_header, first_line, is_parquet, read_raw, resolve
from dpkit.schema.parse import NumericColumn, Schema

__all__ = ["EncodedTable", "encode", "first_line", "read_raw", "resolve"]  # defined elsewhere, used from here too

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.io import codes
    from dpkit.io.source import ReadOptions




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
    from dpkit.io.source import ReadOptions

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
    from dpkit.io import codes, parquet

    if is_parquet(options):
        return parquet.read_parquet_strings(options)
    if categorical:
        got = read_codes(options, columns)
        if got is not None:
            return codes.categorical_frame(got)
    raw, text, header, delimiter = _read_text(options)
    return _parse_strings(options.name, raw, text, header, options.encoding, delimiter, require_rows,
                          has_header=options.header)


def read_codes(options: ReadOptions, columns: Sequence[str] | None = None) -> codes.Codes | None:
    """The table as codes of each column's distinct (stripped) strings, read by Arrow
    (:func:`dpkit.io.codes.read_codes`: no Python string per cell), or None when only
    the exact path reads it (Parquet, stdin, whitespace to strip, a ragged row, …).
    ``columns``: as :func:`read_table`'s with ``categorical``."""
    from dpkit.io import codes

    if options.path == "-" or is_parquet(options):
        return None
    fixed = resolve(options)
    header = _quick_header(fixed, None)
    if header is None:
        return None
    usable = columns is not None and all(c in header for c in columns)
    return codes.read_codes(fixed, header, columns if usable else None)


def column_names(options: ReadOptions) -> list[str]:
    """The column names of the table (its header row, or -H's names), reading as little as possible."""
    from dpkit.io import parquet

    if is_parquet(options):
        return parquet.parquet_columns(options)
    options = resolve(options)
    raw = read_raw("-") if options.path == "-" else None
    header = _quick_header(options, raw)
    if header is None:
        header = _read_text(options, raw)[2]
    return header


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
    encoded from their codes by the columnar encoder (:func:`dpkit.io.columnar.encode_dictionary`),
    so memory grows with the distinct values, not the rows. Anything unusual (a value that is
    not a leaf or not a number, a missing token under ``missing_policy: error``) builds the
    rows' strings and takes :func:`encode`, whose messages name the line (``first_line``: the
    line of row 0).
    """
    from dpkit.io.columnar import encode_dictionary

    wanted = list(columns)
    numbers = {c: _numbers(np.asarray(values[c], dtype=object), schema.columns[c]) for c in wanted
               if c in values and isinstance(schema.columns.get(c), NumericColumn)}
    table = encode_dictionary(codes, values, numbers, n_rows, schema, wanted, source)
    if table is not None:
        return table
    import pandas as pd

    df = pd.DataFrame({c: np.asarray(values[c], dtype=object)[codes[c]] for c in codes}, columns=list(codes))
    return encode(df, schema, wanted, source=source, first_line=first_line)


def load_table(
    path: str | Path,
    schema: Schema,
    columns: Sequence[str] | None = None,
    *,
    encoding: str = DEFAULT_ENCODING,
    delimiter: str | None = ",",
) -> EncodedTable:
    """Read ``path`` and encode it against ``schema`` (see :func:`load`)."""
    from dpkit.io.source import ReadOptions

    return load(ReadOptions(str(path), encoding=encoding, delimiter=delimiter), schema, columns)


def load(options: ReadOptions, schema: Schema, columns: Sequence[str] | None = None) -> EncodedTable:
    """Read the table ``options`` describes (CSV or Parquet) and encode it against ``schema``.

    Fast path (:mod:`dpkit.io.columnar`): Arrow streams the file and only the codes of
    the wanted columns are kept. Anything unusual — a value that is not a leaf or not a
    number, a missing token under ``missing_policy: error``, a ragged row — falls back to
    :func:`read_table` + :func:`encode`, so errors and warnings are exactly theirs.
    """
    from dpkit.io import columnar, parquet

    wanted = list(columns) if columns is not None else schema.used_columns()
    if is_parquet(options):
        return parquet.load_parquet(options, schema, wanted)
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
