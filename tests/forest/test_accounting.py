"""No node of a DiffPRFs forest ever draws randomness outside an accounted mechanism.

The generator handed to ``fit`` is wrapped so that *any* draw fails unless it happens
inside one of the mechanisms dprf.py calls (each of which must record exactly one spend
of the ε it was given) or inside one of the two named data-independent draws (the random
attribute subset, whose input must be the public candidate list, and the random record
partition). Then the report invariants: Σ spends = epsilon_spent ≤ ε, with entries by
tree and level.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpkit.algorithms.forest.dprf as dprf
from dpkit.algorithms.forest.dprf import DiffPRFs
from dpkit.privacy import Accountant, make_rng


class GuardedRng:
    """A Generator whose every method raises unless a guard is open."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self.open = 0
        self.draws_inside = 0

    def __getattr__(self, name: str):
        attr = getattr(self._rng, name)
        if not callable(attr):
            return attr

        def guarded(*args, **kwargs):
            if not self.open:
                raise AssertionError(f"rng.{name} drawn outside an accounted mechanism")
            self.draws_inside += 1
            return attr(*args, **kwargs)

        return guarded


@pytest.fixture()
def guarded(monkeypatch):
    calls: list[tuple[str, float]] = []

    def wrap_mechanism(name: str):
        original = getattr(dprf, name)

        def wrapper(*args, epsilon, rng, accountant, step, **kwargs):
            before = len(accountant.spends)
            spent_before = accountant.spent
            rng.open += 1
            try:
                out = original(*args, epsilon=epsilon, rng=rng, accountant=accountant, step=step, **kwargs)
            finally:
                rng.open -= 1
            # exactly one entry, of exactly the ε this call was given
            assert len(accountant.spends) == before + 1, f"{name} at {step!r} did not record one spend"
            assert accountant.spent - spent_before == pytest.approx(epsilon)
            assert accountant.spends[-1].step == step
            calls.append((name, epsilon))
            return out

        monkeypatch.setattr(dprf, name, wrapper)

    for name in ("discrete_laplace", "exponential", "exponential_interval"):
        wrap_mechanism(name)

    def public(original, check):
        def wrapper(rng, *args):
            check(*args)
            rng.open += 1
            try:
                return original(rng, *args)
            finally:
                rng.open -= 1
        return wrapper

    def only_public_candidates(candidates, k):
        # attribute indices of the public schema only — no data can reach this draw
        assert all(isinstance(c, int) for c in candidates) and isinstance(k, int)

    def no_arguments():
        pass  # the record → tree key: 63 random bits from the rng alone

    monkeypatch.setattr(dprf, "choose_features", public(dprf.choose_features, only_public_candidates))
    monkeypatch.setattr(dprf, "partition_key", public(dprf.partition_key, no_arguments))
    return calls


@pytest.mark.parametrize("sampling", ["disjoint", "none"])
@pytest.mark.parametrize("utility", ["balanced", "max", "info-gain", "gini"])
def test_every_draw_is_accounted(table, guarded, sampling: str, utility: str) -> None:
    eps = 2.0
    rng = GuardedRng(make_rng(11))
    acc = Accountant(eps)
    forest = DiffPRFs(epsilon=eps, n_trees=3, max_depth=3, utility=utility, sampling=sampling)
    forest.fit(table, "label", accountant=acc, rng=rng)
    assert rng.draws_inside > 0 and guarded  # the guard saw the mechanisms' draws
    # report invariants
    assert math.fsum(s.epsilon for s in acc.spends) == pytest.approx(acc.spent)
    assert acc.spent <= eps * (1 + 1e-9)
    assert acc.spent == pytest.approx(eps)
    # spends by tree and level
    for t, entry in enumerate(forest.spends_by_tree_, start=1):
        assert entry["tree"] == t
        steps = [s["step"] for s in entry["spends"]]
        assert all(s.startswith(f"tree {t} level ") for s in steps), steps
        assert {lvl["level"] for lvl in entry["levels"]} >= {0}
        for lvl in entry["levels"]:
            assert lvl["epsilon_max_leaf"] <= entry["epsilon"] * (1 + 1e-9)


def test_guard_catches_a_stray_draw(table, guarded, monkeypatch) -> None:
    """The guard is real: a draw that bypasses the mechanisms fails the fit."""
    original = dprf.DiffPRFs._candidates

    def leaky(feats, ranges, used):
        out = original(feats, ranges, used)
        leak_rng.normal()  # e.g. noise added by hand instead of through a mechanism
        return out

    rng = GuardedRng(make_rng(1))
    leak_rng = rng
    monkeypatch.setattr(dprf.DiffPRFs, "_candidates", staticmethod(leaky))
    with pytest.raises(AssertionError, match="outside an accounted mechanism"):
        DiffPRFs(epsilon=1.0, n_trees=1, max_depth=2).fit(table, "label", accountant=Accountant(1.0), rng=rng)
