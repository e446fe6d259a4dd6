"""--keep and --bounds on runs without a schema, and the draft's identifier and bounds lines (issue 46)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
KEY = "0x6e1f0c5a9b3d47e28c1a5f7d0b9e3c42"


def _dpkit(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dpkit", *argv], capture_output=True, text=True, cwd=REPO)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    g = np.random.default_rng(7)
    n = 4000
    p = tmp_path_factory.mktemp("d") / "bank.csv"
    pd.DataFrame({
        "RowNumber": np.arange(1, n + 1), "CustomerId": g.permutation(n) + 10**7,
        "score": np.clip(np.round(g.normal(650, 100, n)), 350, 850).astype(int),
        "ref": np.where(g.random(n) < 0.94, "NULL", np.round(g.lognormal(30, 0.5, n), -6).astype(np.int64).astype(str)),
        "active": (g.random(n) < 0.5).astype(int), "y": np.where(g.random(n) < 0.3, "yes", "no"),
    }).to_csv(p, index=False)
    return p


def test_publish_leaves_ids_and_a_mostly_null_column_out_naming_keep_and_bounds(tmp_path: Path, data: Path) -> None:
    # --numeric: on 4,000 rows its few numbers are not established, and the type may come out
    # categorical (then it is left out as a category no value of which clears the threshold)
    res = _dpkit("publish", str(data), "--target", "y", "--epsilon", "1", "--delta", "1e-6", "--seed", KEY,
                 "--numeric", "ref", "-o", str(tmp_path / "r.csv"))
    assert res.returncode == 0, res.stderr
    ids = [ln for ln in res.stderr.splitlines() if "named like an identifier" in ln]
    assert len(ids) == 1 and "'RowNumber', 'CustomerId'" in ids[0] and "--keep" in ids[0] and "keep=" not in ids[0]
    few = [ln for ln in res.stderr.splitlines() if "too few values" in ln]
    assert len(few) == 1 and "'ref'" in few[0] and "--bounds" in few[0]
    schema = (tmp_path / "r.schema.yaml").read_text()
    for col in ("RowNumber", "CustomerId", "ref"):
        assert f"{col}:" in schema and "{type: ignore}" in next(ln for ln in schema.splitlines() if ln.strip().startswith(f"{col}:"))


def test_keep_and_bounds_bring_the_columns_back(tmp_path: Path, data: Path) -> None:
    res = _dpkit("-q", "publish", str(data), "--target", "y", "--epsilon", "1", "--delta", "1e-6", "--seed", KEY,
                 "--keep", "CustomerId", "--bounds", "ref=0:100000000000000", "-o", str(tmp_path / "r.csv"))
    assert res.returncode == 0, res.stderr
    schema = (tmp_path / "r.schema.yaml").read_text()
    line = {ln.strip().split(":")[0]: ln for ln in schema.splitlines() if ln.startswith("  ")}
    assert "type: numeric" in line["CustomerId"] and "type: ignore" in line["RowNumber"]
    assert "bounds: [0, 100000000000000]" in line["ref"]
    res = _dpkit("-q", "forest", "train", str(data), "--target", "y", "--epsilon", "1", "--delta", "1e-6",
                 "--keep", "RowNumber", "--seed", KEY, "-o", str(tmp_path / "m.json"))
    assert res.returncode == 0, res.stderr
    assert "RowNumber: " in (tmp_path / "m.schema.yaml").read_text()


@pytest.mark.parametrize("argv,message", [
    (["--schema", "taxonomies/adult.yaml", "--keep", "age"], "--keep applies only without a schema"),
    (["--schema", "taxonomies/adult.yaml", "--bounds", "age=0:100"], "--bounds applies only without a schema"),
    (["--delta", "1e-6", "--keep", "nope"], "--keep: column(s) 'nope' are not in the data"),
    (["--delta", "1e-6", "--bounds", "age"], "--bounds takes COL=..., got 'age'"),
    (["--delta", "1e-6", "--bounds", "age=1"], "bounds must look like lo:hi"),
])
def test_refusals(tmp_path: Path, argv: list[str], message: str) -> None:
    res = _dpkit("publish", "sample_data/adult/train.csv", "--target", "income", "--epsilon", "1", *argv,
                 "-o", str(tmp_path / "r.csv"))
    assert res.returncode == 2 and message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not list(tmp_path.iterdir())


def test_the_draft_writes_ids_as_ignore_for_review_and_keep_drafts_them(tmp_path: Path, data: Path) -> None:
    res = _dpkit("-q", "taxonomy", "infer", str(data), "--target", "y", "-o", str(tmp_path / "d.yaml"))
    assert res.returncode == 0, res.stderr
    lines = {ln.strip().split(":")[0]: ln for ln in (tmp_path / "d.yaml").read_text().splitlines() if ln.startswith("  ")}
    assert "{type: ignore}" in lines["RowNumber"] and "# REVIEW: named like an identifier" in lines["CustomerId"]
    assert "--keep" in lines["RowNumber"] or "keep=" in lines["RowNumber"]
    assert "data min 350, max 850" in lines["score"] and "bounds: [350, 850]" in lines["score"]
    assert "bounds: [0, 1]" in lines["active"]  # a flag as a person writes it (publish splits at 1)
    res = _dpkit("-q", "taxonomy", "infer", str(data), "--target", "y", "--keep", "RowNumber", "-o", str(tmp_path / "k.yaml"))
    assert res.returncode == 0, res.stderr
    text = (tmp_path / "k.yaml").read_text()
    assert "RowNumber: " in text and "type: numeric" in next(ln for ln in text.splitlines() if "RowNumber:" in ln)
