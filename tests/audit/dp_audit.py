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

:func:`search_audit` chooses the event itself, as DP-Sniper (Bichsel et al. 2021) and StatDP
(Ding et al. 2018) do: the release is run ``n`` times on each side; on the first half of the
runs it searches the output space (every threshold event {y ≤ c}, {y ≥ c} and every value
{y = c} of a scalar output, in both directions) for the event whose Clopper-Pearson bound on
the privacy loss is largest, then measures only that event on the other half. As the event is
fixed before the test half is looked at, the test half's bound is a valid (1 − α) lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta

from dpkit.privacy import make_rng


def chacha(i: int) -> Any:
    """Run i's generator as a private run has it: ChaCha20 under a 256-bit key (derived here
    from i, so the audit is reproducible; a run's own key is HKDF of the user's key or OS
    randomness — the same generator class and stream)."""
    import hashlib

    return make_rng("0x" + hashlib.sha256(f"dpkit audit run {i}".encode()).hexdigest())


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


def _events(train_d: np.ndarray, train_p: np.ndarray) -> list[tuple[str, float]]:
    values = np.unique(np.concatenate([train_d, train_p]))
    if values.size > 400:  # continuous output: thresholds at 400 quantiles
        values = np.unique(np.quantile(values, np.linspace(0, 1, 400)))
    events = [("<=", float(c)) for c in values] + [(">=", float(c)) for c in values]
    if values.size <= 60:
        events += [("==", float(c)) for c in values]
    return events


def _hit(y: np.ndarray, event: tuple[str, float]) -> np.ndarray:
    op, c = event
    return y <= c if op == "<=" else (y >= c if op == ">=" else y == c)


def search_audit(
    release: Callable[[Any, Any], Any],
    d: Any,
    d_prime: Any,
    *,
    epsilon: float,
    n: int = 3000,
    alpha: float = 1e-3,
    seed0: int = 0,
    rng: Callable[[int], Any] = make_rng,
) -> AuditResult:
    """Audit ``release(data, rng) -> number`` with an event searched on half of the runs.

    ``rng(i)`` makes run i's generator (default: PCG64 seeded i; :func:`chacha` gives the
    ChaCha20 stream every private run uses). Returns the test half's bound (hits and n of the
    test half); ``str()`` names the event.
    """
    y_d = np.array([float(release(d, rng(seed0 + i))) for i in range(n)])
    y_p = np.array([float(release(d_prime, rng(seed0 + n + i))) for i in range(n)])
    half = n // 2
    tr_d, te_d, tr_p, te_p = y_d[:half], y_d[half:], y_p[:half], y_p[half:]
    best, best_score = None, -math.inf
    for ev in _events(tr_d, tr_p):
        k1, k2 = int(_hit(tr_d, ev).sum()), int(_hit(tr_p, ev).sum())
        # scored with the bound the test half will use: rare events that look extreme by
        # chance on the training half score low
        lo1, hi1 = clopper_pearson(k1, half, alpha / 2)
        lo2, hi2 = clopper_pearson(k2, half, alpha / 2)
        for direction, (lo, hi) in ((0, (lo1, hi2)), (1, (lo2, hi1))):
            if lo > 0 and math.log(lo / hi) > best_score:
                best, best_score = (ev, direction), math.log(lo / hi)
    if best is None:
        return AuditResult(epsilon, (0, 0), n - half, -math.inf, alpha)
    ev, direction = best
    k1, k2 = int(_hit(te_d, ev).sum()), int(_hit(te_p, ev).sum())
    m = n - half
    lo1, hi1 = clopper_pearson(k1, m, alpha / 2)
    lo2, hi2 = clopper_pearson(k2, m, alpha / 2)
    lo, hi = (lo1, hi2) if direction == 0 else (lo2, hi1)
    bound = math.log(lo / hi) if lo > 0 else -math.inf
    return SearchResult(epsilon, (k1, k2), m, bound, alpha, f"y {ev[0]} {ev[1]:g}", direction)


@dataclass(frozen=True)
class SearchResult(AuditResult):
    event: str = ""
    direction: int = 0  # 0: P_D(E) > P_D'(E); 1: the reverse

    def __str__(self) -> str:
        side = "D over D'" if self.direction == 0 else "D' over D"
        return f"{super().__str__()} on the searched event {self.event} ({side})"


def check(result: AuditResult, broken: bool) -> None:
    """An honest release must pass its audit, a broken one must be caught (the audit could fail)."""
    print(result)
    if broken:
        assert result.violation, f"the audit missed the broken release: {result}"
    else:
        assert not result.violation, str(result)


def rewritten(module: Any, name: str, edits: list[tuple[str, str]]) -> Any:
    """``module.name`` with each (old, new) text edit applied to its source, compiled in the
    module's namespace: the shipped function with one decision changed — how an audit writes a
    deliberate break. Fails if an edit no longer matches (the audit must then follow the code)."""
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(getattr(module, name)))
    for old, new in edits:
        assert old in source, f"{name}: {old!r} not in the source any more"
        source = source.replace(old, new)
    namespace = dict(vars(module))
    exec(compile(source, inspect.getsourcefile(module), "exec"), namespace)  # noqa: S102
    return namespace[name]
