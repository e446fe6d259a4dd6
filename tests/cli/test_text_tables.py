"""The text the CLI lays out: `budget status|history` (cli/budget.py), `evaluate classify`."""

from __future__ import annotations

from pathlib import Path

import dpkit
from dpkit.cli.budget import history_tables, status_table

IRIS = Path(__file__).resolve().parents[2] / "sample_data" / "iris" / "iris.csv"


def test_status_and_history_tables(tmp_path: Path) -> None:
    book = tmp_path / "ledger.db"
    status = dpkit.register_dataset(book, IRIS, "iris", 2)
    title, header, rows = status_table([status])
    assert title == "privacy budget" and rows == [("iris", "2", "0", "0", "2", "0")] and "δ cap" not in header
    assert history_tables(dpkit.Ledger(book))[0][2] == []


def test_classification_tables_and_lines() -> None:
    import pandas as pd

    from dpkit.cli.evaluate import classify_lines, classify_tables

    df = pd.read_csv(IRIS)
    result = dpkit.evaluate_classifier(df, target="species", train=df, model="tree")
    tables = classify_tables(result)
    assert [t[0] for t in tables] == ["classification metrics", "confusion matrix", "per class"]
    assert len(tables[1][2]) == 3 and any(line.startswith("accuracy: ") for line in classify_lines(result))
