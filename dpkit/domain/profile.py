"""Exact per-column counts for domain discovery, through the engine's Frame protocol.

A private schema needs the data's domain to count it, and that domain is what we are trying
to learn. The way round: a *provisional* schema that is never shown — every distinct string
of a categorical column becomes a leaf (codes assigned at load, as any load does), numeric
columns get unbounded bounds — so that the data loads as an ordinary encoded table and the
counts come from the same aggregate primitives every algorithm uses (``Frame.counts``,
``Frame.value_counts``). Everything here is exact and private: the provisional leaves and the
counts flow only into :mod:`dpkit.privacy.partition` and :mod:`dpkit.privacy.quantiles`;
only the values that survive partition selection are ever named (:mod:`dpkit.domain.discover`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpkit.data.schema import CategoricalColumn, NumericColumn, Schema, TaxonomyNode
from dpkit.domain.metadata import ColumnMeta
from dpkit.engine.frame import Frame
from dpkit.engine.keys import Col
from dpkit.privacy.quantiles import Profile

if TYPE_CHECKING:
    import pandas as pd

#: the provisional bounds of a numeric column: no clipping at load (the learned bounds clip later)
UNBOUNDED = 1.7e308


@dataclass(frozen=True)
class Categories:
    """A categorical column's distinct values (PRIVATE: never shown unless selected), their exact
    counts, and which cells are public (the declared missing tokens)."""

    values: tuple[str, ...]
    counts: np.ndarray
    public: np.ndarray


def provisional_column(name: str, values: Sequence[str]) -> CategoricalColumn:
    """A flat column whose leaves are ``values`` (private; for counting only)."""
    leaves = tuple(values)
    kids = tuple(TaxonomyNode(v, (), i, i + 1, 1) for i, v in enumerate(leaves))
    return CategoricalColumn(name, TaxonomyNode("(provisional)", kids, 0, len(leaves), 0), leaves)


def provisional_schema(df: pd.DataFrame, metas: Sequence[ColumnMeta], tokens: Sequence[str],
                       target: str | None) -> Schema:
    """The schema the data is counted against: the distinct strings of each categorical column
    as leaves (with the missing tokens, so that no row is dropped), unbounded numeric columns."""
    cols: dict[str, CategoricalColumn | NumericColumn] = {}
    for m in metas:
        if m.kind == "categorical":
            distinct = dict.fromkeys(tokens)
            distinct.update(dict.fromkeys(df[m.name].astype(str).unique().tolist()))
            cols[m.name] = provisional_column(m.name, list(distinct))
        elif m.kind == "numeric":
            cols[m.name] = NumericColumn(m.name, -UNBOUNDED, UNBOUNDED, False)
    return Schema(columns=dict(cols), target=target, missing_tokens=tuple(tokens),
                  missing_policy="drop", path="<provisional schema>")


def frames_of(df: pd.DataFrame, schema: Schema, source: str) -> tuple[Frame | None, dict[str, Frame]]:
    """Numpy-engine frames of ``df`` against the provisional ``schema``: one over every
    categorical column (no row is dropped: the tokens are leaves) and one per numeric column
    (rows whose value is a missing token are dropped from that column's frame only)."""
    from dpkit.data.table import encode
    from dpkit.engine.numpy_frame import NumpyFrame

    cats = [n for n, c in schema.columns.items() if isinstance(c, CategoricalColumn)]
    nums = [n for n, c in schema.columns.items() if isinstance(c, NumericColumn)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # drop counts of the provisional load: private, and not the user's
        cat_frame = NumpyFrame(encode(df, schema, cats, source=source)) if cats else None
        num_frames = {n: NumpyFrame(encode(df, schema, [n], source=source)) for n in nums}
    return cat_frame, num_frames


def categories(frame: Frame, column: str, tokens: Sequence[str]) -> Categories:
    """The exact counts of every provisional leaf of ``column`` (one aggregation)."""
    col = frame.schema.columns[column]
    assert isinstance(col, CategoricalColumn)
    counts = frame.counts([Col(column)], (len(col.leaves),))
    public = np.isin(np.asarray(col.leaves, dtype=object), list(tokens)) if tokens else np.zeros(len(col.leaves), bool)
    return Categories(col.leaves, np.asarray(counts, dtype=np.int64), public)


def numbers(frame: Frame, column: str) -> Profile:
    """A numeric column's sorted distinct values and counts (one aggregation)."""
    values, counts = frame.value_counts(column, [], ())
    return Profile.of(np.asarray(values, dtype=np.float64), np.asarray(counts, dtype=np.int64).reshape(-1))
