"""The learned schema as YAML, with a header that says what was learned and what was taken as public."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpkit.data.schema import IntervalNode, NumericColumn, Schema, schema_to_dict
from dpkit.domain.discover import ColumnNote, Discovery
from dpkit.domain.metadata import ColumnMeta


def number(x: float) -> str:
    """A bound or split point as written: whole numbers without a point, else the shortest repr
    (``:g`` would round 1175231 to 1.17523e+06 and break the hierarchy's tiling)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**63 else repr(float(x))


def _intervals(node: IntervalNode) -> Any:
    if not node.children:
        return None
    return {f"{number(c.lo)}..{number(c.hi)}": _intervals(c) for c in node.children}


def schema_data(schema: Schema, notes: Sequence[ColumnNote]) -> dict[str, Any]:
    """:func:`~dpkit.data.schema.schema_to_dict` with exact interval keys, an explicit
    ``missing_policy`` and a ``_comment`` per column (written as ``# …`` by dump_schema)."""
    data = schema_to_dict(schema)
    for name, col in schema.columns.items():
        if isinstance(col, NumericColumn) and col.hierarchy is not None:
            spec = data["columns"][name]
            spec["hierarchy"] = {f"{number(col.lo)}..{number(col.hi)}": _intervals(col.hierarchy)}
    if "missing_policy" not in data:
        data = {**{k: v for k, v in data.items() if k != "columns"}, "missing_policy": schema.missing_policy,
                "columns": data["columns"]}
    by_name = {n.name: n for n in notes}
    for name, spec in data["columns"].items():
        note = by_name.get(name)
        if note is not None and note.learned:
            spec["_comment"] = ("learned under DP: " if note.kind not in ("ignore", "public") else "") + note.learned
    return data


def header(*, source: str, epsilon: float, delta: float, metas: Sequence[ColumnMeta], tokens: Sequence[str],
           tokens_guessed: bool, target: str | None, discovery: Discovery, version: str,
           seeded_plain: bool = False) -> list[str]:
    """The provenance comment: the spend, the parts learned under DP, the parts taken as public."""
    guessed = [m.name for m in metas if not m.given and m.name != target]
    cats = [n.threshold for n in discovery.notes if n.threshold is not None]
    lines = [
        f"Schema learned under differential privacy by `dpkit taxonomy infer` (dpkit {version}) from {source}.",
        f"Spent: epsilon={epsilon:.6g}, delta={delta:.6g} ((epsilon, delta)-DP, add/remove one record);"
        " the report lists every step.",
    ]
    if seeded_plain:
        lines.append("NOT PRIVATE: seeded with a plain integer (reproducible, not private): the report's model is none.")
    lines += [
        "LEARNED UNDER DP (a function of noisy statistics only):",
        f"  - the category lists: partition selection (noisy counts, {discovery.noise}, and a threshold"
        + (f" of {min(cats)}-{max(cats)} records" if cats and min(cats) != max(cats) else
           f" of {cats[0]} records" if cats else "") + "):",
        "    a value held by fewer records is never listed; every unlisted value is read as the",
        "    column's '(other)' leaf (the target's as missing, so its record is dropped);",
        "  - the numeric bounds (values outside are clipped on load) and any interval hierarchy:",
        "    DP quantiles (exponential mechanism) on a public grid of round numbers.",
        "TAKEN AS PUBLIC (metadata you confirm; NOT protected):",
        "  - the column names, the target"
        + (f" ({target})" if target else "") + ", and the missing token(s) "
        + (", ".join(repr(t) for t in tokens) if tokens else "(none)")
        + (" (detected in the data)" if tokens_guessed else "") + ";",
        "  - the column types (categorical / numeric / integer / ignore)"
        + (": " + _wrap(guessed) + " guessed from the data — confirm them" if guessed else ", as given") + ".",
    ]
    if discovery.schema.missing_policy == "keep" and tokens:
        lines.append("MISSING VALUES ARE KEPT (missing_policy: keep): a missing value is its column's '(missing)' leaf,")
        lines.append("  or a numeric column's missing bucket: public cells, noised like any other (a missing target drops its row).")
    given_values = [m.name for m in metas if m.values is not None]
    given_bounds = [m.name for m in metas if m.bounds is not None]
    if given_values:
        lines.append("  - the value lists of " + _wrap(given_values) + " (given).")
    if given_bounds:
        lines.append("  - the bounds of " + _wrap(given_bounds) + " (given).")
    return lines


def _wrap(names: Sequence[str]) -> str:
    """Names joined, a line break every few so the comment stays readable."""
    chunks = [", ".join(names[i:i + 6]) for i in range(0, len(names), 6)]
    return ",\n#      ".join(chunks)


def render(discovery: Discovery, header_lines: Sequence[str]) -> str:
    """YAML text in the house style (``dpkit.data.importers.dump_schema``), checked to parse."""
    from dpkit.data.importers import dump_schema
    from dpkit.data.schema import parse_schema

    text = dump_schema(schema_data(discovery.schema, discovery.notes), header_lines)
    parse_schema(text, "<learned schema>")  # what is written must load
    return text
