"""The ledger as ``dpkit budget status|history`` prints it: rows laid out as tables (docs/ledger.md).
Only layout: the rows come from :class:`dpkit.Ledger`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpkit import Ledger

#: a table: (title, header, rows), every cell a string
Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]


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
