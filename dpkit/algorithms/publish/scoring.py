"""Candidate specializations of a cut and their scores: Max (MAXGDDP eq. 5; DiffGen) or Gini.

Max(D, v) = Σ_{c ∈ children(v)} max_class |records of D generalized to c with that class|,
over the records currently generalized to v. Sensitivity 1 and monotone (adding a record
raises exactly one count by one, so the score rises by 0 or 1).

Gini(D, v) = Σ_{c ∈ children(v)} Σ_class n_{c,k}² / n_c — the records of v less the count form
of the children's Gini impurity (Breiman et al. 1984; as a DP split score, Friedman & Schuster,
KDD 2010). Max rewards a split only where it changes a child's majority class, so on an
imbalanced target almost every split scores the same; Gini rewards any split that
concentrates a class. **Sensitivity 1, not monotone**: a record of class j joins one child
(n, S = Σ_k n_k²); that child's term changes by (n(2n_j + 1) − S)/(n(n + 1)), at most 1 since
S ≥ n_j² gives n(2n_j + 1) − S ≤ n(n + 1) − (n − n_j)², and more than −1 since S ≤ n²
(an empty child goes from 0 to 1). The selection then uses the general report-noisy-max
(noise scale 2Δ/ε, Dwork & Roth Claim 3.9), and a property test checks the bound
(tests/publish/test_scoring.py). The score of a candidate of
attribute j depends only on the (attribute j × class) marginal, so each attribute's
marginal is counted once (``dpkit.data.counting``) and every score afterwards is a prefix
sum over it — no further pass over the records. Everything here is exact and private: it
only feeds the selection mechanisms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpkit.algorithms.publish.cut import (
    CategoricalCut,
    Cut,
    NumericCut,
    column_points,
    format_value,
)
from dpkit.engine.frame import Frame
from dpkit.engine.keys import Col
from dpkit.schema.parse import IntervalNode, TaxonomyNode


@dataclass(frozen=True)
class Candidate:
    """One way to specialize the cut: a taxonomy node into its children, or an interval
    split at ``points`` (a grid point, or a fixed hierarchy's children)."""

    column: str
    node: TaxonomyNode | None = None
    interval: int = -1
    points: tuple[float, ...] = ()
    children: tuple[IntervalNode, ...] | None = None

    def describe(self, cut: Cut) -> str:
        a = cut.attributes[self.column]
        if self.node is not None:
            return f"{self.column}: {self.node.name} -> {' | '.join(c.name for c in self.node.children)}"
        assert isinstance(a, NumericCut)
        lo, hi = a.bounds(self.interval)
        col = a.column
        pts = ", ".join(format_value(col, p) for p in self.points)
        return f"{self.column}: [{format_value(col, lo)},{format_value(col, hi)}] split at {pts}"

    def apply(self, cut: Cut) -> None:
        a = cut.attributes[self.column]
        if self.node is not None:
            assert isinstance(a, CategoricalCut)
            a.specialize(self.node)
        else:
            assert isinstance(a, NumericCut)
            a.split(self.interval, self.points, self.children)


class Marginals:
    """The exact (attribute × class) marginals of one table, counted once per attribute
    (one aggregation of the frame per attribute: :mod:`dpkit.engine`)."""

    def __init__(self, frame: Frame, target: str, n_classes: int, cut: Cut) -> None:
        self.n_classes = n_classes
        self._cum: dict[str, np.ndarray] = {}
        self._values: dict[str, np.ndarray] = {}
        y = Col(target)
        requests: list[tuple] = []
        for name, a in cut.attributes.items():
            if isinstance(a, CategoricalCut):
                requests.append(("counts", [Col(name), y], (len(a.column.leaves), n_classes)))
            else:
                requests.append(("value_counts", name, [y], (n_classes,)))
        answers = frame.many(requests)  # one scan for every attribute
        for (name, a), got in zip(cut.attributes.items(), answers, strict=True):
            if isinstance(a, CategoricalCut):
                counts = got
                self._values[name] = np.arange(len(a.column.leaves) + 1)
            else:
                vals, counts = got
                self._values[name] = vals
            cum = np.zeros((counts.shape[0] + 1, n_classes), dtype=np.int64)
            np.cumsum(counts, axis=0, out=cum[1:])
            self._cum[name] = cum

    def index(self, column: str, points: np.ndarray, closed_end: np.ndarray | None = None) -> np.ndarray:
        """Prefix positions: records with value < point (≤ point where ``closed_end``)."""
        vals = self._values[column]
        idx = np.searchsorted(vals, points, side="left")
        if closed_end is not None and closed_end.any():
            idx = np.where(closed_end, np.searchsorted(vals, points, side="right"), idx)
        return idx

    def cum(self, column: str) -> np.ndarray:
        return self._cum[column]

    def distinct(self, column: str) -> np.ndarray:
        return self._values[column]


#: the split scores: ``max`` (the papers'; monotone), ``gini`` (not monotone), ``auto`` (one of them)
SCORES = ("auto", "max", "gini")
#: ``auto`` scores with Gini when Ñ·ε reaches this (noisy records × the run's ε), else with Max
GINI_FROM = 5000.0


def resolve_score(score: str, noisy_records: int | None, epsilon: float) -> str:
    """The score a run uses. ``auto``: Gini's better direction costs twice Max's noise (it is
    not monotone), and both scores' gaps grow with the records while the noise shrinks with ε,
    so Gini pays only when Ñ·ε is large: from :data:`GINI_FROM` (chosen on the Adult
    subsamples of bench-robust, checked on its held-out tables; docs/results/round5.md). With
    a fixed h (no Ñ drawn) ``auto`` is the papers' Max. A function of public and noisy values
    only: no privacy cost."""
    if score != "auto":
        return score
    return "gini" if noisy_records is not None and noisy_records * epsilon >= GINI_FROM else "max"


def piece_term(counts: np.ndarray, score: str = "max") -> np.ndarray:
    """Each piece's term of the score from its class counts (rows): the majority count
    (``max``) or Σ_k n_k²/n (``gini``; 0 for an empty piece)."""
    if score == "max":
        return counts.max(axis=1)
    c = counts.astype(np.float64)
    total = c.sum(axis=1)
    return np.where(total > 0, (c * c).sum(axis=1) / np.maximum(total, 1.0), 0.0)


def piece_scores(cum: np.ndarray, starts: np.ndarray, ends: np.ndarray, owner: np.ndarray, n: int,
                 score: str = "max") -> np.ndarray:
    """Σ over each candidate's pieces of the piece's term (:func:`piece_term`).

    Piece k holds the marginal rows ``[starts[k], ends[k])`` and belongs to candidate
    ``owner[k]``; returns ``n`` scores.
    """
    if n == 0:
        return np.zeros(0)
    return np.bincount(owner, weights=piece_term(cum[ends] - cum[starts], score), minlength=n)


def categorical_candidates(name: str, a: CategoricalCut, m: Marginals,
                           score: str = "max") -> tuple[list[Candidate], np.ndarray]:
    """Every cut node that has children (DiffGen's granularity)."""
    cands = [Candidate(name, node=n) for n in a.nodes if n.children]
    starts, ends, owner = [], [], []
    for k, c in enumerate(cands):
        assert c.node is not None
        for child in c.node.children:
            starts.append(child.lo)
            ends.append(child.hi)
            owner.append(k)
    scores = piece_scores(m.cum(name), np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64),
                          np.asarray(owner, dtype=np.int64), len(cands), score)
    return cands, scores


