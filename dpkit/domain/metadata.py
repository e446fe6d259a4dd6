"""The public metadata of a table: column names, types, the target and the missing tokens.

These are *not* learned under differential privacy. They are what the user confirms as
public (docs/domain.md, "What stays public"): the column names come from the header, the
types and the missing tokens may be given (``numeric=``, ``categorical=``, ``integer=``,
``ignore=``, ``missing=``) or, for convenience, guessed from the data with the rules of the
non-private draft (:mod:`dpkit.data.infer`) — and then the schema's header says they were
guessed and must be confirmed. Resolving the metadata spends nothing and happens before any
noise is drawn, so a bad override is refused with nothing spent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpkit.errors import DpkitUsageError

if TYPE_CHECKING:
    from dpkit.domain.profile import Summary

KINDS = ("categorical", "numeric", "date", "timestamp", "ignore")


@dataclass(frozen=True)
class ColumnMeta:
    """One column's public metadata and whether the user gave it (``given``) or it was guessed."""

    name: str
    kind: str
    integer: bool = False
    given: bool = False
    why: str = ""
    #: a public value list the user gave (``values=``): not learned, nothing spent on it
    values: tuple[str, ...] | None = None
    #: public bounds the user gave (``bounds=``): only split points are learned, if any
    bounds: tuple[float, float] | None = None


def names(value: str | Iterable[str] | None, param: str, columns: Sequence[str]) -> list[str]:
    """Column names given as a list or "a,b", each checked against ``columns`` (a usage
    error naming ``param`` otherwise)."""
    if value is None:
        return []
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else [str(v) for v in value]
    items = [v for v in items if v]
    unknown = [v for v in items if v not in columns]
    if unknown:
        raise DpkitUsageError(
            f"{param}: column(s) {', '.join(map(repr, unknown))} are not in the data "
            f"(have: {', '.join(columns[:12])}{', ...' if len(columns) > 12 else ''})", param=param
        )
    return items


def resolve_tokens(columns: Mapping[str, Summary], missing: str | Sequence[str] | None) -> tuple[tuple[str, ...], bool]:
    """The missing tokens and whether they were guessed: ``"auto"`` picks the most common of
    ``?``, empty, ``NA``… found in the data (public metadata, like a type; the rule of the
    draft's :func:`~dpkit.data.infer.detect_missing`), None or ``"none"`` declares none, a string
    or a list gives them. ``columns``: each column's distinct strings and counts."""
    if missing is None or (isinstance(missing, str) and missing.lower() == "none"):
        return (), False
    if isinstance(missing, str) and missing == "auto":
        from dpkit.data.infer import pick_missing

        token = pick_missing(lambda t: sum(int(s.counts[np.asarray(s.values, dtype=object) == t].sum())
                                           for s in columns.values()))
        return ((token,) if token is not None else ()), True
    tokens = (missing,) if isinstance(missing, str) else tuple(str(t) for t in missing)
    return tuple(dict.fromkeys(tokens)), False


def _looks_like_id(name: str) -> bool:
    n = name.lower().replace("-", "_")
    return n in ("id", "uid", "uuid", "key", "index", "row", "rowid") or n.endswith(("_id", "_uuid", "_key"))


def _numbers(values: np.ndarray) -> np.ndarray | None:
    """float64 of every value, or None when one is not a finite number."""
    try:
        nums = np.asarray(values, dtype=object).astype(np.float64)
    except (ValueError, TypeError):
        return None
    return nums if np.isfinite(nums).all() else None


