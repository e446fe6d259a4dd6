"""``--on-invalid`` and the neighbouring relation in the report (issue 24 item 8).

One record outside the schema's domain refuses the whole run (so the guarantee is about records
within it, and the report says so); ``--on-invalid drop`` drops each such record on its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import dpkit
from dpkit.report import NEIGHBOURS, NEIGHBOURS_DROPPING

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"


@pytest.fixture(scope="module")
def stray(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Adult's first 2,000 rows and one with a workclass outside the taxonomy."""
    lines = ADULT.read_text().splitlines()[:2001]
    cells = lines[1].split(",")
    cells[1] = "Astronaut"
    path = tmp_path_factory.mktemp("inv") / "stray.csv"
    path.write_text("\n".join([*lines, ",".join(cells)]) + "\n")
    return path


def _dpkit(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)


def test_default_refuses_and_report_says_within_the_domain(stray: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    res = _dpkit("publish", str(stray), "--schema", str(SCHEMA), "--epsilon", "1", "-o", str(out))
    assert res.returncode == 1 and not out.exists()
    assert "Astronaut" in res.stderr or "workclass" in res.stderr
    rel = dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0)
    assert rel.report["privacy"]["neighbours"] == NEIGHBOURS == "add/remove one record within the schema's domain"


@pytest.mark.parametrize("command", [["publish"], ["forest", "train", "--trees", "2", "--depth", "1"]])
def test_drop_runs_and_states_the_relation(stray: Path, tmp_path: Path, command: list[str]) -> None:
    out, rep = tmp_path / "o", tmp_path / "o.report.json"
    res = _dpkit("-q", *command, str(stray), "--schema", str(SCHEMA), "--epsilon", "1", "--on-invalid", "drop",
                 "-o", str(out), "--report", str(rep))
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # -q: how many were dropped is the owner's detail, not the log's
    assert json.loads(rep.read_text())["privacy"]["neighbours"] == NEIGHBOURS_DROPPING


def test_library_drop_reads_like_the_rows_without_it(stray: Path) -> None:
    """Dropping the stray record leaves the rows the clean file has: same seed, same release."""
    import pandas as pd

    df = pd.read_csv(stray, dtype=str, keep_default_na=False)
    a = dpkit.publish(df, schema=SCHEMA, epsilon=1.0, random_state=3, on_invalid="drop", levels=2)
    b = dpkit.publish(df.iloc[:-1], schema=SCHEMA, epsilon=1.0, random_state=3, levels=2)
    pd.testing.assert_frame_equal(a.table, b.table)


def test_bad_choice_is_a_usage_error() -> None:
    with pytest.raises(dpkit.errors.DpkitUsageError, match="on_invalid must be one of error, drop"):
        dpkit.publish(ADULT, schema=SCHEMA, epsilon=1.0, on_invalid="ignore")
