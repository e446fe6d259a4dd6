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

from dpkit.data.counting import distinct_per_group, refine_groups
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
    groups: np.ndarray
    sizes: np.ndarray
    l_per_class: np.ndarray | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def factorize(values: Any) -> tuple[np.ndarray, int]:
    """Integer codes ``[0, m)`` of a column's distinct values (exact equality) and ``m``."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values), use_na_sentinel=False)
    return codes.astype(np.int64), len(uniques)


def greedy_forward(
    order: list[str],
    scores: dict[str, float],
    codes: dict[str, tuple[np.ndarray, int]],
    n_rows: int,
    k: int,
    *,
    sensitive: tuple[np.ndarray, int] | None = None,
    l: int | None = None,  # noqa: E741 — the ℓ of ℓ-diversity
) -> GreedyResult:
    """Algorithm 1's loop: keep each feature of ``order`` that leaves the table k-anonymous.

    ``codes[name] = (value codes, n_values)``. With ``sensitive`` and ``l`` a feature is
    also rejected if some class would hold fewer than ``l`` distinct sensitive values.
    """
    groups = np.zeros(n_rows, dtype=np.int32)  # refine_groups' own id type (< 2^31 records)
    sizes = np.array([n_rows], dtype=np.int64)
    l_class = None
    if sensitive is not None:
        l_class = distinct_per_group(groups, 1, sensitive[0], sensitive[1])
    selected: list[str] = []
    trials: list[Trial] = []
    for name in order:
        c, m = codes[name]
        new_groups, new_sizes = refine_groups(groups, len(sizes), c, m)
        smallest = int(new_sizes.min())
        ok = smallest >= k
        new_l = None
        smallest_l = None
        if sensitive is not None:
            new_l = distinct_per_group(new_groups, len(new_sizes), sensitive[0], sensitive[1])
            smallest_l = int(new_l.min())
            ok = ok and (l is None or smallest_l >= l)
        trials.append(Trial(name, float(scores.get(name, 0.0)), ok, smallest, smallest_l))
        if ok:
            selected.append(name)
            groups, sizes, l_class = new_groups, new_sizes, new_l
    return GreedyResult(selected, trials, groups, sizes, l_class)


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
            raise DpkitUsageError(f"-k must be a whole number ≥ 1, got {self.k!r}")
        if self.k < 1:
            raise DpkitUsageError(f"-k must be ≥ 1, got {self.k}")
        if self.k > n_rows:
            from dpkit.console import private

            raise DataError(private(
                f"-k {self.k} is larger than the table ({n_rows} records): no table of "
                f"{n_rows} records is {self.k}-anonymous; choose k ≤ {n_rows}",
                f"-k {self.k} is larger than the table: no table that small is {self.k}-anonymous; "
                "choose a smaller k",
            ))
        if self.ranker not in RANKERS:
            raise DpkitUsageError(f"--ranker must be one of {', '.join(RANKERS)}, got {self.ranker!r}")
        if self.l is not None:
            if sensitive is None:
                raise DpkitUsageError("--l needs --sensitive COLUMN (the column that must be ℓ-diverse)")
            if isinstance(self.l, bool) or not isinstance(self.l, int | np.integer) or self.l < 1:
                raise DpkitUsageError(f"--l must be a whole number ≥ 1, got {self.l!r}")

    def fit(
        self,
        X: Any,
        y: Any,
        *,
        sensitive: Any = None,
        partition: pd.DataFrame | None = None,
        codes: dict[str, tuple[np.ndarray, int]] | None = None,
        labels: tuple[np.ndarray, list[Any]] | None = None,
        sensitive_codes: tuple[np.ndarray, int] | None = None,
    ) -> KAnonymitySelector:
        """Rank the columns of ``X`` for predicting ``y`` and select greedily.

        ``X``: candidate quasi-identifiers, ``category`` or numeric columns (what the ranker
        sees), or an object with ``candidates``, ``frame`` and ``features_of(rows)`` (a
        :class:`dpkit.anonymity.frame.Prepared`: the features are then built for the
        ranking sample only). ``partition``: the same columns as released (e.g. the CSV
        strings); records are equal on a feature when their ``partition`` values are equal
        (default ``X``). ``sensitive``: values of the ℓ-diversity column, aligned with
        ``X``. ``codes``: the partition already factorized (``name -> (codes, n_values)``),
        to skip that pass; ``labels`` (class codes numbered by sorted class, classes) and
        ``sensitive_codes`` (codes, n_values) likewise for ``y`` and ``sensitive``.
        """
        if hasattr(X, "features_of"):
            columns, features_of = list(X.candidates), X.features_of
            n_rows = X.n_rows if hasattr(X, "n_rows") else len(X.frame)
        else:
            columns, n_rows = list(X.columns), len(X)

            def features_of(rows: np.ndarray | None) -> pd.DataFrame:
                return X if rows is None else X.iloc[rows]

        has_sensitive = sensitive is not None or sensitive_codes is not None
        self._validate(n_rows, sensitive if sensitive is not None else sensitive_codes)
        y_codes, classes = labels if labels is not None else _class_codes(y)
        if len(classes) < 2:
            raise DataError(
                f"the target has one class ({classes[0]!r}) in every record: there is nothing "
                "to rank the features by; choose another target"
            )
        self.classes_ = classes
        if codes is None:
            part = X if partition is None else partition
            codes = {c: factorize(part[c].to_numpy()) for c in columns}
        elif hasattr(codes, "subset"):
            codes = codes.subset(columns)  # a lazy view: one column's codes gathered at a time
        else:
            codes = {c: codes[c] for c in columns}
        sens = sensitive_codes
        if sens is None and has_sensitive:
            sens = factorize(np.asarray(sensitive))
        if sens is not None and self.l is not None and sens[1] < self.l:
            raise DataError(
                f"the sensitive column has only {sens[1]} distinct value(s): no table can be "
                f"{self.l}-diverse on it; choose --l ≤ {sens[1]}"
            )
        start = time.perf_counter()
        if self.ranker == "xgboost":
            from dpkit.anonymity.xgb_ka import DEFAULT_DEPTH, DEFAULT_TREES, xgboost_gains

            rows, yr = None, y_codes
            if self.rank_sample and n_rows > self.rank_sample:
                # plain numpy randomness: k-anonymity, not DP; seeded for reproducibility
                rng = np.random.default_rng(0 if self.random_state is None else int(self.random_state))
                rows = np.sort(rng.choice(n_rows, size=int(self.rank_sample), replace=False))
                yr = y_codes[rows]
            # XGBoost wants the classes numbered 0..C-1: renumber those the sample holds
            present, yr = np.unique(yr, return_inverse=True)
            if len(present) < 2:  # a very rare class left out of the sample: use every record
                rows, yr = None, y_codes
                present = np.arange(len(classes))
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
            from dpkit.anonymity.hamdist import hamming_scores

            self.rank_rows_ = n_rows
            scores = hamming_scores(codes, y_codes, len(classes))
        self.rank_seconds_ = time.perf_counter() - start
        # highest score first; ties keep the input column order (stable sort)
        position = {c: i for i, c in enumerate(columns)}
        self.ranking_ = sorted(columns, key=lambda c: (-scores[c], position[c]))
        self.scores_ = scores
        start = time.perf_counter()
        result = greedy_forward(
            self.ranking_, scores, codes, n_rows, int(self.k), sensitive=sens, l=self.l
        )
        self.select_seconds_ = time.perf_counter() - start
        chosen = set(result.selected)
        self.selected_ = [c for c in columns if c in chosen]
        self.selection_order_ = list(result.selected)
        self.trials_ = result.trials
        self.class_of_record_ = result.groups
        self.class_sizes_ = result.sizes
        self.l_per_class_ = result.l_per_class
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` projected on the selected features (input order)."""
        return X[self.selected_]


def _class_codes(y: Any) -> tuple[np.ndarray, list[Any]]:
    import pandas as pd

    codes, labels = pd.factorize(np.asarray(y), sort=True, use_na_sentinel=False)
    return codes.astype(np.int64), list(labels)
