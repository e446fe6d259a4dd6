"""MAXGDDP: differentially private generalized release for classification.

Fu, Zhang, Ding (2018), "MAXGDDP: 基于最大值索引的差分隐私数据发布" (papers/maxgddp-2018-fu-
zhang-ding.txt), Algorithm 1, as read in docs/algorithms.md §1:

1. ε₁ = share·ε for the selections, split over the h levels (``geometric``: Thm 2,
   ε_i = ε₁·r^(i−1)(1−r)/(1−r^h) with r = ∛3; ``uniform``: ε₁/h; ``adaptive``: see
   :func:`level_budget`).
2. Each level scores every candidate specialization with Max(D, v) (eq. 5) and picks one with
   MAXDP = report-noisy-max with Lap(1/ε_i) (Thm 1; the score is monotone, sensitivity 1).
   dpkit's ``score="auto"`` (default) uses a Gini score instead on large tables (Ñ·ε ≥ 5000),
   with the general report-noisy-max (Lap(2/ε_i): sensitivity 1, not monotone) —
   :mod:`dpkit.algorithms.publish.scoring`, docs/algorithms.md §1.
3. The released table is the (cut × class) contingency table with DLap(ε₂) on every cell,
   ε₂ = ε − (selection spent).

Departures from the paper (docs/algorithms.md §1): numeric attributes split only at points of a
public grid (the paper scores "every possible split point", which would read candidate points
from the data); every cell, empty or not, is noised (the paper noises the partitions it
built); if candidates run out, the unspent selection budget moves to the counts; counts use
discrete rather than continuous Laplace noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.algorithms.publish import depth
from dpkit.algorithms.publish.cut import CategoricalCut, Cut, NumericCut
from dpkit.algorithms.publish.scoring import (
    SCORES,
    Candidate,
    Marginals,
    categorical_candidates,
    numeric_candidates,
    resolve_score,
)
from dpkit.algorithms.publish.sparse import (
    NoisyTable,
    check_release_size,
    postprocess,
    release_table,
)
from dpkit.engine.frame import Frame, as_frame
from dpkit.errors import DpkitUsageError
from dpkit.io.table import EncodedTable
from dpkit.privacy.accountant import Accountant, validate_epsilon
from dpkit.privacy.mechanisms import (
    discrete_laplace,
    exponential,
    permute_and_flip,
    report_noisy_max,
)
from dpkit.schema.parse import CategoricalColumn, Schema

ALLOCATIONS = ("geometric", "uniform", "adaptive")
#: ``levels="auto"``: the depth follows a noisy N and the count noise (:mod:`dpkit.algorithms.publish.depth`)
AUTO = "auto"
#: the most specializations ``--levels`` accepts: the geometric schedule then still gives level 1
#: a positive ε (r^1000 ≈ 10^159), and no table is resolved after that many anyway
MAX_LEVELS = 1000
#: post-processing of the noisy table: ``suppress`` (default) or ``raw`` (the paper's release)
POSTPROCESS = ("suppress", "raw")


def resolve_postprocess(value: str | None, levels: int | str) -> str:
    """``None`` means: ``suppress`` with ``levels="auto"``, ``raw`` with a fixed h (the paper's
    release, unchanged: a fixed deep cut at small ε keeps mostly noise cells above any threshold,
    and suppression measured worse there, docs/results/publish-robust.md)."""
    if value is None:
        return "suppress" if levels == AUTO else "raw"
    validate_postprocess(value)
    return value
SELECTORS = ("report-noisy-max", "exponential", "permute-and-flip")
#: the paper's ratio of consecutive level budgets, ∛3 (it assumes each level triples the fan-out).
GEOMETRIC_RATIO = 3 ** (1 / 3)


def geometric_budgets(total: float, levels: int, ratio: float = GEOMETRIC_RATIO) -> list[float]:
    """ε_i = total·r^(i−1)(r−1)/(r^h−1), i = 1..h (MAXGDDP Thm 2); sums to ``total``."""
    try:
        weights = [ratio**i for i in range(levels)]
    except OverflowError:  # thousands of levels: the same weights relative to the largest
        return _normalized(total, [i * math.log(ratio) for i in range(levels)])
    s = math.fsum(weights)
    return [total * w / s for w in weights]


def _normalized(total: float, log_weights: list[float]) -> list[float]:
    """``total`` split in proportion to exp(log_weights), without overflow."""
    top = max(log_weights)
    w = [math.exp(x - top) for x in log_weights]
    s = math.fsum(w)
    return [total * x / s for x in w]


def level_budget(
    allocation: str, remaining: float, levels_left: int, fanout_now: float, fanout_first: float, level: int
) -> float:
    """The ε of the current level from public quantities only.

    ``geometric`` and ``uniform`` follow the fixed schedules (computed on what remains so an
    early stop does not distort the rest). ``adaptive`` uses Thm 2's optimum ε_i ∝ ∛f_i with
    the fan-out f (cells of the current public cut) projected forward at the growth rate seen
    so far, g = (f_i/f_1)^(1/(i−1)) (the paper's g = 3 at the first level): a function of the
    released cut only, hence DP-safe (docs/algorithms.md §1 step 1).
    """
    if levels_left <= 0:
        return 0.0
    if allocation == "uniform":
        return remaining / levels_left
    if allocation == "geometric":
        return geometric_budgets(remaining, levels_left)[0]
    growth = 3.0
    if level > 1 and fanout_now > fanout_first:
        growth = (fanout_now / fanout_first) ** (1.0 / (level - 1))
    try:
        weights = [growth ** (j / 3.0) for j in range(levels_left)]
    except OverflowError:
        return _normalized(remaining, [j / 3.0 * math.log(growth) for j in range(levels_left)])[0]
    return remaining / math.fsum(weights)


@dataclass
class Selection:
    """One level's public outcome (for the report)."""

    level: int
    epsilon: float
    candidates: int
    choice: str

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "epsilon": self.epsilon, "candidates": self.candidates, "choice": self.choice}


