"""A small black-box differential-privacy auditor (in the style of DP-Auditorium).

Run a randomized release ``n`` times on each of two neighbouring data sets, count how often
a chosen output event happens, and bound both probabilities with exact (Clopper-Pearson)
confidence intervals. ε-DP requires P_D(E) ≤ e^ε · P_D'(E) and the reverse for every event
E, so if the lower confidence bound of one probability exceeds e^ε times the upper bound of
the other, the release is *not* ε-DP, with confidence 1 − α. The largest such ratio gives a
lower bound on the ε the implementation really spends (``epsilon_lower_bound``); an honest
implementation's bound stays ≤ ε, one that spends 3ε while reporting ε shows up above it.

Each run gets its own seeded generator (seed = ``seed0`` + i), so the audit is reproducible;
the seeds for D and D' are disjoint.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scipy.stats import beta

from dpkit.privacy import make_rng


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided (1 − α) lower and upper bounds for a binomial proportion k/n."""
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class AuditResult:
    epsilon: float  # the ε the implementation claims
    hits: tuple[int, int]  # event counts on D and D'
    n: int  # runs per data set
    epsilon_lower_bound: float  # max over both directions of log(lo_D / hi_D'), ≥ 0 or -inf
    alpha: float

    @property
    def violation(self) -> bool:
        """True if the runs prove, with confidence 1 − α, that the release is not ε-DP."""
        return self.epsilon_lower_bound > self.epsilon

    def __str__(self) -> str:
        return (f"claimed ε={self.epsilon:g}, audited ε ≥ {self.epsilon_lower_bound:.3f} "
                f"(hits {self.hits[0]}/{self.n} vs {self.hits[1]}/{self.n}, α={self.alpha:g})")


def audit(
    release: Callable[[Any, Any], Any],
    d: Any,
    d_prime: Any,
    event: Callable[[Any], bool],
    *,
    epsilon: float,
    n: int = 2000,
    alpha: float = 1e-3,
    seed0: int = 0,
) -> AuditResult:
    """Audit ``release(data, rng)`` on neighbours ``d``/``d_prime`` for the output ``event``.

    ``alpha`` is split over the two directions tested (Bonferroni), each using a lower and an
    upper one-sided bound (α/4 each), so a violation is reported falsely with probability ≤ α.
    """
    k1 = sum(bool(event(release(d, make_rng(seed0 + i)))) for i in range(n))
    k2 = sum(bool(event(release(d_prime, make_rng(seed0 + n + i)))) for i in range(n))
    a = alpha / 4
    lo1, hi1 = clopper_pearson(k1, n, a)
    lo2, hi2 = clopper_pearson(k2, n, a)

    def ratio(lo: float, hi: float) -> float:
        if lo <= 0:
            return -math.inf
        return math.log(lo / hi)

    bound = max(ratio(lo1, hi2), ratio(lo2, hi1))
    return AuditResult(epsilon, (k1, k2), n, bound, alpha)
