"""Convert other tools' taxonomy files into dpkit's schema (format: docs/formats.md).

Two sources are understood:

* **ARX** generalization hierarchies (arx.deidentifier.org): one CSV per attribute, one row
  per leaf value, ``;``-separated, the columns running from the leaf to the most general
  value (usually ``*``). The attribute name comes from the file name (``workclass.csv`` or
  ``adult_hierarchy_workclass.csv``). ARX's root ``*`` becomes ``Any`` (the root name our
  ``values:`` shorthand uses); a level that repeats the value below it (``Private;Private;*``)
  is collapsed, since our trees need unique node names. A hierarchy whose leaves are all
  numbers becomes a numeric column: with a fixed interval hierarchy built from its half-open
  labels (``[15, 20[``) when they nest and tile, else with public bounds spanning the
  hierarchy's values and labels (``[15, 20[``, ``15-19``) — or, with
  ``numeric="categorical"``, a categorical tree of the values as written.
* **DiffGen's brace format** (Mohammed et al., KDD 2011; the Adult trees of Fung, Wang & Yu,
  TKDE 2007): blocks headed ``name:discrete`` or ``name:continuous`` holding a tree
  ``{Any {Child {Leaf} ...} ...}``. A continuous attribute's root ``{lo-hi ...}`` gives the
  bounds; children written as intervals ``{lo-hi}`` become a fixed interval hierarchy, and
  the placeholder ``{ignored}`` means none.

Both return a :class:`~dpkit.schema.parse.Schema` built through :func:`parse_schema` (so the
result is validated exactly like a hand-written file) and can be written with
:func:`schema_yaml`.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from dpkit.defaults import DEFAULT_ENCODING
from dpkit.errors import DpkitUsageError, SchemaError, warn
from dpkit.schema.parse import (
    CategoricalColumn,
    IgnoredColumn,
    IntervalNode,
    NumericColumn,
    Schema,
    TaxonomyNode,
    parse_schema,
)

if TYPE_CHECKING:
    import pandas as pd

ROOT = "Any"


# --------------------------------------------------------------------------- plain trees


@dataclass
class _Node:
    """A mutable tree node used while importing (children keep their first-seen order)."""

    name: str
    children: dict[str, _Node] = field(default_factory=dict)

    def to_spec(self) -> Any:
        if not self.children:
            return None
        return {name: child.to_spec() for name, child in self.children.items()}


# --------------------------------------------------------------------------- ARX


_ARX_INTERVAL = re.compile(
    r"^\s*[\[\(]\s*(-?\d+(?:\.\d+)?)\s*[,;]\s*(-?\d+(?:\.\d+)?)\s*[\[\)\]]\s*$"
)
_DASH_INTERVAL = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*$")


def arx_column_name(path: str | Path) -> str:
    """The attribute an ARX hierarchy file describes, from its name.

    ``adult_hierarchy_workclass.csv`` and ``hierarchy_workclass.csv`` -> ``workclass``;
    ``workclass.csv`` -> ``workclass``.
    """
    stem = Path(path).name
    for suffix in (".csv", ".txt"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    for marker in ("_hierarchy_", "hierarchy_"):
        if marker in stem:
            return stem.split(marker, 1)[1]
    return stem


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _interval(label: str) -> tuple[float, float] | None:
    """``[15, 20[`` / ``[15, 20)`` / ``15-19`` -> the numbers it spans, else None."""
    m = _ARX_INTERVAL.match(label) or _DASH_INTERVAL.match(label)
    if not m:
        return None
    lo, hi = float(m.group(1)), float(m.group(2))
    return (lo, hi) if lo <= hi else None


def read_arx_rows(path: str | Path, *, delimiter: str = ";", encoding: str = DEFAULT_ENCODING) -> list[list[str]]:
    """The rows of one ARX hierarchy file (blank rows skipped, cells stripped)."""
    p = Path(path)
    try:
        text = p.read_text(encoding=encoding)
    except FileNotFoundError:
        raise SchemaError(f"{p}: file not found") from None
    except IsADirectoryError:
        raise SchemaError(f"{p}: is a directory") from None
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{p}: not valid {encoding} (byte {exc.start}); give its encoding",
                          param="encoding") from None
    except OSError as exc:
        raise SchemaError(f"{p}: cannot read: {exc.strerror}") from None
    rows = []
    for row in csv.reader(io.StringIO(text), delimiter=delimiter):
        cells = [c.strip() for c in row]
        while cells and cells[-1] == "":
            cells.pop()  # a trailing delimiter
        if cells:
            rows.append(cells)
    if not rows:
        raise SchemaError(f"{p}: the hierarchy file is empty")
    if all(len(r) == 1 for r in rows) and len(rows) > 1 and delimiter == ";":
        first = rows[0][0]
        if "," in first or "\t" in first:
            raise SchemaError(f"{p}:1: one value per row — ARX hierarchies are ';'-separated; give the delimiter",
                              param="hierarchy_delimiter")
    return rows


def arx_tree(rows: Sequence[Sequence[str]], source: str, column: str) -> _Node:
    """Build the tree of one ARX hierarchy: each row is a path from a leaf up to the root."""
    root = _Node(ROOT)
    parent_of: dict[str, tuple[str, int]] = {}  # node name -> (parent name, line)
    leaf_line: dict[str, int] = {}
    for line, row in enumerate(rows, start=1):
        path: list[str] = []
        for cell in row:
            if cell == "":
                raise SchemaError(f"{source}:{line}: column {column!r}: an empty level in the hierarchy")
            if not path or path[-1] != cell:  # ARX repeats a value it does not generalize
                path.append(cell)
        if len(path) > 1 and path[-1] in ("*", ROOT):
            path.pop()
        elif len(path) == 1 and path[0] in ("*", ROOT):
            raise SchemaError(f"{source}:{line}: column {column!r}: a row holds only the root")
        # path runs leaf -> most general; walk it from the top
        node = root
        chain = [ROOT, *reversed(path)]
        for depth in range(1, len(chain)):
            name, parent = chain[depth], chain[depth - 1]
            if depth < len(chain) - 1 and name in leaf_line:
                raise SchemaError(
                    f"{source}:{line}: column {column!r}: {name!r} generalizes other values here "
                    f"but is a leaf on line {leaf_line[name]}"
                )
            if name in parent_of and parent_of[name][0] != parent:
                first_parent, first_line = parent_of[name]
                raise SchemaError(
                    f"{source}:{line}: column {column!r}: {name!r} is under {parent!r} here but "
                    f"under {first_parent!r} on line {first_line}; every value needs one parent"
                )
            parent_of.setdefault(name, (parent, line))
            node = node.children.setdefault(name, _Node(name))
        if path[0] in leaf_line:
            raise SchemaError(
                f"{source}:{line}: column {column!r}: leaf {path[0]!r} appears twice "
                f"(first on line {leaf_line[path[0]]})"
            )
        leaf_line[path[0]] = line
        if node.children:
            raise SchemaError(
                f"{source}:{line}: column {column!r}: leaf {path[0]!r} is also a "
                f"generalization of other values"
            )
    return root


def _arx_numeric(rows: Sequence[Sequence[str]]) -> tuple[float, float, bool] | None:
    """Bounds ``(lo, hi, integer)`` of a hierarchy whose leaves are all numbers, else None.

    The bounds span every leaf and every interval label in the hierarchy (ARX writes
    ``[15, 20[``: we take 20 as the upper edge), so they come from the public hierarchy.
    """
    leaves = [_number(r[0]) for r in rows]
    if any(v is None for v in leaves):
        return None
    values = [v for v in leaves if v is not None]
    lo, hi = min(values), max(values)
    for r in rows:
        for cell in r[1:]:
            iv = _interval(cell)
            if iv is not None:
                lo, hi = min(lo, iv[0]), max(hi, iv[1])
    integer = all(float(v).is_integer() for v in values)
    if lo == hi:
        hi = lo + 1
    return lo, hi, integer


_HALF_OPEN = re.compile(r"^\s*\[\s*(-?\d+(?:\.\d+)?)\s*[,;]\s*(-?\d+(?:\.\d+)?)\s*[\[\)]\s*$")


def _arx_intervals(rows: Sequence[Sequence[str]]) -> tuple[float, float, Any] | None:
    """A fixed interval hierarchy from ARX's half-open labels (``[15, 20[``), if they nest.

    Every level between the leaf and ``*`` must be a half-open interval containing the row's
    leaf, and each label must have one parent. A node is narrowed to the span of its
    children (ARX's top levels often reach past the values, e.g. ``[10, 20[`` over the single
    child ``[15, 20[``; both come from the hierarchy, not the data); a node left with one
    child of the same span is merged into it. Returns ``(lo, hi, {"lo..hi": ...})`` when
    every node's children tile it exactly, else None (the caller keeps bounds only).
    """
    parent: dict[tuple[float, float], tuple[float, float] | None] = {}
    for r in rows:
        leaf = _number(r[0])
        labels = [c for c in r[1:] if c not in ("*", ROOT)]
        if leaf is None or not labels:
            return None
        chain = []
        for label in labels:
            m = _HALF_OPEN.match(label)
            if not m:
                return None
            iv = (float(m.group(1)), float(m.group(2)))
            if chain and chain[-1] == iv:
                continue  # a level that does not generalize
            if not iv[0] <= leaf < iv[1]:
                return None
            chain.append(iv)
        for child, up in zip(chain, [*chain[1:], None], strict=True):
            if up is not None and not (up[0] <= child[0] and child[1] <= up[1]):
                return None  # a child reaching outside its parent
            if parent.setdefault(child, up) != up:
                return None
    children: dict[tuple[float, float] | None, list[tuple[float, float]]] = {}
    for child, up in parent.items():
        children.setdefault(up, []).append(child)

    def span(node: tuple[float, float]) -> tuple[float, float, Any]:
        kids = sorted(children.get(node, []))
        if not kids:
            return node[0], node[1], None
        built = [span(k) for k in kids]
        if len(built) == 1:
            return built[0]  # one child: the node is its child, narrowed
        for a, b in zip(built, built[1:], strict=False):
            if a[1] != b[0]:
                raise ValueError("gap")
        return built[0][0], built[-1][1], {f"{_fmt(lo)}..{_fmt(hi)}": sub for lo, hi, sub in built}

    tops = sorted(children.get(None, []))
    try:
        built = [span(t) for t in tops]
        for a, b in zip(built, built[1:], strict=False):
            if a[1] != b[0]:
                return None
    except ValueError:
        return None
    if len(built) == 1:
        lo, hi, sub = built[0]
        if sub is None:
            return None  # a single interval: nothing to split
        return lo, hi, {f"{_fmt(lo)}..{_fmt(hi)}": sub}
    lo, hi = built[0][0], built[-1][1]
    return lo, hi, {f"{_fmt(lo)}..{_fmt(hi)}": {f"{_fmt(a)}..{_fmt(b)}": sub for a, b, sub in built}}


def _arx_named(path: Path) -> bool:
    """Does the file follow ARX's own ``<name>_hierarchy_<attribute>.csv`` naming?"""
    stem = path.stem
    return "_hierarchy_" in stem or stem.startswith("hierarchy_")


def arx_folder_files(folder: Path) -> list[Path]:
    """The hierarchy files of an ARX folder.

    ARX saves a project's data (``adult.csv``) beside its hierarchies
    (``adult_hierarchy_age.csv``). When any file follows that naming, only those are
    hierarchies: the others are skipped, and a warning names them (the data file can be
    passed as ``--data``). A folder of plain ``<attribute>.csv`` files is read whole.
    """
    found = sorted(q for q in folder.iterdir() if q.suffix.lower() == ".csv" and q.is_file())
    if not found:
        raise SchemaError(f"{folder}: no .csv hierarchy files in this folder")
    named = [q for q in found if _arx_named(q)]
    if not named:
        return found
    skipped = [q.name for q in found if not _arx_named(q)]
    if skipped:

        from dpkit.errors import DpkitWarning

        warn(DpkitWarning(
            f"{folder}: skipped {', '.join(skipped)} (not named <name>_hierarchy_<attribute>.csv, like the "
            f"other files: ARX's data file?); give the data file to draft the columns no hierarchy covers",
            param="data"))
    return named

#: the comment on a numeric column whose bounds came from an ARX hierarchy's values
ARX_BOUNDS_REVIEW = "REVIEW: bounds read from the ARX hierarchy's values (often generated from the data)"


def arx_bounds_to_review(columns: dict[str, Any]) -> list[str]:
    """The imported numeric columns whose bounds came from hierarchy values."""
    return [n for n, s in columns.items() if str(s.get("_comment", "")).startswith(ARX_BOUNDS_REVIEW)]


def import_arx(
    paths: Iterable[str | Path],
    *,
    delimiter: str = ";",
    encoding: str = DEFAULT_ENCODING,
    numeric: str = "intervals",
) -> dict[str, Any]:
    """ARX hierarchy files (or folders of them) -> schema columns as plain YAML data.

    ``numeric="bounds"`` turns a hierarchy of numbers into ``{type: numeric, bounds: ...}``;
    ``numeric="intervals"`` also keeps its half-open interval labels as a fixed interval
    hierarchy when they nest and tile (see :func:`_arx_intervals`), else bounds only;
    ``numeric="categorical"`` keeps it as a tree of the values as written.
    """
    if numeric not in ("bounds", "intervals", "categorical"):
        raise DpkitUsageError(f"numeric must be bounds, intervals or categorical, got {numeric!r}", param="numeric")
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(arx_folder_files(p))
        else:
            files.append(p)
    if not files:
        raise DpkitUsageError("give at least one ARX hierarchy file or folder")
    columns: dict[str, Any] = {}
    origin: dict[str, Path] = {}
    for f in files:
        name = arx_column_name(f)
        if name in columns:
            raise SchemaError(f"{f}: a second hierarchy for column {name!r} (first: {origin[name]})")
        rows = read_arx_rows(f, delimiter=delimiter, encoding=encoding)
        origin[name] = f
        bounds = _arx_numeric(rows) if numeric in ("bounds", "intervals") else None
        if bounds is not None:
            lo, hi, integer = bounds
            tree = _arx_intervals(rows) if numeric == "intervals" else None
            if tree is not None:
                lo, hi = tree[0], tree[1]
            spec: dict[str, Any] = {
                "type": "numeric",
                "bounds": [int(lo) if integer and lo.is_integer() else lo, int(hi) if integer and hi.is_integer() else hi],
                "integer": integer,
            }
            # ARX hierarchies of numbers are usually generated from the data's own values, so
            # bounds spanning them are not public knowledge: mark for review (the caller makes
            # the schema a draft and warns, as `taxonomy infer` does)
            spec["_comment"] = ARX_BOUNDS_REVIEW
            if tree is not None:
                spec["hierarchy"] = tree[2]
            elif numeric == "intervals":
                spec["_comment"] += "; its ARX intervals do not nest and tile: bounds only"
            columns[name] = spec
            continue
        tree = arx_tree(rows, str(f), name)
        columns[name] = {"type": "categorical", "hierarchy": {ROOT: tree.to_spec()}}
    return columns


# --------------------------------------------------------------------------- DiffGen braces


_HEADER = re.compile(r"^\s*([^\s{}:|]+)\s*:\s*(discrete|continuous)\b[^{}]*$", re.IGNORECASE)
_RANGE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)\s*$")


@dataclass
class _Brace:
    name: str
    line: int
    children: list[_Brace] = field(default_factory=list)


def _parse_braces(text: str, source: str, first_line: int) -> _Brace:
    """One ``{name {child} ...}`` tree; a name is the text before the next brace."""
    pos = 0
    line = first_line
    n = len(text)

    def skip() -> None:
        nonlocal pos, line
        while pos < n and text[pos].isspace():
            if text[pos] == "\n":
                line += 1
            pos += 1

    def node() -> _Brace:
        nonlocal pos, line
        skip()
        if pos >= n or text[pos] != "{":
            raise SchemaError(f"{source}:{line}: expected '{{' to open a node")
        pos += 1
        start_line = line
        start = pos
        while pos < n and text[pos] not in "{}":
            if text[pos] == "\n":
                line += 1
            pos += 1
        name = " ".join(text[start:pos].split())
        if not name:
            raise SchemaError(f"{source}:{start_line}: a node without a name ('{{}}' or '{{ {{')")
        out = _Brace(name, start_line)
        while True:
            skip()
            if pos >= n:
                raise SchemaError(f"{source}:{start_line}: '{{{name}' is never closed (missing '}}')")
            if text[pos] == "}":
                pos += 1
                return out
            out.children.append(node())

    tree = node()
    skip()
    if pos < n:
        raise SchemaError(f"{source}:{line}: unexpected text {text[pos:pos + 20].strip()!r} after the tree (an extra '}}'?)")
    return tree


def _unique_names(tree: _Brace, source: str, column: str) -> None:
    """Node names must be unique in a tree (a leaf under two parents is ambiguous)."""
    seen: dict[str, int] = {}
    stack = [tree]
    while stack:
        node = stack.pop(0)
        if node.name in seen:
            raise SchemaError(
                f"{source}:{node.line}: attribute {column!r}: {node.name!r} appears twice in the "
                f"tree (first on line {seen[node.name]}); every node needs a unique name"
            )
        seen[node.name] = node.line
        stack.extend(node.children)


def _brace_to_spec(tree: _Brace) -> Any:
    if not tree.children:
        return None
    return {c.name: _brace_to_spec(c) for c in tree.children}


def _brace_intervals(tree: _Brace, source: str, column: str) -> Any:
    """Interval children ``{lo-hi ...}`` -> the ``"lo..hi"`` mapping of docs/formats.md."""
    out: dict[str, Any] = {}
    for c in tree.children:
        m = _RANGE.match(c.name)
        if not m:
            raise SchemaError(f"{source}:{c.line}: column {column!r}: {c.name!r} is not an interval lo-hi")
        key = f"{_fmt(float(m.group(1)))}..{_fmt(float(m.group(2)))}"
        out[key] = _brace_intervals(c, source, column) if c.children else None
    return out


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def import_diffgen(text: str, source: str = "<diffgen>") -> dict[str, Any]:
    """DiffGen / Fung et al. brace-format taxonomies -> schema columns as plain YAML data.

    Text before the first ``name:discrete|continuous`` header (a citation, say) is skipped.
    A continuous attribute ``{lo-hi {ignored}}`` becomes a numeric column with those bounds,
    ``integer: true`` when both are written as integers.
    """
    lines = text.splitlines()
    blocks: list[tuple[str, str, int, list[str]]] = []
    for i, raw in enumerate(lines, start=1):
        m = _HEADER.match(raw)
        if m and not (blocks and blocks[-1][3] and _depth("\n".join(blocks[-1][3])) > 0):
            blocks.append((m.group(1), m.group(2).lower(), i, []))
        elif blocks:
            blocks[-1][3].append(raw)
    if not blocks:
        raise SchemaError(f"{source}: no 'name:discrete' or 'name:continuous' header found")
    columns: dict[str, Any] = {}
    for name, kind, line, body in blocks:
        if name in columns:
            raise SchemaError(f"{source}:{line}: attribute {name!r} is declared twice")
        body_text = "\n".join(body)
        if not body_text.strip():
            raise SchemaError(f"{source}:{line}: attribute {name!r} has no '{{...}}' tree")
        tree = _parse_braces(body_text, source, line + 1)
        if kind == "discrete":
            _unique_names(tree, source, name)
            columns[name] = {"type": "categorical", "hierarchy": {tree.name: _brace_to_spec(tree)}}
            continue
        m = _RANGE.match(tree.name)
        if not m:
            raise SchemaError(
                f"{source}:{tree.line}: continuous attribute {name!r} needs a root 'lo-hi', got {tree.name!r}"
            )
        lo_s, hi_s = m.group(1), m.group(2)
        lo, hi = float(lo_s), float(hi_s)
        integer = "." not in lo_s and "." not in hi_s
        spec: dict[str, Any] = {
            "type": "numeric",
            "bounds": [int(lo) if integer else lo, int(hi) if integer else hi],
            "integer": integer,
        }
        kids = [c for c in tree.children if c.name.lower() != "ignored"]
        if kids:
            spec["hierarchy"] = {f"{_fmt(lo)}..{_fmt(hi)}": _brace_intervals(_Brace(tree.name, tree.line, kids), source, name)}
        columns[name] = spec
    return columns


def _depth(text: str) -> int:
    return text.count("{") - text.count("}")


# --------------------------------------------------------------------------- assembling


def guess_target(columns: dict[str, Any], rename: dict[str, str] | None = None) -> str | None:
    """The class column by convention: a categorical column named ``classes`` or ``class``
    (DiffGen's files), under its new name if renamed."""
    for guess in ("classes", "class"):
        if guess in columns and columns[guess].get("type") == "categorical":
            return (rename or {}).get(guess, guess)
    return None


@dataclass
class Drafted:
    """Columns of a data file that no imported hierarchy covers, drafted from the data."""

    columns: dict[str, Any]  # drafted specs (NOT private: read from the data)
    order: list[str]  # the data's column order
    missing: str | None  # the missing token found in the data, if any
    absent: list[str]  # imported columns (after renaming) that the data does not have


def draft_uncovered(
    columns: dict[str, Any],
    df: pd.DataFrame,
    *,
    rename: dict[str, str] | None = None,
    target: str | None = None,
    source: str = "<data>",
) -> Drafted:
    """Draft (:func:`dpkit.schema.draft.draft_from_data`, with its warning) the columns of ``df``
    that ``columns`` does not cover, so that an import can describe a whole data file."""
    from dpkit.schema.draft import detect_missing, draft_from_data

    rename = rename or {}
    imported = {rename.get(n, n) for n in columns}
    rest = [c for c in df.columns if c not in imported]
    drafted: dict[str, Any] = {}
    if rest:
        drafted = draft_from_data(df[rest], target=target if target in rest else None, source=source)["columns"]
    return Drafted(
        columns=drafted,
        order=list(df.columns),
        missing=detect_missing(df),
        absent=sorted(imported - set(df.columns)),
    )


def build_schema(
    columns: dict[str, Any],
    *,
    target: str | None = None,
    rename: dict[str, str] | None = None,
    ignore: Sequence[str] = (),
    extra: dict[str, Any] | None = None,
    missing: str | None = None,
    missing_policy: str | None = None,
    source: str | None = None,
    order: Sequence[str] | None = None,
) -> tuple[dict[str, Any], Schema]:
    """Assemble imported columns into schema data and validate it.

    ``rename`` maps imported names to the data's header names (DiffGen's Adult file spells
    ``martial-status``); ``ignore`` declares columns ``type: ignore``; ``extra`` adds columns
    typed elsewhere (e.g. drafted from data); ``order`` lists column names to put first, in
    that order (e.g. the data's header). Returns ``(data, schema)``.
    """
    rename = dict(rename or {})
    for old in rename:
        if old not in columns:
            raise DpkitUsageError(f"rename {old}=...: no imported column {old!r} (have: {', '.join(columns)})",
                                  param="rename")
    cols: dict[str, Any] = {}
    for name, spec in columns.items():
        new = rename.get(name, name)
        if new in cols:
            raise DpkitUsageError(f"two columns would be named {new!r}; check the renames", param="rename")
        cols[new] = spec
    for name, spec in (extra or {}).items():
        cols.setdefault(name, spec)
    if order is not None:
        cols = {n: cols[n] for n in order if n in cols} | {n: v for n, v in cols.items() if n not in order}
    for name in ignore:
        if name not in cols:
            raise DpkitUsageError(f"ignore {name}: no such column (have: {', '.join(cols)})", param="ignore")
        cols[name] = {"type": "ignore"}
    data: dict[str, Any] = {}
    if source:
        data["source"] = source
    if target is not None:
        if target not in cols:
            raise DpkitUsageError(f"target {target!r} is not a column (have: {', '.join(cols)})", param="target")
        if cols[target].get("type") != "categorical":
            raise DpkitUsageError(f"target {target!r} must be categorical, but it was imported as "
                                  f"{cols[target].get('type')}", param="target")
        data["target"] = target
    if missing is not None:
        data["missing"] = missing
        data["missing_policy"] = missing_policy or "drop"
    data["columns"] = cols
    text = dump_schema(data)
    schema = parse_schema(text, "<imported schema>")
    return data, schema


# --------------------------------------------------------------------------- writing YAML


def _scalar(value: Any) -> str:
    """One YAML scalar, quoted only when YAML would misread it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    text = str(value)
    # allow_unicode: "Genève", not "Gen\xE8ve" (the file is written as UTF-8)
    dumped = yaml.safe_dump(text, default_flow_style=True, width=10_000, allow_unicode=True).strip()
    if dumped.endswith("\n..."):
        dumped = dumped[: -len("\n...")]
    if dumped.endswith("..."):
        dumped = dumped[:-3].rstrip()
    # flow context: commas, brackets and braces must be quoted too
    if dumped == text and any(ch in text for ch in ",[]{}#&*!|>'\"%@`"):
        dumped = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return dumped


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _tree_lines(spec: Any, indent: int, *, leaf_lists: bool = True) -> list[str]:
    """A hierarchy mapping in block style; a node whose children are all leaves is one flow
    line: a list for a taxonomy, a ``{"lo..hi": null, ...}`` mapping for intervals."""
    pad = " " * indent
    out = []
    for name, sub in spec.items():
        if sub is None:
            out.append(f"{pad}{_scalar(name)}: null")
        elif isinstance(sub, list):  # schema_to_dict writes a node of leaves as a list
            out.append(f"{pad}{_scalar(name)}: [{', '.join(_scalar(k) for k in sub)}]")
        elif all(v is None for v in sub.values()):
            if leaf_lists:
                out.append(f"{pad}{_scalar(name)}: [{', '.join(_scalar(k) for k in sub)}]")
            else:
                out.append(f"{pad}{_scalar(name)}: {{{', '.join(f'{_scalar(k)}: null' for k in sub)}}}")
        else:
            out.append(f"{pad}{_scalar(name)}:")
            out.extend(_tree_lines(sub, indent + 2, leaf_lists=leaf_lists))
    return out


def dump_schema(data: dict[str, Any], header: Sequence[str] = ()) -> str:
    """Schema data -> YAML text in the house style (one line per simple column).

    ``header`` lines are written first as ``#`` comments.
    """
    out = [f"# {h}" if h else "#" for h in header]
    if data.get("draft"):
        out.append("draft: true   # read from the data: private commands refuse it until reviewed")
    for key in ("name", "description", "source", "target", "missing", "missing_policy"):
        if key in data:
            out.append(f"{key}: {_flow(data[key])}")  # a list of missing tokens too
    out.append("columns:")
    width = max((len(_scalar(n)) for n in data["columns"]), default=0) + 1
    for name, spec in data["columns"].items():
        label = f"{_scalar(name)}:"
        comment = spec.get("_comment")
        spec = {k: v for k, v in spec.items() if k != "_comment"}
        tail = f"   # {comment}" if comment else ""
        if "hierarchy" in spec and spec.get("type") == "categorical":
            out.append(f"  {label}{tail}")
            out.append("    type: categorical")
            out.append("    hierarchy:")
            out.extend(_tree_lines(spec["hierarchy"], 6))
        elif "hierarchy" in spec:
            out.append(f"  {label}{tail}")
            for k, v in spec.items():
                if k != "hierarchy":
                    out.append(f"    {k}: {_flow(v)}")
            out.append("    hierarchy:")
            out.extend(_tree_lines(spec["hierarchy"], 6, leaf_lists=False))
        else:
            out.append(f"  {label.ljust(width)} {_flow(spec)}{tail}")
    return "\n".join(out) + "\n"


def schema_summary(schema: Schema) -> str:
    """``15 columns (9 categorical, 5 numeric, 1 ignored), target income``."""
    kinds = ["date" if getattr(c, "time", None) is not None else c.kind for c in schema.columns.values()]
    parts = [f"{kinds.count('categorical')} categorical", f"{kinds.count('numeric')} numeric"]
    if kinds.count("date"):
        parts.append(f"{kinds.count('date')} date")
    if kinds.count("ignore"):
        parts.append(f"{kinds.count('ignore')} ignored")
    text = f"{len(kinds)} column{'s' if len(kinds) != 1 else ''} ({', '.join(parts)})"
    if schema.target:
        text += f", target {schema.target}"
    return text


def same_tree(a: TaxonomyNode, b: TaxonomyNode, *, root_names: bool = False) -> bool:
    """Do two taxonomies have the same shape and node names (children in any order)?"""
    if root_names and a.name != b.name:
        return False

    def canon(n: TaxonomyNode) -> Any:
        return (n.name, tuple(sorted((canon(c) for c in n.children), key=repr)))

    ka = tuple(sorted((canon(c) for c in a.children), key=repr))
    kb = tuple(sorted((canon(c) for c in b.children), key=repr))
    return ka == kb


__all__ = [
    "CategoricalColumn",
    "IgnoredColumn",
    "IntervalNode",
    "NumericColumn",
    "arx_column_name",
    "arx_tree",
    "build_schema",
    "dump_schema",
    "import_arx",
    "import_diffgen",
    "same_tree",
    "schema_summary",
]
