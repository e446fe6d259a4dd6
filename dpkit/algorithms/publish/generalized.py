"""Records mapped onto a released cut (`dpkit generalize`): the one function both engines run.

The numpy engine applies :class:`Generalizer` to its whole encoded table; the Spark engine
applies the same object to every Arrow batch on the executors (dpkit/engine/spark/write.py),
so a record's output row is the same on either engine.

Every row comes out, whatever it holds (docs/publish.md, "dpkit generalize"): the records are
read with :func:`reading_schema`, under which no value is refused or drops its row — a
missing value, a category the schema does not list, a number that does not parse are all the
column's missing value — and :class:`Generalizer` maps a missing value onto the cut: the node
or bucket holding it, the whole column when the cut is still at its root, else ``(missing)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.algorithms.publish.cut import MISSING_LABEL, CategoricalCut, Cut
from dpkit.schema.parse import CategoricalColumn, NumericColumn, Schema


def reading_schema(schema: Schema, *, lenient: bool = True) -> Schema:
    """``schema`` as ``generalize``, ``forest predict`` and ``evaluate`` read other records: no
    row dropped, none refused.

    Missing values are values (:meth:`~dpkit.schema.parse.Schema.keeping_missing`, the target
    too); a one-node taxonomy reads every value, missing included, as its one node (it has no
    root to hang a ``(missing)`` leaf under, and it is the only node a cut can hold). With
    ``lenient`` (the default), a category the schema does not list is read as missing
    (``unlisted: missing``; a column with a catch-all ``other:`` keeps it) and so is a number or
    date that does not parse (``unparsable: missing``). A function of the public schema only:
    these records are the owner's test data, not a private release's input."""
    import dataclasses

    cols = {}
    for name, col in schema.columns.items():
        if isinstance(col, CategoricalColumn):
            if col.root.is_leaf and col.missing_leaf is None:
                col = dataclasses.replace(col, other=col.root.name, unlisted="other", holds_missing=False)
            elif lenient and col.unlisted == "error":
                col = dataclasses.replace(col, unlisted="missing")
        elif isinstance(col, NumericColumn) and lenient and col.unparsable == "error":
            col = dataclasses.replace(col, unparsable="missing")
        cols[name] = col
    return dataclasses.replace(schema, columns=cols).keeping_missing()


@dataclass
class Generalizer:
    """Encoded columns → a DataFrame of labels: a predictor's released cut node or interval,
    the class column's leaf name (kept as it is). Every row comes out, in input order.

    A missing value (encoded against :func:`reading_schema`: the ``(missing)`` leaf's code, NaN
    for a number) is labelled with the cut's node or bucket holding it when the released schema
    keeps missing values; else, with the column's one value when its cut is still at the root
    (the taxonomy root, the whole interval: it holds every value, a missing one too); else
    ``(missing)``, a value the release does not hold — a release made under
    ``missing_policy: drop`` never saw such a record and has no node for it — and its row is
    not dropped here either."""

    columns: list[str]
    labels: dict[str, np.ndarray]  # column → label of each code (cut index or leaf code), then "(missing)"
    cut: Cut

    @classmethod
    def of(cls, cut: Cut, schema: Schema, columns: Sequence[str]) -> Generalizer:
        labels = {}
        for name in columns:
            if name in cut.attributes:
                names = cut.attributes[name].labels()
            else:
                names = list(schema.columns[name].leaves)  # type: ignore[union-attr]
            labels[name] = np.asarray([*names, MISSING_LABEL], dtype=object)  # code -1: (missing)
        return cls(list(columns), labels, cut)

    def codes(self, name: str, values: np.ndarray) -> np.ndarray:
        """The label index of each encoded value of ``name`` (-1: ``(missing)``)."""
        a = self.cut.attributes.get(name)
        if a is None:
            return np.array(values, dtype=np.int64)  # a copy: an encoded column may be read-only (pandas 3)
        codes = np.array(a.codes(values), dtype=np.int64)
        if isinstance(a, CategoricalCut):
            unheld = np.asarray(values) >= len(a.column.leaves)  # the (missing) leaf the released column lacks
        elif a.missing_index() < 0:
            unheld = np.isnan(np.asarray(values, dtype=float))
        else:
            return codes
        # a cut still at its root holds every value, a missing one too: the root (the whole interval)
        codes[unheld] = 0 if a.size == 1 else -1
        return codes

    def labelled(self, encoded: Mapping[str, np.ndarray], index: Any = None) -> tuple[Any, dict[str, int]]:
        """(the rows, per predictor the number of values labelled ``(missing)``, a value the
        release does not hold; columns without any are left out)."""
        import pandas as pd

        out, unheld = {}, {}
        for name in self.columns:
            codes = self.codes(name, encoded[name])
            if name in self.cut.attributes:
                k = int(np.count_nonzero(codes < 0))
                if k:
                    unheld[name] = k
            out[name] = self.labels[name][codes]
        return pd.DataFrame(out, columns=self.columns, index=index), unheld

    def __call__(self, encoded: Mapping[str, np.ndarray], index: Any = None) -> Any:
        return self.labelled(encoded, index)[0]

