"""A run's budget plan: its ε divided into named parts before any of it is spent.

The model is OpenDP's sequential compositor (``make_sequential_composition``): the parts are
fixed up front, each a share of the total, and their sum is checked where the plan is made —
not found out when the accountant refuses a later step, after noise was drawn. One part may be
the *rest*: what the others left of the total once they have spent (a domain step that spends
less than its share leaves the algorithm more). The accountant books every spend; the plan
only says how much each step may ask for, and :meth:`BudgetPlan.left` reads the rest from what
was booked, never from a second tally.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from dpkit.errors import DpkitUsageError
from dpkit.privacy.accountant import TOLERANCE

__all__ = ["BudgetPlan"]


@dataclass(frozen=True)
class BudgetPlan:
    """``epsilon`` split into named ``shares`` (name → share of ε, each strictly between 0 and
    1, their sum at most 1 up to the accountant's relative tolerance) and, when ``rest`` is
    named, a last part that gets whatever the others left.

    ``plan["domain"]`` is a named part's ε (``share · epsilon``); ``plan.left(spent)`` the rest's.
    """

    epsilon: float
    shares: Mapping[str, float] = field(default_factory=dict)
    rest: str | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.epsilon) and self.epsilon >= 0):
            raise DpkitUsageError(f"a budget plan's epsilon must be finite and >= 0, got {self.epsilon!r}")
        for name, share in self.shares.items():
            if not (isinstance(share, (int, float)) and math.isfinite(share) and 0 < share < 1):
                raise DpkitUsageError(f"the budget plan's share {name!r} must be between 0 and 1 (exclusive), "
                                      f"got {share!r}")
        total = math.fsum(self.shares.values())
        if total > 1 + TOLERANCE:
            parts = ", ".join(f"{n} {s:g}" for n, s in self.shares.items())
            raise DpkitUsageError(f"the budget plan's shares add up to {total:g}, more than the whole budget "
                                  f"({parts}): lower one")
        if self.rest is not None and self.rest in self.shares:
            raise DpkitUsageError(f"the budget plan names {self.rest!r} both as a share and as the rest")
        object.__setattr__(self, "shares", dict(self.shares))

    def __getitem__(self, name: str) -> float:
        """The ε of the part ``name`` (its share of the total)."""
        if name not in self.shares:
            raise KeyError(f"the budget plan has no part {name!r} (its parts: {', '.join(self.shares) or 'none'}"
                           f"{'; the rest is ' + repr(self.rest) if self.rest else ''})")
        return self.shares[name] * self.epsilon

    def left(self, spent: float) -> float:
        """The rest's ε: the total less ``spent`` (what the named parts booked), never below 0."""
        if self.rest is None:
            raise KeyError("the budget plan has no rest")
        return max(self.epsilon - spent, 0.0)

    def parts(self) -> dict[str, float]:
        """Every named part's ε, in the plan's order (the rest, which depends on the spends, not among them)."""
        return {name: self[name] for name in self.shares}
