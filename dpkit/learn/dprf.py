"""DiffPRFs: a differentially private random forest (Mu, Ding, Song & Lu, J. on
Communications 37(9), 2016; our reading in docs/algorithms.md §2).

Each of ``n_trees`` trees is grown top-down to depth ``max_depth``; its ε is split evenly
over its ``max_depth + 1`` levels (ε_l each). At an inner node (the paper's steps 8–12):

* ``features_per_node`` attributes are drawn at random (a data-independent choice from the
  public attribute list);
* (1 − ``size_share``)·ε_l is split into n+1 equal parts (n = numeric attributes drawn):
  one continuous exponential mechanism per numeric attribute picks its split point, one
  exponential mechanism picks the split attribute. A numeric split has two children
  (``x <= t``, ``x > t``); a categorical one has one child per value of the public domain;
* ``size_share``·ε_l releases one noisy class-count histogram of the children (DLap,
  Δ = 1 for disjoint cells); a child's noisy size is the sum of its counts. A child is a
  leaf at depth ``max_depth``, when its noisy size is below ``leaf_factor``·√2·|C|/ε_c
  (Friedman & Schuster 2010: the count per class would drown in noise of standard
  deviation √2/ε_c, ε_c = (1 − size_share)·ε_l), or when no attribute can split it.

A leaf's class counts get DLap noise with all the ε its records have left, averaged with
its counts from the parent's histogram (negatives → 0); the forest predicts the class with
the largest mean class probability over the trees (the paper's §2.2). The root's own class
counts cost ``size_share``·ε_l.

Budgets compose along root-to-leaf paths: the children of a node hold disjoint records,
so they are the parts of one parallel composition (McSherry 2009) nested inside the node's
accountant, and every record's path spends exactly the tree's ε.

Utilities (``utility``): ``info-gain`` (the paper's first), ``max`` (max-class-frequency
sum, Δ = 1, monotone) and ``gini`` (Friedman & Schuster's Gini utility, Δ = 2; an
addition: its sensitivity does not grow with the node size).

Where dpkit departs from the paper (docs/algorithms.md §2):

* **No bootstrap.** The paper draws each tree's sample with replacement, but a record drawn
  twice doubles the sensitivity of every count while its accounting assumes Δ = 1.
  ``sampling="disjoint"`` (default) assigns every record to one tree uniformly at random —
  a data-independent partition, so a neighbouring data set differs in one tree's part
  only and every tree may spend the whole ε (parallel composition); ``sampling="none"``
  gives every tree all records and ε/t (sequential composition).
* **Information gain with a capped logarithm.** Friedman & Schuster bound the sensitivity
  of n·H(C|A) by log₂(N+1) + 1/ln 2 for nodes of at most N records, which is not a bound
  for all data sets when N is only a noisy size. We use the utility
  −Σ_j Σ_c n_jc · min(log₂(n_j/n_jc), L) with L = log₂(n̂ + 1) computed from the noisy
  size n̂ (public): its sensitivity is at most L + 1/ln 2 for every pair of neighbouring
  data sets, and it equals the paper's utility whenever the node has at most n̂ records.
* **Stopping only on noisy values.** The paper also stops when "all records of the node
  have one class"; that exact test leaks, so only the depth and the noisy size decide.
* **Leaves spend what is left.** The paper gives every level ε_l; a leaf above the last
  level would leave the budget of the levels below it unspent. Here it spends that budget
  on its counts (the deepest leaves get the paper's ε_l), and the noisy counts released
  for the leaf rule are reused in the leaf instead of a size-only estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpkit.data.counting import class_counts, split_rows, threshold_class_counts
from dpkit.errors import DpkitUsageError
from dpkit.learn.model import Feature, ForestModel, Node, features_from_schema
from dpkit.privacy import (
    Accountant,
    discrete_laplace,
    exponential,
    exponential_interval,
    validate_epsilon,
)

UTILITIES = ("info-gain", "max", "gini")
SAMPLINGS = ("disjoint", "none")
_INV_LN2 = 1.0 / math.log(2)


# --------------------------------------------------------------------------- utilities


def split_utility(counts: np.ndarray, utility: str, cap: float = math.inf) -> np.ndarray:
    """Utility of candidate splits from their child × class count matrices.

    ``counts`` has shape ``(..., n_children, n_classes)``; returns shape ``(...)``. ``cap``
    is the logarithm cap L of the information-gain utility (see the module docstring).
    These are functions of exact counts: they only ever feed a selection mechanism.
    """
    m = np.asarray(counts, dtype=float)
    if utility == "max":
        return m.max(axis=-1).sum(axis=-1)
    n_j = m.sum(axis=-1, keepdims=True)
    if utility == "gini":
        with np.errstate(divide="ignore", invalid="ignore"):
            sq = np.where(n_j[..., 0] > 0, (m * m).sum(axis=-1) / n_j[..., 0], 0.0)
        return -(n_j[..., 0] - sq).sum(axis=-1)
    if utility == "info-gain":
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.where(m > 0, np.log2(n_j / m), 0.0)
        return -(m * np.minimum(logs, cap)).sum(axis=(-2, -1))
    raise DpkitUsageError(f"utility must be one of {', '.join(UTILITIES)}, got {utility!r}")


def utility_sensitivity(utility: str, cap: float) -> tuple[float, bool]:
    """(Δ, monotone) of a utility: max 1 (monotone), gini 2 (F&S 2010), info-gain L + 1/ln 2."""
    if utility == "max":
        # adding a record raises one n_jc by 1: Σ_j max_c n_jc rises by 0 or 1, never falls
        return 1.0, True
    if utility == "gini":
        return 2.0, False
    return cap + _INV_LN2, False


# --------------------------------------------------------------------------- the forest


class DiffPRFs:
    """A differentially private random forest (DiffPRFs, Mu et al. 2016).

    Parameters are stored as given (scikit-learn style) and checked by :meth:`fit`.

    epsilon: total ε of the forest. n_trees, max_depth: forest shape (the paper's t, d).
    features_per_node: attributes drawn per node (int, ``"sqrt"`` = ⌊√|F|⌋ as in the paper,
    or ``"all"``). utility: ``"info-gain"``, ``"max"`` or ``"gini"``. sampling:
    ``"disjoint"`` or ``"none"`` (see the module docstring: no bootstrap). size_share: the
    part of an inner node's level budget spent on its children's noisy class counts.
    leaf_factor: multiplies the Friedman–Schuster leaf threshold √2·|C|/ε_c.

    After :meth:`fit`: ``model_`` (the released :class:`ForestModel`), ``features_``,
    ``classes_``, ``spends_by_tree_`` (per tree: its accountant entries and, per level, the
    number of inner nodes and leaves and the most ε any of them spent).
    """

    def __init__(
        self,
        epsilon: float,
        n_trees: int = 25,
        max_depth: int = 5,
        features_per_node: int | str = "sqrt",
        utility: str = "max",
        sampling: str = "disjoint",
        size_share: float = 0.5,
        leaf_factor: float = 1.0,
    ) -> None:
        self.epsilon = epsilon
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.features_per_node = features_per_node
        self.utility = utility
        self.sampling = sampling
        self.size_share = size_share
        self.leaf_factor = leaf_factor

    # ------------------------------------------------------------------ checks

    def _validate(self, n_features: int) -> int:
        for name, lo in (("n_trees", 1), ("max_depth", 0)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < lo:
                raise DpkitUsageError(f"{name} must be an integer >= {lo}, got {v!r}")
        if self.max_depth > 30:
            raise DpkitUsageError(f"max_depth={self.max_depth} is too deep (at most 30)")
        if self.utility not in UTILITIES:
            raise DpkitUsageError(f"utility must be one of {', '.join(UTILITIES)}, got {self.utility!r}")
        if self.sampling not in SAMPLINGS:
            raise DpkitUsageError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {self.sampling!r}")
        share, factor = _number(self.size_share), _number(self.leaf_factor)
        if not (0 < share < 1):
            raise DpkitUsageError(f"size_share must be in (0, 1), got {self.size_share!r}")
        if not (math.isfinite(factor) and factor >= 0):
            raise DpkitUsageError(f"leaf_factor must be a number >= 0, got {self.leaf_factor!r}")
        return resolve_features_per_node(self.features_per_node, n_features)

    # ------------------------------------------------------------------ fit

    def fit(
        self,
        table: Any,
        target: str,
        *,
        accountant: Accountant,
        rng: np.random.Generator,
        features: Sequence[str] | None = None,
    ) -> DiffPRFs:
        """Grow the forest on an :class:`~dpkit.data.table.EncodedTable`; returns self.

        ``features`` default to the schema's predictors. Every noisy value is drawn through
        a :mod:`dpkit.privacy` mechanism charged to ``accountant``.
        """
        from dpkit.data.schema import CategoricalColumn

        schema = table.schema
        tcol = schema.column(target)
        if not isinstance(tcol, CategoricalColumn):
            raise DpkitUsageError(f"target {target!r} must be a categorical column in {schema.path}")
        names = list(features) if features is not None else schema.predictors(target)
        if target in names:
            raise DpkitUsageError(f"the target {target!r} cannot also be a predictor")
        if not names:
            raise DpkitUsageError("the forest needs at least one predictor column")
        feats = features_from_schema(schema, names)
        f_per_node = self._validate(len(feats))
        classes = tuple(tcol.leaves)
        eps = validate_epsilon(self.epsilon)
        accountant.check(eps, "forest")
        absent = [c for c in [*names, target] if c not in table.columns]
        if absent:
            raise DpkitUsageError(f"{table.source}: the table was encoded without column(s) "
                                  f"{', '.join(map(repr, absent))}")

        X = [np.asarray(table.columns[f.name]) for f in feats]
        y = np.asarray(table.columns[target], dtype=np.int64)
        n = len(y)

        t = int(self.n_trees)
        trees: list[list[Node]] = []
        spends: list[dict[str, Any]] = []
        if self.sampling == "disjoint":
            # Each record goes to one tree, uniformly at random and independently of its
            # values (data-independent randomness, not released): adding or removing a
            # record changes one tree's part only, so every tree may spend all of ε.
            owner = partition_records(rng, n, t)
            with accountant.parallel(f"trees 1-{t} (disjoint random parts of the records)", eps) as scope:
                for i in range(t):
                    acc = scope.part()
                    rows = np.flatnonzero(owner == i)
                    nodes, levels = self._grow(i + 1, X, y, rows, feats, len(classes), f_per_node, eps, acc, rng)
                    trees.append(nodes)
                    spends.append({"tree": i + 1, "epsilon": eps, "levels": levels,
                                   "spends": [sp.to_dict() for sp in acc.spends]})
        else:
            rows = np.arange(n)
            for i in range(t):
                before = len(accountant.spends)
                nodes, levels = self._grow(i + 1, X, y, rows, feats, len(classes), f_per_node, eps / t, accountant, rng)
                trees.append(nodes)
                spends.append({"tree": i + 1, "epsilon": eps / t, "levels": levels,
                               "spends": [sp.to_dict() for sp in accountant.spends[before:]]})

        self.features_ = feats
        self.classes_ = classes
        self.spends_by_tree_ = spends
        self.model_ = ForestModel(
            target=target, classes=classes, features=feats, trees=trees, missing=schema.missing,
            parameters=self.get_params(),
        )
        return self

    def get_params(self) -> dict[str, Any]:
        return {
            "epsilon": float(self.epsilon), "trees": int(self.n_trees), "depth": int(self.max_depth),
            "features_per_node": self.features_per_node, "utility": self.utility,
            "sampling": self.sampling, "size_share": float(self.size_share),
            "leaf_factor": float(self.leaf_factor),
        }

    def predict_proba(self, table: Any) -> np.ndarray:
        """Class probabilities for an EncodedTable or a DataFrame of strings."""
        from dpkit.learn.model import predict_proba

        return predict_proba(self.model_, table)

    def predict(self, table: Any) -> np.ndarray:
        from dpkit.learn.model import predict

        return predict(self.model_, table)

    # ------------------------------------------------------------------ one tree

    def _grow(
        self,
        tree_no: int,
        X: list[np.ndarray],
        y: np.ndarray,
        rows: np.ndarray,
        feats: list[Feature],
        n_classes: int,
        f_per_node: int,
        eps_tree: float,
        accountant: Accountant,
        rng: np.random.Generator,
    ) -> tuple[list[Node], list[dict[str, Any]]]:
        """One tree; returns its nodes and, per level, what each inner node and leaf spent."""
        g = _Growth(self, tree_no, X, y, feats, n_classes, f_per_node, eps_tree, rng)
        root_ranges = {j: (f.lo, f.hi) for j, f in enumerate(feats) if f.kind == "numeric"}
        if g.depth == 0:
            # a single leaf by public rule: all of the tree's ε on its class counts
            g.leaves([(0, rows)], eps_tree, accountant, f"tree {tree_no} level 0: leaf class counts", None, 0)
            return g.nodes, g.level_report()
        exact = class_counts(np.zeros(len(rows), dtype=np.int64), y[rows], 1, n_classes)
        first = discrete_laplace(
            exact, epsilon=g.eps_size, rng=rng, accountant=accountant,
            step=f"tree {tree_no} level 0: node class counts",
        )
        g.nodes[0].size = max(int(first.sum()), 0)
        if g.is_leaf(0, g.nodes[0].size, root_ranges, frozenset()):
            g.leaves([(0, rows)], eps_tree - g.eps_size, accountant,
                     f"tree {tree_no} level 0: leaf class counts", (first, g.eps_size), 0)
        else:
            g.expand(0, rows, root_ranges, frozenset(), 0, accountant, g.eps_size)
        return g.nodes, g.level_report()

    @staticmethod
    def _candidates(feats: list[Feature], ranges: dict[int, tuple[float, float]], used: frozenset[int]) -> list[int]:
        """Attributes a node may split on — decided from public information only.

        A categorical attribute already split on above holds one value in this node; a
        numeric one whose interval has no room left (no integer, or zero width) cannot split.
        """
        out = []
        for j, f in enumerate(feats):
            if f.kind == "categorical":
                if j not in used and len(f.categories) > 1:
                    out.append(j)
            else:
                lo, hi = ranges[j]
                if (math.floor(hi) - math.ceil(lo) >= 1) if f.integer else hi > lo:
                    out.append(j)
        return out

    def _choose_split(
        self,
        X: list[np.ndarray],
        r: np.ndarray,
        yr: np.ndarray,
        feats: list[Feature],
        ranges: dict[int, tuple[float, float]],
        candidates: list[int],
        f_per_node: int,
        n_classes: int,
        noisy_size: int,
        eps: float,
        acc: Accountant,
        where: str,
        rng: np.random.Generator,
    ) -> tuple[int, float, float]:
        """Split attribute, threshold (numeric) and the ε spent, by the exponential mechanism.

        Nothing is spent when a single categorical attribute was drawn: the choice is then
        data-independent, and the caller passes the unspent ε on to the children.
        """
        # Data-independent: a random subset of the public candidate list (Breiman's random
        # attribute selection); it depends on no record, so it needs no budget.
        chosen = choose_features(rng, candidates, f_per_node)
        n_numeric = sum(feats[j].kind == "numeric" for j in chosen)
        # one mechanism per numeric split point, plus one for the attribute unless a single
        # attribute was drawn (then the choice is already made, publicly)
        n_mech = n_numeric + (1 if len(chosen) > 1 else 0)
        eps_each = eps / n_mech if n_mech else eps
        cap = math.log2(max(noisy_size, 1) + 1)
        sens, monotone = utility_sensitivity(self.utility, cap)
        utilities = np.zeros(len(chosen))
        thresholds = np.zeros(len(chosen))
        for a, j in enumerate(chosen):
            f = feats[j]
            xr = X[j][r]
            if f.kind == "categorical":
                m = class_counts(xr, yr, len(f.categories), n_classes)
                utilities[a] = split_utility(m[None], self.utility, cap)[0]
                continue
            lo, hi = ranges[j]
            distinct, left = threshold_class_counts(xr, yr, n_classes)
            total = left[-1] if len(left) else np.zeros(n_classes, dtype=np.int64)
            # candidate intervals: [lo, v1) (nothing left), [v_i, v_i+1), [v_k, hi] (all left)
            lefts = np.vstack([np.zeros((1, n_classes), dtype=np.int64), left])
            counts = np.stack([lefts, total[None, :] - lefts], axis=1)
            u = split_utility(counts, self.utility, cap)
            # For integers the mechanism counts the integers of [e_i, e_i+1): the last edge
            # hi + 1 makes hi itself a candidate ("x <= hi", all left).
            top = math.floor(hi) + 1 if f.integer else hi
            edges = np.concatenate([[lo], distinct, [top]])
            # Why choosing among intervals between *data values* is DP (DiffGen, Mohammed et
            # al. 2011 §4; DiffPRFs step 10): the mechanism samples a split point s of the
            # whole public domain [lo, hi] with density ∝ exp(ε·u(s)/2Δ). u(s) is constant
            # between consecutive distinct values, so drawing an interval with probability
            # ∝ length·exp(ε·u/2Δ) and then a uniform point in it is exactly that density;
            # the edges are a way to compute it, not an output. For neighbours, u(s) moves
            # by at most Δ at every s, so the density ratio is at most e^ε everywhere.
            thr = exponential_interval(
                edges, u, epsilon=eps_each, rng=rng, accountant=acc,
                step=f"{where}: split point of {f.name}", sensitivity=sens,
                monotone=monotone, integer=f.integer,
            )
            thresholds[a] = thr
            k = int(np.searchsorted(distinct, thr, side="right"))  # records <= thr go left
            utilities[a] = u[k]
        if len(chosen) == 1:
            return chosen[0], float(thresholds[0]), eps_each * n_numeric
        a = exponential(
            utilities, epsilon=eps_each, rng=rng, accountant=acc,
            step=f"{where}: split attribute", sensitivity=sens, monotone=monotone,
        )
        return chosen[a], float(thresholds[a]), eps

def _number(value: Any) -> float:
    """``value`` as a float; NaN (which fails every range check) if it is not a number."""
    if isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def resolve_features_per_node(value: int | str, n_features: int) -> int:
    """``features_per_node`` as a number: ``"sqrt"`` → ⌊√|F|⌋ (at least 1), ``"all"`` → |F|."""
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("sqrt", "auto"):
            return max(1, math.isqrt(n_features))
        if v == "all":
            return n_features
        try:
            value = int(v)
        except ValueError:
            raise DpkitUsageError(f"features per node must be an integer, 'sqrt' or 'all', got {value!r}") from None
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise DpkitUsageError(f"features per node must be an integer >= 1, got {value!r}")
    return min(int(value), n_features)


def choose_features(rng: np.random.Generator, candidates: Sequence[int], k: int) -> list[int]:
    """``k`` of the public ``candidates`` uniformly at random, without replacement.

    Data-independent randomness (the input is the public attribute list), so it needs no
    privacy budget; kept as a named function so tests can tell it from mechanism draws.
    """
    if k >= len(candidates):
        return list(candidates)
    picked = rng.choice(len(candidates), size=k, replace=False)
    return sorted(candidates[int(i)] for i in picked)


def partition_records(rng: np.random.Generator, n: int, parts: int) -> np.ndarray:
    """The part (0..parts-1) of each of ``n`` records, uniform and independent of the data."""
    return rng.integers(0, parts, size=n)


class _Growth:
    """The state of growing one tree: its nodes, budgets and per-level bookkeeping.

    Budgets compose along root-to-leaf paths: the children of a node hold disjoint
    records, so they are the parts of one parallel composition nested in their parent's
    accountant (``Accountant.parallel`` → ``part()`` per child). Every inner node spends
    ε_level = ε_tree/(d+1) — ε_rest on its split, ε_size on one noisy class-count histogram
    of its children (their sizes) — and a leaf spends *everything its records have left*
    on its class counts: a record's path spends exactly ε_tree, so the budget of levels a
    shallow leaf never reaches is not wasted (an improvement over the paper's fixed
    per-level split; the deepest leaves get the paper's ε_level).
    """

    def __init__(self, forest: DiffPRFs, tree_no: int, X: list[np.ndarray], y: np.ndarray,
                 feats: list[Feature], n_classes: int, f_per_node: int, eps_tree: float,
                 rng: np.random.Generator) -> None:
        self.forest = forest
        self.tree_no = tree_no
        self.X, self.y, self.feats = X, y, feats
        self.n_classes = n_classes
        self.f_per_node = f_per_node
        self.rng = rng
        self.depth = int(forest.max_depth)
        self.eps_tree = eps_tree
        self.eps_level = eps_tree / (self.depth + 1)
        self.eps_size = float(forest.size_share) * self.eps_level
        self.eps_rest = self.eps_level - self.eps_size
        # Friedman & Schuster's rule: split only if the noisy size per class exceeds the
        # standard deviation √2/ε of the noise of a split's counts.
        self.min_size = float(forest.leaf_factor) * math.sqrt(2) * n_classes / self.eps_rest
        self.nodes: list[Node] = [Node(size=0)]
        self.levels: dict[int, dict[str, Any]] = {}

    def _level(self, level: int) -> dict[str, Any]:
        return self.levels.setdefault(level, {"level": level, "inner_nodes": 0, "leaves": 0,
                                              "epsilon_max_inner_node": 0.0, "epsilon_max_leaf": 0.0})

    def level_report(self) -> list[dict[str, Any]]:
        return [self.levels[k] for k in sorted(self.levels)]

    def is_leaf(self, level: int, noisy_size: int, ranges: dict[int, tuple[float, float]],
                used: frozenset[int]) -> bool:
        """Leaf rule on public and noisy values only (never an exact purity test)."""
        return (level >= self.depth or noisy_size < self.min_size
                or not DiffPRFs._candidates(self.feats, ranges, used))

    def leaves(self, items: list[tuple[int, np.ndarray]], eps: float, acc: Accountant, step: str,
               prior: tuple[np.ndarray, float] | None, level: int) -> None:
        """Noisy class counts of leaves (one histogram of disjoint leaf × class cells: Δ = 1).

        ``prior``: the same leaves' earlier noisy counts (their size histogram) and its ε;
        the two independent estimates are averaged with inverse-variance weights ε²
        (DLap variance ∝ 1/ε²) — post-processing. Negative counts become 0.
        """
        group = np.concatenate([np.full(len(r), k, dtype=np.int64) for k, (_, r) in enumerate(items)])
        rows = np.concatenate([r for _, r in items])
        exact = class_counts(group, self.y[rows], len(items), self.n_classes)
        noisy = discrete_laplace(exact, epsilon=eps, rng=self.rng, accountant=acc, step=step).astype(float)
        if prior is not None:
            earlier, eps0 = prior
            noisy = (eps * eps * noisy + eps0 * eps0 * earlier) / (eps * eps + eps0 * eps0)
        counts = np.maximum(np.rint(noisy), 0).astype(np.int64)
        for k, (idx, _) in enumerate(items):
            self.nodes[idx].counts = counts[k]
            if prior is None:
                self.nodes[idx].size = int(counts[k].sum())
        info = self._level(level)
        info["leaves"] += len(items)
        info["epsilon_max_leaf"] = max(info["epsilon_max_leaf"], eps + (prior[1] if prior is not None else 0.0))

    def expand(self, idx: int, r: np.ndarray, ranges: dict[int, tuple[float, float]],
               used: frozenset[int], level: int, acc: Accountant, path_spent: float) -> None:
        """Split inner node ``idx`` (at ``level``) and grow its children, charging ``acc``."""
        where = f"tree {self.tree_no} level {level} node {idx}"
        node = self.nodes[idx]
        yr = self.y[r]
        j, thr, spent = self.forest._choose_split(
            self.X, r, yr, self.feats, ranges, DiffPRFs._candidates(self.feats, ranges, used),
            self.f_per_node, self.n_classes, node.size, self.eps_rest, acc, where, self.rng,
        )
        node.feature, node.threshold = j, thr
        xr = self.X[j][r]
        feat = self.feats[j]
        if feat.kind == "numeric":
            lo, hi = ranges[j]
            group = (xr > thr).astype(np.int64)  # records <= thr go left (child 0)
            parts = split_rows(r, group, 2)
            kids = [(parts[0], {**ranges, j: (lo, thr)}), (parts[1], {**ranges, j: (thr, hi)})]
            kids_used = used
        else:
            # one child per public category, empty or not: the structure is public
            kids_used = used | {j}
            group = xr.astype(np.int64)
            kids = [(part, ranges) for part in split_rows(r, group, len(feat.categories))]
        first = len(self.nodes)
        node.children = list(range(first, first + len(kids)))
        self.nodes.extend(Node(size=0) for _ in kids)
        # the children's class counts: one histogram of disjoint child × class cells (Δ = 1)
        sizes = discrete_laplace(
            class_counts(group, yr, len(kids), self.n_classes), epsilon=self.eps_size, rng=self.rng,
            accountant=acc, step=f"tree {self.tree_no} level {level + 1}: class counts of the children of node {idx}",
        )
        info = self._level(level)
        info["inner_nodes"] += 1
        info["epsilon_max_inner_node"] = max(info["epsilon_max_inner_node"], spent + self.eps_size)
        path_spent += spent + self.eps_size
        remaining = self.eps_tree - path_spent
        leaf_kids, inner_kids = [], []
        for c, (_, kranges) in enumerate(kids):
            self.nodes[first + c].size = max(int(sizes[c].sum()), 0)
            if self.is_leaf(level + 1, self.nodes[first + c].size, kranges, kids_used):
                leaf_kids.append(c)
            else:
                inner_kids.append(c)
        # The children hold disjoint records: the leaf children (one histogram) and each
        # inner child (its subtree) are the parts of one parallel composition, each with all
        # the ε its records have left.
        with acc.parallel(f"tree {self.tree_no} level {level + 1}", remaining) as scope:
            if leaf_kids:
                self.leaves(
                    [(first + c, kids[c][0]) for c in leaf_kids], remaining, scope.part(),
                    f"tree {self.tree_no} level {level + 1}: leaf class counts under node {idx}",
                    (sizes[leaf_kids], self.eps_size), level + 1,
                )
            for c in inner_kids:
                kr, kranges = kids[c]
                self.expand(first + c, kr, kranges, kids_used, level + 1, scope.part(), path_spent)
