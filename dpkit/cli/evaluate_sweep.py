"""`dpkit evaluate sweep` — run an experiment YAML's grid and write tables and plots."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options, say


@click.command(name="sweep", context_settings=CONTEXT_SETTINGS,
               short_help="Run an experiment YAML into results, summary tables and plots.")
@click.argument("experiment", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="Directory for results.csv, summary.csv, summary.md and the PNG plots (created if missing).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes [default: the number of CPUs].")
@click.option("--repeats", type=click.IntRange(min=1), default=None, metavar="N",
              help="Runs per grid point, overriding the YAML's repeats.")
@click.option("--dry-run", is_flag=True,
              help="Print the runs per sweep (and how many are already done) on stdout; run nothing.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the outcome (or the --dry-run plan) as one JSON object on stdout.")
@global_options
def command(experiment: str, output: str, jobs: int | None, repeats: int | None, dry_run: bool,
            as_json: bool) -> None:
    """Run every cell of an experiment (sweeps × grid points × repeats), each an in-process
    dpkit run with a seed derived from the experiment, sweep, grid point and repeat.

    Writes DIR/results.csv (one row per run, appended as runs finish), DIR/summary.csv
    (mean, sd, n per grid point and metric), DIR/*.png and DIR/summary.md (tables, the
    paper's numbers beside ours, the plots). results.csv is a journal: rerunning the same
    command skips the runs already in it, so an interrupted sweep resumes where it
    stopped; so does one ended by Ctrl-C or SIGTERM (exit 130/143; the worker processes
    are stopped with it). Progress goes to stderr (a bar on a terminal); -q for cron;
    --json prints the outcome on stdout. The YAML format is in docs/formats.md.

    \b
    Example:
      dpkit evaluate sweep configs/experiments/maxgddp-adult.yaml -o results/maxgddp-adult
      dpkit evaluate sweep configs/experiments/maxgddp-adult.yaml -o /tmp/try --repeats 2 -j 2
    """
    import json
    import sys
    import warnings
    from pathlib import Path

    from dpkit import load_experiment, plan_sweep, run_sweep
    from dpkit.errors import DataError, DpkitError, DpkitWarning

    exp = load_experiment(experiment)
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise DataError(f"{output}: exists and is not a directory")
    if dry_run:
        rows = plan_sweep(exp, out, repeats)
        if as_json:
            click.echo(json.dumps({"experiment": exp.name, "output": str(out), "dry_run": True,
                                   "sweeps": rows}, indent=2, ensure_ascii=False))
            return
        keys = ("sweep", "points", "runs", "done", "todo")
        total = {k: sum(r[k] for r in rows) for k in keys[1:]}
        for r in [dict(zip(keys, keys, strict=True)), *rows, {"sweep": "total", **total}]:
            click.echo("\t".join(str(r[k]) for k in keys))
        return
    from dpkit.cli.options import quiet

    bar, progress = _progress_bar(exp.name) if not quiet() and sys.stderr.isatty() else (None, None)
    try:
        result = run_sweep(exp, out, jobs=jobs, repeats=repeats, progress=progress)
    finally:
        if bar is not None and bar.live.is_started:
            bar.stop()
    for message in result.warnings:
        warnings.warn(f"(in runs) {message}", DpkitWarning, stacklevel=1)
    if as_json:
        click.echo(json.dumps({
            "experiment": exp.name, "output": str(out), "runs": result.total, "executed": result.executed,
            "skipped": result.skipped, "failed": len(result.failed), "seconds": round(result.seconds, 3),
            "results": str(out / "results.csv"), "summary": str(out / "summary.md"),
        }, indent=2, ensure_ascii=False))
    else:
        say(f"dpkit: {exp.name}: {result.executed} run(s) executed, {result.skipped} already in "
            f"{out / 'results.csv'}, {len(result.failed)} failed, {result.seconds:.1f} s; summary: {out / 'summary.md'}")
    if result.failed:
        raise DpkitError(result.failure())


def _progress_bar(name: str) -> tuple:
    """A rich progress bar on stderr (``(bar, update)``). It starts at the first
    ``update(done, total)``: a sweep calls it once its worker processes are forked, so no
    rendering thread exists when they fork."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn(f"[bold]{name}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("eta"), TimeRemainingColumn(), console=Console(stderr=True), transient=False)
    task_id = bar.add_task("runs", total=None)

    def update(done: int, total: int) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(task_id, completed=done, total=total)

    return bar, update
