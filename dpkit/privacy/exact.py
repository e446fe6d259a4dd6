"""Exact samplers for discrete noise: no floating-point cut-off, no missing tail.

Inverting a 53-bit float uniform (the obvious geometric sampler) can never return more than
⌊53·ln 2/ε⌋, so "count + 37" at ε = 1 is impossible for one input and possible for its
neighbour: an unbounded privacy loss on a rare event. Everything here draws from the exact
distribution, with only the run generator's raw 64-bit words (``random_raw``) as randomness.

The method is inversion of a *lazily refined* uniform U (exact random sampling in the sense
of Knuth & Yao 1976; Devroye 1986, §II.2): a geometric variable with P(G ≥ g) = e^{-g·c} is
G = ⌊-ln U / c⌋. U is known to 64 bits, i.e. to an interval; a float evaluation brackets
-ln U / c over the whole interval, widened by a relative 10⁻¹¹ (the float error is below
10⁻¹³), and when both ends have the same floor that floor is G — for every U in the
interval, so the result is exact, not rounded. Otherwise (probability ~10⁻¹¹·G per draw, or U
closer to 0 than 2⁻⁶⁴) 64 more bits are drawn and correctly rounded ``decimal`` arithmetic
at rising precision decides. The values used are

* :func:`geometric`, c = s/t — ε as the exact fraction of :func:`noise_fraction` (≤ ε:
  rounding down only ever adds noise); two of them make :func:`discrete_laplace`;
* :func:`bernoulli_skips`, c = ln(1 + e^{-s/t}) — the gaps between the empty cells whose
  DLap(s/t) noise is positive, for the sparse release (an exact Binomial count of them).

:func:`discrete_gaussian` (for the joint partition selection of many columns) is CKS's
rejection sampler on top of :func:`discrete_laplace` and the exact coin :func:`bernoulli_exp`.

Canonne, Kamath & Steinke's integer-only sampler (NeurIPS 2020, Alg. 1–2) was the first
implementation: exact too, but its per-draw loops made `forest train` 1.5× slower (thousands
of small noise calls); the certified inversion costs one vectorised pass.
"""

from __future__ import annotations

import decimal
import functools
import math
from fractions import Fraction

import numpy as np

from dpkit.errors import DpkitUsageError

#: t is a power of two ≤ 2^62 (s/t: 53 significant bits, as a float has)
_MAX_T_BITS = 62
#: ε above this is rounded down to it: P(DLap ≠ 0) = 2e^{-2^16}/(1+e^{-2^16}), i.e. never
_MAX_EPSILON = 2**16
#: the smallest noise ε: below it the noise would not fit in int64 (ε·2^62 < 46)
MIN_EPSILON = 1e-17 * (1 - 1e-9)
_GEOMETRIC_LIMIT = 2**62


@functools.lru_cache(maxsize=1024)  # a forest asks for the same few ε thousands of times
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


