"""Reservations (issue 23): all-or-nothing groups of runs, refusals on record, v1 ledgers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import dpkit
from dpkit.ledger import RESERVATION_ENV, Ledger

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"


@pytest.fixture
def book(tmp_path: Path) -> Ledger:
    data = tmp_path / "adult.csv"
    data.write_bytes(ADULT.read_bytes())
    b = Ledger(tmp_path / "l.db", create=True)
    b.register("adult", data, 3)
    return b


def _data(book: Ledger) -> Path:
    return book.path.parent / "adult.csv"


def test_reserve_block_draws_and_returns_the_rest(book: Ledger) -> None:
    with book.reserve(2.0, name="adult") as group:
        assert book.status()[0].reserved == pytest.approx(2.0)
        dpkit.publish(_data(book), schema=SCHEMA, epsilon=0.5, ledger=book)
        # 1.5 left in the reservation: 1.6 is refused before the data is read
        with pytest.raises(dpkit.BudgetExceeded, match="reservation .* has 1.5 left"):
            dpkit.publish(_data(book), schema=SCHEMA, epsilon=1.6, ledger=book)
    st = book.status()[0]
    assert st.spent == pytest.approx(0.5) and st.reserved == 0 and st.remaining == pytest.approx(2.5)
    (run,) = book.history()
    assert run["group"] == group.id
    (g,) = book.reservations()
    assert g["status"] == "closed" and g["epsilon_counted"] == pytest.approx(0.5)
    assert RESERVATION_ENV not in __import__("os").environ


def test_a_reservation_that_does_not_fit_is_refused_whole_and_recorded(book: Ledger) -> None:
    with book.reserve(2.0, name="adult"):
        dpkit.publish(_data(book), schema=SCHEMA, epsilon=2.0, ledger=book)
    with pytest.raises(dpkit.BudgetExceeded, match="exceeded"), book.reserve(2.0, name="adult"):
        pytest.fail("the block must not run")
    (refusal,) = book.refusals()
    assert refusal["epsilon"] == 2.0 and refusal["dataset"] == "adult" and "remaining 1" in refusal["reason"]
    assert book.status()[0].remaining == pytest.approx(1.0)


def test_a_plain_refusal_is_recorded_with_its_command(book: Ledger) -> None:
    with pytest.raises(dpkit.BudgetExceeded):
        dpkit.publish(_data(book), schema=SCHEMA, epsilon=3.5, ledger=book)
    (refusal,) = book.refusals()
    assert refusal["command"] == "publish" and refusal["epsilon"] == 3.5


def test_exist_ok(book: Ledger) -> None:
    assert book.register("adult", _data(book), 3, exist_ok=True) == "adult"
    with pytest.raises(dpkit.LedgerError, match="with cap 3, not 4"):
        book.register("adult", _data(book), 4, exist_ok=True)
    with pytest.raises(dpkit.LedgerError, match="already registered"):
        book.register("adult", _data(book), 3)  # without exist_ok: an error, as before


def test_dead_holder_is_reclaimed(book: Ledger) -> None:
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    book.open_group(2.0, name="adult", pid=child.pid)  # its holder is already gone
    assert book.status()[0].reserved == 0  # reclaimed on access
    (g,) = book.reservations()
    assert g["status"] == "closed" and "ended without closing" in g["reason"]


def test_version_1_ledger_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE datasets (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, cap REAL NOT NULL, created TEXT NOT NULL);
        CREATE TABLE fingerprints (sha256 TEXT PRIMARY KEY, dataset_id INTEGER NOT NULL, path TEXT NOT NULL, added TEXT NOT NULL);
        CREATE TABLE runs (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, command TEXT NOT NULL,
            epsilon_reserved REAL NOT NULL, epsilon_spent REAL,
            status TEXT NOT NULL CHECK (status IN ('reserved', 'complete', 'lost', 'aborted')),
            started TEXT NOT NULL, finished TEXT, data_path TEXT NOT NULL, outputs TEXT NOT NULL,
            report TEXT, reason TEXT, pid INTEGER, host TEXT);
        INSERT INTO meta VALUES ('schema_version', '1');
        INSERT INTO datasets VALUES (1, 'toy', 2.0, '2026-01-01T00:00:00Z');
        INSERT INTO runs(dataset_id, command, epsilon_reserved, epsilon_spent, status, started, data_path, outputs)
            VALUES (1, 'publish', 1.0, 0.75, 'complete', '2026-01-01T00:00:00Z', '/x.csv', '[]');
    """)
    con.commit()
    con.close()
    book = Ledger(path)
    (run,) = book.history()
    assert run["epsilon_counted"] == 0.75 and run["group"] is None
    assert sqlite3.connect(path).execute("SELECT value FROM meta").fetchone()[0] == "3"
    assert run["delta_reserved"] == 0 and run["delta_counted"] == 0 and book.status()[0].delta_cap is None
    with book.reserve(1.0, name="toy"):
        assert book.status()[0].remaining == pytest.approx(0.25)
    assert book.status()[0].remaining == pytest.approx(1.25)
