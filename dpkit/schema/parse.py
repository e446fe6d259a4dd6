"""Schema / taxonomy YAML -> typed :class:`Schema` (format: docs/formats.md).

The schema is the public knowledge a release may use: category sets, taxonomy trees and
numeric bounds (docs/algorithms.md §0 rule 1). It is parsed from PyYAML's node graph rather than
``safe_load`` so that every error can name the file, line and key, and so that duplicate
keys (which ``safe_load`` silently merges) are caught.

Leaves of a taxonomy are numbered in depth-first order, so every node covers a contiguous
range of leaf codes ``[lo, hi)``: generalizing a column to a cut is then a ``searchsorted``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from dpkit.errors import SchemaError

COLUMN_TYPES = ("categorical", "numeric", "date", "timestamp", "ignore")
MISSING_POLICIES = ("drop", "error", "keep")
#: the leaf (categorical) and the bucket (numeric) a missing value is under ``missing_policy: keep``,
#: and the spellings tried when a column already has a leaf of that name
MISSING_NAMES = ("(missing)", "(missing value)", "(no value)")
#: what loading does with a categorical value that is not a leaf: refuse it (the default),
#: read it as the leaf named by ``other:`` (a catch-all), or read it as missing
UNLISTED = ("error", "other", "missing")


@dataclass(frozen=True)
class TaxonomyNode:
    """A node of a categorical taxonomy; covers leaf codes ``[lo, hi)``."""

    name: str
    children: tuple[TaxonomyNode, ...] = ()
    lo: int = 0
    hi: int = 1
    depth: int = 0

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def walk(self) -> Iterator[TaxonomyNode]:
        """Pre-order traversal of this subtree."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class IntervalNode:
    """A node of a fixed numeric interval hierarchy: ``[lo, hi)`` split into children."""

    lo: float
    hi: float
    children: tuple[IntervalNode, ...] = ()


@dataclass(frozen=True)
class CategoricalColumn:
    name: str
    root: TaxonomyNode
    leaves: tuple[str, ...]
    #: the catch-all leaf that values outside ``leaves`` are read as (``unlisted == "other"``)
    other: str | None = None
    #: ``error`` (default), ``other`` or ``missing``: see :data:`UNLISTED`
    unlisted: str = "error"
    #: the leaf missing values are read as (``missing_policy: keep``): the last leaf, a child of
    #: the root; None: a missing value is not in the domain (its row is dropped or refused)
    missing_leaf: str | None = field(default=None, repr=False)  # repr: a keyed run's identity (same bytes)
    #: does the column hold missing values as a value of its own (``missing: true|false`` in YAML)?
    #: None (a hand-written schema): as the policy says. False (a learned schema whose noisy counts
    #: did not establish missingness, dpkit.domain.metadata): under ``keep`` no ``(missing)`` leaf;
    #: a missing value is read as an unlisted one (the ``other:`` leaf), the row kept
    holds_missing: bool | None = field(default=None, repr=False)  # repr: same bytes without the key
    kind: str = field(default="categorical", init=False)

    @cached_property
    def missing_code(self) -> int:
        """The leaf code missing values get (the :attr:`missing_leaf`), else the catch-all leaf's
        when the column holds no missing values (:attr:`holds_missing` False), else -2 (missing:
        the row)."""
        if self.missing_leaf is not None:
            return self.leaf_code[self.missing_leaf]
        return self.other_code if self.holds_missing is False and self.other_code >= 0 else -2

    @cached_property
    def other_code(self) -> int:
        """The leaf code unlisted values get (``unlisted == "other"``), else -1."""
        return self.leaf_code[self.other] if self.unlisted == "other" and self.other is not None else -1

    # Computed once per column (algorithms look these up in loops); cached_property writes
    # to the instance __dict__, which a frozen dataclass allows. Treat the dicts as read-only.
    @cached_property
    def leaf_code(self) -> dict[str, int]:
        return {leaf: i for i, leaf in enumerate(self.leaves)}

    @cached_property
    def nodes(self) -> dict[str, TaxonomyNode]:
        return {n.name: n for n in self.root.walk()}

    @cached_property
    def height(self) -> int:
        return max(n.depth for n in self.root.walk())


