"""DiffGen (Mohammed, Chen, Fung, Yu, KDD 2011), the baseline of MAXGDDP's experiments.

As in the authors' released code (docs/algorithms.md §1): ε' = ε / (2(|A_num| + 2h)).
First every numeric attribute gets a split point for its whole domain by the continuous
exponential mechanism (ε' each, sequential: each sees all records). Then each of the h
iterations spends ε' to pick a candidate — a taxonomy node with children, or a numeric
interval at its current split point — with the exponential mechanism exp(ε'·u/(2Δ)) on the
Max score (Δ = 1; DiffGen does not use the monotone halving, and neither do we here), and,
when an interval was split, ε' more to choose the split points of its two halves (disjoint
records: one parallel spend). What is left (≥ ε/2) noises the (cut × class) table.

Departures: the release noises every cell with discrete Laplace through the same sparse
sampler as MAXGDDP; numeric attributes with a fixed interval hierarchy specialize along it.
"""

from __future__ import annotations

import numpy as np

from dpkit.algorithms.publish import depth
from dpkit.algorithms.publish.cut import CategoricalCut, Cut, NumericCut
from dpkit.algorithms.publish.maxgddp import (
    AUTO,
    Selection,
    class_info,
    finish,
    fitting,
    parse_levels,
    plan_depth,
    resolve_postprocess,
    validate_common,
)
from dpkit.algorithms.publish.scoring import (
    Candidate,
    Marginals,
    categorical_candidates,
    split_utilities,
)
from dpkit.algorithms.publish.sparse import NoisyTable, check_release_size, release_table
from dpkit.engine.frame import Frame, as_frame
from dpkit.io.table import EncodedTable
from dpkit.privacy.accountant import Accountant, validate_epsilon
from dpkit.privacy.mechanisms import exponential, exponential_interval


