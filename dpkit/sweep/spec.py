"""The experiment YAML of `dpkit evaluate sweep`: sweeps, grid points, runs and their seeds.

Experiment sweeps: a YAML grid of dpkit runs → results.csv, summary.csv, plots, summary.md.

The format (``docs/formats.md``, "Experiment YAML")::

    name: maxgddp-adult          # also the seed namespace
    task: publish                # publish | forest | cluster | kanon-select | module:function
    description: ...
    repeats: 10
    fixed: {data: ..., epsilon: 1}             # parameters of every run
    sweeps:
      - name: epsilon
        grid: {algorithm: [maxgddp, diffgen], epsilon: [0.1, 0.25, 0.5, 1]}
        fixed: {levels: 13}                    # overrides/extends the top-level fixed
    plots:
      - {sweep: epsilon, x: epsilon, y: accuracy, lines: algorithm, logx: true}
    paper: {...}                               # the paper's numbers (free-form; see values:)

Each *run* is one in-process call ``run_experiment(params, seed) -> {metric: value}`` of
the task's module, ``params`` = top-level fixed + sweep fixed + grid point. Its seed is a
hash of (experiment name, sweep, grid point, repeat), so a rerun reproduces every run and
adding repeats or grid values leaves the existing runs' seeds unchanged.

``results.csv`` is the journal: one row per finished run, appended and flushed as runs
finish (in any order, from a process pool). A rerun reads it and executes only the runs
whose ``run_id`` is missing, so a sweep killed half-way finishes where it stopped; a torn
last line (a kill mid-write) is cut off. The ``run_id`` hashes the run's full parameters,
so editing ``fixed`` makes the old rows stale: they are kept in the file but ignored.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from dpkit.errors import DpkitError, DpkitWarning, ExperimentError, warn

TASKS: dict[str, str | Callable[[dict[str, Any], int], dict[str, float]]] = {
    "publish": "dpkit.sweep.tasks.publish",
    "forest": "dpkit.sweep.tasks.forest",
    "cluster": "dpkit.sweep.tasks.cluster",
    "kanon-select": "dpkit.sweep.tasks.kanon",
}


TOP_KEYS = ("name", "task", "description", "repeats", "fixed", "sweeps", "plots", "paper", "notes")


SWEEP_KEYS = ("name", "grid", "fixed", "description")


PLOT_KEYS = ("sweep", "x", "y", "lines", "logx", "logy", "title", "xlabel", "ylabel", "file")


BOOK_COLUMNS = ("run_id", "sweep", "repeat", "seed")


TAIL_COLUMNS = ("wall_seconds",)


def register_task(name: str, task: str | Callable[[dict[str, Any], int], dict[str, float]]) -> None:
    """Add a task: a module path (with ``run_experiment``), ``module:function``, or a callable."""
    TASKS[name] = task


@dataclass
class Sweep:
    name: str
    grid: dict[str, list[Any]]
    fixed: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def points(self) -> list[dict[str, Any]]:
        """The cartesian grid, in YAML order (first parameter varies slowest)."""
        keys = list(self.grid)
        return [dict(zip(keys, values, strict=True)) for values in product(*(self.grid[k] for k in keys))]


@dataclass
class Plot:
    sweep: str
    x: str
    y: list[str]
    lines: list[str] = field(default_factory=list)
    logx: bool = False
    logy: bool = False
    title: str | None = None
    xlabel: str | None = None
    ylabel: str | None = None
    file: str | None = None


@dataclass
class Experiment:
    name: str
    task: str
    sweeps: list[Sweep]
    repeats: int = 1
    description: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)
    paper: Any = None
    notes: str = ""
    path: str = "<experiment>"

    def sweep(self, name: str) -> Sweep:
        for s in self.sweeps:
            if s.name == name:
                return s
        raise KeyError(name)


class _Doc:
    """A YAML document with the positions of its nodes, for file:line:column errors."""

    def __init__(self, text: str, path: str) -> None:
        self.path = path
        try:
            self.root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
            raise ExperimentError(f"{where}: YAML syntax error: {exc.problem or exc}") from None
        except yaml.YAMLError as exc:
            raise ExperimentError(f"{path}: YAML error: {exc}") from None

    def fail(self, node: yaml.Node | None, message: str) -> ExperimentError:
        if node is None:
            return ExperimentError(f"{self.path}: {message}")
        m = node.start_mark
        return ExperimentError(f"{self.path}:{m.line + 1}:{m.column + 1}: {message}")

    def value(self, node: yaml.Node) -> Any:
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise self.fail(node, f"bad value: {exc}") from None
        finally:
            loader.dispose()

    def mapping(self, node: yaml.Node, what: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise self.fail(k, f"a key in {what} must be a name")
            if k.value in out:
                raise self.fail(k, f"duplicate key {k.value!r} in {what}")
            out[k.value] = (k, v)
        return out

    def scalar(self, node: yaml.Node, what: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f"{what} must be a single value")
        return self.value(node)


def _check_keys(doc: _Doc, items: dict[str, tuple[yaml.Node, yaml.Node]], allowed: Iterable[str], what: str, strict: bool) -> None:
    allowed = tuple(allowed)
    for key, (k, _) in items.items():
        if key not in allowed:
            msg = f"unknown key {key!r} in {what} (allowed: {', '.join(allowed)})"
            if strict:
                raise doc.fail(k, msg)
            m = k.start_mark
            warn(f"{doc.path}:{m.line + 1}:{m.column + 1}: {msg}; ignored", DpkitWarning)


def _names(doc: _Doc, node: yaml.Node, what: str) -> list[str]:
    value = doc.value(node)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value
    raise doc.fail(node, f"{what} must be a parameter/metric name or a list of names")


def parse_experiment(text: str, path: str = "<experiment>") -> Experiment:
    """Parse and validate an experiment YAML; every error names file, line and column."""
    doc = _Doc(text, path)
    if doc.root is None:
        raise ExperimentError(f"{path}: the experiment file is empty")
    top = doc.mapping(doc.root, "the experiment")
    _check_keys(doc, top, TOP_KEYS, "the experiment", strict=False)
    for key in ("name", "task", "sweeps"):
        if key not in top:
            raise doc.fail(doc.root, f"the experiment needs a {key!r} key")
    name = str(doc.scalar(top["name"][1], "name"))
    task = str(doc.scalar(top["task"][1], "task"))
    if task not in TASKS and ":" not in task and "." not in task:
        raise doc.fail(top["task"][1], f"unknown task {task!r} (use {', '.join(TASKS)}, or module:function)")
    repeats = 1
    if "repeats" in top:
        repeats = doc.scalar(top["repeats"][1], "repeats")
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            raise doc.fail(top["repeats"][1], f"repeats must be an integer >= 1, got {repeats!r}")
    fixed: dict[str, Any] = {}
    if "fixed" in top and not _null(top["fixed"][1]):
        doc.mapping(top["fixed"][1], "fixed")  # position-checked (duplicates)
        fixed = doc.value(top["fixed"][1])
    sweeps_node = top["sweeps"][1]
    if not isinstance(sweeps_node, yaml.SequenceNode) or not sweeps_node.value:
        raise doc.fail(sweeps_node, "sweeps must be a non-empty list of {name, grid, fixed}")
    sweeps: list[Sweep] = []
    for item in sweeps_node.value:
        s = doc.mapping(item, "a sweep")
        _check_keys(doc, s, SWEEP_KEYS, "a sweep", strict=True)
        if "name" not in s or "grid" not in s:
            raise doc.fail(item, "a sweep needs a 'name' and a 'grid'")
        sname = str(doc.scalar(s["name"][1], "a sweep's name"))
        if any(sw.name == sname for sw in sweeps):
            raise doc.fail(s["name"][1], f"two sweeps are named {sname!r}")
        grid: dict[str, list[Any]] = {}
        for param, (_k, v) in doc.mapping(s["grid"][1], f"the grid of sweep {sname!r}").items():
            values = doc.value(v)
            if not isinstance(values, list):
                values = [values]
            if not values:
                raise doc.fail(v, f"sweep {sname!r}: grid parameter {param!r} has no values")
            if len({json.dumps(x, sort_keys=True, default=str) for x in values}) != len(values):
                raise doc.fail(v, f"sweep {sname!r}: grid parameter {param!r} repeats a value")
            grid[param] = values
        sfixed = {}
        if "fixed" in s and not _null(s["fixed"][1]):
            doc.mapping(s["fixed"][1], f"the fixed parameters of sweep {sname!r}")
            sfixed = doc.value(s["fixed"][1])
        clash = set(grid) & set(sfixed)
        if clash:
            raise doc.fail(s["fixed"][1], f"sweep {sname!r}: {', '.join(sorted(clash))} is both in grid and fixed")
        desc = str(doc.scalar(s["description"][1], "description")) if "description" in s else ""
        sweeps.append(Sweep(sname, grid, sfixed, desc))
    plots: list[Plot] = []
    if "plots" in top and not _null(top["plots"][1]):
        pnode = top["plots"][1]
        if not isinstance(pnode, yaml.SequenceNode):
            raise doc.fail(pnode, "plots must be a list of {sweep, x, y, lines}")
        for item in pnode.value:
            p = doc.mapping(item, "a plot")
            _check_keys(doc, p, PLOT_KEYS, "a plot", strict=True)
            for key in ("sweep", "x", "y"):
                if key not in p:
                    raise doc.fail(item, f"a plot needs {key!r}")
            sweep_name = str(doc.scalar(p["sweep"][1], "sweep"))
            match = [s for s in sweeps if s.name == sweep_name]
            if not match:
                raise doc.fail(p["sweep"][1], f"plot of unknown sweep {sweep_name!r} (sweeps: {', '.join(s.name for s in sweeps)})")
            x = str(doc.scalar(p["x"][1], "x"))
            if x not in match[0].grid:
                raise doc.fail(p["x"][1], f"plot x {x!r} is not a grid parameter of sweep {sweep_name!r} ({', '.join(match[0].grid)})")
            lines = _names(doc, p["lines"][1], "lines") if "lines" in p and not _null(p["lines"][1]) else []
            for ln in lines:
                if ln not in match[0].grid:
                    raise doc.fail(p["lines"][1], f"plot lines {ln!r} is not a grid parameter of sweep {sweep_name!r}")
            opts: dict[str, Any] = {}
            for key in ("logx", "logy"):
                if key in p:
                    v = doc.scalar(p[key][1], key)
                    if not isinstance(v, bool):
                        raise doc.fail(p[key][1], f"{key} must be true or false")
                    opts[key] = v
            for key in ("title", "xlabel", "ylabel", "file"):
                if key in p:
                    opts[key] = str(doc.scalar(p[key][1], key))
            plots.append(Plot(sweep_name, x, _names(doc, p["y"][1], "y"), lines, **opts))
    description = str(doc.scalar(top["description"][1], "description")) if "description" in top else ""
    notes = str(doc.scalar(top["notes"][1], "notes")) if "notes" in top else ""
    paper = doc.value(top["paper"][1]) if "paper" in top else None
    if not isinstance(fixed, dict):
        raise doc.fail(top["fixed"][1], "fixed must be a mapping")
    return Experiment(name, task, sweeps, repeats, description, fixed, plots, paper, notes, path)


def _null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def load_experiment(path: str | Path) -> Experiment:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ExperimentError(f"{p}: experiment file not found") from None
    except IsADirectoryError:
        raise ExperimentError(f"{p}: is a directory, expected an experiment YAML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ExperimentError(f"{p}: cannot read: {exc}") from None
    return parse_experiment(text, str(p))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def derive_seed(name: str, sweep: str, point: dict[str, Any], repeat: int) -> int:
    """A seed in [0, 2**32) from (experiment, sweep, grid point, repeat) — stable across reruns."""
    digest = hashlib.sha256(_canonical([name, sweep, point, repeat]).encode()).digest()
    return int.from_bytes(digest[:4], "big")


@dataclass(frozen=True)
class Run:
    """One cell of a sweep: a grid point and a repeat."""

    sweep: str
    point: dict[str, Any]
    params: dict[str, Any]
    repeat: int
    seed: int

    @property
    def run_id(self) -> str:
        return hashlib.sha256(_canonical([self.sweep, self.params, self.repeat, self.seed]).encode()).hexdigest()[:16]


def expand(exp: Experiment, repeats: int | None = None) -> list[Run]:
    """Every run of the experiment: sweeps × grid points × repeats (repeat fastest)."""
    n = exp.repeats if repeats is None else repeats
    runs = []
    for sweep in exp.sweeps:
        for point in sweep.points():
            params = {**exp.fixed, **sweep.fixed, **point}
            for r in range(n):
                runs.append(Run(sweep.name, point, params, r, derive_seed(exp.name, sweep.name, point, r)))
    return runs


def grid_params(exp: Experiment) -> list[str]:
    """Every grid parameter of every sweep, in order of first appearance."""
    out: list[str] = []
    for s in exp.sweeps:
        out.extend(p for p in s.grid if p not in out)
    return out


def resolve_task(task: str) -> Callable[[dict[str, Any], int], dict[str, float]]:
    """The ``run_experiment`` function of a task name, module path or ``module:function``."""
    spec = TASKS.get(task, task)
    if callable(spec):
        return spec
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise DpkitError(f"task {task!r}: module {module_name} is not available in this version of dpkit") from None
        raise
    fn = getattr(module, attr or "run_experiment", None)
    if not callable(fn):
        raise DpkitError(f"task {task!r}: {module_name} has no function {attr or 'run_experiment'}")
    return fn
