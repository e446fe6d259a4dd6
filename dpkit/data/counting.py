"""The sufficient statistics the algorithms need — the one place that scans encoded data.

Algorithms never loop over records: they ask this module for counts (per group and class,
per cell of a contingency table, per candidate split), computed with numpy ``bincount`` /
``ravel_multi_index`` in O(n) vectorized passes. Keeping every scan here means a faster or
distributed counting engine can later replace this module alone.

Everything returned here is *exact* and therefore private: it must only flow into a
``dpkit.privacy`` mechanism, never into a report or an output.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np


def class_counts(groups: np.ndarray, y: np.ndarray, n_groups: int, n_classes: int) -> np.ndarray:
    """Counts of (group, class) pairs as an ``(n_groups, n_classes)`` int64 array.

    ``groups`` and ``y`` are non-negative integer codes aligned by record.
    """
    flat = groups.astype(np.int64) * n_classes + y.astype(np.int64)
    return np.bincount(flat, minlength=n_groups * n_classes).reshape(n_groups, n_classes)


def group_of(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Index of the group each value falls in, for groups ``[starts[i], starts[i+1])``.

    Serves both generalization by a taxonomy cut (leaf codes against the sorted first
    leaf of every cut node) and numeric binning (values against interval lower edges).
    """
    idx = np.searchsorted(starts, values, side="right") - 1
    np.clip(idx, 0, len(starts) - 1, out=idx)
    # the smallest integer type: a cut's codes of every record stay in memory (10M rows x d)
    m = len(starts)
    return idx.astype(np.int8 if m <= 127 else np.int16 if m <= 32767 else np.int32)