def select(selector: str, scores: np.ndarray, *, epsilon: float, rng: np.random.Generator,
           accountant: Accountant, step: str, monotone: bool = True, integer: bool = True) -> int:
    """Pick a candidate index privately; both scores have Δ = 1, Max is monotone (MAXGDDP
    Thm 1) and an integer on every data set, Gini is neither (:mod:`dpkit.algorithms.publish.scoring`):
    report-noisy-max rounds Gini scores to its fixed grid
    (:func:`dpkit.privacy.mechanisms.report_noisy_max`)."""
    kw = dict(epsilon=epsilon, rng=rng, accountant=accountant, step=step, sensitivity=1.0, monotone=monotone)
    if selector == "report-noisy-max":
        return report_noisy_max(scores, noise="laplace", integer=integer, **kw)
    if selector == "exponential":
        return exponential(scores, **kw)
    if selector == "permute-and-flip":
        return permute_and_flip(scores, **kw)
    raise DpkitUsageError(f"selector must be one of {', '.join(SELECTORS)}, got {selector!r}", param="selector")


def class_info(schema: Schema, target: str) -> list[str]:
    col = schema.columns.get(target)
    if not isinstance(col, CategoricalColumn):
        raise DpkitUsageError(f"target {target!r} must be a categorical column of {schema.path}")
    return list(col.leaves)


