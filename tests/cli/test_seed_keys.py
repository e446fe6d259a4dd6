"""Seed keys on the command line (issue 24 items 1 and 2): a weak key is refused in one line;
a key reproduces a run byte for byte and keeps the ε-DP label."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult" / "train.csv"
SCHEMA = REPO / "taxonomies" / "adult.yaml"
KEY = "0x9c1f4e07b2d86a35e1c7f09ab46d2e58"


def dpkit_cli(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)


def test_weak_key_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    res = dpkit_cli(["publish", str(ADULT), "--schema", str(SCHEMA), "--epsilon", "1",
                                   "--seed", "0x" + "0" * 31 + "3", "-o", str(out)])
    assert res.returncode == 2 and not out.exists()
    line = res.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "--seed key" in line and "openssl rand -hex 16" in line


def test_cli_key_run_reproduces_and_report_says_seeded(tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        out, rep = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
        res = dpkit_cli(["publish", str(ADULT), "--schema", str(SCHEMA), "--epsilon", "1",
                                       "--seed", KEY, "-o", str(out), "--report", str(rep)])
        assert res.returncode == 0, res.stderr
        outs.append(out.read_bytes())
        p = json.loads(rep.read_text())["privacy"]
        assert p["model"] == "epsilon-dp" and p["seeded"] is True
    assert outs[0] == outs[1]
