"""`forest predict --keep/--id` (issue 23): input columns carried into the predictions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
ADULT = REPO / "sample_data" / "adult"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keep") / "m.json"
    res = subprocess.run([sys.executable, "-m", "dpkit", "-q", "forest", "train", str(ADULT / "train.csv"), "--schema",
                          "taxonomies/adult.yaml", "--epsilon", "1", "--trees", "3", "--depth", "2", "--seed", "1",
                          "-o", str(path)], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    return path


def _predict(model: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", "-q", "forest", "predict", str(model),
                           str(ADULT / "test.csv"), *extra], capture_output=True, text=True, cwd=REPO)


def test_keep_and_id_come_first_as_read(model: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    res = _predict(model, "--id", "fnlwgt", "--keep", "sex, age", "--proba", "-o", str(out))
    assert res.returncode == 0, res.stderr
    got = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(got.columns) == ["fnlwgt", "sex", "age", "income", "p_<=50K", "p_>50K"]
    test = pd.read_csv(ADULT / "test.csv", dtype=str, keep_default_na=False)
    assert got["fnlwgt"].tolist() == test["fnlwgt"].tolist() and got["sex"].tolist() == test["sex"].tolist()


def test_unknown_column_is_one_line(model: Path, tmp_path: Path) -> None:
    res = _predict(model, "--keep", "nope", "-o", str(tmp_path / "x.csv"))
    assert res.returncode == 2 and "'nope'" in res.stderr and "--keep" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.csv").exists()


def test_clipping_warnings_name_the_data_file(model: Path, tmp_path: Path) -> None:
    lines = (ADULT / "test.csv").read_text().splitlines()[:50]
    lines[1] = "200," + lines[1].split(",", 1)[1]
    data = tmp_path / "oob.csv"
    data.write_text("\n".join(lines) + "\n")
    for argv in (["forest", "predict", str(model), str(data), "-o", str(tmp_path / "p.csv")],
                 ["evaluate", "classify", "--dpkit-model", str(model), "--test", str(data), "--target", "income"]):
        res = subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)
        assert res.returncode == 0, res.stderr
        clip = [ln for ln in res.stderr.splitlines() if "clipped" in ln]
        assert len(clip) == 1 and str(data) in clip[0] and str(model) not in clip[0]
