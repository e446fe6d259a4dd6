"""`dpkit kanon-select` as a library call: a CSV table in, the k-anonymous projection out.

No I/O: takes the table as read (strings), returns the output frame and the report's
release section. The output is the selected quasi-identifiers, the target, the kept
columns and the sensitive column, in input order; it is k-anonymous (and ℓ-diverse when
asked) on the selected quasi-identifiers by construction (Wang & Wan, Algorithm 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpkit.algorithms.kanon.checks import size_histogram
from dpkit.algorithms.kanon.frame import prepare
from dpkit.algorithms.kanon.greedy import DEFAULT_RANK_SAMPLE, KAnonymitySelector
from dpkit.errors import DataError, DpkitWarning, warn

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.schema.parse import Schema

SCORE_NAMES = {
    "xgboost": "XGBoost average split gain (importance_type='gain')",
    "hamming": "fraction of cross-class record pairs differing on the feature (Greedy-Hamdist)",
}
ALGORITHMS = {"xgboost": "xgb-ka", "hamming": "greedy-hamdist"}


@dataclass
class Selection:
    """The result: the selector, the candidates, the report's release section, and the rows
    used (a string frame: :meth:`write` writes the output columns of them)."""

    frame: Any
    selector: KAnonymitySelector
    candidates: list[str]
    release: dict[str, Any]
    columns: list[str]

    @property
    def output(self) -> pd.DataFrame:
        """The output table (``category`` columns of the strings as read)."""
        return self.frame.categories(self.columns)

    def write(self, path: str, *, delimiter: str = ",") -> None:
        """Write the output columns of the rows used (CSV or Parquet; atomically)."""
        self.frame.write_rows(self.columns, path, delimiter=delimiter)


def kanon_select(
    data: Any,
    *,
    target: str,
    k: int,
    quasi_identifiers: list[str] | None = None,
    schema: Schema | None = None,
    ranker: str = "xgboost",
    keep: list[str] | None = None,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741
    require_features: bool = False,
    seed: int | None = None,
    rank_sample: int | None = DEFAULT_RANK_SAMPLE,
    source: str = "<data>",
) -> Selection:
    """Select a k-anonymous set of quasi-identifiers of ``data`` (a string frame of any engine,
    or a DataFrame of strings) and project the table on it.

    If no candidate can be kept, the output is the target (and kept columns) alone — one
    equivalence class, k-anonymous since k ≤ the number of records — with a warning, or a
    :class:`DataError` when ``require_features`` is set.
    """
    keep = list(keep or [])
    prep = prepare(
        data, target=target, quasi_identifiers=quasi_identifiers, keep=keep,
        sensitive=sensitive, schema=schema, source=source,
    )
    selector = KAnonymitySelector(k, ranker=ranker, l=l, random_state=seed, rank_sample=rank_sample)
    selector.fit_prepared(prep, target, sensitive)
    if not selector.selected_:
        what = f"{k}-anonymous" + (f" and {l}-diverse" if l else "")
        if require_features:
            raise DataError(
                f"no quasi-identifier can be kept with the table {what} "
                "(require_features); lower k or name other quasi-identifiers", param="require_features"
            )
        if prep.candidates:
            warn(
                f"no quasi-identifier can be kept with the table {what}: writing the target "
                "(and kept columns) only; require features to refuse instead",
                DpkitWarning,
            )
    chosen = set(selector.selected_) | {target, *keep} | ({sensitive} if sensitive else set())
    columns = [c for c in prep.header if c in chosen]
    release = _release(selector, prep.candidates, prep.dropped_identifiers, ranker, k, sensitive, l)
    return Selection(frame=prep.frame, selector=selector, candidates=prep.candidates, release=release,
                     columns=columns)


def _release(
    sel: KAnonymitySelector,
    candidates: list[str],
    dropped: list[str],
    ranker: str,
    k: int,
    sensitive: str | None,
    l: int | None,  # noqa: E741
) -> dict[str, Any]:
    sizes = sel.class_sizes_
    trials = {t.feature: t for t in sel.trials_}
    ranking = []
    for rank, name in enumerate(sel.ranking_, start=1):
        t = trials[name]
        entry: dict[str, Any] = {"rank": rank, "feature": name, "score": sel.scores_[name], "selected": t.kept}
        if not t.kept:
            entry["smallest_class_if_added"] = t.smallest_class
            if t.smallest_l is not None:
                entry["smallest_l_if_added"] = t.smallest_l
        ranking.append(entry)
    release: dict[str, Any] = {
        "score": SCORE_NAMES[ranker],
        "candidates": list(candidates),
        "ranking": ranking,
        "selected": list(sel.selected_),
        "selection_order": list(sel.selection_order_),
        "rejected": [
            {"feature": t.feature, "smallest_class": t.smallest_class}
            | ({"smallest_l": t.smallest_l} if t.smallest_l is not None else {})
            for t in sel.trials_
            if not t.kept
        ],
        "identifier_like_left_out": list(dropped),
        "equivalence_classes": {
            "classes": len(sizes),
            "smallest": int(sizes.min()),
            "largest": int(sizes.max()),
            "histogram": size_histogram(sizes, k),
        },
    }
    release["seconds"] = {"ranking": round(sel.rank_seconds_, 4), "greedy": round(sel.select_seconds_, 4)}
    if sensitive is not None and sel.l_per_class_ is not None:
        release["l_diversity"] = {
            "sensitive": sensitive,
            "l": int(sel.l_per_class_.min()),
            "l_required": l,
            "kind": "distinct",
        }
    return release
