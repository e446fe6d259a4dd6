"""`--engine spark -q` prints nothing but errors (issue 23): no JVM start-up lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]


def test_quiet_means_quiet_on_spark(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "dpkit", "-q", "publish", "sample_data/adult/train.csv", "--schema",
                          "taxonomies/adult.yaml", "--epsilon", "1", "--engine", "spark", "-o", str(tmp_path / "r.csv")],
                         capture_output=True, text=True, cwd=REPO, timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stderr == "", res.stderr  # before: "WARNING: Using incubator modules…", "Setting default log level…"
    assert (tmp_path / "r.csv").exists()
