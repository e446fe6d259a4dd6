"""Inside a reservation every private run books on the reservation's ledger (issue 38 finding 1).

In 0.4 an inner ``dpkit publish … --ledger other.db`` and an inner ``dpkit.publish(...)`` (the
library ignored ``$DPKIT_LEDGER``) spent ε that the reservation of ``budget run`` never counted.
Now such a run is refused before it reads the data, and library calls read ``$DPKIT_LEDGER``
and ``$DPKIT_RESERVATION`` as the command line does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dpkit
from dpkit.ledger import LEDGER_ENV, RESERVATION_ENV, Ledger

REPO = Path(__file__).resolve().parents[2]
IRIS = REPO / "sample_data" / "iris" / "iris.csv"
SCHEMA = REPO / "taxonomies" / "iris.yaml"


@pytest.fixture
def books(tmp_path: Path) -> tuple[Ledger, Ledger, Path]:
    """The reserving ledger (cap 5), another ledger that also knows the data (cap 10), the data."""
    data = tmp_path / "sales.csv"
    data.write_bytes(IRIS.read_bytes())
    main, other = Ledger(tmp_path / "main.db"), Ledger(tmp_path / "other.db")  # created by register
    main.register("sales", data, 5)
    other.register("sales", data, 10)
    return main, other, data


def _budget_run(main: Ledger, *inner: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "dpkit", "budget", "run", "--epsilon", "0.5", "--name", "sales",
           "--ledger", str(main.path), "--", *inner]
    clean = {k: v for k, v in os.environ.items() if k not in (LEDGER_ENV, RESERVATION_ENV)}
    return subprocess.run(cmd, capture_output=True, text=True, env={**clean, **(env or {})}, timeout=120)


def test_cli_run_naming_another_ledger_is_refused(books, tmp_path) -> None:
    main, other, data = books
    out = tmp_path / "out.csv"
    done = _budget_run(main, sys.executable, "-m", "dpkit", "publish", str(data), "--schema", str(SCHEMA),
                       "--epsilon", "3", "--ledger", str(other.path), "-o", str(out))
    assert done.returncode == 1, done.stderr
    assert "inside reservation" in done.stderr and "books on ledger" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
    assert other.history() == [] and main.history() == []  # nothing spent anywhere
    (refusal,) = main.refusals()
    assert refusal["dataset"] == "sales" and refusal["epsilon"] == 3


def test_library_call_inside_budget_run_draws_from_the_reservation(books, tmp_path) -> None:
    main, other, data = books
    script = ("import dpkit; r = dpkit.publish({data!r}, schema={schema!r}, epsilon={eps}); "
              "print(r.report['privacy']['epsilon_spent'])")
    over = _budget_run(main, sys.executable, "-c", script.format(data=str(data), schema=str(SCHEMA), eps=2))
    assert over.returncode == 1 and "BudgetExceeded" in over.stderr and "has 0.5 left" in over.stderr
    assert main.history() == []
    within = _budget_run(main, sys.executable, "-c", script.format(data=str(data), schema=str(SCHEMA), eps=0.3))
    assert within.returncode == 0, within.stderr
    (run,) = main.history()
    assert run["epsilon_reserved"] == 0.3 and run["group"] is not None and run["status"] == "complete"
    assert other.history() == []


def test_library_call_without_a_ledger_inside_budget_run_is_refused(books) -> None:
    main, _, data = books
    script = (f"import os, dpkit; os.environ.pop('DPKIT_LEDGER'); "
              f"dpkit.publish({str(data)!r}, schema={str(SCHEMA)!r}, epsilon=0.1)")
    done = _budget_run(main, sys.executable, "-c", script)
    assert done.returncode == 1 and "books on no ledger" in done.stderr
    assert main.history() == []


def test_in_process_reservation(books, monkeypatch) -> None:
    main, other, data = books
    monkeypatch.delenv(LEDGER_ENV, raising=False)
    with main.reserve(1.0, name="sales"):
        release = dpkit.publish(data, schema=SCHEMA, epsilon=0.25)  # no ledger=: the reservation's
        with pytest.raises(dpkit.LedgerError, match="books on ledger"):
            dpkit.publish(data, schema=SCHEMA, epsilon=0.25, ledger=other)
        with pytest.raises(dpkit.LedgerError, match="books on ledger"):
            dpkit.forest(data, schema=SCHEMA, epsilon=0.25, ledger=other.path)
        with pytest.raises(dpkit.LedgerError, match="books on ledger"):  # any engine: refused before Spark starts
            dpkit.publish(data, schema=SCHEMA, epsilon=0.25, ledger=other, engine="spark")
        with pytest.raises(dpkit.LedgerError, match="inside reservation"):
            with other.reserve(1.0, name="sales"):  # a reservation nested in another escapes it
                pass
    assert release.report["privacy"]["epsilon_spent"] <= 0.25
    (run,) = main.history()
    assert run["group"] is not None and other.history() == [] and other.reservations() == []
    assert LEDGER_ENV not in os.environ and RESERVATION_ENV not in os.environ


def test_library_honours_dpkit_ledger(books, monkeypatch) -> None:
    main, _, data = books
    monkeypatch.setenv(LEDGER_ENV, str(main.path))
    dpkit.publish(data, schema=SCHEMA, epsilon=0.5)
    (run,) = main.history()
    assert run["epsilon_reserved"] == 0.5 and run["group"] is None
    with pytest.raises(dpkit.BudgetExceeded):
        dpkit.publish(data, schema=SCHEMA, epsilon=4.75)


def test_a_malformed_reservation_variable_is_refused(books, monkeypatch) -> None:
    main, _, data = books
    monkeypatch.setenv(RESERVATION_ENV, "nonsense")
    with pytest.raises(dpkit.LedgerError, match="names no reservation"):
        dpkit.publish(data, schema=SCHEMA, epsilon=0.5, ledger=main)
    assert main.history() == []


def test_budget_run_inside_budget_run_is_refused(books) -> None:
    main, other, _ = books
    done = _budget_run(main, sys.executable, "-m", "dpkit", "budget", "run", "--epsilon", "3", "--name", "sales",
                       "--ledger", str(other.path), "--", "true")
    assert done.returncode == 1 and "cannot be opened inside reservation" in done.stderr
    assert other.reservations() == []
