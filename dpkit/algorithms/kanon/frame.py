"""From a CSV table (strings) to what the selector needs: candidates, typed features, labels.

Equivalence classes are defined on the values as released — the CSV strings — so the
output is k-anonymous exactly as written. The ranker sees typed features: with a schema,
its categorical columns (categories from the taxonomy, a public domain) and numeric
columns (clipped to the schema's bounds); without one, a column whose every value parses
as a finite number is numeric and any other column is categorical.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.console import owner_watching, private
from dpkit.data.encoded import bounds_text
from dpkit.errors import DETAIL_HINT, DataError, DpkitUsageError, DpkitWarning, warn

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.schema.parse import Schema


class Codes(Mapping):
    """``name -> (codes over the rows used, n_values)`` of a string frame's columns, gathered
    when asked for (:meth:`~dpkit.engine.string_frame.NumpyStringFrame.take`: on the numpy
    engine a view of the column, no copy)."""

    def __init__(self, frame: Any, names: list[str]) -> None:
        self._frame = frame
        self._names = list(names)

    def __getitem__(self, name: str) -> tuple[np.ndarray, int]:
        if name not in self._names:
            raise KeyError(name)
        return self._frame.take([name], None)[name], self._frame.n_values(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class Prepared:
    """The rows used (a string frame: rows with a missing value dropped), the candidate
    quasi-identifiers and how the ranker types them.

    Every column the selection reads is a column of :attr:`frame`: integer codes of its
    distinct strings (first-seen order, as ``pandas.factorize`` numbers them) plus the strings
    (``frame.values(name)``) — never one Python object per cell. The ranker's typed features
    are built for the rows it trains on only (:meth:`features_of`).
    """

    frame: Any  # a string frame (dpkit.engine.string_frame) of the rows used
    candidates: list[str]
    dropped_identifiers: list[str]
    used: list[str]
    lookups: dict[str, tuple[np.ndarray, Any]] = field(default_factory=dict)  # code -> feature, categories
    n_rows: int = 0

    @property
    def header(self) -> list[str]:
        """The input's columns, in order."""
        return list(self.frame.header)

    @property
    def codes(self) -> Codes:
        """``name -> (codes over the rows used, n_values)`` of every used column."""
        return Codes(self.frame, self.used)

    @property
    def values(self) -> dict[str, np.ndarray]:
        """The distinct strings of every used column, in code order."""
        return {c: self.frame.values(c) for c in self.used}

    def table(self, columns: list[str] | None = None) -> pd.DataFrame:
        """The rows used as a DataFrame of their strings (default: every column of the frame,
        in input order)."""
        import pandas as pd

        names = [c for c in self.header if c in set(self.frame.column_names())] if columns is None else columns
        return pd.DataFrame({c: self.column(c) for c in names}, columns=list(names))

    def column(self, name: str) -> np.ndarray:
        """The strings of column ``name`` in the rows used."""
        return self.frame.values(name)[self.frame.take([name], None)[name]]

    def features_of(self, rows: np.ndarray | None = None) -> pd.DataFrame:
        """The candidates typed for the ranker (``category`` or float), for ``rows`` (default all)."""
        import pandas as pd

        got = self.frame.take(self.candidates, rows)
        out: dict[str, Any] = {}
        for c in self.candidates:
            lut, categories = self.lookups[c]
            if categories is None:
                out[c] = lut[got[c]]
            else:
                out[c] = pd.Categorical.from_codes(lut[got[c]], categories=categories)
        index = pd.RangeIndex(self.n_rows) if rows is None else pd.Index(np.asarray(rows))
        return pd.DataFrame(out, index=index) if out else pd.DataFrame(index=index)

    @property
    def features(self) -> pd.DataFrame:
        """Every row's typed features (:meth:`features_of` all rows)."""
        return self.features_of(None)

    def label_table(self, column: str) -> tuple[np.ndarray, list[Any]]:
        """``(rank, classes)``: ``rank[code]`` numbers the codes of ``column`` by its sorted
        distinct values (as ``pandas.factorize(sort=True)``), ``classes`` those values."""
        values = self.frame.values(column)
        order = np.argsort(values, kind="stable")
        # the smallest integer type: one label per record may be gathered with it
        rank = np.empty(len(order), dtype=np.min_scalar_type(-max(len(order), 1)))
        rank[order] = np.arange(len(order))
        return rank, list(values[order])

    def labels(self, column: str) -> tuple[np.ndarray, list[Any]]:
        """Codes of ``column`` numbered by its sorted distinct values, and those values."""
        rank, classes = self.label_table(column)
        return rank[self.frame.take([column], None)[column]], classes


