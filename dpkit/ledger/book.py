"""The privacy ledger: the ε spent on each data set across runs (format: docs/ledger.md).

A privacy guarantee is only meaningful over *all* releases of the same data: a cron job that
publishes every night spends ε every night. The ledger is one SQLite file (stdlib
``sqlite3``, no server) owned by the data owner. ``dpkit budget init`` registers a data set
by a content fingerprint (sha256 of the file's bytes) with a total ε cap; every privacy
command run with ``--ledger`` (or ``$DPKIT_LEDGER``) then

1. fingerprints its data file and finds the registered data set (:meth:`Ledger.check`,
   read-only, before the data is parsed: a run that cannot fit is refused having read
   nothing but the fingerprint);
2. *reserves* its whole ε in one ``BEGIN IMMEDIATE`` transaction (:meth:`Ledger.reserve`),
   so concurrent runs serialize on SQLite's write lock and can never together pass the cap;
3. on success records what the accountant actually spent (:meth:`Ledger.complete`; the
   unspent rest of the reservation is released); on an exception after a mechanism has drawn
   noise keeps the whole reservation as ``lost`` ("spent, output lost", :meth:`Ledger.fail`);
   an exception before any noise releases it (``aborted``, counts 0).

A killed process (``kill -9``, power loss) leaves its row ``reserved``; it keeps counting
against the cap forever — the noise may have been drawn and the output may exist — which
errs on the side of privacy. The fingerprints are private (a hash of the private input is a
membership oracle for anyone holding a candidate file): they live only here, never in a
report (docs/algorithms.md §0 rule 5); the file is created mode 0600.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpkit import validate
from dpkit.errors import BudgetExceeded, DpkitUsageError, LedgerError, warn
from dpkit.io.fingerprint import row_hashes
from dpkit.ledger.identity import _label, fingerprint
from dpkit.ledger.reservation import LEDGER_ENV, RESERVATION_ENV, Group, _start_time, refuse_nested
from dpkit.ledger.schema import (
    _COUNTED,
    _DELTA_COUNTED,
    _ROWSETS,
    ABORTED,
    COMPLETE,
    LOST,
    RESERVED,
    _now,
)
from dpkit.ledger.views import LedgerViews

#: relative tolerance when comparing ε sums against a cap (as the accountant's).
TOLERANCE = 1e-9


def _register_order(name: Any, data: Any, data_path: Any) -> tuple[Any, Any]:
    """(name, data) of a :meth:`Ledger.register` call, in 0.5's order ``(name, data, cap)`` or,
    with a DeprecationWarning, 0.4's ``(data_path, name, cap)``: the name is a string that is
    not an existing path, the data anything else (or a path that exists)."""

    old = data_path is not None
    if not old and name is not None and data is not None:
        # 0.4's order: the first is data (an object, or a path that exists) and the second a
        # name (a string that names no file)
        first_is_data = not isinstance(name, str) or os.path.exists(name)
        second_is_name = isinstance(data, str) and not os.path.exists(data)
        old = first_is_data and second_is_name
    elif not old and data is None and name is not None and not isinstance(name, str):
        return None, name  # register(df): the data without a name (refused by the caller)
    if not old:
        return name, data
    warn("Ledger.register(data_path, name, cap) is deprecated: call register(name, data, cap) "
         f"(removed in {validate.REMOVED_IN})", DeprecationWarning)
    return (data, name) if data_path is None else (name, data_path)


@dataclass(frozen=True)
class Entry:
    """A reservation made by :meth:`Ledger.reserve`; passed back to complete/fail."""

    run_id: int
    dataset: str
    epsilon: float
    delta: float = 0.0


def _fits(used: float, epsilon: float, cap: float) -> bool:
    # purely relative, as the accountant's Budget.fits
    return used + epsilon <= cap * (1 + TOLERANCE)


def _check_delta_cap(delta_cap: Any) -> float | None:
    return validate.delta_cap(delta_cap)


def _check_delta(delta: Any) -> float:
    """A run's or a reservation's δ: 0 (pure ε) or a δ a run accepts (:func:`dpkit.validate.delta`)."""
    return validate.delta(delta or 0.0, zero=True)


def _check_cap(cap: Any) -> float:
    return validate.cap(cap)


class Ledger(LedgerViews):
    """One ledger file: data sets registered, runs checked, reserved and booked, reservations
    opened and closed (the file itself: :class:`~dpkit.ledger.file.LedgerFile`; the counting
    rules and the views: :class:`~dpkit.ledger.views.LedgerViews`)."""

    # ------------------------------------------------------------------ data sets

    def register(self, name: Any = None, data: Any = None, cap: Any = None, *, append: bool = False,
                 exist_ok: bool = False, delta_cap: Any = None, data_path: Any = None) -> str:
        """Register ``data`` as data set ``name`` with total ε ``cap`` (and, optionally, a total
        δ ``delta_cap`` for the (ε, δ) runs: without one δ is recorded per run but not capped).
        Creates the ledger file (mode 0600) when it does not exist yet.

        ``data``: a CSV or Parquet file, a directory of them, a pandas DataFrame, a numpy array
        or a Spark DataFrame, identified by its content (:func:`fingerprint`). A DataFrame or an
        array is also identified row by row, so a run on some of its rows — a fold of a
        cross-validation, an estimator fitted on ``X[train]`` — books against it.

        With ``append``, the data is another version of an existing data set and shares its
        cap and its spending (e.g. tonight's export of the same table). With ``exist_ok``, data
        already registered as ``name`` with the same cap is not an error (nothing changes: a
        setup script may run every night); another cap is. Returns the name.

        The order of 0.4, ``register(data_path, name, cap)``, still works with a
        :class:`DeprecationWarning` (until 0.6).
        """
        name, data = _register_order(name, data, data_path)
        if name is None or data is None:
            raise DpkitUsageError("register takes the data set's name and its data: register(name, data, cap)",
                                  param="name" if name is None else "data")
        data_path = data
        if not self.path.exists() or self.path.stat().st_size == 0:
            self._create()
        name = str(name).strip()
        if not name:
            raise DpkitUsageError("name must not be empty", param="name")
        delta_cap = _check_delta_cap(delta_cap)
        digest = fingerprint(data_path)
        rows = row_hashes(data_path)
        with self._write() as con:
            row = con.execute(
                "SELECT d.name, d.cap FROM fingerprints f JOIN datasets d ON d.id = f.dataset_id "
                "WHERE f.sha256 = ?", (digest,)).fetchone()
            if row is not None and exist_ok and row[0] == name:
                if cap is not None and not math.isclose(_check_cap(cap), float(row[1])):
                    raise LedgerError(f"data set {name!r} already exists in {self.path} with cap {float(row[1]):g}, "
                                      f"not {_check_cap(cap):g}; a cap is never changed", param="cap")
                return name
            if row is not None:
                raise LedgerError(
                    f"{_label(data_path)}: this data is already registered as data set {row[0]!r} "
                    f"in {self.path}"
                )
            holder = None if rows is None else self._dataset_holding(con, data_path)
            if holder is not None and not (append and holder[1] == name):
                # a subset of a registered frame is that data set already (its runs book there):
                # registering it under another name would give the same people a second cap
                if exist_ok and holder[1] == name:
                    return name
                raise LedgerError(f"{_label(data_path)}: its rows are all rows of data set {holder[1]!r} in "
                                  f"{self.path}, which runs on them book against already")
            ds_id = self._dataset_id(con, name, cap, delta_cap, append=append, exist_ok=exist_ok,
                                     label=_label(data_path))
            con.execute(
                "INSERT INTO fingerprints(sha256, dataset_id, path, added) VALUES (?, ?, ?, ?)",
                (digest, ds_id, _label(data_path), _now()),
            )
            if rows is not None:
                con.execute(_ROWSETS)
                con.execute("INSERT INTO rowsets(sha256, signature, rows) VALUES (?, ?, ?)",
                            (digest, rows[0], rows[1].tobytes()))
        return name

    def _dataset_id(self, con: sqlite3.Connection, name: str, cap: Any, delta_cap: float | None, *, append: bool,
                    exist_ok: bool, label: str) -> int:
        """The id of data set ``name`` that a new version (``append``) joins, or of the one created
        with ``cap``; refused in one line when the name, the cap and ``append`` disagree."""
        existing = con.execute("SELECT id, cap FROM datasets WHERE name = ?", (name,)).fetchone()
        if existing is not None:
            if cap is not None and not math.isclose(_check_cap(cap), existing[1]):
                if append and not exist_ok:
                    raise DpkitUsageError(
                        f"data set {name!r} has cap {existing[1]:g}; appending keeps it (give no cap)",
                        param="cap")
                raise LedgerError(f"data set {name!r} already exists in {self.path} with cap {existing[1]:g}, "
                                  f"not {_check_cap(cap):g}; a cap is never changed", param="cap")
            if not append:
                if exist_ok:
                    raise LedgerError(f"data set {name!r} exists in {self.path} but {label} is not one of "
                                      "its versions; append it as a new version", param="append")
                raise LedgerError(
                    f"data set {name!r} already exists in {self.path}; append a new version of "
                    f"its file to it, or choose another name", param="append"
                )
            return int(existing[0])
        # append + exist_ok is the rotation idiom: the first night creates the data set
        if append and not exist_ok:
            raise LedgerError(f"no data set named {name!r} in {self.path} to append to")
        if cap is None:
            raise DpkitUsageError("cap is required to register a new data set", param="cap")
        return int(con.execute(
            "INSERT INTO datasets(name, cap, created, delta_cap) VALUES (?, ?, ?, ?)",
            (name, _check_cap(cap), _now(), delta_cap),
        ).lastrowid)

    def _dataset_for(self, con: sqlite3.Connection, data_path: Any, digest: str) -> tuple[int, str, float]:
        row = con.execute(
            "SELECT d.id, d.name, d.cap FROM fingerprints f JOIN datasets d ON d.id = f.dataset_id "
            "WHERE f.sha256 = ?", (digest,)).fetchone()
        if row is None:
            row = self._dataset_holding(con, data_path)
        if row is None:
            if isinstance(data_path, str | os.PathLike):
                raise LedgerError(
                    f"{data_path} is not registered in ledger {self.path} (no data set has these exact "
                    f"bytes); register it first ('dpkit budget init' on the command line, Ledger.register "
                    f"in Python), or append it as a new version of a known data set"
                )
            raise LedgerError(
                f"this {_label(data_path)} is not registered in ledger {self.path}: no data set holds all of "
                "its rows (with these columns and types); register it, or the data it was taken from, with "
                "Ledger.register (an estimator books against the data set registered as its X)")
        return int(row[0]), str(row[1]), float(row[2])

    @staticmethod
    def _dataset_holding(con: sqlite3.Connection, data: Any) -> tuple[int, str, float] | None:
        """The data set registered with in-memory data that holds every row of ``data`` (a
        subset of a registered DataFrame: a fold, a sample); None when none does. Rows held by
        several data sets are refused: the run would spend on each of them."""
        rows = row_hashes(data)
        if rows is None or con.execute("SELECT 1 FROM sqlite_master WHERE name = 'rowsets'").fetchone() is None:
            return None
        import numpy as np

        signature, hashes = rows
        found: dict[int, tuple[int, str, float]] = {}
        for ds_id, name, cap, blob in con.execute(
                "SELECT d.id, d.name, d.cap, r.rows FROM rowsets r JOIN fingerprints f ON f.sha256 = r.sha256 "
                "JOIN datasets d ON d.id = f.dataset_id WHERE r.signature = ?", (signature,)):
            if np.isin(hashes, np.frombuffer(blob, dtype=np.uint64), assume_unique=True).all():
                found[int(ds_id)] = (int(ds_id), str(name), float(cap))
        if len(found) > 1:
            names = ", ".join(repr(v[1]) for v in found.values())
            raise LedgerError(f"the rows of this {_label(data)} are held by several data sets ({names}); a run "
                              "on them would spend on each: register the data once")
        return next(iter(found.values()), None)


    def _verdict(self, con: sqlite3.Connection, ds_id: int, cap: float, group: int | None, epsilon: float,
                 delta: float) -> tuple[str, float, float] | None:
        """The one test a run's ε and δ pass, in one order for the pre-check and the booking:
        None when they fit, else (which budget — ``epsilon`` or ``delta`` —, its cap or the
        reservation's room, what is used of the cap). Inside a reservation (``group``) the
        room is what the reservation has left; outside, the data set's caps (δ only when
        capped)."""
        if group is not None:
            room, delta_room = self._group_room(con, group, ds_id)
            if delta and not _fits(0.0, delta, delta_room):
                return "delta", delta_room, 0.0
            return None if _fits(0.0, epsilon, room) else ("epsilon", room, 0.0)
        if delta:
            delta_cap, delta_used = self._delta_room(con, ds_id)
            if delta_cap is not None and not _fits(delta_used, delta, delta_cap):
                return "delta", delta_cap, delta_used
        used = self._used(con, ds_id)
        return None if _fits(used, epsilon, cap) else ("epsilon", cap, used)

    def _refusal(self, name: str, group: int | None, verdict: tuple[str, float, float], epsilon: float,
                 delta: float, command: str) -> BudgetExceeded:
        """The recorded refusal for a :meth:`_verdict` that did not fit."""
        what, limit, used = verdict
        amount = epsilon if what == "epsilon" else delta
        if group is None:
            return self._refuse(name, amount, limit, used, command, what=what)
        return self._refuse_group(name, group, amount, limit, command, what=what)

    def _refuse(self, name: str, epsilon: float, cap: float, used: float, command: str = "",
                who: str = "this run", what: str = "epsilon") -> LedgerError:
        """A refusal for passing the ε cap (``what="epsilon"``) or the δ cap (``"delta"``), recorded."""
        budget, of_cap = ("privacy budget", "cap") if what == "epsilon" else ("delta budget", "delta cap")
        reason = (f"{budget} of data set {name!r} exceeded: {who} asks {what}={epsilon:g}, "
                  f"remaining {max(cap - used, 0.0):.6g} of {of_cap} {cap:g} (ledger {self.path}); nothing was run")
        self._record_refusal(name, command, epsilon if what == "epsilon" else None, reason)
        return BudgetExceeded(reason)

    def _record_refusal(self, dataset: str | None, command: str, epsilon: float | None, reason: str) -> None:
        """Keep a refused attempt for ``budget history`` (its own short transaction: the
        refused one was rolled back). A ledger that cannot be written is not a reason to
        hide the refusal itself, so a failure here is ignored."""
        with contextlib.suppress(LedgerError, sqlite3.Error):
            with self._write() as con:
                con.execute("INSERT INTO refusals(dataset, at, command, epsilon, reason) VALUES (?, ?, ?, ?, ?)",
                            (dataset, _now(), command or "?", epsilon, reason))

    def record_refusal_in(self, group: int, command: str, epsilon: float | None, reason: str) -> None:
        """Record a run refused inside reservation ``group``, under the group's data set."""
        with self._connect() as con:
            row = con.execute("SELECT d.name FROM groups g JOIN datasets d ON d.id = g.dataset_id WHERE g.id = ?",
                              (group,)).fetchone()
        self._record_refusal(None if row is None else str(row[0]), command, epsilon, reason)

    # ------------------------------------------------------------------ reservations (groups)


    def _dataset_named(self, con: sqlite3.Connection, name: str | None) -> tuple[int, str, float]:
        if name is None:
            rows = con.execute("SELECT id, name, cap FROM datasets ORDER BY id").fetchall()
            if len(rows) != 1:
                raise LedgerError(f"ledger {self.path} has {len(rows)} data sets; name one (name=)", param="name")
            return int(rows[0][0]), str(rows[0][1]), float(rows[0][2])
        row = con.execute("SELECT id, name, cap FROM datasets WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise LedgerError(f"no data set named {name!r} in {self.path}", param="name")
        return int(row[0]), str(row[1]), float(row[2])

    def open_group(self, epsilon: float, *, name: str | None = None, command: str = "",
                   pid: int | None = None, delta: float = 0.0) -> Group:
        """Reserve ``epsilon`` of data set ``name`` (the only one when None) for a group of
        runs, in one transaction, or refuse (:class:`BudgetExceeded`, recorded). Runs that
        name the group (``$DPKIT_RESERVATION``) draw from it; :meth:`close_group` returns the
        rest. ``pid``: the process holding it (default this one); if it dies without closing,
        the next access to the ledger closes it. ``delta``: the δ reserved beside ε (default 0:
        the group's runs may then spend no δ), checked against the data set's δ cap."""
        epsilon = validate.epsilon(epsilon)
        delta = _check_delta(delta)
        pid = os.getpid() if pid is None else int(pid)
        with self._write() as con:
            self._reclaim(con)
            ds_id, ds_name, cap = self._dataset_named(con, name)
            refused = self._verdict(con, ds_id, cap, None, epsilon, delta)  # a reservation is booked as a run is
            if refused is None:
                gid = con.execute(
                    "INSERT INTO groups(dataset_id, command, epsilon_reserved, status, started, pid, pid_start, host, "
                    "delta_reserved) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?)",
                    (ds_id, command or "reservation", epsilon, _now(), pid, _start_time(pid), socket.gethostname(),
                     delta),
                ).lastrowid
        if refused is not None:
            what, limit, used = refused
            raise self._refuse(ds_name, epsilon if what == "epsilon" else delta, limit, used, command or "reservation",
                               who="this reservation", what=what)
        return Group(int(gid), ds_name, epsilon, str(self.path), delta)

    def close_group(self, group: Group, reason: str = "") -> None:
        """Close the reservation: its runs keep what they counted, the rest is released."""
        with self._write() as con:
            con.execute("UPDATE groups SET status = 'closed', finished = ?, reason = ? WHERE id = ? AND status = 'open'",
                        (_now(), reason or None, group.id))

    def _group_room(self, con: sqlite3.Connection, group_id: int, ds_id: int) -> tuple[float, float]:
        """(ε, δ) a reservation has left for its runs."""
        row = con.execute("SELECT dataset_id, epsilon_reserved, status, delta_reserved FROM groups WHERE id = ?",
                          (group_id,)).fetchone()
        if row is None or int(row[0]) != ds_id:
            raise LedgerError(f"reservation {group_id} of ledger {self.path} is not a reservation of this data set "
                              f"(${RESERVATION_ENV})")
        if row[2] != "open":
            raise BudgetExceeded(f"reservation {group_id} of ledger {self.path} is closed; nothing was run")
        drawn_eps, drawn_delta = con.execute(
            f"SELECT COALESCE(SUM({_COUNTED}), 0.0), COALESCE(SUM({_DELTA_COUNTED}), 0.0) FROM runs "
            "WHERE group_id = ?", (group_id,)).fetchone()
        return float(row[1]) - float(drawn_eps), float(row[3]) - float(drawn_delta)

    def _active_group(self) -> int | None:
        """The reservation this process draws from: ``$DPKIT_RESERVATION`` when it names
        this ledger."""
        value = os.environ.get(RESERVATION_ENV, "")
        gid, _, path = value.partition("@")
        if not gid or not path:
            return None
        try:
            same = os.path.samefile(path, self.path)
        except OSError:
            same = False
        return int(gid) if same and gid.isdigit() else None

    # ------------------------------------------------------------------ runs

    def check(self, *, data_path: str | Path, epsilon: float, command: str = "", delta: float = 0.0) -> str:
        """Read-only pre-check: the data set is registered and ``epsilon`` fits (in the
        reservation of ``$DPKIT_RESERVATION`` when one is active). Returns its fingerprint.
        Raises :class:`LedgerError` / :class:`BudgetExceeded` otherwise (before the data is
        parsed; a refusal is recorded)."""
        digest = fingerprint(data_path)
        group = self._active_group()
        with self._connect() as con:
            ds_id, name, cap = self._dataset_for(con, data_path, digest)
            verdict = self._verdict(con, ds_id, cap, group, float(epsilon), float(delta or 0.0))
        if verdict is not None:
            raise self._refusal(name, group, verdict, float(epsilon), float(delta or 0.0), command)
        return digest

    def _refuse_group(self, name: str, group: int, amount: float, room: float, command: str,
                      what: str = "epsilon") -> BudgetExceeded:
        """A refusal for passing what a reservation has left of its ε (or δ), recorded."""
        has, how = ("", "") if what == "epsilon" else ("delta ", "; budget run --delta reserves it")
        reason = (f"reservation {group} on data set {name!r} exceeded: this run asks {what}={amount:g}, "
                  f"the reservation has {has}{max(room, 0.0):.6g} left (ledger {self.path}{how}); nothing was run")
        self._record_refusal(name, command, amount if what == "epsilon" else None, reason)
        return BudgetExceeded(reason)

    def remaining(self, name: str | None = None) -> float:
        """ε that can still be reserved on data set ``name`` (the only one when None)."""
        with self._write() as con:
            self._reclaim(con)
            ds_id, _, cap = self._dataset_named(con, name)
            return max(cap - self._used(con, ds_id), 0.0)

    def fits(self, epsilon: float, name: str | None = None) -> tuple[bool, float]:
        """(whether ``epsilon`` would be reserved on data set ``name`` now — the test a run's
        reservation makes —, the ε remaining). Nothing is booked (``dpkit budget check``)."""
        with self._write() as con:
            self._reclaim(con)
            ds_id, _, cap = self._dataset_named(con, name)
            used = self._used(con, ds_id)
        return _fits(used, float(epsilon), cap), max(cap - used, 0.0)

    def reserve(
        self,
        epsilon: float | None = None,
        *,
        name: str | None = None,
        data_path: str | Path | None = None,
        command: str = "",
        outputs: Sequence[str] = (),
        report: str | None = None,
        digest: str | None = None,
        delta: float = 0.0,
    ) -> Any:
        """Reserve ε ahead of the runs that will spend it.

        ``with ledger.reserve(epsilon, name=..., delta=...) as group:`` — a reservation for a
        group of runs (all or nothing: refused as a whole with :class:`BudgetExceeded` when it
        does not fit); every dpkit call with ``ledger=`` this ledger inside the block draws from
        it (ε, and δ: a run that spends δ needs a reservation with δ), and leaving the block,
        however it is left, returns what they did not spend.

        With ``data_path`` (what each private run does, :class:`dpkit.run.PrivateRun`): reserve
        ``epsilon`` (and ``delta``, checked against the data set's δ cap when it has one) for
        one run on that file's data set in one transaction, or refuse (inside a reservation,
        against what the reservation has left of its ε and δ).
        """
        if data_path is None:
            if epsilon is None:
                raise DpkitUsageError("epsilon is required", param="epsilon")
            return Reservation(self, float(epsilon), name, command or "reservation", delta)
        return self._reserve_run(data_path=data_path, command=command, epsilon=epsilon, outputs=outputs,
                                 report=report, digest=digest, delta=delta)

    def _reserve_run(self, *, data_path: str | Path, command: str, epsilon: Any, outputs: Sequence[str],
                     report: str | None, digest: str | None, delta: Any = 0.0) -> Entry:
        epsilon = validate.epsilon(epsilon)
        delta = _check_delta(delta)
        digest = digest or fingerprint(data_path)
        outs = [o if o == "-" else os.path.realpath(o) for o in outputs]
        if report is None:
            report = next((o for o in outs if o.endswith(".json") and "report" in os.path.basename(o)), None)
        elif report != "-":
            report = os.path.realpath(report)
        group = self._active_group()
        with self._write() as con:
            self._reclaim(con)
            ds_id, name, cap = self._dataset_for(con, data_path, digest)
            refused = self._verdict(con, ds_id, cap, group, epsilon, delta)
            if refused is None:
                run_id = con.execute(
                    "INSERT INTO runs(dataset_id, command, epsilon_reserved, status, started, "
                    "data_path, outputs, report, pid, host, group_id, delta_reserved) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (ds_id, command, epsilon, RESERVED, _now(), _label(data_path),
                     json.dumps(outs), report, os.getpid(), socket.gethostname(), group, delta),
                ).lastrowid
        if refused is not None:
            raise self._refusal(name, group, refused, epsilon, delta, command)
        return Entry(int(run_id), name, epsilon, delta)

    def _finish(self, entry: Entry, status: str, spent: float | None, reason: str | None,
                delta_spent: float | None = None) -> None:
        for attempt in range(5):
            try:
                with self._write() as con:
                    con.execute(
                        "UPDATE runs SET status = ?, epsilon_spent = ?, finished = ?, reason = ?, "
                        "delta_spent = ? WHERE id = ? AND status = 'reserved'",
                        (status, spent, _now(), reason, delta_spent, entry.run_id),
                    )
                return
            except LedgerError:
                # the reservation stays and keeps counting: safe; retry a few times first
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def complete(self, entry: Entry, *, spent: float, note: str | None = None, delta: float | None = None) -> None:
        """The outputs are complete: count what was actually spent, release the rest.

        ``note`` is kept in the run's ``reason`` — ``"not private: …"`` for an escape hatch
        (``--allow-data-bounds``, a plain integer ``--seed``): its ε still counts against
        the cap, and ``dpkit budget history`` shows the note. ``delta``: the δ the accountant
        spent (default: all that was reserved).
        """
        spent = float(spent)
        if not math.isfinite(spent) or spent < 0:
            spent = entry.epsilon  # cannot happen with a sane accountant; count everything
        # an accountant never spends more than its budget (= the reservation); if it somehow
        # did, the true amount is what counts
        delta_spent = entry.delta if delta is None else float(delta)
        if not math.isfinite(delta_spent) or delta_spent < 0:
            delta_spent = entry.delta
        self._finish(entry, COMPLETE, max(spent, 0.0), note, delta_spent)

    def fail(self, entry: Entry, *, spent_any: bool, reason: str = "") -> None:
        """The run failed. If any noise was drawn the whole reservation stays (``lost``);
        otherwise nothing private left the process and the reservation is released."""
        if spent_any:
            self._finish(entry, LOST, entry.epsilon, reason or "error after noise was drawn", entry.delta)
        else:
            self._finish(entry, ABORTED, 0.0, reason or "error before any noise", 0.0)


class Reservation:
    """``with ledger.reserve(epsilon, name=...) as group:`` — opens the group on entry (or
    refuses), makes this process's runs draw from it, and closes it on exit."""

    def __init__(self, ledger: Ledger, epsilon: float, name: str | None, command: str, delta: float = 0.0) -> None:
        self.ledger, self.epsilon, self.name, self.command, self.delta = ledger, epsilon, name, command, delta
        self.group: Group | None = None
        self._previous: dict[str, str | None] = {}

    def __enter__(self) -> Group:
        refuse_nested()
        self.group = self.ledger.open_group(self.epsilon, name=self.name, command=self.command, delta=self.delta)
        # as `budget run` sets them for its command: a call inside the block without ledger=
        # books on this ledger and draws from this reservation (dpkit.run.run_ledger)
        self._previous = {k: os.environ.get(k) for k in (RESERVATION_ENV, LEDGER_ENV)}
        os.environ[RESERVATION_ENV] = self.group.env
        os.environ[LEDGER_ENV] = os.path.realpath(self.ledger.path)
        return self.group

    def __exit__(self, exc_type, exc, tb) -> None:  # noqa: ANN001
        for key, value in self._previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if self.group is not None:
            self.ledger.close_group(self.group, "" if exc_type is None else f"ended by {exc_type.__name__}")
