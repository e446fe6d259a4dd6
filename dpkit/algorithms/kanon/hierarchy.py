"""Full-domain generalization hierarchies of the schema's columns, as level ladders.

A *ladder* is the chain of generalization levels of one quasi-identifier, from level 0
(the values as written) to its top level (one value: the column carries nothing and is
dropped from the output). Every level is a coarsening of the one below it, which is what
makes k-anonymity with suppression monotone along the lattice of level vectors (Samarati
2001; LeFevre et al., Incognito, SIGMOD 2005) and lets the search prune.

- **Categorical** (a taxonomy tree of the schema): level h maps each leaf to its ancestor
  at depth ``max(D - h, 0)`` (D = the tree's height), a leaf shallower than that staying
  itself; level D is the root. The cut at each level is a set of taxonomy nodes, labelled
  with their names, as ``dpkit publish`` labels them.
- **Numeric** with an interval hierarchy in the schema: the same, on the interval tree.
- **Numeric** without one: the public bounds ``[lo, hi]`` halved per level (level 1 has
  2^J equal intervals, J ≤ 6, edges rounded to integers for integer columns, so level j+1's
  edges are a subset of level j's), labelled ``[lo,hi)`` (the last ``[lo,hi]``) as
  publish's cut (:mod:`dpkit.algorithms.publish.cut`). Values outside the bounds fall in the first or
  last interval (the bounds are public; the data never moves them).

Everything here is a function of the schema only — never of the data — except the
*base codes*, the distinct values as written, which the ladder maps onto each level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpkit.algorithms.publish.cut import format_value
from dpkit.data.counting import group_of
from dpkit.schema.parse import CategoricalColumn, NumericColumn, TaxonomyNode

MAX_HALVINGS = 6  # at most 2^6 = 64 intervals below the root of a numeric column


@dataclass
class Level:
    """One generalization level: ``maps[base] -> group``, and the groups' labels."""

    maps: np.ndarray  # int64, one entry per base code
    labels: list[str]
    cut: list | None  # publish-style cut JSON (node names / [lo, hi] pairs); None = as written
    loss: np.ndarray | None = None  # per group: Iyengar's loss in [0, 1] (0 = as written, 1 = whole domain)


@dataclass
class Ladder:
    """The generalization levels of one column; ``levels[0]`` is the values as written."""

    name: str
    levels: list[Level]

    @property
    def height(self) -> int:
        """The top level (the whole domain: the column is dropped)."""
        return len(self.levels) - 1

    def describe(self, level: int) -> str:
        if level == 0:
            return "values as written"
        if level == self.height:
            return "dropped (whole domain)"
        return f"{len(self.levels[level].labels)} groups"


def _tree_cuts(root, children_of) -> list[list]:
    """Cuts of a tree by depth: ``[leaves, ..., [root]]`` (level h = ancestor at depth D - h)."""
    height = 0
    stack = [(root, 0)]
    while stack:
        node, d = stack.pop()
        height = max(height, d)
        stack.extend((c, d + 1) for c in children_of(node))
    cuts = []
    for h in range(height + 1):
        limit = height - h
        cut: list = []

        def visit(node, d, cut=cut, limit=limit):
            kids = children_of(node)
            if d >= limit or not kids:
                cut.append(node)
            else:
                for c in kids:
                    visit(c, d + 1)

        visit(root, 0)
        cuts.append(cut)
    return cuts


def categorical_ladder(col: CategoricalColumn) -> Ladder:
    """Levels of a taxonomy column; base codes are the schema's leaf codes."""
    cuts = _tree_cuts(col.root, lambda n: n.children)
    n_leaves = len(col.leaves)
    levels = []
    for cut in cuts:
        nodes: list[TaxonomyNode] = sorted(cut, key=lambda n: n.lo)
        starts = np.asarray([n.lo for n in nodes], dtype=np.int64)
        maps = group_of(np.arange(n_leaves, dtype=np.int64), starts)
        loss = np.asarray([(n.hi - n.lo - 1) / max(n_leaves - 1, 1) for n in nodes], dtype=float)
        levels.append(Level(maps=maps.astype(np.int64), labels=[n.name for n in nodes],
                            cut=[n.name for n in nodes], loss=loss))
    return Ladder(col.name, _dedupe(levels))


def numeric_ladder(col: NumericColumn, values: np.ndarray, written: list[str]) -> Ladder:
    """Levels of a numeric column over its distinct ``values`` (base codes = their positions).

    ``written`` are the same values as written in the input (the labels of level 0).
    """
    lo, hi = float(col.lo), float(col.hi)
    base = Level(maps=np.arange(len(values), dtype=np.int64), labels=list(written), cut=None,
                 loss=np.zeros(len(values)))
    if col.hierarchy is not None:
        cuts = _tree_cuts(col.hierarchy, lambda n: n.children)
        edge_sets = [[float(n.lo) for n in sorted(cut, key=lambda n: n.lo)] for cut in cuts]
    else:
        j_max = MAX_HALVINGS
        if col.integer:
            j_max = min(j_max, max(0, int(math.floor(math.log2(max(hi - lo, 1.0))))))
        edge_sets = []
        for j in range(j_max, -1, -1):
            pts = lo + (hi - lo) * np.arange(2**j) / 2**j
            if col.integer:
                pts = np.floor(pts + 0.5)
            edge_sets.append(sorted(set(float(p) for p in pts)))
    levels = [base]
    v = np.clip(np.asarray(values, dtype=float), lo, hi)
    for edges in edge_sets:
        e = np.asarray(edges, dtype=float)
        maps = group_of(v, e).astype(np.int64)
        pairs = [(e[i], e[i + 1] if i + 1 < len(e) else hi) for i in range(len(e))]
        labels = [
            f"[{format_value(col, a)},{format_value(col, b)}{']' if i == len(pairs) - 1 else ')'}"
            for i, (a, b) in enumerate(pairs)
        ]
        cut = [[int(a), int(b)] if col.integer else [a, b] for a, b in pairs]
        loss = np.asarray([(b - a) / (hi - lo) if hi > lo else 1.0 for a, b in pairs], dtype=float)
        levels.append(Level(maps=maps, labels=labels, cut=cut, loss=loss))
    return Ladder(col.name, _dedupe(levels))


def _dedupe(levels: list[Level]) -> list[Level]:
    """Drop a level that partitions the base codes exactly as the one below it does."""
    out = [levels[0]]
    for lv in levels[1:]:
        prev = out[-1].maps
        # same partition <=> the pairs (prev, new) are as many as prev's groups and new's groups
        pairs = len(set(zip(prev.tolist(), lv.maps.tolist(), strict=True)))
        if pairs == len(set(prev.tolist())) == len(set(lv.maps.tolist())):
            continue
        out.append(lv)
    if len(set(out[-1].maps.tolist())) > 1:  # the top level must be one group (the column dropped)
        top = levels[-1]
        out.append(Level(maps=np.zeros_like(top.maps), labels=["*"], cut=None, loss=np.ones(1)))
    return out
