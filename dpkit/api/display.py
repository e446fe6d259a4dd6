"""How a result object shows itself in a notebook: a ``__repr__`` of a few lines and a
``_repr_html_`` card (docs/report.md).

The text and the card are built from what the object already holds — its report (the
accountant's spends), its release (the cut, the centroids, the model's public domains) — and
never read the private data again. Post-processing of the release: they cost nothing.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

#: a repr stays this short (a notebook cell's echo, not a dump of the report)
MAX_REPR = 1000
#: the rows a card shows, and the values of one column's cut before "…"
HEAD_ROWS = 5
MAX_VALUES = 8


def _g(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _names(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(map(str, names[:limit]))
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


def privacy_line(report: dict[str, Any] | None) -> str:
    """``ε=0.98 spent of 1, δ=1e-06 — epsilon-dp`` from a report's ``privacy`` block."""
    if not report:
        return "no training report"
    p = report.get("privacy", {})
    spent, budget = p.get("epsilon_spent"), p.get("epsilon_budget")
    line = f"ε={_g(spent)} spent of {_g(budget)}, δ={_g(p.get('delta', 0))}"
    return f"{line} — {p.get('guarantee') or p.get('model', '')}"


def text(title: str, lines: Iterable[str]) -> str:
    """``title`` and indented ``lines``, cut at :data:`MAX_REPR` characters."""
    out = "\n".join([title, *(f"  {line}" for line in lines)])
    return out if len(out) <= MAX_REPR else out[: MAX_REPR - 1] + "…"


def spends_by_step(report: dict[str, Any] | None) -> list[tuple[str, str, int, float]]:
    """(step, mechanism, how many, ε in all) of a report's spends, steps that differ only by a
    number (``select level 1``, ``select level 2``…) taken together, in the order first spent."""
    groups: dict[tuple[str, str], list[float]] = {}
    for s in (report or {}).get("spends", []):
        step = re.sub(r"\s*\d+(\.\d+)?", " #", str(s.get("step", ""))).strip()
        groups.setdefault((step, str(s.get("mechanism", ""))), []).append(float(s.get("epsilon", 0.0)))
    return [(step, mech, len(eps), sum(eps)) for (step, mech), eps in groups.items()]


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    th = "".join(f"<th style='text-align:left'>{html.escape(str(h))}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{html.escape(_g(v))}</td>" for v in r) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def card(title: str, facts: dict[str, Any], report: dict[str, Any] | None = None,
         domains: dict[str, Sequence[Any]] | None = None, head: Any = None, domains_title: str = "Cut") -> str:
    """An HTML card: the facts, the privacy spent by step, each column's cut (or domain), the
    first rows of ``head`` (a DataFrame)."""
    parts = [f"<div class='dpkit-card'><strong>{html.escape(title)}</strong>",
             _table(["", ""], [(k, v) for k, v in facts.items()])]
    steps = spends_by_step(report)
    if steps:
        parts.append("<details open><summary>Privacy spent by step</summary>"
                     + _table(["step", "mechanism", "times", "ε"], steps) + "</details>")
    if domains:
        rows = [(c, ", ".join(map(str, list(v)[:MAX_VALUES])) + (" …" if len(v) > MAX_VALUES else ""))
                for c, v in domains.items()]
        parts.append(f"<details><summary>{html.escape(domains_title)}</summary>"
                     + _table(["column", "values"], rows) + "</details>")
    if head is not None:
        parts.append(f"<details open><summary>First {min(HEAD_ROWS, len(head))} of {len(head):,} rows</summary>"
                     + head.head(HEAD_ROWS).to_html(index=False, border=0) + "</details>")
    return "".join(parts) + "</div>"


def cut_values(cut: dict[str, Any]) -> dict[str, list[str]]:
    """A report's cut as readable labels: ``[lo, hi)`` intervals, taxonomy nodes as they are."""
    out = {}
    for c, v in cut.items():
        out[c] = [f"[{_g(a)},{_g(b)})" if isinstance(a, int | float) else str(a)
                  for a, b in ((x if isinstance(x, list | tuple) and len(x) == 2 else (x, None)) for x in v)]
    return out


def typed(df: Any, labels: dict[str, Sequence[str]], ordered: Iterable[str] = ()) -> Any:
    """``df``'s label columns as pandas types: a column of ``ordered`` (a predictor) whose every
    label is a number becomes numbers (integers when they all are), any other of them an ordered
    categorical with its labels in the release's order (intervals low to high, taxonomy nodes as
    cut); the other label columns (the target's classes) an unordered categorical."""
    import pandas as pd

    ordered = set(ordered)
    out = {}
    for c in df.columns:
        cats = labels.get(c)
        if cats is None:
            out[c] = df[c]
            continue
        nums = pd.to_numeric(pd.Series(list(cats), dtype=object), errors="coerce")
        if c in ordered and len(cats) and nums.notna().all():
            values = pd.to_numeric(df[c])
            out[c] = values.astype("int64") if (nums % 1 == 0).all() else values.astype(float)
        else:
            out[c] = pd.Categorical(df[c], categories=list(dict.fromkeys(cats)), ordered=c in ordered)
    return pd.DataFrame(out, index=df.index)
