"""A sweep's runs grouped by grid point: mean, sample sd and n per metric, and pooling."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from dpkit.errors import DpkitWarning, warn
from dpkit.sweep.journal import Journal
from dpkit.sweep.spec import BOOK_COLUMNS, Experiment, Run


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
        warn(
            f"{journal.path}: {stale} row(s) come from other parameters or repeats (an edited YAML?); "
            "they are kept in the file but left out of the summary",
            DpkitWarning,
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