def numeric_candidates(
    name: str, a: NumericCut, m: Marginals, grid: int, score: str = "max"
) -> tuple[list[Candidate], np.ndarray]:
    """Every grid point inside every interval, or every hierarchy node with children."""
    col = a.column
    cands: list[Candidate] = []
    lo_pts: list[float] = []
    hi_pts: list[float] = []
    owner: list[int] = []
    last: list[bool] = []
    for i, (lo, hi) in enumerate(a.intervals()):
        is_last = i == a.n_intervals - 1
        if a.nodes is not None:
            node = a.nodes[i]
            if not node.children:
                continue
            kids = tuple(sorted(node.children, key=lambda c: c.lo))
            k = len(cands)
            cands.append(Candidate(name, interval=i, points=tuple(c.lo for c in kids[1:]), children=kids))
            for c in kids:
                lo_pts.append(c.lo)
                hi_pts.append(c.hi)
                owner.append(k)
                last.append(is_last and c.hi == hi)
            continue
        for p in _with_points(column_points(col, lo, hi, grid, top=a.integer_top(i)), col.points, lo, hi):
            k = len(cands)
            cands.append(Candidate(name, interval=i, points=(float(p),)))
            lo_pts += [lo, float(p)]
            hi_pts += [float(p), hi]
            owner += [k, k]
            last += [False, is_last]
    if not cands:
        return [], np.zeros(0)
    starts = m.index(name, np.asarray(lo_pts))
    ends = m.index(name, np.asarray(hi_pts), np.asarray(last))
    starts, ends, own = with_missing_piece(a, m, name, starts, ends, np.asarray(owner, dtype=np.int64), len(cands))
    return cands, piece_scores(m.cum(name), starts, ends, own, len(cands), score)


