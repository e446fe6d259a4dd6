"""The released forest: its JSON format, loading with clear errors, and prediction.

A fitted DiffPRFs forest (:mod:`dpkit.algorithms.forest.dprf`) is the differentially private release
of ``dpkit forest train``. Everything in it — the split attributes and thresholds, the
noisy node sizes and the noisy leaf class counts — came out of an accounted mechanism or
from the public schema, so the file may be shared and applied later without the training
data (``dpkit forest predict``). Prediction is post-processing and spends no budget.

File format (``format: dpkit-forest``, ``format_version`` :data:`FORMAT_VERSION`)::

    {"format": "dpkit-forest", "format_version": 1, "dpkit_version": "0.6.1",
     "algorithm": "diffprfs", "target": "income", "classes": ["<=50K", ">50K"],
     "missing": "?", "target_dtype": "int64",
     "features": [{"name": "age", "type": "numeric", "bounds": [15, 95], "integer": true},
                  {"name": "sex", "type": "categorical", "values": ["Female", "Male"]}, ...],
     "parameters": {...}, "privacy": {"epsilon_spent": 1.0, "seeded": false, ...},
     "trees": [<node>, ...]}

    <node> = {"size": 1180, "feature": "age", "threshold": 37,
              "children": [<x <= threshold>, <x > threshold>]}            numeric split
           | {"size": 1180, "feature": "sex", "children": {"Female": <node>, "Male": <node>}}
           | {"size": 41, "counts": [30, 11]}                               leaf

``size`` is the node's noisy record count (the sum of the leaf's noisy counts at the last
level); ``counts`` are the leaf's noisy class counts, negatives set to 0, in the order of
``classes``. A feature of a ``missing_policy: keep`` schema says where a missing value goes
(``"missing"``: ``"branch"`` — the numeric split has a third child, ``[<= t, > t, missing]`` —,
``"low"`` — read as the lower bound —, or a categorical feature's leaf such as
``"(missing)"``; :func:`missing_rule`); in a model without it, a record whose value of a split
attribute is a ``missing`` token follows the child with the largest noisy size. ``missing`` is the schema's token, or the list of its
tokens when it has several (``missing: ['', 'n/a', '?']``). ``target_dtype`` (only in a model
trained on a DataFrame whose target column was of integers, booleans or floats) is that
column's pandas dtype: schema-level metadata the caller gave, not data, so that predictions
come back as the labels the caller used (``1``, not ``'1'``) — :func:`typed_labels`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.defaults import DEFAULT_DECISION
from dpkit.errors import DataError, DpkitUsageError, DpkitWarning, warn

if TYPE_CHECKING:
    import pandas as pd

    from dpkit.io.table import EncodedTable
    from dpkit.schema.parse import Schema

FORMAT = "dpkit-forest"
#: bump when the JSON layout changes in a way older readers cannot follow.
FORMAT_VERSION = 1
MAX_LISTED = 5


@dataclass(frozen=True)
class Feature:
    """The public description of one predictor (from the schema, never from the data)."""

    name: str
    kind: str  # "numeric" | "categorical"
    lo: float = 0.0
    hi: float = 0.0
    integer: bool = False
    categories: tuple[str, ...] = ()
    #: the catch-all category unlisted values are read as (a schema's ``other:``), if any
    other: str | None = None
    #: ``date``/``timestamp``: a numeric feature read from ISO text as days/seconds since 1970
    time: str | None = None
    #: the schema's ``unparsable: missing`` (a learned type): a value that does not parse is
    #: missing, as the release and ``generalize`` read it, not an error
    lenient: bool = False
    #: where a missing value goes (``missing_policy: keep``; :func:`missing_rule`): for a
    #: categorical feature the category it is read as (the ``(missing)`` leaf, or the catch-all of
    #: a column whose learned ``missing: false`` gives it no leaf); for a numeric one ``branch``
    #: (the first split on it along a path has a third child, the missing values) or ``low`` (read
    #: as the lower bound: learned ``missing: false``). None: not in the domain (such rows were
    #: dropped in training; a missing value follows the largest child when predicting)
    missing: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.kind == "numeric":
            out_n: dict[str, Any] = {"name": self.name, "type": "numeric", "bounds": [self.lo, self.hi],
                                     "integer": self.integer}
            if self.time is not None:  # only then: a model without dates keeps its bytes
                out_n["time"] = self.time
            if self.lenient:  # only then: a model from a hand-written schema keeps its bytes
                out_n["unparsable"] = "missing"
            if self.missing is not None:  # only under missing_policy: keep (same bytes otherwise)
                out_n["missing"] = self.missing
            return out_n
        out: dict[str, Any] = {"name": self.name, "type": "categorical", "values": list(self.categories)}
        if self.other is not None:
            out["other"] = self.other
        if self.missing is not None:
            out["missing"] = self.missing
        return out


#: a numeric feature's missing values: a child of their own, or read as the lower bound
MISSING_RULES = ("branch", "low")


def missing_rule(col: Any) -> str | None:
    """A schema column's :attr:`Feature.missing` (public: a function of the schema only).

    Numeric: ``branch`` when its missing values are values of the domain (``missing_policy:
    keep``) and the column holds them (``missing: true``, or no flag: tokens declared or a
    hand-written ``keep`` schema) — the same rule as publish's missing bucket
    (dpkit.algorithms.publish.cut.NumericCut.has_bucket); ``low`` when a learned ``missing: false`` column
    keeps its rows with the missing value read as its lowest value (publish: the lowest
    interval). Categorical: the leaf its missing values are encoded as (``(missing)``, or the
    catch-all), else None."""
    from dpkit.schema.parse import CategoricalColumn, NumericColumn

    if isinstance(col, NumericColumn):
        if not col.missing:
            return None
        return "low" if col.holds_missing is False else "branch"
    if isinstance(col, CategoricalColumn):
        code = col.missing_code
        return col.leaves[code] if code >= 0 else None
    return None


def features_from_schema(schema: Schema, names: Sequence[str]) -> list[Feature]:
    """:class:`Feature` descriptions of ``names`` from the schema (categorical: its leaves)."""
    from dpkit.errors import DpkitUsageError
    from dpkit.schema.parse import CategoricalColumn, NumericColumn

    out = []
    for name in names:
        col = schema.column(name)
        if isinstance(col, NumericColumn):
            out.append(Feature(name, "numeric", float(col.lo), float(col.hi), bool(col.integer), time=col.time,
                               lenient=col.unparsable == "missing", missing=missing_rule(col)))
        elif isinstance(col, CategoricalColumn):
            out.append(Feature(name, "categorical", categories=tuple(col.leaves),
                               other=col.other if col.unlisted == "other" else None, missing=missing_rule(col)))
        else:
            raise DpkitUsageError(f"column {name!r} is declared 'ignore' in {schema.path}")
    return out


@dataclass
class Node:
    """One node of a fitted tree; trees are flat lists with the root at index 0.

    The children of a node are consecutive in the list (numeric: ``x <= threshold`` then
    ``x > threshold``, then the missing values when the split has a third child — a feature
    whose missing values are a ``branch``; categorical: one per category, in the feature's
    order), which lets prediction step from node to child by ``children[0] + offset``.
    """

    size: int
    feature: int = -1
    threshold: float = math.nan
    children: list[int] = field(default_factory=list)
    counts: np.ndarray | None = None

    @property
    def is_leaf(self) -> bool:
        return self.feature < 0


@dataclass
class ForestModel:
    """A released DiffPRFs forest: public features and classes plus the noisy trees."""

    target: str
    classes: tuple[str, ...]
    features: list[Feature]
    trees: list[list[Node]]
    #: the schema's missing-value token(s): one string, or a list when the schema has several
    missing: str | list[str] | None = None
    #: the pandas dtype of the training DataFrame's target column, when it was int/bool/float
    #: (:func:`target_dtype`); None for a CSV (the labels are its text)
    target_dtype: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    privacy: dict[str, Any] = field(default_factory=dict)
    dpkit_version: str = ""
    _compiled: list[tuple[np.ndarray, ...]] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ prediction

    def _compile(self) -> list[tuple[np.ndarray, ...]]:
        """Per tree, flat arrays (feature, threshold, first child, default child, leaf proba)."""
        if self._compiled is not None:
            return self._compiled
        n_classes = len(self.classes)
        out = []
        for tree in self.trees:
            m = len(tree)
            feat = np.full(m, -1, dtype=np.int64)
            thr = np.zeros(m, dtype=float)
            first = np.zeros(m, dtype=np.int64)
            default = np.zeros(m, dtype=np.int64)
            proba = np.zeros((m, n_classes), dtype=float)
            for i, node in enumerate(tree):
                if node.is_leaf:
                    counts = np.asarray(node.counts, dtype=float)
                    total = counts.sum()
                    # an all-zero leaf (noise wiped every count) says nothing: uniform
                    proba[i] = counts / total if total > 0 else 1.0 / n_classes
                    continue
                feat[i] = node.feature
                thr[i] = node.threshold if self.features[node.feature].kind == "numeric" else 0.0
                first[i] = node.children[0]
                if self.features[node.feature].kind == "numeric" and len(node.children) == 3:
                    default[i] = node.children[2]  # the missing values' own child
                else:  # a value outside the domain: the child with the most noisy records
                    sizes = [tree[c].size for c in node.children]
                    default[i] = node.children[int(np.argmax(sizes))]
            out.append((feat, thr, first, default, proba))
        self._compiled = out
        return out

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Mean of the trees' leaf class probabilities for each row of ``X``.

        ``X`` is the ``(n, n_features)`` float matrix of :meth:`encode_frame` (categorical
        columns hold category codes, NaN marks a missing value: it goes to a numeric split's
        missing child, else to the child with the most noisy records). DiffPRFs §2.2: the class
        with the largest summed probability is the forest's prediction.
        """
        X = np.asarray(X, dtype=float)
        n = X.shape[0]
        numeric = np.array([f.kind == "numeric" for f in self.features] + [False])
        total = np.zeros((n, len(self.classes)), dtype=float)
        rows = np.arange(n)
        for feat, thr, first, default, proba in self._compile():
            node = np.zeros(n, dtype=np.int64)
            active = rows
            while active.size:
                f = feat[node[active]]
                inner = f >= 0
                active, f = active[inner], f[inner]
                if not active.size:
                    break
                nd = node[active]
                x = X[active, f]
                missing = np.isnan(x)
                x0 = np.where(missing, 0.0, x)
                offset = np.where(numeric[f], x0 > thr[nd], x0).astype(np.int64)
                node[active] = np.where(missing, default[nd], first[nd] + offset)
            total += proba[node]
        return total / max(len(self.trees), 1)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted class labels (strings) for the rows of ``X``."""
        return np.asarray(self.classes, dtype=object)[np.argmax(self.predict_proba(X), axis=1)]

    def class_priors(self) -> np.ndarray:
        """Each class's share of the records, estimated from the released noisy leaf counts
        (every record reaches one leaf of one tree under disjoint sampling; under ``none``
        each tree sees them all, which scales every class alike). Post-processing of the
        model: no budget. Negative noisy counts count as 0; uniform if nothing is left."""
        totals = np.zeros(len(self.classes), dtype=float)
        for tree in self.trees:
            for node in tree:
                if node.is_leaf and node.counts is not None:
                    totals += np.clip(np.asarray(node.counts, dtype=float), 0, None)
        total = totals.sum()
        return totals / total if total > 0 else np.full(len(self.classes), 1.0 / len(self.classes))

    def decide(self, probs: np.ndarray, decision: str = DEFAULT_DECISION) -> np.ndarray:
        """Class labels from the forest's probabilities under a decision rule (free in ε):

        * ``argmax`` — the most probable class (DiffPRFs §2.2);
        * ``balanced`` — the most probable class after dividing each class's probability by
          its prior (:meth:`class_priors`): the rule that maximizes balanced accuracy when
          the probabilities are calibrated, so a minority class is predicted where it is
          more likely than its base rate;
        * ``threshold:P`` — two classes only: the rarer class (by the priors) wherever its
          probability is at least P (0 < P < 1), else the other.
        """
        labels = np.asarray(self.classes, dtype=object)
        kind, _, arg = decision.partition(":")
        if decision == "argmax":
            return labels[np.argmax(probs, axis=1)]
        if decision == "balanced":
            prior = np.maximum(self.class_priors(), 1e-12)
            return labels[np.argmax(probs / prior, axis=1)]
        if kind == "threshold" and arg:
            try:
                level = float(arg)
            except ValueError:
                level = math.nan
            if not 0 < level < 1:
                raise DpkitUsageError(f"decision threshold must be a probability in (0, 1), got {arg!r}",
                                      param="decision")
            if len(labels) != 2:
                raise DpkitUsageError(f"decision threshold:P needs two classes; this model has {len(labels)} "
                                      "(use balanced)", param="decision")
            rare = int(np.argmin(self.class_priors()))
            return np.where(probs[:, rare] >= level, labels[rare], labels[1 - rare])
        raise DpkitUsageError(f"decision must be argmax, balanced or threshold:P, got {decision!r}",
                              param="decision")

    @property
    def missing_tokens(self) -> list[str]:
        """Every missing-value token of the training schema (``missing``: one or a list)."""
        if self.missing is None:
            return []
        return [self.missing] if isinstance(self.missing, str) else list(self.missing)

    def encode_frame(self, df: pd.DataFrame, *, source: str = "<data>", first_line: int = 2) -> np.ndarray:
        """The ``(n, n_features)`` matrix of a table of strings, checked against the model.

        A missing column is a :class:`DataError`; every row is scored: the model's ``missing``
        token, a category the model does not know (a feature without a catch-all) and a number
        or date that does not parse are a missing value — the feature's missing category or
        branch (``missing_policy: keep``), else NaN, the child with the most noisy records — with
        one warning for the call (counts and values for the data owner,
        :func:`dpkit.data.unknown.mapping_warning`); numbers outside the public bounds are
        clipped (as in training). ``first_line``: the line number of the first row (1 without a
        header row, ``-H``); it is no longer quoted, as nothing is refused for a value.
        """
        import pandas as pd

        absent = [f.name for f in self.features if f.name not in df.columns]
        if absent:
            raise DataError(
                f"{source}: column(s) {', '.join(map(repr, absent))} used by the model are not in "
                f"the header ({', '.join(map(str, df.columns[:8]))}{', ...' if len(df.columns) > 8 else ''}); "
                "predict needs every predictor the model was trained on"
            )
        from dpkit.data.unknown import unknown as unknown_value

        X = np.empty((len(df), len(self.features)), dtype=float)
        clips: list[tuple[Feature, int]] = []  # (feature, values clipped): one warning for the call
        unknown: dict[str, Any] = {}  # values read as missing: one warning too
        for j, feat in enumerate(self.features):
            # a list comprehension: pandas' .str.strip() took most of the prediction time; an
            # in-memory None/NaN is the empty cell, as the readers made it when the model was
            # trained on a DataFrame (str() would make it 'None'/'nan': another category)
            raw = df[feat.name].to_numpy()
            values = np.array([str(v).strip() for v in raw], dtype=object)
            values[pd.isna(raw)] = ""
            tokens = self.missing_tokens
            is_missing = np.isin(values, tokens) if tokens else np.zeros(len(values), bool)
            if feat.kind == "categorical":
                codes = pd.Index(list(feat.categories)).get_indexer(values).astype(float)
                bad = (codes < 0) & ~is_missing
                if feat.other is not None and bad.any():  # unlisted values are the catch-all
                    codes[bad] = feat.categories.index(feat.other)
                    bad[:] = False
                if bad.any():  # a category the model does not know: missing, never a refusal
                    unknown[feat.name] = unknown_value(values, bad, "category", first_line)
                    is_missing = is_missing | bad
                # the category a missing value is (missing_policy: keep), else NaN (the largest child)
                codes[is_missing] = feat.categories.index(feat.missing) if feat.missing is not None else np.nan
                X[:, j] = codes
            else:
                if feat.time is not None:  # ISO dates (dpkit.schema.dates: the readers' one parse function)
                    from dpkit.schema.dates import parse_array

                    nums = parse_array(values, feat.time)
                else:
                    nums = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float, copy=True)
                bad = ~np.isfinite(nums) & ~is_missing
                if bad.any():  # not a number (a date): missing, as a learned type's unparsable: missing reads it
                    if not feat.lenient:  # a learned type's schema says so itself: nothing to warn about
                        unknown[feat.name] = unknown_value(values, bad, "number" if feat.time is None else "date",
                                                          first_line)
                    is_missing = is_missing | bad
                outside = ((nums < feat.lo) | (nums > feat.hi)) & ~is_missing
                if outside.any():
                    clips.append((feat, int(outside.sum())))
                nums = np.clip(nums, feat.lo, feat.hi)
                # "low": read as the lower bound, as in training; else NaN (the missing child)
                nums[is_missing] = feat.lo if feat.missing == "low" else np.nan
                X[:, j] = nums
        if unknown:
            from dpkit.data.unknown import mapping_warning

            warn(mapping_warning(source, len(df), unknown, done="every row scored") or "", DpkitWarning)
        from dpkit.data.encoded import clip_warnings

        # one warning naming every clipped column; without -v one naming every bounded one, whatever the data
        for w in clip_warnings(source, clips, [f for f in self.features if f.kind != "categorical"], "the model"):
            warn(w)
        return X

    def encode_table(self, table: EncodedTable) -> np.ndarray:
        """The feature matrix of an :class:`EncodedTable` (encoded with the training schema)."""
        absent = [f.name for f in self.features if f.name not in table.columns]
        if absent:
            raise DataError(f"{table.source}: the model needs column(s) {', '.join(map(repr, absent))}")
        if not self.features:
            return np.zeros((table.n_rows, 0))
        X = np.column_stack([np.asarray(table.columns[f.name], dtype=float) for f in self.features])
        for j, f in enumerate(self.features):
            if f.missing == "low":  # a kept missing value (NaN) reads as the lower bound, as in training
                X[np.isnan(X[:, j]), j] = f.lo
        return X

    # ------------------------------------------------------------------ (de)serialization

    def to_dict(self) -> dict[str, Any]:
        from dpkit.version import __version__

        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "dpkit_version": __version__,
            "algorithm": "diffprfs",
            "target": self.target,
            "classes": list(self.classes),
            "missing": self.missing,
            # only when recorded: a CSV-trained model's bytes do not change
            **({"target_dtype": self.target_dtype} if self.target_dtype is not None else {}),
            "features": [f.to_dict() for f in self.features],
            "parameters": self.parameters,
            "privacy": self.privacy,
            "trees": [self._node_dict(tree, 0) for tree in self.trees],
        }

    def _node_dict(self, tree: list[Node], i: int) -> dict[str, Any]:
        node = tree[i]
        if node.is_leaf:
            return {"size": int(node.size), "counts": [int(c) for c in node.counts]}
        feat = self.features[node.feature]
        out: dict[str, Any] = {"size": int(node.size), "feature": feat.name}
        if feat.kind == "numeric":
            out["threshold"] = _number(node.threshold, feat.integer)
            out["children"] = [self._node_dict(tree, c) for c in node.children]
        else:
            out["children"] = {
                cat: self._node_dict(tree, c) for cat, c in zip(feat.categories, node.children, strict=True)
            }
        return out


def _typed(dtype: str, classes: Sequence[str]) -> list[Any] | None:
    """``classes`` (text) as values of ``dtype`` when each one's text is exactly how a value
    of that dtype is written (``str(v)``: ``1``, ``1.0``, ``True``); else None."""
    import pandas as pd

    try:
        kind = pd.api.types.pandas_dtype(dtype).kind
    except TypeError:
        return None
    if kind not in "iubf":
        return None
    if kind == "b":
        words = {"True": True, "False": False}
        return [words[c] for c in classes] if all(c in words for c in classes) else None
    try:
        values = pd.array([float(c) if kind == "f" else int(c) for c in classes], dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return None
    return list(values) if [str(v) for v in values] == list(classes) else None


def target_dtype(dtype: Any, classes: Sequence[str]) -> str | None:
    """The name of ``dtype`` (a target column's) to record in a model whose classes are
    ``classes``: when it is an integer, boolean or float dtype and every class reads back as
    one of its values (:func:`_typed`); else None (the labels stay text)."""
    name = str(dtype)
    return name if _typed(name, classes) is not None else None


def typed_labels(model: ForestModel) -> list[Any]:
    """The model's classes as the labels the caller trained on: values of its
    ``target_dtype`` when one is recorded, else the class texts."""
    if model.target_dtype is None:
        return list(model.classes)
    typed = _typed(model.target_dtype, model.classes)
    return typed if typed is not None else list(model.classes)


def _number(x: float, integer: bool) -> float | int:
    return int(x) if integer and float(x).is_integer() else float(x)


# --------------------------------------------------------------------------- reading


class _Reader:
    """Checks a parsed model dict, raising one-line errors that name the file and the place."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, what: str) -> DataError:
        return DataError(f"{self.source}: not a valid dpkit forest model: {where}: {what}")

    def model(self, data: Any) -> ForestModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DataError(f"{self.source}: not a dpkit forest model (no \"format\": \"{FORMAT}\"); "
                            "give a model.json written by `dpkit forest train`")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            written = data.get("dpkit_version", "an unknown version")
            raise DataError(
                f"{self.source}: forest model format version {version!r} (written by dpkit {written}); "
                f"this dpkit reads format version {FORMAT_VERSION} — retrain the model with this dpkit "
                "or use the dpkit version that wrote it"
            )
        for key in ("target", "classes", "features", "trees"):
            if key not in data:
                raise self.fail("top level", f"missing key {key!r}")
        classes = data["classes"]
        if not isinstance(classes, list) or len(classes) < 2 or not all(isinstance(c, str) for c in classes):
            raise self.fail("classes", "must be a list of at least two class names")
        features = [self.feature(i, f) for i, f in enumerate(_list(self, data["features"], "features"))]
        index = {f.name: i for i, f in enumerate(features)}
        if len(index) != len(features):
            raise self.fail("features", "duplicate feature names")
        trees = []
        for t, root in enumerate(_list(self, data["trees"], "trees")):
            nodes: list[Node] = []
            self.tree(root, f"trees[{t}]", features, index, len(classes), nodes)
            trees.append(_renumber(nodes))
        if not trees:
            raise self.fail("trees", "the forest has no trees")
        missing = data.get("missing")
        return ForestModel(
            target=str(data["target"]), classes=tuple(classes), features=features, trees=trees,
            missing=missing if isinstance(missing, str) or (
                isinstance(missing, list) and missing and all(isinstance(t, str) for t in missing)) else None,
            parameters=dict(data.get("parameters") or {}), privacy=dict(data.get("privacy") or {}),
            target_dtype=self.target_dtype(data.get("target_dtype"), classes),
            dpkit_version=str(data.get("dpkit_version", "")),
        )

    def target_dtype(self, dtype: Any, classes: list[str]) -> str | None:
        if dtype is None:
            return None
        if not isinstance(dtype, str) or target_dtype(dtype, classes) != dtype:
            raise self.fail("target_dtype", f"{dtype!r} is not an integer, boolean or float dtype of the classes")
        return dtype

    def feature(self, i: int, f: Any) -> Feature:
        where = f"features[{i}]"
        if not isinstance(f, dict) or not isinstance(f.get("name"), str):
            raise self.fail(where, "each feature needs a name")
        if f.get("type") == "numeric":
            b = f.get("bounds")
            if not (isinstance(b, list) and len(b) == 2 and all(_is_num(x) for x in b) and b[0] <= b[1]):
                raise self.fail(where, "a numeric feature needs bounds [lo, hi]")
            time = f.get("time")
            if time not in (None, "date", "timestamp"):
                raise self.fail(where, "a numeric feature's time is date or timestamp")
            if f.get("unparsable", "error") not in ("error", "missing"):
                raise self.fail(where, "a numeric feature's unparsable is error or missing")
            if f.get("missing") not in (None, *MISSING_RULES):
                raise self.fail(where, f"a numeric feature's missing is {' or '.join(MISSING_RULES)}")
            return Feature(f["name"], "numeric", float(b[0]), float(b[1]), bool(f.get("integer", False)), time=time,
                           lenient=f.get("unparsable") == "missing", missing=f.get("missing"))
        if f.get("type") == "categorical":
            v = f.get("values")
            if not (isinstance(v, list) and v and all(isinstance(x, str) for x in v)):
                raise self.fail(where, "a categorical feature needs a list of values")
            other = f.get("other")
            if other is not None and other not in v:
                raise self.fail(where, "a categorical feature's other must be one of its values")
            if f.get("missing") is not None and f.get("missing") not in v:
                raise self.fail(where, "a categorical feature's missing must be one of its values")
            return Feature(f["name"], "categorical", categories=tuple(v), other=other, missing=f.get("missing"))
        raise self.fail(where, f"unknown type {f.get('type')!r} (numeric or categorical)")

    def tree(self, node: Any, where: str, features: list[Feature], index: dict[str, int],
             n_classes: int, nodes: list[Node]) -> int:
        """Append ``node``'s subtree to ``nodes`` depth-first; return its index."""
        if not isinstance(node, dict) or not _is_num(node.get("size")):
            raise self.fail(where, "each node needs a numeric 'size'")
        me = len(nodes)
        if "counts" in node:
            counts = node["counts"]
            if not (isinstance(counts, list) and len(counts) == n_classes and all(_is_num(c) and c >= 0 for c in counts)):
                raise self.fail(where, f"leaf counts must be {n_classes} numbers >= 0")
            nodes.append(Node(size=int(node["size"]), counts=np.asarray(counts, dtype=float)))
            return me
        name = node.get("feature")
        if name not in index:
            raise self.fail(where, f"split on unknown feature {name!r}")
        j = index[name]
        feat = features[j]
        children = node.get("children")
        entry = Node(size=int(node["size"]), feature=j)
        nodes.append(entry)
        if feat.kind == "numeric":
            if not _is_num(node.get("threshold")):
                raise self.fail(where, "a numeric split needs a threshold")
            arity = (2, 3) if feat.missing == "branch" else (2,)
            if not (isinstance(children, list) and len(children) in arity):
                raise self.fail(where, "a numeric split needs 2 children"
                                + (" (3 with the missing values')" if len(arity) > 1 else ""))
            entry.threshold = float(node["threshold"])
            items = [(f"{where}.children[{k}]", c) for k, c in enumerate(children)]
        else:
            if not (isinstance(children, dict) and list(children) == list(feat.categories)):
                raise self.fail(where, f"a split on {name!r} needs one child per category, in the features' order")
            items = [(f"{where}.children[{k!r}]", c) for k, c in children.items()]
        entry.children = [self.tree(c, w, features, index, n_classes, nodes) for w, c in items]
        return me


def _renumber(nodes: list[Node]) -> list[Node]:
    """Breadth-first order, so each node's children are consecutive (see :class:`Node`)."""
    order = [0]
    k = 0
    while k < len(order):
        order.extend(nodes[order[k]].children)
        k += 1
    new_id = {old: new for new, old in enumerate(order)}
    out = []
    for old in order:
        n = nodes[old]
        out.append(Node(size=n.size, feature=n.feature, threshold=n.threshold,
                        children=[new_id[c] for c in n.children], counts=n.counts))
    return out


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _list(reader: _Reader, x: Any, where: str) -> list:
    if not isinstance(x, list):
        raise reader.fail(where, "must be a list")
    return x


def model_from_dict(data: Any, *, source: str = "<model>") -> ForestModel:
    """Check and convert a parsed model file; a :class:`DataError` says what is wrong."""
    return _Reader(source).model(data)


def load_model(path: str | Path) -> ForestModel:
    """Read a model written by :func:`save_model`.

    A truncated file, another format version or a file that is not a model is a
    :class:`DataError` saying so (and what to do), never a traceback.
    """
    from dpkit.io.source import read_raw

    raw = read_raw(path)
    name = "<stdin>" if str(path) == "-" else str(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{name}: not a dpkit forest model (not UTF-8 text)") from None
    if not text.strip():
        raise DataError(f"{name}: the model file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        stripped = text.strip()
        cut = stripped.startswith("{") and (not stripped.endswith("}") or exc.pos >= len(text.rstrip()) - 1)
        hint = (" — the file looks truncated (incomplete copy or interrupted write?); "
                "retrain or copy it again") if cut else ""
        raise DataError(
            f"{name}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}){hint}"
        ) from None
    return model_from_dict(data, source=name)


def save_model(model: ForestModel, path: str | Path) -> None:
    """Write ``model`` as JSON, atomically (complete or absent); ``-`` is stdout."""
    from dpkit.io.output import atomic_output

    text = dumps_model(model.to_dict())
    with atomic_output(path) as fh:
        fh.write(text)


def dumps_model(data: dict[str, Any]) -> str:
    """The model as JSON text: the header indented, one tree per line.

    Readable with any JSON viewer, and fast to write (indenting thousands of nodes through
    Python's pure-Python indenting encoder took seconds).
    """
    trees = data.get("trees", [])
    head = {k: v for k, v in data.items() if k != "trees"}
    text = json.dumps(head, indent=2, ensure_ascii=False, allow_nan=False)
    body = ",\n".join("    " + json.dumps(t, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
                      for t in trees)
    return text[:-2] + ',\n  "trees": [\n' + body + "\n  ]\n}\n"


# --------------------------------------------------------------------------- library API


def _as_model(model: ForestModel | str | Path) -> ForestModel:
    return model if isinstance(model, ForestModel) else load_model(model)


def predict_proba(model: ForestModel | str | Path, table: pd.DataFrame | EncodedTable, *,
                  source: str = "<data>") -> np.ndarray:
    """Class probabilities, ``(n_rows, n_classes)`` in the order of ``model.classes``.

    ``table`` is a DataFrame of strings (as :func:`dpkit.io.table.read_csv` returns; every
    row gets a prediction, a missing-token value follows the largest child) or an
    :class:`EncodedTable` encoded with the training schema.
    """
    m = _as_model(model)
    from dpkit.io.table import EncodedTable

    X = m.encode_table(table) if isinstance(table, EncodedTable) else m.encode_frame(table, source=source)
    return m.predict_proba(X)


def predict(model: ForestModel | str | Path, table: pd.DataFrame | EncodedTable, *,
            source: str = "<data>") -> np.ndarray:
    """Predicted class labels (an object array of class names), one per row of ``table``."""
    m = _as_model(model)
    proba = predict_proba(m, table, source=source)
    return np.asarray(m.classes, dtype=object)[np.argmax(proba, axis=1)]


def predict_frame(model: ForestModel | str | Path, df: pd.DataFrame, *, source: str = "<data>") -> np.ndarray:
    """:func:`predict` for a DataFrame of strings (what ``dpkit evaluate classify`` calls)."""
    return predict(model, df, source=source)
