"""Keys: the public functions of a record that the engines count by.

An algorithm never reads records. It names *keys* — a column's codes, those codes mapped
through a public lookup table (a cut's leaf → node map), a numeric column cut at public
edges (a cut's intervals, a grid), a keyed hash of the row's position (the forest's record →
tree assignment) — and asks an engine (:mod:`dpkit.engine`) for the exact counts of
records per combination of keys. Every parameter of a key is public: it comes from the
schema, from the parameters, or from noisy choices already made and accounted. So shipping a
key to a Spark executor leaks nothing, and both engines evaluate a key with the *same* numpy
function (:func:`evaluate`), which is what makes their outputs byte-identical.

Each key evaluates to int64 codes in ``[0, size)``; the caller knows ``size`` (it built the
lookup table or the edges) and passes the shape of the table it wants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


class Key:
    """A public function of a record: what the engines count by.

    A key evaluates itself (:meth:`evaluate`), so an engine needs no knowledge of the
    algorithm that built it: the generic keys live here, an algorithm's own keys (a forest's
    record routing, a k-means assignment) next to the algorithm. Both engines call the same
    :meth:`evaluate` on the same encoded block, which is what makes them agree bit for bit.
    """

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        """The integer codes of the key for a block of rows whose first row is ``start``.

        ``columns`` holds the block's encoded columns (and derived keys); ``n`` its length
        (needed only by keys that read no column)."""
        raise NotImplementedError

    def reads(self) -> set[str]:
        """The encoded columns the key reads (to load only those)."""
        return set()

    def uses_position(self) -> bool:
        """Whether the key depends on the row's position in the input (an engine must then
        number the rows in input order)."""
        return False


@dataclass(frozen=True, eq=False)
class Col(Key):
    """The integer codes of a column as encoded (categorical leaf codes, or a derived key)."""

    name: str

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        col = np.asarray(columns[self.name])
        return col if col.dtype.kind in "iu" else col.astype(np.int64)

    def reads(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True, eq=False)
class Lookup(Key):
    """A column's codes mapped through a public table: ``table[codes]``."""

    name: str
    table: np.ndarray

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        table = np.asarray(self.table, dtype=np.int64)
        small = table.astype(_small(int(table.min()), int(table.max()))) if table.size else table
        return small[np.asarray(columns[self.name])]

    def reads(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True, eq=False)
class Bins(Key):
    """A numeric column's interval index for the public interval starts ``starts``.

    Value v falls in interval i when ``starts[i] <= v < starts[i+1]``; values below the first
    start go to 0 (they were clipped to the bounds on load) — ``counting.group_of``. With
    ``missing`` ≥ 0, a missing value (NaN: the missing bucket of ``missing_policy: keep``) goes
    to code ``missing`` (the bucket after the intervals, or 0 while the column is one value).
    """

    name: str
    starts: np.ndarray
    missing: int = -1

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        starts = np.asarray(self.starts, dtype=float)
        values = np.asarray(columns[self.name], dtype=float)
        idx = np.searchsorted(starts, values, side="right") - 1
        np.clip(idx, 0, len(starts) - 1, out=idx)
        if self.missing >= 0:
            idx[np.isnan(values)] = self.missing
        return idx.astype(_small(0, max(len(starts) - 1, self.missing)))

    def reads(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True, eq=False)
class Grid(Key):
    """A numeric column on a regular grid of ``2**bits`` cells over the public ``[lo, hi]``;
    the upper edge belongs to the last cell (``counting.grid_cells``)."""

    name: str
    lo: float
    hi: float
    bits: int

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        size = 1 << int(self.bits)
        u = np.clip((np.asarray(columns[self.name], dtype=float) - self.lo) / (self.hi - self.lo), 0.0, 1.0)
        col = np.floor(u * size).astype(np.int64)
        np.minimum(col, size - 1, out=col)
        return col

    def reads(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True, eq=False)
class Uniform(Key):
    """A numeric column on ``size`` equal cells over the public ``[lo, hi]`` (any size, not
    only powers of two); values outside go to the end cells (``counting.histogram``)."""

    name: str
    lo: float
    hi: float
    size: int

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        width = (float(self.hi) - float(self.lo)) / int(self.size)
        idx = np.floor((np.asarray(columns[self.name], dtype=float) - float(self.lo)) / width).astype(np.int64)
        return np.clip(idx, 0, int(self.size) - 1)

    def reads(self) -> set[str]:
        return {self.name}


@dataclass(frozen=True, eq=False)
class Flag(Key):
    """0 where every key (``mode="all"``) or some key (``mode="any"``) is ≥ 0, else −1: a row
    filter (:meth:`dpkit.engine.frame.Frame.where`) or a marker of rows with a property
    (``first_rows``)."""

    keys: tuple[Key, ...]
    mode: str = "all"

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        codes = [k.evaluate(columns, start, n) >= 0 for k in self.keys]
        if not codes:
            if n is None:
                n = len(next(iter(columns.values())))
            return np.zeros(n, dtype=np.int8)
        hit = np.logical_and.reduce(codes) if self.mode == "all" else np.logical_or.reduce(codes)
        return np.where(hit, 0, -1).astype(np.int8)

    def reads(self) -> set[str]:
        return set().union(*(k.reads() for k in self.keys)) if self.keys else set()

    def uses_position(self) -> bool:
        return any(k.uses_position() for k in self.keys)


