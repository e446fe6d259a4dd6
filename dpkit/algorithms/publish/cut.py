"""The generalization state of ``dpkit publish``: a *cut* per predictor attribute.

A cut holds, for every predictor, the current set of generalized values (docs/algorithms.md §1):
taxonomy nodes for a categorical attribute (initially the root), intervals for a numeric
one (initially the whole public domain ``[lo, hi]``). Every record maps to the one
generalized value containing it: for categories a ``searchsorted`` of its leaf code against
the first leaf of each cut node (leaves are numbered depth-first, so a node covers a
contiguous range of codes), for numbers a ``searchsorted`` against the intervals' lower
edges. Intervals are ``[lo, hi)`` except the last, which is closed ``[lo, hi]``.

The cut is public (it is the DP output of the selections) and is what ``release.cut`` of
the report holds, so ``dpkit generalize`` can map any other file onto it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpkit.data.counting import group_of
from dpkit.engine.keys import Bins, Key, Lookup
from dpkit.errors import DataError
from dpkit.schema.parse import (
    MISSING_NAMES,
    CategoricalColumn,
    IntervalNode,
    NumericColumn,
    Schema,
    TaxonomyNode,
)

#: the label of a numeric column's missing bucket (``missing_policy: keep``)
MISSING_LABEL = MISSING_NAMES[0]


def format_number(x: float, integer: bool = False) -> str:
    """A number as written in interval labels: integers without a decimal point."""
    if integer or float(x).is_integer():
        return str(int(round(x)))
    return f"{x:.10g}"


def format_value(col: NumericColumn, x: float) -> str:
    """A bound or split point of ``col`` as written in labels: an ISO date for a date or
    timestamp column (:mod:`dpkit.schema.dates`), else :func:`format_number`."""
    if col.time is not None:
        from dpkit.schema.dates import format_time

        return format_time(x, col.time)
    return format_number(x, col.integer)


@dataclass
class CategoricalCut:
    """The cut of a categorical attribute: taxonomy nodes ordered by their first leaf."""

    column: CategoricalColumn
    nodes: list[TaxonomyNode] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.nodes:
            self.nodes = [self.column.root]

    @property
    def size(self) -> int:
        return len(self.nodes)

    def labels(self) -> list[str]:
        return [n.name for n in self.nodes]

    def codes(self, leaf_codes: np.ndarray) -> np.ndarray:
        """The index of the cut node containing each leaf code."""
        return group_of(leaf_codes, np.asarray([n.lo for n in self.nodes], dtype=np.int64))

    def key(self, name: str) -> Lookup:
        """The public key of :meth:`codes`: leaf code → index of its cut node."""
        leaves = np.arange(len(self.column.leaves), dtype=np.int64)
        return Lookup(name, np.asarray(self.codes(leaves), dtype=np.int64))

    def specialize(self, node: TaxonomyNode) -> None:
        """Replace ``node`` by its children (which cover the same contiguous leaf range)."""
        i = self.nodes.index(node)
        self.nodes[i : i + 1] = list(node.children)

    def to_json(self) -> list[str]:
        return self.labels()


@dataclass
class NumericCut:
    """The cut of a numeric attribute: contiguous intervals given by their lower edges.

    ``nodes`` runs parallel to ``edges`` when the schema gives a fixed interval hierarchy
    (specialization then follows it); otherwise it is None and intervals split on a grid.
    """

    column: NumericColumn
    edges: list[float] = field(default_factory=list)
    nodes: list[IntervalNode] | None = None
    #: the missing bucket is a value of the cut (after the column's first split), see :meth:`codes`
    apart: bool = False

    def __post_init__(self) -> None:
        if not self.edges:
            self.edges = [float(self.column.lo)]
            if self.column.hierarchy is not None:
                self.nodes = [self.column.hierarchy]

    @property
    def size(self) -> int:
        return len(self.edges) + int(self.apart)

    def separates_missing(self) -> bool:
        """Does the next split also set the missing bucket apart? A column that holds missing
        values (``missing_policy: keep``) starts as one value, the whole column (its interval and
        the missing values); its first split, like a taxonomy root's specialization into its
        children, gives the intervals and the bucket ``(missing)`` beside them. A function of the
        public cut only. A column whose learned schema did not establish missingness
        (``holds_missing`` False) never sets it apart: its NaN stays in the lowest interval."""
        return self.has_bucket and not self.apart

    @property
    def has_bucket(self) -> bool:
        """Can the cut set a missing bucket apart? (``missing_policy: keep``, and not a learned
        column without established missingness: :attr:`NumericColumn.holds_missing`.)"""
        return self.column.missing and self.column.holds_missing is not False

    def bounds(self, i: int) -> tuple[float, float]:
        hi = self.edges[i + 1] if i + 1 < len(self.edges) else float(self.column.hi)
        return self.edges[i], hi

    def integer_top(self, i: int) -> bool:
        """Is interval ``i`` an integer column's closed top ``[lo, hi]`` holding more than one whole
        number? Its upper bound is then a split point too (``[lo, hi)`` and ``[hi, hi]``): without
        it a 0/1 flag declared ``[0, 1]`` stays one cell and a count's two largest values one."""
        col = self.column
        if not col.integer or col.time is not None or i != self.n_intervals - 1:
            return False
        lo, hi = self.bounds(i)
        return math.floor(hi) > lo

    @property
    def n_intervals(self) -> int:
        """The intervals of the cut (its size less the missing bucket)."""
        return len(self.edges)

    def intervals(self) -> list[tuple[float, float]]:
        return [self.bounds(i) for i in range(self.n_intervals)]

    def labels(self) -> list[str]:
        col = self.column
        out = []
        n = len(self.edges)
        for i, (lo, hi) in enumerate(self.intervals()):
            close = "]" if i == n - 1 else ")"
            out.append(f"[{format_value(col, lo)},{format_value(col, hi)}{close}")
        if self.apart:
            out.append(MISSING_LABEL)
        return out

    def missing_index(self) -> int:
        """The cut index of a missing value (NaN): the bucket once apart, the whole column (0)
        before; -1 when the column holds no missing values (``generalize`` labels it
        ``(missing)``)."""
        if self.apart:
            return len(self.edges)
        return 0 if self.column.missing else -1

    def codes(self, values: np.ndarray) -> np.ndarray:
        """The index of the interval (or the missing bucket, :meth:`missing_index`) of each value."""
        if not self.column.missing:
            return group_of(values, np.asarray(self.edges, dtype=float))
        return self.key("").evaluate({"": values})

    def key(self, name: str) -> Bins:
        """The public key of :meth:`codes`: the interval of each value."""
        if self.column.missing:
            return Bins(name, np.asarray(self.edges, dtype=float), self.missing_index())
        return Bins(name, np.asarray(self.edges, dtype=float))

    def split(self, i: int, points: Sequence[float], children: Sequence[IntervalNode] | None = None) -> None:
        """Split interval ``i`` at ``points`` (strictly inside it, ascending; an integer column's
        closed top interval also at its upper bound, :func:`column_points`)."""
        lo, hi = self.bounds(i)
        pts = [float(p) for p in points]
        top = self.integer_top(i)
        if not pts or any(not (lo < p < hi or top and p == hi) for p in pts) or sorted(set(pts)) != pts:
            raise ValueError(f"split points {pts} must lie strictly inside [{lo}, {hi}) in order")
        self.edges[i + 1 : i + 1] = pts
        self.apart = self.apart or self.has_bucket
        if self.nodes is not None:
            if children is None:
                raise ValueError("a hierarchy interval splits into its children")
            self.nodes[i : i + 1] = list(children)

    def to_json(self) -> list[Any]:
        """``[lo, hi]`` pairs (ISO dates for a date column), then ``"(missing)"`` when the missing
        bucket is apart."""
        if self.column.time is not None:  # a date column's intervals as ISO dates
            dates: list[Any] = [[format_value(self.column, lo), format_value(self.column, hi)]
                                for lo, hi in self.intervals()]
            return dates + [MISSING_LABEL] if self.apart else dates
        integer = self.column.integer
        # rounded as the labels are (format_number), so that the report and the release agree
        pairs: list[Any] = [[round(lo) if integer else lo, round(hi) if integer else hi] for lo, hi in self.intervals()]
        return pairs + [MISSING_LABEL] if self.apart else pairs


