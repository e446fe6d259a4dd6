"""k-anonymity and ℓ-diversity of a table as released: class sizes, k, ℓ, discernibility.

Independent of the selection code (:mod:`dpkit.algorithms.kanon.greedy` uses the counting module;
this uses a pandas ``groupby`` on the released values), so a check of a selection's output
is a second, separate computation. Used by ``dpkit kanon-select --check-only`` and
``dpkit evaluate kanon``.

Metrics: k = the smallest equivalence class (records equal on every quasi-identifier);
distinct ℓ = the smallest number of distinct sensitive values in a class; the
discernibility metric C_DM = Σ_E |E|² (Bayardo & Agrawal, ICDE 2005; no record is suppressed
here) and the normalized average class size C_AVG = (records / classes) / k
(LeFevre, DeWitt & Ramakrishnan, ICDE 2006).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit import validate
from dpkit.errors import DataError, DpkitUsageError

if TYPE_CHECKING:
    import pandas as pd

# lower edges of the class-size histogram's buckets (plus the k asked for, when given)
_EDGES = (1, 2, 3, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000)


def class_sizes(df: pd.DataFrame, quasi_identifiers: list[str]) -> np.ndarray:
    """Sizes of the equivalence classes of ``df`` on ``quasi_identifiers`` (pandas groupby)."""
    if not quasi_identifiers:
        return np.array([len(df)], dtype=np.int64) if len(df) else np.zeros(0, dtype=np.int64)
    sizes = df.groupby(list(quasi_identifiers), sort=False, dropna=False, observed=True).size()
    return sizes.to_numpy(dtype=np.int64)


def distinct_sensitive(df: pd.DataFrame, quasi_identifiers: list[str], sensitive: str) -> np.ndarray:
    """Number of distinct values of ``sensitive`` in each equivalence class."""
    if not quasi_identifiers:
        return np.array([df[sensitive].nunique(dropna=False)], dtype=np.int64)
    g = df.groupby(list(quasi_identifiers), sort=False, dropna=False, observed=True)[sensitive]
    return g.nunique(dropna=False).to_numpy(dtype=np.int64)


def size_histogram(sizes: np.ndarray, k: int | None = None) -> list[dict[str, int]]:
    """Classes and records per class-size bucket ``[min, max]`` (non-empty buckets only)."""
    if len(sizes) == 0:
        return []
    edges = sorted(set(_EDGES) | ({int(k)} if k else set()))
    top = int(sizes.max())
    while edges[-1] <= top:
        edges.append(edges[-1] * 10)
    lo = np.asarray(edges[:-1], dtype=np.int64)
    idx = np.searchsorted(lo, sizes, side="right") - 1
    classes = np.bincount(idx, minlength=len(lo))
    records = np.bincount(idx, weights=sizes, minlength=len(lo)).astype(np.int64)
    return [
        {"min": int(lo[i]), "max": int(edges[i + 1] - 1), "classes": int(classes[i]), "records": int(records[i])}
        for i in range(len(lo))
        if classes[i]
    ]


@dataclass
class KAnonymityCheck:
    """The k-anonymity (and ℓ-diversity) of one table on its quasi-identifiers."""

    quasi_identifiers: list[str]
    records: int
    classes: int
    k: int
    largest_class: int
    median_class: float
    discernibility: int
    histogram: list[dict[str, int]]
    k_required: int | None = None
    classes_below_k: int | None = None
    records_below_k: int | None = None
    sensitive: str | None = None
    l: int | None = None  # noqa: E741
    l_required: int | None = None
    classes_below_l: int | None = None
    records_below_l: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def satisfied(self) -> bool:
        """True when the required k (and ℓ) hold (True when none was required)."""
        ok = self.k_required is None or self.k >= self.k_required
        return ok and (self.l_required is None or (self.l or 0) >= self.l_required)

    @property
    def average_class_ratio(self) -> float | None:
        """C_AVG = (records / classes) / k_required (1 is the best possible)."""
        if not self.k_required or not self.classes:
            return None
        return self.records / self.classes / self.k_required

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "quasi_identifiers": list(self.quasi_identifiers),
            "records": self.records,
            "classes": self.classes,
            "k": self.k,
            "smallest_class": self.k,
            "largest_class": self.largest_class,
            "median_class": self.median_class,
            "discernibility": self.discernibility,
            "class_size_histogram": self.histogram,
        }
        if self.k_required is not None:
            out.update(
                k_required=self.k_required,
                k_anonymous=self.k >= self.k_required,
                classes_below_k=self.classes_below_k,
                records_below_k=self.records_below_k,
                average_class_ratio=self.average_class_ratio,
            )
        if self.sensitive is not None:
            out.update(sensitive=self.sensitive, l=self.l)
            if self.l_required is not None:
                out.update(
                    l_required=self.l_required,
                    l_diverse=(self.l or 0) >= self.l_required,
                    classes_below_l=self.classes_below_l,
                    records_below_l=self.records_below_l,
                )
        return out

    def lines(self) -> list[str]:
        """A human-readable summary, one fact per line."""
        qi = ", ".join(self.quasi_identifiers) or "(none)"
        out = [
            f"quasi-identifiers: {qi}",
            f"records: {self.records}   equivalence classes: {self.classes}",
            f"k (smallest class): {self.k}   largest: {self.largest_class}   median: {self.median_class:g}",
        ]
        if self.k_required is not None:
            verdict = "yes" if self.k >= self.k_required else "NO"
            out.append(
                f"{self.k_required}-anonymous: {verdict}   classes below {self.k_required}: "
                f"{self.classes_below_k} ({self.records_below_k} records)"
            )
        if self.sensitive is not None:
            out.append(f"distinct ℓ of {self.sensitive!r}: {self.l}")
            if self.l_required is not None:
                verdict = "yes" if (self.l or 0) >= self.l_required else "NO"
                out.append(
                    f"{self.l_required}-diverse: {verdict}   classes below ℓ={self.l_required}: "
                    f"{self.classes_below_l} ({self.records_below_l} records)"
                )
        out.append(f"discernibility (Σ class size²): {self.discernibility}")
        if self.average_class_ratio is not None:
            out.append(f"normalized average class size C_AVG: {self.average_class_ratio:.3g}")
        out.append("class sizes:")
        for b in self.histogram:
            span = f"{b['min']}" if b["min"] == b["max"] else f"{b['min']}-{b['max']}"
            out.append(f"  {span:>13}: {b['classes']} classes, {b['records']} records")
        return out


def check_table(
    df: pd.DataFrame,
    quasi_identifiers: list[str],
    *,
    k: int | None = None,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741
) -> KAnonymityCheck:
    """k (and distinct ℓ) of ``df`` on ``quasi_identifiers``; counts below a required k / ℓ."""
    sizes = class_sizes(df, quasi_identifiers)
    if len(sizes) == 0:
        raise DataError("the table has no record: k-anonymity needs at least one")
    check = KAnonymityCheck(
        quasi_identifiers=list(quasi_identifiers),
        records=int(sizes.sum()),
        classes=len(sizes),
        k=int(sizes.min()),
        largest_class=int(sizes.max()),
        median_class=float(np.median(sizes)),
        discernibility=int(np.sum(sizes.astype(np.int64) ** 2)),
        histogram=size_histogram(sizes, k),
        k_required=k,
    )
    if k is not None:
        below = sizes < k
        check.classes_below_k = int(below.sum())
        check.records_below_k = int(sizes[below].sum())
    if sensitive is not None:
        ls = distinct_sensitive(df, quasi_identifiers, sensitive)
        check.sensitive = sensitive
        check.l = int(ls.min())
        if l is not None:
            check.l_required = l
            below_l = ls < l
            check.classes_below_l = int(below_l.sum())
            # sizes and ls come from the same groupby keys in the same (first-seen) order
            check.records_below_l = int(sizes[below_l].sum())
    return check


def check_columns(df: pd.DataFrame, source: str, quasi_identifiers: list[str], *, k: int | None,
                  sensitive: str | None, l: int | None) -> KAnonymityCheck:  # noqa: E741
    """k (and ℓ) of ``df`` on ``quasi_identifiers``, after checking that the columns exist (errors
    name ``source``): ``dpkit.check_kanon`` and ``dpkit.api.evaluate.evaluate_kanon`` both ask here."""
    from dpkit.algorithms.kanon.frame import require_columns

    require_columns(df, quasi_identifiers, "quasi_identifiers", source)
    if sensitive is not None:
        require_columns(df, [sensitive], "sensitive", source)
    return check_table(df, quasi_identifiers, k=k, sensitive=sensitive, l=l)


def check_k_l(k: Any, l: int | None, sensitive: str | None, *, need_k: bool = True) -> None:  # noqa: E741
    """k ≥ 1 (required unless ``need_k`` is False), ℓ ≥ 1, and ℓ only with a sensitive column."""
    if k is not None or need_k:
        validate.k(k)
    if l is not None:
        validate.k(l, "l")
    if l is not None and sensitive is None:
        raise DpkitUsageError("l= needs sensitive= (the column that must be ℓ-diverse)", param="sensitive")