class MaxGDDP:
    """MAXGDDP (Fu, Zhang, Ding 2018, Algorithm 1); see the module docstring.

    Parameters are stored as given; :meth:`fit` validates them, spends exactly ``epsilon``
    (when candidates remain for every level) and sets ``cut_``, ``selections_``,
    ``release_`` (a :class:`NoisyTable`) and ``epsilon_counts_``.

    ``levels="auto"`` (default) first spends ``n_share``·ε on a noisy record count Ñ, then
    derives the depth and a cap on the cut's size from Ñ and the count noise
    (:mod:`dpkit.algorithms.publish.depth`); an integer runs the paper's fixed h. ``postprocess``
    ``suppress`` (default with ``auto``) drops noisy counts below a public threshold and scales
    the rest to the noisy total; ``raw`` (default with a fixed h) releases every positive noisy
    count (the paper).
    """

    def __init__(self, *, epsilon: float, levels: int | str = AUTO, selection_share: float = 0.5,
                 allocation: str = "geometric", selector: str = "report-noisy-max", grid: int = 32,
                 postprocess: str | None = None, n_share: float = depth.N_SHARE,
                 resolution: float = depth.RESOLUTION, score: str = "auto") -> None:
        self.epsilon = epsilon
        self.levels = levels
        self.selection_share = selection_share
        self.allocation = allocation
        self.selector = selector
        self.grid = grid
        self.postprocess = postprocess
        self.n_share = n_share
        self.resolution = resolution
        self.score = score

    def check(self) -> None:
        """Validate the options (not ε: the run does) without changing them; :meth:`fit` calls
        it too, so a library caller can refuse bad options before any run starts."""
        levels = parse_levels(self.levels)
        validate_common(levels, self.selection_share, self.grid)
        resolve_postprocess(self.postprocess, levels)
        if self.allocation not in ALLOCATIONS:
            raise DpkitUsageError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {self.allocation!r}", param="allocation")
        if self.selector not in SELECTORS:
            raise DpkitUsageError(f"selector must be one of {', '.join(SELECTORS)}, got {self.selector!r}", param="selector")
        if self.score not in SCORES:
            raise DpkitUsageError(f"score must be one of {', '.join(SCORES)}, got {self.score!r}", param="score")

    def _validate(self) -> None:
        self.check()
        self.epsilon = validate_epsilon(self.epsilon)
        self.levels = parse_levels(self.levels)
        self.postprocess = resolve_postprocess(self.postprocess, self.levels)

    def fit(self, table: EncodedTable | Frame, target: str, *, accountant: Accountant, rng: np.random.Generator) -> MaxGDDP:
        """Specialize the cut for ``levels`` rounds, then release the noisy (cut × class) table.

        Selection spends ε_i per level (docs/algorithms.md §1 step 1; Fu et al. 2018 Thm 2 for the
        geometric split), the counts spend the rest; sets ``cut_``, ``selections_``,
        ``epsilon_counts_`` and ``release_``. The budget is checked before any draw.
        """
        self._validate()
        frame = as_frame(table)
        schema = frame.schema
        class_labels = class_info(schema, target)
        accountant.check(self.epsilon, "publish")
        cut = Cut.initial(schema, target)
        n_classes = len(class_labels)
        plan = plan_depth(frame, self.levels, self.epsilon, self.selection_share, n_classes,
                          accountant=accountant, rng=rng, n_share=self.n_share, resolution=self.resolution)
        self.score_ = resolve_score(self.score, plan.n_hat, self.epsilon)
        marg = Marginals(frame, target, len(class_labels), cut)
        eps_select = self.selection_share * plan.epsilon_rest
        spent_select = 0.0
        cache: dict[str, tuple[list[Candidate], np.ndarray]] = {}
        selections: list[Selection] = []
        fan_first = _fanout(cut, n_classes)
        for level in range(1, plan.levels + 1):
            cands: list[Candidate] = []
            parts: list[np.ndarray] = []
            for name, a in cut.attributes.items():
                if name not in cache:
                    if isinstance(a, CategoricalCut):
                        cache[name] = categorical_candidates(name, a, marg, self.score_)
                    else:
                        cache[name] = numeric_candidates(name, a, marg, self.grid, self.score_)
                cands += cache[name][0]
                parts.append(cache[name][1])
            scores = np.concatenate(parts) if parts else np.zeros(0)
            if plan.max_cells is not None:
                cands, scores = fitting(cut, cands, scores, n_classes, plan.max_cells)
            if not cands:
                break  # nothing left to specialize (or nothing fits): the rest of ε₁ goes to the counts
            # a cut already too large to release (cells only grow, ε₂ only shrinks) is refused now
            check_release_size(cut.shape() + [n_classes], plan.epsilon_rest - spent_select)
            eps_i = level_budget(self.allocation, eps_select - spent_select, plan.levels - level + 1,
                                 _fanout(cut, n_classes), fan_first, level)
            idx = select(self.selector, scores, epsilon=eps_i, rng=rng,
                         accountant=accountant, step=f"select level {level}", monotone=self.score_ == "max",
                         integer=self.score_ == "max")
            spent_select += eps_i
            chosen = cands[idx]
            selections.append(Selection(level, eps_i, len(cands), chosen.describe(cut)))
            chosen.apply(cut)
            cache.pop(chosen.column, None)
        self.epsilon_counts_ = max(plan.epsilon_rest - spent_select, 0.0)
        self.cut_ = cut
        self.selections_ = selections
        self.release_: NoisyTable = release_table(
            cut, frame, target, class_labels, epsilon=self.epsilon_counts_, rng=rng,
            accountant=accountant, step="noisy counts",
        )
        finish(self, plan, cut, n_classes)
        return self