class DiffGen:
    """DiffGen with the Max score; attributes as :class:`~dpkit.algorithms.publish.maxgddp.MaxGDDP`."""

    def __init__(self, *, epsilon: float, levels: int | str = AUTO, postprocess: str | None = None,
                 n_share: float = depth.N_SHARE, resolution: float = depth.RESOLUTION) -> None:
        self.epsilon = epsilon
        self.levels = levels
        self.postprocess = postprocess
        self.n_share = n_share
        self.resolution = resolution

    def check(self) -> None:
        """Validate the options (not ε: the run does) without changing them."""
        resolve_postprocess(self.postprocess, parse_levels(self.levels))

    def fit(self, table: EncodedTable | Frame, target: str, *, accountant: Accountant, rng: np.random.Generator) -> DiffGen:
        """DiffGen (Mohammed et al. 2011, Alg. 1): ε' = ε / (2(|A_num| + 2h)) per step.

        First a split point per numeric attribute, then h exponential-mechanism selections
        (each followed by re-chosen split points where an interval was split); the rest of
        the budget noises the leaf counts. Sets the same fitted attributes as MaxGDDP.
        """
        self.epsilon = validate_epsilon(self.epsilon)
        self.levels = parse_levels(self.levels)
        validate_common(self.levels, 0.5, 1)
        self.postprocess = resolve_postprocess(self.postprocess, self.levels)
        frame = as_frame(table)
        schema = frame.schema
        class_labels = class_info(schema, target)
        accountant.check(self.epsilon, "publish")
        cut = Cut.initial(schema, target)
        n_classes = len(class_labels)
        start = accountant.spent
        # auto: Ñ first; the counts get at least half of what is left (DiffGen's split)
        plan = plan_depth(frame, self.levels, self.epsilon, 0.5, n_classes, accountant=accountant, rng=rng,
                          n_share=self.n_share, resolution=self.resolution, counts_share=0.5)
        marg = Marginals(frame, target, len(class_labels), cut)
        grid_cols = [n for n, a in cut.attributes.items() if isinstance(a, NumericCut) and a.nodes is None]
        if plan.levels == 0:
            grid_cols = []  # no selection at all: every split point would be wasted
        eps_p = plan.epsilon_rest / (2 * (len(grid_cols) + 2 * plan.levels)) if grid_cols or plan.levels else 0.0
        # split point of each interval, per numeric attribute (None: no point fits)
        points: dict[str, list[float | None]] = {}
        for name in grid_cols:
            a = cut.attributes[name]
            assert isinstance(a, NumericCut)
            points[name] = [self._point(marg, a, 0, eps_p, rng, accountant, f"split point {name}")]
        selections: list[Selection] = []
        for level in range(1, plan.levels + 1):
            cands, scores = self._candidates(cut, marg, points)
            if plan.max_cells is not None:
                cands, scores = fitting(cut, cands, scores, n_classes, plan.max_cells)
            if not cands:
                break
            check_release_size(cut.shape() + [n_classes], self.epsilon - (accountant.spent - start))
            idx = exponential(scores, epsilon=eps_p, rng=rng, accountant=accountant,
                              step=f"select level {level}", sensitivity=1.0, monotone=False)
            chosen = cands[idx]
            selections.append(Selection(level, eps_p, len(cands), chosen.describe(cut)))
            chosen.apply(cut)
            if chosen.column in points:
                a = cut.attributes[chosen.column]
                assert isinstance(a, NumericCut)
                i = chosen.interval
                new: list[float | None] = [None, None]
                with accountant.parallel(f"split points level {level}", eps_p) as par:
                    for k in (0, 1):
                        new[k] = self._point(marg, a, i + k, eps_p, rng, par.part(), f"split point {chosen.column}")
                points[chosen.column][i : i + 1] = new
        # whatever the selections did not use (e.g. no split point fitted) goes to the counts
        self.epsilon_counts_ = max(self.epsilon - (accountant.spent - start), 0.0)
        self.cut_ = cut
        self.selections_ = selections
        self.release_: NoisyTable = release_table(
            cut, frame, target, class_labels, epsilon=self.epsilon_counts_, rng=rng,
            accountant=accountant, step="noisy counts",
        )
        finish(self, plan, cut, n_classes)
        return self

    @staticmethod
    def _point(marg: Marginals, a: NumericCut, i: int, eps: float, rng: np.random.Generator,
               accountant: Accountant, step: str) -> float | None:
        lo, hi = a.bounds(i)
        closed = i == a.n_intervals - 1
        found = split_utilities(marg, a.column.name, lo, hi, closed, a.column.integer)
        if found is None:
            return None
        edges, util = found
        p = exponential_interval(edges, util, epsilon=eps, rng=rng, accountant=accountant, step=step,
                                 sensitivity=1.0, monotone=False, integer=a.column.integer)
        return p if lo < p < hi else None

    @staticmethod
    def _candidates(cut: Cut, marg: Marginals, points: dict[str, list[float | None]]) -> tuple[list[Candidate], np.ndarray]:
        from dpkit.algorithms.publish.scoring import (
            numeric_candidates,
            piece_scores,
            with_missing_piece,
        )

        cands: list[Candidate] = []
        parts: list[np.ndarray] = []
        for name, a in cut.attributes.items():
            if isinstance(a, CategoricalCut):
                c, s = categorical_candidates(name, a, marg)
            elif name not in points:
                c, s = numeric_candidates(name, a, marg, 1)  # fixed hierarchy
            else:
                c, lo_p, hi_p, own, last = [], [], [], [], []
                for i, p in enumerate(points[name]):
                    if p is None:
                        continue
                    lo, hi = a.bounds(i)
                    k = len(c)
                    c.append(Candidate(name, interval=i, points=(p,)))
                    lo_p += [lo, p]
                    hi_p += [p, hi]
                    own += [k, k]
                    last += [False, i == a.n_intervals - 1]
                if c:
                    starts = marg.index(name, np.asarray(lo_p))
                    ends = marg.index(name, np.asarray(hi_p), np.asarray(last))
                    starts, ends, owner = with_missing_piece(a, marg, name, starts, ends,
                                                             np.asarray(own, dtype=np.int64), len(c))
                    s = piece_scores(marg.cum(name), starts, ends, owner, len(c))
                else:
                    s = np.zeros(0)
            cands += c
            parts.append(s)
        return cands, (np.concatenate(parts) if parts else np.zeros(0))