def require_columns(header: Any, names: list[str], option: str, source: str) -> None:
    """Unknown column names are a usage error listing the header (a list of names, or a
    DataFrame whose columns are the header)."""
    header = [str(c) for c in getattr(header, "columns", header)]
    missing = [n for n in names if n not in header]
    if missing:
        shown = ", ".join(header[:12]) + (", ..." if len(header) > 12 else "")
        _one_column_header(header, missing, source)
        raise DpkitUsageError(
            f"{option}: column(s) {', '.join(map(repr, missing))} not in {source} (columns: {shown})",
            param=option,
        )


def _one_column_header(header: list[str], missing: list[str], source: str) -> None:
    """A header read as one column holding a ';', tab or '|' means a wrong delimiter."""
    if len(header) == 1 and any(d in str(header[0]) for d in ";\t|"):
        raise DataError(
            f"{source}: column(s) {', '.join(map(repr, missing))} not found: the header is one "
            f"column ({str(header[0])[:40]!r}) — wrong delimiter?", param="delimiter"
        )


def prepare(
    data: Any,
    *,
    target: str,
    quasi_identifiers: list[str] | None,
    keep: list[str],
    sensitive: str | None,
    schema: Schema | None,
    source: str,
) -> Prepared:
    """Validate the column roles and build the candidate features, over a string frame
    (:mod:`dpkit.engine.string_frame`) or a DataFrame of strings (read into one).

    Candidates: ``quasi_identifiers`` if given, else every column (every non-ignored schema
    column with a schema) other than the target, the kept columns and the sensitive column.
    Identifier-like columns are refused when named, and left out with a warning otherwise.
    Rows with a missing token in a used column are dropped (or refused) as the schema says.
    """
    import pandas as pd

    from dpkit.engine.keys import Col

    if isinstance(data, pd.DataFrame):
        from dpkit.engine.string_frame import NumpyStringFrame

        data = NumpyStringFrame.of(data, [str(c) for c in data.columns], source)
    frame = data
    header = list(frame.header)
    candidates = _candidates(header, target, keep, sensitive, quasi_identifiers, schema, source)
    used = list(dict.fromkeys([*candidates, target] + ([sensitive] if sensitive else [])))
    kept = _drop_missing(frame, used, schema, source)
    n = kept.count()
    counts = dict(zip(used, kept.many([("counts", [Col(c)], [kept.n_values(c)]) for c in used]), strict=True))
    present = {c: counts[c] > 0 for c in used}
    ids = [c for c in candidates if n >= 2 and int(present[c].sum()) == n]
    if ids:
        if quasi_identifiers is not None:
            raise DataError(
                f"column {ids[0]!r} has a different value in every record (an identifier): it "
                "cannot be a quasi-identifier of a k-anonymous table; drop it from the quasi-identifiers",
                param="quasi_identifiers",
            )
        warn(
            f"left out identifier-like column(s) {', '.join(map(repr, ids))} (a different value in "
            "every record): identifiers are never released",
            DpkitWarning,
        )
        candidates = [c for c in candidates if c not in ids]
    lookups = {c: _lookup(c, frame, kept, schema, present[c], counts[c], source) for c in candidates}
    if kept is not frame and hasattr(frame, "unpersist"):
        frame.unpersist()
    return Prepared(frame=kept, candidates=candidates, dropped_identifiers=ids, used=used, lookups=lookups, n_rows=n)


