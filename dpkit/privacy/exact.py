"""Exact integer samplers for discrete noise: no floating-point cut-off, no missing tail.

Inverting a 53-bit float uniform (the obvious geometric sampler) can never return more than
⌊53·ln 2/ε⌋, so "count + 37" at ε = 1 is impossible for one input and possible for its
neighbour: an unbounded privacy loss on a rare event. Everything here draws from the exact
distribution, using only uniform integers from the run's generator (``rng.integers``, which
is an exact rejection sampler over the generator's raw bits, and ``random_raw``).

* :func:`geometric` — P(G ≥ g) = e^{-g·s/t} for integers s, t: Canonne, Kamath & Steinke,
  "The Discrete Gaussian for Differential Privacy" (NeurIPS 2020), Algorithm 1
  (Bernoulli(e^{-γ}) for rational γ ∈ [0, 1]) and the geometric step of Algorithm 2
  (X = U + t·V with U ∝ e^{-U/t} on [0, t), V ~ Geometric(e^{-1}); G = ⌊X/s⌋), vectorised:
  every loop runs over the still-undecided draws at once.
* :func:`noise_fraction` — the float ε of a mechanism as the exact fraction s/t ≤ ε used by
  the sampler (rounding down only ever adds noise).
* :func:`bernoulli_skips` — gaps of an i.i.d. Bernoulli(q/(1+q)) sequence, q = e^{-s/t}, for
  the sparse release's empty cells. That probability is irrational, so the gap
  ⌊-ln U / ln(1+q)⌋ is found by inversion of a lazily refined uniform U: a float evaluation
  decides it when it is at least 10⁻⁸ (relative) from a step of the floor — float error is
  below 10⁻¹² there — and otherwise (probability ~10⁻⁸ per draw) more random bits and
  correctly rounded ``decimal`` arithmetic at rising precision decide it exactly.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError

#: t is a power of two ≤ 2^62 (uniform draws in [0, t) fit in int64)
_MAX_T_BITS = 62
#: ε above this is rounded down to it: P(DLap ≠ 0) = 2e^{-2^16}/(1+e^{-2^16}), i.e. never
_MAX_EPSILON = 2**16
#: the smallest noise ε: below it the noise would not fit in int64 (ε·2^62 < 46)
MIN_EPSILON = 1e-17 * (1 - 1e-9)
_I64 = 2**63 - 1


def noise_fraction(epsilon: float | Fraction) -> tuple[int, int]:
    """``epsilon`` as (s, t) with s/t ≤ epsilon, t = 2^k ≤ 2^62 and s < 2^54.

    A float is a dyadic rational, so s/t is usually ε itself (every float ε ≥ 2^-9 is
    exact); an exact fraction with another denominator (ε/Δ) or a float below 2^-9 is
    rounded down to 52 significant bits — or fewer below ε ≈ 2^-10 (2^62·ε bits: 10⁻⁷
    relative at ε = 1e-12, 2% at 1e-17). ε above 2^16 becomes 2^16.
    """
    f = Fraction(epsilon)
    if not f > 0 or (isinstance(epsilon, float) and not math.isfinite(epsilon)):
        raise DpkitUsageError(f"noise epsilon must be a finite number > 0, got {epsilon!r}")
    if f < Fraction(MIN_EPSILON):
        raise DpkitUsageError(
            f"epsilon/sensitivity = {float(f):.3g} is too small for integer noise "
            "(the noise would not fit in 64 bits); use a coarser granularity or a larger epsilon"
        )
    f = min(f, Fraction(_MAX_EPSILON))
    if f.denominator <= 2**_MAX_T_BITS and f.denominator & (f.denominator - 1) == 0:
        return f.numerator, f.denominator
    # 53 significant bits for s (like a float), t ≤ 2^62: s·V and t stay far inside int64
    k = min(_MAX_T_BITS, 52 - (f.numerator.bit_length() - f.denominator.bit_length()))
    t = 2**k
    s = math.floor(f * t)
    g = math.gcd(s, t)
    return s // g, t // g


def _uniform_below(rng: np.random.Generator, high: np.ndarray | int, size: int) -> np.ndarray:
    """Exact uniform integers in [0, high) (numpy's bounded draw is rejection-exact)."""
    return rng.integers(0, high, size=size, dtype=np.int64)


def bernoulli_exp(rng: np.random.Generator, num: np.ndarray, den: int) -> np.ndarray:
    """Boolean draws with P(True) = exp(-num/den) for integer 0 ≤ num ≤ den (CKS20 Alg. 1).

    K ← 1; while Bernoulli(γ/K): K ← K + 1; return K odd. All undecided draws share K, so
    each round is one uniform draw below den·K per draw (or the product of Bernoulli(num/den)
    and Bernoulli(1/K) when den·K would not fit in int64).
    """
    num = np.asarray(num, dtype=np.int64)
    out = np.ones(num.shape, dtype=bool)  # γ = 0: K stays 1, True
    live = np.flatnonzero(num > 0)
    nums = num[live]
    k = 1
    while live.size:
        if den * k <= _I64:
            hit = _uniform_below(rng, den * k, live.size) < nums
        else:
            hit = (_uniform_below(rng, den, live.size) < nums) & (_uniform_below(rng, k, live.size) == 0)
        out[live[~hit]] = k % 2 == 1
        live, nums = live[hit], nums[hit]
        k += 1
    return out


def _geometric_e1(rng: np.random.Generator, n: int) -> np.ndarray:
    """n draws of V with P(V ≥ v) = e^{-v}: count Bernoulli(e^{-1}) successes until a failure."""
    v = np.zeros(n, dtype=np.int64)
    live = np.arange(n)
    while live.size:
        live = live[bernoulli_exp(rng, np.ones(live.size, dtype=np.int64), 1)]
        v[live] += 1
    return v


def geometric(rng: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """``size`` exact draws of G ≥ 0 with P(G ≥ g) = e^{-g·s/t} (CKS20 Alg. 2, steps 1–5).

    U uniform on [0, t) kept with probability e^{-U/t}, V ~ Geometric(e^{-1}); X = U + t·V has
    P(X ≥ x) = e^{-x/t}, so ⌊X/s⌋ is geometric with ratio e^{-s/t}. ⌊X/s⌋ is computed as
    V·⌊t/s⌋ + ⌊(U + V·(t mod s))/s⌋, which stays in int64 for every V that occurs; a V that
    would overflow (s < 2^54, so V ≥ 2^9: probability below e^{-512}, the same for every
    input) is refused.
    """
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        # U is kept with probability ≈ 1 − e^{-1} ≈ 0.63: draw 1.6× the need, plus slack
        u = _uniform_below(rng, t, int(need * 1.6) + 16)
        u = u[bernoulli_exp(rng, u, t)][:need]
        v = _geometric_e1(rng, u.size)
        whole, rest = divmod(t, s)
        vmax = int(v.max()) if v.size else 0
        if t + vmax * rest > _I64 or vmax * whole + (t + vmax * rest) // s > _I64:  # pragma: no cover
            raise DpkitUsageError("integer noise overflowed 64 bits; run again")
        out[filled : filled + u.size] = v * whole + (u + v * rest) // s
        filled += u.size
    return out


def discrete_laplace(rng: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """Exact DLap(s/t): P(k) ∝ e^{-|k|·s/t}, as the difference of two i.i.d. geometrics
    (Inusah & Kozubowski 2006)."""
    g = geometric(rng, s, t, 2 * size)
    return g[:size] - g[size:]


# --------------------------------------------------------------------------- Bernoulli skips

_FLOAT_MARGIN = 1e-8  # relative; float error of the fast path is < 1e-12
_TWO64 = 2.0**64


def _log_keep(s: int, t: int) -> float:
    """c = ln(1 + e^{-s/t}) in float (relative error < 1e-13 for s/t ≤ 700), 0 beyond."""
    eps = s / t
    return math.log1p(math.exp(-eps)) if eps <= 700 else 0.0


def _ln1p_decimal(q: decimal.Decimal) -> decimal.Decimal:
    """ln(1 + q) for 0 < q ≤ 1, to the context's relative precision (series when q is tiny)."""
    if q < decimal.Decimal("1e-25"):
        return q * (1 - q / 2 + q * q / 3)  # relative error < q^3 < 1e-75
    return (1 + q).ln()


def _decide_skip_exactly(rng: np.random.Generator, w: int, s: int, t: int, limit: int) -> int:
    """min(⌊-ln U / ln(1+e^{-s/t})⌋, limit) for U ∈ (1 − (w+1)/2^n, 1 − w/2^n], refined.

    Draws 64 more bits of U and raises the precision until the floor is decided.
    ``decimal``'s exp and ln are correctly rounded and, at n + 80 digits, w/2^n is exact,
    so every quantity is known to a relative 10^-(n+50) (the tolerance used).
    """
    nbits = 64
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = nbits + 80
            ctx.Emin = -(10**9)
            d = decimal.Decimal
            c = _ln1p_decimal((-(d(s) / d(t))).exp())
            scale = d(2) ** nbits
            a_lo = -(1 - d(w) / scale).ln()  # -ln of the largest U
            top = 1 - d(w + 1) / scale
            tol = d(10) ** (-(nbits + 50))
            y_lo = a_lo / c * (1 - tol)
            if y_lo >= limit:
                return limit
            if top > 0:
                y_hi = -top.ln() / c * (1 + tol)
                g = int(y_lo.to_integral_value(rounding=decimal.ROUND_FLOOR))
                if g == int(y_hi.to_integral_value(rounding=decimal.ROUND_FLOOR)):
                    return min(g, limit)
        w = (w << 64) | int(rng.bit_generator.random_raw())
        nbits += 64


def bernoulli_skips(rng: np.random.Generator, s: int, t: int, size: int, limit: int) -> np.ndarray:
    """``size`` exact draws of min(S, limit), P(S ≥ g) = (1 + e^{-s/t})^{-g}.

    S is the number of failures before a success in i.i.d. Bernoulli(p) trials,
    p = q/(1+q) = P(DLap(s/t) ≥ 1), q = e^{-s/t}. By inversion S = ⌊-ln U / ln(1+q)⌋ for a
    uniform U; U = 1 − (w + R)/2^64 with w the 64 raw bits and R ∈ [0, 1) the bits not yet
    drawn. The float fast path brackets -ln U over the whole interval of R and accepts when
    both ends (each widened by 10⁻⁸) have the same floor; the rest is decided exactly.
    Float error: for U > 1/2, -log1p(-w/2^64) is relative-accurate to ~2⁻⁵²; for U ≤ 1/2,
    -ln((2^64 − w)/2^64) is computed from the exact integer 2^64 − w, |ln U| ≥ ln 2, so
    again ~2⁻⁵²; c = ln(1+q) carries ε·2⁻⁵³ ≤ 10⁻¹³ — all far inside the 10⁻⁸ margin.
    """
    w = rng.bit_generator.random_raw(size).astype(np.uint64)
    c = _log_keep(s, t)
    out = np.full(size, limit, dtype=np.int64)
    high = w >= np.uint64(2**63)
    wf = w.astype(np.float64)
    m = (np.uint64(0) - w).astype(np.float64)  # 2^64 − w, exact for w ≥ 2^63 (then m ≤ 2^63)
    mm1 = (np.uint64(0) - w - np.uint64(1)).astype(np.float64)  # 2^64 − w − 1
    with np.errstate(divide="ignore", invalid="ignore"):
        a_lo = np.where(high, -np.log(m / _TWO64), -np.log1p(-wf / _TWO64))
        a_hi = np.where(high, -np.log(mm1 / _TWO64), -np.log1p(-(wf + 1.0) / _TWO64))
        if c > 0:
            y_lo = a_lo / c * (1 - _FLOAT_MARGIN)
            y_hi = a_hi / c * (1 + _FLOAT_MARGIN)
        else:  # s/t > 700: c < e^{-700}, so any -ln U ≥ 2^-64 puts S beyond every table
            y_lo = np.where(w > 0, np.inf, 0.0)
            y_hi = np.full(size, np.inf)
    beyond = y_lo >= limit
    g_lo = np.floor(np.minimum(y_lo, limit))
    g_hi = np.floor(np.minimum(y_hi, limit))
    sure = ~beyond & (g_lo == g_hi) & np.isfinite(y_hi)
    out[sure] = g_lo[sure].astype(np.int64)
    for i in np.flatnonzero(~beyond & ~sure):
        out[i] = _decide_skip_exactly(rng, int(w[i]), s, t, limit)
    return out