def resolve_columns(
    summaries: Mapping[str, Summary],
    *,
    target: str | None,
    tokens: Sequence[str],
    numeric: str | Iterable[str] | None = None,
    categorical: str | Iterable[str] | None = None,
    integer: str | Iterable[str] | None = None,
    ignore: str | Iterable[str] | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
    bounds: Mapping[str, Sequence[float]] | None = None,
    date: str | Iterable[str] | None = None,
) -> list[ColumnMeta]:
    """Each column's type: as given, else guessed (every non-missing value a finite number:
    numeric, integer when all are whole; identifier-like names: ignore; else categorical).

    The target is always categorical. A column given two types is a usage error; so is a
    ``numeric=`` column holding a value that is not a number (checked now, before anything
    is spent: the message names the column, never the value).
    """
    columns = list(summaries)
    if target is not None and target not in columns:
        raise DpkitUsageError(f"target {target!r} is not a column of the data (have: {', '.join(columns[:12])})")
    given: dict[str, str] = {}
    for kind, value, param in (("numeric", numeric, "numeric"), ("categorical", categorical, "categorical"),
                               ("ignore", ignore, "ignore"), ("date", date, "date")):
        for name in names(value, param, columns):
            if name in given and given[name] != kind:
                raise DpkitUsageError(f"column {name!r} is given two types ({given[name]} and {kind})")
            given[name] = kind
    ints = set(names(integer, "integer", columns))
    public_values: dict[str, tuple[str, ...]] = {}
    for name in names(list(values or {}), "values", columns):
        vals = tuple(dict.fromkeys(str(v) for v in values[name]))  # type: ignore[index]
        if not vals or given.get(name, "categorical") != "categorical":
            raise DpkitUsageError(f"values: column {name!r} needs a non-empty list and a categorical type")
        given[name] = "categorical"
        public_values[name] = vals
    public_bounds: dict[str, tuple[float, float]] = {}
    for name in names(list(bounds or {}), "bounds", columns):
        try:
            lo, hi = (float(x) for x in bounds[name])  # type: ignore[index]
        except (TypeError, ValueError):
            raise DpkitUsageError(f"bounds: column {name!r} needs two numbers (lo, hi)") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or given.get(name, "numeric") != "numeric":
            raise DpkitUsageError(f"bounds: column {name!r} needs finite lo < hi and a numeric type, got {bounds[name]!r}")  # type: ignore[index]
        given[name] = "numeric"
        public_bounds[name] = (lo, hi)
    if target is not None and given.get(target, "categorical") != "categorical":
        raise DpkitUsageError(f"the target {target!r} must be categorical, not {given[target]}")
    out: list[ColumnMeta] = []
    for name in columns:
        values = np.asarray(summaries[name].values, dtype=object)  # distinct: the rules are on the set
        present = values[~np.isin(values, list(tokens))] if tokens else values
        kind = given.get(name)
        if name == target:
            out.append(ColumnMeta(name, "categorical", given=True, why="the target", values=public_values.get(name)))
            continue
        if kind == "ignore":
            out.append(ColumnMeta(name, "ignore", given=True))
            continue
        if kind == "date":  # declared: what does not parse as a date is read as missing (no check here)
            out.append(ColumnMeta(name, "date", integer=True, given=True))
            continue
        nums = _numbers(present) if kind != "categorical" else None
        if kind == "numeric":
            if nums is None:
                raise DpkitUsageError(
                    f"numeric column {name!r} holds a value that is not a finite number (nor a missing "
                    f"token); declare the token with missing=, or the column categorical"
                )
            whole = bool(present.size) and bool(np.all(np.floor(nums) == nums))
            out.append(ColumnMeta(name, "numeric", integer=name in ints or whole, given=True,
                                  bounds=public_bounds.get(name)))
            continue
        if kind == "categorical":
            out.append(ColumnMeta(name, "categorical", given=True, values=public_values.get(name)))
            continue
        # guessed (public metadata the user confirms; the header says it was guessed)
        if present.size == 0:
            out.append(ColumnMeta(name, "ignore", why="no values besides the missing tokens"))
        elif _looks_like_id(name):
            out.append(ColumnMeta(name, "ignore", why="named like an identifier"))
        elif nums is not None:
            whole = bool(np.all(np.floor(nums) == nums))
            out.append(ColumnMeta(name, "numeric", integer=name in ints or whole))
        else:
            out.append(ColumnMeta(name, "categorical"))
    for name in ints:
        meta = next(m for m in out if m.name == name)
        if meta.kind != "numeric":
            raise DpkitUsageError(f"integer: column {name!r} is {meta.kind}, not numeric")
    return out
