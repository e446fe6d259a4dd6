"""Where dpkit's randomness comes from (docs/algorithms.md §0 rule 3).

By default a numpy ``Generator`` over randomgen's ChaCha20 stream cipher keyed from the OS
CSPRNG (``os.urandom`` via ``secrets``): the full numpy sampling API on a cryptographic bit
stream, so nobody can predict or replay the noise. With a seed, a reproducible PCG64
generator for experiments; such a release is not private against anyone who knows the seed,
and the report says ``"seeded": true``.
"""

from __future__ import annotations

import secrets

import numpy as np

from dpkit.errors import DpkitUsageError


def make_rng(seed: int | None = None) -> np.random.Generator:
    """A generator for one run: cryptographic when ``seed`` is None, reproducible otherwise."""
    if seed is None:
        from randomgen import ChaCha

        return np.random.Generator(ChaCha(key=secrets.randbits(256), counter=0, rounds=20))
    return np.random.Generator(np.random.PCG64(check_seed(seed)))


def check_seed(seed: object) -> int:
    """Return ``seed`` as a non-negative int, or raise a usage error naming the bad value."""
    if isinstance(seed, bool):
        raise DpkitUsageError(f"--seed must be a non-negative integer, got {seed!r}")
    try:
        value = int(str(seed), 10) if isinstance(seed, str) else int(seed)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(float("inf"))
        raise DpkitUsageError(f"--seed must be a non-negative integer, got {seed!r}") from None
    if value < 0 or (not isinstance(seed, str) and value != seed):
        raise DpkitUsageError(f"--seed must be a non-negative integer, got {seed!r}")
    return value


def derive_seed(rng: np.random.Generator) -> int:
    """An integer seed drawn from ``rng``, for libraries that want a ``random_state``.

    Only for post-processing of already-private values (e.g. k-means++ on noisy buckets).
    """
    return int(rng.integers(0, 2**31 - 1))
