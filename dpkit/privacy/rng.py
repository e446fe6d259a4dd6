"""Where dpkit's randomness comes from (docs/algorithms.md §0 rule 3).

By default a numpy ``Generator`` over randomgen's ChaCha20 stream cipher keyed from the OS
CSPRNG (``os.urandom`` via ``secrets``): the full numpy sampling API on a cryptographic bit
stream, so nobody can predict or replay the noise.

A seed makes a run reproducible, in one of two forms (docs/formats.md, "seeded runs"):

* a **key** — ``0x`` and 32 to 64 hex digits (128 to 256 bits, e.g. ``openssl rand -hex 16``
  with ``0x`` in front). A run never uses the key itself: :func:`run_key` derives the run's
  own ChaCha20 key from it with HKDF-SHA256 (RFC 5869) over the run's identity — the input's
  fingerprint, the command, the algorithm, ε, δ and every parameter that shapes the output.
  So one key may be reused across runs and data sets: neighbouring inputs, or the same input
  under other parameters, draw independent noise (docs/ledger.md, "seeded runs"),
  while the same key, input, command and parameters give the same bytes. Nobody can search
  2^100 or more keys, so the release stays ε-DP as long as the key stays secret (a
  computational assumption: HKDF-SHA256 and ChaCha20 are pseudo-random); the report keeps
  ``model: epsilon-dp`` and says ``seeded: true``. Keys that are plainly not random (below
  2^100, or fewer than 8 distinct hex digits) are refused (:func:`check_seed`) — a heuristic
  against hand-typed keys: a key that merely looks random passes it.
* a plain non-negative **integer** (``--seed 3``) feeds PCG64 for experiments. Small seeds
  can be tried one by one to strip the noise, so the report says
  ``model: none``, ``guarantee: none (seeded: reproducible, not private)``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

import numpy as np

from dpkit import validate

Seed = int | str  # an integer seed, or a key "0x…" (lower case)


is_key = validate.is_key
#: a key below 2^100, or written with fewer distinct hex digits, was not drawn at random
WEAK_KEY_BITS = validate.WEAK_KEY_BITS
MIN_KEY_DIGITS = validate.MIN_KEY_DIGITS
#: HKDF's salt: names the derivation, so a dpkit run key is never another protocol's key
_HKDF_SALT = b"dpkit run key v1"
HOW_TO_KEY = validate.HOW_TO_KEY


def make_rng(seed: Seed | None = None, *, context: bytes | None = None) -> np.random.Generator:
    """A generator for one run: ChaCha20 keyed by the OS (None) or by a hex key, else PCG64.

    With a key and a ``context`` (the run's identity, :func:`run_context`), ChaCha20 is keyed
    by :func:`run_key` of the two, as every private run is (:class:`dpkit.run.PrivateRun`);
    without one, by the key itself — the same stream on every call, for tests and callers
    who derive their own keys.
    """
    if seed is None or is_key(seed):
        from randomgen import ChaCha

        if seed is None:
            key = secrets.randbits(256)
        else:
            key = int(str(seed), 16) if context is None else run_key(str(seed), context)
        return np.random.Generator(ChaCha(key=key, counter=0, rounds=20))
    return np.random.Generator(np.random.PCG64(check_seed(seed)))


def run_key(key: str, context: bytes) -> int:
    """The 256-bit ChaCha20 key of one run: HKDF-SHA256 (RFC 5869, extract then one expand
    block) of the user's secret ``key`` with ``info = context``.

    Two runs share noise only when they share key and context, i.e. when they are the same
    run on the same bytes. HKDF is a PRF in ``info`` under the key, so for
    anyone without the key the streams of different contexts are independent.
    """
    prk = hmac.new(_HKDF_SALT, bytes.fromhex(key[2:]), hashlib.sha256).digest()
    okm = hmac.new(prk, context + b"\x01", hashlib.sha256).digest()
    return int.from_bytes(okm, "big")


def run_context(**identity: Any) -> bytes:
    """A canonical encoding of a run's identity (sorted JSON; numbers by ``repr``, sets
    sorted, anything else by ``repr``): equal identities give equal bytes."""
    return json.dumps(identity, sort_keys=True, default=_canonical, separators=(",", ":")).encode()


def _canonical(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    return repr(value)


#: a seed is checked by :func:`dpkit.validate.seed` (one rule for every front end)
check_seed = validate.seed


def derive_seed(rng: np.random.Generator) -> int:
    """An integer seed drawn from ``rng``, for libraries that want a ``random_state``.

    Only for post-processing of already-private values (e.g. k-means++ on noisy buckets).
    """
    return int(rng.integers(0, 2**31 - 1))
