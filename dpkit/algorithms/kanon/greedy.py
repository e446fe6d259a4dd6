"""Greedy forward k-anonymous feature selection, shared by XGB-KA and Greedy-Hamdist.

Wang & Wan, XGB-KA, Algorithm 1 (docs/algorithms.md §4): rank the candidate quasi-identifiers,
start from the empty set, and for each feature in rank order keep it if the table
projected on the kept features is still k-anonymous (Algorithm 2: every equivalence class
— records equal on all kept features — has at least k records), otherwise skip it.
dpkit adds distinct ℓ-diversity as an optional second test (every class holds at least ℓ
distinct values of a sensitive column), so a kept feature never breaks either.

This is k-anonymity, not differential privacy: nothing here is noised or accounted.
The equivalence classes come from :mod:`dpkit.data.counting` (vectorized; the partition is
refined one feature at a time, so each candidate costs one O(n) pass).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.errors import DataError, DpkitUsageError

if TYPE_CHECKING:
    import pandas as pd

RANKERS = ("xgboost", "hamming")
DEFAULT_RANK_SAMPLE = 100_000


@dataclass
class Trial:
    """One step of the greedy pass: a feature, whether it was kept, and what it would cause."""

    feature: str
    score: float
    kept: bool
    smallest_class: int
    smallest_l: int | None = None


@dataclass
class GreedyResult:
    selected: list[str]
    trials: list[Trial]
    sizes: np.ndarray
    l_per_class: np.ndarray | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def factorize(values: Any) -> tuple[np.ndarray, int]:
    """Integer codes ``[0, m)`` of a column's distinct values (exact equality) and ``m``."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values), use_na_sentinel=False)
    return codes.astype(np.int64), len(uniques)


#: the derived column of a frame that holds each record's equivalence class during the pass
CLASS = "__class"


def greedy_forward(
    order: list[str],
    scores: dict[str, float],
    frame: Any,
    k: int,
    *,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741 — the ℓ of ℓ-diversity
) -> GreedyResult:
    """Algorithm 1's loop: keep each feature of ``order`` that leaves the table k-anonymous.

    ``frame`` is any frame (:mod:`dpkit.engine`) whose columns are value codes (a string frame,
    or :func:`codes_frame` of arrays). The classes are the non-empty cells of (class so far,
    candidate) — one :meth:`~dpkit.engine.frame.Frame.cells` answer per trial — and a kept
    feature refines the frame's class column (:class:`~dpkit.engine.keys.CellIndex`). With
    ``sensitive`` and ``l`` a feature is also rejected if some class would hold fewer than
    ``l`` distinct sensitive values.
    """
    from dpkit.engine.keys import CellIndex, Col, Flag

    n = frame.count()
    frame = frame.with_column(CLASS, Flag(()))  # one class: every record
    n_classes = 1
    sizes = np.array([n], dtype=np.int64)
    l_class = None
    m_s = frame.n_values(sensitive) if sensitive is not None else 0
    if sensitive is not None:
        cells, _ = frame.cells([Col(CLASS), Col(sensitive)], [1, m_s])
        l_class = np.array([len(cells)], dtype=np.int64)
    selected: list[str] = []
    trials: list[Trial] = []
    for name in order:
        m = frame.n_values(name)
        keys = [Col(CLASS), Col(name)]
        if sensitive is None:
            pairs, new_sizes = frame.cells(keys, [n_classes, m])
            new_l = None
        else:
            triples, counts = frame.cells([*keys, Col(sensitive)], [n_classes, m, m_s])
            pairs, first, per = np.unique(triples[:, :2], axis=0, return_index=True, return_counts=True)
            new_sizes = np.add.reduceat(counts, first) if len(counts) else counts
            new_l = per.astype(np.int64)
        smallest = int(new_sizes.min()) if len(new_sizes) else 0
        ok = smallest >= k
        smallest_l = None
        if new_l is not None:
            smallest_l = int(new_l.min())
            ok = ok and (l is None or smallest_l >= l)
        trials.append(Trial(name, float(scores.get(name, 0.0)), ok, smallest, smallest_l))
        if ok:
            selected.append(name)
            frame = frame.with_column(CLASS, CellIndex(tuple(keys), (n_classes, m), pairs))
            n_classes, sizes, l_class = len(pairs), np.asarray(new_sizes, dtype=np.int64), new_l
    return GreedyResult(selected, trials, sizes, l_class)


