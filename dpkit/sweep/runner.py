"""Running a sweep: the runs missing from the journal, in a process pool, then the summary files."""

from __future__ import annotations

import contextlib
import os
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpkit.errors import DpkitError, DpkitWarning, warn
from dpkit.sweep.journal import Journal
from dpkit.sweep.spec import Experiment, Run, expand, grid_params, resolve_task
from dpkit.sweep.summary import write_outputs


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


def plan_sweep(exp: Experiment, out_dir: str | Path, repeats: int | None = None) -> list[dict[str, Any]]:
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

    def failure(self) -> str | None:
        """Why the sweep failed (how many runs, the first one's error), None when none did."""
        if not self.failed:
            return None
        run, error = self.failed[0]
        point = ", ".join(f"{k}={v}" for k, v in run.point.items())
        return (f"{len(self.failed)} of {self.executed} run(s) failed; first: sweep {run.sweep!r} ({point}, "
                f"repeat {run.repeat}): {error} — rerun the command to retry only those")


def run_sweep(
    exp: Experiment,
    out_dir: str | Path,
    *,
    jobs: int | None = None,
    repeats: int | None = None,
    progress: bool | Callable[[int, int], Any] | None = None,
    on_run: Callable[[Run], Any] | None = None,
    plots: bool = True,
) -> SweepOutcome:
    """Execute the runs missing from ``out_dir/results.csv``, then write the summary files.

    ``jobs`` worker processes (default: the CPU count; 1 = in this process, no pool).
    ``progress=True`` shows a progress bar on stderr when it is a terminal; a callable
    ``progress(done, total)`` is called instead once the workers are up and as runs finish (a
    caller may start a progress bar's thread at its first call); ``on_run(run)`` before each run is
    submitted (tests count executions with it). ``plots=False`` skips the PNGs.
    """
    from dpkit.console import progress_bar

    out = prepare_output(out_dir)
    bar, update = progress_bar(exp.name) if progress is True else (None, progress or None)
    try:
        with _lock(out):
            return _run_locked(exp, out, jobs=jobs, repeats=repeats, progress=update, on_run=on_run, plots=plots)
    finally:
        if bar is not None and bar.live.is_started:
            bar.stop()


def prepare_output(out_dir: str | Path) -> Path:
    """Create ``out_dir`` if missing and check that files can be created in it.

    Checked before any run starts, as every command checks its ``-o`` (docs/errors.md):
    one line naming the directory, exit 1 — not a traceback from the first journal write.
    """
    import tempfile

    from dpkit.errors import DataError

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DataError(f"{out}: exists and is not a directory; give a directory as the output", param="output")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"{out}: cannot create the directory ({exc.strerror}); "
                        "give an output directory you can write", param="output") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".dpkit-probe.", dir=out)
    except OSError:
        raise DataError(f"{out}: directory {out} is not writable; give an output directory you can write",
                        param="output") from None
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
        warn(f"{journal.path}: cut off a partial last line (an interrupted run); it will be redone", DpkitWarning)
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
