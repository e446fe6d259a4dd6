"""The encoded table: what every loader produces and every engine counts over.

Categorical columns hold leaf codes (the smallest of int8/int16/int32 that holds them, in
the leaf order of the schema's taxonomy), numeric columns the values clipped to the public
bounds (whole numbers in the smallest integer type that holds the bounds, else float64).
Its own module so that every reader — the columnar one (:mod:`dpkit.io.columnar`),
Parquet's (:mod:`dpkit.io.parquet`), the exact encoder (:mod:`dpkit.data.encode`) and the
Spark engine's executors — builds it without importing another. The rules they share live
here too: the code and number types (:func:`code_dtype`, :func:`number_dtype`), a batch's
leaf lookup (:func:`leaf_lut`), what a value reads as (:func:`is_number`), and the load's
warnings (values clipped, rows dropped), whose counts only the data owner sees.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.errors import DpkitWarning
from dpkit.schema.parse import CategoricalColumn, NumericColumn, Schema


@dataclass
class EncodedTable:
    """Columns as numpy arrays, aligned row by row. ``n_rows`` is private: never report it."""

    schema: Schema
    columns: dict[str, np.ndarray]
    n_rows: int
    source: str = "<data>"

    def __len__(self) -> int:
        return self.n_rows


def is_number(value: str) -> float | None:
    """The finite float a value reads as on load (:func:`dpkit.data.encode.encode` and the columnar reader), else None."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def code_dtype(n_leaves: int) -> np.dtype:
    """The smallest signed integer type holding leaf codes ``0 .. n_leaves - 1``."""
    for dt in (np.int8, np.int16, np.int32):
        if n_leaves <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)


def number_dtype(lo: float, hi: float) -> np.dtype | None:
    """The smallest signed integer type holding every whole number in the public bounds
    ``[lo, hi]`` (int8/int16/int32), or None (unbounded, or wider than int32: float64).

    A numeric column whose values (clipped to the bounds) are all whole numbers is stored in
    it: age in [15, 95] takes 1 byte a row instead of 8. The values are the same numbers,
    so every consumer gives the same result for either type.
    """
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    for dt in (np.int8, np.int16, np.int32):
        info = np.iinfo(dt)
        if info.min <= np.floor(lo) and np.ceil(hi) <= info.max:
            return np.dtype(dt)
    return None


def leaf_index(col: CategoricalColumn) -> dict[str, int]:
    """Leaf → code of a categorical column (the codes :func:`leaf_lut` gives)."""
    return {leaf: i for i, leaf in enumerate(col.leaves)}


def leaf_lut(col: CategoricalColumn, values: Sequence[Any], tokens: Collection[str],
             index: dict[str, int] | None = None) -> np.ndarray:
    """Leaf code of each distinct value of a batch (an Arrow dictionary's entries).

    Values are stripped first, as the exact path strips cells; -1 marks a value that is not a
    leaf, -2 a missing token (a leaf spelled like a token stays a leaf; the ``(missing)`` leaf's
    code under ``missing_policy: keep``). A value that is neither gets the catch-all leaf's code
    when the column has ``other:``, and is missing with ``unlisted: missing``. The table has the
    column's code dtype, so ``lut[indices]`` yields the final codes. Shared by this module's
    reader and the Spark engine's executors (``dpkit.engine.spark.encode``).
    """
    if index is None:
        index = leaf_index(col)
    missing = col.missing_code  # the (missing) leaf under missing_policy: keep, else -2
    unlisted = {"other": col.other_code, "missing": missing}.get(col.unlisted, -1)
    stripped = [v.strip() if isinstance(v, str) else v for v in values]
    return np.array([index.get(v, missing if v in tokens else unlisted) for v in stripped],
                    dtype=code_dtype(len(col.leaves)))


def bounds_text(col: Any) -> str:
    """Public bounds as a message writes them: ``[15, 95]``, or ISO text for a date or timestamp
    column (``[2018-01-01, 2025-01-01]``, as the schema has them, not the day numbers inside).
    ``col``: anything with ``lo`` and ``hi`` (a schema's column, a forest model's feature) and
    perhaps ``time``."""
    time = getattr(col, "time", None)
    if time is None:
        return f"[{col.lo:g}, {col.hi:g}]"
    from dpkit.schema.dates import format_time

    return f"[{format_time(col.lo, time)}, {format_time(col.hi, time)}]"


