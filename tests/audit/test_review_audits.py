"""The second privacy review's audits (issue 24 item 7): the paths the first audits missed.

The earlier audits all used ``levels=1``, a forest of one tree of depth 0 and PCG64, so making
``plan_depth`` use the exact N, sharing records between trees or a fault in the ChaCha20 path
passed every one of them. Here: the **default publish path** (automatic depth from a noisy Ñ,
suppression threshold and scaling to Ñ), a **forest of 4 trees of depth 1** (the record → tree
partition exercised), and the **default generator** (ChaCha20, :func:`dp_audit.chacha`). Each
is run honest (must pass) and broken once on purpose (must be caught):

* exact N — Ñ replaced by the true count: the released total is then N to within rounding;
* shared partition — every tree grows on all the records and spends the whole ε;
* halved noise — the count noise drawn for 2ε while the accountant says ε, on ChaCha20.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pytest

import dpkit.privacy.mechanisms as mech
from dpkit.privacy import Accountant

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_audit import chacha, check, search_audit  # noqa: E402

pytestmark = pytest.mark.statistical

EPS = 0.5
SCHEMA = """\
target: label
columns:
  a: {type: categorical, values: [u, v]}
  label: {type: categorical, values: [p, q]}
"""


def _tables(rows_d: list[tuple[str, str]], extra: tuple[str, str]):  # noqa: ANN202
    from dpkit.data.encode import encode
    from dpkit.schema.parse import parse_schema

    s = parse_schema(SCHEMA, "audit.yaml")
    return (encode(pd.DataFrame(rows_d, columns=["a", "label"]), s),
            encode(pd.DataFrame([*rows_d, extra], columns=["a", "label"]), s))


# ------------------------------------------------------------------ publish, default path

ROWS = [("u", "p")] * 60 + [("v", "q")] * 60 + [("u", "q")] * 20 + [("v", "p")] * 20


def _released_total(table, rng) -> float:  # noqa: ANN001
    """MaxGDDP with every default (levels auto: Ñ, depth cap, threshold, scaling to Ñ)."""
    from dpkit.algorithms.publish.maxgddp import MaxGDDP

    acc = Accountant(EPS)
    model = MaxGDDP(epsilon=EPS).fit(table, "label", accountant=acc, rng=rng)
    assert acc.spent <= EPS * (1 + 1e-9) and model.depth_.n_hat is not None
    return float(np.sum(model.release_.counts))


@pytest.mark.parametrize("broken", [False, True])
def test_default_publish_path(broken: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if broken:  # plan_depth's Ñ is the exact N (it still books its ε)
        import dpkit.algorithms.publish.maxgddp as mg

        real = mg.discrete_laplace
        monkeypatch.setattr(mg, "discrete_laplace",
                            lambda v, **kw: np.asarray(v) if kw.get("step") == "noisy N" else real(v, **kw))
    d, d_prime = _tables(ROWS, ("u", "p"))
    check(search_audit(_released_total, d, d_prime, epsilon=EPS, n=2000, rng=chacha), broken)


# ------------------------------------------------------------------ the default generator

def _cell_count(table, rng) -> float:  # noqa: ANN001
    from dpkit.algorithms.publish.maxgddp import MaxGDDP

    acc = Accountant(EPS)
    model = MaxGDDP(epsilon=EPS, levels=1, selection_share=0.05).fit(table, "label", accountant=acc, rng=rng)
    rel = model.release_
    labels = model.cut_.labels()["a"]
    for cell, count in zip(rel.cells, rel.counts, strict=True):
        if labels[cell[0]] == "u" and rel.class_labels[cell[1]] == "p":
            return float(count)
    return 0.0


@pytest.mark.parametrize("broken", [False, True])
def test_counts_on_chacha20(broken: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if broken:  # every discrete Laplace draw for 2ε while the accountant says ε
        dense, sparse = mech.sample_discrete_laplace, mech.sample_sparse_positive_dlap
        monkeypatch.setattr(mech.laplace, "sample_discrete_laplace", lambda rng, eps, size: dense(rng, 2 * eps, size))
        monkeypatch.setattr(mech.laplace, "sample_sparse_positive_dlap",
                            lambda rng, eps, shape, occ: sparse(rng, 2 * eps, shape, occ))
    d, d_prime = _tables([("u", "p")] * 3 + [("v", "q")] * 2, ("u", "p"))
    check(search_audit(_cell_count, d, d_prime, epsilon=EPS, n=3000, rng=chacha), broken)


# ------------------------------------------------------------------ forest, 4 trees of depth 1

FOREST_ROWS = [("u", "p")] * 6 + [("v", "q")] * 6
#: a tree of depth 1 gives its leaf counts under half its ε (ε/2 a level, 10% of it for the
#: noisy sizes here), so sharing must touch more than two trees before the leaf counts alone
#: can show it: with 4 the sum's loss is about 1.8ε
TREES = 4
#: a larger ε: the audit's slack (the confidence bounds' width in log-ratio) does not grow with
#: ε, so the broken forest's 1.8ε is then far above the claim
FOREST_EPS = 2.0


def _leaf_sum(broken: bool):  # noqa: ANN202
    """Σ over the trees of the noisy count of class p in the leaf (or root) that a = u reaches."""
    from dpkit.algorithms.forest.dprf import DiffPRFs

    def release(table, rng) -> float:  # noqa: ANN001
        if broken:  # every tree on all records, each spending the whole claimed ε
            acc = Accountant(TREES * FOREST_EPS)
            forest = DiffPRFs(TREES * FOREST_EPS, n_trees=TREES, max_depth=1, sampling="none", size_share=0.1)
        else:
            acc = Accountant(FOREST_EPS)
            forest = DiffPRFs(FOREST_EPS, n_trees=TREES, max_depth=1, size_share=0.1)
        forest.fit(table, "label", accountant=acc, rng=rng, features=["a"])
        p = list(forest.model_.classes).index("p")
        total = 0.0
        for nodes in forest.model_.trees:
            node = nodes[0]
            if not node.is_leaf:
                node = nodes[node.children[0]]  # a = u: the first category
            total += float(node.counts[p])
        return total

    return release


@pytest.mark.parametrize("broken", [False, True])
def test_forest_four_trees_depth_one(broken: bool) -> None:
    d, d_prime = _tables(FOREST_ROWS, ("u", "p"))
    check(search_audit(_leaf_sum(broken), d, d_prime, epsilon=FOREST_EPS, n=3000, rng=chacha), broken)
