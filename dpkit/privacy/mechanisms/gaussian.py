"""The discrete Gaussian family: one draw for m columns at once under zCDP (Canonne, Kamath &
Steinke 2020; Bun & Steinke 2016), the metadata's noise."""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dpkit.privacy import exact
from dpkit.privacy.accountant import Accountant


def joint_discrete_gaussian(
    counts: Sequence[np.ndarray],
    *,
    sigma2: Fraction,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    accountant: Accountant,
    step: str,
    mechanism: str,
) -> list[np.ndarray]:
    """Exact discrete Gaussian noise N_ℤ(0, σ²) on m count vectors released as one step.

    A record adds one to one cell of each vector, so the L2 sensitivity is √m and the release
    is ρ-zCDP with ρ = m/(2σ²) (Canonne, Kamath & Steinke 2020, Thm. 4); ``epsilon`` and
    ``delta`` are the caller's conversion of that ρ (:mod:`dpkit.privacy.concentrated`),
    recorded as they are under ``mechanism``. Spends once, before drawing; the vectors are
    noised in their order (:func:`dpkit.privacy.exact.discrete_gaussian`)."""
    accountant.spend(step, mechanism, epsilon, math.sqrt(len(counts)), delta=delta)
    return [c + exact.discrete_gaussian(rng, sigma2, int(c.size)) for c in counts]
