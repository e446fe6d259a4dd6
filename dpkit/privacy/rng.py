"""Where dpkit's randomness comes from (docs/algorithms.md §0 rule 3).

By default a numpy ``Generator`` over randomgen's ChaCha20 stream cipher keyed from the OS
CSPRNG (``os.urandom`` via ``secrets``): the full numpy sampling API on a cryptographic bit
stream, so nobody can predict or replay the noise.

A seed makes a run reproducible, in one of two forms (docs/formats.md, "seeded runs"):

* a **key** — ``0x`` and 32 to 64 hex digits (128 to 256 bits, e.g. ``openssl rand -hex 16``
  with ``0x`` in front) — keys the same ChaCha20 generator. Nobody can search 2^128 keys, so
  the release stays ε-DP as long as the key stays secret; the report keeps
  ``model: epsilon-dp`` and says ``seeded: true``.
* a plain non-negative **integer** (``--seed 3``) feeds PCG64 for experiments. Small seeds
  can be tried one by one to strip the noise, so the report says
  ``model: none``, ``guarantee: none (seeded: reproducible, not private)``.
"""

from __future__ import annotations

import re
import secrets

import numpy as np

from dpkit.errors import DpkitUsageError

#: a secret key: "0x" + 128 to 256 bits in hex
_KEY = re.compile(r"0x[0-9a-f]{32,64}")

Seed = int | str  # an integer seed, or a key "0x…" (lower case)


def is_key(seed: Seed | None) -> bool:
    """True for a ≥128-bit hex key (a seeded run that keeps its ε-DP guarantee)."""
    return isinstance(seed, str) and _KEY.fullmatch(seed) is not None


def make_rng(seed: Seed | None = None) -> np.random.Generator:
    """A generator for one run: ChaCha20 keyed by the OS (None) or by a hex key, else PCG64."""
    if seed is None or is_key(seed):
        from randomgen import ChaCha

        key = secrets.randbits(256) if seed is None else int(str(seed), 16)
        return np.random.Generator(ChaCha(key=key, counter=0, rounds=20))
    return np.random.Generator(np.random.PCG64(check_seed(seed)))


def check_seed(seed: object) -> Seed:
    """``seed`` as a non-negative int, or as a normalised key ``0x…`` (32–64 hex digits).

    Anything else — negative, fractional, a short hex string — is a usage error naming it.
    """
    bad = f"--seed must be a non-negative integer or a key of 0x + 32 to 64 hex digits, got {seed!r}"
    if isinstance(seed, bool):
        raise DpkitUsageError(bad)
    if isinstance(seed, str) and seed.strip().lower().startswith("0x"):
        key = seed.strip().lower()
        if not is_key(key):
            raise DpkitUsageError(bad)
        return key
    try:
        value = int(str(seed), 10) if isinstance(seed, str) else int(seed)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(float("inf"))
        raise DpkitUsageError(bad) from None
    if value < 0 or (not isinstance(seed, str) and value != seed):
        raise DpkitUsageError(bad)
    return value


def derive_seed(rng: np.random.Generator) -> int:
    """An integer seed drawn from ``rng``, for libraries that want a ``random_state``.

    Only for post-processing of already-private values (e.g. k-means++ on noisy buckets).
    """
    return int(rng.integers(0, 2**31 - 1))