@dataclass(frozen=True)
class NumericColumn:
    """A numeric column, or a date/timestamp column read as a number (``time``): days or
    seconds since 1970-01-01 (:mod:`dpkit.schema.dates`), bounds and split points on the calendar
    grid, labels written as ISO dates. Algorithms see a number either way."""

    name: str
    lo: float
    hi: float
    integer: bool = False
    hierarchy: IntervalNode | None = None
    #: a missing value is a value of the column (``missing_policy: keep``): encoded as NaN, and
    #: a cut holds it in a missing bucket beside the intervals (dpkit.algorithms.publish.cut.NumericCut)
    missing: bool = field(default=False, repr=False)  # repr: a keyed run's identity (same bytes)
    #: does the column hold missing values as a value of its own (``missing: true|false`` in YAML)?
    #: None (a hand-written schema): as the policy says. False (a learned schema whose noisy counts
    #: did not establish missingness, dpkit.domain.metadata): under ``keep`` a missing value is
    #: still encoded as NaN (the row kept), but a cut never sets a missing bucket apart: the NaN
    #: goes to the lowest interval (as a value below ``lo`` is clipped to it)
    holds_missing: bool | None = field(default=None, repr=False)
    #: ``missing: structural`` (a learned schema): the bucket by a public rule, not because the
    #: noisy counts established missing values (dpkit.domain.metadata.structural_missing);
    #: ``holds_missing`` is True, and publish's cell budget counts the bucket as a fraction of a
    #: cell (dpkit.algorithms.publish.maxgddp.STRUCTURAL_BUCKET)
    structural: bool = field(default=False, repr=False)
    kind: str = field(default="numeric", init=False)
    #: ``date`` or ``timestamp`` (a time column, :mod:`dpkit.schema.dates`), None for a number
    time: str | None = None
    #: a value that is not a date (a number, for a numeric column): ``error`` (the default) or
    #: ``missing`` (a learned schema, whose types were decided from noisy counts: no error may
    #: depend on the exact data; dpkit.domain.metadata)
    unparsable: str = "error"
    #: extra public candidate split points, strictly inside (lo, hi), ascending: publish's grid
    #: offers those that fall strictly inside an interval besides its own (``points:`` in YAML;
    #: a learned schema gives one beside a bound at 0, separating 0 from the rest, and decade
    #: points 1, 2, 5 × 10^k below the first grid step: docs/domain.md)
    points: tuple[float, ...] = ()

    def __repr__(self) -> str:
        # the dataclass's own repr, extended only for a time column or extra points: a run's key
        # identity holds the schema's repr (dpkit.privacy.rng.run_context), so schemas without
        # dates or points keep their bytes (scripts/same_bytes.py)
        text = (f"NumericColumn(name={self.name!r}, lo={self.lo!r}, hi={self.hi!r}, integer={self.integer!r}, "
                f"hierarchy={self.hierarchy!r}, kind={self.kind!r}")
        if self.time is not None:
            text += f", time={self.time!r}, unparsable={self.unparsable!r}"
        if self.unparsable != "error" and self.time is None:
            text += f", unparsable={self.unparsable!r}"
        if self.points:
            text += f", points={self.points!r}"
        if self.holds_missing is not None:  # a learned schema's flag changes the cut: part of a run's identity
            text += f", holds_missing={self.holds_missing!r}"
        if self.structural:
            text += ", structural=True"
        return text + ")"


@dataclass(frozen=True)
class IgnoredColumn:
    name: str
    kind: str = field(default="ignore", init=False)


Column = CategoricalColumn | NumericColumn | IgnoredColumn


def keep_missing(col: Column) -> Column:
    """``col`` with missing values as values of its domain (``missing_policy: keep``).

    A categorical column gets a leaf ``(missing)`` as the last child of its root (so leaf
    codes of the other leaves, and every node's leaf range, are unchanged); a numeric column
    a missing bucket (``missing=True``). Idempotent. The leaf is public: it is a function of
    the schema only, present whether or not any record is missing (docs/algorithms.md §0).
    """
    import dataclasses

    if isinstance(col, NumericColumn):
        return col if col.missing else dataclasses.replace(col, missing=True)
    if not isinstance(col, CategoricalColumn) or col.missing_leaf is not None or col.root.is_leaf:
        return col
    if col.holds_missing is False and col.other_code >= 0:
        return col  # no leaf: a missing value is read as the catch-all leaf (CategoricalColumn.missing_code)  # (a one-node taxonomy has no root to hang the leaf under: its missing rows drop)
    names = {n.name for n in col.root.walk()}
    leaf = next((m for m in MISSING_NAMES if m not in names), None)
    i = 2
    while leaf is None:
        leaf = f"(missing {i})" if f"(missing {i})" not in names else None
        i += 1
    code = len(col.leaves)
    node = TaxonomyNode(leaf, (), code, code + 1, 1)
    root = TaxonomyNode(col.root.name, (*col.root.children, node), col.root.lo, code + 1, 0)
    return CategoricalColumn(col.name, root, (*col.leaves, leaf), other=col.other, unlisted=col.unlisted,
                             missing_leaf=leaf, holds_missing=col.holds_missing)


