"""The ledger file's tables: their SQL, their versions, and the migration of an older file.

The tables (:data:`_DDL`, with :data:`_DDL_V2` added in version 2 and :data:`_ROWSETS` in 0.5),
the statuses a run row takes, the one SQL rule of what a run counts against a cap
(:data:`_COUNTED`, :data:`_DELTA_COUNTED`), and :func:`migrate`, which brings a version-1 or
version-2 file to :data:`SCHEMA_VERSION` in place on first open (docs/ledger.md).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

SCHEMA_VERSION = 3  # 2: reservation groups (budget run, Ledger.reserve as a context), refusals;
#                    3: δ per run and an optional δ cap per data set

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


def migrate(con: sqlite3.Connection) -> None:
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
