"""Escape hatches are marked everywhere (issue 14, item 4)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pandas as pd
import pytest

from dpkit.cli import cli
from dpkit.cli.boundary import run
from dpkit.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]


def dpkit(capsys, *args: object) -> tuple[int, str, str]:
    code = run(cli, [str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def points(tmp_path: Path) -> Path:
    p = tmp_path / "pts.csv"
    rows = ["x,y,note"] + [f"{(i * 37) % 100},{(i * 53) % 100},n{i}" for i in range(200)]
    p.write_text("\n".join(rows) + "\n")
    return p


def test_allow_data_bounds_marks_every_output_and_the_ledger(capsys, tmp_path: Path, points: Path) -> None:
    led = tmp_path / "l.db"
    assert dpkit(capsys, "budget", "init", points, "--name", "pts", "--cap", "5", "--ledger", led)[0] == 0
    out, hist, assign = tmp_path / "c.csv", tmp_path / "h.csv", tmp_path / "a.csv"
    code, _, err = dpkit(capsys, "cluster", points, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                         "--allow-data-bounds", "--histogram", hist, "--assign", assign, "-o", out,
                         "--ledger", led, "-q")
    assert code == 0, err
    assert "NOT" in err and "differentially private" in err  # the warning survives -q
    assert pd.read_csv(out).columns[0] == "cluster_not_private"
    assert pd.read_csv(hist).columns[-1] == "count_not_private"
    assert pd.read_csv(assign).columns[-1] == "cluster_not_private"
    rep = json.loads((tmp_path / "c.report.json").read_text())
    assert rep["privacy"]["model"] == "none"
    assert rep["release"]["not_private_outputs"] == [str(out), str(hist), str(assign)]
    (last,) = Ledger(led).history()
    assert last["status"] == "complete" and last["reason"].startswith("not private: --allow-data-bounds")
    assert last["epsilon_counted"] == pytest.approx(1.0)  # still counted against the cap
    code, stdout, _ = dpkit(capsys, "budget", "history", "--ledger", led)
    assert "not private" in stdout


def test_public_bounds_leave_outputs_unmarked(capsys, tmp_path: Path, points: Path) -> None:
    out = tmp_path / "c.csv"
    code, _, err = dpkit(capsys, "cluster", points, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                         "--bounds", "0:100,0:100", "-o", out)
    assert code == 0, err
    assert pd.read_csv(out).columns[0] == "cluster"
    assert "not_private_outputs" not in json.loads((tmp_path / "c.report.json").read_text())["release"]


def test_plain_seed_is_booked_not_private(capsys, tmp_path: Path, points: Path) -> None:
    led = tmp_path / "l.db"
    dpkit(capsys, "budget", "init", points, "--name", "pts", "--cap", "5", "--ledger", led)
    code, _, err = dpkit(capsys, "cluster", points, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                         "--bounds", "0:100,0:100", "--seed", 4, "-o", tmp_path / "c.csv", "--ledger", led)
    assert code == 0, err
    assert Ledger(led).history()[-1]["reason"] == "not private: seeded with a plain integer"


@pytest.mark.parametrize(("input_mode", "expected"), [(0o600, 0o600), (0o640, 0o640), (0o644, 0o644)])
def test_assign_is_never_wider_than_the_input(capsys, tmp_path: Path, points: Path,
                                              input_mode: int, expected: int) -> None:
    old = os.umask(0o022)
    try:
        os.chmod(points, input_mode)
        assign, out = tmp_path / "a.csv", tmp_path / "c.csv"
        code, _, err = dpkit(capsys, "cluster", points, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                             "--bounds", "0:100,0:100", "--assign", assign, "-o", out)
        assert code == 0, err
        assert stat.S_IMODE(assign.stat().st_mode) == expected
        assert stat.S_IMODE(out.stat().st_mode) == 0o644  # the DP release: the usual mode
    finally:
        os.umask(old)


def test_assign_also_follows_the_umask(capsys, tmp_path: Path, points: Path) -> None:
    old = os.umask(0o077)
    try:
        assign = tmp_path / "a.csv"
        code, _, err = dpkit(capsys, "cluster", points, "--columns", "x,y", "-k", 3, "--epsilon", 1,
                             "--bounds", "0:100,0:100", "--assign", assign, "-o", tmp_path / "c.csv")
        assert code == 0, err
        assert stat.S_IMODE(assign.stat().st_mode) == 0o600
    finally:
        os.umask(old)


SCHEMA = """
missing: "?"
missing_policy: {policy}
columns:
  x: {{type: numeric, bounds: [0, 100]}}
  y: {{type: numeric, bounds: [0, 100]}}
"""


def test_cluster_honours_the_missing_token(capsys, tmp_path: Path, points: Path) -> None:
    text = points.read_text().splitlines()
    text[5] = "?,3,n4"
    points.write_text("\n".join(text) + "\n")
    schema = tmp_path / "s.yaml"
    schema.write_text(SCHEMA.format(policy="drop"))
    assign = tmp_path / "a.csv"
    code, _, err = dpkit(capsys, "cluster", points, "--schema", schema, "-k", 3, "--epsilon", 1,
                         "--assign", assign, "-o", tmp_path / "c.csv")
    assert code == 0, err
    assert "dropped" in err
    a = pd.read_csv(assign, dtype=str, keep_default_na=False)
    assert len(a) == 200 and a["cluster"].iloc[4] == "" and a["cluster"].iloc[5] != ""
    schema.write_text(SCHEMA.format(policy="error"))
    code, _, err = dpkit(capsys, "cluster", points, "--schema", schema, "-k", 3, "--epsilon", 1,
                         "-o", tmp_path / "c2.csv")
    assert code == 1 and "missing" in err and not (tmp_path / "c2.csv").exists()


def test_arx_numeric_bounds_make_a_draft(capsys, tmp_path: Path) -> None:
    arx = tmp_path / "arx"
    arx.mkdir()
    (arx / "age.csv").write_text("17;15-20;*\n18;15-20;*\n33;30-35;*\n")
    (arx / "sex.csv").write_text("Male;*\nFemale;*\n")
    out = tmp_path / "s.yaml"
    code, _, err = dpkit(capsys, "taxonomy", "import", str(arx), "-o", out)
    assert code == 0, err
    assert "'age'" in err and "draft: true" in err
    text = out.read_text()
    assert "draft: true" in text and "REVIEW: bounds read from the ARX" in text
