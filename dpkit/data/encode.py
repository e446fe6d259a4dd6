"""Encoding a table of strings against its schema: the exact encoder every load path shares.

Encoded columns are numpy arrays: categorical values become leaf codes (the smallest of
int8/int16/int32 that holds them, in the leaf order of the schema's taxonomy), numeric values
clipped to the public bounds: whole numbers in the smallest integer type that holds the
bounds (``encoded.number_dtype``: age in one byte a row), else float64 — on both paths, and
every consumer gives the same result for either type. :func:`encode` is the exact path's
encoder, whose messages name the line, column and value: the columnar reader, the Spark
engine's executors and a string frame hand it whatever they do not take.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.console import private
from dpkit.data.encoded import EncodedTable
from dpkit.errors import DataError, DpkitUsageError, warn
from dpkit.schema.parse import CategoricalColumn, NumericColumn, Schema

if TYPE_CHECKING:
    import pandas as pd


MAX_LISTED = 5


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

    Missing tokens follow the schema's policy (``drop`` rows with a warning, or an error; a
    value a column reads as missing — ``unparsable: missing``, ``unlisted: missing`` — is
    dropped under ``error`` too, never refused);
    categorical values outside the taxonomy are an error naming line, column and value;
    numeric values must parse and be finite, and are clipped to the public bounds with a
    warning that counts them (docs/algorithms.md §0 rule 1).
    """

    wanted = list(columns) if columns is not None else schema.used_columns()
    _check_columns(df, schema, wanted, source)
    n = len(df)
    raw, converted, failed, rows, first_missing, first_token, missing_in = _convert(df, schema, wanted)
    by_column = {c: int(sum(r.size for r in missing_in[c])) for c in missing_in}
    if first_missing:
        # under error a missing token refuses the run; a stray value a column reads as missing
        # (unparsable: missing, unlisted: missing) drops its row: such a refusal would reveal one
        # record (docs/formats.md, missing_policy)
        if first_token and schema.missing_policy == "error":
            r = min(first_token.values())
            # the first column missing on that row (its first missing row is r, as r is the least)
            c = next(c for c in wanted if first_token.get(c) == r)
            raise DataError(private(
                f"{source}:{r + first_line}: column {c!r} is missing ({raw[c][r]!r}); "
                f"set missing_policy: drop in {schema.path} to drop such rows",
                f"{source}: column {c!r} has a missing value; "
                f"set missing_policy: drop in {schema.path} to drop such rows",
            ))
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
                _refuse_unlisted(c, values, bad, schema, source, first_line)
            codes = converted[c]
            out[c] = codes if keep_all else codes[idx]
        elif isinstance(col, NumericColumn):
            if bad.size:
                _refuse_unparsable(col, values, bad, source, first_line)
            nums = converted[c] if keep_all else converted[c][idx]
            out[c] = compact_numbers(_clip(nums, col, clips), col)
    from dpkit.data.encoded import load_warnings

    for w in load_warnings(source, schema, wanted, int(rows.sum()), clips, schema.path, total=n,
                           by_column=by_column):
        warn(w)
    return EncodedTable(schema=schema, columns=out, n_rows=n if keep_all else int(idx.size), source=source)


def _check_columns(df: pd.DataFrame, schema: Schema, wanted: list[str], source: str) -> None:
    """Every wanted column is in the header and none is declared ``ignore``."""
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
    for name in wanted:
        if schema.column(name).kind == "ignore":
            raise DpkitUsageError(f"column {name!r} is declared 'ignore' in {schema.path}")


