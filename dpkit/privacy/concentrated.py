"""Zero-concentrated DP (zCDP) and its conversion to (ε, δ)-DP, for the Gaussian steps.

A mechanism is ρ-zCDP when the Rényi divergence of order α between its outputs on
neighbouring inputs is at most ρα for every α > 1 (Bun & Steinke, TCC 2016, Def. 1.1). The
discrete Gaussian N_Z(0, σ²) added to an integer vector whose L2 sensitivity is Δ is
Δ²/(2σ²)-zCDP, and ρ's add up under composition (Canonne, Kamath & Steinke, NeurIPS 2020,
"The Discrete Gaussian for Differential Privacy" (CKS), Thm. 4 and Prop. 5 — the same as the
continuous Gaussian's, which is why a vector of counts noised coordinate by coordinate costs
Σ_j Δ_j²/(2σ_j²)).

ρ-zCDP implies (ε, δ)-DP for every ε ≥ 0 with (CKS Cor. 13)

    δ(ρ, ε) = inf_{α > 1}  exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α ,

never looser than the classic δ = exp(−(ε − ρ)²/(4ρ)) (Bun & Steinke Prop. 1.3) and, at the
ε, δ of Adult's domain step (ε = 0.14, δ_G = 5·10⁻⁷), worth 1.67× the ρ (5.7·10⁻⁴ against
3.4·10⁻⁴). tests/privacy/test_gaussian_partition.py compares the two, and checks both against
the continuous Gaussian's exact curve, which no valid bound may undercut. **Any** α > 1 gives a valid δ: a search that misses the infimum only makes δ
larger, never the guarantee weaker. The search below is a fixed geometric grid then a golden
section refinement, in floats; the caller keeps a relative margin of 10⁻⁹ on δ for the float
error of one evaluation (every term is a smooth function of α, ρ, ε evaluated to ~10⁻¹⁵).
"""

from __future__ import annotations

import functools
import math

#: relative margin kept on δ against the float error of one evaluation of the bound
MARGIN = 1e-9


def _log_delta(rho: float, eps: float, alpha: float) -> float:
    """ln of CKS Cor. 13's bound at one α > 1."""
    return (alpha - 1) * (alpha * rho - eps) + alpha * math.log1p(-1 / alpha) - math.log(alpha - 1)


def cdp_delta(rho: float, eps: float) -> float:
    """The δ such that ρ-zCDP implies (ε, δ)-DP (CKS Cor. 13; any α gives a valid bound, so this
    is an upper bound on the infimum, never below it). 1 when nothing better holds."""
    if not (math.isfinite(rho) and rho >= 0 and math.isfinite(eps) and eps >= 0):
        raise ValueError(f"cdp_delta needs finite rho, eps >= 0, got {rho!r}, {eps!r}")
    if rho == 0:
        return 0.0
    # the optimum lies in (1, (ε + 1)/(2ρ) + 2] (CKS §2.3): a log grid over it, then refine
    hi = math.log((eps + 1) / (2 * rho) + 2)
    grid = [1 + math.expm1(hi * i / 512) for i in range(1, 513)]
    vals = [_log_delta(rho, eps, a) for a in grid]
    i = min(range(len(vals)), key=vals.__getitem__)
    lo_a, hi_a = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = vals[i]
    g = (math.sqrt(5) - 1) / 2
    for _ in range(80):  # golden section on the bracket (the function is smooth there)
        a1, a2 = hi_a - g * (hi_a - lo_a), lo_a + g * (hi_a - lo_a)
        f1, f2 = _log_delta(rho, eps, a1), _log_delta(rho, eps, a2)
        best = min(best, f1, f2)
        if f1 < f2:
            hi_a = a2
        else:
            lo_a = a1
    return min(math.exp(best), 1.0)


@functools.lru_cache(maxsize=256)
def cdp_rho(eps: float, delta: float) -> float:
    """The largest ρ (to 10⁻¹² relative) whose zCDP implies (ε, δ·(1 − MARGIN))-DP by
    :func:`cdp_delta`: the budget a Gaussian step may spend for a target (ε, δ). Cached: a pure
    function of public numbers, and a bisection of some 45 bound evaluations that every run
    learning its metadata asks for (the metadata audits ask 12,000 times)."""
    if not (math.isfinite(eps) and eps > 0 and 0 < delta < 1):
        raise ValueError(f"cdp_rho needs eps > 0 and 0 < delta < 1, got {eps!r}, {delta!r}")
    target = delta * (1 - MARGIN)
    lo, hi = 0.0, eps + 1.0  # cdp_delta(lo) = 0 <= target; at hi it is above any delta < 1
    while cdp_delta(hi, eps) <= target:  # pragma: no cover - eps + 1 always suffices
        hi *= 2
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        if cdp_delta(mid, eps) <= target:
            lo = mid
        else:
            hi = mid
    return lo
