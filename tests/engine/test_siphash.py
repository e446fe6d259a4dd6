"""The forest's record → tree PRF is SipHash-2-4 under a 128-bit key (issue 24 item 3)."""

from __future__ import annotations

import numpy as np

from dpkit.algorithms.forest.dprf import partition_key
from dpkit.engine.keys import RowHash, evaluate, siphash24
from dpkit.privacy import make_rng

MASK = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & MASK


def reference_siphash24(key: bytes, msg: bytes) -> int:
    """A scalar transcription of the reference C code (any message length), written apart from
    the vectorized one so that the two can disagree."""
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def sipround() -> None:
        v[0] = (v[0] + v[1]) & MASK; v[1] = _rotl(v[1], 13); v[1] ^= v[0]; v[0] = _rotl(v[0], 32)  # noqa: E702
        v[2] = (v[2] + v[3]) & MASK; v[3] = _rotl(v[3], 16); v[3] ^= v[2]  # noqa: E702
        v[0] = (v[0] + v[3]) & MASK; v[3] = _rotl(v[3], 21); v[3] ^= v[0]  # noqa: E702
        v[2] = (v[2] + v[1]) & MASK; v[1] = _rotl(v[1], 17); v[1] ^= v[2]; v[2] = _rotl(v[2], 32)  # noqa: E702

    full = len(msg) - len(msg) % 8
    blocks = [int.from_bytes(msg[i:i + 8], "little") for i in range(0, full, 8)]
    blocks.append(((len(msg) & 0xFF) << 56) | int.from_bytes(msg[full:], "little"))
    for m in blocks:
        v[3] ^= m
        sipround()
        sipround()
        v[0] ^= m
    v[2] ^= 0xFF
    for _ in range(4):
        sipround()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


KEY = bytes(range(16))


def test_reference_matches_the_paper_vector() -> None:
    # SipHash paper, Appendix A: key 00..0f, message 00..0e -> a129ca6149be45e5
    assert reference_siphash24(KEY, bytes(range(15))) == 0xA129CA6149BE45E5


def test_vectorized_matches_reference() -> None:
    k0, k1 = int.from_bytes(KEY[:8], "little"), int.from_bytes(KEY[8:], "little")
    words = np.array([int.from_bytes(bytes(range(8)), "little"), 0, 1, 2**63, MASK, 123456789], dtype=np.uint64)
    got = siphash24(words, k0, k1)
    want = [reference_siphash24(KEY, int(w).to_bytes(8, "little")) for w in words]
    assert got.tolist() == want
    rng = np.random.default_rng(5)
    for _ in range(20):
        key = rng.bytes(16)
        w = rng.integers(0, 2**63, 50, dtype=np.uint64)
        got = siphash24(w, int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little"))
        assert got.tolist() == [reference_siphash24(key, int(x).to_bytes(8, "little")) for x in w]


def test_the_whole_128_bit_key_counts() -> None:
    """The old hash kept 64 bits of its key: two keys equal in their low half agreed."""
    cols = {"x": np.zeros(1000)}
    a = evaluate(RowHash(5 | (1 << 64), 7), cols)
    b = evaluate(RowHash(5 | (2 << 64), 7), cols)
    assert (a != b).mean() > 0.5


def test_partition_key_has_128_bits_from_the_run_rng() -> None:
    keys = [partition_key(make_rng(s)) for s in range(50)]
    assert all(0 <= k < 2**128 for k in keys) and max(keys) >= 2**100
    assert partition_key(make_rng(3)) == partition_key(make_rng(3))


def test_assignment_is_uniform_and_blocks_agree() -> None:
    """Chi-square of 200,000 positions over 7 trees (fixed key; 6 d.o.f., p > 0.001 => < 22.5)."""
    key = partition_key(make_rng(11))
    h = evaluate(RowHash(key, 7), {"x": np.zeros(200_000)})
    counts = np.bincount(h, minlength=7)
    expected = len(h) / 7
    assert ((counts - expected) ** 2 / expected).sum() < 22.5
    assert (evaluate(RowHash(key, 7), {"x": np.zeros(100)}, start=1000) == h[1000:1100]).all()
