"""The generalization lattice and its search (Flash, Kohlmayer et al. 2012).

A *node* is a vector of generalization levels, one per quasi-identifier (level 0 = the
values as written, the top level = the column dropped). A node is *anonymous* when, after
suppressing every record of an equivalence class smaller than k (or holding fewer than ℓ
distinct sensitive values), at most ``max_suppressed`` records are suppressed. Both tests
are monotone: generalizing any column merges classes, so the suppressed records can only
shrink — an anonymous node's generalizations are anonymous and a non-anonymous node's
specializations are not (Samarati 2001; LeFevre et al., Incognito, 2005). Flash exploits
this with *predictive tagging*.

Flash (F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. A. Kuhn, "Flash: Efficient,
Stable and Optimal K-Anonymity", PASSAT/SocialCom 2012, Algorithm 1): visit the nodes
bottom-up level by level, in the order of a heuristic; from each untagged node build a
*path* of untagged nodes by repeatedly stepping to a successor (one column one level up,
chosen by the heuristic), then binary-search the path for its lowest anonymous node,
checking only the nodes the search lands on; every check tags all of the node's
generalizations (anonymous) or specializations (not anonymous). When every node is tagged,
the minimal anonymous nodes are known; the search then scores them (and every other node
it checked and found anonymous) with the utility measure and returns the best. Our reading, written from the paper (no code taken from ARX):

- Heuristic: the classifier ranking (XGB-KA gain or the Hamming score). Within a lattice
  level, nodes that keep the important columns finer come first, and a path generalizes the
  least important column it can.
- Utility: Iyengar's classification metric (KDD 2002) — the fraction of records that are
  suppressed or not of their class's majority label, lower is better — with the
  discernibility metric Σ|E|² + |suppressed|·n (Bayardo & Agrawal 2005) breaking ties. It is
  evaluated on the minimal anonymous nodes only (for a monotone measure the optimum is among
  them; the classification metric is not strictly monotone, so this is the usual frontier
  heuristic, stated in docs/kanon-select.md).

No I/O, no randomness. Counting goes through :mod:`dpkit.data.counting`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpkit.data.counting import distinct_per_group, weighted_class_counts, weighted_classes


@dataclass(frozen=True)
class NodeResult:
    """One checked node: anonymity, suppression and utility."""

    levels: tuple[int, ...]
    anonymous: bool
    suppressed: int
    classes: int  # equivalence classes left after suppression
    classification_metric: float  # Iyengar 2002: (minority + suppressed) / n
    loss_metric: float  # Iyengar 2002: mean normalized generalization per cell, suppressed = 1
    discernibility: int  # Σ |E|² over kept classes + suppressed · n
    loss_weight: float = 0.0

    @property
    def utility(self) -> float:
        """The measure minimized: classification metric + loss_weight · loss metric."""
        return self.classification_metric + self.loss_weight * self.loss_metric

    @property
    def key(self) -> tuple[float, int, int]:
        return (round(self.utility, 12), self.discernibility, sum(self.levels))


class Problem:
    """Distinct (weighted) rows of the quasi-identifiers' base codes, target and sensitive column.

    ``level_codes[j][h]`` is column j's group in each distinct row at level h.
    """

    def __init__(
        self,
        level_codes: Sequence[Sequence[np.ndarray]],
        level_loss: Sequence[Sequence[np.ndarray]],
        weights: np.ndarray,
        y: np.ndarray,
        n_classes: int,
        k: int,
        max_suppressed: int,
        *,
        sensitive: np.ndarray | None = None,
        n_sensitive: int = 0,
        l: int | None = None,  # noqa: E741
        loss_weight: float = 0.0,
    ) -> None:
        self.level_codes = [list(c) for c in level_codes]
        self.level_loss = [list(c) for c in level_loss]
        wf = np.asarray(weights, dtype=float)
        self.total_loss = [[float(wf @ x) for x in col] for col in self.level_loss]
        self.loss_weight = loss_weight
        self.cards = [[int(c.max()) + 1 if len(c) else 1 for c in col] for col in self.level_codes]
        self.heights = [len(col) - 1 for col in self.level_codes]
        self.weights = weights
        self.n = int(weights.sum())
        self.y = y
        self.n_classes = n_classes
        self.k = k
        self.max_suppressed = max_suppressed
        self.sensitive = sensitive
        self.n_sensitive = n_sensitive
        self.l = l
        self.checks = 0

    def bad_rows(self, levels: Sequence[int]) -> tuple[np.ndarray, NodeResult]:
        """The distinct rows suppressed at ``levels`` (a mask) and the node's result."""
        bad, result, _, _ = self.classes(levels)
        return bad, result

    def classes(self, levels: Sequence[int]) -> tuple[np.ndarray, NodeResult, np.ndarray, np.ndarray | None]:
        """As :meth:`bad_rows`, plus the kept classes' sizes and distinct sensitive values."""
        self.checks += 1
        codes = [self.level_codes[j][h] for j, h in enumerate(levels) if h < self.heights[j]]
        cards = [self.cards[j][h] for j, h in enumerate(levels) if h < self.heights[j]]
        if codes:
            groups, sizes = weighted_classes(codes, cards, self.weights)
        else:
            groups, sizes = np.zeros(len(self.weights), dtype=np.int64), np.array([self.n], dtype=np.int64)
        bad = sizes < self.k
        ls = None
        if self.sensitive is not None:
            ls = distinct_per_group(groups, len(sizes), self.sensitive, self.n_sensitive)
            if self.l is not None:
                bad |= ls < self.l
        suppressed = int(sizes[bad].sum())
        kept = ~bad
        anonymous = suppressed <= self.max_suppressed
        if not anonymous:  # utility is only ever compared among anonymous nodes
            result = NodeResult(tuple(int(h) for h in levels), False, suppressed, int(kept.sum()),
                                math.inf, math.inf, 0, self.loss_weight)
            return bad[groups], result, sizes[kept], (ls[kept] if ls is not None else None)
        counts = weighted_class_counts(groups, self.y, len(sizes), self.n_classes, self.weights)
        minority = sizes - counts.max(axis=1)
        bad_rows = np.flatnonzero(bad[groups])
        w_bad = self.weights[bad_rows].astype(float)
        # loss of the kept cells: every row's loss minus the suppressed rows' (few) loss
        loss = sum(self.total_loss[j][h] - float(w_bad @ self.level_loss[j][h][bad_rows])
                   for j, h in enumerate(levels))
        m = max(len(levels), 1)
        result = NodeResult(
            levels=tuple(int(h) for h in levels),
            anonymous=True,
            suppressed=suppressed,
            classes=int(kept.sum()),
            classification_metric=(int(minority[kept].sum()) + suppressed) / self.n,
            loss_metric=(loss / m + suppressed) / self.n,
            discernibility=int(np.sum(sizes[kept].astype(np.int64) ** 2)) + suppressed * self.n,
            loss_weight=self.loss_weight,
        )
        return bad[groups], result, sizes[kept], (ls[kept] if ls is not None else None)

    def evaluate(self, levels: Sequence[int]) -> NodeResult:
        return self.bad_rows(levels)[1]