def clip_message(source: str, col: NumericColumn, count: int, schema_path: str) -> str:
    """The clipping warning: the count only for the data owner (dpkit.console.private)."""
    from dpkit.console import private

    bounds = f"to the public bounds {bounds_text(col)} of {schema_path}"
    return private(
        f"{source}: clipped {count} value(s) of {col.name!r} {bounds}",
        f"{source}: clipped values of {col.name!r} {bounds}, if any",
    )


def clips_warning(source: str, clips: Sequence[tuple[Any, int]], schema_path: str) -> DpkitWarning:
    """One warning for every column a load clipped (``clips``: (column, values clipped) pairs
    with a ``name``, ``lo`` and ``hi``), naming them all in one line — the count only for the
    data owner (:func:`dpkit.console.private`). ``details``: one :func:`clip_message` line per
    column, which the Spark engine adds up across partitions."""
    from dpkit.console import private

    details = [clip_message(source, col, n, schema_path) for col, n in clips]
    if len(clips) == 1:
        text = details[0]
    else:
        names = ", ".join(repr(col.name) for col, _ in clips)
        bounds = ", ".join(bounds_text(col) for col, _ in clips)
        counts = ", ".join(str(n) for _, n in clips)
        if len(clips) <= 4:
            quiet = f"{source}: clipped values of columns {names} to their public bounds {bounds} of {schema_path}, if any"
        else:  # the short form names every bounded column: a wide table's without bounds, and at most 12
            shown = ", ".join(repr(col.name) for col, _ in clips[:12]) + (
                f", … ({len(clips)} in all)" if len(clips) > 12 else "")
            quiet = f"{source}: clipped values of columns {shown} to their public bounds of {schema_path}, if any"
        text = private(f"{source}: clipped {counts} value(s) of columns {names} to their public bounds {bounds} "
                       f"of {schema_path}", quiet)
    warning = DpkitWarning(text)
    warning.details = details  # type: ignore[attr-defined]
    return warning


def dropped_message(source: str, count: int, schema: Schema, columns: Sequence[str] | None = None, *,
                    total: int | None = None, by_column: Mapping[str, int] | None = None) -> str:
    """The drop warning: the count only for the data owner (:func:`dpkit.console.private`).

    ``columns``: the used columns (default: all). Those whose unlisted values are read as
    missing (``unlisted: missing``, e.g. a learned target's unreleased classes) are named: such
    a row holds no missing token, and the warning must not say it does. ``total`` (the rows
    read) and ``by_column`` (the rows each column drops) give the owner the share dropped and,
    above :data:`dpkit.defaults.LARGE_SHARE` of the rows, the columns that drop it: in the
    exact form only — an exact statistic of the private data, which the summary a log gets
    never holds, and whose presence there never depends on it (docs/formats.md,
    ``missing_policy``)."""
    # a learned schema's tokens are not quoted (a token guessed from the exact data would be a
    # statistic of it; they are learned under DP, and the schema file names them)
    tokens = "" if schema.learned else ", ".join(repr(t) for t in schema.missing_tokens)
    names = list(schema.columns) if columns is None else list(columns)
    unlisted = [n for n in names if isinstance(schema.columns.get(n), CategoricalColumn)
                and schema.columns[n].unlisted == "missing"]
    not_numbers = [n for n in names if isinstance(schema.columns.get(n), NumericColumn)
                   and schema.columns[n].time is None and schema.columns[n].unparsable == "missing"]
    parts = [f"a missing value ({tokens}) in the used columns" if tokens else "a missing value in the used columns"
             ] if schema.missing_tokens else []
    if unlisted:
        parts.append(f"a value of {', '.join(map(repr, unlisted))} that the schema does not list (unlisted: missing)")
    if not_numbers:
        parts.append(f"a value of {', '.join(map(repr, not_numbers))} that is not a number (unparsable: missing)")
    undated = [n for n in names if isinstance(schema.columns.get(n), NumericColumn)
               and schema.columns[n].time is not None and schema.columns[n].unparsable == "missing"]
    if undated:
        parts.append(f"a value of {', '.join(map(repr, undated))} that is not a date (unparsable: missing)")
    what = ", or ".join(parts) or "a missing value in the used columns"
    from dpkit.console import private

    return private(f"{source}: dropped {count} row(s) with {what}{dropped_share(count, total, by_column)}",
                   f"{source}: dropped rows with {what}, if any")


