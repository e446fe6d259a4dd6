"""Sweep plots in the papers' style: a metric against one parameter, one line per setting.

Matplotlib with the Agg backend (no display needed; PNG files). Each line is the mean over
the repeats with ±1 sd error bars; a run that also returns ``baseline_<metric>``,
``floor_<metric>`` or ``reference_<metric>`` adds that value as a dashed horizontal line
(the non-private baseline, the majority-class floor, a non-private reference). Axes carry
the parameter's name and unit (ε, h, ...), the title the experiment and the fixed context.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from dpkit.sweep.groups import Group, pool
from dpkit.sweep.spec import Experiment, Plot

PARAM_LABELS = {
    "epsilon": "privacy budget ε",
    "eps": "privacy budget ε",
    "levels": "number of specializations h",
    "h": "number of specializations h",
    "depth": "maximum tree depth d",
    "trees": "number of trees t",
    "n_trees": "number of trees t",
    "k": "k",
    "grid": "split-point grid size",
    "selection_share": "share of ε for selection",
    "gamma": "quadtree share of ε (γ)",
    "max_height": "maximum quadtree height",
    "sample": "records sampled",
    "rows": "records",
}
TASK_PARAM_LABELS = {
    ("cluster", "k"): "number of clusters k",
    ("kanon-select", "k"): "anonymity level k (smallest class size)",
}
METRIC_LABELS = {
    "accuracy": "accuracy on the test split",
    "precision": "precision (positive class)",
    "recall": "recall (positive class)",
    "f1": "F1 score",
    "nicv": "NICV (lower is better)",
    "nicv_ratio": "NICV ÷ non-private NICV (lower is better)",
    "selected_features": "features selected",
    "f_measure": "F-measure",
    "fmeasure": "F-measure",
    "rcp": "RCP (relative to DPQT)",
    "wall_seconds": "wall time per run (s)",
    "seconds": "running time (s)",
    "fit_seconds": "training time (s)",
    "released_records": "records in the release",
    "cells": "released cells",
    "time": "running time (s)",
    "epsilon_spent": "ε spent",
    "features": "features selected",
    "n_features": "features selected",
    "min_class": "smallest equivalence class",
}
HLINES = (
    ("baseline", "non-private baseline", "#444444", (0, (6, 3))),
    ("reference", "non-private reference", "#444444", (0, (6, 3))),
    ("floor", "majority-class floor", "#999999", (0, (2, 2))),
)
MARKERS = "osD^vP*Xh<>"


def param_label(name: str, task: str = "") -> str:
    return TASK_PARAM_LABELS.get((task, name)) or PARAM_LABELS.get(name) or name.replace("_", " ")


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name) or name.replace("_", " ")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _key(v: Any) -> Any:
    """A hashable stand-in for a grid value (a YAML list or mapping becomes its JSON)."""
    if isinstance(v, (list, dict)):
        import json

        return json.dumps(v, sort_keys=True)
    return v


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-")


SYMBOLS = {"epsilon": "ε", "eps": "ε", "levels": "h", "depth": "d", "trees": "t", "gamma": "γ"}


def _assign(k: str, v: Any) -> str:
    return f"{SYMBOLS.get(k, k)} = {v:g}" if isinstance(v, float) else f"{SYMBOLS.get(k, k)} = {v}"


def _line_label(key: tuple[tuple[str, Any], ...], task: str) -> str:
    if not key:
        return "dpkit"
    if len(key) == 1 and not _is_number(key[0][1]):
        return str(key[0][1])
    return ", ".join(_assign(k, v) for k, v in key)


def _context(exp: Experiment, sweep_name: str, used: set[str]) -> str:
    """The parameters held fixed in this plot, short ones only (not file paths)."""
    sweep = exp.sweep(sweep_name)
    fixed = {**exp.fixed, **sweep.fixed}
    parts = []
    for k, v in fixed.items():
        if k in used or k in ("data", "test", "schema", "train", "target", "columns", "bounds", "labels", "positive"):
            continue
        if _is_number(v) or (isinstance(v, str) and "/" not in v and len(v) <= 20):
            parts.append(_assign(k, v))
    return ", ".join(parts[:5])


def _wants_log(groups: list[Group], y: str) -> bool:
    """A log y axis helps only for positive values spanning a wide range.

    A plot spec's ``logy`` covers every metric in its ``y`` list; a metric in (0, 1] that
    varies less than tenfold (an F-measure, an accuracy) stays linear.
    """
    means = [g.stats[y].mean for g in groups]
    if not means or min(means) <= 0:
        return False
    return not (max(means) <= 1 and max(means) / min(means) < 10)


def plot_one(exp: Experiment, plot: Plot, y: str, groups: list[Group], path: Path) -> bool:
    """Draw ``y`` against ``plot.x`` for the groups of ``plot.sweep``; False if no data."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sweep = exp.sweep(plot.sweep)
    line_params = list(plot.lines)
    # grid parameters neither on the x axis nor naming lines are pooled (e.g. a split index)
    pooled = [p for p in sweep.grid if p != plot.x and p not in line_params and len(sweep.grid[p]) > 1]
    gs = [g for g in groups if g.sweep == plot.sweep and y in g.stats]
    if not gs:
        return False
    if pooled:
        gs = pool(gs, [plot.x, *line_params])
    xs_all = sweep.grid[plot.x]
    numeric_x = all(_is_number(v) for v in xs_all)
    logx = plot.logx and numeric_x and min(xs_all) > 0  # a log axis cannot show 0
    lines: dict[tuple[tuple[str, Any], ...], list[Group]] = {}
    for g in gs:
        key = tuple((p, _key(g.point[p])) for p in line_params)
        lines.setdefault(key, []).append(g)

    fig, ax = plt.subplots(figsize=(8.8, 4.8), dpi=130)
    n_lines = len(lines)
    position = {_key(v): i for i, v in enumerate(xs_all)}
    if numeric_x and len(xs_all) > 1:
        span = (math.log10(max(xs_all) / min(xs_all)) if logx else max(xs_all) - min(xs_all))
        step = span / (len(xs_all) - 1) if span > 0 else 1
    else:
        step = 1.0
    dodge = 0.06 * step if n_lines > 1 else 0.0
    runs_per_point = max((g.stats[y].n for g in gs), default=0)
    for i, (key, members) in enumerate(lines.items()):
        members.sort(key=lambda g: position[_key(g.point[plot.x])])
        offset = (i - (n_lines - 1) / 2) * dodge
        xv = []
        for g in members:
            x = g.point[plot.x]
            if not numeric_x:
                xv.append(position[_key(x)] + offset)
            elif logx:
                xv.append(x * 10 ** offset)
            else:
                xv.append(x + offset)
        mean = [g.stats[y].mean for g in members]
        sd = [g.stats[y].sd if math.isfinite(g.stats[y].sd) else 0.0 for g in members]
        ax.errorbar(xv, mean, yerr=sd, marker=MARKERS[i % len(MARKERS)], markersize=5, linewidth=1.6,
                    capsize=3, elinewidth=1, label=_line_label(key, exp.task))
    _reference_lines(ax, [g for g in groups if g.sweep == plot.sweep], y)
    _x_axis(ax, xs_all, numeric_x, logx, dodge, step)
    if plot.logy and _wants_log(gs, y):
        _log_y(ax)
    ax.set_xlabel(plot.xlabel or param_label(plot.x, exp.task))
    ax.set_ylabel(plot.ylabel or metric_label(y))
    what = f"{metric_label(y).split(' (')[0]} vs {param_label(plot.x, exp.task)}"
    title = plot.title or f"{exp.name} ({plot.sweep}): {what}"
    context = _context(exp, plot.sweep, set(sweep.grid))
    sub = f"mean ± sd of {runs_per_point} run{'s' if runs_per_point != 1 else ''}"
    if pooled:
        sub += f" (pooled over {', '.join(pooled)})"
    sub += f"; {context}" if context else ""
    import textwrap

    sub = "\n".join(textwrap.wrap(sub, 95))
    ax.set_title(f"{title}\n{sub}", fontsize=10)
    ax.grid(True, alpha=0.3)
    _legend(ax, line_params)
    fig.tight_layout()
    from dpkit.io.output import atomic_output

    try:
        with atomic_output(path, binary=True) as fh:
            fig.savefig(fh, format="png")
    finally:
        plt.close(fig)
    return True


