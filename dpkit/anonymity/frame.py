"""From a CSV table (strings) to what the selector needs: candidates, typed features, labels.

Equivalence classes are defined on the values as released — the CSV strings — so the
output is k-anonymous exactly as written. The ranker sees typed features: with a schema,
its categorical columns (categories from the taxonomy, a public domain) and numeric
columns (clipped to the schema's bounds); without one, a column whose every value parses
as a finite number is numeric and any other column is categorical.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.console import private
from dpkit.data.counting import values_present
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.data.schema import Schema


class KeptCodes(Mapping):
    """``name -> (codes over the rows kept, n_values)``, gathered when asked for.

    The codes of every input row stay where they are (for a table read as ``category``
    they *are* the table's codes, shared); a column's codes over the rows kept after
    dropping missing values are gathered on access and dropped by the caller, so the
    selection holds one gathered column at a time, not a second copy of the table.
    """

    def __init__(self, codes: dict[str, tuple[np.ndarray, int]], keep: np.ndarray | None,
                 names: list[str] | None = None) -> None:
        self._codes = codes
        self._keep = keep
        self._names = list(codes) if names is None else list(names)

    def __getitem__(self, name: str) -> tuple[np.ndarray, int]:
        if name not in self._names:
            raise KeyError(name)
        codes, m = self._codes[name]
        return (codes if self._keep is None else codes[self._keep]), m

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def subset(self, names: list[str]) -> KeptCodes:
        """The same view restricted to ``names``."""
        return KeptCodes(self._codes, self._keep, names)


@dataclass
class Prepared:
    """Rows kept, the candidate quasi-identifiers and their codes; typed features on demand.

    Every column the selection reads is held as integer codes (first-seen order, as
    ``pandas.factorize`` numbers them) plus its distinct values (``values``), never as one
    Python object per cell: the ranker's typed features are built from them for the rows it
    trains on only (:meth:`features_of`). Rows dropped for a missing value are a mask
    (``keep``) over the input ``table``, not a copy of it: :attr:`codes`, :meth:`project`
    and :meth:`column` apply it to the columns asked for.
    """

    table: pd.DataFrame  # the input as given (every row; strings or categories)
    candidates: list[str]
    dropped_identifiers: list[str]
    all_codes: dict[str, tuple[np.ndarray, int]]  # used columns' value codes over every input row
    values: dict[str, np.ndarray] = field(default_factory=dict)  # distinct values of each used column
    lookups: dict[str, tuple[np.ndarray, Any]] = field(default_factory=dict)  # code -> feature, categories
    keep: np.ndarray | None = None  # rows used (a boolean mask over ``table``); None: every row
    n_rows: int = 0  # how many rows are used

    @property
    def codes(self) -> KeptCodes:
        """``name -> (codes over the rows used, n_values)`` (gathered on access)."""
        return KeptCodes(self.all_codes, self.keep)

    @property
    def frame(self) -> pd.DataFrame:
        """The rows used, every column (a copy when rows were dropped; prefer :meth:`project`)."""
        if self.keep is None:
            return self.table
        return self.table.loc[self.keep].reset_index(drop=True)

    def column(self, name: str) -> Any:
        """The values of column ``name`` (a pandas array, as read) in the rows used."""
        values = self.table[name].array
        return values if self.keep is None else values[self.keep]

    def project(self, columns: list[str]) -> pd.DataFrame:
        """The rows used on ``columns`` only: one gather per column, never the whole table."""
        import pandas as pd

        if self.keep is None:
            return self.table[columns]
        return pd.DataFrame({c: self.column(c) for c in columns}, columns=columns, copy=False)

    def _index(self) -> pd.Index:
        import pandas as pd

        return self.table.index if self.keep is None else pd.RangeIndex(self.n_rows)

    def features_of(self, rows: np.ndarray | None = None) -> pd.DataFrame:
        """The candidates typed for the ranker (``category`` or float), for ``rows`` (default all)."""
        import pandas as pd

        out: dict[str, Any] = {}
        for c in self.candidates:
            codes = self.codes[c][0] if rows is None else self.codes[c][0][rows]
            lut, categories = self.lookups[c]
            if categories is None:
                out[c] = lut[codes]
            else:
                out[c] = pd.Categorical.from_codes(lut[codes], categories=categories)
        index = self._index() if rows is None else self._index()[rows]
        return pd.DataFrame(out, index=index) if out else pd.DataFrame(index=index)

    @property
    def features(self) -> pd.DataFrame:
        """Every row's typed features (:meth:`features_of` all rows)."""
        return self.features_of(None)

    def labels(self, column: str) -> tuple[np.ndarray, list[Any]]:
        """Codes of ``column`` numbered by its sorted distinct values, and those values."""
        codes, _ = self.codes[column]
        values = self.values[column]
        order = np.argsort(values, kind="stable")  # as pandas.factorize(sort=True) orders them
        # the smallest integer type: one label per record stays in memory during the selection
        rank = np.empty(len(order), dtype=np.min_scalar_type(-max(len(order), 1)))
        rank[order] = np.arange(len(order))
        return rank[codes], list(values[order])


def column_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, distinct values)`` of a column, numbered in first-seen order.

    The numbering of ``pandas.factorize`` (so every result is the same whichever way the
    table was read); a ``category`` column is renumbered from its codes alone — one pass
    over small integers, no Python object per cell.
    """
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        raw = np.asarray(series.cat.codes)
        if (raw < 0).any():  # a missing cell (NaN): the exact path numbers it too
            codes, uniques = pd.factorize(series.to_numpy(), use_na_sentinel=False)
            return codes, np.asarray(uniques, dtype=object)
        seen = pd.unique(raw)  # the codes present, in first-seen order
        if len(seen) == len(series.cat.categories) and (seen == np.arange(len(seen))).all():
            # already first-seen order (the columnar reader's): the column's own codes, no copy
            return raw, np.asarray(series.cat.categories, dtype=object)
        lut = np.zeros(len(series.cat.categories), dtype=raw.dtype)
        lut[seen] = np.arange(len(seen))
        return lut[raw], np.asarray(series.cat.categories, dtype=object)[seen]
    codes, uniques = pd.factorize(series.to_numpy(), use_na_sentinel=False)
    return codes, np.asarray(uniques, dtype=object)


def parse_columns(value: str | None, option: str) -> list[str] | None:
    """A comma-separated column list from the command line (``None`` when not given)."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise DpkitUsageError(f"{option} needs at least one column name")
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise DpkitUsageError(f"{option} names column {n!r} twice")
        seen.add(n)
    return names


