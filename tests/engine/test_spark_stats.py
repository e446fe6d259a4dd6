"""``DPKIT_SPARK_STATS`` prints job timings; the rows per job (publish's occupied cells: a count
of the private data) only under the private-detail rule (issue 24 item 6)."""

from __future__ import annotations

import json

import pytest

spark_session = pytest.importorskip("dpkit.engine.spark.session")


def _printed(capsys: pytest.CaptureFixture) -> dict:
    spark_session._print_stats()
    line = capsys.readouterr().err.strip()
    assert line.startswith("dpkit-spark-stats ")
    return json.loads(line.split(" ", 1)[1])


def test_rows_only_for_the_owner(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(spark_session, "STATS", {"aggregate": [0.5], "aggregate rows": [3017.0]})
    assert _printed(capsys) == {"aggregate": [0.5]}  # stderr is not a terminal: a log
    monkeypatch.setattr("dpkit.console.owner_watching", lambda: True)
    assert _printed(capsys) == {"aggregate": [0.5], "aggregate rows": [3017.0]}