def geometric(rng: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """``size`` exact draws of G ≥ 0 with P(G ≥ g) = e^{-g·s/t}.

    A draw of 2^62 or more (probability e^{-2^62·s/t} ≤ e^{-46}, the same for every input)
    cannot be stored and is refused rather than clipped.
    """
    g = _inversion(rng, s, t, size, _GEOMETRIC_LIMIT, skips=False)
    if size and int(g.max()) >= _GEOMETRIC_LIMIT:  # pragma: no cover - data-independent, ~never
        raise DpkitUsageError("integer noise overflowed 64 bits; run again")
    return g


def discrete_laplace(rng: np.random.Generator, s: int, t: int, size: int) -> np.ndarray:
    """Exact DLap(s/t): P(k) ∝ e^{-|k|·s/t}, as the difference of two i.i.d. geometrics
    (Inusah & Kozubowski 2006)."""
    g = geometric(rng, s, t, 2 * size)
    return g[:size] - g[size:]


def discrete_gaussian(rng: np.random.Generator, sigma2: Fraction, size: int) -> np.ndarray:
    """``size`` exact draws of the discrete Gaussian N_Z(0, σ²): P(y) ∝ e^{-y²/(2σ²)} on the
    integers, for a rational σ² > 0 (Canonne, Kamath & Steinke 2020, Alg. 3).

    Rejection from DLap(1/t): a candidate Y (:func:`discrete_laplace`, P ∝ e^{-|y|/t}) is kept
    with probability e^{-(|Y| − σ²/t)²/(2σ²)} (:func:`bernoulli_exp`, exact). Expanding the
    square, the kept Y has P(y) ∝ e^{-|y|/t}·e^{-y²/(2σ²) + |y|/t − σ²/(2t²)} ∝ e^{-y²/(2σ²)}
    for any t > 0; t = the power of two ≥ ⌊σ⌋ + 1 keeps the acceptance rate near CKS's
    (t = ⌊σ⌋ + 1) and the candidates on :func:`noise_fraction`'s dyadic grid. Candidates come
    in vectorised batches; each is accepted or not by its own exact coin, in order, so the kept
    ones are i.i.d. N_Z(0, σ²) whatever the batch size.
    """
    s2 = Fraction(sigma2)
    if not s2 > 0:
        raise DpkitUsageError(f"discrete gaussian needs sigma2 > 0, got {sigma2!r}")
    t = 1 << math.isqrt(math.floor(s2)).bit_length()  # a power of two > floor(sigma)
    shift, twice = s2 / t, 2 * s2
    out: list[int] = []
    while len(out) < size:
        for y in discrete_laplace(rng, 1, t, 2 * (size - len(out)) + 8).tolist():
            if bernoulli_exp(rng, (abs(y) - shift) ** 2 / twice):
                out.append(y)
                if len(out) == size:
                    break
    return np.asarray(out, dtype=np.int64)


# --------------------------------------------------------------------------- inversion

_FLOAT_MARGIN = 1e-11  # relative; the fast path's float error is < 1e-13 (_inversion)
_TWO_M53 = 2.0**-53


def _rate(s: int, t: int, skips: bool) -> float:
    """c in float: s/t (relative error 2⁻⁵³), or for skips ln(1 + e^{-s/t}) (relative error
    < 10⁻¹³ for s/t ≤ 700; 0 beyond, handled by the caller)."""
    eps = s / t
    if not skips:
        return eps
    return math.log1p(math.exp(-eps)) if eps <= 700 else 0.0


def _ln1p_decimal(q: decimal.Decimal) -> decimal.Decimal:
    """ln(1 + q) for 0 < q ≤ 1, to the context's relative precision (series when q is tiny)."""
    if q < decimal.Decimal("1e-25"):
        return q * (1 - q / 2 + q * q / 3)  # relative error < q^3 < 1e-75
    return (1 + q).ln()


def _decide_exactly(rng: np.random.Generator, w: int, s: int, t: int, limit: int, skips: bool) -> int:
    """min(⌊-ln U / c⌋, limit) for U ∈ (1 − (w+1)/2^n, 1 − w/2^n], refined (c: :func:`_rate`).

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
            c = _ln1p_decimal((-(d(s) / d(t))).exp()) if skips else d(s) / d(t)
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


#: below this many draws, plain Python floats beat numpy's per-call overhead (forest nodes)
_SMALL = 32


def _inversion_small(rng: np.random.Generator, s: int, t: int, size: int, limit: int, skips: bool,
                     c: float) -> np.ndarray:
    """:func:`_inversion` one draw at a time, with the same bracket and the same margin."""
    out: list[int] = []
    margin_lo, margin_hi = 1 - _FLOAT_MARGIN, 1 + _FLOAT_MARGIN
    for w in (rng.bit_generator.random_raw(size).tolist() if size else []):
        k = w >> 11
        if k < 2**52:
            a_lo, a_hi = -math.log1p(-k * _TWO_M53), -math.log1p(-(k + 1) * _TWO_M53)
        else:
            rest = 2**53 - k
            a_lo = -math.log(rest * _TWO_M53)
            a_hi = -math.log((rest - 1) * _TWO_M53) if rest > 1 else math.inf
        if c > 0:
            y_lo, y_hi = a_lo / c * margin_lo, a_hi / c * margin_hi
        else:
            y_lo, y_hi = (math.inf if k > 0 else 0.0), math.inf
        if y_lo >= limit:
            out.append(limit)
        elif y_hi < math.inf and math.floor(y_lo) == math.floor(min(y_hi, limit)):
            out.append(math.floor(y_lo))
        else:
            out.append(_decide_exactly(rng, w, s, t, limit, skips))
    return np.array(out, dtype=np.int64)


def bernoulli_skips(rng: np.random.Generator, s: int, t: int, size: int, limit: int) -> np.ndarray:
    """``size`` exact draws of min(S, limit), P(S ≥ g) = (1 + e^{-s/t})^{-g}.

    S is the number of failures before a success in i.i.d. Bernoulli(p) trials,
    p = q/(1+q) = P(DLap(s/t) ≥ 1), q = e^{-s/t}: the gap to the next empty cell whose noise
    is positive.
    """
    return _inversion(rng, s, t, size, limit, skips=True)


def _inversion(rng: np.random.Generator, s: int, t: int, size: int, limit: int, *, skips: bool) -> np.ndarray:
    """min(⌊-ln U / c⌋, limit) for ``size`` exact uniforms U (module docstring).

    U = 1 − (w + R)/2^64 with w the 64 raw bits and R ∈ [0, 1) the bits not yet drawn.
    Float error: for U > 1/2, -log1p(-k/2^53) (k = w's top 53 bits, exact in a float) is
    relative-accurate to ~2⁻⁵²; for U ≤ 1/2, -ln((2^53 − k)/2^53) is computed from the exact
    integer 2^53 − k, |ln U| ≥ ln 2, so
    again ~2⁻⁵²; c carries at most ε·2⁻⁵³ < 10⁻¹³ (skips: ε ≤ 700) — inside the 10⁻¹¹ margin.
    Where floats are too coarse for the floor (G > 2⁵³) the margin exceeds their spacing,
    so those draws always take the exact path.
    """
    c = _rate(s, t, skips)
    if size <= _SMALL:
        return _inversion_small(rng, s, t, size, limit, skips, c)
    w = rng.bit_generator.random_raw(size).astype(np.uint64)
    out = np.full(size, limit, dtype=np.int64)
    # the fast path brackets U with its top 53 bits k (exact in a float):
    # U ∈ (1 − (k+1)/2^53, 1 − k/2^53], a superset of the 64-bit interval the exact path uses
    k = (w >> np.uint64(11)).astype(np.int64)
    kf = k.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_lo = -np.log1p(-kf * _TWO_M53)
        a_hi = -np.log1p(-(kf + 1.0) * _TWO_M53)
        high = np.flatnonzero(k >= 2**52)  # U ≤ 1/2: from the exact integer 2^53 − k instead
        rest = (2**53 - k[high]).astype(np.float64)
        a_lo[high] = -np.log(rest * _TWO_M53)
        a_hi[high] = -np.log((rest - 1.0) * _TWO_M53)
        if c > 0:
            y_lo = a_lo / c * (1 - _FLOAT_MARGIN)
            y_hi = a_hi / c * (1 + _FLOAT_MARGIN)
        else:  # skips at s/t > 700: c < e^{-700}, so any -ln U ≥ 2^-53 puts S beyond every table
            y_lo = np.where(k > 0, np.inf, 0.0)
            y_hi = np.full(size, np.inf)
    beyond = y_lo >= limit
    g_lo = np.floor(np.minimum(y_lo, limit))
    g_hi = np.floor(np.minimum(y_hi, limit))
    sure = ~beyond & (g_lo == g_hi) & np.isfinite(y_hi)
    out[sure] = g_lo[sure].astype(np.int64)
    for i in np.flatnonzero(~beyond & ~sure):
        out[i] = _decide_exactly(rng, int(w[i]), s, t, limit, skips)
    return out


# --------------------------------------------------------------------------- selection
# Exact coins for the selection mechanisms (exponential mechanism, permute-and-flip): no
# float exp() that underflows to 0 and no 53-bit coin, so every candidate keeps its exact,
# positive probability however far it trails (Canonne, Kamath & Steinke 2020).


def uniform_below(rng: np.random.Generator, n: int) -> int:
    """An exact uniform integer in [0, n) from the run generator's raw 64-bit words.

    Rejection sampling on ⌈log2 n⌉ bits (von Neumann): every value has probability exactly
    1/n; the expected number of rounds is below 2.
    """
    if n <= 0:
        raise ValueError("uniform_below needs n > 0")
    if n == 1:
        return 0
    bits = (n - 1).bit_length()
    words = -(-bits // 64)
    while True:
        raw = rng.bit_generator.random_raw(words)
        v = 0
        for w in raw.tolist():
            v = (v << 64) | int(w)
        v >>= words * 64 - bits
        if v < n:
            return v


def bernoulli(rng: np.random.Generator, p: Fraction) -> bool:
    """An exact Bernoulli(p) coin for a rational 0 ≤ p ≤ 1."""
    return uniform_below(rng, p.denominator) < p.numerator


def bernoulli_exp(rng: np.random.Generator, x: Fraction) -> bool:
    """An exact Bernoulli(e^{-x}) coin for a rational x ≥ 0 (Canonne, Kamath & Steinke 2020,
    "The Discrete Gaussian for Differential Privacy", Alg. 1).

    For x ≤ 1: draw A_k ~ Bernoulli(x/k) for k = 1, 2, ... until the first A_k = 0; the
    returned coin is 1 iff that k is odd — P = Σ (−x)^j/j! = e^{-x} exactly. For x > 1,
    e^{-x} = (e^{-1})^{⌊x⌋} · e^{-(x − ⌊x⌋)}: ⌊x⌋ + 1 independent coins, stopping at the
    first 0 (so a large x costs ~1.6 coins on average, not ⌊x⌋).
    """
    if x < 0:
        raise ValueError("bernoulli_exp needs x >= 0")
    whole = math.floor(x)
    for _ in range(whole):
        if not _bernoulli_exp_unit(rng, Fraction(1)):
            return False
    return _bernoulli_exp_unit(rng, x - whole)


def _bernoulli_exp_unit(rng: np.random.Generator, x: Fraction) -> bool:
    """Bernoulli(e^{-x}) for 0 ≤ x ≤ 1 (CKS 2020 Alg. 1, first case)."""
    k = 1
    while bernoulli(rng, x / k):
        k += 1
    return k % 2 == 1


def bernoulli_exp_probability(x: Fraction, terms: int = 60) -> tuple[Fraction, Fraction]:
    """Exact bounds [lo, hi] on the probability that :func:`bernoulli_exp` returns 1.

    The law of the sampler written symbolically (for tests): P(x ≤ 1) = Σ_j (−x)^j / j!, an
    alternating series whose partial sums bracket it; for x > 1 the product of ⌊x⌋ such
    factors at x = 1 and one at x − ⌊x⌋. Both bounds are rationals, so a test can check that
    the probability is positive and within a stated factor of e^{-x} without floats.
    """
    def unit(y: Fraction) -> tuple[Fraction, Fraction]:
        s, term, sums = Fraction(0), Fraction(1), []
        for j in range(terms + 1):
            s += term
            sums.append(s)
            term = term * (-y) / (j + 1)
        a, b = sums[-1], sums[-2]
        return min(a, b), max(a, b)

    whole = math.floor(x)
    lo1, hi1 = unit(Fraction(1))
    lof, hif = unit(x - whole)
    return lo1**whole * lof, hi1**whole * hif
