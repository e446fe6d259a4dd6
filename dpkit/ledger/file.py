"""The ledger's SQLite file: created private (0600), opened, set up and migrated, written.

:class:`LedgerFile` is what every :class:`~dpkit.ledger.book.Ledger` method stands on: one
short connection per call (safe across forks), WAL so that readers never block the one
writer, and :meth:`LedgerFile._write`'s ``BEGIN IMMEDIATE`` transaction, which serializes
concurrent runs on SQLite's write lock.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dpkit.errors import DataError, DpkitUsageError, LedgerError
from dpkit.ledger.schema import _DDL, _DDL_V2, SCHEMA_VERSION, migrate

#: how long a run waits for another run's reservation transaction (cron jobs overlapping).
BUSY_TIMEOUT_S = 60.0


class LedgerFile:
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
                migrate(con)
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