@dataclass
class DepthPlan:
    """What ``levels`` resolved to: the schedule's depth, the cap on (cut × class) cells
    (None: no cap, the paper's fixed h), the noisy Ñ (None when not drawn) and the ε left
    for selections and counts."""

    levels: int
    max_cells: float | None
    n_hat: int | None
    epsilon_n: float
    epsilon_rest: float

    def to_json(self) -> dict[str, Any]:
        return {"levels": self.levels, "max_cells": self.max_cells, "noisy_records": self.n_hat,
                "epsilon_n": self.epsilon_n}


def plan_depth(table: Any, levels: int | str, epsilon: float, selection_share: float, n_classes: int, *,
               accountant: Accountant, rng: np.random.Generator, n_share: float = depth.N_SHARE,
               resolution: float = depth.RESOLUTION, counts_share: float | None = None) -> DepthPlan:
    """Resolve ``levels``: an integer is the paper's fixed h (no draw); ``auto`` spends
    ``n_share``·ε on Ñ = N + DLap (step ``noisy N``, sensitivity 1) and derives from it the cap
    M_max = Ñ/(κσ(ε₂)) and the depth h = ⌈log₂(M_max/|C|)⌉ (:mod:`dpkit.algorithms.publish.depth`), with
    ε₂ the share of ε the counts get at least (``counts_share``, default 1 − selection share)."""
    if levels != AUTO:
        return DepthPlan(int(levels), None, None, 0.0, epsilon)
    from dpkit.engine import as_frame

    eps_n = float(n_share) * epsilon
    n = as_frame(table).count()
    n_hat = max(int(discrete_laplace(int(n), epsilon=eps_n, rng=rng, accountant=accountant, step="noisy N")), 1)
    rest = epsilon - eps_n
    share = (1.0 - selection_share) if counts_share is None else counts_share
    cap = depth.max_cells(n_hat, share * rest, resolution)
    return DepthPlan(depth.auto_levels(cap, n_classes), cap, n_hat, eps_n, rest)


#: what a structural missing bucket (``missing: structural``: given by a public rule, not
#: established by the noisy counts) weighs in the automatic depth's cell budget. Counted whole,
#: the empty buckets of a table without missing numbers take the budget of real splits; counted
#: as nothing, a narrow table whose buckets hold many of the records over-grows its cut; a
#: quarter keeps most of both (docs/decisions/0006-structural-bucket-weight.md). The release holds the cell all the same, and the
#: suppression threshold counts it whole. Public: a constant.
STRUCTURAL_BUCKET = 0.25


def _weight(a: Any, size: int) -> float:
    """An attribute's size in the cell budget: a structural bucket counts STRUCTURAL_BUCKET."""
    if isinstance(a, NumericCut) and a.apart and a.column.structural:
        return size - 1 + STRUCTURAL_BUCKET
    return float(size)


def fitting(cut: Cut, cands: list[Candidate], scores: np.ndarray, n_classes: int,
            max_cells: float) -> tuple[list[Candidate], np.ndarray]:
    """The candidates whose specialization keeps the (cut × class) table within ``max_cells``
    (a function of the public cut and public quantities: filtering is not a privacy event); a
    structural missing bucket counts :data:`STRUCTURAL_BUCKET` of a cell."""
    shape = cut.shape()
    names = cut.columns
    if any(isinstance(a, NumericCut) and a.column.structural for a in cut.attributes.values()):
        return _fitting_weighted(cut, cands, scores, n_classes, max_cells)
    total = math.prod(shape) * n_classes
    keep = []
    for k, c in enumerate(cands):
        s = shape[names.index(c.column)]
        a = cut.attributes[c.column]
        grow = ((len(c.node.children) - 1) if c.node is not None
                else len(c.points) + int(isinstance(a, NumericCut) and a.separates_missing()))
        if total // s * (s + grow) <= max_cells:
            keep.append(k)
    if len(keep) == len(cands):
        return cands, scores
    return [cands[k] for k in keep], scores[np.asarray(keep, dtype=np.int64)]


