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
sum, Δ = 1, monotone), ``balanced`` (the default, an addition: ``max`` with each class's
counts weighted by w_c = min_k π̂_k / π̂_c, π̂ the forest's noisy class counts floored at
their noise's standard deviation — Δ = 1, monotone, as every weight is at most 1) and ``gini`` (Friedman & Schuster's Gini utility,
Δ = 2; an addition: its sensitivity does not grow with the node size).

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
* **Missing values are values** (``missing_policy: keep``, the default of a run without a
  schema; docs/algorithms.md §2). A numeric attribute whose schema keeps its missing
  values (:func:`dpkit.algorithms.forest.model.missing_rule` ``branch``: the column's ``missing: true``, or
  every column when the tokens are declared — the cells of publish's missing bucket) splits
  into *three* children at the first split on it along a path: ``x <= t``, ``x > t`` and
  *missing*. Below, the attribute splits in two in the first two children (its missing values
  are apart) and not at all in the missing child. The utility of a split point s extends the
  paper's two-child utility u(D, A_s) (DiffPRFs step 10, the exponential mechanism
  Pr[s] ∝ exp(ε·u(D, s)/(2Δu)) over the public domain) by the missing child's counts, the same
  for every s: ``u(D, s) = Σ_{child ∈ {≤s, >s, missing}} g(n_child,·)``. So the draw of s is
  the paper's over the records with a value (a constant term), and the attribute's selection
  (step 11) sees how well the missing values separate the classes. Why a third child, and
  not the missing value as a point below the lower bound, a candidate ``missing vs the rest``
  of the continuous mechanism: that candidate's weight there is the length of [lo, v₁) — zero
  when a value sits at the bound (a column of zeros and positives, as learned bounds start at
  0) — and the missing values would always go with the lowest ones; a child of their own needs
  no public width to invent and keeps them apart from every value, as publish's bucket does
  (Patil & Singh's DiffPRF, 2014, splits a categorical attribute into one child per value of
  its public domain: the missing child is one more such public value). The structure is
  public (it exists whatever the data holds); sensitivities are unchanged (see
  :meth:`DiffPRFs._choose_split`). A column whose learned ``missing: false`` gives publish no
  bucket reads a missing value as its lower bound (``low``: always on the ``x <= t`` side),
  as publish puts it in the lowest interval; a categorical column's ``(missing)`` leaf is one
  of its values, a child like the others. Prediction follows the same rule (the missing
  child, the lower bound, the leaf).