def with_missing_piece(a: NumericCut, m: Marginals, name: str, starts: np.ndarray, ends: np.ndarray,
                       owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of ``n`` candidates that split ``a``, plus the missing bucket as one more
    piece of each when the split sets it apart (:meth:`NumericCut.separates_missing`; every
    candidate then splits the column's one value). The missing values are the marginal's last
    rows (NaN sorts last), which the interval pieces never hold."""
    if not a.separates_missing() or n == 0:
        return starts, ends, owner
    vals = m.distinct(name)
    first = int(np.searchsorted(vals, np.nan))  # the first NaN (len(vals) when none)
    k = np.arange(n, dtype=np.int64)
    return (np.concatenate([starts, np.full(n, first, dtype=np.int64)]),
            np.concatenate([ends, np.full(n, len(vals), dtype=np.int64)]), np.concatenate([owner, k]))


def _with_points(pts: np.ndarray, extra: tuple[float, ...], lo: float, hi: float) -> np.ndarray:
    """The grid's points and the column's own public ``points`` strictly inside (lo, hi),
    ascending (the grid alone when the column has none: schemas without them are unchanged)."""
    inside = [p for p in extra if lo < p < hi]
    if not inside:
        return pts
    return np.unique(np.concatenate([pts, np.asarray(inside, dtype=float)]))


def split_utilities(
    m: Marginals, name: str, lo: float, hi: float, closed: bool, integer: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """Edges and Max utilities of every split point of ``[lo, hi)`` (DiffGen's continuous
    exponential mechanism): the utility is constant between consecutive distinct values.

    A point p sends x < p left. Real attributes: p ∈ (lo, hi); integer ones: p ∈ {lo+1..hi−1},
    written as edges shifted by one so that :func:`exponential_interval` with ``integer=True``
    measures each piece by its number of integers. None when no point fits.
    """
    if integer and hi - lo < 2:
        return None
    vals = m.distinct(name)
    cum = m.cum(name)
    s = int(np.searchsorted(vals, lo, side="left"))
    e = int(np.searchsorted(vals, hi, side="right" if closed else "left"))
    inner = vals[s:e].astype(float)
    total = cum[e] - cum[s]
    left = cum[s : e + 1] - cum[s]  # left[j]: the first j distinct values
    util = left.max(axis=1) + (total - left).max(axis=1)
    if integer:
        edges = np.concatenate([[lo + 1], inner + 1, [hi]])
        edges = np.clip(edges, lo + 1, hi)
    else:
        edges = np.concatenate([[lo], inner, [hi]])
        edges = np.clip(edges, lo, hi)
    return edges, util.astype(float)
