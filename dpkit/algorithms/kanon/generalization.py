"""`dpkit kanon-select --generalize` as a library call: ranking, Flash lattice search, suppression.

No I/O: takes the table as read (strings) and the schema (whose taxonomy trees and numeric
bounds are the generalization hierarchies), returns the generalized, k-anonymous table
(suppressed records removed) and the report's release section.

1. **Rank** the candidates as XGB-KA does (or Greedy-Hamdist's Hamming score).
2. **Lattice**: the highest-ranked candidates, as many as keep the full-domain lattice
   within ``max_nodes`` nodes, are searched with Flash (:mod:`dpkit.algorithms.kanon.lattice`) for
   the anonymous node (≤ ``max_suppression`` of the records suppressed) that is best by the
   classification metric.
3. **Extension**: every further candidate, in rank order, is tried at each of its levels
   with the others fixed; it enters at the level that improves the classification metric
   most while the table stays anonymous, or stays dropped (its top level).
4. **Output**: kept columns relabelled with their level's labels (taxonomy node names,
   ``[lo,hi)`` intervals, or the values as written at level 0), the records of classes
   smaller than k (or less than ℓ-diverse) suppressed, i.e. removed, and counted.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.algorithms.kanon.checks import size_histogram
from dpkit.algorithms.kanon.frame import prepare
from dpkit.algorithms.kanon.greedy import DEFAULT_RANK_SAMPLE, KAnonymitySelector
from dpkit.algorithms.kanon.hierarchy import Ladder, categorical_ladder, numeric_ladder
from dpkit.algorithms.kanon.lattice import NodeResult, Problem, flash
from dpkit.data.counting import compress_rows, values_present
from dpkit.errors import DpkitUsageError

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.schema.parse import Schema

DEFAULT_MAX_SUPPRESSION = 0.02
DEFAULT_MAX_NODES = 20_000
# the weight of the loss metric beside the classification metric: among nodes that classify
# about as well, prefer the one that keeps more detail (0.1 · LM: dropping a column of 10
# costs as much as 1 % more misclassified or suppressed records)
LOSS_WEIGHT = 0.1
UTILITY = (
    "CM + 0.1·LM (Iyengar, KDD 2002): CM = fraction of records suppressed or not of their "
    "class's majority target value; LM = mean normalized generalization of a cell (suppressed "
    "or dropped = 1); ties: discernibility Σ|E|² + suppressed·n"
)


@dataclass
class Generalization:
    output: pd.DataFrame
    levels: dict[str, int]
    ladders: dict[str, Ladder]
    suppressed: int
    release: dict[str, Any]


def _problem(
    ladders: list[Ladder], bases: list[np.ndarray], y: tuple[np.ndarray, int],
    sens: tuple[np.ndarray, int] | None, k: int, max_suppressed: int, l: int | None,  # noqa: E741
) -> tuple[Problem, np.ndarray]:
    """The weighted distinct rows of ``bases`` (+ target, sensitive) and their level codes."""
    cols = [*bases, y[0]] + ([sens[0]] if sens else [])
    cards = [len(lad.levels[0].maps) for lad in ladders] + [y[1]] + ([sens[1]] if sens else [])
    row_of, distinct, weights = compress_rows(cols, cards)
    m = len(ladders)
    level_codes = [[lv.maps[distinct[j]] for lv in lad.levels] for j, lad in enumerate(ladders)]
    level_loss = [[lv.loss[lv.maps[distinct[j]]] for lv in lad.levels] for j, lad in enumerate(ladders)]
    prob = Problem(
        level_codes, level_loss, weights, distinct[m], y[1], k, max_suppressed,
        sensitive=distinct[m + 1] if sens else None, n_sensitive=sens[1] if sens else 0, l=l,
        loss_weight=LOSS_WEIGHT,
    )
    return prob, row_of


def kanon_generalize(
    df: pd.DataFrame,
    *,
    target: str,
    k: int,
    schema: Schema,
    quasi_identifiers: list[str] | None = None,
    ranker: str = "xgboost",
    keep: list[str] | None = None,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741
    max_suppression: float = DEFAULT_MAX_SUPPRESSION,
    max_nodes: int = DEFAULT_MAX_NODES,
    seed: int | None = None,
    rank_sample: int | None = DEFAULT_RANK_SAMPLE,
    source: str = "<data>",
) -> Generalization:
    """Generalize and suppress ``df`` into a k-anonymous (ℓ-diverse) table of good utility."""
    if not 0 <= max_suppression < 1:
        raise DpkitUsageError(f"max_suppression must be in [0, 1), got {max_suppression}", param="max_suppression")
    keep = list(keep or [])
    prep = prepare(
        df, target=target, quasi_identifiers=quasi_identifiers, keep=keep,
        sensitive=sensitive, schema=schema, source=source,
    )
    n = prep.n_rows
    start = time.perf_counter()
    selector = KAnonymitySelector(k, ranker=ranker, l=l, random_state=seed, rank_sample=rank_sample)
    selector.fit_prepared(prep, target, sensitive)
    rank_seconds = time.perf_counter() - start
    start = time.perf_counter()
    ranking = list(selector.ranking_)
    ladders, bases = _ladders(ranking, schema, prep)
    y = _compact(prep.codes[target][0])
    sens = _compact(prep.codes[sensitive][0]) if sensitive else None
    max_suppressed = int(math.floor(max_suppression * n + 1e-9))

    # 2. Flash over the ranking's prefix
    lattice_cols: list[str] = []
    size = 1
    for c in ranking:
        s = ladders[c].height + 1
        if size * s > max_nodes:
            break
        lattice_cols.append(c)
        size *= s
    scores = selector.scores_
    if lattice_cols:
        prob, _ = _problem([ladders[c] for c in lattice_cols], [bases[c] for c in lattice_cols],
                           y, sens, k, max_suppressed, l)
        search = flash(prob, [scores[c] for c in lattice_cols])
        best_levels = dict(zip(lattice_cols, search.best.levels, strict=True))
        search_info = {"lattice_nodes": search.nodes, "checked": search.checked,
                       "minimal_anonymous": search.minimal}
    else:
        best_levels = {}
        search_info = {"lattice_nodes": 1, "checked": 0, "minimal_anonymous": 1}

    # 3. extension over every candidate, the lattice's at their chosen level
    full, row_of = _problem([ladders[c] for c in ranking], [bases[c] for c in ranking], y, sens,
                            k, max_suppressed, l)
    levels, extension = _extend(full, ranking, ladders, best_levels)
    bad, final, sizes, ls = full.classes(levels)
    search_seconds = time.perf_counter() - start

    # 4. output
    suppressed_rows = bad[row_of]
    kept_rows = ~suppressed_rows
    chosen = dict(zip(ranking, levels, strict=True))
    kept_qis = [c for c in ranking if chosen[c] < ladders[c].height]
    out_cols = [c for c in prep.header if c in set(kept_qis) | {target, *keep} | ({sensitive} if sensitive else set())]
    output = _output(prep, out_cols, kept_qis, ladders, bases, chosen, kept_rows)
    suppressed = int(suppressed_rows.sum())
    search_info["extension_checks"] = full.checks
    release = _release(
        selector=selector, ranking=ranking, ladders=ladders, chosen=chosen, kept_qis=kept_qis, prep=prep,
        search_info=search_info, extension=extension, final=final, lattice_cols=lattice_cols,
        suppressed=suppressed, n=n, max_suppression=max_suppression, max_suppressed=max_suppressed, k=k,
        sensitive=sensitive, l=l, sizes=sizes, ls=ls, seconds={"ranking": rank_seconds, "search": search_seconds},
    )
    return Generalization(output=output, levels=chosen, ladders=ladders, suppressed=suppressed, release=release)


def _ladders(ranking: list[str], schema: Schema, prep: Any) -> tuple[dict[str, Ladder], dict[str, np.ndarray]]:
    """Each ranked candidate's generalization ladder and the rows' codes at its base level."""
    ladders: dict[str, Ladder] = {}
    bases: dict[str, np.ndarray] = {}
    for c in ranking:
        col = schema.columns[c]
        if col.kind == "categorical":
            lut, _ = prep.lookups[c]  # value code -> leaf code
            bases[c] = lut[prep.codes[c][0]].astype(np.int64)
            ladders[c] = categorical_ladder(col)
        else:
            codes, m = prep.codes[c]
            present = values_present(codes, m)  # values only in dropped rows take no part
            values = np.where(present, prep.lookups[c][0], 0.0)  # clipped number of each value code
            written = np.where(present, prep.values[c], None)
            bases[c] = codes
            ladders[c] = numeric_ladder(col, values, [str(w) for w in written])
    return ladders, bases


def _extend(full: Any, ranking: list[str], ladders: dict[str, Ladder],
            best_levels: dict[str, int]) -> tuple[list[int], list[dict[str, Any]]]:
    """The extension over every candidate outside the lattice, the lattice's at their chosen
    level: each in rank order takes the finest level that keeps the table anonymous and improves
    it (coarse to fine; monotone, so the first failure stops it)."""
    levels = [best_levels.get(c, ladders[c].height) for c in ranking]
    current = full.evaluate(levels)
    extension = []
    for j, c in enumerate(ranking):
        if c in best_levels:
            continue
        best: NodeResult | None = None
        for h in range(ladders[c].height - 1, -1, -1):
            trial = list(levels)
            trial[j] = h
            res = full.evaluate(trial)
            if not res.anonymous:
                break
            if best is None or res.key < best.key:
                best = res
        if best is not None and best.key < current.key:
            levels = list(best.levels)
            current = best
            extension.append({"feature": c, "level": levels[j]})
        else:
            extension.append({"feature": c, "level": None})
    return levels, extension


def _output(prep: Any, out_cols: list[str], kept_qis: list[str], ladders: dict[str, Ladder],
            bases: dict[str, np.ndarray], chosen: dict[str, int], kept_rows: np.ndarray) -> pd.DataFrame:
    """The rows kept, each kept quasi-identifier at its chosen level, the other columns as read."""
    import pandas as pd

    data: dict[str, Any] = {}
    for c in out_cols:
        if c in kept_qis:
            lv = ladders[c].levels[chosen[c]]
            labels = list(lv.labels)
            leaf = lv.maps[bases[c][kept_rows]]
            if len(set(labels)) == len(labels):  # codes + labels: no Python string per cell
                data[c] = pd.Categorical.from_codes(leaf, categories=labels)
            else:
                data[c] = np.asarray(labels, dtype=object)[leaf]
        else:
            data[c] = prep.column(c)[kept_rows]
    return pd.DataFrame(data, columns=out_cols)


def _compact(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Codes renumbered ``0..m-1`` in first-seen order over the rows kept (as ``factorize``)."""
    import pandas as pd

    seen = pd.unique(codes)
    lut = np.zeros(int(codes.max()) + 1 if len(codes) else 0, dtype=np.int64)
    lut[seen] = np.arange(len(seen))
    return lut[codes], len(seen)