@dataclass(frozen=True)
class Schema:
    """The public description of a data set: its columns, target, and missing-value policy."""

    columns: dict[str, Column]
    target: str | None = None
    #: the first missing token (``missing_tokens[0]``), for code that knows only one
    missing: str | None = None
    missing_policy: str = "error"
    path: str = "<schema>"
    #: drafted from the data by ``dpkit taxonomy infer``: its domains are not public
    draft: bool = False
    #: every missing token (``missing: ['', 'n/a', '?']``); ``(missing,)`` when one is given
    missing_tokens: tuple[str, ...] = ()
    #: learned in the run (no schema given): messages do not quote its missing tokens (a token
    #: guessed from the exact data would be a statistic of it). Not part of equality or of the repr: a keyed
    #: run's key derives from the schema's repr (dpkit.privacy.rng.run_context), and a flag
    #: that changes no output must not change the noise
    learned: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.missing is not None and not self.missing_tokens:
            object.__setattr__(self, "missing_tokens", (self.missing,))
        elif self.missing_tokens and self.missing is None:
            object.__setattr__(self, "missing", self.missing_tokens[0])
        if self.missing_policy == "keep":
            object.__setattr__(self, "columns", {n: keep_missing(c) if n != self.target and self.may_miss(c) else c
                                                 for n, c in self.columns.items()})

    def may_miss(self, col: Column) -> bool:
        """Can a value of ``col`` be missing? With a missing token (any column), or a column that
        reads what it cannot parse as missing (a learned numeric column's ``unparsable: missing``,
        a categorical ``unlisted: missing``). Public: a function of the schema only."""
        if self.missing_tokens:
            return True
        if isinstance(col, NumericColumn):
            return col.unparsable == "missing"
        return isinstance(col, CategoricalColumn) and col.unlisted == "missing"

    def keeping_missing(self) -> Schema:
        """This schema with every used column holding missing values as values (the target
        too): what ``generalize`` encodes with, so that no row is dropped.
        A column of a ``keep`` schema is unchanged (same leaf codes, same missing bucket)."""
        import dataclasses

        cols = {n: keep_missing(c) if self.may_miss(c) else c for n, c in self.columns.items()}
        return dataclasses.replace(self, columns=cols, missing_policy="keep")

    def for_target(self, target: str) -> Schema:
        """This schema with ``target`` as its class column: under ``keep`` the class column has no
        ``(missing)`` leaf (a record without a class has no cell; its row is dropped), so a target
        named other than the schema's loses its leaf and the schema's own target, now a predictor,
        gets one. The other leaves keep their codes."""
        import dataclasses

        if target == self.target or self.missing_policy != "keep":
            return self
        cols = dict(self.columns)
        col = cols.get(target)
        if isinstance(col, CategoricalColumn) and col.missing_leaf is not None:
            root = dataclasses.replace(col.root, children=col.root.children[:-1], hi=col.root.hi - 1)
            cols[target] = CategoricalColumn(col.name, root, col.leaves[:-1], other=col.other, unlisted=col.unlisted)
        return dataclasses.replace(self, columns=cols, target=target)

    def dropping_missing_numbers(self) -> Schema:
        """For an algorithm whose numbers have no missing bucket (a forest's thresholds, k-means
        points): under ``keep``, a categorical column keeps its ``(missing)`` leaf and a row with a
        missing number is dropped (policy ``drop``); any other schema is returned as it is."""
        import dataclasses

        if self.missing_policy != "keep":
            return self
        cols = {n: dataclasses.replace(c, missing=False) if isinstance(c, NumericColumn) else c
                for n, c in self.columns.items()}
        return dataclasses.replace(self, columns=cols, missing_policy="drop")

    def dropping_invalid(self) -> Schema:
        """This schema with every record outside its domain dropped on its own (``on_invalid
        drop``, docs/formats.md): a categorical value outside its taxonomy reads as missing
        (``unlisted: missing``) and missing values are dropped. Numbers outside the bounds are
        clipped either way; a value that is not a number still refuses the run."""
        import dataclasses

        cols = {n: dataclasses.replace(c, unlisted="missing")
                if isinstance(c, CategoricalColumn) and c.unlisted == "error" else c
                for n, c in self.columns.items()}
        return dataclasses.replace(self, columns=cols,
                                   missing_policy="keep" if self.missing_policy == "keep" else "drop")

    def column(self, name: str) -> Column:
        from dpkit.errors import DpkitUsageError

        if name not in self.columns:
            raise DpkitUsageError(
                f"column {name!r} is not in schema {self.path} "
                f"(columns: {', '.join(self.columns)})"
            )
        return self.columns[name]

    def predictors(self, target: str | None = None) -> list[str]:
        """The non-ignored columns other than the target, in schema order."""
        t = target if target is not None else self.target
        return [n for n, c in self.columns.items() if c.kind != "ignore" and n != t]

    def used_columns(self) -> list[str]:
        return [n for n, c in self.columns.items() if c.kind != "ignore"]


