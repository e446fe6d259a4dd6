"""Experiment sweeps: a YAML grid of dpkit runs → results.csv, summary.csv, plots, summary.md.

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

import contextlib
import csv
import hashlib
import importlib
import io
import json
import math
import os
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from dpkit.errors import DpkitError, DpkitUsageError, DpkitWarning

TASKS: dict[str, str | Callable[[dict[str, Any], int], dict[str, float]]] = {
    "publish": "dpkit.release.experiment",
    "forest": "dpkit.learn.experiment",
    "cluster": "dpkit.kmeans.experiment",
    "kanon-select": "dpkit.anonymity.experiment",
}

TOP_KEYS = ("name", "task", "description", "repeats", "fixed", "sweeps", "plots", "paper", "notes")
SWEEP_KEYS = ("name", "grid", "fixed", "description")
PLOT_KEYS = ("sweep", "x", "y", "lines", "logx", "logy", "title", "xlabel", "ylabel", "file")
BOOK_COLUMNS = ("run_id", "sweep", "repeat", "seed")
TAIL_COLUMNS = ("wall_seconds",)


class ExperimentError(DpkitUsageError):
    """A malformed experiment YAML (the message names file, line and column)."""


def register_task(name: str, task: str | Callable[[dict[str, Any], int], dict[str, float]]) -> None:
    """Add a task: a module path (with ``run_experiment``), ``module:function``, or a callable."""
    TASKS[name] = task


# --------------------------------------------------------------------------- the YAML


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
            warnings.warn(f"{doc.path}:{m.line + 1}:{m.column + 1}: {msg}; ignored", DpkitWarning, stacklevel=3)


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


# --------------------------------------------------------------------------- runs


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


def _execute(task: str, params: dict[str, Any], seed: int) -> tuple[dict[str, float] | None, float, str | None, list[str]]:
    """Run one cell (in a worker process): (metrics, wall seconds, error, warnings)."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn = resolve_task(task)
            out = fn(dict(params), seed)
            metrics = _check_metrics(out)
            error = None
        except DpkitError as exc:
            metrics, error = None, str(exc)
        except Exception as exc:  # report the bug with its origin; the sweep goes on
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            metrics, error = None, f"{type(exc).__name__}: {exc} (at {Path(frame.filename).name}:{frame.lineno})"
    seen = list(dict.fromkeys(str(w.message) for w in caught))
    return metrics, time.perf_counter() - start, error, seen


def _check_metrics(out: Any) -> dict[str, float]:
    if not isinstance(out, dict) or not out:
        raise TypeError(f"run_experiment must return a non-empty dict of metrics, got {type(out).__name__}")
    metrics = {}
    for k, v in out.items():
        try:
            metrics[str(k)] = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"metric {k!r} is not a number ({v!r})") from None
    return metrics


# --------------------------------------------------------------------------- the journal


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (list, dict)):
        return _canonical(value)
    return "" if value is None else str(value)