def dropped_share(count: int, total: int | None, by_column: Mapping[str, int] | None) -> str:
    """`` (12% of the rows)``, and above the large share the columns that drop most of them and
    what keeps them: the owner's detail of :func:`dropped_message`."""
    from dpkit.defaults import LARGE_SHARE

    if not total:
        return ""
    share = count / total
    text = f" ({share:.0%} of {total:,} rows)"
    if share <= LARGE_SHARE:
        return text
    large = {c: k / total for c, k in (by_column or {}).items() if k / total > LARGE_SHARE}
    named = f": {', '.join(f'{c!r} is missing in {v:.0%}' for c, v in large.items())}" if large else ""
    return (f"{text} — more than {LARGE_SHARE:.0%} of the rows{named}; missing_policy: keep keeps them "
            "as a value of their column (docs/formats.md)")


def may_drop(schema: Schema, columns: Sequence[str]) -> bool:
    """Can a load of ``columns`` under ``schema`` drop a row? A function of the schema only (public):
    a column whose missing values have no cell of their own — no ``(missing)`` leaf or bucket —
    and that reads some value as missing: a stray value (an unlisted category under ``unlisted:
    missing``, a value that is not a number under ``unparsable: missing``) under any policy (a
    stray value never refuses a run), a missing token under a policy that drops rather than refuses."""
    tokens = bool(schema.missing_tokens) and schema.missing_policy != "error"
    for name in columns:
        col = schema.columns.get(name)
        if isinstance(col, CategoricalColumn):
            if (tokens or col.unlisted == "missing") and col.missing_code < 0:
                return True
        elif isinstance(col, NumericColumn):
            if (tokens or col.unparsable == "missing") and not col.missing:
                return True
    return False


def may_clip(schema: Schema, columns: Sequence[str]) -> list[NumericColumn]:
    """The numeric (and date) columns among ``columns`` whose values a load clips to their public
    bounds when outside them (every one with finite bounds): a function of the schema only."""
    return [col for name in columns if isinstance(col := schema.columns.get(name), NumericColumn)
            and math.isfinite(col.lo) and math.isfinite(col.hi)]


def load_warnings(source: str, schema: Schema, columns: Sequence[str], dropped: int,
                  clips: Sequence[tuple[Any, int]], schema_path: str, *, total: int | None = None,
                  by_column: Mapping[str, int] | None = None) -> list[DpkitWarning]:
    """The load's notices about rows dropped and values clipped (``clips``: (column, count) pairs).

    For the data owner (:func:`dpkit.console.owner_watching`: a terminal, or ``-v``) the exact
    counts, and only when there is something to say. Otherwise the notices' *presence* must not
    depend on one record either — whether a notice appears would tell a log's reader that some
    record lies outside the bounds, or holds a class that was not released (which partition
    selection's δ protects): the short form is printed whenever the schema's rules can drop or
    clip (:func:`may_drop`, :func:`may_clip`; public), whatever the data holds, and says so
    ("…, if any"). docs/domain.md, "What stderr says". ``total`` and ``by_column``: the owner's
    share of rows dropped (:func:`dropped_message`)."""
    from dpkit.console import owner_watching, reading_owner_records

    out: list[DpkitWarning] = []
    if owner_watching():
        if dropped:
            out.append(DpkitWarning(dropped_message(source, dropped, schema, columns, total=total,
                                                    by_column=by_column)))
        return out + clip_warnings(source, clips, [], schema_path)
    if reading_owner_records():  # generalize, predict, evaluate: the owner's own records, no release
        if dropped:
            out.append(DpkitWarning(dropped_message(source, 0, schema, columns)))
        return out + clip_warnings(source, clips, [], schema_path)
    if may_drop(schema, columns):
        out.append(DpkitWarning(dropped_message(source, 0, schema, columns)))
    return out + clip_warnings(source, clips, may_clip(schema, columns), schema_path)


def clip_warnings(source: str, clips: Sequence[tuple[Any, int]], clippable: Sequence[Any],
                  schema_path: str) -> list[DpkitWarning]:
    """The clipping notice of :func:`load_warnings` on its own: for the data owner the exact
    ``clips`` when any; reading the owner's own records (:func:`dpkit.console.owner_records`) the
    short form of the columns clipped, when any; elsewhere the short form naming every column in ``clippable``
    (those with public bounds: a function of the schema or model only), whatever the data holds."""
    from dpkit.console import owner_watching, reading_owner_records

    if owner_watching():
        return [clips_warning(source, clips, schema_path)] if clips else []
    if reading_owner_records():
        return [clips_warning(source, [(col, 0) for col, _ in clips], schema_path)] if clips else []
    return [clips_warning(source, [(col, 0) for col in clippable], schema_path)] if clippable else []
