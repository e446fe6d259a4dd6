"""The delimiter-sniffing warning (issue 23): once per file per run, never under -q."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def semi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("semi")
    for name in ("train", "test"):
        text = (REPO / "sample_data" / "adult" / f"{name}.csv").read_text().splitlines()[:3000]
        (d / f"{name}.csv").write_text("\n".join(line.replace(",", ";") for line in text) + "\n")
    return d


def _run(*argv: str) -> str:
    res = subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    return res.stderr


@pytest.mark.parametrize("quiet", [False, True])
def test_once_per_file_and_silent_under_q(semi: Path, quiet: bool) -> None:
    q = ["-q"] if quiet else []
    err = _run(*q, "publish", str(semi / "train.csv"), "--schema", "taxonomies/adult.yaml", "--epsilon", "1",
               "-o", str(semi / f"r{quiet}.csv"))
    assert err.count("sniffed") == (0 if quiet else 1)
    err = _run(*q, "evaluate", "classify", "--train", str(semi / "train.csv"), "--test", str(semi / "test.csv"),
               "--target", "income")
    assert err.count("sniffed") == (0 if quiet else 2)  # two files, one line each
    assert (err.count("train.csv: fields") == err.count("test.csv: fields")) and err.count("train.csv: fields") <= 1
