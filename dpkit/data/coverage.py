"""Which values of a table its schema does not cover (``dpkit taxonomy validate``).

One scan rule, :func:`batch_coverage`, serves both engines: the numpy engine applies it to the
whole table (:func:`check_coverage`), the Spark engine to every batch and adds the batches up
(:func:`dpkit.engine.spark.rows.coverage`), so the two cannot drift apart.
Exact counts here are for the data owner's eyes, never for a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.data.encode import MAX_LISTED, _leaf_codes
from dpkit.schema.parse import CategoricalColumn, NumericColumn, Schema

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Coverage:
    """What :func:`check_coverage` found: which values of a table the schema does not cover."""

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


def batch_coverage(df: pd.DataFrame, schema: Schema, present: list[str], tokens: list[str]) -> dict[str, Any]:
    """The coverage rules on one table or batch (rows numbered from 0), in a form that adds up.

    Categorical values must be leaves of the taxonomy, numeric values finite numbers (values
    outside the bounds are counted: loading clips them); a missing token is judged by the
    schema's policy, not as an uncovered value. Returns ``bad``: (column, value, first row,
    count) for every uncovered value; ``bounds``: (column, below, above); ``missing``: (first
    row, column) of the first missing token or None; ``missing_rows``.
    """
    import pandas as pd

    n = len(df)
    out: dict[str, Any] = {"bad": [], "bounds": [], "missing": None, "missing_rows": 0}
    if tokens and present:
        per_col = np.stack([np.isin(df[c].to_numpy(), tokens) for c in present], axis=1)
        is_missing = per_col.any(axis=1)
        if is_missing.any():
            r = int(np.flatnonzero(is_missing)[0])
            out["missing"] = (r, present[int(np.flatnonzero(per_col[r])[0])])
            out["missing_rows"] = int(np.count_nonzero(is_missing))
    for c in present:
        col = schema.columns[c]
        values = df[c].to_numpy()
        considered = ~np.isin(values, tokens) if tokens else np.ones(n, dtype=bool)
        if isinstance(col, CategoricalColumn):
            # with other: or unlisted: missing every value is covered
            bad = (_leaf_codes(values, col) < 0) & considered & (col.unlisted == "error")
        else:
            assert isinstance(col, NumericColumn)
            if col.time is not None:  # ISO dates, by the readers' one parse function
                from dpkit.schema.dates import parse_array

                nums = parse_array(values, col.time)
            else:
                try:
                    nums = np.asarray(values, dtype=object).astype(np.float64)
                except (ValueError, TypeError):
                    nums = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
            ok = np.isfinite(nums) & considered
            # with unparsable: missing what does not parse is read as missing: covered
            bad = ~np.isfinite(nums) & considered & (col.unparsable == "error")
            below = int(np.count_nonzero(nums[ok] < col.lo))
            above = int(np.count_nonzero(nums[ok] > col.hi))
            if below or above:
                out["bounds"].append((c, below, above))
        if bad.any():
            rows = np.flatnonzero(bad)
            uniq, first, counts = np.unique(values[rows].astype(str), return_index=True, return_counts=True)
            for v, f, k in zip(uniq.tolist(), rows[first].tolist(), counts.tolist(), strict=True):
                out["bad"].append((c, v, int(f), int(k)))
    return out


def check_coverage(df: pd.DataFrame, schema: Schema, *, source: str = "<data>", first_line: int = 2) -> Coverage:
    """Check every value of ``df`` against ``schema`` without stopping at the first problem.

    Lists, per column, the first :data:`~dpkit.data.encode.MAX_LISTED` uncovered values by first
    occurrence with their line. Line numbers assume no field holds a newline.
    """
    wanted = schema.used_columns()
    present = [c for c in wanted if c in df.columns]
    found = batch_coverage(df, schema, present, list(schema.missing_tokens))
    uncovered: dict[str, list[tuple[str, int]]] = {}
    distinct: dict[str, int] = {}
    for c in present:
        bad = sorted((f, v) for col, v, f, _ in found["bad"] if col == c)
        if bad:
            uncovered[c] = [(v, f + first_line) for f, v in bad[:MAX_LISTED]]
            distinct[c] = len(bad)
    missing = found["missing"]
    return Coverage(
        source=source,
        missing_columns=[c for c in wanted if c not in df.columns],
        uncovered=uncovered,
        uncovered_distinct=distinct,
        out_of_bounds={c: (b, a) for c, b, a in found["bounds"]},
        missing_rows=found["missing_rows"],
        missing_first=None if missing is None else (missing[0] + first_line, missing[1]),
    )