def _candidates(header: list[str], target: str, keep: list[str], sensitive: str | None,
                quasi_identifiers: list[str] | None, schema: Schema | None, source: str) -> list[str]:
    """The candidate features, each column role checked against the header and the schema."""
    require_columns(header, [target], "target", source)
    require_columns(header, keep, "keep", source)
    if sensitive is not None:
        require_columns(header, [sensitive], "sensitive", source)
    reserved = {target, *keep} | ({sensitive} if sensitive else set())
    if quasi_identifiers is not None:
        require_columns(header, quasi_identifiers, "quasi_identifiers", source)
        for c in quasi_identifiers:
            if c == target:
                raise DpkitUsageError(f"quasi_identifiers: {c!r} is the target; a feature cannot be the target",
                                      param="quasi_identifiers")
            if c in keep:
                raise DpkitUsageError(f"column {c!r} is both a quasi-identifier and kept as it is; choose one",
                                      param="keep")
            if c == sensitive:
                raise DpkitUsageError(f"column {c!r} is both a quasi-identifier and the sensitive column; choose one",
                                      param="sensitive")
        candidates = list(quasi_identifiers)
        if schema is not None:
            for c in candidates:
                if schema.column(c).kind == "ignore":
                    raise DpkitUsageError(f"quasi_identifiers: column {c!r} is declared 'ignore' in {schema.path}",
                                          param="quasi_identifiers")
    elif schema is not None:
        candidates = [c for c in schema.predictors(target) if c not in reserved]
        absent = [c for c in candidates if c not in header]
        if absent:
            _one_column_header(header, absent, source)
            hint = " — is the schema for a different data set?" if len(absent) == len(candidates) else ""
            raise DataError(
                f"{source}: column(s) {', '.join(map(repr, absent))} from schema {schema.path} not "
                f"found in the header ({', '.join(header[:8])}"
                f"{', ...' if len(header) > 8 else ''}){hint}"
            )
    else:
        candidates = [c for c in header if c not in reserved]

    if schema is not None:
        for c in candidates:
            schema.column(c)  # a usage error naming the schema when the column is not in it
    return candidates


def _drop_missing(frame: Any, used: list[str], schema: Schema | None, source: str) -> Any:
    """The frame of the rows used: the schema's missing-value policy applied on the distinct
    values only (a row is used when no used column holds a missing token)."""
    from dpkit.engine.keys import Flag, Lookup

    # a Lookup of each column's codes: 0 a value, -1 a missing token
    kept = frame
    if schema is not None and schema.missing is not None:
        tokens = list(schema.missing_tokens)
        present_keys = []
        for c in used:
            hit = np.isin(np.asarray(frame.values(c), dtype=object), tokens)
            if hit.any():
                present_keys.append(Lookup(c, np.where(hit, -1, 0).astype(np.int8)))
        if present_keys:
            valid = Flag(tuple(present_keys), "all")
            missing_rows = Flag(tuple(Lookup(k.name, np.where(k.table < 0, 0, -1).astype(np.int8))
                                      for k in present_keys), "any")
            if schema.missing_policy == "error":
                r = frame.first_row(missing_rows)
                if r is not None:
                    where = private(f"{source}:{r + 2}", source)
                    raise DataError(
                        f"{where}: a missing value ({schema.missing!r}) in the columns used; "
                        f"set missing_policy: drop in {schema.path} to drop such rows"
                    )
            else:
                kept = frame.where(valid)
                dropped = frame.count() - kept.count()
                if dropped and owner_watching():
                    from dpkit.data.encoded import dropped_share

                    warn(
                        private(
                            f"{source}: dropped {dropped} row(s) with a missing value "
                            f"({schema.missing!r}) in the columns used{dropped_share(dropped, frame.count(), None)}",
                            f"{source}: dropped rows with a missing value ({schema.missing!r}) in the columns used",
                        ),
                        DpkitWarning,
                    )
                if kept.count() == 0:
                    raise DataError(f"{source}: no rows left after dropping rows with missing values")
    if schema is not None and schema.missing is not None and schema.missing_policy != "error" and not owner_watching():
        # the short form's presence is the schema's alone (dpkit.data.encoded.load_warnings)
        warn(f"{source}: dropped rows with a missing value ({schema.missing!r}) in the columns used, if any"
             + DETAIL_HINT, DpkitWarning)
    return kept


