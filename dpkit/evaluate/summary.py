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
import statistics
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dpkit.data.table import atomic_output
from dpkit.errors import DpkitWarning
from dpkit.evaluate.experiments import BOOK_COLUMNS, Experiment, Journal, Run, grid_params


@dataclass
class Stat:
    mean: float
    sd: float  # NaN when n < 2
    n: int


@dataclass
class Group:
    """The runs of one grid point of one sweep."""

    sweep: str
    point: dict[str, Any]
    params: dict[str, Any]
    stats: dict[str, Stat] = field(default_factory=dict)
    runs: int = 0


def metric_columns(header: list[str], params: list[str]) -> list[str]:
    return [c for c in header if c not in BOOK_COLUMNS and c not in params]


def summarize(journal: Journal, runs: list[Run], params: list[str]) -> tuple[list[Group], list[str]]:
    """Group the journal's rows of the current experiment by grid point; (groups, metrics)."""
    by_id = {r.run_id: r for r in runs}
    metrics = metric_columns(journal.header, params)
    groups: dict[tuple[str, str], Group] = {}
    for r in runs:  # expansion order, so tables and plots follow the YAML
        key = (r.sweep, json.dumps(r.point, sort_keys=True, default=str))
        groups.setdefault(key, Group(r.sweep, r.point, r.params))
    values: dict[tuple[str, str], dict[str, list[float]]] = {k: {} for k in groups}
    stale = 0
    seen: set[str] = set()
    for row in journal.rows:
        run = by_id.get(row["run_id"])
        if run is None:
            stale += 1
            continue
        if row["run_id"] in seen:  # a run journaled twice counts once
            continue
        seen.add(row["run_id"])
        key = (run.sweep, json.dumps(run.point, sort_keys=True, default=str))
        groups[key].runs += 1
        for m in metrics:
            try:
                v = float(row.get(m, "") or "nan")
            except ValueError:
                continue
            if math.isfinite(v):
                values[key].setdefault(m, []).append(v)
    if stale:
        warnings.warn(
            f"{journal.path}: {stale} row(s) come from other parameters or repeats (an edited YAML?); "
            "they are kept in the file but left out of the summary",
            DpkitWarning,
            stacklevel=2,
        )
    for key, g in groups.items():
        for m, vs in values[key].items():
            sd = statistics.stdev(vs) if len(vs) > 1 else float("nan")
            g.stats[m] = Stat(statistics.fmean(vs), sd, len(vs))
    return [g for g in groups.values()], metrics


def pool(groups: list[Group], keep: list[str]) -> list[Group]:
    """Merge the groups that agree on the ``keep`` parameters (pooling every other one).

    The pooled mean and sample sd are those of all the underlying runs, computed exactly
    from each group's mean, sd and n (within- plus between-group sums of squares).
    """
    merged: dict[str, list[Group]] = {}
    for g in groups:
        key = json.dumps([g.sweep, [g.point.get(p) for p in keep]], sort_keys=True, default=str)
        merged.setdefault(key, []).append(g)
    out = []
    for members in merged.values():
        first = members[0]
        point = {p: first.point[p] for p in keep if p in first.point}
        params = {k: v for k, v in first.params.items() if all(m.params.get(k) == v for m in members)}
        g = Group(first.sweep, point, params, runs=sum(m.runs for m in members))
        for metric in {m for grp in members for m in grp.stats}:
            parts = [grp.stats[metric] for grp in members if metric in grp.stats]
            n = sum(st.n for st in parts)
            mean = sum(st.mean * st.n for st in parts) / n
            ss = sum((st.n - 1) * (st.sd**2 if math.isfinite(st.sd) else 0.0) + st.n * (st.mean - mean) ** 2 for st in parts)
            g.stats[metric] = Stat(mean, math.sqrt(ss / (n - 1)) if n > 1 else float("nan"), n)
        out.append(g)
    return out


def pooled_params(exp: Experiment, sweep_name: str) -> list[str]:
    """Grid parameters of a sweep that none of its plots shows (as x or lines): pooled."""
    plots = [p for p in exp.plots if p.sweep == sweep_name]
    if not plots:
        return []
    shown = {p.x for p in plots} | {ln for p in plots for ln in p.lines}
    return [p for p in exp.sweep(sweep_name).grid if p not in shown and len(exp.sweep(sweep_name).grid[p]) > 1]


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


# --------------------------------------------------------------------------- paper values


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


# --------------------------------------------------------------------------- summary.md



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
        from dpkit.evaluate.plots import plot_all

        images = plot_all(exp, groups, out_dir)
    write_summary_md(exp, groups, metrics, images, out_dir / "summary.md", out_dir)
    return images
