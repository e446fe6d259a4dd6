"""The privacy ledger's semantics (docs/ledger.md): reserve, complete, lost, aborted, killed."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap

import pytest

from dpkit.errors import DataError, DpkitUsageError
from dpkit.io.output import atomic_output
from dpkit.ledger import Ledger, LedgerError, fingerprint
from dpkit.run import PrivateRun


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "data.csv"
    p.write_text("a,b\n1,x\n2,y\n")
    return p


@pytest.fixture
def book(tmp_path, data):
    ledger = Ledger(tmp_path / "ledger.db", create=True)
    ledger.register("toy", data, 1.0)
    return ledger


def _status(book, name="toy"):
    return {s.name: s for s in book.status()}[name]


def test_create_is_private_and_registers(tmp_path, book, data):
    mode = stat.S_IMODE(os.stat(book.path).st_mode)
    assert mode == 0o600
    s = _status(book)
    assert (s.cap, s.spent, s.reserved, s.remaining, s.runs) == (1.0, 0.0, 0.0, 1.0, 0)
    # the fingerprint is the sha256 of the bytes, kept in the ledger
    with sqlite3.connect(book.path) as con:
        (digest,) = con.execute("SELECT sha256 FROM fingerprints").fetchone()
    assert digest == fingerprint(data)
    with sqlite3.connect(book.path) as con:
        (mode,) = con.execute("PRAGMA journal_mode").fetchone()
    assert mode == "wal"


def test_missing_ledger_is_not_created(tmp_path, data):
    book = Ledger(tmp_path / "nope.db")  # opened as sqlite3 opens a file: created by its first register
    with pytest.raises(LedgerError, match="does not exist; register"):
        book.status()
    with pytest.raises(LedgerError, match="does not exist; register"):
        book.check(data_path=data, epsilon=1.0)
    assert not (tmp_path / "nope.db").exists()


def test_not_a_ledger(tmp_path):
    p = tmp_path / "x.db"
    p.write_text("hello")
    with pytest.raises(LedgerError, match="not a dpkit ledger|file is not a database"):
        Ledger(p).status()


def test_unregistered_data_names_budget_init(tmp_path, book):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,x\n")
    with pytest.raises(LedgerError, match="not registered.*dpkit budget init"):
        book.check(data_path=other, epsilon=0.1)


def test_stdin_refused(book):
    with pytest.raises(DpkitUsageError, match="not stdin"):
        book.check(data_path="-", epsilon=0.1)


def test_missing_data_file(tmp_path, book):
    with pytest.raises(DataError, match="file not found"):
        book.check(data_path=tmp_path / "gone.csv", epsilon=0.1)


def test_register_twice_and_append(tmp_path, book, data):
    with pytest.raises(LedgerError, match="already registered as data set 'toy'"):
        book.register("again", data, 2.0)
    v2 = tmp_path / "v2.csv"
    v2.write_text("a,b\n1,x\n2,y\n3,z\n")
    with pytest.raises(LedgerError, match="already exists"):
        book.register("toy", v2, 1.0)
    with pytest.raises(LedgerError, match="no data set named"):
        book.register("nothing", v2, append=True)
    with pytest.raises(DpkitUsageError, match="keeps it"):
        book.register("toy", v2, 3.0, append=True)
    book.register("toy", v2, append=True)
    # both versions draw on one cap
    e = book.reserve(data_path=data, command="t", epsilon=0.6)
    book.complete(e, spent=0.6)
    with pytest.raises(LedgerError, match="exceeded"):
        book.check(data_path=v2, epsilon=0.5)
    book.check(data_path=v2, epsilon=0.4)


@pytest.mark.parametrize("cap", ["0", "-1", "nan", "inf", "abc"])
def test_bad_cap(tmp_path, data, cap):
    with pytest.raises(DpkitUsageError, match="^cap"):
        Ledger(tmp_path / "l.db", create=True).register("x", data, cap)


def test_complete_releases_unspent(book, data):
    e = book.reserve(data_path=data, command="publish", epsilon=0.5, outputs=["o.csv", "o.report.json"])
    s = _status(book)
    assert (s.reserved, s.spent, s.remaining) == (0.5, 0.0, 0.5)
    book.complete(e, spent=0.3)
    s = _status(book)
    assert (s.reserved, s.spent) == (0.0, 0.3)
    assert s.remaining == pytest.approx(0.7)
    (row,) = book.history()
    assert row["status"] == "complete" and row["epsilon_spent"] == 0.3
    assert row["report"].endswith("o.report.json")
    assert row["outputs"][0].endswith("o.csv")


def test_fail_after_noise_keeps_reservation(book, data):
    e = book.reserve(data_path=data, command="publish", epsilon=0.5)
    book.fail(e, spent_any=True, reason="KeyboardInterrupt")
    s = _status(book)
    assert (s.spent, s.reserved, s.remaining) == (0.5, 0.0, 0.5)
    (row,) = book.history("toy")
    assert (row["status"], row["reason"], row["epsilon_counted"]) == ("lost", "KeyboardInterrupt", 0.5)


def test_fail_before_noise_releases(book, data):
    e = book.reserve(data_path=data, command="publish", epsilon=0.5)
    book.fail(e, spent_any=False, reason="DataError")
    s = _status(book)
    assert (s.spent, s.reserved, s.remaining) == (0.0, 0.0, 1.0)
    assert book.history()[0]["status"] == "aborted"


def test_refusal_records_nothing(book, data):
    e = book.reserve(data_path=data, command="t", epsilon=0.8)
    book.complete(e, spent=0.8)
    with pytest.raises(LedgerError, match=r"asks epsilon=0.3, remaining 0.2 of cap 1"):
        book.reserve(data_path=data, command="t", epsilon=0.3)
    assert len(book.history()) == 1
    # exactly filling the cap is allowed (float tolerance)
    e = book.reserve(data_path=data, command="t", epsilon=0.2)
    book.complete(e, spent=0.2)
    assert _status(book).remaining == pytest.approx(0.0)


def test_history_unknown_name(book):
    with pytest.raises(LedgerError, match="no data set named 'zzz'"):
        book.history("zzz")


# ---------------------------------------------------------------- PrivateRun hooks


def _run(tmp_path, data, ledger, eps, *, spend, raise_after=None):
    out = tmp_path / "out.csv"
    run = PrivateRun("publish", "test", eps, None, inputs=[str(data)],
                     outputs=[str(out), str(tmp_path / "out.report.json")], ledger=str(ledger))
    with run:
        if spend:
            run.accountant.spend("step", "test", spend)
        if raise_after:
            raise raise_after
        with atomic_output(out) as fh:
            fh.write("a\n1\n")
    return out


def test_private_run_complete(tmp_path, book, data):
    out = _run(tmp_path, data, book.path, 0.5, spend=0.25)
    assert out.exists()
    s = _status(book)
    assert (s.spent, s.reserved) == (0.25, 0.0)


def test_private_run_refused_before_anything(tmp_path, book, data):
    _run(tmp_path, data, book.path, 0.9, spend=0.9)
    (tmp_path / "out.csv").unlink()
    with pytest.raises(LedgerError, match="exceeded"):
        _run(tmp_path, data, book.path, 0.2, spend=0.2)
    assert not (tmp_path / "out.csv").exists()
    assert len(book.history()) == 1


def test_private_run_interrupted_after_noise(tmp_path, book, data):
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, data, book.path, 0.5, spend=0.1, raise_after=KeyboardInterrupt())
    assert not (tmp_path / "out.csv").exists()
    (row,) = book.history()
    assert row["status"] == "lost" and row["epsilon_counted"] == 0.5


def test_private_run_error_before_noise(tmp_path, book, data):
    with pytest.raises(DataError):
        _run(tmp_path, data, book.path, 0.5, spend=None, raise_after=DataError("bad row"))
    assert book.history()[0]["status"] == "aborted"
    assert _status(book).remaining == 1.0


def test_private_run_without_data_file(tmp_path, book):
    with pytest.raises(DpkitUsageError, match="not stdin"):
        PrivateRun("publish", "t", 0.1, None, inputs=["-"], outputs=[str(tmp_path / "o.csv")],
                   ledger=str(book.path))


def test_killed_process_keeps_reservation(tmp_path, book, data):
    """kill -9 between reserve and complete: the row stays 'reserved' and keeps counting."""
    code = textwrap.dedent(f"""
        import os, signal
        from dpkit.run import PrivateRun
        run = PrivateRun("publish", "t", 0.4, None, inputs=[{str(data)!r}],
                         outputs=[{str(tmp_path / 'k.csv')!r}], ledger={str(book.path)!r})
        run.__enter__()
        run.accountant.spend("s", "m", 0.1)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    (row,) = book.history()
    assert row["status"] == "reserved" and row["finished"] is None
    s = _status(book)
    assert (s.reserved, s.remaining) == (0.4, 0.6)
    with pytest.raises(LedgerError, match="remaining 0.6"):
        book.check(data_path=data, epsilon=0.7)