def _first_row(frame: Any, kept: Any, c: str, bad_codes: np.ndarray) -> int:
    """The input row (0-based) of the first used record of ``c`` holding one of ``bad_codes``."""
    from dpkit.engine.keys import Lookup

    mark = np.full(frame.n_values(c), -1, dtype=np.int8)
    mark[bad_codes] = 0
    return int(kept.first_row(Lookup(c, mark)))


def _lookup(c: str, frame: Any, kept: Any, schema: Schema | None, present: np.ndarray, counts: np.ndarray,
            source: str) -> tuple[np.ndarray, Any]:
    """A candidate's value codes mapped to what the ranking reads: a categorical column's leaf
    codes (a value outside its taxonomy refused), a number clipped to its public bounds (a
    non-number refused), or, without a schema, the numbers or the distinct strings."""
    import pandas as pd

    values = np.asarray(frame.values(c), dtype=object)
    col = schema.columns[c] if schema is not None else None
    if col is not None and col.kind == "categorical":
        leaf = col.leaf_code
        unlisted = col.other_code  # a learned schema's catch-all leaf (other:), else -1
        mapped = np.array([leaf.get(v, unlisted) for v in values], dtype=np.int64)
        bad = (mapped < 0) & present
        if bad.any():
            first = _first_row(frame, kept, c, np.flatnonzero(bad))
            shown = ", ".join(repr(v) for v in values[bad][:5])
            fix = (
                "declare a missing token (missing: ...) in the schema for empty values"
                if "" in set(values[bad])
                else "add them to the schema or fix the data"
            )
            raise DataError(private(
                f"{source}:{first + 2}: column {c!r} has value(s) not in the taxonomy of "
                f"{schema.path} ({shown}); {fix}",
                f"{source}: column {c!r} has value(s) not in the taxonomy of {schema.path}; {fix}",
            ))
        return (np.maximum(mapped, 0), list(col.leaves))
    else:
        time = getattr(col, "time", None)
        if time is not None:  # a date column: days since 1970 (the readers' one parse function)
            from dpkit.schema.dates import parse_array

            nums = parse_array(values, time)
        else:
            nums = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
        finite = np.isfinite(nums)
        if col is not None:  # a numeric schema column: every value must be a number
            if not finite[present].all():
                bad = np.flatnonzero(~finite & present)
                first = _first_row(frame, kept, c, bad)
                v = _value_at(frame, kept, c, bad, first)  # the first offending row's value
                from dpkit.schema.dates import expected as shape

                kind, expected = (time, shape(time)) if time else ("numeric", "a finite number")
                what = "is empty (declare a missing token in the schema)" if v == "" else f"has {v!r}, not {expected}"
                raise DataError(private(f"{source}:{first + 2}: {kind} column {c!r} {what}",
                                        f"{source}: {kind} column {c!r} has a value that is not {expected}"))
            out = (nums < col.lo) | (nums > col.hi)
            if not owner_watching() or (out & present).any():  # without -v: whatever the data holds
                clipped = int(counts[out].sum())
                warn(
                    private(
                        f"{source}: clipped {clipped} value(s) of "
                        f"{c!r} to the public bounds {bounds_text(col)} of {schema.path} "
                        "(for the ranking only; the output keeps the values as written)",
                        f"{source}: clipped values of {c!r} to the public bounds {bounds_text(col)} "
                        f"of {schema.path} (for the ranking only; the output keeps the values as written), if any",
                    ),
                    DpkitWarning,
                )
            return (np.clip(nums, col.lo, col.hi), None)
        elif finite[present].all():
            return (nums, None)
        else:
            return (np.arange(len(values)), pd.Index(values))


def _value_at(frame: Any, kept: Any, column: str, bad: np.ndarray, first: int) -> Any:
    """The value of ``column`` at input row ``first`` (one of the codes ``bad``): the first
    offending value, as a message quotes it."""
    values = np.asarray(frame.values(column), dtype=object)
    if len(bad) == 1:
        return values[bad[0]]
    for code in bad:  # the code whose first kept row is ``first``
        mark = np.full(len(values), -1, dtype=np.int8)
        mark[code] = 0
        from dpkit.engine.keys import Lookup

        if kept.first_row(Lookup(column, mark)) == first:
            return values[code]
    return values[bad[0]]
