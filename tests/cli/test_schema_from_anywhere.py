"""A report's schema is found from any directory (issue 23): publish in the repository with a
relative --schema, generalize --cut from elsewhere."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _dpkit(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", "-q", *argv], capture_output=True, text=True, cwd=cwd)


def test_generalize_from_another_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    res = _dpkit(REPO, "publish", "sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml",
                 "--epsilon", "1", "-o", str(out / "rel.csv"))
    assert res.returncode == 0, res.stderr
    params = json.loads((out / "rel.report.json").read_text())["parameters"]
    assert params["schema"] == "taxonomies/adult.yaml" and not Path(params["schema_from_report"]).is_absolute()
    elsewhere = tmp_path / "b"
    elsewhere.mkdir()
    res = _dpkit(elsewhere, "generalize", str(REPO / "sample_data/adult/test.csv"), "--cut",
                 str(out / "rel.report.json"), "-o", "g.csv")
    assert res.returncode == 0, res.stderr
    assert (elsewhere / "g.csv").read_text().startswith("age,")


def test_kanon_report_too(tmp_path: Path) -> None:
    res = _dpkit(REPO, "kanon-select", "sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml", "-k", "5",
                 "--qi", "age,sex,race", "--generalize", "-o", str(tmp_path / "k.csv"))
    assert res.returncode == 0, res.stderr
    elsewhere = tmp_path / "b"
    elsewhere.mkdir()
    res = _dpkit(elsewhere, "generalize", str(REPO / "sample_data/adult/test.csv"), "--cut",
                 str(tmp_path / "k.report.json"), "-o", "g.csv")
    assert res.returncode == 0, res.stderr


def test_generalize_keeps_the_keep_columns_so_evaluate_runs(tmp_path: Path) -> None:
    """Issue 23: a kanon-select --keep release, mapped onto the test split, still has the kept
    columns, so evaluate classify trains on one and tests on the other."""
    res = _dpkit(REPO, "kanon-select", "sample_data/adult/train.csv", "--schema", "taxonomies/adult.yaml", "-k", "5",
                 "--qi", "age,sex,race", "--keep", "hours-per-week,occupation", "--generalize",
                 "-o", str(tmp_path / "k.csv"))
    assert res.returncode == 0, res.stderr
    res = _dpkit(REPO, "generalize", "sample_data/adult/test.csv", "--cut", str(tmp_path / "k.report.json"),
                 "-o", str(tmp_path / "g.csv"))
    assert res.returncode == 0, res.stderr
    head = (tmp_path / "g.csv").read_text().splitlines()[0]
    assert head == (tmp_path / "k.csv").read_text().splitlines()[0] == "age,occupation,race,sex,hours-per-week,income"
    res = _dpkit(REPO, "evaluate", "classify", "--train", str(tmp_path / "k.csv"), "--test", str(tmp_path / "g.csv"),
                 "--target", "income")
    assert res.returncode == 0, res.stderr
