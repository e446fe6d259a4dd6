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

from dpkit import validate
from dpkit.data.fingerprint import directory_digest as _directory_fingerprint  # noqa: F401 (tests)
from dpkit.data.fingerprint import file_digest, row_hashes
from dpkit.errors import BudgetExceeded, DataError, DpkitUsageError, LedgerError, warn

#: relative tolerance when comparing ε sums against a cap (as the accountant's).
TOLERANCE = 1e-9
#: how long a run waits for another run's reservation transaction (cron jobs overlapping).
BUSY_TIMEOUT_S = 60.0
SCHEMA_VERSION = 3  # 2: reservation groups (budget run, Ledger.reserve as a context), refusals;
#                    3: δ per run and an optional δ cap per data set (issue 22)
#: the environment variable naming the reservation a run draws from: "<id>@<ledger path>"
RESERVATION_ENV = "DPKIT_RESERVATION"
#: the environment variable naming the ledger a run books on when ``ledger=`` is not given
#: (the command line's ``--ledger`` and the library read it alike)
LEDGER_ENV = "DPKIT_LEDGER"

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
    created TEXT NOT NULL,
    delta_cap REAL CHECK (delta_cap IS NULL OR (delta_cap > 0 AND delta_cap < 1))
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
    host TEXT,
    group_id INTEGER REFERENCES groups(id),
    delta_reserved REAL NOT NULL DEFAULT 0 CHECK (delta_reserved >= 0),
    delta_spent REAL
);
CREATE INDEX IF NOT EXISTS runs_dataset ON runs(dataset_id);
"""

#: added in schema version 2 (a version-1 ledger is migrated on first open, in place)
_DDL_V2 = """
CREATE TABLE IF NOT EXISTS groups (
    id INTEGER PRIMARY KEY,
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    command TEXT NOT NULL,
    epsilon_reserved REAL NOT NULL CHECK (epsilon_reserved > 0),
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    started TEXT NOT NULL,
    finished TEXT,
    reason TEXT,
    pid INTEGER,
    pid_start TEXT,
    host TEXT,
    delta_reserved REAL NOT NULL DEFAULT 0 CHECK (delta_reserved >= 0)
);
CREATE TABLE IF NOT EXISTS refusals (
    id INTEGER PRIMARY KEY,
    dataset TEXT,
    at TEXT NOT NULL,
    command TEXT NOT NULL,
    epsilon REAL,
    reason TEXT NOT NULL
);
"""

#: the row hashes of data registered in memory (added in 0.5 without a version change: older
#: dpkit ignores the table, and refuses a subset of rows as unregistered data)
_ROWSETS = """CREATE TABLE IF NOT EXISTS rowsets (
    sha256 TEXT PRIMARY KEY REFERENCES fingerprints(sha256),
    signature TEXT NOT NULL,
    rows BLOB NOT NULL
)"""

#: ε a run counts against its data set's cap, by status (SQL, used in every sum)
_COUNTED = """CASE status
    WHEN 'complete' THEN COALESCE(epsilon_spent, epsilon_reserved)
    WHEN 'aborted' THEN 0.0
    ELSE epsilon_reserved END"""
#: δ a run counts against its data set's δ cap: the same rule as ε (δ composes additively,
#: basic composition; a lost or killed run counts what it reserved)
_DELTA_COUNTED = """CASE status
    WHEN 'complete' THEN COALESCE(delta_spent, delta_reserved)
    WHEN 'aborted' THEN 0.0
    ELSE delta_reserved END"""
#: per budget: what a run counts, and the column a reservation holds it in
_BUDGETS = {"epsilon": (_COUNTED, "epsilon_reserved"), "delta": (_DELTA_COUNTED, "delta_reserved")}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fingerprint(data: Any) -> str:
    """The data set's fingerprint (the only thing read before the check): the sha256 of a
    file's bytes or of a directory's files; of a pandas DataFrame's or a numpy array's values,
    column names and types; of a Spark DataFrame's content (dpkit/data/fingerprint.py)."""
    from dpkit.data.fingerprint import in_memory, input_digest, is_spark

    if in_memory(data) or is_spark(data):
        return input_digest(data)
    if not isinstance(data, str | os.PathLike):
        raise DpkitUsageError(f"data must be a path, a pandas DataFrame, a numpy array or a Spark DataFrame, got "
                              f"{type(data).__name__}", param="data")
    path = data
    if str(path) == "-":
        raise DpkitUsageError(
            "ledger needs the data as a file, not stdin: the ledger identifies a data set by "
            "its bytes before reading it", param="ledger"
        )
    if "://" in str(path):
        raise DpkitUsageError(
            f"ledger needs the data as a local file or directory, not the URI {path}: the ledger "
            "identifies a data set by its bytes (a file's or a directory's) before reading it"
        )
    return file_digest(path)


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
                  "(removed in 0.6)", DeprecationWarning)
    return (data, name) if data_path is None else (name, data_path)