def cell_counts(codes: Sequence[np.ndarray], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Sparse counts of a contingency table: ``(cells, counts)`` for the non-empty cells only.

    ``codes[j]`` are the per-record indices along dimension j (size ``shape[j]``). ``cells``
    is an ``(m, d)`` int64 array of the non-empty cells' coordinates (lexicographic order)
    and ``counts`` their record counts. Works for tables far too large to materialize and
    for any number of dimensions: dimensions of size 1 are skipped, the others are packed
    in mixed radix into as few int64 keys as keep each key below 2^62 (numpy's
    ``ravel_multi_index`` allows at most 64 dimensions and one int64).
    """
    return cell_counts_blocks([codes], shape)


def cell_counts_blocks(blocks: Iterable[Sequence[np.ndarray]], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cell_counts` of the records of several blocks (each a list of per-dimension
    codes), counted block by block and merged: memory is one block's keys, not n's."""
    return merge_cell_keys([cell_keys(codes, shape) for codes in blocks], shape)


def _key_groups(shape: Sequence[int]) -> list[list[int]]:
    """The dimensions of size > 1, grouped so that each group's mixed-radix key is below 2^62."""
    groups: list[list[int]] = [[]]
    size = 1
    for j in range(len(shape)):
        s = int(shape[j])
        if s <= 1:
            continue
        if groups[-1] and size * s >= 2**62:
            groups.append([])
            size = 1
        groups[-1].append(j)
        size *= s
    return groups if groups[0] else []


def cell_keys(codes: Sequence[np.ndarray], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """One block's non-empty cells as packed keys ``(m, groups)`` (lexicographic order) and
    their counts: what :func:`merge_cell_keys` adds up over blocks."""
    d = len(shape)
    if not d:
        raise ValueError("cell_counts needs at least one dimension")
    if len(codes) != d:
        raise ValueError("cell_counts needs at least one dimension" if not codes else
                         f"{len(codes)} codes but a shape of {d} dimensions")
    n = len(codes[0])
    groups = _key_groups(shape)
    if n == 0:
        return np.zeros((0, len(groups)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    if not groups:
        return np.zeros((1, 0), dtype=np.int64), np.array([n], dtype=np.int64)
    keys = []
    for g in groups:
        flat = np.zeros(n, dtype=np.int64)
        for j in g:
            c = codes[j]
            if c.size and (c.min() < 0 or c.max() >= int(shape[j])):
                raise ValueError(f"cell_counts: a code outside [0, {int(shape[j])})")
            flat *= int(shape[j])
            flat += c
        keys.append(flat)
    if len(keys) == 1:
        cells = math.prod(int(shape[j]) for j in groups[0])
        if cells <= max(_DENSE_LIMIT, 2 * n):
            # few cells for the rows: one O(n) bincount instead of a sort (the same answer)
            counts = np.bincount(keys[0], minlength=cells)
            ids = np.flatnonzero(counts)
            return ids.reshape(-1, 1), counts[ids].astype(np.int64)
    return _unique_rows(keys[0] if len(keys) == 1 else np.stack(keys, axis=1))


def merge_cell_keys(parts: Sequence[tuple[np.ndarray, np.ndarray]], shape: Sequence[int]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(cells, counts)`` as :func:`cell_counts` gives them, from the blocks' :func:`cell_keys`
    (the same cell in several blocks adds up)."""
    d = len(shape)
    if not d:
        raise ValueError("cell_counts needs at least one dimension")
    groups = _key_groups(shape)
    found = [(p, c) for p, c in parts if len(c)]
    if not found:
        return np.zeros((0, d), dtype=np.int64), np.zeros(0, dtype=np.int64)
    if not groups:
        return np.zeros((1, d), dtype=np.int64), np.array([int(sum(int(c[0]) for _, c in found))], dtype=np.int64)
    if len(found) == 1:
        packed, counts = found[0]
    else:
        allw = np.concatenate([c for _, c in found])
        all_keys = np.concatenate([p for p, _ in found])
        ids, inverse = _unique_rows(all_keys[:, 0] if all_keys.shape[1] == 1 else all_keys, inverse=True)
        counts = np.bincount(inverse, weights=allw, minlength=len(ids)).astype(np.int64) \
            if allw.sum() < 2**53 else _sum_int(inverse, allw, len(ids))
        packed = ids
    cells = np.zeros((packed.shape[0], d), dtype=np.int64)
    for k, g in enumerate(groups):
        rest = packed[:, k].copy()
        for j in reversed(g):
            cells[:, j] = rest % int(shape[j])
            rest //= int(shape[j])
    return cells, counts.astype(np.int64)


def _unique_rows(keys: np.ndarray, *, inverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Distinct keys (rows of an ``(n, g)`` array, or values of an ``(n,)`` one) as an ``(m, g)``
    array in lexicographic order, with their counts (or, ``inverse``, each key's index)."""
    if keys.ndim == 1:
        if inverse:
            ids, inv = np.unique(keys, return_inverse=True)
            return ids.reshape(-1, 1), inv.reshape(-1)
        ids, counts = np.unique(keys, return_counts=True)
        return ids.reshape(-1, 1), counts
    if inverse:
        ids, inv = np.unique(keys, axis=0, return_inverse=True)
        return ids, inv.reshape(-1)
    return np.unique(keys, axis=0, return_counts=True)


def _sum_int(idx: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, idx, weights)
    return out


# --------------------------------------------------------------------------- dpkit cluster
# Quadtree (and kd-style) level counts for DPQTk-means, and per-cluster sums for DPk-means.


def grid_cells(points: np.ndarray, lows: np.ndarray, highs: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Integer cell coordinates ``(d, n)`` of points on a grid of 2^depths[j] cells per dimension.

    One row per dimension (contiguous, for the per-level bit extraction).

    The public bounds are cut into equal cells; points outside are clipped, the upper edge
    belongs to the last cell. A quadtree node at depth h < depths[j] along dimension j is
    the coordinate shifted right by depths[j] − h, so one pass serves every level.
    """
    pts = np.asarray(points, dtype=float)
    lo = np.asarray(lows, dtype=float)
    width = np.asarray(highs, dtype=float) - lo
    dep = np.asarray(depths, dtype=np.int64)
    out = np.empty(pts.shape[::-1], dtype=np.int64)
    for j in range(pts.shape[1]):
        size = 1 << int(dep[j])
        u = np.clip((pts[:, j] - lo[j]) / width[j], 0.0, 1.0)
        col = np.floor(u * size).astype(np.int64)
        np.minimum(col, size - 1, out=col)
        out[j] = col
    return out


def cluster_sums(points: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sizes ``(k,)`` and coordinate sums ``(k, d)`` of points grouped by ``labels`` in [0, k)."""
    pts = np.asarray(points, dtype=float)
    lab = np.asarray(labels, dtype=np.int64)
    sizes = np.bincount(lab, minlength=k).astype(np.int64)
    sums = np.stack([np.bincount(lab, weights=pts[:, j], minlength=k) for j in range(pts.shape[1])], axis=1)
    return sizes, sums


def nearest_centre(points: np.ndarray, centres: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """Index of the nearest of ``centres`` for every point (squared Euclidean), in chunks."""
    pts = np.asarray(points, dtype=float)
    c = np.asarray(centres, dtype=float)
    out = np.empty(len(pts), dtype=np.int64)
    cc = np.einsum("ij,ij->i", c, c)
    for s in range(0, len(pts), chunk):
        p = pts[s : s + chunk]
        d2 = cc[None, :] - 2.0 * p @ c.T
        out[s : s + chunk] = np.argmin(d2, axis=1)
    return out


# --------------------------------------------------------------------------- kanon-select
# Equivalence classes for k-anonymity (docs/algorithms.md §4). Not differential privacy: these
# counts feed the k-anonymity test of `dpkit kanon-select`, whose output is k-anonymous by
# construction and whose report states class sizes (as any k-anonymity tool does).

_DENSE_LIMIT = 1 << 22  # product partitions up to this many cells (or 2n) are counted with bincount
_CHUNK = 1 << 20  # records per chunk of the chunked refinements
_LARGE = 1 << 22  # from this many records, a refinement with more than _CHUNK cells is chunked too


def refine_groups(
    groups: np.ndarray, n_groups: int, codes: np.ndarray, n_codes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Intersect a partition with one more column: ``(new_groups, sizes)``.

    ``groups`` are compact group ids in ``[0, n_groups)`` and ``codes`` the column's value
    codes in ``[0, n_codes)``, aligned by record. The result numbers the non-empty cells of
    (group, code) compactly (ascending by ``group * n_codes + code``); ``sizes[g]`` is the
    number of records in new group ``g``. One O(n) pass (bincount) when the product is
    small, O(n log n) (``np.unique``) otherwise.
    """
    cells = int(n_groups) * int(n_codes)
    n = len(groups)
    # group ids fit int32 below 2^31 records: half the memory of int64 on every pass
    ids = np.int32 if n < 2**31 else np.int64
    if cells <= _CHUNK < n:
        # few cells, many records: the int64 cell ids of one chunk at a time (8 bytes a record
        # less at the peak: kanon-select on 100M records)
        counts = np.zeros(cells, dtype=np.int64)
        for s in range(0, n, _CHUNK):
            counts += np.bincount(_cell_keys(groups[s:s + _CHUNK], codes[s:s + _CHUNK], n_codes), minlength=cells)
        present = counts > 0
        remap = (np.cumsum(present) - 1).astype(ids)
        out = np.empty(n, dtype=ids)
        for s in range(0, n, _CHUNK):
            out[s:s + _CHUNK] = remap[_cell_keys(groups[s:s + _CHUNK], codes[s:s + _CHUNK], n_codes)]
        return out, counts[present]
    if cells > _CHUNK and n >= _LARGE:
        return _refine_in_chunks(groups, cells, codes, n_codes, ids)
    flat = _cell_keys(groups, codes, n_codes)
    if cells <= max(_DENSE_LIMIT, 2 * len(flat)):
        counts = np.bincount(flat, minlength=cells)
        present = counts > 0
        remap = (np.cumsum(present) - 1).astype(ids)
        return remap[flat], counts[present].astype(np.int64)
    _, inverse, sizes = np.unique(flat, return_inverse=True, return_counts=True)
    return inverse.astype(ids).ravel(), sizes.astype(np.int64)


def _refine_in_chunks(
    groups: np.ndarray, cells: int, codes: np.ndarray, n_codes: int, ids: type
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`refine_groups` for many records and many cells, in bounded memory.

    The whole-table way (one int64 cell id per record, then ``np.unique`` with its inverse, or
    a bincount over every cell) holds ~40 bytes a record at once (4 GB at 100M records). Here:
    pass 1 finds the distinct cell ids and their sizes a chunk of records at a time (each
    chunk's ``np.unique``, merged into a sorted running set); pass 2 numbers each chunk's
    records by their cell's rank in that set. Same numbering (ascending cell id), same sizes.
    """
    n = len(groups)
    if cells <= 2 * n and cells < 2**31:
        # a bitmap of the cells (1 byte a cell) and their int32 numbering instead of counts
        present = np.zeros(cells, dtype=bool)
        for s in range(0, n, _CHUNK):
            present[_cell_keys(groups[s:s + _CHUNK], codes[s:s + _CHUNK], n_codes)] = True
        remap = np.cumsum(present, dtype=np.int32)
        del present
        remap -= 1
        out = np.empty(n, dtype=ids)
        counts = np.zeros(int(remap[-1]) + 1, dtype=np.int64)
        for s in range(0, n, _CHUNK):
            chunk = remap[_cell_keys(groups[s:s + _CHUNK], codes[s:s + _CHUNK], n_codes)]
            out[s:s + _CHUNK] = chunk
            counts += np.bincount(chunk, minlength=len(counts))
        return out, counts
    seen = np.empty(0, dtype=np.int64)
    sizes = np.empty(0, dtype=np.int64)
    pending: list[tuple[np.ndarray, np.ndarray]] = []
    held = 0

    def merge() -> tuple[np.ndarray, np.ndarray]:
        keys = np.concatenate([seen, *(u for u, _ in pending)])
        counts = np.concatenate([sizes, *(c for _, c in pending)])
        order = np.argsort(keys, kind="stable")  # sorted runs: a merge
        keys, counts = keys[order], counts[order]
        del order
        first = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        return keys[first], np.add.reduceat(counts, first).astype(np.int64)

    for s in range(0, n, _CHUNK):
        u, c = np.unique(_cell_keys(groups[s:s + _CHUNK], codes[s:s + _CHUNK], n_codes), return_counts=True)
        pending.append((u, c))
        held += len(u)
        if held >= max(len(seen), 4 * _CHUNK):
            seen, sizes = merge()
            pending, held = [], 0
    if pending:
        seen, sizes = merge()
        pending = []
    out = np.empty(n, dtype=ids)
    for s in range(0, n, _CHUNK):
        u, inverse = np.unique(_cell_keys(groups[s:s + _CHUNK], codes[s:s + _CHUNK], n_codes), return_inverse=True)
        out[s:s + _CHUNK] = np.searchsorted(seen, u)[inverse]  # sorted needles: a fast search
    return out, sizes


def _cell_keys(groups: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """``groups * n_codes + codes`` as int64, built in one array (no int64 copy of ``codes``)."""
    flat = groups.astype(np.int64)
    flat *= int(n_codes)
    flat += codes
    return flat


def equivalence_classes(
    codes: Sequence[np.ndarray], cardinalities: Sequence[int], n_rows: int
) -> tuple[np.ndarray, np.ndarray]:
    """Equivalence classes of records on the given columns: ``(class_of_record, sizes)``.

    With no columns every record is in one class (the table projected on nothing).
    """
    groups = np.zeros(n_rows, dtype=np.int64)
    sizes = np.array([n_rows], dtype=np.int64) if n_rows else np.zeros(0, dtype=np.int64)
    n_groups = len(sizes)
    for c, card in zip(codes, cardinalities, strict=True):
        groups, sizes = refine_groups(groups, n_groups, c, card)
        n_groups = len(sizes)
    return groups, sizes


def distinct_per_group(groups: np.ndarray, n_groups: int, values: np.ndarray, n_values: int) -> np.ndarray:
    """How many distinct ``values`` (codes in ``[0, n_values)``) each group holds.

    The quantity of distinct ℓ-diversity: a partition is ℓ-diverse when every entry is ≥ ℓ.
    """
    flat = _cell_keys(groups, values, n_values)
    cells = int(n_groups) * int(n_values)
    if cells <= max(_DENSE_LIMIT, 2 * len(flat)):
        cell_ids = np.flatnonzero(np.bincount(flat, minlength=cells))
    else:
        cell_ids = np.unique(flat)
    return np.bincount(cell_ids // int(n_values), minlength=int(n_groups)).astype(np.int64)


def compress_rows(
    codes: Sequence[np.ndarray], cardinalities: Sequence[int]
) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """The distinct rows of some code columns: ``(row_of_record, distinct codes, weights)``.

    ``distinct codes[j]`` holds column j's code in each distinct row and ``weights`` how many
    records each distinct row stands for. The generalization search of ``kanon-select
    --generalize`` then counts classes over the distinct rows only (weighted), as ARX does.
    """
    n = len(codes[0])
    groups, sizes = equivalence_classes(codes, cardinalities, n)
    _, first = np.unique(groups, return_index=True)
    return groups, [np.asarray(c, dtype=np.int64)[first] for c in codes], sizes


def weighted_classes(
    codes: Sequence[np.ndarray], cardinalities: Sequence[int], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Equivalence classes of weighted rows: ``(class_of_row, records per class)``."""
    groups, _ = equivalence_classes(codes, cardinalities, len(weights))
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    return groups, np.bincount(groups, weights=weights, minlength=n_groups).astype(np.int64)


def weighted_class_counts(
    groups: np.ndarray, y: np.ndarray, n_groups: int, n_classes: int, weights: np.ndarray
) -> np.ndarray:
    """Records per (group, class) of weighted rows, an ``(n_groups, n_classes)`` int64 array."""
    flat = groups.astype(np.int64) * n_classes + y.astype(np.int64)
    counts = np.bincount(flat, weights=weights, minlength=n_groups * n_classes)
    return counts.astype(np.int64).reshape(n_groups, n_classes)


# --------------------------------------------------------------------------- forest (dpkit forest)


# --------------------------------------------------------------------------- publish
# (MAXGDDP / DiffGen)


def distinct_index(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)``: sorted distinct values and each record's
    index among them — in O(n) by bincount when the values are whole numbers in a small range
    (ages, hours: no sort of the column), by a sort otherwise."""
    v = np.asarray(values)
    if v.size and v.dtype.kind in "iu":  # compact numbers (dpkit.data.encoded.number_dtype)
        lo, hi = int(v.min()), int(v.max())
        if hi - lo < _DENSE_LIMIT:
            iv = v.astype(np.int64)  # widened first: an int8 minus lo can wrap (NEP 50)
            iv -= lo
            present = np.bincount(iv, minlength=hi - lo + 1) > 0
            remap = np.cumsum(present) - 1
            # the distinct values as float64, as for a float column of the same numbers
            return np.flatnonzero(present).astype(np.float64) + float(lo), remap[iv]
    if v.size and v.dtype.kind == "f":
        lo, hi = float(v.min()), float(v.max())
        if hi - lo < _DENSE_LIMIT and lo == np.floor(lo):
            iv = (v - lo).astype(np.int64)
            if np.array_equal(iv, v - lo):
                present = np.bincount(iv, minlength=int(hi - lo) + 1) > 0
                remap = np.cumsum(present) - 1
                return np.flatnonzero(present).astype(v.dtype) + lo, remap[iv]
    uniq, inverse = np.unique(v, return_inverse=True)
    return uniq.astype(np.float64) if v.dtype.kind in "iub" else uniq, inverse.reshape(-1)


# --------------------------------------------------------------------------- dpkit cluster (continued)
# The quadtree's per-level counts (DPQTk-means); appended after the kanon-select section.


def child_counts(
    cells: np.ndarray,
    cell_depths: np.ndarray,
    parent: np.ndarray,
    n_parents: int,
    depths: np.ndarray,
    split: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Counts of points in the children of quadtree (or kd-tree) nodes, in O(n).

    ``weights``: how many points each entry of ``cells`` stands for (default 1 each).

    ``cells`` are :func:`grid_cells` at ``cell_depths`` (>= ``depths``), ``parent[i]`` the index of point i's node among
    ``n_parents`` nodes being split (-1: in no such node; its child is -1 too); ``depths`` the per-dimension depths of the children and
    ``split`` the mask of the dimensions halved at this step. Child ``parent·2^s + b`` (s the
    number of split dimensions) holds the points whose cell has the bits b in the split
    dimensions, the first split dimension most significant. Returns
    ``(child index per point, counts per child)``.
    """
    dims = np.flatnonzero(split)
    child = parent.astype(np.int64) << len(dims)
    for rank, j in enumerate(dims):
        bit = (cells[j] >> int(cell_depths[j] - depths[j])) & 1
        child |= bit << (len(dims) - 1 - rank)
    gone = parent < 0  # points of nodes no longer split (kept in place to avoid a copy)
    w = None if weights is None else np.asarray(weights, dtype=np.int64)
    if gone.any():
        child[gone] = -1
        counts = _weighted_bincount(child[~gone], None if w is None else w[~gone], n_parents << len(dims))
    else:
        counts = _weighted_bincount(child, w, n_parents << len(dims))
    return child, counts


def _weighted_bincount(idx: np.ndarray, weights: np.ndarray | None, size: int) -> np.ndarray:
    """int64 counts (or integer weight sums, exact) per index in ``[0, size)``."""
    if weights is None:
        return np.bincount(idx, minlength=size).astype(np.int64)
    out = np.zeros(size, dtype=np.int64)
    np.add.at(out, idx, weights)
    return out


# --------------------------------------------------------------------------- tree partitions


def values_present(codes: np.ndarray, n_values: int) -> np.ndarray:
    """Which of the ``n_values`` codes occur in ``codes`` (a boolean mask over the codes)."""
    present = np.zeros(n_values, dtype=bool)
    present[codes] = True  # no int64 copy of the codes (kanon-select: 100M records)
    return present


# --------------------------------------------------------------------------- the frame protocol
# Dense counts, value marginals and sums over keys (dpkit.engine.numpy_frame).


def _valid(codes: Sequence[np.ndarray]) -> np.ndarray | None:
    """Mask of the records whose every key is >= 0, or None when all are."""
    bad = None
    for c in codes:
        neg = c < 0
        if neg.any():
            bad = neg if bad is None else (bad | neg)
    return None if bad is None else ~bad


def _flat_keys(codes: Sequence[np.ndarray], shape: Sequence[int]) -> tuple[np.ndarray, np.ndarray | None]:
    """Row-major cell ids of the records whose every key is >= 0, and that mask (None: all)."""
    keep = _valid(codes)
    flat = np.zeros(len(codes[0]) if keep is None else int(keep.sum()), dtype=np.int64)
    for c, s in zip(codes, shape, strict=True):
        flat *= int(s)
        flat += c if keep is None else c[keep]
    return flat, keep


def dense_counts(codes: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
    """Counts of records per combination of ``codes`` as a dense int64 array of ``shape``;
    records with a negative code on any dimension are left out."""
    shp = tuple(int(s) for s in shape)
    size = int(np.prod(shp, dtype=np.int64)) if shp else 1
    if not codes:
        raise ValueError("dense_counts needs at least one key")
    flat, _ = _flat_keys(codes, shp)
    return np.bincount(flat, minlength=size).astype(np.int64).reshape(shp)


def value_key_counts(
    values: np.ndarray, codes: Sequence[np.ndarray], shape: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``values`` ``(m,)`` and counts ``(m, *shape)`` per (value, keys)."""
    keep = _valid(codes)
    v = np.asarray(values)
    cs = list(codes)
    if keep is not None:
        v = v[keep]
        cs = [c[keep] for c in cs]
    uniq, inverse = distinct_index(v)
    shp = (uniq.size, *(int(s) for s in shape))
    return uniq, dense_counts([inverse.astype(np.int64, copy=False), *cs], shp)


# --------------------------------------------------------------------------- exact sums
# Sums that do not depend on the order of the records, so that any engine (and any split
# of the records into partitions) gets the same bits: every float is split exactly into
# integers, the integers are added exactly, and the total is rounded once.

_HALF = 26


def float_parts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(exp, hi, lo)`` int64 with ``v == (hi·2^26 + lo)·2^(exp−53)`` exactly, per value.

    |hi| < 2^27 and 0 <= lo < 2^26, so int64 sums of them are exact for up to 2^36 values.
    """
    mant, exp = np.frexp(np.asarray(values, dtype=float))
    m = np.ldexp(mant, 53).astype(np.int64)
    hi = m >> _HALF
    return exp.astype(np.int64), hi, m - (hi << _HALF)


def sum_parts(flat: np.ndarray, values: Sequence[np.ndarray]) -> np.ndarray:
    """Partial exact sums: rows ``(group, column, exp, Σhi, Σlo)`` (int64) of ``values`` per
    group ``flat`` (>= 0) and binary exponent. Rows of several blocks add up by key."""
    out = []
    flat = np.asarray(flat, dtype=np.int64)
    for j, v in enumerate(values):
        exp, hi, lo = float_parts(v)
        if not len(flat):
            continue
        key = np.stack([flat, exp], axis=1)
        uniq, inverse = np.unique(key, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        shi = np.zeros(len(uniq), dtype=np.int64)
        slo = np.zeros(len(uniq), dtype=np.int64)
        np.add.at(shi, inverse, hi)
        np.add.at(slo, inverse, lo)
        out.append(np.column_stack([uniq[:, 0], np.full(len(uniq), j), uniq[:, 1], shi, slo]))
    return np.concatenate(out) if out else np.zeros((0, 5), dtype=np.int64)


def sums_from_parts(parts: np.ndarray, size: int, n_columns: int) -> np.ndarray:
    """The sums ``(size, n_columns)`` from :func:`sum_parts` rows (any number of blocks):
    exact integer totals, each rounded once to the nearest float."""
    from fractions import Fraction

    exact: dict[tuple[int, int], Fraction] = {}
    for g, j, e, hi, lo in np.asarray(parts, dtype=np.int64).tolist():
        v = Fraction((hi << _HALF) + lo) * (Fraction(2) ** (e - 53))
        exact[(g, j)] = exact.get((g, j), Fraction(0)) + v
    out = np.zeros((size, n_columns))
    for (g, j), v in exact.items():
        out[g, j] = float(v)
    return out


def key_sum_parts(
    values: Sequence[np.ndarray], codes: Sequence[np.ndarray], shape: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Counts ``shape`` and :func:`sum_parts` rows of one block of records (add blocks up
    with :func:`key_sums`)."""
    shp = tuple(int(s) for s in shape)
    size = int(np.prod(shp, dtype=np.int64))
    flat, keep = _flat_keys(codes, shp)
    vs = [np.asarray(x, dtype=float) if keep is None else np.asarray(x, dtype=float)[keep] for x in values]
    sizes = np.bincount(flat, minlength=size).astype(np.int64).reshape(shp)
    return sizes, sum_parts(flat, vs)


def key_sums(sizes: np.ndarray, parts: Sequence[np.ndarray], shape: Sequence[int], n_columns: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """The counts and exact sums ``(*shape, n_columns)`` from the blocks' :func:`key_sum_parts`."""
    shp = tuple(int(s) for s in shape)
    size = int(np.prod(shp, dtype=np.int64))
    rows = np.concatenate(list(parts)) if parts else np.zeros((0, 5), dtype=np.int64)
    sums = sums_from_parts(rows, size, n_columns)
    return sizes, sums.reshape((*shp, n_columns))


def merge_value_counts(
    parts: Sequence[tuple[np.ndarray, np.ndarray]], shape: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`value_key_counts` of several blocks' records from each block's result: the
    sorted union of the distinct values, and their counts added up."""
    if len(parts) == 1:
        return parts[0]
    uniq = np.unique(np.concatenate([u for u, _ in parts]))
    counts = np.zeros((uniq.size, *(int(s) for s in shape)), dtype=np.int64)
    for u, c in parts:
        counts[np.searchsorted(uniq, u)] += c  # a block's values are distinct
    return uniq, counts


def exact_key_sums(
    values: Sequence[np.ndarray], codes: Sequence[np.ndarray], shape: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Counts ``shape`` and sums ``(*shape, len(values))`` of ``values`` per combination of
    keys, every sum exact before one final rounding (the same bits on any engine or order)."""
    sizes, parts = key_sum_parts(values, codes, shape)
    return key_sums(sizes, [parts], shape, len(values))
