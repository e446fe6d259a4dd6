"""Privacy budget and the per-run accountant.

Every ε a dpkit run spends is recorded here, at the point where noise is drawn, and the
JSON report is built from nothing else (docs/algorithms.md §0 rule 2). Modelled on Tumult
Analytics' immutable budgets and diffprivlib's BudgetAccountant, but never global: an
accountant is passed explicitly to every mechanism.

Composition rules used:
- sequential: entries add up (basic composition, Dwork & Roth Thm 3.14);
- parallel: the same ε spent on disjoint parts of the data is recorded once, with scope
  ``parallel`` (McSherry 2009); :meth:`Accountant.parallel` enforces that every part stays
  within the level's ε.

(ε, δ): a spend may carry a δ > 0 (partition selection, :mod:`dpkit.privacy.mechanisms.partition`); δs
add up under the same basic composition (Dwork & Roth Thm 3.16: k mechanisms, each
(ε_i, δ_i)-DP, are (Σε_i, Σδ_i)-DP) against a separate δ budget, 0 unless the run asked for
one. A run that never spends δ keeps the pure-ε report, byte for byte. The parts of a
:meth:`Accountant.parallel` scope have no δ budget (no parallel mechanism spends δ yet).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from dpkit import validate
from dpkit.errors import BudgetExceeded, DpkitUsageError
from dpkit.errors import BudgetExceededError as BudgetExceededError  # the older name, re-exported

#: relative tolerance that absorbs floating-point error when comparing ε sums.
TOLERANCE = 1e-9


def validate_delta(delta: object, name: str = "delta", *, allow_zero: bool = True) -> float:
    """``delta`` as a float in [0, 1) (or (0, 1) without ``allow_zero``): a mechanism's or an
    accountant's δ (:func:`dpkit.validate.mechanism_delta`; a run's δ is checked by
    :func:`dpkit.validate.delta` first)."""
    return validate.mechanism_delta(delta, name, zero=allow_zero)


#: ε (any budget) is checked by :func:`dpkit.validate.epsilon`: a finite number > 0
validate_epsilon = validate.epsilon


@dataclass(frozen=True)
class Budget:
    """An immutable pure-ε budget with arithmetic (``Budget(1) - Budget(0.3)``)."""

    epsilon: float

    def __post_init__(self) -> None:
        if not math.isfinite(self.epsilon) or self.epsilon < 0:
            raise DpkitUsageError(f"epsilon must be finite and >= 0, got {self.epsilon!r}")

    def __add__(self, other: Budget) -> Budget:
        return Budget(self.epsilon + other.epsilon)

    def __sub__(self, other: Budget) -> Budget:
        diff = self.epsilon - other.epsilon
        if diff < -TOLERANCE * max(1.0, self.epsilon):
            raise BudgetExceeded(other.epsilon, self.epsilon)
        return Budget(max(diff, 0.0))

    def __mul__(self, factor: float) -> Budget:
        return Budget(self.epsilon * factor)

    def fits(self, epsilon: float) -> bool:
        """True if ``epsilon`` is at most this budget, up to the 1e-9 relative tolerance."""
        # purely relative: an absolute slack would let tiny budgets (and a run already at
        # budget·(1 + 1e-9)) be overrun
        return epsilon <= self.epsilon * (1 + TOLERANCE)


@dataclass(frozen=True)
class Spend:
    """One accounted use of a mechanism: what the report lists under ``spends``.

    ``delta`` is listed only when it is > 0, so pure-ε reports keep their five keys.
    """

    step: str
    mechanism: str
    epsilon: float
    sensitivity: float
    scope: str = "sequential"
    delta: float = 0.0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "step": self.step,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "sensitivity": self.sensitivity,
            "scope": self.scope,
        }
        if self.delta > 0:
            out["delta"] = self.delta
        return out


class Accountant:
    """Tracks the spends of one run against its budget.

    ``check`` before doing work, ``spend`` at the point of noise. Over-spending raises
    :class:`~dpkit.errors.BudgetExceeded` and records nothing.
    """

    def __init__(self, budget: float | Budget, *, delta: float = 0.0) -> None:
        self.budget = budget if isinstance(budget, Budget) else Budget(validate_epsilon(budget))
        #: the run's δ budget: 0 (pure ε-DP, the default) unless the run asked for one
        self.delta_budget = validate_delta(delta)
        self._spends: list[Spend] = []

    @property
    def spends(self) -> tuple[Spend, ...]:
        return tuple(self._spends)

    @property
    def spent(self) -> float:
        return math.fsum(s.epsilon for s in self._spends)

    @property
    def remaining(self) -> float:
        return max(self.budget.epsilon - self.spent, 0.0)

    @property
    def delta_spent(self) -> float:
        return math.fsum(s.delta for s in self._spends)

    @property
    def delta_remaining(self) -> float:
        return max(self.delta_budget - self.delta_spent, 0.0)

    def check_delta(self, delta: float, step: str = "") -> None:
        """Raise :class:`~dpkit.errors.BudgetExceeded` if ``delta`` more would exceed the δ budget."""
        if delta < 0 or not math.isfinite(delta):
            raise DpkitUsageError(f"delta for {step or 'a step'} must be finite and >= 0")
        if delta == 0:
            return
        total = math.fsum([*(s.delta for s in self._spends), float(delta)])
        if not total <= self.delta_budget * (1 + TOLERANCE):
            raise BudgetExceeded(delta, self.delta_remaining, step, what="delta")

    def check(self, epsilon: float, step: str = "") -> None:
        """Raise :class:`~dpkit.errors.BudgetExceeded` if ``epsilon`` more would exceed the budget."""
        if epsilon < 0 or not math.isfinite(epsilon):
            raise DpkitUsageError(f"epsilon for {step or 'a step'} must be finite and >= 0")
        # fsum of all entries, exactly what ``spent`` will be after the spend is recorded
        total = math.fsum([*(s.epsilon for s in self._spends), float(epsilon)])
        if not self.budget.fits(total):
            raise BudgetExceeded(epsilon, self.remaining, step)

    def spend(
        self,
        step: str,
        mechanism: str,
        epsilon: float,
        sensitivity: float = 1.0,
        scope: str = "sequential",
        delta: float = 0.0,
    ) -> None:
        """Record that ``mechanism`` spent ``epsilon`` (and ``delta``) at ``step`` (after
        checking both fit; a refused spend records nothing)."""
        self.check(epsilon, step)
        self.check_delta(delta, step)
        self._spends.append(Spend(step, mechanism, float(epsilon), float(sensitivity), scope, float(delta)))

    def split(self, weights: Sequence[float], epsilon: float | None = None) -> list[float]:
        """Divide ``epsilon`` (default: what remains) in proportion to ``weights``.

        Nothing is spent; the parts are what the caller may later spend.
        """
        total = self.remaining if epsilon is None else float(epsilon)
        if not weights or not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
            raise DpkitUsageError(f"split weights must be >= 0 with a positive sum, got {weights}")
        s = math.fsum(weights)
        return [total * w / s for w in weights]

    @contextmanager
    def parallel(self, step: str, epsilon: float) -> Iterator[ParallelScope]:
        """Spend ``epsilon`` once on disjoint parts of the data (parallel composition).

        Each part gets its own sub-accountant with budget ``epsilon``; on exit one entry
        with scope ``parallel`` is recorded, for the largest amount any part spent.
        """
        self.check(epsilon, step)
        scope = ParallelScope(epsilon)
        try:
            yield scope
        finally:
            # also on an exception: noise the parts drew must stay on the record (the
            # ledger keeps a failed run's reservation only if something was spent)
            self._close_parallel(step, scope)

    def _close_parallel(self, step: str, scope: ParallelScope) -> None:
        # a part may sit at ε·(1 + 1e-9) by the tolerance; the level's ε is what was checked
        used = min(scope.used(), scope.epsilon)
        if used > 0:
            mechanisms = " + ".join(
                dict.fromkeys(m for s in scope.all_spends() for m in s.mechanism.split(" + "))
            )
            sens = max((s.sensitivity for s in scope.all_spends()), default=1.0)
            self.spend(step, mechanisms, used, sens, scope="parallel")

    @property
    def approximate(self) -> bool:
        """True when the run is (ε, δ)-DP rather than pure ε-DP: a δ budget or a δ spend > 0."""
        return self.delta_budget > 0 or any(s.delta > 0 for s in self._spends)

    def to_report(self) -> dict[str, object]:
        """The ``privacy`` and ``spends`` parts of the report (δ keys only for an (ε, δ) run)."""
        out: dict[str, object] = {
            "epsilon_budget": self.budget.epsilon,
            "epsilon_spent": self.spent,
            "epsilon_unspent": self.remaining,
        }
        if self.approximate:
            out["delta_budget"] = self.delta_budget
            out["delta_spent"] = self.delta_spent
        out["spends"] = [s.to_dict() for s in self._spends]
        return out


class ParallelScope:
    """The parts of a parallel-composition step; see :meth:`Accountant.parallel`."""

    def __init__(self, epsilon: float) -> None:
        self.epsilon = epsilon
        self._parts: list[Accountant] = []

    def part(self) -> Accountant:
        """A fresh accountant for one disjoint part of the data, with the step's ε."""
        acc = Accountant(Budget(self.epsilon))
        self._parts.append(acc)
        return acc

    def used(self) -> float:
        return max((p.spent for p in self._parts), default=0.0)

    def all_spends(self) -> list[Spend]:
        return [s for p in self._parts for s in p.spends]