class Journal:
    """``results.csv``: one row per finished run, appended and flushed as runs finish."""

    def __init__(self, path: Path, params: list[str]) -> None:
        self.path = path
        self.params = params
        self.header: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.torn = False
        if path.exists():
            self._load()

    def _load(self) -> None:
        raw = self.path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            # killed in the middle of a write: drop the partial last line
            raw = raw[: raw.rfind(b"\n") + 1]
            self.torn = True
            with open(self.path, "wb") as fh:
                fh.write(raw)
        text = raw.decode("utf-8")
        if not text.strip():
            return
        reader = csv.DictReader(io.StringIO(text))
        self.header = list(reader.fieldnames or [])
        if "run_id" not in self.header:
            raise DpkitError(f"{self.path}: not a dpkit results journal (no run_id column); use another -o directory")
        self.rows = [row for row in reader if row.get("run_id")]

    def done(self) -> set[str]:
        return {row["run_id"] for row in self.rows}

    def append(self, run: Run, metrics: dict[str, float], wall: float) -> None:
        row = {"run_id": run.run_id, "sweep": run.sweep, "repeat": str(run.repeat), "seed": str(run.seed)}
        # a grid parameter of another sweep may be fixed in this one: show its value too
        row.update({p: _cell(run.params[p]) if p in run.params else "" for p in self.params})
        for k, v in metrics.items():
            if k in row:
                k = f"metric_{k}"
            row[k] = _cell(v)
        row["wall_seconds"] = f"{wall:.4f}"
        self.rows.append(row)
        wanted = list(BOOK_COLUMNS) + [p for p in self.params] + [k for k in row if k not in BOOK_COLUMNS and k not in self.params and k not in TAIL_COLUMNS] + list(TAIL_COLUMNS)
        new_columns = [c for c in wanted if c not in self.header]
        if not self.header or new_columns:
            # a new metric (or a first row): rewrite the file with the wider header
            keep = [c for c in self.header if c not in TAIL_COLUMNS]
            self.header = keep + [c for c in wanted if c not in keep and c not in TAIL_COLUMNS] + list(TAIL_COLUMNS)
            from dpkit.data.table import atomic_output

            with atomic_output(self.path) as fh:
                w = csv.DictWriter(fh, self.header, lineterminator="\n")
                w.writeheader()
                w.writerows({c: r.get(c, "") for c in self.header} for r in self.rows)
                fh.flush()
                os.fsync(fh.fileno())  # the journal must survive a crash right after
            return
        with open(self.path, "a", encoding="utf-8", newline="") as fh:
            csv.DictWriter(fh, self.header, lineterminator="\n").writerow({c: row.get(c, "") for c in self.header})
            fh.flush()
            os.fsync(fh.fileno())


# --------------------------------------------------------------------------- running


def plan(exp: Experiment, out_dir: str | Path, repeats: int | None = None) -> list[dict[str, Any]]:
    """Per sweep: grid points, runs, and how many are already in ``out_dir/results.csv``."""
    runs = expand(exp, repeats)
    path = Path(out_dir) / "results.csv"
    done = Journal(path, grid_params(exp)).done() if path.is_file() and path.stat().st_size else set()
    out = []
    for sweep in exp.sweeps:
        mine = [r for r in runs if r.sweep == sweep.name]
        finished = sum(r.run_id in done for r in mine)
        out.append({"sweep": sweep.name, "points": len(sweep.points()), "runs": len(mine),
                    "done": finished, "todo": len(mine) - finished})
    return out



@dataclass
class SweepOutcome:
    total: int
    skipped: int
    executed: int
    failed: list[tuple[Run, str]]
    warnings: list[str]
    seconds: float


def run_sweep(
    exp: Experiment,
    out_dir: str | Path,
    *,
    jobs: int | None = None,
    repeats: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    on_run: Callable[[Run], Any] | None = None,
    plots: bool = True,
) -> SweepOutcome:
    """Execute the runs missing from ``out_dir/results.csv``, then write the summary files.

    ``jobs`` worker processes (default: the CPU count; 1 = in this process, no pool).
    ``progress(done, total)`` is called once the workers are up and as runs finish (a
    caller may start a progress bar's thread at its first call); ``on_run(run)`` before each run is
    submitted (tests count executions with it). ``plots=False`` skips the PNGs.
    """
    out = prepare_output(out_dir)
    with _lock(out):
        return _run_locked(exp, out, jobs=jobs, repeats=repeats, progress=progress, on_run=on_run, plots=plots)


def prepare_output(out_dir: str | Path) -> Path:
    """Create ``out_dir`` if missing and check that files can be created in it.

    Checked before any run starts, as every command checks its ``-o`` (docs/errors.md):
    one line naming the directory, exit 1 — not a traceback from the first journal write.
    """
    import tempfile

    from dpkit.errors import DataError

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a directory; give a directory for -o")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{out}: cannot create the directory ({exc.strerror}); "
                        "give -o a directory you can write") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".dpkit-probe.", dir=out)
    except OSError:
        raise DataError(f"{out}: directory {out} is not writable; give -o a directory you can write") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return out


