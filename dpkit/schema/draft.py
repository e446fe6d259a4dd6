"""Draft a schema from a data file — for a person to review, never to release with as is.

A schema is the *public* knowledge a release may use (docs/algorithms.md §0 rule 1). Reading the
category lists and numeric bounds off the private data breaks that rule: a rare category, or
a maximum, is itself information about a record. :func:`draft_from_data` is therefore only a
starting point: it warns with :class:`~dpkit.errors.PrivacyLeakWarning`, and the YAML it
produces (:func:`draft_yaml`) opens with a comment saying that every list and bound must be
checked against, or replaced by, public knowledge (a code book, a standard, a round range).

Rules: a column named like an identifier (:func:`dpkit.schema.names.looks_like_id`: ``id``,
``*_id``, ``CustomerId``, ``RowNumber``, ``index``, …) is ``ignore`` with a REVIEW comment,
unless kept (``keep``). A column whose non-missing values all parse as numbers is numeric, its
bounds from the 1 % and 99 % quantiles (widened to the extremes unless those lie past a
fence: entry errors), rounded outward to a 1-2-5 step, with the exact min and max in a comment
for the reviewer (:func:`robust_bounds`); one whose
values are all ISO dates (or timestamps) is ``type: date`` (``timestamp``) with bounds rounded
outward to year starts (:mod:`dpkit.schema.dates`). A
column that is numeric but for a few stray values (at most :data:`MAX_STRAY_SHARE` of its
values and :data:`MAX_STRAY_DISTINCT` distinct ones, e.g. a typo or an unlisted missing
token) is numeric too, and its comment lists the stray values with their lines, to fix in
the data or to declare as missing before the schema is used; other
columns are categorical with a flat ``values:`` list, unless they have more than
``max_categories`` distinct values or look like identifiers (every value distinct), in
which case they are declared ``ignore``. The target is always categorical.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpkit.console import private
from dpkit.defaults import MAX_CATEGORIES
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, PrivacyLeakWarning, warn

if TYPE_CHECKING:
    import pandas as pd

MISSING_CANDIDATES = ("?", "", "NA", "N/A", "NaN", "null", "NULL")

#: a column stays numeric with at most this share of non-numeric values ...
MAX_STRAY_SHARE = 0.01
#: ... of at most this many distinct spellings (more looks like a text column)
MAX_STRAY_DISTINCT = 5
#: stray values quoted (with their lines) in the draft's comment
SHOW_STRAY = 5

WARNING = (
    "NOT PRIVATE: this draft schema was read from the data: its category lists and numeric bounds are NOT "
    "private (a rare category or an extreme value reveals a record). Review every column and "
    "replace data-derived values by public knowledge before any private release"
)

DRAFT_HEADER = (
    "DRAFT schema inferred from the data by `dpkit taxonomy infer` — NOT PRIVATE.",
    "Category lists and numeric bounds below were read from the private data itself; a",
    "release that uses them as they are is not differentially private (docs/algorithms.md §0 rule 1).",
    "Review every column: replace bounds by public ranges, categories by a public code list,",
    "add hierarchies where you have them, then delete this comment.",
)


def round_outward(lo: float, hi: float) -> tuple[float, float]:
    """Widen ``[lo, hi]`` to multiples of a power of ten near the range (17, 90 -> 10, 90).

    The step is the largest power of ten not above the range, so bounds keep one or two
    significant digits; a zero-width range is widened by one step.
    """
    span = hi - lo
    scale = max(abs(lo), abs(hi), 1.0)
    step = 10.0 ** math.floor(math.log10(span)) if span > 0 else 10.0 ** math.floor(math.log10(scale))
    new_lo = math.floor(lo / step) * step
    new_hi = math.ceil(hi / step) * step
    if new_hi <= new_lo:
        new_hi = new_lo + step
    return _tidy(new_lo), _tidy(new_hi)


#: the draft's numeric bounds start from these quantiles of the data (not the exact extremes:
#: one entry error, a blood pressure of 16,020, made the reviewed draft's grid useless)
ROBUST_QUANTILES = (0.01, 0.99)
#: ... widened to the data's min/max unless those lie farther than this many times the
#: quantiles' range beyond them (a fence: a long but real tail is kept, an entry error is not)
FENCE = 2.0
#: the draft's bounds are rounded outward to a 1-2-5 step of about this share of their range
ROUND_STEPS = 10


def robust_bounds(nums: Any) -> tuple[float, float]:
    """The draft's numeric bounds (NOT private: read from the data, for a person to review):
    the 1 % and 99 % quantiles, widened to the min and max unless these lie beyond a fence two
    quantile ranges away (entry errors: a blood pressure's 16,020 among values 80-180), never
    below 0 when the quantiles are not, then rounded outward to a 1-2-5 step of about a tenth of
    the range (392 .. 850 -> 350, 850). 1 % rather than 0.5 %: a column with 1 % of entry errors
    (a diastolic pressure of 1,000 or 10,000) moves its 99.5 % quantile onto them."""
    import numpy as np

    lo_q, hi_q = (float(x) for x in np.quantile(nums, ROBUST_QUANTILES))
    mn, mx = float(nums.min()), float(nums.max())
    integer = bool(np.all(np.floor(nums) == nums))
    w = hi_q - lo_q
    if w <= 0:
        return round_outward(mn, mx) if mx > mn else round_outward(lo_q, hi_q)
    lo = max(mn, lo_q - FENCE * w)
    hi = min(mx, hi_q + FENCE * w)
    if lo_q >= 0 > lo:
        lo = 0.0  # a few negative entry errors in a column of non-negative values
    if integer:
        lo, hi = math.floor(lo), math.ceil(hi)
    return round_nice(lo, hi, integer)


def round_nice(lo: float, hi: float, integer: bool = False) -> tuple[float, float]:
    """``[lo, hi]`` widened to multiples of the smallest 1, 2 or 5 × 10^k step that splits the
    range into at most :data:`ROUND_STEPS` parts (84, 172 -> 80, 180; 0, 72 -> 0, 80); whole
    numbers spanning at most twice that many keep both ends, as a person writes a code list's
    (codes -3 .. 8 -> -3, 8; a flag 0, 1 -> 0, 1): publish splits an integer column's closed top
    interval at its upper bound too, so [0, 1] tells a flag's 0 from its 1."""
    span = hi - lo
    if integer and span <= 2 * ROUND_STEPS and float(lo).is_integer() and float(hi).is_integer():
        return _tidy(lo), _tidy(hi)
    raw = span / ROUND_STEPS
    k = math.floor(math.log10(raw))
    step = next(m * 10.0 ** e for e in (k, k + 1) for m in (1, 2, 5) if m * 10.0 ** e >= raw)
    new_lo = math.floor(lo / step + 1e-9) * step
    new_hi = math.ceil(hi / step - 1e-9) * step
    if new_hi <= new_lo:
        new_hi = new_lo + step
    return _tidy(new_lo), _tidy(new_hi)


def _bounds_comment(nums: Any, lo: float, hi: float) -> str:
    """``REVIEW: ...; data min -150, max 16020; 0.4 % of values outside`` for a numeric column."""
    import numpy as np

    outside = int(np.count_nonzero((nums < lo) | (nums > hi)))
    share = f"; {100 * outside / nums.size:.2g} % of values outside" if outside else ""
    return (f"REVIEW: bounds from the data's 1-99 % quantiles, rounded (NOT private); data min {_g(nums.min())}, "
            f"max {_g(nums.max())}{share}; use a public range")


def _g(x: float) -> str:
    return f"{float(x):.10g}"


def _tidy(x: float) -> float:
    # 0.30000000000000004 -> 0.3: bounds should read like a person wrote them
    return float(f"{x:.12g}")


def detect_missing(df: pd.DataFrame) -> str | None:
    """The most common missing-value token among :data:`MISSING_CANDIDATES`, if any occurs."""
    import numpy as np

    arrays = [df[c].to_numpy() for c in df.columns]
    return pick_missing(lambda token: sum(int(np.count_nonzero(a == token)) for a in arrays))


def pick_missing(count: Callable[[str], int]) -> str | None:
    """The token of :data:`MISSING_CANDIDATES` with the most cells (``count(token)``), the
    earlier one on a tie; None when none occurs. The draft's rule (NOT private: a private
    schema learns its tokens from noisy counts, :mod:`dpkit.domain.metadata`)."""
    best, best_count = None, 0
    for token in MISSING_CANDIDATES:
        n = count(token)
        if n > best_count:
            best, best_count = token, n
    return best


def _as_numbers(values: Any) -> Any:
    import numpy as np

    try:
        nums = np.asarray(values, dtype=object).astype(np.float64)
    except (ValueError, TypeError):
        return None
    if nums.size == 0 or not np.isfinite(nums).all():
        return None
    return nums


def _mostly_numbers(values: Any) -> tuple[Any, Any] | None:
    """(numbers, positions of stray values) when all but a few of ``values`` are numbers."""
    import numpy as np
    import pandas as pd

    nums = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    ok = np.isfinite(nums)
    stray = np.flatnonzero(~ok)
    if not ok.any() or stray.size > MAX_STRAY_SHARE * len(values):
        return None
    if len({str(values[i]) for i in stray}) > MAX_STRAY_DISTINCT:
        return None
    return nums[ok], stray


def _stray_comment(values: Any, stray: Any, rows: Any) -> str:
    """``REVIEW: 2 non-numeric value(s): 'x' (line 17), ...`` — lines as in the file."""
    shown = ", ".join(f"{values[i]!r} (line {int(rows[i]) + 2})" for i in stray[:SHOW_STRAY])
    more = f", and {stray.size - SHOW_STRAY} more" if stray.size > SHOW_STRAY else ""
    return (f"REVIEW: bounds read from the data (rounded); use a public range. {stray.size} non-numeric "
            f"value(s): {shown}{more} — fix them in the data or declare them missing")


def _as_dates(values: Any) -> dict[str, Any] | None:
    """A ``type: date`` (or ``timestamp``) spec when every value is an ISO date (timestamp),
    its bounds the year starts around the values; else None."""
    import datetime as dt

    import numpy as np

    from dpkit.schema.dates import format_time, parse_array

    days = parse_array(values, "date")
    if days.size == 0 or not np.isfinite(days).all():
        return None
    secs = parse_array(values, "timestamp")
    kind = "date" if np.all(secs % 86400 == 0) else "timestamp"
    lo = dt.date.fromisoformat(format_time(float(days.min()), "date")).year
    hi = dt.date.fromisoformat(format_time(float(days.max()), "date")).year + 1
    suffix = "" if kind == "date" else "T00:00:00"
    return {"type": kind, "bounds": [f"{lo:04d}-01-01{suffix}", f"{hi:04d}-01-01{suffix}"],
            "_comment": "REVIEW: bounds read from the data (rounded to years); use a public range"}


def draft_from_data(
    df: pd.DataFrame,
    *,
    target: str | None = None,
    max_categories: int = MAX_CATEGORIES,
    missing: str | None = "auto",
    source: str = "<data>",
    keep: Any = None,
) -> dict[str, Any]:
    """A draft schema (plain YAML data) for ``df``; warns that it is not private (the public
    :func:`dpkit.draft_schema`; not :func:`dpkit.infer_schema`, which learns one under DP).

    ``missing="auto"`` picks the most common of :data:`MISSING_CANDIDATES` found in the data
    (policy ``drop``); ``None`` declares no missing token. Columns with comments carry a
    ``_comment`` key that :func:`~dpkit.schema.importers.dump_schema` writes as ``# ...``.
    ``keep``: columns named like an identifier (:func:`dpkit.schema.names.looks_like_id`,
    drafted ``ignore`` with a REVIEW comment) to draft as any other.
    """
    from dpkit.schema.names import names

    kept = set(names(keep, "keep", [str(c) for c in df.columns]))

    if max_categories < 2:
        raise DpkitUsageError(f"max_categories must be at least 2, got {max_categories}", param="max_categories")
    if target is not None and target not in df.columns:
        from dpkit.console import have_columns

        raise DpkitUsageError(f"target {target!r} is not a column of {source} {have_columns(df.columns)}",
                              param="target")
    token = detect_missing(df) if missing == "auto" else missing
    # several tokens, comma-separated (``'',N/A``), as the private mode reads them
    # (dpkit.domain.metadata.declared_tokens); one token stays a string in the YAML
    tokens: list[str] = [] if token is None else list(dict.fromkeys(
        [str(t) for t in token] if not isinstance(token, str)
        else [t.strip() for t in token.split(",")] if "," in token and token not in MISSING_CANDIDATES
        else [token]))
    n = len(df)
    columns: dict[str, Any] = {}
    for name in df.columns:
        columns[name] = _draft_column(name, df[name].to_numpy(), tokens=tokens, target=target, kept=kept, n=n,
                                      max_categories=max_categories, source=source)
    if tokens:
        _note_missing_shares(df, tokens, columns, target, source)
    warn(f"{source}: {WARNING}", PrivacyLeakWarning)
    # machine-readable, unlike the comment: private commands refuse a schema marked draft
    data: dict[str, Any] = {"draft": True}
    if target is not None:
        data["target"] = target
    if tokens:
        data["missing"] = tokens[0] if len(tokens) == 1 else tokens
        # keep: a missing value is a value of its column, every row stays (a column missing in most
        # rows emptied a release under drop: docs/formats.md, missing_policy)
        data["missing_policy"] = "keep"
    data["columns"] = columns
    return data


def _draft_column(name: Any, values: Any, *, tokens: list[str], target: str | None, kept: set[str], n: int,
                  max_categories: int, source: str) -> dict[str, Any]:
    """The draft of one column (its values read from the data: not private)."""
    import numpy as np

    from dpkit.schema.names import looks_like_id

    rows = np.flatnonzero(~np.isin(values, tokens)) if tokens else np.arange(len(values))
    present = values[rows]
    if present.size == 0:
        return {"type": "ignore", "_comment": "no values besides the missing token"}
    nums = None if name == target else _as_numbers(present)
    stray = None
    if nums is None and name != target:
        mostly = _mostly_numbers(present)
        if mostly is not None:
            nums, stray = mostly
            warn(private(
                f"{source}: column {name!r} is numeric but for {stray.size} value(s) "
                f"({', '.join(repr(present[i]) for i in stray[:SHOW_STRAY])}); drafted as numeric, "
                "the stray values are listed in its comment for review",
                f"{source}: column {name!r} is numeric but for a few stray value(s); drafted as numeric, "
                "the stray values are listed in its comment for review"), DpkitWarning)
    distinct = list(dict.fromkeys(present.tolist()))
    dated = _as_dates(present) if nums is None and name != target else None
    if dated is not None:
        return dated
    if name != target and name not in kept and looks_like_id(name):
        return {"type": "ignore", "_comment": "REVIEW: named like an identifier (a rule on the name); "
                "--keep COLUMN (keep= in Python) drafts it if it is a predictor"}
    if nums is not None:
        integer = bool(np.all(np.floor(nums) == nums))
        blo, bhi = robust_bounds(nums)
        return {
            "type": "numeric",
            "bounds": [int(blo), int(bhi)] if integer else [blo, bhi],
            "integer": integer,
            "_comment": _bounds_comment(nums, blo, bhi)
            if stray is None else _stray_comment(present, stray, rows),
        }
    if name != target and name not in kept and len(distinct) == present.size and n > 1:
        return {"type": "ignore", "_comment": "REVIEW: every value distinct: an identifier?"}
    if len(distinct) > max_categories:
        if name == target:
            raise DataError(
                f"{source}: target {name!r} has more than {max_categories} distinct values; "
                "raise max_categories or choose another target",
                param="max_categories",
            )
        return {
            "type": "ignore",
            "_comment": f"more than {max_categories} categories: declare them (or a hierarchy) by hand",
        }
    spec: dict[str, Any] = {"type": "categorical", "values": sorted(distinct, key=str)}
    if "Any" in distinct:  # the default root name is taken by a value
        spec["root"] = next(r for r in ("All", "Any value", "(all)") if r not in distinct)
    return {
        **spec,
        "_comment": "REVIEW: categories read from the data; use a public code list",
    }


def _note_missing_shares(df: pd.DataFrame, tokens: list[str], columns: dict[str, Any], target: str | None,
                         source: str) -> None:
    """Name the columns missing in more than :data:`dpkit.defaults.LARGE_SHARE` of the rows:
    a comment on each (with its share: the draft is the owner's, read from the data, not
    private) and one warning (the share for the owner only, :func:`dpkit.console.private`). A
    predictor's missing values are kept under the draft's ``keep``; the target's drop their rows."""
    import numpy as np

    from dpkit.defaults import LARGE_SHARE

    n = len(df)
    large: dict[str, float] = {}
    for name, spec in columns.items():
        if spec.get("type") == "ignore" or n == 0:
            continue
        share = float(np.count_nonzero(np.isin(df[name].to_numpy(), tokens))) / n
        if share > LARGE_SHARE:
            large[name] = share
            fate = ("their rows are dropped (a record without a class is not counted)" if name == target else
                    "kept as the column's (missing) value under missing_policy: keep; under drop their rows "
                    "would be lost")
            note = f"REVIEW: {share:.0%} of the values are missing: {fate}"
            spec["_comment"] = f"{spec['_comment']}; {note}" if spec.get("_comment") else note
    if large:
        listing = ", ".join(f"{c!r} ({v:.0%})" for c, v in large.items())
        warn(private(f"{source}: column(s) missing in more than {LARGE_SHARE:.0%} of the rows: {listing}; the draft "
                     "keeps them (missing_policy: keep) — drop would lose those rows",
                     f"{source}: column(s) missing in more than {LARGE_SHARE:.0%} of the rows: "
                     f"{', '.join(map(repr, large))}; the draft keeps them (missing_policy: keep) — drop would lose "
                     "those rows"), DpkitWarning)