@dataclass
class SearchResult:
    best: NodeResult
    nodes: int  # lattice size
    checked: int  # nodes whose anonymity was computed
    minimal: int  # minimal anonymous nodes (all scored)
    anonymous: np.ndarray | None = None  # per lattice node (C order over the levels): tagged anonymous


def flash(problem: Problem, importance: Sequence[float]) -> SearchResult:
    """Flash over the full lattice of ``problem``; the best minimal anonymous node.

    ``importance[j]``: the ranking score of column j (higher = keep finer). The top node
    (every column dropped) is always anonymous when k ≤ n, so a best node always exists.
    """
    heights = problem.heights
    shape = tuple(h + 1 for h in heights)
    n_nodes = math.prod(shape)
    nodes = np.indices(shape).reshape(len(shape), -1).T.astype(np.int64)  # row i = node i
    strides = np.array([math.prod(shape[j + 1 :]) for j in range(len(shape))], dtype=np.int64)
    state = np.zeros(n_nodes, dtype=np.int8)  # 0 untagged, 1 anonymous, -1 not anonymous
    results: dict[int, NodeResult] = {}
    imp = np.asarray(importance, dtype=float)
    # columns by importance, most important first; weights for the within-level order
    rank_of = np.empty(len(imp), dtype=np.int64)
    rank_of[np.argsort(-imp, kind="stable")] = np.arange(len(imp))
    weight = (len(imp) - rank_of).astype(float)  # the most important column weighs most
    level_sum = nodes.sum(axis=1)
    order = np.lexsort((np.arange(n_nodes), nodes @ weight, level_sum))
    # successor steps: least important column first
    step_order = np.argsort(rank_of)[::-1]

    def check(i: int) -> None:
        res = problem.evaluate(nodes[i])
        results[i] = res
        v = nodes[i]
        if res.anonymous:
            state[(state == 0) & (nodes >= v).all(axis=1)] = 1
            state[i] = 1
        else:
            state[(state == 0) & (nodes <= v).all(axis=1)] = -1
            state[i] = -1

    for start in order:
        if state[start] != 0:
            continue
        path = [int(start)]
        cur = int(start)
        while True:
            nxt = -1
            for j in step_order:
                if nodes[cur, j] < heights[j] and state[cur + strides[j]] == 0:
                    nxt = int(cur + strides[j])
                    break
            if nxt < 0:
                break
            path.append(nxt)
            cur = nxt
        lo, hi = 0, len(path) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            i = path[mid]
            if state[i] == 0:
                check(i)
            if state[i] == 1:
                hi = mid - 1
            else:
                lo = mid + 1
    checked = len(results)
    # minimal anonymous nodes: anonymous, and every direct specialization is not
    anon = np.flatnonzero(state == 1)
    minimal = []
    for i in anon:
        v = nodes[i]
        if all(state[i - strides[j]] == -1 for j in range(len(shape)) if v[j] > 0):
            minimal.append(int(i))
    for i in minimal:
        if i not in results:
            results[i] = problem.evaluate(nodes[i])
    # every checked anonymous node is a candidate too (they cost nothing more to score)
    best = min((r for r in results.values() if r.anonymous), key=lambda r: r.key)
    return SearchResult(best=best, nodes=n_nodes, checked=checked, minimal=len(minimal), anonymous=state == 1)
