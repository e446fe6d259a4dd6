"""`evaluate cluster` reads only the columns it scores, by Arrow (issue 36 item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpkit.api.evaluate import evaluate_clustering
from dpkit.errors import DataError


def _files(tmp_path: Path, bad: str = "3") -> tuple[str, str]:
    data = tmp_path / "d.csv"
    rows = ["x,y,note"] + [f"{i % 7},{(i * 3) % 5},free text {i}" for i in range(200)]
    rows[50] = f"{bad},1,more text"
    data.write_text("\n".join(rows) + "\n")
    cents = tmp_path / "c.csv"
    cents.write_text("cluster,x,y\n0,1,1\n1,5,3\n")
    return str(data), str(cents)


def test_reads_only_the_scored_columns_without_python_strings(tmp_path, monkeypatch):
    import dpkit.io.table as table

    real = table._parse_strings

    def exact(name, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        assert not str(name).endswith("d.csv"), "the data were read by the exact string reader"
        return real(name, *a, **k)  # the (tiny) centroids file is

    monkeypatch.setattr(table, "_parse_strings", exact)
    data, cents = _files(tmp_path)
    got = evaluate_clustering(data, cents, reference=False)
    assert got["nicv"] > 0


def test_a_non_number_still_names_file_line_and_column(tmp_path, monkeypatch):
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)
    data, cents = _files(tmp_path, bad="oops")
    with pytest.raises(DataError, match=r"d\.csv:51: column 'x' has 'oops', not a finite number"):
        evaluate_clustering(data, cents, reference=False)