def codes_frame(codes: dict[str, tuple[np.ndarray, int]], n_rows: int, source: str = "<codes>") -> Any:
    """A string frame over value codes given as arrays (``name -> (codes, n_values)``)."""
    from dpkit.engine.string_frame import NumpyStringFrame

    return NumpyStringFrame({c: np.asarray(v) for c, (v, _) in codes.items()},
                            {c: np.arange(m) for c, (_, m) in codes.items()}, n_rows, source, list(codes))


class KAnonymitySelector:
    """k-anonymous feature selection: XGB-KA (``ranker="xgboost"``) or Greedy-Hamdist (``"hamming"``).

    Wang & Wan, "XGB-KA" (Algorithm 1 with Algorithm 2 as the k-anonymity test);
    Greedy-Hamdist after Zhang et al., Trans. Data Privacy 2017, in the reading of
    docs/algorithms.md §4. scikit-learn style: parameters in ``__init__``, ``fit`` validates and
    learns ``scores_``, ``ranking_``, ``selected_`` (in input column order), ``trials_``,
    ``class_sizes_`` (and ``l_per_class_``); ``transform`` projects a frame.

    Parameters
    ----------
    k : every equivalence class of the output has at least ``k`` records (k ≥ 1).
    ranker : ``"xgboost"`` (average split gain) or ``"hamming"`` (Greedy-Hamdist score).
    l : with a sensitive column, every class also holds ≥ ``l`` distinct sensitive values.
    random_state : seed of the XGBoost model and of its row sample (deterministic per seed).
    rank_sample : the XGBoost model is trained on at most this many records, drawn uniformly
        with ``random_state`` (``None``/0: all). A departure from the paper for large tables
        (it trains on all records): the ranking only orders the features, the k-anonymity test
        always uses every record, and 100,000 records estimate the gains of Adult-sized
        feature sets closely while keeping a 1,000,000-row table within a minute.
    """

    def __init__(
        self,
        k: int,
        *,
        ranker: str = "xgboost",
        l: int | None = None,  # noqa: E741
        random_state: int | None = 0,
        n_estimators: int | None = None,
        max_depth: int | None = None,
        rank_sample: int | None = DEFAULT_RANK_SAMPLE,
    ) -> None:
        self.k = k
        self.ranker = ranker
        self.l = l
        self.random_state = random_state
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.rank_sample = rank_sample

    def _validate(self, n_rows: int, sensitive: Any) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int | np.integer):
            raise DpkitUsageError(f"k must be a whole number ≥ 1, got {self.k!r}", param="k")
        if self.k < 1:
            raise DpkitUsageError(f"k must be ≥ 1, got {self.k}", param="k")
        if self.k > n_rows:
            from dpkit.console import private

            raise DataError(private(
                f"k {self.k} is larger than the table ({n_rows} records): no table of "
                f"{n_rows} records is {self.k}-anonymous; choose k ≤ {n_rows}",
                f"k {self.k} is larger than the table: no table that small is {self.k}-anonymous; "
                "choose a smaller k",
            ), param="k")
        if self.ranker not in RANKERS:
            raise DpkitUsageError(f"ranker must be one of {', '.join(RANKERS)}, got {self.ranker!r}", param="ranker")
        if self.l is not None:
            if sensitive is None:
                raise DpkitUsageError("l needs a sensitive column (the column that must be ℓ-diverse)", param="l")
            if isinstance(self.l, bool) or not isinstance(self.l, int | np.integer) or self.l < 1:
                raise DpkitUsageError(f"l must be a whole number ≥ 1, got {self.l!r}", param="l")

    def fit(self, X: pd.DataFrame, y: Any, *, sensitive: Any = None, partition: pd.DataFrame | None = None
            ) -> KAnonymitySelector:
        """Rank the columns of ``X`` for predicting ``y`` and select greedily.

        ``X``: candidate quasi-identifiers, ``category`` or numeric columns (what the ranker
        sees). ``partition``: the same columns as released (e.g. the CSV strings); records are
        equal on a feature when their ``partition`` values are equal (default ``X``).
        ``sensitive``: values of the ℓ-diversity column, aligned with ``X``.
        """
        import pandas as pd

        from dpkit.engine.string_frame import NumpyStringFrame

        part = X if partition is None else partition
        columns = [str(c) for c in X.columns]
        table = pd.DataFrame({c: part[c].to_numpy() for c in columns}, columns=columns)
        table["__y"] = np.asarray(y)
        if sensitive is not None:
            table["__s"] = np.asarray(sensitive)
        frame = NumpyStringFrame.of(table, list(table.columns), "<data>")

        def features_of(rows: np.ndarray | None) -> pd.DataFrame:
            return X if rows is None else X.iloc[rows]

        return self.fit_frame(frame, columns, "__y", features_of, sensitive="__s" if sensitive is not None else None)

    def fit_prepared(self, prep: Any, target: str, sensitive: str | None = None) -> KAnonymitySelector:
        """:meth:`fit_frame` over a :class:`dpkit.algorithms.kanon.frame.Prepared` (its candidates, its
        typed features, its rows)."""
        return self.fit_frame(prep.frame, list(prep.candidates), target, prep.features_of, sensitive=sensitive)

    def fit_frame(self, frame: Any, columns: list[str], target: str, features_of: Any, *,
                  sensitive: str | None = None) -> KAnonymitySelector:
        """Rank ``columns`` of a frame of value codes (a string frame) for predicting ``target``
        and select greedily (Wang & Wan, Algorithm 1). ``features_of(rows)``: the candidates
        typed for the ranker, for the frame's rows ``rows`` (None: every row)."""
        from dpkit.engine.keys import Col, Lookup

        n_rows = frame.count()
        self._validate(n_rows, sensitive)
        values = frame.values(target)
        order = np.argsort(values, kind="stable")  # classes sorted (as factorize(sort=True))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        classes = list(values[order])
        # the classes the rows hold: the frame's dictionary also lists the values of rows dropped
        # for a missing value, so that a target missing in some rows looked like two classes
        (held,) = frame.many([("counts", [Col(target)], [len(values)])])
        present = np.flatnonzero(np.asarray(held).ravel() > 0)
        if present.size < 2:
            raise DataError(
                f"the target has one class ({values[present[0]] if present.size else classes[0]!r}) in every "
                "record: there is nothing to rank the features by; choose another target"
            )
        self.classes_ = classes
        if sensitive is not None and self.l is not None:
            m_s = frame.n_values(sensitive)
            if m_s < self.l:
                raise DataError(
                    f"the sensitive column has only {m_s} distinct value(s): no table can be "
                    f"{self.l}-diverse on it; choose l ≤ {m_s}", param="l"
                )
        start = time.perf_counter()
        if self.ranker == "xgboost":
            from dpkit.algorithms.kanon.xgb_ka import DEFAULT_DEPTH, DEFAULT_TREES, xgboost_gains

            rows = None
            if self.rank_sample and n_rows > self.rank_sample:
                # plain numpy randomness: k-anonymity, not DP; seeded for reproducibility
                rng = np.random.default_rng(0 if self.random_state is None else int(self.random_state))
                rows = np.sort(rng.choice(n_rows, size=int(self.rank_sample), replace=False))
            yr = rank[frame.take([target], rows)[target]]
            # XGBoost wants the classes numbered 0..C-1: renumber those the sample holds
            present, yr = np.unique(yr, return_inverse=True)
            if len(present) < 2:  # a very rare class left out of the sample: use every record
                rows = None
                present, yr = np.unique(rank[frame.take([target], None)[target]], return_inverse=True)
            # the typed features of the sampled rows only (bounded memory at any table size)
            Xr = features_of(rows)
            self.rank_rows_ = len(yr)
            scores = xgboost_gains(
                Xr, yr.ravel(), len(present),
                random_state=0 if self.random_state is None else int(self.random_state),
                n_estimators=self.n_estimators or DEFAULT_TREES,
                max_depth=self.max_depth or DEFAULT_DEPTH,
            )
        else:
            from dpkit.algorithms.kanon.hamdist import pair_difference

            self.rank_rows_ = n_rows
            label = Lookup(target, rank)
            tables = frame.many([("counts", [Col(c), label], [frame.n_values(c), len(classes)]) for c in columns])
            scores = {c: pair_difference(t) for c, t in zip(columns, tables, strict=True)}
        self.rank_seconds_ = time.perf_counter() - start
        # highest score first; ties keep the input column order (stable sort)
        position = {c: i for i, c in enumerate(columns)}
        self.ranking_ = sorted(columns, key=lambda c: (-scores[c], position[c]))
        self.scores_ = scores
        start = time.perf_counter()
        result = greedy_forward(self.ranking_, scores, frame, int(self.k), sensitive=sensitive, l=self.l)
        self.select_seconds_ = time.perf_counter() - start
        chosen = set(result.selected)
        self.selected_ = [c for c in columns if c in chosen]
        self.selection_order_ = list(result.selected)
        self.trials_ = result.trials
        self.class_sizes_ = result.sizes
        self.l_per_class_ = result.l_per_class
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` projected on the selected features (input order)."""
        return X[self.selected_]
