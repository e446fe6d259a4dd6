"""`dpkit budget` — the privacy ledger: ε spent on each data set across runs (docs/ledger.md)."""

from __future__ import annotations

import click

from dpkit.cli.options import CONTEXT_SETTINGS, global_options, json_option, say

_ledger_option = click.option("--ledger", type=click.Path(dir_okay=False), envvar="DPKIT_LEDGER", default=None,
                              help="The ledger file (SQLite); also $DPKIT_LEDGER.")


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
@global_options
def init(data: str, name: str, cap: str | None, append: bool, exist_ok: bool, delta_cap: str | None,
         ledger: str | None) -> None:
    """Register DATA (a file, or a directory of Parquet or CSV files; by a sha256 fingerprint of its
    bytes) with a total ε cap.

    Creates the ledger file (mode 0600) if it does not exist.

    \b
    Example:
      dpkit budget init sample_data/adult/train.csv --name adult --cap 4 --ledger ledger.db
    """
    from dpkit import register_dataset

    path = _need_ledger(ledger)
    status = register_dataset(path, data, name, cap, append=append, exist_ok=exist_ok, delta_cap=delta_cap)
    say(f"dpkit: registered {data} as data set {name!r} (cap ε={status.cap:g}, remaining {status.remaining:g}) "
        f"in {path}")


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
    from dpkit import check_budget

    fits, left, eps = check_budget(_need_ledger(ledger), epsilon, name)
    say(f"dpkit: epsilon={eps:g} {'fits' if fits else 'does not fit'}: {left:.6g} remaining")
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
    from dpkit import run_in_reservation

    code = run_in_reservation(_need_ledger(ledger), epsilon, argv, name=name, delta=delta)
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
    from dpkit import Ledger
    from dpkit.cli.budget_tables import status_table
    from dpkit.cli.results import emit

    rows = Ledger(_need_ledger(ledger)).status()
    emit(as_json, [r.to_dict() for r in rows], [status_table(rows)])


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
    import sys

    from dpkit import Ledger, budget_events
    from dpkit.cli.budget_tables import history_tables
    from dpkit.cli.results import emit, show

    book = Ledger(_need_ledger(ledger))
    if as_json:
        return emit(True, budget_events(book, name))
    show(history_tables(book, name, compact=sys.stdout.isatty()))
