"""MAXGDDP: differentially private generalized release for classification.

Fu, Zhang, Ding (2018), "MAXGDDP: 基于最大值索引的差分隐私数据发布" (papers/maxgddp-2018-fu-
zhang-ding.txt), Algorithm 1, as read in docs/algorithms.md §1:

1. ε₁ = share·ε for the selections, split over the h levels (``geometric``: Thm 2,
   ε_i = ε₁·r^(i−1)(1−r)/(1−r^h) with r = ∛3; ``uniform``: ε₁/h; ``adaptive``: see
   :func:`level_budget`).
2. Each level scores every candidate specialization with Max(D, v) (eq. 5) and picks one with
   MAXDP = report-noisy-max with Lap(1/ε_i) (Thm 1; the score is monotone, sensitivity 1).
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

from dpkit.data.schema import CategoricalColumn, Schema
from dpkit.data.table import EncodedTable
from dpkit.engine.frame import Frame, as_frame
from dpkit.errors import DpkitUsageError
from dpkit.privacy.accountant import Accountant, validate_epsilon
from dpkit.privacy.mechanisms import exponential, permute_and_flip, report_noisy_max
from dpkit.release.cut import CategoricalCut, Cut
from dpkit.release.scoring import Candidate, Marginals, categorical_candidates, numeric_candidates
from dpkit.release.sparse import NoisyTable, release_table

ALLOCATIONS = ("geometric", "uniform", "adaptive")
SELECTORS = ("report-noisy-max", "exponential", "permute-and-flip")
#: the paper's ratio of consecutive level budgets, ∛3 (it assumes each level triples the fan-out).
GEOMETRIC_RATIO = 3 ** (1 / 3)


def geometric_budgets(total: float, levels: int, ratio: float = GEOMETRIC_RATIO) -> list[float]:
    """ε_i = total·r^(i−1)(r−1)/(r^h−1), i = 1..h (MAXGDDP Thm 2); sums to ``total``."""
    weights = [ratio**i for i in range(levels)]
    s = math.fsum(weights)
    return [total * w / s for w in weights]


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
    weights = [growth ** (j / 3.0) for j in range(levels_left)]
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
           accountant: Accountant, step: str) -> int:
    """Pick a candidate index privately; Max is monotone with Δ = 1 (MAXGDDP Thm 1)."""
    kw = dict(epsilon=epsilon, rng=rng, accountant=accountant, step=step, sensitivity=1.0, monotone=True)
    if selector == "report-noisy-max":
        return report_noisy_max(scores, noise="laplace", **kw)
    if selector == "exponential":
        return exponential(scores, **kw)
    if selector == "permute-and-flip":
        return permute_and_flip(scores, **kw)
    raise DpkitUsageError(f"--selector must be one of {', '.join(SELECTORS)}, got {selector!r}")


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
    """

    def __init__(self, *, epsilon: float, levels: int = 13, selection_share: float = 0.5,
                 allocation: str = "geometric", selector: str = "report-noisy-max", grid: int = 32) -> None:
        self.epsilon = epsilon
        self.levels = levels
        self.selection_share = selection_share
        self.allocation = allocation
        self.selector = selector
        self.grid = grid

    def _validate(self) -> None:
        self.epsilon = validate_epsilon(self.epsilon)
        validate_common(self.levels, self.selection_share, self.grid)
        if self.allocation not in ALLOCATIONS:
            raise DpkitUsageError(f"--allocation must be one of {', '.join(ALLOCATIONS)}, got {self.allocation!r}")
        if self.selector not in SELECTORS:
            raise DpkitUsageError(f"--selector must be one of {', '.join(SELECTORS)}, got {self.selector!r}")

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
        marg = Marginals(frame, target, len(class_labels), cut)
        eps_select = self.selection_share * self.epsilon
        spent_select = 0.0
        cache: dict[str, tuple[list[Candidate], np.ndarray]] = {}
        selections: list[Selection] = []
        fan_first = float(cut.n_cells() * len(class_labels))
        for level in range(1, self.levels + 1):
            cands: list[Candidate] = []
            parts: list[np.ndarray] = []
            for name, a in cut.attributes.items():
                if name not in cache:
                    if isinstance(a, CategoricalCut):
                        cache[name] = categorical_candidates(name, a, marg)
                    else:
                        cache[name] = numeric_candidates(name, a, marg, self.grid)
                cands += cache[name][0]
                parts.append(cache[name][1])
            if not cands:
                break  # nothing left to specialize: the rest of ε₁ goes to the counts
            eps_i = level_budget(self.allocation, eps_select - spent_select, self.levels - level + 1,
                                 float(cut.n_cells() * len(class_labels)), fan_first, level)
            idx = select(self.selector, np.concatenate(parts), epsilon=eps_i, rng=rng,
                         accountant=accountant, step=f"select level {level}")
            spent_select += eps_i
            chosen = cands[idx]
            selections.append(Selection(level, eps_i, len(cands), chosen.describe(cut)))
            chosen.apply(cut)
            cache.pop(chosen.column, None)
        self.epsilon_counts_ = max(self.epsilon - spent_select, 0.0)
        self.cut_ = cut
        self.selections_ = selections
        self.release_: NoisyTable = release_table(
            cut, frame, target, class_labels, epsilon=self.epsilon_counts_, rng=rng,
            accountant=accountant, step="noisy counts",
        )
        return self


def validate_common(levels: Any, share: Any, grid: Any) -> None:
    if isinstance(levels, bool) or not isinstance(levels, int | np.integer) or levels < 1:
        raise DpkitUsageError(f"--levels must be an integer >= 1, got {levels!r}")
    try:
        s = float(share)
    except (TypeError, ValueError):
        s = float("nan")
    if not 0 < s < 1:
        raise DpkitUsageError(f"--selection-share must be a number in (0, 1), got {share!r}")
    if isinstance(grid, bool) or not isinstance(grid, int | np.integer) or grid < 1:
        raise DpkitUsageError(f"--grid must be an integer >= 1, got {grid!r}")
