"""Summaries of a sweep's journal: ``summary.csv``, the plots and ``summary.md``.

Statistics per grid point and metric: the mean, the sample standard deviation (ddof = 1;
empty when n = 1) and n, over the repeats whose metric is a finite number.

The paper's numbers sit beside ours when the experiment's ``paper`` mapping has a
``values`` list (docs/formats.md)::

    paper:
      source: Fu et al. 2018, Fig. 3
      values:
        - {sweep: epsilon, where: {algorithm: maxgddp, epsilon: 1}, metric: accuracy, value: 0.8372}

Each value is matched to the grid points of that sweep whose parameters include ``where``;
the other keys of ``paper`` are shown as notes.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dpkit.io.output import atomic_output
from dpkit.sweep.groups import Group, Stat, pool, pooled_params, summarize
from dpkit.sweep.journal import Journal
from dpkit.sweep.plots import plot_all
from dpkit.sweep.spec import Experiment, Run, grid_params


def fmt(x: float) -> str:
    """4 significant digits; whole numbers (counts) in full with thousands separators."""
    if not math.isfinite(x):
        return ""
    if x == int(x) and abs(x) < 1e9:
        return f"{int(x):,}"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        return f"{x:.3g}"
    return f"{x:.4g}"


def fmt_stat(s: Stat | None) -> str:
    if s is None:
        return "—"
    if s.n < 2 or not math.isfinite(s.sd) or s.sd == 0:
        return fmt(s.mean)
    return f"{fmt(s.mean)} ± {s.sd:.2g}"


def write_summary_csv(groups: list[Group], metrics: list[str], params: list[str], path: Path) -> None:
    with atomic_output(path) as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["sweep", *params, "metric", "mean", "sd", "n"])
        for g in groups:
            for m in metrics:
                s = g.stats.get(m)
                if s is None:
                    continue
                w.writerow([g.sweep, *(_value(g.params[p]) if p in g.params else "" for p in params),
                            m, repr(s.mean), "" if not math.isfinite(s.sd) else repr(s.sd), s.n])


def _value(v: Any) -> str:
    if isinstance(v, (list, dict)):
        return json.dumps(v, sort_keys=True)
    return "" if v is None else str(v)


@dataclass
class PaperValue:
    sweep: str | None
    where: dict[str, Any]
    metric: str
    value: float
    note: str = ""


def paper_values(paper: Any) -> list[PaperValue]:
    if not isinstance(paper, dict) or not isinstance(paper.get("values"), list):
        return []
    out = []
    for item in paper["values"]:
        if not isinstance(item, dict) or "metric" not in item or "value" not in item:
            continue
        try:
            value = float(item["value"])
        except (TypeError, ValueError):
            continue
        out.append(PaperValue(item.get("sweep"), dict(item.get("where") or {}), str(item["metric"]), value, str(item.get("note", ""))))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    return str(a) == str(b)


def match(pv: PaperValue, g: Group) -> bool:
    if pv.sweep is not None and pv.sweep != g.sweep:
        return False
    return all(k in g.params and _same(g.params[k], v) for k, v in pv.where.items())


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def _table(gs: list[Group], columns: list[str], metrics: list[str], pvs: list[PaperValue]) -> list[str]:
    """A markdown table: parameters, each metric's mean ± sd (and the paper's value beside it), n."""
    present = [m for m in metrics if any(m in g.stats for g in gs)]
    paper_metrics = [m for m in present if any(pv.metric == m and any(match(pv, g) for g in gs) for pv in pvs)]
    header = list(columns)
    for m in present:
        header.append(m)
        if m in paper_metrics:
            header.append(f"{m}: paper")
    header.append("n")
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for g in gs:
        cells = [_md_escape(str(g.point.get(p, ""))) for p in columns]
        for m in present:
            cells.append(fmt_stat(g.stats.get(m)))
            if m in paper_metrics:
                hits = [pv for pv in pvs if pv.metric == m and match(pv, g)]
                cells.append(fmt(hits[0].value) if hits else "")
        cells.append(str(g.runs))
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def write_summary_md(exp: Experiment, groups: list[Group], metrics: list[str], images: dict[str, list[str]], path: Path, out_dir: Path) -> None:
    pvs = paper_values(exp.paper)
    lines = [f"# {exp.name}", ""]
    if exp.description:
        lines += [exp.description.strip(), ""]
    repeats = max((g.runs for g in groups), default=0)
    lines += [
        f"Task `{exp.task}`; up to {repeats} run(s) per grid point (mean ± sd over runs); "
        f"regenerate with `dpkit evaluate sweep {exp.path} -o {out_dir}` (finished runs are kept).",
        "",
    ]
    if exp.fixed:
        shown = ", ".join(f"{k} = {v}" for k, v in exp.fixed.items())
        lines += [f"Fixed parameters: {_md_escape(shown)}.", ""]
    for sweep in exp.sweeps:
        gs = [g for g in groups if g.sweep == sweep.name]
        lines += [f"## Sweep `{sweep.name}`", ""]
        if sweep.description:
            lines += [sweep.description.strip(), ""]
        if sweep.fixed:
            lines += [f"Sweep parameters: {_md_escape(', '.join(f'{k} = {v}' for k, v in sweep.fixed.items()))}.", ""]
        pooled = pooled_params(exp, sweep.name)
        if pooled:
            keep = [p for p in sweep.grid if p not in pooled]
            lines += [f"Pooled over {', '.join(pooled)} (as plotted): mean ± sd over all their runs.", ""]
            lines += _table(pool(gs, keep), keep, metrics, pvs)
            lines += ["<details><summary>every grid point</summary>", ""]
            lines += _table(gs, list(sweep.grid), metrics, pvs)
            lines += ["</details>", ""]
        else:
            lines += _table(gs, list(sweep.grid), metrics, pvs)
        for img in images.get(sweep.name, []):
            lines += [f"![{sweep.name}: {Path(img).stem}]({img})", ""]
    if pvs:
        lines += ["## The paper's numbers beside ours", ""]
        lines += ["| sweep | where | metric | paper | dpkit (mean ± sd) | dpkit − paper | note |", "|---|---|---|---|---|---|---|"]
        for pv in pvs:
            hits = [g for g in groups if match(pv, g) and pv.metric in g.stats]
            where = ", ".join(f"{k} = {v}" for k, v in pv.where.items())
            if hits:
                g = hits[0]
                s = g.stats[pv.metric]
                ours, diff = fmt_stat(s), f"{s.mean - pv.value:+.4g}"
                sweep_name = g.sweep
            else:
                ours, diff, sweep_name = "not run", "", pv.sweep or ""
            lines.append(f"| {sweep_name} | {_md_escape(where)} | {pv.metric} | {fmt(pv.value)} | {ours} | {diff} | {_md_escape(pv.note)} |")
        lines.append("")
    notes = exp.paper if not isinstance(exp.paper, dict) else {k: v for k, v in exp.paper.items() if k != "values"}
    if notes:
        lines += ["## From the paper", ""]
        if isinstance(notes, dict):
            for k, v in notes.items():
                if isinstance(v, (dict, list)):
                    text = yaml.safe_dump(v, sort_keys=False, allow_unicode=True, default_flow_style=True, width=1000).strip()
                    lines.append(f"- **{k}**: `{text}`")
                else:
                    lines.append(f"- **{k}**: {v}")
        else:
            lines.append(str(notes))
        lines.append("")
    if exp.notes:
        lines += ["## Notes", "", exp.notes.strip(), ""]
    with atomic_output(path) as fh:
        fh.write("\n".join(lines).rstrip() + "\n")


def write_outputs(exp: Experiment, out_dir: Path, journal: Journal, runs: list[Run], *, plots: bool = True) -> dict[str, list[str]]:
    """summary.csv, the PNGs and summary.md from the journal; returns the images per sweep."""
    params = grid_params(exp)
    groups, metrics = summarize(journal, runs, params)
    write_summary_csv(groups, metrics, params, out_dir / "summary.csv")
    images: dict[str, list[str]] = {}
    if plots:

        images = plot_all(exp, groups, out_dir)
    write_summary_md(exp, groups, metrics, images, out_dir / "summary.md", out_dir)
    return images
