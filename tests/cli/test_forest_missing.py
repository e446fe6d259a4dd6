"""`forest train` without --schema keeps the rows with missing values, and `forest predict`
predicts every row (issue 36 item 3); the learned schema (`missing_policy: keep`) does the same
when given back with --schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


def hr_table(n: int, seed: int = 0) -> pd.DataFrame:
    """Three numeric columns 10–30 % empty, '?' in 20 % of a categorical one (~55 % of the rows
    hold a missing value); leaving depends on satisfaction."""
    g = np.random.default_rng(seed)
    sat = g.random(n)
    out = pd.DataFrame({"satisfaction": [f"{v:.2f}" for v in sat], "tenure": g.integers(0, 30, n).astype(str),
                        "pay": g.lognormal(10, 0.4, n).round().astype(int).astype(str),
                        "dept": g.choice(["sales", "it", "ops"], n), "left": np.where(sat < 0.35, "yes", "no")})
    for col, share in (("satisfaction", 0.1), ("tenure", 0.3), ("pay", 0.2)):
        out.loc[g.random(n) < share, col] = ""
    out.loc[g.random(n) < 0.2, "dept"] = "?"
    return out


def _dpkit(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)


def test_train_keeps_and_predict_scores_every_row(tmp_path: Path) -> None:
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    hr_table(3000).to_csv(train, index=False)
    hr_table(400, seed=1).drop(columns="left").to_csv(test, index=False)
    model = tmp_path / "m.json"
    # -v: the owner's exact notices, there only when rows were dropped (without it the drop notice's
    # short form is there whatever the data holds: issue 43)
    res = _dpkit("-v", "forest", "train", str(train), "--target", "left", "--epsilon", "1", "--delta", "1e-6",
                 "--seed", KEY, "-o", str(model))
    assert res.returncode == 0, res.stderr
    assert "dropped" not in res.stderr  # the old forest dropped ~55 % of these rows, with a warning
    report = json.loads((tmp_path / "m.report.json").read_text())
    kept = report["release"]["missing_values"]
    assert abs(kept["noisy_records"] - 3000) < 150
    assert "missing_policy: keep" in (tmp_path / "m.schema.yaml").read_text()
    out = tmp_path / "p.csv"
    res = _dpkit("-q", "forest", "predict", str(model), str(test), "-o", str(out))
    assert res.returncode == 0, res.stderr
    got = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(got) == 400 and set(got["left"]) <= {"yes", "no"}
    # the learned schema, given back, keeps the rows too
    res = _dpkit("-q", "forest", "train", str(train), "--schema", str(tmp_path / "m.schema.yaml"), "--epsilon", "1",
                 "--seed", KEY, "-o", str(tmp_path / "again.json"))
    assert res.returncode == 0, res.stderr
    again = json.loads((tmp_path / "again.report.json").read_text())["release"]["missing_values"]
    assert abs(again["noisy_records"] - 3000) < 150
