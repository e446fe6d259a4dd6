"""`dpkit budget` — the privacy ledger: ε spent on each data set across runs (docs/ledger.md)."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options, json_option, state_for


def _ledger_option(f):  # noqa: ANN001, ANN202
    return click.option(
        "--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
        help="The ledger file (SQLite); also $DPKIT_LEDGER.",
    )(f)


def _need_ledger(ledger: str | None) -> str:
    if not ledger:
        raise click.UsageError("give the ledger with --ledger PATH or $DPKIT_LEDGER")
    return ledger


@click.group(name="budget", context_settings=CONTEXT_SETTINGS)
@global_options
def command() -> None:
    """The privacy ledger: caps the ε spent on each data set across all runs.

    Register a data set once with `budget init`; then run privacy commands with
    --ledger (or $DPKIT_LEDGER): each run reserves its ε before touching the data and
    is refused (exit 1, nothing written) when the data set's cap would be passed.
    The ledger holds fingerprints of your private files: keep it private.

    \b
    Example:
      dpkit budget init sample_data/adult/train.csv --name adult --cap 4 --ledger ledger.db
      dpkit publish sample_data/adult/train.csv ... --epsilon 1 --ledger ledger.db
      dpkit budget status --ledger ledger.db
    """


@command.command(name="init", context_settings=CONTEXT_SETTINGS)
@click.argument("data", type=click.Path(dir_okay=False))
@click.option("--name", required=True, help="A name for the data set (e.g. adult).")
@click.option("--cap", type=str, default=None, metavar="ε",
              help="Total ε that may ever be spent on this data set.")
@click.option("--append", is_flag=True,
              help="DATA is a new version of the existing data set NAME: share its cap and spending.")
@click.option("--exist-ok", is_flag=True,
              help="DATA is already registered as NAME with this cap: exit 0, change nothing (a setup "
              "script may run every night); another cap is still an error. With --append and --cap: "
              "create NAME if it is new, else add DATA as its next version.")
@click.option("--delta-cap", type=str, default=None, metavar="δ",
              help="Total δ that the (ε, δ) runs on this data set may spend (e.g. runs with no --schema); "
              "without it δ is recorded per run but not capped.")
@_ledger_option
@global_options
def init(data: str, name: str, cap: str | None, append: bool, exist_ok: bool, delta_cap: str | None,
         ledger: str | None) -> None:
    """Register DATA (by a sha256 fingerprint of its bytes) with a total ε cap.

    Creates the ledger file (mode 0600) if it does not exist.

    \b
    Example:
      dpkit budget init sample_data/adult/train.csv --name adult --cap 4 --ledger ledger.db
    """
    from dpkit.ledger import Ledger

    path = _need_ledger(ledger)
    from pathlib import Path

    from dpkit.errors import DataError, DpkitUsageError
    from dpkit.ledger import _check_cap, _check_delta_cap

    # the arguments are checked before the ledger file is created: a refused init leaves
    # no new (empty) ledger behind
    if not Path(data).is_file():
        raise DataError(f"{data}: file not found")
    if cap is not None:
        _check_cap(cap)
    elif not append:
        raise DpkitUsageError("--cap is required to register a new data set")
    _check_delta_cap(delta_cap)
    # --append --exist-ok --cap C: the nightly rotation idiom (docs/cron.md): creates the data
    # set the first night, appends each new export, and is a no-op when run again
    book = Ledger(path, create=True)
    book.register(data, name, cap, append=append, exist_ok=exist_ok, delta_cap=delta_cap)
    status = {s.name: s for s in book.status()}[name]
    if state_for().quiet:
        return
    click.echo(
        f"dpkit: registered {data} as data set {name!r} (cap ε={status.cap:g}, "
        f"remaining {status.remaining:g}) in {path}",
        err=True,
    )


@command.command(name="check", context_settings=CONTEXT_SETTINGS)
@click.option("--epsilon", "--eps", "epsilon", required=True, metavar="ε", help="The ε a run would ask.")
@click.option("--name", default=None, help="The data set [default: the ledger's only one].")
@_ledger_option
@global_options
def check(epsilon: str, name: str | None, ledger: str | None) -> None:
    """Exit 0 if ε still fits in the data set's cap, 1 if not; nothing is booked.

    For Makefiles and scripts that decide before they start.

    \b
    Example:
      dpkit budget check --epsilon 2 --name adult --ledger ledger.db && make nightly
    """
    from dpkit.ledger import Ledger
    from dpkit.run import parse_epsilon

    eps = parse_epsilon(epsilon)
    fits, left = Ledger(_need_ledger(ledger)).fits(eps, name)
    if not state_for().quiet:
        click.echo(f"dpkit: epsilon={eps:g} {'fits' if fits else 'does not fit'}: {left:.6g} remaining", err=True)
    if not fits:
        raise SystemExit(1)


@command.command(name="run", context_settings={**CONTEXT_SETTINGS, "ignore_unknown_options": True})
@click.option("--epsilon", "--eps", "epsilon", required=True, metavar="ε",
              help="The ε reserved for the whole command (all of its dpkit runs).")
@click.option("--delta", default=None, metavar="δ",
              help="The δ reserved beside ε, for runs that spend δ (no --schema) [default: 0].")
@click.option("--name", default=None, help="The data set [default: the ledger's only one].")
@_ledger_option
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARGS]...")
@global_options
def run(epsilon: str, delta: str | None, name: str | None, ledger: str | None, argv: tuple[str, ...]) -> None:
    """Run CMD with ε reserved for it as a whole: all or nothing.

    The reservation is made before CMD starts; refused (exit 1), CMD never runs and the
    refusal is recorded. Every dpkit command inside draws from it ($DPKIT_LEDGER and
    $DPKIT_RESERVATION are set for CMD); one that would pass it is refused. When CMD ends —
    exit, crash, signal — the rest is returned. SIGTERM, SIGINT and SIGHUP are passed on to
    CMD. Exit status: CMD's, or 128+N when it ended on signal N.

    \b
    Example:
      dpkit budget run --epsilon 2 --name adult --ledger ledger.db -- make nightly
    """
    from dpkit.api.domain import check_delta
    from dpkit.budget_run import run_reserved
    from dpkit.run import parse_epsilon

    d = 0.0 if delta is None else check_delta(delta)
    code = run_reserved(_need_ledger(ledger), parse_epsilon(epsilon), list(argv), name=name, delta=d)
    if code:
        raise SystemExit(code)


@command.command(name="status", context_settings=CONTEXT_SETTINGS)
@_ledger_option
@json_option
@global_options
def status(ledger: str | None, as_json: bool) -> None:
    """Cap, spent, reserved and remaining ε of every registered data set.

    "reserved" is ε held by runs in progress, or by runs that were killed (it keeps
    counting: see docs/ledger.md).

    \b
    Example:
      dpkit budget status --ledger ledger.db --json
    """
    import json

    from dpkit.ledger import Ledger

    rows = Ledger(_need_ledger(ledger)).status()
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in rows], indent=2))
        return
    header = ("data set", "cap", "spent", "reserved", "remaining", "runs")
    table = [(r.name, f"{r.cap:g}", f"{r.spent:.6g}", f"{r.reserved:.6g}", f"{r.remaining:.6g}",
              str(r.runs)) for r in rows]
    if any(r.delta_cap is not None or r.delta_spent > 0 for r in rows):
        # δ columns only on a ledger that has (ε, δ) runs or a δ cap: pure-ε output is unchanged
        header += ("δ cap", "δ spent")
        table = [(*t, "-" if r.delta_cap is None else f"{r.delta_cap:g}", f"{r.delta_spent:.6g}")
                 for t, r in zip(table, rows, strict=True)]
    _print_table("privacy budget", header, table)


@command.command(name="history", context_settings=CONTEXT_SETTINGS)
@click.option("--name", default=None, help="Only the runs on this data set.")
@_ledger_option
@json_option
@global_options
def history(name: str | None, ledger: str | None, as_json: bool) -> None:
    """Every run recorded in the ledger: when, command, ε, status, outputs, report.

    Status is complete (ε counted as spent), lost (noise drawn, output not written:
    the reservation counts), aborted (failed before any noise: counts 0) or reserved
    (running, or killed: the reservation counts). Then the reservations of `budget run`
    (and their runs' group) and the refused attempts: when, command, ε asked, why.
    --json prints one list of events, each with a "kind": run, reservation or refusal.

    \b
    Example:
      dpkit budget history --name adult --ledger ledger.db
    """
    import json

    from dpkit.ledger import Ledger

    book = Ledger(_need_ledger(ledger))
    runs = book.history(name)
    groups, refused = book.reservations(name), book.refusals(name)
    if as_json:
        # one list of events: runs (as before), then reservations and refused attempts
        events = [{"kind": "run", **r} for r in runs] + [{"kind": "reservation", **g} for g in groups] + \
            [{"kind": "refusal", **r} for r in refused]
        click.echo(json.dumps(events, indent=2))
        return
    import os

    header = ("when (UTC)", "data set", "command", "ε reserved", "ε counted", "status",
              "outputs", "report")

    def short(path: str) -> str:
        # relative to the current directory when below it (full paths are in --json)
        rel = os.path.relpath(path) if path not in ("-", "") else path
        return path if rel.startswith("..") else rel

    table = []
    for r in runs:
        outs = [short(o) for o in r["outputs"] if o != r["report"]]
        table.append((
            r["started"].replace("T", " ").rstrip("Z")[:16], r["dataset"], r["command"],
            f"{r['epsilon_reserved']:g}", f"{r['epsilon_counted']:.6g}",
            r["status"] + (f" ({r['reason']})" if r["reason"] else ""),  # complete: "not private: …"
            ", ".join(outs) or "-", short(r["report"]) if r["report"] else "-",
        ))
    # on a terminal one ε column, "0.35 of 0.7" (counted of reserved), keeps 80 columns readable
    compact_header = ("when (UTC)", "data set", "command", "ε", "status", "outputs", "report")
    compact = [(*r[:3], r[4] if r[3] == r[4] else f"{r[4]} of {r[3]}", *r[5:]) for r in table]
    if any(r["delta_reserved"] for r in runs):
        # (ε, δ) runs: a δ column last (pure-ε ledgers print as before)
        header += ("δ counted",)
        table = [(*t, f"{r['delta_counted']:.6g}") for t, r in zip(table, runs, strict=True)]
        compact = [(*c[:3], c[3] + (f", δ={r['delta_counted']:.3g}" if r["delta_reserved"] else ""), *c[4:])
                   for c, r in zip(compact, runs, strict=True)]
    _print_table("ledger history", header, table, compact=(compact_header, compact))
    if groups:
        _print_table("reservations (budget run)", ("id", "when (UTC)", "data set", "command", "ε reserved",
                                                   "ε counted", "status"),
                     [(str(g["id"]), g["started"].replace("T", " ").rstrip("Z")[:16], g["dataset"], g["command"],
                       f"{g['epsilon_reserved']:g}" + (f", δ={g['delta_reserved']:g}" if g["delta_reserved"] else ""),
                       f"{g['epsilon_counted']:.6g}",
                       g["status"] + (f" ({g['reason']})" if g["reason"] else "")) for g in groups])
    if refused:
        _print_table("refused", ("when (UTC)", "data set", "command", "ε asked", "why"),
                     [(r["at"].replace("T", " ").rstrip("Z")[:16], r["dataset"] or "-", r["command"],
                       "-" if r["epsilon"] is None else f"{r['epsilon']:g}", r["reason"]) for r in refused])


def _print_table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]],
                 compact: tuple[tuple[str, ...], list[tuple[str, ...]]] | None = None) -> None:
    """A rich table on a terminal (``compact`` if given); tab-separated lines when piped."""
    import sys

    if sys.stdout.isatty():
        if compact is not None:
            header, rows = compact
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for h in header:
            # long cells (paths) fold; ε and status stay on one line
            table.add_column(h, overflow="fold", no_wrap=h in ("ε", "status"))
        for row in rows:
            table.add_row(*row)
        Console().print(table)
        return
    click.echo("\t".join(header))
    for row in rows:
        click.echo("\t".join(row))
