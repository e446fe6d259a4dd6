"""The learned schema as YAML, with a header that says what was learned and what was taken as public."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpkit.domain.discover import ColumnNote, Discovery
from dpkit.domain.metadata import ColumnMeta, Metadata
from dpkit.schema.parse import IntervalNode, NumericColumn, Schema, schema_to_dict


def number(x: float) -> str:
    """A bound or split point as written: whole numbers without a point, else the shortest repr
    (``:g`` would round 1175231 to 1.17523e+06 and break the hierarchy's tiling)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**63 else repr(float(x))


def _intervals(node: IntervalNode) -> Any:
    if not node.children:
        return None
    return {f"{number(c.lo)}..{number(c.hi)}": _intervals(c) for c in node.children}


def schema_data(schema: Schema, notes: Sequence[ColumnNote], metas: Sequence[ColumnMeta] = ()) -> dict[str, Any]:
    """:func:`~dpkit.schema.parse.schema_to_dict` with exact interval keys, an explicit
    ``missing_policy`` and a ``_comment`` per column (written as ``# …`` by dump_schema): how
    its type was had (declared or learned under DP) and how its domain was learned."""
    data = schema_to_dict(schema)
    for name, col in schema.columns.items():
        if isinstance(col, NumericColumn) and col.hierarchy is not None:
            spec = data["columns"][name]
            spec["hierarchy"] = {f"{number(col.lo)}..{number(col.hi)}": _intervals(col.hierarchy)}
    if "missing_policy" not in data:
        data = {**{k: v for k, v in data.items() if k != "columns"}, "missing_policy": schema.missing_policy,
                "columns": data["columns"]}
    by_name = {n.name: n for n in notes}
    by_meta = {m.name: m for m in metas}
    for name, spec in data["columns"].items():
        note = by_name.get(name)
        parts = []
        meta = by_meta.get(name)
        if meta is not None and meta.name != schema.target:
            parts.append(_provenance(meta))
        if note is not None and note.learned:
            parts.append(("learned under DP: " if note.kind not in ("ignore", "public") else "") + note.learned)
        if parts:
            spec["_comment"] = "; ".join(p for p in parts if p)
    return data


def _provenance(m: ColumnMeta) -> str:
    """How a column's metadata was had: "type declared", "type learned under DP (ε 0.003)"."""
    what = {"type": "type", "integer": "whole-number flag", "missing tokens": "missing tokens"}
    declared = [what.get(p, p) for p in m.declared if p in what]
    learned = [what.get(p, p) for p in m.learned]
    out = []
    if declared:
        out.append(", ".join(declared) + " declared")
    if learned:
        out.append(", ".join(learned) + f" learned under DP (epsilon {m.epsilon:.3g})")
    if m.why and not m.given:
        out.append(f"ignored: {m.why}")
    if m.missing_structural:  # not learned: a public rule gave it (dpkit.domain.metadata.structural_missing)
        out.append("missing: structural (a missing bucket whatever the data: not established under DP)")
    return ", ".join(out)


def metadata_report(meta: Metadata, discovery: Discovery | None = None) -> dict[str, Any]:
    """The report's ``parameters.metadata``: per column its type, what was declared and what was
    learned (with ε and the stability threshold), and the missing tokens (public outcomes).
    ``missing_tokens`` are the metadata step's; a column whose partition selection released a
    public token (``discovery``: :attr:`Discovery.released_tokens`) lists it under
    ``missing_tokens_released``, and ``schema_missing_tokens`` is the schema's whole list."""
    released = discovery.released_tokens if discovery is not None else {}
    columns: dict[str, Any] = {}
    for m in meta.metas:
        entry: dict[str, Any] = {"type": m.kind + (" integer" if m.integer and m.kind == "numeric" else ""),
                                 "declared": list(m.declared),
                                 "learned": list(m.learned)}
        if m.learned:
            entry.update(epsilon=m.epsilon, threshold=m.threshold)
        if m.missing_structural:  # the missing child by a public rule, not learned
            entry["structural"] = ["missing"]
        if m.why:
            entry["why"] = m.why
        if m.name in released:
            entry["missing_tokens_released"] = list(released[m.name])
        columns[m.name] = entry
    out = {"columns": columns, "missing_tokens": list(meta.tokens),
           "missing_tokens_declared": meta.tokens_declared, "epsilon": meta.epsilon}
    if released:
        out["schema_missing_tokens"] = list(discovery.schema.missing_tokens)  # type: ignore[union-attr]
    return out


def header(*, source: str, epsilon: float, delta: float, metadata: Metadata, target: str | None,
           discovery: Discovery, version: str, seeded_plain: bool = False) -> list[str]:
    """The provenance comment: the spend, what was declared, what was learned under DP."""
    metas = metadata.metas
    cats = [n.threshold for n in discovery.notes if n.threshold is not None]
    typed = [m.name for m in metas if "type" in m.learned]
    flagged = [m.name for m in metas if "integer" in m.learned]
    token_learners = [m.name for m in metas if "missing tokens" in m.learned]
    taus = sorted({m.threshold for m in metas if m.threshold is not None})
    lines = [
        f"Schema learned under differential privacy by dpkit {version} from {source}.",
        f"Spent: epsilon={epsilon:.6g}, delta={delta:.6g} ((epsilon, delta)-DP, add/remove one record);"
        " the report lists every step.",
    ]
    if seeded_plain:
        lines.append("NOT PRIVATE: seeded with a plain integer (reproducible, not private): the report's model is none.")
    lines += ["LEARNED UNDER DP (a function of noisy statistics only):"]
    if typed or flagged or token_learners:
        lines += [
            f"  - the metadata (epsilon {metadata.epsilon:.3g} in all"
            + (f", delta {metadata.delta:.3g}, discrete Gaussian" if metadata.delta else ", discrete Laplace")
            + " noise on public cells, "
            f"stability threshold {', '.join(map(str, taus))} records):",
        ]
        if typed:
            lines.append("    the types of " + _wrap(typed) + ";")
        if flagged:
            lines.append("    the whole-number flags of " + _wrap(flagged) + ";")
        if token_learners:
            found = ", ".join(repr(t) for t in metadata.tokens) or "none"
            lines.append(f"    the missing tokens (of a public list; found: {found});")
        lines.append("    a value that does not fit its column's type is read as missing, never refused;")
    lines += [
        f"  - the category lists: partition selection (noisy counts, {discovery.noise}, and a threshold"
        + (f" of {min(cats)}-{max(cats)} records" if cats and min(cats) != max(cats) else
           f" of {cats[0]} records" if cats else "") + "):",
        "    a value held by fewer records is never listed; every unlisted value is read as the",
        "    column's '(other)' leaf (the target's as missing, so its record is dropped);",
        *([f"    a released value of the public list of missing tokens is its column's missing value: {_released(discovery)};"]
          if discovery.released_tokens else []),
        *(["    the values of public vocabularies (yes/no, 0/1, true/false, male/female, months, weekdays, and",
           "    any --vocabulary file) are public cells: noised whether held or not, a whole vocabulary listed",
           "    when its noisy counts clear a pure-epsilon threshold (no delta);"]
          if discovery.vocabulary else []),
        "  - the numeric bounds (values outside are clipped on load) and any interval hierarchy:",
        "    DP quantiles (exponential mechanism) on a public grid of round numbers.",
        *(["  - the date bounds: the same mechanism on the public grid of year starts (1800-2200);",
           "    bounds at most 3 years apart, with enough dates (a noisy count), are drawn again on the",
           "    month starts inside them; a value that is not an ISO date is read as missing",
           "    (unparsable: missing)."]
          if any(n.kind in ("date", "timestamp") for n in discovery.notes) else []),
        "DECLARED (public, as given; NOT protected):",
        "  - the column names, the target" + (f" ({target})" if target else "") + ";",
    ]
    declared_types = [m.name for m in metas if "type" in m.declared and m.name != target and m.kind != "ignore"]
    if declared_types:
        lines.append("  - the types of " + _wrap(declared_types) + ";")
    ignored = [m.name for m in metas if "type" in m.declared and m.kind == "ignore"]
    if ignored:
        lines.append("  - ignored: " + _wrap(ignored) + ";")
    named = [m.name for m in metas if m.why == "named like an identifier"]
    if named:
        lines.append("  - ignored for their names (identifier-like): " + _wrap(named) + ";")
    if metadata.tokens_declared:
        lines.append("  - the missing token(s) " + (", ".join(repr(t) for t in metadata.tokens) or "(none)") + ";")
    given_values = [m.name for m in metas if m.values is not None]
    given_bounds = [m.name for m in metas if m.bounds is not None]
    if given_values:
        lines.append("  - the value lists of " + _wrap(given_values) + ";")
    if given_bounds:
        lines.append("  - the bounds of " + _wrap(given_bounds) + ";")
    lines[-1] = lines[-1][:-1] + "."
    if discovery.schema.missing_policy == "keep" and discovery.schema.missing_tokens:
        lines.append("MISSING VALUES ARE KEPT (missing_policy: keep): a missing value is its column's '(missing)' leaf,")
        lines.append("  or a numeric column's missing bucket: public cells, noised like any other (a missing target drops its row).")
    structural = [m.name for m in metas if m.missing_structural]
    if structural:
        lines.append("STRUCTURAL (a public rule, not learned): a missing bucket (a forest's missing child) on the numeric")
        lines.append("  and date columns whose missing values were not established under DP (missing: structural): "
                     + _wrap(structural) + ".")
    return lines


def _released(discovery: Discovery) -> str:
    """"'' in region, '?' in a, b": the tokens partition selection released, by column."""
    by_token: dict[str, list[str]] = {}
    for name, tokens in discovery.released_tokens.items():
        for t in tokens:
            by_token.setdefault(t, []).append(name)
    return "; ".join(f"{t!r} in {', '.join(cols)}" for t, cols in by_token.items())


def _wrap(names: Sequence[str]) -> str:
    """Names joined, a line break every few so the comment stays readable."""
    chunks = [", ".join(names[i:i + 6]) for i in range(0, len(names), 6)]
    return ",\n#      ".join(chunks)


def render(discovery: Discovery, header_lines: Sequence[str], metas: Sequence[ColumnMeta] = ()) -> str:
    """YAML text in the house style (``dpkit.schema.importers.dump_schema``), checked to parse."""
    from dpkit.schema.importers import dump_schema
    from dpkit.schema.parse import parse_schema

    text = dump_schema(schema_data(discovery.schema, discovery.notes, metas), header_lines)
    parse_schema(text, "<learned schema>")  # what is written must load
    return text