def _fitting_weighted(cut: Cut, cands: list[Candidate], scores: np.ndarray, n_classes: int,
                      max_cells: float) -> tuple[list[Candidate], np.ndarray]:
    """:func:`fitting` with a structural bucket weighed :data:`STRUCTURAL_BUCKET` (a schema
    without one keeps the integer arithmetic above: same bytes)."""
    names = cut.columns
    sizes = [_weight(a, s) for a, s in zip(cut.attributes.values(), cut.shape(), strict=True)]
    total = math.prod(sizes) * n_classes
    keep = []
    for k, c in enumerate(cands):
        s = sizes[names.index(c.column)]
        a = cut.attributes[c.column]
        sep = isinstance(a, NumericCut) and a.separates_missing()
        bucket = (STRUCTURAL_BUCKET if a.column.structural else 1.0) if sep else 0.0  # type: ignore[union-attr]
        grow = (len(c.node.children) - 1) if c.node is not None else len(c.points) + bucket
        if total / s * (s + grow) <= max_cells * (1 + 1e-12):
            keep.append(k)
    if len(keep) == len(cands):
        return cands, scores
    return [cands[k] for k in keep], scores[np.asarray(keep, dtype=np.int64)]


def finish(model: Any, plan: DepthPlan, cut: Cut, n_classes: int) -> None:
    """Post-process the release (free in ε) and set ``depth_``, ``threshold_``,
    ``kept_classes_`` (classes the threshold would erase, kept whole: depth.class_thresholds) and
    ``noise_share_`` (the expected share of noise records, from public quantities only)."""
    log_m = depth.log_cells(cut.shape() + [n_classes])
    eps2 = model.epsilon_counts_
    raw = model.release_
    if plan.n_hat is not None:
        n_est = float(plan.n_hat)
    else:  # fixed h: the noisy total less the expected noise mass of the positive cells (public)
        n_est = max(float(raw.n_records) - math.exp(min(log_m, 700.0)) * depth.tail_noise(eps2, 1), 1.0)
    model.depth_ = plan
    model.kept_classes_ = []
    if model.postprocess == "raw":
        model.threshold_ = 1
    else:
        model.threshold_ = depth.suppression_threshold(log_m, eps2, n_est)
        per_class = [model.threshold_] * n_classes
        if plan.n_hat is not None:  # the automatic depth only: a fixed deep cut keeps too many noise cells
            per_class = depth.class_thresholds([raw.counts[raw.cells[:, -1] == k] for k in range(n_classes)],
                                               log_m - math.log(n_classes), eps2, model.threshold_)
        model.kept_classes_ = [raw.class_labels[k] for k, t in enumerate(per_class) if t < model.threshold_]
        model.release_ = postprocess(raw, threshold=per_class, total=n_est)
    model.noise_share_ = depth.expected_noise_share(log_m, eps2, n_est, model.threshold_)


def _fanout(cut: Cut, n_classes: int) -> float:
    """Cells of the (cut × class) table as a float (exact as before), capped rather than overflowing."""
    total = cut.n_cells() * n_classes
    return float(total) if total < 2**1000 else 2.0**1000


def parse_levels(value: Any) -> int | str:
    """``auto`` or an integer ≥ 1 (as given on the command line, in a config, or in Python)."""
    if value is None:
        return AUTO
    if isinstance(value, str):
        v = value.strip().lower()
        if v == AUTO:
            return AUTO
        try:
            value = int(v)
        except ValueError:
            raise DpkitUsageError(f"levels must be 'auto' or an integer in 1..{MAX_LEVELS}, got {value!r}", param="levels") from None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= value <= MAX_LEVELS:
        raise DpkitUsageError(f"levels must be 'auto' or an integer in 1..{MAX_LEVELS}, got {value!r}", param="levels")
    return int(value)


def validate_postprocess(value: Any) -> None:
    if value not in POSTPROCESS:
        raise DpkitUsageError(f"post-processing must be one of {', '.join(POSTPROCESS)}, got {value!r}")


def validate_common(levels: Any, share: Any, grid: Any) -> None:
    parse_levels(levels)
    try:
        s = float(share)
    except (TypeError, ValueError):
        s = float("nan")
    if not 0 < s < 1:
        raise DpkitUsageError(f"selection_share must be a number in (0, 1), got {share!r}", param="selection_share")
    if isinstance(grid, bool) or not isinstance(grid, int | np.integer) or grid < 1:
        raise DpkitUsageError(f"grid must be an integer >= 1, got {grid!r}", param="grid")