def _reference_lines(ax: Any, groups: list[Group], y: str) -> None:
    """The horizontal reference lines (:data:`HLINES`): the mean over this sweep's runs."""
    for prefix, label, color, style in HLINES:
        name = f"{prefix}_{y}"
        vals = [(g.stats[name].mean, g.stats[name].n) for g in groups if name in g.stats]
        if not vals:
            continue
        value = sum(m * n for m, n in vals) / sum(n for _, n in vals)
        ax.axhline(value, color=color, linestyle=style, linewidth=1.3, label=f"{label} ({value:.3g})")


def _x_axis(ax: Any, xs_all: list[Any], numeric_x: bool, logx: bool, dodge: float, step: float) -> None:
    """Ticks at the grid's values; limits that leave room for the dodged lines."""
    from matplotlib.ticker import FixedLocator, NullLocator

    if not numeric_x:
        ax.set_xticks(range(len(xs_all)))
        ax.set_xticklabels([str(v) for v in xs_all])
        ax.set_xlim(-0.5, len(xs_all) - 0.5)
        return
    if logx:
        ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator([float(v) for v in xs_all]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([f"{v:g}" for v in xs_all])
    lo, hi = min(xs_all), max(xs_all)
    if logx:
        ax.set_xlim(lo / 10 ** (1.5 * dodge + 0.08 * step), hi * 10 ** (1.5 * dodge + 0.08 * step))
    elif hi > lo:
        pad = 0.06 * (hi - lo) + 1.5 * dodge
        ax.set_xlim(lo - pad, hi + pad)


def _log_y(ax: Any) -> None:
    """A log y axis with ticks at 1-2-5 steps in plain numbers (0.5, 1, 2, 5, 10), not 10^k."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _legend(ax: Any, line_params: list[str]) -> None:
    """Data lines first (titled by the parameter they vary), then the reference lines; outside
    the axes, right: it never hides a line, a point or the baseline."""
    handles, labels = ax.get_legend_handles_labels()
    refs = [i for i, lab in enumerate(labels) if any(lab.startswith(h[1]) for h in HLINES)]
    order = [i for i in range(len(labels)) if i not in refs] + refs
    legend_title = ", ".join(line_params) if line_params else None
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=8.5, title=legend_title,
              title_fontsize=8.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def plot_all(exp: Experiment, groups: list[Group], out_dir: Path) -> dict[str, list[str]]:
    """Every plot of the experiment; returns the PNG file names per sweep."""
    images: dict[str, list[str]] = {}
    for plot in exp.plots:
        for y in plot.y:
            name = plot.file if plot.file and len(plot.y) == 1 else f"{plot.sweep}-{y}-vs-{plot.x}.png"
            if not name.endswith(".png"):
                name += ".png"
            name = _safe(name)
            if plot_one(exp, plot, y, groups, out_dir / name):
                images.setdefault(plot.sweep, []).append(name)
    return images
