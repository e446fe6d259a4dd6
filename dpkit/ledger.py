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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dpkit.data.fingerprint import directory_digest as _directory_fingerprint  # noqa: F401 (tests)
from dpkit.data.fingerprint import file_digest
from dpkit.errors import DataError, DpkitError, DpkitUsageError

#: relative tolerance when comparing ε sums against a cap (as the accountant's).
TOLERANCE = 1e-9
#: how long a run waits for another run's reservation transaction (cron jobs overlapping).
BUSY_TIMEOUT_S = 60.0
SCHEMA_VERSION = 1

#: run statuses and whether/which ε they count against the cap
RESERVED = "reserved"  # in flight, or the process died: the whole reservation counts
COMPLETE = "complete"  # output written: the ε actually spent counts
LOST = "lost"  # exception after noise was drawn ("spent, output lost"): reservation counts
ABORTED = "aborted"  # exception before any noise: counts 0
STATUSES = (RESERVED, COMPLETE, LOST, ABORTED)

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS datasets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    cap REAL NOT NULL CHECK (cap > 0),
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS fingerprints (
    sha256 TEXT PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    path TEXT NOT NULL,
    added TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    command TEXT NOT NULL,
    epsilon_reserved REAL NOT NULL CHECK (epsilon_reserved > 0),
    epsilon_spent REAL,
    status TEXT NOT NULL CHECK (status IN ('reserved', 'complete', 'lost', 'aborted')),
    started TEXT NOT NULL,
    finished TEXT,
    data_path TEXT NOT NULL,
    outputs TEXT NOT NULL,
    report TEXT,
    reason TEXT,
    pid INTEGER,
    host TEXT
);
CREATE INDEX IF NOT EXISTS runs_dataset ON runs(dataset_id);
"""

#: ε a run counts against its data set's cap, by status (SQL, used in every sum)
_COUNTED = """CASE status
    WHEN 'complete' THEN COALESCE(epsilon_spent, epsilon_reserved)
    WHEN 'aborted' THEN 0.0
    ELSE epsilon_reserved END"""


class LedgerError(DpkitError):
    """The ledger refuses a run or a command (exit 1): over the cap, unregistered data, ..."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fingerprint(path: str | Path) -> str:
    """sha256 of the file's bytes, read in chunks (the only thing read before the check)."""
    if str(path) == "-":
        raise DpkitUsageError(
            "ledger needs the data as a file, not stdin: the ledger identifies a data set by "
            "its bytes before reading it", param="ledger"
        )
    if "://" in str(path):
        raise DpkitUsageError(
            f"ledger needs the data as a local file or directory, not the URI {path}: the ledger "
            "identifies a data set by its bytes (or a directory by its listing) before reading it"
        )
    return file_digest(path)


@dataclass(frozen=True)
class Entry:
    """A reservation made by :meth:`Ledger.reserve`; passed back to complete/fail."""

    run_id: int
    dataset: str
    epsilon: float


@dataclass(frozen=True)
class DatasetStatus:
    name: str
    cap: float
    spent: float  # complete runs (actual ε) + lost runs (their reservation)
    reserved: float  # runs in flight or killed
    remaining: float
    runs: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "cap": self.cap, "spent": self.spent, "reserved": self.reserved,
            "remaining": self.remaining, "runs": self.runs,
        }


def _fits(used: float, epsilon: float, cap: float) -> bool:
    # purely relative, as the accountant's Budget.fits
    return used + epsilon <= cap * (1 + TOLERANCE)


def _check_cap(cap: Any) -> float:
    try:
        value = float(cap)
    except (TypeError, ValueError):
        raise DpkitUsageError(f"cap must be a number > 0, got {cap!r}", param="cap") from None
    if not math.isfinite(value) or value <= 0:
        raise DpkitUsageError(f"cap must be a finite number > 0, got {cap!r}", param="cap")
    return value