def require_columns(df: pd.DataFrame, names: list[str], option: str, source: str) -> None:
    """Unknown column names are a usage error listing the header."""
    missing = [n for n in names if n not in df.columns]
    if missing:
        header = ", ".join(list(df.columns)[:12]) + (", ..." if len(df.columns) > 12 else "")
        _one_column_header(df, missing, source)
        raise DpkitUsageError(
            f"{option}: column(s) {', '.join(map(repr, missing))} not in {source} (columns: {header})"
        )


def _one_column_header(df: pd.DataFrame, missing: list[str], source: str) -> None:
    """A header read as one column holding a ';', tab or '|' means a wrong --delimiter."""
    if len(df.columns) == 1 and any(d in str(df.columns[0]) for d in ";\t|"):
        raise DataError(
            f"{source}: column(s) {', '.join(map(repr, missing))} not found: the header is one "
            f"column ({str(df.columns[0])[:40]!r}) — wrong --delimiter?"
        )


def prepare(
    df: pd.DataFrame,
    *,
    target: str,
    quasi_identifiers: list[str] | None,
    keep: list[str],
    sensitive: str | None,
    schema: Schema | None,
    source: str,
) -> Prepared:
    """Validate the column roles and build the candidate features.

    Candidates: ``quasi_identifiers`` if given, else every column (every non-ignored schema
    column with a schema) other than the target, the kept columns and the sensitive column.
    Identifier-like columns are refused when named, and left out with a warning otherwise.
    """
    import pandas as pd

    require_columns(df, [target], "--target", source)
    require_columns(df, keep, "--keep", source)
    if sensitive is not None:
        require_columns(df, [sensitive], "--sensitive", source)
    reserved = {target, *keep} | ({sensitive} if sensitive else set())
    if quasi_identifiers is not None:
        require_columns(df, quasi_identifiers, "--quasi-identifiers", source)
        for c in quasi_identifiers:
            if c == target:
                raise DpkitUsageError(f"--quasi-identifiers: {c!r} is the target; a feature cannot be the target")
            if c in keep:
                raise DpkitUsageError(f"column {c!r} is both a quasi-identifier and in --keep; choose one")
            if c == sensitive:
                raise DpkitUsageError(f"column {c!r} is both a quasi-identifier and --sensitive; choose one")
        candidates = list(quasi_identifiers)
        if schema is not None:
            for c in candidates:
                if schema.column(c).kind == "ignore":
                    raise DpkitUsageError(f"--quasi-identifiers: column {c!r} is declared 'ignore' in {schema.path}")
    elif schema is not None:
        candidates = [c for c in schema.predictors(target) if c not in reserved]
        absent = [c for c in candidates if c not in df.columns]
        if absent:
            _one_column_header(df, absent, source)
            hint = " — is the schema for a different data set?" if len(absent) == len(candidates) else ""
            raise DataError(
                f"{source}: column(s) {', '.join(map(repr, absent))} from schema {schema.path} not "
                f"found in the header ({', '.join(list(df.columns)[:8])}"
                f"{', ...' if len(df.columns) > 8 else ''}){hint}"
            )
    else:
        candidates = [c for c in df.columns if c not in reserved]

    if schema is not None:
        for c in candidates:
            schema.column(c)  # a usage error naming the schema when the column is not in it

    # every column the selection reads is factorized once (one hash pass per column); the
    # missing-value policy, the identifier test and the typed features then work on the
    # distinct values only, not on every record
    used = list(dict.fromkeys([*candidates, target] + ([sensitive] if sensitive else [])))
    fac = {c: column_codes(df[c]) for c in used}
    keep_rows: np.ndarray | None = None  # rows used; dropped rows stay in df, masked
    if schema is not None and schema.missing is not None:
        is_missing = np.zeros(len(df), dtype=bool)
        for c in used:
            codes, uniques = fac[c]
            hit = np.flatnonzero(np.isin(np.asarray(uniques, dtype=object), list(schema.missing_tokens)))
            if hit.size:
                is_missing |= np.isin(codes, hit)
        if is_missing.any():
            if schema.missing_policy == "error":
                r = int(np.flatnonzero(is_missing)[0])
                where = private(f"{source}:{r + 2}", source)
                raise DataError(
                    f"{where}: a missing value ({schema.missing!r}) in the columns used; "
                    f"set missing_policy: drop in {schema.path} to drop such rows"
                )
            warnings.warn(
                private(
                    f"{source}: dropped {int(is_missing.sum())} row(s) with a missing value "
                    f"({schema.missing!r}) in the columns used",
                    f"{source}: dropped rows with a missing value ({schema.missing!r}) in the columns used",
                ),
                DpkitWarning,
                stacklevel=2,
            )
            keep_rows = ~is_missing
            if not keep_rows.any():
                raise DataError(f"{source}: no rows left after dropping rows with missing values")
        del is_missing
    kept = KeptCodes({c: (codes, len(u)) for c, (codes, u) in fac.items()}, keep_rows)

    def first_row(c: str, bad_codes: np.ndarray) -> int:
        """The input row (0-based) of the first kept record of ``c`` holding one of ``bad_codes``."""
        hit = np.isin(fac[c][0], bad_codes)
        if keep_rows is not None:
            hit &= keep_rows
        return int(np.flatnonzero(hit)[0])

    n = len(df) if keep_rows is None else int(keep_rows.sum())
    present = {c: values_present(kept[c][0], len(u)) for c, (_, u) in fac.items()}
    ids = [c for c in candidates if n >= 2 and int(present[c].sum()) == n]
    if ids:
        if quasi_identifiers is not None:
            raise DataError(
                f"column {ids[0]!r} has a different value in every record (an identifier): it "
                "cannot be a quasi-identifier of a k-anonymous table; drop it from --quasi-identifiers"
            )
        warnings.warn(
            f"left out identifier-like column(s) {', '.join(map(repr, ids))} (a different value in "
            "every record): identifiers are never released",
            DpkitWarning,
            stacklevel=2,
        )
        candidates = [c for c in candidates if c not in ids]

    lookups: dict[str, tuple[np.ndarray, Any]] = {}
    for c in candidates:
        _, uniques = fac[c]
        values = np.asarray(uniques, dtype=object)
        col = schema.columns[c] if schema is not None else None
        if col is not None and col.kind == "categorical":
            leaf = col.leaf_code
            unlisted = col.other_code  # a learned schema's catch-all leaf (other:), else -1
            mapped = np.array([leaf.get(v, unlisted) for v in values], dtype=np.int64)
            bad = (mapped < 0) & present[c]
            if bad.any():
                first = first_row(c, np.flatnonzero(bad))
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
            lookups[c] = (np.maximum(mapped, 0), list(col.leaves))
        else:
            nums = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
            finite = np.isfinite(nums)
            if col is not None:  # a numeric schema column: every value must be a number
                if not finite[present[c]].all():
                    bad = np.flatnonzero(~finite & present[c])
                    first = first_row(c, bad)
                    v = values[bad[0]]
                    what = "is empty (declare a missing token in the schema)" if v == "" else f"has {v!r}, not a finite number"
                    raise DataError(private(f"{source}:{first + 2}: numeric column {c!r} {what}",
                                            f"{source}: numeric column {c!r} has a value that is not a finite number"))
                out = (nums < col.lo) | (nums > col.hi)
                if (out & present[c]).any():
                    clipped = int(np.isin(kept[c][0], np.flatnonzero(out)).sum())
                    warnings.warn(
                        private(
                            f"{source}: clipped {clipped} value(s) of "
                            f"{c!r} to the public bounds [{col.lo:g}, {col.hi:g}] of {schema.path} "
                            "(for the ranking only; the output keeps the values as written)",
                            f"{source}: clipped values of {c!r} to the public bounds [{col.lo:g}, {col.hi:g}] "
                            f"of {schema.path} (for the ranking only; the output keeps the values as written)",
                        ),
                        DpkitWarning,
                        stacklevel=2,
                    )
                lookups[c] = (np.clip(nums, col.lo, col.hi), None)
            elif finite[present[c]].all():
                lookups[c] = (nums, None)
            else:
                lookups[c] = (np.arange(len(values)), pd.Index(values))
    return Prepared(table=df, candidates=candidates, dropped_identifiers=ids,
                    all_codes={c: (codes, len(u)) for c, (codes, u) in fac.items()},
                    values={c: u for c, (_, u) in fac.items()}, lookups=lookups, keep=keep_rows, n_rows=n)