AttributeCut = CategoricalCut | NumericCut


@dataclass
class Cut:
    """The cut of every predictor, in schema order."""

    schema: Schema
    target: str
    attributes: dict[str, AttributeCut]

    @classmethod
    def initial(cls, schema: Schema, target: str) -> Cut:
        """Every predictor fully generalized: the taxonomy root, or the whole public domain."""
        attrs: dict[str, AttributeCut] = {}
        for name in schema.predictors(target):
            col = schema.columns[name]
            attrs[name] = CategoricalCut(col) if isinstance(col, CategoricalColumn) else NumericCut(col)
        return cls(schema, target, attrs)

    @property
    def columns(self) -> list[str]:
        return list(self.attributes)

    def shape(self) -> list[int]:
        """Sizes of the predictors' cuts (the released table adds the class dimension)."""
        return [a.size for a in self.attributes.values()]

    def n_cells(self) -> int:
        return math.prod(self.shape())

    def codes(self, columns: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """Per predictor, the index of each record's generalized value."""
        return [a.codes(columns[name]) for name, a in self.attributes.items()]

    def keys(self) -> list[Key]:
        """Per predictor, the public key of :meth:`codes` (for an engine to count by)."""
        return [a.key(name) for name, a in self.attributes.items()]

    def labels(self) -> dict[str, list[str]]:
        return {name: a.labels() for name, a in self.attributes.items()}

    def to_json(self) -> dict[str, Any]:
        """``release.cut`` of the report: node names, or ``[lo, hi]`` interval pairs."""
        return {name: a.to_json() for name, a in self.attributes.items()}

    @classmethod
    def from_json(cls, schema: Schema, target: str, data: Mapping[str, Any], source: str = "<cut>") -> Cut:
        """Rebuild a released cut against ``schema``; refuses one that does not fit it."""
        if not isinstance(data, Mapping):
            raise DataError(f"{source}: release.cut must be a mapping of column names")
        attrs: dict[str, AttributeCut] = {}
        for name, value in data.items():
            if name not in schema.columns:
                raise DataError(f"{source}: cut column {name!r} is not in schema {schema.path}")
            col = schema.columns[name]
            if isinstance(col, CategoricalColumn):
                attrs[name] = _categorical_from_json(col, value, source)
            elif isinstance(col, NumericColumn):
                attrs[name] = _numeric_from_json(col, value, source)
            else:
                raise DataError(f"{source}: cut column {name!r} is declared 'ignore' in {schema.path}")
        return cls(schema, target, attrs)


def _categorical_from_json(col: CategoricalColumn, value: Any, source: str) -> CategoricalCut:
    nodes = col.nodes
    if not isinstance(value, list) or not value:
        raise DataError(f"{source}: cut of {col.name!r} must be a non-empty list of node names")
    unknown = [v for v in value if v not in nodes]
    if unknown:
        raise DataError(f"{source}: cut of {col.name!r} names {unknown[0]!r}, not a node of its taxonomy")
    chosen = sorted((nodes[v] for v in value), key=lambda n: n.lo)
    pos = 0
    for n in chosen:
        if n.lo != pos:
            raise DataError(f"{source}: cut of {col.name!r} does not partition the taxonomy's leaves")
        pos = n.hi
    if pos != col.root.hi:
        raise DataError(f"{source}: cut of {col.name!r} does not cover every leaf of the taxonomy")
    return CategoricalCut(col, chosen)


def _numeric_from_json(col: NumericColumn, value: Any, source: str) -> NumericCut:
    apart = isinstance(value, list) and bool(value) and value[-1] == MISSING_LABEL
    if apart:
        if not col.missing:
            raise DataError(f"{source}: cut of {col.name!r} has a missing bucket, but the schema does not "
                            "keep missing values (missing_policy: keep)")
        value = value[:-1]

    def number(x: Any) -> float:
        if col.time is not None and isinstance(x, str):  # a date column's cut holds ISO dates
            from dpkit.schema.dates import to_number

            return to_number(x, col.time)
        return float(x)

    try:
        pairs = [(number(a), number(b)) for a, b in value]
    except (TypeError, ValueError):
        raise DataError(f"{source}: cut of {col.name!r} must be a list of [lo, hi] pairs") from None
    ok = bool(pairs) and pairs[0][0] == col.lo and pairs[-1][1] == col.hi
    # an integer column's closed top may be one value, [hi, hi] (NumericCut.integer_top)
    ok = ok and all(a < b or (col.integer and j == len(pairs) - 1 and a == b and j > 0) for j, (a, b) in enumerate(pairs))
    ok = ok and all(pairs[i][1] == pairs[i + 1][0] for i in range(len(pairs) - 1))
    if not ok:
        raise DataError(
            f"{source}: cut of {col.name!r} must tile its bounds [{format_value(col, col.lo)}, "
            f"{format_value(col, col.hi)}] with contiguous intervals" if col.time is not None else
            f"{source}: cut of {col.name!r} must tile its bounds [{col.lo:g}, {col.hi:g}] with contiguous intervals"
        )
    return NumericCut(col, [a for a, _ in pairs], None, apart=apart or (col.missing and col.holds_missing is not False and len(pairs) > 1))


def column_points(col: NumericColumn, lo: float, hi: float, max_points: int, top: bool = False) -> np.ndarray:
    """The candidate split points of ``col`` inside ``(lo, hi)``: the calendar grid for a date
    or timestamp column (:func:`dpkit.schema.dates.calendar_points`), else :func:`grid_points`.
    ``top``: ``[lo, hi]`` is an integer column's closed top (:meth:`NumericCut.integer_top`);
    when the grid holds every whole number inside, ``hi`` is one more (it sets ``hi`` apart)."""
    if col.time is not None:
        from dpkit.schema.dates import calendar_points

        return calendar_points(lo, hi, max_points, col.time)
    pts = grid_points(lo, hi, max_points, col.integer)
    if top and col.integer and math.floor(hi) > lo and math.floor(hi) - math.floor(lo) <= max_points \
            and (pts.size == 0 or pts[-1] == math.floor(hi) - 1):
        pts = np.append(pts, float(math.floor(hi)))
    return pts


def grid_points(lo: float, hi: float, max_points: int, integer: bool) -> np.ndarray:
    """The public candidate split points strictly inside ``(lo, hi)`` (docs/algorithms.md §1 step 2).

    Integer attributes: every integer inside when there are at most ``max_points`` of them.
    Otherwise the multiples of a "nice" step (1, 2, 2.5 or 5 × 10^k; integral for integer
    attributes), the smallest giving at most ``max_points`` points: evenly spaced, readable
    labels, and a function of the public interval only — never of the data.
    """
    if not hi > lo or max_points < 1:
        return np.zeros(0)
    if integer:
        first, last = math.floor(lo) + 1, math.ceil(hi) - 1
        if last < first:
            return np.zeros(0)
        if last - first + 1 <= max_points:
            return np.arange(first, last + 1, dtype=float)
    raw = (hi - lo) / (max_points + 1)
    k = math.floor(math.log10(raw))
    step = None
    for exp in (k, k + 1, k + 2):
        for mult in (1.0, 2.0, 2.5, 5.0):
            s = mult * 10.0**exp
            if s < raw * (1 - 1e-12):
                continue
            if integer and not float(s).is_integer():
                continue
            step = s
            break
        if step is not None:
            break
    assert step is not None
    j0, j1 = math.floor(lo / step) + 1, math.ceil(hi / step) - 1
    pts = np.arange(j0, j1 + 1, dtype=float) * step
    if not float(step).is_integer():
        # 3 × 0.1 is 0.30000000000000004: snap to the step's decimals. Not for a whole step, whose
        # multiples are exact: np.round scales by 1e10 first, and above 2^53 / 1e10 that moved
        # 2175000000000000 to 2174999999999999.8 (an integer column's split, labelled two ways)
        pts = np.round(pts, 10)
    pts = pts[(pts > lo) & (pts < hi)]
    while pts.size > max_points:  # guard against rounding at the ends
        pts = pts[:-1]
    return pts
