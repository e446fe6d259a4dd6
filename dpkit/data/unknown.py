"""Values a schema does not read, met where nothing may be refused: the one warning.

``generalize``, ``forest predict`` and ``evaluate`` read the owner's other records (a test
split, records to score) and give every row back: a category the schema (or the model) does
not list, a number or date that does not parse, is read as missing there, never refused
(docs/publish.md, "dpkit generalize"). :func:`unknown_values` finds them, :func:`mapping_warning`
says so once for the file — counts, values and shares for the data owner only
(:func:`dpkit.console.private`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpkit.defaults import LARGE_SHARE
from dpkit.schema.parse import CategoricalColumn, NumericColumn, Schema

#: values quoted per column in the owner's detail
SHOWN = 3
#: (count, "category" | "number" | "date", the first distinct values, the line of the first)
Unknown = tuple[int, str, list[str], int]


def unknown_values(df: Any, schema: Schema, columns: Sequence[str], first_line: int = 2) -> dict[str, Unknown]:
    """Per column of ``df`` (strings, as the readers give them), the values ``schema`` does not
    read, those a private command refuses — a category its taxonomy does not list (but in a
    column with ``other:`` or ``unlisted: missing``), a number or date that does not parse (but
    in a column with ``unparsable: missing``) — other than its missing tokens: ``{column:
    (count, "category" | "number" | "date", the first distinct values, the line of the first)}``, columns without any
    left out. The owner's detail for :func:`mapping_warning`; ``first_line``: the line number of
    ``df``'s first row."""
    from dpkit.data.encode import _leaf_codes, _numbers

    tokens = list(schema.missing_tokens)
    out: dict[str, Unknown] = {}
    for name in columns:
        col = schema.columns.get(name)
        if name not in df.columns or col is None:
            continue
        values = df[name].to_numpy()
        if isinstance(col, CategoricalColumn):
            if col.unlisted != "error":  # the schema reads them itself: its catch-all, or missing
                continue
            bad = _leaf_codes(values, col) < 0
            kind = "category"
        elif isinstance(col, NumericColumn) and col.unparsable == "error":
            bad = ~np.isfinite(_numbers(values, col))
            kind = "date" if col.time is not None else "number"
        else:
            continue
        if tokens and bad.any():
            bad &= ~np.isin(values.astype(str), tokens)
        if bad.any():
            out[name] = unknown(values, bad, kind, first_line)
    return out


def unknown(values: np.ndarray, bad: np.ndarray, kind: str, first_line: int) -> Unknown:
    """(how many, of what kind, the first distinct ones, the line of the first) of the values
    ``bad`` marks: one entry of :func:`unknown_values`."""
    shown = [str(v) for v in list(dict.fromkeys(values[bad].tolist()))[:SHOWN]]
    return int(np.count_nonzero(bad)), kind, shown, int(np.flatnonzero(bad)[0]) + first_line


def mapping_warning(source: str, n_rows: int, unknown: Mapping[str, Unknown],
                    unheld: Mapping[str, int] | None = None, policy: str = "drop", *,
                    done: str = "every row mapped") -> str | None:
    """The one warning of a file mapped onto a cut (None: nothing to say): the values read as
    missing because the schema does not know them (``unknown``, :func:`unknown_values`) and the
    values written ``(missing)``, which the release does not hold (``unheld``). Counts, values
    and shares only for the owner (:func:`dpkit.console.private`); the summary names the
    columns, and those above :data:`LARGE_SHARE` of the rows. Not a private release: these are
    the owner's records mapped onto a public cut."""
    from dpkit.console import private

    unheld = unheld or {}
    if not unknown and not unheld:
        return None
    what = {"category": "not in its taxonomy", "number": "not a number", "date": "not a date"}
    exact, large = [], []
    for name in dict.fromkeys([*unknown, *unheld]):
        parts = []
        if name in unknown:
            k, kind, shown, line = unknown[name]
            parts.append(f"{k:,} value(s) {what[kind]} ({', '.join(map(repr, shown))}"
                         f"{', ...' if len(shown) == SHOWN else ''}; the first on line {line}) read as missing")
        if name in unheld:
            parts.append(f"{unheld[name]:,} written '(missing)'")
        touched = max(unknown.get(name, (0,))[0], unheld.get(name, 0))
        share = touched / n_rows if n_rows else 0.0
        if share > LARGE_SHARE:
            large.append(name)
            parts.append(f"{share:.0%} of the rows")
        exact.append(f"{name!r}: {', '.join(parts)}")
    why = (f"made under missing_policy: {policy}" if policy != "keep" else
           "its schema declares no missing value there: no missing token, no unparsable/unlisted: missing")
    held = (f"; '(missing)' is a value the release does not hold ({why}; its cut of "
            f"{', '.join(map(repr, unheld))} is below the root): a model trained on it never saw it"
            + ("; missing_policy: keep releases it" if policy != "keep" else "")) if unheld else ""
    summary = []
    if unknown:
        summary.append(f"values not in the schema were read as missing in {', '.join(map(repr, unknown))}")
    if unheld:
        summary.append(f"missing values of {', '.join(map(repr, unheld))} were written '(missing)'")
    if large:
        summary.append(f"{', '.join(map(repr, large))}: more than {LARGE_SHARE:.0%} of the rows")
    return private(f"{source}: {done}; {'; '.join(exact)}{held}",
                   f"{source}: {done}; {'; '.join(summary)}{held}")