class Ledger:
    """One ledger file. Every method opens its own short connection (safe across forks)."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise DpkitUsageError(f"ledger {self.path} is a directory; give a file name")
        if not self.path.exists():
            if not create:
                raise LedgerError(
                    f"ledger {self.path} does not exist; register the data set first "
                    f"('dpkit budget init' on the command line, Ledger.register in Python)"
                )
            if not self.path.parent.is_dir():
                raise DataError(f"ledger {self.path}: directory {self.path.parent} does not exist")
            try:
                # private to the data owner: it holds fingerprints of the private inputs
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                pass  # another process created it first
            except OSError as exc:
                raise DataError(f"ledger {self.path}: cannot create: {exc.strerror}") from None
        if create and self._empty_or_sqlite():
            # idempotent (CREATE IF NOT EXISTS, in one write transaction), so concurrent
            # `budget init`s, or one that finds a file another has just created, all finish
            # the set-up; a file that is something else is left alone (and refused later)
            with self._connect(setup=True):
                pass

    def _empty_or_sqlite(self) -> bool:
        """True for a new (empty) file or any SQLite file: set-up is then safe to (re)run.

        Not "is it a ledger yet": another `budget init` may be half-way through creating it,
        and this one must finish the (idempotent) set-up too rather than refuse the file.
        """
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(16)
        except OSError:
            return False
        return head == b"" or head == b"SQLite format 3\x00"

    def _is_ledger(self) -> bool:
        try:
            con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
            try:
                return con.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone() is not None
            finally:
                con.close()
        except sqlite3.DatabaseError:
            return False

    # ------------------------------------------------------------------ connection

    @contextlib.contextmanager
    def _connect(self, *, setup: bool = False) -> Iterator[sqlite3.Connection]:
        try:
            con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise LedgerError(f"ledger {self.path}: cannot open: {exc}") from None
        try:
            con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if setup:
                # WAL is persistent in the file: readers never block the one writer. Switching
                # the journal mode does not wait on the busy handler, so retry while another
                # process holds the file (concurrent `budget init`s on a new ledger)
                _retry_locked(lambda: con.execute("PRAGMA journal_mode = WAL"))
                con.execute("BEGIN IMMEDIATE")
                for stmt in _DDL.split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                con.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                con.execute("COMMIT")
            else:
                self._check_is_ledger(con)
            con.execute("PRAGMA foreign_keys = ON")
            yield con
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.Error):
                if con.in_transaction:
                    con.execute("ROLLBACK")
            raise LedgerError(f"ledger {self.path}: {exc}") from None
        finally:
            con.close()

    def _check_is_ledger(self, con: sqlite3.Connection) -> None:
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is None:
            raise LedgerError(
                f"{self.path} is not a dpkit ledger; create one with 'dpkit budget init'"
            )
        if int(row[0]) > SCHEMA_VERSION:
            raise LedgerError(f"ledger {self.path} was written by a newer dpkit; upgrade dpkit")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: takes the write lock up front, so the read of
        the current total and the insert of a reservation cannot interleave with another run."""
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    # ------------------------------------------------------------------ data sets

    def register(self, data_path: str | Path, name: str, cap: Any = None, *, append: bool = False) -> str:
        """Register the data file ``data_path`` as data set ``name`` with total ε ``cap``.

        With ``append``, the file is another version of an existing data set and shares its
        cap and its spending (e.g. tonight's export of the same table). Returns the name.
        """
        name = str(name).strip()
        if not name:
            raise DpkitUsageError("name must not be empty", param="name")
        digest = fingerprint(data_path)
        with self._write() as con:
            row = con.execute(
                "SELECT d.name FROM fingerprints f JOIN datasets d ON d.id = f.dataset_id "
                "WHERE f.sha256 = ?", (digest,)).fetchone()
            if row is not None:
                raise LedgerError(
                    f"{data_path}: this file is already registered as data set {row[0]!r} "
                    f"in {self.path}"
                )
            existing = con.execute("SELECT id, cap FROM datasets WHERE name = ?", (name,)).fetchone()
            if append:
                if existing is None:
                    raise LedgerError(f"no data set named {name!r} in {self.path} to append to")
                if cap is not None and not math.isclose(_check_cap(cap), existing[1]):
                    raise DpkitUsageError(
                        f"data set {name!r} has cap {existing[1]:g}; appending keeps it (give no cap)",
                        param="cap")
                ds_id = existing[0]
            else:
                if existing is not None:
                    raise LedgerError(
                        f"data set {name!r} already exists in {self.path}; append a new version of "
                        f"its file to it, or choose another name", param="append"
                    )
                if cap is None:
                    raise DpkitUsageError("cap is required to register a new data set", param="cap")
                ds_id = con.execute(
                    "INSERT INTO datasets(name, cap, created) VALUES (?, ?, ?)",
                    (name, _check_cap(cap), _now()),
                ).lastrowid
            con.execute(
                "INSERT INTO fingerprints(sha256, dataset_id, path, added) VALUES (?, ?, ?, ?)",
                (digest, ds_id, os.path.realpath(data_path), _now()),
            )
        return name

    def _dataset_for(self, con: sqlite3.Connection, data_path: str | Path, digest: str) -> tuple[int, str, float]:
        row = con.execute(
            "SELECT d.id, d.name, d.cap FROM fingerprints f JOIN datasets d ON d.id = f.dataset_id "
            "WHERE f.sha256 = ?", (digest,)).fetchone()
        if row is None:
            raise LedgerError(
                f"{data_path} is not registered in ledger {self.path} (no data set has these exact "
                f"bytes); register it first ('dpkit budget init' on the command line, Ledger.register "
                f"in Python), or append it as a new version of a known data set"
            )
        return int(row[0]), str(row[1]), float(row[2])

    @staticmethod
    def _used(con: sqlite3.Connection, dataset_id: int) -> float:
        (used,) = con.execute(
            f"SELECT COALESCE(SUM({_COUNTED}), 0.0) FROM runs WHERE dataset_id = ?", (dataset_id,)
        ).fetchone()
        return float(used)

    def _refuse(self, name: str, epsilon: float, cap: float, used: float) -> LedgerError:
        return LedgerError(
            f"privacy budget of data set {name!r} exceeded: this run asks epsilon={epsilon:g}, "
            f"remaining {max(cap - used, 0.0):.6g} of cap {cap:g} (ledger {self.path}); "
            f"nothing was run"
        )

    # ------------------------------------------------------------------ runs

    def check(self, *, data_path: str | Path, epsilon: float) -> str:
        """Read-only pre-check: the data set is registered and ``epsilon`` fits. Returns its
        fingerprint. Raises :class:`LedgerError` otherwise (before the data is parsed)."""
        digest = fingerprint(data_path)
        with self._connect() as con:
            ds_id, name, cap = self._dataset_for(con, data_path, digest)
            used = self._used(con, ds_id)
        if not _fits(used, epsilon, cap):
            raise self._refuse(name, epsilon, cap, used)
        return digest

    def reserve(
        self,
        *,
        data_path: str | Path,
        command: str,
        epsilon: float,
        outputs: Sequence[str] = (),
        report: str | None = None,
        digest: str | None = None,
    ) -> Entry:
        """Reserve ``epsilon`` on the data set of ``data_path`` in one transaction, or refuse."""
        epsilon = float(epsilon)
        if not math.isfinite(epsilon) or epsilon <= 0:
            raise DpkitUsageError(f"epsilon must be a finite number > 0, got {epsilon!r}")
        digest = digest or fingerprint(data_path)
        outs = [o if o == "-" else os.path.realpath(o) for o in outputs]
        if report is None:
            report = next((o for o in outs if o.endswith(".json") and "report" in os.path.basename(o)), None)
        elif report != "-":
            report = os.path.realpath(report)
        with self._write() as con:
            ds_id, name, cap = self._dataset_for(con, data_path, digest)
            used = self._used(con, ds_id)
            if not _fits(used, epsilon, cap):
                raise self._refuse(name, epsilon, cap, used)
            run_id = con.execute(
                "INSERT INTO runs(dataset_id, command, epsilon_reserved, status, started, "
                "data_path, outputs, report, pid, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ds_id, command, epsilon, RESERVED, _now(), os.path.realpath(data_path),
                 json.dumps(outs), report, os.getpid(), socket.gethostname()),
            ).lastrowid
        return Entry(int(run_id), name, epsilon)

    def _finish(self, entry: Entry, status: str, spent: float | None, reason: str | None) -> None:
        for attempt in range(5):
            try:
                with self._write() as con:
                    con.execute(
                        "UPDATE runs SET status = ?, epsilon_spent = ?, finished = ?, reason = ? "
                        "WHERE id = ? AND status = 'reserved'",
                        (status, spent, _now(), reason, entry.run_id),
                    )
                return
            except LedgerError:
                # the reservation stays and keeps counting: safe; retry a few times first
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def complete(self, entry: Entry, *, spent: float, note: str | None = None) -> None:
        """The outputs are complete: count what was actually spent, release the rest.

        ``note`` is kept in the run's ``reason`` — ``"not private: …"`` for an escape hatch
        (``--allow-data-bounds``, a plain integer ``--seed``): its ε still counts against
        the cap, and ``dpkit budget history`` shows the note.
        """
        spent = float(spent)
        if not math.isfinite(spent) or spent < 0:
            spent = entry.epsilon  # cannot happen with a sane accountant; count everything
        # an accountant never spends more than its budget (= the reservation); if it somehow
        # did, the true amount is what counts
        self._finish(entry, COMPLETE, max(spent, 0.0), note)

    def fail(self, entry: Entry, *, spent_any: bool, reason: str = "") -> None:
        """The run failed. If any noise was drawn the whole reservation stays (``lost``);
        otherwise nothing private left the process and the reservation is released."""
        if spent_any:
            self._finish(entry, LOST, entry.epsilon, reason or "error after noise was drawn")
        else:
            self._finish(entry, ABORTED, 0.0, reason or "error before any noise")

    # ------------------------------------------------------------------ reading

    def status(self) -> list[DatasetStatus]:
        """Cap, spent, reserved and remaining ε of every data set."""
        with self._connect() as con:
            rows = con.execute(
                f"""SELECT d.name, d.cap,
                    COALESCE(SUM(CASE WHEN r.status != 'reserved' THEN {_COUNTED} END), 0.0),
                    COALESCE(SUM(CASE WHEN r.status = 'reserved' THEN r.epsilon_reserved END), 0.0),
                    COUNT(r.id)
                FROM datasets d LEFT JOIN runs r ON r.dataset_id = d.id
                GROUP BY d.id ORDER BY d.name"""
            ).fetchall()
        return [
            DatasetStatus(n, cap, spent, res, max(cap - spent - res, 0.0), int(k))
            for n, cap, spent, res, k in rows
        ]

    def history(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every run, oldest first (optionally of one data set)."""
        with self._connect() as con:
            if name is not None and con.execute(
                    "SELECT 1 FROM datasets WHERE name = ?", (name,)).fetchone() is None:
                raise LedgerError(f"no data set named {name!r} in {self.path}")
            rows = con.execute(
                f"""SELECT r.id, d.name, r.started, r.finished, r.command, r.epsilon_reserved,
                    r.epsilon_spent, {_COUNTED}, r.status, r.outputs, r.report, r.reason, r.pid
                FROM runs r JOIN datasets d ON d.id = r.dataset_id
                WHERE (? IS NULL OR d.name = ?) ORDER BY r.id""",
                (name, name),
            ).fetchall()
        keys = ("id", "dataset", "started", "finished", "command", "epsilon_reserved",
                "epsilon_spent", "epsilon_counted", "status", "outputs", "report", "reason", "pid")
        out = []
        for row in rows:
            d = dict(zip(keys, row, strict=True))
            d["outputs"] = json.loads(d["outputs"])
            out.append(d)
        return out


def _retry_locked(action: Any, timeout: float = BUSY_TIMEOUT_S) -> Any:
    """Run ``action`` again while SQLite says the database is locked, up to ``timeout`` s."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