@dataclass(frozen=True, eq=False)
class CellIndex(Key):
    """The index of the record's cell of ``keys`` (shape ``shape``) among ``cells``, the
    ``(m, d)`` cells of a :meth:`~dpkit.engine.frame.Frame.cells` answer (lexicographic order);
    −1 for a record in no listed cell. Refining a partition by one more column: the classes of
    (class, value) numbered as ``cells`` lists them."""

    keys: tuple[Key, ...]
    shape: tuple[int, ...]
    cells: np.ndarray

    def _packed(self, codes: list[np.ndarray]) -> np.ndarray:
        flat = np.zeros(len(codes[0]) if codes else 0, dtype=np.int64)
        for c, s in zip(codes, self.shape, strict=True):
            flat *= int(s)
            flat += np.asarray(c, dtype=np.int64)
        return flat

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        codes = [k.evaluate(columns, start, n) for k in self.keys]
        valid = np.logical_and.reduce([c >= 0 for c in codes]) if codes else None
        flat = self._packed(codes)
        table = self._packed([np.asarray(self.cells[:, j]) for j in range(len(self.keys))])
        idx = np.searchsorted(table, flat)
        idx = np.minimum(idx, max(len(table) - 1, 0))
        found = (table[idx] == flat) if len(table) else np.zeros(len(flat), dtype=bool)
        if valid is not None:
            found &= valid
        out = np.where(found, idx, -1)
        return out.astype(np.int32) if len(table) < 2**31 else out

    def reads(self) -> set[str]:
        return set().union(*(k.reads() for k in self.keys)) if self.keys else set()

    def uses_position(self) -> bool:
        return any(k.uses_position() for k in self.keys)


@dataclass(frozen=True, eq=False)
class Nearest(Key):
    """The index of the nearest of the public ``centres`` (squared Euclidean) to the point
    of ``columns``, both shifted by ``offset`` first (``counting.nearest_centre``)."""

    columns: tuple[str, ...]
    centres: np.ndarray
    offset: np.ndarray

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        from dpkit.data.counting import nearest_centre

        offset = np.asarray(self.offset, dtype=float)
        pts = np.stack([np.asarray(columns[c], dtype=float) for c in self.columns], axis=1) - offset
        return nearest_centre(pts, np.asarray(self.centres, dtype=float))

    def reads(self) -> set[str]:
        return set(self.columns)


