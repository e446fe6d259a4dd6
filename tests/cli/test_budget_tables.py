"""The text layout of ``dpkit budget status|history`` (dpkit/cli/budget_tables.py)."""

from __future__ import annotations

from pathlib import Path

import dpkit
from dpkit.cli.budget_tables import history_tables, status_table

IRIS = Path(__file__).resolve().parents[2] / "sample_data" / "iris" / "iris.csv"


def test_status_and_history_tables(tmp_path: Path) -> None:
    book = tmp_path / "ledger.db"
    status = dpkit.register_dataset(book, IRIS, "iris", 2)
    title, header, rows = status_table([status])
    assert title == "privacy budget" and rows == [("iris", "2", "0", "0", "2", "0")] and "δ cap" not in header
    assert history_tables(dpkit.Ledger(book))[0][2] == []
