"""The release card: one self-contained HTML page built from a run's JSON report.

What a data steward reads before a release leaves the building: the guarantee in one sentence,
the ε (and δ) spent by step against the budget, the domain of every column (declared or
learned under DP), what was released, and — only when the owner evaluates it on test rows —
exact statistics of private data under a banner that says so.

Everything about privacy comes from the report, which the accountant built
(:mod:`dpkit.report`): the page adds no number of its own about the private data. ``domain``
(the public schema's columns) and ``evaluation`` (the owner's test metrics) are optional
inputs assembled by :mod:`dpkit.api.card`; this module reads no file and draws no random
number. Every string from the data goes through :func:`html.escape`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from typing import Any

from dpkit.card import palette as P
from dpkit.card import svg

#: the values of one column the domain table lists before "…"
MAX_VALUES = 12
#: the steps' names as the spend chart groups them: (pattern, group)
STEP_GROUPS = (
    (r"^domain: (types|metadata)", "domain: metadata"),
    (r"^domain: categories", "domain: categories"),
    (r"^domain: .*bounds", "domain: bounds"),
    (r"^domain: ", "domain: other"),
    (r"^select level", "selection"),
    (r"^noisy N$", "record count"),
    (r"^noisy counts", "counts"),
    (r"^noisy class counts", "class counts"),
    (r"^trees? ", "trees"),
    (r"^quadtree level", "quadtree levels"),
)

CSS = f"""
.dpkit-card{{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:{P.TEXT};background:{P.BACKGROUND};max-width:980px;margin:0 auto;padding:16px;box-sizing:border-box}}
.dpkit-card h1{{font-size:1.5em;margin:.2em 0 .4em}}
.dpkit-card h2{{font-size:1.2em;margin:1.4em 0 .5em;border-bottom:1px solid {P.GRID};padding-bottom:.2em}}
.dpkit-card h3{{font-size:1.02em;margin:1em 0 .3em}}
.dpkit-card .guarantee{{background:{P.PANEL};border-left:4px solid {P.ACCENT};padding:.6em .8em;margin:.6em 0}}
.dpkit-card .muted{{color:{P.MUTED}}}
.dpkit-card .scroll{{overflow-x:auto;max-width:100%}}
.dpkit-card table{{border-collapse:collapse;margin:.4em 0;font-size:.92em}}
.dpkit-card th,.dpkit-card td{{text-align:left;padding:.25em .6em;border-bottom:1px solid {P.GRID};
vertical-align:top}}
.dpkit-card th{{background:{P.PANEL}}}
.dpkit-card td.num{{text-align:right;font-variant-numeric:tabular-nums}}
.dpkit-card .badge{{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.85em;font-weight:600}}
.dpkit-card .declared{{color:{P.DECLARED_FG};background:{P.DECLARED_BG}}}
.dpkit-card .learned{{color:{P.LEARNED_FG};background:{P.LEARNED_BG}}}
.dpkit-card .owner{{color:{P.OWNER_FG};background:{P.OWNER_BG};padding:.6em .8em;font-weight:600;
border:2px solid {P.OWNER_FG}}}
.dpkit-card .warning{{color:{P.WARN_FG};background:{P.WARN_BG};padding:.4em .7em}}
.dpkit-card svg.chart{{max-width:100%;height:auto;display:block;margin:.4em 0}}
.dpkit-card dl{{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em;margin:.4em 0}}
.dpkit-card dt{{font-weight:600}} .dpkit-card dd{{margin:0}}
.dpkit-card .grid{{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:.5em 1.5em}}
.dpkit-card figure{{margin:0}} .dpkit-card figcaption{{font-weight:600;margin-top:.6em}}
.dpkit-card footer{{margin-top:2em;font-size:.85em;color:{P.MUTED}}}
@media (max-width:600px){{.dpkit-card{{font-size:14px;padding:8px}}.dpkit-card dl{{grid-template-columns:1fr}}
.dpkit-card dd{{margin-bottom:.3em}}
.dpkit-card table.wide,.dpkit-card table.wide tbody,.dpkit-card table.wide tr,.dpkit-card table.wide td,
.dpkit-card table.wide tbody th{{display:block;width:auto}}
.dpkit-card table.wide thead{{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}}
.dpkit-card table.wide tr{{border-bottom:2px solid {P.GRID};padding:.3em 0}}
.dpkit-card table.wide td,.dpkit-card table.wide tbody th{{border:0;padding:.1em .3em;text-align:left}}
.dpkit-card table.wide td::before{{content:attr(data-label) ": ";font-weight:600;color:{P.MUTED}}}}}
"""


def e(value: Any) -> str:
    """Text from a report or the data, escaped for HTML (quotes too: it may land in an attribute)."""
    return html.escape(str(value), quote=True)


def g(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return svg.fmt(value)
    return str(value)


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], *, caption: str = "", row_header: bool = True,
          raw: Sequence[int] = ()) -> str:
    """A table with ``<th scope="col">`` heads and (``row_header``) each row's first cell a
    ``<th scope="row">``; cells are escaped except the columns in ``raw`` (already HTML). A table
    of five columns or more is ``wide``: on a phone each row stacks into a block whose cells are
    labelled with their column's head (``data-label``)."""
    cap = f"<caption class='muted'>{e(caption)}</caption>" if caption else ""
    th = "".join(f'<th scope="col">{e(h)}</th>' for h in head)
    body = []
    for r in rows:
        cells = []
        for i, v in enumerate(r):
            text = v if i in raw else e(g(v))
            label = f" data-label='{e(head[i])}'" if i < len(head) else ""
            num = " class='num'" if isinstance(v, int | float) and not isinstance(v, bool) else ""
            cells.append(f'<th scope="row"{label}>{text}</th>' if i == 0 and row_header else f"<td{num}{label}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    wide = " class='wide'" if len(head) >= 5 else ""
    return (f"<div class='scroll'><table{wide}>{cap}<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody>"
            "</table></div>")


def badge(kind: str) -> str:
    """A badge whose word says what its colour shows."""
    return f"<span class='badge {e(kind)}'>{e(kind)}</span>"


def step_group(step: str) -> str:
    for pattern, group in STEP_GROUPS:
        if re.search(pattern, step):
            return group
    return re.sub(r"\s*\d+(\.\d+)?", " #", step).strip()


def spend_groups(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's spends by group (:data:`STEP_GROUPS`), in the order first spent: steps, the
    mechanisms, ε and δ in all."""
    groups: dict[str, dict[str, Any]] = {}
    for s in report.get("spends") or []:
        name = step_group(str(s.get("step", "")))
        grp = groups.setdefault(name, {"group": name, "steps": 0, "mechanisms": [], "epsilon": 0.0, "delta": 0.0})
        grp["steps"] += 1
        mech = re.sub(r"\s*\(.*", "", str(s.get("mechanism", "")))
        if mech and mech not in grp["mechanisms"]:
            grp["mechanisms"].append(mech)
        grp["epsilon"] += float(s.get("epsilon") or 0.0)
        grp["delta"] += float(s.get("delta") or 0.0)
    return list(groups.values())


def guarantee(report: dict[str, Any]) -> str:
    """The guarantee in one sentence, from the report's ``privacy`` block."""
    p = report.get("privacy") or {}
    model = p.get("model")
    neighbours = p.get("neighbours", "add/remove one record")
    if model == "k-anonymity":
        sup = p.get("suppressed_records")
        return (f"k-anonymity with k = {g(p.get('k'))}: every combination of the kept quasi-identifiers is shared by "
                f"at least {g(p.get('k'))} records" + (f" ({g(sup)} records suppressed)" if sup else "")
                + ". This is not differential privacy and spends no ε.")
    eps, budget = p.get("epsilon_spent"), p.get("epsilon_budget")
    if model == "epsilon-dp":
        return (f"ε-differential privacy with ε = {g(eps)} (budget {g(budget)}): for any two data sets that differ "
                f"by one record ({neighbours}), every output is at most e^{g(eps)} times as likely under one as "
                "under the other.")
    if model == "(epsilon, delta)-dp":
        return (f"(ε, δ)-differential privacy with ε = {g(eps)} and δ = {g(p.get('delta'))} (budget ε {g(budget)}"
                f", δ {g(p.get('delta_budget', p.get('delta')))}): for any two data sets that differ by one record "
                f"({neighbours}), every set of outputs is at most e^{g(eps)} times as likely under one as under the "
                "other, plus δ.")
    return (f"No privacy guarantee: {p.get('guarantee', 'the report states none')}. The accountant still spent "
            f"ε = {g(eps)} of {g(budget)}, as listed below.")


def _spend_section(report: dict[str, Any], ledger: dict[str, Any] | None) -> str:
    p = report.get("privacy") or {}
    out = ["<h2 id='spend'>Privacy spent by step</h2>"]
    groups = spend_groups(report)
    if p.get("model") == "k-anonymity":
        out.append("<p>k-anonymity spends no ε: nothing to account.</p>")
    elif groups:
        budget = float(p.get("epsilon_budget") or 0.0)
        out.append(svg.bars([(gr["group"], gr["epsilon"]) for gr in groups], title="ε spent by step against the budget",
                            limit=budget or None, limit_label="budget ε", share_of=budget or None))
        delta_budget = float(p.get("delta_budget") or 0.0)
        if delta_budget > 0 and any(gr["delta"] for gr in groups):
            out.append(svg.bars([(gr["group"], gr["delta"]) for gr in groups if gr["delta"]],
                                title="δ spent by step against the budget", limit=delta_budget,
                                limit_label="budget δ", share_of=delta_budget))
        rows = [(gr["group"], ", ".join(gr["mechanisms"]), gr["steps"], gr["epsilon"],
                 gr["delta"] if gr["delta"] else "—") for gr in groups]
        rows.append(("total", "", sum(gr["steps"] for gr in groups), float(p.get("epsilon_spent") or 0.0),
                     p.get("delta_spent", p.get("delta")) or "—"))
        out.append(table(["step", "mechanism", "steps", "ε", "δ"], rows))
        unspent = p.get("epsilon_unspent")
        out.append(f"<p class='muted'>Budget ε {g(p.get('epsilon_budget'))}, spent {g(p.get('epsilon_spent'))}, "
                   f"unspent {g(unspent)}" + (f"; δ budget {g(p.get('delta_budget'))}" if "delta_budget" in p else "")
                   + ". Every step is the accountant's record of one mechanism run.</p>")
    else:
        out.append("<p>The report lists no spends.</p>")
    if ledger:
        out.append("<h3>The ledger</h3>" + _ledger(ledger))
    return "".join(out)


def _ledger(ledger: dict[str, Any]) -> str:
    cap, spent = ledger.get("cap"), ledger.get("spent")
    items = [("data set", ledger.get("name")), ("cap ε", cap), ("spent ε (all runs)", spent),
             ("reserved ε", ledger.get("reserved")), ("remaining ε", ledger.get("remaining")),
             ("runs", ledger.get("runs"))]
    chart = ""
    if isinstance(cap, int | float) and isinstance(spent, int | float) and cap > 0:
        chart = svg.bars([("spent on this data set", float(spent))], title="ε spent on the data set against its cap",
                         limit=float(cap), limit_label="cap ε", share_of=float(cap))
    return chart + _dl((k, v) for k, v in items if v is not None)


def _dl(items: Iterable[tuple[str, Any]], raw: bool = False) -> str:
    return "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{v if raw else e(g(v))}</dd>" for k, v in items) + "</dl>"


def _values(values: Sequence[Any], limit: int = MAX_VALUES) -> str:
    shown = ", ".join(map(str, list(values)[:limit]))
    return shown + (f", … ({len(values)} in all)" if len(values) > limit else "")


def _interval(v: Any) -> str:
    if isinstance(v, list | tuple) and len(v) == 2:
        return f"[{g(v[0])}, {g(v[1])})"
    return str(v)


def _thresholds(report: dict[str, Any]) -> dict[str, float]:
    """Each column's partition-selection threshold, from its spend's mechanism text."""
    out = {}
    for s in report.get("spends") or []:
        m = re.match(r"domain: categories of (.+)$", str(s.get("step", "")))
        t = re.search(r"threshold ([0-9.]+)", str(s.get("mechanism", "")))
        if m and t:
            out[m.group(1)] = float(t.group(1))
    return out


def _learned_steps(report: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for s in report.get("spends") or []:
        step = str(s.get("step", ""))
        m = re.match(r"domain: categories of (.+)$", step) or re.match(r"domain: (.+) bounds$", step)
        if m:
            out.setdefault(m.group(1), []).append("categories" if "categories" in step else "bounds")
    return out


def domain_rows(report: dict[str, Any], domain: dict[str, dict[str, Any]] | None) -> list[list[Any]]:
    """One row per column: name (and role), declared/learned badge, kind, bounds, categories kept,
    those left out and why, missing values, clipping."""
    params = report.get("parameters") or {}
    rel = report.get("release") or {}
    meta = (params.get("metadata") or {}).get("columns") or {}
    target = params.get("target") or rel.get("target")
    cut = rel.get("cut") or {}
    thresholds, learned_steps = _thresholds(report), _learned_steps(report)
    counts = (rel.get("shape") or {}).get("noisy_class_counts") if isinstance(rel.get("shape"), dict) else None
    noisy_n = ((rel.get("depth") or {}).get("noisy_records") or rel.get("n_estimate")
               or (sum(c for c in counts if isinstance(c, int | float)) if isinstance(counts, list) else None))
    columns = list(rel.get("columns") or params.get("columns") or list(cut) or list(domain or {}))
    if report.get("command") == "cluster" and isinstance(params.get("bounds"), list):
        domain = domain or {}
        for c, b in zip(params.get("columns") or [], params["bounds"], strict=False):
            domain.setdefault(c, {"kind": "numeric", "bounds": b})
    rows = []
    for c in columns:
        d = (domain or {}).get(c, {})
        m = meta.get(c, {})
        learned = list(m.get("learned") or []) + learned_steps.get(c, [])
        bounds_learned = report.get("command") == "cluster" and str(params.get("bounds_source", "")).startswith("learned")
        if bounds_learned:
            learned.append("bounds")
        learned = list(dict.fromkeys(learned))
        source = "learned" if learned else "declared"
        kind = d.get("kind") or (m.get("type") or "").split(" ")[0] or (
            "numeric" if cut.get(c) and isinstance(cut[c][0], list) else "categorical" if c in cut or c == target else "")
        if kind == "ignore":
            rows.append([c, badge("declared"), "ignored", "—", "—", "not read", "—", "—"])
            continue
        bounds = d.get("bounds")
        if bounds is None and cut.get(c) and isinstance(cut[c][0], list):
            bounds = [cut[c][0][0], cut[c][-1][1]]
        bounds_text = _interval(bounds).replace(")", "]") if bounds is not None else "—"
        values = d.get("values")
        if kind == "categorical":
            kept = _values(values) if values else (_values(rel.get("classes") or []) if c == target
                                                   else _values(cut.get(c, [])) + " (the released cut)")
            if "categories" in learned:
                t = thresholds.get(c)
                share = f" (≈{t / noisy_n:.1%} of the noisy count)" if t and noisy_n else ""
                other = d.get("other") or "(other)"
                left = (f"values held by fewer than about {g(t)} records{share}: "
                        + ("their records are dropped" if c == target else f"read as {other!r}")) if t else (
                    "values below the partition-selection threshold")
            else:
                left = "none: the declared list" + ("" if d.get("other") is None else f" (others read as {d['other']!r})")
            clipping = ("unlisted values → " + repr(d.get("other") or "(other)")) if ("categories" in learned
                                                                                     or d.get("other")) \
                else "unlisted values are refused (or dropped with on_invalid=drop)"
        else:
            kept, left = "—", "—"
            clipping = "values outside the bounds are clipped to them" if kind == "numeric" else "—"
        missing = d.get("missing_text") or (", ".join(map(repr, m["missing_tokens_released"])) + " read as missing"
                                            if m.get("missing_tokens_released") else "")
        if not missing:
            missing = {True: "kept as its own value", False: "none expected"}.get(d.get("missing"), "—")
        role = f"{c} (target)" if c == target else c
        what = ", ".join(learned) if learned else ""
        rows.append([role, badge(source) + (f" <span class='muted'>{e(what)}</span>" if what else ""), kind or "—",
                     bounds_text, kept, left, missing, clipping])
    return rows


def _domain_section(report: dict[str, Any], domain: dict[str, dict[str, Any]] | None) -> str:
    rows = domain_rows(report, domain)
    if not rows:
        return ""
    params = report.get("parameters") or {}
    schema = params.get("schema")
    note = (f"The schema: {e(schema)}. " if schema else "") + (
        "<span class='badge declared'>declared</span> comes from the schema as given (public, not protected)")
    if any("badge learned" in str(r[1]) for r in rows):
        note += ("; <span class='badge learned'>learned</span> was learned from the data under DP in this run, its "
                 "ε listed above")
    note += "."
    if not domain and report.get("command") != "cluster":
        note += " The schema was not found from here: categories are those of the released cut."
    return ("<h2 id='domain'>Domain</h2>" + f"<p class='muted'>{note}</p>"
            + table(["column", "source", "kind", "bounds", "categories kept", "left out, and why", "missing values",
                     "outside the domain"], rows, raw=(1,)))


def _noise_warning(share: float) -> str:
    return (f"<p class='warning' role='note'>Warning: about {share:.0%} of the released records are expected to be "
            "noise (above 50 %): give more ε, fewer columns or a coarser schema.</p>")


def _publish(report: dict[str, Any]) -> str:
    rel = report.get("release") or {}
    share = rel.get("expected_noise_share")
    facts = [("algorithm", report.get("algorithm")), ("target", rel.get("target")),
             ("classes", ", ".join(map(str, rel.get("classes") or []))),
             ("records released", rel.get("released_records")), ("cells of the cut", rel.get("cells")),
             ("expected noise share", f"{share:.1%}" if isinstance(share, int | float) else None),
             ("suppression threshold", rel.get("suppression_threshold")),
             ("levels of specialization", len(rel.get("selections") or []) or None)]
    out = [_dl((k, v) for k, v in facts if v is not None)]
    if isinstance(share, int | float) and share > 0.5:
        out.append(_noise_warning(share))
    cut = rel.get("cut") or {}
    if cut:
        out.append("<h3>The cut per column</h3>")
        out.append(table(["column", "parts", "released values"],
                         [(c, len(v), _values([_interval(x) for x in v], 24)) for c, v in cut.items()]))
    sels = rel.get("selections") or []
    if sels:
        out.append("<h3>Specializations chosen, in order</h3>")
        out.append(table(["level", "choice", "candidates", "ε"],
                         [(s.get("level"), s.get("choice"), s.get("candidates"), s.get("epsilon")) for s in sels]))
    return "".join(out)


def _tree_shapes(report: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """(tree, depth, inner nodes, leaves) of each tree, from the report's per-tree spends."""
    out = []
    for t in report.get("spends_by_tree") or []:
        levels = t.get("levels") or []
        used = [lv for lv in levels if (lv.get("inner_nodes") or 0) + (lv.get("leaves") or 0) > 0]
        depth = max((lv.get("level", 0) for lv in used), default=0)
        out.append((int(t.get("tree", len(out) + 1)), int(depth), sum(int(lv.get("inner_nodes") or 0) for lv in levels),
                    sum(int(lv.get("leaves") or 0) for lv in levels)))
    return out


def _forest(report: dict[str, Any]) -> str:
    rel, params = report.get("release") or {}, report.get("parameters") or {}
    shape = rel.get("shape") or {}
    facts = [("algorithm", "DiffPRFs (Mu et al. 2016)"), ("target", params.get("target")),
             ("trees", rel.get("trees")), ("nodes", rel.get("nodes")), ("leaves", rel.get("leaves")),
             ("maximum depth", shape.get("depth", params.get("depth"))),
             ("features", len(params.get("columns") or []) or None), ("sampling", params.get("sampling")),
             ("noisy class counts", ", ".join(map(g, shape.get("noisy_class_counts") or [])) or None),
             ("model file", rel.get("model"))]
    out = [_dl((k, v) for k, v in facts if v is not None)]
    shapes = _tree_shapes(report)
    if shapes:
        out.append("<h3>Trees</h3>")
        out.append(svg.bars([(f"tree {t} (depth {d})", float(leaves)) for t, d, _, leaves in shapes],
                            title="Leaves per tree"))
        out.append(table(["tree", "depth", "inner nodes", "leaves"], shapes))
    return "".join(out)


def _cluster(report: dict[str, Any], sizes: Sequence[float] | None = None) -> str:
    rel, params = report.get("release") or {}, report.get("parameters") or {}
    cols = list(params.get("columns") or [])
    cents = rel.get("centroids") or []
    facts = [("algorithm", report.get("algorithm")), ("k", params.get("k", len(cents))), ("columns", ", ".join(cols)),
             ("bounds", params.get("bounds_source")), ("noisy record count", rel.get("n_estimate")),
             ("buckets released", rel.get("buckets")), ("quadtree height", rel.get("height"))]
    out = [_dl((k, v) for k, v in facts if v is not None)]
    sizes = sizes if sizes is not None else rel.get("sizes")
    bounds = params.get("bounds")
    if cents and len(cols) >= 2 and isinstance(bounds, list) and len(bounds) >= 2:
        pts = [(float(c[0]), float(c[1])) for c in cents]
        alt = "; ".join(f"{i + 1}: ({svg.fmt(x)}, {svg.fmt(y)})" + (f", size {svg.fmt(sizes[i])}" if sizes else "")
                        for i, (x, y) in enumerate(pts))
        title = f"The centroids on the public domain of {cols[0]} and {cols[1]}"
        out.append(svg.scatter(pts, bounds=(tuple(bounds[0]), tuple(bounds[1])), title=title,
                               axes=(cols[0], cols[1]), sizes=list(sizes) if sizes else None, alt=alt))
        if not sizes:
            out.append("<p class='muted'>The report holds no noisy cluster sizes: every centroid is drawn the same "
                       "size.</p>")
    if cents:
        head = ["centroid", *cols] + (["noisy size"] if sizes else [])
        out.append(table(head, [[i + 1, *[float(v) for v in c]] + ([float(sizes[i])] if sizes else [])
                                for i, c in enumerate(cents)]))
    return "".join(out)


def _kanon(report: dict[str, Any]) -> str:
    rel, params, p = report.get("release") or {}, report.get("parameters") or {}, report.get("privacy") or {}
    selected = list(rel.get("selected") or [])
    levels = (rel.get("generalization") or {}).get("levels") or {}
    facts = [("algorithm", report.get("algorithm")), ("k", p.get("k")), ("target", params.get("target")),
             ("quasi-identifiers kept", f"{len(selected)} of {len(rel.get('candidates') or [])}"),
             ("suppressed records", p.get("suppressed_records")), ("ranking", rel.get("score"))]
    out = [_dl((k, v) for k, v in facts if v is not None)]
    ranking = rel.get("ranking") or []
    if ranking:
        out.append("<h3>Features, by rank</h3>")
        out.append(table(["feature", "rank", "score", "kept", "generalization"],
                         [(r.get("feature"), r.get("rank"), float(r.get("score") or 0.0),
                           "kept" if r.get("selected") else "left out",
                           (levels.get(r.get("feature")) or {}).get("meaning", "—")) for r in ranking]))
    ec = rel.get("equivalence_classes") or {}
    hist = ec.get("histogram") or []
    if hist:
        out.append("<h3>Equivalence classes by size</h3>")
        out.append(f"<p>{g(ec.get('classes'))} classes, the smallest {g(ec.get('smallest'))} records, the largest "
                   f"{g(ec.get('largest'))}.</p>")
        out.append(svg.bars([(f"{g(h.get('min'))}–{g(h.get('max'))} records", float(h.get("classes") or 0))
                             for h in hist], title="Equivalence classes per size band"))
        out.append(table(["size band", "classes", "records"],
                         [(f"{g(h.get('min'))}–{g(h.get('max'))}", h.get("classes"), h.get("records")) for h in hist]))
    return "".join(out)


def _release_section(report: dict[str, Any], sizes: Sequence[float] | None) -> str:
    command = str(report.get("command", ""))
    body = {"publish": _publish, "forest train": _forest, "kanon-select": _kanon}.get(command)
    if command == "cluster":
        inner = _cluster(report, sizes)
    elif body is not None:
        inner = body(report)
    else:
        inner = _dl((k, v) for k, v in (report.get("release") or {}).items() if isinstance(v, str | int | float))
    note = ("<p class='muted'>The run's warnings are not in the report (whether one appears can depend on the "
            "private data); they were printed when the run ran.</p>")
    return "<h2 id='release'>The release</h2>" + inner + note


def _owner_section(ev: dict[str, Any]) -> str:
    out = ["<h2 id='owner'>For the data owner: evaluation on test rows</h2>",
           "<p class='owner' role='alert'>Owner only: this part holds exact statistics of private data (the test "
           f"rows{', ' + e(ev['source']) if ev.get('source') else ''}); it is not differentially private. Do not "
           "ship it with the release.</p>"]
    metrics = ev.get("metrics") or {}
    if metrics:
        keys = [k for k in ("accuracy", "balanced_accuracy", "precision", "recall", "f1", "macro_f1", "roc_auc",
                            "nicv", "nicv_ratio", "f_measure") if k in metrics]
        rows = []
        for k in keys:
            base, floor = metrics.get(f"baseline_{k}"), metrics.get(f"floor_{k}")
            rows.append((k.replace("_", " "), _num(metrics[k]), _num(base), _num(floor)))
        names = ev.get("names") or ("this release", "raw-data baseline", "majority class")
        out.append(table(["metric", *names], rows,
                         caption=f"{ev.get('model', 'classifier')} on {g(metrics.get('records', ev.get('rows', '')))} "
                                 "test records" if metrics.get("records") or ev.get("rows") else ""))
        if "baseline_accuracy" not in metrics and ev.get("kind") == "classifier":
            out.append("<p class='muted'>No raw-data baseline: give the raw training rows as the baseline to add it.</p>")
    curves = ev.get("roc") or []
    if curves:
        alt = "; ".join(f"{c['name']}: AUC {c['auc']:.3f}" if c.get("auc") is not None else c["name"] for c in curves)
        out.append(svg.lines([(c["name"], c["fpr"], c["tpr"]) for c in curves],
                             title=f"ROC curve (positive class {ev.get('positive', '')})",
                             x_label="false positive rate", y_label="true positive rate", alt=alt))
    for k, v in (ev.get("extra") or {}).items():
        out.append(f"<p>{e(k)}: {e(g(v))}</p>")
    dists = ev.get("distributions") or {}
    if dists:
        out.append("<h3>Each column: the release beside the test rows</h3><div class='grid'>")
        for c, d in dists.items():
            out.append(f"<figure><figcaption>{e(c)}</figcaption>"
                       + svg.paired_bars(d["labels"], d["release"], d["test"], title=f"{c}: share of records per value",
                                         names=("release", "test rows")) + "</figure>")
        out.append("</div>")
    return "".join(out)


def _num(v: Any) -> Any:
    return round(float(v), 4) if isinstance(v, int | float) and not isinstance(v, bool) else ("—" if v is None else v)


def render(report: dict[str, Any], *, domain: dict[str, dict[str, Any]] | None = None,
           evaluation: dict[str, Any] | None = None, ledger: dict[str, Any] | None = None,
           sizes: Sequence[float] | None = None, source: str | None = None, title: str | None = None,
           embed: bool = False, extra_html: str = "") -> str:
    """The card of ``report`` as HTML: a whole page, or with ``embed`` a ``<div>`` (a notebook's
    ``_repr_html_``) with the same content and its style scoped to ``.dpkit-card``.

    ``domain``: column → ``kind``, ``bounds``, ``values``, ``other``, ``missing`` (public, from
    the schema). ``evaluation``: the owner's test metrics (adds the owner section and its
    banner). ``ledger``: the data set's status in a ledger. ``sizes``: a clustering's noisy
    cluster sizes. ``extra_html``: trusted HTML put before the footer (a notebook's first rows).
    """
    command = str(report.get("command", "run"))
    heading = title or f"dpkit release card: {command}"
    parts = [f"<div class='dpkit-card' lang='en'><style>{CSS}</style>",
             f"<header><h1>{e(heading)}</h1><p class='muted'>{e(command)} · {e(report.get('algorithm', ''))}"
             + (f" · {e(source)}" if source else "") + "</p></header>",
             "<main>",
             f"<h2 id='guarantee'>Guarantee</h2><p class='guarantee'>{e(guarantee(report))}</p>",
             _spend_section(report, ledger),
             _domain_section(report, domain),
             _release_section(report, sizes)]
    if evaluation:
        parts.append(_owner_section(evaluation))
    parts.append(extra_html)
    parts.append(f"</main><footer>Built by dpkit {e(report.get('dpkit_version', ''))} from report format "
                 f"{e(report.get('report_version', ''))}. Privacy figures are the accountant's, as the report "
                 "states them. This page loads nothing from the network.</footer></div>")
    body = "".join(parts)
    if embed:
        return body
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "img-src data:\">"
            f"<title>{e(heading)}</title></head><body style='margin:0;background:{P.BACKGROUND}'>{body}</body></html>")
