"""Exact per-column counts for domain discovery, through the engine's Frame protocol.

A private schema needs the data's domain to count it, and that domain is what we are trying
to learn. The way round: the table is read as a *string frame* (:mod:`dpkit.engine.string_frame`,
on either engine): every column as codes of its distinct strings, numbered in order of first
appearance, so the counts come from the frame protocol's own aggregate (``Frame.many``: one
scan, one Spark job) and the numpy and Spark engines see the same distinct values in the same
order. Everything here is exact and private: the distinct strings and their counts flow only
into the public-metadata rules (:mod:`dpkit.domain.metadata`: types and missing tokens, which
the user confirms), :mod:`dpkit.privacy.mechanisms.partition` and :mod:`dpkit.privacy.mechanisms.quantiles`; only the
values that survive partition selection are ever named (:mod:`dpkit.domain.discover`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.engine.keys import Col
from dpkit.privacy.mechanisms.quantiles import Profile


@dataclass(frozen=True)
class Summary:
    """One column's distinct strings, stripped, in order of first appearance, and their exact
    counts (PRIVATE: never shown unless selected)."""

    values: tuple[str, ...]
    counts: np.ndarray


@dataclass(frozen=True)
class Categories:
    """A categorical column's distinct values (PRIVATE: never shown unless selected), their exact
    counts, and which cells are public (the declared missing tokens)."""

    values: tuple[str, ...]
    counts: np.ndarray
    public: np.ndarray
    #: the cells of public vocabularies (:mod:`dpkit.domain.vocabulary`), held or not: noised,
    #: listed by a pure-ε rule on their noisy counts (None: no vocabulary)
    vocabulary: np.ndarray | None = None


def summarize(frame: Any, columns: Sequence[str] | None = None) -> dict[str, Summary]:
    """Every column's :class:`Summary` from a string frame, in one scan (``Frame.many``).

    Values are stripped as the CSV reader strips them, and strings equal once stripped are
    one value (first appearance of any of them); a missing cell (None) reads as ``""``.
    """
    names = list(frame.header if columns is None else columns)
    answers = frame.many([("counts", [Col(c)], (frame.n_values(c),)) for c in names])
    out: dict[str, Summary] = {}
    for c, counts in zip(names, answers, strict=True):
        raw = ["" if v is None else str(v).strip() for v in frame.values(c)]
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        if len(set(raw)) == len(raw):  # no two values merge (the readers strip): as counted
            out[c] = Summary(tuple(raw), counts)
            continue
        import pandas as pd

        merged = pd.Series(counts).groupby(raw, sort=False).sum()
        out[c] = Summary(tuple(str(v) for v in merged.index), merged.to_numpy(dtype=np.int64))
    return out


def categories(summary: Summary, tokens: Sequence[str], vocabulary: Any = None) -> Categories:
    """A categorical column's cells: the missing tokens first (public, counted, so that no
    record is lost), then its other distinct values in order of first appearance, then, with a
    ``vocabulary`` (:class:`dpkit.domain.vocabulary.Vocabularies`), each vocabulary value the column
    does not hold (public cells of count 0; ``Categories.vocabulary`` marks every vocabulary cell)."""
    from dpkit.domain.vocabulary import cells

    order = list(dict.fromkeys([*tokens, *summary.values]))
    order, vocab = cells(order, vocabulary)
    if tokens:  # a declared missing token stays a token, whatever a vocabulary says
        vocab &= ~np.isin(np.asarray(order, dtype=object), list(tokens))
    index = {v: i for i, v in enumerate(order)}
    counts = np.zeros(len(order), dtype=np.int64)
    for v, n in zip(summary.values, summary.counts, strict=True):
        counts[index[v]] += int(n)
    public = np.isin(np.asarray(order, dtype=object), list(tokens)) if tokens else np.zeros(len(order), bool)
    return Categories(tuple(order), counts, public, vocab if vocabulary is not None else None)


def numbers(summary: Summary, tokens: Sequence[str]) -> Profile:
    """A numeric column's sorted distinct values and counts (its missing tokens left out; the
    metadata rules have checked that every other value is a finite number)."""
    keep = ~np.isin(np.asarray(summary.values, dtype=object), list(tokens)) if tokens else \
        np.ones(len(summary.values), bool)
    floats = np.asarray(summary.values, dtype=object)[keep].astype(np.float64)
    distinct, inverse = np.unique(floats, return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=summary.counts[keep], minlength=len(distinct))
    return Profile.of(distinct, counts.astype(np.int64))


def times(summary: Summary, tokens: Sequence[str], kind: str) -> Profile:
    """A date (or timestamp) column's sorted distinct days (seconds) since 1970-01-01 and their
    counts (:func:`dpkit.schema.dates.parse_array`). Its missing tokens and every value that is not
    a date are left out: a learned date column reads them as missing (``unparsable: missing``),
    so no error depends on the exact data."""
    from dpkit.schema.dates import parse_array

    nums = parse_array(summary.values, kind)
    keep = np.isfinite(nums)
    if tokens:
        keep &= ~np.isin(np.asarray(summary.values, dtype=object), list(tokens))
    distinct, inverse = np.unique(nums[keep], return_inverse=True)
    counts = np.bincount(inverse.reshape(-1), weights=summary.counts[keep], minlength=len(distinct))
    return Profile.of(distinct, counts.astype(np.int64))