* **Leaves spend what is left.** The paper gives every level ε_l; a leaf above the last
  level would leave the budget of the levels below it unspent. Here it spends that budget
  on its counts (the deepest leaves get the paper's ε_l), and the noisy counts released
  for the leaf rule are reused in the leaf instead of a size-only estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpkit.algorithms.forest.model import Feature, ForestModel, Node, features_from_schema
from dpkit.engine.frame import Frame, as_frame
from dpkit.engine.keys import Col, Key, Lookup, Route, RowHash
from dpkit.errors import DpkitUsageError
from dpkit.privacy import (
    Accountant,
    discrete_laplace,
    exponential,
    exponential_interval,
    validate_epsilon,
)

UTILITIES = ("info-gain", "max", "balanced", "gini")
SAMPLINGS = ("disjoint", "none")
_INV_LN2 = 1.0 / math.log(2)
_WEIGHT_GRID = float(2**20)  # class weights are multiples of 2^-20 (class_weights)
AUTO = "auto"
#: the automatic shape (docs/forest.md, "The forest's shape"): the share of ε spent
#: on the noisy class counts, the trees it starts from and the bounds it stays in, and the
#: signal-to-noise R the rarest class must keep in an average leaf
SHAPE_SHARE = 0.05
SHAPE_TREES, SHAPE_MAX_TREES, SHAPE_MAX_DEPTH = 5, 25, 6
SHAPE_RATIO = 10.0


def plan_shape(rarest: float, epsilon: float, trees: int | None = None, depth: int | None = None) -> tuple[int, int]:
    """The forest's (trees, depth) from the noisy count of its rarest class (public).

    A tree of depth d over t disjoint parts leaves about m/(t·2^d) records of the rarest class
    (m of them) in a leaf, against count noise of standard deviation about σ_d = √2·(d+1)/ε
    (ε split over d+1 levels). The depth is the largest d ≤ 6 with m/(t·2^d) ≥ R·σ_d at t = 5
    trees; if even d = 1 fails, fewer trees (down to one stump); if d reaches 6 with room to
    spare, more trees (up to 25). R = 10 was chosen on Adult and Adult with 5 % positives
    (docs/results/imbalanced.md). ``trees``/``depth`` given by the user are kept.
    """
    def fits(t: int, d: int) -> bool:
        return rarest / (t * 2.0**d) >= SHAPE_RATIO * math.sqrt(2) * (d + 1) / epsilon

    t0 = trees or SHAPE_TREES
    if depth is None:
        depth = max((d for d in range(1, SHAPE_MAX_DEPTH + 1) if fits(t0, d)), default=1)
    if trees is None:
        if fits(t0, depth):
            trees = max(t for t in range(t0, SHAPE_MAX_TREES + 1) if fits(t, depth)) if depth == SHAPE_MAX_DEPTH \
                else t0
        else:
            trees = max((t for t in range(1, t0) if fits(t, depth)), default=1)
    return int(trees), int(depth)


# --------------------------------------------------------------------------- utilities


def split_utility(counts: np.ndarray, utility: str, cap: float = math.inf,
                  weights: np.ndarray | None = None) -> np.ndarray:
    """Utility of candidate splits from their child × class count matrices.

    ``counts`` has shape ``(..., n_children, n_classes)``; returns shape ``(...)``. ``cap``
    is the logarithm cap L of the information-gain utility (see the module docstring);
    ``weights`` the class weights of ``balanced`` (:func:`class_weights`).
    These are functions of exact counts: they only ever feed a selection mechanism.
    """
    m = np.asarray(counts, dtype=float)
    if utility == "balanced":
        if weights is None:
            raise DpkitUsageError("the 'balanced' utility needs class weights")
        m = m * np.asarray(weights, dtype=float)
        utility = "max"
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


def class_weights(noisy_counts: Sequence[float], floor: float = 1.0) -> np.ndarray:
    """The ``balanced`` utility's class weights w_c = min_k π̂_k / π̂_c from noisy class counts,
    each floored at ``floor`` (at least 1): post-processing of released counts, so free in ε.

    The forest floors them at the counts' noise standard deviation √2/ε_n: a rare class whose
    count is within the noise of zero would otherwise get weights as extreme as the noise
    makes them (a count drawn as 1 against 300 weighs the common class 1/300 and leaves the
    utility almost flat), where the floor keeps the weights no further from 1 than the noise
    can tell.

    Weighted so, Σ_j max_c w_c·n_jc is, up to the constant min_k π̂_k, the number of records a
    child's weighted-majority label gets right counted as balanced accuracy counts them (each
    class by its share), so a split that isolates a rare class scores as it would in a balanced
    table — where ``max`` only sees it once the rare class is a child's majority. Every weight
    is at most 1 (the rarest class's is 1), which keeps Δ = 1 and monotonicity.

    Each weight is rounded down to a multiple of 2⁻²⁰ (at least 2⁻²⁰): a weighted count of fewer
    than 2³³ records, and any sum of them, is then exact in float64, so the sensitivity bound
    holds for the utilities as computed, not only as real numbers."""
    n = np.maximum(np.asarray(noisy_counts, dtype=float), max(float(floor), 1.0))
    return np.maximum(np.floor(n.min() / n * _WEIGHT_GRID), 1.0) / _WEIGHT_GRID


def utility_sensitivity(utility: str, cap: float) -> tuple[float, bool]:
    """(Δ, monotone) of a utility: max and balanced 1 (monotone), gini 2 (F&S 2010),
    info-gain L + 1/ln 2."""
    if utility == "balanced":
        # adding a record raises one n_jc by 1, so one weighted count by w_c <= 1: the sum of
        # the children's largest weighted counts rises by at most 1 and never falls
        return 1.0, True
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

    epsilon: total ε of the forest. n_trees, max_depth: forest shape (the paper's t, d), each
    an integer or ``"auto"`` (default): chosen from noisy class counts (:func:`plan_shape`,
    5 % of ε; the trees get the rest).
    features_per_node: attributes drawn per node (int, ``"sqrt"`` = ⌊√|F|⌋ as in the paper,
    or ``"all"``). utility: ``"balanced"`` (default), ``"max"``, ``"info-gain"`` or ``"gini"``;
    ``balanced`` weighs classes by noisy class counts (:data:`SHAPE_SHARE` of ε, as the
    automatic shape's, and the same draw when both are asked). sampling:
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
        n_trees: int | str = AUTO,
        max_depth: int | str = AUTO,
        features_per_node: int | str = "sqrt",
        utility: str = "balanced",
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
            if v == AUTO:
                continue
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < lo:
                raise DpkitUsageError(f"{name} must be an integer >= {lo} or 'auto', got {v!r}")
        if self.max_depth != AUTO and self.max_depth > 30:
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
        """Grow the forest on a frame (:mod:`dpkit.engine`) or an EncodedTable; returns self.

        ``features`` default to the schema's predictors. Every noisy value is drawn through
        a :mod:`dpkit.privacy` mechanism charged to ``accountant``. The trees are grown level
        by level: one scan for the class counts per (node, value) of every attribute drawn at
        a level, and one for the children's class counts, for all trees at once.
        """
        from dpkit.schema.parse import CategoricalColumn

        frame = as_frame(table)
        schema = frame.schema
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
        if len(classes) < 2:
            # from the schema alone (public), before anything is spent: a one-class forest predicts
            # that class for every row, and no model file could hold it (dpkit.algorithms.forest.model)
            raise DpkitUsageError(f"the target {target!r} has one class in {schema.path} ({classes[0]!r}): "
                                  "a forest needs at least two; list every class of the target")
        eps = validate_epsilon(self.epsilon)
        accountant.check(eps, "forest")
        have = set(frame.column_names())
        absent = [c for c in [*names, target] if c not in have]
        if absent:
            raise DpkitUsageError(f"{frame.source}: the table was encoded without column(s) "
                                  f"{', '.join(map(repr, absent))}")

        t, depth, eps = self._shape(frame, target, len(classes), eps, accountant, rng)
        self.n_trees_, self.max_depth_ = t, depth
        if self.sampling == "disjoint":
            # Each record goes to one tree by a keyed hash of its position in the input: for
            # anyone without the key (drawn here, never released) the trees are independent
            # uniform draws per record, independent of its values (docs/forest.md). Adding
            # or removing a record changes one tree's part only, so every tree may spend all
            # of ε (parallel composition).
            root = RowHash(partition_key(rng), t)
            with accountant.parallel(f"trees 1-{t} (disjoint random parts of the records)", eps) as scope:
                growths = [_Growth(self, frame, target, feats, len(classes), f_per_node, rng,
                                   [(i + 1, eps, scope.part()) for i in range(t)])]
                growths[0].grow(root)
        else:
            growths = []
            for i in range(t):
                growth = _Growth(self, frame, target, feats, len(classes), f_per_node, rng,
                                 [(i + 1, eps / t, accountant)])
                growth.grow(RowHash(0, 1))  # every record is in the root of this tree
                growths.append(growth)
        trees: list[list[Node]] = []
        spends: list[dict[str, Any]] = []
        for growth in growths:
            for tr in growth.trees:
                trees.append(tr.nodes)
                acc_spends = tr.accountant.spends[tr.first_spend:tr.last_spend]
                spends.append({"tree": tr.number, "epsilon": tr.epsilon, "levels": tr.level_report(),
                               "spends": [sp.to_dict() for sp in acc_spends]})

        self.features_ = feats
        self.classes_ = classes
        self.spends_by_tree_ = spends
        self.model_ = ForestModel(
            target=target, classes=classes, features=feats, trees=trees, missing=_missing(schema),
            parameters=self.get_params(),
        )
        return self

    def _shape(self, frame: Frame, target: str, n_classes: int, eps: float, accountant: Accountant,
               rng: np.random.Generator) -> tuple[int, int, float]:
        """(trees, depth, ε left for the trees). ``auto`` spends :data:`SHAPE_SHARE`·ε on the
        noisy class counts (one record changes one count by 1: Δ = 1) and sizes the forest on
        the rarest (:func:`plan_shape`); the ``balanced`` utility's class weights come from the
        same counts (drawn for it alone when the shape is given). Explicit integers with another
        utility spend nothing here."""
        auto_t, auto_d = self.n_trees == AUTO, self.max_depth == AUTO
        self.shape_: dict[str, Any] = {"trees": "auto" if auto_t else int(self.n_trees),
                                       "depth": "auto" if auto_d else int(self.max_depth)}
        self.class_weights_: np.ndarray | None = None
        if not (auto_t or auto_d or self.utility == "balanced"):
            return int(self.n_trees), int(self.max_depth), eps
        eps_n = SHAPE_SHARE * eps
        exact = frame.counts([Col(target)], (n_classes,))
        noisy = discrete_laplace(exact, epsilon=eps_n, rng=rng, accountant=accountant, step="noisy class counts")
        rest = eps - eps_n
        # under sampling="none" each tree gets rest/t: plan with the per-tree ε of t = 5
        per_tree = rest if self.sampling == "disjoint" else rest / (SHAPE_TREES if auto_t else int(self.n_trees))
        t, d = plan_shape(float(max(int(np.min(noisy)), 1)), per_tree, None if auto_t else int(self.n_trees),
                          None if auto_d else int(self.max_depth))
        self.shape_.update(noisy_class_counts=[int(v) for v in noisy], epsilon_n=eps_n, resolved=[t, d])
        if self.utility == "balanced":
            self.class_weights_ = class_weights(noisy, floor=math.sqrt(2) / eps_n)
            self.shape_["class_weights"] = [float(w) for w in self.class_weights_]
        return t, d, rest

    def get_params(self) -> dict[str, Any]:
        trees = getattr(self, "n_trees_", self.n_trees)
        depth = getattr(self, "max_depth_", self.max_depth)
        return {
            "epsilon": float(self.epsilon), "trees": trees if trees == AUTO else int(trees),
            "depth": depth if depth == AUTO else int(depth),
            "features_per_node": self.features_per_node, "utility": self.utility,
            "sampling": self.sampling, "size_share": float(self.size_share),
            "leaf_factor": float(self.leaf_factor),
        }

    def predict_proba(self, table: Any) -> np.ndarray:
        """Class probabilities for an EncodedTable or a DataFrame of strings."""
        from dpkit.algorithms.forest.model import predict_proba

        return predict_proba(self.model_, table)

    def predict(self, table: Any) -> np.ndarray:
        from dpkit.algorithms.forest.model import predict

        return predict(self.model_, table)

    # ------------------------------------------------------------------ one node

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
            elif j not in used:  # a numeric j is used only in its missing child (every value missing)
                lo, hi = ranges[j]
                if (math.floor(hi) - math.ceil(lo) >= 1) if f.integer else hi > lo:
                    out.append(j)
        return out

    def _choose_split(
        self,
        chosen: list[int],
        stats: dict[int, Any],
        feats: list[Feature],
        ranges: dict[int, tuple[float, float]],
        n_classes: int,
        noisy_size: int,
        eps: float,
        acc: Accountant,
        where: str,
        rng: np.random.Generator,
    ) -> tuple[int, float, float]:
        """Split attribute, threshold (numeric) and the ε spent, by the exponential mechanism.

        ``chosen`` are the attributes drawn for the node (:func:`choose_features`) and
        ``stats[j]`` the node's exact counts for attribute j: a (value × class) matrix for
        a categorical attribute, ``(distinct values, class counts <= each, class counts of the
        missing values or None)`` for a numeric one — not None when the split has a missing
        child (module docstring, "Missing values"). Nothing is spent when a single categorical attribute was drawn: the choice is
        then data-independent, and the caller passes the unspent ε on to the children.
        """
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
            if f.kind == "categorical":
                utilities[a] = split_utility(stats[j][None], self.utility, cap, self.class_weights_)[0]
                continue
            lo, hi = ranges[j]
            distinct, left, missing = stats[j]
            total = left[-1] if len(left) else np.zeros(n_classes, dtype=np.int64)
            # candidate intervals: [lo, v1) (nothing left), [v_i, v_i+1), [v_k, hi] (all left)
            lefts = np.vstack([np.zeros((1, n_classes), dtype=np.int64), left])
            children = [lefts, total[None, :] - lefts]
            if missing is not None:
                # The missing child: the same counts at every split point. Why the analysis is
                # unchanged: u(D, s) is still a function of a child × class count matrix whose
                # cells are disjoint (a record is in the missing child or on one side of s), so
                # one record added or removed moves one cell by 1 — the case each Δ of
                # utility_sensitivity covers for any number of children (max/balanced: one
                # child's max rises by <= 1; gini and the capped info-gain: one child's term).
                # The children's histogram and the leaves are disjoint cells too (Δ = 1 each).
                children.append(np.broadcast_to(missing, lefts.shape))
            counts = np.stack(children, axis=1)
            u = split_utility(counts, self.utility, cap, self.class_weights_)
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


def partition_key(rng: np.random.Generator) -> int:
    """The secret 128-bit key of the record → tree PRF (:class:`~dpkit.engine.keys.RowHash`,
    SipHash-2-4).

    Data-independent randomness from the run's generator (ChaCha20 by default), never
    released; kept as a named function so tests can tell it from mechanism draws.
    """
    low, high = (int(w) for w in rng.integers(0, 2**64, size=2, dtype=np.uint64))
    return low | (high << 64)


#: the derived column holding each record's node at the level being grown
NODE = "__dpkit_node"


@dataclass
class _Tree:
    """One tree being grown: its nodes, its ε, its accountant and per-level bookkeeping."""

    number: int
    epsilon: float
    accountant: Accountant
    nodes: list[Node] = field(default_factory=lambda: [Node(size=0)])
    levels: dict[int, dict[str, Any]] = field(default_factory=dict)
    first_spend: int = 0  # this tree's entries in its accountant: [first_spend, last_spend)
    last_spend: int | None = None

    def level(self, level: int) -> dict[str, Any]:
        return self.levels.setdefault(level, {"level": level, "inner_nodes": 0, "leaves": 0,
                                              "epsilon_max_inner_node": 0.0, "epsilon_max_leaf": 0.0})

    def level_report(self) -> list[dict[str, Any]]:
        return [self.levels[k] for k in sorted(self.levels)]


@dataclass
class _Open:
    """An inner node waiting to be split at the current level."""

    tree: _Tree
    idx: int  # the node's index in its tree
    slot: int  # the node's key at this level (the value of the NODE column of its records)
    ranges: dict[int, tuple[float, float]]
    used: frozenset[int]
    acc: Accountant
    path_spent: float
    #: the node's exact class counts (private: they only feed the utilities, as every count here)
    counts: np.ndarray
    #: numeric features whose missing values were set apart above (by a split's missing child):
    #: a split on them here has two children. Public: a function of the released tree
    apart: frozenset[int] = frozenset()
    chosen: list[int] = field(default_factory=list)


class _Growth:
    """Growing trees level by level over a frame (all trees of a disjoint forest at once).

    Every record carries its node at the current level as the derived column ``NODE`` (−1
    once it sits in a leaf): the root level is the record → tree hash, each further level a
    :class:`~dpkit.engine.keys.Route` of the level before. Per level the engine is asked for
    the class counts per (node, value) of every attribute some node drew (one scan for all of
    them) and for the class counts of the children: two aggregations per level, never one
    per node.

    Budgets compose along root-to-leaf paths: the children of a node hold disjoint
    records, so they are the parts of one parallel composition nested in their parent's
    accountant (``Accountant.parallel`` → ``part()`` per child; the scopes stay open while
    the levels below are grown and close deepest first). Every inner node spends
    ε_level = ε_tree/(d+1) — ε_rest on its split, ε_size on one noisy class-count histogram
    of its children (their sizes) — and a leaf spends *everything its records have left*
    on its class counts: a record's path spends exactly ε_tree, so the budget of levels a
    shallow leaf never reaches is not wasted (an improvement over the paper's fixed
    per-level split; the deepest leaves get the paper's ε_level).
    """

    def __init__(self, forest: DiffPRFs, frame: Frame, target: str, feats: list[Feature], n_classes: int,
                 f_per_node: int, rng: np.random.Generator, trees: list[tuple[int, float, Accountant]]) -> None:
        self.forest = forest
        self.frame = frame
        self.target = target
        self.feats = feats
        self.n_classes = n_classes
        self.f_per_node = f_per_node
        self.rng = rng
        self.depth = int(getattr(forest, "max_depth_", forest.max_depth))
        self.trees = [_Tree(no, eps, acc, first_spend=len(acc.spends)) for no, eps, acc in trees]

    # ------------------------------------------------------------------ per-tree budgets

    def eps_level(self, tree: _Tree) -> float:
        return tree.epsilon / (self.depth + 1)

    def eps_size(self, tree: _Tree) -> float:
        return float(self.forest.size_share) * self.eps_level(tree)

    def min_size(self, tree: _Tree) -> float:
        # Friedman & Schuster's rule: split only if the noisy size per class exceeds the
        # standard deviation √2/ε of the noise of a split's counts.
        eps_rest = self.eps_level(tree) - self.eps_size(tree)
        return float(self.forest.leaf_factor) * math.sqrt(2) * self.n_classes / eps_rest

    def is_leaf(self, tree: _Tree, level: int, noisy_size: int, ranges: dict[int, tuple[float, float]],
                used: frozenset[int]) -> bool:
        """Leaf rule on public and noisy values only (never an exact purity test)."""
        return (level >= self.depth or noisy_size < self.min_size(tree)
                or not DiffPRFs._candidates(self.feats, ranges, used))

    # ------------------------------------------------------------------ growing

    def _class_counts(self, n_slots: int) -> np.ndarray:
        """Exact class counts per node of the current level, ``(n_slots, n_classes)``."""
        return self.frame.counts([Col(NODE), Col(self.target)], (n_slots, self.n_classes))

    def grow(self, root: Key) -> None:
        """Grow every tree; ``root`` keys each record to its tree's root (slot = tree index)."""
        with ExitStack() as stack:
            self.frame = self.frame.with_column(NODE, root)
            exact = self._class_counts(len(self.trees))
            pending: list[_Open] = []
            root_ranges = {j: (f.lo, f.hi) for j, f in enumerate(self.feats) if f.kind == "numeric"}
            for i, tree in enumerate(self.trees):
                step = f"tree {tree.number} level 0"
                if self.depth == 0:
                    # a single leaf by public rule: all of the tree's ε on its class counts
                    self.leaves(tree, [0], exact[i:i + 1], tree.epsilon, tree.accountant,
                                f"{step}: leaf class counts", None, 0)
                    continue
                eps_size = self.eps_size(tree)
                first = discrete_laplace(exact[i:i + 1], epsilon=eps_size, rng=self.rng,
                                         accountant=tree.accountant, step=f"{step}: node class counts")
                tree.nodes[0].size = max(int(first.sum()), 0)
                if self.is_leaf(tree, 0, tree.nodes[0].size, root_ranges, frozenset()):
                    self.leaves(tree, [0], exact[i:i + 1], tree.epsilon - eps_size, tree.accountant,
                                f"{step}: leaf class counts", (first, eps_size), 0)
                else:
                    pending.append(_Open(tree, 0, i, root_ranges, frozenset(), tree.accountant, eps_size, exact[i]))
            level, n_slots = 0, len(self.trees)
            while pending:
                pending, n_slots = self.expand_level(pending, n_slots, level, stack)
                level += 1
        for tree in self.trees:  # the scopes are closed: every entry is in
            tree.last_spend = len(tree.accountant.spends)

    def _node_stats(self, pending: list[_Open], n_slots: int) -> list[dict[int, Any]]:
        """Per pending node, the exact counts of every attribute it drew: one request per
        attribute (over the nodes that drew it), all answered by one scan (``Frame.many``)."""
        stats: list[dict[int, Any]] = [{} for _ in pending]
        requests: list[tuple] = []
        owners: list[tuple[int, list[int]]] = []
        for j in sorted({j for p in pending for j in p.chosen}):
            f = self.feats[j]
            mine = [k for k, p in enumerate(pending) if j in p.chosen]
            # slot → rank among the nodes that drew j; the extra last entry (−1) is where
            # records in no open node (NODE = −1) land, so they are not counted
            table = np.full(n_slots + 1, -1, dtype=np.int64)
            table[[pending[k].slot for k in mine]] = np.arange(len(mine))
            node = Lookup(NODE, table)
            if f.kind == "categorical":
                requests.append(("counts", [node, Col(f.name), Col(self.target)],
                                 (len(mine), len(f.categories), self.n_classes)))
            else:
                requests.append(("value_counts", f.name, [node, Col(self.target)], (len(mine), self.n_classes)))
            owners.append((j, mine))
        # one scan of the data for every attribute drawn at this level
        for (j, mine), got in zip(owners, self.frame.many(requests), strict=True):
            if self.feats[j].kind == "categorical":
                for r, k in enumerate(mine):
                    stats[k][j] = got[r]
            else:
                f = self.feats[j]
                values, m = got
                values = np.asarray(values, dtype=float)
                known = ~np.isnan(values)  # a missing value (NaN, missing_policy: keep) is no split point
                values, m = values[known], m[known]
                for r, k in enumerate(mine):
                    p = pending[k]
                    per_value = m[:, r, :]
                    present = per_value.sum(axis=1) > 0
                    distinct, per = values[present], per_value[present]
                    # the node's records whose value is missing, per class
                    missing = np.asarray(p.counts, dtype=np.int64) - per.sum(axis=0)
                    if f.missing == "low" and missing.any():
                        # read as the lower bound (learned ``missing: false``), as the Route and
                        # prediction read it: NaN > t is false for every threshold t >= lo
                        if len(distinct) and distinct[0] <= f.lo:
                            per = per.copy()
                            per[0] += missing
                        else:
                            distinct = np.concatenate([[f.lo], distinct])
                            per = np.vstack([missing[None, :], per])
                    branch = f.missing == "branch" and j not in p.apart
                    # the node's distinct values, its class counts <= each of them, and (a split
                    # with a missing child) the class counts of its missing values
                    stats[k][j] = (distinct, np.cumsum(per, axis=0), missing if branch else None)
        return stats

    def expand_level(self, pending: list[_Open], n_slots: int, level: int,
                     stack: ExitStack) -> tuple[list[_Open], int]:
        """Split every pending node of ``level``; returns the next level's pending nodes."""
        for p in pending:
            # Data-independent: a random subset of the public candidate list (Breiman's
            # random attribute selection); it depends on no record, so it needs no budget.
            p.chosen = choose_features(self.rng, DiffPRFs._candidates(self.feats, p.ranges, p.used),
                                       self.f_per_node)
        stats = self._node_stats(pending, n_slots)
        column = [""] * n_slots
        threshold = np.zeros(n_slots)
        offset = np.zeros(n_slots, dtype=np.int64)
        numeric = np.zeros(n_slots, dtype=bool)
        missing = np.zeros(n_slots, dtype=bool)
        kids: list[tuple[int, int, list[tuple[dict[int, tuple[float, float]], frozenset[int], frozenset[int]]],
                         float]] = []
        next_slot = 0
        for p, st in zip(pending, stats, strict=True):
            tree = p.tree
            where = f"tree {tree.number} level {level} node {p.idx}"
            eps_rest = self.eps_level(tree) - self.eps_size(tree)
            node = tree.nodes[p.idx]
            j, thr, spent = self.forest._choose_split(
                p.chosen, st, self.feats, p.ranges, self.n_classes, node.size, eps_rest, p.acc, where, self.rng,
            )
            node.feature, node.threshold = j, thr
            feat = self.feats[j]
            if feat.kind == "numeric":
                lo, hi = p.ranges[j]
                # (ranges, used, apart) of each child: <= thr is child 0, > thr child 1
                kstate = [({**p.ranges, j: (lo, thr)}, p.used, p.apart), ({**p.ranges, j: (thr, hi)}, p.used, p.apart)]
                numeric[p.slot] = True
                if feat.missing == "branch" and j not in p.apart:
                    # the missing child (child 2), decided from the schema and the released tree
                    # only — never from whether a record is missing here: a public cell, like a
                    # category's child. Every value of j in it is missing, so j cannot split it;
                    # below the other two, j's missing values are already apart
                    kstate = [(r, u, a | {j}) for r, u, a in kstate] + [(p.ranges, p.used | {j}, p.apart)]
                    missing[p.slot] = True
            else:
                # one child per public category, empty or not: the structure is public
                kstate = [(p.ranges, p.used | {j}, p.apart)] * len(feat.categories)
            column[p.slot] = feat.name
            threshold[p.slot] = thr
            offset[p.slot] = next_slot
            first = len(tree.nodes)
            node.children = list(range(first, first + len(kstate)))
            tree.nodes.extend(Node(size=0) for _ in kstate)
            kids.append((next_slot, first, kstate, spent))
            next_slot += len(kstate)
        # every record moves one level down (records of leaves get −1)
        self.frame = self.frame.with_column(
            NODE, Route(Col(NODE), tuple(column), threshold, offset, numeric, missing))
        exact = self._class_counts(next_slot)
        out: list[_Open] = []
        for p, (slot0, first, kstate, spent) in zip(pending, kids, strict=True):
            tree = p.tree
            eps_size = self.eps_size(tree)
            block = exact[slot0:slot0 + len(kstate)]
            # the children's class counts: one histogram of disjoint child × class cells (Δ = 1)
            sizes = discrete_laplace(
                block, epsilon=eps_size, rng=self.rng, accountant=p.acc,
                step=f"tree {tree.number} level {level + 1}: class counts of the children of node {p.idx}",
            )
            info = tree.level(level)
            info["inner_nodes"] += 1
            info["epsilon_max_inner_node"] = max(info["epsilon_max_inner_node"], spent + eps_size)
            path_spent = p.path_spent + spent + eps_size
            remaining = tree.epsilon - path_spent
            leaf_kids, inner_kids = [], []
            for c, (kr, ku, _) in enumerate(kstate):
                tree.nodes[first + c].size = max(int(sizes[c].sum()), 0)
                if self.is_leaf(tree, level + 1, tree.nodes[first + c].size, kr, ku):
                    leaf_kids.append(c)
                else:
                    inner_kids.append(c)
            # The children hold disjoint records: the leaf children (one histogram) and each
            # inner child (its subtree) are the parts of one parallel composition, each with
            # all the ε its records have left. The scope closes after the levels below.
            scope = stack.enter_context(p.acc.parallel(f"tree {tree.number} level {level + 1}", remaining))
            if leaf_kids:
                self.leaves(
                    tree, [first + c for c in leaf_kids], block[leaf_kids], remaining, scope.part(),
                    f"tree {tree.number} level {level + 1}: leaf class counts under node {p.idx}",
                    (sizes[leaf_kids], eps_size), level + 1,
                )
            for c in inner_kids:
                kr, ku, ka = kstate[c]
                out.append(_Open(tree, first + c, slot0 + c, kr, ku, scope.part(), path_spent, block[c], ka))
        return out, next_slot

    def leaves(self, tree: _Tree, idx: list[int], exact: np.ndarray, eps: float, acc: Accountant, step: str,
               prior: tuple[np.ndarray, float] | None, level: int) -> None:
        """Noisy class counts of leaves (one histogram of disjoint leaf × class cells: Δ = 1).

        ``exact`` are the leaves' exact class counts. ``prior``: the same leaves' earlier
        noisy counts (their size histogram) and its ε; the two independent estimates are
        averaged with inverse-variance weights ε² (DLap variance ∝ 1/ε²) — post-processing.
        Negative counts become 0.
        """
        noisy = discrete_laplace(exact, epsilon=eps, rng=self.rng, accountant=acc, step=step).astype(float)
        if prior is not None:
            earlier, eps0 = prior
            noisy = (eps * eps * noisy + eps0 * eps0 * earlier) / (eps * eps + eps0 * eps0)
        counts = np.maximum(np.rint(noisy), 0).astype(np.int64)
        for k, i in enumerate(idx):
            tree.nodes[i].counts = counts[k]
            if prior is None:
                tree.nodes[i].size = int(counts[k].sum())
        info = tree.level(level)
        info["leaves"] += len(idx)
        info["epsilon_max_leaf"] = max(info["epsilon_max_leaf"], eps + (prior[1] if prior is not None else 0.0))


def _missing(schema: Any) -> str | list[str] | None:
    """The model's ``missing`` field: the schema's one token, or the list when it has several."""
    tokens = list(schema.missing_tokens)
    if not tokens:
        return None
    return tokens[0] if len(tokens) == 1 else tokens