@dataclass(frozen=True, eq=False)
class RowHash(Key):
    """A keyed pseudo-random function of the row's 0-based position, reduced to ``[0, modulo)``.

    SipHash-2-4 (Aumasson & Bernstein 2012) of the position as 8 little-endian bytes under the
    128-bit ``key`` (low 64 bits k0, high 64 bits k1), then ``mod modulo``. The key is drawn
    from the run's rng and never released, so — assuming SipHash-2-4 is a PRF, the
    computational assumption docs/forest.md states — the assignment is indistinguishable from
    uniform and independent per position for anyone without it (an invertible mix such as ``splitmix64(p XOR K)`` with a 63-bit
    key would not be; docs/forest.md). The modulo
    bias is below ``modulo / 2^64``. Both engines number rows in input order and evaluate this
    same function.
    """

    key: int
    modulo: int

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        if n is None:
            n = len(next(iter(columns.values())))
        if self.modulo == 1:  # one tree: nothing to hash
            return np.zeros(n, dtype=np.int64)
        pos = np.arange(start, start + n, dtype=np.uint64)
        h = siphash24(pos, self.key & 0xFFFFFFFFFFFFFFFF, (self.key >> 64) & 0xFFFFFFFFFFFFFFFF)
        return (h % np.uint64(self.modulo)).astype(np.int64)

    def uses_position(self) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class Route(Key):
    """Where a record goes one tree level down (DiffPRFs' per-level partition).

    ``node`` is the key of the record's node at this level (−1: in no node being split).
    For each node i: ``column[i]`` is the attribute it splits on ('' for a leaf: the record
    leaves the tree, key −1); numeric splits send ``value > threshold[i]`` to child
    ``offset[i] + 1`` and the rest to ``offset[i]``; categorical splits send code c to
    ``offset[i] + c``. A numeric split with ``missing[i]`` (a third child for the missing
    values: dpkit.algorithms.forest.dprf, "Missing values") sends a missing value (NaN) to
    ``offset[i] + 2``; without it a NaN goes to ``offset[i]`` (NaN > t is false).
    """

    node: Key
    column: tuple[str, ...]
    threshold: np.ndarray
    offset: np.ndarray
    numeric: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    missing: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def evaluate(self, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
        node = self.node.evaluate(columns, start, n)
        out = np.full(node.shape, -1, dtype=np.int64)
        inside = node >= 0
        for name in sorted({c for c in self.column if c}):
            of_col = np.array([c == name for c in self.column], dtype=bool)
            rows = inside & of_col[np.where(inside, node, 0)]
            if not rows.any():
                continue
            nd = node[rows]
            v = np.asarray(columns[name])[rows]
            if self.numeric[nd].any():
                vf = v.astype(float)
                step = (vf > self.threshold[nd]).astype(np.int64)
                if self.missing.size and self.missing[nd].any():
                    step[np.isnan(vf) & self.missing[nd]] = 2
            else:
                step = v.astype(np.int64)
            out[rows] = self.offset[nd] + step
        return out

    def reads(self) -> set[str]:
        return self.node.reads() | {c for c in self.column if c}

    def uses_position(self) -> bool:
        return self.node.uses_position()


def siphash24(words: np.ndarray, k0: int, k1: int) -> np.ndarray:
    """SipHash-2-4 of each uint64 in ``words``, taken as an 8-byte little-endian message, under
    the key (k0, k1) — vectorized over numpy uint64 with wrapping arithmetic.

    The reference algorithm (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012,
    §2) for a message of exactly one 8-byte block: compress the block, then the final block
    ``8 << 56`` (the length byte), each with 2 SipRounds, then 4 finalization rounds.
    tests/engine/test_siphash.py checks it against the paper's test vector through a scalar
    transcription of the reference code.
    """
    m = np.asarray(words, dtype=np.uint64)
    v0 = np.full(m.shape, np.uint64(k0 ^ 0x736F6D6570736575), dtype=np.uint64)
    v1 = np.full(m.shape, np.uint64(k1 ^ 0x646F72616E646F6D), dtype=np.uint64)
    v2 = np.full(m.shape, np.uint64(k0 ^ 0x6C7967656E657261), dtype=np.uint64)
    v3 = np.full(m.shape, np.uint64(k1 ^ 0x7465646279746573), dtype=np.uint64)
    tmp = np.empty_like(m)

    def rotl(x: np.ndarray, b: int) -> None:  # in place: x = (x << b) | (x >> (64 - b))
        np.right_shift(x, np.uint64(64 - b), out=tmp)
        np.left_shift(x, np.uint64(b), out=x)
        np.bitwise_or(x, tmp, out=x)

    def rounds(count: int) -> None:
        for _ in range(count):
            np.add(v0, v1, out=v0)
            rotl(v1, 13)
            np.bitwise_xor(v1, v0, out=v1)
            rotl(v0, 32)
            np.add(v2, v3, out=v2)
            rotl(v3, 16)
            np.bitwise_xor(v3, v2, out=v3)
            np.add(v0, v3, out=v0)
            rotl(v3, 21)
            np.bitwise_xor(v3, v0, out=v3)
            np.add(v2, v1, out=v2)
            rotl(v1, 17)
            np.bitwise_xor(v1, v2, out=v1)
            rotl(v2, 32)

    np.bitwise_xor(v3, m, out=v3)
    rounds(2)
    np.bitwise_xor(v0, m, out=v0)
    last = np.uint64(8 << 56)
    np.bitwise_xor(v3, last, out=v3)
    rounds(2)
    np.bitwise_xor(v0, last, out=v0)
    np.bitwise_xor(v2, np.uint64(0xFF), out=v2)
    rounds(4)
    np.bitwise_xor(v0, v1, out=v0)
    np.bitwise_xor(v2, v3, out=v2)
    return np.bitwise_xor(v0, v2, out=v0)


def columns_of(key: Key) -> set[str]:
    """The encoded columns a key reads (to load only those)."""
    return key.reads()


def _small(low: int, high: int) -> type:
    """The smallest signed integer type that holds ``[low, high]``."""
    for t in (np.int8, np.int16, np.int32):
        info = np.iinfo(t)
        if info.min <= low and high <= info.max:
            return t
    return np.int64


def evaluate(key: Key, columns: Mapping[str, np.ndarray], start: int = 0, n: int | None = None) -> np.ndarray:
    """The integer codes of ``key`` for a block of rows (the block's first row is ``start``).

    The one entry both engines call, so they agree bit for bit. Codes of a column, a lookup
    or bins come in the smallest signed type that holds them (int8 for most cuts: a 10M-row
    table's keys then take 10 MB each, not 80), the others as int64; counting widens them one
    at a time.
    """
    if not isinstance(key, Key):
        raise TypeError(f"not a key: {key!r}")
    return key.evaluate(columns, start, n)


def shape_check(keys: Sequence[Key], shape: Sequence[int]) -> None:
    if len(keys) != len(shape):
        raise ValueError(f"{len(keys)} keys but a shape of {len(shape)} dimensions")