def _release(
    *,
    selector: KAnonymitySelector,
    ranking: list[str],
    ladders: dict[str, Ladder],
    chosen: dict[str, int],
    kept_qis: list[str],
    prep: Any,
    search_info: dict[str, Any],
    extension: list[dict[str, Any]],
    final: NodeResult,
    lattice_cols: list[str],
    suppressed: int,
    n: int,
    max_suppression: float,
    max_suppressed: int,
    k: int,
    sensitive: str | None,
    l: int | None,  # noqa: E741
    sizes: np.ndarray,
    ls: np.ndarray | None,
    seconds: dict[str, float],
) -> dict[str, Any]:
    """The report's release section: ranking, chosen levels, cut, suppression, classes."""
    from dpkit.algorithms.kanon.select import SCORE_NAMES

    cut: dict[str, Any] = {}
    as_written: list[str] = []
    for c in kept_qis:
        lv = ladders[c].levels[chosen[c]]
        if lv.cut is None:
            as_written.append(c)
        else:
            cut[c] = lv.cut
    release: dict[str, Any] = {
        "score": SCORE_NAMES[selector.ranker],
        "candidates": list(prep.candidates),
        "ranking": [{"rank": i + 1, "feature": c, "score": selector.scores_[c], "selected": c in kept_qis}
                    for i, c in enumerate(ranking)],
        "selected": [c for c in prep.candidates if c in kept_qis],
        "identifier_like_left_out": list(prep.dropped_identifiers),
        "generalization": {
            "search": "flash (Kohlmayer et al. 2012) over the full-domain lattice of the ranking's prefix, "
                      "then the other candidates in rank order",
            "utility": UTILITY,
            "lattice_columns": lattice_cols,
            **search_info,
            "extension": extension,
            "levels": {
                c: {"level": chosen[c], "height": ladders[c].height,
                    "groups": len(set(ladders[c].levels[chosen[c]].maps.tolist())),
                    "meaning": ladders[c].describe(chosen[c])}
                for c in ranking
            },
            "classification_metric": round(final.classification_metric, 6),
            "discernibility": final.discernibility,
        },
        "cut": cut,
        "as_written": as_written,
        "dropped": [c for c in ranking if c not in kept_qis],
        "suppression": {"records": suppressed, "fraction": round(suppressed / n, 6) if n else 0.0,
                        "max_fraction": max_suppression, "max_records": max_suppressed},
        "records": {"input": n, "output": n - suppressed},
        "equivalence_classes": {
            "classes": len(sizes),
            "smallest": int(sizes.min()) if len(sizes) else 0,
            "largest": int(sizes.max()) if len(sizes) else 0,
            "histogram": size_histogram(sizes, k),
        },
        "seconds": {name: round(v, 4) for name, v in seconds.items()},
    }
    if ls is not None and len(ls):
        release["l_diversity"] = {"sensitive": sensitive, "l": int(ls.min()), "l_required": l, "kind": "distinct"}
    return release