def _convert(df: pd.DataFrame, schema: Schema, wanted: list[str]) -> tuple[Any, ...]:
    """Each column converted (leaf codes, floats, day numbers), and the rows each reads as
    missing: (raw strings, converted, failed rows per column, rows dropped, first missing row per
    column, first row missing by a token per column, rows dropped per column)."""
    n = len(df)
    # Convert every column first (codes / floats; one C-level pass each), then find the
    # missing tokens among the few values that failed to convert, instead of comparing
    # every cell with the token.
    tokens = list(schema.missing_tokens)
    raw: dict[str, np.ndarray] = {}  # the strings, for messages
    converted: dict[str, np.ndarray] = {}
    failed: dict[str, np.ndarray] = {}  # row indices whose value did not convert
    rows = np.zeros(n, dtype=bool)
    first_missing: dict[str, int] = {}
    first_token: dict[str, int] = {}  # the rows missing by a token: the only ones missing_policy: error refuses
    missing_in: dict[str, list[np.ndarray]] = {}  # per column, the rows it drops (the owner's share)
    for c in wanted:
        col = schema.columns[c]
        values = df[c].to_numpy()
        raw[c] = values
        if isinstance(col, CategoricalColumn):
            conv = _leaf_codes(values, col)
            bad = np.flatnonzero(conv < 0)
        elif col.time is not None:
            from dpkit.schema.dates import parse_array

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
                    missing_in.setdefault(c, []).append(bad[is_tok])
                    first_missing[c] = first_token[c] = int(bad[is_tok][0])
                bad = bad[~is_tok]
        if bad.size and isinstance(col, CategoricalColumn) and col.unlisted != "error":
            # values outside the taxonomy are the catch-all leaf, or missing (docs/formats.md)
            if col.unlisted == "other":
                conv[bad] = col.other_code
            elif not _keeps_missing(col, conv, bad):
                rows[bad] = True
                missing_in.setdefault(c, []).append(bad)
                first_missing[c] = min(first_missing.get(c, n), int(bad[0]))
            bad = bad[:0]
        if bad.size and isinstance(col, NumericColumn) and col.unparsable == "missing":
            # a learned type: what is not a date (a number) is missing, never an error (a refusal
            # one record can cause would reveal it; dpkit.domain.metadata) — under keep, its bucket
            if not _keeps_missing(col, conv, bad):
                rows[bad] = True
                missing_in.setdefault(c, []).append(bad)
                first_missing[c] = min(first_missing.get(c, n), int(bad[0]))
            bad = bad[:0]
        failed[c] = bad
    return raw, converted, failed, rows, first_missing, first_token, missing_in


def _refuse_unlisted(c: str, values: np.ndarray, bad: np.ndarray, schema: Schema, source: str,
                     first_line: int) -> None:
    """Refuse values of a categorical column outside its taxonomy (``unlisted: error``)."""
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


def _refuse_unparsable(col: NumericColumn, values: np.ndarray, bad: np.ndarray, source: str,
                       first_line: int) -> None:
    """Refuse a value of a numeric (date) column that does not parse (``unparsable: error``)."""
    i = int(bad[0])
    v = values[i]
    from dpkit.schema.dates import expected as shape

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


def _numbers(values: np.ndarray, col: NumericColumn) -> np.ndarray:
    """A numeric column's values as :func:`encode` parses them: dates and timestamps by
    :func:`dpkit.schema.dates.parse_array`, numbers by :func:`_to_float` (NaN: neither)."""
    if col.time is not None:
        from dpkit.schema.dates import parse_array

        return parse_array(values, col.time)
    return _to_float(values)


def compact_numbers(values: np.ndarray, col: NumericColumn) -> np.ndarray:
    """Clipped numbers in the column's small integer type (``encoded.number_dtype``) when
    they are all whole numbers, as the columnar reader stores them; else unchanged."""
    from dpkit.data.encoded import number_dtype

    dtype = number_dtype(col.lo, col.hi)
    if dtype is None or not np.array_equal(np.trunc(values), values):
        return values
    return values.astype(dtype)


def _leaf_codes(values: np.ndarray, col: CategoricalColumn) -> np.ndarray:
    """Leaf code of each value (the smallest int type), -1 for a value that is not a leaf."""
    import pandas as pd

    from dpkit.data.encoded import code_dtype

    return pd.Index(col.leaves, dtype=object).get_indexer(values).astype(code_dtype(len(col.leaves)))


def _to_float(values: np.ndarray) -> np.ndarray:
    """float64 of each value; NaN where a value is not a number."""
    try:
        # numpy's str -> float64 cast runs in C; only a bad value sends us to pandas
        return np.asarray(values, dtype=object).astype(np.float64)
    except (ValueError, TypeError):
        import pandas as pd

        # a copy: pandas 3 hands out read-only views (copy-on-write), and callers write the
        # missing bucket's NaN into this array
        return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float, copy=True)


def _clip(nums: np.ndarray, col: NumericColumn, clips: list[tuple[NumericColumn, int]]) -> np.ndarray:
    """Clip to the public bounds (docs/algorithms.md §0 rule 1), adding (column, count) to
    ``clips`` for the call's one warning."""
    out_of = (nums < col.lo) | (nums > col.hi)
    if out_of.any():
        clips.append((col, int(out_of.sum())))
        nums = np.clip(nums, col.lo, col.hi)
    return nums