# --------------------------------------------------------------------------- loading


class _Ctx:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, node: yaml.Node | None, message: str) -> SchemaError:
        if node is not None:
            m = node.start_mark
            return SchemaError(f"{self.path}:{m.line + 1}:{m.column + 1}: {message}")
        return SchemaError(f"{self.path}: {message}")


def _scalar(ctx: _Ctx, node: yaml.Node, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise ctx.fail(node, f"{what} must be a single value")
    return str(node.value)


def _mapping(ctx: _Ctx, node: yaml.Node, what: str) -> list[tuple[str, yaml.Node, yaml.Node]]:
    """Key/value pairs of a mapping node, refusing duplicate keys."""
    if not isinstance(node, yaml.MappingNode):
        raise ctx.fail(node, f"{what} must be a mapping")
    seen: dict[str, int] = {}
    out = []
    for k, v in node.value:
        key = _scalar(ctx, k, f"a key in {what}")
        if key in seen:
            raise ctx.fail(k, f"duplicate key {key!r} in {what} (first on line {seen[key]})")
        seen[key] = k.start_mark.line + 1
        out.append((key, k, v))
    return out


def _number(ctx: _Ctx, node: yaml.Node, what: str) -> float:
    text = _scalar(ctx, node, what)
    try:
        value = float(text)
    except ValueError:
        raise ctx.fail(node, f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ctx.fail(node, f"{what} must be finite, got {text!r}")
    return value


def _bool(ctx: _Ctx, node: yaml.Node, what: str) -> bool:
    text = _scalar(ctx, node, what).lower()
    if text in ("true", "yes", "on"):
        return True
    if text in ("false", "no", "off"):
        return False
    raise ctx.fail(node, f"{what} must be true or false, got {text!r}")


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _build_tree(ctx: _Ctx, column: str, name: str, key_node: yaml.Node, node: yaml.Node) -> TaxonomyNode:
    """Parse a taxonomy subtree; checks duplicates (a leaf under two parents) and cycles."""
    seen: dict[str, int] = {}
    counter = [0]
    active: set[int] = set()

    def visit(name: str, key_node: yaml.Node, node: yaml.Node | None, depth: int) -> TaxonomyNode:
        if name in seen:
            raise ctx.fail(
                key_node,
                f"column {column!r}: {name!r} appears twice in the hierarchy "
                f"(first on line {seen[name]}); every node needs a unique name",
            )
        seen[name] = key_node.start_mark.line + 1
        if node is None or _is_null(node):
            lo = counter[0]
            counter[0] += 1
            return TaxonomyNode(name, (), lo, lo + 1, depth)
        if id(node) in active:
            raise ctx.fail(node, f"column {column!r}: the hierarchy under {name!r} refers to itself (a cycle)")
        active.add(id(node))
        children: list[tuple[str, yaml.Node, yaml.Node | None]] = []
        if isinstance(node, yaml.MappingNode):
            for key, k, v in _mapping(ctx, node, f"the children of {name!r}"):
                children.append((key, k, v))
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if isinstance(item, yaml.ScalarNode):
                    children.append((str(item.value), item, None))
                elif isinstance(item, yaml.MappingNode):
                    for key, k, v in _mapping(ctx, item, f"the children of {name!r}"):
                        children.append((key, k, v))
                else:
                    raise ctx.fail(item, f"column {column!r}: a list under {name!r} holds names or mappings")
        else:
            # a scalar under a node: one leaf child (``Without-pay: Never``) is almost surely a typo
            raise ctx.fail(
                node,
                f"column {column!r}: {name!r} must map to children (a mapping or a list) or null",
            )
        if not children:
            raise ctx.fail(node, f"column {column!r}: {name!r} has an empty list of children; use null for a leaf")
        lo = counter[0]
        built = tuple(visit(n, k, v, depth + 1) for n, k, v in children)
        active.discard(id(node))
        return TaxonomyNode(name, built, lo, counter[0], depth)

    return visit(name, key_node, node, 0)


def _leaves(root: TaxonomyNode) -> tuple[str, ...]:
    return tuple(n.name for n in root.walk() if n.is_leaf)


def _build_intervals(ctx: _Ctx, column: str, node: yaml.Node, lo: float, hi: float) -> IntervalNode:
    """A fixed interval hierarchy: a nested mapping keyed ``"lo..hi"`` (null for a leaf)."""
    pairs = _mapping(ctx, node, f"the hierarchy of {column!r}")
    if len(pairs) != 1:
        raise ctx.fail(node, f"column {column!r}: an interval hierarchy has one root, \"{lo:g}..{hi:g}\"")

    def parse_key(key: str, k: yaml.Node) -> tuple[float, float]:
        parts = key.split("..")
        try:
            a, b = float(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            raise ctx.fail(k, f"column {column!r}: interval keys are written \"lo..hi\", got {key!r}") from None
        if not a < b:
            raise ctx.fail(k, f"column {column!r}: interval {key!r} needs lo < hi")
        return a, b

    def visit(key: str, k: yaml.Node, v: yaml.Node) -> IntervalNode:
        a, b = parse_key(key, k)
        if _is_null(v):
            return IntervalNode(a, b)
        kids = [visit(ck, cn, cv) for ck, cn, cv in _mapping(ctx, v, f"interval {key!r}")]
        kids.sort(key=lambda n: n.lo)
        edges = [kids[0].lo] + [c.hi for c in kids]
        if kids[0].lo != a or kids[-1].hi != b or any(kids[i].hi != kids[i + 1].lo for i in range(len(kids) - 1)):
            raise ctx.fail(k, f"column {column!r}: the children of {key!r} must tile it exactly (edges {edges})")
        return IntervalNode(a, b, tuple(kids))

    key, k, v = pairs[0]
    root = visit(key, k, v)
    if (root.lo, root.hi) != (lo, hi):
        raise ctx.fail(k, f"column {column!r}: the hierarchy root {key!r} must equal the bounds [{lo:g}, {hi:g}]")
    return root


COLUMN_KEYS = {
    "categorical": {"type", "hierarchy", "values", "root", "description", "other", "unlisted", "missing"},
    "numeric": {"type", "bounds", "integer", "hierarchy", "description", "unit", "unparsable", "points", "missing"},
    "ignore": {"type", "description"},
    "date": {"type", "bounds", "description", "unparsable", "missing"},
    "timestamp": {"type", "bounds", "description", "unparsable", "missing"},
}


def _time_bound(ctx: _Ctx, node: yaml.Node, what: str, kind: str) -> float:
    from dpkit.schema.dates import parse_bound

    text = _scalar(ctx, node, what)
    value = parse_bound(text, kind)
    if value is None:
        example = "2021-01-01" if kind == "date" else "2021-01-01T00:00:00"
        raise ctx.fail(node, f"{what} must be an ISO {kind} ({example}), got {text!r}")
    return value


def _time_column(ctx: _Ctx, name: str, node: yaml.Node, pairs: dict, kind: str) -> NumericColumn:
    """A ``type: date`` / ``type: timestamp`` column: ISO bounds, read as days / seconds."""
    if "bounds" not in pairs:
        raise ctx.fail(node, f"column {name!r}: a {kind} column needs public bounds: [lo, hi] (ISO {kind}s)")
    bnode = pairs["bounds"][1]
    if not isinstance(bnode, yaml.SequenceNode) or len(bnode.value) != 2:
        raise ctx.fail(bnode, f"column {name!r}: bounds must be a list [lo, hi]")
    lo = _time_bound(ctx, bnode.value[0], f"lower bound of {name!r}", kind)
    hi = _time_bound(ctx, bnode.value[1], f"upper bound of {name!r}", kind)
    if not lo < hi:
        raise ctx.fail(bnode, f"column {name!r}: bounds need lo < hi")
    return NumericColumn(name, lo, hi, True, None, time=kind, unparsable=_unparsable(ctx, name, pairs))


def _unparsable(ctx: _Ctx, name: str, pairs: dict) -> str:
    """A number or time column's ``unparsable:`` (``error``, the default, or ``missing``)."""
    if "unparsable" not in pairs:
        return "error"
    unparsable = _scalar(ctx, pairs["unparsable"][1], f"unparsable of {name!r}")
    if unparsable not in ("error", "missing"):
        raise ctx.fail(pairs["unparsable"][1], f"column {name!r}: unparsable must be error or missing, "
                       f"got {unparsable!r}")
    return unparsable


def _column(ctx: _Ctx, name: str, key_node: yaml.Node, node: yaml.Node) -> Column:
    """Column ``name``, with its ``missing: true|false`` (:attr:`NumericColumn.holds_missing`)."""
    import dataclasses

    col = _column_of_type(ctx, name, key_node, node)
    flag = next((v for k, _, v in _mapping(ctx, node, f"column {name!r}") if k == "missing"), None)
    if flag is None or isinstance(col, IgnoredColumn):
        return col
    if isinstance(col, NumericColumn) and isinstance(flag, yaml.ScalarNode) and flag.value == "structural":
        return dataclasses.replace(col, holds_missing=True, structural=True)
    return dataclasses.replace(col, holds_missing=_bool(ctx, flag, f"missing of {name!r}"))


def _column_of_type(ctx: _Ctx, name: str, key_node: yaml.Node, node: yaml.Node) -> Column:
    if _is_null(node):
        raise ctx.fail(key_node, f"column {name!r} needs a type (categorical, numeric, date, timestamp or ignore)")
    pairs = {k: (kn, v) for k, kn, v in _mapping(ctx, node, f"column {name!r}")}
    if "type" not in pairs:
        raise ctx.fail(node, f"column {name!r} needs a 'type' (categorical, numeric, date, timestamp or ignore)")
    ctype = _scalar(ctx, pairs["type"][1], f"type of {name!r}")
    if ctype not in COLUMN_TYPES:
        raise ctx.fail(pairs["type"][1], f"column {name!r}: unknown type {ctype!r} (use categorical, numeric, date, timestamp or ignore)")
    for key, (kn, _) in pairs.items():
        if key not in COLUMN_KEYS[ctype]:
            raise ctx.fail(kn, f"column {name!r}: unknown key {key!r} for a {ctype} column (allowed: {', '.join(sorted(COLUMN_KEYS[ctype]))})")
    if ctype == "ignore":
        return IgnoredColumn(name)
    if ctype in ("date", "timestamp"):
        return _time_column(ctx, name, node, pairs, ctype)
    if ctype == "numeric":
        if "bounds" not in pairs:
            raise ctx.fail(node, f"column {name!r}: a numeric column needs public bounds: [lo, hi]")
        bnode = pairs["bounds"][1]
        if not isinstance(bnode, yaml.SequenceNode) or len(bnode.value) != 2:
            raise ctx.fail(bnode, f"column {name!r}: bounds must be a list [lo, hi]")
        lo = _number(ctx, bnode.value[0], f"lower bound of {name!r}")
        hi = _number(ctx, bnode.value[1], f"upper bound of {name!r}")
        if not lo < hi:
            raise ctx.fail(bnode, f"column {name!r}: bounds need lo < hi, got [{lo:g}, {hi:g}]")
        integer = _bool(ctx, pairs["integer"][1], f"integer of {name!r}") if "integer" in pairs else False
        hierarchy = _build_intervals(ctx, name, pairs["hierarchy"][1], lo, hi) if "hierarchy" in pairs else None
        unparsable = _unparsable(ctx, name, pairs)
        points: tuple[float, ...] = ()
        if "points" in pairs:
            pnode = pairs["points"][1]
            if not isinstance(pnode, yaml.SequenceNode):
                raise ctx.fail(pnode, f"column {name!r}: points must be a list of numbers")
            points = tuple(_number(ctx, v, f"a split point of {name!r}") for v in pnode.value)
            ok = all(lo < p < hi and (not integer or float(p).is_integer()) for p in points)
            if not ok or list(points) != sorted(set(points)):
                raise ctx.fail(pnode, f"column {name!r}: points must be ascending, distinct and strictly inside "
                                      f"the bounds [{lo:g}, {hi:g}]" + (" (integers)" if integer else ""))
        return NumericColumn(name, lo, hi, integer, hierarchy, unparsable=unparsable, points=points)
    # categorical
    if ("hierarchy" in pairs) == ("values" in pairs):
        raise ctx.fail(node, f"column {name!r}: a categorical column needs exactly one of 'hierarchy' or 'values'")
    if "values" in pairs:
        vnode = pairs["values"][1]
        if not isinstance(vnode, yaml.SequenceNode) or not vnode.value:
            raise ctx.fail(vnode, f"column {name!r}: values must be a non-empty list")
        root_name = _scalar(ctx, pairs["root"][1], "root") if "root" in pairs else "Any"
        root = _build_tree(ctx, name, root_name, pairs["values"][0], vnode)
    else:
        hnode = pairs["hierarchy"][1]
        top = _mapping(ctx, hnode, f"the hierarchy of {name!r}")
        if len(top) != 1:
            raise ctx.fail(hnode, f"column {name!r}: a hierarchy has exactly one root (e.g. Any), found {len(top)}")
        root_name, rk, rv = top[0]
        root = _build_tree(ctx, name, root_name, rk, rv)
    leaves = _leaves(root)
    if "other" in pairs and "unlisted" in pairs:
        raise ctx.fail(pairs["unlisted"][0], f"column {name!r}: give one of 'other' (a catch-all leaf) or 'unlisted: missing'")
    if "other" in pairs:
        other = _scalar(ctx, pairs["other"][1], f"other of {name!r}")
        if other not in leaves:
            raise ctx.fail(pairs["other"][1], f"column {name!r}: other {other!r} must be one of the column's leaves")
        return CategoricalColumn(name, root, leaves, other=other, unlisted="other")
    if "unlisted" in pairs:
        how = _scalar(ctx, pairs["unlisted"][1], f"unlisted of {name!r}")
        if how not in ("error", "missing"):
            raise ctx.fail(pairs["unlisted"][1], f"column {name!r}: unlisted must be error or missing "
                           f"(for a catch-all leaf write other: LEAF), got {how!r}")
        return CategoricalColumn(name, root, leaves, unlisted=how)
    return CategoricalColumn(name, root, leaves)


TOP_KEYS = {"target", "columns", "missing", "missing_policy", "source", "description", "name", "draft"}


def parse_schema(text: str, path: str = "<schema>") -> Schema:
    """Parse schema YAML text; errors name ``path``, line, column and key."""
    ctx = _Ctx(path)
    try:
        doc = yaml.compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
        raise SchemaError(f"{where}: YAML syntax error: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise SchemaError(f"{path}: YAML error: {exc}") from None
    if doc is None:
        raise SchemaError(f"{path}: the schema file is empty")
    top = {k: (kn, v) for k, kn, v in _mapping(ctx, doc, "the schema")}
    for key, (kn, _) in top.items():
        if key not in TOP_KEYS:
            raise ctx.fail(kn, f"unknown top-level key {key!r} (allowed: {', '.join(sorted(TOP_KEYS))})")
    if "columns" not in top:
        raise ctx.fail(doc, "the schema needs a 'columns' mapping")
    columns: dict[str, Column] = {}
    for name, kn, v in _mapping(ctx, top["columns"][1], "columns"):
        columns[name] = _column(ctx, name, kn, v)
    if not columns:
        raise ctx.fail(top["columns"][1], "the schema declares no columns")
    target = None
    if "target" in top and not _is_null(top["target"][1]):
        target = _scalar(ctx, top["target"][1], "target")
        if target not in columns:
            raise ctx.fail(top["target"][1], f"target {target!r} is not a declared column")
        if columns[target].kind != "categorical":
            raise ctx.fail(top["target"][1], f"target {target!r} must be a categorical column")
    tokens: list[str] = []
    if "missing" in top and not _is_null(top["missing"][1]):
        node = top["missing"][1]
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if _is_null(item):
                    raise ctx.fail(item, "a missing token must be a string (write '' for an empty cell)")
                token = _scalar(ctx, item, "each missing token")
                if token in tokens:
                    raise ctx.fail(item, f"missing token {token!r} is listed twice")
                tokens.append(token)
            if not tokens:
                raise ctx.fail(node, "missing: [] lists no token; remove the key or list the tokens")
        else:
            tokens.append(_scalar(ctx, node, "missing"))
    missing = tokens[0] if tokens else None
    policy = "error"
    if "missing_policy" in top:
        policy = _scalar(ctx, top["missing_policy"][1], "missing_policy")
        if policy not in MISSING_POLICIES:
            raise ctx.fail(top["missing_policy"][1], f"missing_policy must be one of {', '.join(MISSING_POLICIES)}, got {policy!r}")
    draft = _bool(ctx, top["draft"][1], "draft") if "draft" in top else False
    return Schema(columns=columns, target=target, missing=missing, missing_policy=policy, path=path,
                  draft=draft, missing_tokens=tuple(tokens))


def load_schema(path: str | Path, *, allow_draft: bool = False) -> Schema:
    """Read and validate a schema file (see :func:`parse_schema`).

    A schema marked ``draft: true`` (written by ``dpkit taxonomy infer``) holds category
    lists and bounds read from the data, which a DP release must not use (docs/algorithms.md §0
    rule 1); it is refused unless ``allow_draft`` (validation, k-anonymity, evaluation).
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaError(f"{p}: schema file not found") from None
    except IsADirectoryError:
        raise SchemaError(f"{p}: is a directory, expected a schema YAML file") from None
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{p}: not UTF-8 text (byte {exc.start}); save the schema as UTF-8") from None
    except OSError as exc:
        raise SchemaError(f"{p}: cannot read schema: {exc.strerror}") from None
    schema = parse_schema(text, str(p))
    if schema.draft and not allow_draft:
        raise SchemaError(
            f"{p}: is a draft inferred from the data (draft: true): its categories and bounds are "
            "not public; replace them with public knowledge and delete the 'draft' line"
        )
    return schema


def schema_to_dict(schema: Schema) -> dict[str, Any]:
    """The schema as plain data in the YAML format (for writing drafts and imports)."""

    def tree(node: TaxonomyNode, skip: str | None = None) -> Any:
        kids = [c for c in node.children if c.name != skip]  # the (missing) leaf is implied by keep
        if not kids:
            return None
        if all(c.is_leaf for c in kids):
            return [c.name for c in kids]
        return {c.name: tree(c) for c in kids}

    def intervals(node: IntervalNode) -> Any:
        return {f"{c.lo:g}..{c.hi:g}": intervals(c) if c.children else None for c in node.children} or None

    cols: dict[str, Any] = {}
    for name, col in schema.columns.items():
        if isinstance(col, IgnoredColumn):
            cols[name] = {"type": "ignore"}
        elif isinstance(col, NumericColumn) and col.time is not None:
            from dpkit.schema.dates import format_time

            cols[name] = {"type": col.time, "bounds": [format_time(col.lo, col.time), format_time(col.hi, col.time)]}
            if col.unparsable != "error":
                cols[name]["unparsable"] = col.unparsable
        elif isinstance(col, NumericColumn):
            lo = int(col.lo) if col.integer else col.lo
            hi = int(col.hi) if col.integer else col.hi
            spec: dict[str, Any] = {"type": "numeric", "bounds": [lo, hi], "integer": col.integer}
            if col.hierarchy is not None:
                spec["hierarchy"] = {f"{col.lo:g}..{col.hi:g}": intervals(col.hierarchy)}
            if col.unparsable == "missing":
                spec["unparsable"] = "missing"
            if col.points:
                spec["points"] = [int(p) if col.integer else p for p in col.points]
            cols[name] = spec
        else:
            if all(c.is_leaf for c in col.root.children) and col.root.name == "Any":
                cols[name] = {"type": "categorical", "values": [v for v in col.leaves if v != col.missing_leaf]}
            else:
                cols[name] = {"type": "categorical", "hierarchy": {col.root.name: tree(col.root, col.missing_leaf)}}
            if col.unlisted == "other":
                cols[name]["other"] = col.other
            elif col.unlisted == "missing":
                cols[name]["unlisted"] = "missing"
        if getattr(col, "holds_missing", None) is not None:
            cols[name]["missing"] = "structural" if getattr(col, "structural", False) else col.holds_missing
    out: dict[str, Any] = {}
    if schema.target:
        out["target"] = schema.target
    if schema.missing is not None:
        tokens = list(schema.missing_tokens)
        out["missing"] = tokens[0] if len(tokens) == 1 else tokens
        out["missing_policy"] = schema.missing_policy
    out["columns"] = cols
    return out
