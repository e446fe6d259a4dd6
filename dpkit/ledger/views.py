"""What the ledger tells: what each data set has spent, held and has left, and its history.

:class:`LedgerViews` holds the counting rules every verdict and every view shares — ε (or δ)
used against a cap (:meth:`LedgerViews._used`: the runs by status plus what open
reservations hold beyond their runs), the reservations whose holder died given back
(:meth:`LedgerViews.reclaim`) — and the read side of ``dpkit budget``: :meth:`~LedgerViews.status`,
:meth:`~LedgerViews.history`, :meth:`~LedgerViews.reservations`, :meth:`~LedgerViews.refusals`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sqlite3
from dataclasses import dataclass
from typing import Any

from dpkit.errors import LedgerError
from dpkit.ledger.file import LedgerFile
from dpkit.ledger.reservation import _alive
from dpkit.ledger.schema import _BUDGETS, _COUNTED, _DELTA_COUNTED, _now


@dataclass(frozen=True)
class DatasetStatus:
    name: str
    cap: float
    spent: float  # complete runs (actual ε) + lost runs (their reservation)
    reserved: float  # runs in flight or killed
    remaining: float
    runs: int
    delta_cap: float | None = None  # None: δ is recorded, not capped
    delta_spent: float = 0.0  # δ counted by the same rule as ε (reserved and lost runs included)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "cap": self.cap, "spent": self.spent, "reserved": self.reserved,
            "remaining": self.remaining, "runs": self.runs,
            "delta_cap": self.delta_cap, "delta_spent": self.delta_spent,
        }


class LedgerViews(LedgerFile):
    """A ledger file's counting rules and views (the base of :class:`~dpkit.ledger.book.Ledger`)."""

    @staticmethod
    def _used(con: sqlite3.Connection, dataset_id: int, budget: str = "epsilon") -> float:
        """ε (or δ) counted against the cap: every run (by status) plus what open reservations
        hold beyond the runs already drawn from them."""
        counted = _BUDGETS[budget][0]
        (used,) = con.execute(
            f"SELECT COALESCE(SUM({counted}), 0.0) FROM runs WHERE dataset_id = ?", (dataset_id,)
        ).fetchone()
        return float(used) + LedgerViews._held(con, dataset_id, budget)

    @staticmethod
    def _held(con: sqlite3.Connection, dataset_id: int, budget: str = "epsilon") -> float:
        counted, reserved = _BUDGETS[budget]
        (held,) = con.execute(
            f"""SELECT COALESCE(SUM(MAX(g.{reserved} - COALESCE(
                    (SELECT SUM({counted}) FROM runs r WHERE r.group_id = g.id), 0.0), 0.0)), 0.0)
                FROM groups g WHERE g.dataset_id = ? AND g.status = 'open'""", (dataset_id,)).fetchone()
        return float(held)

    @staticmethod
    def _delta_room(con: sqlite3.Connection, dataset_id: int) -> tuple[float | None, float]:
        """(δ cap or None, δ used) of a data set."""
        (cap,) = con.execute("SELECT delta_cap FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
        return (None if cap is None else float(cap)), LedgerViews._used(con, dataset_id, "delta")

    def _reclaim(self, con: sqlite3.Connection) -> None:
        """Close the open reservations of this host whose holder process is gone (a
        ``budget run`` killed with SIGKILL): what they held beyond their runs comes back."""
        host = socket.gethostname()
        for gid, pid, start in con.execute(
                "SELECT id, pid, pid_start FROM groups WHERE status = 'open' AND host = ?", (host,)).fetchall():
            if pid is not None and not _alive(int(pid), start):
                con.execute("UPDATE groups SET status = 'closed', finished = ?, reason = ? WHERE id = ?",
                            (_now(), f"holder process {pid} ended without closing it", gid))

    def reclaim(self) -> None:
        """Close the reservations whose holder died (see :meth:`_reclaim`)."""
        with contextlib.suppress(LedgerError):  # a read-only ledger: nothing to reclaim here
            with self._write() as con:
                self._reclaim(con)

    # ------------------------------------------------------------------ reading

    def status(self) -> list[DatasetStatus]:
        """Cap, spent, reserved and remaining ε of every data set."""
        self.reclaim()
        with self._connect() as con:
            rows = con.execute(
                f"""SELECT d.id, d.name, d.cap,
                    COALESCE(SUM(CASE WHEN r.status != 'reserved' THEN {_COUNTED} END), 0.0),
                    COALESCE(SUM(CASE WHEN r.status = 'reserved' THEN r.epsilon_reserved END), 0.0),
                    COUNT(r.id), d.delta_cap, COALESCE(SUM({_DELTA_COUNTED}), 0.0)
                FROM datasets d LEFT JOIN runs r ON r.dataset_id = d.id
                GROUP BY d.id ORDER BY d.name"""
            ).fetchall()
            # an open reservation's unspent part counts as reserved
            held = {int(i): self._held(con, int(i)) for i, *_ in rows}
        return [
            DatasetStatus(n, cap, spent, res + held[i], max(cap - spent - res - held[i], 0.0), int(k),
                          None if dcap is None else float(dcap), float(dspent))
            for i, n, cap, spent, res, k, dcap, dspent in rows
        ]

    def history(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every run, oldest first (optionally of one data set)."""
        self.reclaim()
        with self._connect() as con:
            if name is not None and con.execute(
                    "SELECT 1 FROM datasets WHERE name = ?", (name,)).fetchone() is None:
                raise LedgerError(f"no data set named {name!r} in {self.path}")
            rows = con.execute(
                f"""SELECT r.id, d.name, r.started, r.finished, r.command, r.epsilon_reserved,
                    r.epsilon_spent, {_COUNTED}, r.status, r.outputs, r.report, r.reason, r.pid, r.group_id,
                    r.delta_reserved, {_DELTA_COUNTED}
                FROM runs r JOIN datasets d ON d.id = r.dataset_id
                WHERE (? IS NULL OR d.name = ?) ORDER BY r.id""",
                (name, name),
            ).fetchall()
        keys = ("id", "dataset", "started", "finished", "command", "epsilon_reserved",
                "epsilon_spent", "epsilon_counted", "status", "outputs", "report", "reason", "pid", "group",
                "delta_reserved", "delta_counted")
        out = []
        for row in rows:
            d = dict(zip(keys, row, strict=True))
            d["outputs"] = json.loads(d["outputs"])
            out.append(d)
        return out

    def reservations(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every reservation group (``budget run``, ``with ledger.reserve(...)``), oldest first:
        its command, ε reserved, ε its runs counted, status and, when closed, why."""
        with self._connect() as con:
            rows = con.execute(
                f"""SELECT g.id, d.name, g.started, g.finished, g.command, g.epsilon_reserved,
                    COALESCE((SELECT SUM({_COUNTED}) FROM runs r WHERE r.group_id = g.id), 0.0),
                    g.status, g.reason, g.pid, g.delta_reserved
                FROM groups g JOIN datasets d ON d.id = g.dataset_id
                WHERE (? IS NULL OR d.name = ?) ORDER BY g.id""", (name, name)).fetchall()
        keys = ("id", "dataset", "started", "finished", "command", "epsilon_reserved", "epsilon_counted",
                "status", "reason", "pid", "delta_reserved")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def refusals(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every refused attempt, oldest first: when, command, ε asked, why."""
        with self._connect() as con:
            rows = con.execute("SELECT id, dataset, at, command, epsilon, reason FROM refusals "
                               "WHERE (? IS NULL OR dataset = ?) ORDER BY id", (name, name)).fetchall()
        keys = ("id", "dataset", "at", "command", "epsilon", "reason")
        return [dict(zip(keys, row, strict=True)) for row in rows]
