"""δ in the ledger (issue 22): recorded per run, shown by `budget status`, capped on request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpkit.ledger import BudgetExceeded, Ledger

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "adult.csv"
    path.write_bytes(ADULT.read_bytes())
    return path


def _dpkit(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", *map(str, argv)], capture_output=True, text=True,
                          cwd=REPO)


def test_delta_is_counted_like_epsilon_and_capped(tmp_path: Path, data: Path) -> None:
    book = Ledger(tmp_path / "l.db", create=True)
    book.register("adult", data, 5, delta_cap=2.5e-6)
    first = book.reserve(data_path=data, epsilon=1, delta=1e-6)
    assert book.status()[0].delta_spent == pytest.approx(1e-6)  # a run in flight counts what it holds
    book.complete(first, spent=1, delta=1e-6)
    aborted = book.reserve(data_path=data, epsilon=1, delta=1e-6)
    book.fail(aborted, spent_any=False)  # nothing drawn: counts 0
    lost = book.reserve(data_path=data, epsilon=1, delta=1e-6)
    book.fail(lost, spent_any=True)  # noise drawn, output lost: its δ counts
    (status,) = book.status()
    assert status.delta_cap == 2.5e-6 and status.delta_spent == pytest.approx(2e-6)
    with pytest.raises(BudgetExceeded, match="delta budget of data set 'adult' exceeded"):
        book.reserve(data_path=data, epsilon=1, delta=1e-6)
    with pytest.raises(BudgetExceeded, match="delta budget"):
        book.check(data_path=data, epsilon=1, delta=1e-6)
    assert "delta budget" in book.refusals()[-1]["reason"]
    # the ε cap still has room, and pure ε runs are not held back by the δ cap
    book.complete(book.reserve(data_path=data, epsilon=1), spent=1)
    runs = book.history()
    assert [r["delta_counted"] for r in runs] == pytest.approx([1e-6, 0.0, 1e-6, 0.0])
    assert book.status()[0].delta_spent == pytest.approx(2e-6)


def test_no_delta_cap_records_but_does_not_refuse(tmp_path: Path, data: Path) -> None:
    book = Ledger(tmp_path / "l.db", create=True)
    book.register("adult", data, 5)
    for _ in range(3):
        book.complete(book.reserve(data_path=data, epsilon=1, delta=1e-3), spent=1, delta=1e-3)
    (status,) = book.status()
    assert status.delta_cap is None and status.delta_spent == pytest.approx(3e-3)


@pytest.mark.parametrize("value", ["0", "1", "-1e-6", "x"])
def test_bad_delta_cap_is_one_line(tmp_path: Path, data: Path, value: str) -> None:
    res = _dpkit("budget", "init", data, "--name", "a", "--cap", "2", "--delta-cap", value,
                 "--ledger", tmp_path / "l.db")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "--delta-cap" in res.stderr and "(0, 1)" in res.stderr
    assert not (tmp_path / "l.db").exists()  # refused before the ledger is created


def test_a_run_without_schema_books_its_delta(tmp_path: Path, data: Path) -> None:
    ledger = tmp_path / "l.db"
    assert _dpkit("-q", "budget", "init", data, "--name", "adult", "--cap", "4", "--delta-cap", "1.5e-6",
                  "--ledger", ledger).returncode == 0
    pure = _dpkit("budget", "status", "--ledger", ledger)
    assert pure.stdout.splitlines()[0].split("\t")[-2:] == ["δ cap", "δ spent"]
    run = ["-q", "publish", data, "--target", "income", "--epsilon", "1", "--delta", "1e-6", "--seed", KEY,
           "--ledger", ledger]
    res = _dpkit(*run, "-o", tmp_path / "rel.csv")
    assert res.returncode == 0, res.stderr
    (status,) = json.loads(_dpkit("budget", "status", "--ledger", ledger, "--json").stdout)
    report = json.loads((tmp_path / "rel.report.json").read_text())
    assert status["delta_spent"] == pytest.approx(report["privacy"]["delta_spent"]) == pytest.approx(1e-6)
    table = _dpkit("budget", "history", "--ledger", ledger).stdout.splitlines()
    assert table[0].endswith("δ counted") and table[1].endswith("1e-06")
    # a second run would pass the δ cap: refused in one line, nothing written
    again = _dpkit(*run, "-o", tmp_path / "again.csv")
    assert again.returncode == 1 and "delta budget of data set 'adult' exceeded" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1 and not (tmp_path / "again.csv").exists()


def test_pure_epsilon_ledger_prints_as_before(tmp_path: Path, data: Path) -> None:
    ledger = tmp_path / "l.db"
    assert _dpkit("-q", "budget", "init", data, "--name", "adult", "--cap", "4", "--ledger", ledger).returncode == 0
    status = _dpkit("budget", "status", "--ledger", ledger).stdout.splitlines()
    assert status[0].split("\t") == ["data set", "cap", "spent", "reserved", "remaining", "runs"]


def test_a_reservation_holds_delta_for_its_runs(tmp_path: Path, data: Path) -> None:
    book = Ledger(tmp_path / "l.db", create=True)
    book.register("adult", data, 5, delta_cap=3e-6)
    with book.reserve(2, name="adult", delta=2e-6) as group:
        assert group.delta == 2e-6
        # what the reservation holds counts against the δ cap for everyone else
        with pytest.raises(BudgetExceeded, match="delta budget"):
            book.open_group(1, name="adult", delta=2e-6)
        book.complete(book.reserve(data_path=data, epsilon=0.5, delta=1e-6), spent=0.5, delta=1e-6)
        with pytest.raises(BudgetExceeded, match=r"delta=2e-06, the reservation has delta 1e-06 left"):
            book.reserve(data_path=data, epsilon=0.5, delta=2e-6)
        with pytest.raises(BudgetExceeded, match="reservation"):
            book.check(data_path=data, epsilon=0.5, delta=2e-6)
    # closed: only what its runs counted stays
    assert book.status()[0].delta_spent == pytest.approx(1e-6)
    assert book.reservations()[0]["delta_reserved"] == 2e-6
    with book.reserve(1, name="adult"):  # no δ reserved: a run that spends δ is refused
        with pytest.raises(BudgetExceeded, match="budget run --delta reserves it"):
            book.reserve(data_path=data, epsilon=0.5, delta=1e-6)
        book.complete(book.reserve(data_path=data, epsilon=0.5), spent=0.5)  # pure ε runs go on


def test_budget_run_delta_end_to_end(tmp_path: Path, data: Path) -> None:
    ledger = tmp_path / "l.db"
    assert _dpkit("-q", "budget", "init", data, "--name", "adult", "--cap", "4", "--ledger", ledger).returncode == 0
    publish = [sys.executable, "-m", "dpkit", "-q", "publish", str(data), "--target", "income", "--epsilon", "1",
               "--delta", "1e-6", "--seed", KEY, "-o", str(tmp_path / "rel.csv")]
    refused = _dpkit("-q", "budget", "run", "--epsilon", "1", "--ledger", ledger, "--", *publish)
    assert refused.returncode == 1 and "budget run --delta" in refused.stderr and not (tmp_path / "rel.csv").exists()
    ok = _dpkit("-q", "budget", "run", "--epsilon", "1", "--delta", "1e-6", "--ledger", ledger, "--", *publish)
    assert ok.returncode == 0, ok.stderr
    (status,) = json.loads(_dpkit("budget", "status", "--ledger", ledger, "--json").stdout)
    assert status["delta_spent"] == pytest.approx(1e-6) and status["spent"] == pytest.approx(1.0)
    bad = _dpkit("budget", "run", "--epsilon", "1", "--delta", "0.5", "--ledger", ledger, "--", "true")
    assert bad.returncode == 2 and "--delta" in bad.stderr