@contextlib.contextmanager
def _lock(out: Path) -> Iterator[None]:
    """One sweep at a time per directory (two cron jobs would write the journal twice)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    with open(out / ".sweep.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise DpkitError(f"{out}: another 'dpkit evaluate sweep' is writing this directory; wait for it to finish") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run_locked(
    exp: Experiment,
    out: Path,
    *,
    jobs: int | None,
    repeats: int | None,
    progress: Callable[[int, int], Any] | None,
    on_run: Callable[[Run], Any] | None,
    plots: bool,
) -> SweepOutcome:
    runs = expand(exp, repeats)
    journal = Journal(out / "results.csv", grid_params(exp))
    if journal.torn:
        warnings.warn(f"{journal.path}: cut off a partial last line (an interrupted run); it will be redone", DpkitWarning, stacklevel=2)
    done = journal.done()
    todo = [r for r in runs if r.run_id not in done]
    total = len(runs)
    finished = total - len(todo)
    jobs = max(1, jobs or os.cpu_count() or 1)
    failed: list[tuple[Run, str]] = []
    seen_warnings: dict[str, None] = {}
    start = time.perf_counter()
    if todo:
        # check the task exists before starting a pool (one clear error instead of N)
        resolve_task(exp.task)

    def finish(run: Run, result: tuple[dict[str, float] | None, float, str | None, list[str]]) -> None:
        nonlocal finished
        metrics, wall, error, warns = result
        for w in warns:
            seen_warnings.setdefault(w)
        if error is not None or metrics is None:
            failed.append((run, error or "no metrics"))
        else:
            journal.append(run, metrics, wall)
        finished += 1
        if progress:
            progress(finished, total)

    if jobs == 1 or len(todo) <= 1:
        if progress:
            progress(finished, total)
        for run in todo:
            if on_run:
                on_run(run)
            finish(run, _execute(exp.task, run.params, run.seed))
    else:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        # fork: workers start at once and inherit registered tasks; one BLAS/OpenMP thread
        # per worker so that N workers do not oversubscribe N cores
        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=context, initializer=_worker_init)
        with _workers_die_with(pool):
            pending = {}
            queue = iter(todo)

            def submit(n: int) -> None:
                for run in _take(queue, n):
                    if on_run:
                        on_run(run)
                    pending[pool.submit(_execute, exp.task, run.params, run.seed)] = run

            # start every worker now (fork spawns them all at the first submit), before the
            # caller's progress bar starts its refresh thread: forking a process with a live
            # thread can leave a lock (stderr's) held forever in the child
            pool.submit(_noop).result()
            if progress:
                progress(finished, total)
            # keep at most 2 runs per worker queued, so an interrupt loses little
            submit(2 * jobs)
            while pending:
                finished_set, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished_set:
                    finish(pending.pop(fut), fut.result())
                    submit(len(finished_set))
    outcome = SweepOutcome(total, total - len(todo), len(todo), failed, list(seen_warnings), time.perf_counter() - start)
    from dpkit.evaluate.summary import write_outputs

    write_outputs(exp, out, journal, runs, plots=plots)
    return outcome


def _noop() -> None:
    return None


@contextlib.contextmanager
def _workers_die_with(pool: Any) -> Iterator[None]:
    """Shut ``pool`` down; on Ctrl-C, SIGTERM or an error, kill its workers first.

    A plain ``shutdown`` waits for the runs in progress (minutes), and a parent killed by
    SIGTERM left its workers orphaned, holding the caller's stderr open. Runs already
    journaled stay: the next invocation resumes after them.
    """
    try:
        yield
    except BaseException:
        # not cancel_futures: Python 3.11's pool then fails on the cancelled futures
        # ("InvalidStateError" from its manager thread); the broken pool settles them
        _terminate_workers(pool)
        pool.shutdown(wait=False)
        raise
    pool.shutdown(wait=True)


def _terminate_workers(pool: Any) -> None:
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    # older Pythons have no public way to stop a running worker: the pool's process table
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.terminate()
    deadline = time.monotonic() + 5
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()


def _die_with_parent() -> None:
    """Linux: the kernel sends this worker SIGKILL when the sweep process dies, however it dies."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9


def _worker_init() -> None:
    import signal

    # the parent's SIGTERM handler (raise, clean up, exit 143) is not the worker's job:
    # a worker told to stop just stops; the parent journals only finished runs
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _die_with_parent()
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
        pass


def _take(it: Iterator[Run], n: int) -> list[Run]:
    out = []
    for _ in range(n):
        try:
            out.append(next(it))
        except StopIteration:
            break
    return out