def _label(data: Any) -> str:
    """How the ledger records where a run's data came from: a path, or what kind of object."""
    if isinstance(data, str | os.PathLike):
        return os.path.realpath(data)
    return f"<{type(data).__module__.split('.')[0]} {type(data).__name__}>"


@dataclass(frozen=True)
class Entry:
    """A reservation made by :meth:`Ledger.reserve`; passed back to complete/fail."""

    run_id: int
    dataset: str
    epsilon: float
    delta: float = 0.0


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


class Ledger:
    """One ledger file. Every method opens its own short connection (safe across forks)."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise DpkitUsageError(f"ledger {self.path} is a directory; give a file name")
        if create:
            self._create()

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    def _create(self) -> None:
        """Create the file (mode 0600) and its tables, if needed; as sqlite3.connect creates a
        database, a new ledger is made by its first :meth:`register` (or ``create=True``)."""
        if not self.path.exists():
            if not self.path.parent.is_dir():
                raise DataError(f"ledger {self.path}: directory {self.path.parent} does not exist")
            try:
                # private to the data owner: it holds fingerprints of the private inputs
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                pass  # another process created it first
            except OSError as exc:
                raise DataError(f"ledger {self.path}: cannot create: {exc.strerror}") from None
        if self._empty_or_sqlite():
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
        if not self.path.exists():  # sqlite3 would create it, world-readable and empty
            raise LedgerError(
                f"ledger {self.path} does not exist; register the data set first "
                f"('dpkit budget init' on the command line, Ledger.register in Python)"
            )
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
                for stmt in (_DDL_V2 + _DDL).split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                con.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
                con.execute("COMMIT")
            if self._check_is_ledger(con) < SCHEMA_VERSION:
                self._migrate(con)
            con.execute("PRAGMA foreign_keys = ON")
            yield con
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.Error):
                if con.in_transaction:
                    con.execute("ROLLBACK")
            raise LedgerError(f"ledger {self.path}: {exc}") from None
        finally:
            con.close()

    def _check_is_ledger(self, con: sqlite3.Connection) -> int:
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
        return int(row[0])

    @staticmethod
    def _migrate(con: sqlite3.Connection) -> None:
        """Version 1 → 2 → 3, in one write transaction (a concurrent opener waits, then finds
        3). 2: the reservation groups and refusals tables and the runs' ``group_id``; 3: the
        runs' δ (0 for every older run: they were all pure ε) and the data sets' δ cap (none).
        Every older row keeps its meaning."""
        con.execute("BEGIN IMMEDIATE")
        try:
            (version,) = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if int(version) < SCHEMA_VERSION:
                for stmt in _DDL_V2.split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                columns = {r[1] for r in con.execute("PRAGMA table_info(runs)")}
                if "group_id" not in columns:
                    con.execute("ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES groups(id)")
                if "delta_reserved" not in columns:
                    con.execute("ALTER TABLE runs ADD COLUMN delta_reserved REAL NOT NULL DEFAULT 0 "
                                "CHECK (delta_reserved >= 0)")
                    con.execute("ALTER TABLE runs ADD COLUMN delta_spent REAL")
                if "delta_reserved" not in {r[1] for r in con.execute("PRAGMA table_info(groups)")}:
                    con.execute("ALTER TABLE groups ADD COLUMN delta_reserved REAL NOT NULL DEFAULT 0 "
                                "CHECK (delta_reserved >= 0)")
                if "delta_cap" not in {r[1] for r in con.execute("PRAGMA table_info(datasets)")}:
                    con.execute("ALTER TABLE datasets ADD COLUMN delta_cap REAL "
                                "CHECK (delta_cap IS NULL OR (delta_cap > 0 AND delta_cap < 1))")
                con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

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
                        raise LedgerError(f"data set {name!r} exists in {self.path} but {_label(data_path)} is not one of "
                                          "its versions; append it as a new version", param="append")
                    raise LedgerError(
                        f"data set {name!r} already exists in {self.path}; append a new version of "
                        f"its file to it, or choose another name", param="append"
                    )
                ds_id = existing[0]
            else:
                # append + exist_ok is the rotation idiom: the first night creates the data set
                if append and not exist_ok:
                    raise LedgerError(f"no data set named {name!r} in {self.path} to append to")
                if cap is None:
                    raise DpkitUsageError("cap is required to register a new data set", param="cap")
                ds_id = con.execute(
                    "INSERT INTO datasets(name, cap, created, delta_cap) VALUES (?, ?, ?, ?)",
                    (name, _check_cap(cap), _now(), delta_cap),
                ).lastrowid
            con.execute(
                "INSERT INTO fingerprints(sha256, dataset_id, path, added) VALUES (?, ?, ?, ?)",
                (digest, ds_id, _label(data_path), _now()),
            )
            if rows is not None:
                con.execute(_ROWSETS)
                con.execute("INSERT INTO rowsets(sha256, signature, rows) VALUES (?, ?, ?)",
                            (digest, rows[0], rows[1].tobytes()))
        return name

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

    @staticmethod
    def _used(con: sqlite3.Connection, dataset_id: int, budget: str = "epsilon") -> float:
        """ε (or δ) counted against the cap: every run (by status) plus what open reservations
        hold beyond the runs already drawn from them."""
        counted = _BUDGETS[budget][0]
        (used,) = con.execute(
            f"SELECT COALESCE(SUM({counted}), 0.0) FROM runs WHERE dataset_id = ?", (dataset_id,)
        ).fetchone()
        return float(used) + Ledger._held(con, dataset_id, budget)

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
        return (None if cap is None else float(cap)), Ledger._used(con, dataset_id, "delta")

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


@dataclass(frozen=True)
class Group:
    """An open reservation (:meth:`Ledger.open_group`)."""

    id: int
    dataset: str
    epsilon: float
    ledger: str
    delta: float = 0.0

    @property
    def env(self) -> str:
        """The value of ``$DPKIT_RESERVATION`` that makes runs draw from it."""
        return f"{self.id}@{os.path.realpath(self.ledger)}"


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


def active_reservation() -> tuple[int, str] | None:
    """(id, ledger path) of the reservation this process runs inside (``$DPKIT_RESERVATION``,
    set by ``budget run`` for its command and by ``with ledger.reserve(...)``), None outside
    one. A value that names no reservation is refused: a run must not guess it is outside."""
    value = os.environ.get(RESERVATION_ENV, "")
    if not value:
        return None
    gid, _, path = value.partition("@")
    if not gid.isdigit() or not path:
        raise LedgerError(f"${RESERVATION_ENV}={value!r} names no reservation (expected <id>@<ledger path>); "
                          "nothing was run")
    return int(gid), path


def refuse_nested() -> None:
    """Refuse to open a reservation inside another (``budget run`` or ``ledger.reserve``): it
    would draw on the cap, not on the outer reservation (or, on another ledger, escape it), and
    the outer reservation's ε would no longer bound its runs."""
    held = active_reservation()
    if held is not None:
        raise LedgerError(f"a reservation cannot be opened inside reservation {held[0]} of ledger {held[1]} "
                          f"(${RESERVATION_ENV}); its runs draw from that one; nothing was run")


def _start_time(pid: int) -> str | None:
    """The process's start time (Linux: /proc/PID/stat field 22), to tell a live holder from a
    new process that reuses its pid; None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode(errors="replace")
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int, start: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    if start is not None:
        now = _start_time(pid)
        return now is None or now == start
    return True


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
