"""`dpkit budget` — the privacy ledger: ε spent on each data set across runs (docs/ledger.md).

The steps are :mod:`dpkit.api.budget`'s and the rows :class:`dpkit.Ledger`'s; this module lays
them out (``status`` and ``history`` as tables).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

import dpkit
from dpkit.cli.options import Table, dpkit_command, emit, json_option, say, show

if TYPE_CHECKING:
    from dpkit import Ledger


def _need_ledger(ctx: click.Context, param: click.Parameter, ledger: str | None) -> str | None:
    if not ledger:
        raise click.UsageError("give the ledger with --ledger PATH or $DPKIT_LEDGER")
    return ledger


#: --ledger, required (the flag or $DPKIT_LEDGER) by every budget command
_ledger_option = click.option("--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
                              callback=_need_ledger, help="The ledger file (SQLite); also $DPKIT_LEDGER.")


@dpkit_command("budget", cls=click.Group)
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


@dpkit_command("init", command)
@click.argument("data", type=click.Path())
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
def init(data: str, name: str, cap: str | None, ledger: str | None, **how: bool | str | None) -> None:
    """Register DATA (a file, or a directory of Parquet or CSV files; by a sha256 fingerprint of its
    bytes) with a total ε cap.

    Creates the ledger file (mode 0600) if it does not exist.

    \b
    Example:
      dpkit budget init sample_data/adult/train.csv --name adult --cap 4 --ledger ledger.db
    """
    status = dpkit.register_dataset(ledger, data, name, cap, **how)  # append, exist_ok, delta_cap
    say(f"dpkit: registered {data} as data set {name!r} (cap ε={status.cap:g}, remaining {status.remaining:g}) "
        f"in {ledger}")


@dpkit_command("check", command)
@click.option("--epsilon", "--eps", "epsilon", required=True, metavar="ε", help="The ε a run would ask.")
@click.option("--name", default=None, help="The data set [default: the ledger's only one].")
@_ledger_option
def check(epsilon: str, name: str | None, ledger: str | None) -> None:
    """Exit 0 if ε still fits in the data set's cap, 1 if not; nothing is booked.

    For Makefiles and scripts that decide before they start.

    \b
    Example:
      dpkit budget check --epsilon 2 --name adult --ledger ledger.db && make nightly
    """
    fits, left, eps = dpkit.check_budget(ledger, epsilon, name)
    say(f"dpkit: epsilon={eps:g} {'fits' if fits else 'does not fit'}: {left:.6g} remaining")
    if not fits:
        raise SystemExit(1)


@dpkit_command("run", command, context_settings={"ignore_unknown_options": True})
@click.option("--epsilon", "--eps", "epsilon", required=True, metavar="ε",
              help="The ε reserved for the whole command (all of its dpkit runs).")
@click.option("--delta", default=None, metavar="δ",
              help="The δ reserved beside ε, for runs that spend δ (no --schema) [default: 0].")
@click.option("--name", default=None, help="The data set [default: the ledger's only one].")
@_ledger_option
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARGS]...")
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
    code = dpkit.run_in_reservation(ledger, epsilon, argv, name=name, delta=delta)
    if code:
        raise SystemExit(code)


@dpkit_command("status", command)
@_ledger_option
@json_option
def status(ledger: str | None, as_json: bool) -> None:
    """Cap, spent, reserved and remaining ε of every registered data set.

    "reserved" is ε held by runs in progress, or by runs that were killed (it keeps
    counting: see docs/ledger.md).

    \b
    Example:
      dpkit budget status --ledger ledger.db --json
    """
    rows = dpkit.Ledger(ledger).status()
    emit(as_json, [r.to_dict() for r in rows], [status_table(rows)])


@dpkit_command("history", command)
@click.option("--name", default=None, help="Only the runs on this data set.")
@_ledger_option
@json_option
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
    import sys

    book = dpkit.Ledger(ledger)
    if as_json:
        return emit(True, dpkit.budget_events(book, name))
    show(history_tables(book, name, compact=sys.stdout.isatty()))


def status_table(rows: list[Any]) -> Table:
    """Cap, spent, reserved, remaining ε and runs per data set (rows of :meth:`Ledger.status`); δ columns only on a ledger with
    (ε, δ) runs or a δ cap (a pure-ε ledger prints as it always did)."""
    header: tuple[str, ...] = ("data set", "cap", "spent", "reserved", "remaining", "runs")
    table = [(r.name, f"{r.cap:g}", f"{r.spent:.6g}", f"{r.reserved:.6g}", f"{r.remaining:.6g}", str(r.runs))
             for r in rows]
    if any(r.delta_cap is not None or r.delta_spent > 0 for r in rows):
        header += ("δ cap", "δ spent")
        table = [(*t, "-" if r.delta_cap is None else f"{r.delta_cap:g}", f"{r.delta_spent:.6g}")
                 for t, r in zip(table, rows, strict=True)]
    return "privacy budget", header, table


def _when(stamp: str) -> str:
    return stamp.replace("T", " ").rstrip("Z")[:16]


def _short(path: str) -> str:
    # relative to the current directory when below it (full paths are in --json)
    rel = os.path.relpath(path) if path not in ("-", "") else path
    return path if rel.startswith("..") else rel


def history_tables(book: Ledger, name: str | None = None, *, compact: bool = False) -> list[Table]:
    """The runs, the reservations of ``budget run`` and the refused attempts, as tables.

    ``compact`` (a terminal): one ε column, "0.35 of 0.7" (counted of reserved), so 80 columns
    stay readable."""
    runs = book.history(name)
    header: tuple[str, ...] = ("when (UTC)", "data set", "command", "ε reserved", "ε counted", "status",
                               "outputs", "report")
    table = [(_when(r["started"]), r["dataset"], r["command"], f"{r['epsilon_reserved']:g}",
              f"{r['epsilon_counted']:.6g}", r["status"] + (f" ({r['reason']})" if r["reason"] else ""),
              ", ".join(_short(o) for o in r["outputs"] if o != r["report"]) or "-",
              _short(r["report"]) if r["report"] else "-") for r in runs]
    has_delta = any(r["delta_reserved"] for r in runs)
    if compact:
        header = ("when (UTC)", "data set", "command", "ε", "status", "outputs", "report")
        table = [(*t[:3], (t[4] if t[3] == t[4] else f"{t[4]} of {t[3]}")
                  + (f", δ={r['delta_counted']:.3g}" if has_delta and r["delta_reserved"] else ""), *t[5:])
                 for t, r in zip(table, runs, strict=True)]
    elif has_delta:
        # (ε, δ) runs: a δ column last (pure-ε ledgers print as before)
        header += ("δ counted",)
        table = [(*t, f"{r['delta_counted']:.6g}") for t, r in zip(table, runs, strict=True)]
    out: list[Table] = [("ledger history", header, table)]
    groups, refused = book.reservations(name), book.refusals(name)
    if groups:
        out.append(("reservations (budget run)",
                    ("id", "when (UTC)", "data set", "command", "ε reserved", "ε counted", "status"),
                    [(str(g["id"]), _when(g["started"]), g["dataset"], g["command"],
                      f"{g['epsilon_reserved']:g}" + (f", δ={g['delta_reserved']:g}" if g["delta_reserved"] else ""),
                      f"{g['epsilon_counted']:.6g}", g["status"] + (f" ({g['reason']})" if g["reason"] else ""))
                     for g in groups]))
    if refused:
        out.append(("refused", ("when (UTC)", "data set", "command", "ε asked", "why"),
                    [(_when(r["at"]), r["dataset"] or "-", r["command"],
                      "-" if r["epsilon"] is None else f"{r['epsilon']:g}", r["reason"]) for r in refused]))
    return out
